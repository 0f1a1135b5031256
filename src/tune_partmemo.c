/*
 * tune_partmemo — the tuner's balanced partitions of its states (tune_partition_devices
 * does the search): the memo that answers the placements the search asks for again and
 * again, and whole lists of candidates balanced at once on the pool's threads
 * (tune_partition_cands; tune_partition_reqs when each candidate has its own request:
 * the partition phase's exact, bubble-aware and wait-counting balances).
 *
 * A list is balanced exactly as one call after the other would be. The memo is looked up
 * and filled in list order first, a state whose placement an earlier state of the list
 * asked for waiting for that one's answer; only then do the searches themselves (a pure
 * function of their input) run on the threads; their answers go into the memo and the
 * states in list order. So the search's path does not depend on the threads.
 */
#include "config.h"
#include "tune_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Each device's weight: its speed, less (with idle, per device, ms) the share of the
 * iteration it idles anyway filling and draining the pipeline. */
static void set_weights(struct tuner *t, const double *idle, double span)
{
	for (int d = 0; d < t->cluster->devices; d++) {
		double share = 1;

		if (idle && span > 0) {
			share = 1 - idle[d] / span;
			if (share < 0.25)
				share = 0.25;
		}
		t->weight[d] = t->cluster->device_speed[d] * share;
	}
}

/* The remembered answer for s at the current weights (a quick request is served by a full
 * answer too), or NULL. */
static struct part_memo *memo_find(struct tuner *t, const struct tune_state *s, bool quick, bool wait)
{
	int S = s->nstages, D = t->cluster->devices;

	for (int i = 0; i < PART_MEMO; i++) {
		struct part_memo *pm = &t->memo[i];

		if (pm->first && pm->nstages == S && (quick || !pm->quick) && pm->wait == wait &&
		    memcmp(pm->device, s->device, (size_t)S * sizeof(int)) == 0 &&
		    memcmp(pm->weight, t->weight, (size_t)D * sizeof(double)) == 0)
			return pm;
	}
	return NULL;
}

/* A new entry for s at the current weights in place of the oldest, its answer still to
 * come; NULL (t->oom set) when out of host memory. */
static struct part_memo *memo_new(struct tuner *t, const struct tune_state *s, bool quick, bool wait)
{
	int S = s->nstages, D = t->cluster->devices;
	struct part_memo *pm = &t->memo[t->memo_next];

	t->memo_next = (t->memo_next + 1) % PART_MEMO;
	free(pm->first);
	free(pm->device);
	free(pm->weight);
	memset(pm, 0, sizeof(*pm));
	pm->first = malloc((size_t)(S + 1) * sizeof(int));
	pm->device = malloc((size_t)S * sizeof(int));
	pm->weight = malloc((size_t)D * sizeof(double));
	if (!pm->first || !pm->device || !pm->weight) {
		free(pm->first);
		free(pm->device);
		free(pm->weight);
		memset(pm, 0, sizeof(*pm));
		t->oom = true;
		return NULL;
	}
	pm->nstages = S;
	pm->quick = quick;
	pm->wait = wait;
	pm->pending = -1;
	memcpy(pm->device, s->device, (size_t)S * sizeof(int));
	memcpy(pm->weight, t->weight, (size_t)D * sizeof(double));
	return pm;
}

/* The search's settings for a request: a bubble-aware balance (idle) changes with every
 * plan, so it and a quick one get a shorter search. */
static void set_search(struct tuner *t, bool quick, bool wait, bool idle)
{
	t->part.kicks = idle || quick ? -1 : 0;
	t->part.nodes = idle || quick ? 1000 : 0;
	t->part.icost = wait ? t->layer_i : NULL;
	/* no partition search outlives the tuner's budget (a simulation budget has none) */
	t->part.deadline = t->opts.time_budget_s > 0 ? t->t0 + t->opts.time_budget_s : 0;
}

