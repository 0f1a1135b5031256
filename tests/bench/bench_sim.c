/*
 * bench_sim — simulator speed: time per simulation and ops per second for growing
 * pipelines with a split backward, in order-driven mode (a ZB-H1 plan) and policy-driven
 * mode (the adaptive scheduler), reusing one workspace as the tuner does. Prints a table;
 * never fails on timing.
 */
#include "config.h"

#include <stdio.h>
#include <time.h>

#include "../unit/synth.h"
#include "sim.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void)
{
	static const int shapes[][2] = { { 8, 64 }, { 32, 256 }, { 128, 1024 } };
	struct sim s;

	memset(&s, 0, sizeof(s));
	printf("%8s %6s %9s %8s %12s %14s %12s %14s\n", "devices", "mbs", "ops", "runs", "order ms/sim",
	       "order Mops/s", "policy ms/sim", "policy Mops/s");
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		int p = shapes[i][0], m = shapes[i][1];
		struct model md;
		struct cluster cl;
		struct plan pl;
		struct err e = ERR_INIT;
		struct baseline_spec spec = { SCHED_ZBH1, m, 0, "uniform", NULL, 0, 0, NULL };
		struct sim_opts o;
		struct metrics mt;
		double t0, order_ms, policy_ms;
		long ops;
		int runs;

		synth_model(&md, p, 1, 1, 0.5);
		for (int l = 0; l < p; l++)
			md.layers[l].out_bytes = 10000000;
		synth_cluster(&cl, p, 8, 450, 5);
		cl.inter.gbytes_per_s = 50;
		cl.inter.latency_us = 10;
		if (baseline_plan(&pl, &md, NULL, &cl, NULL, &spec, &e) < 0) {
			fprintf(stderr, "bench_sim: %s\n", e.msg);
			return 1;
		}
		ops = plan_total_ops(&pl);
		runs = (int)(5e6 / ops) + 3;
		sim_opts_default(&o);
		t0 = now_ms();
		for (int r = 0; r < runs; r++) {
			sim_run(&s, &pl, &o, &mt, &e);
			metrics_release(&mt);
		}
		order_ms = (now_ms() - t0) / runs;
		o.policy_driven = true;
		t0 = now_ms();
		for (int r = 0; r < runs; r++) {
			sim_run(&s, &pl, &o, &mt, &e);
			metrics_release(&mt);
		}
		policy_ms = (now_ms() - t0) / runs;
		printf("%8d %6d %9ld %8d %12.3f %14.1f %12.3f %14.1f\n", p, m, ops, runs, order_ms,
		       ops / order_ms / 1e3, policy_ms, ops / policy_ms / 1e3);
		plan_release(&pl);
		model_release(&md);
		cluster_release(&cl);
	}
	sim_release(&s);
	return 0;
}
