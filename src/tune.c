/*
 * tune — the three-phase bubble-aware tuner (see tune.h).
 *
 * The one idea: a candidate is not a plan but a small state (boundaries, devices,
 * scheduler knobs) that the policy-driven simulator turns into a plan and an iteration
 * time in one pass. Moves are cheap to propose and exact to replay, and the phases only
 * differ in which states they propose: the partition phase moves boundaries toward the
 * devices with the most bubble, the placement phase changes the stage count and moves or
 * swaps stages (ranked first by a load + pipeline-fill estimate), and the scheduling phase
 * turns the list scheduler's knobs. A move is kept only when the iteration time drops.
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
#include "partition.h"
#include "sim.h"
#include "strbuf.h"
#include "tune_partition.h"

#define IMPROVE_EPS 1e-9   /* relative: a move must beat the current time by this much */
#define MAX_RANKED 8       /* candidates simulated per ranked move family */
#define CHAIN_CANDS 24     /* chain moves of layers simulated per step */
#define OCTO_TUNE_MAX_AWARE 4096 /* devices up to which the partition is also bubble-aware */
#define ORDER_CANDS 32     /* gap-targeted order moves simulated per step */
#define ORDER_WINDOW 24    /* how far down its device's list an op may come from */
#define ORDER_MAX_OPS 40000 /* larger plans keep the policy's order */

struct cand {
	struct tune_state st;
	enum tune_move_kind kind;
	int a, b;
	char what[200];
	double score;          /* estimator: lower first */
};

#define PART_MEMO 64       /* partitions remembered by placement and weights */

struct part_memo {
	int nstages;
	int *device, *first;   /* NULL: an empty slot */
	double *weight;
	bool ok;
};

