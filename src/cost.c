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

static void norms(struct work *w, const struct block *b)
{
	/* each pre-norm: the norm and its residual add */
	elem(w, "norm", b->norms * NORM_BYTES(b->h), 2 * b->norms);
}

/*
 * An unfused ("eager") attention core is what it launches: QK^T and PV as two batched GEMMs,
 * priced as GEMMs, and the passes over the materialized scores (scale, mask, softmax, casts;
 * with sink logits cat, max, sub, slice), priced as the elementwise kernels they are, in
 * bytes at the memory efficiency. Its cost then follows the two efficiencies every layer
 * shares instead of one of its own that only the eager profiles could fit.
 */
static void eager_core(struct work *w, double heads, double d_qk, double d_v, double score_bytes, int passes)
{
	kt(w, KT_CORE, EFF_GEMM, 2, "attn_core.bmm", d_v, d_qk, 0, heads, 2 * heads * (d_qk + d_v), 0);
	kt(w, KT_CORE, EFF_MEMORY, passes, "attn_core.scores", 0, 0, 0, 0, 0, score_bytes);
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
	w->core_class = b->sinks || b->eager ? EFF_EAGER : EFF_FLASH;
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h) + 4 * (q + kv) + (b->out_gate ? 6 * q : 0) + qkn_bytes;
	norms(w, b);
	gemm(w, "qkv", qproj + 2 * kv, h);
	elem(w, "qk_norm", qkn_bytes, 2);
	w->act += qkn ? 2 * (q + kv) : 0;
	elem(w, "rope", 4 * (q + kv) + (b->out_gate ? 6 * q : 0), b->out_gate ? 3 : 2);
	if (w->core_class == EFF_EAGER)
		eager_core(w, b->n_q, b->d_h, b->d_h, b->n_q * (EAGER_SCORE_BYTES + (b->sinks ? SINK_SCORE_BYTES : 0)),
		           b->sinks ? 8 : 4);
	else
		kt(w, KT_CORE, EFF_FLASH, 1, "attn_core", b->d_h, b->d_h, 0, b->n_q, 4.0 * b->n_q * b->d_h, 0);
	gemm(w, "o_proj", h, q);
	split_as(w, KS_ROW);
	/* norm input, QKV input, Q K V, output-projection input, fp32 softmax statistics */
	w->act += 2 * (h + h + q + 2 * kv + q) + 4.0 * b->n_q + (b->out_gate ? 2 * q : 0);
	if (w->core_class == EFF_EAGER)
		w->core_act_per_ctx += 2.0 * b->n_q;     /* bf16 probabilities, one per head and key */
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
	if (b->eager) {
		w->core_class = EFF_EAGER;
		eager_core(w, n, dqk, dv, n * EAGER_SCORE_BYTES, 4);
	} else {
		kt(w, KT_CORE, EFF_FLASH, 1, "attn_core", dv, dqk, 0, n, 2 * n * dqk + 2 * n * dv, 0);
	}
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
		kt(w, KT_GEMM, EFF_GROUPED, le, "experts.up", (mats - 1) * f, h, copies, E, 0, 0);
		kt(w, KT_ELEM, EFF_MEMORY, b->clamped ? 8 * le : b->gated ? 2 * le : le, "experts.act", 0, 0, 0, 0, 0,
		   copies * (b->clamped ? CLAMPED_SWIGLU_BYTES : b->gated ? SWIGLU_BYTES : 4) * f);
		kt(w, KT_GEMM, EFF_GROUPED, le, "experts.down", h, f, copies, E, 0, 0);
		split_as(w, KS_ROW);
		kt(w, KT_ELEM, EFF_MEMORY, le, "experts.scatter", 0, 0, 0, 0, 0, 4.0 * copies * h);
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
	if (!w->k_cut && w->nk > 0)
		w->k[w->nk - 1].bwd = (float)((22 * V + (b->softcap ? 16 * V : 0)) / (16 * V + (b->softcap ? 8 * V : 0)));
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

