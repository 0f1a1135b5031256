/*
 * tui — the terminal UI's entry point (`octopipe tui`, and `octopipe` on a terminal).
 * This header is all the command line sees of the UI: no curses types.
 */
#ifndef OCTO_UI_TUI_H
#define OCTO_UI_TUI_H

#include <stdbool.h>
#include <stdio.h>

#include "err.h"
#include "parallel.h"
#include "startlayout.h"
#include "target.h"

/* The longest Run launcher prefix (--launcher, $OCTOPIPE_LAUNCHER) the UI keeps, in bytes */
#define TUI_LAUNCHER_MAX 511

struct tui_opts {
	const char *plan;          /* a plan file or bundled plan name, or NULL */
	const char *model;         /* else: model and cluster (NULL: the bundled default sample) */
	const char *cluster;
	int microbatches;          /* 0: the default (32) */
	bool no_color;
	bool no_mouse;
	const char *render;        /* "WxH": draw one frame as text to out and return (no terminal) */
	const char *keys;          /* with render: keys pressed first (\n Enter, \e Esc, \t Tab) */
	const char *steps;         /* an octopipe.steps/1 file for the steps view, or NULL */
	const char *launcher;      /* Run: a command prefix such as "mpirun -np 8" (NULL: $OCTOPIPE_LAUNCHER) */
	double time_scale;         /* Run: wall ms per model ms for the emulator (< 0: the default) */
	int run_iters;             /* Run: iterations (0: the default) */
	const char *backend;       /* Run: "emu" or "cuda" (NULL: $OCTOPIPE_BACKEND, else emu) */
	bool share_gpus;           /* Run, cuda: more devices than GPUs (octopipe run --share-gpus) */
	/* with model and cluster: the layout options (the rest is searched, as by tune and
	 * compare); NULL with them is the same as none given */
	const struct start_layout *layout;
	enum target target;        /* --target: the runtime the tuner searches for (default octopipe) */
};

/* Runs the UI until the user quits. Returns 0, or -1 with e set (bad input: ERR_INPUT;
 * no terminal: ERR_RUNTIME). With o->render, writes the frame to out instead. */
int tui_run(const struct tui_opts *o, FILE *out, struct err *e);
struct screen;
/* Copies the cell grid to curses (UTF-8 when the locale takes it, else '?' for what is
 * not ASCII) and updates the terminal (blit.c). */
void tui_blit(const struct screen *s);
/* The same after a pan: rows whose content moved shift columns left (negative: right)
 * are shifted on the terminal, so only what came into view is sent again. */
void tui_blit_pan(const struct screen *s, int shift);
/* The columns the time axis moved since the last call (t0 and ms_per_col as struct app
 * holds them); 0 when the scale changed or the move is no whole number of columns. */
int tui_pan_shift(double t0, double ms_per_col);
/* The descriptor the terminal is written to (default: standard output), as curses'. */
void tui_blit_output(int fd);
/* The terminal no longer shows the last frame (a repaint, a resize, a suspension). */
void tui_blit_forget(void);
/* The terminal's locale takes UTF-8 (else non-ASCII characters show as '?'). */
extern bool tui_utf8_term;

#endif
