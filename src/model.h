/*
 * model — the layer table (`octopipe.model/1`): one entry per schedulable layer with its
 * forward / input-grad / weight-grad times on a speed-1.0 device and its memory figures.
 *
 * Files may use the expanded `layers` list or the compact form (`pattern` string + `kinds`
 * table + optional `pre`/`post` lists); either loads into the same expanded struct, and
 * writers always write the expanded list. A layer may give `bw_ms` (the full backward)
 * instead of `b_ms` + `w_ms`; it is split by `w_fraction` (layer, else model, else 0.5).
 */
#ifndef OCTO_MODEL_H
#define OCTO_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"

#define MODEL_FORMAT "octopipe.model/1"

struct layer {
	char *kind;            /* e.g. "mamba2", "attn", "mlp", "embedding+mamba2" */
	double f_ms;           /* forward */
	double b_ms;           /* input-gradient backward (the "I" op) */
	double w_ms;           /* weight-gradient backward */
	uint64_t param_bytes;  /* bf16 weights (2 bytes per parameter) */
	uint64_t act_bytes;    /* activations kept from F until the backward */
	uint64_t act_w_bytes;  /* the part of act_bytes kept until W (<= act_bytes) */
	uint64_t out_bytes;    /* activation sent to the next stage; the gradient back is as large */
	/* Parallel layouts (layout.h); optional in the file, written only when nonzero. */
	uint64_t expert_param_bytes; /* the part of param_bytes in routed experts (sharded by EP) */
	uint64_t in_bytes;     /* the layer's input: all a fully recomputed layer keeps from F to B
	                        * (0: the previous layer's out_bytes) */
	uint64_t core_act_bytes; /* the part of act_bytes inside the attention core (scores,
	                        * softmax), which selective recompute drops (<= act_bytes) */
	double core_f_ms;      /* the attention core's forward: what selective recompute redoes */
	uint64_t a2a_bytes;    /* MoE token dispatch + combine per microbatch (all-to-all under EP) */
	uint64_t tied_bytes;   /* the part of param_bytes that is the first layer's weights (a head
	                        * tied to the embedding): a device holding both holds it once */
	cJSON *extra;          /* comments ("_..."), preserved on save */
};

struct model {
	char *name;
	long seq_len;
	long micro_batch_size;
	int nlayers;
	struct layer *layers;
	cJSON *extra;
};

/* Validates root and fills m (previous contents are not freed). On failure m is left
 * released and e holds "FILE: PATH: problem" (ERR_INPUT) or ERR_RUNTIME for memory. */
/* path: where the document sits inside file (e.g. "model" for a plan's embedded model),
 * used in messages; NULL for a whole file. */
int model_from_json(struct model *m, const cJSON *root, const char *file, const char *path,
                     struct err *e);
int model_load(struct model *m, const char *path, struct err *e);
/* New cJSON tree of the model (caller cJSON_Delete()s); NULL when out of host memory. */
cJSON *model_to_json(const struct model *m);
int model_save(const struct model *m, const char *path, struct err *e);
void model_release(struct model *m);
/* Deep copy (the same table a save and load would give). */
int model_copy(struct model *dst, const struct model *src, struct err *e);

static inline double layer_total_ms(const struct layer *l)
{
	return l->f_ms + l->b_ms + l->w_ms;
}

/* Layer l's input: what a fully recomputed layer keeps from F to B (in_bytes, else the
 * previous layer's output; none for the first). */
static inline uint64_t model_layer_in_bytes(const struct model *m, int l)
{
	const struct layer *y = &m->layers[l];

	return y->in_bytes ? y->in_bytes : l > 0 ? m->layers[l - 1].out_bytes : 0;
}

/* Per-kind aggregate for reports. */
struct model_kind_stats {
	const char *kind;      /* points into the model */
	int count;
	double f_ms, b_ms, w_ms;
	uint64_t param_bytes, act_bytes;
};

/* Groups the layers by kind in order of first appearance. Returns a heap array of *n
 * entries (caller frees; the kind strings belong to m), NULL on allocation failure. */
struct model_kind_stats *model_kind_stats(const struct model *m, int *n);
/* Sums over all layers (kind = NULL). */
struct model_kind_stats model_totals(const struct model *m);
/* Indices of the k layers with the largest f+b+w, heaviest first, into idx (k entries
 * or fewer); returns how many were written. */
int model_heaviest(const struct model *m, int *idx, int k);

#endif
