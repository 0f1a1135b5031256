/*
 * torchcsv — PyTorch pipelining's schedule CSV (torch.distributed.pipelining
 * `_dump_csv` / `_load_csv`): one row per rank, one cell per step, cells like "0F0",
 * "0I0", "0W0", "0B0", "(0F7;7I3)OVERLAP_F_B" (an overlapped pair), an empty cell an idle
 * step. Exported rows hold each device's ops in order (the compute_only format); imported
 * rows give the order, the stage -> rank placement (from which row holds a stage) and,
 * with a partition, a complete plan. The compute_comms format's cells ("1SEND_F0",
 * "0UNSHARD", ...) are read, checked and dropped.
 */
#ifndef OCTO_TORCHCSV_H
#define OCTO_TORCHCSV_H

#include "cluster.h"
#include "err.h"
#include "model.h"
#include "plan.h"
#include "strbuf.h"

/* Appends the plan's order as CSV, one row for each device up to the last that holds a
 * stage (the pipeline's ranks). An overlapped pair is one OVERLAP_F_B cell. -1 with e
 * set when a device below that last one holds no stage (a rank with no row to load). */
int torchcsv_export(const struct plan *p, struct strbuf *sb, struct err *e);
/* The same for devices 0..nrows-1 only (a runtime with nrows pipeline ranks). */
void torchcsv_export_rows(const struct plan *p, int nrows, struct strbuf *sb);

/* Builds a plan from CSV text (len bytes, RFC 4180: cells may be quoted): file names the input in messages; microbatches 0 means
 * "one more than the largest in the file"; partition as in baseline.h (NULL = uniform).
 * The model and cluster are copied; model_ref/cluster_ref are written into the plan. */
int torchcsv_import(struct plan *out, const char *text, size_t len, const char *file,
                    const struct model *m, const char *model_ref,
                    const struct cluster *c, const char *cluster_ref,
                    int microbatches, const char *partition, struct err *e);

#endif
