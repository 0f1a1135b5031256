/*
 * lowerbound — lower bounds on the iteration time of any plan of a model on a cluster:
 * whatever the partition, placement and order. The tuner reports its distance to them
 * and stops early when it reaches one; `compare` prints them.
 *
 * sim_lower_bound is the simple bound (total work over total speed, one microbatch's
 * chain, the heaviest layer's work). sim_lower_bound_tight adds the pipeline's fill and
 * drain per device, the stages around the first, last and heaviest layers, the layers'
 * granularity (an exact packing of cost classes onto devices) and the per-op overhead;
 * each piece's argument is written beside it. None of this simulates: the event engine
 * is sim.c.
 */
#include "config.h"
#include "lowerbound_impl.h"
#include "sim.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

double sim_lower_bound(const struct model *mdl, const struct cluster *cl, int microbatches,
                       bool split_backward)
{
	double work = 0, chain = 0, speed_sum = 0, speed_max = 0, heaviest = 0;

	for (int l = 0; l < mdl->nlayers; l++) {
		const struct layer *y = &mdl->layers[l];
		double all = y->f_ms + y->b_ms + y->w_ms;

		work += all;
		chain += y->f_ms + y->b_ms + (split_backward ? 0 : y->w_ms);
		if (all > heaviest)
			heaviest = all;
	}
	for (int d = 0; d < cl->devices; d++) {
		speed_sum += cl->device_speed[d];
		if (cl->device_speed[d] > speed_max)
			speed_max = cl->device_speed[d];
	}
	work = work * microbatches / speed_sum;
	chain /= speed_max;
	/* a layer is never split: all its microbatches run on one device */
	heaviest = heaviest * microbatches / speed_max;
	return fmax(work, fmax(chain, heaviest));
}

