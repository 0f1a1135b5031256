/*
 * lowerbound_mem — the memory-aware lower bound: the least iteration time of any plan that
 * fits in device memory, whatever its partition, placement, order and per-stage recompute.
 * The tight bound (lowerbound.c) ignores memory; on models whose activations do not fit a
 * full pipeline it sits far below every plan that fits. This one adds what holding
 * activations costs: memory x time, which the devices' capacity caps, against the compute
 * that recompute spends to hold less.
 *
 * The argument (docs/METHOD.md §5 sums it up). Fix any plan that fits (every device's
 * peak, as the simulator counts it, at most the usable capacity U) with makespan T.
 *
 * (a) What a stage holds, and for how long. The simulator adds stage s's activations
 *   A_s = sum over its layers of the recompute mode's bytes (none: act; selective: act
 *   minus the attention core's; full: the layer's input) when F(s,m) starts and removes
 *   them when its backward (I with a split backward, else B) ends; in between every
 *   moment's holding is at most the device's peak minus its static memory (weights,
 *   gradients, optimizer, and under ZeRO 3 the gather buffer, which only adds). Ops of one
 *   device run one after another in the list the peak is counted over (an overlapped F+B
 *   pair counts the F first), so at every t the activations held on device d are <=
 *   U - static_d. Integrated over [0, T] and summed over the devices in use:
 *     sum over (s, m) of A_s x (end of backward(s,m) - start of F(s,m)) <= T x sum_d (U - static_d).
 * (b) The interval is at least a chain. Between F(s,m)'s start and its backward's end run,
 *   one after another by data dependence, F(s,m), the forwards and backwards of every later
 *   stage for m, and the backward of s, which holds the stage's recompute (each recomputed
 *   layer's forward, or attention core, redone). Each op takes its work over its device's
 *   speed (<= s_max) plus the per-op overhead o; transfers and waits only add. With s =
 *   [a, b] and a <= i <= b, that is at least H_i + r_i / s_max for every layer i of s, with
 *     H_i = (sum_{j >= i} (f_j + B_j) + 2 o) / s_max,  r_i = layer i's redone work,
 *   B_j the backward on the gradient chain (b_j split, b_j + w_j fused). So the left side
 *   of (a) is at least M sum_i m_i (H_i + r_i / s_max), m_i layer i's bytes under its mode.
 * (c) Static memory. parallel_static_mem is linear in the bytes of parameters (dense and
 *   expert), so the devices' static memory sums to that of the whole model, less at most
 *   the tied head's bytes (stored once when it shares a device with the embedding; the
 *   bound assumes it always does). With k devices in use, sum_d (U - static_d) <= k U - S.
 * (d) The work. Recompute adds r_i to layer i's backward, for every microbatch, so bound (1)
 *   of lowerbound.c holds with the work raised: for the k devices in use,
 *     T top[k] >= M (sum c + sum r_i + K o k) + (s_min / s_max) sum_{j<k} Pf(j).
 * (e) One layer's own device. (a) holds per device: the device holding layer i holds its
 *   activations for the times of (b) within U - static_d, and static_d is at least layer
 *   i's own static memory (less its tied bytes) plus, under ZeRO 3, its whole weights (the
 *   gather buffer is the stage's two largest layers): M m_i (H_i + r_i / s_max) <= T (U -
 *   own_i). This is what the sum of (a) loses when one layer's weights leave its device
 *   little room: that layer must recompute whatever the others hold. (A stage's static
 *   memory is at least one layer's share only while each share is >= 0: where some
 *   layer's tied and expert bytes together exceed its weights and experts shard below
 *   ZeRO 3, shares_nonneg fails and no layer's own room is claimed.)
 * (f) Every plan thus gives, for its k and its per-layer modes (its per-stage modes, block
 *   recompute's first-n layers included, are among the per-layer ones), (a)+(b)+(c), (d)
 *   and (e). Relax the modes to fractions of each layer's options, on the lower convex hull
 *   of its (redone work, bytes x time) points (none, selective, full). For a given T, (e)
 *   forces each layer at least some recompute; then the least memory x time that the rest
 *   of the work (d) allows buys is a fractional knapsack, solved by the greedy over the
 *   hulls' segments, best saving per ms first (the forced parts taken first). A larger T
 *   forces less, allows more work and more memory x time, so whether T is possible is
 *   monotone and the least T that some k allows is found by bisection. The fractional
 *   optimum is at most any whole choice's, so the T found is at most every fitting plan's
 *   makespan. The memory bound is the largest of it, (g), (h) and the tight bound.
 * (g) The backlog of W behind a stage's last I (split backward only). Take layer l in
 *   stage [a, l] on device d (a stage reaching higher only adds work, bytes and weights),
 *   and t the end of the stage's last I. By t the device has run the stage's M F and M I
 *   and every W that has ended; the q that have not are still to run after t, one after
 *   another on d, and each still holds the W's share of its activations, act_w (what I
 *   leaves behind under every recompute mode: the simulator frees act - act_w at I's end
 *   and the rest at W's). So at t, q act_w + static(stage) <= U, and q >= 1 (the last I's
 *   own W); with q <= Q = floor((U - static) / act_w), at most M. After t, the gradient
 *   chain below a still runs (tail = Pb(a) + wt), and so do the q W:
 *     T >= Pf(a) + M (F + I) + (M - q) W + max(tail, q W)
 *   which falls as q grows, so q = Q is the least any plan pays (minimised over a; at
 *   speed s_max). With memory to spare (Q W >= tail) this is bound (2)'s own window; where
 *   act_w is large, as a large-vocabulary head's logits at a long sequence, it is not: the
 *   head's W cannot wait for the drain, and the device runs them before its last I. On
 *   nemotronh-8b at 32K tokens (16 x 32) the head keeps 8.9 GB a microbatch for W and has
 *   room for 14: 9.72 s, where the tight bound says 8.94. Taken for every layer of models
 *   of up to BACKLOG_ALL layers, for the last of longer ones. A stage that cannot hold even
 *   one is charged q = 1. Where a layer's static share may be below 0 (shares_nonneg),
 *   (g) claims nothing, as (e).
 * (h) The warm-up that memory caps (lowerbound_warm.c): before an iteration's first
 *   backward only forwards run, and each holds its activations past that moment, so the
 *   devices' free memory (D U - S) caps the forward work that can fill the first
 *   forward's span; the rest of it is idle. A price per byte (weak duality) bounds the
 *   warm work any recompute choice allows.
 * What it cannot claim: a recomputing backward's extra peak (the redone activations while
 * it runs), the W that follows a split I (what it keeps after I), transfers and how the
 * activations of one device must share its capacity with the others' lighter loads: all
 * only make a plan slower. Where no plan can fit at all (static memory over the capacity of
 * every device), it claims nothing more than the tight bound.
 *
 * k runs over 1..min(D, L, MEM_KMAX) exactly; devices beyond MEM_KMAX are one relaxed case
 * (their speeds the whole cluster's, their fill and overhead MEM_KMAX's, capacity D U - S).
 */
