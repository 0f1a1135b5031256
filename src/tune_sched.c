/*
 * tune_sched — the scheduling phase (docs/METHOD.md §3.3): the list scheduler's knobs, then
 * the order itself.
 *
 * The knobs (F/B alternation or the latest-start priority that fills any placement,
 * deferral of just-arrived ops, warm-up depth, how long W may wait) regenerate the whole
 * order. Past them, a state carries an explicit order and the
 * moves target idle time directly, read off the simulator's per-op times: a later op whose
 * inputs were there moves into a device's gap, an op on the critical path that waited for
 * its device goes ahead of what held it, and each device's warm-up gets one F more or
 * less. The driver keeps a move that keeps the iteration time when the devices finish
 * earlier, so fills that only pay together can build up. A move that only swaps weight
 * gradients of one stage is never simulated: it relabels, and on the measured profiles
 * such moves from the W tails were nine in ten of the order moves tried.
 */
#include "config.h"
#include "tune_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct order_move {
	double score;          /* lower first: minus the idle time it may fill */
	int dev, from, to;     /* positions in the device's list */
	long op, held;         /* the op moved; the op whose gap it targets */
};

static int order_move_cmp(const void *a, const void *b)
{
	const struct order_move *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev - y->dev;
	if (x->from != y->from)
		return x->from - y->from;
	return x->to - y->to;
}

static void order_move_add(struct order_move *mv, int *n, int cap, struct order_move m)
{
	for (int i = 0; i < *n; i++)
		if (mv[i].dev == m.dev && mv[i].from == m.from && mv[i].to == m.to) {
			if (m.score < mv[i].score)
				mv[i].score = m.score;
			return;
		}
	if (*n < cap) {
		mv[(*n)++] = m;
		return;
	}
	/* full: the new move replaces the least promising one if it is better */
	{
		int worst = 0;

		for (int i = 1; i < *n; i++)
			if (mv[i].score > mv[worst].score)
				worst = i;
		if (m.score < mv[worst].score)
			mv[worst] = m;
	}
}

/* The data predecessor of op that arrived last (-1: none). */
static long last_input(const struct tuner *t, long op, int S)
{
	const struct plan *p = &t->eb.work;
	int k = (int)(op % 3), mb = (int)(op / 3 % p->microbatches), st = (int)(op / 3 / p->microbatches);
	long a = -1, b = -1;

	if (k == 0 && st > 0)
		a = sim_op_index(p, st - 1, mb, OP_F);
	if (k == 1) {
		a = sim_op_index(p, st, mb, OP_F);
		if (st + 1 < S)
			b = sim_op_index(p, st + 1, mb, OP_I);
	}
	if (k == 2)
		a = sim_op_index(p, st, mb, OP_I);
	if (b >= 0 && (a < 0 || t->eb.sim.end[b] > t->eb.sim.end[a]))
		a = b;
	return a;
}

static void describe_op(const struct tuner *t, long op, char *out)
{
	struct action a = { (int32_t)(op / 3 / t->eb.work.microbatches), (int32_t)(op / 3 % t->eb.work.microbatches),
	                    (uint8_t)(op % 3 == 0 ? OP_F : op % 3 == 1 ? OP_I : OP_W), 0 };

	action_format(&a, out);
}

/* Whether moving seg[from] to position to only relabels: it and every op it passes are
 * weight gradients of one stage. They take the same time and nothing waits for a W, so
 * the timeline stays as it is (on a W tail the critical path proposes these by the dozen,
 * and each would cost a simulation that cannot gain). */
static bool relabels(const struct action *seg, int from, int to)
{
	int lo = from < to ? from : to, hi = from < to ? to : from;

	for (int k = lo; k <= hi; k++)
		if (seg[k].kind != OP_W || seg[k].stage != seg[from].stage)
			return false;
	return true;
}

/* The order moves of one scheduling round: the current order (ostart, ord), the moves
 * found (mv, ranked later), and the times' tolerance. */
struct ordgen {
	struct tuner *t;
	struct sim *sm;
	const int *ostart;
	const struct action *ord;
	struct order_move *mv;
	int n, cap, D, S;
	long nops;
	double eps;
};

static long op_of(const struct ordgen *g, const struct action *a)
{
	return sim_op_index(&g->t->eb.work, a->stage, a->mb, a->kind);
}

static void add_move(struct ordgen *g, struct order_move m)
{
	order_move_add(g->mv, &g->n, g->cap, m);
}

/* The idle gaps of device d: a later op that could have run in the gap, and the input the
 * gap waited for when its own device held it up. */
