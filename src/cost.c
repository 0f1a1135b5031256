/*
 * cost — FLOPs, bytes and times per block kind (see cost.h).
 *
 * Every formula is per token and forward, as docs/METHOD.md §6.2 counts it: GEMM FLOPs
 * are 2 x the linear weights a token passes through, the attention core is 4 n_q d_h FLOPs per key it
 * attends to, scans and convolutions get their own class, and elementwise kernels are
 * counted in bytes. The backward follows the zero-bubble split (docs/METHOD.md §6.3): a
 * GEMM's input grad and weight grad each cost its forward; cores, scans and elementwise kernels cost
 * twice their forward (the loss: what its backward moves) and all of it is input grad (their
 * weight grads are produced in the same fused kernel). Keeping work per class is what lets calibration fit efficiencies.
 *
 * Alongside the per-class sums every block appends its kernel templates (a fused QKV GEMM,
 * RoPE, the attention core, each routed expert's GEMMs with their gather and scatter, ...);
 * cost_kernels.c expands them for a pass the way a runtime runs them and cost_price.c
 * prices them: launches + (FLOPs / peak + bytes / HBM) / efficiency, shape-aware through
 * each kernel's bytes.
 */
#include "config.h"
#include "cost.h"

#include <math.h>
#include <string.h>

/* elementwise traffic of one pre-norm and its residual add: read h write h, read 2h write h */
#define NORM_BYTES(h) (10.0 * (double)(h))

/*
 * Eager attention materializes the scores: per query, key and head it writes the bf16
 * QK^T product, scales and masks it (read and write), runs the softmax in fp32 (read,
 * write fp32), casts back (read fp32, write bf16) and reads it again for PV: 24 bytes.
 * Learned sink logits add a concatenation, a max and a subtraction before the softmax
 * and a strided slice after it: 12 bytes more.
 */
#define EAGER_SCORE_BYTES 24.0
#define SINK_SCORE_BYTES 12.0

/*
 * Elementwise bytes per routed copy and intermediate feature of an expert's activation.
 * A SwiGLU reads gate and up and writes their product: 6. gpt-oss's clamped SwiGLU is a
 * chain of elementwise operations over the up-projection's output: its bias add (read and
 * write 2f: 8), the clamps of gate and up (4 each), gate x alpha (4), the sigmoid (4),
 * gate x sigmoid (6), up + 1 (4) and the product (6): 40, in 8 kernels.
 */
#define SWIGLU_BYTES 6.0
#define CLAMPED_SWIGLU_BYTES 40.0

/* appends one entry of the kernel list; a layer with more than WORK_MAX_KERNELS is marked
 * (k_cut), so that it is refused rather than priced without its last kernels */
static void kt(struct work *w, int kind, int cls, int launches, const char *name, double n, double k,
               double rows, double groups, double flops, double bytes)
{
	struct ktmpl *t;

	if (w->nk >= WORK_MAX_KERNELS) {
		w->k_cut = true;
		return;
	}
	t = &w->k[w->nk++];
	t->kind = (unsigned char)kind;
	t->cls = (unsigned char)cls;
	t->launches = (unsigned short)(launches > 65535 ? 65535 : launches);
	t->name = name;
	t->n = (float)n;
	t->k = (float)k;
	t->rows = (float)rows;
	t->groups = (float)groups;
	t->flops = (float)flops;
	t->bytes = (float)bytes;
	t->bwd = 0;
	t->state = 0;
	t->split = KS_COLUMN;
	t->role = KR_NONE;
	t->eager = false;
	t->dropout = false;
}

/* the HBM traffic per token of the scan just appended (see ktmpl.state) */
static void scan_state(struct work *w, double bytes)
{
	if (!w->k_cut && w->nk > 0)
		w->k[w->nk - 1].state = (float)bytes;
}

static void gemm(struct work *w, const char *name, double n, double k)
{
	kt(w, KT_GEMM, EFF_GEMM, 1, name, n, k, 1, 1, 0, 0);
}