#include "config.h"
#include "sim.h"
#include "lowerbound_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MEM_KMAX 128
#define BACKLOG_ALL 2048 /* (g) for every layer of models up to this long, else the last */

/* One step along layer l's hull: from x0 ms of its recompute, dx ms more buy dm less
 * bytes x ms. */
struct mseg {
	double dx, dm, x0;
	int l;
};

static int mseg_cmp(const void *a, const void *b)
{
	const struct mseg *x = a, *y = b;
	double l = x->dm * y->dx, r = y->dm * x->dx; /* x's saving per ms vs y's */

	return (l < r) - (l > r); /* best saving per ms first */
}

/* Layer l's lower convex hull from its option with the least work (x = 0: none, or a
 * free option below it), falling parts only: the points (x, mu) of the none, selective
 * and full options. Keeps the hull's points in hx, hm (at most 3, *hn of them) and appends
 * its segments to seg. */
static void layer_hull(const double x[3], const double mu[3], int l, double *hx, double *hm, int *hn,
                       struct mseg *seg, long *nseg)
{
	int ord[3] = { 0, 1, 2 }, h[3], nh = 0;

	for (int i = 0; i < 3; i++) /* by x, then mu */
		for (int j = i + 1; j < 3; j++)
			if (x[ord[j]] < x[ord[i]] || (x[ord[j]] == x[ord[i]] && mu[ord[j]] < mu[ord[i]])) {
				int t = ord[i];

				ord[i] = ord[j];
				ord[j] = t;
			}
	for (int q = 0; q < 3; q++) {
		int i = ord[q];

		if (nh > 0 && (x[i] == x[h[nh - 1]] || mu[i] >= mu[h[nh - 1]]))
			continue; /* no less memory for its work */
		while (nh >= 2) {
			int a = h[nh - 2], b = h[nh - 1];

			/* b on or above the line from a to i: not on the lower hull */
			if ((mu[b] - mu[a]) * (x[i] - x[a]) >= (mu[i] - mu[a]) * (x[b] - x[a]))
				nh--;
			else
				break;
		}
		h[nh++] = i;
	}
	for (int q = 0; q < nh; q++) {
		hx[q] = x[h[q]];
		hm[q] = mu[h[q]];
	}
	*hn = nh;
	for (int q = 1; q < nh; q++)
		seg[(*nseg)++] = (struct mseg){ hx[q] - hx[q - 1], hm[q - 1] - hm[q], hx[q - 1], l };
}

