/*
 * arch — a model architecture as the cost model sees it: an ordered list of schedulable
 * layers, each with its per-token work (cost.h). Built from a Hugging Face config.json
 * (hfconfig.h) or read from an OctoPipe architecture file (`octopipe.arch/1`): the
 * compact form (docs/DESIGN.md "Formats", docs/METHOD.md §6.2), a `pattern` string
 * whose characters are keys of a `kinds` table of per-token counts, with optional `pre` and `post` lists.
 *
 * arch_to_model() turns it into a layer table for one GPU, sequence length, micro-batch
 * and tensor-parallel degree.
 */
#ifndef OCTO_ARCH_H
#define OCTO_ARCH_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "cost.h"
#include "err.h"
#include "model.h"

#define ARCH_FORMAT "octopipe.arch/1"

struct arch_layer {
	char *kind;              /* e.g. "mamba2", "swa+mlp", "head" */
	struct work w;
	bool mtp;                /* a multi-token-prediction module (not in the model totals) */
};

struct arch {
	char *name;
	char *family;            /* detected architecture, e.g. "nemotron_h" */
	long seq_len;            /* default sequence length */
	long hidden;
	int nlayers, cap;
	struct arch_layer *layers;
	char warning[512];       /* one line for the user when the reader had to assume something
	                          * ("FILE: ..."), "" when not; the caller decides whether to show it */
};

/* Appends a layer (kind copied); -1 when out of host memory, ARCH_TOO_MANY when the
 * architecture already has OCTO_MAX_LAYERS layers. */
#define ARCH_TOO_MANY (-2)
int arch_add(struct arch *a, const char *kind, const struct work *w, bool mtp);
void arch_release(struct arch *a);

/* Reads an `octopipe.arch/1` document; errors are one line "FILE: PATH: problem". */
int arch_from_json(struct arch *a, const cJSON *root, const char *file, struct err *e);

struct arch_totals {
	double params, active;   /* weights of the model (tied head once), MTP excluded */
	double mtp_params;
	double embed_params, head_params;
	double flops_per_token;  /* forward, at the given sequence length, head included, MTP excluded */
};
void arch_totals(const struct arch *a, long seq, struct arch_totals *t);

/* The layer table: one layer per arch layer, named name. m is filled (release it). */
int arch_to_model(const struct arch *a, const struct hardware *hw, const struct cost_opts *o,
                  const char *name, struct model *m, struct err *e);

#endif
