/*
 * layout_search — the outer loop of the tuner over parallel layouts: which PP x TP x DP
 * factorisation of the cluster, which ZeRO stage and which recompute mode a model should
 * run with, before the three phases tune partition, placement and order for it.
 *
 * Every candidate the constraints allow (T divides a node and the model's heads, the
 * T x D blocks tile the nodes, P = GPUs / (T x D) pipeline devices no more than the
 * model's layers, E divides D, D divides the global batch) is judged by the fastest of
 * compare's baselines built on what one replica sees, at the same global batch (a floor
 * of the weights, gradients and optimizer states alone rules a candidate out before any
 * simulation; a target's accept() filters the baselines to those its runtime runs): more replicas mean fewer microbatches
 * each, so the pipeline's fill and drain weigh more, which is the trade-off a layout
 * makes against tensor parallelism's all-reduces and data parallelism's sync. For a model
 * with routed experts each divisor E of D is tried as the expert-parallel degree. Memory
 * first, and no more than needed: a candidate is sharded (ZeRO 1, 2, 3) only as far as it
 * takes to fit without recompute, and recomputes (selective, then full) only when no
 * sharding fits. Among the candidates that fit the smallest estimate of the tuned time wins - pure data or
 * tensor parallelism (one pipeline device) included: when pipelining does not pay, the
 * search says so; when none fits, the memory the closest candidate needs is reported.
 */
#ifndef OCTO_LAYOUT_SEARCH_H
#define OCTO_LAYOUT_SEARCH_H

#include <signal.h>
#include <stdbool.h>

#include "cluster.h"
#include "err.h"
#include "model.h"
#include "parallel.h"

/* Degrees to hold fixed (0 = search; zero and recompute: -1 = search), and the global
 * batch in microbatches, held fixed over the layouts as Megatron-LM users hold theirs: a
 * layout with D replicas runs global_mb / D microbatches on each (D must divide it). */
struct plan;
struct layout_constraints {
	int pp, tp, dp, ep, zero, recompute;
	int global_mb;
	/* When non-NULL and raised (a SIGINT handler), the search stops at the next baseline
	 * it would simulate and answers the best layout judged so far (interrupted set); the
	 * first layout that fits is always judged until one of its baselines fits. */
	const volatile sig_atomic_t *stop;
	bool fp32_grads;          /* every candidate's gradients in fp32 (parallel.fp32_grads) */
	/* clock_now_s() past which the search judges no more layouts once one fits (0: none);
	 * the layouts are judged most promising first (the smallest tight bound of their
	 * replica), so a search cut short has judged the likeliest ones. */
	double deadline_s;
	/* clock_now_s() past which the search stops even before a layout fits (0: none), and
	 * starts no simulation it estimates to end past it: ERR_BUDGET then, saying so. */
	double give_up_s;
	/* When non-NULL, a baseline for which accept(accept_arg, plan, e) is -1 does not judge
	 * its layout (the schedules a target runtime runs, target.h); e says why (the reason
	 * the search gives when no baseline of any layout ran). */
	int (*accept)(void *arg, const struct plan *p, struct err *e);
	void *accept_arg;
	unsigned schedules;       /* a bit (1u << enum sched_kind) per baseline schedule judged; 0: all */
	/* The micro-batch size in sequences (Megatron-LM's --micro-batch-size): 0 the layer
	 * table's own, > 0 held at that (re-priced), -1 searched (the table's own, 1, 2, 4, 8
	 * and 16, for a table that has an architecture). The global batch stays global_mb
	 * microbatches of the table's own size: a layout at size b with D replicas runs
	 * global_mb x (table's size) / (b x D) microbatches on each (which must divide). */
	long micro_batch;
	/* A layout that recomputes fully is judged by Megatron-LM's block method where it is
	 * faster: every stage recomputing only its first N layers, the fewest that fit
	 * (--recompute-method block; what tune --target megatron then searches). */
	bool block_recompute;
	/* zero holds only where there are data-parallel replicas; a layout without them runs
	 * ZeRO 0 (torchtitan: FSDP wraps the model only when dp_shard > 1; its accept then
	 * refuses a pipeline or TP of one replica, which it would train in fp32, and takes one
	 * GPU or DDP alone) */
	bool zero_where_dp;
};

