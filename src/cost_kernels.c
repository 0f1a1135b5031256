/*
 * cost_kernels — a layer's kernel list for one pass of one microbatch (see cost.h): the
 * per-token templates cost.c builds, expanded for a sequence length, micro-batch, TP and EP
 * degree and pass, the way the runtime (cost_style) runs them: a fused or eager attention
 * core, routed experts as a loop or one grouped GEMM, the runtime's own loss.
 */
#include "config.h"
#include "cost.h"

#include <math.h>
#include <string.h>

/* whether the attention core runs eager under style: always, never, or as the model's
 * Hugging Face attention class does */
bool cost_core_eager(const struct cost_style *st, bool forced)
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
	if (cost_core_eager(&o->style, t->eager)) {
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
