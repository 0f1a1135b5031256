/*
 * sim — event-driven simulation of a plan (see sim.h for the model).
 *
 * The one idea: every op's duration is known before it starts, so the simulator only has
 * to decide *when* each op starts. Completions come off a binary heap in time order; a
 * completion makes successors' inputs arrive (at once on the same device, after a FIFO
 * transfer otherwise), and a device starts an op as soon as it is free and the op's inputs
 * have arrived. In order-driven mode the device has no choice (its next listed op), so it
 * commits as soon as the inputs' arrival times are known; in policy-driven mode it waits
 * for the moment an op is truly ready and then picks the best ready op.
 */
#include "config.h"
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_impl.h"
#include "strbuf.h"


void sim_opts_default(struct sim_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->policy.alternate = true;
	o->policy.defer_arrivals = false;
	o->policy.max_inflight = 0;
	o->policy.mem_admission = false;
}


void sim_release(struct sim *s)
{
	free(s->stage_f); free(s->stage_b); free(s->stage_w);
	free(s->stage_act); free(s->stage_act_w); free(s->stage_out);
	free(s->ready); free(s->start); free(s->end); free(s->npred); free(s->state); free(s->heap);
	free(s->next); free(s->dev_free); free(s->dev_last_kind); free(s->dev_mem); free(s->dev_peak);
	free(s->dev_static); free(s->dev_wgo); free(s->stage_redo); free(s->sync_piece); free(s->dev_inflight); free(s->rq); free(s->rq_len);
	free(s->dev_stage_start); free(s->dev_stages); free(s->link_free); free(s->link_of); free(s->link_hash);
	free(s->pend_send); free(s->dev_blocked); free(s->dev_block_op); free(s->dev_last_end); free(s->stage_inflight); free(s->stage_wpend); free(s->stage_hold); free(s->stage_tail);
	free(s->order); free(s->order_start); free(s->xfers); free(s->mem); free(s->work); free(s->marked);
	memset(s, 0, sizeof(*s));
}

/* Grows the workspace to fit p; existing capacity is reused. */
static int ensure(struct sim *s, const struct plan *p)
{
	/* three slots per microbatch even with a fused backward: the policy's ready queues
	 * are indexed by (stage, slot) and need them */
	long nops = (long)p->nstages * p->microbatches * 3;
	int nd = p->ndevices;

	if (p->nstages > s->nstages_cap) {
		if (GROW(s->stage_f, p->nstages) || GROW(s->stage_b, p->nstages) || GROW(s->stage_w, p->nstages) ||
		    GROW(s->stage_act, p->nstages) || GROW(s->stage_act_w, p->nstages) ||
		    GROW(s->stage_out, p->nstages) || GROW(s->stage_inflight, p->nstages) ||
		    GROW(s->stage_wpend, p->nstages) || GROW(s->rq_len, 3L * p->nstages) ||
		    GROW(s->stage_hold, p->nstages) || GROW(s->stage_redo, p->nstages) ||
		    GROW(s->stage_tail, 3L * p->nstages) ||
		    GROW(s->dev_stages, p->nstages) || GROW(s->link_of, 2L * p->nstages) ||
		    GROW(s->link_free, 2L * p->nstages))
			return -1;
		/* the link table: a power of two at least twice the slots, so probes stay short */
		for (s->link_hash_cap = 16; s->link_hash_cap < 4L * p->nstages; s->link_hash_cap *= 2)
			;
		if (GROW(s->link_hash, s->link_hash_cap))
			return -1;
		s->nstages_cap = p->nstages;
	}
	if (nops > s->nops_cap) {
		if (GROW(s->ready, nops) || GROW(s->start, nops) || GROW(s->end, nops) || GROW(s->npred, nops) ||
		    GROW(s->state, nops) || GROW(s->heap, 2 * nops) || GROW(s->rq, nops) || GROW(s->order, nops) ||
		    GROW(s->pend_send, nops))
			return -1;
		s->nops_cap = nops;
	}
	if (nd > s->ndev_cap) {
		if (GROW(s->next, nd) || GROW(s->dev_free, nd) || GROW(s->dev_last_kind, nd) || GROW(s->dev_mem, nd) ||
		    GROW(s->dev_peak, nd) || GROW(s->dev_static, nd) || GROW(s->dev_wgo, 3L * nd) ||
		    GROW(s->dev_inflight, nd) ||
		    GROW(s->dev_stage_start, nd + 1) || GROW(s->order_start, nd + 1) ||
		    GROW(s->work, nd) || GROW(s->marked, nd) || GROW(s->dev_blocked, nd) || GROW(s->dev_block_op, nd) ||
		    GROW(s->dev_last_end, nd))
			return -1;
		s->ndev_cap = nd;
	}
	return 0;
}

