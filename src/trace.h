/*
 * trace — a timeline as Chrome trace / Perfetto JSON (the "traceEvents" format): one
 * track per GPU with ops named like "F s3 mb7" (layer range and timing in args), and one
 * track per directed link for the transfers. Timestamps are real microseconds.
 */
#ifndef OCTO_TRACE_H
#define OCTO_TRACE_H

#include <cjson/cJSON.h>

#include "plan.h"
#include "timeline.h"

/* New trace document (caller cJSON_Delete()s), NULL when out of host memory. p may be NULL
 * (then layer ranges are left out). */
cJSON *trace_from_timeline(const struct timeline *t, const struct plan *p);

#endif
