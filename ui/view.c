/*
 * view — widgets, drawing and input dispatch (see view.h).
 *
 * Input goes to the mode first (help, prompt, question), then to the focused panel's
 * widget, then through the key table to a command. Only key codes come from curses
 * (KEY_* values); nothing here touches the terminal.
 */
#include "config.h"
#include "view.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "doc.h"
#include "explain.h"
#include "gantt_view.h"
#include "keys.h"

/* ---- header ------------------------------------------------------------------------------ */

/* When only `cells` of n gpus fit in a strip of cells (memory bars, run gauges), the first
 * one shown: from the chart's first row, moved on so the cursor's gpu shows too; the last
 * cell is kept to say which gpus these are. */
static int first_shown(const struct app *a, int n, int cells)
{
	int first = a->row0;

	if (a->sel_dev >= first + cells - 1)
		first = a->sel_dev - cells + 2;
	if (first > n - (cells - 1))
		first = n - (cells - 1);
	return first > 0 ? first : 0;
}

static void draw_header(struct app *a, struct screen *s, const struct rect *r, const struct layout *l)
{
	struct pview *v = &a->cur;
	const struct plan *p = &v->plan;
	struct strbuf sb = STRBUF_INIT;
	int x;

	screen_fill(s, &(struct rect){ r->x, r->y, r->w, 1 }, ' ', R_HEADER);
	x = screen_text(s, 1, r->y, r->w, "OctoPipe", R_TITLE) + 3;
	strbuf_addf(&sb, "%s%s", p->name ? p->name : "plan",
	            !app_modified(a) ? "" : a->autosaved ? " [modified, autosaved]" : " [modified]");
	x += screen_text(s, x, r->y, r->w - x, sb.buf, R_TITLE) + 2;
	strbuf_reset(&sb);
	{
		/* a plan with a layout: its pipeline devices are groups of tp x dp gpus */
		struct parallel pl = plan_parallel(p);

		if (p->has_parallel || !parallel_is_pipeline_only(&pl))
			strbuf_addf(&sb, "%s on %s (pp %d x tp %d x dp %d = %d gpus, ep %d, ZeRO %d)", p->model.name,
			            p->cluster.name, pl.pp, pl.tp, pl.dp, parallel_gpus(&pl), pl.ep, pl.zero);
		else
			strbuf_addf(&sb, "%s on %s (%d gpus)", p->model.name, p->cluster.name, p->ndevices);
	}
	strbuf_addf(&sb, ", %d microbatches, %d stages | %s", p->microbatches, p->nstages,
	            a->path ? (strrchr(a->path, '/') ? strrchr(a->path, '/') + 1 : a->path) : a->source);
	screen_text(s, x, r->y, r->w - x - 1, sb.buf, R_HEADER);
	strbuf_reset(&sb);

	x = 1;
	if (v->ran) {
		x += screen_text(s, x, r->y + 1, r->w, "iteration ", R_LABEL);
		fmt_ms(&sb, v->m.makespan_ms);
		x += screen_text(s, x, r->y + 1, r->w, sb.buf, R_VALUE) + 2;
		x += screen_text(s, x, r->y + 1, r->w, "tokens/s ", R_LABEL);
		x += screen_textf(s, x, r->y + 1, r->w, R_VALUE, "%.0f", v->m.throughput_tokens_per_s) + 2;
		x += screen_text(s, x, r->y + 1, r->w, "bubble ", R_LABEL);
		x += screen_textf(s, x, r->y + 1, r->w, R_VALUE, "%.1f%%", 100 * v->m.bubble_ratio) + 2;
		/* both bounds, each with the efficiency against it (lower bound / iteration) */
		x += screen_text(s, x, r->y + 1, r->w, "bound ", R_LABEL);
		strbuf_reset(&sb);
		fmt_ms(&sb, v->m.lower_bound_ms);
		x += screen_text(s, x, r->y + 1, r->w, sb.buf, R_VALUE);
		x += screen_textf(s, x, r->y + 1, r->w, R_DIM, " %.1f%%", 100 * v->m.efficiency) + 2;
		x += screen_text(s, x, r->y + 1, r->w, "tight ", R_LABEL);
		strbuf_reset(&sb);
		fmt_ms(&sb, v->m.lower_bound_tight_ms);
		x += screen_text(s, x, r->y + 1, r->w, sb.buf, R_VALUE);
		x += screen_textf(s, x, r->y + 1, r->w, R_DIM, " %.1f%%", 100 * v->m.efficiency_tight) + 2;
		if (v->m.noom)
			x += screen_textf(s, x, r->y + 1, r->w - x, R_ERROR, " OUT OF MEMORY: gpu %d ", v->m.oom[0]) + 1;
		/* what the memory bars below measure, when there is room to say it */
		if (r->w - x > 50) {
			strbuf_reset(&sb);
			fmt_bytes(&sb, cluster_usable_bytes(&p->cluster));
			x += screen_textf(s, x, r->y + 1, r->w - x - 26, R_DIM, "mem: peak/gpu of %s", sb.buf) + 2;
		}
	} else {
		x += screen_text(s, x, r->y + 1, r->w, v->deadlock ? " DEADLOCK " : " CANNOT RUN ", R_ERROR) + 1;
		x += screen_text(s, x, r->y + 1, r->w - x, v->deadlock ? "the chart shows the last plan that ran; u undoes" :
		                 v->why, R_WARN) + 2;
	}
	if (r->w - x > 30 && a->last_edit_ms > 0)
		screen_textf(s, r->w - 24, r->y + 1, 23, R_DIM, "edit+sim %.1f ms", a->last_edit_ms);
	strbuf_release(&sb);

	/* memory bars: peak per gpu against usable memory */
	{
		int per = l->mem_per_line, shown = per * l->mem_lines, first = 0;
		double cap = cluster_usable_bytes(&p->cluster);

		/* more gpus than bars: the bars follow the chart's rows and the cursor's gpu, the last
		 * cell says which they are */
		if (p->ndevices > shown)
			first = first_shown(a, p->ndevices, shown);
		for (int d = first; d < p->ndevices && d - first < shown; d++) {
			int cx = ((d - first) % per) * LAYOUT_MEM_CELL, cy = r->y + 2 + (d - first) / per;
			double peak = v->ran || v->m.dev ? (double)(v->m.dev ? v->m.dev[d].peak_mem_bytes : 0) : 0;
			double frac = cap > 0 ? peak / cap : 0;
			int fill = (int)(frac * 7 + 0.5);
			bool over = frac > 1.0;

			if (d - first == shown - 1 && p->ndevices > shown) {
				screen_textf(s, cx + 1, cy, LAYOUT_MEM_CELL - 1, R_DIM, "%d-%d of %d", first, d - 1, p->ndevices);
				break;
			}
			screen_textf(s, cx, cy, 3, over ? R_ERROR : R_LABEL, "%2d", d);
			screen_put(s, cx + 3, cy, '[', R_NORMAL);
			for (int i = 0; i < 7; i++)
				screen_put(s, cx + 4 + i, cy, i < fill ? '#' : '.', i < fill ? (frac > 0.9 ? R_MEM_HIGH : R_MEM) :
				           R_MEM_FREE);
			screen_put(s, cx + 11, cy, ']', R_NORMAL);
			screen_textf(s, cx + 12, cy, 4, over ? R_ERROR : R_DIM, "%3.0fG", peak / 1e9);
		}
	}
}

