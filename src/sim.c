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

#include "strbuf.h"

#define GROW(ptr, n) grow((void **)&(ptr), (size_t)(n), sizeof(*(ptr)))

void sim_opts_default(struct sim_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->policy.alternate = true;
	o->policy.defer_arrivals = false;
	o->policy.max_inflight = 0;
	o->policy.mem_admission = false;
}

static int grow(void **p, size_t n, size_t size)
{
	void *q = realloc(*p, (n ? n : 1) * size);

	if (!q)
		return -1;
	*p = q;
	return 0;
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

/* ---- op encoding ------------------------------------------------------------------ */

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

static inline int op_kind(const struct ctx *c, long op)
{
	int k = op_k(c, op);

	return k == 0 ? OP_F : k == 2 ? OP_W : c->p->split_backward ? OP_I : OP_B;
}

static inline int op_dev(const struct ctx *c, long op)
{
	return c->p->stages[op_stage(c, op)].device;
}

static inline double op_dur(const struct ctx *c, long op)
{
	int st = op_stage(c, op), k = op_k(c, op);
	double d = k == 0 ? c->s->stage_f[st] : k == 2 ? c->s->stage_w[st] : c->s->stage_b[st];

	return c->o->unit_costs ? d : d / c->p->cluster.device_speed[c->p->stages[st].device];
}

static inline long op_id(const struct ctx *c, int stage, int mb, int k)
{
	return ((long)stage * c->M + mb) * c->K + k;
}

static inline long action_op(const struct ctx *c, const struct action *a)
{
	return op_id(c, a->stage, a->mb, a->kind == OP_F ? 0 : a->kind == OP_W ? 2 : 1);
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

/* Numbers the directed links the plan uses. Only adjacent stages talk, so a plan has at
 * most 2(S-1) of them: slot 2s is stage s's activations to s+1, slot 2s+1 the gradients
 * from s+1 back to s. Slots over the same directed pair of devices share one FIFO (found
 * through a small open-addressing table), so memory and time are linear in stages
 * instead of quadratic in devices (65 536 devices needed 32 GiB for a device x device
 * table). */
static void number_links(struct ctx *c)
{
	struct sim *s = c->s;
	const struct stage *g = c->p->stages;
	long mask = s->link_hash_cap - 1;
	int n = 0;

	memset(s->link_hash, 0, (size_t)s->link_hash_cap * sizeof(*s->link_hash));
	for (int slot = 0; slot < 2 * (c->S - 1); slot++) {
		int st = slot / 2, a = g[st + (slot & 1)].device, b = g[st + !(slot & 1)].device;
		uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
		long h = (long)((key * 0x9e3779b97f4a7c15ull) >> 20) & mask;

		/* entries hold slot + 1 of the first slot over the pair; 0 is empty */
		for (;; h = (h + 1) & mask) {
			int q = s->link_hash[h] - 1;

			if (q < 0) {
				s->link_hash[h] = slot + 1;
				s->link_of[slot] = n;
				s->link_free[n++] = 0;
				break;
			}
			if (g[q / 2 + (q & 1)].device == a && g[q / 2 + !(q & 1)].device == b) {
				s->link_of[slot] = s->link_of[q];
				break;
			}
		}
	}
}

/* ---- the policy ------------------------------------------------------------------- */

/* Class of an op for the adaptive policy: lower is more urgent. */
static int policy_class(const struct ctx *c, long op, int last_kind)
{
	int k = op_k(c, op);

	if (k == 2) {
		const int *wc = c->o->policy.w_cap;
		int st = op_stage(c, op);

		/* W fills bubbles, unless too many have been put off already */
		return wc && c->s->stage_wpend[st] >= wc[st] ? -1 : 3;
	}
	if (c->o->policy.lst_cycle > 0 || !c->o->policy.alternate)
		return c->o->policy.backward_first && c->o->policy.lst_cycle <= 0 ? (k == 1 ? 0 : 1) : 0;
	if (last_kind == OP_F)
		return k == 1 ? 0 : 1;          /* after an F, a backward */
	return k == 0 ? 0 : 1;              /* after a backward (or at start), an F */
}

/* True when a should run before b on device d at time t. */
static bool policy_better(const struct ctx *c, long a, long b, int last_kind, double t)
{
	int ca = policy_class(c, a, last_kind), cb = policy_class(c, b, last_kind);
	int ma, mb, sa, sb;

	if (ca != cb)
		return ca < cb;
	if (c->o->policy.defer_arrivals) {
		bool wa = c->s->ready[a] < t, wb = c->s->ready[b] < t;

		if (wa != wb)
			return wa;
	}
	ma = op_mb(c, a);
	mb = op_mb(c, b);
	sa = op_stage(c, a);
	sb = op_stage(c, b);
	if (c->o->policy.lst_cycle > 0) {
		/* latest start: the most overdue first, then the older microbatch, the deeper stage */
		double da = ma * c->s->lst_cycle_ms - c->s->stage_tail[3 * sa + op_k(c, a)];
		double db = mb * c->s->lst_cycle_ms - c->s->stage_tail[3 * sb + op_k(c, b)];

		if (da != db)
			return da < db;
		if (ma != mb)
			return ma < mb;
		if (sa != sb)
			return sa > sb;
		return op_k(c, a) > op_k(c, b);
	}
	if (op_k(c, a) != 0) {
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

static bool admitted(const struct ctx *c, long op)
{
	const struct sim_policy *pol = &c->o->policy;
	int st = op_stage(c, op), d, cap;

	if (op_k(c, op) != 0 || c->s->stage_hold[st] == 0)
		return true; /* a stage holding nothing is always admitted: no deadlock */
	cap = pol->stage_cap ? pol->stage_cap[st] : pol->max_inflight;
	if (cap > 0 && c->s->stage_inflight[st] >= cap)
		return false;
	if (pol->mem_admission) {
		d = c->p->stages[st].device;
		if (c->s->dev_mem[d] + (double)c->s->stage_act[st] > cluster_usable_bytes(&c->p->cluster))
			return false;
	}
	return true;
}

/* ---- starting ops ----------------------------------------------------------------- */

/* Starts op at t (the caller decides when its completion is processed). */
static void start_op(struct ctx *c, long op, double t)
{
	struct sim *s = c->s;
	int d = op_dev(c, op), st = op_stage(c, op), k = op_k(c, op);

	s->start[op] = t;
	s->end[op] = t + op_dur(c, op);
	s->state[op] = 1;
	s->dev_free[d] = s->end[op];
	s->dev_last_kind[d] = op_kind(c, op);
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
			s->end[op] = t + (k == 0 ? s->stage_f[a->stage] : k == 2 ? s->stage_w[a->stage]
			                                                        : s->stage_b[a->stage]) / p->cluster.device_speed[d];
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
static void rq_push(struct ctx *c, long op)
{
	struct sim *s = c->s;
	int q = op_stage(c, op) * 3 + op_k(c, op), mb = op_mb(c, op);
	int32_t *h = &s->rq[(long)q * c->M];
	int i = s->rq_len[q]++;

	while (i > 0 && h[(i - 1) / 2] > mb) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = mb;
}

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
	long best = -1;
	int bestq = -1;

	if (s->dev_free[d] > t)
		return;
	for (int i = s->dev_stage_start[d]; i < s->dev_stage_start[d + 1]; i++) {
		int st = s->dev_stages[i];

		for (int k = 0; k < c->K; k++) {
			int q = st * 3 + k;
			long op;

			if (!s->rq_len[q])
				continue;
			op = op_id(c, st, s->rq[(long)q * c->M], k);
			if (!admitted(c, op))
				continue;
			if (best < 0 || policy_better(c, op, best, s->dev_last_kind[d], t)) {
				best = op;
				bestq = q;
			}
		}
	}
	if (best < 0)
		return;
	rq_pop(c, bestq);
	s->order[s->order_start[d] + s->next[d]++] = (struct action){
		op_stage(c, best), op_mb(c, best), (uint8_t)op_kind(c, best), 0 };
	start_op(c, best, t);
	heap_push(s, s->end[best], (int32_t)best);
}

/* An input of op, sent at time now, arrives at time at. */
static void arrive(struct ctx *c, long op, double at, double now)
{
	struct sim *s = c->s;

	if (at > s->ready[op])
		s->ready[op] = at;
	if (--s->npred[op] > 0)
		return;
	if (c->o->policy_driven) {
		if (s->ready[op] > now) { /* queue it when the data is there */
			heap_push(s, s->ready[op], (int32_t)(c->nops + op));
		} else {
			rq_push(c, op);
			mark(c, op_dev(c, op));
		}
	} else {
		mark(c, op_dev(c, op));
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
	arrive(c, op, at, at);
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
		arrive(c, op_id(c, st, mb, 1), t, t);
		if (st + 1 < c->S) {
			int d2 = p->stages[st + 1].device;

			if (d2 != d && c->blocking)
				post_blocking(c, op_id(c, st + 1, mb, 0), d, t);
			else
				arrive(c, op_id(c, st + 1, mb, 0),
				       d2 == d ? t : transfer(c, d, d2, 2 * st, s->stage_out[st], t, st, mb, XFER_ACT), t);
		}
	} else if (k == 1) {
		if (p->split_backward) {
			s->dev_mem[d] -= (double)s->stage_act[st] - (double)s->stage_act_w[st];
			arrive(c, op_id(c, st, mb, 2), t, t);
		} else {
			s->dev_mem[d] -= (double)s->stage_act[st];
			s->stage_hold[st]--;
		}
		if (st > 0) {
			int d2 = p->stages[st - 1].device;

			if (d2 != d && c->blocking)
				post_blocking(c, op_id(c, st - 1, mb, 1), d, t);
			else
				arrive(c, op_id(c, st - 1, mb, 1),
				       d2 == d ? t : transfer(c, d, d2, 2 * (st - 1) + 1, s->stage_out[st - 1], t, st, mb,
				                              XFER_GRAD), t);
		}
	} else {
		s->dev_mem[d] -= (double)s->stage_act_w[st];
		s->stage_hold[st]--;
	}
}

/* ---- setup ------------------------------------------------------------------------ */

/* The latest-start policy's tails: per stage and slot the longest chain of work from the
 * op to the end of its microbatch (F runs on to the last stage and back down; I/B down to
 * stage 0 or its own W), and the cycle a microbatch is due after the one before it: the
 * busiest device's work per microbatch times the policy's factor. Transfers are left out:
 * the tails only rank ops against each other. dev_peak is scratch here (zeroed after). */
static void latest_start_tails(struct ctx *c)
{
	struct sim *s = c->s;
	const struct plan *p = c->p;
	double *tail = s->stage_tail, busiest = 0;

	for (int d = 0; d < p->ndevices; d++)
		s->dev_last_end[d] = 0;
	for (int st = 0; st < c->S; st++) {
		long op = op_id(c, st, 0, 0);
		double w = c->K > 2 ? op_dur(c, op + 2) : 0, b = op_dur(c, op + 1);

		tail[3 * st + 2] = w;
		tail[3 * st + 1] = b + fmax(w, st > 0 ? tail[3 * (st - 1) + 1] : 0);
		s->dev_last_end[p->stages[st].device] += op_dur(c, op) + b + w;
	}
	for (int st = c->S - 1; st >= 0; st--)
		tail[3 * st] = op_dur(c, op_id(c, st, 0, 0)) + fmax(tail[3 * st + 1], st + 1 < c->S ? tail[3 * (st + 1)] : 0);
	for (int d = 0; d < p->ndevices; d++) {
		busiest = fmax(busiest, s->dev_last_end[d]);
		s->dev_last_end[d] = 0;
	}
	s->lst_cycle_ms = c->o->policy.lst_cycle * busiest;
}

static void setup(struct ctx *c)
{
	struct sim *s = c->s;
	const struct plan *p = c->p;
	const struct model *m = &p->model;
	long nops = (long)c->S * c->M * c->K;
	struct parallel par = plan_parallel(p);

	for (int d = 0; d < p->ndevices; d++) {
		s->dev_blocked[d] = 0;
		s->dev_block_op[d] = -1;
		s->dev_last_end[d] = 0;
		s->dev_free[d] = 0;
		s->dev_last_kind[d] = OP_B;
		s->dev_static[d] = 0;
		s->dev_wgo[3 * d] = s->dev_wgo[3 * d + 1] = s->dev_wgo[3 * d + 2] = 0;
		s->dev_peak[d] = 0;
		s->next[d] = c->o->policy_driven ? 0 : p->order_start[d];
		s->marked[d] = 0;
	}
	for (int st = 0; st < c->S; st++) {
		const struct stage *g = &p->stages[st];
		double ms[3], params = 0, experts = 0, redo = 0;
		uint64_t act = 0, act_w = 0;
		struct mem_static ms_;

		for (int l = g->first; l <= g->last; l++) {
			const struct layer *y = &m->layers[l];
			uint64_t in = y->in_bytes ? y->in_bytes : l > 0 ? m->layers[l - 1].out_bytes : 0;

			/* none keeps every activation; selective drops the attention core's and redoes
			 * it in the backward; full keeps each layer's input and redoes the whole layer
			 * (one at a time: the largest layer's activations are the extra while it runs) */
			if (g->recompute == RECOMPUTE_FULL) {
				act += in;
				redo = fmax(redo, (double)y->act_bytes);
			} else if (g->recompute == RECOMPUTE_SELECTIVE) {
				act += y->act_bytes - y->core_act_bytes;
				redo = fmax(redo, (double)y->core_act_bytes);
			} else {
				act += y->act_bytes;
			}
			act_w += y->act_w_bytes;
			params += (double)y->param_bytes;
			/* a head tied to the embedding on the embedding's own device: one matrix */
			if (y->tied_bytes && p->stages[0].device == g->device)
				params -= (double)y->tied_bytes;
			experts += (double)y->expert_param_bytes;
		}
		if (c->o->unit_costs) {
			ms[0] = 1;
			ms[1] = p->split_backward ? 1 : 2;
			ms[2] = p->split_backward ? 1 : 0;
		} else {
			plan_stage_ms(p, st, ms);
		}
		s->stage_f[st] = ms[0];
		s->stage_b[st] = ms[1];
		s->stage_w[st] = ms[2];
		s->stage_act[st] = act;
		s->stage_act_w[st] = act_w;
		s->stage_out[st] = m->layers[g->last].out_bytes;
		s->stage_inflight[st] = 0;
		s->stage_wpend[st] = 0;
		s->stage_hold[st] = 0;
		s->stage_redo[st] = redo;
		parallel_static_mem(&par, params, experts, &ms_);
		s->dev_wgo[3 * g->device] += ms_.weights;
		s->dev_wgo[3 * g->device + 1] += ms_.grads;
		s->dev_wgo[3 * g->device + 2] += ms_.optimizer;
		s->dev_static[g->device] += ms_.weights + ms_.grads + ms_.optimizer;
		/* ZeRO-3 gathers a layer's whole weights while it runs and prefetches the next, as
		 * FSDP does: the two largest layers are a working buffer on top of the shards
		 * (dev_peak is scratch until below) */
		if (par.zero >= 3) {
			double big[2] = { 0, 0 };

			for (int l = g->first; l <= g->last; l++) {
				const struct layer *y = &m->layers[l];
				double full = (double)(y->param_bytes - y->expert_param_bytes) + (double)y->expert_param_bytes / par.ep;

				if (full > big[0]) {
					big[1] = big[0];
					big[0] = full;
				} else if (full > big[1]) {
					big[1] = full;
				}
			}
			s->dev_peak[g->device] = fmax(s->dev_peak[g->device], big[0] + big[1]);
		}
	}
	if (c->o->policy_driven && c->o->policy.lst_cycle > 0)
		latest_start_tails(c);
	for (int d = 0; d < p->ndevices; d++) {
		s->dev_wgo[3 * d] += s->dev_peak[d];
		s->dev_static[d] += s->dev_peak[d];
		s->dev_mem[d] = s->dev_static[d];
		s->dev_peak[d] = s->dev_static[d];
	}
	/* the stages of each device, and where its ops go in a policy-made order */
	/* (a counting sort: linear in devices + stages) */
	for (int d = 0; d <= p->ndevices; d++)
		s->dev_stage_start[d] = 0;
	for (int st = 0; st < c->S; st++)
		s->dev_stage_start[p->stages[st].device + 1]++;
	s->order_start[0] = 0;
	for (int d = 0; d < p->ndevices; d++) {
		s->order_start[d + 1] = s->order_start[d] + (long)s->dev_stage_start[d + 1] * c->M * c->K;
		s->dev_stage_start[d + 1] += s->dev_stage_start[d];
		s->work[d] = s->dev_stage_start[d]; /* cursor; work is empty until the run */
	}
	for (int st = 0; st < c->S; st++)
		s->dev_stages[s->work[p->stages[st].device]++] = st;
	for (int q = 0; q < 3 * c->S; q++)
		s->rq_len[q] = 0;
	number_links(c);
	memset(s->ready, 0, (size_t)nops * sizeof(*s->ready));
	if (c->blocking)
		for (long i = 0; i < nops; i++)
			s->pend_send[i] = -1;
	memset(s->state, 0, (size_t)nops * sizeof(*s->state));
	for (int st = 0; st < c->S; st++) {
		int8_t np[3] = { (int8_t)(st > 0), (int8_t)(1 + (st + 1 < c->S)), 1 };
		long op = (long)st * c->M * c->K;

		for (int mb = 0; mb < c->M; mb++)
			for (int k = 0; k < c->K; k++, op++) {
				s->npred[op] = np[k];
				if (np[k] == 0 && c->o->policy_driven)
					rq_push(c, op);
			}
	}
	s->nheap = 0;
	s->nxfers = 0;
	s->nmem = 0;
}

/* ---- deadlock diagnosis ----------------------------------------------------------- */

/* A data predecessor of op that has not finished, or -1. */
static long blocker_data(const struct ctx *c, long op)
{
	int st = op_stage(c, op), mb = op_mb(c, op), k = op_k(c, op);
	long cand[2];
	int n = 0;

	if (k == 0) {
		if (st > 0)
			cand[n++] = op_id(c, st - 1, mb, 0);
	} else if (k == 1) {
		cand[n++] = op_id(c, st, mb, 0);
		if (st + 1 < c->S)
			cand[n++] = op_id(c, st + 1, mb, 1);
	} else {
		cand[n++] = op_id(c, st, mb, 1);
	}
	for (int i = 0; i < n; i++)
		if (c->s->state[cand[i]] != 2)
			return cand[i];
	return -1;
}

/* The op an unstarted op waits on: the op before it on its device if it is not the
 * device's next op, else a data predecessor that has not finished. */
static long blocker(const struct ctx *c, long op, const long *pos)
{
	const struct sim *s = c->s;
	const struct plan *p = c->p;
	int d = op_dev(c, op), st = op_stage(c, op), mb = op_mb(c, op), k = op_k(c, op);
	if (pos[op] > s->next[d]) {
		const struct action *a = &p->order[pos[op] - 1];

		return action_op(c, a);
	}
	if (c->blocking && s->dev_blocked[d] > 0 && s->dev_block_op[d] >= 0)
		return s->dev_block_op[d];  /* its send waits for the receiver to reach this op */
	if (p->order[pos[op]].pair && pos[op] + 1 < p->order_start[d + 1]) {
		/* the head of a pair also waits for its partner's inputs */
		long partner = action_op(c, &p->order[pos[op] + 1]);

		if (s->npred[partner] > 0) {
			long b = blocker_data(c, partner);

			if (b >= 0)
				return b;
		}
	}
	(void)st; (void)mb; (void)k;
	return blocker_data(c, op);
}

static int diagnose_deadlock(struct ctx *c, struct metrics *m, struct err *e)
{
	struct sim *s = c->s;
	const struct plan *p = c->p;
	long nops = (long)c->S * c->M * c->K, start = -1, u, len = 0;
	long *pos = malloc((size_t)nops * sizeof(*pos));
	int32_t *seen = malloc((size_t)nops * sizeof(*seen));
	struct strbuf sb = STRBUF_INIT;
	char t1[ACTION_TEXT_MAX], t2[ACTION_TEXT_MAX];

	if (!pos || !seen) {
		free(pos);
		free(seen);
		return err_set(e, ERR_RUNTIME, "out of host memory diagnosing a deadlock");
	}
	for (int d = 0; d < p->ndevices; d++)
		for (int i = p->order_start[d]; i < p->order_start[d + 1]; i++) {
			const struct action *a = &p->order[i];

			pos[op_id(c, a->stage, a->mb, a->kind == OP_F ? 0 : a->kind == OP_W ? 2 : 1)] = i;
		}
	for (int d = 0; d < p->ndevices && start < 0; d++)
		if (s->next[d] < p->order_start[d + 1]) {
			const struct action *a = &p->order[s->next[d]];

			start = op_id(c, a->stage, a->mb, a->kind == OP_F ? 0 : a->kind == OP_W ? 2 : 1);
		}
	for (long i = 0; i < nops; i++)
		seen[i] = -1;
	/* follow blockers until an op repeats: the repeated stretch is the cycle */
	for (u = start; u >= 0 && seen[u] < 0; u = blocker(c, u, pos))
		seen[u] = (int32_t)len++;
	if (u < 0) {
		free(pos);
		free(seen);
		return err_set(e, ERR_INFEASIBLE, "deadlock: ops are left that can never start");
	}
	{
		long first = u, n = len - seen[u], i = 0;

		m->cycle = calloc((size_t)n, sizeof(*m->cycle));
		if (!m->cycle) {
			free(pos);
			free(seen);
			return err_set(e, ERR_RUNTIME, "out of host memory diagnosing a deadlock");
		}
		strbuf_addstr(&sb, "deadlock: ");
		u = first;
		do {
			long b = blocker(c, u, pos);
			struct action a = { op_stage(c, u), op_mb(c, u), (uint8_t)op_kind(c, u), 0 };
			struct action ab = { op_stage(c, b), op_mb(c, b), (uint8_t)op_kind(c, b), 0 };

			m->cycle[i].device = op_dev(c, u);
			m->cycle[i++].op = a;
			action_format(&a, t1);
			action_format(&ab, t2);
			if (sb.len < 700) {
				int du = op_dev(c, u);

				if (op_dev(c, b) == du && pos[b] == pos[u] - 1)
					strbuf_addf(&sb, "%s%s comes after %s on device %d", i > 1 ? "; " : "", t1, t2, du);
				else if (c->blocking && pos[u] == s->next[du] && s->dev_blocked[du] > 0 && b == s->dev_block_op[du])
					strbuf_addf(&sb, "%s%s (device %d) waits until device %d reaches %s to receive its send "
					            "(blocking transfers)", i > 1 ? "; " : "", t1, du, op_dev(c, b), t2);
				else
					strbuf_addf(&sb, "%s%s (device %d) waits for %s (device %d)", i > 1 ? "; " : "", t1,
					            op_dev(c, u), t2, op_dev(c, b));
			} else if (sb.buf[sb.len - 1] != '.') {
				strbuf_addstr(&sb, "; ...");
			}
			u = b;
		} while (u != first && i < n);
		m->ncycle = (int)i;
	}
	free(pos);
	free(seen);
	if (strbuf_failed(&sb))
		err_set(e, ERR_RUNTIME, "out of host memory diagnosing a deadlock");
	else
		err_set(e, ERR_INFEASIBLE, "%s", sb.buf);
	strbuf_release(&sb);
	return -1;
}

/* ---- metrics ---------------------------------------------------------------------- */

double sim_lower_bound(const struct model *mdl, const struct cluster *cl, int microbatches,
                       bool split_backward)
{
	double work = 0, chain = 0, speed_sum = 0, speed_max = 0, heaviest = 0;

	for (int l = 0; l < mdl->nlayers; l++) {
		const struct layer *y = &mdl->layers[l];
		double all = y->f_ms + y->b_ms + y->w_ms;

		work += all;
		chain += y->f_ms + y->b_ms + (split_backward ? 0 : y->w_ms);
		if (all > heaviest)
			heaviest = all;
	}
	for (int d = 0; d < cl->devices; d++) {
		speed_sum += cl->device_speed[d];
		if (cl->device_speed[d] > speed_max)
			speed_max = cl->device_speed[d];
	}
	work = work * microbatches / speed_sum;
	chain /= speed_max;
	/* a layer is never split: all its microbatches run on one device */
	heaviest = heaviest * microbatches / speed_max;
	return fmax(work, fmax(chain, heaviest));
}

/*
 * The tight bound. Every claim below holds for every plan of this model, cluster and
 * microbatch count M — any partition into contiguous stages, any placement (several,
 * non-adjacent stages per device allowed), any per-device order — so the bound is a max of
 * inequalities each of which some plan-independent argument proves. Communication only
 * delays ops (durations and transfers are >= 0 and the graph is fixed), so it is ignored.
 *
 * Notation (work in ms at speed 1): c_l = f_l + b_l + w_l; B_l is the backward on the
 * gradient chain (b_l when the backward is split, b_l + w_l fused); o the per-op overhead;
 * K ops per stage and microbatch (3 split, 2 fused). An op of stage [a,b] costs the sum over
 * its layers plus o; divided by its device's speed, at most s_max. Speeds sorted
 * descending give top[k], the sum of the k fastest; s_min the slowest.
 * Pf(e) = sum_{j<e} f_j (+ o when e > 0: at least one stage's F lies before layer e) is
 * the earliest any F of a stage starting at layer e can start (at s_max); Pb(e) likewise
 * for the backward chain below e; wt = w_0 + o when split (W(0,m) follows I(0,m)), else 0.
 *
 * (1) Fill/drain per device. A device d that holds anything first runs an F (I and W of a
 *   stage wait for its F on the same device), of a stage starting at some layer a >= e_d,
 *   its entry (lowest layer it holds): it starts at >= Pf(e_d)/s_max. Its last F or I op is
 *   an I (each F is followed by its own I on d), of a stage starting at a >= e_d, and after
 *   it the backward chain below a and W(0,m) still run: >= (Pb(e_d) + wt)/s_max. So
 *     T >= Pf(e_d)/s_max + load_d/s_d                       (A)
 *     T >= (Pf(e_d) + Pb(e_d) + wt)/s_max + FB_d/s_d          (B; FB = F and I/B work only).
 *   Multiply by s_d and sum over the k devices in use: their entries are k distinct layers,
 *   so sum Pf(e_d) >= sum_{j<k} Pf(j); each holds >= 1 stage, so the work is at least
 *   M (sum c + K o k) (resp. M (sum (f + B) + 2 o k)); their speeds sum to <= top[k]:
 *     T >= min over k <= min(D, L) of [M sum c + M K o k + (s_min/s_max) sum_{j<k} Pf(j)] / top[k]
 *   and the same with (B). With k = D and o = 0 this is total work / total speed plus the
 *   average fill, so it never falls below that part of the old bound. What it cannot claim:
 *   free placement lets a device enter at layer j and go on with later layers (interleaving
 *   to single layers), so the fill provable is about one layer per device, not the (D-1)
 *   stages of a 1F1B pipeline.
 * (2) The stage around one layer. Whatever the partition, layer l sits in one stage [a,b]
 *   on one device; all its M F and M I (and W) ops run there one at a time, none before
 *   Pf(a), every I followed by the chain below a (tail Pb(a) + wt) and by its own W; the
 *   first I waits for an F to go up through the layers above b and back, U(b) = sum_{j>b}
 *   (f_j + B_j) + 2o (when b < L-1). With F, I, W the stage's per-op costs:
 *     T >= Pf(a) + M (F + I + W)
 *     T >= Pf(a) + M (F + I) + max(Pb(a) + wt, W)
 *     T >= Pf(a) + M F + U(b) + I + Pb(a) + wt
 *     T >= Pf(a) + F + U(b) + M I + Pb(a) + wt            (all / s_max)
 *   minimised over the stages a <= l <= b (every term grows with b but U's 2o, which is gone
 *   at b = L-1: so b = l or b = L-1). Taken for the first and the last layer and the
 *   heaviest ones; this is what makes a huge LM head (last layer) cost its forward
 *   prefix and its backward suffix on top of M times its own work.
 * (3) Layer granularity. A layer is never split, but a device may hold any set of layers,
 *   so the best contiguous min-max partition is NOT a bound (non-contiguous sets can
 *   balance better). What holds: the j heaviest layers sit on some j' <= j devices, each
 *   paying >= one stage of overhead, so T >= min_{j'<=j} (M sum_{top j} c + j' M K o) /
 *   top[j']; and among the k D + 1 heaviest layers one device holds k + 1 (pigeonhole), so
 *   T >= M (the k + 1 lightest of them + K o) / s_max.
 *   Exactly for the load: device d runs the M F, M I and M W (or B) ops of every stage it
 *   holds one at a time, so T s_d >= M load_d, load_d = the c of its layers + K o per stage
 *   >= their sum + K o if it holds anything. Any plan's partition and placement assign each
 *   layer to one device, so max_d load_d >= P*, the optimum of P||Cmax: the layers as jobs
 *   of size c_l on D identical machines, a machine that holds anything paying K o more.
 *   Empty machines (fewer devices used) and any set per machine (non-contiguous,
 *   interleaved) are among its assignments, so T >= M P* / s_max (s_d <= s_max: valid with
 *   mixed speeds, only weaker). Computing P* is NP-hard in general, but any c'_l <= c_l
 *   lowers every assignment's largest load, so P*(c') <= P*(c), and so does dropping
 *   layers: keep the TIGHT_TOP heaviest, group equal costs into classes, and merge adjacent
 *   classes (the merge that loses the least load first) until at most PCM_CLASSES classes
 *   and PCM_STATES count vectors remain; then solve the relaxed instance exactly, where a
 *   machine holding q layers of a class is charged the sum of the class's q lightest costs
 *   (what any q of its layers cost at least; with equal costs, exactly what they cost).
 *   A makespan is some machine's load, the load of a count vector, so binary search over
 *   those loads sorted, with an exact test of whether D machines of that capacity hold
 *   every layer (pcm_fits: a dynamic program over count vectors). With few distinct costs
 *   (at most PCM_CLASSES and PCM_STATES count vectors) nothing is merged and this is the
 *   optimal packing itself; with near-equal ones (gpt-13b's 38 transformer layers lie
 *   within 5% of each other) the loss is what a machine's layers cost above the lightest
 *   of their class. It catches what the pigeonhole misses: 38 layers of 17.2 ms, one of
 *   20.6 and a head of 31.1 on 8 devices average 88.2 ms and the pigeonhole says 86 (5
 *   layers), but the head with 4 more layers is 99.9, and with fewer it leaves 36 layers to
 *   7 devices, 6 on one (103.2). What it cannot claim: the packing ignores where the layers
 *   sit, so the fill of (1) and the chains of (2) do not add to it.
 * (4) One microbatch's chain, with its overheads: (sum f + sum B + 2o + wt) / s_max.
 * (5) The packing with each device's fill: (1) and (3) joined. Device d's first op starts
 *   at >= Pf(e_d)/s_max and it then runs M load_d of work, so T s_max >= Pf(e_d) + M load_d.
 *   Sort the devices that hold anything by entry: the j-th (from 0) enters at a layer >= j,
 *   and Pf grows with the layer, so its fill is >= Pf(j). So every plan gives an assignment
 *   of the layers to bins j = 0..min(D, L) - 1 (bins left empty cost nothing) with
 *   T s_max >= Pf(j) + M load(bin j) for every nonempty bin: T s_max is at least the least
 *   such maximum over all assignments. The classes' lightest-sum charge and dropping layers
 *   (as in (3)) only lower that least maximum; it is found by bisection on T, each step an exact
 *   dynamic program over the bins from the last, whose states are the count vectors of the
 *   rounded classes still to place (pcm_fill_fits; at most PCM_FILL_STATES of them). It
 *   catches the layers that do not split evenly when the fullest devices cannot all enter
 *   at layer 0: 10 equal layers on 4 devices put 3 on two of them, and one of those two
 *   enters after layer 0's forward. What it cannot claim: a device's lowest layer decides
 *   only when it may start, not how long it waits later for microbatches to arrive.
 * (6) The head's wait. Every I of microbatch m waits for the I of the stage holding the
 *   last layer L-1, which waits for m's forward through every layer: SF = sum f + o (at
 *   least one F op). So the device h holding L-1 runs only F ops before SF/s_max, and of
 *   the F ops of its stage H around L-1 (each ends after SF: its microbatch's whole forward)
 *   at most one runs before SF. Its work after SF is then at least its load minus its F
 *   work plus (M - 1)(f_H + o), and with n_h >= 1 stages and s_h <= s_max:
 *     T s_max >= SF + M (b + w)(S_h) + M (K-1) o n_h + (M - 1)(f_{L-1} + o)
 *              = Q + M (c_{L-1} + K o) + M (b + w)(O)        Q = sum_{l<L-1} f_l
 *   where O = S_h minus L-1: the device waits out the forward below the head unless it
 *   holds forward work of its own to fill the wait. With its load, and x = c(O):
 *     T s_max >= h(x) = M (c_{L-1} + K o) + max(M x, Q + M (x - fmax(x)))
 *   fmax(x): the most forward work any set of the other layers of total cost x holds, by
 *   the fractional knapsack's greedy on f/c (an upper bound for every whole set). The
 *   other layers, of cost C' - x, sit on k <= min(D-1, L-1) other devices with distinct
 *   entries, so as in (1): T >= r(x) = min_k [M (C' - x + K o k) + (s_min/s_max) sum_{j<k}
 *   Pf(j)] / top[k]. Every plan has some x with T >= max(h(x)/s_max, r(x)); h grows with
 *   x (f <= c) and r falls, so the least such max is where they cross, found by bisection
 *   (each end kept as a bound of its side). On nemotron-nano-v2-9b at 8 x 16 the head is
 *   9% of the work and its device waits 125 ms for the forward below it: 849.4 ms, where
 *   the other parts give 847.9. What it cannot claim: that the other
 *   devices, which also run only forwards before SF, can fill that window (they can here:
 *   the low layers' forwards are plenty), and where O's forwards can run before SF.
 * The tight bound is the largest of these and of the old bound. It allocates nothing:
 * the heaviest layers and fastest devices kept are the first TIGHT_TOP (a bound over fewer
 * of them is still a bound; past them a device's speed counts as the last one kept), and
 * the packings' tables (about 18 KB each) and (6)'s sorted layers (HEAD_MAX, 12 KB; a
 * longer model skips (6)) live on the stack. The packings take up to about 10 ms, so their
 * results are remembered per thread for the last PCM_CACHE inputs (one keyed_cache each:
 * the kept costs, D or the fills, M, K o, compared exactly): simulating plans of one model
 * pays comparisons of a few hundred numbers, and (6) its O(L log L) sort and bisection.
 */

#define TIGHT_TOP 128 /* the heaviest layers and fastest devices kept (on the stack) */

/* Inserts x into the descending list v[0..*n) of at most TIGHT_TOP values. */
static void top_insert(double *v, int *n, double x)
{
	bool full = *n == TIGHT_TOP;
	int i = full ? TIGHT_TOP - 1 : (*n)++;

	/* full: x replaces the lightest kept value, or is lighter than all and not kept (the
	 * TIGHT_TOP-th insertion fills the last slot; it must not read that slot first) */
	if (full && v[i] >= x)
		return;
	for (; i > 0 && v[i - 1] < x; i--)
		v[i] = v[i - 1];
	v[i] = x;
}

/* Bound (2) for layer l, at speed 1: the best stage [a, b] around it. pf_l and pb_l: the
 * forward and backward (B) sums over layers 0..l; rest_*: the f, B and w sums above l. */
static double stage_window(const struct model *mdl, int M, int l, double o, double wt, bool split,
                           double pf_l, double pb_l, double rest_f, double rest_b, double rest_w)
{
	int L = mdl->nlayers;
	double best = INFINITY, f = 0, b = 0, w = 0;

	for (int a = l; a >= 0; a--) {
		const struct layer *y = &mdl->layers[a];
		double head, tail;

		f += y->f_ms;
		b += y->b_ms + (split ? 0 : y->w_ms);
		w += split ? y->w_ms : 0;
		head = a > 0 ? pf_l - f + o : 0;
		tail = (a > 0 ? pb_l - b + o : 0) + wt;
		for (int i = 0; i < (l == L - 1 ? 1 : 2); i++) {
			/* b = l, or b = L - 1 (no stage above: no overhead to go up and back) */
			double F = f + (i ? rest_f : 0) + o, I = b + (i ? rest_b : 0) + o;
			double W = split ? w + (i ? rest_w : 0) + o : 0;
			double up = i || l == L - 1 ? 0 : rest_f + rest_b + 2 * o;
			double v = head + M * (F + I + W);

			v = fmax(v, head + M * (F + I) + fmax(tail, W));
			v = fmax(v, head + M * F + up + I + tail);
			v = fmax(v, head + F + up + M * I + tail);
			if (v < best)
				best = v;
		}
	}
	return best;
}

/* ---- bound (3) exactly for the load: the best packing of the rounded layer costs ---- */

#define PCM_CLASSES 6   /* cost classes the layers are grouped into, at most */
#define PCM_STATES 1024 /* count vectors (prod of count + 1) the exact packing visits, at most */
#define PCM_CACHE 4     /* inputs and results remembered per thread */
#define PCM_FILL_STATES 1024 /* count vectors of bound (5)'s packing, at most */
#define PCM_FILL_WORK 32768  /* and bins x count vectors, at most */

/* A rounded instance: classes of cnt[i] layers (class 0 the heaviest) on D identical
 * machines; a machine holding q layers of class i holds at least light[off[i] + q], the sum
 * of the class's q lightest costs, and a machine holding anything also pays oh (one
 * stage's K overheads). */
struct pcm {
	int k, D;
	double oh, light[TIGHT_TOP + PCM_CLASSES];
	int cnt[PCM_CLASSES], off[PCM_CLASSES];
};

/* The packings are the same pure functions of the layer costs every time the tuner
 * simulates a plan of one model: each remembers its last PCM_CACHE inputs, flattened into
 * one key of numbers (the counts first, so keys of different shapes never match, then the
 * scalars and arrays), compared value by value, and their results. */
#define KEYED_MAX (5 + 2 * TIGHT_TOP) /* numbers in a key, at most: bound (5)'s */

struct keyed_cache {
	struct {
		int n;
		double key[KEYED_MAX], val;
	} slot[PCM_CACHE];
	int nslots, next; /* slots filled; the one to fill next (the oldest once all are) */
};

/* The result remembered for key[0..n), or NULL. */
static const double *keyed_find(const struct keyed_cache *kc, const double *key, int n)
{
	for (int i = 0; i < kc->nslots; i++) {
		int j = 0;

		if (kc->slot[i].n != n)
			continue;
		while (j < n && kc->slot[i].key[j] == key[j])
			j++;
		if (j == n)
			return &kc->slot[i].val;
	}
	return NULL;
}

/* Remembers val for key[0..n) (n <= KEYED_MAX) in place of the oldest; returns val. */
static double keyed_put(struct keyed_cache *kc, const double *key, int n, double val)
{
	int at = kc->next;

	kc->next = (kc->next + 1) % PCM_CACHE;
	if (kc->nslots < PCM_CACHE)
		kc->nslots++;
	kc->slot[at].n = n;
	memcpy(kc->slot[at].key, key, (size_t)n * sizeof(*key));
	kc->slot[at].val = val;
	return val;
}

static _Thread_local struct keyed_cache pcm_cache, fill_cache;

/* The load of a machine holding dig[i] layers of class i (always summed in this order, so
 * a configuration's load compares exactly against the candidate makespans). */
static double pcm_load(const struct pcm *p, const int *dig)
{
	double x = 0;
	bool any = false;

	for (int i = 0; i < p->k; i++) {
		x += p->light[p->off[i] + dig[i]];
		any |= dig[i] > 0;
	}
	return any ? x + p->oh : 0;
}

/* Steps the mixed-radix count vector dig (class 0 the fastest digit) to the next state. */
static void pcm_step(const struct pcm *p, int *dig)
{
	for (int i = 0; i < p->k; i++) {
		if (++dig[i] <= p->cnt[i])
			return;
		dig[i] = 0;
	}
}

/*
 * Whether the layers fit on D machines of capacity C. g(v), the fewest machines that hold
 * the count vector v, in index order (removing layers lowers the index): 1 when v fits one
 * machine, else 1 + min over the maximal configurations c (fit in C, no further layer fits)
 * of g(max(v - c, 0)) — the first machine of a best packing of v holds a subset of some
 * maximal c, and taking all of min(c, v) there is no worse (g only grows with v).
 */
static bool pcm_fits(const struct pcm *p, int S, const int *stride, double C)
{
	unsigned char cfg[PCM_STATES][PCM_CLASSES];
	unsigned short g[PCM_STATES];
	int ncfg = 0, dig[PCM_CLASSES] = { 0 };

	for (int v = 0; v < S; v++, pcm_step(p, dig)) {
		bool maximal = true;

		if (v == 0 || pcm_load(p, dig) > C)
			continue;
		for (int i = 0; i < p->k && maximal; i++) {
			if (dig[i] == p->cnt[i])
				continue;
			dig[i]++;
			maximal = pcm_load(p, dig) > C;
			dig[i]--;
		}
		if (maximal) {
			for (int i = 0; i < p->k; i++)
				cfg[ncfg][i] = (unsigned char)dig[i];
			ncfg++;
		}
	}
	memset(dig, 0, sizeof(dig));
	g[0] = 0;
	for (int v = 1; v < S; v++) {
		int best = 0xffff - 1;

		pcm_step(p, dig);
		if (pcm_load(p, dig) <= C) {
			g[v] = 1;
			continue;
		}
		for (int j = 0; j < ncfg; j++) {
			int u = 0;

			for (int i = 0; i < p->k; i++)
				u += (dig[i] > cfg[j][i] ? dig[i] - cfg[j][i] : 0) * stride[i];
			if (u != v && g[u] < best)
				best = g[u];
		}
		g[v] = (unsigned short)(best + 1);
	}
	return g[S - 1] < 0xffff && g[S - 1] <= p->D; /* 0xffff: a layer fits no machine */
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The optimal makespan of the rounded instance: the smallest machine load (a makespan is
 * always some machine's load) at which the layers fit, by binary search. */
static double pcm_solve(const struct pcm *p)
{
	double cand[PCM_STATES];
	int stride[PCM_CLASSES], S = 1, n = 0, dig[PCM_CLASSES] = { 0 }, lo, hi;

	for (int i = 0; i < p->k; i++) {
		stride[i] = S;
		S *= p->cnt[i] + 1;
	}
	for (int v = 0; v < S; v++, pcm_step(p, dig))
		if (v > 0)
			cand[n++] = pcm_load(p, dig);
	qsort(cand, (size_t)n, sizeof(*cand), dbl_cmp);
	/* cand[n - 1], everything on one machine, fits */
	for (lo = 0, hi = n - 1; lo < hi;) {
		int mid = lo + (hi - lo) / 2;

		if (pcm_fits(p, S, stride, cand[mid]))
			hi = mid;
		else
			lo = mid + 1;
	}
	return cand[hi];
}

/*
 * Rounds the layers of costs c[0..n) (descending) down to at most PCM_CLASSES classes and
 * max_states count vectors, into *p (D and oh left for the caller). Returns the number of
 * classes, 0 when there is nothing to place.
 */
static int pcm_round(const double *c, int n, double oh, long max_states, struct pcm *p)
{
	double v[TIGHT_TOP];
	int cnt[TIGHT_TOP], k = 0;

	for (int i = 0; i < n; i++) {
		if (c[i] <= 0 && oh <= 0)
			break; /* free layers change nothing without an overhead */
		if (k > 0 && c[i] == v[k - 1]) {
			cnt[k - 1]++;
		} else {
			v[k] = c[i] > 0 ? c[i] : 0;
			cnt[k++] = 1;
		}
	}
	memset(p, 0, sizeof(*p));
	if (k == 0)
		return 0;
	/* Merge the adjacent classes whose merge loses the least load (were the heavier one to
	 * take the lighter's cost) until few classes and few count vectors remain. */
	for (;;) {
		long states = 1;
		int at = 0;

		for (int i = 0; i < k && states <= max_states; i++)
			states *= cnt[i] + 1;
		if ((k <= PCM_CLASSES && states <= max_states) || k == 1)
			break;
		for (int i = 1; i + 1 < k; i++)
			if (cnt[i] * (v[i] - v[i + 1]) < cnt[at] * (v[at] - v[at + 1]))
				at = i;
		cnt[at + 1] += cnt[at];
		for (int i = at; i + 1 < k; i++) {
			v[i] = v[i + 1];
			cnt[i] = cnt[i + 1];
		}
		k--;
	}
	p->k = k;
	p->oh = oh;
	/* the classes are runs of c in order; class i's lightest are at the end of its run */
	for (int i = 0, first = 0, at = 0; i < k; i++) {
		p->cnt[i] = cnt[i];
		p->off[i] = at;
		p->light[at] = 0;
		for (int q = 1; q <= cnt[i]; q++)
			p->light[at + q] = p->light[at + q - 1] + fmax(c[first + cnt[i] - q], 0);
		first += cnt[i];
		at += cnt[i] + 1;
	}
	return k;
}

/*
 * Bound (3), the packing, at speed 1 and per microbatch: the least possible largest device
 * load over every assignment of the layers of costs c[0..n) (descending), grouped into at
 * most PCM_CLASSES classes (pcm_round), to D devices. 0 when there is nothing to place.
 */
static double pcm_round_solve(const double *c, int n, int D, double oh)
{
	struct pcm p;

	if (pcm_round(c, n, oh, PCM_STATES, &p) == 0)
		return 0;
	p.D = D;
	return pcm_solve(&p);
}

/*
 * Bound (5)'s test: whether the rounded layers fit nb bins, bin j holding a count vector u
 * only if M load(u) + fill[j] <= T (an empty bin always fits). A dynamic program over the
 * bins from the last: ok[v] says whether the bins after j hold the count vector v; bin j
 * takes any u that fits it and leaves v to them. dig and load: every state's digits and
 * load, S states.
 */
static bool pcm_fill_fits(const struct pcm *p, int S, unsigned char (*dig)[PCM_CLASSES], const double *load,
                          const double *fill, int nb, int M, double T)
{
	bool ok[PCM_FILL_STATES], nx[PCM_FILL_STATES];
	short fit[PCM_FILL_STATES];

	memset(ok, 0, sizeof(ok));
	ok[0] = true;
	for (int j = nb - 1; j >= 0; j--) {
		int nfit = 0;

		for (int u = 1; u < S; u++)
			if (M * load[u] + fill[j] <= T)
				fit[nfit++] = (short)u;
		if (nfit == 0)
			continue; /* bin j can only stay empty */
		memcpy(nx, ok, sizeof(nx)); /* bin j empty */
		for (int w = 0; w < S; w++) {
			if (!ok[w])
				continue;
			for (int f = 0; f < nfit; f++) {
				int u = fit[f], i = 0;

				while (i < p->k && dig[w][i] + dig[u][i] <= p->cnt[i])
					i++;
				if (i == p->k)
					nx[w + u] = true;
			}
		}
		memcpy(ok, nx, sizeof(ok));
		if (ok[S - 1])
			return true;
	}
	return ok[S - 1];
}

/*
 * Bound (5), at speed 1: the least T at which the rounded layers fit the bins of
 * pcm_fill_fits(), by bisection to a part in 1e9, never above it: the value returned was
 * shown not to fit, or is lo, a bound already known (the other parts of the tight bound).
 */
static double pcm_fill_solve(const struct pcm *p, const double *fill, int nb, int M, double lo)
{
	unsigned char dig[PCM_FILL_STATES][PCM_CLASSES];
	double load[PCM_FILL_STATES], hi;
	int S = 1, d[PCM_CLASSES] = { 0 };

	for (int i = 0; i < p->k; i++)
		S *= p->cnt[i] + 1;
	for (int v = 0; v < S; v++, pcm_step(p, d)) {
		for (int i = 0; i < PCM_CLASSES; i++)
			dig[v][i] = (unsigned char)d[i];
		load[v] = pcm_load(p, d);
	}
	hi = M * load[S - 1] + fill[0]; /* everything in bin 0 fits */
	/* most often nothing is above the other bounds: one test says so */
	if (lo >= hi || pcm_fill_fits(p, S, dig, load, fill, nb, M, lo * (1 + 1e-9)))
		return lo;
	while (hi - lo > 1e-9 * hi) {
		double mid = lo + (hi - lo) / 2;

		if (pcm_fill_fits(p, S, dig, load, fill, nb, M, mid))
			hi = mid;
		else
			lo = mid;
	}
	return lo;
}

/* pcm_round_solve(), remembered per thread for the last PCM_CACHE inputs. */
static double pcm_bound(const double *c, int n, int D, double oh)
{
	double key[KEYED_MAX];
	const double *got;

	key[0] = n;
	key[1] = D;
	key[2] = oh;
	memcpy(key + 3, c, (size_t)n * sizeof(*c));
	if ((got = keyed_find(&pcm_cache, key, 3 + n)))
		return *got;
	return keyed_put(&pcm_cache, key, 3 + n, pcm_round_solve(c, n, D, oh));
}

/* Bound (5) at speed 1: the layers of costs c[0..n) (descending), rounded, in nb bins of
 * fills fill[0..nb) (ascending), M microbatches, oh per nonempty bin and microbatch;
 * remembered per thread for the last PCM_CACHE inputs. */
static double pcm_fill_bound(const double *c, int n, const double *fill, int nb, int M, double oh, double lo)
{
	double key[KEYED_MAX];
	const double *got;
	struct pcm p;
	long states;

	key[0] = n;
	key[1] = nb;
	key[2] = M;
	key[3] = oh;
	key[4] = lo;
	memcpy(key + 5, c, (size_t)n * sizeof(*c));
	memcpy(key + 5 + n, fill, (size_t)nb * sizeof(*fill));
	if ((got = keyed_find(&fill_cache, key, 5 + n + nb)))
		return *got;
	/* a step costs up to nb states^2: fewer states (coarser classes, still a bound) with many
	 * bins */
	states = PCM_FILL_WORK / nb < PCM_FILL_STATES ? PCM_FILL_WORK / nb : PCM_FILL_STATES;
	return keyed_put(&fill_cache, key, 5 + n + nb,
	                 pcm_round(c, n, oh, states, &p) ? pcm_fill_solve(&p, fill, nb, M, lo) : lo);
}

/* ---- bound (6): the device that holds the last layer waits for the first backward ---- */

#define HEAD_MAX 512 /* bound (6) for models of at most this many layers (on the stack) */

struct fc {
	double r, f, c; /* a layer's f / c, f and c */
};

static int fc_cmp(const void *a, const void *b)
{
	double x = ((const struct fc *)a)->r, y = ((const struct fc *)b)->r;

	return (x < y) - (x > y); /* descending */
}

/* The most forward work any set of the layers v[0..n) (sorted by f / c, descending) of total
 * cost x can hold: the fractional knapsack's greedy, an upper bound for every whole set. */
static double fc_fmax(const struct fc *v, int n, double x)
{
	double f = 0;

	for (int i = 0; i < n && x > 0; i++) {
		if (x <= v[i].c)
			return f + v[i].f * x / v[i].c;
		f += v[i].f;
		x -= v[i].c;
	}
	return f;
}

/* Bound (6)'s two sides at x, the cost of what the head's device holds besides the last
 * layer: h its own (at speed 1), r the others' (in time). */
static void head_sides(const struct fc *v, int n, double x, int M, double cH, double Ko, double Q, double rest,
                       const double *fillsum, const double *top, int kmax, double *h, double *r)
{
	*h = M * (cH + Ko) + fmax(M * x, Q + M * (x - fc_fmax(v, n, x)));
	*r = rest - x > 0 ? INFINITY : 0;
	for (int k = 1; k <= kmax && rest - x > 0; k++)
		*r = fmin(*r, (M * (rest - x + Ko * k) + fillsum[k]) / top[k]);
}

double sim_lower_bound_tight(const struct model *mdl, const struct cluster *cl, int microbatches,
                             bool split_backward)
{
	int L = mdl->nlayers, D = cl->devices, M = microbatches, K = split_backward ? 3 : 2, nsp = 0, nld = 0;
	double o = cl->op_overhead_us > 0 ? cl->op_overhead_us * 1e-3 : 0;
	double sp[TIGHT_TOP], ld[TIGHT_TOP];
	double best, smax, smin, ssum = 0, sum_c = 0, sum_f = 0, sum_b = 0, wt;
	int kmax, hc = 0, hf = 0, hb = 0;

	best = sim_lower_bound(mdl, cl, microbatches, split_backward);
	if (L < 1 || D < 1 || M < 1)
		return best;
	smax = smin = cl->device_speed[0];
	for (int d = 0; d < D; d++) {
		double x = cl->device_speed[d];

		ssum += x;
		smax = fmax(smax, x);
		smin = fmin(smin, x);
		top_insert(sp, &nsp, x);
	}
	for (int l = 0; l < L; l++) {
		const struct layer *y = &mdl->layers[l];
		double c = y->f_ms + y->b_ms + y->w_ms;
		const struct layer *h;

		sum_c += c;
		sum_f += y->f_ms;
		sum_b += y->b_ms + (split_backward ? 0 : y->w_ms);
		top_insert(ld, &nld, c);
		h = &mdl->layers[hc];
		if (c > h->f_ms + h->b_ms + h->w_ms)
			hc = l;
		if (y->f_ms > mdl->layers[hf].f_ms)
			hf = l;
		if (y->b_ms + y->w_ms * !split_backward > mdl->layers[hb].b_ms + mdl->layers[hb].w_ms * !split_backward)
			hb = l;
	}
	wt = split_backward ? mdl->layers[0].w_ms + o : 0;
	kmax = D < L ? D : L;

	/* (4) one microbatch's chain */
	best = fmax(best, (sum_f + sum_b + 2 * o + wt) / smax);

	/* (1) fill and drain over the k devices in use; top: their speeds at most */
	{
		double fa = 0, fb = 0, ra = INFINITY, rb = INFINITY, top = 0, pf = 0, pb = 0;

		for (int k = 1; k <= kmax; k++) {
			int j = k - 1;
			double cf = j > 0 ? pf + o : 0, cb = j > 0 ? pb + o : 0;

			top = fmin(ssum, top + sp[j < nsp ? j : nsp - 1]);
			fa += cf;
			fb += cf + cb + wt;
			ra = fmin(ra, (M * (sum_c + K * o * k) + smin / smax * fa) / top);
			rb = fmin(rb, (M * (sum_f + sum_b + 2 * o * k) + smin / smax * fb) / top);
			pf += mdl->layers[j].f_ms;
			pb += mdl->layers[j].b_ms + (split_backward ? 0 : mdl->layers[j].w_ms);
		}
		best = fmax(best, fmax(ra, rb));
	}

	/* (2) the stage around the first, the last and the heaviest layers */
	{
		int cand[5] = { 0, L - 1, hc, hf, hb };

		for (int i = 0; i < 5; i++) {
			int l = cand[i];
			double pf = 0, pb = 0, rf = 0, rb = 0, rw = 0;

			for (int j = 0; j < L; j++) {
				const struct layer *y = &mdl->layers[j];
				double bj = y->b_ms + (split_backward ? 0 : y->w_ms);

				if (j <= l) {
					pf += y->f_ms;
					pb += bj;
				} else {
					rf += y->f_ms;
					rb += bj;
					rw += split_backward ? y->w_ms : 0;
				}
			}
			best = fmax(best, stage_window(mdl, M, l, o, wt, split_backward, pf, pb, rf, rb, rw) / smax);
		}
	}

	/* (3) granularity: the heaviest layers (as many as were kept) */
	{
		double sum = 0;

		for (int j = 1; j <= kmax && j <= nld; j++) {
			double r = INFINITY, top = 0;

			sum += ld[j - 1];
			for (int jj = 1; jj <= j; jj++) {
				top = fmin(ssum, top + sp[jj - 1 < nsp ? jj - 1 : nsp - 1]);
				r = fmin(r, M * (sum + jj * K * o) / top);
			}
			best = fmax(best, r);
		}
		for (int k = 1; (long)k * D + 1 <= L && (long)k * D + 1 <= nld; k++) {
			double x = 0;

			for (int i = k * D - k; i <= k * D; i++)
				x += ld[i];
			best = fmax(best, M * (x + K * o) / smax);
		}
		best = fmax(best, M * pcm_bound(ld, nld, D, K * o) / smax);
	}

	/* (6) the head's device: its wait for the first backward, or the forwards that fill it */
	if (D > 1 && L > 1 && L - 1 <= HEAD_MAX && D - 1 <= TIGHT_TOP) {
		struct fc v[HEAD_MAX];
		double fillsum[TIGHT_TOP + 1], top[TIGHT_TOP + 1], pf = 0, Q = 0, rest = 0, lo, hi, hl, rl, hh, rh, x;
		const struct layer *y = &mdl->layers[L - 1];
		int n = 0, rk = D - 1 < L - 1 ? D - 1 : L - 1;

		for (int l = 0; l + 1 < L; l++) {
			const struct layer *z = &mdl->layers[l];
			double c = z->f_ms + z->b_ms + z->w_ms;

			Q += z->f_ms;
			rest += c;
			if (c > 0)
				v[n++] = (struct fc){ z->f_ms / c, z->f_ms, c };
		}
		qsort(v, (size_t)n, sizeof(*v), fc_cmp);
		fillsum[0] = top[0] = 0;
		for (int k = 1; k <= rk; k++) {
			fillsum[k] = fillsum[k - 1] + smin / smax * (k > 1 ? pf + o : 0);
			pf += mdl->layers[k - 1].f_ms;
			top[k] = fmin(ssum, top[k - 1] + sp[k - 1 < nsp ? k - 1 : nsp - 1]);
		}
		lo = 0;
		hi = rest;
		head_sides(v, n, lo, M, y->f_ms + y->b_ms + y->w_ms, K * o, Q, rest, fillsum, top, rk, &hl, &rl);
		head_sides(v, n, hi, M, y->f_ms + y->b_ms + y->w_ms, K * o, Q, rest, fillsum, top, rk, &hh, &rh);
		for (int it = 0; it < 60 && hl / smax < rl && hh / smax > rh; it++) {
			double mid = lo + (hi - lo) / 2, hm, rm;

			head_sides(v, n, mid, M, y->f_ms + y->b_ms + y->w_ms, K * o, Q, rest, fillsum, top, rk, &hm, &rm);
			if (hm / smax < rm) {
				lo = mid;
				hl = hm;
				rl = rm;
			} else {
				hi = mid;
				hh = hm;
				rh = rm;
			}
		}
		/* h grows with x and r falls: between lo and hi each side is at least its value at the
		 * end where it is least; below lo (once lo moved) the others' side is >= rl, above hi
		 * (once hi moved) the head's is >= hh */
		x = fmax(hl / smax, rh);
		if (lo > 0)
			x = fmin(x, rl);
		if (hi < rest)
			x = fmin(x, hh / smax);
		best = fmax(best, x);
	}

	/* (5) the packing with each device's fill */
	if (kmax <= TIGHT_TOP) {
		double fill[TIGHT_TOP], pf = 0;

		for (int j = 0; j < kmax; j++) {
			fill[j] = j > 0 ? pf + o : 0;
			pf += mdl->layers[j].f_ms;
		}
		best = fmax(best, pcm_fill_bound(ld, nld, fill, kmax, M, K * o, best * smax) / smax);
	}
	return best;
}

/* ---- data-parallel synchronisation --------------------------------------------------- */

static int piece_cmp(const void *a, const void *b)
{
	const struct sim_sync_piece *x = a, *y = b;

	return (x->ready > y->ready) - (x->ready < y->ready);
}

/*
 * Megatron's overlap-grad-reduce on one GPU per device: a layer's gradients are complete
 * when the last microbatch's weight-gradient op (W, or B without a split) has passed it
 * (the backward runs the stage's layers last to first, each taking its share of the op's
 * time), and then go out on the device's one communication stream, in the order they
 * become ready: an all-reduce over the data-parallel ring (a reduce-scatter under ZeRO).
 * For ZeRO 1-2 the updated weights' all-gather follows, overlapped with the next
 * iteration up to the end of the device's first forward (overlap-param-gather). Whatever
 * of it runs past the device's last op lengthens the iteration.
 *
 * ZeRO 2-3 shard the gradients, so no GPU holds a whole gradient to accumulate into: every
 * microbatch's backward reduce-scatters its own (Megatron-FSDP, FSDP2, DeepSpeed), M of them
 * an iteration. The M - 1 before the last go out on the same stream from the device's first
 * backward on, ahead of the last microbatch's.
 */
static int dp_sync(struct ctx *c, struct metrics *m, double *makespan)
{
	struct sim *s = c->s;
	const struct plan *p = c->p;
	struct parallel par = plan_parallel(p);
	const struct model *mdl = &p->model;
	double compute = *makespan;

	if (par.dp <= 1)
		return 0;
	if (mdl->nlayers > s->sync_cap) {
		if (GROW(s->sync_piece, mdl->nlayers))
			return -1;
		s->sync_cap = mdl->nlayers;
	}
	for (int d = 0; d < p->ndevices; d++) {
		long n = 0;
		double t = 0, gather = 0, first = INFINITY, earlier = 0, first_bwd = INFINITY;

		for (int i = s->dev_stage_start[d]; i < s->dev_stage_start[d + 1]; i++) {
			int st = s->dev_stages[i], k = c->K == 3 ? 2 : 1;
			const struct stage *sg = &p->stages[st];
			double end = 0, start = 0, total = 0, done = 0;

			first_bwd = fmin(first_bwd, s->end[op_id(c, st, 0, k)]);
			for (int mb = 0; mb < c->M; mb++) {
				long op = op_id(c, st, mb, k);

				if (s->end[op] > end) {
					end = s->end[op];
					start = s->start[op];
				}
			}
			for (int l = sg->first; l <= sg->last; l++)
				total += c->K == 3 ? mdl->layers[l].w_ms : mdl->layers[l].b_ms + mdl->layers[l].w_ms;
			for (int l = sg->last; l >= sg->first; l--) {
				const struct layer *y = &mdl->layers[l];
				struct dp_sync_cost dc;

				done += c->K == 3 ? y->w_ms : y->b_ms + y->w_ms;
				parallel_dp_sync(&par, &p->cluster.rep.dp_link, (double)y->param_bytes, (double)y->expert_param_bytes, &dc);
				s->sync_piece[n].ready = total > 0 ? start + (end - start) * done / total : end;
				s->sync_piece[n++].ms = dc.grad_ms;
				gather += dc.gather_ms;
				if (par.zero >= 2)
					earlier += (c->M - 1) * dc.grad_ms;
			}
		}
		qsort(s->sync_piece, (size_t)n, sizeof(*s->sync_piece), piece_cmp);
		if (earlier > 0)
			t = first_bwd + earlier;
		for (long i = 0; i < n; i++) {
			if (i == 0)
				first = s->sync_piece[i].ready;
			t = fmax(t, s->sync_piece[i].ready) + s->sync_piece[i].ms;
		}
		if (gather > 0) {
			/* ZeRO 1-2: the updated weights' all-gather overlaps the next iteration's first
			 * forward on this device (Megatron's overlap-param-gather): what its warm-up wait
			 * and that forward cannot hide lengthens the iteration */
			double hide = INFINITY;

			for (int i = s->dev_stage_start[d]; i < s->dev_stage_start[d + 1]; i++)
				for (int mb = 0; mb < c->M; mb++) {
					long op = op_id(c, s->dev_stages[i], mb, 0);

					hide = fmin(hide, s->end[op]);
				}
			t += fmax(0, gather - (isfinite(hide) ? hide : 0));
		}
		if (n > 0 && t > first) {
			m->dev[d].sync_start_ms = first;
			m->dev[d].sync_end_ms = t;
			if (t > *makespan)
				*makespan = t;
		}
	}
	m->dp_sync_ms = *makespan - compute;
	return 0;
}

/* Bytes as the metrics hold them, rounded; past 2^64 (a model may hold 2^62 bytes of
 * weights, and its optimizer states six times that) it saturates instead of being an
 * undefined conversion. */
static uint64_t mem_bytes(double x)
{
	return x + 0.5 >= 0x1p64 ? UINT64_MAX : x > 0 ? (uint64_t)(x + 0.5) : 0;
}

/* Walks each device's ops in execution order: busy/idle split, memory curve and peak. */
static int compute_metrics(struct ctx *c, struct metrics *m)
{
	struct sim *s = c->s;
	const struct plan *p = c->p;
	const struct action *ord = c->o->policy_driven ? s->order : p->order;
	const int *ostart = c->o->policy_driven ? s->order_start : p->order_start;
	double makespan = 0, busy_all = 0, usable = cluster_usable_bytes(&p->cluster);
	long nops = (long)c->S * c->M * c->K;

	for (long op = 0; op < nops; op++)
		if (s->end[op] > makespan)
			makespan = s->end[op];
	m->ndevices = p->ndevices;
	m->dev = calloc((size_t)p->ndevices, sizeof(*m->dev));
	if (!m->dev)
		return -1;
	if (dp_sync(c, m, &makespan) < 0)
		return -1;
	for (int d = 0; d < p->ndevices; d++) {
		struct device_metrics *dm = &m->dev[d];
		double first_b = INFINITY, last_f = 0, prev_end = 0, mem = s->dev_static[d], peak = mem;
		double warm = 0, cool = 0, busy = 0;

		for (int i = ostart[d]; i < ostart[d + 1]; i++) {
			const struct action *a = &ord[i];
			long op = op_id(c, a->stage, a->mb, a->kind == OP_F ? 0 : a->kind == OP_W ? 2 : 1);

			if (a->kind == OP_F && s->end[op] > last_f)
				last_f = s->end[op];
			if ((a->kind == OP_I || a->kind == OP_B) && s->start[op] < first_b)
				first_b = s->start[op];
		}
		for (int i = ostart[d]; i < ostart[d + 1]; i++) {
			const struct action *a = &ord[i];
			int k = a->kind == OP_F ? 0 : a->kind == OP_W ? 2 : 1;
			long op = op_id(c, a->stage, a->mb, k);
			double gap = s->start[op] - prev_end;

			if (gap > 0) {
				if (s->start[op] <= first_b)
					warm += gap;
				else if (prev_end >= last_f && prev_end >= first_b)
					cool += gap;
			}
			busy += s->end[op] - s->start[op];
			prev_end = s->end[op];
			if (k == 0) {
				mem += (double)s->stage_act[a->stage];
				if (mem > peak)
					peak = mem;
			} else if (k == 1) {
				/* while it runs, a recomputing backward holds its redone activations */
				if (mem + s->stage_redo[a->stage] > peak)
					peak = mem + s->stage_redo[a->stage];
				mem -= p->split_backward ? (double)s->stage_act[a->stage] - (double)s->stage_act_w[a->stage]
				                         : (double)s->stage_act[a->stage];
				/* after a full recompute's I, what W needs can exceed the input it kept */
				if (mem > peak)
					peak = mem;
			} else {
				mem -= (double)s->stage_act_w[a->stage];
			}
			if (c->record) {
				if (s->nmem + 2 > s->mem_cap) {
					long cap = s->mem_cap ? s->mem_cap * 2 : 4096;

					if (GROW(s->mem, cap))
						return -1;
					s->mem_cap = cap;
				}
				s->mem[s->nmem].dev = d;
				s->mem[s->nmem].t = k == 0 ? s->start[op] : s->end[op];
				s->mem[s->nmem++].bytes = mem;
			}
		}
		if (ostart[d + 1] > ostart[d] && makespan > prev_end)
			cool += makespan - prev_end;
		dm->busy_ms = busy;
		dm->idle_ms = makespan - busy > 0 ? makespan - busy : 0;
		dm->bubble_ratio = makespan > 0 ? dm->idle_ms / makespan : 0;
		dm->warmup_idle_ms = warm;
		dm->cooldown_idle_ms = cool;
		dm->peak_mem_bytes = mem_bytes(peak);
		dm->mem_capacity_bytes = p->cluster.mem_bytes;
		dm->weights_bytes = mem_bytes(s->dev_wgo[3 * d]);
		dm->grads_bytes = mem_bytes(s->dev_wgo[3 * d + 1]);
		dm->optimizer_bytes = mem_bytes(s->dev_wgo[3 * d + 2]);
		dm->act_peak_bytes = mem_bytes(peak - s->dev_static[d]);
		s->dev_peak[d] = peak;
		busy_all += busy;
		if (peak > usable)
			m->noom++;
	}
	if (m->noom) {
		int k = 0;

		m->oom = calloc((size_t)m->noom, sizeof(*m->oom));
		if (!m->oom)
			return -1;
		for (int d = 0; d < p->ndevices; d++)
			if (s->dev_peak[d] > usable)
				m->oom[k++] = d;
	}
	m->makespan_ms = makespan;
	m->bubble_ratio = makespan > 0 ? 1 - busy_all / (p->ndevices * makespan) : 0;
	if (m->bubble_ratio < 0)
		m->bubble_ratio = 0;
	m->lower_bound_ms = sim_lower_bound(&p->model, &p->cluster, p->microbatches, p->split_backward);
	m->efficiency = makespan > 0 ? m->lower_bound_ms / makespan : 0;
	if (m->efficiency > 1)
		m->efficiency = 1;
	m->lower_bound_tight_ms = sim_lower_bound_tight(&p->model, &p->cluster, p->microbatches, p->split_backward);
	m->efficiency_tight = makespan > 0 ? m->lower_bound_tight_ms / makespan : 0;
	if (m->efficiency_tight > 1)
		m->efficiency_tight = 1;
	/* every data-parallel replica runs its own microbatches */
	m->throughput_tokens_per_s = makespan > 0
		? (double)plan_parallel(p).dp * p->microbatches * (double)p->model.seq_len * (double)p->model.micro_batch_size /
		  (makespan / 1000)
		: 0;
	return 0;
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
	setup(&c);
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
		return diagnose_deadlock(&c, m, e);
	}
	if (compute_metrics(&c, m) < 0) {
		metrics_release(m);
		return err_set(e, ERR_RUNTIME, "out of host memory computing metrics");
	}
	return 0;
}

/* ---- results ---------------------------------------------------------------------- */

int sim_timeline(const struct sim *s, const struct plan *p, const struct metrics *m,
                 struct timeline *t, struct err *e)
{
	const struct action *ord = p->order;
	const int *ostart = p->order_start;
	int K = plan_ops_per_mb(p);
	long mi = 0;

	memset(t, 0, sizeof(*t));
	t->source = strdup("sim");
	t->ndevices = p->ndevices;
	t->dev = calloc((size_t)p->ndevices, sizeof(*t->dev));
	if (!t->source || !t->dev)
		goto oom;
	for (int d = 0; d < p->ndevices; d++) {
		struct tl_device *td = &t->dev[d];
		int n = ostart[d + 1] - ostart[d], nm = 0;

		td->ops = calloc((size_t)(n ? n : 1), sizeof(*td->ops));
		if (!td->ops)
			goto oom;
		for (int i = 0; i < n; i++) {
			const struct action *a = &ord[ostart[d] + i];
			int k = a->kind == OP_F ? 0 : a->kind == OP_W ? 2 : 1;
			long op = ((long)a->stage * p->microbatches + a->mb) * K + k;

			td->ops[i] = (struct tl_op){ s->start[op], s->end[op], a->stage, a->mb, a->kind };
		}
		td->nops = n;
		/* the order-driven plan lists ops in start order already; keep it sorted anyway */
		for (int i = 1; i < n; i++) {
			struct tl_op x = td->ops[i];
			int j = i;

			while (j > 0 && td->ops[j - 1].start_ms > x.start_ms) {
				td->ops[j] = td->ops[j - 1];
				j--;
			}
			td->ops[j] = x;
		}
		while (mi + nm < s->nmem && s->mem[mi + nm].dev == d)
			nm++;
		td->mem = calloc((size_t)nm + 1, sizeof(*td->mem));
		if (!td->mem)
			goto oom;
		td->mem[0] = (struct tl_mem){ 0, mem_bytes(s->dev_static[d]) };
		for (int i = 0; i < nm; i++)
			td->mem[i + 1] = (struct tl_mem){ s->mem[mi + i].t, mem_bytes(s->mem[mi + i].bytes) };
		td->nmem = nm + 1;
		mi += nm;
		td->peak_mem_bytes = m->dev ? m->dev[d].peak_mem_bytes : 0;
	}
	t->xfers = calloc((size_t)(s->nxfers ? s->nxfers : 1), sizeof(*t->xfers));
	if (!t->xfers)
		goto oom;
	for (long i = 0; i < s->nxfers; i++) {
		const struct sim_xfer *x = &s->xfers[i];

		t->xfers[i] = (struct tl_xfer){ x->src, x->dst, x->stage, x->mb, x->kind,
		                                x->start_ms, x->end_ms, x->bytes };
	}
	t->nxfers = s->nxfers;
	if (m->dev) {
		t->metrics = *m;
		t->metrics.dev = malloc((size_t)m->ndevices * sizeof(*m->dev));
		t->metrics.cycle = NULL;
		t->metrics.ncycle = 0;
		t->metrics.oom = m->noom ? malloc((size_t)m->noom * sizeof(int)) : NULL;
		if (!t->metrics.dev || (m->noom && !t->metrics.oom))
			goto oom;
		memcpy(t->metrics.dev, m->dev, (size_t)m->ndevices * sizeof(*m->dev));
		if (m->noom)
			memcpy(t->metrics.oom, m->oom, (size_t)m->noom * sizeof(int));
		t->has_metrics = true;
	}
	return 0;
oom:
	timeline_release(t);
	return err_set(e, ERR_RUNTIME, "out of host memory building the timeline");
}

int sim_apply_order(const struct sim *s, struct plan *p, struct err *e)
{
	long n = s->order_start[p->ndevices];

	if (n != plan_total_ops(p))
		return err_set(e, ERR_RUNTIME, "the simulated order has %ld ops, the plan %ld", n, plan_total_ops(p));
	memcpy(p->order, s->order, (size_t)n * sizeof(*p->order));
	memcpy(p->order_start, s->order_start, (size_t)(p->ndevices + 1) * sizeof(int));
	return 0;
}
