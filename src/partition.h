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

/* Megatron's account_for_embedding/loss_in_pipeline_split: the embedding and the loss count
 * as one layer each, so the first and last stages get one real layer fewer. */
int partition_megatron(const struct model *m, int nstages, int *first, struct err *e);

/* By name, as the command line spells it: "uniform" (also for NULL), "balanced",
 * "megatron", or explicit counts like "7,7,6,6". */
int partition_by_name(const struct model *m, const char *how, int nstages, int *first, struct err *e);

/* Largest stage cost of a partition (F + B + W per microbatch, speed 1). */
double partition_max_cost(const struct model *m, int nstages, const int *first);

#endif
