/*
 * run_events — the octopipe.events/1 stream of `octopipe run` (see run_events.h).
 *
 * Every event is a cJSON object built through a jw (which collects allocation failures),
 * printed unformatted and written with its newline in one write(): stdout may carry other
 * output, and a reader (the TUI, a pipe) must see whole lines. write_within() polls for
 * room first, so a reader that stopped reading costs the run at most the watchdog's time.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "action.h"
#include "cli.h"
#include "cli/run_backend.h"
#include "cli/run_events.h"
#include "json.h"
#include "timeline.h"

double run_usec(double ms)
{
	return round(ms * 1e6) / 1e6;
}

/* A new event object of kind ev with its iteration (iter < 0: none); w collects failures. */
static cJSON *event_new(struct jw *w, const char *kind, int iter)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		w->oom = true;
	jw_str(w, o, "ev", kind);
	if (iter >= 0)
		jw_num(w, o, "iter", iter);
	return o;
}

/* Writes all of buf to fd, never waiting more than timeout_s for room: a reader that
 * stopped reading (a stalled TUI, a stopped pipe) must not hang the run. poll() says when
 * a pipe has room for PIPE_BUF bytes, so no write of at most that many blocks. 0, or -1
 * with errno (ETIMEDOUT: no room within timeout_s). */
static int write_within(int fd, const char *buf, size_t n, double timeout_s)
{
	while (n > 0) {
		struct pollfd pf = { fd, POLLOUT, 0 };
		int r = poll(&pf, 1, (int)ceil(timeout_s * 1000));
		ssize_t got;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		got = write(fd, buf, n < PIPE_BUF ? n : PIPE_BUF);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		buf += got;
		n -= (size_t)got;
	}
	return 0;
}

/* Writes o as one line and frees it. */
static void event_emit(struct run_events *ev, cJSON *o, const struct jw *w)
{
	char *line = (o && !w->oom) ? cJSON_PrintUnformatted(o) : NULL;
	size_t n;

	cJSON_Delete(o);
	if (ev->err)
		goto out;
	if (!line) {
		ev->err = ENOMEM;
		goto out;
	}
	/* one line, one write, past whatever stdio holds (stdout may carry other output) */
	n = strlen(line);
	line[n] = '\n';
	errno = 0;
	if (fflush(ev->f) != 0 || write_within(fileno(ev->f), line, n + 1, ev->timeout_s) < 0)
		ev->err = errno ? errno : EIO;
	line[n] = 0;
out:
	free(line);
}

int run_events_close(struct run_events *ev)
{
	if (!ev->f)
		return 0;
	errno = 0;
	if (fflush(ev->f) != 0 && !ev->err)
		ev->err = errno ? errno : EIO;
	if (ev->f != stdout && fclose(ev->f) != 0 && !ev->err)
		ev->err = errno ? errno : EIO;
	ev->f = NULL;
	if (!ev->err)
		return 0;
	if (ev->err == EPIPE)
		cli_err("octopipe run: cannot write the events to '%s': its reader closed it\n", ev->path);
	else if (ev->err == ETIMEDOUT)
		cli_err("octopipe run: cannot write the events to '%s': its reader stopped reading (no room for %g s)\n",
		        ev->path, ev->timeout_s);
	else
		cli_err("octopipe run: cannot write the events to '%s': %s\n", ev->path, strerror(ev->err));
	return -1;
}

void run_events_start(struct run_events *ev, const char *plan, const char *backend, const char *kernels,
                      const char *kernels_note, int devices, int iters, double predicted_ms,
                      double with_collectives_ms)
{
	struct jw w = { false };
	cJSON *o;

	setvbuf(ev->f, NULL, _IOLBF, 0);
	o = event_new(&w, "start", -1);
	jw_str(&w, o, "plan", plan);
	jw_str(&w, o, "backend", backend);
	jw_str(&w, o, "kernels", kernels);
	if (kernels_note)
		jw_str(&w, o, "kernels_note", kernels_note);
	jw_num(&w, o, "devices", devices);
	jw_num(&w, o, "iters", iters);
	jw_num(&w, o, "predicted_ms", run_usec(predicted_ms));
	if (with_collectives_ms >= 0)
		jw_num(&w, o, "predicted_with_collectives_ms", run_usec(with_collectives_ms));
	event_emit(ev, o, &w);
}

