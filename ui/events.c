/*
 * events — lines and events of the executor's stream (see events.h).
 *
 * The stream is read from a pipe in whatever pieces poll() hands out, so the line buffer
 * keeps the tail of a partial line between reads; a line longer than the buffer is
 * dropped whole rather than split into two bogus events. Parsing is strict about the
 * fields a known event needs and lenient about everything else, so a newer executor
 * that adds fields or event kinds still drives an older UI.
 */
#include "config.h"
#include "events.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "action.h"

static int num(const cJSON *o, const char *key, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return -1;
	*out = v->valuedouble;
	return 0;
}

static int inum(const cJSON *o, const char *key, int lo, int hi, int *out)
{
	double x;

	if (num(o, key, &x) < 0 || x != floor(x) || x < lo || x > hi)
		return -1;
	*out = (int)x;
	return 0;
}

static int parse_op(const cJSON *o, struct event *ev)
{
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "op");

	if (!cJSON_IsString(k) || strlen(k->valuestring) != 1 || (ev->op = op_kind_from_char(k->valuestring[0])) < 0)
		return -1;
	if (inum(o, "dev", 0, 1 << 20, &ev->dev) < 0 || inum(o, "stage", 0, 1 << 20, &ev->stage) < 0 ||
	    inum(o, "mb", 0, 1 << 24, &ev->mb) < 0 || num(o, "t0_ms", &ev->t0_ms) < 0 || num(o, "t1_ms", &ev->t1_ms) < 0)
		return -1;
	if (ev->t0_ms < 0 || ev->t1_ms < ev->t0_ms)
		return -1;
	if (inum(o, "iter", 0, 1 << 30, &ev->iter) < 0)
		ev->iter = 0;
	return 0;
}

int events_parse(const char *line, struct event *ev)
{
	cJSON *o;
	const cJSON *k;
	int r = 0;

	memset(ev, 0, sizeof(*ev));
	o = cJSON_Parse(line);
	if (!o)
		return -1;
	k = cJSON_GetObjectItemCaseSensitive(o, "ev");
	if (!cJSON_IsObject(o) || !cJSON_IsString(k)) {
		cJSON_Delete(o);
		return -1;
	}
	if (strcmp(k->valuestring, "op") == 0) {
		ev->kind = EV_OP;
		r = parse_op(o, ev);
	} else if (strcmp(k->valuestring, "iter") == 0) {
		ev->kind = EV_ITER;
		r = inum(o, "iter", 0, 1 << 30, &ev->iter) < 0 || num(o, "ms", &ev->ms) < 0 || ev->ms < 0 ? -1 : 0;
	} else if (strcmp(k->valuestring, "start") == 0) {
		ev->kind = EV_START;
		if (inum(o, "devices", 1, 1 << 20, &ev->devices) < 0)
			ev->devices = 0;
		if (inum(o, "iters", 1, 1 << 30, &ev->iters) < 0)
			ev->iters = 0;
		if (num(o, "predicted_ms", &ev->ms) < 0)
			ev->ms = 0;
	} else if (strcmp(k->valuestring, "error") == 0) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "msg");

		ev->kind = EV_ERROR;
		snprintf(ev->msg, sizeof(ev->msg), "%s", cJSON_IsString(m) ? m->valuestring : "the executor failed");
	} else if (strcmp(k->valuestring, "done") == 0) {
		ev->kind = EV_DONE;
		if (num(o, "measured_ms", &ev->ms) < 0)
			ev->ms = 0;
		if (num(o, "error", &ev->error) < 0)
			ev->error = 0;
	} else {
		ev->kind = EV_UNKNOWN;
	}
	cJSON_Delete(o);
	return r;
}

void linebuf_init(struct linebuf *lb)
{
	memset(lb, 0, sizeof(*lb));
}

void linebuf_feed(struct linebuf *lb, const char *bytes, size_t n, void (*line)(void *ctx, const char *text),
                  void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		char c = bytes[i];

		if (c == '\n') {
			if (lb->overlong) {
				lb->overlong = 0;
				lb->dropped++;
			} else {
				if (lb->len > 0 && lb->buf[lb->len - 1] == '\r')
					lb->len--;
				lb->buf[lb->len] = '\0';
				line(ctx, lb->buf);
			}
			lb->len = 0;
			continue;
		}
		if (lb->overlong)
			continue;
		if (lb->len + 1 >= sizeof(lb->buf)) {
			lb->overlong = 1;
			lb->len = 0;
			continue;
		}
		lb->buf[lb->len++] = c;
	}
}
