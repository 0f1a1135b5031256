/*
 * screen — the cell grid views draw into (see screen.h). Every write is clipped, so a
 * view may draw without knowing how much room it really got.
 */
#include "config.h"
#include "screen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int screen_resize(struct screen *s, int w, int h)
{
	struct cell *c;

	if (w < 1)
		w = 1;
	if (h < 1)
		h = 1;
	c = realloc(s->c, (size_t)w * h * sizeof(*c));
	if (!c)
		return -1;
	s->c = c;
	s->w = w;
	s->h = h;
	screen_clear(s);
	return 0;
}

void screen_release(struct screen *s)
{
	free(s->c);
	memset(s, 0, sizeof(*s));
}

void screen_clear(struct screen *s)
{
	for (long i = 0; i < (long)s->w * s->h; i++)
		s->c[i] = (struct cell){ ' ', R_NORMAL };
}

/* What a cell may hold: the terminal gets cells through addchnstr, which passes bytes on
 * unchecked, so a control byte from a file name or a message (ESC, C1 CSI) would reach the
 * terminal as a command. Tabs become spaces, other control bytes '?'. */
static char cell_char(char ch)
{
	unsigned char u = (unsigned char)ch;

	if (ch == '\t')
		return ' ';
	return u < 0x20 || u == 0x7f || (u >= 0x80 && u <= 0x9f) ? '?' : ch;
}

void screen_put(struct screen *s, int x, int y, char ch, enum role r)
{
	if (x < 0 || y < 0 || x >= s->w || y >= s->h)
		return;
	s->c[(long)y * s->w + x] = (struct cell){ cell_char(ch), (uint8_t)r };
}

int screen_text(struct screen *s, int x, int y, int maxw, const char *text, enum role r)
{
	int n = 0;

	if (y < 0 || y >= s->h)
		return 0;
	for (; text[n] && n < maxw && x + n < s->w; n++)
		if (x + n >= 0)
			s->c[(long)y * s->w + x + n] = (struct cell){ cell_char(text[n]), (uint8_t)r };
	return n;
}

int screen_textf(struct screen *s, int x, int y, int maxw, enum role r, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return screen_text(s, x, y, maxw, buf, r);
}

void screen_fill(struct screen *s, const struct rect *r, char ch, enum role role)
{
	for (int y = r->y; y < r->y + r->h; y++)
		for (int x = r->x; x < r->x + r->w; x++)
			screen_put(s, x, y, ch, role);
}

void screen_row_text(const struct screen *s, int y, char *buf)
{
	int n = 0;

	if (y >= 0 && y < s->h)
		for (int x = 0; x < s->w; x++)
			buf[n++] = s->c[(long)y * s->w + x].ch ? s->c[(long)y * s->w + x].ch : ' ';
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
}

void screen_title(struct screen *s, const struct rect *r, const char *title)
{
	for (int x = r->x; x < r->x + r->w; x++)
		screen_put(s, x, r->y, '-', R_BORDER);
	screen_textf(s, r->x + 2, r->y, r->w - 4, R_TITLE, " %s ", title);
}

/* The rest of text after its first line of at most w cells, broken at a space (a word
 * longer than a line is cut). */
const char *screen_skip_line(const char *text, int w)
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
int screen_wrap(struct screen *s, int x, int y, int w, int rows, const char *text, enum role role)
{
	int used = 0;

	while (*text && used < rows && w > 0) {
		const char *next = screen_skip_line(text, w);
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
