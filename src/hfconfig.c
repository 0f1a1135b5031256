/*
 * hfconfig — Hugging Face configs to architectures (see hfconfig.h).
 *
 * Each family is a short function that reads its fields and says, per decoder layer,
 * which blocks it holds; everything about FLOPs and bytes lives in cost.c. The one idea:
 * a config describes a layer *rule* (a pattern string, periods, an interval), and once
 * the rule is expanded to blocks, every family costs the same way. The Llama-like,
 * Qwen, Mixtral, GLM-4.5 and Falcon-H1 families are in hfconfig_families.c; the helpers
 * they share are declared in hfconfig_impl.h.
 */
#include "config.h"
#include "hfconfig.h"
#include "hfconfig_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "json.h"

const char hfconfig_supported[] =
	"llama, mistral, mixtral, phi3, granite, olmo2, qwen2, qwen2_moe, qwen3, qwen3_moe, "
	"qwen3_next, gemma2, gemma3, gemma3_text, deepseek, deepseek_v2, deepseek_v3, glm4_moe, "
	"nemotron_h, jamba, falcon_h1, gpt_oss, gpt2";


#define BIG (1L << 30)

/* An integer field; JSON null counts as absent. */
int hf_geti(struct hf *c, const char *key, bool required, long lo, long dflt, long *out)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(c->obj, key);

	if (m && cJSON_IsNull(m) && !required) {
		*out = dflt;
		return 0;
	}
	return jv_int(&c->v, c->obj, c->path, key, required ? JV_REQUIRED : 0, lo, BIG, dflt, out);
}

int hf_getb(struct hf *c, const char *key, bool dflt, bool *out)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(c->obj, key);

	if (m && cJSON_IsNull(m)) {
		*out = dflt;
		return 0;
	}
	return jv_bool(&c->v, c->obj, c->path, key, 0, dflt, out);
}

/* A probability field in [0, 1); JSON null counts as absent. */
static int getf(struct hf *c, const char *key, double dflt, double *out)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(c->obj, key);

	if (m && cJSON_IsNull(m)) {
		*out = dflt;
		return 0;
	}
	return jv_number(&c->v, c->obj, c->path, key, 0, 0, 0.999, dflt, out);
}

/* First of several alternative names that is present (HF renamed some fields). */
int hf_geti_alias(struct hf *c, const char *const *keys, bool required, long lo, long dflt,
                      long *out)
{
	for (int i = 0; keys[i]; i++)
		if (cJSON_GetObjectItemCaseSensitive(c->obj, keys[i]))
			return hf_geti(c, keys[i], required, lo, dflt, out);
	return hf_geti(c, keys[0], required, lo, dflt, out);
}

/* num_experts_per_tok: at least one, and no more than the experts there are (a larger top-k
 * would count more active than total parameters) */
int hf_geti_topk(struct hf *c, long experts, long *out)
{
	char p[JPATH_MAX];

	if (hf_geti(c, "num_experts_per_tok", true, 1, 0, out) < 0)
		return -1;
	if (experts > 0 && *out > experts) {
		jpath_key(p, c->path, "num_experts_per_tok");
		return jv_fail(&c->v, p, "must not exceed the %ld experts (got %ld)", experts, *out);
	}
	return 0;
}

/* layer_types[i] when the config lists them: 1 full, 0 sliding/linear, -1 absent */
int hf_layer_type(struct hf *c, long i, const char *full, int *out)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->obj, "layer_types"), *it;
	char p[JPATH_MAX], q[JPATH_MAX];

	*out = -1;
	if (!lt || cJSON_IsNull(lt))
		return 0;
	jpath_key(p, c->path, "layer_types");
	if (!cJSON_IsArray(lt))
		return jv_fail(&c->v, p, "must be an array of strings, not %s", json_type_name(lt));
	if (cJSON_GetArraySize(lt) != c->layers)
		return jv_fail(&c->v, p, "has %d entries but num_hidden_layers is %ld",
		               cJSON_GetArraySize(lt), c->layers);
	it = cJSON_GetArrayItem(lt, (int)i);
	jpath_index(q, p, i);
	if (!cJSON_IsString(it))
		return jv_fail(&c->v, q, "must be a string, not %s", json_type_name(it));
	*out = strcmp(it->valuestring, full) == 0;
	return 0;
}

static int oom(struct hf *c)
{
	return err_set(c->v.e, ERR_RUNTIME, "%s: out of host memory", c->v.file);
}

/* The result of arch_add as this reader's error: a config whose layers, with the
 * embedding, the head and any MTP layers, pass the limit is bad input, not a lack of memory. */