/* how tensor parallelism splits the kernel just appended (KS_COLUMN unless said) */
static void split_as(struct work *w, enum ktmpl_split how)
{
	if (!w->k_cut && w->nk > 0)
		w->k[w->nk - 1].split = (unsigned char)how;
}

static void elem(struct work *w, const char *name, double bytes, int launches)
{
	if (bytes > 0)
		kt(w, KT_ELEM, EFF_MEMORY, launches, name, 0, 0, 0, 0, 0, bytes);
}

/* Dropout before a residual add keeps its mask, one byte an element, for the backward. Its
 * time is the residual add's (the norm's kernels): a fused bias-dropout-add writes the mask
 * beside the sum it writes anyway. */
static void hidden_dropout(struct work *w, const struct block *b)
{
	if (b->hidden_dropout > 0)
		w->act += (double)b->h;
}

static void norms(struct work *w, const struct block *b)
{
	/* each pre-norm: the norm and its residual add */
	elem(w, "norm", b->norms * NORM_BYTES(b->h), 2 * b->norms);
}

/*
 * The attention core, one template for both ways a runtime may run it (cost_style): fused
 * (FlashAttention, cuDNN: one kernel, FLOPs at the flash efficiency, no scores kept) or
 * eager, what an unfused core launches: QK^T and PV as two batched GEMMs, priced as GEMMs,
 * and the passes over the materialized scores (scale, mask, softmax, casts; with sink
 * logits cat, max, sub, slice), priced in bytes at the memory efficiency. score_bytes and
 * passes are the eager passes'; eager marks a model that forces the eager class on a
 * runtime that follows Hugging Face's choice.
 */
static void core(struct work *w, double heads, double d_qk, double d_v, double score_bytes, int passes, bool eager,
                 bool dropout)
{
	kt(w, KT_CORE, EFF_FLASH, passes, "attn_core", d_v, d_qk, 0, heads, 2 * heads * (d_qk + d_v), score_bytes);
	if (!w->k_cut) {
		w->k[w->nk - 1].role = KR_CORE;
		w->k[w->nk - 1].eager = eager;
		w->k[w->nk - 1].dropout = dropout;
	}
	w->core_eager = eager;
	w->core_act_per_ctx += 2.0 * heads;      /* bf16 probabilities, one per head and key */
}

/* marks the kernel just appended as a routed expert's, launched once per expert of E */
static void expert_role(struct work *w, double E)
{
	if (!w->k_cut && w->nk > 0) {
		w->k[w->nk - 1].role = KR_EXPERT;
		w->k[w->nk - 1].groups = (float)E;
	}
}

