/*
 * test_edit — plan edits keep plans valid and undo exactly: stage boundaries, moving a
 * stage to another device, moving ops in a device's order (including into a deadlock),
 * regenerating the order, adopting another plan, and thousands of undo/redo steps. Also
 * what an op waited for and the critical path.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edit.h"
#include "explain.h"
#include "json.h"
#include "sim.h"
#include "synth.h"
#include "../tap.h"

static bool same(const struct plan *a, const struct plan *b)
{
	if (a->nstages != b->nstages || a->split_backward != b->split_backward)
		return false;
	for (int s = 0; s < a->nstages; s++)
		if (memcmp(&a->stages[s], &b->stages[s], sizeof(a->stages[s])) != 0)
			return false;
	for (int d = 0; d <= a->ndevices; d++)
		if (a->order_start[d] != b->order_start[d])
			return false;
	for (long i = 0; i < plan_total_ops(a); i++)
		if (memcmp(&a->order[i], &b->order[i], sizeof(a->order[i])) != 0)
			return false;
	return true;
}

/* The plan passes the loader's validation after a round trip through JSON. */
static bool valid(const struct plan *p, char *why, size_t n)
{
	cJSON *j = plan_to_json(p, true);
	struct plan q;
	struct err e = ERR_INIT;
	int r = plan_from_json(&q, j, "edited", NULL, &e);

	cJSON_Delete(j);
	snprintf(why, n, "%s", e.msg);
	if (r == 0)
		plan_release(&q);
	return r == 0;
}

static void make(struct plan *p, enum sched_kind k, int devs, int mbs)
{
	struct model m;
	struct cluster c;
	struct err e = ERR_INIT;
	struct baseline_spec spec = { k, mbs, 0, "uniform", NULL, 0, 0, NULL };

	synth_model(&m, 4 * devs, 1, 1, 0.5);
	for (int l = 0; l < m.nlayers; l++)
		m.layers[l].out_bytes = 1000000;
	synth_cluster(&c, devs, 8, 100, 5);
	if (baseline_plan(p, &m, NULL, &c, NULL, &spec, &e) < 0)
		printf("# %s\n", e.msg);
	model_release(&m);
	cluster_release(&c);
}

static double run(struct sim *s, const struct plan *p, struct metrics *m, struct err *e)
{
	struct sim_opts o;
	int r;

	sim_opts_default(&o);
	o.record = true;
	r = sim_run(s, p, &o, m, e);
	return r < 0 ? -1 : m->makespan_ms;
}

/* Boundaries (undo, redo, the redo stack) and placement (with and without the ops' times). */
static void test_boundaries_and_placement(struct edit_hist *h, struct plan *p, const struct plan *orig, struct sim *s,
                                          long id0)
{
	struct err e = ERR_INIT;
	char what[200], why[1024];
	struct metrics m;

	/* boundaries */
	{
		struct edit ed = { EDIT_BOUNDARY, 1, 0, 0, 1, NULL, NULL, NULL };

		ok(edit_apply(h, p, &ed, what, sizeof(what), &e) == 0, "a boundary moves");
		is_int(p->stages[1].last, 8, "stage 1 takes a layer");
		is_int(p->stages[2].first, 9, "from stage 2");
		is_str(what, "stage 1 now ends at layer 8, stage 2 starts at layer 9", "and says so");
		ok(edit_state(h) != id0, "the state changes");
		ok(valid(p, why, sizeof(why)), "the plan stays valid %s", why);
		ok(edit_undo(h, p, what, sizeof(what)) == 0 && same(p, orig), "undo restores it exactly");
		is_int(edit_state(h), id0, "and the state is the original again");
		is_str(what, "stage 1 now ends at layer 8, stage 2 starts at layer 9", "undo names the edit undone");
		ok(edit_redo(h, p, what, sizeof(what)) == 0 && p->stages[1].last == 8, "redo applies it again");
		ok(edit_undo(h, p, NULL, 0) == 0, "and undo again");
	}
	{
		struct edit ed = { EDIT_BOUNDARY, 0, 0, 0, -1, NULL, NULL, NULL };
		int k = 0;

		while (edit_apply(h, p, &ed, what, sizeof(what), &e) == 0)
			k++;
		is_int(k, 3, "stage 0 gives layers away until one is left");
		ok(strstr(e.msg, "one layer left") != NULL, "then the edit is refused: %s", e.msg);
		ed.stage = 3;
		ok(edit_apply(h, p, &ed, what, sizeof(what), &e) < 0, "the last stage has no boundary after it");
		for (int i = 0; i < k; i++)
			edit_undo(h, p, NULL, 0);
		ok(same(p, orig), "undo walks back through all of them");
		is_int(edit_redo(h, p, NULL, 0), 0, "redo is possible after undo");
	}
	{
		struct edit ed = { EDIT_BOUNDARY, 2, 0, 0, 1, NULL, NULL, NULL };

		edit_apply(h, p, &ed, NULL, 0, &e);
		is_int(h->nredo, 0, "a new edit clears the redo stack");
		while (edit_undo(h, p, NULL, 0) == 0)
			;
		ok(same(p, orig), "undo back to the start");
	}

	/* placement */
	{
		struct edit ed = { EDIT_PLACE, 3, 1, 0, 0, NULL, NULL, NULL };
		double t, *times = malloc((size_t)plan_total_ops(p) * sizeof(double));

		run(s, p, &m, &e);
		metrics_release(&m);
		memcpy(times, s->start, (size_t)plan_total_ops(p) * sizeof(double));
		ed.times = times;

		ok(edit_apply(h, p, &ed, what, sizeof(what), &e) == 0, "stage 3 moves to device 1: %s", what);
		is_int(p->stages[3].device, 1, "it is on device 1");
		is_int(p->order_start[4] - p->order_start[3], 0, "device 3 runs nothing");
		is_int(p->order_start[2] - p->order_start[1], 2 * 8 * 2, "device 1 runs both stages' ops");
		ok(valid(p, why, sizeof(why)), "the plan stays valid %s", why);
		t = run(s, p, &m, &e);
		ok(t > 0, "and it runs (%.2f ms)", t);
		metrics_release(&m);
		ed.device = 1;
		ok(edit_apply(h, p, &ed, what, sizeof(what), &e) < 0, "moving it where it is is refused");
		ed.device = 9;
		ok(edit_apply(h, p, &ed, what, sizeof(what), &e) < 0 && strstr(e.msg, "no gpu 9"), "to a missing device too");
		edit_undo(h, p, NULL, 0);
		ok(same(p, orig), "undo puts it back");
		ed.times = NULL;
		ed.device = 1;
		ok(edit_apply(h, p, &ed, what, sizeof(what), &e) == 0, "without times the ops merge by position");
		ok(valid(p, why, sizeof(why)), "into a valid plan %s", why);
		edit_undo(h, p, NULL, 0);
		free(times);
	}
}