/* ---- the event heap: (time, id), ties by id for determinism -------------------- *
 * id < nops: op id completes; id >= nops: op id - nops has its last input arriving.  */

static inline bool ev_less(const struct sim_event *a, const struct sim_event *b)
{
	return a->t < b->t || (a->t == b->t && a->id < b->id);
}

static void heap_push(struct sim *s, double t, int32_t id)
{
	struct sim_event ev = { t, id };
	long i = s->nheap++;

	while (i > 0) {
		long parent = (i - 1) / 2;

		if (!ev_less(&ev, &s->heap[parent]))
			break;
		s->heap[i] = s->heap[parent];
		i = parent;
	}
	s->heap[i] = ev;
}

static struct sim_event heap_pop(struct sim *s)
{
	struct sim_event top = s->heap[0], last = s->heap[--s->nheap];
	long i = 0, n = s->nheap;

	for (;;) {
		long l = 2 * i + 1, r = l + 1, m = i;
		const struct sim_event *mv = &last;

		if (l < n && ev_less(&s->heap[l], mv)) {
			m = l;
			mv = &s->heap[l];
		}
		if (r < n && ev_less(&s->heap[r], mv))
			m = r;
		if (m == i)
			break;
		s->heap[i] = s->heap[m];
		i = m;
	}
	if (n)
		s->heap[i] = last;
	return top;
}

/* ---- transfers -------------------------------------------------------------------- */

/* Sends bytes from device a to b at time t over the FIFO link slot; returns the arrival time. */
static double transfer(struct ctx *c, int a, int b, int slot, uint64_t bytes, double t, int stage, int mb, int kind)
{
	struct sim *s = c->s;
	const struct link *l = cluster_link(&c->p->cluster, a, b);
	double *link = &s->link_free[s->link_of[slot]];

	if (c->o->unit_costs)
		return t;
	double start = t > *link ? t : *link;
	double wire = link_wire_ms(l, bytes);
	double arrive = start + link_latency_ms(l) + wire;

	*link = start + wire;
	if (c->record) {
		if (s->nxfers >= s->xfers_cap) {
			long cap = s->xfers_cap ? s->xfers_cap * 2 : 1024;

			if (GROW(s->xfers, cap)) {
				c->oom = true;
				return arrive;
			}
			s->xfers_cap = cap;
		}
		s->xfers[s->nxfers++] = (struct sim_xfer){ a, b, stage, mb, (uint8_t)kind, start, arrive, bytes };
	}
	return arrive;
}


/* ---- the policy ------------------------------------------------------------------- */

/* A ready op the policy weighs, its stage, microbatch and slot decoded once (op_stage and
 * friends divide; the policy compares each candidate several times). */
struct cand {
	long op;
	int st, mb, k;
};

/* Class of an op for the adaptive policy: lower is more urgent. */
static int policy_class(const struct ctx *c, const struct cand *x, int last_kind)
{
	int k = x->k;

	if (k == 2) {
		const int *wc = c->o->policy.w_cap;

		/* W fills bubbles, unless too many have been put off already */
		return wc && c->s->stage_wpend[x->st] >= wc[x->st] ? -1 : 3;
	}
	if (c->o->policy.lst_cycle > 0 || !c->o->policy.alternate)
		return c->o->policy.backward_first && c->o->policy.lst_cycle <= 0 ? (k == 1 ? 0 : 1) : 0;
	if (last_kind == OP_F)
		return k == 1 ? 0 : 1;          /* after an F, a backward */
	return k == 0 ? 0 : 1;              /* after a backward (or at start), an F */
}

