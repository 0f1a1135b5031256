/*
 * tune_setup — how a tuner starts (see tune.h): its tables sized for the largest
 * candidate, every baseline that applies simulated (the result is never worse than the
 * best of them), and the tuner's own starting structures balanced and simulated; the
 * search proper (tune.c) runs from the best start and restarts from the others. The
 * set-up stops at the budget or an interrupt once one baseline ran.
 */
#include "config.h"
#include "tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baseline.h"
#include "clock.h"
#include "doc.h"
#include "json.h"
#include "parallel.h"
#include "sim.h"
#include "strbuf.h"
#include "tune_impl.h"

/* Whether the set-up must stop at the next baseline or start (once one ran): an interrupt,
 * or the time budget spent. */
static bool setup_cut(const struct tuner *t)
{
	if (t->opts.stop && *t->opts.stop)
		return true;
	return t->opts.time_budget_s > 0 && clock_now_s() - t->t0 > t->opts.time_budget_s;
}

/* Past the budget and 5% and 60 ms (most of the 0.1 s the whole command's promise allows
 * beyond B x 1.1) the set-up stops even before anything fits (a plan too large to simulate
 * many times in it): the tuner then says that none it simulated fits. A small plan has
 * simulated every baseline by then, even on a loaded machine. */
static bool setup_given_up(const struct tuner *t)
{
	return !(t->opts.stop && *t->opts.stop) && t->opts.time_budget_s > 0 &&
	       clock_now_s() - t->t0 > 1.05 * t->opts.time_budget_s + 0.06;
}

/* Seconds a start of S stages over L layers takes, about (its partition's bisection sweeps
 * S x L prefixes some 60 times, then refines it: 0.6 s at 32 x 8192 on one core). */
#define START_S_PER_CELL 2e-6

/* Whether a start that takes about `took` seconds would end past the budget (an answer
 * being there already): a deep model's starts take seconds each. */
static bool start_late(const struct tuner *t, double took)
{
	return t->opts.time_budget_s > 0 && clock_now_s() + took > t->t0 + t->opts.time_budget_s;
}

/* The candidate lists' threads: as asked, or one per online CPU (at most TUNE_MAX_THREADS). */
static int tune_threads(int asked)
{
	long n = asked > 0 ? asked : sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > TUNE_MAX_THREADS ? TUNE_MAX_THREADS : (int)n;
}

/* The tables, sized for the largest candidate; 0 or -1 with e. */
static int setup_tables(struct tuner *t, struct err *e)
{
	const struct model *m = t->model;
	const struct cluster *c = t->cluster;
	int D = c->devices, maxS = t->max_stages, mb = t->opts.microbatches;

	if (tune_evalbuf_init(&t->eb, t, e) < 0)
		return -1;
	t->layer_cost = calloc((size_t)m->nlayers, sizeof(double));
	t->layer_fb = calloc((size_t)m->nlayers, sizeof(double));
	t->load = calloc((size_t)D, sizeof(double));
	t->dev_bytes = calloc((size_t)D, sizeof(double));
	t->seen = calloc((size_t)D, sizeof(bool));
	if ((long)maxS * mb * 3 <= ORDER_MAX_OPS && !(t->pos = calloc((size_t)maxS * mb * 3, sizeof(int))))
		return err_set(e, ERR_RUNTIME, "out of host memory");
	t->layer_bytes = calloc((size_t)m->nlayers, sizeof(double));
	t->layer_f = calloc((size_t)m->nlayers, sizeof(double));
	t->layer_i = calloc((size_t)m->nlayers, sizeof(double));
	t->weight = calloc((size_t)D, sizeof(double));
	t->mem = calloc((size_t)D, sizeof(double));
	if (!t->layer_cost || !t->layer_fb || !t->load || !t->dev_bytes || !t->seen || !t->layer_bytes || !t->layer_f ||
	    !t->layer_i || !t->weight || !t->mem)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	for (int l = 0; l < m->nlayers; l++) {
		/* weights, gradients and optimizer states per GPU as the replica's layout shards
		 * them (16 bytes a parameter without one): the floor the simulator's memory
		 * starts from, so a move it rules out could never fit */
		struct parallel par;
		struct mem_static ms;

		parallel_from_replica(&c->rep, D, &par);
		parallel_static_mem(&par, (double)m->layers[l].param_bytes, (double)m->layers[l].expert_param_bytes, &ms);
		t->layer_cost[l] = m->layers[l].f_ms + m->layers[l].b_ms + m->layers[l].w_ms;
		t->layer_fb[l] = m->layers[l].f_ms + m->layers[l].b_ms;
		t->layer_bytes[l] = ms.weights + ms.grads + ms.optimizer;
		t->layer_f[l] = m->layers[l].f_ms;
		t->layer_i[l] = m->layers[l].b_ms;  /* the tuner's plans split the backward */
	}
	for (int d = 0; d < D; d++)
		t->mem[d] = cluster_usable_bytes(c);
	t->part = (struct tune_part_in){ m->nlayers, t->layer_cost, t->layer_bytes, t->layer_f, NULL, 1.0 / mb, D,
	                                 t->weight, t->mem, 0, 0, 0 };
	return 0;
}

