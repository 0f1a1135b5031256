/*
 * tune_layouts — tuning across parallel layouts (see tune_layouts.h).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "parallel.h"
#include "sim.h"
#include "tune_layouts.h"

int tune_layout_pick(const struct model *m, const struct cluster *c, const struct layout_constraints *k,
                     struct tune_layout *out, struct err *e)
{
	memset(out, 0, sizeof(*out));
	if (!k)
		return 0;
	if (layout_search(m, c, k, &out->lc, e) < 0)
		return -1;
	out->searched = true;
	out->global_batch = (long)k->global_mb * m->micro_batch_size;
	return tune_layout_adopt(m, c, 0, out, e);
}

int tune_layout_adopt(const struct model *m, const struct cluster *c, int k, struct tune_layout *out,
                      struct err *e)
{
	if (k > 0) {
		const struct layout_pick *pk = &out->lc.top[k];

		out->lc.par = pk->par;
		out->lc.recompute = pk->recompute;
		out->lc.microbatches = pk->microbatches;
		out->lc.makespan_ms = pk->makespan_ms;
		out->lc.tokens_per_s = pk->tokens_per_s;
		out->lc.peak_bytes = pk->peak_bytes;
		out->lc.bound_ms = pk->bound_ms;
		out->lc.estimate_ms = pk->estimate_ms;
	}
	model_release(&out->rm);
	cluster_release(&out->rc);
	out->use = out->searched && (!parallel_is_pipeline_only(&out->lc.par) || out->lc.par.pp != c->devices ||
	                             out->lc.recompute != RECOMPUTE_NONE);
	if (out->use) {
		if (parallel_replica(m, c, &out->lc.par, &out->rm, &out->rc, e) < 0)
			return -1;
		layout_recompute_model(&out->rm, out->lc.recompute);
	}
	return 0;
}

void tune_layout_release(struct tune_layout *l)
{
	model_release(&l->rm);
	cluster_release(&l->rc);
	memset(l, 0, sizeof(*l));
}

const struct model *tune_layout_model(const struct tune_layout *l, const struct model *m)
{
	return l->use ? &l->rm : m;
}

const struct cluster *tune_layout_cluster(const struct tune_layout *l, const struct cluster *c)
{
	return l->use ? &l->rc : c;
}

/* One layout's candidate: its plan and metrics on the replica, and its tuner. */
struct cand {
	struct plan p;
	struct metrics mt;
	struct tuner *t;
	struct target_result tr;
	double baseline_ms;
};

/* Megatron-LM's own schedules at layout L, the best simulated. A layout that recomputes
 * fully is searched over the replica's table without recompute, every stage recomputing
 * (--recompute-method uniform) or, when it fits and is faster, only its first N layers
 * (block): the folded-in table would overstate the memory. */
static int tune_megatron(const struct model *m, const struct cluster *c, const struct tune_layout *L,
                         const struct tune_opts *ko, struct cand *out, struct err *e)
{
	struct target_search_opts so = { .microbatches = ko->microbatches, .max_chunks = ko->max_stages_per_device,
	                                 .time_budget_s = ko->time_budget_s, .max_evals = ko->max_evals,
	                                 .stop = ko->stop };
	const struct cluster *rc = tune_layout_cluster(L, c);
	struct sim sm;
	struct sim_opts sopt;
	int r;

	if (L->use && L->lc.recompute == RECOMPUTE_FULL) {
		struct model plain;

		if (parallel_model(m, c, &L->lc.par, &plain, e) < 0)
			return -1;
		r = target_megatron_search_full(&plain, rc, &so, &out->p, &out->tr, e);
		model_release(&plain);
	} else {
		r = target_megatron_search(tune_layout_model(L, m), rc, &so, &out->p, &out->tr, e);
	}
	if (r < 0)
		return -1;
	memset(&sm, 0, sizeof(sm));
	sim_opts_default(&sopt);
	r = sim_run(&sm, &out->p, &sopt, &out->mt, e);
	sim_release(&sm);
	if (r < 0) {
		metrics_release(&out->mt);
		plan_release(&out->p);
		/* a deadlock of the search's own best is the search's fault, not the input's */
		e->cls = ERR_RUNTIME;
		return -1;
	}
	out->baseline_ms = out->tr.baseline_ms;
	return 0;
}