struct membound {
	int L, M, K, nk;      /* cases k = 1..nk of devices in use, the last maybe relaxed */
	long nseg;
	struct mseg *seg;     /* every layer's hull segments, best saving per ms first */
	double *hx, *hm;      /* per layer its hull's points (3 slots each) */
	int *hn;
	double *cap1;         /* per layer: the most a device holding it has for activations */
	double *xmin;         /* per layer, in fits(): the recompute its own device forces */
	double *fx, *fm;      /* in fits(): prefix sums of the segments' unforced parts */
	double base_mu;       /* every layer at its hull's first point */
	double U, S, ssum, smax, smin, o, sum_c;
	double top[MEM_KMAX + 2], fill[MEM_KMAX + 2], cap[MEM_KMAX + 2], ko[MEM_KMAX + 2];
};

/* The least recompute x of layer l (on its hull) with M mu(x) <= room; -1 when none. */
static double layer_xmin(const struct membound *b, int l, double room)
{
	const double *x = b->hx + 3 * l, *mu = b->hm + 3 * l;

	for (int q = 0; q < b->hn[l]; q++) {
		if (b->M * mu[q] <= room) {
			if (q == 0)
				return 0;
			/* on the segment from q - 1 to q */
			return x[q - 1] + (x[q] - x[q - 1]) * (b->M * mu[q - 1] - room) / (b->M * (mu[q - 1] - mu[q]));
		}
	}
	return -1;
}

/* Whether a plan could take T: some k for which the work (d) leaves room for recompute
 * whose memory x time fits (a)-(c) over the k devices, and each layer's own memory x time
 * fits its own device (f) with the recompute that forces. */
