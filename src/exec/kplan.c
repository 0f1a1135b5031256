/*
 * kplan — the kernel plan of the cuda backend (see kplan.h). The numbers here are the
 * ones cuda_proxy.c launches before it fits anything on the GPU.
 */
#include "config.h"
#include "exec/kplan.h"

#include <math.h>
#include <string.h>

#include "action.h"
#include "parallel.h"

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

int kplan_stage_kernels(const struct plan *p, const struct work *works, const struct cost_opts *o, int s,
                        enum kernel_pass pass, struct kernel *out, int max)
{
	int n = 0;

	for (int l = p->stages[s].first; l <= p->stages[s].last; l++)
		n += cost_kernels(&works[l], o, pass, n < max ? out + n : NULL, n < max ? max - n : 0);
	return n;
}

int kplan_kernels(const struct plan *p, const struct work *works, const struct cost_opts *o, double gemm_tflops,
                  int s, int k, struct kernel *out, int max)
{
	static const char *const proxy_names[3] = { "proxy X.W", "proxy dY.Wt", "proxy Xt.dY" };
	int n = 0;

	if (!works) {
		struct kplan_gemm g = kplan_stage_proxy(p, s, k, gemm_tflops);

		if (!g.reps)
			return 0;
		if (max > 0)
			out[0] = (struct kernel){ .cls = EFF_GEMM, .name = proxy_names[k], .m = g.m, .n = g.n, .k = g.k,
			                          .groups = g.reps, .flops = kplan_gemm_flops(&g),
			                          .bytes = kplan_gemm_bytes(&g), .launches = g.reps };
		return 1;
	}
	if (k == 0 || k == 2)
		return kplan_stage_kernels(p, works, o, s, k == 0 ? PASS_F : PASS_W, out, max);
	n = kplan_stage_kernels(p, works, o, s, PASS_I, out, max);
	if (!p->split_backward)   /* a fused B: I's kernels, then W's */
		n += kplan_stage_kernels(p, works, o, s, PASS_W, n < max ? out + n : NULL, n < max ? max - n : 0);
	return n;
}

const char *kplan_mode_name(enum kplan_mode m)
{
	return m == KPLAN_ARCHITECTURE ? "architecture" : "fitted";
}

int kplan_choose(const struct plan *p, bool fit, enum kplan_mode *mode, struct work **works,
                 struct cost_opts *o, const char **why, struct err *e)
{
	int r;

	*works = NULL;
	*mode = KPLAN_FITTED;
	*why = NULL;
	memset(o, 0, sizeof(*o));
	o->seq = p->model.seq_len;
	o->micro_batch = p->model.micro_batch_size > 0 ? p->model.micro_batch_size : 1;
	o->tp = 1;
	if (fit)
		return 0;
	r = model_works(plan_src_model(p), works, o, e);
	if (r < 0)
		return -1;
	if (r > 0) {
		*why = "the model is a profile-only layer table, with no architecture";
		return 0;
	}
	/* the plan's replica: its sequence and micro-batch, at its layout's TP degree */
	o->seq = p->model.seq_len;
	o->micro_batch = p->model.micro_batch_size > 0 ? p->model.micro_batch_size : 1;
	if (p->has_parallel)
		o->tp = p->par.tp;
	if (o->tp < 1)
		o->tp = 1;
	/* and its expert-parallel degree: the cost model's kernels of the E / ep experts a
	 * rank holds, each on the rows of ep ranks */
	o->ep = plan_parallel(p).ep > 1 ? plan_parallel(p).ep : 1;
	*mode = KPLAN_ARCHITECTURE;
	return 0;
}

const char *kplan_not_run(const struct plan *p, const struct work *works, const struct cost_opts *o)
{
	const struct model *m = plan_src_model(p);
	struct parallel l = plan_parallel(p);
	bool sync = false, a2a = false;

	if (!works)
		return NULL;
	for (int i = 0; i < m->nlayers; i++) {
		sync |= o->tp > 1 && works[i].tp_syncs > 0;
		a2a |= (o->tp > 1 || l.ep > 1) && works[i].a2a > 0;
	}
	if (l.zero >= 3)
		return sync || a2a ? "the collectives of each layer (tensor-parallel all-reduces, all-to-all) and ZeRO 3's "
		                     "weight gathers are priced in the plan but not run (one GPU runs each pipeline rank's "
		                     "share of the kernels, of one replica)"
		                   : "ZeRO 3's weight gathers are priced in the plan but not run (one GPU runs each pipeline "
		                     "rank's kernels, of one replica)";
	if (o->tp <= 1)
		return a2a ? "the experts' expert-parallel all-to-all is priced in the plan but not run (one GPU runs "
		             "each pipeline rank's kernels)" : NULL;
	if (!sync && !a2a)
		return NULL;
	return a2a ? "the tensor-parallel all-reduces and the all-to-all of each layer are priced in the plan but not "
	             "run (one GPU runs each pipeline rank's 1/tp share of the kernels)"
	           : "the tensor-parallel all-reduces of each layer are priced in the plan but not run (one GPU runs "
	             "each pipeline rank's 1/tp share of the kernels)";
}

