/*
 * rescale — per-stage, per-kind cost factors from a measured timeline (see rescale.h).
 *
 * Every measured op y_m of a (stage, kind) is predicted as the same duration p (the
 * stage's layer costs over its device's speed), so the least-squares factor a minimising
 * sum (y_m - a p)^2 is sum(y_m p) / sum(p^2), i.e. the mean measured duration over p. The
 * fit keeps the model's proportions inside a stage: a stage measured 20% slow makes each
 * of its layers 20% slower, which is all a timeline of whole stages can tell.
 */
#include "config.h"
#include "rescale.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"

static int kind_slot(uint8_t kind)
{
	return kind == OP_F ? RESCALE_F : kind == OP_W ? RESCALE_W : RESCALE_B;
}

/* What stage s's backward redoes of layer l's forward (plan_stage_ms): part of what its
 * measured I or B took. */
static double redo_ms(const struct plan *p, int s, int l)
{
	enum recompute rc = plan_layer_recompute(p, s, l);

	return rc == RECOMPUTE_FULL ? p->model.layers[l].f_ms : rc == RECOMPUTE_SELECTIVE ? p->model.layers[l].core_f_ms : 0;
}

int rescale_fit(const struct plan *p, const struct timeline *t, const char *file, struct rescale *r,
                struct err *e)
{
	double (*syp)[RESCALE_KINDS], (*spp)[RESCALE_KINDS];
	int S = p->nstages;

	memset(r, 0, sizeof(*r));
	if (t->ndevices != p->ndevices)
		return err_set(e, ERR_INPUT, "%s: devices: the timeline has %d devices, the plan %d", file,
		               t->ndevices, p->ndevices);
	r->nstages = S;
	r->factor = calloc((size_t)S, sizeof(*r->factor));
	r->samples = calloc((size_t)S, sizeof(*r->samples));
	r->predicted_ms = calloc((size_t)S, sizeof(*r->predicted_ms));
	syp = calloc((size_t)S, sizeof(*syp));
	spp = calloc((size_t)S, sizeof(*spp));
	if (!r->factor || !r->samples || !r->predicted_ms || !syp || !spp) {
		free(syp);
		free(spp);
		return err_set(e, ERR_RUNTIME, "out of host memory fitting the layer costs");
	}
	for (int s = 0; s < S; s++) {
		double c[RESCALE_KINDS] = { 0, 0, 0 }, speed = p->cluster.device_speed[p->stages[s].device];

		for (int l = p->stages[s].first; l <= p->stages[s].last; l++) {
			c[RESCALE_F] += p->model.layers[l].f_ms;
			c[RESCALE_B] += p->model.layers[l].b_ms + redo_ms(p, s, l);
			c[RESCALE_W] += p->model.layers[l].w_ms;
		}
		if (!p->split_backward) {
			c[RESCALE_B] += c[RESCALE_W];
			c[RESCALE_W] = 0;
		}
		for (int k = 0; k < RESCALE_KINDS; k++) {
			r->predicted_ms[s][k] = speed > 0 ? c[k] / speed : 0;
			r->factor[s][k] = 1;
		}
	}
	for (int d = 0; d < t->ndevices; d++) {
		const struct tl_device *td = &t->dev[d];

		for (int i = 0; i < td->nops; i++) {
			const struct tl_op *o = &td->ops[i];
			int k = kind_slot(o->kind);
			double pr, y = o->end_ms - o->start_ms;

			if (o->stage < 0 || o->stage >= S) {
				free(syp);
				free(spp);
				return err_set(e, ERR_INPUT, "%s: devices[%d].ops[%d]: stage %d is not in the plan (%d stages)",
				               file, d, i, (int)o->stage, S);
			}
			if (p->stages[o->stage].device != d) {
				free(syp);
				free(spp);
				return err_set(e, ERR_INPUT, "%s: devices[%d].ops[%d]: stage %d runs on device %d in the plan",
				               file, d, i, (int)o->stage, p->stages[o->stage].device);
			}
			if (o->kind != OP_F && (o->kind == OP_B) == p->split_backward) {
				free(syp);
				free(spp);
				return err_set(e, ERR_INPUT, "%s: devices[%d].ops[%d]: a %s op, but the plan %s the backward",
				               file, d, i, op_kind_name((enum op_kind)o->kind),
				               p->split_backward ? "splits" : "does not split");
			}
			/* the cluster's fixed per-op cost is not the layers': only the rest scales */
			y -= p->cluster.op_overhead_us * 1e-3 / p->cluster.device_speed[d];
			pr = r->predicted_ms[o->stage][k];
			syp[o->stage][k] += y * pr;
			spp[o->stage][k] += pr * pr;
			r->samples[o->stage][k]++;
		}
	}
	for (int s = 0; s < S; s++)
		for (int k = 0; k < RESCALE_KINDS; k++)
			if (spp[s][k] > 0)
				r->factor[s][k] = syp[s][k] / spp[s][k];
	free(syp);
	free(spp);
	/* a factor of 0 (or less, once the per-op overhead is taken off) would price the
	 * stage's layers at nothing: what was measured is not these layers' work */
	for (int s = 0; s < S; s++)
		for (int k = 0; k < RESCALE_KINDS; k++)
			if (!(r->factor[s][k] > 0) || !isfinite(r->factor[s][k]))
				return err_set(e, ERR_INPUT, "%s: stage %d: its %s ops took %s, a factor of %g on the layers' costs: "
				               "not a measurement of them", file, s, k == RESCALE_F ? "F" : k == RESCALE_W ? "W"
				               : p->split_backward ? "I" : "B",
				               p->cluster.op_overhead_us > 0 ? "no time beyond the per-op overhead" : "no time",
				               r->factor[s][k]);
	return 0;
}

