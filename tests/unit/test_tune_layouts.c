/*
 * test_tune_layouts — the engine's tune-across-layouts entry point (tune_layouts.h): the
 * fastest tuned layout wins and its plan is written at it, an evaluation budget is shared
 * among the layouts and gives the same plan twice, a layout search whose deadline has
 * passed judges until one layout fits and leaves the rest, pure pipeline parallelism
 * searches nothing, and a cluster nothing fits on says so (ERR_INFEASIBLE). No wall clock:
 * the budgets here are evaluation counts and a deadline already past.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "tune_layouts.h"
#include "../tap.h"
#include "samples.h"

static long steps_seen;

static void count_step(void *arg, int k, const struct tune_step *st)
{
	(void)arg;
	(void)k;
	(void)st;
	steps_seen++;
}

/* Runs the whole: search under k (NULL: pure pipeline), tune with evals. */
static int run(const struct model *m, const struct cluster *c, const struct layout_constraints *k, long evals,
               struct tune_layouts_result *res, struct err *e)
{
	struct tune_layout L;
	struct tune_layouts_opts o = { .target = TARGET_OCTOPIPE, .relax_recompute = true, .on_step = count_step };
	int r;

	tune_opts_default(&o.tune);
	o.tune.microbatches = 16;
	o.tune.max_evals = evals;
	o.tune.time_budget_s = 0;
	if (tune_layout_pick(m, c, k, &L, e) < 0) {
		tune_layout_release(&L);
		return -1;
	}
	r = tune_layouts_run(m, c, &L, &o, res, e);
	tune_layout_release(&L);
	return r;
}

static void test_winner(void)
{
	struct model m;
	struct cluster c;
	struct layout_constraints k = { .zero = -1, .recompute = -1, .global_mb = 16 };
	struct tune_layouts_result res, again;
	struct err e = ERR_INIT;
	long evals;
	double secs;
	int worse = 0;

	if (load_sample("gpt-13b", "8xH200", &m, &c) < 0)
		return;
	steps_seen = 0;
	ok(run(&m, &c, &k, 900, &res, &e) == 0, "gpt-13b on 8 H200s tunes (%s)", e.msg);
	if (e.cls != ERR_NONE) {
		model_release(&m);
		cluster_release(&c);
		return;
	}
	ok(res.ntried == LAYOUT_TOP, "%d layouts tuned (%d)", LAYOUT_TOP, res.ntried);
	ok(res.best >= 0 && res.best < res.ntried && res.tried[res.best].ok, "a winner among them");
	for (int i = 0; i < res.ntried; i++)
		if (res.tried[i].ok && res.tried[i].tokens_per_s > res.tried[res.best].tokens_per_s)
			worse++;
	is_int(worse, 0, "the winner is the fastest tuned");
	ok(res.t != NULL && steps_seen > 0, "the steps were heard (%ld)", steps_seen);
	tune_stats(res.t, &evals, &secs);
	ok(evals <= 900 / LAYOUT_TOP + 2, "the evaluation budget is shared: %ld of 900 for the winner", evals);
	ok(res.plan.has_parallel || !res.L->use,
	   "the plan carries its layout");
	ok(!res.mt.noom && res.mt.makespan_ms <= res.baseline_ms * (1 + 1e-9),
	   "it fits and is no slower than its best baseline (%.1f <= %.1f ms)", res.mt.makespan_ms, res.baseline_ms);
	ok(res.mt.makespan_ms >= res.mt.lower_bound_tight_ms * (1 - 1e-9), "and no faster than its tight bound");
	ok(run(&m, &c, &k, 900, &again, &e) == 0 && again.mt.makespan_ms == res.mt.makespan_ms &&
	   again.best == res.best, "the same evaluation budget gives the same plan");
	tune_layouts_release(&again);
	tune_layouts_release(&res);
	model_release(&m);
	cluster_release(&c);
}

static void test_deadline(void)
{
	struct model m;
	struct cluster c;
	struct layout_constraints k = { .zero = -1, .recompute = -1, .global_mb = 512 };
	struct layout_choice all, cut;
	struct err e = ERR_INIT;

	if (load_sample("llama2-70b", "64xH200", &m, &c) < 0)
		return;
	ok(layout_search(&m, &c, &k, &all, &e) == 0, "llama2-70b on 64 H200s: the whole search (%s)", e.msg);
	is_int(all.skipped, 0, "without a deadline nothing is left");
	k.deadline_s = clock_now_s() - 1;
	ok(layout_search(&m, &c, &k, &cut, &e) == 0, "a deadline already past still answers a layout (%s)", e.msg);
	ok(cut.candidates < all.candidates && cut.skipped > 0, "judging fewer layouts (%d of %d, %d left)",
	   cut.candidates, all.candidates, cut.skipped);
	ok(cut.ntop >= 1 && isfinite(cut.makespan_ms), "one that fits");
	model_release(&m);
	cluster_release(&c);
}

static void test_pp_and_infeasible(void)
{
	struct model m;
	struct cluster c;
	struct tune_layouts_result res;
	struct layout_constraints k = { .zero = -1, .recompute = -1, .global_mb = 16 };
	struct err e = ERR_INIT;

	if (load_sample("gpt-13b", "4xH200", &m, &c) < 0)
		return;
	ok(run(&m, &c, NULL, 300, &res, &e) == 0, "pure pipeline parallelism tunes (%s)", e.msg);
	if (e.cls == ERR_NONE) {
		ok(!res.L->searched && !res.L->use && res.ntried == 1, "searching nothing, one layout tuned");
		is_int(res.plan.nstages >= 4, 1, "over every GPU");
		tune_layouts_release(&res);
	}
	c.mem_bytes = 1000000;  /* 1 MB a GPU: nothing fits */
	ok(run(&m, &c, &k, 300, &res, &e) < 0 && e.cls == ERR_INFEASIBLE, "a cluster nothing fits on: %s", e.msg);
	model_release(&m);
	cluster_release(&c);
}

int main(void)
{
	test_winner();
	test_deadline();
	test_pp_and_infeasible();
	return tap_done();
}
