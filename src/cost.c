/*
 * cost — FLOPs, bytes and times per block kind (see cost.h).
 *
 * Every formula is per token and forward, from model-facts §3: GEMM FLOPs are 2 x the
 * linear weights a token passes through, the attention core is 4 n_q d_h FLOPs per key it
 * attends to, scans and convolutions get their own class, and elementwise kernels are
 * counted in bytes. The backward follows the zero-bubble split (§3.2): a GEMM's input
 * grad and weight grad each cost its forward; cores, scans and elementwise kernels cost
 * twice their forward (the loss: what its backward moves) and all of it is input grad (their
 * weight grads are produced in the same fused kernel). Keeping work per class is what lets calibration fit efficiencies.
 *
 * Alongside the per-class sums every block appends its kernels (what an eager or fused
 * runtime launches: a fused QKV GEMM, RoPE, the core, one GEMM per expert with its gather
 * and scatter, ...), and times are the sum over them of launches x overhead + (FLOPs /
 * peak + bytes / HBM) / efficiency: linear in the fitted parameters, shape-aware through
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

/* whether the attention core runs eager under style: always, never, or as the model's
 * Hugging Face attention class does */
static bool core_runs_eager(const struct cost_style *st, bool forced)
{
	return st->attention == COST_ATTN_EAGER || (st->attention == COST_ATTN_HF && forced);
}

/* the attention core's kernels (KR_CORE): one fused kernel, or the eager GEMMs and passes */
static int expand_core(const struct ktmpl *t, const struct cost_opts *o, double tok, long window, double tp,
                       enum kernel_pass p, struct kernel *k)
{
	double keys = cost_ctx(o->seq, window), scale = p == PASS_I ? 2 : 1;
	int n = 1;

	if (p == PASS_W)
		return 0;
	memset(k, 0, 2 * sizeof(*k));
	k[0].name = "attn_core";
	k[0].cls = EFF_FLASH;
	k[0].groups = 1;
	k[0].launches = p == PASS_I ? 2 : 1;
	k[0].flops = scale * tok * keys * t->flops / tp;
	k[0].heads = (int)(t->groups / tp);
	k[0].d_qk = (int)t->k;
	k[0].d_v = (int)t->n;
	k[0].seq = o->seq;
	k[0].window = window;
	k[0].seqs = (int)(tok / (double)o->seq);
	k[0].dropout = t->dropout;
	if (core_runs_eager(&o->style, t->eager)) {
		k[0].dropout = false;
		k[0].name = "attn_core.bmm";
		k[0].cls = EFF_GEMM;
		k[0].launches = p == PASS_I ? 4 : 2;
		k[1].name = "attn_core.scores";
		k[1].cls = EFF_MEMORY;
		k[1].groups = 1;
		k[1].launches = (p == PASS_I ? 2 : 1) * t->launches;
		k[1].bytes = scale * tok * keys * t->bytes / tp;
		n = 2;
	}
	return n;
}

/* one concrete kernel (two for an eager attention core) of template t for tokens tok,
 * tp degree tp, pass p */
static int expand(const struct ktmpl *t, const struct cost_opts *o, double tok, long window, double tp,
                  enum kernel_pass p, struct kernel *k)
{
	double scale = p == PASS_I ? (t->bwd > 0 ? t->bwd : 2) : 1;
	double ep = o->ep > 1 ? o->ep : 1;

