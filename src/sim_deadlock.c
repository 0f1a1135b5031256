/*
 * sim_deadlock — why a simulated run stopped before every op ran: the wait-for cycle
 * between devices (each waiting for an op another device holds back) or the op nothing
 * can produce, named in one message the CLI and UI print.
 */
#include "config.h"
#include "sim_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

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

int sim_diagnose_deadlock(struct ctx *c, struct metrics *m, struct err *e)
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
