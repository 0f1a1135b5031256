/*
 * test_microbatch — the micro-batch size as a dimension of the layout (issue 24): a layer
 * table re-priced at another micro-batch from its architecture (activations and messages
 * scale with the sequences, weights do not, a bigger microbatch costs more but never more
 * than proportionally), the table's own size as an identity, a measured table refused in
 * one line, the size kept through a plan's JSON so the plan loads to the same time, and
 * the layout search over sizes: at the global batch in sequences, never worse in its
 * estimate than the table's own size held fixed, and holding a given size.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "layout_search.h"
#include "parallel.h"
#include "plan.h"
#include "sim.h"
#include "../tap.h"
#include "samples.h"

/* Whether two layers cost the same (times and bytes; their names are their own copies). */
static bool same_layer(const struct layer *a, const struct layer *b)
{
	return a->f_ms == b->f_ms && a->b_ms == b->b_ms && a->w_ms == b->w_ms && a->core_f_ms == b->core_f_ms &&
	       a->act_bytes == b->act_bytes && a->act_w_bytes == b->act_w_bytes && a->out_bytes == b->out_bytes &&
	       a->param_bytes == b->param_bytes && a->in_bytes == b->in_bytes;
}

/* Re-pricing: what scales with the sequences of a microbatch and what does not. */
static void test_reprice(const struct model *m, const struct cluster *c)
{
	struct parallel l;
	struct model m1, m2;
	struct err e = ERR_INIT;
	int bytes_exact = 0, time_within = 0, weights_same = 0;

	parallel_default(&l, c->devices);
	ok(m->micro_batch_size == 1, "llama2-7b's table is made at micro-batch 1 (%ld)", m->micro_batch_size);
	l.micro_batch = 2;
	if (parallel_model(m, c, &l, &m2, &e) < 0) {
		ok(0, "priced at micro-batch 2: %s", e.msg);
		return;
	}
	l.micro_batch = 0;
	if (parallel_model(m, c, &l, &m1, &e) < 0) {
		ok(0, "priced at its own: %s", e.msg);
		model_release(&m2);
		return;
	}
	ok(m2.micro_batch_size == 2 && m1.micro_batch_size == 1, "the tables say their micro-batch (%ld, %ld)",
	   m2.micro_batch_size, m1.micro_batch_size);
	for (int i = 0; i < m->nlayers; i++) {
		const struct layer *a = &m1.layers[i], *b = &m2.layers[i];

		/* activations and the messages between stages: twice the sequences, twice the bytes */
		bytes_exact += llabs((long long)b->act_bytes - 2 * (long long)a->act_bytes) <= 1 &&
		               llabs((long long)b->out_bytes - 2 * (long long)a->out_bytes) <= 1;
		weights_same += b->param_bytes == a->param_bytes;
		/* more work, at no worse a rate: between once and twice the time */
		time_within += b->f_ms > a->f_ms && b->f_ms <= 2 * a->f_ms + 1e-9 && b->b_ms > a->b_ms &&
		               b->b_ms <= 2 * a->b_ms + 1e-9;
	}
	ok(bytes_exact == m->nlayers, "activations and messages twice at twice the sequences (%d of %d layers)",
	   bytes_exact, m->nlayers);
	ok(weights_same == m->nlayers, "the weights do not change (%d of %d layers)", weights_same, m->nlayers);
	ok(time_within == m->nlayers, "each layer's F and B between 1x and 2x (%d of %d layers)", time_within,
	   m->nlayers);
	{
		bool same = m1.nlayers == m->nlayers;

		for (int i = 0; i < m->nlayers && same; i++)
			same = same_layer(&m1.layers[i], &m->layers[i]);
		ok(same, "at the table's own micro-batch nothing is re-priced");
	}
	l.micro_batch = 1;
	{
		struct model m3;

		bool same = parallel_model(m, c, &l, &m3, &e) == 0;

		for (int i = 0; i < m->nlayers && same; i++)
			same = same_layer(&m3.layers[i], &m->layers[i]);
		ok(same, "asking for the table's own size is the same");
		if (e.cls == ERR_NONE)
			model_release(&m3);
	}
	model_release(&m1);
	model_release(&m2);
	l.micro_batch = -1;
	ok(parallel_check(&l, c, &e) < 0 && strstr(e.msg, "micro-batch"), "a negative size is refused: %s", e.msg);
}

