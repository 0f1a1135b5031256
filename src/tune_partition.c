/*
 * tune_partition — contiguous partitions for the tuner (see tune_partition.h).
 *
 * The one idea: with a capacity per stage, "can every stage stay within r times its
 * capacity?" is answered exactly in O(S * L) by sweeping the set of layer prefixes the
 * first s stages can cover (the stages that may end a prefix form an interval, because
 * costs are non-negative), so the optimum r is found by bisection and the partition by a
 * dynamic program over the same intervals. A device holding several stages shares its
 * weight among them; splitting it as the stages' actual costs do can only lower the
 * optimum, so the device-level search re-splits until it stops improving.
 *
 * A device's load counts the time it must wait before it can start its work: the fill
 * (the first microbatch's forward up to its first stage) and, with input-gradient times
 * (tune_part_in.icost), its wait for the first backward less the forwards that can reach
 * it by then (tune_partition_wait). The wait is at least the fill, so the loads the
 * branch and bound keeps (fill only) stay lower bounds and it prunes as before; a leaf's
 * objective is then evaluated whole.
 */
#include "config.h"
#include "tune_partition.h"
#include "clock.h"

#include <stdio.h>

#include "tune_impl.h"
#include "tune_partition_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REL_TOL 1e-12      /* a ratio within this of the bound counts as within it */
#define BISECT_STEPS 60
#define SPLIT_ROUNDS 24
#define DP_WORK_MAX 2000000.0 /* the squares program runs below this many steps (about 10 ms) */
#define KICKS_MAX 500
#define KICK_WORK 3e5          /* kicks x S^3 (one descent step's work) */

static void prefix_release(struct prefix *p)
{
	free(p->c);
	free(p->b);
	free(p->f);
	free(p->fr);
	free(p->ir);
	free(p->acc);
	free(p->fav);
	free(p->wait);
	free(p->last);
}

static int prefix_init(struct prefix *p, const struct tune_part_in *in)
{
	size_t n = (size_t)(in->nlayers + 1) * sizeof(double), nd = (size_t)(in->ndevices > 0 ? in->ndevices : 1);
	bool w = in->fcost && in->icost;

	p->L = in->nlayers;
	p->c = malloc(n);
	p->b = malloc(n);
	p->f = malloc(n);
	p->fr = w ? malloc(n) : NULL;
	p->ir = w ? malloc(n) : NULL;
	p->acc = w ? malloc(nd * sizeof(double)) : NULL;
	p->fav = w ? malloc(nd * sizeof(double)) : NULL;
	p->wait = w ? malloc(nd * sizeof(double)) : NULL;
	p->last = w ? malloc(nd * sizeof(int)) : NULL;
	if (!p->c || !p->b || !p->f || (w && (!p->fr || !p->ir || !p->acc || !p->fav || !p->wait || !p->last))) {
		prefix_release(p);
		return -1;
	}
	p->c[0] = p->b[0] = p->f[0] = 0;
	if (w)
		p->fr[0] = p->ir[0] = 0;
	for (int l = 0; l < p->L; l++) {
		p->c[l + 1] = p->c[l] + in->cost[l];
		p->b[l + 1] = p->b[l] + (in->bytes ? in->bytes[l] : 0);
		p->f[l + 1] = p->f[l] + (in->fcost ? in->fcost[l] * in->fill : 0);
		if (w) {
			p->fr[l + 1] = p->fr[l] + in->fcost[l];
			p->ir[l + 1] = p->ir[l] + in->icost[l];
		}
	}
	return 0;
}

/* tune_partition_wait over the prefix sums, into p->wait. The first microbatch's forward
 * reaches the end at Ftot and its gradient comes back to device d's last stage after the
 * input gradients of the stages behind it: until then d can only run forwards. The k-th
 * microbatch reaches stage s no earlier than fill(s) + (k-1) r(s), r(s) the most forward
 * time per microbatch any device spends on stages before s (s's own device: up to s),
 * so the forwards d can finish by then are counted stage by stage; what they leave of the
 * wait is idle. Never below the fill. O(S + D). */
