/*
 * hfconfig_families — the Hugging Face families that are a Llama-style decoder with a few
 * differences (Mistral, Phi-3, Granite, OLMo 2, Qwen2, Qwen3), their mixture-of-experts
 * relatives (Mixtral, Qwen2-MoE, Qwen3-MoE, GLM-4.5) and Falcon-H1's parallel hybrid.
 *
 * The one idea: these families differ from Llama in a handful of switches (where the
 * attention has biases and q/k norms, which rule picks a layer's sliding window, which
 * layers are sparse and what their shared experts are), so each family is a `struct style`
 * read by one dense and one MoE reader. Facts from the transformers configuration and
 * modeling files of each family:
 *
 *  - Mistral, Mixtral, Phi-3: `sliding_window` (null: none) applies to every layer. Phi-3's
 *    fused qkv_proj and gate_up_proj are the same GEMMs as the separate ones (the kernel
 *    list already fuses q, k, v and gate, up).
 *  - Qwen2 (always q, k, v biases, no o bias), Qwen3 (per-head q/k RMSNorm), Qwen2-MoE and
 *    Qwen3-MoE: layer i slides when `use_sliding_window` and i >= `max_window_layers`
 *    (default 28, as their configuration classes have it).
 *    MoE layers are those with (i + 1) % `decoder_sparse_step` == 0 not in `mlp_only_layers`;
 *    Qwen2-MoE adds a shared expert of `shared_expert_intermediate_size` with a sigmoid gate.
 *  - OLMo 2: post-norms (one per block, as many as Llama's pre-norms) and q/k RMSNorms over
 *    the whole projection. Granite: Llama with multipliers, which change no FLOP.
 *  - GLM-4.5 (glm4_moe): `attention_bias` is on q, k, v only; `first_k_dense_replace` dense
 *    layers, then MoE with `n_shared_experts` x `moe_intermediate_size` shared; optional
 *    per-head q/k norm (`use_qk_norm`); `num_nextn_predict_layers` MTP modules.
 *  - Falcon-H1: every layer runs attention and a Mamba-2 mixer side by side on one
 *    input norm, then a SwiGLU MLP after its own norm.
 * A layer_types list in the config, when present, overrides the sliding-window rule.
 */
#include "config.h"
#include "hfconfig_impl.h"

#include <stdio.h>
#include <string.h>

/* How a family picks each layer's attention window. */
enum win_rule {
	WIN_NONE,    /* full attention everywhere */
	WIN_ALL,     /* sliding_window, when not null, on every layer */
	WIN_QWEN,    /* use_sliding_window: layers from max_window_layers on */
};

/* Which decoder layers are MoE. */
enum moe_rule {
	MOE_ALL,     /* every layer (Mixtral) */
	MOE_STEP,    /* decoder_sparse_step and mlp_only_layers (Qwen) */
	MOE_FIRST_K, /* all but the first first_k_dense_replace (GLM-4.5) */
};

struct style {
	enum win_rule win;
	bool qkv_bias;          /* q, k and v biases, never o, whatever attention_bias says (Qwen2) */
	bool bias_qkv_only;     /* attention_bias puts biases on q, k, v but not o (GLM-4.5) */
	bool qk_norm;           /* per-head q/k norm (Qwen3) */
	bool qk_norm_full;      /* whole-projection q/k norm (OLMo 2) */
	const char *qk_norm_key; /* a field that switches the per-head norm on (GLM-4.5) */
	/* MoE */
	enum moe_rule moe;
	const char *const *experts_keys;
	const char *expert_f_key;   /* per-expert intermediate size */
	bool qwen_shared;       /* shared_expert_intermediate_size, with its gate */
	bool glm_shared;        /* n_shared_experts x the expert size, no gate */
	bool mtp;               /* num_nextn_predict_layers */
};

/* The attention block: heads, biases and q/k norms as the family has them. */
static int attn_block(struct hf *c, const struct style *s, struct block *b)
{
	bool bias = false, qkn = false;

	if (hf_attn_fields(c, b) < 0 || hf_getb(c, "attention_bias", false, &bias) < 0 ||
	    (s->qk_norm_key && hf_getb(c, s->qk_norm_key, false, &qkn) < 0))
		return -1;
	b->bias = bias && !s->bias_qkv_only && !s->qkv_bias;
	b->qkv_bias = s->qkv_bias || (bias && s->bias_qkv_only);
	b->qk_norm = s->qk_norm || qkn;
	b->qk_norm_full = s->qk_norm_full;
	return 0;
}

