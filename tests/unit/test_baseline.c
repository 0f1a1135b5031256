/*
 * test_baseline — the baseline partitioners (uniform, balanced, Megatron's, explicit
 * counts; on a cost-model table with embedding and head) and the engine's one
 * best-baseline loop (baseline_run_all: a result per recipe, the shortest feasible
 * iteration is the best, none when nothing fits). Split from test_sim, which keeps the
 * simulator itself.
 */
#include "config.h"

#include <stdio.h>

#include "baseline.h"
#include "partition.h"
#include "synth.h"
#include "../tap.h"

static void test_partitions(void)
{
	struct model m;
	struct err e = ERR_INIT;
	int first[40];

	synth_model(&m, 10, 1, 1, 1);
	m.layers[9].f_ms = 10; /* head: 12 ms of the 39 total */
	ok(partition_uniform(&m, 4, first, &e) == 0 && first[1] == 3 && first[2] == 6 && first[3] == 8 && first[4] == 10,
	   "uniform: 3,3,2,2");
	ok(partition_balanced(&m, 4, first, &e) == 0, "balanced");
	is_dbl(partition_max_cost(&m, 4, first), 12, 1e-12, "balanced puts the head alone (max stage 12 ms)");
	ok(first[3] == 9, "the last stage is just the head");
	ok(partition_megatron(&m, 4, first, true, &e) == 0 && first[1] == 2 && first[4] - first[3] == 2,
	   "megatron accounted: embedding and loss count as layers (2,3,3,2)");
	ok(partition_megatron(&m, 4, first, false, &e) == 0 && first[1] == 2 && first[2] == 5 && first[3] == 8,
	   "megatron: 10 layers on 4 stages, the remainder in the middle (2,3,3,2)");
	ok(partition_counts(&m, 3, "4,4,2", first, &e) == 0 && first[2] == 8, "explicit counts");
	ok(partition_counts(&m, 3, "4,4,3", first, &e) < 0 && strstr(e.msg, "covers 11 layers"), "counts must cover the model");
	ok(partition_uniform(&m, 11, first, &e) < 0 && strstr(e.msg, "only 10 layers"), "more stages than layers is refused");
	model_release(&m);
	/* a cost-model table: embedding, 32 decoder layers, head (Gemma's 32 layers on 4
	 * stages: Megatron gives 8,8,8,8 decoder layers, the embedding and the head on top) */
	synth_model(&m, 34, 1, 1, 1);
	free(m.layers[0].kind);
	m.layers[0].kind = strdup("embedding");
	free(m.layers[33].kind);
	m.layers[33].kind = strdup("head");
	ok(partition_megatron(&m, 4, first, false, &e) == 0 && first[1] == 9 && first[2] == 17 && first[3] == 25 &&
	   first[4] == 34, "megatron on a cost-model table: 8,8,8,8 decoder layers + embedding + head");
	ok(partition_megatron(&m, 4, first, true, &e) == 0 && first[1] == 8 && first[2] == 17 && first[3] == 26 &&
	   first[4] == 34, "megatron accounted: 7,9,9,7 decoder layers + embedding + head");
	ok(partition_megatron(&m, 8, first, false, &e) == 0 && first[1] == 5 && first[8] - first[7] == 5,
	   "megatron over 8 virtual stages (interleaved): 4 decoder layers each, the head with the last 4");
	ok(partition_megatron(&m, 33, first, false, &e) < 0 && strstr(e.msg, "32 decoder layers"),
	   "more stages than decoder layers: refused (%s)", e.msg);
	model_release(&m);
}

/* The engine's one best-baseline loop: a result per recipe in the table's order, the
 * best being the shortest iteration among those that run within memory. */
static void test_baseline_run_all(void)
{
	struct model m;
	struct cluster c;
	struct baseline_set bs;
	struct err e = ERR_INIT;
	int best = -1, nbuilt = 0;

	synth_model(&m, 6, 1, 1, 1);
	synth_cluster(&c, 4, 4, 0, 0);
	ok(baseline_run_all(&bs, &m, &c, 8, &e) == 0, "baseline_run_all runs (%s)", e.msg);
	is_int(bs.n, baseline_nrecipes, "one result per recipe");
	for (int i = 0; i < bs.n; i++) {
		const struct baseline_result *r = &bs.r[i];

		ok(r->recipe == &baseline_recipes[i], "result %d is recipe %s", i, baseline_recipes[i].name);
		if (!r->built) {
			ok(r->why.cls == ERR_INPUT && r->why.msg[0], "%s cannot apply and says why (%s)", r->recipe->name,
			   r->why.msg);
			continue;
		}
		nbuilt++;
		ok(r->ran && r->feasible, "%s runs within memory", r->recipe->name);
		if (r->feasible && (best < 0 || r->m.makespan_ms < bs.r[best].m.makespan_ms))
			best = i;
	}
	/* 6 layers on 4 gpus: interleaved's and zb-v's 8 stages do not fit, the others do */
	ok(nbuilt > 0 && nbuilt < bs.n, "some recipes apply, some cannot (%d of %d)", nbuilt, bs.n);
	ok(best >= 0 && bs.best == best, "the best is the shortest feasible iteration (%d)", bs.best);
	baseline_set_release(&bs);

	/* over memory everywhere: every recipe runs, none is feasible, there is no best */
	for (int l = 0; l < m.nlayers; l++)
		m.layers[l].act_bytes = 1000000000;
	c.mem_bytes = 1000000000ULL;
	ok(baseline_run_all(&bs, &m, &c, 8, &e) == 0, "baseline_run_all over memory");
	{
		int nfeasible = 0, nran = 0;

		for (int i = 0; i < bs.n; i++) {
			nran += bs.r[i].ran;
			nfeasible += bs.r[i].feasible;
		}
		ok(nran > 0 && nfeasible == 0 && bs.best == -1, "nothing fits: no best (%d ran)", nran);
		ok(bs.r[0].ran && bs.r[0].peak_mem_bytes > (double)c.mem_bytes, "the peak is kept (%.0f)",
		   bs.r[0].peak_mem_bytes);
	}
	baseline_set_release(&bs);
	model_release(&m);
	cluster_release(&c);
}

int main(void)
{
	test_partitions();
	test_baseline_run_all();
	return tap_done();
}