static void wait_eval(const struct tune_part_in *in, const struct prefix *p, int S, const int *device,
                      const int *first)
{
	int L = p->L, D = in->ndevices;
	double ftot = p->fr[L], most = 0, mbs = in->fill > 0 ? floor(1 / in->fill + 0.5) : 1;

	for (int d = 0; d < D; d++) {
		p->acc[d] = p->fav[d] = 0;
		p->last[d] = -1;
		p->wait[d] = -1;  /* no stage yet */
	}
	for (int s = 0; s < S; s++)
		p->last[device[s]] = s;
	for (int s = 0; s < S; s++) {
		int d = device[s];
		double fs = p->fr[first[s + 1]] - p->fr[first[s]], at = p->fr[first[s]];
		double back = ftot + p->ir[L] - p->ir[first[p->last[d] + 1]];
		double own = p->acc[d] + fs, r = most > own ? most : own, room = back - at - fs;

		if (p->wait[d] < 0)
			p->wait[d] = at;  /* the fill: its first stage's start */
		if (room >= 0) {
			/* the microbatches through by then: 1 + floor(room / r), at most all */
			double k = room >= r * (mbs - 1) ? mbs : 1 + (double)(long)(room / r * (1 + 1e-12));

			p->fav[d] += fs * k;
		}
		p->acc[d] += fs;
		if (p->acc[d] > most)
			most = p->acc[d];
	}
	for (int d = 0; d < D; d++)
		if (p->last[d] >= 0) {
			double back = ftot + p->ir[L] - p->ir[first[p->last[d] + 1]];

			if (back - p->fav[d] > p->wait[d])
				p->wait[d] = back - p->fav[d];
		}
}

int tune_partition_wait(const struct tune_part_in *in, int S, const int *device, const int *first, double *wait)
{
	struct prefix p;

	if (!in->fcost || !in->icost) {
		for (int d = 0; d < in->ndevices; d++)
			wait[d] = 0;
		return 0;
	}
	if (prefix_init(&p, in) < 0)
		return -1;
	wait_eval(in, &p, S, device, first);
	for (int d = 0; d < in->ndevices; d++)
		wait[d] = p.wait[d] < 0 ? 0 : p.wait[d];
	prefix_release(&p);
	return 0;
}

static bool fits(const struct prefix *p, int i, int e, double r, double cap, double mem)
{
	if (p->c[e] - p->c[i] > r * cap * (1 + REL_TOL) + 1e-300)
		return false;
	return !(mem > 0 && p->b[e] - p->b[i] > mem);
}

/* reach[s * (L + 1) + l]: the first s stages can cover layers 0 .. l-1 within r. Fills
 * the table and says whether S stages cover all L layers. diff is L + 2 ints of scratch. */
static bool sweep(const struct prefix *p, int S, const double *cap, const double *mem, double r, char *reach,
                  int *diff)
{
	int L = p->L;

	memset(reach, 0, (size_t)(L + 1));
	reach[0] = 1;
	for (int s = 0; s < S; s++) {
		const char *from = reach + (long)s * (L + 1);
		char *to = reach + (long)(s + 1) * (L + 1);
		int last = L - (S - s - 1);    /* every later stage keeps a layer */
		int e = 0, run = 0;
		bool any = false;

		memset(diff, 0, (size_t)(L + 2) * sizeof(int));
		for (int i = s; i < last; i++) {
			if (!from[i])
				continue;
			/* the furthest end from i: monotone in i, so e only moves forward */
			if (e < i)
				e = i;
			while (e < last && fits(p, i, e + 1, r, cap[s], mem ? mem[s] : 0))
				e++;
			if (e > i) {
				diff[i + 1]++;
				diff[e + 1]--;
				any = true;
			}
		}
		for (int l = 0; l <= L; l++) {
			run += diff[l];
			to[l] = run > 0;
		}
		if (!any)
			return false;
	}
	return reach[(long)S * (L + 1) + L] != 0;
}

/* Among the partitions within r, the one with the smallest sum of squared ratios, by a
 * program over (stage, end) restricted to the reachable prefixes. */
static void squares(const struct prefix *p, int S, const double *cap, const double *mem, double r,
                    const char *reach, double *best, int *from, int *first)
{
	int L = p->L;

	for (long k = 0; k < (long)(S + 1) * (L + 1); k++)
		best[k] = INFINITY;
	best[0] = 0;
	for (int s = 0; s < S; s++)
		for (int e = s + 1; e <= L; e++) {
			long at = (long)(s + 1) * (L + 1) + e;

			if (!reach[at])
				continue;
			for (int i = e - 1; i >= s; i--) {
				double q, v;

				if (!fits(p, i, e, r, cap[s], mem ? mem[s] : 0))
					break;  /* a longer stage costs at least as much */
				if (!isfinite(best[(long)s * (L + 1) + i]))
					continue;
				q = (p->c[e] - p->c[i]) / cap[s];
				v = best[(long)s * (L + 1) + i] + q * q;
				if (v < best[at]) {
					best[at] = v;
					from[at] = i;
				}
			}
		}
	first[S] = L;
	for (int s = S; s > 0; s--)
		first[s - 1] = from[(long)s * (L + 1) + first[s]];
}

