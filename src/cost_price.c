/*
 * cost_price — what a layer's kernels cost (see cost.h): each kernel at its class's
 * efficiency, (FLOPs / peak + bytes / HBM) / efficiency, its launches serial or queued
 * ahead; a layer's F, I and W times with the TP collectives the runtime exposes; its
 * memory, and what each recompute mode keeps and redoes.
 */
#include "config.h"
#include "cost.h"

#include <math.h>
#include <string.h>

/*
 * Adds kernel k's units: (FLOPs / peak + bytes / HBM) in its class, and its launches. At
 * efficiency e of its class a kernel takes (FLOPs / peak + bytes / HBM) / e: its achieved
 * fraction of peak is e x I / (I + I0), with I its arithmetic intensity (FLOPs per byte)
 * and I0 = peak / HBM the ridge point (206 on an H200), a saturating function of the shape.
 * A large GEMM (I in the thousands) runs at e; a skinny one (few tokens per expert, a small
 * hidden size) is bound by moving its operands. Elementwise kernels have only bytes.
 */
static void add_kernel_units(const struct kernel *k, const struct hardware *hw, double u[HW_NPARAM])
{
	u[k->cls] += 1e3 * (k->flops / (hw->peak_tflops * 1e12) + k->bytes / (hw->hbm_gbytes_per_s * 1e9));
	u[HW_LAUNCH] += 1e-3 * k->launches;
}

/* A fused core with dropout runs a slower kernel: its FLOPs count as flash FLOPs weighted by
 * the ratio of the two efficiencies of the pass (1 when the hardware names none). */
static double dropout_weight(const struct kernel *k, const struct hardware *hw, enum kernel_pass p)
{
	double e = p == PASS_F ? hw->flash_dropout_f : hw->flash_dropout_b;

	if (!k->dropout || k->cls != EFF_FLASH || e <= 0)
		return 1;
	return (p == PASS_F ? hw->eff_f[EFF_FLASH] : hw->eff_b[EFF_FLASH]) / e;
}

static void add_priced_units(const struct kernel *k, const struct hardware *hw, enum kernel_pass p,
                             double u[HW_NPARAM])
{
	struct kernel x = *k;

	x.flops *= dropout_weight(k, hw, p);
	add_kernel_units(&x, hw, u);
}

void cost_kernel_units(const struct kernel *k, const struct hardware *hw, double u[HW_NPARAM])
{
	add_kernel_units(k, hw, u);
}

static double units_ms(const double u[HW_NPARAM], const double eff[EFF_NCLASS], double launch_us)
{
	double ms = u[HW_LAUNCH] * launch_us;

	for (int c = 0; c < EFF_NCLASS; c++)
		ms += u[c] / eff[c];
	return ms;
}

double cost_kernel_ms(const struct kernel *k, const struct hardware *hw, enum kernel_pass p)
{
	double u[HW_NPARAM] = { 0 }, launch_us = p == PASS_F ? hw->launch_us_f : hw->launch_us_b, work;

	add_priced_units(k, hw, p, u);
	if (!hw->launch_async)
		return p == PASS_F ? units_ms(u, hw->eff_f, hw->launch_us_f) : units_ms(u, hw->eff_b, hw->launch_us_b);
	/* launches queued ahead overlap the kernels before them: the GPU waits on the host only
	 * when a kernel is shorter than launching it */
	work = units_ms(u, p == PASS_F ? hw->eff_f : hw->eff_b, 0);
	return fmax(work, u[HW_LAUNCH] * launch_us);
}

#define KMAX (2 * WORK_MAX_KERNELS + EFF_NCLASS)

/* units of one pass (all its kernels) */
static void pass_units(const struct work *w, const struct hardware *hw, const struct cost_opts *o,
                       enum kernel_pass p, double u[HW_NPARAM])
{
	struct kernel ks[KMAX];
	int n = cost_kernels(w, o, p, ks, KMAX);

	memset(u, 0, HW_NPARAM * sizeof(*u));
	for (int i = 0; i < n && i < KMAX; i++)
		add_priced_units(&ks[i], hw, p, u);
}

/* What one pass costs: all of it, its linear layers' part (what TP collectives can hide
 * behind), and what each selective recompute mode redoes. */
struct pass_ms {
	double all, gemm, core, elem;
};

static void pass_time(const struct work *w, const struct hardware *hw, const struct cost_opts *o,
                      enum kernel_pass p, struct pass_ms *t)
{
	struct kernel ks[KMAX];
	int n = cost_kernels(w, o, p, ks, KMAX);

	memset(t, 0, sizeof(*t));
	if (!hw->launch_async) {
		/* serial launches: the sum is linear in the parameters, priced as calibration fits it */
		double u[HW_NPARAM];

		pass_units(w, hw, o, p, u);
		t->all = units_ms(u, p == PASS_F ? hw->eff_f : hw->eff_b, p == PASS_F ? hw->launch_us_f : hw->launch_us_b);
	}
	for (int i = 0; i < n && i < KMAX; i++) {
		double ms = cost_kernel_ms(&ks[i], hw, p);

		if (hw->launch_async)
			t->all += ms;
		if (ks[i].name && strncmp(ks[i].name, "attn_core", 9) == 0)  /* flash, or eager's GEMMs and passes */
			t->core += ms;
		else if (ks[i].cls == EFF_GEMM || ks[i].cls == EFF_GROUPED)
			t->gemm += ms;
		else if (ks[i].cls == EFF_MEMORY)
			t->elem += ms;
	}
}

