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

/* What a cell may hold: the terminal gets cells as characters it shows, so a control
 * character from a file name or a message (ESC, C1 CSI) must not reach it as a command.
 * Tabs become spaces, other control characters '?'. */
static uint32_t cell_char(uint32_t ch)
{
	if (ch == '\t')
		return ' ';
	return ch < 0x20 || ch == 0x7f || (ch >= 0x80 && ch <= 0x9f) || ch > 0x10ffff ? '?' : ch;
}

void screen_put(struct screen *s, int x, int y, char ch, enum role r)
{
	if (x < 0 || y < 0 || x >= s->w || y >= s->h)
		return;
	s->c[(long)y * s->w + x] = (struct cell){ cell_char((unsigned char)ch >= 0x80 ? '?' : (unsigned char)ch),
	                                          (uint8_t)r };
}

/* The next code point of UTF-8 text (advancing *p); '?' for a byte that starts none. */
static uint32_t utf8_next(const char **p)
{
	const unsigned char *u = (const unsigned char *)*p;
	uint32_t cp;
	int n;

	if (u[0] < 0x80) {
		(*p)++;
		return u[0];
	}
	n = u[0] >= 0xf0 && u[0] <= 0xf4 ? 3 : u[0] >= 0xe0 ? 2 : u[0] >= 0xc2 && u[0] < 0xe0 ? 1 : 0;
	if (u[0] >= 0xf5)
		n = 0;
	cp = u[0] & (0x3f >> n);
	for (int i = 1; i <= n; i++) {
		if ((u[i] & 0xc0) != 0x80) {
			n = 0;
			break;
		}
		cp = cp << 6 | (u[i] & 0x3f);
	}
	/* overlong forms and surrogates are no characters */
	if (n == 0 || (n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff))) {
		(*p)++;
		return '?';
	}
	*p += n + 1;
	return cp;
}

/* Columns a code point takes: 0 for combining marks and zero-width ones (dropped), 2 for
 * East Asian wide and fullwidth ones and emoji, else 1. */
static int cp_width(uint32_t c)
{
	if ((c >= 0x300 && c <= 0x36f) || (c >= 0x1ab0 && c <= 0x1aff) || (c >= 0x1dc0 && c <= 0x1dff) ||
	    (c >= 0x20d0 && c <= 0x20ff) || (c >= 0xfe20 && c <= 0xfe2f) || (c >= 0x200b && c <= 0x200f) ||
	    (c >= 0xfe00 && c <= 0xfe0f))
		return 0;
	if ((c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0x303e) || (c >= 0x3041 && c <= 0xa4cf) ||
	    (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xfe30 && c <= 0xfe4f) ||
	    (c >= 0xff00 && c <= 0xff60) || (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1f64f) ||
	    (c >= 0x1f900 && c <= 0x1f9ff) || (c >= 0x20000 && c <= 0x3fffd))
		return 2;
	return 1;
}

int screen_text_cols(const char *text, size_t n)
{
	const char *end = text + n;
	int cols = 0;

	while (text < end && *text)
		cols += cp_width(cell_char(utf8_next(&text)));
	return cols;
}

int screen_char_bytes(const char *text)
{
	const char *p = text;

	if (!*text)
		return 0;
	utf8_next(&p);
	return (int)(p - text);
}

int screen_text(struct screen *s, int x, int y, int maxw, const char *text, enum role r)
{
	int n = 0;

	if (y < 0 || y >= s->h)
		return 0;
	while (*text && n < maxw && x + n < s->w) {
		uint32_t cp = cell_char(utf8_next(&text));
		int wd = cp_width(cp);

		if (wd == 0)
			continue;
		if (wd == 2 && (n + 2 > maxw || x + n + 2 > s->w))
			break;      /* half a wide character is none: the line ends before it */
		if (x + n >= 0)
			s->c[(long)y * s->w + x + n] = (struct cell){ cp, (uint8_t)r };
		if (wd == 2 && x + n + 1 >= 0)
			s->c[(long)y * s->w + x + n + 1] = (struct cell){ 0, (uint8_t)r };
		n += wd;
	}
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

uint32_t screen_glyph(const struct screen *s, int x, int y)
{
	const struct cell *c = &s->c[(long)y * s->w + x];

	if (c->ch == 0)
		return x > 0 && c[-1].ch != 0 && cp_width(c[-1].ch) == 2 ? 0 : ' ';
	if (cp_width(c->ch) == 2 && (x + 1 >= s->w || c[1].ch != 0))
		return '?';
	return c->ch;
}

void screen_row_text(const struct screen *s, int y, char *buf)
{
	int n = 0;

	if (y >= 0 && y < s->h)
		for (int x = 0; x < s->w; x++) {
			uint32_t c = screen_glyph(s, x, y);

			if (c == 0)
				continue;       /* the right half of a wide character */
			if (c < 0x80) {
				buf[n++] = (char)c;
			} else if (c < 0x800) {
				buf[n++] = (char)(0xc0 | c >> 6);
				buf[n++] = (char)(0x80 | (c & 0x3f));
			} else if (c < 0x10000) {
				buf[n++] = (char)(0xe0 | c >> 12);
				buf[n++] = (char)(0x80 | (c >> 6 & 0x3f));
				buf[n++] = (char)(0x80 | (c & 0x3f));
			} else {
				buf[n++] = (char)(0xf0 | c >> 18);
				buf[n++] = (char)(0x80 | (c >> 12 & 0x3f));
				buf[n++] = (char)(0x80 | (c >> 6 & 0x3f));
				buf[n++] = (char)(0x80 | (c & 0x3f));
			}
		}
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
