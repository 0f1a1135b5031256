/*
 * theme — colour roles (screen.h) to curses attributes. Three themes, chosen once after
 * initscr(): 256 colours when the terminal has them, the 8 basic colours otherwise, and
 * monochrome (bold / reverse / underline only) when the terminal has no colours or the
 * user asked for none (NO_COLOR, --no-color).
 */
#ifndef OCTO_UI_THEME_H
#define OCTO_UI_THEME_H

#include <stdbool.h>

#include "screen.h"

enum theme_kind { THEME_MONO, THEME_8, THEME_256 };

/* Picks and installs the theme (curses must be running). */
enum theme_kind theme_init(bool want_color);
/* Attributes (chtype bits) for a role in the installed theme. */
unsigned long theme_attr(enum role r);
const char *theme_name(enum theme_kind k);

#endif
