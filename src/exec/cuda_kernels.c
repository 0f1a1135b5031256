/*
 * cuda_kernels — the kernels an op launches on its device's compute stream (see
 * cuda_impl.h).
 *
 * With the model's architecture, an op runs its layers' kernel lists (kplan.h, the cost
 * model's own): every GEMM as one strided-batched bf16 cuBLAS call with its true shape
 * (m x k times k x n per group; experts are the groups) — X·W in the forward, dY·Wᵀ for
 * the input gradient, Xᵀ·dY for the weight gradient — and every other entry (attention
 * cores, scans, norms, activations, the loss) as a kernel of its FLOPs and bytes
 * (cuda_work.cu; built without nvcc, a device copy of its bytes). Nothing is fitted: the
 * GPU's own time is what a run measures. Without an architecture an op is its proxy: bf16
 * GEMMs of the shape cuda_proxy.c chose, the three products a linear layer is made of.
 */
#include "config.h"
#include "exec/cuda_impl.h"

#include <math.h>

#include "action.h"
#ifdef HAVE_NVCC
#include "exec/cuda_work.h"
#endif

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

/* One GEMM of a kernel list in pass p, its groups as a strided batch over the operands. */
static int list_gemm(struct gpu *g, const struct kernel *x, enum kernel_pass p)
{
	const float one = 1, zero = 0;
	int m = (int)ceil(x->m), n = (int)ceil(x->n), k = (int)ceil(x->k), b = x->groups > 0 ? x->groups : 1;
	long long sa = (long long)m * k, sb = (long long)k * n, sc = (long long)m * n;

	if (m < 1 || n < 1 || k < 1)
		return 0;
	if (p == PASS_F)           /* Y = X W */
		BLASCHECK(g, cublasGemmStridedBatchedEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, g->x, CUDA_R_16BF,
		                                        m, sa, g->w, CUDA_R_16BF, k, sb, &zero, g->y, CUDA_R_16BF, m, sc, b,
		                                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	else if (p == PASS_W)      /* dW = X^T dY */
		BLASCHECK(g, cublasGemmStridedBatchedEx(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, k, n, m, &one, g->x, CUDA_R_16BF,
		                                        m, sa, g->y, CUDA_R_16BF, m, sc, &zero, g->w, CUDA_R_16BF, k, sb, b,
		                                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	else                       /* dX = dY W^T */
		BLASCHECK(g, cublasGemmStridedBatchedEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, m, k, n, &one, g->y, CUDA_R_16BF,
		                                        m, sc, g->w, CUDA_R_16BF, k, sb, &zero, g->x, CUDA_R_16BF, m, sa, b,
		                                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	return 0;
}

/* The work of a kernel that is not a GEMM: its FLOPs and bytes. */
static int list_work(struct gpu *g, const struct kernel *x)
{
	if (!g->work || (x->bytes <= 0 && x->flops <= 0))
		return 0;
#ifdef HAVE_NVCC
	{
		int launches = 0, r = cuda_work(g->compute, g->work, g->worksz, x->bytes, x->flops, &launches);

		if (r != 0)
			return cuda_fail(g, "%s:%d: cuda_work(%s): %s", __FILE__, __LINE__, x->name,
			                 cudaGetErrorString((cudaError_t)r));
	}
#else
	/* no nvcc at build time: the kernel's bytes move as device copies (half read, half
	 * written), its FLOPs are not done */
	for (double left = x->bytes / 2; left >= 1; left -= (double)(g->worksz / 2)) {
		size_t n = left < (double)(g->worksz / 2) ? (size_t)left : g->worksz / 2;

		CUDACHECK(g, cudaMemcpyAsync(g->work, (char *)g->work + g->worksz / 2, n, cudaMemcpyDeviceToDevice,
		                             g->compute));
	}
#endif
	return 0;
}

int cuda_kernel(struct gpu *g, const struct kernel *x, enum kernel_pass p)
{
	return x->m > 0 ? list_gemm(g, x, p) : list_work(g, x);
}

/* Runs the kernels of stage s's pass p. */
static int list_run(struct gpu *g, int s, enum kernel_pass p)
{
	for (int i = g->k_first[s * 3 + p]; i < g->k_first[s * 3 + p + 1]; i++)
		if (cuda_kernel(g, &g->ks[i], p) < 0)
			return -1;
	return 0;
}

int cuda_op(struct gpu *g, const struct action *a)
{
	if (!g->ks)
		return cuda_gemm(g, &g->shape[a->stage * 3 + op_kind_slot(a->kind)], a->kind);
	if (a->kind == OP_F)
		return list_run(g, a->stage, PASS_F);
	if (a->kind == OP_W)
		return list_run(g, a->stage, PASS_W);
	if (list_run(g, a->stage, PASS_I) < 0)
		return -1;
	return a->kind == OP_B ? list_run(g, a->stage, PASS_W) : 0;
}

long cuda_op_launches(const struct gpu *g, const struct action *a)
{
	long n = 0;

	if (!g->ks)
		return g->shape[a->stage * 3 + op_kind_slot(a->kind)].reps;
	for (int p = 0; p < 3; p++) {
		if (!(a->kind == OP_F ? p == PASS_F : a->kind == OP_W ? p == PASS_W : a->kind == OP_I ? p == PASS_I : p != PASS_F))
			continue;
		for (int i = g->k_first[a->stage * 3 + p]; i < g->k_first[a->stage * 3 + p + 1]; i++)
			n += g->ks[i].m > 0 ? 1 : 1 + (long)(g->worksz ? g->ks[i].bytes / (double)g->worksz : 0);
	}
	return n;
}
