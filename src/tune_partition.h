/*
 * tune_partition — the tuner's partition phase: contiguous layer ranges for a given
 * number of stages and a given placement, balanced by what each device can take.
 *
 * Two levels. tune_partition_minmax() is exact for per-stage capacities: it minimises the
 * largest cost(stage) / cap(stage) over every contiguous partition, with each stage's
 * static memory within its share of its device, by dynamic programming over layer prefixes
 * (then, among the optimal partitions, the one with the smallest sum of squared ratios).
 * tune_partition_devices() is what the tuner wants: the largest load(device) / weight(device)
 * where a device sums several stages. It searches how each device's weight is split among
 * its stages (the exact stage-level program is run for every split it tries, and an optimal
 * split makes it exact), moves layers along chains of boundaries between any two devices
 * while that still lowers the objective, and then proves or improves the result by branch
 * and bound over the boundaries (exact whenever that finishes within its node budget).
 */
#ifndef OCTO_TUNE_PARTITION_H
#define OCTO_TUNE_PARTITION_H

#include <stdbool.h>

/* The inputs: per layer its cost (F + B + W per microbatch at speed 1) and its static
 * bytes (0 when unknown); per device a weight (the load it should take relative to the
 * others: its speed, less the share of the iteration it must idle anyway) and its usable
 * memory (<= 0: no limit). The arrays belong to the caller. */
struct tune_part_in {
	int nlayers;
	const double *cost;
	const double *bytes;
	/* Optional (NULL: none): per layer its forward time. A device cannot start before the
	 * first microbatch's forward has reached its first stage, so fill x the forward time
	 * of the layers before that stage counts in its load (fill = 1 / microbatches turns
	 * load x microbatches + that wait into one per-microbatch figure). */
	const double *fcost;
	/* Optional (NULL: the wait above only): per layer its input-gradient time (I, or the
	 * whole backward when it is not split). With it, a device's load also counts its wait
	 * for its first backward: until the first microbatch has run forward to the end and
	 * its gradient has come back to the device's last stage, the device can only run the
	 * forwards whose inputs have arrived (see tune_partition_wait). Needs fcost. */
	const double *icost;
	double fill;
	int ndevices;
	const double *weight;
	const double *mem;
	int kicks;          /* perturbations of the local search past its first optimum
	                     * (0: as many as a fixed amount of work allows; < 0: none) */
	long nodes;         /* branch-and-bound nodes after it (0: the default, 50000) */
	double deadline;    /* clock_now_s() past which the local search, its kicks and the
	                     * branch and bound stop with the best so far (0: none; the tuner's
	                     * time budget, so a search of thousands of layers over hundreds of
	                     * devices cannot overrun it) */
};

/* Whether in's deadline has passed (checked every few hundred evaluations). */
bool tune_part_late(const struct tune_part_in *in);

/* Boundaries first[0..S] (stage s holds layers first[s] .. first[s+1]-1, none empty) that
 * minimise max_s cost(s) / cap[s], subject to bytes(s) <= mem[s] where mem is given (mem[s]
 * <= 0: no limit); ties go to the smallest sum of squared ratios. Returns the optimum, or
 * INFINITY (first untouched) when no partition fits or S > nlayers.
 * Every function here returns NAN when it runs out of host memory. */
double tune_partition_minmax(const struct tune_part_in *in, int S, const double *cap, const double *mem,
                             int *first);

/* A device's unavoidable wait in ms before its work (wait[d] for every device, the
 * caller's ndevices doubles): the longer of its wait for the first microbatch's forward
 * to reach its first stage (fill) and its wait for the first backward less the forwards it
 * can run before that (the k-th microbatch taken to reach stage s after fill(s) + (k-1)
 * times the largest forward time per microbatch any one device spends on stages up to s).
 * An estimate (exact for one stage per device with equal stages: ZB-H1's bubble), with
 * fill x microbatches / in->fill the same as the load's. Needs fcost and icost; -1 when out
 * of host memory. */
int tune_partition_wait(const struct tune_part_in *in, int S, const int *device, const int *first, double *wait);

/* The largest load(d) / weight(d) of a partition, device[s] being stage s's device; a
 * device's load includes its wait for the pipeline to fill (see fcost). */
double tune_partition_objective(const struct tune_part_in *in, int S, const int *device, const int *first);

/* Boundaries for S stages placed on device[0..S-1] that minimise the largest
 * load(d) / weight(d) (static memory within each device), written to first. Returns the
 * objective reached, or INFINITY (first untouched) when nothing fits. */
double tune_partition_devices(const struct tune_part_in *in, int S, const int *device, int *first);

/* Moves layers between devices along chains of boundaries (every boundary from one stage
 * to another shifts by one, so the stages between keep their sizes) while the largest
 * load(d) / weight(d) drops, or stays and the sum of squares drops; memory must stay
 * within each device. Returns the objective reached. */
double tune_partition_refine(const struct tune_part_in *in, int S, const int *device, int *first);

#endif
