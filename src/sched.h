/*
 * sched — the baseline schedules OctoPipe compares against and starts from: GPipe, 1F1B
 * (PipeDream-flush), Megatron's interleaved 1F1B, zero-bubble ZB-H1 / ZB-H2 / ZB-V,
 * DualPipeV, and OctoPipe's adaptive policy order. Each knows the placement it needs
 * (one stage per device, round-robin chunks, or the V shape) and whether it splits the
 * backward, and writes the per-device order of a plan whose stages are already set.
 */
#ifndef OCTO_SCHED_H
#define OCTO_SCHED_H

#include <stdbool.h>

#include "err.h"
#include "plan.h"

enum sched_kind {
	SCHED_GPIPE, SCHED_1F1B, SCHED_INTERLEAVED, SCHED_ZBH1, SCHED_ZBH2, SCHED_ZBV,
	SCHED_DUALPIPEV, SCHED_ADAPTIVE, SCHED_COUNT
};

const char *sched_name(enum sched_kind k);
/* -1 for an unknown name. */
int sched_from_name(const char *name);
/* "gpipe, 1f1b, ..." for messages and help. */
const char *sched_names(void);

/* Chunks (stages per device) the schedule uses by default: 1, or 2 for interleaved and
 * the V schedules. */
int sched_default_chunks(enum sched_kind k);
bool sched_split_backward(enum sched_kind k);
/* Checks that the schedule can run p devices x v chunks with m microbatches; the
 * message says why not (e.g. Megatron's interleaving needs m to be a multiple of p). */
int sched_check(enum sched_kind k, int p, int v, int m, struct err *e);
/* The device of stage s in the schedule's placement over p devices and v chunks. */
int sched_device_of(enum sched_kind k, int s, int p, int v);

/* Writes plan->order for the plan's stages and placement. Classic schedules (all but
 * adaptive) require their own placement over the plan's devices 0..p-1. */
int sched_order(struct plan *plan, enum sched_kind k, int p, int v, struct err *e);

#endif
