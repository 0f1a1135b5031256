/*
 * app_nav — the cursor and the view of the charts (see app.h): zoom, pan, paging the gpu
 * rows, moving the cursor between ops and gpus, following what an op waited for.
 *
 * The cursor is a gpu and a position in that gpu's order, not a time, so it always sits
 * on an op however narrow; moving to another gpu picks the op nearest in time to where
 * the cursor was. Both charts of the compare view share one time scale and one first row.
 */
#include "config.h"
#include "app.h"

#include <math.h>
#include <stdio.h>

#include "explain.h"
#include "screen.h"

static double view_span(const struct app *a)
{
	double s = a->cur.makespan;

	if (a->compare && a->ref.loaded && a->ref.makespan > s)
		s = a->ref.makespan;
	return s > 0 ? s : 1;
}

void app_fit(struct app *a)
{
	int cols = a->chart_cols > 10 ? a->chart_cols : 10;

	a->t0 = 0;
	a->ms_per_col = view_span(a) / cols;
	a->fit = true;
}

static void clamp_t0(struct app *a)
{
	double max = view_span(a) - a->ms_per_col * a->chart_cols / 2;

	if (a->t0 > max)
		a->t0 = max;
	if (a->t0 < 0)
		a->t0 = 0;
}

void app_zoom(struct app *a, double factor)
{
	struct pview *v = app_focus(a);
	long i = app_cursor_op(a);
	double center = a->t0 + a->ms_per_col * a->chart_cols / 2, min_mpc = view_span(a) / 1e5;

	if (i >= 0 && v->have_times) {
		const struct action *x = &v->plan.order[i];
		long op = sim_op_index(&v->plan, x->stage, x->mb, x->kind);
		double t = v->start[op];

		if (t >= a->t0 && t <= a->t0 + a->ms_per_col * a->chart_cols)
			center = (v->start[op] + v->end[op]) / 2;
	}
	a->ms_per_col /= factor;
	if (a->ms_per_col < min_mpc)
		a->ms_per_col = min_mpc;
	if (a->ms_per_col >= view_span(a) / a->chart_cols) {
		app_fit(a);
		return;
	}
	a->fit = false;
	a->t0 = center - a->ms_per_col * a->chart_cols / 2;
	clamp_t0(a);
}

void app_pan(struct app *a, int cols)
{
	a->t0 += cols * a->ms_per_col;
	a->fit = false;
	clamp_t0(a);
}

static int dev_len(const struct plan *p, int d)
{
	return p->order_start[d + 1] - p->order_start[d];
}

void app_clamp_cursor(struct app *a)
{
	struct pview *v = app_focus(a);
	int n;

	if (!v->loaded)
		return;
	if (a->sel_dev >= v->plan.ndevices)
		a->sel_dev = v->plan.ndevices - 1;
	if (a->sel_dev < 0)
		a->sel_dev = 0;
	n = dev_len(&v->plan, a->sel_dev);
	if (a->sel_pos >= n)
		a->sel_pos = n - 1;
	if (a->sel_pos < 0)
		a->sel_pos = 0;
	/* both charts show the same gpu rows: scroll them so the cursor's row shows in each */
	{
		int vis = app_page_devs(a);

		if (a->sel_dev < a->row0)
			a->row0 = a->sel_dev;
		if (vis > 0 && a->sel_dev >= a->row0 + vis)
			a->row0 = a->sel_dev - vis + 1;
	}
}

int app_page_devs(const struct app *a)
{
	int vis = a->vis_devs;

	if (a->compare && a->ref.loaded && a->vis_ref_devs > 0 && a->vis_ref_devs < vis)
		vis = a->vis_ref_devs;
	return vis > 0 ? vis : 1;
}

void app_cursor_dev(struct app *a, int dev)
{
	const struct pview *v = app_focus(a);

	if (!v->loaded)
		return;
	if (dev >= v->plan.ndevices)
		dev = v->plan.ndevices - 1;
	if (dev < 0)
		dev = 0;
	if (dev != a->sel_dev)
		app_cursor_move(a, dev - a->sel_dev, 0);
}

void app_page_rows(struct app *a, int dir)
{
	int page = app_page_devs(a), n = app_focus(a)->plan.ndevices, top = a->row0 + dir * page;

	if (top > n - page)
		top = n - page;
	if (top < 0)
		top = 0;
	a->row0 = top;
	app_cursor_dev(a, a->sel_dev + dir * page);
}

long app_cursor_op(const struct app *a)
{
	const struct pview *v = a->focus == 1 && a->compare ? &a->ref : &a->cur;

	if (!v->loaded || a->sel_dev < 0 || a->sel_dev >= v->plan.ndevices)
		return -1;
	if (a->sel_pos < 0 || a->sel_pos >= dev_len(&v->plan, a->sel_dev))
		return -1;
	return v->plan.order_start[a->sel_dev] + a->sel_pos;
}

void app_show_cursor(struct app *a)
{
	struct pview *v = app_focus(a);
	long i = app_cursor_op(a);
	double s, e, w = a->ms_per_col * a->chart_cols;

	if (i < 0 || !v->have_times)
		return;
	{
		const struct action *x = &v->plan.order[i];
		long op = sim_op_index(&v->plan, x->stage, x->mb, x->kind);

		s = v->start[op];
		e = v->end[op];
	}
	if (s < a->t0)
		a->t0 = s - w / 10;
	else if (e > a->t0 + w)
		a->t0 = e - w + w / 10;
	if (s < a->t0 || e > a->t0 + w)
		a->fit = false;
	clamp_t0(a);
}

