/*
 * tune — the three-phase bubble-aware tuner (see tune.h): the driver.
 *
 * The one idea: a candidate is not a plan but a small state (boundaries, devices,
 * scheduler knobs, and once the scheduling phase has refined it an explicit order) that
 * the simulator turns into a plan and an iteration time in one pass. Moves are cheap to
 * propose and exact to replay, and the phases only differ in which states they propose
 * (tune_partition.c, tune_place.c, tune_sched.c). This file evaluates them, keeps the
 * best of each list when it beats the current state, runs the phases in turn until a
 * round improves nothing, restarts from the other starting structures, and with a budget
 * goes on as an iterated local search: perturb the best state and descend again.
 */
#include "config.h"
#include "tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baseline.h"
#include "json.h"
#include "parallel.h"
#include "sim.h"
#include "strbuf.h"
#include "tune_impl.h"
#include "clock.h"

void tune_opts_default(struct tune_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_stages_per_device = 3;
	o->seed = 1;
}

const char *tune_phase_name(enum tune_phase p)
{
	static const char *const names[] = { "start", "partition", "placement", "scheduling" };

	return (unsigned)p < 4 ? names[p] : "?";
}

/* Whether (ms, tie) beats (best_ms, best_tie): a shorter iteration, or the same one with
 * devices that finish earlier on the whole. The tie-break lets a move that fills one
 * device's idle time be kept before the iteration time can show it (the next fills
 * build on it); both strictly drop along a descent, so it cannot cycle. */
static bool better(double ms, double tie, double best_ms, double best_tie)
{
	if (ms < best_ms * (1 - IMPROVE_EPS))
		return true;
	return ms <= best_ms * (1 + IMPROVE_EPS) && tie < best_tie * (1 - IMPROVE_EPS);
}

/* ---- candidate lists ------------------------------------------------------------------- */

struct cand *tune_cand_add(struct tuner *t, const struct tune_state *from, enum tune_move_kind kind, int a, int b)
{
	struct cand *c;

	if (t->ncands == t->ccap) {
		int cap = t->ccap ? t->ccap * 2 : 64;
		struct cand *n = realloc(t->cands, (size_t)cap * sizeof(*n));

		if (!n) {
			t->oom = true;
			return NULL;
		}
		t->cands = n;
		t->ccap = cap;
	}
	c = &t->cands[t->ncands];
	if (tune_state_copy(&c->st, from) < 0) {
		t->oom = true;
		return NULL;
	}
	c->kind = kind;
	c->a = a;
	c->b = b;
	c->what[0] = '\0';
	c->score = 0;
	t->ncands++;
	return c;
}

static void cands_clear(struct tuner *t)
{
	for (int i = 0; i < t->ncands; i++)
		tune_state_release(&t->cands[i].st);
	t->ncands = 0;
	t->ci = 0;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->score < y->score ? -1 : x->score > y->score;
}

/* Keeps the first `from` candidates, sorts the rest by score and keeps the best keep. */
void tune_rank(struct tuner *t, int from, int keep)
{
	int n = t->ncands - from;

	if (n <= 1)
		return;
	/* a seeded shuffle first, so equal scores are tried in a seed-dependent order */
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(tune_rand(t) % (unsigned long long)(i + 1));
		struct cand tmp = t->cands[from + i];

		t->cands[from + i] = t->cands[from + j];
		t->cands[from + j] = tmp;
	}
	qsort(t->cands + from, (size_t)n, sizeof(struct cand), cand_cmp);
	while (t->ncands > from + keep)
		tune_state_release(&t->cands[--t->ncands].st);
}

static bool is_current(const struct tuner *t, const struct tune_state *s)
{
	return tune_state_equal(s, &t->cur);
}

/* Drops the last candidate when it is the current state or cannot fit. */
void tune_cand_keep(struct tuner *t)
{
	struct cand *c = &t->cands[t->ncands - 1];

	if (is_current(t, &c->st) || !tune_static_fits(t, &c->st))
		tune_state_release(&t->cands[--t->ncands].st);
}

