/*
 * timeline — what happened, or is predicted to happen, in one iteration
 * (`octopipe.timeline/1`): per device the ordered op intervals and memory samples, the
 * transfers between devices, and the metrics. The simulator predicts one, the executor
 * measures one, the TUI draws either, calibration compares them.
 */
#ifndef OCTO_TIMELINE_H
#define OCTO_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "action.h"
#include "err.h"
#include "metrics.h"

#define TIMELINE_FORMAT "octopipe.timeline/1"

struct tl_op {
	double start_ms;
	double end_ms;
	int32_t stage;
	int32_t mb;
	uint8_t kind;         /* enum op_kind */
};

struct tl_mem {
	double t_ms;
	uint64_t bytes;
};

struct tl_device {
	int nops;
	struct tl_op *ops;    /* ordered by start, not overlapping */
	uint64_t peak_mem_bytes;
	int nmem;
	struct tl_mem *mem;   /* samples ordered by time */
};

enum tl_xfer_kind { XFER_ACT = 0, XFER_GRAD = 1 };

struct tl_xfer {
	int src;
	int dst;
	int32_t stage;        /* the producing stage */
	int32_t mb;
	uint8_t kind;         /* enum tl_xfer_kind */
	double start_ms;
	double end_ms;
	uint64_t bytes;
};

struct timeline {
	char *source;         /* "sim", "emu" or "cuda" */
	char *plan_ref;       /* optional: the plan it belongs to */
	int ndevices;
	struct tl_device *dev;
	long nxfers;
	struct tl_xfer *xfers;
	bool has_metrics;
	struct metrics metrics;
	cJSON *extra;         /* comments, and "not_run" of a measured timeline */
};

int timeline_from_json(struct timeline *t, const cJSON *root, const char *file, struct err *e);
int timeline_load(struct timeline *t, const char *path, struct err *e);
cJSON *timeline_to_json(const struct timeline *t);
int timeline_save(const struct timeline *t, const char *path, struct err *e);
void timeline_release(struct timeline *t);
/* Whether ref can be the "plan" of a timeline that timeline_load reads back: UTF-8 text
 * without control characters, at most JV_STRING_MAX bytes (a file name that is not would
 * be written as U+FFFD or refused, naming no file). */
bool timeline_plan_ref_ok(const char *ref);

long timeline_total_ops(const struct timeline *t);
/* Latest end time over ops and transfers. */
double timeline_end_ms(const struct timeline *t);

#endif