/* The tuner at one layout, run to its budget. */
static int tune_octopipe(const struct model *rm, const struct cluster *rc, const struct tune_opts *ko, int k,
                         const struct tune_layouts_opts *o, struct cand *out, struct err *e)
{
	const struct tune_step *st;
	int r;

	if (tune_new(&out->t, rm, rc, ko, e) < 0)
		return -1;
	while ((r = tune_step(out->t, &st, e)) > 0)
		if (o->on_step)
			o->on_step(o->arg, k, st);
	if (r < 0 || tune_result(out->t, &out->p, &out->mt, e) < 0) {
		tune_free(out->t);
		out->t = NULL;
		return -1;
	}
	{
		const struct tune_step *all;

		tune_steps(out->t, &all);
		out->baseline_ms = all[0].before_ms;
	}
	return 0;
}

/* The time the result's own simulations at the layout are given: a tenth of what is left,
 * at least 10 ms. */
static double reserve_s(double left)
{
	return fmax(0.01, 0.1 * left);
}

/* Tunes the k-th layout with its share of what is left. 0, or -1 with e (the layout gave no
 * plan: ERR_INFEASIBLE / ERR_INPUT; a failure of the run: ERR_RUNTIME). */
static int tune_kth(const struct model *m, const struct cluster *c, struct tune_layout *L, int k, int n,
                    const struct tune_layouts_opts *o, double deadline, struct cand *out, struct err *e)
{
	struct tune_opts ko = o->tune;

	memset(out, 0, sizeof(*out));
	if (L->searched)
		ko.microbatches = L->lc.microbatches;
	if (deadline > 0) {
		double left = deadline - clock_now_s();

		ko.time_budget_s = fmax(1e-3, (left - reserve_s(left)) / (n - k));
	}
	/* per-stage recompute where the layout's table does not recompute already */
	ko.recompute_moves = o->target == TARGET_OCTOPIPE && L->lc.recompute == RECOMPUTE_NONE;
	if (ko.max_evals > 0 && n > 1)
		ko.max_evals = ko.max_evals / n > 0 ? ko.max_evals / n : 1;
	if (o->target == TARGET_MEGATRON)
		return tune_megatron(m, c, L, &ko, out, e);
	return tune_octopipe(tune_layout_model(L, m), tune_layout_cluster(L, c), &ko, k, o, out, e);
}

static void cand_release(struct cand *x)
{
	plan_release(&x->p);
	metrics_release(&x->mt);
	tune_free(x->t);
	memset(x, 0, sizeof(*x));
}

/* The winner at its layout: the replica's table without the search's uniform recompute,
 * every stage recomputing as chosen (lighter where memory allows), simulated again. */
static int at_layout(const struct model *m, const struct cluster *c, const struct tune_layouts_opts *o,
                     double deadline, struct tune_layouts_result *res, struct err *e)
{
	struct tune_layout *L = res->L;
	struct model pm;
	struct sim sm;
	struct sim_opts so;
	int r;

	if (!L->use)
		return 0;
	if (parallel_model(m, c, &L->lc.par, &pm, e) < 0)
		return -1;
	model_release(&res->plan.model);
	res->plan.model = pm;
	/* Megatron-LM's block method leaves the stages' own counts (uniform would reset them) */
	if (!(o->target == TARGET_MEGATRON && res->tr.recompute_layers > 0) &&
	    L->lc.recompute != RECOMPUTE_NONE) /* none: the tuner's own stages, as tuned */
		plan_set_recompute(&res->plan, L->lc.recompute);
	/* the search chose it, not the user; Megatron-LM and torchtitan have one mode */
	if (L->lc.recompute != RECOMPUTE_NONE && o->relax_recompute && o->target == TARGET_OCTOPIPE &&
	    (res->relaxed = layout_relax_recompute_until(&res->plan, deadline, e)) < 0)
		return -1;
	metrics_release(&res->mt);
	memset(&sm, 0, sizeof(sm));
	sim_opts_default(&so);
	r = sim_run(&sm, &res->plan, &so, &res->mt, e);
	sim_release(&sm);
	if (r < 0)
		return -1;
	return plan_attach_parallel(&res->plan, &L->lc.par, m, c, e);
}

