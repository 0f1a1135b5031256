/*
 * run_events — the octopipe.events/1 stream of `octopipe run`: one JSON object per line
 * ("start", "op", "xfer", "util", "iter", "error", "done"), each built with cJSON and
 * written in one write() past stdio, never waiting longer than the watchdog for a reader
 * that stopped reading. A failed write (full disk, closed pipe, stalled reader) is
 * remembered and reported once, when the stream closes; the run stops at the end of that
 * iteration (MPI ranks go on together to the last) and prints no summary.
 *
 * cmd_run.c decides when each event happens; this file alone knows their fields.
 */
#ifndef OCTO_CLI_RUN_EVENTS_H
#define OCTO_CLI_RUN_EVENTS_H

#include <stdio.h>

struct action;
struct run_backend;
struct timeline;

struct run_events {
	FILE *f;           /* NULL: no stream asked for (every function below then does nothing useful) */
	const char *path;  /* as the user named it ("-" for stdout) */
	int iter;
	int err;           /* errno of the first failed write, ENOMEM when a line could not be built,
	                    * ETIMEDOUT when the reader stopped reading */
	double timeout_s;  /* the longest a write may wait for its reader (the watchdog's) */
};

/* Milliseconds rounded to the microsecond: nothing measured here is finer, and lines stay short. */
double run_usec(double ms);

/* The "start" event: what runs, on what, and what it is predicted to take (with_collectives
 * < 0: the run leaves no collectives out). Sets the stream line-buffered first. */
void run_events_start(struct run_events *ev, const char *plan, const char *backend, const char *kernels,
                      const char *kernels_note, int devices, int iters, double predicted_ms,
                      double with_collectives_ms);
/* One op as it ends: an emu_opts.on_op callback (ctx is the struct run_events). */
void run_events_on_op(void *ctx, int dev, const struct action *a, double t0, double t1);
/* Under MPI or on GPUs the ops are known only once the iteration is gathered: streams t's. */
void run_events_replay_ops(struct run_events *ev, const struct timeline *t);
/* The transfers of an iteration, once it is done (their times come from both ends). */
void run_events_xfers(struct run_events *ev, const struct timeline *t);
/* Per device after an iteration: the measured busy fraction and, where the backend can
 * tell (state open, a util entry), the GPU's utilisation and memory; null otherwise. */
void run_events_util(struct run_events *ev, const struct timeline *t, const struct run_backend *rb, void *state);
/* The "iter" event: iteration it took ms. */
void run_events_iter(struct run_events *ev, int it, double ms);
/* An error event; "dev" names the device (or rank) the message starts with, else null. */
void run_events_error(struct run_events *ev, const char *msg);
/* The "done" event: the last iteration measured, and the prediction's error. */
void run_events_done(struct run_events *ev, double measured_ms, double error);
/* Flushes and closes the stream (not stdout, which main closes); reports the first failure
 * as one line and returns -1. */
int run_events_close(struct run_events *ev);

#endif
