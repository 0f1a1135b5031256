/*
 * cuda_work — the cuda backend's hand-written kernels (built by nvcc; see cuda_work.h).
 *
 * octo_stream, octo_work: a kernel of given FLOPs and HBM bytes, for the entries of a
 * layer's kernel list that are neither GEMMs nor attention cores. The memory class (no
 * FLOPs: norms, rope, activations, gathers, the loss) is octo_stream: half its bytes
 * loaded from the buffer's first half, 16 at a time, half stored into its second half,
 * again from the start when the bytes exceed it, a whole sweep later. The FLOP classes (the scan; the SSD's
 * FLOPs run as a GEMM, cuda_kernels.c) are octo_work: each float read, put through its
 * share of fused multiply-adds on the CUDA cores, and written to the other half. Reading
 * one part and writing another is what keeps the loads and stores in the compiled kernel
 * (a value stored back where it was loaded from is no traffic to the compiler: the
 * earlier kernel's 0-FLOP path compiled to an empty loop). In one launch each, so that
 * what the GPU measures is its own time for that traffic and arithmetic, plus the one
 * launch the cost model charges.
 *
 * octo_opfill: the operands' random bf16 values (opfill.h).
 *
 * octo_softmax: the masked row softmax between an attention core's QK^T and PV GEMMs
 * (cuda_kernels.c), one block of threads per row: a max, a sum of exponentials, a write.
 *
 * octo_fill, octo_xsum: a transfer's data and its check (cuda_chan.c). The sender's GPU
 * fills the whole transfer after the header the host wrote with the tag's stream and adds
 * up the checksum of all of it into the header; the receiver's GPU adds up the checksum
 * of everything that arrived. Both are xsum.h's, the host's own: each thread takes whole
 * words, adds its terms, a warp adds its threads' and one atomic add per warp makes the
 * sum (addition mod 2^64 does not care in which order).
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stddef.h>

#include "cuda_work.h"
#include "kmask.h"
#include "kvisit.h"
#include "opfill.h"
#include "xsum.h"

/* The FLOP classes: total element visits over chunk floats of src (element i % chunk),
 * each read, put through fmas fused multiply-adds and written to dst (another part of
 * the buffer, so no load or store can be optimized away whatever fmas is), pass after
 * pass over the chunk in one launch, no modulo per element. */
__global__ void octo_work_kernel(const float *src, float *dst, size_t total, size_t chunk, int fmas)
{
	size_t stride = (size_t)gridDim.x * blockDim.x, first = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	for (size_t base = 0; base < total; base += chunk) {
		size_t n = total - base < chunk ? total - base : chunk;

		for (size_t i = first; i < n; i += stride) {
			float v = src[i];

			for (int j = 0; j < fmas; j++)
				v = fmaf(v, 0.9999f, 1e-7f);
			dst[i] = v;
		}
	}
}

/* The memory class (norms, rope, activations, gathers, scatters, the loss): total 16-byte
 * visits, each a load from src and a store of a function of it to dst, visit i at element
 * i % chunk: half the kernel's bytes read, half written. Each block takes a contiguous run
 * of visits (kvisit.h), so the launch sweeps the chunk once, then again: a revisited
 * element was last touched a whole sweep (the chunk, far larger than L2) earlier and comes
 * from HBM. (A grid-stride loop over the passes had each thread revisit its own elements
 * at once, from L2: on an H200 a 2 GiB kernel over a 512 MiB chunk read 6.2 TB/s; fresh
 * memory streams at 4.1-4.2.) */
__global__ void octo_stream_kernel(const float4 *src, float4 *dst, size_t total, size_t chunk)
{
	size_t begin, end, j, step = blockDim.x % chunk;

	kvisit_range(total, gridDim.x, blockIdx.x, &begin, &end);
	if (begin + threadIdx.x >= end)
		return;
	j = (begin + threadIdx.x) % chunk;
	for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
		float4 v = src[j];

		v.x = fmaf(v.x, 0.5f, 0.25f);
		v.y = fmaf(v.y, 0.5f, 0.25f);
		v.z = fmaf(v.z, 0.5f, 0.25f);
		v.w = fmaf(v.w, 0.5f, 0.25f);
		dst[j] = v;
		j = kvisit_next(j, step, chunk);
	}
}

