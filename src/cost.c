/*
 * cost — FLOPs, bytes and times per block kind (see cost.h).
 *
 * Every formula is per token and forward, from model-facts §3: GEMM FLOPs are 2 x the
 * linear weights a token passes through, the attention core is 4 n_q d_h FLOPs per key it
 * attends to, scans and convolutions get their own class, and elementwise kernels are
 * counted in bytes. The backward follows the zero-bubble split (§3.2): a GEMM's input
 * grad and weight grad each cost its forward; cores, scans and elementwise kernels cost
 * twice their forward and all of it is input grad (their weight grads are produced in the
 * same fused kernel). Keeping work per class is what lets calibration fit efficiencies.
 */
#include "config.h"
#include "cost.h"

#include <math.h>
#include <string.h>

/* elementwise traffic of one pre-norm and its residual add: read h write h, read 2h write h */
#define NORM_BYTES(h) (10.0 * (double)(h))

static void attn(const struct block *b, struct work *w)
{
	double h = (double)b->h, q = (double)b->n_q * b->d_h, kv = (double)b->n_kv * b->d_h;
	double qproj = b->out_gate ? 2 * q : q;
	double lin = h * qproj + 2 * h * kv + q * h;

	w->params += lin + b->norms * h + (b->qk_norm ? 2.0 * b->d_h : 0) + (b->sinks ? b->n_q : 0) +
	             (b->bias ? qproj + 2 * kv + h : 0);
	w->f[EFF_GEMM] += 2 * lin;
	w->core_per_ctx += 4.0 * b->n_q * b->d_h;
	w->window = b->window;
	w->core_class = b->sinks ? EFF_EAGER : EFF_FLASH;
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h) + 4 * (q + kv) + (b->out_gate ? 6 * q : 0);
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
	w->f[EFF_GEMM] += 2 * lin;
	w->core_per_ctx += 2 * n * dqk + 2 * n * dv;
	w->window = 0;
	w->core_class = EFF_FLASH;
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h) + 4 * n * dqk * 2;
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

	w->f[cls] += copies * 2 * mats * h * f;
	w->f[EFF_MEMORY] += copies * (b->gated ? 6 : 4) * f;
	w->act += copies * 2 * (h + mats * f);
	w->act_w += copies * 2 * ((h + (mats - 1) * f) + (f + h));
}

static void mlp(const struct block *b, struct work *w)
{
	double h = (double)b->h, f = (double)b->f, mats = b->gated ? 3 : 2;

	w->params += mats * h * f + b->norms * h + (b->bias ? (mats - 1) * f + h : 0);
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h);
	w->act += 2 * h;
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
	w->active += router + b->top_k * expert + shared + (b->shared_gate ? h : 0) + b->norms * h;
	w->f[EFF_GEMM] += 2 * h * E + (b->shared_gate ? 2 * h : 0);
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h) + 8.0 * b->top_k * h + 12 * E;
	w->act += 2 * h + 4 * E;
	w->act_w += 2 * (h + E);
	mlp_core(b, f, b->top_k, w, EFF_GROUPED);
	if (b->f_shared > 0) {
		struct block s = *b;

		s.gated = true;
		mlp_core(&s, (double)b->f_shared, 1, w, EFF_GEMM);
	}
	w->a2a += 4.0 * b->top_k * h;
	w->tp_syncs++;
}

static void mamba2(const struct block *b, struct work *w)
{
	double h = (double)b->h, H = b->ssm_heads, P = b->ssm_head_dim, G = b->groups, N = b->state;
	double K = b->conv, Q = b->chunk, din = H * P, xbc = din + 2 * G * N;
	double in_proj = h * (2 * din + 2 * G * N + H), out_proj = din * h;

	w->params += in_proj + out_proj + xbc * K + xbc /* conv bias */ + 3 * H /* dt_bias A_log D */ +
	             din /* gated norm */ + b->norms * h;
	w->f[EFF_GEMM] += 2 * (in_proj + out_proj);
	w->f[EFF_SSD] += 2 * K * xbc + 2 * Q * N * G + 2 * Q * P * H + 4 * N * P * H;
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h) + 4 * xbc + 8 * din;
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
	w->f[EFF_GEMM] += 2 * lin;
	w->f[EFF_SCAN] += 2 * K * din + 7 * din * N;
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h) + 16 * din;
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
	w->f[EFF_GEMM] += 2 * lin;
	w->f[EFF_SSD] += 2 * (K * (2 * qk + v) + 4 * Hv * dv * dv);
	w->f[EFF_MEMORY] += b->norms * NORM_BYTES(h) + 4 * (2 * qk + v) + 8 * v;
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
	/* the backward is a scatter-add into a dense V x h gradient: zero, accumulate, write */
	w->w_bytes += 6 * V * h;
	w->out = 2 * h;
	w->tp_syncs++;
}

