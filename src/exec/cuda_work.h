/*
 * cuda_work — a kernel of given FLOPs and bytes (cuda_work.cu, built by nvcc): what the
 * cuda backend launches for a kernel-list entry that is not a GEMM.
 */
#ifndef OCTO_EXEC_CUDA_WORK_H
#define OCTO_EXEC_CUDA_WORK_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues on s the work of `bytes` of HBM traffic (each float of buf read and written
 * once, in passes of at most cap bytes) and `flops` of fused multiply-adds spread over
 * them; *launches gets how many kernels that took. 0, or a cudaError_t. */
int cuda_work(cudaStream_t s, void *buf, size_t cap, double bytes, double flops, int *launches);

#ifdef __cplusplus
}
#endif

#endif