#define FMAS_MAX 4096  /* per element visit; more work makes more visits */
#define WORK_THREADS 256

static unsigned work_blocks(size_t elems)
{
	size_t b = (elems + WORK_THREADS - 1) / WORK_THREADS;

	return (unsigned)(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

extern "C" int cuda_work(cudaStream_t s, void *buf, size_t cap, double bytes, double flops, int *launches)
{
	/* the buffer's first half is read, its second half written */
	size_t half = cap / 2 / 16 * 16, chunk = half / sizeof(float);
	size_t slice = chunk < ((size_t)1 << 20) ? chunk : ((size_t)1 << 20);
	const char *src = (const char *)buf;
	char *dst = (char *)buf + half;
	double elems, per, passes = 1, total;
	size_t n, mod;
	int fmas;

	*launches = 0;
	if (half < 16)
		return 0;
	if (flops <= 0) {   /* memory class: bytes / 2 read and bytes / 2 written, 16 at a time */
		n = (size_t)(bytes / 32);
		if (n < 1)
			return 0;
		mod = half / 16 < n ? half / 16 : n;
		octo_stream_kernel<<<work_blocks(mod), WORK_THREADS, 0, s>>>((const float4 *)src, (float4 *)dst, n, mod);
		*launches = 1;
		return (int)cudaGetLastError();
	}
	/* elements: 8 bytes of traffic each (read and written); FLOP-only work runs over a
	 * slice of the buffer that stays in cache */
	elems = bytes > 0 ? bytes / 8 : (double)slice;
	per = elems > 0 ? flops / (2 * elems) : 0;
	if (per > FMAS_MAX) {
		fmas = FMAS_MAX;
		passes = ceil(per / FMAS_MAX);
	} else {
		fmas = (int)(per + 0.5);
	}
	total = elems * passes;
	if (total < 1)
		return 0;
	/* one launch, as the cost model charges it: a work larger than the buffer visits it again */
	n = (size_t)total;
	mod = bytes > 0 ? chunk : slice;
	if (mod > n)
		mod = n;
	octo_work_kernel<<<work_blocks(mod), WORK_THREADS, 0, s>>>((const float *)src, (float *)dst, n, mod, fmas);
	*launches = 1;
	return (int)cudaGetLastError();
}

/* Operand fill: element i of the bf16 stream of seed (opfill.h), two per thread visit. */
__global__ void octo_opfill_kernel(uint16_t *p, size_t n, uint64_t seed)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride)
		p[i] = opfill_bf16(seed, i);
}

extern "C" int cuda_opfill(cudaStream_t s, void *buf, size_t bytes, uint64_t seed)
{
	size_t n = bytes / 2;

	if (n == 0)
		return 0;
	octo_opfill_kernel<<<work_blocks(n), WORK_THREADS, 0, s>>>((uint16_t *)buf, n, seed);
	return (int)cudaGetLastError();
}

#define SOFTMAX_THREADS 256

/* The sum (or, with take_max, the maximum) of v over the block's threads, in every thread. */
__device__ static float block_reduce(float v, bool take_max)
{
	__shared__ float part[SOFTMAX_THREADS / 32];
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

	for (int o = 16; o > 0; o >>= 1) {
		float w = __shfl_xor_sync(0xffffffffu, v, o);

		v = take_max ? fmaxf(v, w) : v + w;
	}
	if (lane == 0)
		part[warp] = v;
	__syncthreads();
	v = lane < SOFTMAX_THREADS / 32 ? part[lane] : (take_max ? -INFINITY : 0.0f);
	for (int o = 16; o > 0; o >>= 1) {
		float w = __shfl_xor_sync(0xffffffffu, v, o);

		v = take_max ? fmaxf(v, w) : v + w;
	}
	__syncthreads();   /* part is reused by the next reduction */
	return v;
}