static void pick_of(const struct tune_layout *L, struct layout_pick *pk)
{
	*pk = (struct layout_pick){ .par = L->lc.par, .recompute = L->lc.recompute,
	                            .microbatches = L->lc.microbatches, .makespan_ms = L->lc.makespan_ms,
	                            .tokens_per_s = L->lc.tokens_per_s, .peak_bytes = L->lc.peak_bytes,
	                            .bound_ms = L->lc.bound_ms, .estimate_ms = L->lc.estimate_ms };
}

/* Where the layout recomputes, the tuner's table counts a recomputing layer's activations
 * from its forward on (an upper bound), so its plan can end slower, once priced stage by
 * stage, than the layout's own best baseline (what the layout was chosen by; where memory
 * is tight, 1F1B balanced within memory): that baseline is then the result, never a
 * slower tuned plan. */
static int beat_by_baseline(const struct model *m, const struct cluster *c, const struct tune_layouts_opts *o,
                            double deadline, struct tune_layouts_result *res, struct err *e)
{
	struct layout_pick pk;
	struct plan bp;
	struct metrics bm;
	struct err e2 = ERR_INIT;
	double tuned_ms = res->mt.makespan_ms;

	if (res->fallback || !res->L || !res->L->use || res->L->lc.recompute == RECOMPUTE_NONE ||
	    o->target != TARGET_OCTOPIPE || !(res->L->lc.makespan_ms < tuned_ms))
		return 0;
	pick_of(res->L, &pk);
	if (layout_baseline(m, c, &pk, &bp, &bm, &e2) < 0) {
		if (e2.cls != ERR_RUNTIME)
			return 0;
		*e = e2;
		return -1;
	}
	if (!(bm.makespan_ms < tuned_ms)) {
		plan_release(&bp);
		metrics_release(&bm);
		return 0;
	}
	plan_release(&res->plan);
	metrics_release(&res->mt);
	res->plan = bp;
	res->mt = bm;
	res->fallback = true;
	res->beaten_ms = tuned_ms;
	res->relaxed = 0;
	return at_layout(m, c, o, deadline, res, e);
}

/* No tuned plan fits at the first layout: the tuner's layer table counts a recomputing
 * layer's activations from its forward on, an upper bound; the search's baseline, priced
 * stage by stage, fits: it is the answer (at_layout must not recompute it again). */
static int fallback(const struct model *m, const struct cluster *c, struct tune_layouts_result *res, struct err *e)
{
	const struct layout_choice *lc = &res->L->lc;
	struct layout_pick pk0 = lc->top[0];

	if (layout_baseline(m, c, &pk0, &res->plan, &res->mt, e) < 0)
		return -1;
	res->fallback = true;
	res->baseline_ms = res->mt.makespan_ms;
	return 0;
}

/* A layout on the heap: the tuner keeps pointers to its replica's model and cluster. */
static void layout_free(struct tune_layout *L)
{
	if (L)
		tune_layout_release(L);
	free(L);
}


/* Keeps x at layout *L as the winner when it beats it (whole-job tokens/s of one replica's
 * plan, as the search ranks layouts); what loses is released. */
static void keep_best(struct tune_layouts_result *res, struct cand *best, struct cand *x, struct tune_layout *L,
                      int k, double tps, double *best_tps)
{
	if (res->best < 0 || tps > *best_tps) {
		cand_release(best);
		*best = *x;
		layout_free(res->L);
		res->L = L;
		res->best = k;
		*best_tps = tps;
	} else {
		cand_release(x);
		layout_free(L);
	}
	memset(x, 0, sizeof(*x));
}

/* Tunes the ranked layouts, the first being first (moved from *first); the winner's
 * layout into res->L and its plan into best. -1 only on a failure of the run (ERR_RUNTIME,
 * or a single layout's error); no layout giving a plan leaves res->best at -1 and the last
 * reason in last. */
static int tune_ranked(const struct model *m, const struct cluster *c, struct tune_layout *first, int n,
                       const struct tune_layouts_opts *o, double deadline, struct tune_layouts_result *res,
                       struct cand *best, struct err *last, struct err *e)
{
	struct layout_choice lc = first->lc;
	long global_batch = first->global_batch;
	double best_tps = -INFINITY;

