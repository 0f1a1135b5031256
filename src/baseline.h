/*
 * baseline — a complete plan from a model, a cluster and a named recipe: partition
 * (uniform, balanced, Megatron-style, explicit counts), placement (the schedule's own, or
 * an explicit device list) and schedule (see sched.h). This is `octopipe plan`, the rows
 * of `octopipe compare`, and the tuner's starting points.
 */
#ifndef OCTO_BASELINE_H
#define OCTO_BASELINE_H

#include <stdbool.h>

#include "cluster.h"
#include "err.h"
#include "metrics.h"
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

/* Recipe i of baseline_recipes at microbatches, every stage recomputing as rc, built as
 * baseline_plan does; i == baseline_nrecipes is the one used where none of them fits:
 * 1F1B with its boundaries balanced within memory (baseline_balance_memory). */
int baseline_recipe_plan(struct plan *out, const struct model *m, const struct cluster *c, int i, int microbatches,
                         enum recompute rc, struct err *e);

/* Builds and validates the plan. model_ref / cluster_ref are the paths to write into it
 * (NULL embeds the object). ERR_INPUT when the recipe cannot apply (with the reason). */
int baseline_plan(struct plan *out, const struct model *m, const char *model_ref,
                  const struct cluster *c, const char *cluster_ref,
                  const struct baseline_spec *spec, struct err *e);

/* Moves p's stage boundaries (its devices, order and recompute kept) to the partition
 * balanced within memory: the least largest stage time among those whose every device's
 * peak, as the simulator counts it from p's order, fits; where none fits, the least peak.
 * For plans of one stage a device, all recomputing alike (1F1B, ZB-H1, GPipe): ERR_INPUT
 * otherwise. When no textbook partition fits, this one often does: the embedding's and
 * the head's optimizer states and the first stages' deeper warm-up sit on different
 * devices. */
int baseline_balance_memory(struct plan *p, struct err *e);

/* One recipe of baseline_recipes, built and simulated (baseline_run_all). */
struct baseline_result {
	const struct baseline_recipe *recipe;
	bool built;               /* the recipe applies: plan holds it */
	struct plan plan;         /* when built */
	bool ran;                 /* the simulation finished: m holds its metrics */
	struct metrics m;         /* when ran (a deadlock leaves its cycle here) */
	bool feasible;            /* ran and every device within its memory */
	double peak_mem_bytes;    /* the largest device's peak, when ran */
	struct err why;           /* when not built (ERR_INPUT: the recipe cannot apply) or not
	                           * ran (ERR_INFEASIBLE: a deadlock): why, in words */
	bool skipped;             /* not built: its simulation would have ended past the deadline */
};

/* Every baseline of one model, cluster and microbatch count: the rows of `octopipe
 * compare`, the report's speedup table and the UI's baselines come from here. */
struct baseline_set {
	struct baseline_result *r;   /* baseline_nrecipes results, in baseline_recipes order */
	int n;
	int best;                    /* the shortest feasible iteration (the first of equals); -1: none */
	double sim_ops_per_s;        /* the simulations' measured speed (0: none ran) */
};

/* Builds every recipe of baseline_recipes for m on c with microbatches and simulates it
 * with the default options. A recipe that cannot apply, deadlocks or runs out of device
 * memory is a result, not an error: -1 (ERR_RUNTIME) only when the host runs out of
 * memory, with nothing left to release. Else the caller baseline_set_release()s. */
int baseline_run_all(struct baseline_set *out, const struct model *m, const struct cluster *c,
                     int microbatches, struct err *e);
/* The same with every stage of every plan recomputing as rc says, priced by the simulator
 * stage by stage (what the layout search judges a layout by; m is the table without
 * recompute folded in). */
int baseline_run_all_recompute(struct baseline_set *out, const struct model *m, const struct cluster *c,
                               int microbatches, enum recompute rc, struct err *e);
/* The same, skipping (r->skipped, why saying so) each recipe not begun by clock_now_s()
 * deadline_s or whose simulation would end past it (at the speed of those simulated so far,
 * at first BASELINE_SIM_OPS_PER_S ops a second; deadline_s 0: none). */
#define BASELINE_SIM_OPS_PER_S 1.5e6
int baseline_run_until(struct baseline_set *out, const struct model *m, const struct cluster *c,
                       int microbatches, enum recompute rc, double deadline_s, struct err *e);
void baseline_set_release(struct baseline_set *s);

#endif