/*
 * The tight bound. Every claim below holds for every plan of this model, cluster and
 * microbatch count M — any partition into contiguous stages, any placement (several,
 * non-adjacent stages per device allowed), any per-device order — so the bound is a max of
 * inequalities each of which some plan-independent argument proves. Communication only
 * delays ops (durations and transfers are >= 0 and the graph is fixed), so it is ignored.
 *
 * Notation (work in ms at speed 1): c_l = f_l + b_l + w_l; B_l is the backward on the
 * gradient chain (b_l when the backward is split, b_l + w_l fused); o the per-op overhead;
 * K ops per stage and microbatch (3 split, 2 fused). An op of stage [a,b] costs the sum over
 * its layers plus o; divided by its device's speed, at most s_max. Speeds sorted
 * descending give top[k], the sum of the k fastest; s_min the slowest.
 * Pf(e) = sum_{j<e} f_j (+ o when e > 0: at least one stage's F lies before layer e) is
 * the earliest any F of a stage starting at layer e can start (at s_max); Pb(e) likewise
 * for the backward chain below e; wt = w_0 + o when split (W(0,m) follows I(0,m)), else 0.
 *
 * (1) Fill/drain per device. A device d that holds anything first runs an F (I and W of a
 *   stage wait for its F on the same device), of a stage starting at some layer a >= e_d,
 *   its entry (lowest layer it holds): it starts at >= Pf(e_d)/s_max. Its last F or I op is
 *   an I (each F is followed by its own I on d), of a stage starting at a >= e_d, and after
 *   it the backward chain below a and W(0,m) still run: >= (Pb(e_d) + wt)/s_max. So
 *     T >= Pf(e_d)/s_max + load_d/s_d                       (A)
 *     T >= (Pf(e_d) + Pb(e_d) + wt)/s_max + FB_d/s_d          (B; FB = F and I/B work only).
 *   Multiply by s_d and sum over the k devices in use: their entries are k distinct layers,
 *   so sum Pf(e_d) >= sum_{j<k} Pf(j); each holds >= 1 stage, so the work is at least
 *   M (sum c + K o k) (resp. M (sum (f + B) + 2 o k)); their speeds sum to <= top[k]:
 *     T >= min over k <= min(D, L) of [M sum c + M K o k + (s_min/s_max) sum_{j<k} Pf(j)] / top[k]
 *   and the same with (B). With k = D and o = 0 this is total work / total speed plus the
 *   average fill, so it never falls below that part of the old bound. What it cannot claim:
 *   free placement lets a device enter at layer j and go on with later layers (interleaving
 *   to single layers), so the fill provable is about one layer per device, not the (D-1)
 *   stages of a 1F1B pipeline.
 * (2) The stage around one layer. Whatever the partition, layer l sits in one stage [a,b]
 *   on one device; all its M F and M I (and W) ops run there one at a time, none before
 *   Pf(a), every I followed by the chain below a (tail Pb(a) + wt) and by its own W; the
 *   first I waits for an F to go up through the layers above b and back, U(b) = sum_{j>b}
 *   (f_j + B_j) + 2o (when b < L-1). With F, I, W the stage's per-op costs:
 *     T >= Pf(a) + M (F + I + W)
 *     T >= Pf(a) + M (F + I) + max(Pb(a) + wt, W)
 *     T >= Pf(a) + M F + U(b) + I + Pb(a) + wt
 *     T >= Pf(a) + F + U(b) + M I + Pb(a) + wt            (all / s_max)
 *   minimised over the stages a <= l <= b (every term grows with b but U's 2o, which is gone
 *   at b = L-1: so b = l or b = L-1). Taken for the first and the last layer and the
 *   heaviest ones; this is what makes a huge LM head (last layer) cost its forward
 *   prefix and its backward suffix on top of M times its own work.
 * (3) Layer granularity. A layer is never split, but a device may hold any set of layers,
 *   so the best contiguous min-max partition is NOT a bound (non-contiguous sets can
 *   balance better). What holds: the j heaviest layers sit on some j' <= j devices, each
 *   paying >= one stage of overhead, so T >= min_{j'<=j} (M sum_{top j} c + j' M K o) /
 *   top[j']; and among the k D + 1 heaviest layers one device holds k + 1 (pigeonhole), so
 *   T >= M (the k + 1 lightest of them + K o) / s_max.
 *   Exactly for the load: device d runs the M F, M I and M W (or B) ops of every stage it
 *   holds one at a time, so T s_d >= M load_d, load_d = the c of its layers + K o per stage
 *   >= their sum + K o if it holds anything. Any plan's partition and placement assign each
 *   layer to one device, so max_d load_d >= P*, the optimum of P||Cmax: the layers as jobs
 *   of size c_l on D identical machines, a machine that holds anything paying K o more.
 *   Empty machines (fewer devices used) and any set per machine (non-contiguous,
 *   interleaved) are among its assignments, so T >= M P* / s_max (s_d <= s_max: valid with
 *   mixed speeds, only weaker). Computing P* is NP-hard in general, but any c'_l <= c_l
 *   lowers every assignment's largest load, so P*(c') <= P*(c), and so does dropping
 *   layers: keep the TIGHT_TOP heaviest, group equal costs into classes, and merge adjacent
 *   classes (the merge that loses the least load first) until at most PCM_CLASSES classes
 *   and PCM_STATES count vectors remain; then solve the relaxed instance exactly, where a
 *   machine holding q layers of a class is charged the sum of the class's q lightest costs
 *   (what any q of its layers cost at least; with equal costs, exactly what they cost).
 *   A makespan is some machine's load, the load of a count vector, so binary search over
 *   those loads sorted, with an exact test of whether D machines of that capacity hold
 *   every layer (pcm_fits: a dynamic program over count vectors). With few distinct costs
 *   (at most PCM_CLASSES and PCM_STATES count vectors) nothing is merged and this is the
 *   optimal packing itself; with near-equal ones (gpt-13b's 38 transformer layers lie
 *   within 5% of each other) the loss is what a machine's layers cost above the lightest
 *   of their class. It catches what the pigeonhole misses: 38 layers of 17.2 ms, one of
 *   20.6 and a head of 31.1 on 8 devices average 88.2 ms and the pigeonhole says 86 (5
 *   layers), but the head with 4 more layers is 99.9, and with fewer it leaves 36 layers to
 *   7 devices, 6 on one (103.2). What it cannot claim: the packing ignores where the layers
 *   sit, so the fill of (1) and the chains of (2) do not add to it.
 * (4) One microbatch's chain, with its overheads: (sum f + sum B + 2o + wt) / s_max.
 * (5) The packing with each device's fill: (1) and (3) joined. Device d's first op starts
 *   at >= Pf(e_d)/s_max and it then runs M load_d of work, so T s_max >= Pf(e_d) + M load_d.
 *   Sort the devices that hold anything by entry: the j-th (from 0) enters at a layer >= j,
 *   and Pf grows with the layer, so its fill is >= Pf(j). So every plan gives an assignment
 *   of the layers to bins j = 0..min(D, L) - 1 (bins left empty cost nothing) with
 *   T s_max >= Pf(j) + M load(bin j) for every nonempty bin: T s_max is at least the least
 *   such maximum over all assignments. The classes' lightest-sum charge and dropping layers
 *   (as in (3)) only lower that least maximum; it is found by bisection on T, each step an exact
 *   dynamic program over the bins from the last, whose states are the count vectors of the
 *   rounded classes still to place (pcm_fill_fits; at most PCM_FILL_STATES of them). It
 *   catches the layers that do not split evenly when the fullest devices cannot all enter
 *   at layer 0: 10 equal layers on 4 devices put 3 on two of them, and one of those two
 *   enters after layer 0's forward. What it cannot claim: a device's lowest layer decides
 *   only when it may start, not how long it waits later for microbatches to arrive.
 * (7) The packing with each device's fill and drain: (1)'s (B) and (3) joined, as (5) joins
 *   (A). Device d's first op starts at >= Pf(e_d)/s_max; its last F or I op is an I of a
 *   stage starting at a >= e_d, after which the chain below a and W(0,m) run, >= (Pb(e_d) +
 *   wt)/s_max; in between it runs its M (F + B) work, so T s_max >= Pf(e_d) + Pb(e_d) + wt
 *   + M FB_d, FB_d the f + B of its layers and 2 o per stage. The j-th device by entry
 *   enters at >= j and Pf + Pb grow with the layer: the same exact packing as (5), of the
 *   layers' f + B into bins of fills Pf(j) + Pb(j) + wt. Its W may run anywhere, so this
 *   binds where W is small beside the fill and drain: gpt-oss-20b on 16 H200s x 32 (24
 *   MoE layers whose W is 3% of their work) puts two layers on eight devices, and the
 *   eighth of them enters at layer 7 at best: 3.91 s, where (5) says 3.85. With a fused
 *   backward (wt = 0, B = b + w) it is (5) with larger fills.
 * (6) The head's wait. Every I of microbatch m waits for the I of the stage holding the
 *   last layer L-1, which waits for m's forward through every layer: SF = sum f + o (at
 *   least one F op). So the device h holding L-1 runs only F ops before SF/s_max, and of
 *   the F ops of its stage H around L-1 (each ends after SF: its microbatch's whole forward)
 *   at most one runs before SF. Its work after SF is then at least its load minus its F
 *   work plus (M - 1)(f_H + o), and with n_h >= 1 stages and s_h <= s_max:
 *     T s_max >= SF + M (b + w)(S_h) + M (K-1) o n_h + (M - 1)(f_{L-1} + o)
 *              = Q + M (c_{L-1} + K o) + M (b + w)(O)        Q = sum_{l<L-1} f_l
 *   where O = S_h minus L-1: the device waits out the forward below the head unless it
 *   holds forward work of its own to fill the wait. With its load, and x = c(O):
 *     T s_max >= h(x) = M (c_{L-1} + K o) + max(M x, Q + M (x - fmax(x)))
 *   fmax(x): the most forward work any set of the other layers of total cost x holds, by
 *   the fractional knapsack's greedy on f/c (an upper bound for every whole set). The
 *   other layers, of cost C' - x, sit on k <= min(D-1, L-1) other devices with distinct
 *   entries, so as in (1): T >= r(x) = min_k [M (C' - x + K o k) + (s_min/s_max) sum_{j<k}
 *   Pf(j)] / top[k]. Every plan has some x with T >= max(h(x)/s_max, r(x)); h grows with
 *   x (f <= c) and r falls, so the least such max is where they cross, found by bisection
 *   (each end kept as a bound of its side). On nemotron-nano-v2-9b at 8 x 16 the head is
 *   9% of the work and its device waits 125 ms for the forward below it: 849.4 ms, where
 *   the other parts give 847.9. What it cannot claim: that the other
 *   devices, which also run only forwards before SF, can fill that window (they can here:
 *   the low layers' forwards are plenty), and where O's forwards can run before SF.
 * The tight bound is the largest of these and of the old bound. It allocates nothing:
 * the heaviest layers and fastest devices kept are the first TIGHT_TOP (a bound over fewer
 * of them is still a bound; past them a device's speed counts as the last one kept), and
 * the packings' tables (about 18 KB each) and (6)'s sorted layers (HEAD_MAX, 12 KB; a
 * longer model skips (6)) live on the stack. The packings take up to about 10 ms, so their
 * results are remembered per thread for the last PCM_CACHE inputs (one keyed_cache each:
 * the kept costs, D or the fills, M, K o, compared exactly): simulating plans of one model
 * pays comparisons of a few hundred numbers, and (6) its O(L log L) sort and bisection.
 */