/* True when a should run before b on device d at time t. */
static bool policy_better(const struct ctx *c, const struct cand *a, const struct cand *b, int last_kind, double t)
{
	int ca = policy_class(c, a, last_kind), cb = policy_class(c, b, last_kind);
	int ma = a->mb, mb = b->mb, sa = a->st, sb = b->st;

	if (ca != cb)
		return ca < cb;
	if (c->o->policy.defer_arrivals) {
		bool wa = c->s->ready[a->op] < t, wb = c->s->ready[b->op] < t;

		if (wa != wb)
			return wa;
	}
	if (c->o->policy.lst_cycle > 0) {
		/* latest start: the most overdue first, then the older microbatch, the deeper stage */
		double da = ma * c->s->lst_cycle_ms - c->s->stage_tail[3 * sa + a->k];
		double db = mb * c->s->lst_cycle_ms - c->s->stage_tail[3 * sb + b->k];

		if (da != db)
			return da < db;
		if (ma != mb)
			return ma < mb;
		if (sa != sb)
			return sa > sb;
		return a->k > b->k;
	}
	if (a->k != 0) {
		/* backward: deepest stage first, then oldest microbatch */
		if (sa != sb)
			return sa > sb;
		return ma < mb;
	}
	/* forward: oldest microbatch first, then the deeper stage */
	if (ma != mb)
		return ma < mb;
	return sa > sb;
}

/* Whether slot k of stage st may start now (memory and in-flight caps hold F back). */
static bool admitted(const struct ctx *c, int st, int k)
{
	const struct sim_policy *pol = &c->o->policy;
	int d, cap;

	if (k != 0 || c->s->stage_hold[st] == 0)
		return true; /* a stage holding nothing is always admitted: no deadlock */
	cap = pol->stage_cap ? pol->stage_cap[st] : pol->max_inflight;
	if (cap > 0 && c->s->stage_inflight[st] >= cap)
		return false;
	if (pol->mem_admission) {
		double need;

		d = c->p->stages[st].device;
		need = c->s->dev_mem[d] + (double)c->s->stage_act[st];
		for (int i = c->s->dev_stage_start[d]; pol->reserve > 0 && i < c->s->dev_stage_start[d + 1]; i++) {
			int later = c->s->dev_stages[i];

			if (later > st && c->s->stage_hold[later] < pol->reserve)
				need += (double)c->s->stage_act[later] * (pol->reserve - c->s->stage_hold[later]);
		}
		if (need > cluster_usable_bytes(&c->p->cluster))
			return false;
	}
	return true;
}

/* ---- starting ops ----------------------------------------------------------------- */

/* Starts op (slot k of stage st) at t (the caller decides when its completion is
 * processed). */
static void start_op_at(struct ctx *c, long op, int st, int k, double t)
{
	struct sim *s = c->s;
	int d = c->p->stages[st].device;

	s->start[op] = t;
	s->end[op] = t + op_dur_at(c, st, k);
	s->state[op] = 1;
	s->dev_free[d] = s->end[op];
	s->dev_last_kind[d] = slot_kind(c, k);
	if (k == 0) {
		s->stage_inflight[st]++;
		s->stage_hold[st]++;
		s->dev_mem[d] += (double)s->stage_act[st];
	} else if (k == (c->o->policy.cap_until_w && c->p->split_backward ? 2 : 1)) {
		s->stage_inflight[st]--;
	}
	if (c->p->split_backward)
		s->stage_wpend[st] += k == 1 ? 1 : k == 2 ? -1 : 0;
}

static void start_op(struct ctx *c, long op, double t)
{
	start_op_at(c, op, op_stage(c, op), op_k(c, op), t);
}

static void finish_at(struct ctx *c, long op, int st, int mb, int k, double t);
static void try_rendezvous(struct ctx *c, long op);

static inline void finish(struct ctx *c, long op, double t)
{
	finish_at(c, op, op_stage(c, op), op_mb(c, op), op_k(c, op), t);
}