/* Boundaries for the state's stage count and placement that balance device loads
 * (tune_partition_devices). With idle (per device, ms, may be NULL) a device is expected to
 * idle that long anyway (filling and draining the pipeline), so it gets less work: its
 * weight is its speed times the share of the iteration it can compute. False when no
 * partition fits in memory (the state is left as it was). */
static bool partition_with(struct tuner *t, struct tune_state *s, const double *idle, double span, bool quick,
                           bool wait)
{
	struct part_memo *pm;
	double r;
	bool ok;

	set_weights(t, idle, span);
	if ((pm = memo_find(t, s, quick, wait))) {
		if (pm->ok)
			memcpy(s->first, pm->first, (size_t)(s->nstages + 1) * sizeof(int));
		return pm->ok;
	}
	set_search(t, quick, wait, idle != NULL);
	r = tune_partition_devices(&t->part, s->nstages, s->device, s->first);
	t->part.icost = NULL;  /* the others rank and check by the fill alone */
	if (isnan(r)) {
		t->oom = true;
		return false;
	}
	ok = isfinite(r);
	if ((pm = memo_new(t, s, quick, wait))) {
		pm->ok = ok;
		memcpy(pm->first, s->first, (size_t)(s->nstages + 1) * sizeof(int));
	}
	return ok;
}

bool tune_partition_quick(struct tuner *t, struct tune_state *s)
{
	return partition_with(t, s, NULL, 0, true, false);
}

bool tune_partition_state(struct tuner *t, struct tune_state *s, const double *idle, double span)
{
	return partition_with(t, s, idle, span, false, false);
}

bool tune_partition_waits(struct tuner *t, struct tune_state *s)
{
	return partition_with(t, s, NULL, 0, false, true);
}

/* The searches of a list, for the pool: each item's own input (its weights, its search's
 * settings). */
struct batch {
	struct tuner *t;
	struct tune_part_in *in;
	const int *item;        /* the candidates (list indices) searched */
	double *r;              /* each one's answer */
};

static void balance_one(void *arg, int k, struct tune_evalbuf *b)
{
	struct batch *x = arg;
	struct tune_state *s = &x->t->cands[x->item[k]].st;

	(void)b;
	x->r[k] = tune_partition_devices(&x->in[k], s->nstages, s->device, s->first);
}

/* Resolves the list's answers in list order: into the states, and into the memo entries
 * still waiting for them. */
static void resolve(struct tuner *t, int from, int n, const int *dep, const int *at, const double *r,
                    struct part_memo **slot, bool *ok)
{
	for (int i = 0; i < n; i++) {
		struct tune_state *s = &t->cands[from + i].st;

		if (dep[i] == i) {
			if (isnan(r[at[i]]))
				t->oom = true;
			ok[i] = isfinite(r[at[i]]);
			if (slot[i]) {
				slot[i]->ok = ok[i];
				slot[i]->pending = -1;
				memcpy(slot[i]->first, s->first, (size_t)(s->nstages + 1) * sizeof(int));
			}
		} else if (dep[i] >= 0) {
			ok[i] = ok[dep[i]];
			if (ok[i])
				memcpy(s->first, t->cands[from + dep[i]].st.first, (size_t)(s->nstages + 1) * sizeof(int));
		}
	}
}

/* The list's scratch: per item what became of it, per search its input and weights. */
struct scratch {
	bool *ok;
	int *dep, *at, *item;
	struct part_memo **slot;
	double *r, *w;
	struct tune_part_in *in;
};

