/*
 * tune_partition_int — what the partition phase's files share (tune_partition.c, the
 * searches; tune_partition_bb.c, the branch and bound): the prefix sums of a layer table
 * and the objective of a device-level partition. Private to them.
 */
#ifndef OCTO_TUNE_PARTITION_INT_H
#define OCTO_TUNE_PARTITION_INT_H

#include <stdbool.h>

#include "tune_partition.h"

#define BB_NODES 50000L        /* the branch and bound's default node budget */

struct prefix {
	int L;
	double *c, *b, *f;     /* prefix sums of cost, bytes and forward time, L + 1 entries */
	/* with the wait for the first backward (in->icost): the forward and input-gradient
	 * times unscaled (L + 1 entries), and per device scratch for the wait */
	double *fr, *ir;
	double *acc, *fav, *wait;
	int *last;
};

/* Device loads over weights: the largest ratio (worst), the sum of squares (sq), and
 * whether every device's static bytes fit. load and bytes are ndevices doubles of scratch. */
void tune_part_device_eval(const struct tune_part_in *in, const struct prefix *p, int S, const int *device,
                           const int *first, double *load, double *bytes, double *worst, double *sq, bool *fit);

/* Improves first (whose objective is incumbent) by branch and bound within max_nodes
 * nodes; returns the objective (NAN out of host memory). */
double tune_part_bb(const struct tune_part_in *in, const struct prefix *p, int S, const int *device, int *first,
                    double incumbent, long max_nodes);

#endif
