/*
 * layout_json — the one home of a parallel layout's JSON: a plan's "parallel" object
 * {"pp", "tp", "dp", "ep", "zero", "grads", "micro_batch_size"} and a replica cluster's "replica" object (the
 * same degrees without pp, beside its data-parallel link), read with the validating
 * readers (one line naming the file and JSON path) and written canonically (bf16 grads
 * left out, so files written before gradients had a precision stay byte-identical).
 *
 * It depends on the JSON helpers and the struct only, so the cluster and plan readers can
 * use it without depending on each other or on the layout's arithmetic (parallel.c).
 */
#ifndef OCTO_LAYOUT_JSON_H
#define OCTO_LAYOUT_JSON_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "parallel.h"

/* "bf16" or "fp32" */
const char *parallel_grads_name(bool fp32_grads);
/* "bf16" or "fp32" into *fp32_grads; -1 for anything else. */
int parallel_grads_from_name(const char *name, bool *fp32_grads);
/* Reads the optional member "grads" ("bf16", the default, or "fp32") of obj at path. */
int parallel_read_grads(struct jv *v, const cJSON *obj, const char *path, bool *fp32_grads);

/* The degrees of obj (at path) into *l. With pp (a plan's "parallel"): pp required, tp,
 * dp, ep optional (1), zero optional (0), micro_batch_size optional (0: the table's own),
 * no other member. Without (a cluster's
 * "replica"): tp, dp, ep, zero required, pp left as it was, other members the caller's. */
int layout_json_read(struct jv *v, const cJSON *obj, const char *path, bool with_pp, struct parallel *l);
/* Adds l's degrees (pp and a micro-batch size set too when with_pp) and, when fp32,
 * "grads" to obj. */
void layout_json_write(struct jw *w, cJSON *obj, const struct parallel *l, bool with_pp);

#endif