/* Inserts x into the descending list v[0..*n) of at most TIGHT_TOP values. */
static void top_insert(double *v, int *n, double x)
{
	bool full = *n == TIGHT_TOP;
	int i = full ? TIGHT_TOP - 1 : (*n)++;

	/* full: x replaces the lightest kept value, or is lighter than all and not kept (the
	 * TIGHT_TOP-th insertion fills the last slot; it must not read that slot first) */
	if (full && v[i] >= x)
		return;
	for (; i > 0 && v[i - 1] < x; i--)
		v[i] = v[i - 1];
	v[i] = x;
}

/* Bound (2) for layer l, at speed 1: the best stage [a, b] around it. pf_l and pb_l: the
 * forward and backward (B) sums over layers 0..l; rest_*: the f, B and w sums above l. */
static double stage_window(const struct model *mdl, int M, int l, double o, double wt, bool split,
                           double pf_l, double pb_l, double rest_f, double rest_b, double rest_w)
{
	int L = mdl->nlayers;
	double best = INFINITY, f = 0, b = 0, w = 0;

	for (int a = l; a >= 0; a--) {
		const struct layer *y = &mdl->layers[a];
		double head, tail;

		f += y->f_ms;
		b += y->b_ms + (split ? 0 : y->w_ms);
		w += split ? y->w_ms : 0;
		head = a > 0 ? pf_l - f + o : 0;
		tail = (a > 0 ? pb_l - b + o : 0) + wt;
		for (int i = 0; i < (l == L - 1 ? 1 : 2); i++) {
			/* b = l, or b = L - 1 (no stage above: no overhead to go up and back) */
			double F = f + (i ? rest_f : 0) + o, I = b + (i ? rest_b : 0) + o;
			double W = split ? w + (i ? rest_w : 0) + o : 0;
			double up = i || l == L - 1 ? 0 : rest_f + rest_b + 2 * o;
			double v = head + M * (F + I + W);

			v = fmax(v, head + M * (F + I) + fmax(tail, W));
			v = fmax(v, head + M * F + up + I + tail);
			v = fmax(v, head + F + up + M * I + tail);
			if (v < best)
				best = v;
		}
	}
	return best;
}

