/*
 * test_recompute_block — full recompute of a stage's first n layers only (Megatron-LM's
 * --recompute-method block): the simulator's time and memory against the closed form,
 * the plan's JSON round trip, the export's flags, and the Megatron target search that
 * picks the fewest recomputed layers that fit, beating full recompute, and the layout
 * search that ranks a layout by it.
 *
 * The setting: 8 equal layers (F 1 ms, B 2 ms, 100 MB of activations, a 10 MB input),
 * free links, 1F1B over 2 devices, 4 layers a stage, 4 microbatches. A stage that
 * recomputes n of its 4 layers runs B in 8 + n ms and keeps 10 n + 100 (4 - n) MB per
 * microbatch in flight, plus, while a backward runs, the 100 MB its recompute rebuilds.
 * 1F1B over P = 2 with equal stages takes (M + P - 1) (F + B) = 5 (12 + n) ms, and
 * device 0 holds two microbatches at its first backward.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "layout_search.h"
#include "megatron.h"
#include "strbuf.h"
#include "synth.h"
#include "target.h"
#include "../tap.h"

#define MB 1000000.0

static void block_model(struct model *m)
{
	synth_model(m, 8, 1, 2, 0);
	for (int i = 0; i < m->nlayers; i++) {
		m->layers[i].act_bytes = 100000000;
		m->layers[i].in_bytes = 10000000;
	}
}

static int build(struct plan *p, const struct model *m, const struct cluster *c, const char *part)
{
	struct baseline_spec spec = { SCHED_1F1B, 4, 1, part, NULL, 0, 0, NULL };
	struct err e = ERR_INIT;

	return baseline_plan(p, m, NULL, c, NULL, &spec, &e);
}

static void simulate(const struct plan *p, double *ms, double *peak0)
{
	struct sim s;
	struct sim_opts o;
	struct metrics mt;
	struct err e = ERR_INIT;

	memset(&s, 0, sizeof(s));
	memset(&mt, 0, sizeof(mt));
	sim_opts_default(&o);
	*ms = *peak0 = NAN;
	if (sim_run(&s, p, &o, &mt, &e) == 0) {
		*ms = mt.makespan_ms;
		*peak0 = (double)mt.dev[0].peak_mem_bytes;
	}
	metrics_release(&mt);
	sim_release(&s);
}

static void closed_form(const struct model *m, const struct cluster *c)
{
	for (int n = 0; n <= 4; n++) {
		struct plan p;
		double ms, peak, want_peak;

		if (build(&p, m, c, "4,4") < 0) {
			ok(0, "the 1F1B plan builds");
			return;
		}
		if (n > 0)
			megatron_recompute_block(&p, n);
		is_int(p.stages[0].recompute, n ? RECOMPUTE_FULL : RECOMPUTE_NONE, "n %d: the stages' mode", n);
		is_int(p.stages[1].recompute_layers, n == 4 ? 0 : n, "n %d: recompute_layers (all: 0)", n);
		simulate(&p, &ms, &peak);
		is_dbl(ms, 5.0 * (12 + n), 1e-9, "n %d: iteration (M + P - 1)(F + B + n) = %g ms", n, 5.0 * (12 + n));
		want_peak = 2 * (10 * n + 100 * (4 - n)) * MB + (n ? 100 * MB : 0);
		is_dbl(peak, want_peak, 1, "n %d: device 0's peak 2 (10n + 100(4-n)) MB + the 100 MB redo = %.0f MB", n,
		       want_peak / MB);
		plan_release(&p);
	}
}

static void round_trip(const struct model *m, const struct cluster *c)
{
	struct plan p, q;
	struct err e = ERR_INIT;
	struct strbuf sb = STRBUF_INIT;
	cJSON *root;
	char *text;

	if (build(&p, m, c, "3,5") < 0) {
		ok(0, "the plan builds");
		return;
	}
	megatron_recompute_block(&p, 2);
	p.stages[1].recompute_layers = 4;  /* a plan need not be Megatron's to round-trip */
	root = plan_to_json(&p, true);
	text = cJSON_PrintUnformatted(root);
	ok(text && strstr(text, "\"recompute\":\"full\",\"recompute_layers\":2") &&
	   strstr(text, "\"recompute\":\"full\",\"recompute_layers\":4"), "the stages write recompute_layers");
	ok(plan_from_json(&q, root, "rt.json", NULL, &e) == 0, "and read back (%s)", e.msg);
	if (e.cls == ERR_NONE) {
		ok(q.stages[0].recompute == RECOMPUTE_FULL && q.stages[0].recompute_layers == 2 &&
		   q.stages[1].recompute_layers == 4, "the round trip keeps each stage's count");
		ok(megatron_args(&q, "rt.json", &sb, &e) < 0 && strstr(e.msg, "stages[1].recompute_layers: recomputes 4"),
		   "two different counts do not export: %s", e.msg);
		plan_release(&q);
	}
	cJSON_free(text);
	cJSON_Delete(root);
	strbuf_release(&sb);
	plan_release(&p);
}

