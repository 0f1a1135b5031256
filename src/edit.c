/*
 * edit — plan edits and their undo/redo history (see edit.h).
 *
 * Undo and redo move snapshots, they do not copy them: the plan's current arrays go on
 * one stack and the other stack's top becomes the plan. Only edit_apply() copies, once,
 * before it changes anything, so a failed edit restores the plan by swapping back.
 */
#include "config.h"
#include "edit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"
#include "sim.h"
#include "vec.h"

void edit_hist_init(struct edit_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->next_id = 1;
}

static void snap_release(struct plan_snap *s)
{
	free(s->stages);
	free(s->order_start);
	free(s->order);
	free(s->name);
	memset(s, 0, sizeof(*s));
}

void edit_hist_release(struct edit_hist *h)
{
	for (int i = 0; i < h->nundo; i++)
		snap_release(&h->undo[i]);
	for (int i = 0; i < h->nredo; i++)
		snap_release(&h->redo[i]);
	free(h->undo);
	free(h->redo);
	edit_hist_init(h);
}

/* Hands p's editable arrays to s (p's pointers are left dangling: the caller refills). */
static void snap_move_from(struct plan_snap *s, struct plan *p, long id)
{
	s->nstages = p->nstages;
	s->stages = p->stages;
	s->split_backward = p->split_backward;
	s->comm = p->comm;
	s->order_start = p->order_start;
	s->order = p->order;
	s->name = p->name;
	s->id = id;
	s->what[0] = '\0';
}

static void snap_move_to(struct plan_snap *s, struct plan *p)
{
	p->nstages = s->nstages;
	p->stages = s->stages;
	p->split_backward = s->split_backward;
	p->comm = s->comm;
	p->order_start = s->order_start;
	p->order = s->order;
	p->name = s->name;
	s->stages = NULL;
	s->order_start = NULL;
	s->order = NULL;
	s->name = NULL;
}

static int snap_copy(struct plan_snap *s, const struct plan *p)
{
	long nops = plan_total_ops(p);

	memset(s, 0, sizeof(*s));
	s->nstages = p->nstages;
	s->split_backward = p->split_backward;
	s->comm = p->comm;
	s->stages = malloc((size_t)p->nstages * sizeof(*s->stages));
	s->order_start = malloc((size_t)(p->ndevices + 1) * sizeof(*s->order_start));
	s->order = malloc((size_t)(nops ? nops : 1) * sizeof(*s->order));
	s->name = p->name ? strdup(p->name) : NULL;
	if (!s->stages || !s->order_start || !s->order || (p->name && !s->name)) {
		snap_release(s);
		return -1;
	}
	memcpy(s->stages, p->stages, (size_t)p->nstages * sizeof(*s->stages));
	memcpy(s->order_start, p->order_start, (size_t)(p->ndevices + 1) * sizeof(*s->order_start));
	memcpy(s->order, p->order, (size_t)nops * sizeof(*s->order));
	return 0;
}

static int push(struct plan_snap **arr, int *n, int *cap, struct plan_snap *s)
{
	if (vec_reserve(arr, cap, *n + 1L, sizeof(**arr)) < 0)
		return -1;
	(*arr)[(*n)++] = *s;
	return 0;
}

/* ---- the edits ---------------------------------------------------------------------- */

static int do_boundary(struct plan *p, int s, int delta, char *what, size_t n, struct err *e)
{
	struct stage *a, *b;

	if (s < 0 || s >= p->nstages - 1)
		return err_set(e, ERR_INPUT, "stage %d has no boundary after it (the plan has %d stages)", s, p->nstages);
	a = &p->stages[s];
	b = &p->stages[s + 1];
	if (delta > 0 && b->first == b->last)
		return err_set(e, ERR_INPUT, "stage %d has one layer left and cannot give it to stage %d", s + 1, s);
	if (delta < 0 && a->first == a->last)
		return err_set(e, ERR_INPUT, "stage %d has one layer left and cannot give it to stage %d", s, s + 1);
	a->last += delta > 0 ? 1 : -1;
	b->first += delta > 0 ? 1 : -1;
	snprintf(what, n, "stage %d now ends at layer %d, stage %d starts at layer %d", s, a->last, s + 1, b->first);
	return 0;
}

static double op_time(const struct plan *p, const double *times, const struct action *a)
{
	return times[sim_op_index(p, a->stage, a->mb, a->kind)];
}

/* Moves stage s to device d. d's list keeps its order; the stage's ops are merged into
 * it by their start times in the last run (every input of an op ended before it started,
 * so the merged lists still follow one global time order and cannot deadlock), or else
 * at the relative position they had on the old device. A pair (overlapped ops) that
 * would be split loses its overlap. */
