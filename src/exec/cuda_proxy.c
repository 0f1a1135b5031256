/*
 * cuda_proxy — the proxy of each (stage, op kind) on the cuda backend (see cuda_impl.h).
 *
 * A proxy is a bf16 GEMM with the activation's shape whose columns (repeated beyond
 * KPLAN_NCOLS_MAX) give the FLOPs the op's predicted time represents at the assumed throughput.
 * Unless --gemm-tflops fixes that throughput, each proxy is then timed on its GPU and its
 * columns refitted, twice, and once more after each of two warm-up iterations (clocks and
 * power under a real iteration's load), so that an op takes its predicted time and what a
 * run measures beyond that is the schedule's and the transfers' doing. Devices that share
 * a GPU take turns fitting, or each would time the others' work too.
 */
#include "config.h"
#include "exec/cuda_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "action.h"

#define WORK_MAX ((size_t)1 << 30)   /* the non-GEMM kernels' buffer: larger work takes passes */

/* With the architecture: every kernel of g's stages, per stage and pass (g->ks, k_first),
 * and operands for the largest of its GEMMs (groups included) and its other kernels. */
static int kernel_lists(struct gpu *g)
{
	struct cuda_exec *c = g->c;
	const struct plan *p = c->p;
	struct cuda_need need = { 1, 1, 1, 0, { 0, 0, 0, 0, 0 } };
	int total = 0;

	if (!(g->k_first = calloc((size_t)p->nstages * 3 + 1, sizeof(*g->k_first))))
		return cuda_fail(g, "out of host memory");
	for (int s = 0; s < p->nstages; s++)
		for (int q = 0; q < 3; q++)
			if (p->stages[s].device == g->dev)
				total += kplan_stage_kernels(p, c->o.works, &c->o.kernel_opts, s, (enum kernel_pass)q, NULL, 0);
	if (!(g->ks = calloc((size_t)total + 1, sizeof(*g->ks))))
		return cuda_fail(g, "out of host memory");
	total = 0;
	for (int s = 0; s < p->nstages; s++)
		for (int q = 0; q < 3; q++) {
			int n = 0;

			g->k_first[s * 3 + q] = total;
			if (p->stages[s].device == g->dev)
				n = kplan_stage_kernels(p, c->o.works, &c->o.kernel_opts, s, (enum kernel_pass)q, g->ks + total,
				                        INT32_MAX);
			for (int i = total; i < total + n; i++)
				cuda_kernel_need(&g->ks[i], &need);
			total += n;
		}
	g->k_first[p->nstages * 3] = total;
	return cuda_operands_alloc(g, &need, WORK_MAX);
}

/* g's proxies (kplan.h: per stage it runs and op kind, sized without a GPU), then their
 * operands on the GPU, sized for columns up to KPLAN_NCOLS_MAX, since fitting may widen
 * them. With the architecture, its kernel lists instead (kernel_lists). */
int cuda_proxy_setup(struct gpu *g)
{
	struct cuda_exec *c = g->c;
	const struct plan *p = c->p;
	size_t xs = 0, ws = 0, ys = 0;

	if (!(g->shape = calloc((size_t)p->nstages * 3, sizeof(*g->shape))))
		return cuda_fail(g, "out of host memory");
	if (c->o.works)
		return kernel_lists(g);
	for (int s = 0; s < p->nstages; s++) {
		if (p->stages[s].device != g->dev)
			continue;
		for (int k = 0; k < 3; k++) {
			struct kplan_gemm *sh = &g->shape[s * 3 + k];

			*sh = kplan_stage_proxy(p, s, k, c->o.gemm_tflops);
			if (!sh->reps)
				continue;
			/* columns may grow to KPLAN_NCOLS_MAX when the proxies are fitted to this GPU */
			xs = xs > (size_t)sh->m * sh->k ? xs : (size_t)sh->m * sh->k;
			ws = ws > (size_t)sh->k * KPLAN_NCOLS_MAX ? ws : (size_t)sh->k * KPLAN_NCOLS_MAX;
			ys = ys > (size_t)sh->m * KPLAN_NCOLS_MAX ? ys : (size_t)sh->m * KPLAN_NCOLS_MAX;
		}
	}
	{
		struct cuda_need need = { (double)xs, (double)ws, (double)ys, 0, { 0, 0, 0, 0, 0 } };

		return cuda_operands_alloc(g, &need, WORK_MAX);
	}
}

/* One repetition of each of g's proxies. */
int cuda_proxy_warm_up(struct gpu *g)
{
	const struct plan *p = g->c->p;

	if (g->ks) {   /* every kernel once (cuBLAS picks its algorithms on first use) */
		for (int s = 0; s < p->nstages; s++)
			if (p->stages[s].device == g->dev) {
				struct action f = { s, 0, OP_F, 0 }, i = { s, 0, OP_I, 0 }, w = { s, 0, OP_W, 0 };

				if (cuda_op(g, &f) < 0 || cuda_op(g, &i) < 0 || cuda_op(g, &w) < 0)
					return -1;
			}
		return cuda_wait_idle(g, "warm-up");
	}

	for (int s = 0; s < p->nstages; s++)
		for (int k = 0; k < 3; k++)
			if (p->stages[s].device == g->dev && g->shape[s * 3 + k].reps) {
				struct kplan_gemm one = g->shape[s * 3 + k];

				one.reps = 1;
				if (cuda_gemm(g, &one, k == 0 ? OP_F : k == 2 ? OP_W : OP_I) < 0)
					return -1;
			}
	return cuda_wait_idle(g, "warm-up");
}

