/*
 * target — the runtime a plan is tuned for (`tune --target`, `compare --target`):
 * OctoPipe's executor (anything), Megatron-LM (its own 1F1B / interleaved orders over a
 * partition its layout flags express) or torchtitan (its loop or v placement, any
 * order a schedule CSV expresses).
 */
#ifndef OCTO_TARGET_H
#define OCTO_TARGET_H

#include <signal.h>
#include <stdbool.h>

#include "cluster.h"
#include "err.h"
#include "model.h"
#include "plan.h"

enum target { TARGET_OCTOPIPE = 0, TARGET_MEGATRON, TARGET_TORCHTITAN };

const char *target_name(enum target t);
/* "octopipe", "megatron", "torchtitan"; -1 for anything else. */
int target_from_name(const char *s, enum target *out);

/* Whether target t runs p as it is (the export's own checks): 0, or -1 with e. */
int target_check(enum target t, const struct plan *p, struct err *e);
/* target_check as the tuner's and the layout search's candidate filter (tune.h accept):
 * arg points to an enum target; -1 with e saying why p does not run there. */
int target_accepts(void *arg, const struct plan *p, struct err *e);
/* What target t refuses of a whole search before it starts, of model m on a cluster of
 * devices GPUs (pure_pipeline: --layout pp, every GPU a pipeline rank): torchtitan has no
 * model of a Mamba or gated DeltaNet layer, and trains a pipeline without FSDP in fp32.
 * 0, or -1 with ERR_INPUT. */
int target_check_search(enum target t, const struct model *m, int devices, bool pure_pipeline, struct err *e);

struct target_search_opts {
	int microbatches;
	int max_chunks;              /* virtual stages per device tried: 1..max_chunks (0: 3) */
	double time_budget_s;        /* 0: none */
	long max_evals;              /* 0: none */
	const volatile sig_atomic_t *stop;
};

struct target_result {
	long evals;                  /* plans simulated */
	double seconds;
	int schedules;               /* virtual-stage counts that had a plan that runs */
	int max_chunks;
	double baseline_ms;          /* Megatron-LM's default: 1F1B over its even split (INFINITY: none) */
	double best_ms;
	int recompute_layers;        /* target_megatron_search_full: the --recompute-num-layers of
	                              * the block method the best plan uses (0: none) */
};

/* The fastest plan Megatron-LM runs of model m on the replica cluster c (see target.c):
 * *best is filled (plan_release() it). ERR_INFEASIBLE when no candidate runs and fits,
 * ERR_RUNTIME when out of host memory. */
int target_megatron_search(const struct model *m, const struct cluster *c, const struct target_search_opts *o,
                           struct plan *best, struct target_result *r, struct err *e);

/* target_megatron_search for a layout that needs full recompute, over plain, the
 * replica's table without recompute: every stage of every candidate recomputes fully (the
 * plan's stage modes, which the simulator prices exactly: Megatron-LM's --recompute-method
 * uniform), and then, over the winner's partition, Megatron-LM's block method for the
 * fewest layers per virtual stage that fit (its boundaries searched again) when it is
 * faster: r->recompute_layers is its n (0: every layer recomputes). *best's model is
 * plain's; its stages carry their recompute (plan_set_recompute would undo the block). */
int target_megatron_search_full(const struct model *plain, const struct cluster *c,
                                const struct target_search_opts *o, struct plan *best, struct target_result *r,
                                struct err *e);

#endif