static bool fits(struct membound *b, double T)
{
	double forced = 0, mu = b->base_mu;
	long n = 0;

	for (int l = 0; l < b->L; l++) {
		b->xmin[l] = layer_xmin(b, l, T * b->cap1[l]);
		if (b->xmin[l] < 0)
			return false;
	}
	/* the forced parts first; the rest, in the same order, is what a budget buys */
	b->fx[0] = b->fm[0] = 0;
	for (long i = 0; i < b->nseg; i++) {
		const struct mseg *g = &b->seg[i];
		double fp = fmin(g->dx, fmax(0, b->xmin[g->l] - g->x0));

		forced += fp;
		mu -= g->dm * fp / g->dx;
		if (fp < g->dx) {
			b->fx[n + 1] = b->fx[n] + (g->dx - fp);
			b->fm[n + 1] = b->fm[n] + g->dm * (g->dx - fp) / g->dx;
			n++;
		}
	}
	for (int k = 1; k <= b->nk; k++) {
		double X, m;
		long lo = 0, hi = n;

		if (b->cap[k] <= 0)
			continue;
		X = (T * b->top[k] - b->fill[k] - b->M * b->ko[k]) / b->M - b->sum_c - forced;
		if (X < 0)
			continue;
		if (X >= b->fx[n]) {
			m = mu - b->fm[n];
		} else {
			while (hi - lo > 1) { /* the last prefix whose work fits */
				long mid = lo + (hi - lo) / 2;

				if (b->fx[mid] <= X)
					lo = mid;
				else
					hi = mid;
			}
			m = mu - b->fm[lo] - (b->fm[lo + 1] - b->fm[lo]) * (X - b->fx[lo]) / (b->fx[lo + 1] - b->fx[lo]);
		}
		if (b->M * m <= T * b->cap[k])
			return true;
	}
	return false;
}

/* Static memory of params bytes (experts among them) under layout par. */
static double static_of(const struct parallel *par, double params, double experts)
{
	struct mem_static ms;

	parallel_static_mem(par, params, experts, &ms);
	return ms.weights + ms.grads + ms.optimizer;
}

/* Whether every layer's static share is >= 0 under par, so that a device's static memory is
 * at least that of any of its layers or stages. A layer whose tied and expert bytes overlap
 * (the loader refuses it; a table built in code may not) counts less than nothing where
 * experts shard (ep > 1) below ZeRO 3; with ep 1, or under ZeRO 3, every share is >= 0.
 * Where this fails a device may have more than U for activations: (e) and (g) claim nothing. */
static bool shares_nonneg(const struct model *mdl, const struct parallel *par)
{
	if (par->zero >= 3 || par->ep <= 1)
		return true;
	for (int l = 0; l < mdl->nlayers; l++) {
		const struct layer *y = &mdl->layers[l];

		if ((double)y->param_bytes - (double)y->tied_bytes < (double)y->expert_param_bytes)
			return false;
	}
	return true;
}

/* (g): the W backlog behind the last I of the stage around each layer, in ms; NaN when out
 * of host memory. */
static double backlog_bound(const struct model *mdl, const struct cluster *cl, int M, bool split)
{
	int L = mdl->nlayers;
	double o = cl->op_overhead_us > 0 ? cl->op_overhead_us * 1e-3 : 0, U = cluster_usable_bytes(cl);
	double smax = cl->device_speed[0], best = 0, wt, *pf, *pb;
	struct parallel par;

	parallel_from_replica(&cl->rep, cl->devices, &par);
	if (!split || !shares_nonneg(mdl, &par))
		return 0;
	if (!(pf = malloc(sizeof(*pf) * (size_t)(L + 1))) || !(pb = malloc(sizeof(*pb) * (size_t)(L + 1)))) {
		free(pf);
		return NAN;
	}
	for (int d = 1; d < cl->devices; d++)
		smax = fmax(smax, cl->device_speed[d]);
	pf[0] = pb[0] = 0;
	for (int l = 0; l < L; l++) {
		pf[l + 1] = pf[l] + mdl->layers[l].f_ms;
		pb[l + 1] = pb[l] + mdl->layers[l].b_ms;
	}
	wt = mdl->layers[0].w_ms + o;
	for (int l = L > BACKLOG_ALL ? L - 1 : 0; l < L; l++) {
		double F = 0, I = 0, W = 0, pl = 0, ex = 0, actw = 0, big = 0, least = INFINITY;

		for (int a = l; a >= 0; a--) {
			const struct layer *y = &mdl->layers[a];
			double head = a > 0 ? pf[a] + o : 0, tail = (a > 0 ? pb[a] + o : 0) + wt, room, q;

			F += y->f_ms;
			I += y->b_ms;
			W += y->w_ms;
			/* every value from here down is at least M (F + I + W), which only grows */
			if (M * (F + I + W) >= least)
				break;
			actw += (double)y->act_w_bytes;
			pl += (double)y->param_bytes - (double)y->tied_bytes;
			ex += (double)y->expert_param_bytes;
			if (par.zero >= 3) /* the gather buffer holds a layer's whole weights */
				big = fmax(big, (double)(y->param_bytes - y->expert_param_bytes) +
				                (double)y->expert_param_bytes / par.ep);
			/* every layer's share is >= 0 (shares_nonneg): the stage's own is a floor */
			room = U - static_of(&par, pl, ex) - big;
			/* a hair of slack: q act_w + static may meet U exactly in the simulator's sums */
			q = actw > 0 ? fmax(1, fmin(M, floor(room / actw * (1 + 1e-12)))) : M;
			least = fmin(least, head + M * (F + I + 2 * o) + (M - q) * (W + o) + fmax(tail, q * (W + o)));
		}
		best = fmax(best, least / smax);
	}
	free(pf);
	free(pb);
	return best;
}

