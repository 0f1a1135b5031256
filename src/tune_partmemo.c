/*
 * tune_partmemo — the tuner's balanced partitions of its states (tune_partition_devices
 * does the search): the memo that answers the placements the search asks for again and
 * again, and whole lists of candidates balanced at once on the pool's threads
 * (tune_partition_cands).
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

/* The searches of a list, for the pool. */
struct batch {
	struct tuner *t;
	struct tune_part_in in;
	const int *item;        /* the candidates (list indices) searched */
	double *r;              /* each one's answer */
};

static void balance_one(void *arg, int k, struct tune_evalbuf *b)
{
	struct batch *x = arg;
	struct tune_state *s = &x->t->cands[x->item[k]].st;

	(void)b;
	x->r[k] = tune_partition_devices(&x->in, s->nstages, s->device, s->first);
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

bool *tune_partition_cands(struct tuner *t, int from, bool quick)
{
	int n = t->ncands - from, nw = 0;
	bool *ok = malloc((size_t)(n > 0 ? n : 1) * sizeof(bool));
	int *dep = malloc((size_t)(n > 0 ? n : 1) * 3 * sizeof(int)), *at = dep + n, *item = at + n;
	struct part_memo **slot = malloc((size_t)(n > 0 ? n : 1) * sizeof(*slot));
	double *r = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
	struct batch x;

	for (int i = 0; ok && i < n; i++)
		ok[i] = false;
	if (!ok || !dep || !slot || !r) {
		t->oom = true;
		goto out;
	}
	set_weights(t, NULL, 0);
	/* the memo in list order: answered, waiting for an earlier item, or searched */
	for (int i = 0; i < n; i++) {
		struct tune_state *s = &t->cands[from + i].st;
		struct part_memo *pm = memo_find(t, s, quick, false);

		slot[i] = NULL;
		dep[i] = -1;
		if (pm && pm->pending < 0) {
			ok[i] = pm->ok;
			if (pm->ok)
				memcpy(s->first, pm->first, (size_t)(s->nstages + 1) * sizeof(int));
		} else if (pm) {
			dep[i] = pm->pending;
		} else {
			if (t->memo[t->memo_next].first && t->memo[t->memo_next].pending >= 0)
				slot[t->memo[t->memo_next].pending] = NULL; /* its answer is no longer kept */
			if (!(pm = memo_new(t, s, quick, false)))
				goto out;
			pm->pending = i;
			slot[i] = pm;
			dep[i] = i;
			at[i] = nw;
			item[nw++] = from + i;
		}
	}
	if (nw == 0)
		goto out;
	set_search(t, quick, false, false);
	x = (struct batch){ t, t->part, item, r };
	if (tune_pool_for(t, nw, balance_one, &x))
		resolve(t, from, n, dep, at, r, slot, ok);
out:
	/* entries whose answer never came (out of host memory) are dropped */
	for (int i = 0; slot && dep && i < n; i++)
		if (dep[i] == i && slot[i] && slot[i]->pending >= 0) {
			free(slot[i]->first);
			free(slot[i]->device);
			free(slot[i]->weight);
			memset(slot[i], 0, sizeof(*slot[i]));
		}
	free(dep);
	free(slot);
	free(r);
	if (t->oom) {
		free(ok);
		return NULL;
	}
	return ok;
}
