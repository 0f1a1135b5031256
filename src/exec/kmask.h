/*
 * kmask — which keys a query of an attention core attends to, within one query block's
 * scores (kplan.h): shared by the softmax kernel (cuda_work.cu, compiled by nvcc) and the
 * tests on the host, so that the mask the GPU applies is the one tested everywhere.
 */
#ifndef OCTO_EXEC_KMASK_H
#define OCTO_EXEC_KMASK_H

#ifdef __CUDACC__
#define KMASK_FN static inline __host__ __device__
#else
#define KMASK_FN static inline
#endif

/* Query q (absolute) of a block whose scores cover keys [k0, k0 + keys): it attends to
 * the block's columns [*lo, *hi): causally (keys up to q) and, with window > 0, to the
 * last window of them. */
KMASK_FN void kmask_row(long q, long k0, long keys, long window, long *lo, long *hi)
{
	*hi = q - k0 + 1 < keys ? q - k0 + 1 : keys;
	*lo = window > 0 && q - window + 1 - k0 > 0 ? q - window + 1 - k0 : 0;
	if (*hi < *lo)
		*hi = *lo;
}

#endif
