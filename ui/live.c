/*
 * live — measured state of a run (see live.h).
 *
 * Utilization is measured on the executor's own clock (model milliseconds), not on the
 * wall clock, so it means the same at any --time-scale and is exact in tests: time is
 * cut into buckets of a fixed width, each device adds the overlap of every op to the
 * buckets it covers, and a bucket is complete once the device has moved past it (a later
 * op starts after it, or the iteration ended). Each device's worker reports its ops in
 * order, so a device only ever moves forward through its buckets and a ring of the last
 * LIVE_HIST of them is all the history needed.
 */
#include "config.h"
#include "live.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int live_init(struct live *l, int ndev, double predicted_ms)
{
	memset(l, 0, sizeof(*l));
	if (ndev < 1)
		ndev = 1;
	l->dev = calloc((size_t)ndev, sizeof(*l->dev));
	if (!l->dev)
		return -1;
	l->ndev = ndev;
	l->predicted_ms = predicted_ms > 0 ? predicted_ms : 1;
	l->bucket_ms = l->predicted_ms / LIVE_BUCKETS_PER_ITER;
	l->shown_iter = -1;
	for (int d = 0; d < ndev; d++)
		l->dev[d].first = -1;
	return 0;
}

void live_release(struct live *l)
{
	for (int d = 0; d < l->ndev; d++)
		free(l->dev[d].ops);
	free(l->dev);
	memset(l, 0, sizeof(*l));
}

/* Moves device d's current bucket forward to b, clearing the buckets it enters. */
static void advance(struct live_dev *v, long b)
{
	if (v->first < 0) {
		v->first = b;
		v->cur = b;
		memset(v->busy, 0, sizeof(v->busy));
		return;
	}
	if (b - v->cur >= LIVE_HIST) {
		memset(v->busy, 0, sizeof(v->busy));
		v->cur = b;
		return;
	}
	while (v->cur < b) {
		v->cur++;
		v->busy[v->cur % LIVE_HIST] = 0;
	}
}

/* A bucket index from a rounded quotient of times: they come from the executor's stream,
 * so an absurd one (1e300 ms) clamps instead of overflowing the conversion to long. */
static long bucket_index(double q)
{
	if (!(q > 0))
		return 0;
	return q < 1e15 ? (long)q : (long)1e15;
}

static void add_busy(struct live *l, struct live_dev *v, double s, double e)
{
	double w = l->bucket_ms;
	long b0 = bucket_index(floor(s / w)), b1 = bucket_index(ceil(e / w)) - 1;   /* the buckets it overlaps */

	if (b1 < b0)
		b1 = b0;
	if (b1 - b0 >= LIVE_HIST)
		b0 = b1 - LIVE_HIST + 1;          /* only the ring's last buckets can keep anything */

	if (v->first >= 0 && b0 < v->cur - LIVE_HIST + 1)
		b0 = v->cur - LIVE_HIST + 1;      /* older than the ring: nothing to keep */
	if (v->first < 0 || b0 > v->cur)
		advance(v, b0);
	for (long b = b0; b <= b1; b++) {
		double ov = fmin(e, (b + 1) * w) - fmax(s, b * w);

		if (b > v->cur)
			advance(v, b);
		if (ov > 0 && b <= v->cur && b > v->cur - LIVE_HIST)
			v->busy[b % LIVE_HIST] += ov;
	}
}

static void add_op(struct live *l, const struct event *ev)
{
	struct live_dev *v = &l->dev[ev->dev];

	if (ev->iter > l->shown_iter) {
		for (int d = 0; d < l->ndev; d++)
			l->dev[d].nops = 0;
		l->shown_iter = ev->iter;
	}
	if (ev->iter == l->shown_iter) {
		if (v->nops == v->cap) {
			int cap = v->cap ? v->cap * 2 : 64;
			struct live_op *n = realloc(v->ops, (size_t)cap * sizeof(*n));

			if (!n)
				return;
			v->ops = n;
			v->cap = cap;
		}
		v->ops[v->nops++] = (struct live_op){ ev->t0_ms, ev->t1_ms, ev->stage, ev->mb, ev->op };
	}
	/* iterations run one after another: later ones start where the known ones ended */
	{
		double base = l->base_ms + (ev->iter > l->iters_done ? (ev->iter - l->iters_done) * l->predicted_ms : 0);

		if (ev->iter >= l->iters_done)
			add_busy(l, v, base + ev->t0_ms, base + ev->t1_ms);
	}
}

void live_feed(struct live *l, const struct event *ev)
{
	l->nevents++;
	switch (ev->kind) {
	case EV_START:
		l->started = true;
		l->iters_total = ev->iters;
		break;
	case EV_OP:
		if (ev->dev < 0 || ev->dev >= l->ndev) {
			l->nbad++;
			return;
		}
		add_op(l, ev);
		break;
	case EV_ITER:
		if (ev->iter < l->iters_done)
			break;
		l->iter_ms[l->iters_done % LIVE_ITERS_MAX] = ev->ms;
		l->iters_done++;
		l->base_ms += ev->ms;
		/* the iteration is over: every device's buckets before its end are complete */
		for (int d = 0; d < l->ndev; d++)
			if (l->dev[d].first >= 0) {
				long b = bucket_index(floor(l->base_ms / l->bucket_ms + 1e-9));

				if (b > l->dev[d].cur)
					advance(&l->dev[d], b);
			}
		break;
	case EV_ERROR:
		l->failed = true;
		memcpy(l->error_msg, ev->msg, sizeof(l->error_msg));
		break;
	case EV_DONE:
		l->done = true;
		l->measured_ms = ev->ms;
		l->error = ev->error;
		break;
	default:
		break;
	}
}

void live_feed_line(struct live *l, const char *line)
{
	struct event ev;

	if (events_parse(line, &ev) < 0) {
		l->nbad++;
		return;
	}
	live_feed(l, &ev);
}

double live_util(const struct live *l, int d, int k)
{
	const struct live_dev *v;
	long b;
	double u;

	if (d < 0 || d >= l->ndev || k < 0 || k >= LIVE_HIST - 1)
		return -1;
	v = &l->dev[d];
	b = v->cur - 1 - k;
	if (v->first < 0 || b < v->first)
		return -1;
	u = v->busy[b % LIVE_HIST] / l->bucket_ms;
	return u > 1 ? 1 : u < 0 ? 0 : u;
}

double live_util_mean(const struct live *l, int d, int n)
{
	double sum = 0, u;
	int k = 0;

	for (; k < n && (u = live_util(l, d, k)) >= 0; k++)
		sum += u;
	return k ? sum / k : -1;
}

double live_iter_ms(const struct live *l, int k)
{
	if (k < 0 || k >= l->iters_done || k >= LIVE_ITERS_MAX)
		return -1;
	return l->iter_ms[(l->iters_done - 1 - k) % LIVE_ITERS_MAX];
}
