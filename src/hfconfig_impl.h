/*
 * hfconfig_impl — what the config readers share (hfconfig.c: the reader, its helpers and
 * the older families; hfconfig_families.c: the Llama-like, Qwen, MoE and Falcon-H1
 * families). Not part of the engine's interface: only hfconfig*.c include it.
 *
 * Every helper returns 0, or -1 with c->v's error set (one line "FILE: PATH: problem").
 */
#ifndef OCTO_HFCONFIG_IMPL_H
#define OCTO_HFCONFIG_IMPL_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "arch.h"
#include "cost.h"
#include "json.h"

struct hf {
	struct jv v;
	const cJSON *obj;      /* the object holding the text model's fields */
	const char *path;      /* its JSON path ("" or "text_config") */
	struct arch *a;
	long h, vocab, layers;
	const char *layers_key;  /* the field that gave layers (n_layer for GPT-2) */
	bool tied;
	bool eager;            /* attn_implementation "eager": attention scores materialized */
	double attn_dropout, hidden_dropout;  /* dropout probabilities the config trains with */
};

/* An integer field; JSON null counts as absent (dflt) unless required. */
/* Refuses a layer count (and extra MTP modules read from key) past OCTO_MAX_LAYERS. */
int hf_layers_limit(struct hf *c, const char *key, long extra);
int hf_geti(struct hf *c, const char *key, bool required, long lo, long dflt, long *out);
/* A boolean field; JSON null counts as absent. */
int hf_getb(struct hf *c, const char *key, bool dflt, bool *out);
/* The first of several names (NULL-terminated) that is present. */
int hf_geti_alias(struct hf *c, const char *const *keys, bool required, long lo, long dflt, long *out);
/* num_experts_per_tok, at least 1 and at most experts. */
int hf_geti_topk(struct hf *c, long experts, long *out);
/* layer_types[i] when the config lists them: *out 1 when it is full, 0 otherwise, -1 absent. */
int hf_layer_type(struct hf *c, long i, const char *full, int *out);

/* A block of kind with the model's hidden size, vocabulary, tying and one pre-norm. */
struct block hf_blk(struct hf *c, enum block_kind kind);
/* hidden_size, vocab_size, num_hidden_layers, tie_word_embeddings, attn_implementation. */
int hf_common(struct hf *c, bool tied_default);
/* num_attention_heads, num_key_value_heads, head_dim into b. */
int hf_attn_fields(struct hf *c, struct block *b);

/* Appends a layer made of blocks b[0..n-1]; the embedding; the head; n MTP modules (an
 * enorm/hnorm/eh_proj, one attention + MoE layer and a pass through the shared head). */
/* The work of a layer made of blocks b[0..n): each block takes the config's hidden size,
 * attention class and dropout (the one place that fills them in). */
void hf_layer_work(const struct hf *c, const struct block *b, int n, struct work *w);
int hf_add_layer(struct hf *c, const char *kind, const struct block *b, int n, bool mtp);
int hf_add_embedding(struct hf *c, long positions);
int hf_add_head(struct hf *c, bool softcap);
int hf_add_mtp(struct hf *c, const struct block *attn, const struct block *moe, long n);
/* arch_add's result as this reader's error. */
int hf_added(struct hf *c, int r);

/* The families of hfconfig_families.c. */
int hf_mistral(struct hf *c);
int hf_phi3(struct hf *c);
int hf_granite(struct hf *c);
int hf_olmo2(struct hf *c);
int hf_qwen2(struct hf *c);
int hf_qwen3(struct hf *c);
int hf_mixtral(struct hf *c);
int hf_qwen2_moe(struct hf *c);
int hf_qwen3_moe(struct hf *c);
int hf_glm4_moe(struct hf *c);
int hf_falcon_h1(struct hf *c);

#endif
