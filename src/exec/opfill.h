/*
 * opfill — the values every operand of the cuda backend holds (proxy and kernel-list
 * GEMMs, attention cores, the other kernels' buffer, calibrate --gpu's benches), defined
 * once for the host and the GPU (cuda_work.cu's fill kernel), so that the statistics the
 * unit tests pin on the host are those of what the GPU multiplies.
 *
 * Why not zeros: tensor cores run measurably faster on zeros (894 against 788 TFLOP/s
 * recorded on an H200), so a run on zeroed operands would be about 13% optimistic.
 *
 * Element i of the stream of seed is a bf16 uniform in [-1, 1): a counter-based hash
 * (xsum.h's splitmix64 finalizer of seed and i) gives 24 random bits u, the value is
 * u / 2^23 - 1 (exact in fp32), rounded towards zero to bf16 (its high 16 bits), so it
 * stays in [-1, 1) and is symmetric about 0. Any thread computes its own element.
 */
#ifndef OCTO_EXEC_OPFILL_H
#define OCTO_EXEC_OPFILL_H

#include <stdint.h>
#include <string.h>

#include "xsum.h"

#ifdef __CUDACC__
#define OPFILL_FN static inline __host__ __device__
#else
#define OPFILL_FN static inline
#endif

/* Seeds of the operands (any distinct values: each buffer its own stream). */
enum { OPFILL_X = 1, OPFILL_W, OPFILL_Y, OPFILL_WORK, OPFILL_CORE };

/* The fp32 value of element i of the stream of seed, in [-1, 1) before rounding. */
OPFILL_FN float opfill_value(uint64_t seed, uint64_t i)
{
	uint64_t h = xsum_mix(seed * XSUM_K1 + (i + 1) * XSUM_PHI);

	return (float)(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

/* Element i as bf16 bits: the fp32 value's high half (rounded towards zero). */
OPFILL_FN uint16_t opfill_bf16(uint64_t seed, uint64_t i)
{
	float v = opfill_value(seed, i);
	uint32_t b;

	memcpy(&b, &v, sizeof(b));
	return (uint16_t)(b >> 16);
}

/* The fp32 value of bf16 bits (the host's view of an element, for the tests). */
static inline float opfill_bf16_to_float(uint16_t h)
{
	uint32_t b = (uint32_t)h << 16;
	float v;

	memcpy(&v, &b, sizeof(v));
	return v;
}

#endif
