/*
 * cuda_work — the cuda backend's one hand-written kernel (built by nvcc; see
 * cuda_work.h): a kernel of given FLOPs and HBM bytes, for the entries of a layer's
 * kernel list that are not GEMMs (attention cores, scans, norms, activations, the loss).
 * It streams a buffer once — each float read and written back — and does its share of
 * fused multiply-adds on every element, so that what the GPU measures is its own time for
 * that much memory traffic and arithmetic, whichever bounds it.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stddef.h>

#include "cuda_work.h"

__global__ void octo_work_kernel(float *buf, size_t n, int fmas)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
		float v = buf[i];

		for (int j = 0; j < fmas; j++)
			v = fmaf(v, 0.9999f, 1e-7f);
		buf[i] = v;
	}
}

#define FMAS_MAX 4096  /* per element and pass; more work makes more passes */

extern "C" int cuda_work(cudaStream_t s, void *buf, size_t cap, double bytes, double flops, int *launches)
{
	/* elements: 8 bytes of traffic each (read and written); FLOP-only work runs over a
	 * slice of the buffer that stays in cache */
	size_t chunk = cap / sizeof(float), slice = chunk < ((size_t)1 << 20) ? chunk : ((size_t)1 << 20);
	double elems = bytes > 0 ? bytes / 8 : (double)slice;
	double per = elems > 0 ? flops / (2 * elems) : 0, passes = 1, total;
	int fmas;

	if (per > FMAS_MAX) {
		fmas = FMAS_MAX;
		passes = ceil(per / FMAS_MAX);
	} else {
		fmas = (int)(per + 0.5);
	}
	total = elems * passes;
	*launches = 0;
	if (total < 1 || chunk == 0)
		return 0;
	for (double done = 0; done < total; done += (double)chunk) {
		size_t n = total - done < (double)chunk ? (size_t)(total - done) : chunk;
		unsigned blocks = (unsigned)((n + 255) / 256 < 65536 ? (n + 255) / 256 : 65536);

		if (!n)
			break;
		octo_work_kernel<<<blocks, 256, 0, s>>>((float *)buf, n, fmas);
		(*launches)++;
	}
	return (int)cudaGetLastError();
}