/* Any partition within r, from the reach table: each stage, walking back, starts at the
 * earliest prefix it can (the earlier stages then have the most room). */
static void any_within(const struct prefix *p, int S, const double *cap, const double *mem, double r,
                       const char *reach, int *first)
{
	int L = p->L;

	first[S] = L;
	for (int s = S - 1; s >= 0; s--) {
		int e = first[s + 1], pick = e - 1;

		for (int i = e - 1; i >= s; i--) {
			if (!fits(p, i, e, r, cap[s], mem ? mem[s] : 0))
				break;
			if (reach[(long)s * (L + 1) + i])
				pick = i;
		}
		first[s] = pick;
	}
}

double tune_partition_minmax(const struct tune_part_in *in, int S, const double *cap, const double *mem,
                             int *first)
{
	struct prefix p;
	char *reach;
	int *diff, L = in->nlayers;
	double lo = 0, hi = 0, mincap = INFINITY, capsum = 0;

	if (S < 1 || S > L)
		return INFINITY;
	for (int s = 0; s < S; s++) {
		if (!(cap[s] > 0))
			return INFINITY;
		if (cap[s] < mincap)
			mincap = cap[s];
		capsum += cap[s];
	}
	if (prefix_init(&p, in) < 0)
		return NAN;
	reach = malloc((size_t)(S + 1) * (size_t)(L + 1));
	diff = malloc((size_t)(L + 2) * sizeof(int));
	if (!reach || !diff) {
		free(reach);
		free(diff);
		prefix_release(&p);
		return NAN;
	}
	/* every stage within total / smallest capacity always works unless memory forbids */
	hi = p.c[L] / mincap * (1 + 1e-9) + 1e-300;
	lo = fmax(p.c[L] / capsum, 0) * (1 - 1e-9);
	if (!sweep(&p, S, cap, mem, hi, reach, diff))
		goto fail;
	/* out of time, the bound found so far stands (every step's hi is feasible) once it is
	 * within a few parts in a million of the optimum (24 steps halve the range 2^24 times) */
	for (int it = 0; it < BISECT_STEPS && hi - lo > hi * 1e-13 && !(it >= 24 && tune_part_late(in)); it++) {
		double mid = (lo + hi) / 2;

		if (sweep(&p, S, cap, mem, mid, reach, diff))
			hi = mid;
		else
			lo = mid;
	}
	sweep(&p, S, cap, mem, hi, reach, diff);
	if ((double)S * L * L <= DP_WORK_MAX) {
		double *best = malloc((size_t)(S + 1) * (size_t)(L + 1) * sizeof(double));
		int *from = malloc((size_t)(S + 1) * (size_t)(L + 1) * sizeof(int));

		if (!best || !from) {
			free(best);
			free(from);
			free(reach);
			free(diff);
			prefix_release(&p);
			return NAN;
		}
		squares(&p, S, cap, mem, hi, reach, best, from, first);
		free(best);
		free(from);
	} else {
		any_within(&p, S, cap, mem, hi, reach, first);
	}
	{
		double worst = 0;

		for (int s = 0; s < S; s++) {
			double q = (p.c[first[s + 1]] - p.c[first[s]]) / cap[s];

			if (q > worst)
				worst = q;
		}
		free(reach);
		free(diff);
		prefix_release(&p);
		return worst;
	}
fail:
	free(reach);
	free(diff);
	prefix_release(&p);
	return INFINITY;
}

/* Device loads over weights: the largest ratio, the sum of squares, and whether every
 * device's static bytes fit. loads is ndevices doubles of scratch (bytes another). */