/* A table without an architecture exists at its own micro-batch only. */
static void test_measured(const struct model *m, const struct cluster *c)
{
	struct model bare, out;
	struct parallel l;
	struct err e = ERR_INIT;
	if (model_copy(&bare, m, &e) < 0) {
		ok(0, "copy: %s", e.msg);
		return;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(bare.extra, "source");
	ok(!model_has_source(&bare) && model_has_source(m), "the copy has no architecture, the sample has one");
	parallel_default(&l, c->devices);
	l.micro_batch = 4;
	ok(parallel_model(&bare, c, &l, &out, &e) < 0 && e.cls == ERR_INPUT && strstr(e.msg, "micro-batch 4"),
	   "a measured table at another micro-batch: ERR_INPUT, in words: %s", e.msg);
	{
		struct layout_constraints k = { .zero = -1, .recompute = -1, .global_mb = 32, .micro_batch = -1 };
		struct layout_choice lc;

		int r = layout_search(&bare, c, &k, &lc, &e);

		ok(r == 0 && lc.par.micro_batch == 0 && lc.microbatches * lc.par.dp == 32,
		   "the search keeps a measured table at its own size (%ld, %d a replica x dp %d): %s", lc.par.micro_batch,
		   lc.microbatches, lc.par.dp, e.msg);
	}
	model_release(&bare);
}

/* A plan at micro-batch 2 saved and read back: the size in its "parallel", the same time. */
static void test_roundtrip(const struct model *m, const struct cluster *c)
{
	struct parallel l;
	struct model rm;
	struct cluster rc;
	struct plan p, q;
	struct err e = ERR_INIT;
	struct baseline_spec spec = { .schedule = SCHED_1F1B, .microbatches = 8 };
	struct sim s;
	struct sim_opts so;
	struct metrics a, b;
	cJSON *j;

	parallel_default(&l, 4);
	l.tp = 2;
	l.micro_batch = 2;
	if (parallel_replica(m, c, &l, &rm, &rc, &e) < 0 || baseline_plan(&p, &rm, NULL, &rc, NULL, &spec, &e) < 0 ||
	    plan_attach_parallel(&p, &l, m, c, &e) < 0) {
		ok(0, "a 1F1B plan at tp 2, micro-batch 2: %s", e.msg);
		return;
	}
	model_release(&rm);
	cluster_release(&rc);
	j = plan_to_json(&p, true);
	{
		const cJSON *par = cJSON_GetObjectItemCaseSensitive(j, "parallel");
		const cJSON *mb = par ? cJSON_GetObjectItemCaseSensitive(par, "micro_batch_size") : NULL;

		ok(cJSON_IsNumber(mb) && mb->valuedouble == 2, "the plan's \"parallel\" says micro_batch_size 2");
	}
	ok(plan_from_json(&q, j, "rt.json", NULL, &e) == 0, "and reads back: %s", e.msg);
	cJSON_Delete(j);
	memset(&s, 0, sizeof(s));
	sim_opts_default(&so);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	{
		int ra = sim_run(&s, &p, &so, &a, &e), rb = sim_run(&s, &q, &so, &b, &e);

		ok(ra == 0 && rb == 0 && a.makespan_ms == b.makespan_ms && q.model.micro_batch_size == 2 &&
		   plan_src_model(&q)->micro_batch_size == 1,
		   "at the same time (%.3f / %.3f ms), the replica at 2, the file's table at its own 1", a.makespan_ms,
		   b.makespan_ms);
	}
	/* the whole job's tokens count the sequences of a microbatch */
	ok(fabs(a.throughput_tokens_per_s * a.makespan_ms / 1e3 - 8.0 * 2 * m->seq_len) < 1e-6 * 8 * 2 * m->seq_len,
	   "tokens/s x iteration = 8 microbatches x 2 sequences x %ld tokens", m->seq_len);
	metrics_release(&a);
	metrics_release(&b);
	sim_release(&s);
	plan_release(&p);
	plan_release(&q);
}

/* The layout search over sizes at a fixed global batch. */
static void test_search(const struct model *m, const struct cluster *c)
{
	struct layout_constraints k = { .zero = -1, .recompute = -1, .global_mb = 64 };
	struct layout_choice own, any, held;
	struct err e = ERR_INIT;

	if (layout_search(m, c, &k, &own, &e) < 0) {
		ok(0, "the table's own size: %s", e.msg);
		return;
	}
	k.micro_batch = -1;
	if (layout_search(m, c, &k, &any, &e) < 0) {
		ok(0, "sizes searched: %s", e.msg);
		return;
	}
	ok(own.par.micro_batch == 0, "held at the table's own, the layout names no size");
	ok(any.estimate_ms <= own.estimate_ms && any.candidates > own.candidates,
	   "searched: more layouts judged (%d > %d), an estimate no worse (%.1f <= %.1f ms)", any.candidates,
	   own.candidates, any.estimate_ms, own.estimate_ms);
	{
		long size = any.par.micro_batch ? any.par.micro_batch : m->micro_batch_size;

		ok((long)any.microbatches * size * any.par.dp == 64 * m->micro_batch_size,
		   "the global batch is kept in sequences: %d microbatches x %ld x dp %d = 64", any.microbatches, size,
		   any.par.dp);
	}
	k.micro_batch = 4;
	if (layout_search(m, c, &k, &held, &e) < 0) {
		ok(0, "size 4 held: %s", e.msg);
		return;
	}
	ok(held.par.micro_batch == 4 && (long)held.microbatches * 4 * held.par.dp == 64,
	   "size 4 held: %d microbatches of 4 x dp %d", held.microbatches, held.par.dp);
	for (int i = 0; i < held.ntop; i++)
		if (held.top[i].par.micro_batch != 4)
			ok(0, "every ranked layout at size 4 (top %d: %ld)", i, held.top[i].par.micro_batch);
	k.micro_batch = 1;
	{
		int r = layout_search(m, c, &k, &held, &e);

		ok(r == 0 && held.par.micro_batch == 0, "the table's own size given is stored as the table's own (0)");
	}
	k.micro_batch = -1;
	k.global_mb = 3;
	{
		int r = layout_search(m, c, &k, &any, &e);
		long size = any.par.micro_batch ? any.par.micro_batch : m->micro_batch_size;

		ok(r == 0 && (size == 1 || size == 3) && any.microbatches * any.par.dp * size == 3,
		   "3 sequences: only sizes that divide them (%ld x %d x dp %d)", size, any.microbatches, any.par.dp);
	}
}

int main(void)
{
	struct model m;
	struct cluster c;

	if (load_sample("llama2-7b", "8xH200", &m, &c) < 0)
		return tap_done();
	test_reprice(&m, &c);
	test_measured(&m, &c);
	test_roundtrip(&m, &c);
	test_search(&m, &c);
	model_release(&m);
	cluster_release(&c);
	return tap_done();
}