/* Op order into a deadlock and out; regenerating by policy and adopting another plan. */
static void test_order_and_adopt(struct edit_hist *h, struct plan *p, const struct plan *orig, struct sim *s)
{
	struct err e = ERR_INIT;
	char what[200], why[1024];
	struct metrics m;

	/* op order, into a deadlock and out */
	{
		int d = 1, n = p->order_start[d + 1] - p->order_start[d], pos = -1, moves = 0;
		double base = run(s, p, &m, &e);

		metrics_release(&m);
		for (int i = 0; i < n; i++)
			if (p->order[p->order_start[d] + i].kind != OP_F && pos < 0)
				pos = i;
		ok(pos > 0, "device 1's first backward is at %d", pos);
		{
			struct edit ed = { EDIT_MOVE_OP, 0, d, pos, -1, NULL, NULL, NULL };

			while (edit_apply(h, p, &ed, what, sizeof(what), &e) == 0) {
				moves++;
				ed.pos--;
			}
		}
		is_int(moves, pos, "the backward moves to the front one place at a time");
		ok(strstr(e.msg, "is first on gpu 1 already") != NULL, "and no further: %s", e.msg);
		ok(valid(p, why, sizeof(why)), "the order is still a valid plan %s", why);
		ok(run(s, p, &m, &e) < 0 && e.cls == ERR_INFEASIBLE, "but it deadlocks: %s", e.msg);
		ok(m.ncycle > 0, "with a cycle of %d ops", m.ncycle);
		metrics_release(&m);
		while (moves--)
			edit_undo(h, p, NULL, 0);
		ok(same(p, orig), "undo restores the order");
		is_dbl(run(s, p, &m, &e), base, 1e-9, "and the iteration time");
		metrics_release(&m);
	}
	{
		struct edit ed = { EDIT_MOVE_OP, 0, 0, p->order_start[1] - p->order_start[0] - 1, 1, NULL, NULL, NULL };

		ok(edit_apply(h, p, &ed, what, sizeof(what), &e) < 0, "the last op cannot move later");
	}

	/* regenerate by policy, adopt another plan */
	{
		struct edit ed = { EDIT_REORDER, 0, 0, 0, 0, NULL, NULL, NULL };
		struct plan zb;
		double t1, t2;

		ok(edit_apply(h, p, &ed, what, sizeof(what), &e) == 0, "reorder by the adaptive policy %s", e.msg);
		ok(valid(p, why, sizeof(why)), "gives a valid plan %s", why);
		t1 = run(s, p, &m, &e);
		metrics_release(&m);
		ok(t1 > 0, "that runs (%.2f ms)", t1);
		make(&zb, SCHED_ZBH1, 4, 8);
		{
			struct edit r = { EDIT_REPLACE, 0, 0, 0, 0, &zb, "zb-h1", NULL };

			ok(edit_apply(h, p, &r, what, sizeof(what), &e) == 0, "adopt a zb-h1 plan: %s", what);
		}
		ok(p->split_backward && plan_total_ops(p) == 4 * 8 * 3, "with its split backward");
		t2 = run(s, p, &m, &e);
		metrics_release(&m);
		ok(t2 > 0, "it runs (%.2f ms)", t2);
		edit_undo(h, p, NULL, 0);
		ok(!p->split_backward && plan_total_ops(p) == 4 * 8 * 2, "undo brings back the fused backward");
		{
			/* a plan whose stages all recompute keeps that over an adopted plan saying nothing */
			struct edit r = { EDIT_REPLACE, 0, 0, 0, 0, &zb, "zb-h1", NULL };
			bool all = true;

			plan_set_recompute(p, RECOMPUTE_FULL);
			ok(edit_apply(h, p, &r, what, sizeof(what), &e) == 0, "adopt over a recomputing plan");
			for (int i = 0; i < p->nstages; i++)
				all &= p->stages[i].recompute == RECOMPUTE_FULL;
			ok(all, "the adopted stages keep the plan's recompute");
			edit_undo(h, p, NULL, 0);
			plan_set_recompute(p, RECOMPUTE_NONE);
		}
		edit_undo(h, p, NULL, 0);
		ok(same(p, orig), "and the original order");
		plan_release(&zb);
	}
}