/* Whether no device of p holds more than k stages (--max-stages-per-device): 1 or 0, -1
 * when out of host memory. A baseline past it (ZB-V's two stages a device at k = 1) was
 * the start and, unbeaten, the result. */
static int within_stage_limit(const struct plan *p, int k)
{
	int *n;
	bool ok = true;

	if (p->nstages <= k)
		return 1;
	if (!(n = calloc((size_t)p->ndevices, sizeof(*n))))
		return -1;
	for (int s = 0; s < p->nstages && ok; s++)
		ok = ++n[p->stages[s].device] <= k;
	free(n);
	return ok;
}

/* One baseline, p (made), simulated and kept when it fits and beats the best so far; named
 * "SCHEDULE part". -1 when out of host memory. */
static int try_baseline(struct tuner *t, struct plan p, enum sched_kind k, const char *part)
{
	const struct tune_opts *o = &t->opts;
	struct sim_opts so;
	struct metrics mt;
	struct err ignore = ERR_INIT;
	int rc;

	if ((rc = within_stage_limit(&p, o->max_stages_per_device)) < 0) {
		plan_release(&p);
		return -1;
	}
	if (!rc || (o->accept && o->accept(o->accept_arg, &p, t->refused.cls == ERR_NONE ? &t->refused : &ignore) < 0)) {
		plan_release(&p);
		return 0; /* past --max-stages-per-device, or the target runtime cannot run it */
	}
	sim_opts_default(&so);
	rc = sim_run(&t->eb.sim, &p, &so, &mt, &ignore);
	if (rc < 0 && ignore.cls == ERR_RUNTIME) {
		plan_release(&p);
		metrics_release(&mt);
		return -1;
	}
	if (rc == 0 && mt.noom)
		tune_note_oom(t, &mt);
	if (rc == 0 && !mt.noom && mt.makespan_ms < t->baseline_ms) {
		if (t->have_baseline)
			plan_release(&t->best_baseline);
		t->best_baseline = p;
		t->have_baseline = true;
		t->baseline_ms = mt.makespan_ms;
		snprintf(t->baseline_name, sizeof(t->baseline_name), "%s %s", sched_name(k), part);
	} else {
		plan_release(&p);
	}
	metrics_release(&mt);
	return 0;
}

/* Every baseline that applies, the best kept: the result is never worse than it; when
 * none fits, 1F1B balanced within memory too (baseline_mem.c: often the one that fits
 * where the embedding's and the head's optimizer states sink every textbook partition).
 * Sets *stopped when the set-up was cut (after one ran). -1 when out of host memory. */
static int setup_baselines(struct tuner *t, bool *stopped)
{
	static const enum sched_kind kinds[] = {
		SCHED_1F1B, SCHED_INTERLEAVED, SCHED_ZBH1, SCHED_ZBH2, SCHED_ZBV, SCHED_DUALPIPEV, SCHED_GPIPE,
		SCHED_ADAPTIVE
	};
	static const char *const parts[] = { "uniform", "balanced" };
	const struct tune_opts *o = &t->opts;
	int n = (int)(sizeof(kinds) / sizeof(kinds[0]));

	for (int k = 0; k <= n; k++)
		for (int pi = 0; pi < (k < n ? 2 : 1); pi++) {
			struct baseline_spec spec = { k < n ? kinds[k] : SCHED_1F1B, o->microbatches, 0, parts[pi], NULL, 0, 0,
			                              NULL };
			struct plan p;
			struct err ignore = ERR_INIT;

			if (k == n && t->have_baseline)
				return 0;
			/* Ctrl-C or the budget: one simulation of a large plan takes a while, so the
			 * setup stops too, at the best baseline so far */
			if (setup_cut(t) && (t->have_baseline || setup_given_up(t))) {
				*stopped = true;
				return 0;
			}
			if ((k < n ? baseline_plan(&p, t->model, NULL, t->cluster, NULL, &spec, &ignore)
			           : baseline_recipe_plan(&p, t->model, t->cluster, baseline_nrecipes, o->microbatches,
			                                  RECOMPUTE_NONE, &ignore)) < 0) {
				if (ignore.cls == ERR_RUNTIME)
					return -1;
				continue; /* this baseline does not apply */
			}
			if (try_baseline(t, p, spec.schedule, k < n ? parts[pi] : "memory") < 0)
				return -1;
		}
	return 0;
}

