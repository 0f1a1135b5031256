/*
 * profile — measured per-op timings to a layer table. Records come from a CSV
 * (`name,phase,ms` per line) or a Chrome trace (`traceEvents` of complete "X" events with
 * `dur` in microseconds, e.g. a PyTorch profiler trace). A rules file
 * (`octopipe.rules/1`) maps record names to layers with PCRE2 patterns whose named
 * groups say the layer index and, optionally, its kind and phase:
 *
 *   {"format": "octopipe.rules/1", "name": "m", "seq_len": 4096,
 *    "rules": [{"pattern": "^decoder\\.layers\\.(?<layer>\\d+)\\.(?<kind>mixer|mlp)"},
 *              {"pattern": "^lm_head", "layer": 52, "kind": "head"}]}
 *
 * The first rule that matches wins. Phases: F (forward), B (input grad), W (weight
 * grad), BW (full backward, split by w_fraction). Records that match no rule are
 * counted and kept for --verbose.
 */
#ifndef OCTO_PROFILE_H
#define OCTO_PROFILE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "model.h"
#include "strbuf.h"

#define RULES_FORMAT "octopipe.rules/1"

struct profile_rule;

struct profile_rules {
	char *name;
	long seq_len, micro_batch;
	double w_fraction;          /* share of a BW record that is weight grad (default 0.5) */
	int n;
	struct profile_rule *rules;
};

struct profile_stats {
	long records, matched, unmatched;
	long nested;                   /* trace events inside a counted one of the same layer and
	                                * phase on the same thread: matched, not added again */
	struct strbuf unmatched_names; /* one per line, in input order (a trace: per thread, by start) */
};

/* Reads a rules document (path names it in messages); profile_rules_load reads the file. */
int profile_rules_from_json(struct profile_rules *r, const cJSON *root, const char *path, struct err *e);
int profile_rules_load(struct profile_rules *r, const char *path, struct err *e);
void profile_rules_release(struct profile_rules *r);

/* Aggregates the records of text (from file, for messages) into m; times are divided by
 * iters (records summed over several iterations). st is filled (release its strbuf). */
int profile_import(const struct profile_rules *r, const char *text, size_t len, const char *file,
                   int iters, struct model *m, struct profile_stats *st, struct err *e);

#endif
