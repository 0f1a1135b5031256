/*
 * sim — the graph-based simulator (docs/METHOD.md §1): runs a plan's ops on its devices and
 * predicts when each starts and ends, what the transfers between devices cost, how memory
 * rises and falls, and where the bubbles are.
 *
 * The workload graph is implicit: op (stage s, microbatch m, kind k) has at most two data
 * predecessors (F(s-1,m) for F; F(s,m) and I/B(s+1,m) for I/B; I(s,m) for W) plus the op
 * before it on its device, so no edge lists are built. Simulation is event-driven over
 * flat arrays: an op's end is known the moment it starts, a binary heap orders the
 * completions, and each completion releases its successors, paying a transfer (latency +
 * bytes / bandwidth, FIFO per directed link) when they sit on another device.
 *
 * Two modes share that engine. Order-driven: each device runs its plan list in order.
 * Policy-driven: each time a device is free it picks among its ready ops by OctoPipe's
 * adaptive policy, and the start order becomes the plan's schedule.
 *
 * A struct sim is a reusable workspace: sim_run() grows its arrays only when a plan is
 * larger than any before, so the tuner can simulate thousands of candidates without
 * allocating.
 */
#ifndef OCTO_SIM_H
#define OCTO_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "metrics.h"
#include "plan.h"
#include "timeline.h"

struct sim_policy {
	bool alternate;        /* after an F prefer a backward and vice versa (1F1B-like) */
	bool defer_arrivals;   /* prefer an op whose inputs have been waiting over one whose
	                        * input arrived from another device this instant */
	int max_inflight;      /* per stage: microbatches past F and before their backward
	                        * (0 = no cap); the oldest microbatch is always admitted */
	bool mem_admission;    /* also hold an F back when it would exceed device memory */
	int reserve;           /* with mem_admission: an F also leaves room for this many
	                        * microbatches of each later stage of its device that holds
	                        * fewer, so an early stage (which could take every microbatch
	                        * at once) cannot fill a device whose later stages must take
	                        * them back to free anything (a V's or a loop's early chunk) */
	const int *stage_cap;  /* per-stage caps overriding max_inflight (NULL: none) */
	bool backward_first;   /* without alternation: a ready backward always goes before an F */
	bool cap_until_w;      /* a microbatch stays in flight until its W (zero-bubble memory) */
	const int *w_cap;      /* per stage: deferred Ws allowed before W becomes urgent (NULL: no limit) */
	/* > 0: latest-start priority instead of alternation and stage order, for any
	 * placement. Op (s, m, k) is due at m x cycle - tail, where tail is the longest chain
	 * of work from the op to the end of its microbatch's backward and cycle is lst_cycle x
	 * the largest work of one device per microbatch; a device runs its most overdue ready
	 * op first (W keeps its class: it fills, unless w_cap makes it urgent). */
	double lst_cycle;
};

struct sim_opts {
	bool policy_driven;        /* ignore the plan's order and schedule by the policy */
	struct sim_policy policy;
	bool record;               /* keep per-op times, transfers and memory for a timeline */
	int comm;                  /* SIM_COMM_PLAN: as the plan says; or force overlap / blocking
	                            * (order-driven only: the policy always overlaps) */
	bool unit_costs;           /* every stage's F = I = W = 1 (B = 2) and transfers are free: a
	                            * baseline's order derived this way is the same whatever the
	                            * plan's costs and links, as its paper drew it */
	bool no_bounds;            /* leave the metrics' lower bounds and efficiencies 0 (a search
	                            * that only compares iteration times skips their lookups) */
};

enum { SIM_COMM_PLAN = 0, SIM_COMM_OVERLAP, SIM_COMM_BLOCKING };

/* The defaults: order-driven, adaptive policy settings. (Memory per parameter and ZeRO
 * come from the plan's parallel layout.) */
void sim_opts_default(struct sim_opts *o);

struct sim_op_time {
	double start_ms;
	double end_ms;
};

struct sim_xfer {
	int src, dst;
	int32_t stage, mb;
	uint8_t kind;              /* enum tl_xfer_kind */
	double start_ms, end_ms;
	uint64_t bytes;
};

