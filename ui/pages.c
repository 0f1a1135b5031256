/*
 * pages — the full-screen pages: the help, generated from the key table; the message
 * log, every message kept (messages.c) wrapped on word boundaries with its time, the latest
 * at the bottom; and F7's picker (picker.c) with its filter line. The help and the log
 * scroll like less and stop at their ends; the picker keeps its selection on the page.
 *
 * Each page is a widget (draw, key) found by the mode it belongs to (pages_widget), so
 * the view draws and the input dispatches every page the same way, and a new page is one
 * more entry there.
 */
#include "config.h"
#include "view_int.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "keys.h"

#define HELP_DESC_X 22    /* where a key's description starts */

/* Lays the help out in lines of at most w cells: a key's description wraps under itself,
 * other text under its third column. Draws the lines from top on, at most rows of them,
 * from screen row y0 (s NULL: only counts); returns the number of lines. */
static int help_lines(const char *text, struct screen *s, int w, int top, int rows, int y0)
{
	int n = 0;

	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n'), *tab;
		int len = nl ? (int)(nl - line) : (int)strlen(line);
		char buf[600], keys[64];
		const char *rest;
		int x = 1, first = 1;

		snprintf(buf, sizeof(buf), "%.*s", len < 590 ? len : 590, line);
		tab = strchr(buf, '\t');
		if (tab) {
			snprintf(keys, sizeof(keys), "%.*s", (int)(tab - buf), buf);
			rest = tab + 1;
			x = HELP_DESC_X;
		} else {
			rest = buf;
		}
		do {
			int avail = w - x + 1, cut;
			const char *next = screen_skip_line(rest, avail > 10 ? avail : 10);

			cut = (int)(next - rest);
			while (cut > 0 && rest[cut - 1] == ' ')
				cut--;
			if (s && n >= top && n - top < rows) {
				int y = y0 + n - top;

				if (tab && first)
					screen_text(s, 1, y, HELP_DESC_X - 2, keys, R_HELP_KEY);
				screen_text(s, x, y, cut, rest, n == 0 ? R_TITLE : !tab && buf[0] != ' ' ? R_LABEL : R_NORMAL);
			}
			n++;
			rest = next;
			if (first && !tab)
				x = 3;     /* text that wraps goes on under its third column */
			first = 0;
		} while (*rest);
		line = nl ? nl + 1 : line + len;
	}
	return n;
}

/* The help, wrapped to the width; when it is taller than the screen its last row says
 * which lines show and how to scroll. */
static void draw_help(struct app *a, struct screen *s, const struct rect *r)
{
	struct strbuf sb = STRBUF_INIT;
	int w = s->w - 2, rows = r->h, total;

	keys_help(&sb);
	total = help_lines(sb.buf, NULL, w, 0, 0, 0);
	if (total > rows)
		rows--;         /* the last row says where the page is */
	/* scrolling stops at the end: the last line at the bottom, never past it */
	if (a->help_top > total - rows)
		a->help_top = total - rows;
	if (a->help_top < 0)
		a->help_top = 0;
	help_lines(sb.buf, s, w, a->help_top, rows, r->y);
	a->page_rows = rows;
	if (rows < r->h)
		screen_textf(s, 1, r->y + rows, w, R_DIM, "-- lines %d-%d of %d (Up/Down, PgUp/PgDn, g/G scroll; Esc or q "
		             "closes) --", a->help_top + 1, a->help_top + rows, total);
	strbuf_release(&sb);
}

/* The message log, full screen: every message kept, wrapped, the latest at the bottom. */
static void draw_log(struct app *a, struct screen *s, const struct rect *r)
{
	int rows = r->h, w = s->w - 12, total = 0, top, y = 1, line = 0;

	screen_textf(s, 1, 0, s->w - 2, R_TITLE, "messages: %d, latest last (Up/Down, PgUp/PgDn, g/G scroll; Esc or q "
	             "closes)", a->log_n);
	if (w < 10 || rows < 2)
		return;
	/* count the wrapped lines, then show the window that ends at the bottom or at log_top */
	for (int k = 0; k < a->log_n; k++)
		total += screen_wrap(NULL, 0, 0, w, 1 << 20, app_log_entry(a, k)->text, R_NORMAL);
	a->page_rows = rows - 1;
	top = a->log_top < 0 || a->log_top > total - (rows - 1) ? total - (rows - 1) : a->log_top;
	if (top < 0)
		top = 0;
	a->log_top = top >= total - (rows - 1) ? -1 : top;
	for (int k = 0; k < a->log_n && y < rows; k++) {
		const struct log_entry *le = app_log_entry(a, k);
		int n = screen_wrap(NULL, 0, 0, w, 1 << 20, le->text, R_NORMAL);

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
				t = screen_skip_line(t, w);
			y += screen_wrap(s, 11, y, w, rows - y, t, (enum role)le->role);
		}
		line += n;
	}
}