static bool scratch_alloc(struct scratch *x, int n, int D)
{
	size_t k = (size_t)(n > 0 ? n : 1);

	x->ok = malloc(k * sizeof(bool));
	x->dep = malloc(k * 3 * sizeof(int));
	x->at = x->dep ? x->dep + k : NULL;
	x->item = x->dep ? x->dep + 2 * k : NULL;
	x->slot = malloc(k * sizeof(*x->slot));
	x->r = malloc(k * sizeof(double));
	x->w = malloc(k * (size_t)D * sizeof(double));
	x->in = malloc(k * sizeof(*x->in));
	/* each set apart: the clean-up reads dep and slot whatever else failed */
	for (int i = 0; i < n; i++) {
		if (x->ok)
			x->ok[i] = false;
		if (x->dep)
			x->dep[i] = -1;
		if (x->slot)
			x->slot[i] = NULL;
	}
	return x->ok && x->dep && x->slot && x->r && x->w && x->in;
}

/* The memo in list order: each item answered from it, waiting for an earlier item's
 * answer, or searched (its input set up, an entry made for its answer); the number
 * searched, or -1 when out of host memory. */
static int plan_list(struct tuner *t, int from, int n, const struct part_req *req, struct scratch *x)
{
	int D = t->cluster->devices, nw = 0;

	for (int i = 0; i < n; i++) {
		struct tune_state *s = &t->cands[from + i].st;
		const struct part_req *q = &req[i];
		struct part_memo *pm;

		set_weights(t, q->idle, q->span);
		pm = memo_find(t, s, q->quick, q->wait);
		if (pm && pm->pending < 0) {
			x->ok[i] = pm->ok;
			if (pm->ok)
				memcpy(s->first, pm->first, (size_t)(s->nstages + 1) * sizeof(int));
		} else if (pm) {
			x->dep[i] = pm->pending;
		} else {
			if (t->memo[t->memo_next].first && t->memo[t->memo_next].pending >= 0)
				x->slot[t->memo[t->memo_next].pending] = NULL; /* its answer is no longer kept */
			if (!(pm = memo_new(t, s, q->quick, q->wait)))
				return -1;
			pm->pending = i;
			x->slot[i] = pm;
			x->dep[i] = i;
			x->at[i] = nw;
			set_search(t, q->quick, q->wait, q->idle != NULL);
			x->in[nw] = t->part;
			x->in[nw].weight = x->w + (size_t)nw * D;
			memcpy(x->w + (size_t)nw * D, t->weight, (size_t)D * sizeof(double));
			t->part.icost = NULL;
			x->item[nw++] = from + i;
		}
	}
	return nw;
}

bool *tune_partition_reqs(struct tuner *t, int from, const struct part_req *req)
{
	int n = t->ncands - from, nw = 0;
	struct scratch x = { 0 };
	struct batch b;

	if (!scratch_alloc(&x, n, t->cluster->devices) || (nw = plan_list(t, from, n, req, &x)) < 0) {
		t->oom = true;
		goto out;
	}
	b = (struct batch){ t, x.in, x.item, x.r };
	if (nw > 0 && tune_pool_for(t, nw, balance_one, &b))
		resolve(t, from, n, x.dep, x.at, x.r, x.slot, x.ok);
out:
	/* entries whose answer never came (out of host memory) are dropped */
	for (int i = 0; x.slot && x.dep && i < n; i++)
		if (x.dep[i] == i && x.slot[i] && x.slot[i]->pending >= 0) {
			free(x.slot[i]->first);
			free(x.slot[i]->device);
			free(x.slot[i]->weight);
			memset(x.slot[i], 0, sizeof(*x.slot[i]));
		}
	free(x.dep);
	free(x.slot);
	free(x.r);
	free(x.w);
	free(x.in);
	if (t->oom) {
		free(x.ok);
		tune_cands_drop(t, from);
		return NULL;
	}
	return x.ok;
}

bool *tune_partition_cands(struct tuner *t, int from, bool quick)
{
	int n = t->ncands - from;
	struct part_req *req = malloc((size_t)(n > 0 ? n : 1) * sizeof(*req));
	bool *ok;

	if (!req) {
		t->oom = true;
		tune_cands_drop(t, from);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		req[i] = (struct part_req){ NULL, 0, quick, false };
	ok = tune_partition_reqs(t, from, req);
	free(req);
	return ok;
}
