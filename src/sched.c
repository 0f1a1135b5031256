/*
 * sched — baseline schedules (see sched.h).
 *
 * GPipe, 1F1B, Megatron's interleaved 1F1B, ZB-H1 and DualPipeV are written out by their
 * closed-form orders. ZB-H2 and ZB-V are greedy list schedules under a memory cap, which
 * is how they were derived in the first place: backward before forward, W only when
 * nothing else is ready, and at most as many microbatches in flight per stage as the
 * schedule's memory budget allows (1F1B's p - s for ZB-V, about twice that for ZB-H2).
 * The simulator runs that policy with unit costs and free transfers (the papers' F = B =
 * W), and its start order becomes the plan: a baseline's order never depends on the
 * plan's costs or links, so it is the yardstick its name promises.
 */
#include "config.h"
#include "sched.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static const char *const names[SCHED_COUNT] = {
	"gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2", "zb-v", "dualpipev", "adaptive"
};

const char *sched_name(enum sched_kind k)
{
	return (unsigned)k < SCHED_COUNT ? names[k] : "?";
}

int sched_from_name(const char *name)
{
	for (int k = 0; k < SCHED_COUNT; k++)
		if (strcmp(names[k], name) == 0)
			return k;
	return -1;
}

const char *sched_names(void)
{
	return "gpipe, 1f1b, interleaved, zb-h1, zb-h2, zb-v, dualpipev, adaptive";
}

int sched_default_chunks(enum sched_kind k)
{
	return k == SCHED_INTERLEAVED || k == SCHED_ZBV || k == SCHED_DUALPIPEV ? 2 : 1;
}

bool sched_split_backward(enum sched_kind k)
{
	return k == SCHED_ZBH1 || k == SCHED_ZBH2 || k == SCHED_ZBV || k == SCHED_DUALPIPEV ||
	       k == SCHED_ADAPTIVE;
}

int sched_check(enum sched_kind k, int p, int v, int m, struct err *e)
{
	if (p < 1 || v < 1 || m < 1)
		return err_set(e, ERR_INPUT, "%s needs at least one device, chunk and microbatch", sched_name(k));
	switch (k) {
	case SCHED_GPIPE:
	case SCHED_1F1B:
	case SCHED_ZBH1:
	case SCHED_ZBH2:
		if (v != 1)
			return err_set(e, ERR_INPUT, "%s runs one stage per device (--chunks 1); use interleaved or "
			               "zb-v for several", sched_name(k));
		break;
	case SCHED_INTERLEAVED:
		if (v < 2)
			return err_set(e, ERR_INPUT, "interleaved needs --chunks 2 or more (with 1 it is 1f1b)");
		if (m % p != 0)
			return err_set(e, ERR_INPUT, "interleaved (Megatron's virtual pipeline order) needs the microbatches "
			               "to be a multiple of the %d devices (got %d)", p, m);
		break;
	case SCHED_ZBV:
	case SCHED_DUALPIPEV:
		if (v != 2)
			return err_set(e, ERR_INPUT, "%s places exactly 2 chunks per device in a V (--chunks 2)", sched_name(k));
		if (k == SCHED_DUALPIPEV && m < 2 * p)
			return err_set(e, ERR_INPUT, "dualpipev needs at least 2 microbatches per device (%d for %d devices, got %d)",
			               2 * p, p, m);
		break;
	default:
		break;
	}
	return 0;
}

int sched_device_of(enum sched_kind k, int s, int p, int v)
{
	(void)v;
	if (k == SCHED_ZBV || k == SCHED_DUALPIPEV)
		return s < p ? s : 2 * p - 1 - s;
	return s % p;
}

/* ---- closed-form orders ----------------------------------------------------------- */

struct emitter {
	struct plan *p;
	int *len;
};

static void emit(struct emitter *em, int d, int stage, int kind, int mb)
{
	struct plan *p = em->p;

	p->order[p->order_start[d] + em->len[d]++] = (struct action){ stage, mb, (uint8_t)kind, 0 };
}

/* Backward of stage st, mb: B, or I immediately followed by W. */
static void emit_backward(struct emitter *em, int d, int st, int mb)
{
	if (em->p->split_backward) {
		emit(em, d, st, OP_I, mb);
		emit(em, d, st, OP_W, mb);
	} else {
		emit(em, d, st, OP_B, mb);
	}
}

static void order_gpipe(struct emitter *em, int p, int m)
{
	for (int d = 0; d < p; d++) {
		for (int j = 0; j < m; j++)
			emit(em, d, d, OP_F, j);
		for (int j = 0; j < m; j++)
			emit_backward(em, d, d, j);
	}
}

static void order_1f1b(struct emitter *em, int p, int m)
{
	for (int d = 0; d < p; d++) {
		int warm = p - 1 - d < m ? p - 1 - d : m;

		for (int j = 0; j < warm; j++)
			emit(em, d, d, OP_F, j);
		for (int j = 0; j < m - warm; j++) {
			emit(em, d, d, OP_F, warm + j);
			emit_backward(em, d, d, j);
		}
		for (int j = m - warm; j < m; j++)
			emit_backward(em, d, d, j);
	}
}