static void attn(const struct block *b, struct work *w)
{
	double h = (double)b->h, q = (double)b->n_q * b->d_h, kv = (double)b->n_kv * b->d_h;
	double qproj = b->out_gate ? 2 * q : q;
	double lin = h * qproj + 2 * h * kv + q * h;
	/* q/k norms read and write q and k once more (bf16), and keep their inputs */
	bool qkn = b->qk_norm || b->qk_norm_full;
	double qkn_bytes = qkn ? 4 * (q + kv) : 0;

	w->params += lin + b->norms * h + (b->qk_norm ? 2.0 * b->d_h : 0) + (b->sinks ? b->n_q : 0) +
	             (b->bias ? qproj + 2 * kv + h : 0);
	w->whole_params += b->norms * h + (b->qk_norm ? 2.0 * b->d_h : 0) + (b->bias ? h : 0);
	/* biases of q, k, v alone (added in the GEMM's epilogue, as addmm does: no kernel of their
	 * own) and whole-projection q/k norms split with the heads */
	w->params += (b->qkv_bias && !b->bias ? qproj + 2 * kv : 0) + (b->qk_norm_full ? q + kv : 0);
	w->f[EFF_GEMM] += 2 * lin;
	w->core_per_ctx += 4.0 * b->n_q * b->d_h;
	w->window = b->window;
	w->core_class = b->sinks || b->eager ? EFF_EAGER : EFF_FLASH;  /* a table without kernels */
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h) + 4 * (q + kv) + (b->out_gate ? 6 * q : 0) + qkn_bytes;
	norms(w, b);
	gemm(w, "qkv", qproj + 2 * kv, h);
	elem(w, "qk_norm", qkn_bytes, 2);
	w->act += qkn ? 2 * (q + kv) : 0;
	elem(w, "rope", 4 * (q + kv) + (b->out_gate ? 6 * q : 0), b->out_gate ? 3 : 2);
	core(w, b->n_q, b->d_h, b->d_h, b->n_q * (EAGER_SCORE_BYTES + (b->sinks ? SINK_SCORE_BYTES : 0)),
	     b->sinks ? 8 : 4, b->sinks || b->eager, b->attn_dropout > 0);
	gemm(w, "o_proj", h, q);
	split_as(w, KS_ROW);
	hidden_dropout(w, b);
	if (b->attn_dropout > 0)
		w->core_act_per_ctx += b->n_q;           /* an eager core keeps the mask of its scores */
	/* norm input, QKV input, Q K V, output-projection input, fp32 softmax statistics */
	w->act += 2 * (h + h + q + 2 * kv + q) + 4.0 * b->n_q + (b->out_gate ? 2 * q : 0);
	w->act_w += 2 * ((h + qproj + 2 * kv) + (q + h));
	w->tp_syncs++;
}

static void mla(const struct block *b, struct work *w)
{
	double h = (double)b->h, n = b->n_q, rq = b->q_lora, rkv = b->kv_lora;
	double dqk = (double)b->d_nope + b->d_rope, dv = b->d_v;
	double qlin = rq > 0 ? h * rq + rq * n * dqk : h * n * dqk;
	double lin = qlin + h * (rkv + b->d_rope) + rkv * n * (b->d_nope + dv) + n * dv * h;

	w->params += lin + b->norms * h + (rq > 0 ? rq : 0) + rkv;
	/* the down-projections and their norms run whole on every rank (q_a, kv_a below) */
	w->whole_params += b->norms * h + (rq > 0 ? h * rq + rq : 0) + h * (rkv + b->d_rope) + rkv;
	w->f[EFF_GEMM] += 2 * lin;
	w->core_per_ctx += 2 * n * dqk + 2 * n * dv;
	w->window = 0;
	w->core_class = EFF_FLASH;
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h) + 4 * n * dqk * 2;
	norms(w, b);
	if (rq > 0) {
		gemm(w, "q_a", rq, h);
		split_as(w, KS_WHOLE);
		gemm(w, "q_b", n * dqk, rq);
	} else {
		gemm(w, "q", n * dqk, h);
	}
	gemm(w, "kv_a", rkv + b->d_rope, h);
	split_as(w, KS_WHOLE);
	gemm(w, "kv_b", n * (b->d_nope + dv), rkv);
	elem(w, "rope", 4 * n * dqk * 2, 3);
	if (b->eager)
		w->core_class = EFF_EAGER;
	core(w, n, dqk, dv, n * EAGER_SCORE_BYTES, 4, b->eager, b->attn_dropout > 0);
	gemm(w, "o_proj", h, n * dv);
	split_as(w, KS_ROW);
	w->act += 2 * (2 * h + (rq > 0 ? rq : 0) + n * dqk + rkv + b->d_rope + n * dqk + n * dv + n * dv) +
	          4 * n;
	w->act_w += 2 * ((rq > 0 ? h + rq + rq + n * dqk : h + n * dqk) + (h + rkv + b->d_rope) +
	                 (rkv + n * (b->d_nope + dv)) + (n * dv + h));
	w->tp_syncs++;
}

