/*
 * cuda_bench — octopipe calibrate --gpu on the local GPU (octopipe-cuda only): each
 * microbenchmark (calibrate.h) runs its forward kernel, then its backward kernels, with
 * the operands of their true shapes, and gets the median of their times.
 */
#ifndef OCTO_EXEC_CUDA_BENCH_H
#define OCTO_EXEC_CUDA_BENCH_H

#include "calibrate.h"
#include "err.h"

/* Times every bench of b on GPU 0, reps runs each after one warm-up (f_ms, bw_ms; the
 * median run). Fails with "no GPU: why" (ERR_RUNTIME) when there is none, and with the
 * CUDA or cuBLAS call that failed otherwise. *gpu_name gets the GPU's name (static). */
int cuda_bench_run(struct calib_bench *b, int n, int reps, const char **gpu_name, struct err *e);

#endif
