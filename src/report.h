/*
 * report — pictures of plans for people who were not at the terminal: a per-GPU Gantt
 * chart as SVG (`octopipe export svg`), and one self-contained HTML file comparing plans
 * (`octopipe report`): summary, speedups over the baselines, Gantts on one time axis,
 * bubble breakdown, memory over time, the tuner's steps, predicted against measured.
 *
 * Both simulate the plans they are given (the simulator is deterministic, so the same
 * plan always gives the same bytes) and write plain SVG/HTML text: no scripts, nothing
 * fetched, every string that came from a file escaped for XML.
 */
#ifndef OCTO_REPORT_H
#define OCTO_REPORT_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "plan.h"
#include "strbuf.h"
#include "timeline.h"

#define REPORT_DEFAULT_WIDTH 1200
#define REPORT_MIN_WIDTH 300
#define REPORT_MAX_WIDTH 20000

struct report_svg_opts {
	int width_px;            /* 0 = REPORT_DEFAULT_WIDTH; every size scales with it */
	bool critical_path;      /* outline the critical path (explain.h) */
	const char *title;       /* the chart's name; NULL = the plan's name, else "plan" */
};

/* Appends the Gantt chart of plan p as a standalone SVG document to out. measured (may
 * be NULL) is a run of p (octopipe run --timeline-out), drawn under each GPU's row.
 * Returns 0, or -1 with e set: ERR_INPUT when measured is not a run of p, ERR_INFEASIBLE
 * when p deadlocks, ERR_RUNTIME when out of host memory. */
int report_svg(const struct plan *p, const struct timeline *measured, const struct report_svg_opts *o,
               struct strbuf *out, struct err *e);

struct report_input {
	const struct plan *const *plans;  /* nplans plans, at least one */
	const char *const *labels;        /* a name per plan, or NULL (then each plan's name) */
	int nplans;
	const cJSON *steps;               /* an octopipe.steps/1 document, or NULL */
	const char *steps_file;           /* its name in messages ("steps" when NULL) */
	const struct timeline *measured;  /* a run of plans[0], or NULL */
	int width_px;                     /* 0 = REPORT_DEFAULT_WIDTH */
	bool critical_path;
};

/* Appends the HTML report to out. A plan that deadlocks or runs out of device memory is listed
 * as such (not an error). Returns 0, or -1 with e set: ERR_INPUT for bad steps or a
 * measured timeline that is not a run of plans[0], ERR_RUNTIME when out of host memory. */
int report_html(const struct report_input *in, struct strbuf *out, struct err *e);

/* report_html() written atomically to path (fileio_write_atomic). */
int report_write(const char *path, const struct report_input *in, struct err *e);

/* Checks that t can be drawn as a run of p: same devices, and each device ran exactly
 * the ops the plan gives it. ERR_INPUT naming file otherwise. */
int report_check_measured(const struct plan *p, const struct timeline *t, const char *file, struct err *e);

#endif
