/*
 * events — the executor's octopipe.events/1 stream as the TUI reads it: a line buffer
 * that turns bytes from a non-blocking pipe into whole lines, and a parser for one line.
 * No curses and no I/O, so the unit test feeds it malformed input directly.
 */
#ifndef OCTO_UI_EVENTS_H
#define OCTO_UI_EVENTS_H

#include <stddef.h>

#define EVENTS_LINE_MAX 4096    /* longer lines are dropped whole */

enum event_kind { EV_UNKNOWN, EV_START, EV_OP, EV_ITER, EV_ERROR, EV_DONE };

struct event {
	enum event_kind kind;
	int dev, stage, mb, iter;   /* op: dev, stage, mb, iter; iter: iter */
	int op;                     /* op: enum op_kind */
	double t0_ms, t1_ms;        /* op */
	double ms;                  /* iter: iteration time; done: measured_ms; start: predicted_ms */
	double error;               /* done: (measured - predicted) / predicted */
	int devices, iters;         /* start */
	char msg[256];              /* error: the message */
};

/* Parses one line (without its newline). Returns 0 and fills ev (kind EV_UNKNOWN for an
 * event kind this version does not know: callers ignore it), or -1 when the line is not an
 * event object or a known event lacks a field it needs. */
int events_parse(const char *line, struct event *ev);

/* Collects bytes into lines. Caller-owned storage; no allocation. */
struct linebuf {
	char buf[EVENTS_LINE_MAX];
	size_t len;
	int overlong;               /* dropping the rest of a line that did not fit */
	long dropped;               /* lines dropped for length */
};

void linebuf_init(struct linebuf *lb);
/* Feeds n bytes; calls line(ctx, text) for every complete line (text is '\0'-terminated,
 * without the newline, valid during the call). */
void linebuf_feed(struct linebuf *lb, const char *bytes, size_t n, void (*line)(void *ctx, const char *text),
                  void *ctx);

#endif
