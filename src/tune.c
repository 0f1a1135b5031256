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

/* ---- states ----------------------------------------------------------------------- */

void tune_state_release(struct tune_state *s)
{
	free(s->first);
	free(s->device);
	free(s->order_start);
	free(s->order);
	memset(s, 0, sizeof(*s));
}

/* Back to the policy's order (a move that changes stages or knobs invalidates it). */
void tune_state_drop_order(struct tune_state *s)
{
	free(s->order_start);
	free(s->order);
	s->order_start = NULL;
	s->order = NULL;
	s->order_devices = 0;
}

long tune_state_order_len(const struct tune_state *s)
{
	return s->order ? s->order_start[s->order_devices] : 0;
}

/* Gives s the order of devices lists (CSR); -1 when out of host memory. */
int tune_state_set_order(struct tune_state *s, int devices, const int *start, const struct action *order)
{
	long n = start[devices];

	tune_state_drop_order(s);
	s->order_start = malloc((size_t)(devices + 1) * sizeof(int));
	s->order = malloc((size_t)(n ? n : 1) * sizeof(*s->order));
	if (!s->order_start || !s->order) {
		tune_state_drop_order(s);
		return -1;
	}
	s->order_devices = devices;
	memcpy(s->order_start, start, (size_t)(devices + 1) * sizeof(int));
	memcpy(s->order, order, (size_t)n * sizeof(*order));
	return 0;
}

int tune_state_alloc(struct tune_state *s, int n)
{
	memset(s, 0, sizeof(*s));
	s->nstages = n;
	s->first = calloc((size_t)n + 1, sizeof(int));
	s->device = calloc((size_t)n, sizeof(int));
	if (!s->first || !s->device) {
		tune_state_release(s);
		return -1;
	}
	return 0;
}

int tune_state_copy(struct tune_state *dst, const struct tune_state *src)
{
	if (tune_state_alloc(dst, src->nstages) < 0)
		return -1;
	memcpy(dst->first, src->first, (size_t)(src->nstages + 1) * sizeof(int));
	memcpy(dst->device, src->device, (size_t)src->nstages * sizeof(int));
	dst->sched = src->sched;
	if (src->order && tune_state_set_order(dst, src->order_devices, src->order_start, src->order) < 0) {
		tune_state_release(dst);
		return -1;
	}
	return 0;
}

/* Field by field: the padding of struct action is not part of its value. */
static bool orders_equal(const struct action *a, const struct action *b, long n)
{
	for (long i = 0; i < n; i++)
		if (a[i].stage != b[i].stage || a[i].mb != b[i].mb || a[i].kind != b[i].kind || a[i].pair != b[i].pair)
			return false;
	return true;
}

bool tune_state_equal(const struct tune_state *a, const struct tune_state *b)
{
	return a->nstages == b->nstages &&
	       memcmp(a->first, b->first, (size_t)(a->nstages + 1) * sizeof(int)) == 0 &&
	       memcmp(a->device, b->device, (size_t)a->nstages * sizeof(int)) == 0 &&
	       a->sched.alternate == b->sched.alternate && a->sched.defer_arrivals == b->sched.defer_arrivals &&
	       a->sched.cap_extra == b->sched.cap_extra && a->sched.wcap == b->sched.wcap &&
	       a->sched.lst == b->sched.lst &&
	       !a->order == !b->order &&
	       (!a->order || (a->order_devices == b->order_devices &&
	                      memcmp(a->order_start, b->order_start, (size_t)(a->order_devices + 1) * sizeof(int)) == 0 &&
	                      orders_equal(a->order, b->order, tune_state_order_len(a))));
}

/* ---- evaluation ------------------------------------------------------------------- */

/* Fills p's stages from the state and sizes its order; the policy writes the order. */
static void state_to_stages(struct plan *p, const struct tune_state *s)
{
	p->nstages = s->nstages;
	for (int i = 0; i < s->nstages; i++) {
		p->stages[i].first = s->first[i];
		p->stages[i].last = s->first[i + 1] - 1;
		p->stages[i].device = s->device[i];
	}
	plan_size_orders(p, 3);
}