static void head(const struct block *b, struct work *w)
{
	double h = (double)b->h, V = (double)b->vocab;

	w->params += V * h + h;
	w->active += (b->tied ? 0 : V * h) + h;
	w->unique += (b->tied ? 0 : V * h) + h;
	w->in = 2 * h;
	w->out = 0;
	w->f[EFF_GEMM] += 2 * h * V;
	/* bf16 logits, fp32 upcast, log-softmax and the loss gather (+ tanh soft-capping) */
	w->f[EFF_MEMORY] += 4 * h + 16 * V + (b->softcap ? 8 * V : 0);
	w->act += 2 * (h + h) + 4 * V;
	w->act_w += 2 * (h + V);
}

static void mtp_proj(const struct block *b, struct work *w)
{
	double h = (double)b->h;

	w->params += 2 * h * h + 2 * h;
	w->f[EFF_GEMM] += 2 * 2 * h * h;
	w->f[EFF_MEMORY] += 2 * NORM_BYTES(h);
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
	case BLK_ATTN: case BLK_MLA: tp_limit(w, b->n_q, "attention heads"); break;
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

/* ms of work at efficiency 1, forward, input grad and weight grad, per class */
static void units3(const struct work *w, const struct hardware *hw, const struct cost_opts *o,
                   double uf[EFF_NCLASS], double ub[EFF_NCLASS], double uw[EFF_NCLASS])
{
	double tok = (double)o->seq * (double)o->micro_batch, t = o->tp > 1 ? o->tp : 1;
	double flops = hw->peak_tflops * 1e12, bytes = hw->hbm_gbytes_per_s * 1e9;

	for (int c = 0; c < EFF_NCLASS; c++) {
		double rate = c == EFF_MEMORY ? bytes : flops;

		uf[c] = 1e3 * tok * w->f[c] / t / rate;
	}
	uf[w->core_class] += 1e3 * tok * w->core_per_ctx * cost_ctx(o->seq, w->window) / t / flops;
	for (int c = 0; c < EFF_NCLASS; c++) {
		bool linear = c == EFF_GEMM || c == EFF_GROUPED;

		ub[c] = linear ? uf[c] : 2 * uf[c];
		uw[c] = linear ? uf[c] : 0;
	}
	uw[EFF_MEMORY] = 1e3 * w->w_bytes / t / bytes;
}

void cost_units(const struct work *w, const struct hardware *hw, const struct cost_opts *o,
                double f_units[EFF_NCLASS], double bw_units[EFF_NCLASS])
{
	double ub[EFF_NCLASS], uw[EFF_NCLASS];

	units3(w, hw, o, f_units, ub, uw);
	for (int c = 0; c < EFF_NCLASS; c++)
		bw_units[c] = ub[c] + uw[c];
}

/* ring all-reduce (2 (t-1)/t of the bytes each way) or all-to-all over the TP group */
static double comm_ms(const struct cost_opts *o, double bytes, double share, int steps)
{
	if (o->tp <= 1 || o->link_gbytes_per_s <= 0 || bytes <= 0)
		return 0;
	return 1e3 * share * bytes / (o->link_gbytes_per_s * 1e9) + steps * o->link_latency_us * 1e-3;
}

void cost_layer(const struct work *w, const struct hardware *hw, const struct cost_opts *o,
                struct layer_cost *lc)
{
	double uf[EFF_NCLASS], ub[EFF_NCLASS], uw[EFF_NCLASS];
	double tok = (double)o->seq * (double)o->micro_batch, t = o->tp > 1 ? o->tp : 1;
	double sync, a2a;

	memset(lc, 0, sizeof(*lc));
	units3(w, hw, o, uf, ub, uw);
	for (int c = 0; c < EFF_NCLASS; c++) {
		lc->f_ms += uf[c] / hw->eff_f[c];
		lc->b_ms += ub[c] / hw->eff_b[c];
		lc->w_ms += uw[c] / hw->eff_b[c];
	}
	/* TP all-reduces of the hidden state and the MoE all-to-all: in F and I, never in W */
	sync = w->tp_syncs * comm_ms(o, tok * (w->in > 0 ? w->in : w->out),
	                             2 * (t - 1) / t, 2 * (o->tp - 1));
	a2a = comm_ms(o, tok * w->a2a, (t - 1) / t, 1);
	lc->f_ms += sync + a2a;
	lc->b_ms += sync + a2a;
	if (o->recompute)
		lc->b_ms += lc->f_ms;
	lc->param_bytes = 2 * w->params / t;
	lc->out_bytes = tok * w->out;
	if (o->recompute) {
		lc->act_bytes = tok * w->in / t;
		lc->act_w_bytes = lc->act_bytes;
	} else {
		lc->act_bytes = tok * w->act / t;
		lc->act_w_bytes = fmin(tok * w->act_w / t, lc->act_bytes);
	}
}
