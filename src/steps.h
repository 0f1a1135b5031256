/*
 * steps — recorded tuner steps, octopipe.steps/1 (what `octopipe tune --steps-out` writes
 * and `octopipe tui --steps` shows):
 *
 *   {"format": "octopipe.steps/1", "model": "m", "cluster": "c", "microbatches": 32,
 *    "best_baseline": "adaptive balanced", "best_baseline_ms": 1844.4, "evaluations": 564,
 *    "steps": [{"phase": "start", "what": "...", "before_ms": 1844.4, "after_ms": 1848.1,
 *               "stages": [{"layers": [0, 6], "device": 0}, ...],
 *               "scheduler": {"alternate": true, "defer_arrivals": false,
 *                             "cap_extra": 8, "wcap": 0}}]}
 *
 * A step whose order the scheduling phase has refined also carries it as a plan does,
 * "schedule": [["0F0", "0F1", "0I0", "0W0", ...], ...], one list per device.
 *
 * Steps are of one model on one cluster: the reader checks every step's stages against
 * them (contiguous layer ranges covering the model, devices of the cluster) and that a
 * plan regenerated from a step stays within OCTO_MAX_OPS, so tune_state_plan() can run on
 * any step it accepts. "step" (the step's number, default its place in the list) and
 * "bubble_after" (a fraction; null: unknown) are checked and kept for the report; other
 * fields (move, a, b) are not needed to replay or show a step and are not read; a field the
 * format does not have is refused (one beginning with '_' is a comment). This is the
 * one reader of the format: `edit --adopt`, `report --steps` and the UI refuse a file alike.
 */
#ifndef OCTO_STEPS_H
#define OCTO_STEPS_H

#include <cjson/cJSON.h>

#include "cluster.h"
#include "err.h"
#include "model.h"
#include "plan.h"
#include "tune.h"

#define STEPS_FORMAT "octopipe.steps/1"

struct steps_step {
	int index;                  /* "step": its number as recorded (its place when absent) */
	enum tune_phase phase;
	char *what;                 /* the move in words ("" when absent) */
	double before_ms, after_ms; /* INFINITY: a plan that could not run (null in the file);
	                             * before_ms is after_ms when absent */
	double bubble;              /* "bubble_after", in [0, 1]; 0 when absent, NAN when null */
	struct tune_state state;    /* owned by the step (a caller may take it and zero it) */
};

struct steps {
	char *model;                /* the model's name as recorded, or NULL */
	char *cluster;              /* the cluster's name as recorded, or NULL */
	int microbatches;           /* the file's, or the caller's when it does not say */
	char *best_baseline;        /* or NULL */
	double best_baseline_ms;
	long evaluations;
	int n;
	struct steps_step *steps;
};

/* Reads steps of model m on cluster c from root (file names it in messages); microbatches
 * (>= 1) is what the steps are replayed with when the file does not say. Returns 0, or -1
 * with "FILE: JSON.PATH: problem" in e. Release with steps_release() either way. */
int steps_from_json(struct steps *s, const cJSON *root, const char *file, const struct model *m,
                    const struct cluster *c, int microbatches, struct err *e);
/* json_load_file + steps_from_json. */
int steps_load(struct steps *s, const char *path, const struct model *m, const struct cluster *c,
               int microbatches, struct err *e);
void steps_release(struct steps *s);
/* The model and cluster the steps of plan p's tuning are replayed on: p's own, with a
 * recompute mode every stage shares folded into the layer table (the tuner builds plans
 * without per-stage recompute, so its candidates cost what an adopted step will). */
int steps_model_of(const struct plan *p, struct model *m, struct cluster *c, struct err *e);

#endif
