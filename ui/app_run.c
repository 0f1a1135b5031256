/*
 * app_run — launching the executor and following it (see run.h).
 *
 * The child is whatever runs `octopipe run`: the binary the UI itself runs
 * (/proc/self/exe, so it is the same version) or a launcher prefix given by --launcher or
 * OCTOPIPE_LAUNCHER. A launcher goes through `sh -c 'exec LAUNCHER "$@"'` with the real
 * arguments as positional parameters, so the prefix may hold options and quotes while
 * the plan path needs no quoting. Bytes arrive in arbitrary pieces; the line buffer
 * reassembles them and unknown or malformed lines are counted, never fatal. The end of a
 * run is known when the child is reaped (its pipes at end of file, or SIGCHLD), and the
 * status line then says why it ended: the executor's error event, its exit status, or
 * the last line it wrote to stderr.
 */
#include "config.h"
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app.h"
#include "doc.h"
#include "screen.h"

void run_init(struct run *r, const char *launcher, double time_scale, int iters)
{
	memset(r, 0, sizeof(*r));
	runner_init(&r->r);
	snprintf(r->launcher, sizeof(r->launcher), "%s", launcher ? launcher : "");
	r->time_scale = time_scale >= 0 ? time_scale : RUN_DEFAULT_TIME_SCALE;
	r->iters = iters > 0 ? iters : RUN_DEFAULT_ITERS;
	snprintf(r->backend, sizeof(r->backend), "emu");
}

void run_set_backend(struct run *r, const char *backend, bool share_gpus)
{
	snprintf(r->backend, sizeof(r->backend), "%s", backend && *backend ? backend : "emu");
	r->share_gpus = share_gpus;
}

static void drop_plan_file(struct run *r)
{
	if (r->plan_path[0])
		unlink(r->plan_path);
	r->plan_path[0] = '\0';
}

void run_release(struct run *r)
{
	runner_finish(&r->r, 1.0);
	drop_plan_file(r);
	if (r->have_live)
		live_release(&r->live);
	r->have_live = false;
}

bool run_active(const struct app *a)
{
	return runner_active(&a->run.r);
}

static int temp_plan(struct app *a, struct err *e)
{
	struct run *r = &a->run;
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(r->plan_path, sizeof(r->plan_path), "%s/octopipe-run-XXXXXX.json", dir && *dir ? dir : "/tmp");
	fd = mkstemps(r->plan_path, 5);
	if (fd < 0) {
		err_set(e, ERR_RUNTIME, "cannot make a temporary plan file '%s': %s", r->plan_path, strerror(errno));
		r->plan_path[0] = '\0';
		return -1;
	}
	close(fd);
	if (plan_save(&a->cur.plan, r->plan_path, true, e) < 0) {
		drop_plan_file(r);
		return -1;
	}
	return 0;
}

