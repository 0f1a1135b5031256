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

#include <stdlib.h>
#include <string.h>

static int kind_slot(uint8_t kind)
{
	return kind == OP_F ? RESCALE_F : kind == OP_W ? RESCALE_W : RESCALE_B;
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
			c[RESCALE_B] += p->model.layers[l].b_ms;
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

			if (o->stage < 0 || o->stage >= S)
				return err_set(e, ERR_INPUT, "%s: devices[%d].ops[%d]: stage %d is not in the plan (%d stages)",
				               file, d, i, (int)o->stage, S);
			if (p->stages[o->stage].device != d)
				return err_set(e, ERR_INPUT, "%s: devices[%d].ops[%d]: stage %d runs on device %d in the plan",
				               file, d, i, (int)o->stage, p->stages[o->stage].device);
			if (o->kind != OP_F && (o->kind == OP_B) == p->split_backward)
				return err_set(e, ERR_INPUT, "%s: devices[%d].ops[%d]: a %s op, but the plan %s the backward",
				               file, d, i, op_kind_name((enum op_kind)o->kind),
				               p->split_backward ? "splits" : "does not split");
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
	return 0;
}

int rescale_apply(const struct rescale *r, const struct plan *p, struct model *m, struct err *e)
{
	if (m->nlayers != p->model.nlayers)
		return err_set(e, ERR_INPUT, "model '%s' has %d layers, the plan's %d", m->name ? m->name : "?",
		               m->nlayers, p->model.nlayers);
	if (r->nstages != p->nstages)
		return err_set(e, ERR_INPUT, "the fit has %d stages, the plan %d", r->nstages, p->nstages);
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

void rescale_release(struct rescale *r)
{
	free(r->factor);
	free(r->samples);
	free(r->predicted_ms);
	memset(r, 0, sizeof(*r));
}