void tune_cands_drop(struct tuner *t, int from)
{
	while (t->ncands > from)
		tune_state_release(&t->cands[--t->ncands].st);
}

void tune_cands_keep(struct tuner *t, int from, const bool *keep)
{
	int w = from;

	for (int i = from; i < t->ncands; i++) {
		if (keep[i - from] && !is_current(t, &t->cands[i].st) && tune_static_fits(t, &t->cands[i].st))
			t->cands[w++] = t->cands[i];
		else
			tune_state_release(&t->cands[i].st);
	}
	t->ncands = w;
}










static void generate(struct tuner *t)
{
	double t1 = clock_now_s();

	cands_clear(t);
	switch (t->phase) {
	case PHASE_PARTITION: tune_gen_partition(t); break;
	case PHASE_PLACEMENT: tune_gen_placement(t); break;
	case PHASE_SCHEDULING: tune_gen_scheduling(t); break;
	default: break;
	}
	t->gen_s = clock_now_s() - t1;
}

/* ---- steps ---------------------------------------------------------------------------- */

struct tune_step *tune_record(struct tuner *t, enum tune_phase ph, enum tune_move_kind kind, int a, int b,
                                const char *what, double before, double after)
{
	struct tune_step *s;

	if (t->nsteps == t->scap) {
		int cap = t->scap ? t->scap * 2 : 32;
		struct tune_step *n = realloc(t->steps, (size_t)cap * sizeof(*n));

		if (!n) {
			t->oom = true;
			return NULL;
		}
		t->steps = n;
		t->scap = cap;
	}
	s = &t->steps[t->nsteps];
	memset(s, 0, sizeof(*s));
	if (tune_state_copy(&s->state, &t->cur) < 0) {
		t->oom = true;
		return NULL;
	}
	s->index = t->nsteps++;
	s->phase = ph;
	s->kind = kind;
	s->a = a;
	s->b = b;
	snprintf(s->what, sizeof(s->what), "%s", what);
	s->before_ms = before;
	s->after_ms = after;
	s->bubble_after = t->cur_metrics.bubble_ratio;
	return s;
}


/* ---- the tuner ------------------------------------------------------------------------ */


/* ---- the budget and iterated local search --------------------------------------------- */

/* Whether the search must stop now: time, evaluations, or an interrupt. The time budget
 * holds for the whole tuning, its result included: the search stops when one more
 * candidate and the result's two simulations (the plan regenerated, then its metrics), at
 * the mean time a candidate has taken so far, and the next candidates' generation (as long
 * as the last one took) would pass it. */
/* The moment past which no candidate may start for the time budget to hold: the budget
 * less BUDGET_RESERVE_EVALS simulations at the search's pace and the last generation's
 * seconds (a budget must be set). */
static double budget_deadline(const struct tuner *t, double now)
{
	double per_eval = t->started && t->evals > t->search_evals0
	                          ? (now - t->search_t0) / (double)(t->evals - t->search_evals0) : 0;

	return t->t0 + t->opts.time_budget_s - BUDGET_RESERVE_EVALS * per_eval - t->gen_s;
}

static bool out_of_budget(struct tuner *t)
{
	double now;

	if (t->opts.stop && *t->opts.stop) {
		t->interrupted = true;
		return true;
	}
	if (t->opts.max_evals > 0 && t->evals >= t->opts.max_evals)
		return true;
	if (t->opts.time_budget_s <= 0)
		return false;
	now = clock_now_s();
	return now > budget_deadline(t, now);
}

/* A budget makes the tuner anytime: past convergence it perturbs and descends again. */
static bool anytime(const struct tuner *t)
{
	return t->opts.time_budget_s > 0 || t->opts.max_evals > 0;
}