static void policy_opts(const struct tune_state *s, int devices, int *cap, int *wcap, struct sim_opts *o)
{
	sim_opts_default(o);
	o->policy_driven = true;
	o->policy.alternate = s->sched.alternate;
	o->policy.backward_first = !s->sched.alternate;
	o->policy.defer_arrivals = s->sched.defer_arrivals;
	o->policy.mem_admission = true;
	for (int st = 0; st < s->nstages; st++) {
		int c = s->nstages - st + s->sched.cap_extra;

		cap[st] = c < 1 ? 1 : c;
		wcap[st] = s->sched.wcap;
	}
	o->policy.stage_cap = cap;
	o->policy.w_cap = s->sched.wcap > 0 ? wcap : NULL;
	o->policy.lst_cycle = s->sched.lst / 4.0;
	(void)devices;
}

/* Simulates a state; returns its iteration time (INFINITY when it does not fit). */
double tune_eval(struct tuner *t, const struct tune_state *s, struct metrics *keep)
{
	struct sim_opts o;
	struct metrics m;
	struct err e = ERR_INIT;
	double ms;

	state_to_stages(&t->work, s);
	if (s->order) {
		/* the explicit order, run as it is */
		memcpy(t->work.order_start, s->order_start, (size_t)(s->order_devices + 1) * sizeof(int));
		memcpy(t->work.order, s->order, (size_t)tune_state_order_len(s) * sizeof(*s->order));
		sim_opts_default(&o);
	} else {
		policy_opts(s, t->cluster->devices, t->cap_buf, t->wcap_buf, &o);
	}
	if (t->opts.accept && !t->opts.accept(t->opts.accept_arg, &t->work))
		return INFINITY;
	t->evals++;
	if (t->opts.progress) {
		double now = clock_now_s(), every = t->opts.progress_every_s > 0 ? t->opts.progress_every_s : 0.1;

		if (now - t->last_progress >= every) {
			struct tune_progress pr = { t->evals, now - t->t0,
			                            fmin(t->best_ms, t->have_baseline ? t->baseline_ms : INFINITY),
			                            t->bound_ms };

			t->last_progress = now;
			t->opts.progress(t->opts.progress_arg, &pr);
		}
	}
	t->eval_tie = INFINITY;
	if (sim_run(&t->sim, &t->work, &o, &m, &e) < 0) {
		if (e.cls == ERR_RUNTIME)
			t->oom = true;
		metrics_release(&m);
		return INFINITY;
	}
	ms = m.noom ? INFINITY : m.makespan_ms;
	t->eval_tie = 0;
	for (int d = 0; d < t->cluster->devices; d++)
		t->eval_tie += t->sim.dev_free[d];
	if (keep) {
		metrics_release(keep);
		*keep = m;
	} else {
		metrics_release(&m);
	}
	return ms;
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

int tune_state_plan(const struct model *m, const struct cluster *c, int microbatches,
                    const struct tune_state *s, struct plan *out, struct err *e)
{
	struct sim sim;
	struct sim_opts o;
	struct metrics mt;
	int *cap = calloc((size_t)s->nstages * 2, sizeof(int)), r;

	memset(out, 0, sizeof(*out));
	memset(&sim, 0, sizeof(sim));
	if (!cap)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	if (model_copy(&out->model, m, e) < 0 || cluster_copy(&out->cluster, c, e) < 0)
		goto fail;
	out->microbatches = microbatches;
	out->split_backward = true;
	out->ndevices = c->devices;
	out->stages = calloc((size_t)s->nstages, sizeof(*out->stages));
	out->order_start = calloc((size_t)c->devices + 1, sizeof(int));
	out->order = calloc((size_t)s->nstages * microbatches * 3, sizeof(*out->order));
	if (!out->stages || !out->order_start || !out->order) {
		err_set(e, ERR_RUNTIME, "out of host memory");
		goto fail;
	}
	state_to_stages(out, s);
	if (s->order) {
		if (s->order_devices != c->devices || tune_state_order_len(s) != plan_total_ops(out)) {
			err_set(e, ERR_INPUT, "the order does not fit the stages");
			goto fail;
		}
		memcpy(out->order_start, s->order_start, (size_t)(c->devices + 1) * sizeof(int));
		memcpy(out->order, s->order, (size_t)tune_state_order_len(s) * sizeof(*s->order));
	} else {
		policy_opts(s, c->devices, cap, cap + s->nstages, &o);
		r = sim_run(&sim, out, &o, &mt, e);
		metrics_release(&mt);
		if (r < 0 || sim_apply_order(&sim, out, e) < 0)
			goto fail;
	}
	sim_release(&sim);
	free(cap);
	return 0;
fail:
	sim_release(&sim);
	free(cap);
	plan_release(out);
	return -1;
}

/* ---- estimates and helpers ------------------------------------------------------------ */

static double stage_cost(const struct tuner *t, const struct tune_state *s, int st)
{
	double c = 0;

	for (int l = s->first[st]; l < s->first[st + 1]; l++)
		c += t->layer_cost[l];
	return c / t->cluster->device_speed[s->device[st]];
}

/* Static memory of a state over the usable memory of some device: never fits. */
static bool static_fits(const struct tuner *t, const struct tune_state *s)
{
	double usable = cluster_usable_bytes(t->cluster);
	double *bytes = t->dev_bytes;

	/* one pass over the stages, O(S + L + D): each device's sum is taken in the order a
	 * pass per device took it (stages, then layers, ascending), so it is the same to the
	 * bit; the pass per device was O(D x S), minutes a start at thousands of devices */
	memset(bytes, 0, (size_t)t->cluster->devices * sizeof(double));
	for (int st = 0; st < s->nstages; st++)
		for (int l = s->first[st]; l < s->first[st + 1]; l++)
			bytes[s->device[st]] += t->layer_bytes[l];
	for (int d = 0; d < t->cluster->devices; d++)
		if (bytes[d] > usable)
			return false;
	return true;
}

/* Cheap iteration-time estimate: the busiest device's work over all microbatches plus
 * the time one microbatch needs to fill and drain the pipeline beyond its stage. */
double tune_estimate(const struct tuner *t, const struct tune_state *s)
{
	double *load = t->load, chain = 0, worst = 0, worst_stage = 0;

	memset(load, 0, (size_t)t->cluster->devices * sizeof(double));
	for (int st = 0; st < s->nstages; st++) {
		double c = stage_cost(t, s, st), fb = 0;

		for (int l = s->first[st]; l < s->first[st + 1]; l++)
			fb += t->layer_fb[l];
		fb /= t->cluster->device_speed[s->device[st]];
		chain += fb;
		load[s->device[st]] += c;
		if (fb > worst_stage)
			worst_stage = fb;
	}
	for (int d = 0; d < t->cluster->devices; d++)
		if (load[d] > worst)
			worst = load[d];
	return worst * t->opts.microbatches + chain - worst_stage;
}

unsigned long long tune_rand(struct tuner *t)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return t->rng;
}


