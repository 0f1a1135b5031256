/*
 * header — the top of the screen: a few lines of text about the edited plan, then its
 * memory bars (peak per gpu against usable memory).
 *
 * The text lines are a table of functions, one per line, drawn top to bottom; a new line
 * (the parallel layout, say) is one more function in header_lines[] and one more in
 * LAYOUT_HEADER_LINES, which the layout counts and a static assertion keeps in step.
 */
#include "config.h"
#include "view_int.h"

#include <stdio.h>
#include <string.h>

#include "doc.h"

/* When only `cells` of n gpus fit in a strip of cells (memory bars, run gauges), the first
 * one shown: from the chart's first row, moved on so the cursor's gpu shows too; the last
 * cell is kept to say which gpus these are. */
int header_first_shown(const struct app *a, int n, int cells)
{
	int first = a->row0;

	if (a->sel_dev >= first + cells - 1)
		first = a->sel_dev - cells + 2;
	if (first > n - (cells - 1))
		first = n - (cells - 1);
	return first > 0 ? first : 0;
}

/* Line 1: the program, the plan's name (modified, autosaved), what it runs on, its file. */
static void title_line(struct app *a, struct screen *s, int y, int w)
{
	const struct plan *p = &a->cur.plan;
	struct strbuf sb = STRBUF_INIT;
	int x;

	screen_fill(s, &(struct rect){ 0, y, w, 1 }, ' ', R_HEADER);
	x = screen_text(s, 1, y, w, "OctoPipe", R_TITLE) + 3;
	strbuf_addf(&sb, "%s%s", p->name ? p->name : "plan",
	            !app_modified(a) ? "" : a->autosaved ? " [modified, autosaved]" : " [modified]");
	x += screen_text(s, x, y, w - x, sb.buf, R_TITLE) + 2;
	strbuf_reset(&sb);
	if (p->cluster.rep.tp > 0 || p->has_parallel) {
		/* a parallel layout: the rows are pipeline devices, each a TP group of one replica */
		struct parallel l = plan_parallel(p);

		strbuf_addf(&sb, "%s on %s (pp %d x tp %d x dp %d = %d gpu%s, ep %d, ZeRO %d%s), %d microbatch%s per replica, "
		            "%d stage%s | %s", p->model.name, p->cluster.name, l.pp, l.tp, l.dp, parallel_gpus(&l),
		            parallel_gpus(&l) == 1 ? "" : "s", l.ep, l.zero, l.fp32_grads ? ", fp32 grads" : "",
		            p->microbatches, p->microbatches == 1 ? "" : "es", p->nstages, p->nstages == 1 ? "" : "s",
		            a->path ? (strrchr(a->path, '/') ? strrchr(a->path, '/') + 1 : a->path) : a->source);
	} else {
		strbuf_addf(&sb, "%s on %s (%d gpu%s), %d microbatch%s, %d stage%s | %s", p->model.name, p->cluster.name,
		            p->ndevices, p->ndevices == 1 ? "" : "s", p->microbatches, p->microbatches == 1 ? "" : "es",
		            p->nstages, p->nstages == 1 ? "" : "s",
		            a->path ? (strrchr(a->path, '/') ? strrchr(a->path, '/') + 1 : a->path) : a->source);
	}
	screen_text(s, x, y, w - x - 1, sb.buf, R_HEADER);
	strbuf_release(&sb);
}

/* Line 2: iteration time, throughput, bubble, the bounds (or why the plan cannot run), and
 * how long the last edit and its simulation took. */