/* ---- bound (6): the device that holds the last layer waits for the first backward ---- */

#define HEAD_MAX 512 /* bound (6) for models of at most this many layers (on the stack) */

struct fc {
	double r, f, c; /* a layer's f / c, f and c */
};

static int fc_cmp(const void *a, const void *b)
{
	double x = ((const struct fc *)a)->r, y = ((const struct fc *)b)->r;

	return (x < y) - (x > y); /* descending */
}

/* The most forward work any set of the layers v[0..n) (sorted by f / c, descending) of total
 * cost x can hold: the fractional knapsack's greedy, an upper bound for every whole set. */
static double fc_fmax(const struct fc *v, int n, double x)
{
	double f = 0;

	for (int i = 0; i < n && x > 0; i++) {
		if (x <= v[i].c)
			return f + v[i].f * x / v[i].c;
		f += v[i].f;
		x -= v[i].c;
	}
	return f;
}

/* Bound (6)'s two sides at x, the cost of what the head's device holds besides the last
 * layer: h its own (at speed 1), r the others' (in time). */
static void head_sides(const struct fc *v, int n, double x, int M, double cH, double Ko, double Q, double rest,
                       const double *fillsum, const double *top, int kmax, double *h, double *r)
{
	*h = M * (cH + Ko) + fmax(M * x, Q + M * (x - fc_fmax(v, n, x)));
	*r = rest - x > 0 ? INFINITY : 0;
	for (int k = 1; k <= kmax && rest - x > 0; k++)
		*r = fmin(*r, (M * (rest - x + Ko * k) + fillsum[k]) / top[k]);
}