/* Fills b: the layers' hulls (their segments sorted), each layer's own room and the per-k
 * constants; -1 when out of host memory. */
static int membound_setup(struct membound *b, const struct model *mdl, const struct cluster *cl, int M, bool split)
{
	int L = mdl->nlayers;
	double chain = 0, params = 0, experts = 0, tied = 0, pf = 0, fsum = 0, ko;
	struct parallel par;
	size_t n = (size_t)L;
	bool nonneg;

	b->seg = malloc(sizeof(*b->seg) * 2 * n);
	b->fx = malloc(sizeof(*b->fx) * (2 * n + 1));
	b->fm = malloc(sizeof(*b->fm) * (2 * n + 1));
	b->hx = malloc(sizeof(*b->hx) * 3 * n);
	b->hm = malloc(sizeof(*b->hm) * 3 * n);
	b->hn = malloc(sizeof(*b->hn) * n);
	b->cap1 = malloc(sizeof(*b->cap1) * n);
	b->xmin = malloc(sizeof(*b->xmin) * n);
	if (!b->seg || !b->fx || !b->fm || !b->hx || !b->hm || !b->hn || !b->cap1 || !b->xmin)
		return -1;
	b->L = L;
	b->M = M;
	b->K = split ? 3 : 2;
	b->o = cl->op_overhead_us > 0 ? cl->op_overhead_us * 1e-3 : 0;
	b->smax = b->smin = cl->device_speed[0];
	for (int d = 0; d < cl->devices; d++) {
		b->ssum += cl->device_speed[d];
		b->smax = fmax(b->smax, cl->device_speed[d]);
		b->smin = fmin(b->smin, cl->device_speed[d]);
	}
	parallel_from_replica(&cl->rep, cl->devices, &par);
	b->U = cluster_usable_bytes(cl);
	for (int l = L - 1; l >= 0; l--) {
		const struct layer *y = &mdl->layers[l];
		double in = (double)model_layer_in_bytes(mdl, l);
		double act = (double)y->act_bytes, core = (double)y->core_act_bytes, H, own;
		double x[3] = { 0, y->core_f_ms, y->f_ms }, mu[3];
		double pl = (double)y->param_bytes - (double)y->tied_bytes, ex = (double)y->expert_param_bytes;

		chain += y->f_ms + y->b_ms + (split ? 0 : y->w_ms);
		H = (chain + 2 * b->o) / b->smax;
		mu[0] = act * H;
		mu[1] = (act - fmin(core, act)) * (H + x[1] / b->smax);
		mu[2] = in * (H + x[2] / b->smax);
		layer_hull(x, mu, l, b->hx + 3 * l, b->hm + 3 * l, &b->hn[l], b->seg, &b->nseg);
		b->base_mu += b->hm[3 * l];
		b->sum_c += y->f_ms + y->b_ms + y->w_ms;
		params += (double)y->param_bytes;
		experts += ex;
		tied += (double)y->tied_bytes;
		/* (e) its device holds at least its own static memory and, under ZeRO 3, its
		 * whole weights gathered while it runs */
		own = static_of(&par, pl, ex);
		b->cap1[l] = b->U - own;
		if (par.zero >= 3)
			b->cap1[l] -= (double)(y->param_bytes - y->expert_param_bytes) + (double)y->expert_param_bytes / par.ep;
	}
	/* a share below 0 (shares_nonneg) may leave a device more than U: no own room claimed */
	nonneg = shares_nonneg(mdl, &par);
	for (int l = 0; l < L && !nonneg; l++)
		b->cap1[l] = INFINITY;
	qsort(b->seg, (size_t)b->nseg, sizeof(*b->seg), mseg_cmp);
	b->S = static_of(&par, params - tied, experts); /* linear: the stages' sums, every tie saved */
	/* k devices in use: the k fastest speeds at most (k s_max, the whole cluster's), the
	 * fills of the k distinct entries, k stages' overhead; k > MEM_KMAX relaxed as one */
	b->nk = cl->devices < L ? cl->devices : L;
	if (b->nk > MEM_KMAX)
		b->nk = MEM_KMAX + 1;
	ko = b->K * b->o;
	for (int k = 1; k <= b->nk; k++) {
		bool relaxed = k > MEM_KMAX;

		b->top[k] = relaxed ? b->ssum : fmin(b->ssum, k * b->smax);
		b->fill[k] = fsum;
		b->ko[k] = ko * (relaxed ? MEM_KMAX : k);
		b->cap[k] = (relaxed ? cl->devices : k) * b->U - b->S;
		/* the next device's entry: Pf(k) = sum_{j<k} f_j + o */
		pf += mdl->layers[k - 1].f_ms;
		fsum += b->smin / b->smax * (pf + b->o);
	}
	return 0;
}