/* Opaque workspace; zero-initialise (struct sim s = {0}) and sim_release() when done. */
struct sim {
	/* per stage (after sim_run) */
	int nstages_cap;
	double *stage_f, *stage_b, *stage_w;      /* per-stage op durations, speed 1.0 */
	uint64_t *stage_act, *stage_act_w, *stage_out; /* act: kept from F to the backward (its
	                            * recompute mode's), act_w: from I to W */
	double *stage_redo;        /* bytes a recomputing backward holds on top while it runs */
	/* per op */
	long nops_cap;
	double *ready;             /* latest input arrival */
	double *start, *end;
	int8_t *npred;             /* data predecessors not yet arrived */
	int8_t *state;             /* 0 waiting, 1 started, 2 done */
	struct sim_event { double t; int32_t id; } *heap; /* completions and arrivals by time */
	long nheap;
	/* per device */
	int ndev_cap;
	int *next;                 /* order-driven: position in the device list */
	double *dev_free;
	int *dev_last_kind;        /* for alternation */
	double *dev_mem, *dev_peak, *dev_static;
	double *dev_wgo;           /* per device: weights, grads, optimizer bytes (3 each) */
	struct sim_sync_piece { double ready, ms; } *sync_piece; /* DP sync: per layer of a device */
	long sync_cap;
	int *dev_inflight;         /* policy: per stage, in the stage arrays below */
	int32_t *rq;               /* policy: ready microbatches, a min-heap per (stage, op slot) */
	int *rq_len;
	int *dev_stage_start, *dev_stages; /* the stages of each device (CSR) */
	double *link_free;         /* per directed link in use: when its FIFO is free */
	int *link_of;              /* per stage boundary and direction: its link (see number_links) */
	double *pend_send;         /* blocking: per op, when its cross-device input was ready to
	                            * leave (-1: none waiting for the receiver) */
	int *dev_blocked;          /* blocking: sends of the device not yet received */
	long *dev_block_op;        /* blocking: the op one of them waits for (deadlock naming) */
	double *dev_last_end;      /* end of the device's last op (when it posts its next receive) */
	int *link_hash;            /* (device, device) -> first slot over it, open addressing */
	long link_hash_cap;
	int *work, nwork;          /* devices to look at next */
	char *marked;              /* device is in work */
	int *stage_inflight;
	int *stage_wpend;          /* policy: I done, W not started */
	int *stage_hold;           /* policy: microbatches whose activations the stage still holds */
	double *stage_tail;        /* policy, lst_cycle > 0: per (stage, slot) the chain of work
	                            * from the op to its microbatch's end, minus m x cycle's base */
	double lst_cycle_ms;       /* lst_cycle x the largest per-microbatch work of a device */
	/* outputs */
	struct action *order;      /* policy-driven: the start order per device (CSR as the plan) */
	int *order_start;
	long norder_cap;
	long nxfers, xfers_cap;
	struct sim_xfer *xfers;
	long nmem, mem_cap;
	struct { int dev; double t; double bytes; } *mem;
};

/* Simulates plan p. Fills m (metrics_release() it) and, with opts->record, keeps op times
 * in s for sim_timeline(). Returns 0, or -1 with e set: ERR_INFEASIBLE when the order
 * deadlocks (m->cycle names the ops; e says so in words), ERR_RUNTIME when out of host memory.
 * Devices over capacity are listed in m->oom; that is not an error for sim_run(). */
int sim_run(struct sim *s, const struct plan *p, const struct sim_opts *opts,
            struct metrics *m, struct err *e);

/* After a recorded sim_run(): the timeline (caller timeline_release()s). */
int sim_timeline(const struct sim *s, const struct plan *p, const struct metrics *m,
                 struct timeline *t, struct err *e);

/* After a policy-driven sim_run(): replaces p's order with the simulated start order. */
int sim_apply_order(const struct sim *s, struct plan *p, struct err *e);

/* The bound no plan of this model on this cluster with this many microbatches can beat:
 * the largest of total work / total device speed, one microbatch's F+B chain on the
 * fastest device, and the heaviest layer's work for every microbatch on the fastest
 * device (a layer is never split across devices). */
double sim_lower_bound(const struct model *mdl, const struct cluster *c, int microbatches,
                       bool split_backward);

/* A tighter bound, also over every plan (partition, placement and order free): the old
 * one plus pipeline fill and drain per device, the stage around the first, last and
 * heaviest layers, layer granularity (the best packing of the layers onto the devices)
 * and the per-op overhead; the argument is at its definition in sim.c. Always >=
 * sim_lower_bound(). Allocates nothing and is safe from any thread: the packing, a few
 * milliseconds for a new model, is remembered per thread for the last few inputs. */
double sim_lower_bound_tight(const struct model *mdl, const struct cluster *c, int microbatches,
                             bool split_backward);

/* The memory-aware bound (lowerbound_mem.c): the tight bound, or more where activations
 * must be held longer than the devices' memory allows: no plan that fits in memory (every
 * device's peak within its usable capacity), whatever its partition, placement, order and
 * per-stage recompute, is faster. A plan over capacity may be; so is every plan where no
 * plan fits at all (then it is the tight bound). Allocates a few arrays per call (remembered
 * per thread for the last few inputs): NaN when out of host memory. */
double sim_lower_bound_memory(const struct model *mdl, const struct cluster *c, int microbatches,
                              bool split_backward);

void sim_release(struct sim *s);

/* Index of an op in the simulator's arrays. */
static inline long sim_op_index(const struct plan *p, int stage, int mb, int kind)
{
	return op_slot_index(stage, p->microbatches, mb, plan_ops_per_mb(p), op_kind_slot(kind));
}

#endif