static void gap_moves(struct ordgen *g, int d)
{
	struct tuner *t = g->t;
	struct sim *sm = g->sm;
	const int *ostart = g->ostart;
	int len = ostart[d + 1] - ostart[d];

	for (int i = 0; i < len; i++) {
		const struct action *a = &g->ord[ostart[d] + i];
		long x = op_of(g, a), pred;
		double prev_end = i > 0 ? sm->end[op_of(g, a - 1)] : 0, gap = sm->start[x] - prev_end;

		if (gap <= g->eps)
			continue;
		for (int j = i + 1; j < len && j <= i + ORDER_WINDOW; j++) {
			long y = op_of(g, &g->ord[ostart[d] + j]);
			double from = fmax(sm->ready[y], prev_end), fill;

			if (from >= sm->start[x] - g->eps)
				continue;
			fill = fmin(sm->start[x] - from, sm->end[y] - sm->start[y]);
			add_move(g, (struct order_move){ -fill, d, j, i, y, x });
		}
		pred = last_input(t, x, g->S);
		if (pred >= 0 && sm->start[pred] > sm->ready[pred] + g->eps) {
			int pd = t->eb.work.stages[pred / 3 / t->eb.work.microbatches].device;
			int pp = t->pos[pred] - ostart[pd];

			for (int back = 1; back <= 2 && pp - back >= 0; back++)
				add_move(g, (struct order_move){ -gap / (back + 1), pd, pp, pp - back, pred, x });
		}
	}
}

/* Warm-up depth of device d: one F more before its first backward (the device waited in
 * its warm-up) or one fewer (it has forwards to spare). */
static void warmup_moves(struct ordgen *g, int d)
{
	const struct metrics *mt = &g->t->cur_metrics;
	const struct action *seg = g->ord + g->ostart[d];
	int len = g->ostart[d + 1] - g->ostart[d], fb = -1, next_f = -1, last_f = -1;
	double wait = mt->dev && mt->ndevices == g->D ? mt->dev[d].warmup_idle_ms : 0;

	for (int i = 0; i < len; i++) {
		if (seg[i].kind == OP_F && fb < 0)
			last_f = i;
		else if (seg[i].kind != OP_F && fb < 0)
			fb = i;
		else if (seg[i].kind == OP_F && fb >= 0 && next_f < 0)
			next_f = i;
	}
	if (fb < 0)
		return;
	if (next_f >= 0)
		add_move(g, (struct order_move){ -wait, d, next_f, fb, op_of(g, &seg[next_f]), op_of(g, &seg[fb]) });
	/* the last warm-up F after the first backward: moved as the backward ahead of it */
	if (last_f >= 0 && last_f + 1 == fb)
		add_move(g, (struct order_move){ -0.5 * wait, d, fb, last_f, op_of(g, &seg[fb]), op_of(g, &seg[last_f]) });
}

/* The critical path, traced back from the op that ends last: an op on it that waited for
 * its device while its inputs were there goes ahead of what kept it waiting. */
static void critical_moves(struct ordgen *g)
{
	struct tuner *t = g->t;
	struct sim *sm = g->sm;
	const int *ostart = g->ostart;
	long x = -1;
	int guard = 0;

	for (int d = 0; d < g->D; d++)
		if (ostart[d + 1] > ostart[d]) {
			long op = op_of(g, &g->ord[ostart[d + 1] - 1]);

			if (x < 0 || sm->end[op] > sm->end[x])
				x = op;
		}
	while (x >= 0 && guard++ < g->nops) {
		int d = t->eb.work.stages[x / 3 / t->eb.work.microbatches].device, at = t->pos[x] - ostart[d];
		long prev = at > 0 ? op_of(g, &g->ord[t->pos[x] - 1]) : -1;

		if (!(prev >= 0 && sm->end[prev] >= sm->start[x] - g->eps)) {
			x = last_input(t, x, g->S);
			continue;
		}
		/* held by its device */
		for (int back = 1; back <= 3 && at - back >= 0 && sm->ready[x] < sm->start[x] - g->eps; back++) {
			long y = op_of(g, &g->ord[t->pos[x] - back]);

			if (sm->ready[x] >= sm->start[y] + g->eps && back > 1)
				break;  /* its inputs were not there before y either */
			add_move(g, (struct order_move){ -2 * (sm->start[x] - sm->ready[x]) / back, d, at, at - back, x, y });
		}
		x = prev;
	}
}