/* The window that sliding layers get (0: none) and the first layer that slides. */
static int windows(struct hf *c, const struct style *s, long *window, long *from)
{
	bool use = true;

	*window = 0;
	*from = 0;
	if (s->win == WIN_NONE)
		return 0;
	if (s->win == WIN_QWEN &&
	    (hf_getb(c, "use_sliding_window", false, &use) < 0 ||
	     hf_geti(c, "max_window_layers", false, 0, 28, from) < 0))
		return -1;
	if (!use)
		return 0;
	return hf_geti(c, "sliding_window", false, 1, 0, window);
}

/* Layer i's window: layer_types when the config lists them, else the family's rule. */
static int layer_window(struct hf *c, long i, long window, long from, long *out)
{
	int full;

	if (hf_layer_type(c, i, "full_attention", &full) < 0)
		return -1;
	if (full < 0)
		full = i < from;
	*out = full ? 0 : window;
	return 0;
}

/* Whether i is listed in the integer array key (absent or null: no). */
static int listed(struct hf *c, const char *key, long i, bool *out)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(c->obj, key), *it;
	char p[JPATH_MAX], q[JPATH_MAX];
	int k = 0;

	*out = false;
	if (!arr || cJSON_IsNull(arr))
		return 0;
	jpath_key(p, c->path, key);
	if (!cJSON_IsArray(arr))
		return jv_fail(&c->v, p, "must be an array of layer indices, not %s", json_type_name(arr));
	cJSON_ArrayForEach(it, arr) {
		if (!cJSON_IsNumber(it) || it->valuedouble != (double)(long)it->valuedouble) {
			jpath_index(q, p, k);
			return jv_fail(&c->v, q, "must be a layer index (an integer), not %s",
			               cJSON_IsNumber(it) ? "a fraction" : json_type_name(it));
		}
		if ((long)it->valuedouble == i)
			*out = true;
		k++;
	}
	return 0;
}

/* A dense decoder: attention (windowed by the family's rule) + a SwiGLU MLP per layer. */
static int dense(struct hf *c, const struct style *s)
{
	struct block b[2] = { hf_blk(c, BLK_ATTN), hf_blk(c, BLK_MLP) };
	long window, from;
	bool mbias;

	if (hf_common(c, false) < 0 || attn_block(c, s, &b[0]) < 0 ||
	    hf_geti(c, "intermediate_size", true, 1, 0, &b[1].f) < 0 ||
	    hf_getb(c, "mlp_bias", false, &mbias) < 0 || windows(c, s, &window, &from) < 0)
		return -1;
	b[1].gated = true;
	b[1].bias = mbias;
	if (hf_add_embedding(c, 0) < 0)
		return -1;
	for (long i = 0; i < c->layers; i++) {
		if (layer_window(c, i, window, from, &b[0].window) < 0 ||
		    hf_add_layer(c, b[0].window ? "swa+mlp" : "attn+mlp", b, 2, false) < 0)
			return -1;
	}
	return hf_add_head(c, false);
}

/* The MoE block's experts, top-k and shared experts as the family names them. */
static int moe_block(struct hf *c, const struct style *s, struct block *m)
{
	long experts, topk, shared;

	if (hf_geti_alias(c, s->experts_keys, true, 1, 0, &experts) < 0 || hf_geti_topk(c, experts, &topk) < 0 ||
	    hf_geti(c, s->expert_f_key, true, 1, 0, &m->f) < 0)
		return -1;
	m->gated = true;
	m->experts = (int)experts;
	m->top_k = (int)topk;
	if (s->qwen_shared) {
		if (hf_geti(c, "shared_expert_intermediate_size", false, 0, 0, &m->f_shared) < 0)
			return -1;
		m->shared_gate = m->f_shared > 0;
	}
	if (s->glm_shared) {
		if (hf_geti(c, "n_shared_experts", false, 0, 0, &shared) < 0)
			return -1;
		m->f_shared = shared * m->f;
	}
	return 0;
}

/* Whether decoder layer i is MoE under the family's schedule. */
static int is_sparse(struct hf *c, const struct style *s, long i, long step, long first_k, bool *out)
{
	bool only;

	switch (s->moe) {
	case MOE_ALL: *out = true; return 0;
	case MOE_FIRST_K: *out = i >= first_k; return 0;
	case MOE_STEP:
		if (listed(c, "mlp_only_layers", i, &only) < 0)
			return -1;
		*out = !only && (i + 1) % step == 0;
		return 0;
	}
	return 0;
}