#define LAYOUT_TOP 3          /* layouts the tuner tunes (the best estimates' first ones) */
#define LAYOUT_GAP_CLOSED 0.75 /* share of the baseline-to-bound gap tuning is expected to close */

/* One layout that fits, as its best baseline judged it. */
struct layout_pick {
	struct parallel par;
	enum recompute recompute;
	int microbatches;         /* per replica */
	double makespan_ms, tokens_per_s, peak_bytes;
	double bound_ms;          /* the replica's tight lower bound (its recompute folded in) */
	double estimate_ms;       /* what tuning is expected to reach: the ranking's key */
};

struct layout_choice {
	struct parallel par;
	enum recompute recompute;
	int microbatches;         /* per replica: global_mb / dp */
	double makespan_ms, tokens_per_s, peak_bytes;
	double bound_ms, estimate_ms;  /* as in layout_pick */
	int candidates;           /* layouts judged */
	int skipped;              /* layouts left unjudged when deadline_s passed */
	double min_peak_bytes;    /* the smallest peak per GPU over all of them (when none fits) */
	bool interrupted;         /* stopped early by k->stop: the best of the candidates judged */
	/* the layouts that fit with the smallest estimate of the tuned time, best first (top[0]
	 * is the choice above). The estimate: the best baseline's time less LAYOUT_GAP_CLOSED
	 * of its distance to the replica's tight bound (what the tuner closes on average), so
	 * a layout whose baselines bubble but whose bound is low ranks above one whose
	 * baselines are already at their bound; the tuner tunes each of them. */
	struct layout_pick top[LAYOUT_TOP];
	int ntop;
};

/* The micro-batch sizes a search tries (0: the table's own; into out, at most
 * LAYOUT_MB_SIZES; returns how many): the one k holds, or the table's own first and then
 * 1, 2, 4, 8, 16 sequences when the table can be priced at another (it has an architecture). */
#define LAYOUT_MB_SIZES 6
int layout_mb_candidates(const struct model *m, const struct layout_constraints *k, long *out);
/* The microbatches each of dp replicas runs when a global batch of seqs sequences is cut
 * into microbatches of size sequences; 0 when they do not split into whole ones or would be
 * more than OCTO_MAX_MICROBATCHES. The one rule of the search and of its explanations. */
int layout_replica_microbatches(long seqs, long size, int dp);

/* Returns 0 with the best layout in *out; ERR_INFEASIBLE when none fits (out->min_peak_bytes
 * says how close the best came), ERR_INPUT when the constraints allow no layout at all,
 * ERR_RUNTIME when k->stop was raised before any layout judged fitted. */
int layout_search(const struct model *m, const struct cluster *c, const struct layout_constraints *k,
                  struct layout_choice *out, struct err *e);

/* The fastest of compare's baselines at layout pick pk that fits, as the search judged it:
 * built on one replica (m's table at pk's layout, on c's GPUs) with every stage recomputing
 * as pk says, simulated. For a tuner whose own candidates do not fit at that layout: the
 * search's answer is then the plan. 0 with out and mt filled (release both); ERR_INFEASIBLE
 * when none fits, ERR_RUNTIME when out of host memory. */
struct plan;
struct metrics;
int layout_baseline(const struct model *m, const struct cluster *c, const struct layout_pick *pk, struct plan *out,
                    struct metrics *mt, struct err *e);

/* Recompute only where memory binds: each stage of p (a simulated plan that fits) tries a
 * lighter mode (full -> selective -> none), kept when the plan still fits, since
 * recompute only ever costs time. Stages are tried last to first (the later a stage, the
 * fewer microbatches it holds). Returns how many stages changed, -1 when out of host memory. */
struct plan;
int layout_relax_recompute(struct plan *p, struct err *e);
/* The same, trying no more stages once clock_now_s() passes deadline_s (0: none). */
int layout_relax_recompute_until(struct plan *p, double deadline_s, struct err *e);

/* The layer table as a uniformly recomputing stage sees it: the backward pays the redone
 * forward and the activations kept are the recompute mode's (for the tuner, which builds
 * plans without per-stage modes; under full recompute a layer keeps the larger of its
 * input and what W needs, an upper bound; a plan's own stages, and the layout search's
 * candidates, are priced by the simulator). */
void layout_recompute_model(struct model *m, enum recompute r);

#endif
