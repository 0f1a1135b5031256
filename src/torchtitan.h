/*
 * torchtitan — `octopipe export torchtitan`: a plan as torchtitan's job-config TOML
 * fragment (parallelism degrees, the schedule CSV's path, each model part's modules,
 * micro-batch size, batch sizes, activation checkpointing) and the schedule CSV its
 * pipelining runtime runs (torchcsv.h), refusing what torchtitan cannot run.
 */
#ifndef OCTO_TORCHTITAN_H
#define OCTO_TORCHTITAN_H

#include "err.h"
#include "plan.h"
#include "strbuf.h"

/* Appends the TOML to toml (csv_path is the CSV's path as the TOML names it) and the CSV
 * of the pipeline ranks' orders to csv. ERR_INPUT, prefixed with plan_name and naming the
 * plan's JSON path, when torchtitan cannot run the plan: a placement other than its loop
 * or v style, data parallelism that is neither FSDP nor DDP alone, stages that recompute
 * differently, an MTP module, a layer torchtitan has no model for (torchtitan_check_model).
 * With one pipeline rank (one stage) the TOML has no
 * pipelining keys and csv stays empty (there is nothing to write). */
int torchtitan_export(const struct plan *p, const char *plan_name, const char *csv_path, struct strbuf *toml,
                      struct strbuf *csv, struct err *e);

/* Whether torchtitan builds m's layers: 0, or -1 with ERR_INPUT naming the first layer
 * whose mixer (Mamba, gated DeltaNet) no torchtitan model has. */
int torchtitan_check_model(const struct model *m, struct err *e);

/* Whether torchtitan_export would succeed: 0, or -1 with e saying why (not prefixed). */
int torchtitan_check(const struct plan *p, struct err *e);

#endif
