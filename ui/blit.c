/*
 * blit — the cell grid to the terminal through curses (see tui.h), sending as few bytes
 * as it can: curses itself sends only the cells that changed, each run of one colour with
 * one attribute change; what it cannot see is a pan. A pan moves every chart row's
 * content sideways, so every cell of the chart differs from the one before it at the
 * same column and curses would send the whole chart again (about 110 kB at 200x60 on 64
 * gpus, most of it colour changes). Here each row whose new content is its old content
 * shifted by the columns the time axis moved is shifted on the terminal itself first,
 * with delete- or insert-character at the row's first changed column (a few bytes a row),
 * and curses' copy of the screen (curscr) is shifted to match; curses then sends only
 * the columns that came into view and what else changed.
 *
 * The terminal's cursor and attributes are saved and restored around the shifts (sc/rc),
 * so curses' idea of both stays true. A terminal without sc/rc or without dch/ich gets
 * no shifts; rows with a character outside ASCII in the shifted span are not shifted
 * (their cells in curscr may be wide).
 */
#include "config.h"
#include "tui.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <unistd.h>

#include "theme.h"

bool tui_utf8_term;

/* The grid as last sent (what curscr holds), to find the rows a pan shifted. */
static struct {
	int w, h;
	uint32_t *g;
	uint8_t *r;
	bool valid;
} prev;

/* The time axis' left edge and scale at the last blit, for tui_pan_shift. */
static double last_t0, last_mpc;

/* The shifts, written to the terminal's descriptor before curses writes the frame (its
 * buffer is empty between frames), so they arrive first. */
static int out_fd = STDOUT_FILENO;
static char out_buf[16384];
static size_t out_len;

void tui_blit_output(int fd)
{
	out_fd = fd;
}

static int out_ch(int c)
{
	if (out_len < sizeof(out_buf))
		out_buf[out_len++] = (char)c;
	return c;
}

static void out(const char *cap)
{
	tputs(cap, 1, out_ch);
}