/* Devices with something new to look at: an op became ready, one finished. */
static inline void mark(struct ctx *c, int d)
{
	struct sim *s = c->s;

	if (!s->marked[d]) {
		s->marked[d] = 1;
		s->work[s->nwork++] = d;
	}
}

/* Order-driven: run device d's listed ops while their inputs are known. There is no
 * choice to make, so each op is started and completed at once: its end is fixed by its
 * start, and its transfers leave in d's list order, which is the FIFO order of every
 * link out of d. */
static void dispatch_order(struct ctx *c, int d)
{
	struct sim *s = c->s;
	const struct plan *p = c->p;
	int end = p->order_start[d + 1];

	while (s->next[d] < end) {
		const struct action *a = &p->order[s->next[d]];
		long op = action_op(c, a), op2;
		double t;

		if (c->blocking) {
			try_rendezvous(c, op);
			if (a->pair && s->next[d] + 1 < end)
				try_rendezvous(c, action_op(c, a + 1));
			if (s->dev_blocked[d] > 0)
				return;  /* its own send is not received yet */
		}
		if (s->npred[op] > 0)
			return;
		t = s->dev_free[d] > s->ready[op] ? s->dev_free[d] : s->ready[op];
		if (!a->pair || s->next[d] + 1 >= end) {
			int k = a->kind == OP_F ? 0 : a->kind == OP_W ? 2 : 1;

			/* no choice to make: start and complete it now */
			s->start[op] = t;
			s->end[op] = t + op_dur_at(c, a->stage, k);
			s->state[op] = 1;
			s->dev_free[d] = s->end[op];
			s->dev_last_end[d] = s->end[op];
			s->next[d]++;
			finish_at(c, op, a->stage, a->mb, k, s->end[op]);
			continue;
		}
		/* an overlapped pair starts once both halves have their inputs; the forward's
		 * kernels are spread over the whole pair (and the full backward's W when it
		 * follows at once), so its activation leaves when the pair is done, while the
		 * input gradient leaves as soon as I is */
		op2 = action_op(c, a + 1);
		if (s->npred[op2] > 0)
			return;
		if (s->ready[op2] > t)
			t = s->ready[op2];
		{
			double t2 = t + op_dur(c, op), done = t2 + op_dur(c, op2);

			if (s->next[d] + 2 < end && c->K == 3) {
				const struct action *w = a + 2, *b = a + 1;

				if (w->kind == OP_W && w->stage == b->stage && w->mb == b->mb)
					done += op_dur(c, action_op(c, w));
			}
			start_op(c, op, t);
			start_op(c, op2, t2);
			s->next[d] += 2;
			s->dev_last_end[d] = done > s->end[op2] ? done : s->end[op2];
			finish(c, op2, s->end[op2]);
			finish(c, op, done);
		}
	}
}

/* Ready queues: per stage and op slot (F, I/B, W) a min-heap of microbatches, so the
 * policy only compares the oldest ready op of each kind of each stage on the device. */

static void rq_pop(struct ctx *c, int q)
{
	struct sim *s = c->s;
	int32_t *h = &s->rq[(long)q * c->M], last = h[--s->rq_len[q]];
	int i = 0, n = s->rq_len[q];

	for (;;) {
		int l = 2 * i + 1, m = i;
		int32_t mv = last;

		if (l < n && h[l] < mv) {
			m = l;
			mv = h[l];
		}
		if (l + 1 < n && h[l + 1] < mv)
			m = l + 1;
		if (m == i)
			break;
		h[i] = h[m];
		i = m;
	}
	if (n)
		h[i] = last;
}