/* one dense MLP of intermediate f (no norm): params, FLOPs, bytes */
static void mlp_core(const struct block *b, double f, double copies, struct work *w, int cls)
{
	double h = (double)b->h;
	double mats = b->gated ? 3 : 2;

	if (cls == EFF_GROUPED) {
		/* the routed experts: one GEMM per expert and pass, top-k rows per token, each expert
		 * gathering its tokens and scattering its results back */
		double E = b->experts;
		int le = b->experts;

		kt(w, KT_ELEM, EFF_MEMORY, le, "experts.gather", 0, 0, 0, 0, 0, 4.0 * copies * h);
		expert_role(w, E);
		kt(w, KT_GEMM, EFF_GROUPED, le, "experts.up", (mats - 1) * f, h, copies, E, 0, 0);
		expert_role(w, E);
		kt(w, KT_ELEM, EFF_MEMORY, b->clamped ? 8 * le : b->gated ? 2 * le : le, "experts.act", 0, 0, 0, 0, 0,
		   copies * (b->clamped ? CLAMPED_SWIGLU_BYTES : b->gated ? SWIGLU_BYTES : 4) * f);
		expert_role(w, E);
		kt(w, KT_GEMM, EFF_GROUPED, le, "experts.down", h, f, copies, E, 0, 0);
		split_as(w, KS_ROW);
		expert_role(w, E);
		kt(w, KT_ELEM, EFF_MEMORY, le, "experts.scatter", 0, 0, 0, 0, 0, 4.0 * copies * h);
		expert_role(w, E);
	} else {
		gemm(w, "mlp.up", (mats - 1) * f, h);
		elem(w, "mlp.act", (b->gated ? 6 : 4) * f, b->gated ? 2 : 1);
		gemm(w, "mlp.down", h, f);
		split_as(w, KS_ROW);
	}

	w->f[cls] += copies * 2 * mats * h * f;
	w->f[EFF_MEMORY] += copies * (b->clamped && cls == EFF_GROUPED ? CLAMPED_SWIGLU_BYTES : b->gated ? SWIGLU_BYTES : 4) * f;
	w->act += copies * 2 * (h + mats * f);
	w->act_w += copies * 2 * ((h + (mats - 1) * f) + (f + h));
}

static void mlp(const struct block *b, struct work *w)
{
	double h = (double)b->h, f = (double)b->f, mats = b->gated ? 3 : 2;

	w->params += mats * h * f + b->norms * h + (b->bias ? (mats - 1) * f + h : 0);
	w->whole_params += b->norms * h + (b->bias ? h : 0);
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h);
	w->act += 2 * h;
	norms(w, b);
	mlp_core(b, f, 1, w, EFF_GEMM);
	hidden_dropout(w, b);
	w->tp_syncs++;
}

static void moe(const struct block *b, struct work *w)
{
	double h = (double)b->h, f = (double)b->f, mats = b->gated ? 3 : 2, E = b->experts;
	double expert = mats * h * f + (b->bias ? (mats - 1) * f + h : 0);
	double shared = b->f_shared > 0 ? 3 * h * (double)b->f_shared : 0;
	double router = h * E + (b->bias ? E : 0);

	w->params += router + E * expert + shared + (b->shared_gate ? h : 0) + b->norms * h;
	w->expert_params += E * expert;
	w->whole_params += router + (b->shared_gate ? h : 0) + b->norms * h;
	w->active += router + b->top_k * expert + shared + (b->shared_gate ? h : 0) + b->norms * h;
	w->f[EFF_GEMM] += 2 * h * E + (b->shared_gate ? 2 * h : 0);
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h) + 8.0 * b->top_k * h + 12 * E;
	w->act += 2 * h + 4 * E;
	w->act_w += 2 * (h + E);
	norms(w, b);
	gemm(w, "router", E, h);
	split_as(w, KS_WHOLE);
	/* softmax, top-k, weights, token counts per expert */
	elem(w, "route", 12 * E, 4);
	mlp_core(b, f, b->top_k, w, EFF_GROUPED);
	if (b->f_shared > 0) {
		struct block s = *b;

		s.gated = true;
		mlp_core(&s, (double)b->f_shared, 1, w, EFF_GEMM);
		if (b->shared_gate) {
			gemm(w, "shared_gate", 1, h);
			split_as(w, KS_WHOLE);
		}
	}
	w->a2a += 4.0 * b->top_k * h;
	w->tp_syncs++;
}

