/*
 * megatron — a plan's partition as Megatron-LM's `--pipeline-model-parallel-layout`
 * string: virtual stages in order separated by '|', "E" the embedding, "t" a decoder
 * layer, "L" the loss (run-length as "t*7"), e.g. "Et*6|t*7|t*7|t*6L".
 */
#ifndef OCTO_MEGATRON_H
#define OCTO_MEGATRON_H

#include "err.h"
#include "plan.h"
#include "strbuf.h"

/* Fails (ERR_INPUT) when the placement is not Megatron's round robin (stage s on device
 * s mod p), which its layout cannot express. */
int megatron_layout(const struct plan *p, struct strbuf *sb, struct err *e);

#endif