void run_events_on_op(void *ctx, int dev, const struct action *a, double t0, double t1)
{
	struct run_events *ev = ctx;
	struct jw w = { false };
	cJSON *o = event_new(&w, "op", ev->iter);
	char kind[2] = { op_kind_char((enum op_kind)a->kind), 0 };

	jw_num(&w, o, "dev", dev);
	jw_str(&w, o, "op", kind);
	jw_num(&w, o, "stage", a->stage);
	jw_num(&w, o, "mb", a->mb);
	jw_num(&w, o, "t0_ms", run_usec(t0));
	jw_num(&w, o, "t1_ms", run_usec(t1));
	event_emit(ev, o, &w);
}

void run_events_replay_ops(struct run_events *ev, const struct timeline *t)
{
	for (int d = 0; d < t->ndevices; d++)
		for (int i = 0; i < t->dev[d].nops; i++) {
			const struct tl_op *o = &t->dev[d].ops[i];
			struct action a = { o->stage, o->mb, o->kind, 0 };

			run_events_on_op(ev, d, &a, o->start_ms, o->end_ms);
		}
}

void run_events_util(struct run_events *ev, const struct timeline *t, const struct run_backend *rb, void *state)
{
	double it = 0;

	for (int d = 0; d < t->ndevices; d++)
		for (int i = 0; i < t->dev[d].nops; i++)
			it = fmax(it, t->dev[d].ops[i].end_ms);
	for (int d = 0; d < t->ndevices; d++) {
		double busy = 0, util = 0;
		uint64_t mem = 0;
		bool have = false;
		struct jw w;
		cJSON *o;

		for (int i = 0; i < t->dev[d].nops; i++)
			busy += t->dev[d].ops[i].end_ms - t->dev[d].ops[i].start_ms;
		have = rb->util && state && rb->util(state, d, &util, &mem);
		w = (struct jw){ false };
		o = event_new(&w, "util", ev->iter);
		jw_num(&w, o, "dev", d);
		jw_num(&w, o, "busy", round((it > 0 ? busy / it : 0) * 1e4) / 1e4);
		if (have) {
			jw_num(&w, o, "gpu_util", round(util * 100) / 100);
			jw_num(&w, o, "mem_bytes", (double)mem);
		} else {
			jw_null(&w, o, "gpu_util");
			jw_null(&w, o, "mem_bytes");
		}
		event_emit(ev, o, &w);
	}
}

void run_events_xfers(struct run_events *ev, const struct timeline *t)
{
	for (long k = 0; k < t->nxfers; k++) {
		const struct tl_xfer *x = &t->xfers[k];
		struct jw w = { false };
		cJSON *o = event_new(&w, "xfer", ev->iter);

		jw_num(&w, o, "src", x->src);
		jw_num(&w, o, "dst", x->dst);
		jw_num(&w, o, "stage", x->stage);
		jw_num(&w, o, "mb", x->mb);
		jw_str(&w, o, "kind", x->kind == XFER_ACT ? "act" : "grad");
		jw_num(&w, o, "t0_ms", run_usec(x->start_ms));
		jw_num(&w, o, "t1_ms", run_usec(x->end_ms));
		jw_num(&w, o, "bytes", (double)x->bytes);
		event_emit(ev, o, &w);
	}
}

void run_events_iter(struct run_events *ev, int it, double ms)
{
	struct jw w = { false };
	cJSON *o = event_new(&w, "iter", it);

	jw_num(&w, o, "ms", run_usec(ms));
	event_emit(ev, o, &w);
}

void run_events_error(struct run_events *ev, const char *msg)
{
	static const char *const who[] = { "rank ", "device ", "worker ", NULL };
	struct jw w = { false };
	cJSON *o = event_new(&w, "error", -1);
	int dev = -1;

	for (int i = 0; who[i] && dev < 0; i++) {
		size_t n = strlen(who[i]);

		if (strncmp(msg, who[i], n) == 0 && msg[n] >= '0' && msg[n] <= '9')
			dev = atoi(msg + n);
	}
	if (dev >= 0)
		jw_num(&w, o, "dev", dev);
	else
		jw_null(&w, o, "dev");
	jw_str(&w, o, "msg", msg);
	event_emit(ev, o, &w);
}

void run_events_done(struct run_events *ev, double measured_ms, double error)
{
	struct jw w = { false };
	cJSON *o = event_new(&w, "done", -1);

	jw_num(&w, o, "measured_ms", run_usec(measured_ms));
	jw_num(&w, o, "error", run_usec(error));
	event_emit(ev, o, &w);
}
