/*
 * doc — any OctoPipe file, whatever its kind: detects the kind from "format", loads and
 * validates it with the right reader, and describes it in one line. Used by
 * `octopipe check` and by commands that accept several kinds.
 */
#ifndef OCTO_DOC_H
#define OCTO_DOC_H

#include "arch.h"
#include "cluster.h"
#include "err.h"
#include "fidelity.h"
#include "model.h"
#include "plan.h"
#include "runtime.h"
#include "strbuf.h"
#include "timeline.h"

enum doc_kind { DOC_UNKNOWN = 0, DOC_MODEL, DOC_CLUSTER, DOC_PLAN, DOC_TIMELINE, DOC_ARCH, DOC_RUNTIME, DOC_POINTS };

struct doc {
	enum doc_kind kind;
	union {
		struct model model;
		struct cluster cluster;
		struct plan plan;
		struct timeline timeline;
		struct arch arch;
		struct runtime runtime;
		struct fidelity_set points;
	} u;
};

/* Loads and validates path as whatever kind its "format" names. */
int doc_load(struct doc *d, const char *path, struct err *e);
void doc_release(struct doc *d);
const char *doc_kind_name(enum doc_kind k);
/* One line (no newline) describing the document: what it is and its key numbers. */
void doc_describe(const struct doc *d, struct strbuf *sb);

/* Human units: "141.0 GB", "1.25 s", "830 ms". */
void fmt_bytes(struct strbuf *sb, double bytes);
void fmt_ms(struct strbuf *sb, double ms);
/* x and y bytes as fmt_bytes writes them, appended to a and b; where they would read alike
 * but differ ("134 GB" of "134 GB"), in GB with as many decimals as tell them apart. */
void fmt_bytes_apart(struct strbuf *a, struct strbuf *b, double x, double y);
/* The decimals (least at least, at most 9) at which x and y bytes, printed in GB, differ;
 * least when they are equal. */
int fmt_gb_decimals(double x, double y, int least);
/* Where fmt_bytes writes x and y alike but they differ: the GB decimals (2 at least) that
 * tell them apart; else -1. */
int fmt_bytes_alike(double x, double y);

#endif