int hf_added(struct hf *c, int r)
{
	if (r == ARCH_TOO_MANY) {
		char p[JPATH_MAX];

		jpath_key(p, c->path, c->layers_key ? c->layers_key : "num_hidden_layers");
		return jv_fail(&c->v, p, "%ld layers plus the embedding and the head pass the limit of %d layers",
		               c->layers, OCTO_MAX_LAYERS);
	}
	return r < 0 ? oom(c) : 0;
}

/* A layer count past the limit is refused as it is read, before a layer is built (a
 * fuzzed GPT-2 config of 310283 layers built 100000 of them first: seconds); extra, the
 * MTP modules read from key (0: key is the layer count's own). */
int hf_layers_limit(struct hf *c, const char *key, long extra)
{
	char p[JPATH_MAX];

	if (c->layers <= OCTO_MAX_LAYERS && extra <= OCTO_MAX_LAYERS - c->layers)
		return 0;
	jpath_key(p, c->path, key);
	if (extra > 0)
		return jv_fail(&c->v, p, "%ld MTP modules and %ld layers pass the limit of %d layers", extra,
		               c->layers, OCTO_MAX_LAYERS);
	return jv_fail(&c->v, p, "more than %d layers", OCTO_MAX_LAYERS);
}

void hf_layer_work(const struct hf *c, const struct block *b, int n, struct work *w)
{
	memset(w, 0, sizeof(*w));
	for (int i = 0; i < n; i++) {
		struct block x = b[i];

		/* blocks are often set up before the hidden size is read */
		x.h = c->h;
		x.eager = c->eager;
		x.attn_dropout = c->attn_dropout;
		x.hidden_dropout = c->hidden_dropout;
		cost_block(&x, w);
	}
}

int hf_add_layer(struct hf *c, const char *kind, const struct block *b, int n, bool mtp)
{
	struct work w;

	hf_layer_work(c, b, n, &w);
	return hf_added(c, arch_add(c->a, kind, &w, mtp));
}

struct block hf_blk(struct hf *c, enum block_kind kind)
{
	struct block b;

	memset(&b, 0, sizeof(b));
	b.kind = kind;
	b.h = c->h;
	b.norms = 1;
	b.vocab = c->vocab;
	b.tied = c->tied;
	b.eager = c->eager;
	return b;
}

int hf_add_embedding(struct hf *c, long positions)
{
	struct block b = hf_blk(c, BLK_EMBED);
	struct work w;

	memset(&w, 0, sizeof(w));
	cost_block(&b, &w);
	/* learned absolute positions (GPT-2 style) are a second, small table */
	w.params += (double)positions * c->h;
	w.active += (double)positions * c->h;
	w.unique += (double)positions * c->h;
	return hf_added(c, arch_add(c->a, "embedding", &w, false));
}

int hf_add_head(struct hf *c, bool softcap)
{
	struct block b = hf_blk(c, BLK_HEAD);

	b.softcap = softcap;
	return hf_add_layer(c, "head", &b, 1, false);
}

/* Common fields: hidden, vocab, layers, tie. */
int hf_common(struct hf *c, bool tied_default)
{
	static const char *const impl_keys[] = { "attn_implementation", "_attn_implementation" };
	const char *impl = NULL;

	/* how the attention core ran: "eager" materializes the scores (the default of remote-code
	 * models without SDPA); sdpa, flash_attention_2/3, flex_attention fuse it */
	for (int i = 0; i < 2 && !impl; i++)
		if (cJSON_GetObjectItemCaseSensitive(c->obj, impl_keys[i]) &&
		    jv_string(&c->v, c->obj, c->path, impl_keys[i], JV_NONEMPTY, NULL, &impl) < 0)
			return -1;
	c->eager = impl && strcmp(impl, "eager") == 0;
	if (getf(c, "attention_dropout", 0, &c->attn_dropout) < 0)
		return -1;
	if (hf_geti(c, "hidden_size", true, 1, 0, &c->h) < 0 ||
	    hf_geti(c, "vocab_size", true, 1, 0, &c->vocab) < 0 ||
	    hf_geti(c, "num_hidden_layers", true, 1, 0, &c->layers) < 0 ||
	    hf_getb(c, "tie_word_embeddings", tied_default, &c->tied) < 0)
		return -1;
	if (hf_layers_limit(c, "num_hidden_layers", 0) < 0)
		return -1;
	c->a->hidden = c->h;
	return 0;
}

