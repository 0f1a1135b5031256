/*
 * cuda_kernels — the kernels an op launches on its device's compute stream (see
 * cuda_impl.h).
 *
 * With the model's architecture, an op runs its layers' kernel lists (kplan.h, the cost
 * model's own) with the launches the cost model charges (kplan_launches): every GEMM as
 * bf16 cuBLAS calls with its true shape (m x k times k x n), one per group (experts are
 * the groups: a GEMM per expert, as the runtime the model was fitted to loops over them)
 * — X·W in the forward, dY·Wᵀ for the input gradient, Xᵀ·dY for the weight gradient —
 * every attention core as its query blocks (kplan_core_tiles): QKᵀ and PV as
 * strided-batched GEMMs over heads and sequences with the masked softmax between them
 * (cuda_work.cu), its backward the four GEMMs and the softmax's backward (the one entry
 * whose launches differ from the priced ones, kplan.h); and every other entry (scans,
 * norms, activations, the loss) as the kernels it stands for, one launch each, sharing its
 * FLOPs and bytes (cuda_work.cu; an SSD's FLOPs as one tensor-core GEMM, kplan.h; built
 * without nvcc, a device copy of its bytes, and the softmax a copy of its scores). Every
 * leading dimension is padded to 16 bytes (kplan_calls) and every operand holds random
 * bf16 values (opfill.h), never zeros. Expert GEMMs have the plan's expert-parallel
 * shapes (the cost model's, cost_opts.ep). Nothing is fitted: the
 * GPU's own time is what a run measures. Without an architecture an op is its proxy: bf16
 * GEMMs of the shape cuda_proxy.c chose, the three products a linear layer is made of.
 */
#include "config.h"
#include "exec/cuda_impl.h"

#include <math.h>
#include <stdlib.h>

#include "action.h"
#include "exec/opfill.h"

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

/* One GEMM of a kernel list in pass p: one cuBLAS call per group (each expert its own
 * GEMM on its own slice of the operands, as the cost model charges it: kplan.h), with the
 * padded leading dimensions of kplan_gemm_lds. */
static int list_gemm(struct gpu *g, const struct kernel *x, enum kernel_pass p)
{
	const float one = 1, zero = 0;
	int m = (int)ceil(x->m), n = (int)ceil(x->n), k = (int)ceil(x->k), b = x->groups > 0 ? x->groups : 1;
	long ld[3];
	size_t sa, sb, sc;   /* bytes per group */

	if (m < 1 || n < 1 || k < 1)
		return 0;
	kplan_gemm_lds(x, ld);
	sa = (size_t)ld[0] * k * 2;
	sb = (size_t)ld[1] * n * 2;
	sc = (size_t)ld[2] * n * 2;
	for (int i = 0; i < b; i++) {
		char *X = (char *)g->x + i * sa, *W = (char *)g->w + i * sb, *Y = (char *)g->y + i * sc;

		if (p == PASS_F)           /* Y = X W */
			BLASCHECK(g, cublasGemmEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, X, CUDA_R_16BF, (int)ld[0], W,
			                          CUDA_R_16BF, (int)ld[1], &zero, Y, CUDA_R_16BF, (int)ld[2], CUBLAS_COMPUTE_32F,
			                          CUBLAS_GEMM_DEFAULT));
		else if (p == PASS_W)      /* dW = X^T dY */
			BLASCHECK(g, cublasGemmEx(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, k, n, m, &one, X, CUDA_R_16BF, (int)ld[0], Y,
			                          CUDA_R_16BF, (int)ld[2], &zero, W, CUDA_R_16BF, (int)ld[1], CUBLAS_COMPUTE_32F,
			                          CUBLAS_GEMM_DEFAULT));
		else                       /* dX = dY W^T */
			BLASCHECK(g, cublasGemmEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, m, k, n, &one, Y, CUDA_R_16BF, (int)ld[2], W,
			                          CUDA_R_16BF, (int)ld[1], &zero, X, CUDA_R_16BF, (int)ld[0], CUBLAS_COMPUTE_32F,
			                          CUBLAS_GEMM_DEFAULT));
	}
	return 0;
}

