/*
 * baseline — a complete plan from a model, a cluster and a named recipe: partition
 * (uniform, balanced, Megatron-style, explicit counts), placement (the schedule's own, or
 * an explicit device list) and schedule (see sched.h). This is `octopipe plan`, the rows
 * of `octopipe compare`, and the tuner's starting points.
 */
#ifndef OCTO_BASELINE_H
#define OCTO_BASELINE_H

#include "cluster.h"
#include "err.h"
#include "model.h"
#include "plan.h"
#include "sched.h"

struct baseline_spec {
	enum sched_kind schedule;
	int microbatches;
	int chunks;               /* stages per device; 0 = the schedule's default */
	const char *partition;    /* "uniform", "balanced", "megatron", "7,7,6,6"; NULL: the schedule's */
	const int *placement;     /* device of each stage, or NULL for the schedule's placement */
	int nplacement;
	int devices;              /* pipeline devices; 0 = all of the cluster */
	const char *comm;         /* "overlap" or "blocking"; NULL: as the schedule's runtime does it
	                           * (blocking for Megatron-LM's 1F1B, overlap for the others) */
};

/* The partition a schedule's reference implementation uses: "megatron" for 1F1B,
 * interleaved and the zero-bubble family (all built on Megatron-LM), "uniform" for
 * GPipe, DualPipeV and adaptive. A spec without a partition gets this one. */
const char *baseline_reference_partition(enum sched_kind k);

/* The baselines OctoPipe compares against, in display order (compare, the UI). */
struct baseline_recipe {
	const char *name;          /* "1f1b balanced" */
	enum sched_kind schedule;
	const char *partition;
};
extern const struct baseline_recipe baseline_recipes[];
extern const int baseline_nrecipes;

/* Builds and validates the plan. model_ref / cluster_ref are the paths to write into it
 * (NULL embeds the object). ERR_INPUT when the recipe cannot apply (with the reason). */
int baseline_plan(struct plan *out, const struct model *m, const char *model_ref,
                  const struct cluster *c, const char *cluster_ref,
                  const struct baseline_spec *spec, struct err *e);

#endif