/* Standard attention fields into b (heads, KV heads, head_dim). */
int hf_attn_fields(struct hf *c, struct block *b)
{
	long nq, nkv, dh;

	char p[JPATH_MAX];

	if (hf_geti(c, "num_attention_heads", true, 1, 0, &nq) < 0 ||
	    hf_geti(c, "num_key_value_heads", false, 1, nq, &nkv) < 0 ||
	    hf_geti(c, "head_dim", false, 1, c->h / nq, &dh) < 0)
		return -1;
	/* without head_dim, more heads than hidden features leave heads of no width, whose
	 * projections would cost nothing */
	if (dh < 1) {
		jpath_key(p, c->path, "num_attention_heads");
		return jv_fail(&c->v, p, "%ld heads of hidden_size %ld leave a head dimension of 0 (give head_dim)",
		               nq, c->h);
	}
	/* grouped-query attention shares each key/value head among a whole group of query heads */
	if (nq % nkv) {
		jpath_key(p, c->path, "num_key_value_heads");
		return jv_fail(&c->v, p, "must divide num_attention_heads (%ld) (got %ld)", nq, nkv);
	}
	b->n_q = (int)nq;
	b->n_kv = (int)nkv;
	b->d_h = (int)dh;
	return 0;
}

static int llama(struct hf *c)
{
	struct block b[2] = { hf_blk(c, BLK_ATTN), hf_blk(c, BLK_MLP) };
	bool abias, mbias;

	if (hf_common(c, false) < 0 || hf_attn_fields(c, &b[0]) < 0 ||
	    hf_geti(c, "intermediate_size", true, 1, 0, &b[1].f) < 0 ||
	    hf_getb(c, "attention_bias", false, &abias) < 0 || hf_getb(c, "mlp_bias", false, &mbias) < 0)
		return -1;
	b[0].bias = abias;
	b[1].bias = mbias;
	b[1].gated = true;
	if (hf_add_embedding(c, 0) < 0)
		return -1;
	for (long i = 0; i < c->layers; i++)
		if (hf_add_layer(c, "attn+mlp", b, 2, false) < 0)
			return -1;
	return hf_add_head(c, false);
}

/* Gemma 2 and 3: local (sliding) and global attention layers with GeGLU, 4 norms. */
static int gemma(struct hf *c, int version)
{
	struct block b[2] = { hf_blk(c, BLK_ATTN), hf_blk(c, BLK_MLP) };
	long window, period;
	bool softcap = false;
	const cJSON *cap = cJSON_GetObjectItemCaseSensitive(c->obj, "final_logit_softcapping");

	if (hf_common(c, true) < 0 || hf_attn_fields(c, &b[0]) < 0 ||
	    hf_geti(c, "intermediate_size", true, 1, 0, &b[1].f) < 0 ||
	    hf_geti(c, "sliding_window", true, 1, 0, &window) < 0 ||
	    hf_geti(c, "sliding_window_pattern", false, 1, version == 2 ? 2 : 6, &period) < 0)
		return -1;
	softcap = cap && cJSON_IsNumber(cap);
	b[0].norms = b[1].norms = 2;
	b[0].qk_norm = version == 3;
	b[1].gated = true;
	if (hf_add_embedding(c, 0) < 0)
		return -1;
	for (long i = 0; i < c->layers; i++) {
		int full;

		if (hf_layer_type(c, i, "full_attention", &full) < 0)
			return -1;
		if (full < 0)
			full = (i + 1) % period == 0;
		b[0].window = full ? 0 : window;
		if (hf_add_layer(c, full ? "attn+mlp" : "swa+mlp", b, 2, false) < 0)
			return -1;
	}
	return hf_add_head(c, softcap);
}

int hf_add_mtp(struct hf *c, const struct block *attn, const struct block *moe, long n)
{
	/* each module: enorm + hnorm + eh_proj, one attention + MoE block, a pass through the
	 * shared head */
	for (long i = 0; i < n; i++) {
		struct block m[4] = { hf_blk(c, BLK_MTP_PROJ), *attn, *moe, hf_blk(c, BLK_HEAD) };
		struct work w;

		m[3].tied = true;
		memset(&w, 0, sizeof(w));
		for (int k = 0; k < 4; k++) {
			m[k].h = c->h;
			m[k].eager = c->eager;
			cost_block(&m[k], &w);
		}
		w.in = w.out = 2.0 * c->h;
		if (hf_added(c, arch_add(c->a, "mtp", &w, true)) < 0)
			return -1;
	}
	return 0;
}

