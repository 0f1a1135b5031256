/*
 * lowerbound_pack — the exact packings of the tight lower bound (pieces (3) and (5),
 * argued in lowerbound.c): the layers' costs rounded down into a few classes, then every
 * count vector of a device's classes searched for the least makespan. Rounding down keeps
 * the result a lower bound of the true packing; the search is exact for the rounded
 * instance and bounded in states (PCM_STATES), so it costs a few milliseconds the first
 * time and nothing after (remembered per thread).
 */
#include "config.h"
#include "lowerbound_impl.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- bound (3) exactly for the load: the best packing of the rounded layer costs ---- */

#define PCM_CLASSES 6   /* cost classes the layers are grouped into, at most */
#define PCM_STATES 1024 /* count vectors (prod of count + 1) the exact packing visits, at most */
#define PCM_CACHE 4     /* inputs and results remembered per thread */
#define PCM_FILL_STATES 1024 /* count vectors of bound (5)'s packing, at most */
#define PCM_FILL_WORK 32768  /* and bins x count vectors, at most */

/* A rounded instance: classes of cnt[i] layers (class 0 the heaviest) on D identical
 * machines; a machine holding q layers of class i holds at least light[off[i] + q], the sum
 * of the class's q lightest costs, and a machine holding anything also pays oh (one
 * stage's K overheads). */
struct pcm {
	int k, D;
	double oh, light[TIGHT_TOP + PCM_CLASSES];
	int cnt[PCM_CLASSES], off[PCM_CLASSES];
};

/* The packings are the same pure functions of the layer costs every time the tuner
 * simulates a plan of one model: each remembers its last PCM_CACHE inputs, flattened into
 * one key of numbers (the counts first, so keys of different shapes never match, then the
 * scalars and arrays), compared value by value, and their results. */
#define KEYED_MAX (5 + 2 * TIGHT_TOP) /* numbers in a key, at most: bound (5)'s */

struct keyed_cache {
	struct {
		int n;
		double key[KEYED_MAX], val;
	} slot[PCM_CACHE];
	int nslots, next; /* slots filled; the one to fill next (the oldest once all are) */
};

/* The result remembered for key[0..n), or NULL. */
static const double *keyed_find(const struct keyed_cache *kc, const double *key, int n)
{
	for (int i = 0; i < kc->nslots; i++) {
		int j = 0;

		if (kc->slot[i].n != n)
			continue;
		while (j < n && kc->slot[i].key[j] == key[j])
			j++;
		if (j == n)
			return &kc->slot[i].val;
	}
	return NULL;
}

/* Remembers val for key[0..n) (n <= KEYED_MAX) in place of the oldest; returns val. */
static double keyed_put(struct keyed_cache *kc, const double *key, int n, double val)
{
	int at = kc->next;

	kc->next = (kc->next + 1) % PCM_CACHE;
	if (kc->nslots < PCM_CACHE)
		kc->nslots++;
	kc->slot[at].n = n;
	memcpy(kc->slot[at].key, key, (size_t)n * sizeof(*key));
	kc->slot[at].val = val;
	return val;
}

static _Thread_local struct keyed_cache pcm_cache, fill_cache;

/* The load of a machine holding dig[i] layers of class i (always summed in this order, so
 * a configuration's load compares exactly against the candidate makespans). */
static double pcm_load(const struct pcm *p, const int *dig)
{
	double x = 0;
	bool any = false;

	for (int i = 0; i < p->k; i++) {
		x += p->light[p->off[i] + dig[i]];
		any |= dig[i] > 0;
	}
	return any ? x + p->oh : 0;
}

/* Steps the mixed-radix count vector dig (class 0 the fastest digit) to the next state. */
static void pcm_step(const struct pcm *p, int *dig)
{
	for (int i = 0; i < p->k; i++) {
		if (++dig[i] <= p->cnt[i])
			return;
		dig[i] = 0;
	}
}

/*
 * Whether the layers fit on D machines of capacity C. g(v), the fewest machines that hold
 * the count vector v, in index order (removing layers lowers the index): 1 when v fits one
 * machine, else 1 + min over the maximal configurations c (fit in C, no further layer fits)
 * of g(max(v - c, 0)) — the first machine of a best packing of v holds a subset of some
 * maximal c, and taking all of min(c, v) there is no worse (g only grows with v).
 */