static void search(const struct model *plain, const struct cluster *c)
{
	struct model baked;
	struct plan best;
	struct target_search_opts o = { .microbatches = 4, .max_chunks = 1 };
	struct target_result r;
	struct err e = ERR_INIT;
	struct strbuf sb = STRBUF_INIT;

	if (model_copy(&baked, plain, &e) < 0)
		return;
	/* the table the layout search hands a layout that needs full recompute */
	layout_recompute_model(&baked, RECOMPUTE_FULL);
	ok(target_megatron_search(&baked, c, &o, &best, &r, &e) == 0, "full recompute fits 600 MB (%s)", e.msg);
	if (e.cls == ERR_NONE) {
		is_dbl(r.best_ms, 80, 1e-9, "full recompute, folded into the table: 5 x 16 ms");
		plan_release(&best);
	}
	model_release(&baked);

	ok(target_megatron_search_full(plain, c, &o, &best, &r, &e) == 0, "the search over the plain table runs (%s)",
	   e.msg);
	if (e.cls != ERR_NONE)
		return;
	is_int(r.recompute_layers, 2, "2 recomputed layers a stage is the fewest that fit 600 MB (1: 720 MB)");
	is_dbl(r.best_ms, 70, 1e-9, "and it beats full recompute (80 ms): 5 x 14 ms");
	is_int(best.stages[0].recompute_layers, 2, "the plan's stages carry the count");
	ok(megatron_args(&best, "b.json", &sb, &e) == 0 && strstr(sb.buf, "--recompute-method block \\\n"
	                                                              "--recompute-num-layers 2 \\\n"),
	   "its export: --recompute-method block --recompute-num-layers 2");
	strbuf_release(&sb);
	plan_release(&best);

	/* room for every activation: the search still recomputes (the layout asked for it), and
	 * one layer a stage is the least Megatron-LM's full granularity takes */
	{
		struct cluster big = *c;

		big.mem_bytes = 141000000000ULL;
		ok(target_megatron_search_full(plain, &big, &o, &best, &r, &e) == 0, "with 141 GB (%s)", e.msg);
		if (e.cls == ERR_NONE) {
			is_int(r.recompute_layers, 1, "one recomputed layer a stage");
			is_dbl(r.best_ms, 65, 1e-9, "5 x 13 ms");
			plan_release(&best);
		}
	}
}

/* The layout search ranks a layout that must recompute by what Megatron-LM's block method
 * makes of it (block_recompute), not by recomputing every layer. */
static void ranking(const struct model *plain, const struct cluster *c)
{
	struct layout_constraints k = { .pp = 2, .tp = 1, .dp = 1, .ep = 1, .zero = 0, .recompute = RECOMPUTE_FULL,
	                                .global_mb = 4, .schedules = 1u << SCHED_1F1B };
	struct layout_choice lc;
	struct err e = ERR_INIT;

	ok(layout_search(plain, c, &k, &lc, &e) == 0, "the layout search at pp 2, full recompute (%s)", e.msg);
	if (e.cls == ERR_NONE)
		is_dbl(lc.makespan_ms, 80, 1e-9, "judged recomputing every layer: 5 x 16 ms");
	k.block_recompute = true;
	ok(layout_search(plain, c, &k, &lc, &e) == 0, "and with Megatron-LM's block method (%s)", e.msg);
	if (e.cls == ERR_NONE) {
		is_dbl(lc.makespan_ms, 70, 1e-9, "judged at the fewest layers that fit, 2 a stage: 5 x 14 ms");
		ok(fabs(lc.tokens_per_s - lc.top[0].tokens_per_s) < 1e-9 && lc.tokens_per_s > 0,
		   "its tokens/s are of that time");
	}
}

int main(void)
{
	struct model m;
	struct cluster c;

	block_model(&m);
	synth_cluster(&c, 2, 2, 0, 0);
	closed_form(&m, &c);
	round_trip(&m, &c);
	c.mem_bytes = 600000000;
	search(&m, &c);
	ranking(&m, &c);
	model_release(&m);
	cluster_release(&c);
	return tap_done();
}