/* DeepSeek MoE (v1), V2 and V3: MLA or MHA, a dense prefix, then MoE; V3's MTP. */
static int deepseek(struct hf *c)
{
	static const char *const routed[] = { "n_routed_experts", "num_experts", NULL };
	struct block b[3] = { hf_blk(c, BLK_ATTN), hf_blk(c, BLK_MLP), hf_blk(c, BLK_MOE) };
	long dense, freq, shared, kv_lora, v, mtp, experts, topk;
	bool mla;
	/* DeepSeek-V2/V3's configuration classes default to MLA (kv_lora_rank 512, q_lora_rank
	 * 1536, head dims 128 + 64 rope, values 128) when the fields are absent; null means none (V2-Lite's q_lora_rank); DeepSeek
	 * MoE (v1) has no MLA */
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(c->obj, "model_type");
	bool v2 = cJSON_IsString(type) && strcmp(type->valuestring, "deepseek") != 0;
	long kv_dflt = v2 && !cJSON_GetObjectItemCaseSensitive(c->obj, "kv_lora_rank") ? 512 : 0;
	long q_dflt = v2 && !cJSON_GetObjectItemCaseSensitive(c->obj, "q_lora_rank") ? 1536 : 0;

	if (hf_common(c, false) < 0 ||
	    hf_geti(c, "intermediate_size", true, 1, 0, &b[1].f) < 0 ||
	    hf_geti(c, "moe_intermediate_size", true, 1, 0, &b[2].f) < 0 ||
	    hf_geti_alias(c, routed, true, 1, 0, &experts) < 0 ||
	    hf_geti_topk(c, experts, &topk) < 0 ||
	    hf_geti(c, "n_shared_experts", false, 0, 0, &shared) < 0 ||
	    hf_geti(c, "first_k_dense_replace", false, 0, 0, &dense) < 0 ||
	    hf_geti(c, "moe_layer_freq", false, 1, 1, &freq) < 0 ||
	    hf_geti(c, "kv_lora_rank", false, 0, kv_dflt, &kv_lora) < 0 ||
	    hf_geti(c, "num_nextn_predict_layers", false, 0, 0, &mtp) < 0 ||
	    hf_layers_limit(c, "num_nextn_predict_layers", mtp) < 0)
		return -1;
	mla = kv_lora > 0;
	if (mla) {
		b[0].kind = BLK_MLA;
		if (hf_geti(c, "num_attention_heads", true, 1, 0, &v) < 0)
			return -1;
		b[0].n_q = (int)v;
		b[0].kv_lora = (int)kv_lora;
		if (hf_geti(c, "q_lora_rank", false, 0, q_dflt, &v) < 0)
			return -1;
		b[0].q_lora = (int)v;
		if (hf_geti(c, "qk_nope_head_dim", !v2, 1, 128, &v) < 0)
			return -1;
		b[0].d_nope = (int)v;
		if (hf_geti(c, "qk_rope_head_dim", !v2, 1, 64, &v) < 0)
			return -1;
		b[0].d_rope = (int)v;
		if (hf_geti(c, "v_head_dim", !v2, 1, 128, &v) < 0)
			return -1;
		b[0].d_v = (int)v;
	} else if (hf_attn_fields(c, &b[0]) < 0) {
		return -1;
	}
	b[1].gated = b[2].gated = true;
	b[2].experts = (int)experts;
	b[2].top_k = (int)topk;
	b[2].f_shared = shared * b[2].f;
	if (hf_add_embedding(c, 0) < 0)
		return -1;
	for (long i = 0; i < c->layers; i++) {
		bool is_moe = i >= dense && i % freq == 0;
		struct block lb[2] = { b[0], is_moe ? b[2] : b[1] };
		char kind[32];

		snprintf(kind, sizeof(kind), "%s+%s", mla ? "mla" : "attn", is_moe ? "moe" : "dense");
		if (hf_add_layer(c, kind, lb, 2, false) < 0)
			return -1;
	}
	if (hf_add_mtp(c, &b[0], &b[2], mtp) < 0)
		return -1;
	return hf_add_head(c, false);
}

