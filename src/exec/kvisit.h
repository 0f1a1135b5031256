/*
 * kvisit — which element of the work buffer each visit of a memory-class kernel touches
 * (octo_stream_kernel, cuda_work.cu): block b of n takes the contiguous run of visits
 * kvisit_range gives, its threads side by side, and visit i is element i % chunk. Blocks
 * start in about their order, so a kernel whose visits exceed the chunk sweeps it once,
 * then again: an element comes back a whole chunk of visits later, from HBM, not from L2
 * (a grid-stride loop over passes revisited each thread's own elements at once). Shared by
 * the kernel and the host tests, as kmask.h is.
 */
#ifndef OCTO_EXEC_KVISIT_H
#define OCTO_EXEC_KVISIT_H

#include <stddef.h>

#ifdef __CUDACC__
#define KVISIT_FN static inline __host__ __device__
#else
#define KVISIT_FN static inline
#endif

/* The visits [*begin, *end) of block b of nblocks, total in all (an empty run for the
 * blocks past the end). */
KVISIT_FN void kvisit_range(size_t total, size_t nblocks, size_t b, size_t *begin, size_t *end)
{
	size_t per = (total + nblocks - 1) / nblocks;

	*begin = b * per < total ? b * per : total;
	*end = *begin + per < total ? *begin + per : total;
}

/* The element of the visit step visits after the one at element j (each thread's visits
 * are its block's threads apart): (j + step) % chunk for j < chunk and step already
 * reduced below chunk (step = threads % chunk, once), without a division in the loop (a
 * 64-bit division is a long emulated sequence on the GPU). */
KVISIT_FN size_t kvisit_next(size_t j, size_t step, size_t chunk)
{
	j += step;
	return j >= chunk ? j - chunk : j;
}

#endif
