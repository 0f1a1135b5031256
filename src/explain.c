/*
 * explain — what each op waited for, and the critical path (see explain.h).
 *
 * No dependency edges are stored anywhere: an op's data predecessors follow from its
 * stage, microbatch and kind (as in the simulator), and its device predecessor is the
 * entry before it in its device's list. An op started either when its device became
 * free or when its last input arrived; whichever was later is what it waited for.
 */
#include "config.h"
#include "explain.h"

#include <math.h>
#include <string.h>

#define EPS 1e-9

void explain_positions(const struct plan *p, long *pos)
{
	for (int d = 0; d < p->ndevices; d++)
		for (int i = p->order_start[d]; i < p->order_start[d + 1]; i++) {
			const struct action *a = &p->order[i];

			pos[sim_op_index(p, a->stage, a->mb, a->kind)] = i;
		}
}

/* Data predecessors of a: up to two. */
static int preds(const struct plan *p, const struct action *a, struct action *out)
{
	int n = 0;
	uint8_t back = p->split_backward ? OP_I : OP_B;

	switch (a->kind) {
	case OP_F:
		if (a->stage > 0)
			out[n++] = (struct action){ a->stage - 1, a->mb, OP_F, 0 };
		break;
	case OP_I:
	case OP_B:
		out[n++] = (struct action){ a->stage, a->mb, OP_F, 0 };
		if (a->stage + 1 < p->nstages)
			out[n++] = (struct action){ a->stage + 1, a->mb, back, 0 };
		break;
	default:
		out[n++] = (struct action){ a->stage, a->mb, OP_I, 0 };
		break;
	}
	return n;
}

static int device_of(const struct plan *p, const struct action *a)
{
	return p->stages[a->stage].device;
}

void explain_wait(const struct sim *s, const struct plan *p, const long *pos, const struct action *a,
                  struct op_wait *w)
{
	long op = sim_op_index(p, a->stage, a->mb, a->kind), i = pos[op];
	int d = device_of(p, a);
	double start = s->start[op], prev_end = 0;
	struct action pr[2];
	int np = preds(p, a, pr), best = -1;
	double best_end = -1;

	memset(w, 0, sizeof(*w));
	if (i > p->order_start[d]) {
		const struct action *b = &p->order[i - 1];

		prev_end = s->end[sim_op_index(p, b->stage, b->mb, b->kind)];
		if (prev_end > start)   /* the second op of an overlapped pair */
			prev_end = start;
	}
	for (int k = 0; k < np; k++) {
		double e = s->end[sim_op_index(p, pr[k].stage, pr[k].mb, pr[k].kind)];

		if (e > best_end) {
			best_end = e;
			best = k;
		}
	}
	w->idle_ms = start - prev_end > EPS ? start - prev_end : 0;
	if (start <= EPS) {
		w->kind = WAIT_NONE;
		return;
	}
	if (i > p->order_start[d] && (best < 0 || prev_end >= start - EPS)) {
		w->kind = WAIT_DEVICE;
		w->on = p->order[i - 1];
		w->on.pair = 0;
		w->device = d;
		w->until_ms = prev_end;
		return;
	}
	if (best < 0) {
		w->kind = WAIT_NONE;
		return;
	}
	w->kind = WAIT_DATA;
	w->on = pr[best];
	w->device = device_of(p, &pr[best]);
	w->transfer = w->device != d;
	w->until_ms = start;
}

long explain_critical_path(const struct sim *s, const struct plan *p, const long *pos, long *path, long cap)
{
	long total = plan_total_ops(p), n = 0, cur = -1;
	double last = -1;

	for (long i = 0; i < total; i++) {
		const struct action *a = &p->order[i];
		double e = s->end[sim_op_index(p, a->stage, a->mb, a->kind)];

		if (e > last) {
			last = e;
			cur = i;
		}
	}
	while (cur >= 0 && n < cap && n < total) {
		struct op_wait w;

		path[n++] = cur;
		explain_wait(s, p, pos, &p->order[cur], &w);
		if (w.kind == WAIT_NONE)
			break;
		cur = pos[sim_op_index(p, w.on.stage, w.on.mb, w.on.kind)];
	}
	return n;
}
