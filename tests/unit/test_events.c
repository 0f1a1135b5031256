/*
 * test_events — the TUI's side of the executor's stream: the events parser accepts every
 * kind the executor writes and rejects malformed lines (never crashing), the line buffer
 * reassembles lines split across reads and drops overlong ones whole, the measured state
 * computes utilization buckets and iteration times exactly, and the child runner reads a
 * real child without blocking, reports how it ended, and stops one that does not end.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "action.h"
#include "events.h"
#include "live.h"
#include "runner.h"
#include "../tap.h"

static void test_parse(void)
{
	static const char *const bad[] = {
		"", "   ", "{", "not json", "[1, 2]", "42", "\"op\"", "{}", "{\"ev\": 3}",
		"{\"ev\": \"op\"}",
		"{\"ev\": \"op\", \"dev\": 0, \"op\": \"X\", \"stage\": 0, \"mb\": 0, \"t0_ms\": 0, \"t1_ms\": 1}",
		"{\"ev\": \"op\", \"dev\": -1, \"op\": \"F\", \"stage\": 0, \"mb\": 0, \"t0_ms\": 0, \"t1_ms\": 1}",
		"{\"ev\": \"op\", \"dev\": 0.5, \"op\": \"F\", \"stage\": 0, \"mb\": 0, \"t0_ms\": 0, \"t1_ms\": 1}",
		"{\"ev\": \"op\", \"dev\": 0, \"op\": \"F\", \"stage\": 0, \"mb\": 0, \"t0_ms\": 2, \"t1_ms\": 1}",
		"{\"ev\": \"op\", \"dev\": 0, \"op\": \"FF\", \"stage\": 0, \"mb\": 0, \"t0_ms\": 0, \"t1_ms\": 1}",
		"{\"ev\": \"op\", \"dev\": \"0\", \"op\": \"F\", \"stage\": 0, \"mb\": 0, \"t0_ms\": 0, \"t1_ms\": 1}",
		"{\"ev\": \"iter\", \"iter\": 0}",
		"{\"ev\": \"iter\", \"iter\": 0, \"ms\": -1}",
		"{\"ev\": \"op\", \"dev\": 0, \"op\": \"F\", \"stage\": 0, \"mb\": 0, \"t0_ms\": 0, \"t1_ms\": 1",
	};
	struct event ev;
	int nbad = 0;

	ok(events_parse("{\"ev\": \"start\", \"plan\": \"p.json\", \"backend\": \"emu\", \"devices\": 8, \"iters\": 3, "
	                "\"predicted_ms\": 1844.4}", &ev) == 0 && ev.kind == EV_START, "a start event parses");
	is_int(ev.devices, 8, "with its device count");
	is_int(ev.iters, 3, "its iterations");
	is_dbl(ev.ms, 1844.4, 1e-9, "and the predicted time");
	ok(events_parse("{\"ev\": \"op\", \"iter\": 2, \"dev\": 3, \"op\": \"W\", \"stage\": 5, \"mb\": 17, "
	                "\"t0_ms\": 10.5, \"t1_ms\": 12.25}", &ev) == 0 && ev.kind == EV_OP, "an op event parses");
	ok(ev.iter == 2 && ev.dev == 3 && ev.op == OP_W && ev.stage == 5 && ev.mb == 17, "with its iter, dev, op, stage, mb");
	ok(ev.t0_ms == 10.5 && ev.t1_ms == 12.25, "and its times");
	ok(events_parse("{\"ev\": \"iter\", \"iter\": 1, \"ms\": 1850.5}", &ev) == 0 && ev.kind == EV_ITER &&
	   ev.iter == 1 && ev.ms == 1850.5, "an iter event parses");
	ok(events_parse("{\"ev\": \"error\", \"msg\": \"device 1: worker killed after 3 ops\"}", &ev) == 0 &&
	   ev.kind == EV_ERROR, "an error event parses");
	is_str(ev.msg, "device 1: worker killed after 3 ops", "with its message");
	ok(events_parse("{\"ev\": \"done\", \"measured_ms\": 1846, \"error\": 0.001}", &ev) == 0 && ev.kind == EV_DONE &&
	   ev.ms == 1846 && ev.error == 0.001, "a done event parses");
	ok(events_parse("{\"ev\": \"sample\", \"dev\": 0, \"util\": 0.9}", &ev) == 0 && ev.kind == EV_UNKNOWN,
	   "an unknown event kind is not an error (a newer executor)");
	ok(events_parse("{\"ev\": \"iter\", \"iter\": 0, \"ms\": 5, \"extra\": [1, {\"x\": null}]}", &ev) == 0 &&
	   ev.kind == EV_ITER, "extra fields are ignored");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		nbad += events_parse(bad[i], &ev) < 0;
	is_int(nbad, (long long)(sizeof(bad) / sizeof(bad[0])), "every malformed line is rejected");
	/* every prefix of a valid line: rejected or parsed, never a crash */
	{
		const char *line = "{\"ev\": \"op\", \"iter\": 0, \"dev\": 1, \"op\": \"F\", \"stage\": 1, \"mb\": 0, "
		                   "\"t0_ms\": 1, \"t1_ms\": 2}";
		char buf[256];
		int parsed = 0;

		for (size_t n = 0; n < strlen(line); n++) {
			memcpy(buf, line, n);
			buf[n] = '\0';
			parsed += events_parse(buf, &ev) == 0;
		}
		is_int(parsed, 0, "no proper prefix of an op line parses");
	}
}

