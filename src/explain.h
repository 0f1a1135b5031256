/*
 * explain — why a simulated op started when it did: the op it waited for (the previous
 * op on its device, or the input that arrived last) and the idle time that wait cost,
 * and the critical path of the iteration (from the op that ends last, follow what each
 * op waited for back to the start). The TUI's details panel and its critical-path jump.
 *
 * Works on a struct sim after sim_run() of the same plan (times are read from it).
 */
#ifndef OCTO_EXPLAIN_H
#define OCTO_EXPLAIN_H

#include "action.h"
#include "plan.h"
#include "sim.h"

enum wait_kind {
	WAIT_NONE,     /* started at time 0 */
	WAIT_DEVICE,   /* started when the op before it on its device ended */
	WAIT_DATA,     /* started when an input (from `on`) arrived */
};

struct op_wait {
	enum wait_kind kind;
	struct action on;      /* the op waited for (WAIT_DEVICE, WAIT_DATA) */
	int device;            /* its device */
	bool transfer;         /* the input came from another device */
	double until_ms;       /* when the wait ended */
	double idle_ms;        /* device idle right before the op (bubble it caused) */
};

/* Fills pos (plan_total_ops(p) entries): pos[sim_op_index(...)] = index into p->order. */
void explain_positions(const struct plan *p, long *pos);

/* Why the op a (in plan p, simulated by s, positions pos) started when it did. */
void explain_wait(const struct sim *s, const struct plan *p, const long *pos, const struct action *a,
                  struct op_wait *w);

/* The critical path as indices into p->order, from the last op back to the first; at
 * most cap entries. Returns how many were written. */
long explain_critical_path(const struct sim *s, const struct plan *p, const long *pos, long *path, long cap);

#endif