/* A page: the rows last drawn (at least one). */
static int page_of(const struct app *a)
{
	return a->page_rows > 1 ? a->page_rows : 1;
}

static int log_key(struct app *a, int key)
{
	int page = page_of(a);

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
	case KEY_PPAGE: a->help_top = a->help_top > page_of(a) ? a->help_top - page_of(a) : 0; break;
	case KEY_NPAGE: case ' ': a->help_top += page_of(a); break;
	case KEY_HOME: case 'g': a->help_top = 0; break;
	case KEY_END: case 'G': a->help_top = 1 << 20; break;   /* drawing stops it at the end */
	case 27: case 'q': case '?': case KEY_F(1): case KEY_F(10):
		a->mode = MODE_NORMAL;
		return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
	default: break;
	}
	return KF_HANDLED | KF_REDRAW;
}

static void draw_picker(struct app *a, struct screen *s, const struct rect *r)
{
	static const char *const kind[] = { [PICK_RECENT] = "recent", [PICK_PLAN] = "plan", [PICK_SAMPLE] = "sample" };
	struct picker *pk = &a->picker;
	const struct line *f = &pk->filter;
	int rows = r->h, x, y = PAGES_PICKER_ROW0, namew = 20;

	/* the name column as wide as the longest name, up to half the screen */
	for (int i = 0; i < pk->n; i++)
		if ((int)strlen(pk->e[i].name) + 2 > namew)
			namew = (int)strlen(pk->e[i].name) + 2;
	if (namew > s->w / 2)
		namew = s->w / 2;

	screen_text(s, 1, 0, s->w - 2, s->w >= 104 ? "open: type to filter, Up/Down PgUp/PgDn Home/End choose, Enter "
	            "opens, Tab completes a path, Esc closes" : "open: type to filter; arrows, PgUp/PgDn choose; Enter opens; "
	            "Tab: a path; Esc", R_TITLE);
	x = 1 + screen_text(s, 1, 1, s->w - 2, "filter: ", R_PROMPT);
	{
		const char *lost = f->cut ? "[cut] " : f->not_utf8 || f->npend ? "[not UTF-8] " : "";

		x += screen_text(s, x, 1, s->w - x - 24, lost, R_ERROR);
		prompt_line_draw(s, x, 1, s->w - x - 24, f);
	}
	pk->page = rows - y > 1 ? rows - y : 1;
	picker_scroll(pk);
	if (pk->nshown > 0)
		screen_textf(s, s->w - 23, 1, 22, R_DIM, "%d-%d of %d", pk->top + 1,
		             pk->top + pk->page < pk->nshown ? pk->top + pk->page : pk->nshown, pk->nshown);
	screen_textf(s, 1, 2, s->w - 2, R_LABEL, "%-8s%-*s%s", "", namew, "name", "file");
	if (pk->nshown == 0) {
		screen_textf(s, 1, y, s->w - 2, R_WARN, "nothing listed matches '%s': Enter opens it as a path, Tab completes it",
		             f->buf);
		return;
	}
	for (int k = pk->top; k < pk->nshown && y < rows; k++, y++) {
		const struct pick_entry *e = &pk->e[pk->shown[k]];
		enum role role = k == pk->sel ? R_SELECTED : R_NORMAL;

		if (k == pk->sel)
			screen_fill(s, &(struct rect){ 0, y, s->w, 1 }, ' ', role);
		screen_text(s, 1, y, 8, kind[e->kind], k == pk->sel ? role : R_DIM);
		screen_text(s, 9, y, namew - 1, e->name, role);
		screen_text(s, 9 + namew, y, s->w - 10 - namew, e->where, k == pk->sel ? role : R_DIM);
	}
}

static const struct widget help_page = { "help", draw_help, help_key };
static const struct widget log_page = { "messages", draw_log, log_key };
static const struct widget picker_page = { "open", draw_picker, dialog_picker_key };

const struct widget *pages_widget(enum mode m)
{
	switch (m) {
	case MODE_HELP: return &help_page;
	case MODE_LOG: return &log_page;
	case MODE_PICKER: return &picker_page;
	default: return NULL;
	}
}
