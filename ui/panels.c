/*
 * panels — the widgets of the panel under the charts (see view.h's struct widget): the
 * op under the cursor in detail, the steps (the tuner's, or the baselines' generation,
 * walked with the arrows and adopted with Enter) and the run's gauges; and the per-gpu
 * breakdown drawn in the rows the charts leave empty.
 *
 * Each panel draws from the app alone, so opening, closing or switching a panel is only
 * a change of a->panel and a relayout.
 */
#include "config.h"
#include "view_int.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "doc.h"
#include "explain.h"

static void draw_details(struct app *a, struct screen *s, const struct rect *r)
{
	struct pview *v = app_focus(a);
	const struct plan *p = &v->plan;
	long i = app_cursor_op(a);
	struct strbuf sb = STRBUF_INIT;
	int y = r->y + 1, w = r->w - 2;

	screen_title(s, r, "details");
	if (!v->ran && v->deadlock && y < r->y + r->h) {
		screen_text(s, 1, y++, w, v->have_times ? "this order deadlocks; the cycle, marked on the chart:" :
		            "this order deadlocks; the cycle:", R_ERROR);
		screen_wrap(s, 1, y, w, r->y + r->h - y, v->why, R_WARN);
		return;
	}
	if (i < 0) {
		screen_textf(s, 1, y, w, R_DIM, "gpu %d runs nothing", a->sel_dev);
		return;
	}
	{
		const struct action *x = &p->order[i];
		const struct stage *st = &p->stages[x->stage];
		long op = sim_op_index(p, x->stage, x->mb, x->kind);
		char tok[ACTION_TEXT_MAX], text[512], layers[64];
		int nl = st->last - st->first + 1;

		app_op_text(p, x, text, sizeof(text));
		if (nl == 1)
			snprintf(layers, sizeof(layers), "layer %d", st->first);
		else
			snprintf(layers, sizeof(layers), "layers %d-%d, %d layers", st->first, st->last, nl);
		screen_textf(s, 1, y, w, R_VALUE, "%s", action_format(x, tok));
		/* the position with the gpu's count, so "#763" says how far along it is */
		screen_textf(s, 2 + (int)strlen(tok), y++, w - (int)strlen(tok) - 1, R_NORMAL,
		             "%s of stage %d (%s), microbatch %d, on gpu %d, #%d in its order of %d",
		             op_kind_name((enum op_kind)x->kind), x->stage, layers, x->mb, st->device, a->sel_pos,
		             p->order_start[a->sel_dev + 1] - p->order_start[a->sel_dev]);
		if (v->have_times && y < r->y + r->h) {
			fmt_ms(&sb, v->start[op]);
			strbuf_addstr(&sb, " -> ");
			fmt_ms(&sb, v->end[op]);
			strbuf_addstr(&sb, " (");
			fmt_ms(&sb, v->end[op] - v->start[op]);
			strbuf_addf(&sb, ")%s", v->crit[op] ? "   on the critical path" : "");
			if (st->recompute != RECOMPUTE_NONE && (x->kind == OP_I || x->kind == OP_B))
				strbuf_addf(&sb, "   recomputes %s (its forward %s)", recompute_name((enum recompute)st->recompute),
				            st->recompute == RECOMPUTE_FULL ? "again" : "attention cores again");
			screen_text(s, 1, y, 7, "time", R_LABEL);
			screen_text(s, 8, y++, w - 7, sb.buf, v->crit[op] ? R_WARN : R_NORMAL);
			strbuf_reset(&sb);
		}
		if (v->ran && y < r->y + r->h) {
			struct op_wait wt;
			char t2[ACTION_TEXT_MAX];

			explain_wait(&v->sim, p, v->pos, x, &wt);
			if (wt.kind == WAIT_NONE) {
				strbuf_addstr(&sb, "nothing: started at once");
			} else {
				strbuf_addf(&sb, "%s on gpu %d", action_format(&wt.on, t2), wt.device);
				strbuf_addstr(&sb, wt.kind == WAIT_DEVICE ? " (the gpu was busy with it)" :
				              wt.transfer ? " (its output, over the link)" : " (its output)");
				strbuf_addstr(&sb, " until ");
				fmt_ms(&sb, wt.until_ms);
				if (wt.idle_ms > 0) {
					strbuf_addstr(&sb, "; idle before: ");
					fmt_ms(&sb, wt.idle_ms);
				}
				strbuf_addstr(&sb, "   (c jumps there)");
			}
			screen_text(s, 1, y, 7, "waited", R_LABEL);
			screen_text(s, 8, y++, w - 7, sb.buf, R_NORMAL);
			strbuf_reset(&sb);
		}
		if (v->m.dev && y < r->y + r->h) {
			const struct device_metrics *dm = &v->m.dev[st->device];

			strbuf_addf(&sb, "busy ");
			fmt_ms(&sb, dm->busy_ms);
			strbuf_addf(&sb, ", bubble %.1f%% (warm-up ", 100 * dm->bubble_ratio);
			fmt_ms(&sb, dm->warmup_idle_ms);
			strbuf_addstr(&sb, ", cool-down ");
			fmt_ms(&sb, dm->cooldown_idle_ms);
			strbuf_addstr(&sb, "), peak memory ");
			fmt_bytes(&sb, (double)dm->peak_mem_bytes);
			strbuf_addstr(&sb, " of ");
			fmt_bytes(&sb, cluster_usable_bytes(&p->cluster));
			screen_textf(s, 1, y, 7, R_LABEL, "gpu %d", st->device);
			screen_text(s, 8, y++, w - 7, sb.buf, R_NORMAL);
			strbuf_reset(&sb);
		}
		if (y < r->y + r->h) {
			screen_text(s, 1, y, 7, "search", R_LABEL);
			screen_text(s, 8, y++, w - 7, text, R_DIM);
		}
		if (y < r->y + r->h && v->why[0])
			screen_text(s, 1, y++, w, v->why, R_ERROR);
	}
	strbuf_release(&sb);
}

