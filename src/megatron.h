/*
 * megatron — a plan's partition as Megatron-LM's `--pipeline-model-parallel-layout`
 * string: virtual stages in order separated by '|', "E" the embedding, "t" a decoder
 * layer, "L" the loss (run-length as "t*7"), e.g. "Et*6|t*7|t*7|t*6L"; and the whole set
 * of Megatron-LM flags that run a plan's layout (`octopipe export megatron-args`).
 */
#ifndef OCTO_MEGATRON_H
#define OCTO_MEGATRON_H

#include "err.h"
#include "plan.h"
#include "strbuf.h"

/* Fails (ERR_INPUT, the message starting with the plan's JSON path) when the placement
 * is not Megatron's round robin (stage s on device s mod p), which its layout cannot
 * express. */
int megatron_layout(const struct plan *p, struct strbuf *sb, struct err *e);

/* The Megatron-LM command-line flags that run p's layout and partition: parallel sizes,
 * sequence parallelism, the distributed optimizer or Megatron-FSDP for ZeRO, recompute,
 * batch sizes and the pipeline layout, one per line, with comment lines ("# ...") naming
 * what Megatron will not reproduce (its own 1F1B / interleaved order). ERR_INPUT when
 * Megatron cannot express the plan (placement, stages recomputing differently). */
int megatron_args(const struct plan *p, const char *plan_name, struct strbuf *sb, struct err *e);

#endif
