/*
 * rescale — recalibrates a model's layer costs from a measured timeline (docs/METHOD.md §4,
 * "Measurement feeds back"): for every stage of the plan and
 * every op kind, the factor by which the measured op durations differ from the predicted
 * ones, applied to the layers of that stage.
 *
 * A stage's op duration is the sum of its layers' costs divided by its device's speed,
 * so one factor per (stage, kind) explains every microbatch of that op at once; the
 * factor is the least-squares fit over the microbatches. Kinds that were not measured
 * (a stage without ops in the timeline) keep factor 1.
 */
#ifndef OCTO_RESCALE_H
#define OCTO_RESCALE_H

#include "err.h"
#include "model.h"
#include "plan.h"
#include "timeline.h"

enum { RESCALE_F = 0, RESCALE_B = 1, RESCALE_W = 2, RESCALE_KINDS = 3 };

struct rescale {
	int nstages;
	double (*factor)[RESCALE_KINDS];   /* per stage: F, I (or the full B), W */
	int (*samples)[RESCALE_KINDS];     /* measured ops behind each factor */
	double (*predicted_ms)[RESCALE_KINDS]; /* the op's predicted duration on its device */
};

/* Fits the factors of plan p's stages to the measured timeline t (file names t in
 * messages). Rejects a timeline that does not belong to p (device count, a stage not in
 * p or on another device, I/W ops without a split backward) with ERR_INPUT. The caller
 * rescale_release()s r, also after a failure. */
int rescale_fit(const struct plan *p, const struct timeline *t, const char *file, struct rescale *r,
                struct err *e);

/* Multiplies the costs of every layer of every stage of p in m (a model with p's layer
 * count) by the stage's factors: f_ms by F, b_ms by I, w_ms by W; without a split
 * backward b_ms and w_ms both by the B factor. */
int rescale_apply(const struct rescale *r, const struct plan *p, struct model *m, struct err *e);

/* The runtime's fixed cost per op (microseconds, >= 0) that best explains t: per op kind
 * a robust line through the stages' mean measured durations, (scale * stage cost +
 * overhead) / device speed, so that stages of different cost separate the constant from
 * the scale and a single odd stage does not move it. ERR_INPUT when the stages' costs are
 * all equal. Set it as the plan's cluster op_overhead_us before rescale_fit, which then
 * rescales only the rest. */
int rescale_fit_overhead(const struct plan *p, const struct timeline *t, const char *file, double *overhead_us,
                         struct err *e);

void rescale_release(struct rescale *r);

#endif