/* Policy-driven: if d is idle at t, start its best admitted ready op. */
static void dispatch_policy(struct ctx *c, int d, double t)
{
	struct sim *s = c->s;
	struct cand best = { -1, 0, 0, 0 };
	int bestq = -1;

	if (s->dev_free[d] > t)
		return;
	for (int i = s->dev_stage_start[d]; i < s->dev_stage_start[d + 1]; i++) {
		int st = s->dev_stages[i];

		for (int k = 0; k < c->K; k++) {
			int q = st * 3 + k;
			struct cand x;

			if (!s->rq_len[q] || !admitted(c, st, k))
				continue;
			x.st = st;
			x.k = k;
			x.mb = s->rq[(long)q * c->M];
			x.op = op_id(c, st, x.mb, k);
			if (best.op < 0 || policy_better(c, &x, &best, s->dev_last_kind[d], t)) {
				best = x;
				bestq = q;
			}
		}
	}
	if (best.op < 0)
		return;
	rq_pop(c, bestq);
	s->order[s->order_start[d] + s->next[d]++] = (struct action){
		best.st, best.mb, (uint8_t)slot_kind(c, best.k), 0 };
	start_op_at(c, best.op, best.st, best.k, t);
	heap_push(s, s->end[best.op], (int32_t)best.op);
}

/* An input of op (slot k of stage st, microbatch mb), sent at time now, arrives at time at. */
static void arrive_at(struct ctx *c, int st, int mb, int k, double at, double now)
{
	struct sim *s = c->s;
	long op = op_id(c, st, mb, k);

	if (at > s->ready[op])
		s->ready[op] = at;
	if (--s->npred[op] > 0)
		return;
	if (c->o->policy_driven) {
		if (s->ready[op] > now) { /* queue it when the data is there */
			heap_push(s, s->ready[op], (int32_t)(c->nops + op));
		} else {
			rq_push_at(c, st, mb, k);
			mark(c, c->p->stages[st].device);
		}
	} else {
		mark(c, c->p->stages[st].device);
	}
}

/* Blocking communication (Megatron-LM's 1F1B): the producer's device holds until the
 * transfer is done, and the transfer starts once the receiving device has reached the op
 * that consumes it (it posts its receive when its previous op ends, even while its own
 * send is still pending, as batched send/receive pairs do). The send is parked on the
 * consumer until then. */
static void post_blocking(struct ctx *c, long consumer, int from, double t)
{
	struct sim *s = c->s;

	s->pend_send[consumer] = t;
	s->dev_blocked[from]++;
	s->dev_block_op[from] = consumer;
	mark(c, op_dev(c, consumer));
}

/* op is next on its device d2: a send parked on it starts now. */
static void try_rendezvous(struct ctx *c, long op)
{
	struct sim *s = c->s;
	const struct plan *p = c->p;
	int st = op_stage(c, op), mb = op_mb(c, op), k = op_k(c, op), d2 = op_dev(c, op), from, slot;
	double t, at;

	if (s->pend_send[op] < 0)
		return;
	t = s->pend_send[op] > s->dev_last_end[d2] ? s->pend_send[op] : s->dev_last_end[d2];
	s->pend_send[op] = -1;
	if (k == 0) {
		from = p->stages[st - 1].device;
		slot = 2 * (st - 1);
		at = transfer(c, from, d2, slot, s->stage_out[st - 1], t, st - 1, mb, XFER_ACT);
	} else {
		from = p->stages[st + 1].device;
		slot = 2 * st + 1;
		at = transfer(c, from, d2, slot, s->stage_out[st], t, st + 1, mb, XFER_GRAD);
	}
	if (at > s->dev_free[from])
		s->dev_free[from] = at;
	if (--s->dev_blocked[from] == 0)
		s->dev_block_op[from] = -1;
	mark(c, from);
	arrive_at(c, st, mb, k, at, at);
}