/* One random change to s (a kick), described into what; false when it did not apply. */
static bool kick(struct tuner *t, struct tune_state *s, struct strbuf *what)
{
	int S = s->nstages, D = t->cluster->devices;

	switch (tune_rand(t) % 5) {
	case 4: { /* another structure: a stage count, round robin, zigzag or open V, balanced */
		static const char *const shapes[] = { "round robin", "in a zigzag", "in an open V",
		                                      "in an open V, the ends alone" };
		int lo = D, hi = t->max_stages, n = lo + (int)(tune_rand(t) % (unsigned)(hi - lo + 1));
		unsigned long long x = tune_rand(t);
		/* the open V where a V cannot be (fewer layers than 2D) */
		int shape = n <= D ? 0 : n < 2 * D && t->model->nlayers < 2 * D ? (int)(x % 4) : (int)(x & 1);
		struct tune_state r;

		if (n < 1 || tune_state_alloc(&r, n) < 0)
			return false;
		r.sched = s->sched;
		if (shape == 1)
			tune_place_zigzag(&r, D);
		else if (shape == 0)
			tune_place_round_robin(&r, D);
		if ((shape >= 2 && !tune_place_open_v(&r, D, shape == 3)) || !tune_partition_state(t, &r, NULL, 0)) {
			tune_state_release(&r);
			return false;
		}
		tune_state_release(s);
		*s = r;
		strbuf_addf(what, " %d stages %s", n, shapes[shape]);
		return true;
	}
	case 0: { /* a boundary moves by 1-3 layers */
		int b, delta;

		if (S < 2)
			return false;
		b = 1 + (int)(tune_rand(t) % (unsigned)(S - 1));
		delta = 1 + (int)(tune_rand(t) % 3);
		if (tune_rand(t) & 1)
			delta = -delta;
		if (s->first[b] + delta <= s->first[b - 1] || s->first[b] + delta >= s->first[b + 1])
			return false;
		s->first[b] += delta;
		strbuf_addf(what, " boundary %d %+d", b, delta);
		return true;
	}
	case 1: { /* a stage to another device */
		int st = (int)(tune_rand(t) % (unsigned)S), d = (int)(tune_rand(t) % (unsigned)D);

		if (d == s->device[st] || tune_stages_on(s, d) >= t->opts.max_stages_per_device || tune_stages_on(s, s->device[st]) < 2 ||
		    (st > 0 && s->device[st - 1] == d) || (st + 1 < S && s->device[st + 1] == d))
			return false;
		strbuf_addf(what, " stage %d to gpu %d", st, d);
		s->device[st] = d;
		tune_state_drop_order(s);
		return true;
	}
	case 2: { /* two stages swap devices */
		int a = (int)(tune_rand(t) % (unsigned)S), b = (int)(tune_rand(t) % (unsigned)S), x;

		if (s->device[a] == s->device[b])
			return false;
		x = s->device[a];
		s->device[a] = s->device[b];
		s->device[b] = x;
		tune_state_drop_order(s);
		strbuf_addf(what, " swap stages %d and %d", a < b ? a : b, a < b ? b : a);
		return true;
	}
	default: { /* the scheduler's knobs */
		static const char *const names[] = { "alternation", "deferral", "depth", "W cap", "room kept" };
		/* the room kept for later stages only where memory binds (else no change) */
		int k = (int)(tune_rand(t) % (t->mem_binds ? 5 : 4));

		if (k == 0)
			s->sched.alternate = !s->sched.alternate;
		else if (k == 1)
			s->sched.defer_arrivals = !s->sched.defer_arrivals;
		else if (k == 2)
			s->sched.cap_extra = (int)(tune_rand(t) % 5) - 1;
		else if (k == 3)
			s->sched.wcap = (int[]){ 0, 1, D, 2 * D }[tune_rand(t) % 4];
		else
			s->sched.reserve = (int)(tune_rand(t) % 3);
		strbuf_addf(what, " %s", names[k]);
		tune_state_drop_order(s);
		return true;
	}
	}
}

