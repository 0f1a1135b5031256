/*
 * mksamples.h — what samples/mksamples' files share: the layer letters and architectures
 * of the bundled models (mksamples_specs.c) and the per-token memory formulas
 * (mksamples_mem.c). A build tool, not part of the engine.
 */
#ifndef OCTO_MKSAMPLES_H
#define OCTO_MKSAMPLES_H

#include <stdbool.h>
#include <stdint.h>

#define LETTERS_MAX 4

/* The triples of a relative-costs row: [F, B, W] of the layer, of the second layer kind
 * (MoE for deepseek, Mamba for nemotronh) and of the head. */
enum triple { TR_LAYER = 0, TR_SECOND = 1, TR_HEAD = 2 };

/* Where a class takes its W share from; family NULL: zero-bubble theory, W = B. */
struct share_ref {
	const char *family;
	enum triple triple;
};

/* What a layer letter is made of; every part brings its own pre-norm. */
enum part {
	P_ATTN = 1 << 0,   /* self-attention (GQA or MHA), FlashAttention */
	P_MLP = 1 << 1,    /* non-gated MLP, 2 matrices */
	P_GLU = 1 << 2,    /* SwiGLU MLP, 3 matrices */
	P_MOE = 1 << 3,    /* router + routed experts (+ shared experts), SwiGLU */
	P_MAMBA2 = 1 << 4, /* Mamba-2 mixer */
	P_GPT = 1 << 5,    /* activations by Korthikanti's 34 bytes/token x h instead */
};

struct letter {
	char arch;           /* the letter in the profile */
	const char *kind;
	unsigned parts;
	struct share_ref share;
	const char *what;    /* the class in the printed share table */
};

struct sample_arch {
	long h, vocab;
	long pos_rows;       /* learned position embeddings (rows), 0 for none */
	bool layernorm;      /* LayerNorm (weight and bias) instead of RMSNorm */
	bool bias;           /* biases on the linear layers (not on the LM head) */
	long nq, nkv, dh;
	bool sinks;          /* one learned sink logit per query head */
	long ffn;            /* dense MLP intermediate */
	long experts, topk, fe, fshared;
	long mheads, mhdim, groups, state, conv, chunk;
};

struct spec {
	const char *name;    /* the profile's file name and the model's name */
	struct sample_arch a;
	struct letter letters[LETTERS_MAX];
	struct share_ref head;
	const char *public_layout; /* letters of the published layout where the profile differs */
	double known_params;
	const char *known;
};

#define DEEPSEEK_PUBLIC "D" "MMMMMMMMMMMMMMMMMMMMMMMMMMM"

/* Per-token figures of one block: parameters, activation bytes kept for the backward and
 * the bytes W needs (before clamping to the activations). */
struct mem {
	uint64_t params, act, act_w;
};

/* mksamples_specs.c: the bundled models */
extern const struct spec specs[];
extern const int nspecs;
#define NSPECS nspecs

/* mksamples_mem.c: per-token memory of one block of the given parts, of the embedding and
 * of the LM head (added to *m) */
struct mem block_mem(const struct sample_arch *a, unsigned parts);
void embedding_mem(const struct sample_arch *a, struct mem *m);
void head_mem(const struct sample_arch *a, struct mem *m);

#endif
