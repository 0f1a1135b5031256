/*
 * layout_none — why a layout search found no layout at all: the degrees held fixed, and
 * where that is the reason, the pipeline's depth (a stage holds a layer at least and the
 * data-parallel replicas must split the batch) or a table that only its own TP degree can
 * price. One clear line for the user instead of the last candidate's complaint.
 */
#ifndef OCTOPIPE_LAYOUT_NONE_H
#define OCTOPIPE_LAYOUT_NONE_H

#include "cluster.h"
#include "err.h"
#include "layout_search.h"
#include "model.h"

/* No factorisation meets the degrees k holds fixed: says which they were, the global
 * batch, and when every TP degree allowed leaves more stages than layers, that. -1. */
int layout_none_degrees(const struct model *m, const struct cluster *c, const struct layout_constraints *k,
                        struct err *e);

/* Every layout was at a TP degree m's table (no architecture) cannot be priced at: where its
 * own degree leaves more stages than layers, says so and what to change; else *unpriced
 * (the pricing error met last) is the answer. -1. */
int layout_none_unpriced(const struct model *m, const struct cluster *c, const struct layout_constraints *k,
                         const struct err *unpriced, struct err *e);

#endif
