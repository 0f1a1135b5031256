/*
 * screen — a grid of cells (a character and a colour role) that every view draws into.
 * The terminal backend copies it to curses; the headless renderer prints it as text, so
 * golden screens and benchmarks need no terminal. No curses here.
 */
#ifndef OCTO_UI_SCREEN_H
#define OCTO_UI_SCREEN_H

#include <stddef.h>
#include <stdint.h>

/* Colours are named by meaning; the theme maps each role to attributes. */
enum role {
	R_NORMAL, R_HEADER, R_TITLE, R_LABEL, R_VALUE, R_GOOD, R_WARN, R_ERROR, R_DIM,
	R_OP_F, R_OP_I, R_OP_W, R_OP_B, R_BUBBLE, R_XFER, R_AXIS,
	R_CURSOR, R_MATCH, R_CRIT, R_CYCLE, R_FILTERED,
	R_MEM, R_MEM_HIGH, R_MEM_FREE,
	R_FKEY, R_FLABEL, R_FGREY, R_PROMPT, R_SELECTED, R_HELP_KEY, R_BORDER,
	R_COUNT
};

/* A cell holds one Unicode code point (text is UTF-8 on the way in and out); a character
 * two columns wide fills its cell and leaves the next one 0, drawn by it. */
struct cell {
	uint32_t ch;
	uint8_t role;
};

struct screen {
	int w, h;
	struct cell *c;
};

struct rect {
	int x, y, w, h;
};

/* Resizes (contents are cleared); -1 when out of host memory. */
int screen_resize(struct screen *s, int w, int h);
void screen_release(struct screen *s);
void screen_clear(struct screen *s);
void screen_put(struct screen *s, int x, int y, char ch, enum role r);
/* Writes UTF-8 text from (x, y), clipped at x + maxw and at the screen edge; returns the
 * number of cells written. A byte that is no UTF-8 and a control character show as '?'. */
int screen_text(struct screen *s, int x, int y, int maxw, const char *text, enum role r);
/* Columns the first n bytes of UTF-8 text take where screen_text draws them. */
int screen_text_cols(const char *text, size_t n);
/* Bytes of the character text starts with (1 for a byte that starts none, 0 at its end). */
int screen_char_bytes(const char *text);
int screen_textf(struct screen *s, int x, int y, int maxw, enum role r, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void screen_fill(struct screen *s, const struct rect *r, char ch, enum role role);
/* A rule of '-' across r's first row with title on it (a panel's top line). */
void screen_title(struct screen *s, const struct rect *r, const char *title);
/* The rest of text after its first line of at most w cells, broken at a space (a word
 * longer than a line is cut). */
const char *screen_skip_line(const char *text, int w);
/* Draws text from (x, y) in lines of at most w cells broken at spaces, on at most rows
 * lines (s NULL: only counts); returns the lines used. */
int screen_wrap(struct screen *s, int x, int y, int w, int rows, const char *text, enum role role);
/* The character to show at (x, y): 0 for the right half of a wide character drawn from
 * the cell before, and ' ' or '?' for a half whose other half was drawn over, so the
 * terminal's columns always match the cells'. */
uint32_t screen_glyph(const struct screen *s, int x, int y);
/* Row y as UTF-8 text without trailing blanks (buf holds at least SCREEN_ROW_BYTES(w)). */
#define SCREEN_ROW_BYTES(w) (4 * (size_t)(w) + 1)
void screen_row_text(const struct screen *s, int y, char *buf);

#endif
