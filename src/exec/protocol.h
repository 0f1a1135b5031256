/*
 * protocol — what each worker of the executor runs (docs/METHOD.md §4), derived from a plan
 * and its simulated timeline: the device's ops in order, with a send right after every
 * op whose output another device needs, and a receive posted early (as close in time to
 * its send as the simulation says, never after the op that consumes it).
 *
 * An overlapped F&B pair of the plan ("5F3+2I1") runs as the simulator times it: both
 * halves one after the other once both have their inputs (the head waits for its
 * partner's input too), the partner's output sent at its end and the head's at the end
 * of the pair (after a W of the partner's that follows at once).
 *
 * NCCL matches point-to-point operations between two ranks in issue order, so the i-th
 * send from a to b must meet the i-th receive on b from a. exec_check() verifies that
 * for every ordered pair and exec_repair() restores it by moving receives earlier (a
 * receive posted earlier never delays anything), which is what makes any plan that the
 * simulator can run also run on real devices without deadlock.
 */
#ifndef OCTO_EXEC_PROTOCOL_H
#define OCTO_EXEC_PROTOCOL_H

#include <stdint.h>

#include "err.h"
#include "plan.h"
#include "timeline.h"

enum exec_kind { EXEC_COMPUTE = 0, EXEC_SEND = 1, EXEC_RECV = 2 };

struct exec_xfer {
	int src, dst;
	struct action producer;    /* the op whose output travels */
	struct action consumer;    /* the op on dst that needs it */
	uint64_t bytes;
	double send_ms;            /* simulated time the data is ready */
};

struct exec_item {
	uint8_t kind;              /* enum exec_kind */
	struct action op;          /* EXEC_COMPUTE: the op */
	int32_t xfer;              /* EXEC_SEND / EXEC_RECV: index into xfers; EXEC_COMPUTE: the
	                            * transfer the op consumes (its receive comes earlier), or -1 */
	int32_t xfer2;             /* EXEC_COMPUTE, the head of an F&B pair: the transfer its
	                            * partner consumes, which the pair also waits for; else -1 */
};

struct exec_program {
	int ndevices;
	int *start;                /* ndevices + 1: device d runs items[start[d] .. start[d+1]) */
	struct exec_item *items;
	int nxfers;
	struct exec_xfer *xfers;
};

/* Builds the programs of plan p from its simulated timeline t (sim_timeline()). */
int exec_build(const struct plan *p, const struct timeline *t, struct exec_program *x, struct err *e);
/* Number of transfers whose send and receive would be matched with other partners (out
 * of order within their device pair); the first is described in e (one line) when e is
 * given. Linear in the size of the programs. */
int exec_check(const struct exec_program *x, struct err *e);
/* Moves receives earlier until every pair matches; returns how many were moved.
 * O(n log n) in the size of the programs. */
int exec_repair(struct exec_program *x);
/* Every receive before its consumer and every send after its producer (sanity), and every
 * W after its I on the same device: W takes its inputs from a store keyed by (stage,
 * microbatch) that I fills, so Ws may run in any order after their Is, as the simulator
 * allows. Linear in the size of the programs. */
int exec_validate(const struct exec_program *x, struct err *e);
void exec_release(struct exec_program *x);

#endif
