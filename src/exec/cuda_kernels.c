/*
 * cuda_kernels — the kernels an op launches on its device's compute stream (see
 * cuda_impl.h). Today every op is its proxy: bf16 cuBLAS GEMMs of the shape cuda_proxy.c
 * chose, X·W forward, dY·Wᵀ for the input gradient, Xᵀ·dY for the weight gradient — the
 * three products a linear layer's F, I and W are made of. Kernels shaped by the model's
 * architecture belong here too, so that an op stays one call whatever it launches.
 */
#include "config.h"
#include "exec/cuda_impl.h"

#include "action.h"

int cuda_gemm(struct gpu *g, const struct kplan_gemm *s, int kind)
{
	const float one = 1, zero = 0;

	for (int r = 0; r < s->reps; r++) {
		if (kind == OP_F)          /* Y[m x n] = X[m x k] W[k x n] */
			BLASCHECK(g, cublasGemmEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, s->m, s->n, s->k, &one, g->x, CUDA_R_16BF,
			                          s->m, g->w, CUDA_R_16BF, s->k, &zero, g->y, CUDA_R_16BF, s->m,
			                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		else if (kind == OP_W)     /* dW[k x n] = X^T dY */
			BLASCHECK(g, cublasGemmEx(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, s->k, s->n, s->m, &one, g->x, CUDA_R_16BF,
			                          s->m, g->y, CUDA_R_16BF, s->m, &zero, g->w, CUDA_R_16BF, s->k,
			                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		else                       /* dX[m x k] = dY W^T (I, or the full B) */
			BLASCHECK(g, cublasGemmEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, s->m, s->k, s->n, &one, g->y, CUDA_R_16BF,
			                          s->m, g->w, CUDA_R_16BF, s->k, &zero, g->x, CUDA_R_16BF, s->m,
			                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	}
	return 0;
}
