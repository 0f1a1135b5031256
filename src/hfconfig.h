/*
 * hfconfig — reads a Hugging Face `config.json` into an architecture (arch.h): detects
 * the model family from `model_type` (or `architectures`), expands its layer pattern
 * (Nemotron-H's hybrid string, Jamba's periods, Gemma's local/global rule, DeepSeek's and
 * GLM-4.5's dense prefix and MTP, Qwen3-Next's linear/full interval, Qwen's sliding-window
 * and sparse-step rules, Falcon-H1's parallel attention and Mamba-2) into layers of blocks,
 * and sums each layer's per-token work with cost_block(). A model_type it does not know is
 * read as Llama when the config has the standard decoder fields, and the architecture's
 * warning says so.
 *
 * Layers: an `embedding` layer, one layer per decoder layer (Nemotron-H: per pattern
 * character), the MTP modules if any, then `head` (final norm + LM head + loss).
 */
#ifndef OCTO_HFCONFIG_H
#define OCTO_HFCONFIG_H

#include <cjson/cJSON.h>

#include "arch.h"
#include "err.h"

/* "llama, mistral, ..." — the model types hfconfig_read() understands. */
extern const char hfconfig_supported[];

int hfconfig_read(struct arch *a, const cJSON *root, const char *file, struct err *e);

/* Reads FILE as either an OctoPipe architecture (it has "format") or a config.json. */
int hfconfig_load_any(struct arch *a, const char *path, struct err *e);

#endif
