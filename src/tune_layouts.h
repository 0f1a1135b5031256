/*
 * tune_layouts — tuning across parallel layouts, what `octopipe tune` and `compare` run
 * and what a UI can call: pick the layout (layout_search over what the constraints leave
 * open, or pure pipeline parallelism over every GPU), then tune the LAYOUT_TOP layouts
 * the search ranks first, each with its share of what is left of the budget, keep the
 * fastest tuned plan, and simulate it at its layout (the replica's own table, every stage
 * recomputing as chosen, and lighter where memory allows).
 *
 * The budget is a deadline for the whole: the layout search is cut at its share
 * (TUNE_LAYOUTS_SEARCH_SHARE of the budget, once a layout fits), each tuning gets the time
 * left divided among the layouts still to tune, less a reserve for the result's own
 * simulations. Nothing here prints: the caller hears of the steps and the layouts through
 * callbacks and reads the rest from the result.
 */
#ifndef OCTO_TUNE_LAYOUTS_H
#define OCTO_TUNE_LAYOUTS_H

#include <stdbool.h>

#include "cluster.h"
#include "err.h"
#include "layout_search.h"
#include "metrics.h"
#include "model.h"
#include "plan.h"
#include "sched.h"
#include "target.h"
#include "tune.h"

#define TUNE_LAYOUTS_SEARCH_SHARE 0.3  /* of the budget, for the layout search */
/* of the budget, past which the layout search gives up even before a layout fits (the
 * rest: the tuner's set-up and the result's simulations at the layout found) */
#define TUNE_LAYOUTS_GIVE_UP_SHARE 0.6
/* What a budget of B seconds promises for the whole command: B + 10% + 0.1 s (0: none). The
 * give-up times and the refusals up front are shares of it, so a tiny budget on a small
 * input still gets its answer. */
static inline double tune_budget_limit(double B)
{
	return B > 0 ? 1.1 * B + 0.1 : 0;
}
/* Ops the simulator runs a second on one core (about; a loaded machine runs fewer): what
 * the time a plan's simulation takes is judged by before it is run. */
#define TUNE_SIM_OPS_PER_S 1.5e6

/* The baselines Megatron-LM runs (layout_constraints.schedules): its own 1F1B and interleaved. */
#define TUNE_MEGATRON_SCHEDULES ((1u << SCHED_1F1B) | (1u << SCHED_INTERLEAVED))

/* The layout a run works at. */
struct tune_layout {
	bool use;                /* not pure pipeline parallelism over every GPU: use rm, rc */
	bool searched;
	long global_batch;       /* sequences */
	struct layout_choice lc;
	struct model rm;         /* the replica's layer table (with the chosen recompute folded in) */
	struct cluster rc;       /* the replica's cluster */
};

/* Picks the layout: k NULL is pure pipeline parallelism over every GPU (nothing searched),
 * else layout_search under k (k->global_mb set). 0, or the search's error. */
int tune_layout_pick(const struct model *m, const struct cluster *c, const struct layout_constraints *k,
                     struct tune_layout *out, struct err *e);
/* Makes the k-th of the search's ranked layouts (lc.top[k]; 0 is the choice) the one out
 * describes, with its replica's model and cluster. */
int tune_layout_adopt(const struct model *m, const struct cluster *c, int k, struct tune_layout *out,
                      struct err *e);
void tune_layout_release(struct tune_layout *l);
/* The model and cluster plans at l are built on. */
const struct model *tune_layout_model(const struct tune_layout *l, const struct model *m);
const struct cluster *tune_layout_cluster(const struct tune_layout *l, const struct cluster *c);

/* A layout tuned (or tried). */
struct tune_layouts_tried {
	struct layout_pick pick;
	bool ok;
	double tokens_per_s;     /* of the tuned plan (ok) */
	char why[200];           /* why it gave no plan (!ok) */
};

enum tune_layouts_event {
	TL_EV_START,             /* layout k is about to be tuned */
	TL_EV_DONE,              /* layout k tuned (tried[k].ok) or given up (tried[k].why) */
};

struct tune_layouts_opts {
	struct tune_opts tune;   /* microbatches per replica; time_budget_s / max_evals: the whole */
	enum target target;
	bool relax_recompute;    /* the search chose the recompute: lighten it where memory allows */
	double deadline_s;       /* clock_now_s() by which the result must be ready (0: budget from
	                          * tune.time_budget_s, counted from the call) */
	int ntune;               /* layouts to tune (0: LAYOUT_TOP) */
	void (*on_step)(void *arg, int k, const struct tune_step *st);
	void (*on_event)(void *arg, enum tune_layouts_event ev, int k, const struct tune_layouts_tried *t);
	void *arg;
};

struct tune_layouts_result {
	struct tune_layout *L;   /* the winner's layout (owned; the tuner points into it) */
	struct plan plan;        /* the winner, at its layout, simulated into mt */
	struct metrics mt;
	struct tuner *t;         /* the winner's tuner (its steps); NULL for Megatron-LM or the
	                          * layout's baseline */
	struct target_result tr; /* --target megatron: the search's figures */
	int ntried, best;
	struct tune_layouts_tried tried[LAYOUT_TOP];
	bool fallback;           /* no tuned plan fits: the layout's best baseline */
	double beaten_ms;        /* > 0: a tuned plan fit but took this long, more than the
	                          * layout's best baseline (the result, fallback set) */
	int relaxed;             /* stages recomputing less than the layout says */
	bool interrupted;
	double baseline_ms;      /* the best baseline at the winner's layout */
};

/* Tunes at L (moved into the result, L left empty) and the layouts the search ranked after it.
 * 0 with res filled (tune_layouts_release() it); else e says why, res released. */
int tune_layouts_run(const struct model *m, const struct cluster *c, struct tune_layout *L,
                     const struct tune_layouts_opts *o, struct tune_layouts_result *res, struct err *e);
void tune_layouts_release(struct tune_layouts_result *res);

#endif