/* What every piece of the tight bound reads: the cluster's speeds, the layers' sums and
 * heaviest layers, the per-op overhead o and the W that trails a split backward (wt). */
struct tight {
	const struct model *mdl;
	int L, D, M, K, nsp, nld, kmax, hc, hf, hb;
	bool split;
	double o, wt, smax, smin, ssum, sum_c, sum_f, sum_b;
	double sp[TIGHT_TOP], ld[TIGHT_TOP];   /* fastest speeds, heaviest layer costs, descending */
};

static void tight_gather(struct tight *t, const struct model *mdl, const struct cluster *cl, int M, bool split)
{
	int L = mdl->nlayers, D = cl->devices;

	*t = (struct tight){ .mdl = mdl, .L = L, .D = D, .M = M, .K = split ? 3 : 2, .split = split };
	t->o = cl->op_overhead_us > 0 ? cl->op_overhead_us * 1e-3 : 0;
	t->smax = t->smin = cl->device_speed[0];
	for (int d = 0; d < D; d++) {
		double x = cl->device_speed[d];

		t->ssum += x;
		t->smax = fmax(t->smax, x);
		t->smin = fmin(t->smin, x);
		top_insert(t->sp, &t->nsp, x);
	}
	for (int l = 0; l < L; l++) {
		const struct layer *y = &mdl->layers[l];
		double c = y->f_ms + y->b_ms + y->w_ms;
		const struct layer *h;

		t->sum_c += c;
		t->sum_f += y->f_ms;
		t->sum_b += y->b_ms + (split ? 0 : y->w_ms);
		top_insert(t->ld, &t->nld, c);
		h = &mdl->layers[t->hc];
		if (c > h->f_ms + h->b_ms + h->w_ms)
			t->hc = l;
		if (y->f_ms > mdl->layers[t->hf].f_ms)
			t->hf = l;
		if (y->b_ms + y->w_ms * !split > mdl->layers[t->hb].b_ms + mdl->layers[t->hb].w_ms * !split)
			t->hb = l;
	}
	t->wt = split ? mdl->layers[0].w_ms + t->o : 0;
	t->kmax = D < L ? D : L;
}

/* (1) fill and drain over the k devices in use; top: their speeds at most */
static double bound_fill_drain(const struct tight *t)
{
	const struct layer *ly = t->mdl->layers;
	double fa = 0, fb = 0, ra = INFINITY, rb = INFINITY, top = 0, pf = 0, pb = 0, o = t->o;

	for (int k = 1; k <= t->kmax; k++) {
		int j = k - 1;
		double cf = j > 0 ? pf + o : 0, cb = j > 0 ? pb + o : 0;

		top = fmin(t->ssum, top + t->sp[j < t->nsp ? j : t->nsp - 1]);
		fa += cf;
		fb += cf + cb + t->wt;
		ra = fmin(ra, (t->M * (t->sum_c + t->K * o * k) + t->smin / t->smax * fa) / top);
		rb = fmin(rb, (t->M * (t->sum_f + t->sum_b + 2 * o * k) + t->smin / t->smax * fb) / top);
		pf += ly[j].f_ms;
		pb += ly[j].b_ms + (t->split ? 0 : ly[j].w_ms);
	}
	return fmax(ra, rb);
}