void app_cursor_to(struct app *a, long i)
{
	struct pview *v = app_focus(a);

	for (int d = 0; d < v->plan.ndevices; d++)
		if (i >= v->plan.order_start[d] && i < v->plan.order_start[d + 1]) {
			a->sel_dev = d;
			a->sel_pos = (int)(i - v->plan.order_start[d]);
		}
	app_clamp_cursor(a);
	app_show_cursor(a);
}

/* Whether op k of the order shows: under a filter only the matching ones do. */
static bool op_shown(const struct app *a, const struct pview *v, int k)
{
	const struct action *x = &v->plan.order[k];

	return !(a->re && a->filter && v->match) || v->match[sim_op_index(&v->plan, x->stage, x->mb, x->kind)];
}

/* Under a filter: steps n shown ops along the gpu's order (back when n < 0), staying on
 * the last shown one reached; the hidden ones in between are passed over. */
static void step_shown(struct app *a, const struct pview *v, int n)
{
	int k0 = v->plan.order_start[a->sel_dev], k1 = v->plan.order_start[a->sel_dev + 1];
	int dir = n < 0 ? -1 : 1, at = k0 + a->sel_pos;

	for (int left = n < 0 ? -n : n; left > 0; left--) {
		int k = at + dir;

		while (k >= k0 && k < k1 && !op_shown(a, v, k))
			k += dir;
		if (k < k0 || k >= k1)
			break;
		at = k;
	}
	a->sel_pos = at - k0;
}

void app_cursor_move(struct app *a, int ddev, int dpos)
{
	struct pview *v = app_focus(a);
	long i = app_cursor_op(a);
	double t = 0;

	if (!v->loaded)
		return;
	if (i >= 0 && v->have_times) {
		const struct action *x = &v->plan.order[i];

		t = v->start[sim_op_index(&v->plan, x->stage, x->mb, x->kind)];
	}
	if (ddev) {
		int d = a->sel_dev + ddev;

		if (d < 0 || d >= v->plan.ndevices)
			return;
		a->sel_dev = d;
		a->sel_pos = 0;
		/* the op nearest in time to where the cursor was (a shown one, when any is) */
		if (v->have_times) {
			double best = INFINITY;

			for (int pass = 0; pass < 2 && best == INFINITY; pass++)
				for (int k = v->plan.order_start[d]; k < v->plan.order_start[d + 1]; k++) {
					const struct action *x = &v->plan.order[k];
					long op = sim_op_index(&v->plan, x->stage, x->mb, x->kind);
					double dist = t < v->start[op] ? v->start[op] - t : t > v->end[op] ? t - v->end[op] : 0;

					if (dist < best && (pass == 1 || op_shown(a, v, k))) {
						best = dist;
						a->sel_pos = k - v->plan.order_start[d];
					}
				}
		}
	}
	if (dpos && a->re && a->filter && v->match && app_cursor_op(a) >= 0)
		step_shown(a, v, dpos);
	else
		a->sel_pos += dpos;
	app_clamp_cursor(a);
	app_show_cursor(a);
}

bool app_pick(struct app *a, int focus, int dev, int col)
{
	struct pview *v = focus ? &a->ref : &a->cur;
	double t = a->t0 + (col + 0.5) * a->ms_per_col, best = INFINITY;
	int bestk = -1;

	if (!v->loaded || !v->have_times || dev < 0 || dev >= v->plan.ndevices)
		return false;
	for (int k = v->plan.order_start[dev]; k < v->plan.order_start[dev + 1]; k++) {
		const struct action *x = &v->plan.order[k];
		long op = sim_op_index(&v->plan, x->stage, x->mb, x->kind);
		double dist = t < v->start[op] ? v->start[op] - t : t > v->end[op] ? t - v->end[op] : 0;

		if (dist < best) {
			best = dist;
			bestk = k;
		}
	}
	if (bestk < 0)
		return false;
	a->focus = focus;
	a->sel_dev = dev;
	a->sel_pos = bestk - v->plan.order_start[dev];
	app_clamp_cursor(a);
	return true;
}

void app_jump_waited(struct app *a)
{
	struct pview *v = app_focus(a);
	long i = app_cursor_op(a);
	struct op_wait w;
	char t1[ACTION_TEXT_MAX], t2[ACTION_TEXT_MAX];

	if (i < 0)
		return;
	if (!v->ran) {
		app_msg(a, R_ERROR, "the plan cannot run, so nothing waits for anything: u undoes the last edit");
		return;
	}
	explain_wait(&v->sim, &v->plan, v->pos, &v->plan.order[i], &w);
	action_format(&v->plan.order[i], t1);
	if (w.kind == WAIT_NONE) {
		app_msg(a, R_NORMAL, "%s started at once: the critical path starts here", t1);
		return;
	}
	action_format(&w.on, t2);
	app_cursor_to(a, v->pos[sim_op_index(&v->plan, w.on.stage, w.on.mb, w.on.kind)]);
	app_msg(a, R_NORMAL, "%s waited for %s on gpu %d%s%s", t1, t2, w.device,
	        w.kind == WAIT_DATA ? (w.transfer ? " (its output, sent over the link)" : " (its output)") :
	        " (the gpu was busy)", v->crit[sim_op_index(&v->plan, w.on.stage, w.on.mb, w.on.kind)] ?
	        "; on the critical path" : "");
}

void app_jump_crit_end(struct app *a)
{
	struct pview *v = app_focus(a);
	long best = -1;
	double last = -1;

	if (!v->have_times)
		return;
	for (long i = 0; i < plan_total_ops(&v->plan); i++) {
		const struct action *x = &v->plan.order[i];
		double e = v->end[sim_op_index(&v->plan, x->stage, x->mb, x->kind)];

		if (e > last) {
			last = e;
			best = i;
		}
	}
	if (best >= 0) {
		app_cursor_to(a, best);
		app_msg(a, R_NORMAL, "the op that ends last; c follows the critical path back to the start");
	}
}
