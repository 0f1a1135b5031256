/*
 * emu — threads, channels and a watchdog (see emu.h).
 *
 * One mutex guards all shared state: channels are short queues, and a global lock keeps
 * the matching rule (k-th send meets k-th receive per ordered pair) trivially atomic.
 * Each device has a condition variable of its own that only its worker waits on: a
 * match wakes the one device that receives the transfer (the consumer of a transfer
 * is on its dst), not every worker (a broadcast to all made a run on D devices wake D
 * threads per transfer: 2048 devices took 76 s, mostly in the kernel). Every wait is a
 * timed wait that also checks the abort flag, and a failure wakes every device, so no
 * run can hang past the watchdog.
 *
 * Memory is linear in devices plus transfers: a channel exists only for an ordered pair
 * of devices that some transfer crosses (consecutive stages on different devices), found
 * by bucketing the transfers by sender; each transfer knows its channel's index, and the
 * channels' queues are slices of two pools of one slot per transfer. (A channel per
 * ordered pair, D x D, took 3.8 GB of host memory at 8192 devices.)
 */
#include "config.h"
#include "exec/emu.h"
#include "exec/payload.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EMU_WORKER_STACK ((size_t)1 << 20) /* bytes of stack a worker thread gets */

struct chan {
	int32_t *sends, *recvs;    /* transfer ids in issue order (slices of emu.ids) */
	double *send_t, *recv_t;   /* virtual issue times (slices of emu.times) */
	int src, dst;              /* the ordered pair of devices */
	int nsend, nrecv, matched;
	double link_free;
};

struct emu {
	const struct plan *p;
	const struct exec_program *x;
	const struct emu_opts *o;
	pthread_mutex_t lock;
	pthread_cond_t *wake;      /* per device: what its worker waits on */
	int nwake;                 /* how many of them were initialised */
	struct chan *chans;        /* per ordered pair that some transfer crosses */
	int nchans;
	int32_t *xchan;            /* per transfer: its channel, an index into chans */
	int32_t *ids;              /* 2 x nxfers: the channels' send and receive queues */
	double *times;             /* 2 x nxfers: their issue times */
	double *arrival;           /* per transfer: virtual arrival, or -1 */
	unsigned char **data;      /* per transfer: its bytes, from the send until the consumer checked them */
	uint64_t *stash;           /* per (stage, microbatch) x 2: what F keeps for I or B, what I keeps
	                            * for W (tag fingerprints; 0: nothing) */
	double *stage_ms;          /* per stage: F, I or B, W on a speed-1 device */
	int *waiting_on;           /* per device: the device whose data it waits for, or -1; -2 once
	                            * its program is done */
	int *seen;                 /* per device: scratch of blame() */
	int *running;              /* per device: the op it occupies the device with in wall time
	                            * (--time-scale), as an index into x->items, or -1 */
	bool abort;
	struct err err;
	struct timeline *tl;
	struct timespec t0;
	struct timespec progressed; /* wall time of the last arrival or finished op anywhere */
};

struct worker {
	struct emu *em;
	int dev;
};

void emu_opts_default(struct emu_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->timeout_s = 10;
	o->kill_device = -1;
	o->slow_stage = -1;
	o->slow_factor = 1;
	o->misroute_xfer = -1;
	o->corrupt_xfer = -1;
}

double emu_op_ms(const struct plan *p, const double *stage_ms, const struct emu_opts *o, int d,
                 const struct action *a)
{
	double ms = stage_ms[a->stage * 3 + op_kind_slot(a->kind)] / p->cluster.device_speed[d];

	return a->stage == o->slow_stage ? ms * o->slow_factor : ms;
}