static void mamba2(const struct block *b, struct work *w)
{
	double h = (double)b->h, H = b->ssm_heads, P = b->ssm_head_dim, G = b->groups, N = b->state;
	double K = b->conv, Q = b->chunk, din = H * P, xbc = din + 2 * G * N;
	double in_proj = h * (2 * din + 2 * G * N + H), out_proj = din * h;

	w->params += in_proj + out_proj + xbc * K + (b->ssm_no_conv_bias ? 0 : xbc) /* conv bias */ +
	             3 * H /* dt_bias A_log D */ + (b->ssm_no_norm ? 0 : din) /* gated norm */ + b->norms * h +
	             (b->ssm_in_bias ? 2 * din + 2 * G * N + H : 0) + (b->ssm_out_bias ? h : 0);
	/* conv, dt, A, D, the gated norm and the in_proj bias split by head; out_proj's bias is
	 * added after the row-parallel reduction */
	w->whole_params += b->norms * h + (b->ssm_out_bias ? h : 0);
	w->f[EFF_GEMM] += 2 * (in_proj + out_proj);
	w->f[EFF_SSD] += 2 * K * xbc + 2 * Q * N * G + 2 * Q * P * H + 4 * N * P * H;
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h) + 4 * xbc + 8 * din;
	norms(w, b);
	gemm(w, "in_proj", 2 * din + 2 * G * N + H, h);
	/* causal conv1d, chunk cumsum, chunk states, state passing, chunk scan */
	kt(w, KT_OTHER, EFF_SSD, 5, "conv+ssd", 0, 0, 0, 0, 2 * K * xbc + 2 * Q * N * G + 2 * Q * P * H + 4 * N * P * H, 0);
	/* bf16 x, B, C in and y out; each chunk's fp32 state (H P N) written by the chunk
	 * states, read and written by the state passing, read by the chunk scan */
	scan_state(w, 2 * xbc + 2 * din + 4 * 4 * H * P * N / Q);
	elem(w, "gated_norm", 4 * xbc + 8 * din, 3);
	gemm(w, "out_proj", h, din);
	split_as(w, KS_ROW);
	w->act += 2 * (2 * h + (2 * din + 2 * G * N + H) + xbc + 2 * din) + 4 * H + 4 * H * P * N / Q;
	w->act_w += 2 * ((h + 2 * din + 2 * G * N + H) + (din + h));
	w->tp_syncs++;
}

static void mamba1(const struct block *b, struct work *w)
{
	double h = (double)b->h, din = (double)b->d_inner, R = b->dt_rank, N = b->state, K = b->conv;
	double lin = h * 2 * din + din * (R + 2 * N) + R * din + din * h;

	w->params += lin + din * K + din /* conv bias */ + din /* dt_proj bias */ + din * N /* A_log */ +
	             din /* D */ + R + 2 * N /* inner norms */ + b->norms * h;
	w->whole_params += R + 2 * N + b->norms * h;
	w->f[EFF_GEMM] += 2 * lin;
	w->f[EFF_SCAN] += 2 * K * din + 7 * din * N;
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h) + 16 * din;
	norms(w, b);
	gemm(w, "in_proj", 2 * din, h);
	kt(w, KT_OTHER, EFF_SCAN, 2, "conv+scan", 0, 0, 0, 0, 2 * K * din + 7 * din * N, 0);
	/* the fused selective scan keeps its state on chip: bf16 x, delta, z, B, C in, y out */
	scan_state(w, 2 * (3 * din + 2 * N) + 2 * din);
	gemm(w, "x_proj", R + 2 * N, din);
	split_as(w, KS_ROW);
	gemm(w, "dt_proj", din, R);
	elem(w, "gates", 16 * din, 4);
	gemm(w, "out_proj", h, din);
	split_as(w, KS_ROW);
	w->act += 2 * (2 * h + 2 * din + din + (R + 2 * N) + 2 * din) + 4 * din;
	w->act_w += 2 * ((h + 2 * din) + (din + R + 2 * N) + (R + din) + (din + h));
	w->tp_syncs++;
}

