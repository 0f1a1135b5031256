/*
 * live — what a run has measured so far, built from its events: the ops of the latest
 * iteration per device (the measured Gantt rows), the iteration times, and each device's
 * utilization as a short history (a ring buffer of buckets of model time). No curses and
 * no I/O: the run module feeds it events, the views read it.
 */
#ifndef OCTO_UI_LIVE_H
#define OCTO_UI_LIVE_H

#include <stdbool.h>

#include "events.h"

#define LIVE_HIST 16             /* utilization buckets kept per device */
#define LIVE_BUCKETS_PER_ITER 8  /* bucket width = predicted iteration / this */
#define LIVE_ITERS_MAX 64        /* iteration times kept (the latest) */

struct live_op {
	double t0, t1;
	int stage, mb, kind;
};

struct live_dev {
	struct live_op *ops;         /* the shown iteration's ops, in arrival order */
	int nops, cap;
	double busy[LIVE_HIST];      /* ring: busy ms in bucket abs % LIVE_HIST */
	long cur;                    /* absolute index of the bucket being filled; older ones are complete */
	long first;                  /* the first bucket this device ever touched */
};

struct live {
	int ndev;
	struct live_dev *dev;
	double predicted_ms;
	double bucket_ms;
	int shown_iter;              /* the iteration the ops belong to (-1: none yet) */
	int iters_total;             /* from the start event (0: unknown) */
	int iters_done;
	double iter_ms[LIVE_ITERS_MAX]; /* ring of the latest iteration times */
	double base_ms;              /* model time at which iteration iters_done starts */
	bool started, done, failed;
	double measured_ms, error;   /* from the done event */
	char error_msg[256];         /* from an error event */
	long nevents, nbad;          /* events applied; lines that were not events */
};

/* Sizes the state for ndev devices of a plan whose predicted iteration is predicted_ms. */
int live_init(struct live *l, int ndev, double predicted_ms);
void live_release(struct live *l);
/* Applies one event; ops of unknown devices are counted as bad and ignored. */
void live_feed(struct live *l, const struct event *ev);
/* Parses and applies one line of the stream. */
void live_feed_line(struct live *l, const char *line);
/* Utilization (0..1) of device d's k-th most recent complete bucket (k = 0 the latest);
 * -1 when there is none. */
double live_util(const struct live *l, int d, int k);
/* Mean utilization of device d over its last n complete buckets (-1 when none). */
double live_util_mean(const struct live *l, int d, int n);
/* The latest iteration time, k iterations back; -1 when none. */
double live_iter_ms(const struct live *l, int k);

#endif