/* The knob sets a start is tried with (the last recomputes a quarter of the stages); where
 * memory binds each twice, keeping room for one and for two microbatches of a device's
 * later stages. */
#define START_KNOBS_MAX 4
#define START_KNOBS(t) ((t)->rc_moves ? START_KNOBS_MAX : 3)
#define SETUP_KNOBS_MAX (2 * START_KNOBS_MAX) /* a shape's starts: twice where memory binds */

/* One start of S stages in shape, with knob set knobs, made and balanced into *s (not
 * simulated), and into *w the same balance counting each device's wait for its first
 * backward where that differs and fits (w->nstages 0 otherwise): 1 made, 0 when the
 * shape does not apply, -1 when out of host memory. */
static int setup_start(struct tuner *t, int shape, int S, int knobs, struct tune_state *s, struct tune_state *w)
{
	int D = t->cluster->devices;

	memset(w, 0, sizeof(*w));
	if (tune_state_alloc(s, S) < 0)
		return -1;
	if (shape == 2 || shape == 5)
		tune_place_zigzag(s, D);
	else if (shape < 6)
		tune_place_round_robin(s, D);
	else if (!tune_place_open_v(s, D, shape == 7)) {
		tune_state_release(s);
		return 0;
	}
	if (t->mem_binds) { /* each with room kept for a device's later stages, 1 or 2 */
		s->sched.reserve = 1 + knobs / START_KNOBS(t);
		knobs %= START_KNOBS(t);
	}
	s->sched.alternate = knobs != 1;
	s->sched.wcap = knobs == 1 ? D : 0;
	s->sched.cap_extra = knobs == 0 ? S : 0; /* memory alone, or 1F1B's depth */
	if (knobs == 3) {
		/* where memory binds: a quarter of the stages recompute, those where it frees
		 * the most memory per ms (tune_eval.c), the rest as the 1F1B-like set */
		s->sched.rc = S / 4 > 1 ? S / 4 : 1;
		s->sched.rc_ranked = true;
	}
	if (!tune_partition_state(t, s, NULL, 0))
		tune_uniform_first(s, t->model->nlayers);
	if (tune_state_copy(w, s) < 0) {
		tune_state_release(s);
		return -1;
	}
	if (!tune_partition_waits(t, w) || tune_state_equal(w, s) || !tune_static_fits(t, w)) {
		tune_state_release(w);
		memset(w, 0, sizeof(*w));
	}
	return 1;
}

/* The starts of one shape made so far, simulated at once on the pool's threads. */
struct start_list {
	struct tuner *t;
	struct tune_state **st;
	struct tune_evalres *res;
};

static void eval_start(void *arg, int i, struct tune_evalbuf *b)
{
	struct start_list *x = arg;

	tune_eval_in(x->t, b, x->st[i], NULL, &x->res[i]);
}

/* Simulates the n starts s[k] (those whose static memory fits) and their wait-counting
 * balances w[k] (where made), counted in that order as one thread would, and keeps the
 * w of a start where it simulates clearly faster (a start only a little faster led the
 * search to a worse end as often as to a better one); ms[k] is each one's time. -1 when
 * out of host memory. */
