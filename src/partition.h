/*
 * partition — how contiguous layers are grouped into pipeline stages. Every function
 * writes `first[0..nstages]`: stage s holds layers first[s] .. first[s+1]-1, with
 * first[0] = 0 and first[nstages] = nlayers, every stage non-empty.
 */
#ifndef OCTO_PARTITION_H
#define OCTO_PARTITION_H

#include "err.h"
#include "model.h"

/* Equal layer counts (the first stages take one more when it does not divide). */
int partition_uniform(const struct model *m, int nstages, int *first, struct err *e);

/* Minimises the largest stage cost (F + B + W per microbatch): the balanced partition of
 * partition-only tuners, by dynamic programming over prefix sums (exact, O(S * L^2)
 * worst case, O(S * L log L) typically through monotone split points). */
int partition_balanced(const struct model *m, int nstages, int *first, struct err *e);

/* Explicit layer counts, e.g. "7,7,6,6" (must sum to the layer count). */
int partition_counts(const struct model *m, int nstages, const char *counts, int *first, struct err *e);

/* Megatron-LM's split: the decoder layers evenly over the stages, the embedding on the
 * first stage and the output layer with its loss (and MTP modules) on the last, on top
 * of their share. A table whose first entries are "embedding" and whose last are "head"
 * / "mtp" / "loss" (cost-model tables) keeps them out of the count; a measured table that
 * folds them into its first and last layers splits all its entries. With accounted
 * (--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split), the
 * embedding and the loss each take one decoder layer's place on their stage. Megatron
 * wants an even split; any remainder goes to the middle stages first. */
#include <stdbool.h>
int partition_megatron(const struct model *m, int nstages, int *first, bool accounted, struct err *e);

/* By name, as the command line spells it: "uniform" (also for NULL), "balanced",
 * "megatron", "megatron-accounted", or explicit counts like "7,7,6,6". */
int partition_by_name(const struct model *m, const char *how, int nstages, int *first, struct err *e);

/* Largest stage cost of a partition (F + B + W per microbatch, speed 1). */
double partition_max_cost(const struct model *m, int nstages, const int *first);

#endif