long kplan_core_block(const struct kernel *x)
{
	long block = (x->seq + 15) / 16;

	/* a window's blocks: a quarter of it, so a block's keys (window + block) waste at most
	 * a quarter of its GEMMs; smaller blocks cost more in launches (three a block) than
	 * they save (on an H200, 2026-12-04, a 1023-token window over 4096 queries: blocks of
	 * an eighth 1.52 ms, no faster than the causal core's 1.63; of a quarter 1.27 ms) */
	if (x->window > 0 && x->window < x->seq && block > x->window / 4)
		block = x->window / 4;
	block = (block + 63) / 64 * 64;
	if (block < 64)
		block = 64;
	while ((x->seq + block - 1) / block > KPLAN_CORE_TILES)
		block += 64;
	return block;
}

int kplan_core_tiles(const struct kernel *x, struct kplan_tile *out)
{
	long seq = x->seq, block, n = 0;

	if (x->heads <= 0 || seq <= 0)
		return 0;
	block = kplan_core_block(x);
	for (long q0 = 0; q0 < seq; q0 += block) {
		long rows = seq - q0 < block ? seq - q0 : block, end = q0 + rows;
		long k0 = x->window > 0 && q0 - x->window + 1 > 0 ? q0 - x->window + 1 : 0;

		out[n++] = (struct kplan_tile){ q0, rows, k0, end - k0, kplan_ld(end - k0) };
	}
	return (int)n;
}

double kplan_core_gemm_flops(const struct kernel *x)
{
	struct kplan_tile t[KPLAN_CORE_TILES];
	int n = kplan_core_tiles(x, t);
	double sum = 0;

	for (int i = 0; i < n; i++)
		sum += 2.0 * (double)t[i].rows * (double)t[i].keys * (x->d_qk + x->d_v);
	return sum * x->heads * (x->seqs > 0 ? x->seqs : 1);
}

long kplan_launches(const struct kernel *x, enum kernel_pass p)
{
	struct kplan_tile t[KPLAN_CORE_TILES];
	long n = x->launches > 0 ? x->launches : 1;

	if (x->m > 0)
		return x->groups > 0 ? x->groups : 1;
	if (x->heads > 0 && x->flops > 0)   /* per block: QK^T and PV (the backward's four GEMMs), the softmax */
		return (long)kplan_core_tiles(x, t) * ((p == PASS_F ? 2 : 4) + (x->cls != EFF_GEMM));
	if (x->bytes + x->state_bytes <= 0 && x->flops <= 0)
		return 0;
	/* an SSD: its GEMM, and its bytes on the other launches (at least one) */
	if (x->cls == EFF_SSD && x->flops > 0 && x->bytes + x->state_bytes > 0 && n < 2)
		return 2;
	return n;
}

void kplan_gemm_lds(const struct kernel *x, long ld[3])
{
	long m = (long)ceil(x->m), k = (long)ceil(x->k);

	ld[0] = kplan_ld(m);
	ld[1] = kplan_ld(k);
	ld[2] = kplan_ld(m);
}

void kplan_gemm_elems(const struct kernel *x, double elems[3])
{
	long ld[3];
	double g = x->groups > 0 ? x->groups : 1;

	kplan_gemm_lds(x, ld);
	elems[0] = g * (double)ld[0] * ceil(x->k);
	elems[1] = g * (double)ld[1] * ceil(x->n);
	elems[2] = g * (double)ld[2] * ceil(x->n);
}

void kplan_core_strides(const struct kernel *x, long *ldq, long *ldv)
{
	*ldq = kplan_ld(x->d_qk);
	*ldv = kplan_ld(x->d_v);
}

double kplan_core_score_elems(const struct kernel *x)
{
	struct kplan_tile t[KPLAN_CORE_TILES];
	double most = 0;
	int n;

	if (x->heads <= 0 || x->flops <= 0)
		return 0;
	n = kplan_core_tiles(x, t);
	for (int i = 0; i < n; i++)
		most = fmax(most, (double)t[i].rows * (double)t[i].ld);
	return (double)x->heads * (x->seqs > 0 ? x->seqs : 1) * most;
}