static int simulate_starts(struct tuner *t, int n, struct tune_state *s, struct tune_state *w, double *ms)
{
	struct tune_state *st[2 * SETUP_KNOBS_MAX];
	struct tune_evalres res[2 * SETUP_KNOBS_MAX];
	int at[2 * SETUP_KNOBS_MAX], m = 0;
	struct start_list x = { t, st, res };

	for (int k = 0; k < n; k++) {
		at[2 * k] = tune_static_fits(t, &s[k]) ? m : -1;
		if (at[2 * k] >= 0)
			st[m++] = &s[k];
		at[2 * k + 1] = w[k].nstages ? m : -1;
		if (at[2 * k + 1] >= 0)
			st[m++] = &w[k];
	}
	if (!tune_pool_for(t, m, eval_start, &x)) {
		for (int k = 0; k < n; k++)
			tune_state_release(&w[k]);
		return -1;
	}
	for (int k = 0; k < n; k++) {
		ms[k] = INFINITY;
		if (at[2 * k] >= 0) {
			tune_eval_count(t, &res[at[2 * k]]);
			ms[k] = res[at[2 * k]].ms;
		}
		if (at[2 * k + 1] >= 0) {
			tune_eval_count(t, &res[at[2 * k + 1]]);
			if (res[at[2 * k + 1]].ms < ms[k] * (1 - WAIT_START_MARGIN)) {
				struct tune_state keep = s[k];

				s[k] = w[k];
				w[k] = keep;
				ms[k] = res[at[2 * k + 1]].ms;
			}
		}
		tune_state_release(&w[k]);
	}
	return 0;
}

/* Inserts a shape's best start by time; an open V leads only when clearly faster than
 * every other start (the search from a start a little faster ends lower about as often
 * as higher, and the patterns' basins are the proven ones), else it is the last restart. */
static void insert_start(struct tuner *t, int shape, struct tune_state best_s, double best_s_ms)
{
	static const char *const shape_names[] = {
		"one to a device", "round robin", "in a V", "round robin with uneven counts", "round robin",
		"in a zigzag", "in an open V", "in an open V, the ends alone",
	};
	int i = t->nstarts++;
	bool last = shape >= 6 && i > 0 && !(best_s_ms < t->start_ms[0] * (1 - OPEN_V_LEAD_MARGIN));

	while (!last && i > 0 && t->start_ms[i - 1] > best_s_ms) {
		t->starts[i] = t->starts[i - 1];
		t->start_ms[i] = t->start_ms[i - 1];
		t->start_shape[i] = t->start_shape[i - 1];
		i--;
	}
	t->starts[i] = best_s;
	t->start_ms[i] = best_s_ms;
	t->start_shape[i] = shape_names[shape];
}

/* The starts of one shape, in knob order, into *best_s (the fastest, *best_s_ms): made and
 * balanced, then simulated at once, as many at a time as the budget allows by the seconds
 * a start took (*took, at *took_S stages); while no start has been timed, one alone. A
 * start is not begun that would end past the budget once there is an answer. -1 when out
 * of host memory. */
static int setup_shape(struct tuner *t, int shape, int S, double *took, int *took_S, bool *stopped,
                       struct tune_state *best_s, double *best_s_ms)
{
	int total = START_KNOBS(t) * (t->mem_binds ? 2 : 1), knob = 0, L = t->model->nlayers, r = 1;

	while (knob < total && r > 0 && !*stopped) {
		struct tune_state s[SETUP_KNOBS_MAX], w[SETUP_KNOBS_MAX];
		double ms[SETUP_KNOBS_MAX], t1 = clock_now_s();
		int n = 0, cap = *took > 0 ? total - knob : 1;

		while (n < cap) {
			double each = *took > 0 ? *took * S / *took_S : START_S_PER_CELL * S * L;

			if ((setup_cut(t) || start_late(t, each * (n + 1))) &&
			    (t->have_baseline || t->nstarts || best_s->nstages || n > 0 || setup_given_up(t))) {
				*stopped = true;
				break;
			}
			if ((r = setup_start(t, shape, S, knob + n, &s[n], &w[n])) <= 0)
				break;
			n++;
		}
		if (r >= 0 && simulate_starts(t, n, s, w, ms) < 0)
			r = -1;
		if (r < 0) {
			for (int k = 0; k < n; k++) {
				tune_state_release(&s[k]);
				tune_state_release(&w[k]); /* made, or released already (zeroed) */
			}
			return -1;
		}
		if (n > 0) {
			/* a start's seconds: the first candidates' generation partitions as one does */
			*took = (clock_now_s() - t1) / n;
			*took_S = S;
			t->gen_s = *took;
		}
		for (int k = 0; k < n; k++) {
			if (ms[k] < *best_s_ms || best_s->nstages == 0) {
				tune_state_release(best_s);
				*best_s = s[k];
				*best_s_ms = ms[k];
			} else {
				tune_state_release(&s[k]);
			}
		}
		knob += n;
	}
	return 0;
}