void tune_part_device_eval(const struct tune_part_in *in, const struct prefix *p, int S, const int *device,
                           const int *first, double *load, double *bytes, double *worst, double *sq, bool *fit)
{
	*worst = 0;
	*sq = 0;
	*fit = true;
	for (int d = 0; d < in->ndevices; d++) {
		load[d] = 0;
		bytes[d] = -1;  /* no stage yet */
	}
	for (int s = 0; s < S; s++) {
		int d = device[s];

		if (bytes[d] < 0) {
			bytes[d] = 0;
			load[d] = p->wait ? 0 : p->f[first[s]];  /* its wait for the pipeline to fill */
		}
		load[d] += p->c[first[s + 1]] - p->c[first[s]];
		bytes[d] += p->b[first[s + 1]] - p->b[first[s]];
	}
	if (p->wait) {
		/* the whole wait (the fill is its floor) */
		wait_eval(in, p, S, device, first);
		for (int d = 0; d < in->ndevices; d++)
			if (bytes[d] >= 0)
				load[d] += p->wait[d] * in->fill;
	}
	for (int d = 0; d < in->ndevices; d++) {
		double q = load[d] / in->weight[d];

		if (q > *worst)
			*worst = q;
		*sq += q * q;
		if (in->mem && in->mem[d] > 0 && bytes[d] > in->mem[d])
			*fit = false;
	}
}

double tune_partition_objective(const struct tune_part_in *in, int S, const int *device, const int *first)
{
	struct prefix p;
	double *load = malloc((size_t)in->ndevices * sizeof(double));
	double *bytes = malloc((size_t)in->ndevices * sizeof(double)), worst = NAN, sq;
	bool fit;

	if (load && bytes && prefix_init(&p, in) == 0) {
		tune_part_device_eval(in, &p, S, device, first, load, bytes, &worst, &sq, &fit);
		prefix_release(&p);
	}
	free(load);
	free(bytes);
	return worst;
}

static bool lex_better(double w, double q, double bw, double bq)
{
	return w < bw * (1 - 1e-12) || (w <= bw * (1 + 1e-12) && q < bq * (1 - 1e-12));
}

bool tune_part_late(const struct tune_part_in *in)
{
	return in->deadline > 0 && clock_now_s() > in->deadline;
}

/* Descent over chain moves: stage a takes one layer from stage b (on another device) and
 * the stages between slide by one, so only two devices change load much. */
static void descend(const struct tune_part_in *in, const struct prefix *p, int S, const int *device, int *first,
                    double *load, double *bytes, double *w0, double *q0)
{
	long pairs = (long)S * S, since = 0, at = 0, moves = 0;
	bool fit;

	/* first improvement, scanning the pairs cyclically: stops after a whole pass in vain */
	for (long n = 0; since < pairs && moves < 4L * in->nlayers * S + 16; n++) {
		int a = (int)(at / S), b = (int)(at % S);
		int lo = a < b ? a + 1 : b + 1, hi = a < b ? b : a, dir = a < b ? 1 : -1;
		double w, q;

		at = (at + 1) % pairs;
		since++;
		if ((n & 255) == 255 && tune_part_late(in))
			break;
		if (a == b || device[a] == device[b] || first[b + 1] - first[b] < 2)
			continue;
		for (int k = lo; k <= hi; k++)
			first[k] += dir;
		tune_part_device_eval(in, p, S, device, first, load, bytes, &w, &q, &fit);
		if (fit && lex_better(w, q, *w0, *q0)) {
			*w0 = w;
			*q0 = q;
			since = 0;
			moves++;
			continue;  /* keep it */
		}
		for (int k = lo; k <= hi; k++)
			first[k] -= dir;
	}
}