static int nemotron_h(struct hf *c)
{
	static const char *const groups[] = { "n_groups", "mamba_n_groups", NULL };
	static const char *const conv[] = { "conv_kernel", "mamba_d_conv", NULL };
	static const char *const chunk[] = { "chunk_size", "mamba_chunk_size", NULL };
	struct block m = hf_blk(c, BLK_MAMBA2), at = hf_blk(c, BLK_ATTN), ml = hf_blk(c, BLK_MLP), moe = hf_blk(c, BLK_MOE);
	const char *pattern;
	long v;
	char p[JPATH_MAX], q[JPATH_MAX];

	if (hf_common(c, false) < 0 || hf_attn_fields(c, &at) < 0 ||
	    jv_string(&c->v, c->obj, c->path, "hybrid_override_pattern", JV_REQUIRED | JV_NONEMPTY, NULL, &pattern) < 0 ||
	    hf_geti(c, "intermediate_size", true, 1, 0, &ml.f) < 0)
		return -1;
	if (hf_geti(c, "mamba_num_heads", true, 1, 0, &v) < 0)
		return -1;
	m.ssm_heads = (int)v;
	if (hf_geti(c, "mamba_head_dim", true, 1, 0, &v) < 0)
		return -1;
	m.ssm_head_dim = (int)v;
	if (hf_geti_alias(c, groups, true, 1, 0, &v) < 0)
		return -1;
	m.groups = (int)v;
	if (hf_geti(c, "ssm_state_size", true, 1, 0, &v) < 0)
		return -1;
	m.state = (int)v;
	if (hf_geti_alias(c, conv, false, 1, 4, &v) < 0)
		return -1;
	m.conv = (int)v;
	if (hf_geti_alias(c, chunk, false, 1, 128, &v) < 0)
		return -1;
	m.chunk = (int)v;
	jpath_key(p, c->path, "hybrid_override_pattern");
	if ((long)strlen(pattern) != c->layers)
		return jv_fail(&c->v, p, "has %zu characters but num_hidden_layers is %ld", strlen(pattern), c->layers);
	if (strchr(pattern, 'E')) {
		if (hf_geti(c, "n_routed_experts", true, 1, 0, &v) < 0)
			return -1;
		moe.experts = (int)v;
		if (hf_geti_topk(c, v, &v) < 0)
			return -1;
		moe.top_k = (int)v;
		if (hf_geti(c, "moe_intermediate_size", true, 1, 0, &moe.f) < 0 ||
		    hf_geti(c, "moe_shared_expert_intermediate_size", false, 0, 0, &moe.f_shared) < 0)
			return -1;
	}
	if (hf_add_embedding(c, 0) < 0)
		return -1;
	for (long i = 0; pattern[i]; i++) {
		int r;

		switch (pattern[i]) {
		case 'M': r = hf_add_layer(c, "mamba2", &m, 1, false); break;
		case '*': r = hf_add_layer(c, "attn", &at, 1, false); break;
		case '-': r = hf_add_layer(c, "mlp", &ml, 1, false); break;
		case 'E': r = hf_add_layer(c, "moe", &moe, 1, false); break;
		default:
			jpath_index(q, p, i);
			return jv_fail(&c->v, q, "'%c' is not a layer symbol (M mamba2, * attention, - mlp, E moe)",
			               pattern[i]);
		}
		if (r < 0)
			return -1;
	}
	return hf_add_head(c, false);
}

static int jamba(struct hf *c)
{
	struct block at = hf_blk(c, BLK_ATTN), mb = hf_blk(c, BLK_MAMBA1), ml = hf_blk(c, BLK_MLP), moe;
	long ap, ao, ep, eo, experts, topk, state, conv, expand;
	const cJSON *dtr = cJSON_GetObjectItemCaseSensitive(c->obj, "mamba_dt_rank");
	long dt_rank;

	if (hf_common(c, false) < 0 || hf_attn_fields(c, &at) < 0 ||
	    hf_geti(c, "intermediate_size", true, 1, 0, &ml.f) < 0 ||
	    hf_geti(c, "attn_layer_period", true, 1, 0, &ap) < 0 ||
	    hf_geti(c, "attn_layer_offset", true, 0, 0, &ao) < 0 ||
	    hf_geti(c, "expert_layer_period", true, 1, 0, &ep) < 0 ||
	    hf_geti(c, "expert_layer_offset", true, 0, 0, &eo) < 0 ||
	    hf_geti(c, "num_experts", true, 1, 0, &experts) < 0 ||
	    hf_geti_topk(c, experts, &topk) < 0 ||
	    hf_geti(c, "mamba_d_state", true, 1, 0, &state) < 0 ||
	    hf_geti(c, "mamba_d_conv", false, 1, 4, &conv) < 0 ||
	    hf_geti(c, "mamba_expand", false, 1, 2, &expand) < 0)
		return -1;
	if (dtr && cJSON_IsString(dtr) && strcmp(dtr->valuestring, "auto") == 0)
		dt_rank = (c->h + 15) / 16;
	else if (hf_geti(c, "mamba_dt_rank", false, 1, (c->h + 15) / 16, &dt_rank) < 0)
		return -1;
	ml.gated = true;
	moe = ml;
	moe.kind = BLK_MOE;
	moe.experts = (int)experts;
	moe.top_k = (int)topk;
	mb.d_inner = expand * c->h;
	mb.dt_rank = (int)dt_rank;
	mb.state = (int)state;
	mb.conv = (int)conv;
	if (hf_add_embedding(c, 0) < 0)
		return -1;
	for (long i = 0; i < c->layers; i++) {
		bool is_attn = i % ap == ao, is_moe = experts > 1 && i % ep == eo;
		struct block b[2] = { is_attn ? at : mb, is_moe ? moe : ml };
		char kind[32];

		snprintf(kind, sizeof(kind), "%s+%s", is_attn ? "attn" : "mamba1", is_moe ? "moe" : "mlp");
		if (hf_add_layer(c, kind, b, 2, false) < 0)
			return -1;
	}
	return hf_add_head(c, false);
}

