/*
 * kplan — the kernel plan of the cuda backend (see kplan.h). The numbers here are the
 * ones cuda_proxy.c launches before it fits anything on the GPU.
 */
#include "config.h"
#include "exec/kplan.h"

#include <math.h>

#include "action.h"

void kplan_fit_columns(struct kplan_gemm *g, double flops)
{
	double n = flops / (2.0 * g->m * g->k);

	g->reps = (int)ceil(n / KPLAN_NCOLS_MAX);
	if (g->reps < 1)
		g->reps = 1;
	g->n = (int)ceil(n / g->reps / 8) * 8;
	if (g->n < 8)
		g->n = 8;
}

struct kplan_gemm kplan_proxy(double ms, double tflops, long tokens, uint64_t out_bytes)
{
	double flops = ms * 1e-3 * tflops * 1e12;
	struct kplan_gemm g = { 0, 0, 0, 0, ms };

	if (!(flops >= 1) || tokens <= 0)
		return g;
	g.m = (int)fmin(fmax((double)tokens, 64), 16384);
	g.k = out_bytes ? (int)fmin(fmax((double)out_bytes / 2 / (double)tokens, 64), 16384) : 0;
	if (!g.k)   /* no activation size: a square-ish GEMM */
		g.m = g.k = (int)fmin(fmax(cbrt(flops / 2), 64), 8192);
	kplan_fit_columns(&g, flops);
	return g;
}

double kplan_tflops(const struct plan *p, int k, double gemm_tflops)
{
	const struct hardware *hw = &p->cluster.hw;

	if (gemm_tflops > 0)
		return gemm_tflops;
	return hw->peak_tflops * (k ? hw->eff_b[EFF_GEMM] : hw->eff_f[EFF_GEMM]);
}

struct kplan_gemm kplan_stage_proxy(const struct plan *p, int s, int k, double gemm_tflops)
{
	long tokens = p->model.seq_len * (p->model.micro_batch_size > 0 ? p->model.micro_batch_size : 1);
	double ms[3];

	plan_stage_ms(p, s, ms);
	return kplan_proxy(ms[k] / p->cluster.device_speed[p->stages[s].device], kplan_tflops(p, k, gemm_tflops),
	                   tokens ? tokens : 4096, p->model.layers[p->stages[s].last].out_bytes);
}

double kplan_gemm_flops(const struct kplan_gemm *g)
{
	return 2.0 * g->m * g->k * (double)g->n * g->reps;
}

double kplan_gemm_bytes(const struct kplan_gemm *g)
{
	return 2.0 * ((double)g->m * g->k + (double)g->k * g->n + (double)g->m * g->n) * g->reps;
}
