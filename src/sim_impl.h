/*
 * sim_impl — what the simulator's own files share (sim.c the event engine,
 * sim_deadlock.c the diagnosis of a stuck run, sim_metrics.c the results and the
 * data-parallel sync): the run's context and the op encoding. Not for other modules.
 *
 * An op is (stage, microbatch, slot) packed as ((stage * M) + mb) * K + slot with
 * slot 0 = F, 1 = B or I, 2 = W; K is 3 with a split backward and 2 without.
 */
#ifndef OCTO_SIM_IMPL_H
#define OCTO_SIM_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "metrics.h"
#include "sim.h"

/* realloc to n elements (at least one); -1 leaves *p as it was */
static inline int sim_grow(void **p, size_t n, size_t size)
{
	void *q = realloc(*p, (n ? n : 1) * size);

	if (!q)
		return -1;
	*p = q;
	return 0;
}
#define GROW(ptr, n) sim_grow((void **)&(ptr), (size_t)(n), sizeof(*(ptr)))

/* bytes as a count, rounded, saturating at UINT64_MAX */
static inline uint64_t mem_bytes(double x)
{
	return x + 0.5 >= 0x1p64 ? UINT64_MAX : x > 0 ? (uint64_t)(x + 0.5) : 0;
}

/* ---- the run's context and the op encoding ---------------------------------------- */

struct ctx {
	struct sim *s;
	const struct plan *p;
	const struct sim_opts *o;
	int K, M, S;
	bool record;
	bool blocking;          /* transfers hold both devices (see try_rendezvous) */
	bool oom;               /* an allocation failed while recording */
	long done;
	long nops;
};

static inline int op_stage(const struct ctx *c, long op) { return (int)(op / c->K / c->M); }
static inline int op_mb(const struct ctx *c, long op) { return (int)(op / c->K % c->M); }
static inline int op_k(const struct ctx *c, long op) { return (int)(op % c->K); }

/* The op kind of slot k (0 F, 1 the backward or I, 2 W). */
static inline int slot_kind(const struct ctx *c, int k)
{
	return k == 0 ? OP_F : k == 2 ? OP_W : c->p->split_backward ? OP_I : OP_B;
}

static inline int op_kind(const struct ctx *c, long op)
{
	return slot_kind(c, op_k(c, op));
}

static inline int op_dev(const struct ctx *c, long op)
{
	return c->p->stages[op_stage(c, op)].device;
}

/* How long slot k of stage st runs (where the caller has them decoded: no division). */
static inline double op_dur_at(const struct ctx *c, int st, int k)
{
	double d = k == 0 ? c->s->stage_f[st] : k == 2 ? c->s->stage_w[st] : c->s->stage_b[st];

	return c->o->unit_costs ? d : d / c->p->cluster.device_speed[c->p->stages[st].device];
}

static inline double op_dur(const struct ctx *c, long op)
{
	return op_dur_at(c, op_stage(c, op), op_k(c, op));
}

static inline long op_id(const struct ctx *c, int stage, int mb, int k)
{
	return op_slot_index(stage, c->M, mb, c->K, k);
}

static inline long action_op(const struct ctx *c, const struct action *a)
{
	return op_id(c, a->stage, a->mb, a->kind == OP_F ? 0 : a->kind == OP_W ? 2 : 1);
}

/* The policy's ready queue of (stage, slot): a binary min-heap of microbatches. */
static inline void rq_push_at(struct ctx *c, int st, int mb, int k)
{
	struct sim *s = c->s;
	int q = st * 3 + k;
	int32_t *h = &s->rq[(long)q * c->M];
	int i = s->rq_len[q]++;

	while (i > 0 && h[(i - 1) / 2] > mb) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = mb;
}

static inline void rq_push(struct ctx *c, long op)
{
	rq_push_at(c, op_stage(c, op), op_mb(c, op), op_k(c, op));
}

/* sim_setup.c: everything a run needs before its first event */
void sim_setup(struct ctx *c);
/* sim_deadlock.c: names the cycle or the missing op of a run that stopped early */
int sim_diagnose_deadlock(struct ctx *c, struct metrics *m, struct err *e);
/* sim_metrics.c: iteration time (data-parallel sync included), bubbles and memory; also
 * sim_timeline() and sim_apply_order() of sim.h */
int sim_compute_metrics(struct ctx *c, struct metrics *m);

#endif