/* ---- the per-thread memo: the tuner simulates thousands of plans of one model ---- */

#define MEM_CACHE 4

/* Two independent 64-bit hashes of every input the bound reads (a collision of both is
 * a chance of 2^-128 per pair of inputs: the memo is keyed on them instead of copies of
 * the whole layer table). */
struct mkey {
	uint64_t a, b;
};

static void mix(struct mkey *k, uint64_t v)
{
	k->a = (k->a ^ v) * 0x100000001b3ull;                 /* FNV-1a, per word */
	k->b += v + 0x9e3779b97f4a7c15ull;                    /* splitmix64's step */
	k->b = (k->b ^ (k->b >> 30)) * 0xbf58476d1ce4e5b9ull;
	k->b = (k->b ^ (k->b >> 27)) * 0x94d049bb133111ebull;
	k->b ^= k->b >> 31;
}

static void mixd(struct mkey *k, double x)
{
	uint64_t v;

	memcpy(&v, &x, sizeof(v));
	mix(k, v);
}

static struct mkey mem_key(const struct model *mdl, const struct cluster *cl, int M, bool split, double tight)
{
	struct mkey k = { 0xcbf29ce484222325ull, 0 };
	const struct replica *r = &cl->rep;

	mix(&k, (uint64_t)M << 1 | split);
	mixd(&k, tight);
	mix(&k, (uint64_t)cl->devices);
	mix(&k, cl->mem_bytes);
	mixd(&k, cl->mem_headroom);
	mixd(&k, cl->op_overhead_us);
	mix(&k, (uint64_t)r->tp << 48 ^ (uint64_t)r->dp << 32 ^ (uint64_t)r->ep << 16 ^ (uint64_t)r->zero << 1 ^ r->fp32_grads);
	for (int d = 0; d < cl->devices; d++)
		mixd(&k, cl->device_speed[d]);
	mix(&k, (uint64_t)mdl->nlayers);
	for (int l = 0; l < mdl->nlayers; l++) {
		const struct layer *y = &mdl->layers[l];

		mixd(&k, y->f_ms);
		mixd(&k, y->b_ms);
		mixd(&k, y->w_ms);
		mixd(&k, y->core_f_ms);
		mix(&k, y->act_bytes);
		mix(&k, y->act_w_bytes);
		mix(&k, y->core_act_bytes);
		mix(&k, y->in_bytes);
		mix(&k, y->out_bytes);
		mix(&k, y->param_bytes);
		mix(&k, y->expert_param_bytes);
		mix(&k, y->tied_bytes);
	}
	return k;
}