/* Makes s (taken over) the current state and starts a round at the partition phase. */
static void set_current(struct tuner *t, struct tune_state s)
{
	tune_state_release(&t->cur);
	t->cur = s;
	t->cur_ms = tune_eval(t, &t->cur, &t->cur_metrics);
	t->cur_tie = t->eval_tie;
	t->rounds_done = 0;
	t->round_improved = false;
	t->tabu_boundary = -1;
	t->phase = PHASE_PARTITION;
	generate(t);
}

/* Perturbs the best state (1 to 4 kicks, more after each fruitless one), makes it the
 * current one and records the step; returns it, or NULL when out of host memory. */
static struct tune_step *perturb(struct tuner *t)
{
	struct tune_state s;
	struct strbuf what = STRBUF_INIT;
	struct tune_step *st;
	double before = t->cur_ms;
	int want = 1 + t->kicks % 4, done = 0;

	if (tune_state_copy(&s, &t->best) < 0)
		return NULL;
	strbuf_addstr(&what, "perturb the best:");
	for (int tries = 0; done < want && tries < 64; tries++) {
		struct tune_state n;
		size_t len = what.len;

		if (tune_state_copy(&n, &s) < 0) {
			tune_state_release(&s);
			strbuf_release(&what);
			return NULL;
		}
		if (kick(t, &n, &what) && tune_static_fits(t, &n) && !tune_state_equal(&n, &s)) {
			tune_state_release(&s);
			s = n;
			done++;
		} else {
			tune_state_release(&n);
			strbuf_truncate(&what, len);
		}
	}
	t->kicks++;
	set_current(t, s);
	st = strbuf_failed(&what) ? NULL
	     : tune_record(t, PHASE_START, MOVE_RESTRUCTURE, t->cur.nstages, 0, what.buf, before, t->cur_ms);
	strbuf_release(&what);
	return st;
}

/* The current list is done: on to the next phase, or after the scheduling phase to the
 * next round. True when the search has converged (a round improved nothing, or the
 * rounds allowed are done). */
static bool next_phase(struct tuner *t)
{
	if (t->phase != PHASE_SCHEDULING) {
		t->phase++;
		generate(t);
		return false;
	}
	t->rounds_done++;
	if (!t->round_improved || (t->opts.max_rounds > 0 && t->rounds_done >= t->opts.max_rounds))
		return true;
	t->round_improved = false;
	t->phase = PHASE_PARTITION;
	generate(t);
	return false;
}

/* Restarts from the next starting structure; NULL when none is left (t->oom says whether
 * the step could not be recorded). */
static struct tune_step *restart(struct tuner *t)
{
	double before = t->cur_ms;
	char what[200];
	int k;

	while (t->next_start < t->nstarts && !isfinite(t->start_ms[t->next_start]))
		t->next_start++;
	if (t->next_start >= t->nstarts)
		return NULL;
	k = t->next_start++;
	set_current(t, t->starts[k]);
	memset(&t->starts[k], 0, sizeof(t->starts[k]));
	snprintf(what, sizeof(what), "restart from %d stages placed %s", t->cur.nstages, t->start_shape[k]);
	return tune_record(t, PHASE_START, MOVE_RESTRUCTURE, t->cur.nstages, 0, what, before, t->cur_ms);
}

/* No order of this partition and placement can be faster: every op of a device waits for
 * the first microbatch's forward to reach the device's first stage, and the device then
 * runs all its work (transfers and per-op overheads only add). */