/* cuBLAS's view of row-major operands: a row-major r x c matrix is a column-major c x r
 * one, so every product below is written transposed. */
static int bgemm(struct gpu *g, cublasOperation_t ta, cublasOperation_t tb, long m, long n, long k, const void *a,
                 long lda, long long sa, const void *b, long ldb, long long sb, void *c, long ldc, long long sc,
                 int batch)
{
	const float one = 1, zero = 0;

	BLASCHECK(g, cublasGemmStridedBatchedEx(g->blas, ta, tb, (int)m, (int)n, (int)k, &one, a, CUDA_R_16BF, (int)lda, sa,
	                                        b, CUDA_R_16BF, (int)ldb, sb, &zero, c, CUDA_R_16BF, (int)ldc, sc, batch,
	                                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	return 0;
}

/* The softmax (or its backward) of one block's scores. */
static int core_softmax(struct gpu *g, int batch, const struct kplan_tile *t, long window, int backward)
{
#ifdef HAVE_NVCC
	int r = cuda_softmax(g->compute, g->core[4], batch, t->rows, t->keys, t->ld, t->q0, t->k0, window, backward);

	if (r != 0)
		return cuda_fail(g, "%s:%d: cuda_softmax: %s", __FILE__, __LINE__, cudaGetErrorString((cudaError_t)r));
#else
	/* no nvcc at build time: the scores (2 bytes each) are read and written once, as a
	 * device copy of one half of them onto the other */
	size_t half = (size_t)batch * (size_t)t->rows * (size_t)t->ld;

	(void)window;
	(void)backward;
	CUDACHECK(g, cudaMemcpyAsync(g->core[4], (char *)g->core[4] + half, half, cudaMemcpyDeviceToDevice, g->compute));
#endif
	return 0;
}

void cuda_core_need(const struct kernel *x, double need[5])
{
	double batch = (double)x->heads * (x->seqs > 0 ? x->seqs : 1);
	long ldq, ldv;

	if (x->heads <= 0 || x->flops <= 0)
		return;
	kplan_core_strides(x, &ldq, &ldv);
	need[0] = fmax(need[0], batch * x->seq * ldq);
	need[1] = fmax(need[1], batch * x->seq * ldq);
	need[2] = fmax(need[2], batch * x->seq * ldv);
	need[3] = fmax(need[3], batch * x->seq * ldv);
	need[4] = fmax(need[4], kplan_core_score_elems(x));
}

int cuda_fill(struct gpu *g, void *p, size_t bytes, uint64_t seed)
{
#ifdef HAVE_NVCC
	int r = cuda_opfill(g->compute, p, bytes, seed);

	if (r != 0)
		return cuda_fail(g, "%s:%d: cuda_opfill: %s", __FILE__, __LINE__, cudaGetErrorString((cudaError_t)r));
#else
	/* no nvcc at build time: the stream's first chunk, from the host, repeated */
	size_t chunk = bytes < ((size_t)2 << 20) ? bytes : ((size_t)2 << 20);
	uint16_t *h = malloc(chunk + 2);

	if (!h)
		return cuda_fail(g, "out of host memory");
	for (size_t i = 0; i < chunk / 2; i++)
		h[i] = opfill_bf16(seed, i);
	for (size_t at = 0; at < bytes; at += chunk) {
		cudaError_t r = cudaMemcpyAsync((char *)p + at, h, bytes - at < chunk ? bytes - at : chunk,
		                                cudaMemcpyHostToDevice, g->compute);

		if (r == cudaSuccess)
			r = cudaStreamSynchronize(g->compute);   /* before h is freed */
		if (r != cudaSuccess) {
			free(h);
			CUDACHECK(g, r);
		}
	}
	free(h);
#endif
	return 0;
}

void cuda_kernel_need(const struct kernel *x, struct cuda_need *n)
{
	if (x->m > 0) {
		double e[3];

		kplan_gemm_elems(x, e);
		n->x = fmax(n->x, e[0]);
		n->w = fmax(n->w, e[1]);
		n->y = fmax(n->y, e[2]);
	} else if (x->heads > 0 && x->flops > 0) {
		cuda_core_need(x, n->core);
	} else {
		double b = x->bytes + x->state_bytes;

		n->work = fmax(n->work, fmax(b > 0 ? b : x->flops > 0 ? 1 << 22 : 0, kplan_ssd_bytes(x)));
	}
}

int cuda_operands_alloc(struct gpu *g, const struct cuda_need *n, size_t work_max)
{
	size_t xs = 2 * (size_t)fmax(n->x, 8), ws = 2 * (size_t)fmax(n->w, 8), ys = 2 * (size_t)fmax(n->y, 8);

	CUDACHECK(g, cudaMalloc(&g->x, xs));
	CUDACHECK(g, cudaMalloc(&g->w, ws));
	CUDACHECK(g, cudaMalloc(&g->y, ys));
	if (cuda_fill(g, g->x, xs, OPFILL_X) < 0 || cuda_fill(g, g->w, ws, OPFILL_W) < 0 ||
	    cuda_fill(g, g->y, ys, OPFILL_Y) < 0)
		return -1;
	if (n->core[0] > 0 && cuda_core_alloc(g, n->core) < 0)
		return -1;
	if (n->work > 0) {
		g->worksz = n->work < (double)work_max ? ((size_t)n->work + 31) / 32 * 32 : work_max;
		CUDACHECK(g, cudaMalloc(&g->work, g->worksz));
		if (cuda_fill(g, g->work, g->worksz, OPFILL_WORK) < 0)
			return -1;
	}
	return 0;
}

int cuda_core_alloc(struct gpu *g, const double need[5])
{
	for (int i = 0; i < 5; i++) {
		size_t bytes = 2 * (size_t)(need[i] > 1 ? need[i] : 1);

		CUDACHECK(g, cudaMalloc(&g->core[i], bytes));
		if (cuda_fill(g, g->core[i], bytes, OPFILL_CORE + i) < 0)
			return -1;
	}
	return 0;
}

void cuda_core_free(struct gpu *g)
{
	for (int i = 0; i < 5; i++) {
		cudaFree(g->core[i]);
		g->core[i] = NULL;
	}
}

/*
 * An attention core in pass p, block by block; per head and sequence (the batch), with
 * Q, K of d_qk and V, O of d_v per token, row-major:
 *   F:  S = Q Kᵀ (rows x keys), the masked softmax P = softmax(S), O = P V;
 *   I:  dP = dO Vᵀ, dS = the softmax's backward, dQ = dS K, dK = dSᵀ Q, dV = Pᵀ dO.
 * The score passes of an eager core are entries of their own: its GEMMs alone here.
 */
static int list_core(struct gpu *g, const struct kernel *x, enum kernel_pass p)
{
	struct kplan_tile t[KPLAN_CORE_TILES];
	int n = kplan_core_tiles(x, t), batch = x->heads * (x->seqs > 0 ? x->seqs : 1);
	long dq = x->d_qk, dv = x->d_v, seq = x->seq, lq, lv;   /* lq, lv: padded row strides */
	bool softmax = x->cls != EFF_GEMM;
	char *Q = g->core[0], *K = g->core[1], *V = g->core[2], *O = g->core[3], *S = g->core[4];

	kplan_core_strides(x, &lq, &lv);
	for (int i = 0; i < n; i++) {
		long r = t[i].rows, k = t[i].keys, ld = t[i].ld;
		char *q = Q + 2 * t[i].q0 * lq, *kk = K + 2 * t[i].k0 * lq, *v = V + 2 * t[i].k0 * lv, *o = O + 2 * t[i].q0 * lv;

		if (p == PASS_F) {
			if (bgemm(g, CUBLAS_OP_T, CUBLAS_OP_N, k, r, dq, kk, lq, seq * lq, q, lq, seq * lq, S, ld, r * ld, batch) < 0 ||
			    (softmax && core_softmax(g, batch, &t[i], x->window, 0) < 0) ||
			    bgemm(g, CUBLAS_OP_N, CUBLAS_OP_N, dv, r, k, v, lv, seq * lv, S, ld, r * ld, o, lv, seq * lv, batch) < 0)
				return -1;
			continue;
		}
		if (bgemm(g, CUBLAS_OP_T, CUBLAS_OP_N, k, r, dv, v, lv, seq * lv, o, lv, seq * lv, S, ld, r * ld, batch) < 0 ||
		    (softmax && core_softmax(g, batch, &t[i], x->window, 1) < 0) ||
		    bgemm(g, CUBLAS_OP_N, CUBLAS_OP_N, dq, r, k, kk, lq, seq * lq, S, ld, r * ld, q, lq, seq * lq, batch) < 0 ||
		    bgemm(g, CUBLAS_OP_N, CUBLAS_OP_T, dq, k, r, q, lq, seq * lq, S, ld, r * ld, kk, lq, seq * lq, batch) < 0 ||
		    bgemm(g, CUBLAS_OP_N, CUBLAS_OP_T, dv, k, r, o, lv, seq * lv, S, ld, r * ld, v, lv, seq * lv, batch) < 0)
			return -1;
	}
	return 0;
}

/* An SSD's FLOPs as tensor-core work (kplan.h): one strided-batched bf16 GEMM of a chunk's
 * shape over the work buffer, A and B shared by the batch, each product its own C. */
static int ssd_gemm(struct gpu *g, const struct kernel *x)
{
	struct kplan_call c = kplan_ssd_gemm(x);
	char *a = g->work, *b = a + 2 * (size_t)c.m * c.k, *out = b + 2 * (size_t)c.k * c.n;

	if (!c.batch)
		return 0;
	if (kplan_ssd_bytes(x) > (double)g->worksz)
		return cuda_fail(g, "%s:%d: %s: the SSD's GEMM needs %.0f bytes of a %zu-byte buffer", __FILE__, __LINE__,
		                 x->name, kplan_ssd_bytes(x), g->worksz);
	return bgemm(g, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, a, c.lda, 0, b, c.ldb, 0, out, c.ldc,
	             (long long)c.m * c.n, c.batch);
}

/* The work of a kernel that is not a GEMM: its FLOPs and bytes. The memory class streams
 * its bytes; the scan's FLOPs run on the CUDA cores (octo_work), as the selective scan of
 * its class does; the SSD's FLOPs on the tensor cores as one GEMM (ssd_gemm), its bytes
 * on its other launches. */
static int list_work(struct gpu *g, const struct kernel *x)
{
	double bytes = x->bytes + x->state_bytes;   /* a scan moves its state too */
	double flops = x->flops;
	long n;

	if (!g->work || (bytes <= 0 && x->flops <= 0))
		return 0;
	n = kplan_launches(x, PASS_F);
	if (kplan_ssd_gemm(x).batch > 0) {
		if (ssd_gemm(g, x) < 0)
			return -1;
		flops = 0;
		n--;
	}
#ifdef HAVE_NVCC
	/* as many kernels as the entry stands for (a norm and its residual add, a gather per
	 * expert, ...), one launch each, the work shared among them: what the cost model prices */
	for (long i = 0; i < n; i++) {
		int launches = 0, r = cuda_work(g->compute, g->work, g->worksz, bytes / n, flops / n, &launches);

		if (r != 0)
			return cuda_fail(g, "%s:%d: cuda_work(%s): %s", __FILE__, __LINE__, x->name,
			                 cudaGetErrorString((cudaError_t)r));
	}
#else
	/* no nvcc at build time: the kernel's bytes move as device copies (half read, half
	 * written), its FLOPs are not done */
	(void)n;
	(void)flops;
	for (double left = bytes / 2; left >= 1; left -= (double)(g->worksz / 2)) {
		size_t c = left < (double)(g->worksz / 2) ? (size_t)left : g->worksz / 2;

		CUDACHECK(g, cudaMemcpyAsync(g->work, (char *)g->work + g->worksz / 2, c, cudaMemcpyDeviceToDevice,
		                             g->compute));
	}
#endif
	return 0;
}

int cuda_kernel(struct gpu *g, const struct kernel *x, enum kernel_pass p)
{
	if (x->m > 0)
		return list_gemm(g, x, p);
	if (x->heads > 0 && x->flops > 0)
		return list_core(g, x, p);
	return list_work(g, x);
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
			n += kplan_launches(&g->ks[i], (enum kernel_pass)p);
	}
	return n;
}