/* The tuner's own starts: its structures (D stages, 2D round robin, the V, uneven counts,
 * 3D round robin and zigzag, and with fewer layers than 2D stages the open V with every
 * layer a stage, its ends paired or alone) with 1F1B-like, zero-bubble-like and
 * memory-capped knobs, and where memory binds also with a quarter of the stages
 * recomputing (at the 1 s budget the search seldom reaches the recompute moves on those
 * models: 1.05x on the memory-bound sample rows), each balanced as tune_partition_state does or counting each
 * device's wait for its first backward (whichever simulates faster); the search runs from
 * the best and then restarts from the best of each other structure. -1 when out of host
 * memory. */
static int setup_starts(struct tuner *t, bool *stopped)
{
	int D = t->cluster->devices, L = t->model->nlayers, took_S = 1;
	double took = 0;    /* the last start's seconds, and its stages */

	for (int shape = 0; shape < 8 && !*stopped; shape++) {
		int S = shape == 0 ? D : shape == 3 ? D + (D + 1) / 2 : shape == 4 || shape == 5 ? 3 * D
		      : shape >= 6 ? L : 2 * D;
		struct tune_state best_s = { 0 };
		double best_s_ms = INFINITY;

		/* the open V (every layer a stage) only where there is no V: fewer layers than
		 * 2D stages */
		if (shape >= 6 && (S >= 2 * D || S <= D))
			continue;
		if (S > t->max_stages || (shape == 3 && D < 2))
			continue;
		if (setup_shape(t, shape, S, &took, &took_S, stopped, &best_s, &best_s_ms) < 0) {
			tune_state_release(&best_s);
			return -1;
		}
		if (best_s.nstages)
			insert_start(t, shape, best_s, best_s_ms);
	}
	return 0;
}

/* The state the search starts from: the best start, or when the set-up was cut before any,
 * the best baseline's stages (never simulated; the result is the baseline itself). */
static int setup_current(struct tuner *t, bool stopped, struct err *e)
{
	const struct model *m = t->model;

	if (t->nstarts > 0) {
		t->cur = t->starts[0];
		t->cur_ms = t->start_ms[0];
		memset(&t->starts[0], 0, sizeof(t->starts[0]));
		t->next_start = 1;
	} else if (stopped && t->have_baseline) {
		if (tune_state_alloc(&t->cur, t->best_baseline.nstages) < 0)
			return err_set(e, ERR_RUNTIME, "out of host memory");
		for (int st = 0; st < t->cur.nstages; st++) {
			t->cur.first[st] = t->best_baseline.stages[st].first;
			t->cur.device[st] = t->best_baseline.stages[st].device;
		}
		t->cur.first[t->cur.nstages] = m->nlayers;
		t->cur.sched.alternate = true;
		t->cur_ms = INFINITY;
	}
	t->interrupted = stopped && t->opts.stop && *t->opts.stop;
	if (t->cur.nstages == 0 && stopped && !t->have_baseline)
		return err_set(e, ERR_INFEASIBLE, "no plan of model '%s' simulated within the budget fits in the memory "
		               "of cluster '%s' (a larger --budget tries more)", m->name, t->cluster->name);
	if (t->cur.nstages == 0)
		return err_set(e, ERR_INPUT, "model '%s' has fewer layers (%d) than cluster '%s' has devices (%d)",
		               m->name, m->nlayers, t->cluster->name, t->cluster->devices);
	if (!isfinite(t->cur_ms) && !t->have_baseline && !isfinite(t->min_peak) && t->refused.cls != ERR_NONE)
		return err_set(e, ERR_INFEASIBLE, "the target runtime runs none of the baselines of model '%s' (the first "
		               "refused: %.800s)", m->name, t->refused.msg);
	if (!isfinite(t->cur_ms) && !t->have_baseline) {
		char closest[96] = "";

		if (isfinite(t->min_peak)) {
			double have = cluster_usable_bytes(t->cluster);
			int dec = fmt_gb_decimals(t->min_peak, have, 1);

			snprintf(closest, sizeof(closest), ": the closest needs %.*f GB on a device of %.*f GB usable", dec,
			         t->min_peak / 1e9, dec, have / 1e9);
		}
		return err_set(e, ERR_INFEASIBLE, "no plan of model '%s' fits in the memory of cluster '%s'%s%s", m->name,
		               t->cluster->name, closest, stopped ? " (of those simulated within the budget: a larger "
		               "--budget tries more)" : "");
	}
	if (!stopped) {
		t->cur_ms = tune_eval(t, &t->cur, &t->cur_metrics);
		t->cur_tie = t->eval_tie;
	}
	if (tune_state_copy(&t->best, &t->cur) < 0)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	t->best_ms = t->cur_ms;
	return 0;
}