static void gdn(const struct block *b, struct work *w)
{
	double h = (double)b->h, qk = (double)b->k_heads * b->k_dim, v = (double)b->v_heads * b->v_dim;
	double K = b->conv, Hv = b->v_heads, dv = b->v_dim;
	double lin = h * (2 * qk + 2 * v) + h * 2 * Hv + v * h;

	w->params += lin + K * (2 * qk + v) + 2 * Hv /* A_log, dt_bias */ + dv /* gated norm */ +
	             b->norms * h;
	w->whole_params += dv + b->norms * h;   /* the gated norm is shared by the value heads */
	w->f[EFF_GEMM] += 2 * lin;
	w->f[EFF_SSD] += 2 * (K * (2 * qk + v) + 4 * Hv * dv * dv);
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h) + 4 * (2 * qk + v) + 8 * v;
	norms(w, b);
	gemm(w, "in_proj", 2 * qk + 2 * v + 2 * Hv, h);
	kt(w, KT_OTHER, EFF_SSD, 5, "conv+delta", 0, 0, 0, 0, 2 * (K * (2 * qk + v) + 4 * Hv * dv * dv), 0);
	/* bf16 q, k, v in and out; a chunk of 64 tokens' fp32 state (k_dim x v_dim per head)
	 * written and read back */
	scan_state(w, 2 * (2 * qk + v) + 2 * v + 2 * 4 * Hv * (double)b->k_dim * dv / 64);
	elem(w, "gated_norm", 4 * (2 * qk + v) + 8 * v, 3);
	gemm(w, "out_proj", h, v);
	split_as(w, KS_ROW);
	w->act += 2 * (2 * h + (2 * qk + 2 * v + 2 * Hv) + (2 * qk + v) + 2 * v) + 4 * Hv * b->k_dim;
	w->act_w += 2 * ((h + 2 * qk + 2 * v + 2 * Hv) + (v + h));
	w->tp_syncs++;
}

static void embed(const struct block *b, struct work *w)
{
	double h = (double)b->h, V = (double)b->vocab;

	w->params += V * h;
	w->active += V * h;
	w->unique += V * h;
	w->f[EFF_MEMORY] += 4 * h;
	elem(w, "embedding", 4 * h, 1);
	/* the backward is a scatter-add into a dense V x h gradient: zero, accumulate, write */
	w->w_bytes += 6 * V * h;
	w->out = 2 * h;
	w->tp_syncs++;
}