	if (t->role == KR_CORE)
		return expand_core(t, o, tok, window, tp, p, k);
	memset(k, 0, sizeof(*k));
	k->cls = t->cls;
	k->name = t->name;
	k->groups = 1;
	/* the backward of a kernel that is not a GEMM launches twice its forward's kernels, as it
	 * does twice its work: a product's gradient has two outputs, a norm's backward a dX kernel
	 * and a reduction of its weight gradient, flash attention's a preprocessing pass, the SSD
	 * the recomputed chunk states besides the dX, dB and dC scans; a GEMM's dX (I) and dW (W)
	 * are one launch each */
	k->launches = p == PASS_I && t->kind != KT_GEMM ? 2 * t->launches : t->launches;
	if (t->role == KR_EXPERT) {
		/* a loop launches each of the E / ep experts a rank holds; a grouped GEMM (and its
		 * permutation and activation) launches once for all of them */
		double per = k->launches / (t->groups > 0 ? t->groups : 1);

		k->launches = (int)(o->style.experts == COST_EXPERTS_GROUPED ? per : per * t->groups / ep + 0.5);
		if (k->launches < 1)
			k->launches = 1;
	}
	switch (t->kind) {
	case KT_GEMM: {
		/* expert parallelism: a rank runs E / ep experts on ep times the tokens each */
		double g = t->groups > 0 ? t->groups : 1, rows = tok * t->rows, n = t->n, kk = t->k;

		/* the same three operands in every pass: F reads X and W and writes Y; I reads dY and
		 * W and writes dX; W reads X and dY and writes dW */
		/* a rank holds n / T output features (column-parallel), k / T reduction features
		 * (row-parallel) or the whole weight (replicated) */
		double tn = t->split == KS_COLUMN ? tp : 1, tk = t->split == KS_ROW ? tp : 1;

		if (g > 1 && ep > 1 && fmod(g, ep) == 0)
			g /= ep;
		k->m = rows / g;
		k->n = n / tn;
		k->k = kk / tk;
		k->groups = (int)g;
		k->flops = 2 * rows * k->n * k->k;
		k->bytes = 2 * (rows * k->k + g * k->n * k->k + rows * k->n);
		return 1;
	}
	case KT_CORE: {
		double keys = cost_ctx(o->seq, window);

		if (p == PASS_W)
			return 0;
		k->flops = scale * tok * keys * t->flops / tp;
		k->bytes = scale * tok * keys * t->bytes / tp;
		return 1;
	}
	case KT_OTHER:
		if (p == PASS_W)
			return 0;
		k->flops = scale * tok * t->flops / tp;
		k->state_bytes = scale * tok * t->state / tp;
		return 1;
	default:
		if (p == PASS_W)
			return 0;
		k->bytes = scale * tok * t->bytes / tp;
		if (t->role == KR_LOSS && o->style.loss_f_bytes > 0) {
			/* the runtime's own loss kernels; soft-capping stays its own elementwise chain */
			double V = t->n, cap = t->k > 0 ? (p == PASS_I ? 16 : 8) * V : 0;

			k->bytes = tok * ((p == PASS_I ? o->style.loss_b_bytes : o->style.loss_f_bytes) * V + cap) / tp;
			k->launches = o->style.loss_launches + (t->k > 0 ? 2 : 0);
		}
		return 1;
	}
}

/* pseudo-kernel c of a layer without a kernel list: its class's FLOPs (or bytes), no launch */
static int pseudo(const struct work *w, int c, double tok, long seq, double tp, enum kernel_pass p,
                  struct kernel *k)
{
	bool linear = c == EFF_GEMM || c == EFF_GROUPED;
	double x = tok * w->f[c] / tp;

	if (c == w->core_class)
		x += tok * w->core_per_ctx * cost_ctx(seq, w->window) / tp;
	if (p == PASS_I && !linear)
		x *= 2;
	if (p == PASS_W)
		x = linear ? x : c == EFF_MEMORY ? w->w_bytes / tp : 0;
	if (x <= 0)
		return 0;
	memset(k, 0, sizeof(*k));
	k->cls = c;
	k->name = hardware_class_names[c];
	k->groups = 1;
	if (c == EFF_MEMORY)
		k->bytes = x;
	else
		k->flops = x;
	return 1;
}

int cost_kernels(const struct work *w, const struct cost_opts *o, enum kernel_pass p,
                 struct kernel *out, int max)
{
	double tok = (double)o->seq * (double)o->micro_batch, tp = o->tp > 1 ? o->tp : 1;
	struct kernel k;
	int n = 0;

	if (w->nk == 0) {
		for (int c = 0; c < EFF_NCLASS; c++)
			if (pseudo(w, c, tok, o->seq, tp, p, &k) && n++ < max)
				out[n - 1] = k;
		return n;
	}
	for (int i = 0; i < w->nk; i++) {
		struct kernel two[2];
		int got = expand(&w->k[i], o, tok, w->window, tp, p, two);

		for (int j = 0; j < got; j++)
			if (n++ < max)
				out[n - 1] = two[j];
	}
	/* the embedding's weight gradient: zero a V x h buffer, scatter-add the rows */
	if (p == PASS_W && w->w_bytes > 0) {
		memset(&k, 0, sizeof(k));
		k.cls = EFF_MEMORY;
		k.name = "embedding.grad";
		k.groups = 1;
		k.bytes = w->w_bytes / tp;
		k.launches = 2;
		if (n++ < max)
			out[n - 1] = k;
	}
	return n;
}

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
	if (core_runs_eager(&o->style, w->core_eager))
		act += tok * w->core_act_per_ctx * cost_ctx(o->seq, w->window) / t;
	/* what selective recompute redoes and drops: the attention core (Megatron-LM: its
	 * scores when eager; a fused core keeps nothing to drop), or everything torchtitan's
	 * op-level policy does not save (elementwise work and every other GEMM) */
	if (o->style.selective == COST_SEL_OPS && w->nk > 0) {
		lc->core_f_ms = tf.elem + 0.5 * tf.gemm;
		lc->core_act_bytes = fmax(0, act - tok * sac_kept_per_token(w, t));
	} else {
		lc->core_f_ms = tf.core;
		if (core_runs_eager(&o->style, w->core_eager))
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
