/*
 * emu — the executor's emulated backend: one thread per device runs its protocol program
 * (protocol.h) with NCCL's point-to-point semantics — the k-th send from a to b meets the
 * k-th receive posted on b from a, a transfer starts once both sides have issued it and
 * the link is free, and an op waits only for the data it consumes. Threads really block
 * on each other, so a bad order really hangs (and the watchdog reports it) and a dead
 * worker really stops its peers. Every transfer carries tagged, checksummed bytes
 * (payload.h) that the receiver checks, and what an op keeps for its backward is stashed
 * per (stage, microbatch) and checked when I, B or W takes it. An op occupies its device for its cost, on a virtual
 * clock that each worker advances (optionally also sleeping cost x time_scale of wall
 * time), so the measured timeline is exact and comparable with the simulated one.
 */
#ifndef OCTO_EXEC_EMU_H
#define OCTO_EXEC_EMU_H

#include "err.h"
#include "exec/protocol.h"
#include "plan.h"
#include "timeline.h"

/* How an injected failure shows itself. */
enum emu_kill {
	EMU_KILL_FAIL = 0,     /* the worker reports that it died */
	EMU_KILL_HANG = 1,     /* the worker stops answering (a hung process or GPU) */
	EMU_KILL_CRASH = 2,    /* the process dies at once, without a word (MPI ranks only) */
};

struct emu_opts {
	double time_scale;     /* wall ms slept per model ms (0: run as fast as possible) */
	double timeout_s;      /* watchdog: the longest any wait may take with no progress anywhere */
	int kill_device;       /* fault injection: this worker dies ... (-1: none) */
	int kill_after_ops;    /* ... after running this many ops */
	int kill_how;          /* ... this way (enum emu_kill) */
	int misroute_xfer;     /* fault injection: this transfer carries another microbatch's
	                        * output (-1: none) */
	int corrupt_xfer;      /* fault injection: one byte of this transfer flips (-1: none) */
	int iter;              /* the iteration, as the data's tags name it */
	int slow_stage;        /* fault injection: this stage's ops take ... (-1: none) */
	double slow_factor;    /* ... this many times their cost (a device slower than modelled) */
	/* optional: called for every op, from the worker threads (serialised) */
	void (*on_op)(void *ctx, int dev, const struct action *a, double t0_ms, double t1_ms);
	void *ctx;
};

void emu_opts_default(struct emu_opts *o);

/* How long op a takes on device d in both emulators: its stage's cost for the op's slot
 * (stage_ms: plan_stage_ms of every stage, 3 each) over the device's speed, times the
 * injected slow-down of a slow stage. */
double emu_op_ms(const struct plan *p, const double *stage_ms, const struct emu_opts *o, int d,
                 const struct action *a);

/* Runs one iteration; fills the measured timeline (source "emu"). On failure returns -1
 * with e naming the device and the reason (ERR_RUNTIME), after every worker stopped. */
int emu_run(const struct plan *p, const struct exec_program *x, const struct emu_opts *o,
            struct timeline *measured, struct err *e);

#endif
