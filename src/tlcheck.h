/*
 * tlcheck — does a timeline keep its plan's rules? The executor's backends promise that
 * a run follows the plan; this is how a run proves it afterwards, from the times it
 * measured (and how the tests prove the simulator does).
 *
 * Checked, per iteration timeline t of plan p:
 *   - every op of the plan appears exactly once, on its stage's device, and each device
 *     ran its ops in the plan's order;
 *   - no two ops of a device overlap (an F&B pair of the plan may);
 *   - every dependency holds: F(s,m) after F(s-1,m), I/B(s,m) after F(s,m) and after
 *     I/B(s+1,m), W(s,m) after I(s,m). Across devices the data travels: the transfer
 *     must start after its producer ended and end before its consumer started, each
 *     compared on one side's clock, so GPUs need not share one.
 * slack_ms is the tolerance of every comparison (clock resolution and skew).
 */
#ifndef OCTO_TLCHECK_H
#define OCTO_TLCHECK_H

#include <stdbool.h>

#include "err.h"
#include "plan.h"
#include "timeline.h"

/* GPU event times are exact to about a microsecond on one GPU; across GPUs the clocks
 * are aligned by host-side reference events, which allows a little more. */
#define TLCHECK_GPU_SLACK_MS 0.05

/* Returns the number of violations (0: the timeline keeps every rule); the first one is
 * described in e as one line. -1 on out of host memory. */
long timeline_check_plan(const struct plan *p, const struct timeline *t, double slack_ms, struct err *e);

/* Whether a and b give the same work: microbatches, backward split, every stage's layers,
 * device and recompute, and every device's order. */
bool plan_same_work(const struct plan *a, const struct plan *b);

/* The plan a timeline names ("plan", as seen from the timeline file tl_path) against p,
 * read from plan_path, which the caller is about to pair it with: two plans of one stage
 * count and placement give timelines of one shape, so only the plan it ran tells a run of
 * another partition apart. -1 (ERR_INPUT in e, one line) when the named plan loads and
 * gives other work than p; 0 when it is p's file, gives p's work, or cannot be read (moved,
 * not a regular file: nothing to compare, the shape checks still apply). */
int timeline_check_named_plan(const struct timeline *t, const char *tl_path, const struct plan *p,
                              const char *plan_path, struct err *e);

#endif