static bool pcm_fits(const struct pcm *p, int S, const int *stride, double C)
{
	unsigned char cfg[PCM_STATES][PCM_CLASSES];
	unsigned short g[PCM_STATES];
	int ncfg = 0, dig[PCM_CLASSES] = { 0 };

	for (int v = 0; v < S; v++, pcm_step(p, dig)) {
		bool maximal = true;

		if (v == 0 || pcm_load(p, dig) > C)
			continue;
		for (int i = 0; i < p->k && maximal; i++) {
			if (dig[i] == p->cnt[i])
				continue;
			dig[i]++;
			maximal = pcm_load(p, dig) > C;
			dig[i]--;
		}
		if (maximal) {
			for (int i = 0; i < p->k; i++)
				cfg[ncfg][i] = (unsigned char)dig[i];
			ncfg++;
		}
	}
	memset(dig, 0, sizeof(dig));
	g[0] = 0;
	for (int v = 1; v < S; v++) {
		int best = 0xffff - 1;

		pcm_step(p, dig);
		if (pcm_load(p, dig) <= C) {
			g[v] = 1;
			continue;
		}
		for (int j = 0; j < ncfg; j++) {
			int u = 0;

			for (int i = 0; i < p->k; i++)
				u += (dig[i] > cfg[j][i] ? dig[i] - cfg[j][i] : 0) * stride[i];
			if (u != v && g[u] < best)
				best = g[u];
		}
		g[v] = (unsigned short)(best + 1);
	}
	return g[S - 1] < 0xffff && g[S - 1] <= p->D; /* 0xffff: a layer fits no machine */
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The optimal makespan of the rounded instance: the smallest machine load (a makespan is
 * always some machine's load) at which the layers fit, by binary search. */
static double pcm_solve(const struct pcm *p)
{
	double cand[PCM_STATES];
	int stride[PCM_CLASSES], S = 1, n = 0, dig[PCM_CLASSES] = { 0 }, lo, hi;

	for (int i = 0; i < p->k; i++) {
		stride[i] = S;
		S *= p->cnt[i] + 1;
	}
	for (int v = 0; v < S; v++, pcm_step(p, dig))
		if (v > 0)
			cand[n++] = pcm_load(p, dig);
	qsort(cand, (size_t)n, sizeof(*cand), dbl_cmp);
	/* cand[n - 1], everything on one machine, fits */
	for (lo = 0, hi = n - 1; lo < hi;) {
		int mid = lo + (hi - lo) / 2;

		if (pcm_fits(p, S, stride, cand[mid]))
			hi = mid;
		else
			lo = mid + 1;
	}
	return cand[hi];
}

/*
 * Rounds the layers of costs c[0..n) (descending) down to at most PCM_CLASSES classes and
 * max_states count vectors, into *p (D and oh left for the caller). Returns the number of
 * classes, 0 when there is nothing to place.
 */
static int pcm_round(const double *c, int n, double oh, long max_states, struct pcm *p)
{
	double v[TIGHT_TOP];
	int cnt[TIGHT_TOP], k = 0;

	for (int i = 0; i < n; i++) {
		if (c[i] <= 0 && oh <= 0)
			break; /* free layers change nothing without an overhead */
		if (k > 0 && c[i] == v[k - 1]) {
			cnt[k - 1]++;
		} else {
			v[k] = c[i] > 0 ? c[i] : 0;
			cnt[k++] = 1;
		}
	}
	memset(p, 0, sizeof(*p));
	if (k == 0)
		return 0;
	/* Merge the adjacent classes whose merge loses the least load (were the heavier one to
	 * take the lighter's cost) until few classes and few count vectors remain. */
	for (;;) {
		long states = 1;
		int at = 0;

		for (int i = 0; i < k && states <= max_states; i++)
			states *= cnt[i] + 1;
		if ((k <= PCM_CLASSES && states <= max_states) || k == 1)
			break;
		for (int i = 1; i + 1 < k; i++)
			if (cnt[i] * (v[i] - v[i + 1]) < cnt[at] * (v[at] - v[at + 1]))
				at = i;
		cnt[at + 1] += cnt[at];
		for (int i = at; i + 1 < k; i++) {
			v[i] = v[i + 1];
			cnt[i] = cnt[i + 1];
		}
		k--;
	}
	p->k = k;
	p->oh = oh;
	/* the classes are runs of c in order; class i's lightest are at the end of its run */
	for (int i = 0, first = 0, at = 0; i < k; i++) {
		p->cnt[i] = cnt[i];
		p->off[i] = at;
		p->light[at] = 0;
		for (int q = 1; q <= cnt[i]; q++)
			p->light[at + q] = p->light[at + q - 1] + fmax(c[first + cnt[i] - q], 0);
		first += cnt[i];
		at += cnt[i] + 1;
	}
	return k;
}

/*
 * Bound (3), the packing, at speed 1 and per microbatch: the least possible largest device
 * load over every assignment of the layers of costs c[0..n) (descending), grouped into at
 * most PCM_CLASSES classes (pcm_round), to D devices. 0 when there is nothing to place.
 */
static double pcm_round_solve(const double *c, int n, int D, double oh)
{
	struct pcm p;

	if (pcm_round(c, n, oh, PCM_STATES, &p) == 0)
		return 0;
	p.D = D;
	return pcm_solve(&p);
}

/*
 * Bound (5)'s test: whether the rounded layers fit nb bins, bin j holding a count vector u
 * only if M load(u) + fill[j] <= T (an empty bin always fits). A dynamic program over the
 * bins from the last: ok[v] says whether the bins after j hold the count vector v; bin j
 * takes any u that fits it and leaves v to them. dig and load: every state's digits and
 * load, S states.
 */
static bool pcm_fill_fits(const struct pcm *p, int S, unsigned char (*dig)[PCM_CLASSES], const double *load,
                          const double *fill, int nb, int M, double T)
{
	bool ok[PCM_FILL_STATES], nx[PCM_FILL_STATES];
	short fit[PCM_FILL_STATES];

	memset(ok, 0, sizeof(ok));
	ok[0] = true;
	for (int j = nb - 1; j >= 0; j--) {
		int nfit = 0;

		for (int u = 1; u < S; u++)
			if (M * load[u] + fill[j] <= T)
				fit[nfit++] = (short)u;
		if (nfit == 0)
			continue; /* bin j can only stay empty */
		memcpy(nx, ok, sizeof(nx)); /* bin j empty */
		for (int w = 0; w < S; w++) {
			if (!ok[w])
				continue;
			for (int f = 0; f < nfit; f++) {
				int u = fit[f], i = 0;

				while (i < p->k && dig[w][i] + dig[u][i] <= p->cnt[i])
					i++;
				if (i == p->k)
					nx[w + u] = true;
			}
		}
		memcpy(ok, nx, sizeof(ok));
		if (ok[S - 1])
			return true;
	}
	return ok[S - 1];
}

/*
 * Bound (5), at speed 1: the least T at which the rounded layers fit the bins of
 * pcm_fill_fits(), by bisection to a part in 1e9, never above it: the value returned was
 * shown not to fit, or is lo, a bound already known (the other parts of the tight bound).
 */
static double pcm_fill_solve(const struct pcm *p, const double *fill, int nb, int M, double lo)
{
	unsigned char dig[PCM_FILL_STATES][PCM_CLASSES];
	double load[PCM_FILL_STATES], hi;
	int S = 1, d[PCM_CLASSES] = { 0 };

	for (int i = 0; i < p->k; i++)
		S *= p->cnt[i] + 1;
	for (int v = 0; v < S; v++, pcm_step(p, d)) {
		for (int i = 0; i < PCM_CLASSES; i++)
			dig[v][i] = (unsigned char)d[i];
		load[v] = pcm_load(p, d);
	}
	hi = M * load[S - 1] + fill[0]; /* everything in bin 0 fits */
	/* most often nothing is above the other bounds: one test says so */
	if (lo >= hi || pcm_fill_fits(p, S, dig, load, fill, nb, M, lo * (1 + 1e-9)))
		return lo;
	while (hi - lo > 1e-9 * hi) {
		double mid = lo + (hi - lo) / 2;

		if (pcm_fill_fits(p, S, dig, load, fill, nb, M, mid))
			hi = mid;
		else
			lo = mid;
	}
	return lo;
}

/* pcm_round_solve(), remembered per thread for the last PCM_CACHE inputs. */
double lb_pack_bound(const double *c, int n, int D, double oh)
{
	double key[KEYED_MAX];
	const double *got;

	key[0] = n;
	key[1] = D;
	key[2] = oh;
	memcpy(key + 3, c, (size_t)n * sizeof(*c));
	if ((got = keyed_find(&pcm_cache, key, 3 + n)))
		return *got;
	return keyed_put(&pcm_cache, key, 3 + n, pcm_round_solve(c, n, D, oh));
}

/* Bound (5) at speed 1: the layers of costs c[0..n) (descending), rounded, in nb bins of
 * fills fill[0..nb) (ascending), M microbatches, oh per nonempty bin and microbatch;
 * remembered per thread for the last PCM_CACHE inputs. */
double lb_pack_fill_bound(const double *c, int n, const double *fill, int nb, int M, double oh, double lo)
{
	double key[KEYED_MAX];
	const double *got;
	struct pcm p;
	long states;

	key[0] = n;
	key[1] = nb;
	key[2] = M;
	key[3] = oh;
	key[4] = lo;
	memcpy(key + 5, c, (size_t)n * sizeof(*c));
	memcpy(key + 5 + n, fill, (size_t)nb * sizeof(*fill));
	if ((got = keyed_find(&fill_cache, key, 5 + n + nb)))
		return *got;
	/* a step costs up to nb states^2: fewer states (coarser classes, still a bound) with many
	 * bins */
	states = PCM_FILL_WORK / nb < PCM_FILL_STATES ? PCM_FILL_WORK / nb : PCM_FILL_STATES;
	return keyed_put(&fill_cache, key, 5 + n + nb,
	                 pcm_round(c, n, oh, states, &p) ? pcm_fill_solve(&p, fill, nb, M, lo) : lo);
}