struct kplan_call kplan_ssd_gemm(const struct kernel *x)
{
	const double per = 2.0 * KPLAN_SSD_M * KPLAN_SSD_M * KPLAN_SSD_K;   /* FLOPs at k = KPLAN_SSD_K */
	struct kplan_call c = { KPLAN_SSD_M, KPLAN_SSD_M, KPLAN_SSD_K, KPLAN_SSD_M, KPLAN_SSD_K, KPLAN_SSD_M, 0 };
	double batch;

	if (x->cls != EFF_SSD || x->flops <= 0 || x->m > 0 || x->heads > 0)
		return c;
	batch = ceil(x->flops / per);
	if (batch > KPLAN_SSD_BATCH) {   /* deeper products rather than more of them */
		c.k = KPLAN_SSD_K * (long)ceil(batch / KPLAN_SSD_BATCH);
		c.ldb = c.k;
		batch = ceil(x->flops / (2.0 * c.m * c.n * c.k));
	}
	c.batch = (int)batch;
	return c;
}

double kplan_ssd_bytes(const struct kernel *x)
{
	struct kplan_call c = kplan_ssd_gemm(x);

	if (!c.batch)
		return 0;
	return 2.0 * ((double)c.m * c.k + (double)c.k * c.n + (double)c.batch * c.m * c.n);
}

/* The calls of one block of core x in pass p (two forward, four backward). */
static int core_calls(const struct kernel *x, const struct kplan_tile *t, enum kernel_pass p, struct kplan_call *c)
{
	long dq = x->d_qk, dv = x->d_v, ldq, ldv, r = t->rows, k = t->keys, ld = t->ld;
	int b = x->heads * (x->seqs > 0 ? x->seqs : 1);

	kplan_core_strides(x, &ldq, &ldv);
	if (p == PASS_F) {
		c[0] = (struct kplan_call){ k, r, dq, ldq, ldq, ld, b };    /* S = K Q^T (as cuBLAS sees it) */
		c[1] = (struct kplan_call){ dv, r, k, ldv, ld, ldv, b };    /* O = P V */
		return 2;
	}
	c[0] = (struct kplan_call){ k, r, dv, ldv, ldv, ld, b };        /* dP = dO V^T */
	c[1] = (struct kplan_call){ dq, r, k, ldq, ld, ldq, b };        /* dQ = dS K */
	c[2] = (struct kplan_call){ dq, k, r, ldq, ld, ldq, b };        /* dK = dS^T Q */
	c[3] = (struct kplan_call){ dv, k, r, ldv, ld, ldv, b };        /* dV = P^T dO */
	return 4;
}

int kplan_calls(const struct kernel *x, enum kernel_pass p, struct kplan_call *out, int max)
{
	struct kplan_call c[4];
	int n = 0;

	if (x->m > 0) {
		long ld[3], m = (long)ceil(x->m), nn = (long)ceil(x->n), k = (long)ceil(x->k);
		int g = x->groups > 0 ? x->groups : 1;

		kplan_gemm_lds(x, ld);
		/* F: Y = X W; W: dW = X^T dY; I: dX = dY W^T */
		c[0] = p == PASS_F ? (struct kplan_call){ m, nn, k, ld[0], ld[1], ld[2], 1 }
		     : p == PASS_W ? (struct kplan_call){ k, nn, m, ld[0], ld[2], ld[1], 1 }
		                   : (struct kplan_call){ m, k, nn, ld[2], ld[1], ld[0], 1 };
		for (int i = 0; i < g; i++, n++)
			if (n < max)
				out[n] = c[0];
		return n;
	}
	if (x->heads > 0 && x->flops > 0) {
		struct kplan_tile t[KPLAN_CORE_TILES];
		int nt = kplan_core_tiles(x, t);

		if (p == PASS_W)
			return 0;
		for (int i = 0; i < nt; i++) {
			int k = core_calls(x, &t[i], p, c);

			for (int j = 0; j < k; j++, n++)
				if (n < max)
					out[n] = c[j];
		}
		return n;
	}
	c[0] = kplan_ssd_gemm(x);
	if (c[0].batch > 0 && max > 0)
		out[0] = c[0];
	return c[0].batch > 0;
}

int kplan_warm_ups(enum kplan_mode m, bool refit)
{
	return m == KPLAN_FITTED && refit ? 2 : 1;
}

int kplan_nccl_ctas(int sms, int channels)
{
	int n = channels > 0 ? sms / 2 / channels : 16;

	return n < 1 ? 1 : n > 16 ? 16 : n;
}