/* Equal layer counts (a start that the memory check then rejects or not). */
static void uniform_first(struct tune_state *s, int L)
{
	for (int st = 0; st <= s->nstages; st++)
		s->first[st] = (int)((long)L * st / s->nstages);
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

	if (is_current(t, &c->st) || !static_fits(t, &c->st))
		tune_state_release(&t->cands[--t->ncands].st);
}










static void generate(struct tuner *t)
{
	cands_clear(t);
	switch (t->phase) {
	case PHASE_PARTITION: tune_gen_partition(t); break;
	case PHASE_PLACEMENT: tune_gen_placement(t); break;
	case PHASE_SCHEDULING: tune_gen_scheduling(t); break;
	default: break;
	}
}

/* ---- steps ---------------------------------------------------------------------------- */

static struct tune_step *record(struct tuner *t, enum tune_phase ph, enum tune_move_kind kind, int a, int b,
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

int tune_apply_move(struct tune_state *state, const struct tune_step *step, int nlayers)
{
	struct tune_state n;

	(void)nlayers;
	switch (step->kind) {
	case MOVE_SHIFT:
		if (step->a < 1 || step->a >= state->nstages)
			return -1;
		state->first[step->a] += step->b < 0 ? -1 : 1;
		return 0;
	case MOVE_STAGE:
		if (step->a < 0 || step->a >= state->nstages)
			return -1;
		state->device[step->a] = step->b;
		tune_state_drop_order(state);
		return 0;
	case MOVE_SWAP: {
		int x;

		if (step->a < 0 || step->b >= state->nstages)
			return -1;
		x = state->device[step->a];
		state->device[step->a] = state->device[step->b];
		state->device[step->b] = x;
		tune_state_drop_order(state);
		return 0;
	}
	case MOVE_SCHED:
		state->sched = step->state.sched;
		tune_state_drop_order(state);
		return 0;
	default:
		/* partitions and restructures carry their whole result */
		if (tune_state_copy(&n, &step->state) < 0)
			return -1;
		tune_state_release(state);
		*state = n;
		return 0;
	}
}

/* ---- the tuner ------------------------------------------------------------------------ */

/* Whether the set-up must stop at the next baseline or start (once one ran): an interrupt,
 * or the time budget spent. */
static bool setup_cut(const struct tuner *t)
{
	if (t->opts.stop && *t->opts.stop)
		return true;
	return t->opts.time_budget_s > 0 && clock_now_s() - t->t0 > t->opts.time_budget_s;
}

int tune_new(struct tuner **out, const struct model *m, const struct cluster *c,
             const struct tune_opts *o, struct err *e)
{
	static const enum sched_kind kinds[] = {
		SCHED_1F1B, SCHED_INTERLEAVED, SCHED_ZBH1, SCHED_ZBH2, SCHED_ZBV, SCHED_DUALPIPEV, SCHED_GPIPE,
		SCHED_ADAPTIVE
	};
	static const char *const parts[] = { "uniform", "balanced" };
	struct tuner *t = calloc(1, sizeof(*t));
	int D = c->devices, maxS;
	bool stopped = false;     /* opts.stop was raised while the tuner set itself up */
	char msg[200];

	*out = NULL;
	if (!t)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	t->model = m;
	t->cluster = c;
	t->opts = *o;
	if (t->opts.max_stages_per_device < 1)
		t->opts.max_stages_per_device = 1;
	if (o->microbatches < 1) {
		free(t);
		return err_set(e, ERR_INPUT, "the tuner needs at least one microbatch");
	}
	t->rng = 0x9e3779b97f4a7c15ULL ^ ((unsigned long long)o->seed * 0x100000001b3ULL);
	if (!t->rng)
		t->rng = 1;
	t->t0 = t->last_progress = clock_now_s();
	t->bound_ms = sim_lower_bound_tight(m, c, o->microbatches, true);
	maxS = D * t->opts.max_stages_per_device;
	if (maxS > m->nlayers)
		maxS = m->nlayers;
	t->max_stages = maxS;
	t->tabu_boundary = -1;
	t->best_ms = t->baseline_ms = t->cur_ms = INFINITY;
	/* the evaluation plan: sized for the largest candidate */
	if (model_copy(&t->work.model, m, e) < 0 || cluster_copy(&t->work.cluster, c, e) < 0)
		goto fail;
	t->work.microbatches = o->microbatches;
	t->work.split_backward = true;
	t->work.ndevices = D;
	t->work.stages = calloc((size_t)maxS, sizeof(*t->work.stages));
	t->work.order_start = calloc((size_t)D + 1, sizeof(int));
	t->work.order = calloc((size_t)maxS * o->microbatches * 3, sizeof(*t->work.order));
	t->cap_buf = calloc((size_t)maxS, sizeof(int));
	t->wcap_buf = calloc((size_t)maxS, sizeof(int));
	t->layer_cost = calloc((size_t)m->nlayers, sizeof(double));
	t->layer_fb = calloc((size_t)m->nlayers, sizeof(double));
	t->load = calloc((size_t)D, sizeof(double));
	t->dev_bytes = calloc((size_t)D, sizeof(double));
	t->seen = calloc((size_t)D, sizeof(bool));
	if ((long)maxS * o->microbatches * 3 <= ORDER_MAX_OPS &&
	    !(t->pos = calloc((size_t)maxS * o->microbatches * 3, sizeof(int)))) {
		err_set(e, ERR_RUNTIME, "out of host memory");
		goto fail;
	}
	t->layer_bytes = calloc((size_t)m->nlayers, sizeof(double));
	t->layer_f = calloc((size_t)m->nlayers, sizeof(double));
	t->layer_i = calloc((size_t)m->nlayers, sizeof(double));
	t->weight = calloc((size_t)D, sizeof(double));
	t->mem = calloc((size_t)D, sizeof(double));
	if (!t->work.stages || !t->work.order_start || !t->work.order || !t->cap_buf || !t->wcap_buf ||
	    !t->layer_cost || !t->layer_fb || !t->load || !t->dev_bytes || !t->seen || !t->layer_bytes || !t->layer_f || !t->layer_i ||
	    !t->weight || !t->mem) {
		err_set(e, ERR_RUNTIME, "out of host memory");
		goto fail;
	}
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
	t->part = (struct tune_part_in){ m->nlayers, t->layer_cost, t->layer_bytes, t->layer_f, NULL, 1.0 / o->microbatches, D,
	                                 t->weight, t->mem, 0, 0 };
	/* every baseline that applies: the result is never worse than the best of them */
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]) && !stopped; k++)
		for (int pi = 0; pi < 2; pi++) {
			struct baseline_spec spec = { kinds[k], o->microbatches, 0, parts[pi], NULL, 0, 0, NULL };
			struct plan p;

			/* Ctrl-C: one simulation of a large plan takes a while, so the setup stops
			 * too, at the best baseline so far */
			if (setup_cut(t) && t->have_baseline) {
				stopped = true;
				break;
			}
			struct sim_opts so;
			struct metrics mt;
			struct err ignore = ERR_INIT;
			int rc;

			if (baseline_plan(&p, m, NULL, c, NULL, &spec, &ignore) < 0) {
				if (ignore.cls == ERR_RUNTIME)
					goto oom;
				continue; /* this baseline does not apply */
			}
			if (o->accept && !o->accept(o->accept_arg, &p)) {
				plan_release(&p);
				continue; /* nor where the target runtime cannot run it */
			}
			sim_opts_default(&so);
			rc = sim_run(&t->sim, &p, &so, &mt, &ignore);
			if (rc < 0 && ignore.cls == ERR_RUNTIME) {
				plan_release(&p);
				metrics_release(&mt);
				goto oom;
			}
			if (rc == 0 && !mt.noom && mt.makespan_ms < t->baseline_ms) {
				if (t->have_baseline)
					plan_release(&t->best_baseline);
				t->best_baseline = p;
				t->have_baseline = true;
				t->baseline_ms = mt.makespan_ms;
				snprintf(t->baseline_name, sizeof(t->baseline_name), "%s %s", sched_name(kinds[k]), parts[pi]);
			} else {
				plan_release(&p);
			}
			metrics_release(&mt);
		}
	/* the tuner's own starts: its structures (D stages, 2D round robin, the V, uneven
	 * counts, 3D round robin and zigzag, and with fewer layers than 2D stages the open V
	 * with every layer a stage, its ends paired or alone) with 1F1B-like,
	 * zero-bubble-like and memory-capped knobs, each balanced as tune_partition_state
	 * does or counting each device's wait for its first backward (whichever simulates
	 * faster); the search runs from the best and then restarts from the best of each
	 * other structure */
	static const char *const shape_names[] = {
		"one to a device", "round robin", "in a V", "round robin with uneven counts", "round robin",
		"in a zigzag", "in an open V", "in an open V, the ends alone",
	};

	for (int shape = 0; shape < 8 && !stopped; shape++) {
		int S = shape == 0 ? D : shape == 3 ? D + (D + 1) / 2 : shape == 4 || shape == 5 ? 3 * D
		      : shape >= 6 ? m->nlayers : 2 * D;
		struct tune_state best_s = { 0 };
		double best_s_ms = INFINITY;

		/* the open V (every layer a stage) only where there is no V: fewer layers than
		 * 2D stages */
		if (shape >= 6 && (S >= 2 * D || S <= D))
			continue;
		if (S > maxS || (shape == 3 && D < 2))
			continue;
		for (int knobs = 0; knobs < 3; knobs++) {
			struct tune_state s;
			double ms;

			if (setup_cut(t) && (t->have_baseline || best_s.nstages)) {
				stopped = true;
				break;
			}

			if (tune_state_alloc(&s, S) < 0) {
				tune_state_release(&best_s);
				goto oom;
			}
			if (shape == 2 || shape == 5)
				tune_place_zigzag(&s, D);
			else if (shape < 6)
				tune_place_round_robin(&s, D);
			else if (!tune_place_open_v(&s, D, shape == 7)) {
				tune_state_release(&s);
				break;
			}
			s.sched.alternate = knobs != 1;
			s.sched.wcap = knobs == 1 ? D : 0;
			s.sched.cap_extra = knobs == 0 ? S : 0; /* memory alone, or 1F1B's depth */
			if (!tune_partition_state(t, &s, NULL, 0))
				uniform_first(&s, m->nlayers);
			ms = static_fits(t, &s) ? tune_eval(t, &s, NULL) : INFINITY;
			{
				/* the same balance counting each device's wait for its first backward,
				 * when that simulates clearly faster (a start only a little faster led
				 * the search to a worse end as often as to a better one) */
				struct tune_state w;

				if (tune_state_copy(&w, &s) < 0) {
					tune_state_release(&s);
					tune_state_release(&best_s);
					goto oom;
				}
				if (tune_partition_waits(t, &w) && !tune_state_equal(&w, &s) && static_fits(t, &w)) {
					double wms = tune_eval(t, &w, NULL);

					if (wms < ms * (1 - WAIT_START_MARGIN)) {
						tune_state_release(&s);
						s = w;
						ms = wms;
						memset(&w, 0, sizeof(w));
					}
				}
				tune_state_release(&w);
			}
			if (ms < best_s_ms || best_s.nstages == 0) {
				tune_state_release(&best_s);
				best_s = s;
				best_s_ms = ms;
			} else {
				tune_state_release(&s);
			}
		}
		/* insert by time; an open V leads only when clearly faster than every other
		 * start (the search from a start a little faster ends lower about as often as
		 * higher, and the patterns' basins are the proven ones), else it is the last
		 * restart */
		if (best_s.nstages) {
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
	}
	if (t->nstarts > 0) {
		t->cur = t->starts[0];
		t->cur_ms = t->start_ms[0];
		memset(&t->starts[0], 0, sizeof(t->starts[0]));
		t->next_start = 1;
	} else if (stopped) {
		/* interrupted before any start of its own: the best baseline's stages stand for
		 * the state (never simulated; the result is the baseline itself) */
		if (tune_state_alloc(&t->cur, t->best_baseline.nstages) < 0)
			goto oom;
		for (int st = 0; st < t->cur.nstages; st++) {
			t->cur.first[st] = t->best_baseline.stages[st].first;
			t->cur.device[st] = t->best_baseline.stages[st].device;
		}
		t->cur.first[t->cur.nstages] = m->nlayers;
		t->cur.sched.alternate = true;
		t->cur_ms = INFINITY;
	}
	t->interrupted = stopped && o->stop && *o->stop;
	if (t->cur.nstages == 0) {
		err_set(e, ERR_INPUT, "model '%s' has fewer layers (%d) than cluster '%s' has devices (%d)",
		        m->name, m->nlayers, c->name, D);
		goto fail;
	}
	if (!isfinite(t->cur_ms) && !t->have_baseline) {
		err_set(e, ERR_INFEASIBLE, "no plan of model '%s' fits in the memory of cluster '%s'", m->name, c->name);
		goto fail;
	}
	if (!stopped) {
		t->cur_ms = tune_eval(t, &t->cur, &t->cur_metrics);
		t->cur_tie = t->eval_tie;
	}
	if (tune_state_copy(&t->best, &t->cur) < 0)
		goto oom;
	t->best_ms = t->cur_ms;
	if (stopped)
		snprintf(msg, sizeof(msg), "start: %s while setting up; best baseline %s at %.2f ms",
		         t->interrupted ? "interrupted" : "budget spent", t->baseline_name, t->baseline_ms);
	else if (t->have_baseline)
		snprintf(msg, sizeof(msg), "start: %d stages (%s); best baseline %s at %.2f ms", t->cur.nstages,
		         t->cur.sched.alternate ? "adaptive" : "zero-bubble knobs", t->baseline_name, t->baseline_ms);
	else
		snprintf(msg, sizeof(msg), "start: %d stages; no baseline applies", t->cur.nstages);
	if (!record(t, PHASE_START, MOVE_START, 0, 0, msg, t->have_baseline ? t->baseline_ms : t->cur_ms, t->cur_ms) ||
	    t->oom)
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

/* ---- the budget and iterated local search --------------------------------------------- */

/* Whether the search must stop now: time, evaluations, or an interrupt. The time budget
 * holds for the whole tuning, its result included: the search stops when one more
 * candidate and the result's two simulations (the plan regenerated, then its metrics), at
 * the mean time a candidate has taken so far, would pass it. */
static bool out_of_budget(struct tuner *t)
{
	double now, used, per_eval;

	if (t->opts.stop && *t->opts.stop) {
		t->interrupted = true;
		return true;
	}
	if (t->opts.max_evals > 0 && t->evals >= t->opts.max_evals)
		return true;
	if (t->opts.time_budget_s <= 0)
		return false;
	now = clock_now_s();
	used = now - t->t0;
	per_eval = t->started && t->evals > t->search_evals0
	                   ? (now - t->search_t0) / (double)(t->evals - t->search_evals0) : 0;
	return used + BUDGET_RESERVE_EVALS * per_eval > t->opts.time_budget_s;
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
		static const char *const names[] = { "alternation", "deferral", "depth", "W cap" };
		int k = (int)(tune_rand(t) % 4);

		if (k == 0)
			s->sched.alternate = !s->sched.alternate;
		else if (k == 1)
			s->sched.defer_arrivals = !s->sched.defer_arrivals;
		else if (k == 2)
			s->sched.cap_extra = (int)(tune_rand(t) % 5) - 1;
		else
			s->sched.wcap = (int[]){ 0, 1, D, 2 * D }[tune_rand(t) % 4];
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
		if (kick(t, &n, &what) && static_fits(t, &n) && !tune_state_equal(&n, &s)) {
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
	     : record(t, PHASE_START, MOVE_RESTRUCTURE, t->cur.nstages, 0, what.buf, before, t->cur_ms);
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
	return record(t, PHASE_START, MOVE_RESTRUCTURE, t->cur.nstages, 0, what, before, t->cur_ms);
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
 * whose bound already exceeds the current time; the index of the best candidate that
 * beats the current state, or -1. */
static int best_candidate(struct tuner *t)
{
	int best = -1;
	double best_ms = t->cur_ms, best_tie = t->cur_tie;

	for (; t->ci < t->ncands && !out_of_budget(t); t->ci++) {
		double ms;

		if (tune_state_bound(t, &t->cands[t->ci].st) > t->cur_ms * (1 + IMPROVE_EPS)) {
			t->pruned++;
			continue;
		}
		ms = tune_eval(t, &t->cands[t->ci].st, NULL);

		if (better(ms, t->eval_tie, best_ms, best_tie)) {
			best_ms = ms;
			best_tie = t->eval_tie;
			best = t->ci;
		}
	}
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
	st = record(t, t->phase, c->kind, c->a, c->b, c->what, before, t->cur_ms);
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
		if (!anytime(t) || t->best_ms <= t->bound_ms * (1 + IMPROVE_EPS))
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
	int r;

	if (t->oom) {
		memset(out, 0, sizeof(*out));
		return err_set(e, ERR_RUNTIME, "out of host memory");
	}
	if (t->have_baseline && t->baseline_ms <= t->best_ms) {
		cJSON *root = plan_to_json(&t->best_baseline, true);

		if (!root)
			return err_set(e, ERR_RUNTIME, "out of host memory");
		r = plan_from_json(out, root, "tuned plan", NULL, e);
		cJSON_Delete(root);
		if (r < 0)
			return -1;
	} else if (tune_state_plan(t->model, t->cluster, t->opts.microbatches, &t->best, out, e) < 0) {
		return -1;
	}
	free(out->name);
	out->name = NULL;
	{
		char name[160];

		snprintf(name, sizeof(name), "%s tuned", t->model->name);
		if (!(out->name = strdup(name))) {
			plan_release(out);
			return err_set(e, ERR_RUNTIME, "out of host memory");
		}
	}
	sim_opts_default(&o);
	if (m && sim_run(&t->sim, out, &o, m, e) < 0) {
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
	plan_release(&t->work);
	sim_release(&t->sim);
	free(t->cap_buf);
	free(t->wcap_buf);
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

cJSON *tune_steps_to_json(const struct tuner *t)
{
	static const char *const kinds[] = { "start", "partition", "shift", "restructure", "stage", "swap", "sched",
	                                     "order" };
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *arr;

	jw_str(&w, root, "format", "octopipe.steps/1");
	jw_str(&w, root, "model", t->model->name);
	jw_str(&w, root, "cluster", t->cluster->name);
	jw_num(&w, root, "microbatches", t->opts.microbatches);
	if (t->have_baseline) {
		jw_str(&w, root, "best_baseline", t->baseline_name);
		jw_num(&w, root, "best_baseline_ms", t->baseline_ms);
	}
	jw_num(&w, root, "evaluations", (double)t->evals);
	arr = jw_arr(&w, root, "steps");
	for (int i = 0; i < t->nsteps; i++) {
		const struct tune_step *s = &t->steps[i];
		cJSON *o = jw_push(&w, arr, cJSON_CreateObject()), *st, *sch;

		jw_num(&w, o, "step", s->index);
		jw_str(&w, o, "phase", tune_phase_name(s->phase));
		jw_str(&w, o, "move", kinds[s->kind]);
		jw_num(&w, o, "a", s->a);
		jw_num(&w, o, "b", s->b);
		jw_str(&w, o, "what", s->what);
		jw_num(&w, o, "before_ms", s->before_ms);
		jw_num(&w, o, "after_ms", s->after_ms);
		jw_num(&w, o, "bubble_after", s->bubble_after);
		st = jw_arr(&w, o, "stages");
		for (int k = 0; k < s->state.nstages; k++) {
			cJSON *so = jw_push(&w, st, cJSON_CreateObject()), *range = jw_arr(&w, so, "layers");

			jw_push(&w, range, cJSON_CreateNumber(s->state.first[k]));
			jw_push(&w, range, cJSON_CreateNumber(s->state.first[k + 1] - 1));
			jw_num(&w, so, "device", s->state.device[k]);
		}
		sch = jw_obj(&w, o, "scheduler");
		jw_bool(&w, sch, "alternate", s->state.sched.alternate);
		jw_bool(&w, sch, "defer_arrivals", s->state.sched.defer_arrivals);
		jw_num(&w, sch, "cap_extra", s->state.sched.cap_extra);
		jw_num(&w, sch, "wcap", s->state.sched.wcap);
		jw_num(&w, sch, "lst", s->state.sched.lst);
		if (s->state.order) {
			cJSON *sched = jw_arr(&w, o, "schedule");

			for (int d = 0; d < s->state.order_devices; d++) {
				cJSON *list = jw_push(&w, sched, cJSON_CreateArray());

				for (int k = s->state.order_start[d]; k < s->state.order_start[d + 1]; k++) {
					char tok[48];

					jw_push(&w, list, cJSON_CreateString(action_format(&s->state.order[k], tok)));
				}
			}
		}
	}
	if (w.oom) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}