/* one concrete kernel of template t for tokens tok, sequence seq, tp degree t, pass p */
static int expand(const struct ktmpl *t, double tok, long seq, long window, double tp, enum kernel_pass p,
                  struct kernel *k)
{
	double scale = p == PASS_I ? (t->bwd > 0 ? t->bwd : 2) : 1;

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
	switch (t->kind) {
	case KT_GEMM: {
		double rows = tok * t->rows, n = t->n, kk = t->k, g = t->groups > 0 ? t->groups : 1;

		/* the same three operands in every pass: F reads X and W and writes Y; I reads dY and
		 * W and writes dX; W reads X and dY and writes dW */
		/* a rank holds n / T output features (column-parallel), k / T reduction features
		 * (row-parallel) or the whole weight (replicated) */
		double tn = t->split == KS_COLUMN ? tp : 1, tk = t->split == KS_ROW ? tp : 1;

		k->m = rows / g;
		k->n = n / tn;
		k->k = kk / tk;
		k->groups = (int)g;
		k->flops = 2 * rows * k->n * k->k;
		k->bytes = 2 * (rows * k->k + g * k->n * k->k + rows * k->n);
		return 1;
	}
	case KT_CORE: {
		double keys = cost_ctx(seq, window);

		if (p == PASS_W)
			return 0;
		k->flops = scale * tok * keys * t->flops / tp;
		k->bytes = scale * tok * keys * t->bytes / tp;
		if (t->groups > 0) {
			k->heads = (int)(t->groups / tp);
			k->d_qk = (int)t->k;
			k->d_v = (int)t->n;
			k->seq = seq;
			k->window = window;
			k->seqs = (int)(tok / (double)seq);
		}
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
	for (int i = 0; i < w->nk; i++)
		if (expand(&w->k[i], tok, o->seq, w->window, tp, p, &k) && n++ < max)
			out[n - 1] = k;
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
	double u[HW_NPARAM] = { 0 };

	add_kernel_units(k, hw, u);
	return p == PASS_F ? units_ms(u, hw->eff_f, hw->launch_us_f) : units_ms(u, hw->eff_b, hw->launch_us_b);
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
		add_kernel_units(&ks[i], hw, u);
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

/* The attention core's forward kernels: what selective recompute runs again. */
static double core_forward_ms(const struct work *w, const struct hardware *hw, const struct cost_opts *o)
{
	struct kernel ks[KMAX];
	int n = cost_kernels(w, o, PASS_F, ks, KMAX);
	double ms = 0;

	for (int i = 0; i < n && i < KMAX; i++)
		if (ks[i].name && strncmp(ks[i].name, "attn_core", 9) == 0)  /* flash, or eager's GEMMs and passes */
			ms += cost_kernel_ms(&ks[i], hw, PASS_F);
	return ms;
}

void cost_layer(const struct work *w, const struct hardware *hw, const struct cost_opts *o,
                struct layer_cost *lc)
{
	double uf[HW_NPARAM], ub[HW_NPARAM], uw[HW_NPARAM];
	double tok = (double)o->seq * (double)o->micro_batch, t = o->tp > 1 ? o->tp : 1;
	double sync, a2a;

	memset(lc, 0, sizeof(*lc));
	pass_units(w, hw, o, PASS_F, uf);
	pass_units(w, hw, o, PASS_I, ub);
	pass_units(w, hw, o, PASS_W, uw);
	lc->f_ms = units_ms(uf, hw->eff_f, hw->launch_us_f);
	lc->b_ms = units_ms(ub, hw->eff_b, hw->launch_us_b);
	lc->w_ms = units_ms(uw, hw->eff_b, hw->launch_us_b);
	/* TP all-reduces of the hidden state and the MoE all-to-all: in F and I, never in W */
	sync = o->no_comm ? 0 : w->tp_syncs * comm_ms(o, tok * (w->in > 0 ? w->in : w->out), 2 * (t - 1) / t,
	                                              2 * (o->tp - 1));
	a2a = o->no_comm ? 0 : comm_ms(o, tok * w->a2a, (t - 1) / t, 1);
	lc->f_ms += sync + a2a;
	lc->b_ms += sync + a2a;
	if (o->recompute)
		lc->b_ms += lc->f_ms;
	/* each rank holds 1/t of the split weights and all of the replicated ones */
	lc->param_bytes = 2 * ((w->params - w->whole_params) / t + w->whole_params);
	lc->expert_param_bytes = 2 * w->expert_params / t;
	/* with sequence parallelism each TP rank sends its 1/t of the hidden state */
	lc->out_bytes = tok * w->out / t;
	lc->in_bytes = tok * w->in / t;
	lc->a2a_bytes = tok * w->a2a / t;
	lc->core_f_ms = core_forward_ms(w, hw, o);
	if (o->recompute) {
		lc->act_bytes = tok * w->in / t;
		lc->act_w_bytes = lc->act_bytes;
	} else {
		lc->core_act_bytes = tok * w->core_act_per_ctx * cost_ctx(o->seq, w->window) / t;
		lc->act_bytes = tok * w->act / t + lc->core_act_bytes;
		lc->act_w_bytes = fmin(tok * w->act_w / t, lc->act_bytes);
	}
}