/* (2) the stage around the first, the last and the heaviest layers */
static double bound_stage_windows(const struct tight *t)
{
	int cand[5] = { 0, t->L - 1, t->hc, t->hf, t->hb };
	double best = 0;

	for (int i = 0; i < 5; i++) {
		int l = cand[i];
		double pf = 0, pb = 0, rf = 0, rb = 0, rw = 0;

		for (int j = 0; j < t->L; j++) {
			const struct layer *y = &t->mdl->layers[j];
			double bj = y->b_ms + (t->split ? 0 : y->w_ms);

			if (j <= l) {
				pf += y->f_ms;
				pb += bj;
			} else {
				rf += y->f_ms;
				rb += bj;
				rw += t->split ? y->w_ms : 0;
			}
		}
		best = fmax(best, stage_window(t->mdl, t->M, l, t->o, t->wt, t->split, pf, pb, rf, rb, rw) / t->smax);
	}
	return best;
}

/* (3) granularity: the heaviest layers (as many as were kept) */
static double bound_granularity(const struct tight *t)
{
	double sum = 0, best = 0, ko = t->K * t->o;

	for (int j = 1; j <= t->kmax && j <= t->nld; j++) {
		double r = INFINITY, top = 0;

		sum += t->ld[j - 1];
		for (int jj = 1; jj <= j; jj++) {
			top = fmin(t->ssum, top + t->sp[jj - 1 < t->nsp ? jj - 1 : t->nsp - 1]);
			r = fmin(r, t->M * (sum + jj * ko) / top);
		}
		best = fmax(best, r);
	}
	for (int k = 1; (long)k * t->D + 1 <= t->L && (long)k * t->D + 1 <= t->nld; k++) {
		double x = 0;

		for (int i = k * t->D - k; i <= k * t->D; i++)
			x += t->ld[i];
		best = fmax(best, t->M * (x + ko) / t->smax);
	}
	return fmax(best, t->M * lb_pack_bound(t->ld, t->nld, t->D, ko) / t->smax);
}

/* (6) the head's device: its wait for the first backward, or the forwards that fill it
 * (applies when D > 1, L > 1, L - 1 <= HEAD_MAX and D - 1 <= TIGHT_TOP) */
/* Kept out of line: its 14 KB of arrays would otherwise sit in sim_lower_bound_tight's
 * frame beneath the packings' own (the tuner runs on 64 KB stacks in tests/hardening.sh). */