/* The best ORDER_CANDS moves (those that only relabel W ops skipped) as candidates. */
static void order_cands(struct ordgen *g)
{
	struct tuner *t = g->t;
	struct order_move *mv = g->mv;

	qsort(mv, (size_t)g->n, sizeof(*mv), order_move_cmp);
	for (int i = 0, made = 0; i < g->n && made < ORDER_CANDS; i++) {
		struct cand *c;
		struct action *seg, keep;
		char o1[48], o2[48];

		if (relabels(g->ord + g->ostart[mv[i].dev], mv[i].from, mv[i].to))
			continue;
		made++;
		if (!(c = tune_cand_add(t, &t->cur, MOVE_ORDER, mv[i].dev, mv[i].from)))
			break;
		if (!c->st.order && tune_state_set_order(&c->st, g->D, g->ostart, g->ord) < 0) {
			tune_state_release(&t->cands[--t->ncands].st);
			t->oom = true;
			break;
		}
		seg = c->st.order + c->st.order_start[mv[i].dev];
		keep = seg[mv[i].from];
		if (mv[i].to < mv[i].from)
			memmove(seg + mv[i].to + 1, seg + mv[i].to, (size_t)(mv[i].from - mv[i].to) * sizeof(*seg));
		seg[mv[i].to] = keep;
		describe_op(t, mv[i].op, o1);
		describe_op(t, mv[i].held, o2);
		snprintf(c->what, sizeof(c->what), "gpu %d: %s earlier, into the gap before %s", mv[i].dev, o1, o2);
		c->score = mv[i].score;
		tune_cand_keep(t);
	}
}

/* Moves that target the idle gaps of the current order (docs/METHOD.md §3.3): an op
 * later in a device's list whose inputs were there before the gap ends moves into it (a
 * ready W or F fills a bubble; an F moved ahead of a backward deepens that device's
 * warm-up), and the input a gap waited for moves ahead on its own device when that device
 * kept it waiting. Ranked by the idle time they may fill; the simulator decides. */
static void gen_order(struct tuner *t)
{
	struct ordgen g = { .t = t, .sm = &t->eb.sim, .cap = 4 * ORDER_CANDS + 64, .D = t->cluster->devices,
	                    .S = t->cur.nstages };
	double span = 0;

	if (!t->pos || t->cur_ms > t->best_ms * (1 + ORDER_NEAR))
		return;  /* polish only around the best plan: the order moves are many and small */
	if (!isfinite(tune_eval(t, &t->cur, NULL)))
		return;  /* the op times below are the current state's */
	g.nops = plan_total_ops(&t->eb.work);
	g.ostart = t->cur.order ? t->cur.order_start : g.sm->order_start;
	g.ord = t->cur.order ? t->cur.order : g.sm->order;
	if (g.ostart[g.D] != g.nops)
		return;
	g.mv = malloc((size_t)g.cap * sizeof(*g.mv));
	if (!g.mv) {
		t->oom = true;
		return;
	}
	for (long op = 0; op < g.nops; op++)
		t->pos[op_of(&g, &g.ord[op])] = (int)op;
	for (int d = 0; d < g.D; d++)
		if (g.ostart[d + 1] > g.ostart[d])
			span = fmax(span, g.sm->end[op_of(&g, &g.ord[g.ostart[d + 1] - 1])]);
	g.eps = span * 1e-9;
	for (int d = 0; d < g.D; d++)
		gap_moves(&g, d);
	for (int d = 0; d < g.D; d++)
		warmup_moves(&g, d);
	critical_moves(&g);
	order_cands(&g);
	free(g.mv);
}

/* The knobs that trade memory, offered only where memory binds (tune_impl.h rc_moves):
 * how many stages recompute and which (from none, the stages where it frees the most
 * memory per ms of forward redone; or the earliest, which hold their activations
 * longest), and how far the early stages run ahead (a share of each stage's 1F1B depth:
 * with memory to spare they run far ahead to fill the pipeline, and where it is short that
 * memory is better left to the stages after them). Writes at most 6 variants. */
