/*
 * lowerbound_warm — (h) of the memory-aware bound (lowerbound_mem.c): the warm-up that
 * memory caps. Before the first backward of an iteration can start, every device can run
 * only forwards, and every forward it starts holds its activations until after that
 * moment; so the devices together can fill the warm-up with no more forward work than
 * their free memory holds. The rest of the warm-up is idle, whatever the plan.
 *
 * The argument. Fix any plan that fits (every device's peak, as the simulator counts it,
 * at most the usable capacity U), with makespan T, on a cluster of D devices.
 * - Let t* be the start of the iteration's first backward op (I, or B when fused). It
 *   needs its microbatch's whole forward: t* >= t0 = (sum_l f_l + o) / s_max (an op of
 *   work x takes (x + o) / s on a device of speed s, as in the rest of the bound).
 * - Before t* only forwards run (a W needs its I; a recompute runs inside its backward).
 *   Call the forwards that start before t* warm. Each holds its stage's activations, in
 *   its recompute mode's bytes, from its start until its backward ends, after t*; so just
 *   before t* all of them are held at once: sum over warm ops of their bytes <= sum_d (U -
 *   static_d) <= R = D U - S, S the static memory of the whole model (lowerbound_mem.c
 *   (c); a device in no use holds nothing).
 * - Time: D T = busy + idle. Over [0, t*) a device is busy only with warm ops, so idle >=
 *   D t* - (their durations), and D T >= (the non-warm ops' durations) + D t*; also D T
 *   >= (every op's duration). Mixing the two by a share alpha in [0, 1]:
 *     D T >= alpha D t0 + (M C + M sum r - alpha X) / s_max + (overheads),
 *   C the model's work per microbatch, r each layer's redone work (its mode's) and X the
 *   warm forwards' work. (alpha = 1 alone would let a warm forward that recomputes pay
 *   for itself: it fills idle with work its backward redoes.)
 * - What alpha X - M sum r can be. The warm forwards of one microbatch are a prefix of its
 *   layers; layer i has n_i warm forwards (non-increasing in i, at most M), each holding
 *   m_i bytes, and its mode redoes r_i for every one of the M microbatches, so at least for
 *   its n_i warm ones. For any price lam >= 0 of a byte (weak duality),
 *     alpha X - M sum r <= lam R + sum_i n_i (alpha f_i - r_i - lam m_i)
 *                       <= lam R + M max_p P_p(lam),
 *   P_p(lam) = sum_{i<p} v_i(lam), v_i(lam) = the best over layer i's modes (none,
 *   selective, full) of alpha f_i - r - lam m: a non-increasing sequence of n_i is a sum
 *   of prefixes, at most M of them. Every lam and alpha gives a valid bound; golden-section
 *   searches (the right side is convex in lam, the bound concave in alpha) find good ones.
 * So T >= alpha t0 + (M C - Phi) / (D s_max) + M (K - 1) o / (D s_max) (one stage's
 * backward ops at least pay the overhead), Phi = min over lam of the above: the idle the
 * warm-up leaves once memory is full, spread over the devices.
 *
 * Where it binds: activations large for their forward's time, few devices for the model,
 * microbatches about twice the devices. nemotronh-56b on 16 H200s x 32: 5.05 s, where the
 * tight bound says 4.89 s; nemotronh-8b at 32K tokens on 8 x 16: 7.27 s (7.14 s). Where
 * memory holds the whole warm-up it gives less than the tight bound and changes nothing.
 */
#include "config.h"
#include "sim.h"

#include <math.h>
#include <stdlib.h>

#include "lowerbound_impl.h"

#define WARM_EVALS 600000.0 /* layer visits the searches may spend on long models */

/* Each layer's forward and its modes' redone work and bytes, in flat arrays. */
struct warm {
	int L, M;
	double R, alpha;
	double *f, *core_f, *act, *act_sel, *in;
	/* for bound_at: the first forward's span, M C / (D s_max), D s_max, the price range and
	 * the price search's steps */
	double t0, work, scale, lo, hi;
	int nl;
};

/* lam R + M max_p sum_{i<p} v_i(lam), v_i the best over layer i's modes (none, selective,
 * full) of alpha f - redone - lam bytes: an upper bound on alpha X - M sum r. */
static double warm_dual(const struct warm *w, double lam)
{
	double sum = 0, best = 0, a = w->alpha;

	for (int i = 0; i < w->L; i++) {
		double none = a * w->f[i] - lam * w->act[i];
		double sel = a * w->f[i] - w->core_f[i] - lam * w->act_sel[i];
		double full = (a - 1) * w->f[i] - lam * w->in[i];

		sum += fmax(none, fmax(sel, full));
		best = fmax(best, sum);
	}
	return lam * w->R + w->M * best;
}

/* The largest value of f(arg, x) seen by a golden-section search of [a, b] (f unimodal
 * there) in iters steps after the first two; every x tried is kept, so only the steps'
 * count decides how close it comes. */
