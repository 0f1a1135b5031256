/*
 * runner — one child process whose stdout and stderr the UI reads without blocking:
 * started in its own process group (so a launcher such as mpirun and everything under it
 * stop together), stdin from /dev/null, both outputs through non-blocking pipes that the
 * caller adds to its poll() set. No curses.
 */
#ifndef OCTO_UI_RUNNER_H
#define OCTO_UI_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "err.h"

struct runner {
	pid_t pid;                  /* 0: no child (or reaped) */
	int out_fd, err_fd;         /* -1 once closed (end of file) */
	bool reaped;
	int status;                 /* waitpid() status, once reaped */
	bool term_sent;
	double term_at;             /* monotonic seconds SIGTERM was sent */
	char err_tail[256];         /* the last non-empty line the child wrote to stderr */
	char err_part[256];
	size_t err_len;
};

void runner_init(struct runner *r);
/* Starts argv[0] (searched in PATH) with argv. Returns -1 with e set when it cannot. */
int runner_start(struct runner *r, char *const argv[], struct err *e);
bool runner_active(const struct runner *r);
/* Reads what is available on fd (one of out_fd / err_fd) into buf, at most n bytes.
 * Returns the byte count, 0 at end of file (the fd is closed), -1 when nothing is ready. */
long runner_read(struct runner *r, int fd, char *buf, size_t n);
/* SIGTERM to the child's process group (once); SIGKILL when kill is true. */
void runner_signal(struct runner *r, bool kill);
/* Reaps the child if it has exited; true once reaped. */
bool runner_reap(struct runner *r);
/* Stops the child for good: SIGTERM, up to grace_s seconds, then SIGKILL, and reaps it;
 * closes the pipes. Safe to call when there is no child. */
void runner_finish(struct runner *r, double grace_s);
/* "exit status 3", "killed by signal 15 (terminated)". */
void runner_describe(const struct runner *r, char *buf, size_t n);
/* For a fatal signal handler: SIGTERM to the current child's group (async-signal-safe). */
void runner_emergency_stop(void);

#endif