static void draw_baselines(struct app *a, struct screen *s, const struct rect *r)
{
	int rows = r->h - 1, top;

	screen_title(s, r, "steps: the baselines' generation  Up/Down walk, Enter adopts, b the tuner's steps, Esc closes");
	if (rows < 1)
		return;
	top = a->step_sel - rows / 2;
	if (top > a->nsteps - rows)
		top = a->nsteps - rows;
	if (top < 0)
		top = 0;
	for (int k = 0; k < rows && top + k < a->nsteps; k++) {
		int i = top + k, y = r->y + 1 + k;
		const struct step *st = &a->steps[i];
		struct strbuf sb = STRBUF_INIT;
		enum role role = i == a->step_sel ? R_SELECTED : R_NORMAL;

		if (st->ok && st->makespan > 0) {
			fmt_ms(&sb, st->makespan);
			if (i > 0 && a->steps[i - 1].makespan > 0)
				strbuf_addf(&sb, " (%+.1f%%)", 100 * (st->makespan / a->steps[i - 1].makespan - 1));
		} else {
			strbuf_addstr(&sb, "-");
		}
		if (role == R_SELECTED)
			screen_fill(s, &(struct rect){ 0, y, r->w, 1 }, ' ', role);
		screen_textf(s, 1, y, r->w - 2, role, "%2d  %-10s %-16s %-20s %s%s%s", i, st->phase, sb.buf, st->name, st->move,
		             st->why[0] ? ": " : "", st->why);
		strbuf_release(&sb);
	}
}

static void draw_tuner_steps(struct app *a, struct screen *s, const struct rect *r)
{
	const struct tuning *g = &a->tuning;
	int rows = r->h - 1, top;
	char title[400];

	switch (g->state) {
	case TUNING_RUNNING:
		snprintf(title, sizeof(title), "steps: tuning... %d so far  Esc cancels, Up/Down walk, Enter adopts", g->n);
		break;
	case TUNING_FILE:
		snprintf(title, sizeof(title), "steps: %d from %s  Up/Down walk, Enter adopts, r re-tunes, b baselines", g->n,
		         strrchr(g->source, '/') ? strrchr(g->source, '/') + 1 : g->source);
		break;
	case TUNING_FAILED:
		snprintf(title, sizeof(title), "steps: the tuner failed  r retries, b baselines");
		break;
	default:
		snprintf(title, sizeof(title), "steps: the tuner's, %d%s  Up/Down walk, Enter adopts, r re-tunes, b baselines",
		         g->n, g->state == TUNING_CANCELLED ? " (cancelled)" : "");
		break;
	}
	screen_title(s, r, title);
	if (rows < 1)
		return;
	if (g->state == TUNING_FAILED) {
		screen_text(s, 1, r->y + 1, r->w - 2, g->why, R_ERROR);
		return;
	}
	if (g->n == 0) {
		screen_text(s, 1, r->y + 1, r->w - 2, g->state == TUNING_RUNNING ? "tuning... (the first step comes once "
		            "every baseline and start has been simulated)" : "no steps", R_DIM);
		return;
	}
	top = g->sel - rows / 2;
	if (top > g->n - rows)
		top = g->n - rows;
	if (top < 0)
		top = 0;
	for (int k = 0; k < rows && top + k < g->n; k++) {
		int i = top + k, y = r->y + 1 + k;
		const struct tstep *t = &g->steps[i];
		struct strbuf b = STRBUF_INIT, n = STRBUF_INIT;
		enum role role = i == g->sel ? R_SELECTED : t->after_ms < t->before_ms - 1e-9 ? R_NORMAL : R_DIM;

		fmt_ms(&b, t->before_ms);
		fmt_ms(&n, t->after_ms);
		if (i == g->sel)
			screen_fill(s, &(struct rect){ 0, y, r->w, 1 }, ' ', role);
		screen_textf(s, 1, y, r->w - 2, role, "%3d  %-10s %9s -> %-9s %+6.1f%%  %s%s%s", t->index, t->phase, b.buf,
		             n.buf, t->before_ms > 0 ? 100 * (t->after_ms / t->before_ms - 1) : 0.0, t->what,
		             t->why[0] ? ": " : "", t->why);
		strbuf_release(&b);
		strbuf_release(&n);
	}
}