/* ---- charts ------------------------------------------------------------------------------ */

/* A chart's title in the compare view: the compared plan with what keeps it from running
 * (out of memory, deadlock), the edited plan with its speedup over it as `octopipe
 * compare` prints it (the compared iteration / the plan's). */
static void chart_title(struct app *a, struct pview *v, int focus, char *buf, size_t n)
{
	struct strbuf sb = STRBUF_INIT;

	if (v->ran)
		fmt_ms(&sb, v->m.makespan_ms);
	else
		strbuf_addstr(&sb, v->deadlock ? "DEADLOCK" : "CANNOT RUN");
	if (v->ran && v->m.noom)
		strbuf_addf(&sb, " OUT OF MEMORY (gpu %d)", v->m.oom[0]);
	if (!focus && v->ran && a->ref.loaded && a->ref.ran && a->ref.m.makespan_ms > 0 && v->m.makespan_ms > 0)
		strbuf_addf(&sb, ", speedup %.2fx", a->ref.m.makespan_ms / v->m.makespan_ms);
	if (focus)
		snprintf(buf, n, " compare: %s %s%s ", a->ref_name, sb.buf, a->focus == 1 ? " *" : "");
	else
		snprintf(buf, n, " plan: %s%s ", sb.buf, a->compare && a->focus == 0 ? " *" : "");
	strbuf_release(&sb);
}

/* ---- panels --------------------------------------------------------------------------- */

static void panel_title(struct screen *s, const struct rect *r, const char *title)
{
	for (int x = r->x; x < r->x + r->w; x++)
		screen_put(s, x, r->y, '-', R_BORDER);
	screen_textf(s, r->x + 2, r->y, r->w - 4, R_TITLE, " %s ", title);
}

/* The rest of text after its first line of at most w cells, broken at a space (a word
 * longer than a line is cut). */
static const char *text_skip_line(const char *text, int w)
{
	int len = (int)strlen(text), cut = len;

	if (len > w) {
		cut = w;
		while (cut > 0 && text[cut] != ' ')
			cut--;
		if (cut == 0)
			cut = w;
	}
	text += cut;
	while (*text == ' ')
		text++;
	return text;
}

/* Draws text from (x, y) in lines of at most w cells broken at spaces, on at most rows
 * lines (s NULL: only counts); returns the lines used. */
static int text_wrap(struct screen *s, int x, int y, int w, int rows, const char *text, enum role role)
{
	int used = 0;

	while (*text && used < rows && w > 0) {
		const char *next = text_skip_line(text, w);
		int cut = (int)(next - text);

		while (cut > 0 && text[cut - 1] == ' ')
			cut--;
		if (s)
			screen_text(s, x, y + used, cut, text, role);
		used++;
		text = next;
	}
	return used;
}