/* Sends what out() gathered; false when it did not all fit (nothing was sent then). */
static bool out_flush(void)
{
	const char *p = out_buf;
	size_t n = out_len;

	out_len = 0;
	if (n >= sizeof(out_buf))
		return false;
	while (n > 0) {
		ssize_t w = write(out_fd, p, n);

		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

void tui_blit_forget(void)
{
	prev.valid = false;
}

int tui_pan_shift(double t0, double ms_per_col)
{
	double k = ms_per_col > 0 ? (t0 - last_t0) / ms_per_col : 0;
	int n = k >= 0 ? (int)(k + 0.5) : -(int)(-k + 0.5);
	bool same = last_mpc == ms_per_col;

	last_t0 = t0;
	last_mpc = ms_per_col;
	/* a whole number of columns at the same scale: the content moved by that much */
	if (!same || n == 0 || (k - n > 1e-6 || n - k > 1e-6))
		return 0;
	return n;
}

static bool ascii_span(const uint32_t *g, const struct screen *s, int y, int x0)
{
	for (int x = x0; x < s->w; x++) {
		uint32_t a = g[(long)y * s->w + x], b = screen_glyph(s, x, y);

		if (a == 0 || a >= 0x80 || b == 0 || b >= 0x80)
			return false;
	}
	return true;
}

/* Where row y of s is row y of prev shifted by k columns (k > 0: left) from its first
 * changed column: that column, or -1 when the shift would not save bytes. */
static int shift_from(const struct screen *s, int y, int k)
{
	const uint32_t *pg = prev.g + (long)y * s->w;
	const uint8_t *pr = prev.r + (long)y * s->w;
	const struct cell *c = s->c + (long)y * s->w;
	int x0 = 0, ak = k > 0 ? k : -k, gain = 0;

	while (x0 < s->w && pg[x0] == screen_glyph(s, x0, y) && pr[x0] == c[x0].role)
		x0++;
	if (s->w - x0 - ak < 16 || !ascii_span(prev.g, s, y, x0))
		return -1;
	for (int x = x0; x < s->w; x++) {
		int from = x + k;
		uint32_t g = screen_glyph(s, x, y);

		if (from >= x0 && from < s->w && pg[from] == g && pr[from] == c[x].role)
			gain++;
		if (pg[x] == g && pr[x] == c[x].role)
			gain--;
	}
	/* a shift costs a cursor move and a dch/ich, about 16 bytes; a cell sent costs one or more */
	return gain > 16 ? x0 : -1;
}

/* Shifts curses' copy of row y from column x0 by k (k > 0: left), blanks coming in. */
static void shift_curscr(int y, int x0, int k, int w)
{
	static cchar_t *row;
	static int cap;
	cchar_t blank;
	wchar_t sp[2] = { L' ', 0 };

	if (w + 1 > cap) {
		cchar_t *r = realloc(row, (size_t)(w + 1) * sizeof(*r));

		if (!r)
			return;
		row = r;
		cap = w + 1;
	}
	setcchar(&blank, sp, A_NORMAL, 0, NULL);
	mvwin_wchnstr(curscr, y, 0, row, w);
	if (k > 0) {
		memmove(row + x0, row + x0 + k, (size_t)(w - x0 - k) * sizeof(*row));
		for (int x = w - k; x < w; x++)
			row[x] = blank;
	} else {
		memmove(row + x0 - k, row + x0, (size_t)(w - x0 + k) * sizeof(*row));
		for (int x = x0; x < x0 - k; x++)
			row[x] = blank;
	}
	mvwadd_wchnstr(curscr, y, 0, row, w);
}

/* The rows that are the last frame's shifted by k columns, shifted on the terminal. */
static void shift_rows(const struct screen *s, int k)
{
	static int *from;
	static int cap;
	int cy, cx, n = 0;
	const char *dch = k > 0 ? parm_dch : parm_ich;

	if (!prev.valid || prev.w != s->w || prev.h != s->h || !save_cursor || !restore_cursor || !dch ||
	    !cursor_address || !exit_attribute_mode)
		return;
	if (s->h > cap) {
		int *f = realloc(from, (size_t)s->h * sizeof(*f));

		if (!f)
			return;
		from = f;
		cap = s->h;
	}
	out_len = 0;
	out(save_cursor);
	out(exit_attribute_mode);
	for (int y = 0; y < s->h; y++) {
		if ((from[y] = shift_from(s, y, k)) < 0)
			continue;
		out(tiparm(cursor_address, y, from[y]));
		out(tiparm(dch, k > 0 ? k : -k));
		n++;
	}
	out(restore_cursor);
	/* curses' copy follows only what the terminal was sent */
	if (n == 0 || !out_flush())
		return;
	getyx(curscr, cy, cx);
	for (int y = 0; y < s->h; y++)
		if (from[y] >= 0)
			shift_curscr(y, from[y], k, s->w);
	wmove(curscr, cy, cx);
}

static void remember(const struct screen *s)
{
	long n = (long)s->w * s->h;

	if (prev.w * prev.h != n) {
		free(prev.g);
		free(prev.r);
		prev.g = malloc((size_t)n * sizeof(*prev.g));
		prev.r = malloc((size_t)n);
		if (!prev.g || !prev.r) {
			free(prev.g);
			free(prev.r);
			memset(&prev, 0, sizeof(prev));
			return;
		}
	}
	prev.w = s->w;
	prev.h = s->h;
	for (int y = 0; y < s->h; y++)
		for (int x = 0; x < s->w; x++) {
			prev.g[(long)y * s->w + x] = screen_glyph(s, x, y);
			prev.r[(long)y * s->w + x] = s->c[(long)y * s->w + x].role;
		}
	prev.valid = true;
}

void tui_blit_pan(const struct screen *s, int shift)
{
	static cchar_t *row;
	static int row_cap;

	if (s->w > row_cap) {
		cchar_t *r = realloc(row, (size_t)s->w * sizeof(*r));

		if (!r)
			return;
		row = r;
		row_cap = s->w;
	}
	if (shift)
		shift_rows(s, shift);
	for (int y = 0; y < s->h; y++) {
		int n = 0;

		for (int x = 0; x < s->w; x++) {
			wchar_t wc[2] = { 0, 0 };
			uint32_t g = screen_glyph(s, x, y);
			unsigned long at = theme_attr((enum role)s->c[(long)y * s->w + x].role);

			if (g == 0 && tui_utf8_term)
				continue;       /* drawn by the wide character before it */
			wc[0] = (wchar_t)(g == 0 || (g >= 0x80 && !tui_utf8_term) ? '?' : g);
			setcchar(&row[n++], wc, (attr_t)(at & ~A_COLOR), (short)PAIR_NUMBER(at), NULL);
		}
		mvadd_wchnstr(y, 0, row, n);
	}
	wnoutrefresh(stdscr);
	doupdate();
	remember(s);
}

void tui_blit(const struct screen *s)
{
	tui_blit_pan(s, 0);
}