/* Times one repetition of each proxy and refits its columns to the throughput reached. */
static int fit_proxies(struct gpu *g)
{
	const struct plan *p = g->c->p;
	cudaEvent_t a = NULL, b = NULL;
	int rc = 0;

	CUDACHECK(g, cudaEventCreate(&a));
	if (cudaEventCreate(&b) != cudaSuccess) {
		cudaEventDestroy(a);
		return cuda_fail(g, "cannot create an event to time the proxies");
	}
	for (int s = 0; s < p->nstages && rc == 0; s++)
		for (int k = 0; k < 3 && rc == 0; k++) {
			struct kplan_gemm *sh = &g->shape[s * 3 + k], one;
			float ms = 0;

			if (p->stages[s].device != g->dev || !sh->reps)
				continue;
			one = *sh;
			one.reps = 1;
			if (cudaEventRecord(a, g->compute) != cudaSuccess ||
			    cuda_gemm(g, &one, k == 0 ? OP_F : k == 2 ? OP_W : OP_I) < 0 ||
			    cudaEventRecord(b, g->compute) != cudaSuccess || cuda_wait_idle(g, "timing the proxies") < 0 ||
			    cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
				/* an abort elsewhere is not this device's failure */
				rc = g->failed || atomic_load(&g->c->abort) ? -1 : cuda_fail(g, "cannot time the proxy of stage %d", s);
				break;
			}
			if (ms > 0)
				kplan_fit_columns(sh, sh->ms * (2.0 * one.m * one.k * one.n / ms));
		}
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	return rc;
}

/* Phase 1b, per GPU, without --gemm-tflops: fit each proxy to the time it stands for on
 * this GPU — time one repetition, resize by the throughput it reached, twice (it depends
 * a little on the width), then warm the final shape up. Devices that share a GPU take
 * turns, or each would time the others' work too. */
int cuda_proxy_fit(struct gpu *g)
{
	struct cuda_exec *c = g->c;
	int rc = 0;

	if (c->o.gemm_tflops > 0 || c->o.works || (c->fit_turn >= 0 && c->fit_turn != g->dev))
		return 0;
	CUDACHECK(g, cudaSetDevice(g->gpu));
	if (c->me < 0 && c->gpus_used < c->ndev)
		pthread_mutex_lock(&c->fit_lock);
	for (int round = 0; round < 2 && rc == 0; round++)
		rc = fit_proxies(g) < 0 || cuda_proxy_warm_up(g) < 0 ? -1 : 0;
	if (c->me < 0 && c->gpus_used < c->ndev)
		pthread_mutex_unlock(&c->fit_lock);
	return rc;
}

/* After a warm-up iteration, per GPU: each proxy's measured time (the mean over its
 * microbatches) against the time it stands for; its columns are refitted by the ratio.
 * This is what the timing of single repetitions misses: clocks and power under the
 * sustained load of a real iteration. */
int cuda_proxy_refit(struct gpu *g)
{
	struct cuda_exec *c = g->c;
	const struct exec_program *x = c->x;
	const struct plan *p = c->p;
	double *sum = calloc((size_t)p->nstages * 3, sizeof(double));
	int *cnt = calloc((size_t)p->nstages * 3, sizeof(int)), op = 0;

	if (!sum || !cnt) {
		free(sum);
		free(cnt);
		return cuda_fail(g, "out of host memory");
	}
	CUDACHECK(g, cudaSetDevice(g->gpu));
	for (int i = x->start[g->dev]; i < x->start[g->dev + 1]; i++) {
		const struct exec_item *it = &x->items[i];
		float ms = 0;

		if (it->kind != EXEC_COMPUTE)
			continue;
		if (cudaEventElapsedTime(&ms, g->op_start[op], g->op_end[op]) == cudaSuccess) {
			sum[it->op.stage * 3 + op_kind_slot(it->op.kind)] += ms;
			cnt[it->op.stage * 3 + op_kind_slot(it->op.kind)]++;
		}
		op++;
	}
	for (int k = 0; k < p->nstages * 3; k++) {
		struct kplan_gemm *sh = &g->shape[k];
		double measured = cnt[k] ? sum[k] / cnt[k] : 0;

		if (sh->reps && measured > 0)
			kplan_fit_columns(sh, 2.0 * sh->m * sh->k * sh->n * sh->reps * (sh->ms / measured));
	}
	free(sum);
	free(cnt);
	return cuda_proxy_warm_up(g);
}
