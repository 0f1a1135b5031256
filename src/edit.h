/*
 * edit — hand edits of a plan and their history: move a stage boundary by a layer, move
 * a stage to another device, move an op earlier or later in its device's order,
 * regenerate the order by the adaptive policy, or take over another plan's partition,
 * placement and order (a baseline or a tuner step). Every edit can be undone and redone
 * without limit.
 *
 * An edit only keeps the plan well formed (every op listed once, on the device of its
 * stage); whether the result runs, and how fast, is the simulator's answer. The history
 * keeps whole snapshots of the parts an edit may change (stages, order, name): plans are
 * small next to the memory of a login node, and a snapshot cannot get out of step.
 */
#ifndef OCTO_EDIT_H
#define OCTO_EDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "plan.h"

enum edit_kind {
	EDIT_BOUNDARY,   /* stage: the boundary after it; delta: +1 takes a layer from the next stage */
	EDIT_PLACE,      /* stage moves to device */
	EDIT_MOVE_OP,    /* device, pos (index in its list), delta: -1 earlier, +1 later */
	EDIT_REORDER,    /* every device's order by the adaptive policy */
	EDIT_REPLACE,    /* stages, order and name from `with` (same model, cluster, microbatches) */
};

struct edit {
	enum edit_kind kind;
	int stage;
	int device;
	int pos;
	int delta;
	const struct plan *with;
	const char *label;       /* REPLACE: what it is, for the history ("zb-h1 baseline") */
	const double *times;     /* PLACE: start time per op (sim_op_index) from the last run; the
	                          * stage's ops merge into the new device's list by it, which keeps
	                          * a runnable plan runnable. NULL: by relative position */
};

/* The parts of a plan an edit may change. */
struct plan_snap {
	int nstages;
	struct stage *stages;
	bool split_backward;
	enum plan_comm comm;
	int *order_start;
	struct action *order;
	char *name;
	long id;
	char what[160];          /* the edit that led from this state to the next */
};

struct edit_hist {
	struct plan_snap *undo;
	int nundo, undo_cap;
	struct plan_snap *redo;
	int nredo, redo_cap;
	long cur_id;             /* identifies the plan's current state (see edit_state) */
	long next_id;
};

void edit_hist_init(struct edit_hist *h);
void edit_hist_release(struct edit_hist *h);

/* Applies ed to p. On success the previous state goes on the undo stack, the redo stack
 * is cleared and what (n bytes) says in words what changed. On failure p is unchanged
 * and e says why (ERR_INPUT: the edit does not apply, e.g. a stage would become empty). */
int edit_apply(struct edit_hist *h, struct plan *p, const struct edit *ed, char *what, size_t n,
               struct err *e);
/* Steps back (forward); what receives the edit undone (redone). -1 when there is none. */
int edit_undo(struct edit_hist *h, struct plan *p, char *what, size_t n);
int edit_redo(struct edit_hist *h, struct plan *p, char *what, size_t n);

/* A number naming the plan's current state: equal numbers mean equal plans, so a file
 * is unmodified while the state is the one it was saved in. */
static inline long edit_state(const struct edit_hist *h)
{
	return h->cur_id;
}

#endif
