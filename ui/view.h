/*
 * view — the whole screen: widgets (header, charts, panels, status line, F-key bar,
 * help) drawn into a struct screen, and key and mouse input turned into commands.
 * Each widget is a struct with a function table (draw, key); key handlers return flags
 * saying what the loop must do next. No curses: the terminal loop (tui.c), the headless
 * renderer and the benchmark all drive this.
 *
 * Drawing is view.c (with the pieces in header.c, panels.c, statusbar.c, pages.c); keys
 * and the mouse are input.c (with the prompts and questions in dialogs.c); view_int.h
 * is what they share.
 */
#ifndef OCTO_UI_VIEW_H
#define OCTO_UI_VIEW_H

#include "app.h"
#include "layout.h"
#include "screen.h"

enum {
	KF_HANDLED = 1,     /* the key meant something */
	KF_REDRAW = 2,      /* draw again */
	KF_RELAYOUT = 4,    /* the layout changed (panel, compare, transfer rows) */
	KF_QUIT = 8,
	KF_REPAINT = 16,    /* repaint the terminal from scratch (Ctrl-L) */
	KF_SUSPEND = 32,    /* stop the process, the terminal given back to the shell (^Z) */
};

/* Key codes that are not characters, as the terminal layer reports them (curses values). */
struct widget {
	const char *name;
	void (*draw)(struct app *a, struct screen *s, const struct rect *r);
	int (*key)(struct app *a, int key);   /* 0 when the widget does not take the key */
};

/* Computes the layout for the size and tells the app how much room the charts have. */
void view_layout(struct app *a, int cols, int rows, struct layout *l);
void view_draw(struct app *a, struct screen *s, const struct layout *l);
int view_key(struct app *a, int key);
/* A mouse event at (x, y): button 1 click, 4 wheel up, 5 wheel down (the gpu rows), 6 and
 * 7 the same with shift (the time axis). On the help, the log and the picker the wheel
 * scrolls; in the picker a click selects an entry, a click on the selected one opens it.
 * The F-key bar takes clicks on the help and the log too. */
int view_mouse(struct app *a, const struct layout *l, int x, int y, int button);

#endif
