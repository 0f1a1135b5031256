/*
 * cuda_proxy — the proxy of each (stage, op kind) on the cuda backend (see cuda_impl.h).
 *
 * A proxy is a bf16 GEMM with the activation's shape whose columns (repeated beyond
 * NCOLS_MAX) give the FLOPs the op's predicted time represents at the assumed throughput.
 * Unless --gemm-tflops fixes that throughput, each proxy is then timed on its GPU and its
 * columns refitted, twice, and once more after each of two warm-up iterations (clocks and
 * power under a real iteration's load), so that an op takes its predicted time and what a
 * run measures beyond that is the schedule's and the transfers' doing. Devices that share
 * a GPU take turns fitting, or each would time the others' work too.
 */
#include "config.h"
#include "exec/cuda_impl.h"

#include <math.h>
#include <stdlib.h>

#include "action.h"

/* Columns and repetitions of an m x k proxy so that it does `flops` of work. */
static void fit_columns(struct shape *s, double flops)
{
	double n = flops / (2.0 * s->m * s->k);

	s->reps = (int)ceil(n / NCOLS_MAX);
	if (s->reps < 1)
		s->reps = 1;
	s->n = (int)ceil(n / s->reps / 8) * 8;
	if (s->n < 8)
		s->n = 8;
}

/* The proxy GEMM of a (stage, kind) whose predicted time is ms at tflops. */
static struct shape shape_for(double ms, double tflops, long tokens, uint64_t out_bytes)
{
	double flops = ms * 1e-3 * tflops * 1e12;
	struct shape s = { 0, 0, 0, 0, ms };

	if (flops < 1)
		return s;
	s.m = (int)fmin(fmax((double)tokens, 64), 16384);
	s.k = out_bytes ? (int)fmin(fmax((double)out_bytes / 2 / (double)tokens, 64), 16384) : 0;
	if (!s.k)   /* no activation size: a square-ish GEMM */
		s.m = s.k = (int)fmin(fmax(cbrt(flops / 2), 64), 8192);
	fit_columns(&s, flops);
	return s;
}

/* g's proxies: per stage it runs and op kind, a GEMM with the activation's shape (tokens x
 * hidden, hidden from out_bytes) and as many columns as give the FLOPs the op's predicted
 * time represents at the assumed throughput; then their operands on the GPU, sized for
 * columns up to NCOLS_MAX, since fitting may widen them. */
int cuda_proxy_setup(struct gpu *g)
{
	struct cuda_exec *c = g->c;
	const struct plan *p = c->p;
	const struct hardware *hw = &p->cluster.hw;
	size_t xs = 0, ws = 0, ys = 0;
	long tokens = p->model.seq_len * (p->model.micro_batch_size > 0 ? p->model.micro_batch_size : 1);

	if (!(g->shape = calloc((size_t)p->nstages * 3, sizeof(*g->shape))))
		return cuda_fail(g, "out of host memory");
	for (int s = 0; s < p->nstages; s++) {
		double ms[3];
		uint64_t out = p->model.layers[p->stages[s].last].out_bytes;

		if (p->stages[s].device != g->dev)
			continue;
		plan_stage_ms(p, s, ms);
		for (int k = 0; k < 3; k++) {
			double tf = c->o.gemm_tflops > 0 ? c->o.gemm_tflops :
			            hw->peak_tflops * (k ? hw->eff_b[EFF_GEMM] : hw->eff_f[EFF_GEMM]);
			struct shape *sh = &g->shape[s * 3 + k];

			*sh = shape_for(ms[k] / p->cluster.device_speed[g->dev], tf, tokens ? tokens : 4096, out);
			if (!sh->reps)
				continue;
			/* columns may grow to NCOLS_MAX when the proxies are fitted to this GPU */
			xs = xs > (size_t)sh->m * sh->k ? xs : (size_t)sh->m * sh->k;
			ws = ws > (size_t)sh->k * NCOLS_MAX ? ws : (size_t)sh->k * NCOLS_MAX;
			ys = ys > (size_t)sh->m * NCOLS_MAX ? ys : (size_t)sh->m * NCOLS_MAX;
		}
	}
	CUDACHECK(g, cudaMalloc(&g->x, 2 * (xs ? xs : 1)));
	CUDACHECK(g, cudaMalloc(&g->w, 2 * (ws ? ws : 1)));
	CUDACHECK(g, cudaMalloc(&g->y, 2 * (ys ? ys : 1)));
	CUDACHECK(g, cudaMemsetAsync(g->x, 0, 2 * (xs ? xs : 1), g->compute));
	CUDACHECK(g, cudaMemsetAsync(g->w, 0, 2 * (ws ? ws : 1), g->compute));
	CUDACHECK(g, cudaMemsetAsync(g->y, 0, 2 * (ys ? ys : 1), g->compute));
	return 0;
}

/* One repetition of each of g's proxies. */
int cuda_proxy_warm_up(struct gpu *g)
{
	const struct plan *p = g->c->p;

	for (int s = 0; s < p->nstages; s++)
		for (int k = 0; k < 3; k++)
			if (p->stages[s].device == g->dev && g->shape[s * 3 + k].reps) {
				struct shape one = g->shape[s * 3 + k];

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
			struct shape *sh = &g->shape[s * 3 + k], one;
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
				fit_columns(sh, sh->ms * (2.0 * one.m * one.k * one.n / ms));
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

	if (c->o.gemm_tflops > 0 || (c->fit_turn >= 0 && c->fit_turn != g->dev))
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
		struct shape *sh = &g->shape[k];
		double measured = cnt[k] ? sum[k] / cnt[k] : 0;

		if (sh->reps && measured > 0)
			fit_columns(sh, 2.0 * sh->m * sh->k * sh->n * sh->reps * (sh->ms / measured));
	}
	free(sum);
	free(cnt);
	return cuda_proxy_warm_up(g);
}
