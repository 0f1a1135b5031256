/* fuzz_events — the TUI's reader of the executor's octopipe.events/1 stream (ui/events.c,
 * ui/live.c: no curses) on arbitrary bytes, handed over in pieces of every size as a
 * pipe would: every line is parsed, parsed events keep their promises, and the live
 * state they build answers every query with sane numbers. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "events.h"
#include "fuzz.h"
#include "live.h"

static void check_event(const char *line)
{
	struct event ev;

	if (events_parse(line, &ev) < 0)
		return;
	if (memchr(ev.msg, '\0', sizeof(ev.msg)) == NULL)
		abort();
	if (ev.kind == EV_OP && (ev.t0_ms < 0 || ev.t1_ms < ev.t0_ms || !isfinite(ev.t1_ms) || ev.dev < 0 ||
	                         ev.stage < 0 || ev.mb < 0 || ev.iter < 0))
		abort();
	if (ev.kind == EV_ITER && (!(ev.ms >= 0) || ev.iter < 0))
		abort();
}

static void on_line(void *ctx, const char *line)
{
	check_event(line);
	live_feed_line(ctx, line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct linebuf lb;
	struct live l;
	size_t piece = size % 61 + 1;

	if (live_init(&l, 4, 10.0) < 0)
		return 0;
	linebuf_init(&lb);
	for (size_t i = 0; i < size; i += piece)
		linebuf_feed(&lb, (const char *)data + i, size - i < piece ? size - i : piece, on_line, &l);
	for (int d = 0; d < 4; d++) {
		double m = live_util_mean(&l, d, LIVE_HIST);

		if (!(m == -1 || (m >= 0 && m <= 1 + 1e-9)))
			abort();
		for (int k = 0; k < LIVE_HIST; k++) {
			double u = live_util(&l, d, k);

			if (!(u == -1 || (u >= 0 && u <= 1 + 1e-9)))
				abort();
		}
	}
	for (int k = 0; k <= LIVE_ITERS_MAX; k++) {
		double ms = live_iter_ms(&l, k);

		if (!(ms == -1 || ms >= 0))
			abort();
	}
	live_release(&l);
	return 0;
}
