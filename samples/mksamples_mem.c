/*
 * mksamples_mem — per-token memory of the bundled models' blocks from their public
 * architecture (the reference notes' formulas): bf16 weights, the activations kept for the
 * backward with FlashAttention and no recompute, and the part of them W needs.
 */
#include "config.h"
#include "mksamples.h"

static uint64_t norm_params(const struct sample_arch *a)
{
	return a->layernorm ? 2 * (uint64_t)a->h : (uint64_t)a->h;
}

/* A linear layer in -> out held in pcopies copies (experts) and run on acopies copies of
 * each token (routed top-k): its weights, and the 2 * (in + out) bytes/token W keeps. */
static void linear(struct mem *m, const struct sample_arch *a, uint64_t in, uint64_t out,
                   uint64_t pcopies, uint64_t acopies)
{
	m->params += pcopies * (in * out + (a->bias ? out : 0));
	m->act_w += acopies * 2 * (in + out);
}

struct mem block_mem(const struct sample_arch *a, unsigned parts)
{
	uint64_t h = (uint64_t)a->h;
	struct mem m = { 0, 0, 0 };

	if (parts & P_ATTN) {
		uint64_t q = (uint64_t)(a->nq * a->dh), kv = (uint64_t)(a->nkv * a->dh);

		m.params += norm_params(a) + (a->sinks ? (uint64_t)a->nq : 0);
		linear(&m, a, h, q + 2 * kv, 1, 1);
		linear(&m, a, q, h, 1, 1);
		/* norm input, QKV input, Q K V, O input; fp32 softmax statistics */
		m.act += 2 * (h + h + q + 2 * kv + q) + 4 * (uint64_t)a->nq;
	}
	if (parts & P_MLP) {
		uint64_t f = (uint64_t)a->ffn;

		m.params += norm_params(a);
		linear(&m, a, h, f, 1, 1);
		linear(&m, a, f, h, 1, 1);
		m.act += 2 * (2 * h + 2 * f);
	}
	if (parts & P_GLU) {
		uint64_t f = (uint64_t)a->ffn;

		m.params += norm_params(a);
		linear(&m, a, h, 2 * f, 1, 1);
		linear(&m, a, f, h, 1, 1);
		m.act += 2 * (2 * h + 3 * f);
	}
	if (parts & P_MOE) {
		uint64_t ne = (uint64_t)a->experts, k = (uint64_t)a->topk;
		uint64_t fe = (uint64_t)a->fe, fs = (uint64_t)a->fshared;

		m.params += norm_params(a);
		linear(&m, a, h, ne, 1, 1);
		linear(&m, a, h, 2 * fe, ne, k);
		linear(&m, a, fe, h, ne, k);
		if (fs) {
			linear(&m, a, h, 2 * fs, 1, 1);
			linear(&m, a, fs, h, 1, 1);
		}
		/* norm input, routed copies with their intermediates, shared experts; fp32 router logits */
		m.act += 2 * (2 * h + k * (h + 3 * fe) + 3 * fs) + 4 * ne;
	}
	if (parts & P_MAMBA2) {
		uint64_t nh = (uint64_t)a->mheads, p = (uint64_t)a->mhdim, n = (uint64_t)a->state;
		uint64_t din = nh * p, gn = (uint64_t)a->groups * n;
		uint64_t proj = 2 * din + 2 * gn + nh, conv = din + 2 * gn;

		m.params += norm_params(a);
		linear(&m, a, h, proj, 1, 1);
		/* depthwise conv weight and bias, dt_bias, A_log, D, gated-norm weight */
		m.params += conv * (uint64_t)a->conv + conv + 3 * nh + din;
		linear(&m, a, din, h, 1, 1);
		/* in_proj output, conv output, SSD output, out_proj input; fp32 dt and chunk states */
		m.act += 2 * (2 * h + proj + conv + 2 * din) + 4 * nh + 4 * nh * p * n / (uint64_t)a->chunk;
	}
	if (parts & P_GPT)
		m.act = 34 * h;
	/* W cannot keep more than F stored (the MoE layers hit this) */
	if (m.act_w > m.act)
		m.act_w = m.act;
	return m;
}

void embedding_mem(const struct sample_arch *a, struct mem *m)
{
	m->params += (uint64_t)(a->vocab + a->pos_rows) * (uint64_t)a->h;
}

void head_mem(const struct sample_arch *a, struct mem *m)
{
	uint64_t h = (uint64_t)a->h, v = (uint64_t)a->vocab;

	m->params += norm_params(a) + v * h;
	/* final-norm input, head input, fp32 logits */
	m->act += 2 * (h + h) + 4 * v;
	m->act_w += 2 * (h + v);
}