static double golden_max(double (*f)(void *, double), void *arg, double a, double b, int iters)
{
	const double g = (sqrt(5.0) - 1) / 2;
	double x1 = b - g * (b - a), x2 = a + g * (b - a), f1 = f(arg, x1), f2 = f(arg, x2);
	double best = fmax(f1, f2);

	for (int it = 0; it < iters; it++) {
		if (f1 >= f2) {
			b = x2;
			x2 = x1;
			f2 = f1;
			x1 = b - g * (b - a);
			f1 = f(arg, x1);
			best = fmax(best, f1);
		} else {
			a = x1;
			x1 = x2;
			f1 = f2;
			x2 = a + g * (b - a);
			f2 = f(arg, x2);
			best = fmax(best, f2);
		}
	}
	return best;
}

static double neg_dual_at_log(void *arg, double x)
{
	return -warm_dual(arg, exp(x));
}

/* The least warm_dual over lam = 0 and a golden-section search of log lam over [lo, hi]
 * (convex in lam, so unimodal in log lam); every lam tried is a valid bound. */
static double warm_phi(struct warm *w, double lo, double hi, int iters)
{
	return fmin(warm_dual(w, 0), -golden_max(neg_dual_at_log, w, log(lo), log(hi), iters));
}

/* Fills w's arrays and the price range of a byte [*lo, *hi] (the layers' forward per byte,
 * widened); false when out of host memory. */
static bool warm_setup(struct warm *w, const struct model *mdl, double *lo, double *hi)
{
	size_t n = (size_t)w->L;

	w->f = malloc(5 * n * sizeof(double));
	if (!w->f)
		return false;
	w->core_f = w->f + n;
	w->act = w->core_f + n;
	w->act_sel = w->act + n;
	w->in = w->act_sel + n;
	*lo = INFINITY;
	*hi = 0;
	for (int i = 0; i < w->L; i++) {
		const struct layer *y = &mdl->layers[i];
		double act = (double)y->act_bytes, core = fmin((double)y->core_act_bytes, act);

		w->f[i] = y->f_ms;
		w->core_f[i] = y->core_f_ms;
		w->act[i] = act;
		w->act_sel[i] = act - core;
		w->in[i] = (double)model_layer_in_bytes(mdl, i);
		if (act > 0 && y->f_ms > 0) {
			*lo = fmin(*lo, y->f_ms / act);
			*hi = fmax(*hi, y->f_ms / act);
		}
		if (w->in[i] > 0 && y->f_ms > 0)
			*hi = fmax(*hi, y->f_ms / w->in[i]);
	}
	if (!(*hi > 0))
		*lo = *hi = 1e-12;
	*lo /= 16;
	*hi *= 4;
	return true;
}

/* The bound at share alpha: alpha t0 + (M C - Phi(alpha)) / (D s_max). */
static double bound_at(void *arg, double alpha)
{
	struct warm *w = arg;

	w->alpha = alpha;
	return alpha * w->t0 + w->work - warm_phi(w, w->lo, w->hi, w->nl) / w->scale;
}

double lb_warmup_bound(const struct model *mdl, const struct cluster *cl, int M, bool split, double S)
{
	int D = cl->devices, K = split ? 3 : 2, na, nl;
	double o = cl->op_overhead_us > 0 ? cl->op_overhead_us * 1e-3 : 0, smax = cl->device_speed[0];
	double C = 0, t0 = 0, lo, hi, best, evals;
	struct warm w = { .L = mdl->nlayers, .M = M, .R = D * cluster_usable_bytes(cl) - S, .alpha = 1 };

	if (!(w.R >= 0) || w.L < 1)
		return 0; /* the weights alone do not fit: no plan to bound */
	if (!warm_setup(&w, mdl, &lo, &hi))
		return NAN;
	for (int d = 1; d < D; d++)
		smax = fmax(smax, cl->device_speed[d]);
	for (int i = 0; i < w.L; i++) {
		C += mdl->layers[i].f_ms + mdl->layers[i].b_ms + mdl->layers[i].w_ms;
		t0 += mdl->layers[i].f_ms;
	}
	t0 = (t0 + o) / smax;
	/* iterations: fine for the usual models, fewer on very long ones (any lam and alpha
	 * give a bound; fewer only find a weaker one) */
	evals = fmax(60, fmin(1500, WARM_EVALS / w.L));
	na = (int)fmax(2, fmin(12, evals / 25 - 3));
	nl = (int)fmax(8, fmin(36, evals / (na + 3) - 3));
	/* the bound at alpha is concave in alpha (a minimum over lam of concave functions):
	 * alpha = 1 (the whole warm-up's idle), then a golden-section search over [0, 1] */
	w.t0 = t0;
	w.work = M * C / (D * smax);
	w.scale = D * smax;
	w.lo = lo;
	w.hi = hi;
	w.nl = nl;
	best = fmax(bound_at(&w, 1), golden_max(bound_at, &w, 0, 1, na));
	free(w.f);
	return best > 0 ? best + M * (K - 1) * o / (D * smax) : 0;
}