double tune_state_bound(const struct tuner *t, const struct tune_state *s)
{
	double fill = 0, worst = 0, *load = t->load;
	bool *seen = t->seen;

	for (int d = 0; d < t->cluster->devices; d++) {
		load[d] = 0;
		seen[d] = false;
	}
	for (int st = 0; st < s->nstages; st++) {
		int d = s->device[st];
		double sp = t->cluster->device_speed[d], f = 0;

		if (!seen[d]) {
			seen[d] = true;
			load[d] = fill;
		}
		for (int l = s->first[st]; l < s->first[st + 1]; l++) {
			load[d] += t->layer_cost[l] / sp * t->opts.microbatches;
			f += t->layer_f[l] / sp;
		}
		fill += f;
	}
	for (int d = 0; d < t->cluster->devices; d++)
		worst = fmax(worst, load[d]);
	return worst;
}

/* Best improvement: simulates the rest of the (short, ranked) list, except the candidates
 * whose bound already exceeds the current time, on the pool's threads; the index of the
 * best candidate that beats the current state, or -1. A budget of simulations takes the
 * candidates in list order, as one thread would, so the plan does not depend on the
 * threads. */
static int best_candidate(struct tuner *t)
{
	int best = -1, n = 0, *idx = malloc((size_t)(t->ncands - t->ci) * sizeof(int));
	double best_ms = t->cur_ms, best_tie = t->cur_tie;
	struct tune_evalres *res = malloc((size_t)(t->ncands - t->ci) * sizeof(*res));

	if (!idx || !res) {
		t->oom = true;
		t->ci = t->ncands;
		free(idx);
		free(res);
		return -1;
	}
	while (t->ci < t->ncands && !out_of_budget(t)) {
		long left = t->opts.max_evals > 0 ? t->opts.max_evals - t->evals : t->ncands;
		int from = n;

		for (; t->ci < t->ncands && n - from < left; t->ci++) {
			if (tune_state_bound(t, &t->cands[t->ci].st) > t->cur_ms * (1 + IMPROVE_EPS))
				t->pruned++;
			else
				idx[n++] = t->ci;
		}
		tune_pool_run(t, idx + from, n - from, t->opts.time_budget_s > 0 ? budget_deadline(t, clock_now_s()) : 0,
		              res + from);
		for (int i = from; i < n; i++) {
			tune_eval_count(t, &res[i]);
			if (better(res[i].ms, res[i].tie, best_ms, best_tie)) {
				best_ms = res[i].ms;
				best_tie = res[i].tie;
				best = idx[i];
			}
		}
	}
	free(idx);
	free(res);
	return best;
}

/* Makes candidate c the current state and records the step (NULL: out of host memory). */
static struct tune_step *accept(struct tuner *t, const struct cand *c)
{
	double before = t->cur_ms;
	struct tune_state keep;
	struct tune_step *st;

	if (tune_state_copy(&keep, &c->st) < 0)
		return NULL;
	tune_state_release(&t->cur);
	t->cur = keep;
	t->cur_ms = tune_eval(t, &t->cur, &t->cur_metrics);
	t->cur_tie = t->eval_tie;
	if (c->kind == MOVE_SHIFT) {
		t->tabu_boundary = c->a;
		t->tabu_dir = c->b;
	}
	if (t->cur_ms < t->best_ms) {
		tune_state_release(&t->best);
		if (tune_state_copy(&t->best, &t->cur) < 0)
			return NULL;
		t->best_ms = t->cur_ms;
		t->kicks = 0;
	}
	t->round_improved = true;
	st = tune_record(t, t->phase, c->kind, c->a, c->b, c->what, before, t->cur_ms);
	generate(t);  /* the next moves start from the new state (c is gone now) */
	return st;
}

/* The driver: descend phase by phase; when converged restart from the next structure,
 * and with a budget perturb the best and descend again, until the budget is spent or the
 * best reaches the tight bound. Each call returns at the next recorded step. */
