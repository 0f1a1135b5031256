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

/* The screen below LAYOUT_MIN_COLS x LAYOUT_MIN_ROWS: its size, the size needed and how
 * to quit, in the longest wording whose lines all fit (none is ever cut mid-word at 20x6
 * or 30x8), centred. */
static void draw_too_small(struct app *a, struct screen *s)
{
	char big[64], small[40], need[96], need_long[64], need_short[32];
	bool mod = app_modified(a);
	const char *quit_long = mod ? "unsaved edits: enlarge it to save them" : "q quits";
	const char *quit_short = mod ? "enlarge to save" : "q quits";
	const char *cand[][3] = {
		{ big, need, NULL },
		{ big, need_long, quit_long },
		{ small, need_short, quit_short },
		{ "too small", quit_short, NULL },
		{ "too small", NULL, NULL },
		{ "small", NULL, NULL },
	};
	int n = (int)(sizeof(cand) / sizeof(cand[0])), c, lines;

	snprintf(big, sizeof(big), "terminal too small: %dx%d", s->w, s->h);
	snprintf(small, sizeof(small), "too small: %dx%d", s->w, s->h);
	snprintf(need, sizeof(need), "octopipe needs at least %dx%d (%s)", LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS,
	         quit_long);
	snprintf(need_long, sizeof(need_long), "octopipe needs at least %dx%d", LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS);
	snprintf(need_short, sizeof(need_short), "needs %dx%d", LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS);
	for (c = 0;; c++) {
		bool fits = true;

		for (lines = 0; lines < 3 && cand[c][lines]; lines++)
			fits = fits && (int)strlen(cand[c][lines]) <= s->w;
		if ((fits && lines <= s->h) || c == n - 1)
			break;   /* the last, "small", is cut when even it does not fit */
	}
	for (int i = 0; i < lines; i++) {
		int len = (int)strlen(cand[c][i]), x = (s->w - len) / 2, y = (s->h - lines) / 2 + i;

		if (y < s->h)
			screen_text(s, x > 0 ? x : 0, y > 0 ? y : 0, s->w, cand[c][i], i == 0 ? R_WARN : R_NORMAL);
	}
}

void view_draw(struct app *a, struct screen *s, const struct layout *l)
{
	char title[200];
	const struct widget *pw;

	screen_clear(s);
	if (l->too_small) {
		draw_too_small(a, s);
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