	res->best = -1;
	for (int k = 0; k < n; k++) {
		struct tune_layouts_tried *tr = &res->tried[k];
		struct tune_layout *L;
		struct cand x;
		struct err ek = ERR_INIT;
		double tps;

		if (k > 0 && ((o->tune.stop && *o->tune.stop) || (deadline > 0 && clock_now_s() >= deadline)))
			break;
		if (!(L = calloc(1, sizeof(*L))))
			return err_set(e, ERR_RUNTIME, "out of host memory");
		if (k == 0) {
			*L = *first;
			memset(first, 0, sizeof(*first));
		} else {
			L->searched = true;
			L->global_batch = global_batch;
			L->lc = lc;
			if (tune_layout_adopt(m, c, k, L, e) < 0) {
				layout_free(L);
				return -1;
			}
		}
		res->ntried = k + 1;
		pick_of(L, &tr->pick);
		if (o->on_event)
			o->on_event(o->arg, TL_EV_START, k, tr);
		if (tune_kth(m, c, L, k, n, o, deadline, &x, &ek) < 0) {
			layout_free(L);
			if (ek.cls == ERR_RUNTIME) {
				*e = ek;
				return -1;
			}
			/* another of the ranked layouts may fit as the tuner builds its plans */
			snprintf(tr->why, sizeof(tr->why), "%s", ek.msg);
			*last = ek;
			if (o->on_event)
				o->on_event(o->arg, TL_EV_DONE, k, tr);
			continue;
		}
		tps = x.mt.noom ? -1 : x.mt.throughput_tokens_per_s;
		tr->ok = true;
		tr->tokens_per_s = tps;
		if (o->on_event)
			o->on_event(o->arg, TL_EV_DONE, k, tr);
		keep_best(res, best, &x, L, k, tps, &best_tps);
	}
	return 0;
}

int tune_layouts_run(const struct model *m, const struct cluster *c, struct tune_layout *L,
                     const struct tune_layouts_opts *o, struct tune_layouts_result *res, struct err *e)
{
	double deadline = o->deadline_s;
	struct cand best = { 0 };
	struct err last = ERR_INIT;
	struct layout_choice lc = L->lc;
	bool searched = L->searched;
	long global_batch = L->global_batch;
	int n;

	memset(res, 0, sizeof(*res));
	if (deadline <= 0 && o->tune.time_budget_s > 0)
		deadline = clock_now_s() + o->tune.time_budget_s;
	n = o->ntune > 0 ? o->ntune : LAYOUT_TOP;
	if (!searched || lc.interrupted || lc.ntop < n)
		n = searched && !lc.interrupted && lc.ntop > 0 ? lc.ntop : 1;
	if (tune_ranked(m, c, L, n, o, deadline, res, &best, &last, e) < 0)
		goto fail;
	if (res->best < 0) {
		/* the layouts' own baselines: a layout the tuner's table cannot fit may still run */
		if (!(last.cls == ERR_INFEASIBLE && o->target == TARGET_OCTOPIPE && searched)) {
			*e = last;
			goto fail;
		}
		if (!res->L && !(res->L = calloc(1, sizeof(*res->L)))) {
			err_set(e, ERR_RUNTIME, "out of host memory");
			goto fail;
		}
		res->L->searched = true;
		res->L->global_batch = global_batch;
		res->L->lc = lc;
		if (tune_layout_adopt(m, c, 0, res->L, e) < 0 || fallback(m, c, res, e) < 0)
			goto fail;
		res->best = 0;
	} else {
		res->plan = best.p;
		res->mt = best.mt;
		res->t = best.t;
		res->tr = best.tr;
		res->baseline_ms = best.baseline_ms;
	}
	res->interrupted = (o->tune.stop && *o->tune.stop) || (res->t && tune_interrupted(res->t));
	if (at_layout(m, c, o, deadline, res, e) < 0 || beat_by_baseline(m, c, o, deadline, res, e) < 0)
		goto fail;
	if (o->target != TARGET_OCTOPIPE && target_check(o->target, &res->plan, e) < 0) {
		char why[sizeof(e->msg)];

		snprintf(why, sizeof(why), "%s", e->msg);
		err_set(e, ERR_INFEASIBLE, "no plan found that %s runs: %.400s",
		        o->target == TARGET_MEGATRON ? "Megatron-LM" : "torchtitan", why);
		goto fail;
	}
	return 0;
fail:
	if (res->best < 0)
		cand_release(&best);
	tune_layouts_release(res);
	return -1;
}

void tune_layouts_release(struct tune_layouts_result *res)
{
	plan_release(&res->plan);
	metrics_release(&res->mt);
	tune_free(res->t);
	layout_free(res->L);
	memset(res, 0, sizeof(*res));
}
