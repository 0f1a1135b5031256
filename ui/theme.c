/*
 * theme — colour roles to curses attributes (see theme.h). Each role has a colour for
 * 256-colour terminals, one of the 8 basic colours, and a monochrome attribute, in one
 * table, so a new role cannot forget a theme.
 *
 * The same table serves dark and light backgrounds: text on the terminal's own background
 * is the terminal's own foreground (bold for values) or a mid-tone colour readable on
 * both (no white, no pale yellow), and every light colour has a background of its own.
 * Search matches (cyan) are unlike every op colour, W's tan included.
 */
#include "config.h"
#include "theme.h"

#include <curses.h>

struct role_style {
	short fg256, bg256;   /* -1: terminal default */
	short fg8, bg8;
	attr_t extra;         /* added in every theme */
	attr_t mono;          /* used instead of colours in monochrome */
};

static const struct role_style styles[R_COUNT] = {
	[R_NORMAL]    = { -1, -1, -1, -1, 0, 0 },
	[R_HEADER]    = { 252, 236, COLOR_WHITE, COLOR_BLUE, 0, A_REVERSE },
	[R_TITLE]     = { 231, 236, COLOR_WHITE, COLOR_BLUE, A_BOLD, A_REVERSE | A_BOLD },
	[R_LABEL]     = { 67, -1, COLOR_CYAN, -1, 0, 0 },
	[R_VALUE]     = { -1, -1, -1, -1, A_BOLD, A_BOLD },
	[R_GOOD]      = { 34, -1, COLOR_GREEN, -1, A_BOLD, A_BOLD },
	[R_WARN]      = { 166, -1, COLOR_RED, -1, A_BOLD, A_BOLD },
	[R_ERROR]     = { 231, 160, COLOR_WHITE, COLOR_RED, A_BOLD, A_REVERSE | A_BOLD },
	[R_DIM]       = { 244, -1, -1, -1, 0, A_DIM },
	[R_OP_F]      = { 231, 25, COLOR_WHITE, COLOR_BLUE, 0, A_BOLD },
	[R_OP_I]      = { 16, 71, COLOR_BLACK, COLOR_GREEN, 0, 0 },
	[R_OP_W]      = { 16, 179, COLOR_BLACK, COLOR_YELLOW, 0, A_DIM },
	[R_OP_B]      = { 16, 139, COLOR_BLACK, COLOR_MAGENTA, 0, 0 },
	[R_BUBBLE]    = { 239, -1, COLOR_RED, -1, 0, A_DIM },
	[R_XFER]      = { 136, -1, COLOR_YELLOW, -1, 0, 0 },
	[R_AXIS]      = { 245, -1, COLOR_CYAN, -1, 0, 0 },
	[R_CURSOR]    = { 16, 231, COLOR_BLACK, COLOR_WHITE, A_BOLD, A_REVERSE | A_BOLD },
	[R_MATCH]     = { 16, 51, COLOR_BLACK, COLOR_CYAN, A_BOLD | A_UNDERLINE, A_STANDOUT | A_UNDERLINE },
	[R_CRIT]      = { 231, 90, COLOR_WHITE, COLOR_MAGENTA, A_UNDERLINE, A_UNDERLINE },
	[R_CYCLE]     = { 231, 160, COLOR_WHITE, COLOR_RED, A_BOLD, A_REVERSE | A_BOLD },
	[R_FILTERED]  = { 238, -1, COLOR_BLACK, -1, A_BOLD, A_DIM },
	[R_MEM]       = { 34, -1, COLOR_GREEN, -1, 0, 0 },
	[R_MEM_HIGH]  = { 160, -1, COLOR_RED, -1, A_BOLD, A_BOLD },
	[R_MEM_FREE]  = { 244, -1, -1, -1, 0, A_DIM },
	[R_FKEY]      = { -1, -1, -1, -1, A_BOLD, A_BOLD },
	[R_FLABEL]    = { 16, 37, COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE },
	[R_FGREY]     = { 244, 238, COLOR_BLACK, COLOR_WHITE, 0, A_DIM },
	[R_PROMPT]    = { 231, 24, COLOR_WHITE, COLOR_BLUE, A_BOLD, A_BOLD | A_UNDERLINE },
	[R_SELECTED]  = { 16, 37, COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE },
	[R_HELP_KEY]  = { 166, -1, COLOR_RED, -1, A_BOLD, A_BOLD },
	[R_BORDER]    = { 240, -1, COLOR_BLUE, -1, 0, 0 },
};

static attr_t attrs[R_COUNT];

enum theme_kind theme_init(bool want_color)
{
	enum theme_kind k = THEME_MONO;

	if (want_color && has_colors() && start_color() == OK) {
		use_default_colors();
		k = COLORS >= 256 && COLOR_PAIRS >= R_COUNT + 1 ? THEME_256 : THEME_8;
	}
	for (int r = 0; r < R_COUNT; r++) {
		const struct role_style *s = &styles[r];

		if (k == THEME_MONO) {
			attrs[r] = s->mono;
			continue;
		}
		if (k == THEME_256)
			init_pair((short)(r + 1), s->fg256, s->bg256);
		else
			init_pair((short)(r + 1), s->fg8, s->bg8);
		attrs[r] = (r == R_NORMAL ? 0 : COLOR_PAIR(r + 1)) | s->extra;
	}
	return k;
}

unsigned long theme_attr(enum role r)
{
	return (unsigned)r < R_COUNT ? attrs[r] : 0;
}

const char *theme_name(enum theme_kind k)
{
	return k == THEME_256 ? "256 colours" : k == THEME_8 ? "8 colours" : "monochrome";
}