/* A MoE decoder: attention + (MoE or a dense SwiGLU MLP, by the family's schedule). */
static int sparse(struct hf *c, const struct style *s)
{
	struct block at = hf_blk(c, BLK_ATTN), ml = hf_blk(c, BLK_MLP), moe = hf_blk(c, BLK_MOE);
	long window, from, step = 1, first_k = 0, mtp = 0;

	if (hf_common(c, false) < 0 || attn_block(c, s, &at) < 0 || moe_block(c, s, &moe) < 0 ||
	    hf_geti(c, "intermediate_size", false, 1, 0, &ml.f) < 0 || windows(c, s, &window, &from) < 0 ||
	    (s->moe == MOE_STEP && hf_geti(c, "decoder_sparse_step", false, 1, 1, &step) < 0) ||
	    (s->moe == MOE_FIRST_K && hf_geti(c, "first_k_dense_replace", false, 0, 0, &first_k) < 0) ||
	    (s->mtp && hf_geti(c, "num_nextn_predict_layers", false, 0, 0, &mtp) < 0) ||
	    hf_layers_limit(c, "num_nextn_predict_layers", mtp) < 0)
		return -1;
	ml.gated = true;
	if (hf_add_embedding(c, 0) < 0)
		return -1;
	for (long i = 0; i < c->layers; i++) {
		bool sp = false;
		struct block b[2];
		char kind[32];

		if (is_sparse(c, s, i, step, first_k, &sp) < 0 || layer_window(c, i, window, from, &at.window) < 0)
			return -1;
		if (!sp && ml.f == 0) {
			char p[JPATH_MAX];

			jpath_key(p, c->path, "intermediate_size");
			return jv_fail(&c->v, p, "required field is missing (layer %ld is a dense MLP)", i);
		}
		b[0] = at;
		b[1] = sp ? moe : ml;
		snprintf(kind, sizeof(kind), "%s+%s", at.window ? "swa" : "attn", sp ? "moe" : "mlp");
		if (hf_add_layer(c, kind, b, 2, false) < 0)
			return -1;
	}
	at.window = 0;
	if (hf_add_mtp(c, &at, &moe, mtp) < 0)
		return -1;
	return hf_add_head(c, false);
}

int hf_mistral(struct hf *c)
{
	static const struct style s = { .win = WIN_ALL };

	return dense(c, &s);
}

int hf_phi3(struct hf *c)
{
	static const struct style s = { .win = WIN_ALL };

	return dense(c, &s);
}

int hf_granite(struct hf *c)
{
	static const struct style s = { .win = WIN_NONE };

	return dense(c, &s);
}

int hf_olmo2(struct hf *c)
{
	static const struct style s = { .win = WIN_NONE, .qk_norm_full = true };

	return dense(c, &s);
}

int hf_qwen2(struct hf *c)
{
	static const struct style s = { .win = WIN_QWEN, .qkv_bias = true };

	return dense(c, &s);
}

int hf_qwen3(struct hf *c)
{
	static const struct style s = { .win = WIN_QWEN, .qk_norm = true };

	return dense(c, &s);
}

static const char *const local_experts[] = { "num_local_experts", NULL };
static const char *const num_experts[] = { "num_experts", NULL };
static const char *const routed_experts[] = { "n_routed_experts", NULL };

int hf_mixtral(struct hf *c)
{
	static const struct style s = { .win = WIN_ALL, .moe = MOE_ALL, .experts_keys = local_experts,
	                                .expert_f_key = "intermediate_size" };

	return sparse(c, &s);
}

int hf_qwen2_moe(struct hf *c)
{
	static const struct style s = { .win = WIN_QWEN, .qkv_bias = true, .moe = MOE_STEP,
	                                .experts_keys = num_experts, .expert_f_key = "moe_intermediate_size",
	                                .qwen_shared = true };

	return sparse(c, &s);
}

int hf_qwen3_moe(struct hf *c)
{
	static const struct style s = { .win = WIN_QWEN, .qk_norm = true, .moe = MOE_STEP,
	                                .experts_keys = num_experts, .expert_f_key = "moe_intermediate_size" };

	return sparse(c, &s);
}