/* ZB-H1 (Qi et al., zero bubble, "handcrafted schedule 1"): 1F1B's warm-up and steady
 * state with the backward split, and device d holding back its Ws by d: its W of
 * microbatch j runs after its I of microbatch j + d. Every device then keeps p
 * microbatches' activations at most, as 1F1B does, and the later stages' Ws fill the
 * cool-down bubbles of 1F1B: the iteration is m(F+I+W) + (p-1)(F+I-W) with free transfers,
 * for any F, I, W (tests pin it). The order is fixed: the plan's costs and links do not
 * move it. */
static void order_zbh1(struct emitter *em, int p, int m)
{
	if (!em->p->split_backward) {
		order_1f1b(em, p, m);  /* no W to hold back: exactly 1F1B */
		return;
	}
	for (int d = 0; d < p; d++) {
		int warm = p - 1 - d < m ? p - 1 - d : m, f = 0, i = 0, w = 0;

		for (; f < warm; f++)
			emit(em, d, d, OP_F, f);
		while (i < m) {
			if (f < m)
				emit(em, d, d, OP_F, f++);
			emit(em, d, d, OP_I, i++);
			if (i - w > d)
				emit(em, d, d, OP_W, w++);
		}
		while (w < m)
			emit(em, d, d, OP_W, w++);
	}
}

/* Megatron-LM's virtual pipeline order: microbatches go through the chunks in groups of
 * p; warm-up is (p - d - 1) * 2 + (v - 1) * p forwards, then 1F1B over virtual stages. */
static void order_interleaved(struct emitter *em, int p, int v, int m)
{
	int total = m * v;

	for (int d = 0; d < p; d++) {
		int warm = (p - d - 1) * 2 + (v - 1) * p;

		if (warm > total)
			warm = total;
		for (int k = 0; k < total + total; k++) {
			/* k-th slot: forwards in warm-up, then F/B alternation, then backwards */
			int f, b, is_f;

			if (k < warm) {
				is_f = 1;
				f = k;
				b = -1;
			} else if (k < warm + 2 * (total - warm)) {
				is_f = (k - warm) % 2 == 0;
				f = warm + (k - warm) / 2;
				b = (k - warm) / 2;
			} else {
				is_f = 0;
				f = -1;
				b = (total - warm) + (k - warm - 2 * (total - warm));
			}
			if (is_f) {
				int chunk = (f / p) % v, mb = (f / (p * v)) * p + f % p;

				emit(em, d, chunk * p + d, OP_F, mb);
			} else {
				int chunk = v - 1 - (b / p) % v, mb = (b / (p * v)) * p + b % p;

				emit_backward(em, d, chunk * p + d, mb);
			}
		}
	}
}

/* DualPipeV (DeepSeek's DualPipe folded into a V over p devices): chunk 0 of device d is
 * stage d, chunk 1 is stage 2p-1-d. Eight phases per device; in the steady phase an F of
 * one chunk runs back to back with a B of the other (the overlapped "F&B" pair), and the
 * late backwards defer their W into a queue drained at the end. */
struct wqueue {
	struct action *w;
	int head, tail;
};

/* Marks the last emitted action as overlapped with the next one. */
static void pair_with_next(struct emitter *em, int d)
{
	em->p->order[em->p->order_start[d] + em->len[d] - 1].pair = 1;
}

static void dpv_backward(struct emitter *em, int d, int st, int mb, bool zb, struct wqueue *q)
{
	emit(em, d, st, OP_I, mb);
	if (zb)
		q->w[q->tail++] = (struct action){ st, mb, OP_W, 0 };
	else
		emit(em, d, st, OP_W, mb);
}

static void dpv_weight(struct emitter *em, int d, struct wqueue *q)
{
	struct action a = q->w[q->head++];

	emit(em, d, a.stage, OP_W, a.mb);
}