static int do_place(struct plan *p, int s, int d, const double *times, char *what, size_t n, struct err *e)
{
	int old, *ostart;
	struct action *ord;
	long total = plan_total_ops(p), k = 0;

	if (s < 0 || s >= p->nstages)
		return err_set(e, ERR_INPUT, "there is no stage %d (the plan has %d)", s, p->nstages);
	if (d < 0 || d >= p->ndevices)
		return err_set(e, ERR_INPUT, "there is no gpu %d (the cluster has %d)", d, p->ndevices);
	old = p->stages[s].device;
	if (old == d)
		return err_set(e, ERR_INPUT, "stage %d is on gpu %d already", s, d);
	ostart = malloc((size_t)(p->ndevices + 1) * sizeof(*ostart));
	ord = malloc((size_t)(total ? total : 1) * sizeof(*ord));
	if (!ostart || !ord) {
		free(ostart);
		free(ord);
		return err_set(e, ERR_RUNTIME, "out of host memory");
	}
	for (int dev = 0; dev < p->ndevices; dev++) {
		int a = p->order_start[dev], b = p->order_start[dev + 1];

		ostart[dev] = (int)k;
		if (dev == old) {
			for (int i = a; i < b; i++) {
				struct action x = p->order[i];

				if (x.stage == s)
					continue;
				if (x.pair && (i + 1 >= b || p->order[i + 1].stage == s))
					x.pair = 0;
				ord[k++] = x;
			}
		} else if (dev == d) {
			int oa = p->order_start[old], ob = p->order_start[old + 1], len_old = ob - oa;
			int len = b - a, i = a, j = oa;

			while (i < b || j < ob) {
				/* next moved op of stage s on the old device */
				while (j < ob && p->order[j].stage != s)
					j++;
				if (j < ob && (i >= b || (times ? op_time(p, times, &p->order[j]) < op_time(p, times, &p->order[i]) :
				                        (double)(j - oa) / len_old <= (double)(i - a) / (len ? len : 1)))) {
					ord[k] = p->order[j++];
					ord[k++].pair = 0;
				} else if (i < b) {
					ord[k++] = p->order[i];
					if (p->order[i].pair && i + 1 < b)
						ord[k++] = p->order[++i];
					i++;
				}
			}
		} else {
			memcpy(ord + k, p->order + a, (size_t)(b - a) * sizeof(*ord));
			k += b - a;
		}
	}
	ostart[p->ndevices] = (int)k;
	free(p->order);
	free(p->order_start);
	p->order = ord;
	p->order_start = ostart;
	p->stages[s].device = d;
	snprintf(what, n, "stage %d moved from gpu %d to gpu %d", s, old, d);
	return 0;
}

static int do_move_op(struct plan *p, int d, int pos, int delta, char *what, size_t n, struct err *e)
{
	int a, len, i, j;
	char t1[ACTION_TEXT_MAX], t2[ACTION_TEXT_MAX];
	struct action tmp;

	if (d < 0 || d >= p->ndevices)
		return err_set(e, ERR_INPUT, "there is no gpu %d", d);
	a = p->order_start[d];
	len = p->order_start[d + 1] - a;
	if (pos < 0 || pos >= len)
		return err_set(e, ERR_INPUT, "gpu %d has no op at position %d", d, pos);
	j = pos + (delta < 0 ? -1 : 1);
	if (j < 0)
		return err_set(e, ERR_INPUT, "%s is first on gpu %d already", action_format(&p->order[a + pos], t1), d);
	if (j >= len)
		return err_set(e, ERR_INPUT, "%s is last on gpu %d already", action_format(&p->order[a + pos], t1), d);
	i = a + (pos < j ? pos : j);
	/* an overlapped pair touching the swap is split */
	if (i > a)
		p->order[i - 1].pair = 0;
	p->order[i].pair = 0;
	p->order[i + 1].pair = 0;
	tmp = p->order[a + pos];
	p->order[a + pos] = p->order[a + j];
	p->order[a + j] = tmp;
	snprintf(what, n, "%s moved %s %s on gpu %d", action_format(&tmp, t1), delta < 0 ? "before" : "after",
	         action_format(&p->order[a + pos], t2), d);
	return 0;
}

static int do_reorder(struct plan *p, char *what, size_t n, struct err *e)
{
	if (sched_order(p, SCHED_ADAPTIVE, p->ndevices, 1, e) < 0)
		return -1;
	snprintf(what, n, "every gpu's order regenerated by the adaptive policy");
	return 0;
}

static int do_replace(struct plan *p, const struct plan *q, const char *label, char *what, size_t n,
                      struct err *e)
{
	struct plan_snap s;
	struct plan tmp;

