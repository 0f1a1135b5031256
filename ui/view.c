/*
 * view — the whole screen put together (see view.h): the layout for the terminal's size,
 * then each piece drawn into its rectangle: header.c, the charts (gantt_view.c) with their
 * titles, panels.c, statusbar.c, or a full page (pages.c) instead. Keys are input.c's.
 */
#include "config.h"
#include "view_int.h"

#include <stdio.h>
#include <string.h>

#include "doc.h"
#include "gantt_view.h"

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
		snprintf(buf, n, " compare: %s %s%s ", a->ref_name, sb.buf, a->focus == 1 ? " * cursor here (Tab)" : "");
	else
		snprintf(buf, n, " plan: %s%s ", sb.buf, a->compare && a->focus == 0 ? " * cursor here (Tab)" : "");
	strbuf_release(&sb);
}

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
		snprintf(m2, sizeof(m2), "octopipe needs at least %dx%d (%s)", LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS,
		         app_modified(a) ? "unsaved edits: enlarge it to save them" : "q quits");
		screen_text(s, (s->w - (int)strlen(m1)) / 2 > 0 ? (s->w - (int)strlen(m1)) / 2 : 0, s->h / 2 - 1, s->w, m1, R_WARN);
		screen_text(s, (s->w - (int)strlen(m2)) / 2 > 0 ? (s->w - (int)strlen(m2)) / 2 : 0, s->h / 2, s->w, m2, R_NORMAL);
		return;
	}
	if ((pw = pages_widget(a->mode)) != NULL) {
		pw->draw(a, s, &(struct rect){ 0, 0, s->w, l->fbar.y });
		statusbar_draw_fbar(a, s, &l->fbar);
		return;
	}
	header_draw(a, s, &l->header, l);
	if (l->ref.h > 0 && a->ref.loaded) {
		chart_title(a, &a->ref, 1, title, sizeof(title));
		gantt_view_draw(a, &a->ref, 1, title, s, &l->ref);
	}
	chart_title(a, &a->cur, 0, title, sizeof(title));
	gantt_view_draw(a, &a->cur, 0, a->compare ? title : NULL, s, &l->gantt);
	panels_draw_breakdown(a, s, l);
	pw = panels_widget(a);
	if (pw && l->panel.h > 0)
		pw->draw(a, s, &l->panel);
	statusbar_draw(a, s, &l->status);
	statusbar_draw_fbar(a, s, &l->fbar);
}
