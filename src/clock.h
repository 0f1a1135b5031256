/*
 * clock — the monotonic clock and a short sleep, for deadlines, budgets and wait loops
 * (the tuner's budget, the executors' watchdogs, the TUI's timers). Seconds as doubles:
 * every caller compares against a deadline or a budget in seconds.
 */
#ifndef OCTO_CLOCK_H
#define OCTO_CLOCK_H

#include <math.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC (unaffected by changes of the wall clock). */
static inline double clock_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Sleeps about s seconds (s >= 0; a signal may end it early, as wait loops expect). */
static inline void clock_nap_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - floor(s)) * 1e9) };

	nanosleep(&ts, NULL);
}

#endif