/* Unlimited history; what an op waited for and the critical path. */
static void test_history_and_explain(struct edit_hist *h, struct plan *p, const struct plan *orig, struct sim *s,
                                     long id0)
{
	struct err e = ERR_INIT;
	struct metrics m;

	/* unlimited history */
	{
		struct edit a = { EDIT_BOUNDARY, 1, 0, 0, 1, NULL, NULL, NULL }, b = { EDIT_BOUNDARY, 1, 0, 0, -1, NULL, NULL, NULL };
		int n = 0;

		for (int i = 0; i < 2000; i++)
			n += edit_apply(h, p, i % 2 ? &b : &a, NULL, 0, &e) == 0;
		is_int(n, 2000, "2000 edits");
		n = 0;
		while (edit_undo(h, p, NULL, 0) == 0)
			n++;
		ok(n >= 2000, "and as many undos (%d)", n);
		ok(same(p, orig), "back to the original");
		is_int(edit_state(h), id0, "in the original state");
	}

	/* what an op waited for, and the critical path */
	{
		long *pos = malloc((size_t)plan_total_ops(p) * sizeof(*pos)), *path, n;
		struct op_wait w;
		struct action a1 = { 1, 0, OP_F, 0 }, a0 = { 0, 0, OP_F, 0 }, a2 = { 0, 1, OP_F, 0 };

		run(s, p, &m, &e);
		explain_positions(p, pos);
		explain_wait(s, p, pos, &a0, &w);
		is_int(w.kind, WAIT_NONE, "0F0 starts at once");
		explain_wait(s, p, pos, &a1, &w);
		is_int(w.kind, WAIT_DATA, "1F0 waits for data");
		ok(w.on.stage == 0 && w.on.mb == 0 && w.on.kind == OP_F && w.transfer, "from 0F0, over the link");
		explain_wait(s, p, pos, &a2, &w);
		is_int(w.kind, WAIT_DEVICE, "0F1 waits for its device");
		path = malloc((size_t)plan_total_ops(p) * sizeof(*path));
		n = explain_critical_path(s, p, pos, path, plan_total_ops(p));
		ok(n > 1, "the critical path has %ld ops", n);
		{
			const struct action *last = &p->order[path[0]], *first = &p->order[path[n - 1]];
			long lo = sim_op_index(p, last->stage, last->mb, last->kind);

			is_dbl(s->end[lo], m.makespan_ms, 1e-9, "it ends with the iteration");
			ok(first->stage == 0 && first->mb == 0 && first->kind == OP_F, "and starts at 0F0");
		}
		metrics_release(&m);
		free(path);
		free(pos);
	}
}

int main(void)
{
	struct plan p, orig;
	struct edit_hist h;
	struct sim s;
	long id0;

	memset(&s, 0, sizeof(s));
	make(&p, SCHED_1F1B, 4, 8);
	make(&orig, SCHED_1F1B, 4, 8);
	edit_hist_init(&h);
	id0 = edit_state(&h);

	test_boundaries_and_placement(&h, &p, &orig, &s, id0);
	test_order_and_adopt(&h, &p, &orig, &s);
	test_history_and_explain(&h, &p, &orig, &s, id0);

	edit_hist_release(&h);
	sim_release(&s);
	plan_release(&p);
	plan_release(&orig);
	return tap_done();
}
