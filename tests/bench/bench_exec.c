/*
 * bench_exec — the executor's protocol at scale: for growing pipelines (up to 32 devices
 * x 4096 microbatches, ZB-H1 with a split backward) the time to derive every worker's
 * program from the simulated timeline, to check the per-pair transfer order, to repair
 * it after a few receives were swapped on purpose, and to validate it. Prints a table;
 * never fails on timing.
 */
#include "config.h"

#include <stdio.h>
#include <time.h>

#include "../unit/synth.h"
#include "exec/protocol.h"
#include "sim.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Swaps the first two receives from one sender on every device (a broken order to repair). */
static int break_order(struct exec_program *x)
{
	int swapped = 0;

	for (int d = 0; d < x->ndevices; d++) {
		int r1 = -1;

		for (int i = x->start[d]; i < x->start[d + 1]; i++) {
			struct exec_item tmp;

			if (x->items[i].kind != EXEC_RECV)
				continue;
			if (r1 < 0) {
				r1 = i;
				continue;
			}
			if (x->xfers[x->items[i].xfer].src != x->xfers[x->items[r1].xfer].src)
				continue;
			tmp = x->items[r1];
			x->items[r1] = x->items[i];
			x->items[i] = tmp;
			swapped++;
			break;
		}
	}
	return swapped;
}

int main(void)
{
	static const int shapes[][2] = { { 8, 256 }, { 32, 1024 }, { 32, 4096 } };

	printf("%8s %6s %9s %9s %10s %10s %10s %10s %11s\n", "devices", "mbs", "ops", "xfers", "sim ms",
	       "build ms", "check ms", "repair ms", "validate ms");
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		int p = shapes[i][0], m = shapes[i][1];
		struct model md;
		struct cluster cl;
		struct plan pl;
		struct err e = ERR_INIT;
		struct baseline_spec spec = { SCHED_ZBH1, m, 0, "uniform", NULL, 0, 0, NULL };
		struct sim s;
		struct sim_opts o;
		struct metrics mt;
		struct timeline t;
		struct exec_program x;
		double t0, sim_ms, build_ms, check_ms, repair_ms, validate_ms;
		int bad;

		memset(&s, 0, sizeof(s));
		synth_model(&md, p, 1, 1, 0.5);
		for (int l = 0; l < p; l++)
			md.layers[l].out_bytes = 10000000;
		synth_cluster(&cl, p, 8, 450, 5);
		cl.inter.gbytes_per_s = 50;
		cl.inter.latency_us = 10;
		if (baseline_plan(&pl, &md, NULL, &cl, NULL, &spec, &e) < 0) {
			fprintf(stderr, "bench_exec: %s\n", e.msg);
			return 1;
		}
		sim_opts_default(&o);
		o.record = true;
		t0 = now_ms();
		if (sim_run(&s, &pl, &o, &mt, &e) < 0 || sim_timeline(&s, &pl, &mt, &t, &e) < 0) {
			fprintf(stderr, "bench_exec: %s\n", e.msg);
			return 1;
		}
		sim_ms = now_ms() - t0;
		t0 = now_ms();
		if (exec_build(&pl, &t, &x, &e) < 0) {
			fprintf(stderr, "bench_exec: %s\n", e.msg);
			return 1;
		}
		build_ms = now_ms() - t0;
		break_order(&x);
		t0 = now_ms();
		bad = exec_check(&x, &e);
		check_ms = now_ms() - t0;
		t0 = now_ms();
		exec_repair(&x);
		repair_ms = now_ms() - t0;
		t0 = now_ms();
		if (bad == 0 || exec_check(&x, &e) != 0 || exec_validate(&x, &e) < 0) {
			fprintf(stderr, "bench_exec: the repaired program does not validate: %s\n", e.msg);
			return 1;
		}
		validate_ms = now_ms() - t0;
		printf("%8d %6d %9ld %9d %10.1f %10.1f %10.1f %10.1f %11.1f\n", p, m, plan_total_ops(&pl), x.nxfers,
		       sim_ms, build_ms, check_ms, repair_ms, validate_ms);
		fflush(stdout);
		exec_release(&x);
		timeline_release(&t);
		metrics_release(&mt);
		sim_release(&s);
		plan_release(&pl);
		model_release(&md);
		cluster_release(&cl);
	}
	return 0;
}