void cost_units(const struct work *w, const struct hardware *hw, const struct cost_opts *o,
                double f_units[HW_NPARAM], double bw_units[HW_NPARAM])
{
	double ui[HW_NPARAM], uw[HW_NPARAM];

	pass_units(w, hw, o, PASS_F, f_units);
	pass_units(w, hw, o, PASS_I, ui);
	pass_units(w, hw, o, PASS_W, uw);
	for (int c = 0; c < HW_NPARAM; c++)
		bw_units[c] = ui[c] + uw[c];
}

/* ring all-reduce (2 (t-1)/t of the bytes each way) or all-to-all over the TP group */
static double comm_ms(const struct cost_opts *o, double bytes, double share, int steps)
{
	if (o->tp <= 1 || o->link_gbytes_per_s <= 0 || bytes <= 0)
		return 0;
	return 1e3 * share * bytes / (o->link_gbytes_per_s * 1e9) + steps * o->link_latency_us * 1e-3;
}

/* Bytes per token that torchtitan's op-level selective checkpointing keeps of a layer: its
 * input, every other GEMM's output (its policy saves matmul outputs but skips every second
 * one) and the attention core's output. */
static double sac_kept_per_token(const struct work *w, double t)
{
	double gemm_out = 0, core_out = 0;

	for (int i = 0; i < w->nk; i++) {
		const struct ktmpl *k = &w->k[i];

		if (k->kind == KT_GEMM)
			gemm_out += 2.0 * k->rows * k->n / (k->split == KS_COLUMN ? t : 1);
		else if (k->role == KR_CORE)
			core_out += 2.0 * k->groups * k->n / t;
	}
	return w->in / t + 0.5 * gemm_out + core_out;
}

/* the TP collectives of one pass as the runtime exposes them: all of them, or with
 * --tp-comm-overlap what the pass's GEMMs cannot cover (at least one of T chunks) */
static double exposed_comm(const struct cost_opts *o, double comm, double gemm_ms)
{
	if (!o->style.tp_overlap || o->tp <= 1)
		return comm;
	return fmax(comm - gemm_ms, comm / o->tp);
}

void cost_layer(const struct work *w, const struct hardware *hw, const struct cost_opts *o,
                struct layer_cost *lc)
{
	struct pass_ms tf, ti, tw;
	double tok = (double)o->seq * (double)o->micro_batch, t = o->tp > 1 ? o->tp : 1;
	double sync, act;

	memset(lc, 0, sizeof(*lc));
	pass_time(w, hw, o, PASS_F, &tf);
	pass_time(w, hw, o, PASS_I, &ti);
	pass_time(w, hw, o, PASS_W, &tw);
	lc->f_ms = tf.all;
	lc->b_ms = ti.all;
	lc->w_ms = tw.all;
	/* TP all-reduces (or all-gather + reduce-scatter) of the hidden state: in F and I, never
	 * in W. MoE layers move no more: Megatron-LM's dispatcher gathers the sequence-parallel
	 * tokens over the TP group and scatters them back, one all-reduce's worth; the expert-
	 * parallel all-to-all is priced by the layout (parallel.c) */
	sync = o->no_comm ? 0 : w->tp_syncs * comm_ms(o, tok * (w->in > 0 ? w->in : w->out), 2 * (t - 1) / t,
	                                              2 * (o->tp - 1));
	lc->f_ms += exposed_comm(o, sync, tf.gemm);
	lc->b_ms += exposed_comm(o, sync, ti.gemm);
	if (o->recompute)
		lc->b_ms += lc->f_ms;
	/* each rank holds 1/t of the split weights and all of the replicated ones */
	lc->param_bytes = 2 * ((w->params - w->whole_params) / t + w->whole_params);
	lc->expert_param_bytes = 2 * w->expert_params / t;
	lc->tied_bytes = 2 * w->tied_params / t;
	/* with sequence parallelism each TP rank sends its 1/t of the hidden state */
	lc->out_bytes = tok * w->out / t;
	lc->in_bytes = tok * w->in / t;
	lc->a2a_bytes = tok * w->a2a / t;
	act = tok * w->act / t;
	if (cost_core_eager(&o->style, w->core_eager))
		act += tok * w->core_act_per_ctx * cost_ctx(o->seq, w->window) / t;
	/* what selective recompute redoes and drops: the attention core (Megatron-LM: its
	 * scores when eager; a fused core keeps nothing to drop), or everything torchtitan's
	 * op-level policy does not save (elementwise work and every other GEMM) */
	if (o->style.selective == COST_SEL_OPS && w->nk > 0) {
		lc->core_f_ms = tf.elem + 0.5 * tf.gemm;
		lc->core_act_bytes = fmax(0, act - tok * sac_kept_per_token(w, t));
	} else {
		lc->core_f_ms = tf.core;
		if (cost_core_eager(&o->style, w->core_eager))
			lc->core_act_bytes = tok * w->core_act_per_ctx * cost_ctx(o->seq, w->window) / t;
	}
	if (o->recompute) {
		lc->act_bytes = tok * w->in / t;
		lc->act_w_bytes = lc->act_bytes;
		lc->core_act_bytes = 0;
	} else {
		lc->act_bytes = act;
		lc->act_w_bytes = fmin(tok * w->act_w / t, lc->act_bytes);
	}
}
