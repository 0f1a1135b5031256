/*
 * gantt_view — draws a plan's Gantt chart (see gantt_view.h).
 *
 * Each row is built in one pass over the device's ops: every op adds its overlap to the
 * columns it covers and claims the columns where it is the largest share, so short ops
 * never hide long ones at any zoom. A column where the device is busy less than half the
 * time shows ':' in the colour of its largest op; only a column with no work at all is a
 * bubble. Under a filter a column belongs to its largest matching op whenever one is in it,
 * so a dense chart still shows what the filter finds. Ops that own no column (narrower
 * than one) still show when they matter: the
 * cursor, search matches and a deadlock's cycle mark the column of their midpoint. The
 * cost is O(ops + columns) per row, whatever the zoom.
 */
#include "config.h"
#include "gantt_view.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "gantt.h"

#define MAX_COLS 1024

static enum role kind_role(int kind)
{
	switch (kind) {
	case OP_F: return R_OP_F;
	case OP_I: return R_OP_I;
	case OP_W: return R_OP_W;
	default: return R_OP_B;
	}
}

static double nice_step(double raw)
{
	double p = pow(10, floor(log10(raw))), f = raw / p;

	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

static void fmt_tick(char *buf, size_t n, double t, double step)
{
	if (step >= 1000)
		snprintf(buf, n, "%gs", round(t / 100) / 10);
	else if (step >= 1)
		snprintf(buf, n, "%gms", round(t));
	else
		snprintf(buf, n, "%gms", round(t * 1000) / 1000);
}

static void draw_axis(const struct app *a, const char *title, struct screen *s, int x0, int y, int w)
{
	double step = nice_step(a->ms_per_col * 12), t;
	int last_end = -1, len = title ? (int)strlen(title) : 0, room;

	if (len > w * 2 / 3)
		len = w * 2 / 3;
	room = len > 0 ? w - len - 1 : w;   /* the ticks end before the title */
	screen_text(s, x0, y, GANTT_LABEL_W, "time", R_AXIS);
	for (t = ceil(a->t0 / step) * step; ; t += step) {
		int c = (int)floor((t - a->t0) / a->ms_per_col + 0.5);
		char lab[32];

		if (c >= w)
			break;
		if (c < 0 || c <= last_end)
			continue;
		fmt_tick(lab, sizeof(lab), t, step);
		/* a label cut short would read as another time (1500ms as 150): none at all */
		if (c + 1 + (int)strlen(lab) > room)
			break;
		screen_put(s, x0 + GANTT_LABEL_W + c, y, '|', R_AXIS);
		last_end = c + screen_text(s, x0 + GANTT_LABEL_W + c + 1, y, w - c - 1, lab, R_AXIS);
	}
	if (len > 0)
		screen_text(s, x0 + GANTT_LABEL_W + w - len, y, len, title, R_TITLE);
}

/* The measured row of one device: the ops the executor reported for the shown iteration,
 * drawn like the predicted ones, with idle time marked up to the device's last op. */
static void draw_measured(const struct app *a, const struct live_dev *v, struct screen *s, int x0, int y, int w)
{
	double mpc = a->ms_per_col > 0 ? a->ms_per_col : 1, last = 0;
	bool current = app_measured_current(a);

	/* a run of an earlier state of the plan (or of another file) is greyed: "old" */
	screen_text(s, x0, y, GANTT_LABEL_W - 1, current ? "  meas" : "  old", R_DIM);
	for (int i = 0; i < v->nops; i++)
		if (v->ops[i].t1 > last)
			last = v->ops[i].t1;
	for (int c = 0; c < w; c++)
		if (a->t0 + (c + 0.5) * mpc <= last)
			screen_put(s, x0 + GANTT_LABEL_W + c, y, '.', R_BUBBLE);
	for (int i = 0; i < v->nops; i++) {
		const struct live_op *o = &v->ops[i];
		double cs = (o->t0 - a->t0) / mpc, ce = (o->t1 - a->t0) / mpc;
		int c0 = (int)floor(cs + 0.5), c1 = (int)floor(ce + 0.5);
		char txt[24];
		int len;

		if (ce <= 0 || cs >= w)
			continue;
		if (c1 <= c0)
			c1 = c0 + 1;
		len = snprintf(txt, sizeof(txt), "%c%d", op_kind_char((enum op_kind)o->kind), o->mb);
		for (int c = c0 < 0 ? 0 : c0; c < c1 && c < w; c++) {
			int off = c - c0;
			char ch = c1 - c0 >= len + 1 && off < len ? txt[off] : off == 0 ? txt[0] :
			          a->fill_glyphs ? (char)tolower((unsigned char)txt[0]) : ' ';

			screen_put(s, x0 + GANTT_LABEL_W + c, y, ch, current ? kind_role(o->kind) : R_FILTERED);
		}
	}
}

int gantt_view_device_at(const struct app *a, int focus, const struct rect *r, int y)
{
	int per = app_rows_per_dev(a, focus), k = y - r->y - 1;

	if (k < 0 || k % per)
		return -1;
	return a->row0 + k / per;
}

static enum role op_role(const struct app *a, const struct pview *v, long op, long idx, long cursor)
{
	if (v->cycle[op])
		return R_CYCLE;
	if (idx == cursor)
		return R_CURSOR;
	if (a->crit_marks && v->crit[op])
		return R_CRIT;
	if (a->re && v->match[op])
		return a->filter ? kind_role(v->plan.order[idx].kind) : R_MATCH;
	if (a->re && a->filter)
		return R_FILTERED;
	return kind_role(v->plan.order[idx].kind);
}

/* The gpu with the most work: in a pipeline's steady state it sets the pace (-1: none). */
static int busiest(const struct pview *v)
{
	int best = -1;

	if (!v->m.dev)
		return -1;
	for (int d = 0; d < v->plan.ndevices; d++)
		if (best < 0 || v->m.dev[d].busy_ms > v->m.dev[best].busy_ms)
			best = d;
	return best;
}

/* One gpu's figures right of its row: busy and bubble share of the iteration, peak memory
 * (coloured when near or over the usable memory), '!' on the bottleneck. */
static void draw_stats(const struct pview *v, int d, bool bottleneck, bool oom, struct screen *s, int x, int y, int w)
{
	const struct device_metrics *dm;
	double cap = cluster_usable_bytes(&v->plan.cluster), span;
	char peak[16];

	if (!v->m.dev)
		return;
	dm = &v->m.dev[d];
	span = dm->busy_ms + dm->idle_ms;
	if ((double)dm->peak_mem_bytes >= 1e12)
		snprintf(peak, sizeof(peak), "%.1fT", (double)dm->peak_mem_bytes / 1e12);
	else
		snprintf(peak, sizeof(peak), "%.0fG", (double)dm->peak_mem_bytes / 1e9);
	screen_textf(s, x, y, 10, bottleneck ? R_WARN : R_VALUE, " %3.0f%% %3.0f%%", span > 0 ? 100 * dm->busy_ms / span : 0,
	             100 * dm->bubble_ratio);
	screen_textf(s, x + 10, y, 5, oom ? R_ERROR : cap > 0 && dm->peak_mem_bytes > 0.9 * cap ? R_MEM_HIGH : R_DIM, "%5s", peak);
	if (bottleneck && w > 15)
		screen_put(s, x + 15, y, '!', R_WARN);
}

/* The ops of device d that must be seen but may own no column (narrower than one, or
 * outweighed by a neighbour): the cursor, search matches, the deadlock cycle. Each marks
 * the column of its midpoint unless it already shows there in its role. */
static void mark_narrow_ops(const struct app *a, const struct pview *v, int d, long cursor, struct screen *s, int x0,
                            int y, int w)
{
	const struct plan *p = &v->plan;
	double mpc = a->ms_per_col > 0 ? a->ms_per_col : 1;
	bool all = (a->re && !a->filter && v->nmatch > 0) || !v->ran;
	int k0 = p->order_start[d], k1 = p->order_start[d + 1];

	if (!all) {
		if (cursor < k0 || cursor >= k1)
			return;
		k0 = (int)cursor;
		k1 = k0 + 1;
	}
	for (int k = k0; k < k1; k++) {
		const struct action *x = &p->order[k];
		long op = sim_op_index(p, x->stage, x->mb, x->kind);
		enum role role;
		int c;

		if (k != cursor && !v->cycle[op] && !(a->re && v->match[op]))
			continue;
		c = (int)floor(((v->start[op] + v->end[op]) / 2 - a->t0) / mpc);
		if (c < 0 || c >= w)
			continue;
		role = op_role(a, v, op, k, cursor);
		if (x0 + c < s->w && y < s->h && s->c[(long)y * s->w + x0 + c].role == role)
			continue;
		screen_put(s, x0 + c, y, op_kind_char((enum op_kind)x->kind), role);
	}
}

/* Per column of the chart: how much of it device d is busy, the op that covers most of it
 * and, under a filter, the matching op that does. */
struct gantt_cols {
	double busy[MAX_COLS], best[MAX_COLS], mbest[MAX_COLS];
	long owner[MAX_COLS], mowner[MAX_COLS];
};

/* Fills gc for device d's ops over w columns of mpc ms; returns when its last op ends
 * (only after it is an idle column the data-parallel sync's). */
static double fill_columns(const struct app *a, const struct pview *v, int d, int w, double mpc, bool filtering,
                           struct gantt_cols *gc)
{
	const struct plan *p = &v->plan;
	double last_end = 0;

	for (int c = 0; c < w; c++) {
		gc->busy[c] = gc->best[c] = gc->mbest[c] = 0;
		gc->owner[c] = gc->mowner[c] = -1;
	}
	for (int k = p->order_start[d]; k < p->order_start[d + 1]; k++) {
		const struct action *x = &p->order[k];
		long op = sim_op_index(p, x->stage, x->mb, x->kind);
		double cs = (v->start[op] - a->t0) / mpc, ce = (v->end[op] - a->t0) / mpc;
		int c0, c1;

		last_end = fmax(last_end, v->end[op]);

		if (ce <= 0 || cs >= w)
			continue;
		c0 = cs < 0 ? 0 : (int)cs;
		c1 = (int)ceil(ce);
		if (c1 > w)
			c1 = w;
		for (int c = c0; c < c1; c++) {
			double ov = fmin(ce, c + 1) - fmax(cs, c);

			gc->busy[c] += ov;
			if (ov > gc->best[c]) {
				gc->best[c] = ov;
				gc->owner[c] = k;
			}
			if (filtering && v->match[op] && ov > gc->mbest[c]) {
				gc->mbest[c] = ov;
				gc->mowner[c] = k;
			}
		}
	}
	return last_end;
}

/* The character column c shows of op k (its order index): the op's name where it fits,
 * a fill after it, its kind alone when narrow. */
static char op_glyph(const struct app *a, const struct pview *v, long k, int c, double mpc)
{
	const struct plan *p = &v->plan;
	const struct action *x = &p->order[k];
	long op = sim_op_index(p, x->stage, x->mb, x->kind);
	double cs = (v->start[op] - a->t0) / mpc, ce = (v->end[op] - a->t0) / mpc;
	int first = (int)floor(cs + 0.5), ncols = (int)floor(ce + 0.5) - first, off = c - first;
	char txt[24], ch;
	int len = snprintf(txt, sizeof(txt), "%c%d", op_kind_char((enum op_kind)x->kind), x->mb);

	/* the op can own a column just before its rounded start: off < 0 */
	if (ncols >= len + 1 && off >= 0 && off < len)
		ch = txt[off];
	else if (ncols >= len + 1 || (ncols >= 2 && off > 0))
		ch = a->fill_glyphs ? (char)tolower((unsigned char)txt[0]) : ' ';
	else
		ch = txt[0];
	return ch;
}

/* The transfers device d sends, under its row at y: > activations, < gradients. */
static void draw_xfer_row(const struct app *a, const struct pview *v, int d, struct screen *s, int x, int y, int w,
                          double mpc)
{
	screen_text(s, x, y, GANTT_LABEL_W - 1, "  xfer", R_DIM);
	for (long i = 0; i < v->sim.nxfers; i++) {
		const struct sim_xfer *xf = &v->sim.xfers[i];
		int c0, c1;

		if (xf->src != d)
			continue;
		c0 = (int)floor((xf->start_ms - a->t0) / mpc);
		c1 = (int)ceil((xf->end_ms - a->t0) / mpc);
		if (c1 <= c0)
			c1 = c0 + 1;
		for (int c = c0 < 0 ? 0 : c0; c < c1 && c < w; c++)
			screen_put(s, x + GANTT_LABEL_W + c, y, xf->kind == XFER_ACT ? '>' : '<', R_XFER);
	}
}

void gantt_view_draw(const struct app *a, const struct pview *v, int focus, const char *title,
                     struct screen *s, const struct rect *r)
{
	double last_end = 0;
	static struct gantt_cols gc;
	bool filtering = a->re && a->filter;
	const struct plan *p = &v->plan;
	int sw = gantt_view_stats_w(r->w), w = r->w - GANTT_LABEL_W - sw, per = app_rows_per_dev(a, focus);
	int bottleneck = busiest(v);
	long cursor = a->focus == focus ? (long)a->sel_pos + (a->sel_dev < p->ndevices && a->sel_dev >= 0 ?
	              p->order_start[a->sel_dev] : 0) : -1;
	double mpc = a->ms_per_col > 0 ? a->ms_per_col : 1;

	if (w > MAX_COLS)
		w = MAX_COLS;
	if (r->h < 1 || w < 1 || !v->loaded)
		return;
	if (a->focus != focus || app_cursor_op(a) < 0)
		cursor = -1;
	{
		/* which gpu rows show, when not all do: "gpu 12-23 of 64" */
		int rows = (r->h - 1) / per, last = a->row0 + rows - 1;
		char buf[300];

		if (rows < p->ndevices) {
			if (last >= p->ndevices)
				last = p->ndevices - 1;
			snprintf(buf, sizeof(buf), "%s %s %d-%d of %d ", title ? title : "", app_row_name(p), a->row0, last,
			         p->ndevices);
			title = buf;
		}
		draw_axis(a, title, s, r->x, r->y, w);
	}
	if (sw && v->m.dev)
		screen_text(s, r->x + GANTT_LABEL_W + w, r->y, sw, " busy bubl peak", R_AXIS);
	for (int row = 0; 1 + row * per < r->h; row++) {
		int d = a->row0 + row, y = r->y + 1 + row * per;
		bool oom = false;

		if (d >= p->ndevices)
			break;
		for (int i = 0; i < v->m.noom && v->ran; i++)
			oom = oom || v->m.oom[i] == d;
		screen_textf(s, r->x, y, GANTT_LABEL_W - 1, oom ? R_ERROR : R_LABEL, "%s%-3d", app_row_name(p), d);
		if (sw)
			/* every gpu as busy as the busiest is a bottleneck: a tie marks them all (up to the
			 * rounding of sums taken in another order) */
			draw_stats(v, d, bottleneck >= 0 && v->m.dev[d].busy_ms >= v->m.dev[bottleneck].busy_ms * (1 - 1e-9), oom, s,
			           r->x + GANTT_LABEL_W + w, y, sw);
		if (!v->have_times)
			continue;
		last_end = fill_columns(a, v, d, w, mpc, filtering, &gc);
		for (int c = 0; c < w; c++) {
			double t = a->t0 + (c + 0.5) * mpc;
			/* under a filter a column shows its largest matching op, if any op in it matches */
			long k = gc.mowner[c] >= 0 ? gc.mowner[c] : gc.owner[c], op;

			if (k < 0) {
				/* idle while its gradients are still being synchronised over the replicas */
				if (v->ran && d < v->m.ndevices && v->m.dev[d].sync_end_ms > 0 && t >= last_end &&
				    t >= v->m.dev[d].sync_start_ms && t < v->m.dev[d].sync_end_ms)
					screen_put(s, r->x + GANTT_LABEL_W + c, y, '~', R_DIM);
				else if (t <= v->makespan)
					screen_put(s, r->x + GANTT_LABEL_W + c, y, '.', R_BUBBLE);
				continue;
			}
			op = sim_op_index(p, p->order[k].stage, p->order[k].mb, p->order[k].kind);
			/* a column the op only partly fills shows ':' */
			screen_put(s, r->x + GANTT_LABEL_W + c, y,
			           gantt_cell_of(gc.busy[c], 1.0) == GANTT_PARTLY ? ':' : op_glyph(a, v, k, c, mpc),
			           op_role(a, v, op, k, cursor));
		}
		mark_narrow_ops(a, v, d, cursor, s, r->x + GANTT_LABEL_W, y, w);
		if (a->xfer_rows && v->ran && y + 1 < r->y + r->h)
			draw_xfer_row(a, v, d, s, r->x, y + 1, w, mpc);
		if (focus == 0 && app_measured_rows(a)) {
			int my = y + (a->xfer_rows ? 2 : 1);

			if (my < r->y + r->h)
				draw_measured(a, &a->run.live.dev[d], s, r->x, my, w);
		}
	}
}