static void head(const struct block *b, struct work *w)
{
	double h = (double)b->h, V = (double)b->vocab;

	w->params += V * h + h;
	w->whole_params += h;   /* the final norm; the vocabulary splits (vocab-parallel) */
	if (b->tied)
		w->tied_params += V * h;
	w->active += (b->tied ? 0 : V * h) + h;
	w->unique += (b->tied ? 0 : V * h) + h;
	w->in = 2 * h;
	w->out = 0;
	w->f[EFF_GEMM] += 2 * h * V;
	/* bf16 logits, fp32 upcast, log-softmax and the loss gather (+ tanh soft-capping) */
	w->f[EFF_MEMORY] += 4 * h + 16 * V + (b->softcap ? 8 * V : 0);
	elem(w, "final_norm", 4 * h, 1);
	gemm(w, "lm_head", V, h);
	elem(w, "loss", 16 * V + (b->softcap ? 8 * V : 0), b->softcap ? 7 : 5);
	/* the loss's backward is not twice its forward: the NLL gradient (write 4V), the
	 * log-softmax backward (read the fp32 output and its gradient, write 4V) and the cast of
	 * the logits' gradient back to bf16 (read 4V, write 2V) move 22 bytes per vocabulary entry
	 * against the forward's 16; soft-capping's backward is twice its forward */
	if (!w->k_cut && w->nk > 0) {
		struct ktmpl *t = &w->k[w->nk - 1];

		t->bwd = (float)((22 * V + (b->softcap ? 16 * V : 0)) / (16 * V + (b->softcap ? 8 * V : 0)));
		t->role = KR_LOSS;
		t->n = (float)V;
		t->k = b->softcap ? 1 : 0;
	}
	w->act += 2 * (h + h) + 4 * V;
	w->act_w += 2 * (h + V);
}

static void mtp_proj(const struct block *b, struct work *w)
{
	double h = (double)b->h;

	w->params += 2 * h * h + 2 * h;
	w->whole_params += 2 * h;   /* the two norms; eh_proj is column-parallel */
	w->f[EFF_GEMM] += 2 * 2 * h * h;
	w->f[EFF_MEMORY] += 2 * NORM_BYTES(h);
	elem(w, "norms", 2 * NORM_BYTES(h), 4);
	gemm(w, "eh_proj", h, 2 * h);
	w->act += 2 * (2 * h + 2 * h);
	w->act_w += 2 * (2 * h + h);
}

/* A block that splits over n heads (attention or SSM) caps the layer's TP degree. */
static void tp_limit(struct work *w, int n, const char *what)
{
	if (n > 0 && (w->tp_units == 0 || n < w->tp_units)) {
		w->tp_units = n;
		w->tp_unit_name = what;
	}
}

void cost_block(const struct block *b, struct work *w)
{
	double before = w->params, before_active = w->active, before_unique = w->unique;

	switch (b->kind) {
	case BLK_ATTN:
		tp_limit(w, b->n_q, "attention heads");
		/* Megatron-LM splits the query groups too (num_query_groups / tp) */
		tp_limit(w, b->n_kv, "key-value heads");
		break;
	case BLK_MLA: tp_limit(w, b->n_q, "attention heads"); break;
	case BLK_MAMBA2: tp_limit(w, b->ssm_heads, "SSM heads"); break;
	case BLK_GDN: tp_limit(w, b->v_heads, "value heads"); break;
	default: break;
	}

	switch (b->kind) {
	case BLK_ATTN: attn(b, w); break;
	case BLK_MLA: mla(b, w); break;
	case BLK_MLP: mlp(b, w); break;
	case BLK_MOE: moe(b, w); break;
	case BLK_MAMBA2: mamba2(b, w); break;
	case BLK_MAMBA1: mamba1(b, w); break;
	case BLK_GDN: gdn(b, w); break;
	case BLK_EMBED: embed(b, w); return;
	case BLK_HEAD: head(b, w); return;
	case BLK_MTP_PROJ: mtp_proj(b, w); break;
	}
	/* dense blocks: every weight is active and counted once */
	if (w->active == before_active)
		w->active += w->params - before;
	if (w->unique == before_unique)
		w->unique += w->params - before;
	w->in = w->out = 2.0 * (double)b->h;
}

double cost_ctx(long seq, long window)
{
	double s = (double)seq, W = (double)window;

	if (window <= 0 || window >= seq)
		return s / 2;
	return W - W * (W - 1) / (2 * s);
}

double cost_flops(const struct work *w, long seq)
{
	double sum = w->core_per_ctx * cost_ctx(seq, w->window);

	for (int c = 0; c < EFF_NCLASS; c++)
		if (c != EFF_MEMORY)
			sum += w->f[c];
	return sum;
}