static void metrics_line(struct app *a, struct screen *s, int y, int w)
{
	struct pview *v = &a->cur;
	const struct plan *p = &v->plan;
	struct strbuf sb = STRBUF_INIT;
	int x;

	x = 1;
	if (v->ran) {
		x += screen_text(s, x, y, w, "iteration ", R_LABEL);
		fmt_ms(&sb, v->m.makespan_ms);
		x += screen_text(s, x, y, w, sb.buf, R_VALUE) + 2;
		x += screen_text(s, x, y, w, "tokens/s ", R_LABEL);
		x += screen_textf(s, x, y, w, R_VALUE, "%.0f", v->m.throughput_tokens_per_s) + 2;
		x += screen_text(s, x, y, w, "bubble ", R_LABEL);
		x += screen_textf(s, x, y, w, R_VALUE, "%.1f%%", 100 * v->m.bubble_ratio) + 2;
		/* both bounds, each with the efficiency against it (lower bound / iteration) */
		x += screen_text(s, x, y, w, "bound ", R_LABEL);
		strbuf_reset(&sb);
		fmt_ms(&sb, v->m.lower_bound_ms);
		x += screen_text(s, x, y, w, sb.buf, R_VALUE);
		x += screen_textf(s, x, y, w, R_DIM, " %.1f%%", 100 * v->m.efficiency) + 2;
		x += screen_text(s, x, y, w, "tight ", R_LABEL);
		strbuf_reset(&sb);
		fmt_ms(&sb, v->m.lower_bound_tight_ms);
		x += screen_text(s, x, y, w, sb.buf, R_VALUE);
		x += screen_textf(s, x, y, w, R_DIM, " %.1f%%", 100 * v->m.efficiency_tight) + 2;
		/* where memory lifts it higher: no plan that fits is faster */
		if (v->m.lower_bound_memory_ms > v->m.lower_bound_tight_ms * (1 + 1e-9)) {
			x += screen_text(s, x, y, w, "in memory ", R_LABEL);
			strbuf_reset(&sb);
			fmt_ms(&sb, v->m.lower_bound_memory_ms);
			x += screen_text(s, x, y, w, sb.buf, R_VALUE);
			x += screen_textf(s, x, y, w, R_DIM, " %.1f%%", 100 * v->m.efficiency_memory) + 2;
		}
		if (v->m.dp_sync_ms > 0) {
			x += screen_text(s, x, y, w, "dp sync ", R_LABEL);
			strbuf_reset(&sb);
			fmt_ms(&sb, v->m.dp_sync_ms);
			x += screen_text(s, x, y, w, sb.buf, R_VALUE) + 2;
		}
		if (v->m.noom)
			x += screen_textf(s, x, y, w - x, R_ERROR, " OUT OF MEMORY: gpu %d ", v->m.oom[0]) + 1;
		/* what the memory bars below measure, when there is room to say it */
		if (w - x > 50) {
			strbuf_reset(&sb);
			fmt_bytes(&sb, cluster_usable_bytes(&p->cluster));
			x += screen_textf(s, x, y, w - x - 26, R_DIM, "mem: peak/gpu of %s", sb.buf) + 2;
		}
	} else {
		x += screen_text(s, x, y, w, v->deadlock ? " DEADLOCK " : " CANNOT RUN ", R_ERROR) + 1;
		/* a plan opened deadlocked has no earlier chart to show or edit to undo */
		x += screen_text(s, x, y, w - x, !v->deadlock ? v->why : v->have_times ?
		                 "the chart shows the last plan that ran; u undoes" :
		                 "this order never runs: p regenerates every gpu's order", R_WARN) + 2;
	}
	if (w - x > 30 && a->last_edit_ms > 0)
		screen_textf(s, w - 24, y, 23, R_DIM, "edit+sim %.1f ms", a->last_edit_ms);
	strbuf_release(&sb);
}

static void (*const header_lines[])(struct app *a, struct screen *s, int y, int w) = {
	title_line,
	metrics_line,
};
_Static_assert(sizeof(header_lines) / sizeof(header_lines[0]) == LAYOUT_HEADER_LINES,
               "the layout gives the header one row per text line");

/* The memory bars from row y: as many as the layout's lines hold. */
static void memory_bars(struct app *a, struct screen *s, int y, const struct layout *l)
{
	struct pview *v = &a->cur;
	const struct plan *p = &v->plan;
	int per = l->mem_per_line, shown = per * l->mem_lines, first = 0;
	double cap = cluster_usable_bytes(&p->cluster);

	/* more gpus than bars: the bars follow the chart's rows and the cursor's gpu, the last
	 * cell says which they are */
	if (p->ndevices > shown)
		first = header_first_shown(a, p->ndevices, shown);
	for (int d = first; d < p->ndevices && d - first < shown; d++) {
		int cx = ((d - first) % per) * LAYOUT_MEM_CELL, cy = y + (d - first) / per;
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

void header_draw(struct app *a, struct screen *s, const struct rect *r, const struct layout *l)
{
	for (int i = 0; i < LAYOUT_HEADER_LINES; i++)
		header_lines[i](a, s, r->y + i, r->w);
	memory_bars(a, s, r->y + LAYOUT_HEADER_LINES, l);
}
