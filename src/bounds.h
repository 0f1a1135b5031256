/*
 * bounds — the largest inputs OctoPipe accepts. They are far beyond real pipelines
 * (thousands of GPUs, tens of thousands of microbatches) and keep every count, index and
 * sum inside the integer types used by the simulator and tuner, so validation can promise
 * that nothing downstream overflows.
 */
#ifndef OCTO_BOUNDS_H
#define OCTO_BOUNDS_H

#define OCTO_MAX_LAYERS        100000
#define OCTO_MAX_DEVICES       65536
#define OCTO_MAX_MICROBATCHES  1000000
#define OCTO_MAX_STAGES        OCTO_MAX_LAYERS
/* ops in one plan or timeline: stages x microbatches x 3 */
#define OCTO_MAX_OPS           (1L << 26)
#define OCTO_MAX_TRANSFERS     (1L << 27)
/* one layer's cost in ms (about 11 days): sums over every op stay finite */
#define OCTO_MAX_COST_MS       1e9
/* sequence length and micro-batch size */
#define OCTO_MAX_SEQ_LEN       (1L << 24)
#define OCTO_MAX_MICRO_BATCH   (1L << 20)
/* the sum of a file's byte fields stays below this (2^62) */
#define OCTO_MAX_TOTAL_BYTES   4611686018427387904.0

#endif