static int search_step(struct tuner *t, const struct tune_step **step, struct err *e)
{
	*step = NULL;
	if (!t->started) {
		t->started = true;
		t->search_t0 = clock_now_s();
		t->search_evals0 = t->evals;
		if (!out_of_budget(t))
			generate(t);
		*step = &t->steps[0];
		return 1;
	}
	while (!t->done && !out_of_budget(t)) {
		if (t->ci < t->ncands) {
			int best = best_candidate(t);

			if (best < 0)
				continue;
			if (!(*step = accept(t, &t->cands[best])))
				return err_set(e, ERR_RUNTIME, "out of host memory");
			t->spent = clock_now_s() - t->t0;
			return 1;
		}
		if (!next_phase(t))
			continue;
		if ((*step = restart(t)))
			return 1;
		if (t->oom)
			return err_set(e, ERR_RUNTIME, "out of host memory");
		if (!anytime(t) || t->best_ms <= t->stop_ms * (1 + IMPROVE_EPS))
			break;
		if (!(*step = perturb(t)))
			return err_set(e, ERR_RUNTIME, "out of host memory");
		return 1;
	}
	t->done = true;
	t->spent = clock_now_s() - t->t0;
	return 0;
}

int tune_step(struct tuner *t, const struct tune_step **step, struct err *e)
{
	int r = t->oom ? -1 : search_step(t, step, e);

	if (t->oom) {
		*step = NULL;
		return err_set(e, ERR_RUNTIME, "out of host memory");
	}
	return r;
}

int tune_result(struct tuner *t, struct plan *out, struct metrics *m, struct err *e)
{
	struct sim_opts o;

	if (t->oom) {
		memset(out, 0, sizeof(*out));
		return err_set(e, ERR_RUNTIME, "out of host memory");
	}
	if (t->have_baseline && t->baseline_ms <= t->best_ms) {
		if (plan_copy(out, &t->best_baseline, e) < 0)
			return -1;
	} else if (tune_state_plan(t->model, t->cluster, t->opts.microbatches, &t->best, out, e) < 0) {
		return -1;
	}
	free(out->name);
	out->name = NULL;
	{
		if (!(out->name = str_name_with_suffix(t->model->name, " tuned", JV_STRING_MAX))) {
			plan_release(out);
			return err_set(e, ERR_RUNTIME, "out of host memory");
		}
	}
	sim_opts_default(&o);
	if (m && sim_run(&t->eb.sim, out, &o, m, e) < 0) {
		metrics_release(m);
		plan_release(out);
		return -1;
	}
	return 0;
}

int tune_steps(const struct tuner *t, const struct tune_step **steps)
{
	*steps = t->steps;
	return t->nsteps;
}

void tune_stats(const struct tuner *t, long *evaluations, double *seconds)
{
	if (evaluations)
		*evaluations = t->evals;
	if (seconds)
		*seconds = t->spent;
}

bool tune_interrupted(const struct tuner *t)
{
	return t->interrupted;
}

double tune_bound(const struct tuner *t)
{
	return t->bound_ms;
}

void tune_free(struct tuner *t)
{
	if (!t)
		return;
	cands_clear(t);
	free(t->cands);
	for (int i = 0; i < t->nsteps; i++)
		tune_state_release(&t->steps[i].state);
	free(t->steps);
	tune_state_release(&t->cur);
	tune_state_release(&t->best);
	for (int i = 0; i < t->nstarts; i++)
		tune_state_release(&t->starts[i]);
	metrics_release(&t->cur_metrics);
	if (t->have_baseline)
		plan_release(&t->best_baseline);
	tune_pool_free(t->pool);
	tune_evalbuf_release(&t->eb);
	free(t->layer_cost);
	free(t->layer_fb);
	free(t->load);
	free(t->dev_bytes);
	free(t->seen);
	free(t->layer_bytes);
	free(t->layer_f);
	free(t->layer_i);
	free(t->pos);
	for (int i = 0; i < PART_MEMO; i++) {
		free(t->memo[i].first);
		free(t->memo[i].device);
		free(t->memo[i].weight);
	}
	free(t->weight);
	free(t->mem);
	free(t);
}

