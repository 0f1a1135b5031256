/*
 * tune_place — the placement phase: which device runs each stage (docs/METHOD.md §3.2).
 *
 * New structures (a stage count with a round-robin, zigzag or uneven placement, each with
 * its own balanced partition) and single moves (a stage to another device, two stages
 * swapping devices), ranked by the load + pipeline-fill estimate so that only the most
 * promising are simulated. The first and last stages decide how long the pipeline fills
 * and drains, so swaps that touch them go first among equals.
 *
 * Compound moves close the gap between the two: a stage of the device that works longest
 * goes to another device (or swaps with a stage of one), and the new placement gets its
 * own balanced partition at once. Either half alone usually loses, so a descent that
 * takes one move at a time cannot reach what only the pair gains.
 *
 * Dealt placements leave the patterns: each device keeps where it enters the pipeline and
 * the other stages are dealt by the idle time each device showed (gen_dealt).
 *
 * The open V (tune_place_open_v) is the pattern for between D and 2D stages: a V whose
 * middle is one stage a device. It is a starting structure and a perturbation, not a
 * move of every round (ranked there it cost more simulations than it won).
 */
#include "config.h"
#include "tune_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REBALANCE_TO 3   /* compound moves go to (or swap with) the idlest few devices */
/* Single-stage moves and swaps past this many are limited to nearby devices and stages:
 * every one copies a state (S entries) and bounds it, so all S x D moves and S^2 / 2
 * swaps of thousands of stages took minutes and gigabytes before the budget was first
 * looked at. At most PAIRS_MAX of each, and their states at most PAIRS_CELLS entries in
 * all: up to 192 stages on 64 devices every one is still tried. */
#define PAIRS_MAX 32768L
#define PAIRS_CELLS 4194304L

void tune_place_round_robin(struct tune_state *s, int D)
{
	for (int st = 0; st < s->nstages; st++)
		s->device[st] = st % D;
}

void tune_place_zigzag(struct tune_state *s, int D)
{
	for (int st = 0; st < s->nstages; st++)
		s->device[st] = (st / D) % 2 == 0 ? st % D : D - 1 - st % D;
}

/* The open V: the first p = S - D stages and the last p pair up on devices 0..p-1 as in
 * a V (stage k with stage S-1-k), and the stages between go one to a device. Its paired
 * devices enter the pipeline early and hold a stage near the end, so their first backward
 * comes soon and they drain last, as in ZB-V; the single middle devices carry the rest.
 * It is what fills a pipeline with between D and 2D stages when a weight gradient is too
 * small to fill a V's bubbles (layers do not split evenly there: some devices hold one
 * layer, some two). With ends_alone the first and the last stage (an embedding and a
 * head, the heaviest layers) stay alone on devices 0 and D-1 and the pairs are the
 * stages next to them. Needs D < S < 2D (ends_alone: S <= 2D - 2); false otherwise. */
bool tune_place_open_v(struct tune_state *s, int D, bool ends_alone)
{
	int S = s->nstages, p = S - D, e = ends_alone ? 1 : 0, k;

	if (D < 2 || p < 1 || p >= D || p + 2 * e > D)
		return false;
	if (ends_alone) {
		s->device[0] = 0;
		s->device[S - 1] = D - 1;
	}
	for (k = 0; k < p; k++)
		s->device[e + k] = s->device[S - 1 - e - k] = e + k;
	for (int st = e + p; st < S - e - p; st++)
		s->device[st] = st;
	return true;
}

int tune_stages_on(const struct tune_state *s, int d)
{
	int n = 0;

	for (int st = 0; st < s->nstages; st++)
		n += s->device[st] == d;
	return n;
}

/* Whether stage st may go to device d: another device, not next to a neighbouring stage,
 * within the stages a device may hold, and not the only stage of its device. */
static bool may_move(const struct tuner *t, const struct tune_state *s, int st, int d)
{
	return d != s->device[st] && !(st > 0 && s->device[st - 1] == d) &&
	       !(st + 1 < s->nstages && s->device[st + 1] == d) &&
	       tune_stages_on(s, d) < t->opts.max_stages_per_device && tune_stages_on(s, s->device[st]) >= 2;
}

/* Whether stages a and b may swap devices: neither lands next to a stage of its new device. */
static bool may_swap(const struct tune_state *s, int a, int b)
{
	int da = s->device[a], db = s->device[b];

	for (int k = -1; k <= 1; k += 2) {
		if (a + k >= 0 && a + k < s->nstages && a + k != b && s->device[a + k] == db)
			return false;
		if (b + k >= 0 && b + k < s->nstages && b + k != a && s->device[b + k] == da)
			return false;
	}
	return true;
}