static int order_dualpipev(struct emitter *em, int p, int m)
{
	struct wqueue q;

	q.w = calloc((size_t)2 * m, sizeof(*q.w));
	if (!q.w)
		return -1;
	for (int d = 0; d < p; d++) {
		int s0 = d, s1 = 2 * p - 1 - d, f0 = 0, f1 = 0, b0 = 0, b1 = 0, n6 = d + 1;
		bool zb = false;

		q.head = q.tail = 0;
		for (int i = 0; i < (p - d - 1) * 2; i++)          /* 1: warm-up forwards of chunk 0 */
			emit(em, d, s0, OP_F, f0++);
		for (int i = 0; i < d + 1; i++) {                  /* 2: F0 F1 */
			emit(em, d, s0, OP_F, f0++);
			emit(em, d, s1, OP_F, f1++);
		}
		for (int i = 0; i < p - d - 1; i++) {              /* 3: B1 W1 F1 */
			dpv_backward(em, d, s1, b1++, true, &q);
			dpv_weight(em, d, &q);
			emit(em, d, s1, OP_F, f1++);
		}
		for (int i = 0; i < m - 2 * p + d + 1; i++) {      /* 4: (F0 & B1) (F1 & B0) */
			emit(em, d, s0, OP_F, f0++);
			if (!(i == 0 && d == p - 1))                /* the last device starts unpaired */
				pair_with_next(em, d);
			dpv_backward(em, d, s1, b1++, false, &q);
			emit(em, d, s1, OP_F, f1++);
			pair_with_next(em, d);
			dpv_backward(em, d, s0, b0++, false, &q);
		}
		for (int i = 0; i < p - d - 1; i++) {              /* 5: B1 (F1 & B0) */
			dpv_backward(em, d, s1, b1++, false, &q);
			emit(em, d, s1, OP_F, f1++);
			pair_with_next(em, d);
			dpv_backward(em, d, s0, b0++, false, &q);
		}
		for (int i = 0; i < n6; i++) {                     /* 6: B1 B0, second half zero-bubble */
			if (i == n6 / 2 && d % 2 == 1)
				zb = true;
			dpv_backward(em, d, s1, b1++, zb, &q);
			if (i == n6 / 2 && d % 2 == 0)
				zb = true;
			dpv_backward(em, d, s0, b0++, zb, &q);
		}
		for (int i = 0; i < p - d - 1; i++) {              /* 7: W B0 */
			dpv_weight(em, d, &q);
			dpv_backward(em, d, s0, b0++, true, &q);
		}
		while (q.head < q.tail)                            /* 8: the remaining Ws */
			dpv_weight(em, d, &q);
	}
	free(q.w);
	return 0;
}

/* ---- policy orders ---------------------------------------------------------------- */

static int order_policy(struct plan *plan, enum sched_kind k, int p, struct err *e)
{
	struct sim s;
	struct sim_opts o;
	struct metrics m;
	int *cap = NULL, r;

	memset(&s, 0, sizeof(s));
	sim_opts_default(&o);
	o.policy_driven = true;
	/* the zero-bubble schedules were derived with F = B = W and free transfers: so is
	 * their order here, whatever the plan's costs and links */
	o.unit_costs = k != SCHED_ADAPTIVE;
	if (k != SCHED_ADAPTIVE) {
		cap = calloc(2 * (size_t)plan->nstages, sizeof(*cap));
		if (!cap)
			return err_set(e, ERR_RUNTIME, "out of host memory");
		o.policy.alternate = false;
		o.policy.backward_first = true;
		for (int st = 0; st < plan->nstages; st++) {
			/* 1F1B's memory: as many microbatches between F and I as stages from here to
			 * the end of the (virtual) pipeline; ZB-H2 allows about twice that */
			int depth = plan->nstages - st;

			cap[st] = k == SCHED_ZBH2 ? 2 * depth - 1 : depth;
			/* Ws put off to fill later bubbles: up to p, enough to cover the cool-down */
			cap[plan->nstages + st] = p;
		}
		o.policy.stage_cap = cap;
		o.policy.w_cap = cap + plan->nstages;
	} else {
		/* OctoPipe's policy: 1F1B-like alternation, never past the device's memory */
		o.policy.alternate = true;
		o.policy.mem_admission = true;
	}
	r = sim_run(&s, plan, &o, &m, e);
	if (r == 0)
		r = sim_apply_order(&s, plan, e);
	metrics_release(&m);
	sim_release(&s);
	free(cap);
	return r;
}

int sched_order(struct plan *plan, enum sched_kind k, int p, int v, struct err *e)
{
	struct emitter em = { plan, NULL };
	int r = 0;

	if (sched_check(k, p, v, plan->microbatches, e) < 0)
		return -1;
	if (k != SCHED_ADAPTIVE && plan->nstages != p * v)
		return err_set(e, ERR_INPUT, "%s with %d devices x %d chunks needs %d stages, the plan has %d",
		               sched_name(k), p, v, p * v, plan->nstages);
	/* device lists are sized by the stages each device holds */
	plan_size_orders(plan, plan_ops_per_mb(plan));
	em.len = calloc((size_t)plan->ndevices, sizeof(int));
	if (!em.len)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	switch (k) {
	case SCHED_GPIPE: order_gpipe(&em, p, plan->microbatches); break;
	case SCHED_1F1B: order_1f1b(&em, p, plan->microbatches); break;
	case SCHED_INTERLEAVED: order_interleaved(&em, p, v, plan->microbatches); break;
	case SCHED_ZBH1: order_zbh1(&em, p, plan->microbatches); break;
	case SCHED_DUALPIPEV:
		if (order_dualpipev(&em, p, plan->microbatches) < 0)
			r = err_set(e, ERR_RUNTIME, "out of host memory");
		break;
	default: r = order_policy(plan, k, p, e); break;
	}
	free(em.len);
	return r;
}