static int qwen3_next(struct hf *c)
{
	struct block at = hf_blk(c, BLK_ATTN), g = hf_blk(c, BLK_GDN), ml = hf_blk(c, BLK_MLP), moe = hf_blk(c, BLK_MOE);
	long interval, step, v, experts;
	const cJSON *only = cJSON_GetObjectItemCaseSensitive(c->obj, "mlp_only_layers");

	if (hf_common(c, false) < 0 || hf_attn_fields(c, &at) < 0 ||
	    hf_geti(c, "intermediate_size", false, 1, 1, &ml.f) < 0 ||
	    hf_geti(c, "full_attention_interval", false, 1, 4, &interval) < 0 ||
	    hf_geti(c, "decoder_sparse_step", false, 1, 1, &step) < 0 ||
	    hf_geti(c, "num_experts", true, 0, 0, &experts) < 0 ||
	    hf_geti(c, "moe_intermediate_size", true, 1, 0, &moe.f) < 0 ||
	    hf_geti(c, "shared_expert_intermediate_size", false, 0, 0, &moe.f_shared) < 0)
		return -1;
	at.out_gate = at.qk_norm = true;
	ml.gated = moe.gated = true;
	moe.experts = (int)experts;
	moe.shared_gate = moe.f_shared > 0;
	if (hf_geti_topk(c, experts, &v) < 0)
		return -1;
	moe.top_k = (int)v;
	if (hf_geti(c, "linear_num_key_heads", true, 1, 0, &v) < 0)
		return -1;
	g.k_heads = (int)v;
	if (hf_geti(c, "linear_num_value_heads", true, 1, 0, &v) < 0)
		return -1;
	g.v_heads = (int)v;
	if (hf_geti(c, "linear_key_head_dim", true, 1, 0, &v) < 0)
		return -1;
	g.k_dim = (int)v;
	if (hf_geti(c, "linear_value_head_dim", true, 1, 0, &v) < 0)
		return -1;
	g.v_dim = (int)v;
	if (hf_geti(c, "linear_conv_kernel_dim", false, 1, 4, &v) < 0)
		return -1;
	g.conv = (int)v;
	if (hf_add_embedding(c, 0) < 0)
		return -1;
	for (long i = 0; i < c->layers; i++) {
		int full;
		bool dense_only = false;
		char kind[32];

		if (hf_layer_type(c, i, "full_attention", &full) < 0)
			return -1;
		if (full < 0)
			full = (i + 1) % interval == 0;
		for (const cJSON *o = cJSON_IsArray(only) ? only->child : NULL; o; o = o->next)
			if (cJSON_IsNumber(o) && (long)o->valuedouble == i)
				dense_only = true;
		{
			bool is_moe = !dense_only && experts > 0 && (i + 1) % step == 0;
			struct block b[2] = { full ? at : g, is_moe ? moe : ml };

			snprintf(kind, sizeof(kind), "%s+%s", full ? "gated_attn" : "gdn", is_moe ? "moe" : "mlp");
			if (hf_add_layer(c, kind, b, 2, false) < 0)
				return -1;
		}
	}
	return hf_add_head(c, false);
}

static int gpt_oss(struct hf *c)
{
	static const char *const experts_keys[] = { "num_local_experts", "num_experts", NULL };
	struct block at = hf_blk(c, BLK_ATTN), moe = hf_blk(c, BLK_MOE);
	long window, experts, topk;

	if (hf_common(c, false) < 0 || hf_attn_fields(c, &at) < 0 ||
	    hf_geti(c, "sliding_window", true, 1, 0, &window) < 0 ||
	    hf_geti(c, "intermediate_size", true, 1, 0, &moe.f) < 0 ||
	    hf_geti_alias(c, experts_keys, true, 1, 0, &experts) < 0 ||
	    hf_geti_topk(c, experts, &topk) < 0)
		return -1;
	at.bias = at.sinks = true;
	moe.bias = moe.gated = moe.clamped = true;
	moe.experts = (int)experts;
	moe.top_k = (int)topk;
	if (hf_add_embedding(c, 0) < 0)
		return -1;
	for (long i = 0; i < c->layers; i++) {
		int full;
		struct block b[2];

		if (hf_layer_type(c, i, "full_attention", &full) < 0)
			return -1;
		if (full < 0)
			full = i % 2 == 1;
		b[0] = at;
		b[0].window = full ? 0 : window;
		b[1] = moe;
		if (hf_add_layer(c, full ? "attn+moe" : "swa+moe", b, 2, false) < 0)
			return -1;
	}
	return hf_add_head(c, false);
}

