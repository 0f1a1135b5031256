/*
 * kplan — the kernel plan: what the cuda backend launches for each op of a plan, known
 * without a GPU, so that `octopipe run --backend cuda --dry-run` can list it and tests can
 * check it everywhere.
 *
 * Today every op runs a fitted proxy: one bf16 GEMM with the activation's shape (tokens x
 * hidden, the hidden size read from the stage's out_bytes) whose columns give the FLOPs
 * the op's predicted time represents at an assumed throughput (the cluster's peak x its
 * GEMM efficiency, or --gemm-tflops), repeated beyond KPLAN_NCOLS_MAX columns. On a GPU
 * the backend then times each proxy and refits its columns (cuda_proxy.c).
 */
#ifndef OCTO_EXEC_KPLAN_H
#define OCTO_EXEC_KPLAN_H

#include <stdint.h>

#include "err.h"
#include "plan.h"

#define KPLAN_NCOLS_MAX 8192   /* a longer proxy GEMM is repeated instead of widened */

/* A proxy GEMM: m x k times k x n, reps times (reps 0: the op has no work). */
struct kplan_gemm {
	int m, k, n, reps;
	double ms;                 /* the predicted time it stands for */
};

/* Columns and repetitions of an m x k proxy so that it does `flops` of work. */
void kplan_fit_columns(struct kplan_gemm *g, double flops);
/* The proxy of an op whose predicted time is ms at tflops, for tokens x out_bytes activations. */
struct kplan_gemm kplan_proxy(double ms, double tflops, long tokens, uint64_t out_bytes);
/* The proxy of stage s's op slot k (op_kind_slot) on its device, sized at gemm_tflops
 * (0: the cluster's peak x GEMM efficiency of the pass). */
struct kplan_gemm kplan_stage_proxy(const struct plan *p, int s, int k, double gemm_tflops);
/* The throughput stage proxies of slot k are sized for. */
double kplan_tflops(const struct plan *p, int k, double gemm_tflops);
/* FLOPs and HBM bytes (bf16 operands and result) of all of a proxy's repetitions. */
double kplan_gemm_flops(const struct kplan_gemm *g);
double kplan_gemm_bytes(const struct kplan_gemm *g);

#endif