/* Whether memory binds a full pipeline: 1F1B's first device holds about one whole
 * microbatch's activations, on top of its share of the static memory; past the usable
 * capacity, recomputing early stages can buy microbatches in flight. */
static bool memory_binds(const struct model *m, const struct cluster *c)
{
	struct parallel par;
	struct mem_static ms;
	double act = 0, params = 0, experts = 0;

	for (int l = 0; l < m->nlayers; l++) {
		act += (double)m->layers[l].act_bytes;
		params += (double)m->layers[l].param_bytes;
		experts += (double)m->layers[l].expert_param_bytes;
	}
	parallel_from_replica(&c->rep, c->devices, &par);
	parallel_static_mem(&par, params, experts, &ms);
	return act + (ms.weights + ms.grads + ms.optimizer) / c->devices > cluster_usable_bytes(c);
}

int tune_new(struct tuner **out, const struct model *m, const struct cluster *c,
             const struct tune_opts *o, struct err *e)
{
	struct tuner *t = calloc(1, sizeof(*t));
	bool stopped = false;     /* the set-up was cut: an interrupt or the budget */
	char msg[200];

	*out = NULL;
	if (!t)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	t->model = m;
	t->cluster = c;
	t->opts = *o;
	if (t->opts.max_stages_per_device < 1)
		t->opts.max_stages_per_device = 1;
	t->threads = tune_threads(o->threads);
	if (o->microbatches < 1) {
		free(t);
		return err_set(e, ERR_INPUT, "the tuner needs at least one microbatch");
	}
	t->rng = 0x9e3779b97f4a7c15ULL ^ ((unsigned long long)o->seed * 0x100000001b3ULL);
	if (!t->rng)
		t->rng = 1;
	t->t0 = t->last_progress = clock_now_s();
	t->bound_ms = sim_lower_bound_tight(m, c, o->microbatches, true);
	t->stop_ms = sim_lower_bound_memory(m, c, o->microbatches, true); /* >= the tight bound */
	if (isnan(t->stop_ms)) {
		free(t);
		return err_set(e, ERR_RUNTIME, "out of host memory");
	}
	t->mem_binds = memory_binds(m, c);
	t->rc_moves = o->recompute_moves && t->mem_binds;
	t->max_stages = c->devices * t->opts.max_stages_per_device;
	if (t->max_stages > m->nlayers)
		t->max_stages = m->nlayers;
	t->tabu_boundary = -1;
	t->best_ms = t->baseline_ms = t->cur_ms = t->min_peak = INFINITY;
	if (setup_tables(t, e) < 0)
		goto fail;
	if (setup_baselines(t, &stopped) < 0 || setup_starts(t, &stopped) < 0)
		goto oom;
	if (setup_current(t, stopped, e) < 0)
		goto fail;
	if (stopped)
		snprintf(msg, sizeof(msg), "start: %s while setting up; best baseline %s at %.2f ms",
		         t->interrupted ? "interrupted" : "budget spent", t->baseline_name, t->baseline_ms);
	else if (t->have_baseline)
		snprintf(msg, sizeof(msg), "start: %d stages (%s); best baseline %s at %.2f ms", t->cur.nstages,
		         t->cur.sched.alternate ? "adaptive" : "zero-bubble knobs", t->baseline_name, t->baseline_ms);
	else
		snprintf(msg, sizeof(msg), "start: %d stages; no baseline applies", t->cur.nstages);
	if (!tune_record(t, PHASE_START, MOVE_START, 0, 0, msg, t->have_baseline ? t->baseline_ms : t->cur_ms,
	                 t->cur_ms) || t->oom)
		goto oom;
	t->phase = PHASE_PARTITION;
	t->spent = clock_now_s() - t->t0;
	*out = t;
	return 0;
oom:
	err_set(e, ERR_RUNTIME, "out of host memory");
fail:
	tune_free(t);
	return -1;
}
