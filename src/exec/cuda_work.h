/*
 * cuda_work — the cuda backend's hand-written kernels (cuda_work.cu, built by nvcc): a
 * kernel of given FLOPs and bytes, for a kernel-list entry that is neither a GEMM nor an
 * attention core, the masked softmax between an attention core's GEMMs, and the fill and
 * checksum of every transfer's data.
 */
#ifndef OCTO_EXEC_CUDA_WORK_H
#define OCTO_EXEC_CUDA_WORK_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues on s, as one kernel, the work of `bytes` of HBM traffic (half read from the
 * first half of the cap bytes at buf, half written to the second, visited again when the
 * bytes exceed them) and `flops` of fused multiply-adds spread over them (none: the memory
 * class's streaming kernel); *launches gets 1 (0: nothing to do). 0, or a cudaError_t. */
int cuda_work(cudaStream_t s, void *buf, size_t cap, double bytes, double flops, int *launches);

/* Enqueues on s the softmax of batch x rows rows of keys bf16 scores each (row r of a
 * batch is query q0 + r; key j is key k0 + j), masked causally and, with window > 0, to
 * the last window keys: masked scores become 0. Row r of the scores starts at element r ld
 * (ld >= keys, kplan_tile.ld). backward: the softmax's backward, a row
 * y becoming y (y - <y, y>) (the scores stand for both the probabilities and their
 * gradient: the traffic and arithmetic are the point). 0, or a cudaError_t. */
int cuda_softmax(cudaStream_t s, void *scores, long batch, long rows, long keys, long ld, long q0, long k0,
                 long window, int backward);

/* Enqueues on s the fill of bytes at buf with the bf16 stream of seed (opfill.h). 0, or a
 * cudaError_t. */
int cuda_opfill(cudaStream_t s, void *buf, size_t bytes, uint64_t seed);

/* Enqueues on s the fill of a transfer's len bytes at buf (device memory, 8-byte aligned,
 * len >= 32), whose 32-byte header the host wrote (payload_header: its checksum 0): the
 * stream of seed after the header, and the checksum of all of it (xsum.h) added into the
 * header. 0, or a cudaError_t. */
int cuda_payload_fill(cudaStream_t s, void *buf, size_t len, uint64_t seed);

/* Enqueues on s the checksum (xsum.h) of len bytes at buf into the device word sum
 * (zeroed first). 0, or a cudaError_t. */
int cuda_xsum(cudaStream_t s, const void *buf, size_t len, void *sum);

/* Enqueues on s a flip of one bit of the device byte at (injected corruption). */
int cuda_flip_byte(cudaStream_t s, void *at);

#ifdef __cplusplus
}
#endif

#endif