	if (q->model.nlayers != p->model.nlayers)
		return err_set(e, ERR_INPUT, "'%s' is of a model of %d layers, this plan's has %d", label ? label : "the plan",
		               q->model.nlayers, p->model.nlayers);
	if (q->ndevices != p->ndevices)
		return err_set(e, ERR_INPUT, "'%s' is on %d devices, this plan on %d", label ? label : "the plan",
		               q->ndevices, p->ndevices);
	if (q->microbatches != p->microbatches)
		return err_set(e, ERR_INPUT, "'%s' has %d microbatches, this plan %d", label ? label : "the plan",
		               q->microbatches, p->microbatches);
	if (snap_copy(&s, q) < 0)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	memset(&tmp, 0, sizeof(tmp));
	snap_move_to(&s, &tmp);
	{
		/* a plan whose stages all recompute one way (a layout's choice) keeps that mode
		 * over an adopted plan that says nothing of it (the tuner's and the baselines') */
		int mode = p->nstages ? p->stages[0].recompute : RECOMPUTE_NONE;
		bool uniform = true, none = true;

		for (int i = 0; i < p->nstages; i++)
			uniform &= p->stages[i].recompute == mode;
		for (int i = 0; i < tmp.nstages; i++)
			none &= tmp.stages[i].recompute == RECOMPUTE_NONE;
		if (uniform && none)
			for (int i = 0; i < tmp.nstages; i++)
				tmp.stages[i].recompute = mode;
	}
	free(p->stages);
	free(p->order_start);
	free(p->order);
	free(p->name);
	p->nstages = tmp.nstages;
	p->stages = tmp.stages;
	p->split_backward = tmp.split_backward;
	p->comm = tmp.comm;
	p->order_start = tmp.order_start;
	p->order = tmp.order;
	p->name = tmp.name;
	snprintf(what, n, "adopted %s", label ? label : "another plan");
	return 0;
}

int edit_apply(struct edit_hist *h, struct plan *p, const struct edit *ed, char *what, size_t n,
               struct err *e)
{
	struct plan_snap before, failed;
	char buf[160];
	int r;

	if (snap_copy(&before, p) < 0)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	switch (ed->kind) {
	case EDIT_BOUNDARY: r = do_boundary(p, ed->stage, ed->delta, buf, sizeof(buf), e); break;
	case EDIT_PLACE: r = do_place(p, ed->stage, ed->device, ed->times, buf, sizeof(buf), e); break;
	case EDIT_MOVE_OP: r = do_move_op(p, ed->device, ed->pos, ed->delta, buf, sizeof(buf), e); break;
	case EDIT_REORDER: r = do_reorder(p, buf, sizeof(buf), e); break;
	case EDIT_REPLACE: r = do_replace(p, ed->with, ed->label, buf, sizeof(buf), e); break;
	default: r = err_set(e, ERR_INPUT, "unknown edit");
	}
	if (r == 0 && (ed->kind == EDIT_PLACE || ed->kind == EDIT_REORDER) && p->comm == PLAN_COMM_BLOCKING) {
		/* a new placement or a policy order is OctoPipe's plan, not Megatron's 1F1B: it
		 * runs on OctoPipe's executor, which overlaps transfers (undo brings it back) */
		p->comm = PLAN_COMM_OVERLAP;
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "; transfers now overlap");
	}
	if (r < 0) {
		snap_move_from(&failed, p, 0);
		snap_release(&failed);
		snap_move_to(&before, p);
		return -1;
	}
	before.id = h->cur_id;
	snprintf(before.what, sizeof(before.what), "%s", buf);
	if (push(&h->undo, &h->nundo, &h->undo_cap, &before) < 0) {
		snap_move_from(&failed, p, 0);
		snap_release(&failed);
		snap_move_to(&before, p);
		return err_set(e, ERR_RUNTIME, "out of host memory");
	}
	for (int i = 0; i < h->nredo; i++)
		snap_release(&h->redo[i]);
	h->nredo = 0;
	h->cur_id = h->next_id++;
	if (what)
		snprintf(what, n, "%s", buf);
	return 0;
}

/* Moves the top of `from` into p and p's state onto `to`. */
static int step(struct edit_hist *h, struct plan *p, struct plan_snap *from, int *nfrom,
                struct plan_snap **to, int *nto, int *capto, char *what, size_t n)
{
	struct plan_snap cur, *top;

	if (*nfrom == 0)
		return -1;
	/* make room first, so a failed allocation changes nothing */
	if (vec_reserve(to, capto, *nto + 1L, sizeof(**to)) < 0)
		return -1;
	top = &from[*nfrom - 1];
	snap_move_from(&cur, p, h->cur_id);
	/* the description belongs to the transition: it travels with the older state */
	snprintf(cur.what, sizeof(cur.what), "%s", top->what);
	if (what)
		snprintf(what, n, "%s", top->what);
	h->cur_id = top->id;
	snap_move_to(top, p);
	snap_release(top);
	(*nfrom)--;
	(*to)[(*nto)++] = cur;
	return 0;
}

int edit_undo(struct edit_hist *h, struct plan *p, char *what, size_t n)
{
	return step(h, p, h->undo, &h->nundo, &h->redo, &h->nredo, &h->redo_cap, what, n);
}

int edit_redo(struct edit_hist *h, struct plan *p, char *what, size_t n)
{
	return step(h, p, h->redo, &h->nredo, &h->undo, &h->nundo, &h->undo_cap, what, n);
}