static void draw_steps(struct app *a, struct screen *s, const struct rect *r)
{
	if (a->steps_tuner)
		draw_tuner_steps(a, s, r);
	else
		draw_baselines(a, s, r);
}

static int step_sel_key(int key, int sel, int n)
{
	switch (key) {
	case KEY_UP: case 'k': return sel > 0 ? sel - 1 : sel;
	case KEY_DOWN: case 'j': return sel < n - 1 ? sel + 1 : sel;
	case KEY_PPAGE: return sel > 5 ? sel - 5 : 0;
	case KEY_NPAGE: return sel + 5 < n ? sel + 5 : n - 1;
	case KEY_HOME: return 0;
	case KEY_END: return n - 1;
	default: return -2;
	}
}

void panels_say_tstep(struct app *a)
{
	const struct tstep *t = &a->tuning.steps[a->tuning.sel];
	struct strbuf b = STRBUF_INIT, n = STRBUF_INIT;

	if (t->why[0]) {
		app_msg(a, R_ERROR, "step %d: %s", t->index, t->why);
		return;
	}
	fmt_ms(&b, t->before_ms);
	fmt_ms(&n, t->after_ms);
	app_msg(a, R_NORMAL, "step %d of %d (%s): %s: %s -> %s (shown above the plan; Enter adopts)", t->index,
	        a->tuning.n - 1, t->phase, t->what, b.buf, n.buf);
	strbuf_release(&b);
	strbuf_release(&n);
}

static int tuner_steps_key(struct app *a, int key)
{
	struct tuning *g = &a->tuning;
	int sel;

	if (key == 27 && g->state == TUNING_RUNNING) {
		tuning_cancel(a);
		return KF_HANDLED | KF_REDRAW;
	}
	if (key == 'r') {
		if (g->state != TUNING_RUNNING)
			tuning_start(a);
		return KF_HANDLED | KF_REDRAW;
	}
	if (g->n == 0)
		return 0;
	if (key == '\n' || key == '\r' || key == KEY_ENTER) {
		tuning_adopt(a, g->sel);
		return KF_HANDLED | KF_REDRAW;
	}
	sel = step_sel_key(key, g->sel, g->n);
	if (sel == -2)
		return 0;
	tuning_select(a, sel);
	if (!g->steps[g->sel].why[0])
		panels_say_tstep(a);
	return KF_HANDLED | KF_REDRAW;
}

static int steps_key(struct app *a, int key)
{
	int sel;

	if (key == 'b') {
		a->steps_tuner = !a->steps_tuner;
		if (a->steps_tuner && a->tuning.state == TUNING_NONE)
			tuning_start(a);
		else if (a->steps_tuner)
			tuning_select(a, a->tuning.sel);
		else
			app_set_ref_step(a, a->step_sel);
		app_msg(a, R_NORMAL, "steps: %s", a->steps_tuner ? "the tuner's" : "the baselines' generation");
		return KF_HANDLED | KF_REDRAW;
	}
	if (a->steps_tuner)
		return tuner_steps_key(a, key);
	if (key == '\n' || key == '\r' || key == KEY_ENTER) {
		app_adopt_step(a, a->step_sel);
		return KF_HANDLED | KF_REDRAW;
	}
	sel = step_sel_key(key, a->step_sel, a->nsteps);
	if (sel == -2)
		return 0;
	a->step_sel = sel;
	app_set_ref_step(a, a->step_sel);
	if (!a->steps[a->step_sel].ok)
		app_msg(a, R_WARN, "step %d: %s", a->step_sel, a->steps[a->step_sel].why);
	else
		app_msg(a, R_NORMAL, "step %d (%s): %s", a->step_sel, a->steps[a->step_sel].phase,
		        a->steps[a->step_sel].move);
	return KF_HANDLED | KF_REDRAW;
}