__global__ void octo_softmax_kernel(__nv_bfloat16 *s, long rows, long keys, long ld, long q0, long k0, long window,
                                    int backward)
{
	__nv_bfloat16 *row = s + (size_t)blockIdx.x * ld;
	long q = q0 + (long)(blockIdx.x % rows);
	long lo, hi;   /* the keys of this row that its query attends to */
	float a = backward ? 0.0f : -INFINITY, sum = 0;

	kmask_row(q, k0, keys, window, &lo, &hi);
	for (long j = lo + threadIdx.x; j < hi; j += blockDim.x)
		a = backward ? a + __bfloat162float(row[j]) * __bfloat162float(row[j]) : fmaxf(a, __bfloat162float(row[j]));
	a = block_reduce(a, !backward);
	if (!backward) {
		for (long j = lo + threadIdx.x; j < hi; j += blockDim.x)
			sum += __expf(__bfloat162float(row[j]) - a);
		sum = block_reduce(sum, false);
	}
	for (long j = threadIdx.x; j < keys; j += blockDim.x) {
		float y = __bfloat162float(row[j]);

		if (j < lo || j >= hi)
			y = 0;
		else
			y = backward ? y * (y - a) : __expf(y - a) / sum;
		row[j] = __float2bfloat16(y);
	}
}

extern "C" int cuda_softmax(cudaStream_t s, void *scores, long batch, long rows, long keys, long ld, long q0,
                            long k0, long window, int backward)
{
	long n = batch * rows;

	if (n <= 0 || keys <= 0)
		return 0;
	if (n > 2147483647L)
		return (int)cudaErrorInvalidConfiguration;
	octo_softmax_kernel<<<(unsigned)n, SOFTMAX_THREADS, 0, s>>>((__nv_bfloat16 *)scores, rows, keys, ld, q0, k0,
	                                                           window, backward);
	return (int)cudaGetLastError();
}

#define XSUM_THREADS 256
#define XSUM_BLOCKS_MAX 4096

/* Adds every thread's v into *sum: the warp's first, then one atomic per warp. */
__device__ static void add_sum(uint64_t v, unsigned long long *sum)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(sum, (unsigned long long)v);
}

__global__ void octo_fill_kernel(unsigned char *p, size_t len, uint64_t seed)
{
	size_t stride = (size_t)gridDim.x * blockDim.x, words = xsum_words(len);
	uint64_t acc = 0;

	/* the header the host wrote, then the stream (as payload_fill on the host) */
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += stride)
		acc += i < XSUM_HEADER_WORDS ? xsum_term(i, xsum_word(p, len, i)) : xsum_fill_word(p, len, seed, i);
	add_sum(acc, (unsigned long long *)(p + 8 * XSUM_SKIP));
}

__global__ void octo_xsum_kernel(const unsigned char *p, size_t len, unsigned long long *sum)
{
	size_t stride = (size_t)gridDim.x * blockDim.x, words = xsum_words(len);
	uint64_t acc = 0;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += stride)
		acc += xsum_term(i, xsum_word(p, len, i));
	add_sum(acc, sum);
}

__global__ void octo_flip_kernel(unsigned char *p)
{
	*p ^= 0x10;
}

static unsigned xsum_blocks(size_t len)
{
	size_t b = (xsum_words(len) + XSUM_THREADS - 1) / XSUM_THREADS;

	return (unsigned)(b < 1 ? 1 : b > XSUM_BLOCKS_MAX ? XSUM_BLOCKS_MAX : b);
}

extern "C" int cuda_payload_fill(cudaStream_t s, void *buf, size_t len, uint64_t seed)
{
	if (len < 8 * XSUM_HEADER_WORDS)
		return (int)cudaErrorInvalidValue;
	octo_fill_kernel<<<xsum_blocks(len), XSUM_THREADS, 0, s>>>((unsigned char *)buf, len, seed);
	return (int)cudaGetLastError();
}

extern "C" int cuda_xsum(cudaStream_t s, const void *buf, size_t len, void *sum)
{
	cudaError_t r = cudaMemsetAsync(sum, 0, sizeof(uint64_t), s);

	if (r != cudaSuccess)
		return (int)r;
	octo_xsum_kernel<<<xsum_blocks(len), XSUM_THREADS, 0, s>>>((const unsigned char *)buf, len,
	                                                           (unsigned long long *)sum);
	return (int)cudaGetLastError();
}

extern "C" int cuda_flip_byte(cudaStream_t s, void *at)
{
	octo_flip_kernel<<<1, 1, 0, s>>>((unsigned char *)at);
	return (int)cudaGetLastError();
}