static void fail(struct emu *em, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records the first failure and wakes every worker (lock held). */
static void fail(struct emu *em, const char *fmt, ...)
{
	va_list ap;

	if (!em->abort) {
		char msg[sizeof(em->err.msg)];

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		err_set(&em->err, ERR_RUNTIME, "%s", msg);
		em->abort = true;
		/* every wait checks the abort flag before it blocks: one wake-up each is enough */
		for (int d = 0; d < em->nwake; d++)
			pthread_cond_broadcast(&em->wake[d]);
	}
}

static void timespec_add(struct timespec *ts, double seconds)
{
	ts->tv_sec += (time_t)seconds;
	ts->tv_nsec += (long)((seconds - floor(seconds)) * 1e9);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void deadline_in(struct timespec *ts, double seconds)
{
	clock_gettime(CLOCK_REALTIME, ts);
	timespec_add(ts, seconds);
}

/* A wait past the watchdog is a hang only when nothing arrived and no op finished anywhere
 * for the whole timeout: many devices on few cores wait longer while the pipeline fills.
 * Moves the deadline to that much after the last progress; false when it has passed. Lock
 * held. */
static bool progressed_since(const struct emu *em, struct timespec *ts)
{
	struct timespec now, next = em->progressed;

	clock_gettime(CLOCK_REALTIME, &now);
	timespec_add(&next, em->o->timeout_s);
	if (next.tv_sec < now.tv_sec || (next.tv_sec == now.tv_sec && next.tv_nsec <= now.tv_nsec))
		return false;
	*ts = next;
	return true;
}

/* Why device d's wait never ended, following who waits for whom from d: a device that
 * waits for nothing is hung or dead, one that finished never sent, and a device met twice
 * closes a cycle of waits, a deadlock. Lock held. */
static const char *blame(const struct emu *em, int d, char *out, size_t n)
{
	int cur = em->waiting_on[d], D = em->x->ndevices;
	size_t len = 0;

	out[0] = 0;
	for (int i = 0; i < D; i++)
		em->seen[i] = 0;
	em->seen[d] = 1;
	while (cur >= 0 && !em->seen[cur] && em->waiting_on[cur] >= 0) {
		em->seen[cur] = 1;
		len += (size_t)snprintf(out + len, len < n ? n - len : 0, "device %d waits for device %d, ", cur,
		                        em->waiting_on[cur]);
		cur = em->waiting_on[cur];
		if (len >= n)
			return out;
	}
	if (cur < 0 || em->seen[cur])
		snprintf(out + len, len < n ? n - len : 0, "a cycle of waits: a deadlock");
	else if (em->waiting_on[cur] == -2)
		snprintf(out + len, len < n ? n - len : 0, "device %d finished its program without sending it", cur);
	else if (em->running[cur] >= 0) {
		char tok[ACTION_TEXT_MAX];

		snprintf(out + len, len < n ? n - len : 0, "device %d is still running %s, an op longer than the watchdog",
		         cur, action_format(&em->x->items[em->running[cur]].op, tok));
	} else
		snprintf(out + len, len < n ? n - len : 0, "device %d waits for no data: it hung or died", cur);
	return out;
}

/* Pairs channel c's next unmatched send and receive and wakes its receiver (lock held). */
static void match(struct emu *em, struct chan *c)
{
	const struct cluster *cl = &em->p->cluster;
	int a = c->src, b = c->dst;

	while (c->matched < c->nsend && c->matched < c->nrecv) {
		int k = c->matched++;
		int32_t xs = c->sends[k], xr = c->recvs[k];
		const struct exec_xfer *xf = &em->x->xfers[xs];
		const struct link *l = cluster_link(cl, a, b);
		double start, wire;
		char t1[ACTION_TEXT_MAX], t2[ACTION_TEXT_MAX];

		if (xs != xr) {
			fail(em, "device %d received from device %d the output of %s where it expected that of %s "
			     "(transfer %d between them is out of order)", b, a, action_format(&xf->producer, t1),
			     action_format(&em->x->xfers[xr].producer, t2), k);
			return;
		}
		start = fmax(fmax(c->send_t[k], c->recv_t[k]), c->link_free);
		wire = link_wire_ms(l, xf->bytes);
		c->link_free = start + wire;
		em->arrival[xs] = start + link_latency_ms(l) + wire;
		clock_gettime(CLOCK_REALTIME, &em->progressed);
		if (em->tl) {
			struct tl_xfer *tx = &em->tl->xfers[em->tl->nxfers++];

			*tx = (struct tl_xfer){ a, b, xf->producer.stage, xf->producer.mb,
			                        (uint8_t)(xf->producer.kind == OP_F ? XFER_ACT : XFER_GRAD), start,
			                        em->arrival[xs], xf->bytes };
		}
		/* the one worker that waits for this arrival: the consumer's device, b */
		pthread_cond_signal(&em->wake[b]);
	}
}

static void push(int32_t *ids, double *times, int *n, int32_t id, double t)
{
	ids[*n] = id;
	times[*n] = t;
	(*n)++;
}

/* The sender's bytes of transfer k: its producer's tagged payload (or, injected, another
 * microbatch's, or a flipped byte). Lock held; -1 when out of memory (the run failed). */
static int send_data(struct emu *em, int k)
{
	const struct exec_xfer *xf = &em->x->xfers[k];
	size_t len = payload_len(xf->bytes, PAYLOAD_MAX);
	struct payload_tag t = { (uint32_t)em->o->iter, xf->producer };

	if (!(em->data[k] = malloc(len))) {
		fail(em, "device %d: out of host memory for the data of transfer %d", xf->src, k);
		return -1;
	}
	if (k == em->o->misroute_xfer)
		payload_misroute(&t, em->p->microbatches);
	payload_fill(em->data[k], len, &t);
	if (k == em->o->corrupt_xfer)
		em->data[k][len / 2] ^= 0x10;
	return 0;
}

/* Device d checks the bytes of transfer k before the op that consumes them. Lock held. */
static void check_data(struct emu *em, int d, int k)
{
	const struct exec_xfer *xf = &em->x->xfers[k];
	struct payload_tag want = { (uint32_t)em->o->iter, xf->producer };
	char why[160], t1[ACTION_TEXT_MAX], t2[ACTION_TEXT_MAX];

	if (!em->data[k])
		return;   /* checked already (a pair's head and partner may share an input) */
	if (payload_check(em->data[k], payload_len(xf->bytes, PAYLOAD_MAX), &want, why, sizeof(why)) < 0)
		fail(em, "device %d received from device %d the output of %s for %s (transfer %d, iteration %d), but the "
		     "data %s", d, xf->src, action_format(&xf->producer, t1), action_format(&xf->consumer, t2), k,
		     em->o->iter, why);
	free(em->data[k]);
	em->data[k] = NULL;
}

/* What op a keeps for its backward (payload_stash): a missing entry fails the run — the
 * store would be wrong, not the plan, since validation put every W after its I. */
static void take_stash(struct emu *em, int d, const struct action *a)
{
	char why[96];

	if (payload_stash(em->stash, em->p->microbatches, (uint32_t)em->o->iter, a, why, sizeof(why)) < 0)
		fail(em, "device %d: %s", d, why);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct emu *em = w->em;
	const struct exec_program *x = em->x;
	const struct plan *p = em->p;
	int d = w->dev, ops = 0;
	double clock = 0;
	struct tl_device *td = &em->tl->dev[d];

	for (int i = x->start[d]; i < x->start[d + 1]; i++) {
		const struct exec_item *it = &x->items[i];

		pthread_mutex_lock(&em->lock);
		if (em->abort) {
			pthread_mutex_unlock(&em->lock);
			return NULL;
		}
		if (it->kind == EXEC_RECV) {
			struct chan *c = &em->chans[em->xchan[it->xfer]];

			push(c->recvs, c->recv_t, &c->nrecv, it->xfer, clock);
			match(em, c);
		} else if (it->kind == EXEC_SEND) {
			struct chan *c = &em->chans[em->xchan[it->xfer]];

			if (send_data(em, it->xfer) < 0) {
				pthread_mutex_unlock(&em->lock);
				return NULL;
			}
			push(c->sends, c->send_t, &c->nsend, it->xfer, clock);
			match(em, c);
		} else {
			const struct action *a = &it->op;
			double dur, start;

			/* wait only for the data this op consumes (and, heading a pair, its partner's) */
			for (int half = 0; half < 2 && !em->abort; half++) {
				int32_t xk = half ? it->xfer2 : it->xfer;
				const struct exec_xfer *xf;
				char tok[ACTION_TEXT_MAX];
				struct timespec ts;

				if (xk < 0)
					continue;
				xf = &x->xfers[xk];
				deadline_in(&ts, em->o->timeout_s);
				em->waiting_on[d] = xf->src;
				while (em->arrival[xk] < 0 && !em->abort) {
					if (pthread_cond_timedwait(&em->wake[d], &em->lock, &ts) == ETIMEDOUT &&
					    !progressed_since(em, &ts)) {
						char why[200];

						fail(em, "device %d waited %g s for the output of %s from device %d: no matching "
						     "send arrived (%s)", d, em->o->timeout_s, action_format(&xf->producer, tok), xf->src,
						     blame(em, d, why, sizeof(why)));
						break;
					}
				}
				em->waiting_on[d] = -1;
				if (!em->abort && em->arrival[xk] > clock)
					clock = em->arrival[xk];
				if (!em->abort)
					check_data(em, d, xk);
			}
			if (!em->abort)
				take_stash(em, d, a);
			if (em->abort) {
				pthread_mutex_unlock(&em->lock);
				return NULL;
			}
			if (d == em->o->kill_device && ops == em->o->kill_after_ops) {
				/* a hung worker waits for nothing but the abort its silence causes */
				if (em->o->kill_how == EMU_KILL_HANG) {
					struct timespec ts;

					/* twice the watchdog: a peer that waits for it notices first */
					deadline_in(&ts, 2 * em->o->timeout_s);
					while (!em->abort && pthread_cond_timedwait(&em->wake[d], &em->lock, &ts) != ETIMEDOUT)
						;
					fail(em, "worker %d stopped answering after %d ops and nothing waited for it within %g s "
					     "(injected hang)", d, ops, 2 * em->o->timeout_s);
				}
				fail(em, "worker %d died after %d ops (injected failure)", d, ops);
				pthread_mutex_unlock(&em->lock);
				return NULL;
			}
			dur = emu_op_ms(p, em->stage_ms, em->o, d, a);
			start = clock;
			clock += dur;
			td->ops[td->nops++] = (struct tl_op){ start, clock, a->stage, a->mb, a->kind };
			ops++;
			clock_gettime(CLOCK_REALTIME, &em->progressed);
			if (em->o->on_op)
				em->o->on_op(em->o->ctx, d, a, start, clock);
			if (em->o->time_scale > 0) {
				/* occupy the device in wall time too; an abort cuts the nap short */
				struct timespec ts;

				deadline_in(&ts, dur * em->o->time_scale / 1000);
				em->running[d] = i;
				while (!em->abort && pthread_cond_timedwait(&em->wake[d], &em->lock, &ts) != ETIMEDOUT)
					;
				em->running[d] = -1;
			}
		}
		pthread_mutex_unlock(&em->lock);
	}
	pthread_mutex_lock(&em->lock);
	em->waiting_on[d] = -2;
	pthread_mutex_unlock(&em->lock);
	return NULL;
}

/* Starts a worker thread per device; returns how many started (a failure is recorded).
 * A worker needs little stack: the default 8 MiB each ran out of a login node's capped
 * address space (ulimit -v 2 GiB) at about 120 devices. */
static int start_workers(struct emu *em, struct worker *ws, pthread_t *th, int D)
{
	pthread_attr_t attr;
	bool have_attr = false;
	int started = 0;

	if (pthread_attr_init(&attr) == 0)
		have_attr = pthread_attr_setstacksize(&attr, EMU_WORKER_STACK) == 0;
	for (int d = 0; d < D; d++) {
		int why;

		ws[d] = (struct worker){ em, d };
		if ((why = pthread_create(&th[d], have_attr ? &attr : NULL, worker_main, &ws[d])) != 0) {
			pthread_mutex_lock(&em->lock);
			fail(em, "cannot start worker %d: %s", d, strerror(why));
			pthread_mutex_unlock(&em->lock);
			break;
		}
		started++;
	}
	if (have_attr)
		pthread_attr_destroy(&attr);
	return started;
}

/* The channels: one per ordered pair of devices that some transfer crosses, in order of
 * sender and then of the sender's first transfer to the receiver. The transfers are
 * bucketed by sender (a counting sort) and a receiver seen in the current sender's bucket
 * is remembered in mark[] by its channel's index, which only grows: an index below the
 * sender's first is a previous sender's. Linear in devices plus transfers; -1 when out of
 * memory. */
static int chans_build(struct emu *em)
{
	const struct exec_program *x = em->x;
	int D = x->ndevices, N = x->nxfers, r = -1;
	size_t n1 = (size_t)(N ? N : 1);
	int32_t *first = calloc((size_t)D + 1, sizeof(int32_t)), *order = malloc(n1 * sizeof(int32_t));
	int32_t *mark = malloc((size_t)(D ? D : 1) * sizeof(int32_t));
	int at = 0;

	em->xchan = malloc(n1 * sizeof(int32_t));
	em->ids = malloc(2 * n1 * sizeof(int32_t));
	em->times = malloc(2 * n1 * sizeof(double));
	if (!first || !order || !mark || !em->xchan || !em->ids || !em->times)
		goto out;
	for (int k = 0; k < N; k++)
		first[x->xfers[k].src + 1]++;
	for (int d = 0; d < D; d++) {
		first[d + 1] += first[d];
		mark[d] = -1;
	}
	for (int k = 0; k < N; k++)
		order[first[x->xfers[k].src]++] = k;   /* first[d] ends as the start of d + 1 */
	for (int j = 0, s = 0; j < N; j++) {
		int k = order[j], dst = x->xfers[k].dst;

		while (j >= first[s])
			s++;                                /* transfer k's sender, the bucket's */
		if (j == (s ? first[s - 1] : 0))
			at = em->nchans;                     /* the sender's first channel */
		if (mark[dst] < at)
			mark[dst] = em->nchans++;
		em->xchan[k] = mark[dst];
	}
	if (!(em->chans = calloc((size_t)(em->nchans ? em->nchans : 1), sizeof(*em->chans))))
		goto out;
	for (int k = 0; k < N; k++) {                /* transfers per channel, counted in nsend for now */
		struct chan *c = &em->chans[em->xchan[k]];

		c->src = x->xfers[k].src;
		c->dst = x->xfers[k].dst;
		c->nsend++;
	}
	at = 0;
	for (int i = 0; i < em->nchans; i++) {
		struct chan *c = &em->chans[i];

		c->sends = em->ids + at;
		c->recvs = em->ids + N + at;
		c->send_t = em->times + at;
		c->recv_t = em->times + N + at;
		at += c->nsend;
		c->nsend = 0;
	}
	r = 0;
out:
	free(first);
	free(order);
	free(mark);
	return r;
}

/* The per-device condition variables; -1 when one cannot be made. */
static int wake_init(struct emu *em, int D)
{
	if (!(em->wake = malloc((size_t)(D ? D : 1) * sizeof(*em->wake))))
		return -1;
	for (; em->nwake < D; em->nwake++)
		if (pthread_cond_init(&em->wake[em->nwake], NULL) != 0)
			return -1;
	return 0;
}

static void emu_free(struct emu *em)
{
	free(em->chans);
	free(em->xchan);
	free(em->ids);
	free(em->times);
	free(em->arrival);
	for (int k = 0; em->data && k < em->x->nxfers; k++)
		free(em->data[k]);
	free(em->data);
	free(em->stash);
	free(em->waiting_on);
	free(em->seen);
	free(em->running);
	free(em->stage_ms);
	for (int d = 0; d < em->nwake; d++)
		pthread_cond_destroy(&em->wake[d]);
	free(em->wake);
	pthread_mutex_destroy(&em->lock);
}

int emu_run(const struct plan *p, const struct exec_program *x, const struct emu_opts *o,
            struct timeline *measured, struct err *e)
{
	struct emu em;
	struct worker *ws = NULL;
	pthread_t *th = NULL;
	int D = x->ndevices, started = 0, r = -1;

	memset(&em, 0, sizeof(em));
	memset(measured, 0, sizeof(*measured));
	em.p = p;
	em.x = x;
	em.o = o;
	em.tl = measured;
	pthread_mutex_init(&em.lock, NULL);
	em.arrival = malloc((size_t)(x->nxfers ? x->nxfers : 1) * sizeof(double));
	em.data = calloc((size_t)(x->nxfers ? x->nxfers : 1), sizeof(*em.data));
	em.stash = calloc((size_t)p->nstages * p->microbatches * 2 + 1, sizeof(*em.stash));
	em.waiting_on = malloc((size_t)D * sizeof(*em.waiting_on));
	em.seen = malloc((size_t)D * sizeof(*em.seen));
	em.running = malloc((size_t)D * sizeof(*em.running));
	em.stage_ms = calloc((size_t)p->nstages * 3 + 1, sizeof(double));
	ws = calloc((size_t)D, sizeof(*ws));
	th = calloc((size_t)D, sizeof(*th));
	measured->source = strdup("emu");
	measured->ndevices = D;
	measured->dev = calloc((size_t)D, sizeof(*measured->dev));
	measured->xfers = calloc((size_t)(x->nxfers ? x->nxfers : 1), sizeof(*measured->xfers));
	if (!em.arrival || !em.data || !em.stash || !em.waiting_on || !em.seen || !em.running || !em.stage_ms ||
	    !ws || !th || !measured->source || !measured->dev || !measured->xfers || wake_init(&em, D) < 0 ||
	    chans_build(&em) < 0)
		goto oom;
	for (int i = 0; i < x->nxfers; i++)
		em.arrival[i] = -1;
	for (int d = 0; d < D; d++)
		em.waiting_on[d] = em.running[d] = -1;
	for (int s = 0; s < p->nstages; s++)
		plan_stage_ms(p, s, &em.stage_ms[s * 3]);
	for (int d = 0; d < D; d++) {
		int n = 0;

		for (int i = x->start[d]; i < x->start[d + 1]; i++)
			n += x->items[i].kind == EXEC_COMPUTE;
		measured->dev[d].ops = calloc((size_t)(n ? n : 1), sizeof(struct tl_op));
		if (!measured->dev[d].ops)
			goto oom;
	}
	clock_gettime(CLOCK_MONOTONIC, &em.t0);
	clock_gettime(CLOCK_REALTIME, &em.progressed);
	started = start_workers(&em, ws, th, D);
	for (int d = 0; d < started; d++)
		pthread_join(th[d], NULL);
	if (em.abort) {
		*e = em.err;
	} else {
		/* a worker that finished its list while a peer still expects data is a hang too */
		bool complete = true;

		for (int k = 0; k < x->nxfers; k++)
			complete = complete && em.arrival[k] >= 0;
		if (!complete)
			err_set(e, ERR_RUNTIME, "the run ended with transfers never received");
		else
			r = 0;
	}
	goto out;
oom:
	err_set(e, ERR_RUNTIME, "out of host memory starting the emulated executor");
out:
	emu_free(&em);
	free(ws);
	free(th);
	if (r < 0)
		timeline_release(measured);
	return r;
}
