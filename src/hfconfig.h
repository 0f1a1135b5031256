/*
 * hfconfig — reads a Hugging Face `config.json` into an architecture (arch.h): detects
 * the model family from `model_type` (or `architectures`), expands its layer pattern
 * (Nemotron-H's hybrid string, Jamba's periods, Gemma's local/global rule, DeepSeek's
 * dense prefix and MTP, Qwen3-Next's linear/full interval) into layers of blocks, and
 * sums each layer's per-token work with cost_block().
 *
 * Layers: an `embedding` layer, one layer per decoder layer (Nemotron-H: per pattern
 * character), the MTP modules if any, then `head` (final norm + LM head + loss).
 */
#ifndef OCTO_HFCONFIG_H
#define OCTO_HFCONFIG_H

#include <cjson/cJSON.h>

#include "arch.h"
#include "err.h"

/* "llama, gemma2, ..." — the model types hfconfig_read() understands. */
extern const char hfconfig_supported[];

int hfconfig_read(struct arch *a, const cJSON *root, const char *file, struct err *e);

/* Reads FILE as either an OctoPipe architecture (it has "format") or a config.json. */
int hfconfig_load_any(struct arch *a, const char *path, struct err *e);

#endif
