/*
 * megatron — a plan's partition as Megatron-LM's `--pipeline-model-parallel-layout`
 * string: virtual stages in order separated by '|', "E" the embedding, "t" a decoder
 * layer, "L" the loss (run-length as "t*7"), e.g. "Et*6|t*7|t*7|t*6L"; and the whole set
 * of Megatron-LM flags that run a plan's layout (`octopipe export megatron-args`), refusing
 * what Megatron-LM would refuse when it starts.
 */
#ifndef OCTO_MEGATRON_H
#define OCTO_MEGATRON_H

#include "err.h"
#include "plan.h"
#include "strbuf.h"

/* Fails (ERR_INPUT, the message starting with the plan's JSON path) when the placement
 * is not Megatron's round robin (stage s on device s mod p), which its layout cannot
 * express, when the model is a hybrid one (Megatron-LM refuses the layout beside the
 * hybrid pattern: megatron_args writes the pattern) or when its MTP modules are where
 * Megatron-LM's layout cannot hold them. */
int megatron_layout(const struct plan *p, struct strbuf *sb, struct err *e);

/* The Megatron-LM command-line flags that run p's layout and partition: parallel sizes,
 * sequence parallelism, the distributed optimizer or Megatron-FSDP for ZeRO (with the
 * gradients' dtype), recompute, batch sizes and the partition — the pipeline layout, or
 * for a hybrid (Mamba / gated DeltaNet) model the hybrid layer pattern with '|' between
 * stages — one per line, with comment lines ("# ...") naming what Megatron will not
 * reproduce (its own 1F1B / interleaved order). ERR_INPUT, prefixed with plan_name, for
 * anything Megatron-LM would refuse at start-up (megatron.c cites each rule). */
int megatron_args(const struct plan *p, const char *plan_name, struct strbuf *sb, struct err *e);

/* Makes every stage of p recompute fully its first n layers as Megatron-LM counts them
 * (decoder layers; a hybrid model's pattern symbols): what `--recompute-method block
 * --recompute-num-layers n` runs; stages with n or fewer recompute all their layers.
 * Returns the most such layers any stage has (n at or above it: full recompute). */
int megatron_recompute_block(struct plan *p, int n);

/* Whether megatron_args would succeed: 0, or -1 with e saying why (not prefixed). */
int megatron_check(const struct plan *p, struct err *e);

#endif