static _Thread_local struct {
	struct mkey key[MEM_CACHE];
	double val[MEM_CACHE];
	int n, next;
} mem_memo;

static double mem_bound(const struct model *mdl, const struct cluster *cl, int microbatches, bool split_backward,
                        double tight);

double sim_lower_bound_memory(const struct model *mdl, const struct cluster *cl, int microbatches,
                              bool split_backward)
{
	double tight = sim_lower_bound_tight(mdl, cl, microbatches, split_backward), v;
	struct mkey k;

	if (mdl->nlayers < 1 || cl->devices < 1 || microbatches < 1 || !(tight > 0) || !isfinite(tight))
		return tight;
	k = mem_key(mdl, cl, microbatches, split_backward, tight);
	for (int i = 0; i < mem_memo.n; i++)
		if (mem_memo.key[i].a == k.a && mem_memo.key[i].b == k.b)
			return mem_memo.val[i];
	v = mem_bound(mdl, cl, microbatches, split_backward, tight);
	if (isnan(v))
		return v; /* out of host memory: not remembered, the next call tries again */
	mem_memo.key[mem_memo.next] = k;
	mem_memo.val[mem_memo.next] = v;
	mem_memo.next = (mem_memo.next + 1) % MEM_CACHE;
	if (mem_memo.n < MEM_CACHE)
		mem_memo.n++;
	return v;
}

/* The bound itself (no memo): the larger of tight, (g) and (h), or the least T of (f) above
 * it; NaN when out of host memory. */
static double mem_bound(const struct model *mdl, const struct cluster *cl, int microbatches, bool split_backward,
                        double tight)
{
	double lo, hi;
	struct membound b = { 0 };

	lo = backlog_bound(mdl, cl, microbatches, split_backward);
	if (isnan(lo))
		return lo;
	tight = fmax(tight, lo);
	if (membound_setup(&b, mdl, cl, microbatches, split_backward) < 0) {
		hi = NAN;
		goto out;
	}
	lo = lb_warmup_bound(mdl, cl, microbatches, split_backward, b.S);
	if (isnan(lo)) {
		hi = NAN;
		goto out;
	}
	tight = fmax(tight, lo);
	if (fits(&b, tight)) {
		hi = tight;
		goto out;
	}
	/* a plan that fits at T fits at any larger T: double until one does */
	lo = tight;
	hi = 2 * tight;
	for (int i = 0; i < 200 && !fits(&b, hi); i++) {
		lo = hi;
		hi *= 2;
	}
	if (!fits(&b, hi)) {
		hi = tight; /* nothing fits at any T: no claim beyond the tight bound */
		goto out;
	}
	for (int i = 0; i < 100 && hi - lo > 1e-12 * hi; i++) {
		double mid = lo + (hi - lo) / 2;

		if (fits(&b, mid))
			hi = mid;
		else
			lo = mid;
	}
	hi = lo; /* no fitting plan is faster than lo; hi fits the relaxation only */
out:
	free(b.seg);
	free(b.fx);
	free(b.fm);
	free(b.hx);
	free(b.hm);
	free(b.hn);
	free(b.cap1);
	free(b.xmin);
	return hi;
}