static unsigned long long xorshift(unsigned long long *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

double tune_partition_refine(const struct tune_part_in *in, int S, const int *device, int *first)
{
	struct prefix p;
	double *load = NULL, *bytes = NULL, w0, q0;
	int *trial = NULL, kicks;
	unsigned long long rng = 0x2545f4914f6cdd1dULL ^ (unsigned long long)S * 0x9e3779b97f4a7c15ULL;
	bool fit;

	if (prefix_init(&p, in) < 0)
		return NAN;
	load = malloc((size_t)in->ndevices * sizeof(double));
	bytes = malloc((size_t)in->ndevices * sizeof(double));
	trial = malloc((size_t)(S + 1) * sizeof(int));
	if (!load || !bytes || !trial) {
		free(load);
		free(bytes);
		free(trial);
		prefix_release(&p);
		return NAN;
	}
	tune_part_device_eval(in, &p, S, device, first, load, bytes, &w0, &q0, &fit);
	descend(in, &p, S, device, first, load, bytes, &w0, &q0);
	/* iterated: kick one or two boundaries of the best by a few layers, descend again;
	 * the kicks come from a fixed generator, so the result is a function of the input */
	kicks = S < 2 || in->kicks < 0 ? 0 : in->kicks > 0 ? in->kicks
	                                : (int)fmin(KICKS_MAX, KICK_WORK / ((double)S * S * S + 1));
	for (int k = 0; k < kicks && !tune_part_late(in); k++) {
		double w, q;
		int n = 1 + (int)(xorshift(&rng) % 2);

		memcpy(trial, first, (size_t)(S + 1) * sizeof(int));
		for (int j = 0; j < n; j++) {
			int b = 1 + (int)(xorshift(&rng) % (unsigned)(S - 1));
			int delta = 1 + (int)(xorshift(&rng) % 3);

			if (xorshift(&rng) & 1)
				delta = -delta;
			if (trial[b] + delta > trial[b - 1] && trial[b] + delta < trial[b + 1])
				trial[b] += delta;
		}
		tune_part_device_eval(in, &p, S, device, trial, load, bytes, &w, &q, &fit);
		if (!fit)
			continue;
		descend(in, &p, S, device, trial, load, bytes, &w, &q);
		if (lex_better(w, q, w0, q0)) {
			memcpy(first, trial, (size_t)(S + 1) * sizeof(int));
			w0 = w;
			q0 = q;
		}
	}
	free(load);
	free(bytes);
	free(trial);
	prefix_release(&p);
	return w0;
}

double tune_partition_devices(const struct tune_part_in *in, int S, const int *device, int *first)
{
	struct prefix p;
	double *cap = malloc((size_t)S * sizeof(double)), *mem = malloc((size_t)S * sizeof(double));
	double *share = malloc((size_t)S * sizeof(double));
	double *load = malloc((size_t)in->ndevices * sizeof(double));
	double *bytes = malloc((size_t)in->ndevices * sizeof(double));
	int *count = calloc((size_t)in->ndevices, sizeof(int)), *trial = malloc((size_t)(S + 1) * sizeof(int));
	double best_w = INFINITY, best_q = INFINITY;
	bool have = false;

	bool oom = false;

	if (!cap || !mem || !share || !load || !bytes || !count || !trial || prefix_init(&p, in) < 0) {
		free(cap); free(mem); free(share); free(load); free(bytes); free(count); free(trial);
		return NAN;
	}
	for (int s = 0; s < S; s++)
		count[device[s]]++;
	for (int s = 0; s < S; s++)
		share[s] = 1.0 / count[device[s]];
	/* memory per stage: first the whole device (checked per device after), then, if that
	 * overfills one, each stage's share of it */
	for (int round = 0; round < SPLIT_ROUNDS && !(round > 0 && tune_part_late(in)); round++) {
		double w, q, r;
		bool fit = false;

		for (int pass = 0; pass < 2 && !fit; pass++) {
			for (int s = 0; s < S; s++) {
				double m = in->mem ? in->mem[device[s]] : 0;

				cap[s] = in->weight[device[s]] * share[s];
				mem[s] = m > 0 ? (pass ? m * share[s] : m) : 0;
			}
			r = tune_partition_minmax(in, S, cap, mem, trial);
			if (isnan(r))
				oom = true;
			if (!isfinite(r))
				continue;
			tune_part_device_eval(in, &p, S, device, trial, load, bytes, &w, &q, &fit);
		}
		if (!fit || oom)
			break;
		if (!have || lex_better(w, q, best_w, best_q)) {
			memcpy(first, trial, (size_t)(S + 1) * sizeof(int));
			best_w = w;
			best_q = q;
			have = true;
		} else {
			break;  /* the split the costs suggest no longer helps */
		}
		/* split each device's weight as its stages' costs do (a floor keeps a cheap stage
		 * able to take a layer) */
		for (int s = 0; s < S; s++) {
			int d = device[s];
			double c = p.c[trial[s + 1]] - p.c[trial[s]];

			share[s] = load[d] > 0 ? c / load[d] : 1.0 / count[d];
			if (share[s] < 0.02 / count[d])
				share[s] = 0.02 / count[d];
		}
	}
	if (have && !oom) {
		double w = tune_partition_refine(in, S, device, first);

		best_w = isnan(w) ? w : tune_part_bb(in, &p, S, device, first, w * (1 + 1e-12),
		                                         in->nodes > 0 ? in->nodes : BB_NODES);
		if (best_w < w * (1 - 1e-12))
			best_w = tune_partition_refine(in, S, device, first);  /* the sum of squares */
		else if (!isnan(best_w))
			best_w = w;
		oom = isnan(best_w);
	}
	free(cap); free(mem); free(share); free(load); free(bytes); free(count); free(trial);
	prefix_release(&p);
	return oom ? NAN : have ? best_w : INFINITY;
}

/* ---- the tuner's partition phase ------------------------------------------------------ */

void tune_gen_partition(struct tuner *t)
{
	const struct metrics *m = &t->cur_metrics;
	const int S = t->cur.nstages, D = t->cluster->devices;
	struct cand *c;
	int from;

	/* the balance that counts each device's wait for its first backward, the exact balance
	 * of device loads, then the same with each device's fill and drain idle time (all, or
	 * half of it) taken off what it can do (bubble-aware): balanced at once on the pool */
	bool aware_ok = m->dev && m->ndevices == D && D <= OCTO_TUNE_MAX_AWARE;
	/* each device's idle time, on the heap: 4096 of them are 32 KB, too much for a stack */
	double *idle = aware_ok ? malloc(2 * (size_t)D * sizeof(*idle)) : NULL;
	struct part_req req[4];
	bool *ok;
	int n = 0;

	if (aware_ok && !idle) {
		t->oom = true;
		return;
	}
	from = t->ncands;
	for (int k = 0; k < (idle ? 4 : 2); k++) {
		if (!(c = tune_cand_add(t, &t->cur, MOVE_PARTITION, 0, k == 0 ? 3 : k - 1))) {
			free(idle);
			tune_cands_drop(t, from);
			return;
		}
		if (k == 0)
			snprintf(c->what, sizeof(c->what), "rebalance the %d stages counting each gpu's wait for its first "
			         "backward", S);
		else
			snprintf(c->what, sizeof(c->what), k > 1 ? "rebalance the %d stages, less on idler gpus"
			                                          : "rebalance the %d stages (min-max device time)", S);
		for (int d = 0; k > 1 && d < D; d++)
			idle[(k - 2) * D + d] = (m->dev[d].warmup_idle_ms + m->dev[d].cooldown_idle_ms) * (k == 2 ? 1 : 0.5);
		req[n++] = (struct part_req){ k > 1 ? idle + (k - 2) * D : NULL, m->makespan_ms, false, k == 0 };
	}
	ok = tune_partition_reqs(t, from, req);
	free(idle);
	if (!ok)
		return;
	tune_cands_keep(t, from, ok);
	free(ok);
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
			c = tune_cand_add(t, &t->cur, MOVE_SHIFT, b, dir);
			if (!c)
				return;
			c->st.first[b] += dir < 0 ? -1 : 1;
			/* guidance: the giver's device should be busier than the taker's */
			c->score = tune_estimate(t, &c->st);
			if (m->dev && ds < m->ndevices && dd < m->ndevices)
				c->score -= (m->dev[ds].busy_ms - m->dev[dd].busy_ms) * 0.5;
			snprintf(c->what, sizeof(c->what), "move layer %d from stage %d (gpu %d) to stage %d (gpu %d)",
			         dir < 0 ? t->cur.first[b] - 1 : t->cur.first[b], src, ds, dst, dd);
			tune_cand_keep(t);
		}
	}
	/* shifts are cheap to simulate: try them all, most promising first */
	tune_rank(t, from, SHIFT_CANDS);
	/* chains: a stage further away takes a layer and the stages between slide by one, so
	 * a layer moves between any two devices (or between two stages of one device: a
	 * larger first stage fills the wait for the pipeline's far end) */
	from = t->ncands;
	for (int a = 0; a < S && m->dev && m->ndevices == D; a++)
		for (int b = 0; b < S; b++) {
			int lo = a < b ? a + 1 : b + 1, hi = a < b ? b : a, dir = a < b ? 1 : -1;

			if (abs(a - b) < 2 || t->cur.first[b + 1] - t->cur.first[b] < 2)
				continue;
			c = tune_cand_add(t, &t->cur, MOVE_PARTITION, b, a);
			if (!c)
				return;
			for (int k = lo; k <= hi; k++)
				c->st.first[k] += dir;
			c->score = -(m->dev[t->cur.device[a]].idle_ms - m->dev[t->cur.device[b]].idle_ms);
			snprintf(c->what, sizeof(c->what), "a layer from stage %d (gpu %d) to stage %d (gpu %d) by a chain", b,
			         t->cur.device[b], a, t->cur.device[a]);
			tune_cand_keep(t);
		}
	tune_rank(t, from, CHAIN_CANDS);
}