/* op finished at t: free memory, release successors. */
static void finish_at(struct ctx *c, long op, int st, int mb, int k, double t)
{
	struct sim *s = c->s;
	const struct plan *p = c->p;
	int d = p->stages[st].device;

	s->state[op] = 2;
	c->done++;
	if (c->o->policy_driven)
		mark(c, d);
	if (k == 0) {
		/* F(s) -> I/B(s) on the same device; F(s) -> F(s+1) */
		arrive_at(c, st, mb, 1, t, t);
		if (st + 1 < c->S) {
			int d2 = p->stages[st + 1].device;

			if (d2 != d && c->blocking)
				post_blocking(c, op_id(c, st + 1, mb, 0), d, t);
			else
				arrive_at(c, st + 1, mb, 0,
				          d2 == d ? t : transfer(c, d, d2, 2 * st, s->stage_out[st], t, st, mb, XFER_ACT), t);
		}
	} else if (k == 1) {
		if (p->split_backward) {
			s->dev_mem[d] -= (double)s->stage_act[st] - (double)s->stage_act_w[st];
			arrive_at(c, st, mb, 2, t, t);
		} else {
			s->dev_mem[d] -= (double)s->stage_act[st];
			s->stage_hold[st]--;
		}
		if (st > 0) {
			int d2 = p->stages[st - 1].device;

			if (d2 != d && c->blocking)
				post_blocking(c, op_id(c, st - 1, mb, 1), d, t);
			else
				arrive_at(c, st - 1, mb, 1,
				          d2 == d ? t : transfer(c, d, d2, 2 * (st - 1) + 1, s->stage_out[st - 1], t, st, mb,
				                                 XFER_GRAD), t);
		}
	} else {
		s->dev_mem[d] -= (double)s->stage_act_w[st];
		s->stage_hold[st]--;
	}
}

/* ---- the run ---------------------------------------------------------------------- */

int sim_run(struct sim *s, const struct plan *p, const struct sim_opts *opts,
            struct metrics *m, struct err *e)
{
	struct ctx c = { .s = s, .p = p, .o = opts, .K = plan_ops_per_mb(p), .M = p->microbatches, .S = p->nstages,
	                 .record = opts->record, .oom = false, .done = 0,
	                 .nops = (long)p->nstages * p->microbatches * plan_ops_per_mb(p) };
	long nops = c.nops;

	/* the policy chooses among ready ops as they come: it always overlaps transfers */
	c.blocking = !opts->policy_driven && !opts->unit_costs &&
	             (opts->comm == SIM_COMM_BLOCKING || (opts->comm == SIM_COMM_PLAN && p->comm == PLAN_COMM_BLOCKING));

	memset(m, 0, sizeof(*m));
	if (ensure(s, p) < 0)
		return err_set(e, ERR_RUNTIME, "out of host memory simulating %ld ops", nops);
	sim_setup(&c);
	s->nwork = 0;
	for (int d = 0; d < p->ndevices; d++)
		mark(&c, d);
	if (opts->policy_driven) {
		double t = 0;

		for (;;) {
			/* the devices touched at time t choose, in device order */
			for (int i = 0; i < s->nwork; i++)
				s->marked[s->work[i]] = 0;
			for (int i = 0; i < s->nwork; i++)
				dispatch_policy(&c, s->work[i], t);
			s->nwork = 0;
			if (s->nheap == 0)
				break;
			/* apply every event at the next time before any device chooses */
			t = s->heap[0].t;
			while (s->nheap > 0 && s->heap[0].t == t) {
				struct sim_event ev = heap_pop(s);

				if (ev.id < nops) {
					finish(&c, ev.id, t);
				} else {
					rq_push(&c, ev.id - nops);
					mark(&c, op_dev(&c, ev.id - nops));
				}
			}
			/* keep the choice order deterministic: by device id */
			for (int i = 1; i < s->nwork; i++) {
				int x = s->work[i], j = i;

				while (j > 0 && s->work[j - 1] > x) {
					s->work[j] = s->work[j - 1];
					j--;
				}
				s->work[j] = x;
			}
		}
	} else {
		while (s->nwork > 0) {
			int d = s->work[--s->nwork];

			s->marked[d] = 0;
			dispatch_order(&c, d);
		}
	}
	if (c.oom)
		return err_set(e, ERR_RUNTIME, "out of host memory recording the timeline");
	if (c.done < nops) {
		if (opts->policy_driven)
			return err_set(e, ERR_INFEASIBLE, "the policy left %ld of %ld ops unscheduled", nops - c.done, nops);
		return sim_diagnose_deadlock(&c, m, e);
	}
	if (sim_compute_metrics(&c, m) < 0) {
		metrics_release(m);
		return err_set(e, ERR_RUNTIME, "out of host memory computing metrics");
	}
	return 0;
}