int run_start(struct app *a)
{
	struct run *r = &a->run;
	struct err e = ERR_INIT;
	char exe[PATH_MAX], scale[32], iters[16], shell[700];
	const char *argv[16];
	ssize_t n;
	int k = 0;

	if (run_active(a)) {
		app_msg(a, R_WARN, "a run is in progress: F8 stops it");
		return -1;
	}
	if (!a->cur.ran) {
		app_msg(a, R_ERROR, "the plan cannot run: %s", a->cur.why);
		return -1;
	}
	runner_finish(&r->r, 0);
	drop_plan_file(r);
	if (temp_plan(a, &e) < 0) {
		app_msg(a, R_ERROR, "cannot run: %s", e.msg);
		return -1;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		snprintf(exe, sizeof(exe), "octopipe");
	else
		exe[n] = '\0';
	snprintf(scale, sizeof(scale), "%g", r->time_scale);
	snprintf(iters, sizeof(iters), "%d", r->iters);
	if (r->launcher[0]) {
		argv[k++] = "/bin/sh";
		argv[k++] = "-c";
		/* the launcher is shell text (options, quotes); the real arguments stay unquoted */
		snprintf(shell, sizeof(shell), "exec %s \"$@\"", r->launcher);
		argv[k++] = shell;
		argv[k++] = "sh";
	}
	argv[k++] = exe;
	argv[k++] = "run";
	argv[k++] = "--backend";
	argv[k++] = r->backend;
	if (r->share_gpus)
		argv[k++] = "--share-gpus";
	argv[k++] = "--events-out";
	argv[k++] = "-";
	argv[k++] = "--time-scale";
	argv[k++] = scale;
	argv[k++] = "--iters";
	argv[k++] = iters;
	argv[k++] = r->plan_path;
	argv[k] = NULL;
	if (runner_start(&r->r, (char *const *)argv, &e) < 0) {
		drop_plan_file(r);
		app_msg(a, R_ERROR, "cannot run: %s", e.msg);
		return -1;
	}
	if (r->have_live)
		live_release(&r->live);
	/* the executor runs one replica: no data-parallel sync in its iterations */
	r->have_live = live_init(&r->live, a->cur.plan.ndevices, a->cur.m.makespan_ms - a->cur.m.dp_sync_ms) == 0;
	linebuf_init(&r->lb);
	r->stop_asked = false;
	r->started_at = app_now();
	snprintf(r->plan_name, sizeof(r->plan_name), "%s", a->cur.plan.name ? a->cur.plan.name : "plan");
	r->plan_state = edit_state(&a->hist);
	r->plan_gen = a->plan_gen;
	a->panel = PANEL_RUN;
	app_msg(a, R_NORMAL, "running %s%s%s: %d iterations at time scale %g (F8 stops)", r->plan_name,
	        r->launcher[0] ? " under " : "", r->launcher, r->iters, r->time_scale);
	return 0;
}

void run_stop(struct app *a)
{
	if (!run_active(a))
		return;
	a->run.stop_asked = true;
	runner_signal(&a->run.r, false);
	app_msg(a, R_WARN, "stopping the run (sigterm sent)");
}

int run_pollfds(const struct app *a, struct pollfd *pf, int max)
{
	int n = 0;

	if (a->run.r.out_fd >= 0 && n < max)
		pf[n++] = (struct pollfd){ a->run.r.out_fd, POLLIN, 0 };
	if (a->run.r.err_fd >= 0 && n < max)
		pf[n++] = (struct pollfd){ a->run.r.err_fd, POLLIN, 0 };
	return n;
}

static void on_line(void *ctx, const char *line)
{
	struct run *r = ctx;

	if (r->have_live)
		live_feed_line(&r->live, line);
}

bool run_io(struct app *a, int fd)
{
	struct run *r = &a->run;
	char buf[16384];
	bool changed = false;

	/* a bounded amount per wake-up, so a flood of events never starves the keyboard */
	for (int i = 0; i < 8; i++) {
		long k = runner_read(&r->r, fd, buf, sizeof(buf));

		if (k < 0)
			break;
		changed = true;
		if (k == 0)
			break;
		if (fd == r->r.out_fd)
			linebuf_feed(&r->lb, buf, (size_t)k, on_line, r);
	}
	return changed;
}

static void report(struct app *a)
{
	struct run *r = &a->run;
	struct live *l = &r->live;
	char how[160];

	runner_describe(&r->r, how, sizeof(how));
	if (r->stop_asked) {
		app_msg(a, R_WARN, "run stopped after %d of %d iterations (%s)", l->iters_done, r->iters, how);
	} else if (l->failed) {
		app_msg(a, R_ERROR, "run failed: %s (%s)", l->error_msg, how);
	} else if (WIFEXITED(r->r.status) && WEXITSTATUS(r->r.status) == 0 && l->done) {
		struct strbuf m = STRBUF_INIT, p = STRBUF_INIT;

		fmt_ms(&m, l->measured_ms);
		fmt_ms(&p, l->predicted_ms);
		app_msg(a, R_GOOD, "run done: %d iterations, measured %s vs predicted %s (%+.1f%%)", l->iters_done, m.buf,
		        p.buf, 100 * l->error);
		strbuf_release(&m);
		strbuf_release(&p);
	} else {
		app_msg(a, R_ERROR, "run failed: the executor ended with %s%s%s", how, r->r.err_tail[0] ? ": " : "",
		        r->r.err_tail);
	}
}

int run_check(struct app *a)
{
	struct run *r = &a->run;

	if (r->r.pid <= 0 || r->r.reaped)
		return -1;
	if (runner_reap(&r->r)) {
		/* drain what the pipes still hold, then report */
		while (r->r.out_fd >= 0 && run_io(a, r->r.out_fd) && r->r.out_fd >= 0) {
			/* more */
		}
		while (r->r.err_fd >= 0 && run_io(a, r->r.err_fd) && r->r.err_fd >= 0) {
			/* more */
		}
		runner_finish(&r->r, 0);
		drop_plan_file(r);
		report(a);
		return 0;    /* one more look (which finds nothing): the caller redraws */
	}
	if (r->r.term_sent && app_now() - r->r.term_at > RUN_KILL_AFTER_S) {
		runner_signal(&r->r, true);
		return 50;
	}
	/* the pipes closed but the child has not exited yet, or it is being stopped */
	if ((r->r.out_fd < 0 && r->r.err_fd < 0) || r->r.term_sent)
		return 50;
	return -1;
}
