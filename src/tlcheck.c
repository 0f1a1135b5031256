/*
 * tlcheck — a timeline against its plan (see tlcheck.h). One pass over the timeline's
 * ops fills an index (stage, microbatch, kind) -> where and when it ran, one over its
 * transfers an index (producing stage, microbatch, direction) -> the transfer; then the
 * plan's order and the dependency rules are walked once. Linear in the plan's size.
 */
#include "config.h"
#include "tlcheck.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"

struct seen {
	double start, end;
	int dev;
	int count;
};

struct checker {
	const struct plan *p;
	const struct timeline *t;
	double slack;
	struct seen *op;          /* nstages x M x 3 */
	const struct tl_xfer **xf; /* nstages x M x 2 */
	long bad;
	struct err *e;
};

/* an op's entry among three a (stage, microbatch) */
static long op_entry(const struct checker *c, int stage, int mb, int kind)
{
	return op_slot_index(stage, c->p->microbatches, mb, 3, op_kind_slot(kind));
}

static void violation(struct checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void violation(struct checker *c, const char *fmt, ...)
{
	va_list ap;

	if (c->bad++ == 0 && c->e) {
		char msg[sizeof(c->e->msg)];

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		err_set(c->e, ERR_RUNTIME, "%s", msg);
	}
}

/* The backward kind of the plan: I with a split backward, else B. */
static int bwd_kind(const struct plan *p)
{
	return p->split_backward ? OP_I : OP_B;
}

/* cons must start after prod ended, through a transfer when they sit on two devices. */
static void depends(struct checker *c, int ps, int mb, int pk, int cs, int ck)
{
	const struct seen *prod = &c->op[op_entry(c, ps, mb, pk)], *cons = &c->op[op_entry(c, cs, mb, ck)];
	const struct action pa = { ps, mb, (uint8_t)pk, 0 }, ca = { cs, mb, (uint8_t)ck, 0 };
	char pt[ACTION_TEXT_MAX], ct[ACTION_TEXT_MAX];

	if (!prod->count || !cons->count)
		return;   /* already reported as missing */
	action_format(&pa, pt);
	action_format(&ca, ct);
	if (prod->dev == cons->dev) {
		if (cons->start < prod->end - c->slack)
			violation(c, "device %d: %s started at %.3f ms, before %s ended at %.3f ms", cons->dev, ct, cons->start,
			          pt, prod->end);
		return;
	}
	const struct tl_xfer *x = c->xf[op_slot_index(ps, c->p->microbatches, mb, 2, pk == OP_F ? XFER_ACT : XFER_GRAD)];

	if (!x || x->src != prod->dev || x->dst != cons->dev) {
		violation(c, "no transfer carried %s's output from device %d to %s on device %d", pt, prod->dev, ct,
		          cons->dev);
		return;
	}
	if (x->start_ms < prod->end - c->slack)
		violation(c, "the transfer of %s (device %d -> %d) started at %.3f ms, before %s ended at %.3f ms", pt, x->src,
		          x->dst, x->start_ms, pt, prod->end);
	if (cons->start < x->end_ms - c->slack)
		violation(c, "device %d: %s started at %.3f ms, before its input from device %d arrived at %.3f ms",
		          cons->dev, ct, cons->start, x->src, x->end_ms);
}

/* Every op once, on the right device; each device in the plan's order, no overlaps. */
static void check_ops(struct checker *c)
{
	const struct plan *p = c->p;
	const struct timeline *t = c->t;
	char a1[ACTION_TEXT_MAX], a2[ACTION_TEXT_MAX];

	for (int d = 0; d < t->ndevices; d++)
		for (int i = 0; i < t->dev[d].nops; i++) {
			const struct tl_op *o = &t->dev[d].ops[i];
			struct action a = { o->stage, o->mb, o->kind, 0 };
			struct seen *s;

			if (o->stage < 0 || o->stage >= p->nstages || o->mb < 0 || o->mb >= p->microbatches ||
			    o->kind >= OP_KINDS || (o->kind == OP_B && p->split_backward) ||
			    ((o->kind == OP_I || o->kind == OP_W) && !p->split_backward)) {
				violation(c, "device %d: ran %s, which is not an op of the plan", d, action_format(&a, a1));
				continue;
			}
			if (p->stages[o->stage].device != d) {
				violation(c, "device %d: ran %s, which the plan puts on device %d", d, action_format(&a, a1),
				          p->stages[o->stage].device);
				continue;
			}
			s = &c->op[op_entry(c, o->stage, o->mb, o->kind)];
			if (s->count++) {
				violation(c, "device %d: ran %s twice", d, action_format(&a, a1));
				continue;
			}
			s->start = o->start_ms;
			s->end = o->end_ms;
			s->dev = d;
			if (o->end_ms < o->start_ms)
				violation(c, "device %d: %s ends at %.3f ms, before it starts at %.3f ms", d, action_format(&a, a1),
				          o->end_ms, o->start_ms);
		}
	for (int d = 0; d < p->ndevices; d++) {
		double before = -1e300;    /* latest end among the ops before the previous one */
		const struct seen *prev = NULL;

		for (int i = p->order_start[d]; i < p->order_start[d + 1]; i++) {
			const struct action *a = &p->order[i];
			const struct seen *s = &c->op[op_entry(c, a->stage, a->mb, a->kind)];

			if (!s->count) {
				violation(c, "device %d: %s never ran", d, action_format(a, a1));
				prev = NULL;
				continue;
			}
			if (prev) {
				bool partner = p->order[i - 1].pair;   /* an F&B pair may overlap */
				double busy = partner ? before : fmax(before, prev->end);

				if (s->start < prev->start - c->slack)
					violation(c, "device %d: %s started before %s, against the plan's order", d,
					          action_format(a, a1), action_format(&p->order[i - 1], a2));
				else if (s->start < busy - c->slack)
					violation(c, "device %d: %s started at %.3f ms while the device was busy until %.3f ms", d,
					          action_format(a, a1), s->start, busy);
				before = fmax(before, prev->end);
			}
			prev = s;
		}
	}
}

long timeline_check_plan(const struct plan *p, const struct timeline *t, double slack_ms, struct err *e)
{
	long nops = (long)p->nstages * p->microbatches * 3;
	struct checker c = { p, t, slack_ms, NULL, NULL, 0, e };
	int bk = bwd_kind(p);

	if (t->ndevices != p->ndevices) {
		if (e)
			err_set(e, ERR_RUNTIME, "the timeline has %d devices, the plan %d", t->ndevices, p->ndevices);
		return 1;
	}
	c.op = calloc((size_t)(nops ? nops : 1), sizeof(*c.op));
	c.xf = calloc((size_t)(nops ? nops : 1), sizeof(*c.xf));
	if (!c.op || !c.xf) {
		free(c.op);
		free(c.xf);
		if (e)
			err_set(e, ERR_RUNTIME, "out of host memory checking the timeline");
		return -1;
	}
	for (long k = 0; k < t->nxfers; k++) {
		const struct tl_xfer *x = &t->xfers[k];

		if (x->stage >= 0 && x->stage < p->nstages && x->mb >= 0 && x->mb < p->microbatches && x->kind <= XFER_GRAD)
			c.xf[op_slot_index(x->stage, p->microbatches, x->mb, 2, x->kind)] = x;
	}
	check_ops(&c);
	for (int s = 0; s < p->nstages; s++)
		for (int m = 0; m < p->microbatches; m++) {
			if (s > 0)
				depends(&c, s - 1, m, OP_F, s, OP_F);
			depends(&c, s, m, OP_F, s, bk);
			if (s + 1 < p->nstages)
				depends(&c, s + 1, m, bk, s, bk);
			if (p->split_backward)
				depends(&c, s, m, OP_I, s, OP_W);
		}
	free(c.op);
	free(c.xf);
	return c.bad;
}

bool plan_same_work(const struct plan *a, const struct plan *b)
{
	if (a->microbatches != b->microbatches || a->split_backward != b->split_backward ||
	    a->nstages != b->nstages || a->ndevices != b->ndevices)
		return false;
	for (int s = 0; s < a->nstages; s++) {
		const struct stage *x = &a->stages[s], *y = &b->stages[s];

		if (x->first != y->first || x->last != y->last || x->device != y->device ||
		    x->recompute != y->recompute || x->recompute_layers != y->recompute_layers)
			return false;
	}
	for (int d = 0; d <= a->ndevices; d++)
		if (a->order_start[d] != b->order_start[d])
			return false;
	for (int i = 0; i < a->order_start[a->ndevices]; i++) {
		const struct action *x = &a->order[i], *y = &b->order[i];

		if (x->stage != y->stage || x->mb != y->mb || x->kind != y->kind || x->pair != y->pair)
			return false;
	}
	return true;
}

int timeline_check_named_plan(const struct timeline *t, const char *tl_path, const struct plan *p,
                              const char *plan_path, struct err *e)
{
	char dir[4096], named[4096];
	struct err le = ERR_INIT;
	struct stat st;
	struct plan q;
	bool same;

	if (!t->plan_ref || !tl_path)
		return 0;
	fileio_dirname(tl_path, dir, sizeof(dir));
	if (fileio_join(dir, t->plan_ref, named, sizeof(named)) < 0)
		return 0;
	if (plan_path && fileio_same_file(named, plan_path))
		return 0;
	if (stat(named, &st) != 0 || !S_ISREG(st.st_mode) || plan_load(&q, named, &le) < 0)
		return 0; /* a FIFO is not opened: it would hold the command */
	same = plan_same_work(&q, p);
	plan_release(&q);
	if (!same)
		return err_set(e, ERR_INPUT, "%s: plan: a run of '%s', whose partition, placement or order is not %s's",
		               tl_path, t->plan_ref, plan_path ? plan_path : "the plan");
	return 0;
}