/* The run panel: how the run goes, the iteration times, and per gpu a utilization bar
 * (over the last iteration's worth of time) with its recent history as a strip of levels. */
static void draw_run(struct app *a, struct screen *s, const struct rect *r)
{
	static const char levels[] = " .:-=+*#%@";
	const struct run *rn = &a->run;
	const struct live *l = &rn->live;
	struct strbuf sb = STRBUF_INIT;
	char title[1000];
	int y = r->y + 1, cell = 44, per, x, cap, first = 0;
	bool current = app_measured_current(a);

	if (runner_active(&rn->r))
		snprintf(title, sizeof(title), "run: %s pid %d, iteration %d of %d, time scale %g%s%s  F8 stops",
		         rn->stop_asked ? "stopping" : "running", (int)rn->r.pid, l->iters_done + (l->iters_done < rn->iters),
		         rn->iters, rn->time_scale, rn->launcher[0] ? ", under " : "", rn->launcher);
	else if (rn->have_live)
		snprintf(title, sizeof(title), "run: %s, %d iterations of %s%s  F8 runs again, d details",
		         l->done ? "done" : l->failed ? "failed" : "ended", l->iters_done, rn->plan_name,
		         current ? "" : a->run.plan_gen == a->plan_gen ? " [edited since: greyed]" : " [another file: greyed]");
	else
		snprintf(title, sizeof(title), "run: nothing yet  F8 runs the plan on the executor (time scale %g, %d iterations%s%s)",
		         rn->time_scale, rn->iters, rn->launcher[0] ? ", under " : "", rn->launcher);
	screen_title(s, r, title);
	if (!rn->have_live || y >= r->y + r->h)
		return;
	x = 1 + screen_text(s, 1, y, 12, "iterations ", R_LABEL);
	if (l->iters_done == 0)
		x += screen_text(s, x, y, r->w - x, "-", R_DIM) + 1;
	for (int k = 0; k < l->iters_done && k < 8 && x < r->w - 20; k++) {
		strbuf_reset(&sb);
		fmt_ms(&sb, live_iter_ms(l, k));
		x += screen_text(s, x, y, r->w - x, sb.buf, k == 0 ? R_VALUE : R_NORMAL) + 2;
	}
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "(latest first)  predicted ");
	fmt_ms(&sb, l->predicted_ms);
	if (l->nbad)
		strbuf_addf(&sb, "  %ld lines ignored", l->nbad);
	screen_text(s, x, y++, r->w - x - 1, sb.buf, R_DIM);
	per = (r->w - 2) / cell;
	if (per < 1)
		per = 1;
	/* more gpus than gauges fit: they follow the chart's rows, the last cell says where */
	cap = per * (r->y + r->h - y);
	if (cap < 1)
		cap = 1;
	if (l->ndev > cap)
		first = header_first_shown(a, l->ndev, cap);
	for (int d = first; d < l->ndev; d++) {
		int cx = 1 + ((d - first) % per) * cell, cy = y + (d - first) / per;
		double u = live_util_mean(l, d, LIVE_BUCKETS_PER_ITER);
		int fill = u < 0 ? 0 : (int)(u * 10 + 0.5);

		if (cy >= r->y + r->h)
			break;
		if (l->ndev > cap && d - first == cap - 1) {
			screen_textf(s, cx, cy, cell, R_DIM, "gpus %d-%d of %d (PgUp/PgDn)", first, d - 1, l->ndev);
			break;
		}
		screen_textf(s, cx, cy, 6, current ? R_LABEL : R_DIM, "gpu%-2d", d);
		screen_put(s, cx + 6, cy, '[', R_NORMAL);
		for (int i = 0; i < 10; i++)
			screen_put(s, cx + 7 + i, cy, i < fill ? '#' : '.', !current ? R_DIM : i < fill ? R_MEM : R_MEM_FREE);
		screen_put(s, cx + 17, cy, ']', R_NORMAL);
		if (u >= 0)
			screen_textf(s, cx + 18, cy, 5, current ? R_VALUE : R_DIM, "%4.0f%%", 100 * u);
		else
			screen_text(s, cx + 18, cy, 5, "   - ", R_DIM);
		screen_put(s, cx + 24, cy, '|', R_DIM);
		for (int k = 0; k < LIVE_HIST - 1; k++) {
			double h = live_util(l, d, LIVE_HIST - 2 - k);

			screen_put(s, cx + 25 + k, cy, h < 0 ? ' ' : levels[(int)(h * 9 + 0.5)], current ? R_MEM : R_DIM);
		}
		screen_put(s, cx + 25 + LIVE_HIST - 1, cy, '|', R_DIM);
	}
	strbuf_release(&sb);
}