/* The rebalanced candidates from t->cands[from] on: each gets its own balanced partition
 * (on the pool's threads), ranked by the partitioner's objective (the largest device
 * load, pipeline fill included) or its state bound, whichever is larger; those that
 * cannot be balanced or fit are dropped, and the best MAX_RANKED kept. */
static void balance_ranked(struct tuner *t, int from)
{
	int n = t->ncands - from;
	bool *ok = tune_partition_cands(t, from, true);

	if (!ok)
		return;
	for (int i = 0; i < n; i++) {
		struct cand *c = &t->cands[from + i];
		double obj = ok[i] ? tune_partition_objective(&t->part, c->st.nstages, c->st.device, c->st.first)
		                   : INFINITY;

		if (isnan(obj))
			t->oom = true;  /* the objective's scratch */
		ok[i] = isfinite(obj);
		if (ok[i])
			c->score = fmax(obj * t->opts.microbatches, tune_state_bound(t, &c->st));
	}
	tune_cands_keep(t, from, ok);
	free(ok);
	tune_rank(t, from, MAX_RANKED);
}

/* Compound moves: a stage of the device that works longest goes to another device, or
 * swaps devices with another stage, and the new placement gets its own balanced
 * partition. A placement move alone nearly always loses (the boundaries were balanced for
 * the old placement) and a rebalance alone cannot change the placement, so a descent by
 * single moves stops where only the pair pays. Ranked by the partitioner's objective
 * (the largest device load, pipeline fill included); the short partition search keeps
 * the many candidates cheap, and the partitions are remembered (PART_MEMO). */
static void gen_rebalanced(struct tuner *t)
{
	const struct metrics *m = &t->cur_metrics;
	const int S = t->cur.nstages, D = t->cluster->devices;
	int from = t->ncands, hot = 0, idle[REBALANCE_TO];
	int nidle = 0;

	if (S < 2 || !m->dev || m->ndevices != D)
		return;
	for (int d = 1; d < D; d++)
		if (m->dev[d].busy_ms > m->dev[hot].busy_ms)
			hot = d;
	/* the partner devices: those that idle most (each candidate costs a partition search,
	 * most of the tuner's time; the idlest are where work can go) */
	for (int d = 0; d < D; d++) {
		int i;

		if (d == hot)
			continue;
		for (i = nidle < REBALANCE_TO ? nidle++ : REBALANCE_TO; i > 0 && m->dev[d].idle_ms > m->dev[idle[i - 1]].idle_ms; i--)
			if (i < REBALANCE_TO)
				idle[i] = idle[i - 1];
		if (i < REBALANCE_TO)
			idle[i] = d;
	}
	for (int st = 0; st < S && !t->oom; st++) {
		if (t->cur.device[st] != hot)
			continue;
		for (int k = 0; k < D + S && !t->oom; k++) {
			bool swap = k >= D, partner = false;
			int d = swap ? -1 : k, s2 = swap ? k - D : -1;
			struct cand *c;

			for (int i = 0; i < nidle; i++)
				partner |= idle[i] == (swap ? t->cur.device[s2] : d);
			if (!partner)
				continue;
			if (swap ? t->cur.device[st] == t->cur.device[s2] || !may_swap(&t->cur, st, s2)
			         : !may_move(t, &t->cur, st, d))
				continue;
			if (!(c = tune_cand_add(t, &t->cur, MOVE_RESTRUCTURE, S, swap ? 4 : 3))) {
				tune_cands_drop(t, from);
				return;
			}
			if (swap) {
				c->st.device[st] = t->cur.device[s2];
				c->st.device[s2] = t->cur.device[st];
				snprintf(c->what, sizeof(c->what), "swap stages %d and %d (gpus %d and %d), rebalanced", st, s2,
				         t->cur.device[st], t->cur.device[s2]);
			} else {
				c->st.device[st] = d;
				snprintf(c->what, sizeof(c->what), "move stage %d from gpu %d to gpu %d, rebalanced", st,
				         t->cur.device[st], d);
			}
			tune_state_drop_order(&c->st);
		}
	}
	balance_ranked(t, from);
}

