/*
 * cuda_bench — microbenchmarks of kernel-list entries on one GPU (see cuda_bench.h).
 *
 * The kernels launch through cuda_kernel(), the very code an op of the cuda backend runs,
 * on one device of a one-device run (struct cuda_exec with a single struct gpu), so that
 * what calibration fits is what a run measures. Times are CUDA events around each pass,
 * the median of the runs: a single slow run (clocks ramping up) does not move it.
 */
#include "config.h"
#include "exec/cuda_bench.h"
#include "exec/cuda_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_WORK_MAX ((size_t)1 << 30)  /* the non-GEMM kernels' buffer, as a run's */
#define BENCH_REPS_MAX 64

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Operands for the largest GEMM and the largest other kernel of the benches. */
static int alloc_operands(struct gpu *g, const struct calib_bench *b, int n)
{
	struct cuda_need need = { 1, 1, 1, 1 << 22, { 0, 0, 0, 0, 0 } };

	for (int i = 0; i < n; i++)
		for (int k = -1; k < b[i].nbw; k++)
			cuda_kernel_need(k < 0 ? &b[i].f : &b[i].bw[k], &need);
	return cuda_operands_alloc(g, &need, BENCH_WORK_MAX);
}

/* The median time of reps runs of the kernels (after one warm-up), in ms. */
static int time_pass(struct gpu *g, const struct kernel *ks, int nk, enum kernel_pass first, int reps,
                     cudaEvent_t ev[2], double *ms)
{
	double t[BENCH_REPS_MAX];

	for (int r = -1; r < reps; r++) {
		float f = 0;

		CUDACHECK(g, cudaEventRecord(ev[0], g->compute));
		for (int k = 0; k < nk; k++)
			if (cuda_kernel(g, &ks[k], k == 0 ? first : PASS_W) < 0)
				return -1;
		CUDACHECK(g, cudaEventRecord(ev[1], g->compute));
		CUDACHECK(g, cudaEventSynchronize(ev[1]));
		CUDACHECK(g, cudaEventElapsedTime(&f, ev[0], ev[1]));
		if (r >= 0)
			t[r] = f;
	}
	qsort(t, (size_t)reps, sizeof(*t), cmp_double);
	*ms = t[reps / 2];
	return 0;
}

static int bench_all(struct gpu *g, struct calib_bench *b, int n, int reps)
{
	cudaEvent_t ev[2];

	CUDACHECK(g, cudaSetDevice(0));
	CUDACHECK(g, cudaStreamCreateWithFlags(&g->compute, cudaStreamNonBlocking));
	BLASCHECK(g, cublasCreate(&g->blas));
	BLASCHECK(g, cublasSetStream(g->blas, g->compute));
	CUDACHECK(g, cudaEventCreate(&ev[0]));
	CUDACHECK(g, cudaEventCreate(&ev[1]));
	if (alloc_operands(g, b, n) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		/* the backward: I (the first), then W */
		if (time_pass(g, &b[i].f, 1, PASS_F, reps, ev, &b[i].f_ms) < 0 ||
		    time_pass(g, b[i].bw, b[i].nbw, PASS_I, reps, ev, &b[i].bw_ms) < 0)
			return -1;
	}
	return 0;
}

int cuda_bench_run(struct calib_bench *b, int n, int reps, const char **gpu_name, struct err *e)
{
	static struct gpu_info info;
	struct cuda_exec c;
	struct gpu g;
	int rc;

	if (gpu_probe(&info) == 0)
		return err_set(e, ERR_RUNTIME, "no GPU: %s", info.reason);
	*gpu_name = info.dev[0].name;
	if (reps < 1)
		reps = 1;
	if (reps > BENCH_REPS_MAX)
		reps = BENCH_REPS_MAX;
	memset(&c, 0, sizeof(c));
	memset(&g, 0, sizeof(g));
	c.me = -1;
	c.o.timeout_s = 60;
	g.c = &c;
	rc = bench_all(&g, b, n, reps);
	if (rc < 0)
		*e = g.err;
	if (g.compute)
		cudaStreamSynchronize(g.compute);
	cudaFree(g.x);
	cudaFree(g.w);
	cudaFree(g.y);
	cudaFree(g.work);
	cuda_core_free(&g);
	if (g.blas)
		cublasDestroy(g.blas);
	if (g.compute)
		cudaStreamDestroy(g.compute);
	return rc;
}