static const struct widget details_widget = { "details", draw_details, NULL };
static const struct widget steps_widget = { "steps", draw_steps, steps_key };
static const struct widget run_widget = { "run", draw_run, NULL };

const struct widget *panels_widget(const struct app *a)
{
	switch (a->panel) {
	case PANEL_STEPS: return &steps_widget;
	case PANEL_DETAILS: return &details_widget;
	case PANEL_RUN: return &run_widget;
	default: return NULL;
	}
}

/* In the rows the charts leave empty, above the panel: each gpu's busy time, its idle time
 * split by phase (warm-up before its first op, steady between ops, cool-down after its
 * last) and its peak memory against the usable memory, for the gpus the chart shows. */
void panels_draw_breakdown(struct app *a, struct screen *s, const struct layout *l)
{
	const struct pview *v = &a->cur;
	const struct plan *p = &v->plan;
	struct rect g = { 0, l->gantt.y + l->gantt.h + 1, l->gantt.w, 0 };
	int shown = p->ndevices - a->row0, y = g.y, x = 1;
	double cap = cluster_usable_bytes(&p->cluster);
	/* one set of buffers for all rows: no allocation per gpu in the redraw */
	struct strbuf b = STRBUF_INIT, w = STRBUF_INIT, st = STRBUF_INIT, c = STRBUF_INIT, m = STRBUF_INIT;

	g.h = (l->panel.h ? l->panel.y : l->status.y) - g.y;
	if (shown > a->vis_devs)
		shown = a->vis_devs;
	if (!v->m.dev || g.h < 4 || g.w < 80)
		return;
	{
		char title[80];

		snprintf(title, sizeof(title), "where each %s's iteration goes%s", app_row_name(p),
		         v->ran ? "" : " (the last plan that ran)");
		screen_title(s, &(struct rect){ g.x, y++, g.w, 1 }, title);
	}
	screen_textf(s, x, y++, g.w - 2, R_LABEL, "%-3s     busy        idle:  warm-up     steady  cool-down    peak memory",
	             app_row_name(p));
	for (int d = a->row0; d < a->row0 + shown && y < g.y + g.h; d++, y++) {
		const struct device_metrics *dm = &v->m.dev[d];
		double steady = dm->idle_ms - dm->warmup_idle_ms - dm->cooldown_idle_ms;

		strbuf_reset(&b);
		strbuf_reset(&w);
		strbuf_reset(&st);
		strbuf_reset(&c);
		strbuf_reset(&m);
		fmt_ms(&b, dm->busy_ms);
		fmt_ms(&w, dm->warmup_idle_ms);
		fmt_ms(&st, steady > 0 ? steady : 0);
		fmt_ms(&c, dm->cooldown_idle_ms);
		fmt_bytes(&m, (double)dm->peak_mem_bytes);
		screen_textf(s, x, y, 6, R_LABEL, "%s%d", app_row_name(p), d);
		screen_textf(s, x + 6, y, g.w - x - 7, R_NORMAL, "%9s %3.0f%%  %9s  %9s  %9s", b.buf,
		             dm->busy_ms + dm->idle_ms > 0 ? 100 * dm->busy_ms / (dm->busy_ms + dm->idle_ms) : 0, w.buf, st.buf,
		             c.buf);
		screen_textf(s, x + 57, y, g.w - x - 58, cap > 0 && dm->peak_mem_bytes > cap ? R_ERROR :
		             cap > 0 && dm->peak_mem_bytes > 0.9 * cap ? R_MEM_HIGH : R_NORMAL, "%9s %3.0f%%", m.buf,
		             cap > 0 ? 100 * dm->peak_mem_bytes / cap : 0);
	}
	strbuf_release(&b);
	strbuf_release(&w);
	strbuf_release(&st);
	strbuf_release(&c);
	strbuf_release(&m);
}
