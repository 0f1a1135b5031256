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

#define WARM_FINE 4096 /* models longer than this get a coarser search (still a bound) */

/* Layer i's best value of one warm forward at a byte price lam: its forward's work less
 * the recompute its mode redoes, less the price of the bytes the mode holds. */
static double warm_value(const struct model *mdl, int i, double alpha, double lam)
{
	const struct layer *y = &mdl->layers[i];
	double act = (double)y->act_bytes, core = fmin((double)y->core_act_bytes, act);
	double none = alpha * y->f_ms - lam * act;
	double sel = alpha * y->f_ms - y->core_f_ms - lam * (act - core);
	double full = (alpha - 1) * y->f_ms - lam * (double)model_layer_in_bytes(mdl, i);

	return fmax(none, fmax(sel, full));
}

/* lam R + M max_p sum_{i<p} v_i(lam): an upper bound on X - M sum r at every lam >= 0. */
static double warm_dual(const struct model *mdl, int M, double R, double alpha, double lam)
{
	double sum = 0, best = 0;

	for (int i = 0; i < mdl->nlayers; i++) {
		sum += warm_value(mdl, i, alpha, lam);
		best = fmax(best, sum);
	}
	return lam * R + M * best;
}

/* min over lam of warm_dual at alpha: a golden-section search (convex in lam); every
 * lam tried is a valid bound, so the least value seen is kept. */
static double warm_phi(const struct model *mdl, int M, double R, double alpha, double hi, int iters)
{
	const double g = (sqrt(5.0) - 1) / 2;
	double lo = 0, phi = fmin(warm_dual(mdl, M, R, alpha, 0), warm_dual(mdl, M, R, alpha, hi));

	for (int it = 0; it < iters && hi > lo; it++) {
		double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
		double fa = warm_dual(mdl, M, R, alpha, a), fb = warm_dual(mdl, M, R, alpha, b);

		phi = fmin(phi, fmin(fa, fb));
		if (fa <= fb)
			hi = b;
		else
			lo = a;
	}
	return phi;
}

double lb_warmup_bound(const struct model *mdl, const struct cluster *cl, int M, bool split, double S)
{
	int L = mdl->nlayers, D = cl->devices, K = split ? 3 : 2, iters = L > WARM_FINE ? 12 : 40;
	double o = cl->op_overhead_us > 0 ? cl->op_overhead_us * 1e-3 : 0, smax = cl->device_speed[0];
	double R = D * cluster_usable_bytes(cl) - S, C = 0, t0 = 0, hi = 0, lo = 0, ahi = 1, best = 0;
	const double g = (sqrt(5.0) - 1) / 2;

	if (!(R >= 0) || L < 1)
		return 0; /* the weights alone do not fit: no plan to bound */
	for (int d = 1; d < D; d++)
		smax = fmax(smax, cl->device_speed[d]);
	for (int i = 0; i < L; i++) {
		const struct layer *y = &mdl->layers[i];
		double in = (double)model_layer_in_bytes(mdl, i);

		C += y->f_ms + y->b_ms + y->w_ms;
		t0 += y->f_ms;
		/* past every layer's forward per byte, no warm forward is worth its bytes */
		if (y->act_bytes > 0)
			hi = fmax(hi, 2 * y->f_ms / (double)y->act_bytes);
		if (in > 0)
			hi = fmax(hi, 2 * y->f_ms / in);
	}
	t0 = (t0 + o) / smax;
	/* the bound at alpha is concave in alpha (a minimum over lam of concave functions):
	 * alpha = 1 (the whole warm-up's idle), then a golden-section search over [0, 1],
	 * every value a valid bound */
	best = t0 + (M * C - warm_phi(mdl, M, R, 1, hi, iters)) / (D * smax);
	for (int it = 0; it < iters / 2 && ahi > lo; it++) {
		double a = ahi - g * (ahi - lo), b = lo + g * (ahi - lo);
		double va = a * t0 + (M * C - warm_phi(mdl, M, R, a, hi, iters)) / (D * smax);
		double vb = b * t0 + (M * C - warm_phi(mdl, M, R, b, hi, iters)) / (D * smax);

		best = fmax(best, fmax(va, vb));
		if (va >= vb)
			ahi = b;
		else
			lo = a;
	}
	return best > 0 ? best + M * (K - 1) * o / (D * smax) : 0;
}
