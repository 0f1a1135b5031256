/*
 * tune_state — the tuner's candidates as data (see tune.h): a state's arrays, copies and
 * equality, a step's move replayed on a state, the steps written as JSON
 * (octopipe.steps/1) for --steps-out and the UI, and the cheap estimates of a state
 * (static memory, the load estimate the moves are ranked by).
 */
#include "config.h"
#include "tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "clock.h"
#include "json.h"
#include "parallel.h"
#include "sim.h"
#include "strbuf.h"
#include "tune_impl.h"

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
	       a->sched.lst == b->sched.lst && a->sched.rc == b->sched.rc &&
	       a->sched.rc_ranked == b->sched.rc_ranked && a->sched.depth_q == b->sched.depth_q &&
	       a->sched.reserve == b->sched.reserve &&
	       !a->order == !b->order &&
	       (!a->order || (a->order_devices == b->order_devices &&
	                      memcmp(a->order_start, b->order_start, (size_t)(a->order_devices + 1) * sizeof(int)) == 0 &&
	                      orders_equal(a->order, b->order, tune_state_order_len(a))));
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
	/* what the steps aim at: no plan beats the tight bound, none that fits the memory one */
	jw_num(&w, root, "lower_bound_tight_ms", t->bound_ms);
	jw_num(&w, root, "lower_bound_memory_ms", t->stop_ms);
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
		if (s->state.sched.rc > 0)
			jw_num(&w, sch, "recompute_stages", s->state.sched.rc);
		if (s->state.sched.rc > 0 && s->state.sched.rc_ranked)
			jw_bool(&w, sch, "recompute_ranked", true);
		if (s->state.sched.depth_q > 0)
			jw_num(&w, sch, "depth_quarters", s->state.sched.depth_q);
		if (s->state.sched.reserve > 0)
			jw_num(&w, sch, "reserve", s->state.sched.reserve);
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

/* ---- estimates and helpers ------------------------------------------------------------ */

static double stage_cost(const struct tuner *t, const struct tune_state *s, int st)
{
	double c = 0;

	for (int l = s->first[st]; l < s->first[st + 1]; l++)
		c += t->layer_cost[l];
	return c / t->cluster->device_speed[s->device[st]];
}

/* Static memory of a state over the usable memory of some device: never fits. */
bool tune_static_fits(const struct tuner *t, const struct tune_state *s)
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
void tune_uniform_first(struct tune_state *s, int L)
{
	for (int st = 0; st <= s->nstages; st++)
		s->first[st] = (int)((long)L * st / s->nstages);
}