struct tuner {
	const struct model *model;
	const struct cluster *cluster;
	struct tune_opts opts;
	struct plan work;        /* evaluation plan: model and cluster copied once */
	struct sim sim;
	int max_stages;
	double *layer_cost, *layer_fb;
	double *load;            /* per device, scratch for estimate() */
	double *layer_bytes;     /* static bytes per layer */
	double *layer_f;         /* forward time per layer */
	double *weight, *mem;    /* per device: the partitioner's weights and usable memory */
	struct tune_part_in part;
	struct part_memo memo[PART_MEMO];
	int memo_next;
	/* baselines */
	struct plan best_baseline;
	bool have_baseline;
	double baseline_ms;
	char baseline_name[64];
	/* search */
	struct tune_state cur;
	double cur_ms;
	double cur_tie;          /* the current state's tie-break (see better()) */
	double eval_tie;         /* the last evaluation's */
	struct metrics cur_metrics;
	struct tune_state best;
	double best_ms;
	enum tune_phase phase;
	int round, rounds_done;
	bool round_improved, done, started;
	struct cand *cands;
	int ncands, ccap, ci;
	int tabu_boundary, tabu_dir;
	struct tune_step *steps;
	int nsteps, scap;
	long evals;
	double t0, spent;
	double bound_ms;         /* sim_lower_bound_tight(): the search stops on reaching it */
	double last_progress;
	bool interrupted;
	int kicks;               /* perturbations since the best last improved */
	unsigned long long rng;
	int *cap_buf, *wcap_buf;
	int *pos;                /* per op: its place in the order (gap-targeted moves) */
	struct tune_state starts[8];  /* other starting structures, best first */
	double start_ms[8];
	int nstarts, next_start;
	/* an allocation failed where the search cannot report it (a candidate list, an
	 * evaluation): the next tune_new/tune_step/tune_result says out of host memory */
	bool oom;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

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
static void state_drop_order(struct tune_state *s)
{
	free(s->order_start);
	free(s->order);
	s->order_start = NULL;
	s->order = NULL;
	s->order_devices = 0;
}

static long state_order_len(const struct tune_state *s)
{
	return s->order ? s->order_start[s->order_devices] : 0;
}

/* Gives s the order of devices lists (CSR); -1 when out of host memory. */
static int state_set_order(struct tune_state *s, int devices, const int *start, const struct action *order)
{
	long n = start[devices];

	state_drop_order(s);
	s->order_start = malloc((size_t)(devices + 1) * sizeof(int));
	s->order = malloc((size_t)(n ? n : 1) * sizeof(*s->order));
	if (!s->order_start || !s->order) {
		state_drop_order(s);
		return -1;
	}
	s->order_devices = devices;
	memcpy(s->order_start, start, (size_t)(devices + 1) * sizeof(int));
	memcpy(s->order, order, (size_t)n * sizeof(*order));
	return 0;
}

static int state_alloc(struct tune_state *s, int n)
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
	if (state_alloc(dst, src->nstages) < 0)
		return -1;
	memcpy(dst->first, src->first, (size_t)(src->nstages + 1) * sizeof(int));
	memcpy(dst->device, src->device, (size_t)src->nstages * sizeof(int));
	dst->sched = src->sched;
	if (src->order && state_set_order(dst, src->order_devices, src->order_start, src->order) < 0) {
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
	       !a->order == !b->order &&
	       (!a->order || (a->order_devices == b->order_devices &&
	                      memcmp(a->order_start, b->order_start, (size_t)(a->order_devices + 1) * sizeof(int)) == 0 &&
	                      orders_equal(a->order, b->order, state_order_len(a))));
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
	(void)devices;
}

/* Simulates a state; returns its iteration time (INFINITY when it does not fit). */
static double evaluate(struct tuner *t, const struct tune_state *s, struct metrics *keep)
{
	struct sim_opts o;
	struct metrics m;
	struct err e = ERR_INIT;
	double ms;

	state_to_stages(&t->work, s);
	if (s->order) {
		/* the explicit order, run as it is */
		memcpy(t->work.order_start, s->order_start, (size_t)(s->order_devices + 1) * sizeof(int));
		memcpy(t->work.order, s->order, (size_t)state_order_len(s) * sizeof(*s->order));
		sim_opts_default(&o);
	} else {
		policy_opts(s, t->cluster->devices, t->cap_buf, t->wcap_buf, &o);
	}
	t->evals++;
	if (t->opts.progress) {
		double now = now_s(), every = t->opts.progress_every_s > 0 ? t->opts.progress_every_s : 0.1;

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
		if (s->order_devices != c->devices || state_order_len(s) != plan_total_ops(out)) {
			err_set(e, ERR_INPUT, "the order does not fit the stages");
			goto fail;
		}
		memcpy(out->order_start, s->order_start, (size_t)(c->devices + 1) * sizeof(int));
		memcpy(out->order, s->order, (size_t)state_order_len(s) * sizeof(*s->order));
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

	for (int d = 0; d < t->cluster->devices; d++) {
		double bytes = 0;

		for (int st = 0; st < s->nstages; st++)
			if (s->device[st] == d)
				for (int l = s->first[st]; l < s->first[st + 1]; l++)
					bytes += (double)t->model->layers[l].param_bytes / 2 * 16;
		if (bytes > usable)
			return false;
	}
	return true;
}

/* Cheap iteration-time estimate: the busiest device's work over all microbatches plus
 * the time one microbatch needs to fill and drain the pipeline beyond its stage. */
static double estimate(const struct tuner *t, const struct tune_state *s)
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

static unsigned long long next_rand(struct tuner *t)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return t->rng;
}

/* Boundaries for the state's stage count and placement that balance device loads
 * (tune_partition_devices). With idle (per device, ms, may be NULL) a device is expected to
 * idle that long anyway (filling and draining the pipeline), so it gets less work: its
 * weight is its speed times the share of the iteration it can compute. False when no
 * partition fits in memory (the state is left as it was). */
static bool partition_state(struct tuner *t, struct tune_state *s, const double *idle, double span)
{
	int D = t->cluster->devices, S = s->nstages;
	struct part_memo *pm;
	bool ok;

	for (int d = 0; d < D; d++) {
		double share = 1;

		if (idle && span > 0) {
			share = 1 - idle[d] / span;
			if (share < 0.25)
				share = 0.25;
		}
		t->weight[d] = t->cluster->device_speed[d] * share;
	}
	/* the search asks for the same placements again and again: remember the answers */
	for (int i = 0; i < PART_MEMO; i++) {
		pm = &t->memo[i];
		if (pm->first && pm->nstages == S && memcmp(pm->device, s->device, (size_t)S * sizeof(int)) == 0 &&
		    memcmp(pm->weight, t->weight, (size_t)D * sizeof(double)) == 0) {
			if (pm->ok)
				memcpy(s->first, pm->first, (size_t)(S + 1) * sizeof(int));
			return pm->ok;
		}
	}
	/* a bubble-aware balance changes with every plan: a shorter search */
	t->part.kicks = idle ? 8 : 0;
	t->part.nodes = idle ? 2000 : 0;
	ok = isfinite(tune_partition_devices(&t->part, S, s->device, s->first));
	pm = &t->memo[t->memo_next];
	t->memo_next = (t->memo_next + 1) % PART_MEMO;
	free(pm->first);
	free(pm->device);
	free(pm->weight);
	pm->nstages = S;
	pm->ok = ok;
	pm->first = malloc((size_t)(S + 1) * sizeof(int));
	pm->device = malloc((size_t)S * sizeof(int));
	pm->weight = malloc((size_t)D * sizeof(double));
	if (!pm->first || !pm->device || !pm->weight) {
		free(pm->first);
		free(pm->device);
		free(pm->weight);
		memset(pm, 0, sizeof(*pm));
		return ok;
	}
	memcpy(pm->first, s->first, (size_t)(S + 1) * sizeof(int));
	memcpy(pm->device, s->device, (size_t)S * sizeof(int));
	memcpy(pm->weight, t->weight, (size_t)D * sizeof(double));
	return ok;
}

/* Equal layer counts (a start that the memory check then rejects or not). */
static void uniform_first(struct tune_state *s, int L)
{
	for (int st = 0; st <= s->nstages; st++)
		s->first[st] = (int)((long)L * st / s->nstages);
}

static void place_round_robin(struct tune_state *s, int D)
{
	for (int st = 0; st < s->nstages; st++)
		s->device[st] = st % D;
}

static void place_v(struct tune_state *s, int D)
{
	for (int st = 0; st < s->nstages; st++)
		s->device[st] = (st / D) % 2 == 0 ? st % D : D - 1 - st % D;
}

static int stages_on(const struct tune_state *s, int d)
{
	int n = 0;

	for (int st = 0; st < s->nstages; st++)
		n += s->device[st] == d;
	return n;
}

/* ---- candidate lists ------------------------------------------------------------------- */

static struct cand *cand_add(struct tuner *t, const struct tune_state *from, enum tune_move_kind kind, int a, int b)
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
static void rank_tail(struct tuner *t, int from, int keep)
{
	int n = t->ncands - from;

	if (n <= 1)
		return;
	/* a seeded shuffle first, so equal scores are tried in a seed-dependent order */
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(next_rand(t) % (unsigned long long)(i + 1));
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
static void cand_keep_if_new(struct tuner *t)
{
	struct cand *c = &t->cands[t->ncands - 1];

	if (is_current(t, &c->st) || !static_fits(t, &c->st))
		tune_state_release(&t->cands[--t->ncands].st);
}

static void gen_partition(struct tuner *t)
{
	const struct metrics *m = &t->cur_metrics;
	const int S = t->cur.nstages, D = t->cluster->devices;
	struct cand *c;
	int from;

	/* the exact balance of device loads, then the same with each device's fill and drain
	 * idle time taken off what it can do (bubble-aware) */
	for (int aware = 0; aware < 3; aware++) {
		double idle[OCTO_TUNE_MAX_AWARE];
		bool use = aware > 0 && m->dev && m->ndevices == D && D <= OCTO_TUNE_MAX_AWARE;

		if (aware > 0 && !use)
			break;
		for (int d = 0; use && d < D; d++)
			idle[d] = (m->dev[d].warmup_idle_ms + m->dev[d].cooldown_idle_ms) * (aware == 1 ? 1 : 0.5);
		c = cand_add(t, &t->cur, MOVE_PARTITION, 0, aware);
		if (!c)
			return;
		if (!partition_state(t, &c->st, use ? idle : NULL, m->makespan_ms)) {
			tune_state_release(&t->cands[--t->ncands].st);
			continue;
		}
		snprintf(c->what, sizeof(c->what), aware ? "rebalance the %d stages by what each device can do besides "
		         "its fill and drain idle time" : "rebalance the %d stages (min-max device time)", S);
		cand_keep_if_new(t);
	}
	/* bubble-guided single-layer moves: from a busier device to an idler neighbour */
	from = t->ncands;
	for (int b = 1; b < S; b++) {
		for (int dir = -1; dir <= 1; dir += 2) {
			int src = dir < 0 ? b - 1 : b;        /* stage giving a layer */
			int dst = dir < 0 ? b : b - 1;
			int ds = t->cur.device[src], dd = t->cur.device[dst];

			if (t->cur.first[src + 1] - t->cur.first[src] < 2)
				continue;
			if (b == t->tabu_boundary && dir == -t->tabu_dir)
				continue; /* do not undo the last accepted shift */
			c = cand_add(t, &t->cur, MOVE_SHIFT, b, dir);
			if (!c)
				return;
			c->st.first[b] += dir < 0 ? -1 : 1;
			/* guidance: the giver's device should be busier than the taker's */
			c->score = estimate(t, &c->st);
			if (m->dev && ds < m->ndevices && dd < m->ndevices)
				c->score -= (m->dev[ds].busy_ms - m->dev[dd].busy_ms) * 0.5;
			snprintf(c->what, sizeof(c->what), "move layer %d from stage %d (gpu %d) to stage %d (gpu %d)",
			         dir < 0 ? t->cur.first[b] - 1 : t->cur.first[b], src, ds, dst, dd);
			cand_keep_if_new(t);
		}
	}
	/* shifts are cheap to simulate: try them all, most promising first */
	rank_tail(t, from, 64);
	/* chains: a stage further away takes a layer and the stages between slide by one, so
	 * a layer moves between any two devices (or between two stages of one device: a
	 * larger first stage fills the wait for the pipeline's far end) */
	from = t->ncands;
	for (int a = 0; a < S && m->dev && m->ndevices == D; a++)
		for (int b = 0; b < S; b++) {
			int lo = a < b ? a + 1 : b + 1, hi = a < b ? b : a, dir = a < b ? 1 : -1;

			if (abs(a - b) < 2 || t->cur.first[b + 1] - t->cur.first[b] < 2)
				continue;
			c = cand_add(t, &t->cur, MOVE_PARTITION, b, a);
			if (!c)
				return;
			for (int k = lo; k <= hi; k++)
				c->st.first[k] += dir;
			c->score = -(m->dev[t->cur.device[a]].idle_ms - m->dev[t->cur.device[b]].idle_ms);
			snprintf(c->what, sizeof(c->what), "a layer from stage %d (gpu %d) to stage %d (gpu %d), the stages "
			         "between sliding by one", b, t->cur.device[b], a, t->cur.device[a]);
			cand_keep_if_new(t);
		}
	rank_tail(t, from, CHAIN_CANDS);
}

static void gen_placement(struct tuner *t)
{
	int D = t->cluster->devices, L = t->model->nlayers, from;
	struct cand *c;

	/* new stage counts: D*c stages round robin, the V shape, and irregular counts */
	for (int per = 1; per <= t->opts.max_stages_per_device; per++) {
		for (int shape = 0; shape < 3; shape++) {
			int S = shape == 2 ? D * per + D / 2 : D * per;
			struct tune_state s;

			if (S > L || S > t->max_stages || (shape == 1 && per < 2) || (shape == 2 && (D < 2 || per >= t->opts.max_stages_per_device)))
				continue;
			if (state_alloc(&s, S) < 0) {
				t->oom = true;
				return;
			}
			s.sched = t->cur.sched;
			if (shape == 1)
				place_v(&s, D);
			else
				place_round_robin(&s, D);
			if (!partition_state(t, &s, NULL, 0)) {
				tune_state_release(&s);
				continue;
			}
			c = cand_add(t, &s, MOVE_RESTRUCTURE, S, shape);
			tune_state_release(&s);
			if (!c)
				return;
			snprintf(c->what, sizeof(c->what), "%d stages placed %s, balanced", S,
			         shape == 1 ? (per == 2 ? "in a V" : "in a zigzag")
			                    : shape == 2 ? "round robin with uneven counts" : "round robin");
			cand_keep_if_new(t);
		}
	}
	/* single-stage moves and swaps, ranked by the estimator */
	from = t->ncands;
	for (int st = 0; st < t->cur.nstages; st++) {
		for (int d = 0; d < D; d++) {
			if (d == t->cur.device[st])
				continue;
			if ((st > 0 && t->cur.device[st - 1] == d) || (st + 1 < t->cur.nstages && t->cur.device[st + 1] == d))
				continue; /* adjacent stages stay on different devices */
			if (stages_on(&t->cur, d) >= t->opts.max_stages_per_device || stages_on(&t->cur, t->cur.device[st]) < 2)
				continue;
			c = cand_add(t, &t->cur, MOVE_STAGE, st, d);
			if (!c)
				return;
			c->st.device[st] = d;
			state_drop_order(&c->st);
			c->score = estimate(t, &c->st);
			snprintf(c->what, sizeof(c->what), "move stage %d from gpu %d to gpu %d", st, t->cur.device[st], d);
			cand_keep_if_new(t);
		}
		for (int s2 = st + 1; s2 < t->cur.nstages; s2++) {
			if (t->cur.device[st] == t->cur.device[s2])
				continue;
			c = cand_add(t, &t->cur, MOVE_SWAP, st, s2);
			if (!c)
				return;
			c->st.device[st] = t->cur.device[s2];
			c->st.device[s2] = t->cur.device[st];
			state_drop_order(&c->st);
			c->score = estimate(t, &c->st);
			/* the first and last stages decide fill and drain: prefer swaps touching them */
			if (st == 0 || s2 == t->cur.nstages - 1)
				c->score *= 0.999;
			snprintf(c->what, sizeof(c->what), "swap stages %d and %d (gpus %d and %d)", st, s2,
			         t->cur.device[st], t->cur.device[s2]);
			cand_keep_if_new(t);
		}
	}
	rank_tail(t, from, MAX_RANKED);
}

static void gen_order(struct tuner *t);

static void gen_scheduling(struct tuner *t)
{
	int D = t->cluster->devices;
	const struct tune_sched cur = t->cur.sched;
	struct tune_sched variants[12];
	const char *names[12];
	int n = 0;

	variants[n] = cur; variants[n].alternate = !cur.alternate;
	names[n++] = cur.alternate ? "backward first instead of F/B alternation" : "alternate F and B (1F1B-like)";
	variants[n] = cur; variants[n].defer_arrivals = !cur.defer_arrivals;
	names[n++] = cur.defer_arrivals ? "stop deferring just-arrived ops" : "defer just-arrived ops to overlap transfers";
	variants[n] = cur; variants[n].cap_extra = cur.cap_extra + 1;
	names[n++] = "one more microbatch in flight per stage (deeper warm-up)";
	variants[n] = cur; variants[n].cap_extra = cur.cap_extra + 2;
	names[n++] = "two more microbatches in flight per stage";
	if (cur.cap_extra > -2) {
		variants[n] = cur; variants[n].cap_extra = cur.cap_extra - 1;
		names[n++] = "one microbatch fewer in flight per stage";
	}
	variants[n] = cur; variants[n].cap_extra = cur.cap_extra + t->cur.nstages;
	names[n++] = "let memory alone cap the warm-up";
	variants[n] = cur; variants[n].wcap = D;
	names[n++] = "W fills bubbles, at most one pipeline depth deferred";
	variants[n] = cur; variants[n].wcap = 2 * D;
	names[n++] = "W fills bubbles, up to two pipeline depths deferred";
	variants[n] = cur; variants[n].wcap = 0;
	names[n++] = "W only when nothing else is ready";
	variants[n] = cur; variants[n].wcap = 1;
	names[n++] = "W right after its I";
	for (int i = 0; i < n; i++) {
		struct cand *c = cand_add(t, &t->cur, MOVE_SCHED, i, 0);

		if (!c)
			return;
		c->st.sched = variants[i];
		state_drop_order(&c->st);
		snprintf(c->what, sizeof(c->what), "%s", names[i]);
		cand_keep_if_new(t);
	}
	gen_order(t);
}

/* ---- gap-targeted order moves ------------------------------------------------------ */

struct order_move {
	double score;          /* lower first: minus the idle time it may fill */
	int dev, from, to;     /* positions in the device's list */
	long op, held;         /* the op moved; the op whose gap it targets */
};

static int order_move_cmp(const void *a, const void *b)
{
	const struct order_move *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev - y->dev;
	if (x->from != y->from)
		return x->from - y->from;
	return x->to - y->to;
}

static void order_move_add(struct order_move *mv, int *n, int cap, struct order_move m)
{
	for (int i = 0; i < *n; i++)
		if (mv[i].dev == m.dev && mv[i].from == m.from && mv[i].to == m.to) {
			if (m.score < mv[i].score)
				mv[i].score = m.score;
			return;
		}
	if (*n < cap)
		mv[(*n)++] = m;
}

/* The data predecessor of op that arrived last (-1: none). */
static long last_input(const struct tuner *t, long op, int S)
{
	const struct plan *p = &t->work;
	int k = (int)(op % 3), mb = (int)(op / 3 % p->microbatches), st = (int)(op / 3 / p->microbatches);
	long a = -1, b = -1;

	if (k == 0 && st > 0)
		a = sim_op_index(p, st - 1, mb, OP_F);
	if (k == 1) {
		a = sim_op_index(p, st, mb, OP_F);
		if (st + 1 < S)
			b = sim_op_index(p, st + 1, mb, OP_I);
	}
	if (k == 2)
		a = sim_op_index(p, st, mb, OP_I);
	if (b >= 0 && (a < 0 || t->sim.end[b] > t->sim.end[a]))
		a = b;
	return a;
}

static void describe_op(const struct tuner *t, long op, char *out)
{
	struct action a = { (int32_t)(op / 3 / t->work.microbatches), (int32_t)(op / 3 % t->work.microbatches),
	                    (uint8_t)(op % 3 == 0 ? OP_F : op % 3 == 1 ? OP_I : OP_W), 0 };

	action_format(&a, out);
}

/* Moves that target the idle gaps of the current order (METHOD.md §3, scheduling): an op
 * later in a device's list whose inputs were there before the gap ends moves into it (a
 * ready W or F fills a bubble; an F moved ahead of a backward deepens that device's
 * warm-up), and the input a gap waited for moves ahead on its own device when that device
 * kept it waiting. Ranked by the idle time they may fill; the simulator decides. */
static void gen_order(struct tuner *t)
{
	const int D = t->cluster->devices, S = t->cur.nstages;
	struct sim *sm = &t->sim;
	const int *ostart;
	const struct action *ord;
	struct order_move *mv;
	double span, eps;
	int n = 0, cap = 4 * ORDER_CANDS + 64;
	long nops;

	if (!t->pos)
		return;
	if (!isfinite(evaluate(t, &t->cur, NULL)))
		return;  /* the op times below are the current state's */
	nops = plan_total_ops(&t->work);
	ostart = t->cur.order ? t->cur.order_start : sm->order_start;
	ord = t->cur.order ? t->cur.order : sm->order;
	if (ostart[D] != nops)
		return;
	mv = malloc((size_t)cap * sizeof(*mv));
	if (!mv) {
		t->oom = true;
		return;
	}
	span = 0;
	for (long op = 0; op < nops; op++) {
		const struct action *a = &ord[op];

		t->pos[sim_op_index(&t->work, a->stage, a->mb, a->kind)] = (int)(op);
	}
	for (int d = 0; d < D; d++)
		if (ostart[d + 1] > ostart[d]) {
			const struct action *a = &ord[ostart[d + 1] - 1];
			long op = sim_op_index(&t->work, a->stage, a->mb, a->kind);

			if (sm->end[op] > span)
				span = sm->end[op];
		}
	eps = span * 1e-9;
	for (int d = 0; d < D; d++) {
		int len = ostart[d + 1] - ostart[d];

		for (int i = 0; i < len; i++) {
			const struct action *a = &ord[ostart[d] + i];
			long x = sim_op_index(&t->work, a->stage, a->mb, a->kind), pred;
			double prev_end = 0, gap;

			if (i > 0) {
				const struct action *b = a - 1;

				prev_end = sm->end[sim_op_index(&t->work, b->stage, b->mb, b->kind)];
			}
			gap = sm->start[x] - prev_end;
			if (gap <= eps)
				continue;
			/* a later op that could have run in the gap */
			for (int j = i + 1; j < len && j <= i + ORDER_WINDOW; j++) {
				const struct action *c = &ord[ostart[d] + j];
				long y = sim_op_index(&t->work, c->stage, c->mb, c->kind);
				double from = fmax(sm->ready[y], prev_end), fill;

				if (from >= sm->start[x] - eps)
					continue;
				fill = fmin(sm->start[x] - from, sm->end[y] - sm->start[y]);
				order_move_add(mv, &n, cap, (struct order_move){ -fill, d, j, i, y, x });
			}
			/* the input the gap waited for, held up on its own device */
			pred = last_input(t, x, S);
			if (pred >= 0 && sm->start[pred] > sm->ready[pred] + eps) {
				int pd = t->work.stages[pred / 3 / t->work.microbatches].device;
				int pp = t->pos[pred] - ostart[pd];

				for (int back = 1; back <= 2 && pp - back >= 0; back++)
					order_move_add(mv, &n, cap,
					               (struct order_move){ -gap / (back + 1), pd, pp, pp - back, pred, x });
			}
		}
	}
	/* warm-up depth per device: one F more before its first backward (the device waited
	 * in its warm-up) or one fewer (it has forwards to spare) */
	for (int d = 0; d < D; d++) {
		const struct metrics *mt = &t->cur_metrics;
		int len = ostart[d + 1] - ostart[d], fb = -1, next_f = -1, last_f = -1;
		double wait = mt->dev && mt->ndevices == D ? mt->dev[d].warmup_idle_ms : 0;

		for (int i = 0; i < len; i++) {
			const struct action *a = &ord[ostart[d] + i];

			if (a->kind == OP_F && fb < 0)
				last_f = i;
			else if (a->kind != OP_F && fb < 0)
				fb = i;
			else if (a->kind == OP_F && fb >= 0 && next_f < 0)
				next_f = i;
		}
		if (fb < 0)
			continue;
		if (next_f >= 0) {
			const struct action *a = &ord[ostart[d] + next_f], *b = &ord[ostart[d] + fb];

			order_move_add(mv, &n, cap, (struct order_move){ -wait, d, next_f, fb,
			               sim_op_index(&t->work, a->stage, a->mb, a->kind),
			               sim_op_index(&t->work, b->stage, b->mb, b->kind) });
		}
		if (last_f >= 0 && last_f + 1 == fb) {
			/* the last warm-up F after the first backward: moved as the backward ahead of it */
			const struct action *a = &ord[ostart[d] + fb], *b = &ord[ostart[d] + last_f];

			order_move_add(mv, &n, cap, (struct order_move){ -0.5 * wait, d, fb, last_f,
			               sim_op_index(&t->work, a->stage, a->mb, a->kind),
			               sim_op_index(&t->work, b->stage, b->mb, b->kind) });
		}
	}
	/* the critical path, traced back from the op that ends last: an op on it that waited
	 * for its device while its inputs were there goes ahead of what kept it waiting */
	{
		long x = -1;
		int guard = 0;

		for (int d = 0; d < D; d++)
			if (ostart[d + 1] > ostart[d]) {
				const struct action *a = &ord[ostart[d + 1] - 1];
				long op = sim_op_index(&t->work, a->stage, a->mb, a->kind);

				if (x < 0 || sm->end[op] > sm->end[x])
					x = op;
			}
		while (x >= 0 && guard++ < nops) {
			int d = t->work.stages[x / 3 / t->work.microbatches].device, at = t->pos[x] - ostart[d];
			long prev = -1;

			if (at > 0) {
				const struct action *b = &ord[t->pos[x] - 1];

				prev = sim_op_index(&t->work, b->stage, b->mb, b->kind);
			}
			if (prev >= 0 && sm->end[prev] >= sm->start[x] - eps) {
				/* held by its device */
				for (int back = 1; back <= 3 && at - back >= 0 && sm->ready[x] < sm->start[x] - eps; back++) {
					const struct action *b = &ord[t->pos[x] - back];
					long y = sim_op_index(&t->work, b->stage, b->mb, b->kind);

					if (sm->ready[x] >= sm->start[y] + eps && back > 1)
						break;  /* its inputs were not there before y either */
					order_move_add(mv, &n, cap, (struct order_move){ -2 * (sm->start[x] - sm->ready[x]) / back,
					                                                 d, at, at - back, x, y });
				}
				x = prev;
			} else {
				x = last_input(t, x, S);
			}
		}
	}
	qsort(mv, (size_t)n, sizeof(*mv), order_move_cmp);
	for (int i = 0; i < n && i < ORDER_CANDS; i++) {
		struct cand *c = cand_add(t, &t->cur, MOVE_ORDER, mv[i].dev, mv[i].from);
		struct action *seg, keep;
		char o1[48], o2[48];

		if (!c)
			break;
		if (!c->st.order && state_set_order(&c->st, D, ostart, ord) < 0) {
			tune_state_release(&t->cands[--t->ncands].st);
			t->oom = true;
			break;
		}
		seg = c->st.order + c->st.order_start[mv[i].dev];
		keep = seg[mv[i].from];
		if (mv[i].to < mv[i].from)
			memmove(seg + mv[i].to + 1, seg + mv[i].to, (size_t)(mv[i].from - mv[i].to) * sizeof(*seg));
		seg[mv[i].to] = keep;
		describe_op(t, mv[i].op, o1);
		describe_op(t, mv[i].held, o2);
		snprintf(c->what, sizeof(c->what), "gpu %d: %s earlier, into the idle time before %s", mv[i].dev, o1, o2);
		c->score = mv[i].score;
		cand_keep_if_new(t);
	}
	free(mv);
}

static void generate(struct tuner *t)
{
	cands_clear(t);
	switch (t->phase) {
	case PHASE_PARTITION: gen_partition(t); break;
	case PHASE_PLACEMENT: gen_placement(t); break;
	case PHASE_SCHEDULING: gen_scheduling(t); break;
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

		if (!n)
			return NULL;
		t->steps = n;
		t->scap = cap;
	}
	s = &t->steps[t->nsteps];
	memset(s, 0, sizeof(*s));
	if (tune_state_copy(&s->state, &t->cur) < 0)
		return NULL;
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
		state_drop_order(state);
		return 0;
	case MOVE_SWAP: {
		int x;

		if (step->a < 0 || step->b >= state->nstages)
			return -1;
		x = state->device[step->a];
		state->device[step->a] = state->device[step->b];
		state->device[step->b] = x;
		state_drop_order(state);
		return 0;
	}
	case MOVE_SCHED:
		state->sched = step->state.sched;
		state_drop_order(state);
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
	t->t0 = t->last_progress = now_s();
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
	if ((long)maxS * o->microbatches * 3 <= ORDER_MAX_OPS)
		t->pos = calloc((size_t)maxS * o->microbatches * 3, sizeof(int));
	t->layer_bytes = calloc((size_t)m->nlayers, sizeof(double));
	t->layer_f = calloc((size_t)m->nlayers, sizeof(double));
	t->weight = calloc((size_t)D, sizeof(double));
	t->mem = calloc((size_t)D, sizeof(double));
	if (!t->work.stages || !t->work.order_start || !t->work.order || !t->cap_buf || !t->wcap_buf ||
	    !t->layer_cost || !t->layer_fb || !t->load || !t->layer_bytes || !t->layer_f || !t->weight || !t->mem) {
		err_set(e, ERR_RUNTIME, "out of host memory");
		goto fail;
	}
	for (int l = 0; l < m->nlayers; l++) {
		t->layer_cost[l] = m->layers[l].f_ms + m->layers[l].b_ms + m->layers[l].w_ms;
		t->layer_fb[l] = m->layers[l].f_ms + m->layers[l].b_ms;
		t->layer_bytes[l] = (double)m->layers[l].param_bytes / 2 * 16;
		t->layer_f[l] = m->layers[l].f_ms;
	}
	for (int d = 0; d < D; d++)
		t->mem[d] = cluster_usable_bytes(c);
	t->part = (struct tune_part_in){ m->nlayers, t->layer_cost, t->layer_bytes, t->layer_f, 1.0 / o->microbatches, D,
	                                 t->weight, t->mem, 0, 0 };
	/* every baseline that applies: the result is never worse than the best of them */
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (int pi = 0; pi < 2; pi++) {
			struct baseline_spec spec = { kinds[k], o->microbatches, 0, parts[pi], NULL, 0, 0, NULL };
			struct plan p;
			struct sim_opts so;
			struct metrics mt;
			struct err ignore = ERR_INIT;
			int rc;

			if (baseline_plan(&p, m, NULL, c, NULL, &spec, &ignore) < 0) {
				if (ignore.cls == ERR_RUNTIME)
					goto oom;
				continue; /* this baseline does not apply */
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
	 * counts, 3D round robin and zigzag) with 1F1B-like, zero-bubble-like and
	 * memory-capped knobs; the search runs from the best and then restarts from the best
	 * of each other structure */
	for (int shape = 0; shape < 6; shape++) {
		int S = shape == 0 ? D : shape == 3 ? D + (D + 1) / 2 : shape >= 4 ? 3 * D : 2 * D;
		struct tune_state best_s = { 0 };
		double best_s_ms = INFINITY;

		if (S > maxS || (shape == 3 && D < 2))
			continue;
		for (int knobs = 0; knobs < 3; knobs++) {
			struct tune_state s;
			double ms;

			if (state_alloc(&s, S) < 0) {
				tune_state_release(&best_s);
				goto oom;
			}
			if (shape == 2 || shape == 5)
				place_v(&s, D);
			else
				place_round_robin(&s, D);
			s.sched.alternate = knobs != 1;
			s.sched.wcap = knobs == 1 ? D : 0;
			s.sched.cap_extra = knobs == 0 ? S : 0; /* memory alone, or 1F1B's depth */
			if (!partition_state(t, &s, NULL, 0))
				uniform_first(&s, m->nlayers);
			ms = static_fits(t, &s) ? evaluate(t, &s, NULL) : INFINITY;
			if (ms < best_s_ms || best_s.nstages == 0) {
				tune_state_release(&best_s);
				best_s = s;
				best_s_ms = ms;
			} else {
				tune_state_release(&s);
			}
		}
		/* insert by time */
		{
			int i = t->nstarts++;

			while (i > 0 && t->start_ms[i - 1] > best_s_ms) {
				t->starts[i] = t->starts[i - 1];
				t->start_ms[i] = t->start_ms[i - 1];
				i--;
			}
			t->starts[i] = best_s;
			t->start_ms[i] = best_s_ms;
		}
	}
	if (t->nstarts > 0) {
		t->cur = t->starts[0];
		t->cur_ms = t->start_ms[0];
		memset(&t->starts[0], 0, sizeof(t->starts[0]));
		t->next_start = 1;
	}
	if (t->cur.nstages == 0) {
		err_set(e, ERR_INPUT, "model '%s' has fewer layers (%d) than cluster '%s' has devices (%d)",
		        m->name, m->nlayers, c->name, D);
		goto fail;
	}
	if (!isfinite(t->cur_ms) && !t->have_baseline) {
		err_set(e, ERR_INFEASIBLE, "no plan of model '%s' fits in the memory of cluster '%s'", m->name, c->name);
		goto fail;
	}
	t->cur_ms = evaluate(t, &t->cur, &t->cur_metrics);
	t->cur_tie = t->eval_tie;
	if (tune_state_copy(&t->best, &t->cur) < 0)
		goto oom;
	t->best_ms = t->cur_ms;
	if (t->have_baseline)
		snprintf(msg, sizeof(msg), "start: %d stages (%s); best baseline %s at %.2f ms", t->cur.nstages,
		         t->cur.sched.alternate ? "adaptive" : "zero-bubble knobs", t->baseline_name, t->baseline_ms);
	else
		snprintf(msg, sizeof(msg), "start: %d stages; no baseline applies", t->cur.nstages);
	if (!record(t, PHASE_START, MOVE_START, 0, 0, msg, t->have_baseline ? t->baseline_ms : t->cur_ms, t->cur_ms) ||
	    t->oom)
		goto oom;
	t->phase = PHASE_PARTITION;
	t->spent = now_s() - t->t0;
	*out = t;
	return 0;
oom:
	err_set(e, ERR_RUNTIME, "out of host memory");
fail:
	tune_free(t);
	return -1;
}

/* ---- the budget and iterated local search --------------------------------------------- */

/* Whether the search must stop now: time, evaluations, or an interrupt. */
static bool out_of_budget(struct tuner *t)
{
	if (t->opts.stop && *t->opts.stop) {
		t->interrupted = true;
		return true;
	}
	if (t->opts.max_evals > 0 && t->evals >= t->opts.max_evals)
		return true;
	return t->opts.time_budget_s > 0 && now_s() - t->t0 > t->opts.time_budget_s;
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

	switch (next_rand(t) % 4) {
	case 0: { /* a boundary moves by 1-3 layers */
		int b, delta;

		if (S < 2)
			return false;
		b = 1 + (int)(next_rand(t) % (unsigned)(S - 1));
		delta = 1 + (int)(next_rand(t) % 3);
		if (next_rand(t) & 1)
			delta = -delta;
		if (s->first[b] + delta <= s->first[b - 1] || s->first[b] + delta >= s->first[b + 1])
			return false;
		s->first[b] += delta;
		strbuf_addf(what, " boundary %d %+d", b, delta);
		return true;
	}
	case 1: { /* a stage to another device */
		int st = (int)(next_rand(t) % (unsigned)S), d = (int)(next_rand(t) % (unsigned)D);

		if (d == s->device[st] || stages_on(s, d) >= t->opts.max_stages_per_device || stages_on(s, s->device[st]) < 2 ||
		    (st > 0 && s->device[st - 1] == d) || (st + 1 < S && s->device[st + 1] == d))
			return false;
		strbuf_addf(what, " stage %d to gpu %d", st, d);
		s->device[st] = d;
		state_drop_order(s);
		return true;
	}
	case 2: { /* two stages swap devices */
		int a = (int)(next_rand(t) % (unsigned)S), b = (int)(next_rand(t) % (unsigned)S), x;

		if (s->device[a] == s->device[b])
			return false;
		x = s->device[a];
		s->device[a] = s->device[b];
		s->device[b] = x;
		state_drop_order(s);
		strbuf_addf(what, " swap stages %d and %d", a < b ? a : b, a < b ? b : a);
		return true;
	}
	default: { /* the scheduler's knobs */
		static const char *const names[] = { "alternation", "deferral", "depth", "W cap" };
		int k = (int)(next_rand(t) % 4);

		if (k == 0)
			s->sched.alternate = !s->sched.alternate;
		else if (k == 1)
			s->sched.defer_arrivals = !s->sched.defer_arrivals;
		else if (k == 2)
			s->sched.cap_extra = (int)(next_rand(t) % 5) - 1;
		else
			s->sched.wcap = (int[]){ 0, 1, D, 2 * D }[next_rand(t) % 4];
		strbuf_addf(what, " %s", names[k]);
		state_drop_order(s);
		return true;
	}
	}
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
	tune_state_release(&t->cur);
	t->cur = s;
	t->cur_ms = evaluate(t, &t->cur, &t->cur_metrics);
	t->cur_tie = t->eval_tie;
	t->rounds_done = 0;
	t->round_improved = false;
	t->tabu_boundary = -1;
	t->phase = PHASE_PARTITION;
	generate(t);
	st = strbuf_failed(&what) ? NULL
	     : record(t, PHASE_START, MOVE_RESTRUCTURE, t->cur.nstages, 0, what.buf, before, t->cur_ms);
	strbuf_release(&what);
	return st;
}

static int search_step(struct tuner *t, const struct tune_step **step, struct err *e)
{
	*step = NULL;
	if (!t->started) {
		t->started = true;
		generate(t);
		*step = &t->steps[0];
		return 1;
	}
	while (!t->done) {
		struct cand *c;
		double ms;

		if (out_of_budget(t)) {
			t->done = true;
			break;
		}
		if (t->ci >= t->ncands) {
			/* the phase ran out of moves: on to the next, and stop after a dry round */
			if (t->phase == PHASE_SCHEDULING) {
				t->rounds_done++;
				if (!t->round_improved || (t->opts.max_rounds > 0 && t->rounds_done >= t->opts.max_rounds)) {
					/* converged: restart from the next structure, if any is left */
					while (t->next_start < t->nstarts && !isfinite(t->start_ms[t->next_start]))
						t->next_start++;
					if (t->next_start >= t->nstarts) {
						/* converged: with a budget, kick the best and descend again,
						 * until the budget is spent or nothing is left to gain */
						if (!anytime(t) || t->best_ms <= t->bound_ms * (1 + IMPROVE_EPS) || out_of_budget(t)) {
							t->done = true;
							break;
						}
						if (!(*step = perturb(t)))
							return err_set(e, ERR_RUNTIME, "out of host memory");
						return 1;
					}
					{
						int k = t->next_start++;
						double before = t->cur_ms;
						char what[200];

						tune_state_release(&t->cur);
						t->cur = t->starts[k];
						memset(&t->starts[k], 0, sizeof(t->starts[k]));
						t->cur_ms = evaluate(t, &t->cur, &t->cur_metrics);
						t->cur_tie = t->eval_tie;
						t->rounds_done = 0;
						t->round_improved = false;
						t->tabu_boundary = -1;
						t->phase = PHASE_PARTITION;
						snprintf(what, sizeof(what), "restart from %d stages placed %s", t->cur.nstages,
						         t->cur.nstages > t->cluster->devices &&
						         t->cur.device[t->cluster->devices] == t->cluster->devices - 1 ? "in a zigzag"
						                                                                   : "round robin");
						generate(t);
						*step = record(t, PHASE_START, MOVE_RESTRUCTURE, t->cur.nstages, 0, what, before, t->cur_ms);
						if (!*step)
							return err_set(e, ERR_RUNTIME, "out of host memory");
						return 1;
					}
				}
				t->round_improved = false;
				t->phase = PHASE_PARTITION;
			} else {
				t->phase++;
			}
			generate(t);
			continue;
		}
		/* best improvement: simulate the whole (short, ranked) list, keep the best */
		{
			int best = -1;
			double best_ms = t->cur_ms, best_tie = t->cur_tie;

			for (; t->ci < t->ncands; t->ci++) {
				if (out_of_budget(t))
					break;
				ms = evaluate(t, &t->cands[t->ci].st, NULL);
				if (better(ms, t->eval_tie, best_ms, best_tie)) {
					best_ms = ms;
					best_tie = t->eval_tie;
					best = t->ci;
				}
			}
			if (best < 0)
				continue;
			c = &t->cands[best];
		}
		{
			double before = t->cur_ms;
			struct tune_state keep;

			if (tune_state_copy(&keep, &c->st) < 0)
				return err_set(e, ERR_RUNTIME, "out of host memory");
			tune_state_release(&t->cur);
			t->cur = keep;
			t->cur_ms = evaluate(t, &t->cur, &t->cur_metrics);
			t->cur_tie = t->eval_tie;
			if (c->kind == MOVE_SHIFT) {
				t->tabu_boundary = c->a;
				t->tabu_dir = c->b;
			}
			if (t->cur_ms < t->best_ms) {
				tune_state_release(&t->best);
				if (tune_state_copy(&t->best, &t->cur) < 0)
					return err_set(e, ERR_RUNTIME, "out of host memory");
				t->best_ms = t->cur_ms;
				t->kicks = 0;
			}
			t->round_improved = true;
			*step = record(t, t->phase, c->kind, c->a, c->b, c->what, before, t->cur_ms);
			if (!*step)
				return err_set(e, ERR_RUNTIME, "out of host memory");
			generate(t);
			t->spent = now_s() - t->t0;
			return 1;
		}
	}
	t->spent = now_s() - t->t0;
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
	free(t->layer_bytes);
	free(t->layer_f);
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