int hf_glm4_moe(struct hf *c)
{
	static const struct style s = { .win = WIN_NONE, .bias_qkv_only = true, .qk_norm_key = "use_qk_norm",
	                                .moe = MOE_FIRST_K, .experts_keys = routed_experts,
	                                .expert_f_key = "moe_intermediate_size", .glm_shared = true, .mtp = true };

	return sparse(c, &s);
}

/* Falcon-H1's Mamba-2 mixer: mamba_d_ssm (else mamba_expand x hidden) split into
 * mamba_n_heads heads of mamba_d_head ("auto": whatever divides it). */
static int falcon_mamba(struct hf *c, struct block *m)
{
	const cJSON *dh = cJSON_GetObjectItemCaseSensitive(c->obj, "mamba_d_head");
	long expand, dssm, heads, head, v;
	bool rms, convb, inb, outb;
	char p[JPATH_MAX];

	if (hf_geti(c, "mamba_expand", false, 1, 2, &expand) < 0 ||
	    hf_geti(c, "mamba_d_ssm", false, 1, expand * c->h, &dssm) < 0 ||
	    hf_geti(c, "mamba_n_heads", false, 1, 128, &heads) < 0)
		return -1;
	if (dh && cJSON_IsString(dh) && strcmp(dh->valuestring, "auto") == 0)
		head = dssm / heads;
	else if (hf_geti(c, "mamba_d_head", false, 1, dssm / heads, &head) < 0)
		return -1;
	if (head < 1 || head * heads != dssm) {
		jpath_key(p, c->path, "mamba_n_heads");
		return jv_fail(&c->v, p, "%ld heads of mamba_d_head %ld must make mamba_d_ssm (%ld)", heads, head, dssm);
	}
	m->ssm_heads = (int)heads;
	m->ssm_head_dim = (int)head;
	if (hf_geti(c, "mamba_n_groups", false, 1, 1, &v) < 0)
		return -1;
	m->groups = (int)v;
	if (hf_geti(c, "mamba_d_state", false, 1, 256, &v) < 0)
		return -1;
	m->state = (int)v;
	if (hf_geti(c, "mamba_d_conv", false, 1, 4, &v) < 0)
		return -1;
	m->conv = (int)v;
	if (hf_geti(c, "mamba_chunk_size", false, 1, 256, &v) < 0)
		return -1;
	m->chunk = (int)v;
	if (hf_getb(c, "mamba_rms_norm", false, &rms) < 0 || hf_getb(c, "mamba_conv_bias", true, &convb) < 0 ||
	    hf_getb(c, "mamba_proj_bias", false, &inb) < 0 || hf_getb(c, "projectors_bias", false, &outb) < 0)
		return -1;
	m->ssm_no_norm = !rms;
	m->ssm_no_conv_bias = !convb;
	m->ssm_in_bias = inb;
	m->ssm_out_bias = outb;
	/* the mixer shares the layer's input norm with the attention */
	m->norms = 0;
	return 0;
}

/* A layer whose attention and Mamba-2 run side by side: their row-parallel outputs are
 * added before one all-reduce, so under tensor parallelism the layer syncs twice a pass
 * (mixers, MLP), not three times. */
static int add_parallel_layer(struct hf *c, const struct block *b, int n)
{
	struct work w;

	hf_layer_work(c, b, n, &w);
	w.tp_syncs--;
	return hf_added(c, arch_add(c->a, "attn+mamba2+mlp", &w, false));
}

int hf_falcon_h1(struct hf *c)
{
	static const struct style s = { .win = WIN_NONE };
	struct block b[3] = { hf_blk(c, BLK_ATTN), hf_blk(c, BLK_MAMBA2), hf_blk(c, BLK_MLP) };
	bool mbias;

	if (hf_common(c, false) < 0 || attn_block(c, &s, &b[0]) < 0 || falcon_mamba(c, &b[1]) < 0 ||
	    hf_geti(c, "intermediate_size", true, 1, 0, &b[2].f) < 0 || hf_getb(c, "mlp_bias", false, &mbias) < 0)
		return -1;
	b[2].gated = true;
	b[2].bias = mbias;
	if (hf_add_embedding(c, 0) < 0)
		return -1;
	for (long i = 0; i < c->layers; i++)
		if (add_parallel_layer(c, b, 3) < 0)
			return -1;
	return hf_add_head(c, false);
}