/* GPT-2 / GPT-3 style: learned positions, LayerNorm (weight + bias: 2 norms' worth),
 * biases everywhere, a non-gated GeLU MLP. */
static int gpt2(struct hf *c)
{
	struct block b[2];
	long heads, inner, positions;

	c->layers_key = "n_layer";
	if (hf_geti(c, "n_embd", true, 1, 0, &c->h) < 0 ||
	    hf_geti(c, "n_layer", true, 1, 0, &c->layers) < 0 ||
	    hf_geti(c, "n_head", true, 1, 0, &heads) < 0 ||
	    hf_geti(c, "vocab_size", true, 1, 0, &c->vocab) < 0 ||
	    hf_geti(c, "n_positions", false, 0, 0, &positions) < 0 ||
	    hf_getb(c, "tie_word_embeddings", true, &c->tied) < 0 || hf_layers_limit(c, "n_layer", 0) < 0)
		return -1;
	if (hf_geti(c, "n_inner", false, 1, 4 * c->h, &inner) < 0)
		return -1;
	/* GPT-2's config trains with dropout 0.1 on the probabilities and the residuals unless
	 * it says otherwise (its class defaults) */
	if (getf(c, "attn_pdrop", 0.1, &c->attn_dropout) < 0 || getf(c, "resid_pdrop", 0.1, &c->hidden_dropout) < 0)
		return -1;
	if (c->h % heads) {   /* as Hugging Face's GPT-2 refuses it */
		char p[JPATH_MAX];

		jpath_key(p, c->path, "n_head");
		return jv_fail(&c->v, p, "must divide n_embd (%ld) (got %ld)", c->h, heads);
	}
	c->a->hidden = c->h;
	b[0] = hf_blk(c, BLK_ATTN);
	b[1] = hf_blk(c, BLK_MLP);
	b[0].n_q = b[0].n_kv = (int)heads;
	b[0].d_h = (int)(c->h / heads);
	b[0].bias = b[1].bias = true;
	b[0].norms = b[1].norms = 2;
	b[1].f = inner;
	if (hf_add_embedding(c, positions) < 0)
		return -1;
	for (long i = 0; i < c->layers; i++)
		if (hf_add_layer(c, "attn+mlp", b, 2, false) < 0)
			return -1;
	return hf_add_head(c, false);
}

static const struct {
	const char *type, *arch;
	int (*read)(struct hf *c);
	int version;
} families[] = {
	{ "llama", "LlamaForCausalLM", llama, 0 },
	{ "gemma2", "Gemma2ForCausalLM", NULL, 2 },
	{ "gemma3", "Gemma3ForConditionalGeneration", NULL, 3 },
	{ "gemma3_text", "Gemma3ForCausalLM", NULL, 3 },
	{ "deepseek", "DeepseekForCausalLM", deepseek, 0 },
	{ "deepseek_v2", "DeepseekV2ForCausalLM", deepseek, 0 },
	{ "deepseek_v3", "DeepseekV3ForCausalLM", deepseek, 0 },
	{ "nemotron_h", "NemotronHForCausalLM", nemotron_h, 0 },
	{ "jamba", "JambaForCausalLM", jamba, 0 },
	{ "qwen3_next", "Qwen3NextForCausalLM", qwen3_next, 0 },
	{ "gpt_oss", "GptOssForCausalLM", gpt_oss, 0 },
	{ "gpt2", "GPT2LMHeadModel", gpt2, 0 },
	{ "mistral", "MistralForCausalLM", hf_mistral, 0 },
	{ "mixtral", "MixtralForCausalLM", hf_mixtral, 0 },
	{ "phi3", "Phi3ForCausalLM", hf_phi3, 0 },
	{ "granite", "GraniteForCausalLM", hf_granite, 0 },
	{ "olmo2", "Olmo2ForCausalLM", hf_olmo2, 0 },
	{ "qwen2", "Qwen2ForCausalLM", hf_qwen2, 0 },
	{ "qwen2_moe", "Qwen2MoeForCausalLM", hf_qwen2_moe, 0 },
	{ "qwen3", "Qwen3ForCausalLM", hf_qwen3, 0 },
	{ "qwen3_moe", "Qwen3MoeForCausalLM", hf_qwen3_moe, 0 },
	{ "glm4_moe", "Glm4MoeForCausalLM", hf_glm4_moe, 0 },
	{ "falcon_h1", "FalconH1ForCausalLM", hf_falcon_h1, 0 },
};
#define NFAMILIES (sizeof(families) / sizeof(families[0]))