/* Free placements, dealt by the bubble each device shows: every device keeps the first
 * of its stages (where it enters the pipeline, which sets its warm-up wait), and the other
 * stages are dealt out again, heaviest first, each to the device that would then finish
 * earliest - its measured warm-up and cool-down idle (times alpha) plus the work dealt to
 * it - within the stages a device may hold and never next to a neighbouring stage (no
 * placement when that cannot be). Round robin and V shapes cannot put the heavy middle of the model
 * on the devices that enter early and the light rest on those that wait; this can. Each
 * placement keeps the boundaries or is rebalanced, under the current scheduler knobs and
 * under the latest-start priority (alternation cannot fill such placements). Proposed
 * only while the round has not improved yet: taken greedily whenever they win, such big
 * jumps led the descent into worse basins (gpt-13b on 8 GPUs, +0.5% over five seeds). */
static void gen_dealt(struct tuner *t)
{
	static const double alphas[] = { 1, 0.5, 0 };
	const struct metrics *m = &t->cur_metrics;
	const int S = t->cur.nstages, D = t->cluster->devices, M = t->opts.microbatches;
	int from = t->ncands, *order = NULL, *dev = NULL, *count = NULL;
	double *load = NULL, *cost = NULL;

	if (S <= D || !m->dev || m->ndevices != D)
		return;
	order = malloc((size_t)S * sizeof(int));
	dev = malloc((size_t)S * sizeof(int));
	count = malloc((size_t)D * sizeof(int));
	load = malloc((size_t)D * sizeof(double));
	cost = malloc((size_t)S * sizeof(double));
	if (!order || !dev || !count || !load || !cost) {
		t->oom = true;
		goto out;
	}
	for (int st = 0; st < S; st++) {
		cost[st] = 0;
		for (int l = t->cur.first[st]; l < t->cur.first[st + 1]; l++)
			cost[st] += t->layer_cost[l];
		order[st] = st;
	}
	/* heaviest first, ties by stage (insertion sort: S is small) */
	for (int i = 1; i < S; i++)
		for (int j = i; j > 0 && (cost[order[j]] > cost[order[j - 1]] ||
		                          (cost[order[j]] == cost[order[j - 1]] && order[j] < order[j - 1])); j--) {
			int x = order[j];

			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	for (size_t a = 0; a < sizeof(alphas) / sizeof(alphas[0]) && !t->oom; a++) {
		bool changed = false;

		for (int d = 0; d < D; d++) {
			count[d] = 0;
			load[d] = alphas[a] * (m->dev[d].warmup_idle_ms + m->dev[d].cooldown_idle_ms);
		}
		for (int st = 0; st < S; st++)
			dev[st] = -1;
		for (int st = 0; st < S; st++) {
			int d = t->cur.device[st];

			if (count[d] == 0) {
				dev[st] = d;
				count[d] = 1;
				load[d] += M * cost[st] / t->cluster->device_speed[d];
			}
		}
		for (int i = 0; i < S; i++) {
			int st = order[i], pick = -1;
			double pick_end = INFINITY;

			if (dev[st] >= 0)
				continue;
			for (int d = 0; d < D; d++) {
				double end = load[d] + M * cost[st] / t->cluster->device_speed[d];

				if (count[d] >= t->opts.max_stages_per_device ||
				    (st > 0 && dev[st - 1] == d) || (st + 1 < S && dev[st + 1] == d))
					continue;
				if (end < pick_end) {
					pick_end = end;
					pick = d;
				}
			}
			if (pick < 0)
				goto next_alpha;
			dev[st] = pick;
			count[pick]++;
			load[pick] = pick_end;
		}
		for (int st = 0; st < S; st++)
			changed |= dev[st] != t->cur.device[st];
		if (!changed)
			continue;
		for (int v = 0; v < 4; v++) {
			struct cand *c = tune_cand_add(t, &t->cur, MOVE_RESTRUCTURE, S, 5);

			if (!c)
				goto out;
			memcpy(c->st.device, dev, (size_t)S * sizeof(int));
			tune_state_drop_order(&c->st);
			if (v & 1)
				c->st.sched.lst = t->cur.sched.lst ? t->cur.sched.lst : 4;
			if ((v & 2) && !tune_partition_quick(t, &c->st)) {
				tune_state_release(&t->cands[--t->ncands].st);
				continue;
			}
			c->score = tune_state_bound(t, &c->st);
			snprintf(c->what, sizeof(c->what), "deal the stages to the gpus that idle most%s%s",
			         v & 2 ? ", rebalanced" : "", v & 1 ? ", latest-start priority" : "");
			tune_cand_keep(t);
		}
next_alpha:;
	}
	tune_rank(t, from, MAX_RANKED);
out:
	free(order);
	free(dev);
	free(count);
	free(load);
	free(cost);
}

void tune_gen_placement(struct tuner *t)
{
	const struct metrics *m = &t->cur_metrics;
	int D = t->cluster->devices, L = t->model->nlayers, from, dwin, swin;
	struct cand *c;

	/* new stage counts: D*c stages round robin, the V shape, and irregular counts, each
	 * with its balanced partition (on the pool's threads) */
	from = t->ncands;
	for (int per = 1; per <= t->opts.max_stages_per_device; per++) {
		for (int shape = 0; shape < 3; shape++) {
			int S = shape == 2 ? D * per + D / 2 : D * per;
			struct tune_state s;

			if (S > L || S > t->max_stages || (shape == 1 && per < 2) || (shape == 2 && (D < 2 || per >= t->opts.max_stages_per_device)))
				continue;
			if (tune_state_alloc(&s, S) < 0) {
				t->oom = true;
				tune_cands_drop(t, from);
				return;
			}
			s.sched = t->cur.sched;
			if (shape == 1)
				tune_place_zigzag(&s, D);
			else
				tune_place_round_robin(&s, D);
			c = tune_cand_add(t, &s, MOVE_RESTRUCTURE, S, shape);
			tune_state_release(&s);
			if (!c) {
				tune_cands_drop(t, from);
				return;
			}
			snprintf(c->what, sizeof(c->what), "%d stages placed %s, balanced", S,
			         shape == 1 ? (per == 2 ? "in a V" : "in a zigzag")
			                    : shape == 2 ? "round robin with uneven counts" : "round robin");
		}
	}
	{
		bool *ok = tune_partition_cands(t, from, false);

		if (!ok)
			return;
		tune_cands_keep(t, from, ok);
		free(ok);
	}
	/* single-stage moves and swaps, ranked by the estimator (at scale to the devices and
	 * stages within a window around the stage, so their number stays near PAIRS_MAX) */
	from = t->ncands;
	{
		long S = t->cur.nstages, most = PAIRS_CELLS / (S > 0 ? S : 1) < PAIRS_MAX ? PAIRS_CELLS / (S > 0 ? S : 1)
		                                                                      : PAIRS_MAX;

		dwin = (long)S * D <= most ? D : (int)(most / (2 * S)) + 1;
		swin = S * (S - 1) / 2 <= most ? (int)S : (int)(most / S) + 1;
	}
	for (int st = 0; st < t->cur.nstages; st++) {
		for (int d = 0; d < D; d++) {
			if (d == t->cur.device[st])
				continue;
			if (dwin < D && abs(d - t->cur.device[st]) > dwin && D - abs(d - t->cur.device[st]) > dwin)
				continue;
			if ((st > 0 && t->cur.device[st - 1] == d) || (st + 1 < t->cur.nstages && t->cur.device[st + 1] == d))
				continue; /* adjacent stages stay on different devices */
			if (tune_stages_on(&t->cur, d) >= t->opts.max_stages_per_device || tune_stages_on(&t->cur, t->cur.device[st]) < 2)
				continue;
			c = tune_cand_add(t, &t->cur, MOVE_STAGE, st, d);
			if (!c)
				return;
			c->st.device[st] = d;
			tune_state_drop_order(&c->st);
			/* the bound of the new placement, and toward the device that idles more */
			c->score = tune_state_bound(t, &c->st);
			if (m->dev && m->ndevices == D)
				c->score -= 0.5 * (m->dev[d].idle_ms - m->dev[t->cur.device[st]].idle_ms);
			snprintf(c->what, sizeof(c->what), "move stage %d from gpu %d to gpu %d", st, t->cur.device[st], d);
			tune_cand_keep(t);
		}
		for (int s2 = st + 1; s2 < t->cur.nstages; s2++) {
			if (t->cur.device[st] == t->cur.device[s2])
				continue;
			/* at scale: the first and last stages swap with any, the others nearby */
			if (s2 - st > swin && st != 0 && s2 != t->cur.nstages - 1)
				continue;
			c = tune_cand_add(t, &t->cur, MOVE_SWAP, st, s2);
			if (!c)
				return;
			c->st.device[st] = t->cur.device[s2];
			c->st.device[s2] = t->cur.device[st];
			tune_state_drop_order(&c->st);
			c->score = tune_state_bound(t, &c->st);
			/* the first and last stages decide fill and drain: prefer swaps touching them */
			if (st == 0 || s2 == t->cur.nstages - 1)
				c->score *= 0.999;
			snprintf(c->what, sizeof(c->what), "swap stages %d and %d (gpus %d and %d)", st, s2,
			         t->cur.device[st], t->cur.device[s2]);
			tune_cand_keep(t);
		}
	}
	tune_rank(t, from, MAX_RANKED);
	gen_rebalanced(t);
	if (!t->round_improved)
		gen_dealt(t);
}