__attribute__((noinline)) static double bound_head(const struct tight *t)
{
	const struct model *mdl = t->mdl;
	struct fc v[HEAD_MAX];
	double fillsum[TIGHT_TOP + 1], top[TIGHT_TOP + 1], pf = 0, Q = 0, rest = 0, lo, hi, hl, rl, hh, rh, x;
	double smax = t->smax, ko = t->K * t->o, cH;
	const struct layer *y = &mdl->layers[t->L - 1];
	int n = 0, rk = t->D - 1 < t->L - 1 ? t->D - 1 : t->L - 1;

	for (int l = 0; l + 1 < t->L; l++) {
		const struct layer *z = &mdl->layers[l];
		double c = z->f_ms + z->b_ms + z->w_ms;

		Q += z->f_ms;
		rest += c;
		if (c > 0)
			v[n++] = (struct fc){ z->f_ms / c, z->f_ms, c };
	}
	qsort(v, (size_t)n, sizeof(*v), fc_cmp);
	fillsum[0] = top[0] = 0;
	for (int k = 1; k <= rk; k++) {
		fillsum[k] = fillsum[k - 1] + t->smin / smax * (k > 1 ? pf + t->o : 0);
		pf += mdl->layers[k - 1].f_ms;
		top[k] = fmin(t->ssum, top[k - 1] + t->sp[k - 1 < t->nsp ? k - 1 : t->nsp - 1]);
	}
	cH = y->f_ms + y->b_ms + y->w_ms;
	lo = 0;
	hi = rest;
	head_sides(v, n, lo, t->M, cH, ko, Q, rest, fillsum, top, rk, &hl, &rl);
	head_sides(v, n, hi, t->M, cH, ko, Q, rest, fillsum, top, rk, &hh, &rh);
	for (int it = 0; it < 60 && hl / smax < rl && hh / smax > rh; it++) {
		double mid = lo + (hi - lo) / 2, hm, rm;

		head_sides(v, n, mid, t->M, cH, ko, Q, rest, fillsum, top, rk, &hm, &rm);
		if (hm / smax < rm) {
			lo = mid;
			hl = hm;
			rl = rm;
		} else {
			hi = mid;
			hh = hm;
			rh = rm;
		}
	}
	/* h grows with x and r falls: between lo and hi each side is at least its value at the
	 * end where it is least; below lo (once lo moved) the others' side is >= rl, above hi
	 * (once hi moved) the head's is >= hh */
	x = fmax(hl / smax, rh);
	if (lo > 0)
		x = fmin(x, rl);
	if (hi < rest)
		x = fmin(x, hh / smax);
	return x;
}

/* (5) the packing with each device's fill, given the best bound so far (applies when
 * kmax <= TIGHT_TOP) */
static double bound_fill_packing(const struct tight *t, double best)
{
	double fill[TIGHT_TOP], pf = 0;

	for (int j = 0; j < t->kmax; j++) {
		fill[j] = j > 0 ? pf + t->o : 0;
		pf += t->mdl->layers[j].f_ms;
	}
	return lb_pack_fill_bound(t->ld, t->nld, fill, t->kmax, t->M, t->K * t->o, best * t->smax) / t->smax;
}

/* (7) the packing of the F and B work with each device's fill and drain, given the best
 * bound so far (applies when kmax <= TIGHT_TOP) */
static double bound_drain_packing(const struct tight *t, double best)
{
	double fill[TIGHT_TOP], fb[TIGHT_TOP], pf = 0, pb = 0;
	int n = 0;

	for (int j = 0; j < t->kmax; j++) {
		const struct layer *y = &t->mdl->layers[j];

		fill[j] = (j > 0 ? pf + pb + 2 * t->o : 0) + t->wt;
		pf += y->f_ms;
		pb += y->b_ms + (t->split ? 0 : y->w_ms);
	}
	for (int l = 0; l < t->L; l++) {
		const struct layer *y = &t->mdl->layers[l];

		top_insert(fb, &n, y->f_ms + y->b_ms + (t->split ? 0 : y->w_ms));
	}
	return lb_pack_fill_bound(fb, n, fill, t->kmax, t->M, 2 * t->o, best * t->smax) / t->smax;
}

double sim_lower_bound_tight(const struct model *mdl, const struct cluster *cl, int microbatches,
                             bool split_backward)
{
	struct tight t;
	double best = sim_lower_bound(mdl, cl, microbatches, split_backward);

	if (mdl->nlayers < 1 || cl->devices < 1 || microbatches < 1)
		return best;
	tight_gather(&t, mdl, cl, microbatches, split_backward);
	/* (4) one microbatch's chain */
	best = fmax(best, (t.sum_f + t.sum_b + 2 * t.o + t.wt) / t.smax);
	best = fmax(best, bound_fill_drain(&t));
	best = fmax(best, bound_stage_windows(&t));
	best = fmax(best, bound_granularity(&t));
	if (t.D > 1 && t.L > 1 && t.L - 1 <= HEAD_MAX && t.D - 1 <= TIGHT_TOP)
		best = fmax(best, bound_head(&t));
	if (t.kmax <= TIGHT_TOP) {
		best = fmax(best, bound_fill_packing(&t, best));
		best = fmax(best, bound_drain_packing(&t, best));
	}
	return best;
}