static void draw_details(struct app *a, struct screen *s, const struct rect *r)
{
	struct pview *v = app_focus(a);
	const struct plan *p = &v->plan;
	long i = app_cursor_op(a);
	struct strbuf sb = STRBUF_INIT;
	int y = r->y + 1, w = r->w - 2;

	panel_title(s, r, "details");
	if (!v->ran && v->deadlock && y < r->y + r->h) {
		screen_text(s, 1, y++, w, "this order deadlocks; the cycle, marked on the chart:", R_ERROR);
		text_wrap(s, 1, y, w, r->y + r->h - y, v->why, R_WARN);
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
		char tok[ACTION_TEXT_MAX], text[512];

		app_op_text(p, x, text, sizeof(text));
		screen_textf(s, 1, y, w, R_VALUE, "%s", action_format(x, tok));
		screen_textf(s, 2 + (int)strlen(tok), y++, w - (int)strlen(tok) - 1, R_NORMAL,
		             "%s of stage %d (layers %d-%d, %d layers), microbatch %d, on gpu %d, #%d in its order",
		             op_kind_name((enum op_kind)x->kind), x->stage, st->first, st->last, st->last - st->first + 1,
		             x->mb, st->device, a->sel_pos);
		if (v->have_times && y < r->y + r->h) {
			fmt_ms(&sb, v->start[op]);
			strbuf_addstr(&sb, " -> ");
			fmt_ms(&sb, v->end[op]);
			strbuf_addstr(&sb, " (");
			fmt_ms(&sb, v->end[op] - v->start[op]);
			strbuf_addf(&sb, ")%s", v->crit[op] ? "   on the critical path" : "");
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

	panel_title(s, r, "steps: the baselines' generation  Up/Down walk, Enter adopts, b the tuner's steps, Esc closes");
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
	panel_title(s, r, title);
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

static void say_tstep(struct app *a)
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
		say_tstep(a);
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
	panel_title(s, r, title);
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
		first = first_shown(a, l->ndev, cap);
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

static const struct widget *panel_widget(const struct app *a)
{
	switch (a->panel) {
	case PANEL_STEPS: return &steps_widget;
	case PANEL_DETAILS: return &details_widget;
	case PANEL_RUN: return &run_widget;
	default: return NULL;
	}
}

/* ---- status line and F-key bar ---------------------------------------------------------- */

static const char *prompt_label(enum prompt_kind k)
{
	switch (k) {
	case PROMPT_SEARCH: return "search (PCRE2): /";
	case PROMPT_FILTER: return "filter (PCRE2, empty shows all): \\";
	case PROMPT_SAVE_AS: return "save as: ";
	case PROMPT_REPORT: return "write the report to: ";
	case PROMPT_OPEN: return "open plan: ";
	default: return "move the stage to gpu: ";
	}
}

static void draw_status(struct app *a, struct screen *s, const struct rect *r)
{
	if (a->mode == MODE_PROMPT) {
		int x = screen_text(s, 0, r->y, r->w, prompt_label(a->prompt), R_PROMPT);

		/* the text scrolls so the cursor shows; the cursor is the cell it is on */
		int room = r->w - x - 1, first = a->line.pos - room + 1 > 0 ? a->line.pos - room + 1 : 0;

		screen_text(s, x, r->y, room, a->line.buf + first, R_NORMAL);
		screen_put(s, x + a->line.pos - first, r->y, a->line.pos < a->line.len ? a->line.buf[a->line.pos] : ' ',
		           R_CURSOR);
		/* a message said while the prompt is open (a completion's matches) beside it */
		if (a->msg[0] && r->w - x - a->line.len - 4 > 20 && a->line.len < room)
			screen_text(s, x + a->line.len + 3, r->y, r->w - x - a->line.len - 3, a->msg, R_DIM);
		return;
	}
	if (a->mode == MODE_QUESTION) {
		static const char *const q[] = {
			[Q_QUIT] = "the plan has unsaved edits: s saves and quits, y quits without saving, n or Esc stays",
			[Q_OPEN] = "the plan has unsaved edits: s saves and opens, y opens without saving, n or Esc stays",
			[Q_STOP] = "stop the run? y stops it (sigterm), n or Esc lets it run",
			[Q_STOP_QUIT] = "a run is in progress: y stops it and quits, n or Esc stays",
		};
		char buf[4400];

		if (a->question == Q_RECOVER)
			snprintf(buf, sizeof(buf), "recover? y recovers, n leaves, d deletes the unsaved edits of an earlier "
			         "session (%s)", a->as.path);
		else if (a->question == Q_OVERWRITE)
			snprintf(buf, sizeof(buf), "overwrite %s? it exists and is not this plan's file: y replaces it, n or Esc "
			         "does not save", a->pending_save);
		else if (a->question == Q_OVERWRITE_REPORT)
			snprintf(buf, sizeof(buf), "overwrite %s? it exists: y replaces it with the report, n or Esc writes "
			         "nothing", a->pending_save);
		else
			snprintf(buf, sizeof(buf), "%s", q[a->question]);
		screen_text(s, 0, r->y, r->w, buf, R_PROMPT);
		return;
	}
	if (a->msg[0] && (int)strlen(a->msg) > r->w && r->w > 30) {
		/* cut, and say where the rest is */
		static const char more[] = " ... (M: in full)";
		int n = r->w - (int)sizeof(more) + 1;

		screen_text(s, 0, r->y, n, a->msg, (enum role)a->msg_role);
		screen_text(s, n, r->y, r->w - n, more, R_DIM);
	} else if (a->msg[0])
		screen_text(s, 0, r->y, r->w, a->msg, (enum role)a->msg_role);
	else
		screen_text(s, 0, r->y, r->w, "? help  / search  arrows move  < > move op  [ ] move boundary  m move stage  u undo  c waited for",
		            R_DIM);
}

/* A name of at most 5 letters for the F-key bar of an 80-column terminal. */
static const char *fbar_short(enum cmd c, const char *name)
{
	switch (c) {
	case CMD_SEARCH: return "Find";
	case CMD_FILTER: return "Filt";
	case CMD_COMPARE: return "Comp";
	case CMD_REORDER: return "Order";
	default: return name;
	}
}

/* The F-key bar: each slot is the F-key, the letter that does the same (highlighted) and
 * the command's name, shortened when the slots are narrow. */
static void draw_fbar(struct app *a, struct screen *s, const struct rect *r)
{
	int slot = r->w / 10;

	for (const struct command *k = commands; k->name; k++) {
		const char *name;
		bool grey;
		int x, letter, lx;

		if (!k->fkey)
			continue;
		x = (k->fkey - 1) * slot;
		lx = x + (k->fkey == 10 ? 3 : 2);
		screen_textf(s, x, r->y, 3, R_FKEY, "F%d", k->fkey);
		if ((letter = keys_letter(k->cmd)) != 0)
			screen_put(s, lx++, r->y, (char)letter, R_HELP_KEY);
		/* Run is greyed while the plan cannot run, and reads Stop while a run is going */
		grey = k->cmd == CMD_RUN && !a->cur.ran && !run_active(a);
		name = k->cmd == CMD_RUN && run_active(a) ? "Stop" : k->name;
		/* at 80 columns the labels touch, as in htop: their colour tells them apart */
		if ((int)strlen(name) > x + slot - lx)
			name = fbar_short(k->cmd, name);
		screen_fill(s, &(struct rect){ lx, r->y, x + slot - lx, 1 }, ' ', grey ? R_FGREY : R_FLABEL);
		screen_text(s, lx, r->y, x + slot - lx, name, grey ? R_FGREY : R_FLABEL);
	}
}

static void draw_help(struct app *a, struct screen *s, int rows)
{
	struct strbuf sb = STRBUF_INIT;
	const char *line;
	int n = 0, y = 0;

	keys_help(&sb);
	/* scrolling stops at the end: the last line at the bottom, never past it */
	{
		int nlines = 0;

		for (const char *c = sb.buf; *c; c++)
			nlines += *c == '\n';
		if (a->help_top > nlines - rows)
			a->help_top = nlines - rows;
		if (a->help_top < 0)
			a->help_top = 0;
	}
	line = sb.buf;
	while (*line && y < rows) {
		const char *nl = strchr(line, '\n');
		int len = nl ? (int)(nl - line) : (int)strlen(line);

		if (n++ >= a->help_top) {
			char buf[512];

			snprintf(buf, sizeof(buf), "%.*s", len < 500 ? len : 500, line);
			screen_text(s, 1, y, s->w - 2, buf, n == 1 ? R_TITLE : line[0] != ' ' && len ? R_LABEL : R_NORMAL);
			if (line[0] == ' ' && len > 21)
				screen_text(s, 3, y, 18, buf + 2, R_HELP_KEY);
			y++;
		}
		line = nl ? nl + 1 : line + len;
	}
	strbuf_release(&sb);
}

/* The message log, full screen: every message kept, wrapped, the latest at the bottom. */
static void draw_log(struct app *a, struct screen *s, int rows)
{
	int w = s->w - 12, total = 0, top, y = 1, line = 0;

	screen_textf(s, 1, 0, s->w - 2, R_TITLE, "messages: %d, latest last (Up/Down, PgUp/PgDn, g/G scroll; Esc or q "
	             "closes)", a->log_n);
	if (w < 10 || rows < 2)
		return;
	/* count the wrapped lines, then show the window that ends at the bottom or at log_top */
	for (int k = 0; k < a->log_n; k++)
		total += text_wrap(NULL, 0, 0, w, 1 << 20, app_log_entry(a, k)->text, R_NORMAL);
	top = a->log_top < 0 || a->log_top > total - (rows - 1) ? total - (rows - 1) : a->log_top;
	if (top < 0)
		top = 0;
	a->log_top = top >= total - (rows - 1) ? -1 : top;
	for (int k = 0; k < a->log_n && y < rows; k++) {
		const struct log_entry *le = app_log_entry(a, k);
		int n = text_wrap(NULL, 0, 0, w, 1 << 20, le->text, R_NORMAL);

		if (line + n > top) {
			struct tm tm;
			char hhmm[16];
			int skip = top > line ? top - line : 0;
			const char *t = le->text;

			localtime_r(&le->when, &tm);
			strftime(hhmm, sizeof(hhmm), "%H:%M:%S", &tm);
			if (!skip)
				screen_text(s, 1, y, 10, hhmm, R_DIM);
			/* the lines of this message below the top of the window */
			for (int i = 0; i < skip; i++)
				t = text_skip_line(t, w);
			y += text_wrap(s, 11, y, w, rows - y, t, (enum role)le->role);
		}
		line += n;
	}
}

/* In the rows the charts leave empty, above the panel: each gpu's busy time, its idle time
 * split by phase (warm-up before its first op, steady between ops, cool-down after its
 * last) and its peak memory against the usable memory, for the gpus the chart shows. */
static void draw_breakdown(struct app *a, struct screen *s, const struct layout *l)
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
	panel_title(s, &(struct rect){ g.x, y++, g.w, 1 }, v->ran ? "where each gpu's iteration goes" :
	            "where each gpu's iteration goes (the last plan that ran)");
	screen_text(s, x, y++, g.w - 2, "gpu     busy        idle:  warm-up     steady  cool-down    peak memory", R_LABEL);
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
		screen_textf(s, x, y, 6, R_LABEL, "gpu%d", d);
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

/* ---- the whole screen ------------------------------------------------------------------- */

void view_layout(struct app *a, int cols, int rows, struct layout *l)
{
	struct layout_req req = { cols, rows, a->cur.plan.ndevices,
	                          a->compare && a->ref.loaded ? a->ref.plan.ndevices : 0, a->xfer_rows,
	                          a->panel != PANEL_NONE, app_measured_rows(a) };
	int per = app_rows_per_dev(a, 0);

	layout_compute(&req, l);
	if (l->too_small)
		return;
	a->chart_cols = cols - GANTT_LABEL_W - gantt_view_stats_w(cols);
	a->vis_devs = (l->gantt.h - 1) / per;
	if (a->vis_devs < 1)
		a->vis_devs = 1;
	a->vis_ref_devs = l->ref.h > 1 ? (l->ref.h - 1) / app_rows_per_dev(a, 1) : 0;
	if (a->fit)
		app_fit(a);
	app_clamp_cursor(a);
}

void view_draw(struct app *a, struct screen *s, const struct layout *l)
{
	char title[200];
	const struct widget *pw;

	screen_clear(s);
	if (l->too_small) {
		char m1[120], m2[120];

		snprintf(m1, sizeof(m1), "terminal too small: %dx%d", s->w, s->h);
		snprintf(m2, sizeof(m2), "octopipe needs at least %dx%d (q quits)", LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS);
		screen_text(s, (s->w - (int)strlen(m1)) / 2 > 0 ? (s->w - (int)strlen(m1)) / 2 : 0, s->h / 2 - 1, s->w, m1, R_WARN);
		screen_text(s, (s->w - (int)strlen(m2)) / 2 > 0 ? (s->w - (int)strlen(m2)) / 2 : 0, s->h / 2, s->w, m2, R_NORMAL);
		return;
	}
	if (a->mode == MODE_HELP) {
		draw_help(a, s, l->fbar.y);
		draw_fbar(a, s, &l->fbar);
		return;
	}
	if (a->mode == MODE_LOG) {
		draw_log(a, s, l->fbar.y);
		draw_fbar(a, s, &l->fbar);
		return;
	}
	draw_header(a, s, &l->header, l);
	if (l->ref.h > 0 && a->ref.loaded) {
		chart_title(a, &a->ref, 1, title, sizeof(title));
		gantt_view_draw(a, &a->ref, 1, title, s, &l->ref);
	}
	chart_title(a, &a->cur, 0, title, sizeof(title));
	gantt_view_draw(a, &a->cur, 0, a->compare ? title : NULL, s, &l->gantt);
	draw_breakdown(a, s, l);
	pw = panel_widget(a);
	if (pw && l->panel.h > 0)
		pw->draw(a, s, &l->panel);
	draw_status(a, s, &l->status);
	draw_fbar(a, s, &l->fbar);
}

/* ---- input -------------------------------------------------------------------------------- */

static void start_prompt(struct app *a, enum prompt_kind k, const char *init)
{
	a->mode = MODE_PROMPT;
	a->prompt = k;
	line_set(&a->line, init);
	line_hist_reset(&a->prompt_hist[k]);
	a->msg[0] = '\0';
}

static void default_save_name(struct app *a, char *buf, size_t n)
{
	const char *name = a->cur.plan.name ? a->cur.plan.name : "plan";
	size_t k = 0;

	if (a->path) {
		snprintf(buf, n, "%s", a->path);
		return;
	}
	k = (size_t)snprintf(buf, n, "plans/");
	for (const char *c = name; *c && k + 6 < n; c++)
		buf[k++] = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
		           *c == '.' ? *c : '-';
	snprintf(buf + k, n - k, ".json");
}

/* Saves to path, or asks first when that would replace a file that is not the plan's own;
 * then does what was asked for (quit, open). */
static int save_or_ask(struct app *a, const char *path, enum after_save after)
{
	if (app_would_overwrite(a, path)) {
		snprintf(a->pending_save, sizeof(a->pending_save), "%s", path);
		a->after_save = after;
		a->mode = MODE_QUESTION;
		a->question = Q_OVERWRITE;
		return KF_HANDLED | KF_REDRAW;
	}
	if (app_save(a, path) < 0)
		return KF_HANDLED | KF_REDRAW;
	if (after == AFTER_QUIT) {
		a->quit = true;
		return KF_HANDLED | KF_QUIT;
	}
	if (after == AFTER_OPEN) {
		app_open_file(a, a->pending_open);
		return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
	}
	return KF_HANDLED | KF_REDRAW;
}

static int submit_prompt(struct app *a)
{
	char input[4096];

	a->mode = MODE_NORMAL;
	line_hist_add(&a->prompt_hist[a->prompt], a->line.buf);
	/* a file name may start with ~ like the shell's */
	if (a->prompt == PROMPT_SAVE_AS || a->prompt == PROMPT_OPEN || a->prompt == PROMPT_REPORT)
		line_expand_home(a->line.buf, input, sizeof(input));
	else
		snprintf(input, sizeof(input), "%s", a->line.buf);
	switch (a->prompt) {
	case PROMPT_SEARCH:
		app_search(a, input, false);
		break;
	case PROMPT_FILTER:
		app_search(a, input, true);
		break;
	case PROMPT_SAVE_AS:
		if (input[0])
			save_or_ask(a, input, AFTER_NOTHING);
		break;
	case PROMPT_REPORT: {
		struct stat st;

		if (!input[0])
			break;
		if (stat(input, &st) == 0) {
			/* a report replaces nothing it was not asked to */
			snprintf(a->pending_save, sizeof(a->pending_save), "%s", input);
			a->mode = MODE_QUESTION;
			a->question = Q_OVERWRITE_REPORT;
			break;
		}
		app_write_report(a, input);
		break;
	}
	case PROMPT_OPEN:
		if (!input[0])
			break;
		if (app_modified(a)) {
			snprintf(a->pending_open, sizeof(a->pending_open), "%s", input);
			a->mode = MODE_QUESTION;
			a->question = Q_OPEN;
		} else {
			app_open_file(a, input);
		}
		return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
	case PROMPT_MOVE_STAGE: {
		long i = app_cursor_op(a);
		char *end;
		long d = strtol(input, &end, 10);

		if (i < 0)
			break;
		if (end == input || *end) {
			app_msg(a, R_ERROR, "'%s' is not a gpu number", input);
			break;
		}
		{
			int st = a->cur.plan.order[i].stage;
			struct edit ed = { EDIT_PLACE, st, (int)d, 0, 0, NULL, NULL, NULL };

			ed.times = a->cur.have_times && !a->cur.deadlock ? a->cur.start : NULL;

			app_edit(a, &ed);
			/* follow the stage to its new gpu */
			if (a->cur.plan.stages[st].device == d)
				for (int k = a->cur.plan.order_start[d]; k < a->cur.plan.order_start[d + 1]; k++)
					if (a->cur.plan.order[k].stage == st) {
						app_cursor_to(a, k);
						break;
					}
		}
		break;
	}
	}
	return KF_HANDLED | KF_REDRAW;
}

static int prompt_key(struct app *a, int key)
{
	switch (key) {
	case 27:
		a->mode = MODE_NORMAL;
		app_msg(a, R_DIM, "cancelled");
		break;
	case '\n': case '\r': case KEY_ENTER:
		return submit_prompt(a);
	case '\t':
		/* file names complete like the shell's; open also knows the bundled plans' names */
		if (a->prompt == PROMPT_SAVE_AS || a->prompt == PROMPT_OPEN || a->prompt == PROMPT_REPORT) {
			char msg[600];
			int n = line_complete(&a->line, a->prompt == PROMPT_OPEN ? "plans" : NULL, msg, sizeof(msg));

			app_msg(a, n == 0 ? R_WARN : R_NORMAL, "%s", msg);
		}
		break;
	default:
		line_key(&a->line, &a->prompt_hist[a->prompt], key);
	}
	return KF_HANDLED | KF_REDRAW;
}

static int quit_or_ask(struct app *a);

static int question_key(struct app *a, int key)
{
	bool go = false;

	if (a->question == Q_STOP || a->question == Q_STOP_QUIT) {
		if (key == 'y' || key == 'Y') {
			a->mode = MODE_NORMAL;
			run_stop(a);
			return a->question == Q_STOP_QUIT ? quit_or_ask(a) : KF_HANDLED | KF_REDRAW;
		}
		if (key == 'n' || key == 'N' || key == 27 || key == 'q') {
			a->mode = MODE_NORMAL;
			app_msg(a, R_DIM, "the run goes on");
			return KF_HANDLED | KF_REDRAW;
		}
		return KF_HANDLED;
	}
	if (a->question == Q_RECOVER) {
		if (key == 27)
			key = 'n';      /* Esc decides nothing: the edits stay for later */
		if (key != 'y' && key != 'Y' && key != 'n' && key != 'N' && key != 'd' && key != 'D')
			return KF_HANDLED;
		a->mode = MODE_NORMAL;
		app_recover(a, key | 0x20);
		return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
	}
	if (a->question == Q_OVERWRITE_REPORT) {
		if (key == 'y' || key == 'Y') {
			a->mode = MODE_NORMAL;
			app_write_report(a, a->pending_save);
			return KF_HANDLED | KF_REDRAW;
		}
		if (key == 'n' || key == 'N' || key == 27 || key == 'q') {
			a->mode = MODE_NORMAL;
			app_msg(a, R_NORMAL, "no report written: %s is left as it was", a->pending_save);
			return KF_HANDLED | KF_REDRAW;
		}
		return KF_HANDLED;
	}
	if (a->question == Q_OVERWRITE) {
		if (key == 'y' || key == 'Y') {
			a->mode = MODE_NORMAL;
			if (app_save(a, a->pending_save) < 0)
				return KF_HANDLED | KF_REDRAW;
			if (a->after_save == AFTER_QUIT) {
				a->quit = true;
				return KF_HANDLED | KF_QUIT;
			}
			if (a->after_save == AFTER_OPEN) {
				app_open_file(a, a->pending_open);
				return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
			}
			return KF_HANDLED | KF_REDRAW;
		}
		if (key == 'n' || key == 'N' || key == 27 || key == 'q') {
			a->mode = MODE_NORMAL;
			app_msg(a, R_NORMAL, "not saved: %s is left as it was (S saves under another name)", a->pending_save);
			return KF_HANDLED | KF_REDRAW;
		}
		return KF_HANDLED;
	}
	switch (key) {
	case 'y': case 'Y':
		go = true;
		break;
	case 's': case 'S':
		if (!a->path) {
			char name[4096];

			default_save_name(a, name, sizeof(name));
			a->mode = MODE_NORMAL;
			return save_or_ask(a, name, a->question == Q_QUIT ? AFTER_QUIT : AFTER_OPEN);
		} else if (app_save(a, NULL) < 0) {
			a->mode = MODE_NORMAL;
			return KF_HANDLED | KF_REDRAW;
		}
		go = true;
		break;
	case 'n': case 'N': case 27: case 'q':
		a->mode = MODE_NORMAL;
		app_msg(a, R_DIM, "nothing discarded");
		return KF_HANDLED | KF_REDRAW;
	default:
		return KF_HANDLED;
	}
	a->mode = MODE_NORMAL;
	if (!go)
		return KF_HANDLED | KF_REDRAW;
	if (a->question == Q_QUIT) {
		if (app_modified(a))
			app_autosave_remove(a);
		a->quit = true;
		return KF_HANDLED | KF_QUIT;
	}
	app_autosave_remove(a);
	app_open_file(a, a->pending_open);
	return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
}

static int log_key(struct app *a, int key)
{
	int page = 10;

	switch (key) {
	case KEY_UP: case 'k': a->log_top = (a->log_top < 0 ? 1 << 20 : a->log_top) - 1; break;
	case KEY_DOWN: case 'j': if (a->log_top >= 0) a->log_top++; break;
	case KEY_PPAGE: a->log_top = (a->log_top < 0 ? 1 << 20 : a->log_top) - page; break;
	case KEY_NPAGE: case ' ': if (a->log_top >= 0) a->log_top += page; break;
	case KEY_HOME: case 'g': a->log_top = 0; break;
	case KEY_END: case 'G': a->log_top = -1; break;
	case 27: case 'q': case 'M': case KEY_F(10):
		a->mode = MODE_NORMAL;
		return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
	default: break;
	}
	if (a->log_top < -1)
		a->log_top = 0;
	return KF_HANDLED | KF_REDRAW;
}

static int help_key(struct app *a, int key)
{
	switch (key) {
	case KEY_UP: case 'k': if (a->help_top > 0) a->help_top--; break;
	case KEY_DOWN: case 'j': a->help_top++; break;
	case KEY_PPAGE: a->help_top = a->help_top > 10 ? a->help_top - 10 : 0; break;
	case KEY_NPAGE: case ' ': a->help_top += 10; break;
	case KEY_HOME: case 'g': a->help_top = 0; break;
	case KEY_END: case 'G': a->help_top = 1 << 20; break;   /* drawing stops it at the end */
	case 27: case 'q': case '?': case KEY_F(1): case KEY_F(10):
		a->mode = MODE_NORMAL;
		return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
	default: break;
	}
	return KF_HANDLED | KF_REDRAW;
}

static void boundary_edit(struct app *a, int grow)
{
	long i = app_cursor_op(a);
	struct edit ed = { EDIT_BOUNDARY, 0, 0, 0, 0, NULL, NULL, NULL };
	int st;

	if (i < 0)
		return;
	st = app_focus(a)->plan.order[i].stage;
	/* the last stage has no boundary after it: move the one before it instead */
	if (st == app_focus(a)->plan.nstages - 1) {
		ed.stage = st - 1;
		ed.delta = grow ? -1 : 1;
	} else {
		ed.stage = st;
		ed.delta = grow ? 1 : -1;
	}
	app_edit(a, &ed);
}

static int quit_or_ask(struct app *a)
{
	if (app_modified(a)) {
		a->mode = MODE_QUESTION;
		a->question = Q_QUIT;
		return KF_HANDLED | KF_REDRAW;
	}
	app_autosave_remove(a);
	a->quit = true;
	return KF_HANDLED | KF_REDRAW | KF_QUIT;
}

static int back_out(struct app *a)
{
	if (tuning_busy(a)) {
		tuning_cancel(a);
		return 0;
	}
	if (a->panel == PANEL_STEPS || a->panel == PANEL_RUN) {
		a->panel = PANEL_DETAILS;
		return KF_RELAYOUT;
	}
	if (a->re) {
		app_search(a, "", false);
		return 0;
	}
	if (a->compare) {
		a->compare = false;
		a->focus = 0;
		return KF_RELAYOUT;
	}
	a->msg[0] = '\0';
	return 0;
}

int view_key(struct app *a, int key)
{
	const struct widget *pw = panel_widget(a);
	struct pview *v = app_focus(a);
	enum cmd c;
	int r;

	if (a->mode == MODE_HELP)
		return help_key(a, key);
	if (a->mode == MODE_LOG)
		return log_key(a, key);
	if (a->mode == MODE_PROMPT)
		return prompt_key(a, key);
	if (a->mode == MODE_QUESTION)
		return question_key(a, key);
	if (pw && pw->key && (r = pw->key(a, key)) != 0)
		return r;
	c = keys_lookup(key);
	if (c == CMD_NONE)
		return 0;
	r = KF_HANDLED | KF_REDRAW;
	switch (c) {
	case CMD_HELP: a->mode = MODE_HELP; a->help_top = 0; break;
	case CMD_LOG: a->mode = MODE_LOG; a->log_top = -1; break;
	case CMD_SAVE:
		if (a->path) {
			app_save(a, NULL);
		} else {
			char name[4096];

			default_save_name(a, name, sizeof(name));
			start_prompt(a, PROMPT_SAVE_AS, name);
		}
		break;
	case CMD_SAVE_AS: {
		char name[4096];

		default_save_name(a, name, sizeof(name));
		start_prompt(a, PROMPT_SAVE_AS, name);
		break;
	}
	case CMD_OPEN: start_prompt(a, PROMPT_OPEN, ""); break;
	case CMD_REPORT: {
		char name[4096];
		size_t n;

		/* beside the plan's file, or plans/NAME.html for a plan without one */
		default_save_name(a, name, sizeof(name));
		n = strlen(name);
		if (n > 5 && strcmp(name + n - 5, ".json") == 0)
			n -= 5;
		snprintf(name + n, sizeof(name) - n, ".html");
		start_prompt(a, PROMPT_REPORT, name);
		break;
	}
	case CMD_SEARCH: start_prompt(a, PROMPT_SEARCH, ""); break;
	case CMD_FILTER: start_prompt(a, PROMPT_FILTER, a->filter ? a->pattern : ""); break;
	case CMD_NEXT_MATCH: app_next_match(a, 1); break;
	case CMD_PREV_MATCH: app_next_match(a, -1); break;
	case CMD_COMPARE:
		a->compare = !a->compare;
		if (!a->compare)
			a->focus = 0;
		else if (!a->ref.loaded)
			app_set_ref_step(a, 1);
		if (a->compare && a->ref.loaded)
			app_msg(a, R_NORMAL, "compare: %s above the plan, one time scale (V: next baseline, Tab: switch)",
			        a->ref_name);
		r |= KF_RELAYOUT;
		break;
	case CMD_REF_NEXT:
		for (int k = 1; k <= a->nsteps; k++) {
			int i = (a->ref_step + k) % a->nsteps;

			if (a->steps[i].ok) {
				app_set_ref_step(a, i);
				break;
			}
		}
		a->compare = true;
		app_msg(a, R_NORMAL, "compare with %s", a->ref_step >= 0 ? a->steps[a->ref_step].name : "?");
		r |= KF_RELAYOUT;
		break;
	case CMD_SWITCH:
		if (a->compare) {
			a->focus ^= 1;
			app_clamp_cursor(a);
		}
		break;
	case CMD_STEPS:
		if (a->panel == PANEL_STEPS) {
			a->panel = PANEL_DETAILS;
		} else {
			a->panel = PANEL_STEPS;
			a->compare = true;
			if (!a->steps_tuner) {
				app_set_ref_step(a, a->step_sel);
				app_msg(a, R_NORMAL, "steps: Up/Down walk the generation (shown above the plan), Enter adopts, Esc closes");
			} else if (a->tuning.state == TUNING_NONE || a->tuning.state == TUNING_FAILED) {
				tuning_start(a);
			} else if (a->tuning.n > 0) {
				tuning_select(a, a->tuning.sel);
				say_tstep(a);
			}
		}
		r |= KF_RELAYOUT;
		break;
	case CMD_ADOPT:
		if (a->compare && a->focus == 1 && a->ref.loaded) {
			char label[100];

			snprintf(label, sizeof(label), "the compared plan (%s)", a->ref_name);
			app_adopt_plan(a, &a->ref.plan, label);
		}
		break;
	case CMD_DETAILS:
		/* details -> the run's gauges (once there was a run) -> nothing -> details */
		a->panel = a->panel == PANEL_DETAILS ? (a->run.have_live ? PANEL_RUN : PANEL_NONE) :
		           a->panel == PANEL_RUN ? PANEL_NONE : PANEL_DETAILS;
		r |= KF_RELAYOUT;
		break;
	case CMD_XFERS: a->xfer_rows = !a->xfer_rows; r |= KF_RELAYOUT; break;
	case CMD_CRIT_SHOW:
		a->crit_marks = !a->crit_marks;
		app_msg(a, R_NORMAL, "critical path %s on the chart", a->crit_marks ? "marked" : "unmarked");
		break;
	case CMD_RUN:
		if (run_active(a)) {
			a->mode = MODE_QUESTION;
			a->question = Q_STOP;
		} else {
			run_start(a);
			r |= KF_RELAYOUT;
		}
		break;
	case CMD_REORDER: {
		struct edit ed = { EDIT_REORDER, 0, 0, 0, 0, NULL, NULL, NULL };

		app_edit(a, &ed);
		break;
	}
	case CMD_QUIT:
		if (run_active(a)) {
			a->mode = MODE_QUESTION;
			a->question = Q_STOP_QUIT;
		} else {
			r |= quit_or_ask(a);
		}
		break;
	case CMD_BACK: r |= back_out(a); break;
	case CMD_LEFT: app_cursor_move(a, 0, -1); break;
	case CMD_RIGHT: app_cursor_move(a, 0, 1); break;
	case CMD_UP: app_cursor_move(a, -1, 0); break;
	case CMD_DOWN: app_cursor_move(a, 1, 0); break;
	case CMD_FIRST: a->sel_pos = 0; app_clamp_cursor(a); app_show_cursor(a); break;
	case CMD_LAST: a->sel_pos = 1 << 30; app_clamp_cursor(a); app_show_cursor(a); break;
	case CMD_PAGE_UP: app_cursor_move(a, 0, -10); break;
	case CMD_PAGE_DOWN: app_cursor_move(a, 0, 10); break;
	case CMD_ROWS_UP: app_page_rows(a, -1); break;
	case CMD_ROWS_DOWN: app_page_rows(a, 1); break;
	case CMD_TOP: app_cursor_dev(a, 0); break;
	case CMD_BOTTOM: app_cursor_dev(a, 1 << 30); break;
	case CMD_PAN_LEFT: app_pan(a, -a->chart_cols / 4); break;
	case CMD_PAN_RIGHT: app_pan(a, a->chart_cols / 4); break;
	case CMD_ZOOM_IN: app_zoom(a, 2); break;
	case CMD_ZOOM_OUT: app_zoom(a, 0.5); break;
	case CMD_FIT: app_fit(a); break;
	case CMD_WAITED: app_jump_waited(a); break;
	case CMD_CRIT_END: app_jump_crit_end(a); break;
	case CMD_OP_EARLIER:
	case CMD_OP_LATER: {
		struct edit ed = { EDIT_MOVE_OP, 0, a->sel_dev, a->sel_pos, c == CMD_OP_EARLIER ? -1 : 1, NULL, NULL, NULL };

		app_edit(a, &ed);
		app_show_cursor(a);
		break;
	}
	case CMD_STAGE_SHRINK: boundary_edit(a, 0); break;
	case CMD_STAGE_GROW: boundary_edit(a, 1); break;
	case CMD_MOVE_STAGE:
		if (app_cursor_op(a) >= 0 && !(a->compare && a->focus == 1)) {
			char cur[16];

			snprintf(cur, sizeof(cur), "%d", a->sel_dev);
			start_prompt(a, PROMPT_MOVE_STAGE, "");
			app_msg(a, R_NORMAL, "stage %d is on gpu %s", v->plan.order[app_cursor_op(a)].stage, cur);
		}
		break;
	case CMD_UNDO: app_undo(a); break;
	case CMD_REDO: app_redo(a); break;
	case CMD_REDRAW: r |= KF_REPAINT; break;
	case CMD_SUSPEND: r |= KF_SUSPEND; break;
	default: break;
	}
	return r;
}

int view_mouse(struct app *a, const struct layout *l, int x, int y, int button)
{
	if (l->too_small || a->mode != MODE_NORMAL)
		return 0;
	if (y == l->fbar.y && button == 1) {
		int fk = x / (l->fbar.w / 10) + 1;

		for (const struct command *k = commands; k->name; k++)
			if (k->fkey == fk)
				return view_key(a, KEY_F(fk));   /* a click is the key press */
		return 0;
	}
	if (button == 6 || button == 7) {
		app_pan(a, button == 6 ? -a->chart_cols / 8 : a->chart_cols / 8);
		return KF_HANDLED | KF_REDRAW;
	}
	if (button == 4 || button == 5) {
		if (a->cur.plan.ndevices > app_page_devs(a)) {
			a->row0 += button == 4 ? -3 : 3;
			if (a->row0 > a->cur.plan.ndevices - app_page_devs(a))
				a->row0 = a->cur.plan.ndevices - app_page_devs(a);
			if (a->row0 < 0)
				a->row0 = 0;
			/* the cursor stays on a row that shows */
			if (a->sel_dev < a->row0 || a->sel_dev >= a->row0 + app_page_devs(a))
				app_cursor_dev(a, a->sel_dev < a->row0 ? a->row0 : a->row0 + app_page_devs(a) - 1);
		} else {
			app_pan(a, button == 4 ? -a->chart_cols / 8 : a->chart_cols / 8);
		}
		return KF_HANDLED | KF_REDRAW;
	}
	if (button != 1 || x < GANTT_LABEL_W)
		return 0;
	for (int f = 0; f < 2; f++) {
		const struct rect *r = f ? &l->ref : &l->gantt;
		int d;

		if (r->h == 0 || y < r->y || y >= r->y + r->h)
			continue;
		d = gantt_view_device_at(a, f, r, y);
		if (d >= 0 && app_pick(a, f, d, x - GANTT_LABEL_W))
			return KF_HANDLED | KF_REDRAW;
	}
	return 0;
}