static int memory_variants(const struct tuner *t, const struct tune_sched *cur, struct tune_sched *v,
                           const char **names)
{
	int S = t->cur.nstages, rc = cur->rc < S ? cur->rc : S, jump = S / 4 > 2 ? S / 4 : 2, n = 0;
	int q = tune_depth_quarters(cur);

	if (rc < S) {
		v[n] = *cur; v[n].rc = rc + 1; v[n].rc_ranked = rc == 0 || cur->rc_ranked;
		names[n++] = "one more stage recomputes (memory for more in flight)";
	}
	if (rc > 0) {
		v[n] = *cur; v[n].rc = rc - 1; v[n].rc_ranked = rc > 1 && cur->rc_ranked;
		names[n++] = "one stage fewer recomputes";
	}
	if (rc + jump <= S) {
		v[n] = *cur; v[n].rc = rc + jump; v[n].rc_ranked = rc == 0 || cur->rc_ranked;
		names[n++] = "more stages recompute";
	}
	v[n] = *cur; v[n].rc = rc > 0 ? rc : jump; v[n].rc_ranked = rc > 0 && !cur->rc_ranked;
	names[n] = v[n].rc_ranked ? "recompute where it frees the most memory per ms"
	                          : "the earliest stages recompute instead";
	n++;
	if (q > 1) {
		v[n] = *cur; v[n].depth_q = q - 1;
		names[n++] = "the early stages run less far ahead (memory for the later ones)";
	}
	if (q < 4) {
		v[n] = *cur; v[n].depth_q = q + 1 < 4 ? q + 1 : 0;
		names[n++] = "the early stages run further ahead";
	}
	return n;
}

void tune_gen_scheduling(struct tuner *t)
{
	int D = t->cluster->devices;
	const struct tune_sched cur = t->cur.sched;
	struct tune_sched variants[24];
	const char *names[24];
	int n = 0;

	variants[n] = cur; variants[n].alternate = !cur.alternate;
	names[n++] = cur.alternate ? "backward first instead of F/B alternation" : "alternate F and B (1F1B-like)";
	variants[n] = cur; variants[n].defer_arrivals = !cur.defer_arrivals;
	names[n++] = cur.defer_arrivals ? "stop deferring just-arrived ops" : "defer just-arrived ops to overlap transfers";
	variants[n] = cur; variants[n].cap_extra = cur.cap_extra + 1;
	names[n++] = "one more microbatch in flight per stage (deeper warm-up)";
	variants[n] = cur; variants[n].cap_extra = cur.cap_extra + 2;
	names[n++] = "two more microbatches in flight per stage";
	if (cur.cap_extra > -2) {
		variants[n] = cur; variants[n].cap_extra = cur.cap_extra - 1;
		names[n++] = "one microbatch fewer in flight per stage";
	}
	variants[n] = cur; variants[n].cap_extra = cur.cap_extra + t->cur.nstages;
	names[n++] = "let memory alone cap the warm-up";
	variants[n] = cur; variants[n].wcap = D;
	names[n++] = "W fills bubbles, at most one pipeline depth deferred";
	variants[n] = cur; variants[n].wcap = 2 * D;
	names[n++] = "W fills bubbles, up to two pipeline depths deferred";
	variants[n] = cur; variants[n].wcap = 0;
	names[n++] = "W only when nothing else is ready";
	variants[n] = cur; variants[n].wcap = 1;
	names[n++] = "W right after its I";
	if (cur.lst == 0) {
		static const int lst[] = { 2, 4, 6 };

		for (int i = 0; i < 3; i++) {
			variants[n] = cur; variants[n].lst = lst[i];
			names[n++] = "latest-start priority (any placement)";
		}
	} else {
		variants[n] = cur; variants[n].lst = 0;
		names[n++] = "alternation instead of latest-start priority";
		variants[n] = cur; variants[n].lst = cur.lst + 1;
		names[n++] = "latest start: microbatches due further apart";
		if (cur.lst > 1) {
			variants[n] = cur; variants[n].lst = cur.lst - 1;
			names[n++] = "latest start: microbatches due closer together";
		}
	}
	if (t->rc_moves)
		n = memory_variants(t, &cur, variants + n, names + n) + n;
	/* where memory binds, how much room a device's early stages leave for its later ones
	 * (sim_policy.reserve: a V's or a loop's early chunk can otherwise fill the device
	 * before its late chunk takes a microbatch back) */
	if (t->mem_binds && cur.reserve < TUNE_MAX_RESERVE) {
		variants[n] = cur; variants[n].reserve = cur.reserve + 1;
		names[n++] = "each device keeps room for its later stages' microbatches";
	}
	if (t->mem_binds && cur.reserve > 0) {
		variants[n] = cur; variants[n].reserve = cur.reserve - 1;
		names[n++] = "less room kept for the later stages";
	}
	for (int i = 0; i < n; i++) {
		struct cand *c = tune_cand_add(t, &t->cur, MOVE_SCHED, i, 0);

		if (!c)
			return;
		c->st.sched = variants[i];
		tune_state_drop_order(&c->st);
		snprintf(c->what, sizeof(c->what), "%s", names[i]);
		tune_cand_keep(t);
	}
	gen_order(t);
}

