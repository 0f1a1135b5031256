/*
 * run — the Run action: saves the edited plan to a temporary file, launches the executor
 * on it as a child (`octopipe run --events-out - ...`, by default the running binary
 * itself, or under a launcher prefix such as `mpirun -np 8`), feeds its event stream into
 * the measured state (live.h) as the UI loop hands over bytes, and says in the status
 * line how the child ended. No curses.
 */
#ifndef OCTO_UI_RUN_H
#define OCTO_UI_RUN_H

#include <poll.h>
#include <stdbool.h>

#include "events.h"
#include "live.h"
#include "runner.h"
#include "tui.h"

#define RUN_DEFAULT_TIME_SCALE 1.0
#define RUN_DEFAULT_ITERS 10
#define RUN_KILL_AFTER_S 3.0     /* SIGKILL a child that ignores SIGTERM this long */

struct run {
	/* configuration */
	char launcher[TUI_LAUNCHER_MAX + 1]; /* "" = run the executor directly */
	double time_scale;
	int iters;
	char backend[16];            /* octopipe run --backend: "emu" or "cuda" */
	bool share_gpus;             /* cuda: --share-gpus */
	/* the current or last run */
	struct runner r;
	struct linebuf lb;
	struct live live;
	bool have_live;              /* a run was started: measured rows are shown */
	bool stop_asked;
	char plan_path[4096];        /* the temporary plan file ("" = none) */
	char plan_name[160];
	long plan_state;             /* edit_state() of the plan it measures */
	unsigned plan_gen;           /* and its app.plan_gen (which file) */
	double started_at;
};

struct app;

void run_init(struct run *r, const char *launcher, double time_scale, int iters);
/* The executor's backend (NULL or "": emu) and, for cuda, whether devices share GPUs. */
void run_set_backend(struct run *r, const char *backend, bool share_gpus);
/* Stops any child (SIGTERM, then SIGKILL after a short grace), reaps it, removes the file. */
void run_release(struct run *r);
bool run_active(const struct app *a);
int run_start(struct app *a);
/* Asks the child to stop (SIGTERM to its process group). */
void run_stop(struct app *a);
/* The child's pipes, for poll(); returns how many were added (at most max). */
int run_pollfds(const struct app *a, struct pollfd *pf, int max);
/* Reads what is ready on fd and applies the events; true when something changed. */
bool run_io(struct app *a, int fd);
/* Reaps a finished child and reports it, escalates a stop that is not obeyed; returns the
 * milliseconds until it wants to look again (0 right after reporting; -1: nothing pending). */
int run_check(struct app *a);

#endif