int rescale_apply(const struct rescale *r, const struct plan *p, struct model *m, struct err *e)
{
	if (m->nlayers != p->model.nlayers)
		return err_set(e, ERR_INPUT, "model '%s' has %d layers, the plan's %d", m->name ? m->name : "?",
		               m->nlayers, p->model.nlayers);
	if (r->nstages != p->nstages)
		return err_set(e, ERR_INPUT, "the fit has %d stages, the plan %d", r->nstages, p->nstages);
	/* first the check, so a refusal changes nothing: a cost past what a layer table holds
	 * would make a model its own reader refuses */
	for (int s = 0; s < p->nstages; s++) {
		double fb = r->factor[s][RESCALE_B];
		double fw = p->split_backward ? r->factor[s][RESCALE_W] : fb;

		for (int l = p->stages[s].first; l <= p->stages[s].last; l++) {
			const struct layer *x = &m->layers[l];
			double most = fmax(x->f_ms * r->factor[s][RESCALE_F], fmax(x->b_ms * fb, x->w_ms * fw));

			if (!(most <= OCTO_MAX_COST_MS))
				return err_set(e, ERR_INPUT, "stage %d's factors (F %.4g, B %.4g, W %.4g) would make layer %d "
				               "take %.3g ms, more than a layer table holds (%.0e ms)", s,
				               r->factor[s][RESCALE_F], fb, fw, l, most, OCTO_MAX_COST_MS);
		}
	}
	for (int s = 0; s < p->nstages; s++) {
		double fb = r->factor[s][RESCALE_B];
		double fw = p->split_backward ? r->factor[s][RESCALE_W] : fb;

		for (int l = p->stages[s].first; l <= p->stages[s].last; l++) {
			m->layers[l].f_ms *= r->factor[s][RESCALE_F];
			m->layers[l].b_ms *= fb;
			m->layers[l].w_ms *= fw;
		}
	}
	return 0;
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* Median of v[0..n) (sorts v); n > 0. */
static double median(double *v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Per stage and kind: the stage's layer cost c (speed 1) and its measured ops' mean
 * duration scaled to speed 1, y; samples n. The fit below works on these points. */
struct point {
	double c, y;
	long n;
};

int rescale_fit_overhead(const struct plan *p, const struct timeline *t, const char *file, double *overhead_us,
                         struct err *e)
{
	int S = p->nstages, kinds = p->split_backward ? 3 : 2, nk = 0;
	struct point *pt;
	double *slope, *icpt, ok_[RESCALE_KINDS];
	long npairs = (long)S * (S - 1) / 2;

	if (t->ndevices != p->ndevices)
		return err_set(e, ERR_INPUT, "%s: devices: the timeline has %d devices, the plan %d", file,
		               t->ndevices, p->ndevices);
	pt = calloc((size_t)S * RESCALE_KINDS, sizeof(*pt));
	slope = malloc((size_t)(npairs ? npairs : 1) * sizeof(*slope));
	icpt = malloc((size_t)S * sizeof(*icpt));
	if (!pt || !slope || !icpt) {
		free(pt);
		free(slope);
		free(icpt);
		return err_set(e, ERR_RUNTIME, "out of host memory fitting the per-op overhead");
	}
	for (int s = 0; s < S; s++)
		for (int l = p->stages[s].first; l <= p->stages[s].last; l++) {
			pt[s * RESCALE_KINDS + RESCALE_F].c += p->model.layers[l].f_ms;
			pt[s * RESCALE_KINDS + RESCALE_B].c += p->model.layers[l].b_ms + redo_ms(p, s, l) +
			                                       (p->split_backward ? 0 : p->model.layers[l].w_ms);
			pt[s * RESCALE_KINDS + RESCALE_W].c += p->split_backward ? p->model.layers[l].w_ms : 0;
		}
	for (int d = 0; d < t->ndevices; d++)
		for (int i = 0; i < t->dev[d].nops; i++) {
			const struct tl_op *o = &t->dev[d].ops[i];
			struct point *q;

			if (o->stage < 0 || o->stage >= S || p->stages[o->stage].device != d) {
				free(pt);
				free(slope);
				free(icpt);
				return err_set(e, ERR_INPUT, "%s: devices[%d].ops[%d]: not an op of this plan's device %d", file,
				               d, i, d);
			}
			q = &pt[o->stage * RESCALE_KINDS + kind_slot(o->kind)];
			q->y += (o->end_ms - o->start_ms) * p->cluster.device_speed[d];
			q->n++;
		}
	/* Per kind, a robust line y = a c + o through the stages' points (Theil-Sen: the
	 * median of the pairwise slopes, then the median intercept), so that one stage that is
	 * simply slower than its model (a hot GPU, a mispriced layer) does not pass for a
	 * per-op constant; the overhead is the median over the kinds. */
	for (int k = 0; k < kinds; k++) {
		long ns = 0, ni = 0;
		double lo = INFINITY, hi = 0;

		/* stages within a quarter of each other cannot separate a constant from a scale
		 * once measurements are noisy: such a kind says nothing about the overhead */
		for (int s = 0; s < S; s++)
			if (pt[s * RESCALE_KINDS + k].n) {
				lo = fmin(lo, pt[s * RESCALE_KINDS + k].c);
				hi = fmax(hi, pt[s * RESCALE_KINDS + k].c);
			}
		if (!(hi > 0 && (hi - lo) / hi >= 0.25))
			continue;
		for (int a = 0; a < S; a++)
			for (int b = a + 1; b < S; b++) {
				const struct point *u = &pt[a * RESCALE_KINDS + k], *v = &pt[b * RESCALE_KINDS + k];

				if (u->n && v->n && fabs(v->c - u->c) > 1e-9 * fmax(fabs(u->c), fabs(v->c)))
					slope[ns++] = (v->y / v->n - u->y / u->n) / (v->c - u->c);
			}
		if (ns == 0)
			continue;
		{
			double a_k = median(slope, ns);

			for (int s = 0; s < S; s++)
				if (pt[s * RESCALE_KINDS + k].n)
					icpt[ni++] = pt[s * RESCALE_KINDS + k].y / pt[s * RESCALE_KINDS + k].n -
					             a_k * pt[s * RESCALE_KINDS + k].c;
			ok_[nk++] = median(icpt, ni);
		}
	}
	free(pt);
	free(slope);
	free(icpt);
	/* one stage cost per kind cannot tell a factor from a constant */
	if (nk == 0)
		return err_set(e, ERR_INPUT, "%s: the per-op overhead cannot be told from the layer costs: the plan's "
		               "stages cost within 25%% of each other (run one with uneven stages, e.g. --partition 4,12,12,12)",
		               file);
	{
		double o = median(ok_, nk);

		*overhead_us = o > 0 ? o * 1e3 : 0;
	}
	return 0;
}

void rescale_release(struct rescale *r)
{
	free(r->factor);
	free(r->samples);
	free(r->predicted_ms);
	memset(r, 0, sizeof(*r));
}
