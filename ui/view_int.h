/*
 * view_int — the pieces of the screen, shared by the files of the view: view.c puts them
 * together (layout and drawing), input.c dispatches keys and the mouse to them. Each piece
 * is one file: header.c, panels.c (details, steps, run, the per-gpu breakdown),
 * statusbar.c (status line, F-key bar), pages.c (help, message log) and dialogs.c
 * (prompts and questions). No curses beyond key codes; nothing here touches the terminal.
 */
#ifndef OCTO_UI_VIEW_INT_H
#define OCTO_UI_VIEW_INT_H

#include <stddef.h>

#include "view.h"

/* header.c */
void header_draw(struct app *a, struct screen *s, const struct rect *r, const struct layout *l);
/* When only `cells` of n gpus fit in a strip of cells (memory bars, run gauges), the first
 * one shown: from the chart's first row, moved on so the cursor's gpu shows too; the last
 * cell is kept to say which gpus these are. */
int header_first_shown(const struct app *a, int n, int cells);

/* panels.c: the widget of the open panel (NULL: none). */
const struct widget *panels_widget(const struct app *a);
/* Says what the selected tuner step did, in the message line. */
void panels_say_tstep(struct app *a);
/* Each shown gpu's busy time, idle time by phase and peak memory, in the rows the charts
 * leave empty above the panel. */
void panels_draw_breakdown(struct app *a, struct screen *s, const struct layout *l);

/* statusbar.c */
void statusbar_draw(struct app *a, struct screen *s, const struct rect *r);
/* Draws the line editor's text from x in room columns, scrolled so its cursor shows (the
 * cursor's cell in R_CURSOR); returns the columns the text took. */
int prompt_line_draw(struct screen *s, int x, int y, int room, const struct line *l);
void statusbar_draw_fbar(struct app *a, struct screen *s, const struct rect *r);
/* The F-key whose label in a bar w columns wide covers column x (its gap too), or 0. */
int statusbar_fbar_key_at(const struct app *a, int w, int x);

/* pages.c: the page that fills the screen (above the F-key bar) in mode m, with its keys:
 * the help, the message log, the picker; NULL for the modes that show the charts. */
const struct widget *pages_widget(enum mode m);
#define PAGES_PICKER_ROW0 3     /* the picker's first entry row (title, filter, headings above) */

/* dialogs.c: opens prompt k with init as its text. */
void dialog_prompt(struct app *a, enum prompt_kind k, const char *init);
/* Where the plan saves by default: its file, else plans/NAME.json. */
void dialog_save_name(struct app *a, char *buf, size_t n);
/* Saves the plan to its own file, asking first when another program changed it. */
int dialog_save(struct app *a);
int dialog_prompt_key(struct app *a, int key);
int dialog_question_key(struct app *a, int key);
/* Quits, or asks first when there are unsaved edits. */
int dialog_quit_or_ask(struct app *a);
/* The picker's keys: Enter opens the entry (or the typed path when none is listed),
 * asking first when there are unsaved edits; Tab takes the typed text to the open prompt
 * and completes it; Esc closes. */
int dialog_picker_key(struct app *a, int key);

#endif