struct lines {
	char got[8][64];
	int n;
};

static void collect(void *ctx, const char *text)
{
	struct lines *l = ctx;

	if (l->n < 8)
		snprintf(l->got[l->n], sizeof(l->got[0]), "%s", text);
	l->n++;
}

static void test_linebuf(void)
{
	struct linebuf lb;
	struct lines l = { .n = 0 };
	static char big[EVENTS_LINE_MAX * 2 + 2];

	linebuf_init(&lb);
	linebuf_feed(&lb, "ab", 2, collect, &l);
	is_int(l.n, 0, "no line before its newline");
	linebuf_feed(&lb, "c\nde", 4, collect, &l);
	linebuf_feed(&lb, "f\r\n\ng\n", 6, collect, &l);
	is_int(l.n, 4, "lines split across reads come out whole");
	is_str(l.got[0], "abc", "the first");
	is_str(l.got[1], "def", "the second, without its carriage return");
	is_str(l.got[2], "", "an empty line");
	is_str(l.got[3], "g", "the last");
	memset(big, 'x', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	l.n = 0;
	linebuf_feed(&lb, big, sizeof(big) - 1, collect, &l);
	linebuf_feed(&lb, "ok\n", 3, collect, &l);
	is_int(l.n, 1, "an overlong line is dropped whole");
	is_str(l.got[0], "ok", "and the next line is intact");
	is_int(lb.dropped, 1, "the drop is counted");
}

static void op(struct live *l, int iter, int dev, double t0, double t1)
{
	char line[256];

	snprintf(line, sizeof(line), "{\"ev\": \"op\", \"iter\": %d, \"dev\": %d, \"op\": \"F\", \"stage\": %d, "
	         "\"mb\": 0, \"t0_ms\": %g, \"t1_ms\": %g}", iter, dev, dev, t0, t1);
	live_feed_line(l, line);
}

static void test_live(void)
{
	struct live l;

	/* predicted 80 ms: buckets of 10 ms */
	ok(live_init(&l, 2, 80) == 0, "live state for 2 devices");
	is_dbl(live_util(&l, 0, 0), -1, 0, "no utilization before any op");
	live_feed_line(&l, "{\"ev\": \"start\", \"devices\": 2, \"iters\": 2, \"predicted_ms\": 80}");
	op(&l, 0, 0, 0, 15);           /* bucket 0 full, bucket 1 half */
	is_dbl(live_util(&l, 0, 0), 1.0, 1e-9, "a bucket the device has left is complete: 100%%");
	op(&l, 0, 0, 25, 30);          /* bucket 2 half */
	is_dbl(live_util(&l, 0, 0), 0.5, 1e-9, "the next one: 50%%");
	is_dbl(live_util(&l, 0, 1), 1.0, 1e-9, "history goes back");
	is_dbl(live_util(&l, 0, 2), -1, 0, "no further than the first bucket");
	op(&l, 0, 1, 70, 80);
	is_dbl(live_util(&l, 1, 0), -1, 0, "device 1's first bucket is still open");
	live_feed_line(&l, "garbage");
	live_feed_line(&l, "{\"ev\": \"op\", \"iter\": 0, \"dev\": 7, \"op\": \"F\", \"stage\": 0, \"mb\": 0, "
	               "\"t0_ms\": 0, \"t1_ms\": 1}");
	is_int(l.nbad, 2, "bad lines and ops of unknown devices are counted and ignored");
	is_int(l.dev[0].nops + l.dev[1].nops, 3, "the shown iteration has 3 ops");
	live_feed_line(&l, "{\"ev\": \"iter\", \"iter\": 0, \"ms\": 80}");
	is_dbl(live_util(&l, 1, 0), 1.0, 1e-9, "the iteration's end completes device 1's bucket");
	is_dbl(live_util(&l, 0, 0), 0, 1e-9, "and device 0's idle buckets (0%%)");
	is_dbl(live_iter_ms(&l, 0), 80, 0, "the iteration time is kept");
	op(&l, 1, 0, 0, 10);           /* iteration 1 starts at 80 ms: bucket 8 */
	is_int(l.shown_iter, 1, "ops of a new iteration replace the shown ones");
	is_int(l.dev[0].nops, 1, "device 0 shows the new iteration's op");
	is_int(l.dev[1].nops, 0, "device 1 has none yet");
	live_feed_line(&l, "{\"ev\": \"iter\", \"iter\": 1, \"ms\": 90}");
	is_dbl(live_iter_ms(&l, 0), 90, 0, "the latest iteration first");
	is_dbl(live_iter_ms(&l, 1), 80, 0, "then the one before");
	is_dbl(live_util_mean(&l, 0, 9), 1.0 / 9, 1e-9, "the mean over the last buckets (busy 10 of 90 ms)");
	live_feed_line(&l, "{\"ev\": \"done\", \"measured_ms\": 90, \"error\": 0.125}");
	ok(l.done && l.error == 0.125, "done is recorded");
	live_feed_line(&l, "{\"ev\": \"error\", \"msg\": \"device 1: timeout\"}");
	ok(l.failed && strcmp(l.error_msg, "device 1: timeout") == 0, "an error is recorded with its message");
	/* far in the future: the ring is reset rather than walked */
	op(&l, 2, 0, 1e9, 1e9 + 5);
	ok(live_util(&l, 0, 0) >= 0 && live_util(&l, 0, 0) <= 1, "a jump far ahead keeps utilization in range");
	live_release(&l);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads a child until both pipes end or the deadline; returns the stdout text. */
static void drain(struct runner *r, char *out, size_t n, double secs)
{
	size_t len = 0;
	double until = mono() + secs;

	out[0] = '\0';
	while ((r->out_fd >= 0 || r->err_fd >= 0) && mono() < until) {
		struct pollfd pf[2];
		int np = 0;
		char buf[256];

		if (r->out_fd >= 0)
			pf[np++] = (struct pollfd){ r->out_fd, POLLIN, 0 };
		if (r->err_fd >= 0)
			pf[np++] = (struct pollfd){ r->err_fd, POLLIN, 0 };
		poll(pf, (nfds_t)np, 100);
		for (int i = 0; i < np; i++) {
			long k = runner_read(r, pf[i].fd, buf, sizeof(buf));

			if (k > 0 && pf[i].fd == r->out_fd && len + (size_t)k < n) {
				memcpy(out + len, buf, (size_t)k);
				len += (size_t)k;
				out[len] = '\0';
			}
		}
	}
}

static void test_runner(void)
{
	struct runner r;
	struct err e = ERR_INIT;
	char out[512], how[128];
	char *hello[] = { "/bin/sh", "-c", "echo one; echo 'to stderr' >&2; echo two; exit 3", NULL };
	char *sleeper[] = { "/bin/sh", "-c", "trap '' TERM; echo ready; sleep 30", NULL };
	char *missing[] = { "/nonexistent/octopipe-no-such-program", NULL };
	double t0;

	ok(runner_start(&r, hello, &e) == 0, "a child starts");
	ok(runner_active(&r), "and is active");
	ok(runner_read(&r, r.out_fd, out, 0) < 0 && r.out_fd >= 0, "a read of nothing is not an end of file");
	drain(&r, out, sizeof(out), 5);
	is_str(out, "one\ntwo\n", "its stdout comes through the pipe");
	t0 = mono();
	while (!runner_reap(&r) && mono() - t0 < 5)
		usleep(10000);
	ok(r.reaped, "it is reaped");
	runner_describe(&r, how, sizeof(how));
	is_str(how, "exit status 3", "with its exit status");
	is_str(r.err_tail, "to stderr", "and the last line of its stderr");
	runner_finish(&r, 1);
	ok(r.out_fd < 0 && r.err_fd < 0, "finish closes the pipes");

	ok(runner_start(&r, missing, &e) < 0, "a program that does not exist does not start");
	ok(strstr(e.msg, "cannot start") != NULL, "and says why: %s", e.msg);

	ok(runner_start(&r, sleeper, &e) == 0, "a child that ignores sigterm starts");
	drain(&r, out, sizeof(out), 0.5);
	runner_signal(&r, false);
	ok(r.term_sent && !runner_reap(&r), "sigterm sent, and ignored");
	t0 = mono();
	runner_finish(&r, 0.3);
	ok(r.reaped, "finish reaps it anyway (sigkill after the grace time)");
	ok(mono() - t0 < 5, "within bounded time (%.2f s)", mono() - t0);
	ok(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "no child is left, not even a zombie");
}

/* Absurd times from a broken executor (issue 16, found by fuzz_events): a 1e12 ms op
 * used to walk every 10 ms bucket it covers (minutes), 1e308 overflowed a conversion. */
static void test_live_huge_times(void)
{
	struct live l;
	double t0 = mono(), u;

	ok(live_init(&l, 2, 80) == 0, "live state for absurd times");
	live_feed_line(&l, "{\"ev\": \"op\", \"iter\": 0, \"dev\": 0, \"op\": \"F\", \"stage\": 0, \"mb\": 0, "
	                   "\"t0_ms\": 0, \"t1_ms\": 1e12}");
	live_feed_line(&l, "{\"ev\": \"iter\", \"iter\": 0, \"ms\": 1e308}");
	live_feed_line(&l, "{\"ev\": \"op\", \"iter\": 1, \"dev\": 1, \"op\": \"F\", \"stage\": 0, \"mb\": 0, "
	                   "\"t0_ms\": 1e300, \"t1_ms\": 1e301}");
	ok(mono() - t0 < 1, "a 1e12 ms op and a 1e308 ms iteration are taken at once (%.2f s)", mono() - t0);
	u = live_util(&l, 0, 0);
	ok(u == -1 || (u >= 0 && u <= 1), "and utilization stays a share (%g)", u);
	live_release(&l);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_parse();
	test_linebuf();
	test_live();
	test_live_huge_times();
	test_runner();
	return tap_done();
}