/*
 * A model_type this reader does not know: a config with the standard decoder fields is
 * priced as Llama (families[0]) with a warning in the architecture naming what was assumed;
 * one without them is refused, naming the first field missing.
 */
static int unknown_type(struct hf *c, const char *type)
{
	static const char *const need[] = { "hidden_size", "num_hidden_layers", "num_attention_heads",
	                                    "intermediate_size", "vocab_size" };
	const cJSON *m;

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		m = cJSON_GetObjectItemCaseSensitive(c->obj, need[i]);
		if (!m || cJSON_IsNull(m))
			return jv_fail(&c->v, need[i], "required field is missing (model_type '%s' is not known, and "
			               "pricing it as a Llama-style decoder needs hidden_size, num_hidden_layers, "
			               "num_attention_heads, intermediate_size and vocab_size; known: %s)", type,
			               hfconfig_supported);
	}
	snprintf(c->a->warning, sizeof(c->a->warning),
	         "%s: model_type '%s' is not known: priced as a Llama-style decoder (full attention%s and a "
	         "SwiGLU MLP in every layer, biases only as attention_bias and mlp_bias say)", c->v.file, type,
	         cJSON_GetObjectItemCaseSensitive(c->obj, "num_key_value_heads") ? "" : " with one KV head per query head");
	return 0;
}

int hfconfig_read(struct arch *a, const cJSON *root, const char *file, struct err *e)
{
	struct hf c;
	const char *type = NULL, *name;
	const cJSON *archs, *text;
	int k = -1, r;

	memset(a, 0, sizeof(*a));
	memset(&c, 0, sizeof(c));
	c.v.file = file;
	c.v.e = e;
	c.obj = root;
	c.path = "";
	c.a = a;
	if (jv_string(&c.v, root, "", "model_type", JV_NONEMPTY, NULL, &type) < 0 ||
	    jv_array(&c.v, root, "", "architectures", 0, &archs) < 0)
		return -1;
	if (type) {
		for (size_t i = 0; i < NFAMILIES; i++)
			if (strcmp(type, families[i].type) == 0)
				k = (int)i;
		if (k < 0 && (k = unknown_type(&c, type)) < 0)
			return -1;
	} else if (archs && cJSON_IsString(archs->child)) {
		for (size_t i = 0; i < NFAMILIES; i++)
			if (strcmp(archs->child->valuestring, families[i].arch) == 0)
				k = (int)i;
		if (k < 0)
			return jv_fail(&c.v, "architectures[0]", "'%s' is not supported (supported model types: %s)",
			               archs->child->valuestring, hfconfig_supported);
	} else {
		return jv_fail(&c.v, "model_type", "required field is missing (a Hugging Face config.json "
		               "names its model_type; an OctoPipe architecture has \"format\": \"%s\")",
		               ARCH_FORMAT);
	}
	/* multimodal Gemma 3: the language model's fields are in text_config */
	text = cJSON_GetObjectItemCaseSensitive(root, "text_config");
	if (families[k].version == 3 && text) {
		if (!cJSON_IsObject(text))
			return jv_fail(&c.v, "text_config", "must be an object, not %s", json_type_name(text));
		c.obj = text;
		c.path = "text_config";
	}
	a->seq_len = 4096;
	r = families[k].read ? families[k].read(&c) : gemma(&c, families[k].version);
	if (r < 0) {
		arch_release(a);
		return -1;
	}
	name = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "_name_or_path"))
	       ? cJSON_GetObjectItemCaseSensitive(root, "_name_or_path")->valuestring : families[k].type;
	if (!(a->name = strdup(name)) || !(a->family = strdup(families[k].type))) {
		arch_release(a);
		return err_set(e, ERR_RUNTIME, "%s: out of host memory", file);
	}
	return 0;
}

int hfconfig_load_any(struct arch *a, const char *path, struct err *e)
{
	cJSON *root = json_load_file(path, e);
	int r;

	memset(a, 0, sizeof(*a));
	if (!root)
		return -1;
	if (cJSON_GetObjectItemCaseSensitive(root, "format"))
		r = arch_from_json(a, root, path, e);
	else
		r = hfconfig_read(a, root, path, e);
	cJSON_Delete(root);
	return r;
}
