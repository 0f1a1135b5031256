/*
 * metrics — the numbers that judge a timeline (docs/DESIGN.md "Metrics"): iteration time,
 * throughput, bubbles per device split into warm-up and cool-down, memory peaks, a lower
 * bound and the efficiency against it, and the reasons a plan is infeasible.
 *
 * bubble_ratio = 1 - sum(busy) / (devices x makespan): the idle share of all device time.
 * (Peers define "bubble" three ways; this is the one OctoPipe reports everywhere.)
 */
#ifndef OCTO_METRICS_H
#define OCTO_METRICS_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "action.h"
#include "err.h"

struct device_metrics {
	double busy_ms;
	double idle_ms;
	double bubble_ratio;
	double warmup_idle_ms;    /* idle before the device's first backward */
	double cooldown_idle_ms;  /* idle after the device's last forward */
	uint64_t peak_mem_bytes;
	uint64_t mem_capacity_bytes;
	/* what one GPU of the device holds (`memory_breakdown`): weights, gradients and
	 * optimizer states after ZeRO sharding, and the activations at the peak */
	uint64_t weights_bytes, grads_bytes, optimizer_bytes, act_peak_bytes;
	/* the data-parallel gradient synchronisation on the device's communication stream
	 * (both 0: none) */
	double sync_start_ms, sync_end_ms;
};

/* One op of a deadlock cycle: the device and the action it waits at. */
struct deadlock_op {
	int device;
	struct action op;
};

struct metrics {
	double makespan_ms;
	double throughput_tokens_per_s;
	double bubble_ratio;
	double lower_bound_ms;
	double efficiency;
	double lower_bound_tight_ms; /* sim_lower_bound_tight(); a file without it: lower_bound_ms */
	double efficiency_tight;     /* lower_bound_tight_ms / makespan_ms */
	double lower_bound_memory_ms; /* sim_lower_bound_memory(): no plan that fits in memory is
	                              * faster; a file without it: lower_bound_tight_ms */
	double efficiency_memory;    /* lower_bound_memory_ms / makespan_ms (at most 1) */
	double dp_sync_ms;           /* the part of makespan_ms that data-parallel synchronisation
	                              * adds after the last op (exposed, not overlapped) */
	int ndevices;
	struct device_metrics *dev;
	int ncycle;                 /* 0 = no deadlock */
	struct deadlock_op *cycle;
	int noom;                   /* devices over capacity */
	int *oom;
};

int metrics_from_json(struct metrics *m, const cJSON *obj, const char *file, const char *path,
                      struct err *e);
/* NULL when out of host memory. */
cJSON *metrics_to_json(const struct metrics *m);
void metrics_release(struct metrics *m);

#endif
