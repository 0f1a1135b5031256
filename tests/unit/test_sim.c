/*
 * test_sim — the simulator against closed forms and published schedule values
 * (docs/METHOD.md §2), a hand-computed heterogeneous pipeline with latency and bandwidth,
 * properties on random plans (no overlap, every dependency respected, bound respected,
 * memory back to static, policy orders replay exactly), and the failure paths: deadlock
 * with its cycle, schedules that cannot apply, out of memory, idle devices. The
 * partitioners and the best-baseline loop are in test_baseline.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "baseline.h"
#include "sim.h"
#include "synth.h"
#include "../tap.h"

#define EPS 1e-9

/* Builds schedule k (v chunks of 1/v the cost) for a uniform model of per-stage F, I, W
 * with activations of out bytes on links of gbps GB/s (0: free) and simulates it; the
 * plan is kept in keep when asked. Returns the iteration time, or -1 with *err (when
 * given) saying why. */
static double uniform_run_o(enum sched_kind k, int p, int m, double F, double I, double W, uint64_t out,
                            double gbps, double overhead_ms, struct plan *keep, const char **err)
{
	static struct err e;
	struct model md;
	struct cluster cl;
	struct plan pl;
	struct sim s;
	struct sim_opts o;
	struct metrics mt;
	int v = sched_default_chunks(k);
	struct baseline_spec spec = { k, m, 0, "uniform", NULL, 0, 0, NULL };
	double r = -1;

	memset(&s, 0, sizeof(s));
	if (err)
		*err = NULL;
	synth_model(&md, p * v, F / v, I / v, W / v);
	for (int l = 0; l < md.nlayers; l++)
		md.layers[l].out_bytes = out;
	synth_cluster(&cl, p, p, gbps, gbps > 0 ? 10 : 0);
	cl.op_overhead_us = overhead_ms * 1e3;
	if (baseline_plan(&pl, &md, NULL, &cl, NULL, &spec, &e) < 0) {
		if (err)
			*err = e.msg;
	} else {
		sim_opts_default(&o);
		if (sim_run(&s, &pl, &o, &mt, &e) == 0)
			r = mt.makespan_ms;
		else if (err)
			*err = e.msg;
		metrics_release(&mt);
		if (keep)
			*keep = pl;
		else
			plan_release(&pl);
	}
	sim_release(&s);
	model_release(&md);
	cluster_release(&cl);
	return r;
}

/* Simulates schedule k on p devices (v chunks of halved cost), m microbatches: docs/METHOD.md §2's
 * F = 1, B = I + W = 2 with free links. */
static double golden(enum sched_kind k, int p, int m, const char **err)
{
	return uniform_run_o(k, p, m, 1, 1, 1, 0, 0, 0, NULL, err);
}

static void test_golden(void)
{
	static const struct { enum sched_kind k; double want; } table[] = {
		{ SCHED_GPIPE, 33 }, { SCHED_1F1B, 33 }, { SCHED_INTERLEAVED, 28.5 }, { SCHED_ZBH1, 27 },
		{ SCHED_ZBV, 25.5 }, { SCHED_DUALPIPEV, 27 },
	};
	const char *err;

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		is_dbl(golden(table[i].k, 4, 8, &err), table[i].want, EPS, "docs/METHOD.md §2 table: %s, p=4, m=8",
		       sched_name(table[i].k));
	is_dbl(golden(SCHED_1F1B, 8, 16, &err), 69, EPS, "1F1B, p=8, m=16 = 69");
	is_dbl(golden(SCHED_INTERLEAVED, 8, 16, &err), 58.5, EPS, "interleaved v=2, p=8, m=16 = 58.5");
	/* closed forms over a range of shapes (F=1, B=I+W=2) */
	for (int p = 1; p <= 8; p *= 2)
		for (int m = p; m <= 4 * p; m += p) {
			is_dbl(golden(SCHED_1F1B, p, m, &err), (m + p - 1) * 3.0, EPS, "1F1B = (m+p-1)(F+B), p=%d m=%d", p, m);
			is_dbl(golden(SCHED_GPIPE, p, m, &err), (m + p - 1) * 3.0, EPS, "GPipe = (m+p-1)(F+B), p=%d m=%d", p, m);
			is_dbl(golden(SCHED_ZBH1, p, m, &err), m * 3.0 + (p - 1) * 1.0, EPS,
			       "ZB-H1 = m(F+B) + (p-1)(F+B-2W), p=%d m=%d", p, m);
			if (p > 1)
				is_dbl(golden(SCHED_INTERLEAVED, p, m, &err), m * 3.0 + (p - 1) * 3.0 / 2, EPS,
				       "interleaved = m(F+B) + (p-1)(F+B)/v, p=%d m=%d", p, m);
		}
	is_dbl(golden(SCHED_1F1B, 4, 2, &err), (2 + 4 - 1) * 3.0, EPS, "1F1B with fewer microbatches than devices");
	ok(golden(SCHED_INTERLEAVED, 4, 6, &err) < 0 && err && strstr(err, "multiple of the 4 devices"),
	   "interleaved with m not a multiple of p is refused: %s", err ? err : "");
	ok(golden(SCHED_DUALPIPEV, 4, 6, &err) < 0 && err && strstr(err, "at least 2 microbatches per device"),
	   "dualpipev with m < 2p is refused: %s", err ? err : "");
	is_dbl(golden(SCHED_1F1B, 1, 5, &err), 15, EPS, "one device runs everything back to back");
}

static double uniform_run(enum sched_kind k, int p, int m, double F, double I, double W, uint64_t out,
                          double gbps, struct plan *keep)
{
	return uniform_run_o(k, p, m, F, I, W, out, gbps, 0, keep, NULL);
}

static bool same_order(const struct plan *a, const struct plan *b)
{
	if (a->ndevices != b->ndevices || a->order_start[a->ndevices] != b->order_start[b->ndevices])
		return false;
	for (long i = 0; i < a->order_start[a->ndevices]; i++)
		if (a->order[i].stage != b->order[i].stage || a->order[i].mb != b->order[i].mb ||
		    a->order[i].kind != b->order[i].kind || a->order[i].pair != b->order[i].pair)
			return false;
	return true;
}

/* Baselines are the orders their names promise: closed forms for any F, I, W (the
 * zero-bubble paper's m(F+I+W) + (p-1)(F+I-W) for ZB-H1), and orders that links and
 * costs do not move (a greedy ZB-H1 fed the plan's own times came out 4% slower than
 * its closed form on 1000-byte activations). */
static void test_closed_forms(void)
{
	static const double fiw[][3] = { { 1, 1, 1 }, { 1, 2, 1 }, { 2, 1, 1 }, { 1, 1, 0.5 }, { 3, 2, 1 }, { 1, 1.5, 0.25 } };

	for (size_t c = 0; c < sizeof(fiw) / sizeof(fiw[0]); c++)
		for (int p = 2; p <= 8; p *= 2)
			for (int m = p; m <= 3 * p; m += p) {
				double F = fiw[c][0], I = fiw[c][1], W = fiw[c][2], B = I + W;

				is_dbl(uniform_run(SCHED_ZBH1, p, m, F, I, W, 0, 0, NULL), m * (F + I + W) + (p - 1) * (F + I - W),
				       1e-9, "ZB-H1 = m(F+I+W) + (p-1)(F+I-W): p=%d m=%d F=%g I=%g W=%g", p, m, F, I, W);
				is_dbl(uniform_run(SCHED_1F1B, p, m, F, I, W, 0, 0, NULL), (m + p - 1) * (F + B), 1e-9,
				       "1F1B = (m+p-1)(F+B): p=%d m=%d F=%g B=%g", p, m, F, B);
				is_dbl(uniform_run(SCHED_GPIPE, p, m, F, I, W, 0, 0, NULL), (m + p - 1) * (F + B), 1e-9,
				       "GPipe = (m+p-1)(F+B): p=%d m=%d F=%g B=%g", p, m, F, B);
				is_dbl(uniform_run(SCHED_INTERLEAVED, p, m, F, I, W, 0, 0, NULL), m * (F + B) + (p - 1) * (F + B) / 2,
				       1e-9, "interleaved = m(F+B) + (p-1)(F+B)/v: p=%d m=%d F=%g B=%g", p, m, F, B);
			}
	/* a constant per-op overhead o is one more F, I and W each: the same closed forms in
	 * F + o, I + o, W + o (B + o for the fused backward, which is one op) */
	for (int p = 2; p <= 8; p *= 2)
		for (int m = p; m <= 2 * p; m += p) {
			double F = 1, I = 1.5, W = 0.5, o = 0.2, B = I + W;

			is_dbl(uniform_run_o(SCHED_ZBH1, p, m, F, I, W, 0, 0, o, NULL, NULL),
			       m * (F + I + W + 3 * o) + (p - 1) * (F + I - W + o), 1e-9,
			       "ZB-H1 with a per-op overhead o: m(F+I+W+3o) + (p-1)(F+I-W+o), p=%d m=%d", p, m);
			is_dbl(uniform_run_o(SCHED_1F1B, p, m, F, I, W, 0, 0, o, NULL, NULL), (m + p - 1) * (F + B + 2 * o), 1e-9,
			       "1F1B with a per-op overhead o: (m+p-1)(F+B+2o), p=%d m=%d", p, m);
			is_dbl(uniform_run_o(SCHED_GPIPE, p, m, F, I, W, 0, 0, o, NULL, NULL), (m + p - 1) * (F + B + 2 * o), 1e-9,
			       "GPipe with a per-op overhead o: (m+p-1)(F+B+2o), p=%d m=%d", p, m);
			/* interleaved runs twice the ops of half the size: it pays o twice as often */
			is_dbl(uniform_run_o(SCHED_INTERLEAVED, p, m, F, I, W, 0, 0, o, NULL, NULL),
			       m * (F + B + 4 * o) + (p - 1) * (F + B + 4 * o) / 2, 1e-9,
			       "interleaved with a per-op overhead o: m(F+B+4o) + (p-1)(F+B+4o)/2, p=%d m=%d", p, m);
		}
	for (int k = SCHED_GPIPE; k < SCHED_ADAPTIVE; k++) {
		struct plan free_links, slow_links, other_costs;
		double t0 = uniform_run((enum sched_kind)k, 4, 8, 1, 1, 1, 0, 0, &free_links);
		double t1 = uniform_run((enum sched_kind)k, 4, 8, 1, 1, 1, 1000, 0.0001, &slow_links);
		double t2 = uniform_run((enum sched_kind)k, 4, 8, 1, 3, 0.2, 0, 0, &other_costs);

		ok(t0 > 0 && t1 > t0 && t2 > 0, "%s builds with free and slow links", sched_name((enum sched_kind)k));
		ok(t0 > 0 && t1 > 0 && same_order(&free_links, &slow_links), "%s: links do not move its order",
		   sched_name((enum sched_kind)k));
		ok(t0 > 0 && t2 > 0 && same_order(&free_links, &other_costs), "%s: op costs do not move its order",
		   sched_name((enum sched_kind)k));
		if (t0 > 0)
			plan_release(&free_links);
		if (t1 > 0)
			plan_release(&slow_links);
		if (t2 > 0)
			plan_release(&other_costs);
	}
}

/* 1F1B as Megatron-LM runs it, with blocking transfers of c ms (latency only): a device
 * holds after each send until the receiver has reached the op that consumes it and the
 * data is there; a receive is posted when the previous op ends. In the steady state a
 * middle device then pays 2c per microbatch (one send each way), so
 *   p >= 3: m(F+B+2c) + (p-1)(F+B) + (2p-5)c,    p = 2: (m+1)(F+B+c)
 * (derived by hand and checked against an independent script of the same rules);
 * overlapped, the same transfers cost much less. */
static void test_blocking(void)
{
	static const double fbc[][3] = { { 1, 2, 0.1 }, { 1, 1, 0.5 }, { 2, 3, 0.25 } };

	for (size_t i = 0; i < sizeof(fbc) / sizeof(fbc[0]); i++)
		for (int p = 2; p <= 8; p *= 2)
			for (int m = p; m <= 3 * p; m += p) {
				double F = fbc[i][0], B = fbc[i][1], c = fbc[i][2], want, blocking, overlap;
				struct model md;
				struct cluster cl;
				struct plan pl;
				struct sim s;
				struct sim_opts o;
				struct metrics mt;
				struct baseline_spec spec = { SCHED_1F1B, m, 0, "uniform", NULL, 0, 0, NULL };
				struct err e = ERR_INIT;

				memset(&s, 0, sizeof(s));
				synth_model(&md, p, F, B / 2, B / 2);
				synth_cluster(&cl, p, p, 0, c * 1e3);  /* infinite bandwidth: latency only */
				if (baseline_plan(&pl, &md, NULL, &cl, NULL, &spec, &e) < 0) {
					ok(0, "1F1B builds: %s", e.msg);
					continue;
				}
				ok(pl.comm == PLAN_COMM_BLOCKING, "Megatron's 1F1B blocks on its transfers by default");
				sim_opts_default(&o);
				blocking = sim_run(&s, &pl, &o, &mt, &e) == 0 ? mt.makespan_ms : -1;
				metrics_release(&mt);
				o.comm = SIM_COMM_OVERLAP;
				overlap = sim_run(&s, &pl, &o, &mt, &e) == 0 ? mt.makespan_ms : -1;
				metrics_release(&mt);
				want = p == 2 ? (m + 1) * (F + B + c) : m * (F + B + 2 * c) + (p - 1) * (F + B) + (2 * p - 5) * c;
				is_dbl(blocking, want, 1e-9, "1F1B blocking, p=%d m=%d F=%g B=%g c=%g", p, m, F, B, c);
				ok(overlap > 0 && overlap < blocking, "overlapped it is faster (%.3f < %.3f)", overlap, blocking);
				plan_release(&pl);
				sim_release(&s);
				model_release(&md);
				cluster_release(&cl);
			}
	/* with free links blocking changes nothing: the closed form without c */
	{
		double t = uniform_run(SCHED_1F1B, 4, 8, 1, 1, 1, 0, 0, NULL);

		is_dbl(t, (8 + 4 - 1) * 3.0, 1e-9, "1F1B blocking on free links = (m+p-1)(F+B)");
	}
}

/* A plan from explicit per-device token lists, stages of the given layer counts. */
static int hand_plan(struct plan *p, const struct model *m, const struct cluster *c, int mbs, bool split,
                     int nstages, const int *counts, const int *dev, const char *const *lists[], struct err *e)
{
	cJSON *root = cJSON_CreateObject(), *st, *sc;
	int first = 0, r;

	cJSON_AddStringToObject(root, "format", PLAN_FORMAT);
	cJSON_AddItemToObject(root, "model", model_to_json(m));
	cJSON_AddItemToObject(root, "cluster", cluster_to_json(c));
	cJSON_AddNumberToObject(root, "microbatches", mbs);
	cJSON_AddBoolToObject(root, "split_backward", split);
	st = cJSON_AddArrayToObject(root, "stages");
	for (int s = 0; s < nstages; s++) {
		cJSON *o = cJSON_CreateObject(), *range = cJSON_AddArrayToObject(o, "layers");

		cJSON_AddItemToArray(range, cJSON_CreateNumber(first));
		cJSON_AddItemToArray(range, cJSON_CreateNumber(first + counts[s] - 1));
		first += counts[s];
		cJSON_AddNumberToObject(o, "device", dev[s]);
		cJSON_AddItemToArray(st, o);
	}
	sc = cJSON_AddArrayToObject(root, "schedule");
	for (int d = 0; d < c->devices; d++) {
		cJSON *l = cJSON_CreateArray();

		for (int i = 0; lists[d][i]; i++)
			cJSON_AddItemToArray(l, cJSON_CreateString(lists[d][i]));
		cJSON_AddItemToArray(sc, l);
	}
	r = plan_from_json(p, root, "hand", NULL, e);
	cJSON_Delete(root);
	return r;
}

static void test_hand_computed(void)
{
	/* two stages on two nodes: F0=1 B0=2, F1=2 B1=3 ms; 1e6-byte activations over a
	 * 50 GB/s, 10 us link: every transfer takes 0.01 + 0.02 = 0.03 ms */
	static const char *const d0[] = { "0F0", "0F1", "0B0", "0B1", NULL };
	static const char *const d1[] = { "1F0", "1B0", "1F1", "1B1", NULL };
	static const char *const *lists[] = { d0, d1 };
	static const int counts[] = { 1, 1 }, dev[] = { 0, 1 };
	struct model m;
	struct cluster c;
	struct plan p;
	struct sim s;
	struct sim_opts o;
	struct metrics mt;
	struct timeline t;
	struct err e = ERR_INIT;

	memset(&s, 0, sizeof(s));
	synth_model(&m, 2, 1, 2, 0);
	m.layers[1].f_ms = 2;
	m.layers[1].b_ms = 3;
	m.layers[0].out_bytes = 1000000;
	m.layers[0].act_bytes = 5000;
	m.layers[1].act_bytes = 7000;
	m.layers[0].param_bytes = 2000;
	synth_cluster(&c, 2, 1, 50, 10);
	ok(hand_plan(&p, &m, &c, 2, false, 2, counts, dev, lists, &e) == 0, "the hand plan is valid (%s)", e.msg);
	sim_opts_default(&o);
	o.record = true;
	ok(sim_run(&s, &p, &o, &mt, &e) == 0, "it simulates (%s)", e.msg);
	/* by hand: d0 F(0) 0-1, F(1) 1-2; d1 F(0) 1.03-3.03, B(0) 3.03-6.03 -> d0 at 6.06;
	 * F(1) arrives at 2.03 (link 0->1 free at 1.02), runs 6.03-8.03, B(1) 8.03-11.03;
	 * d0 B(0) 6.06-8.06, B(1) 11.06-13.06 */
	is_dbl(mt.makespan_ms, 13.06, 1e-9, "makespan 13.06 ms by hand");
	ok(sim_timeline(&s, &p, &mt, &t, &e) == 0, "timeline");
	is_dbl(t.dev[1].ops[0].start_ms, 1.03, 1e-9, "the first activation arrives after 30 us");
	is_dbl(t.dev[1].ops[2].start_ms, 6.03, 1e-9, "d1 F(1) waits for its own device, not the data");
	is_dbl(t.dev[0].ops[2].start_ms, 6.06, 1e-9, "the gradient arrives after 30 us");
	is_dbl(t.dev[0].ops[3].start_ms, 11.06, 1e-9, "d0 B(1) waits for the last gradient");
	is_int(t.nxfers, 4, "two activations and two gradients crossed the link");
	is_dbl(mt.dev[0].busy_ms, 6, 1e-12, "device 0 busy 6 ms");
	is_dbl(mt.dev[0].warmup_idle_ms, 4.06, 1e-9, "device 0 idles 4.06 ms before its first backward");
	is_dbl(mt.dev[1].warmup_idle_ms, 1.03, 1e-9, "device 1 idles 1.03 ms before its first backward");
	is_dbl(mt.bubble_ratio, 1 - (6 + 10) / (2 * 13.06), 1e-12, "bubble = 1 - busy / (devices x makespan)");
	/* memory: static = params x 16 bytes; two activations in flight on device 0 */
	is_int(mt.dev[0].peak_mem_bytes, 1000 * 16 + 2 * 5000, "device 0 peaks with two microbatches in flight");
	is_int(t.dev[0].mem[t.dev[0].nmem - 1].bytes, 1000 * 16, "memory returns to static at the end");
	is_dbl(mt.lower_bound_ms, 10, 1e-12, "lower bound = the heaviest layer for both microbatches = 5 x 2 "
	       "(more than total work / devices = 8)");
	timeline_release(&t);
	metrics_release(&mt);
	/* without the bounds (the tuner's candidates): the same times, the bounds left 0 */
	o.no_bounds = true;
	ok(sim_run(&s, &p, &o, &mt, &e) == 0, "it simulates without the bounds");
	is_dbl(mt.makespan_ms, 13.06, 1e-9, "the same makespan");
	is_int(mt.dev[0].peak_mem_bytes, 1000 * 16 + 2 * 5000, "the same peak memory");
	ok(mt.lower_bound_ms == 0 && mt.lower_bound_tight_ms == 0 && mt.lower_bound_memory_ms == 0 &&
	   mt.efficiency == 0, "and no bounds or efficiency");
	o.no_bounds = false;
	metrics_release(&mt);
	plan_release(&p);

	/* the same plan with a slower device 1 (speed 0.5): its ops take twice as long */
	c.device_speed[1] = 0.5;
	ok(hand_plan(&p, &m, &c, 2, false, 2, counts, dev, lists, &e) == 0, "a plan on a slower device");
	ok(sim_run(&s, &p, &o, &mt, &e) == 0, "simulates");
	is_dbl(mt.dev[1].busy_ms, 20, 1e-9, "a device at half speed is busy twice as long");
	metrics_release(&mt);
	plan_release(&p);
	sim_release(&s);
	model_release(&m);
	cluster_release(&c);
}

static void test_deadlock(void)
{
	/* d1 starts with microbatch 1, whose input comes after d0 waits for d1's microbatch 0 */
	static const char *const d0[] = { "0F0", "0B0", "0F1", "0B1", NULL };
	static const char *const d1[] = { "1F1", "1B1", "1F0", "1B0", NULL };
	static const char *const *lists[] = { d0, d1 };
	static const int counts[] = { 1, 1 }, dev[] = { 0, 1 };
	struct model m;
	struct cluster c;
	struct plan p;
	struct sim s;
	struct sim_opts o;
	struct metrics mt;
	struct err e = ERR_INIT;

	memset(&s, 0, sizeof(s));
	synth_model(&m, 2, 1, 2, 0);
	synth_cluster(&c, 2, 2, 0, 0);
	ok(hand_plan(&p, &m, &c, 2, false, 2, counts, dev, lists, &e) == 0, "a deadlocking order is a valid plan");
	sim_opts_default(&o);
	ok(sim_run(&s, &p, &o, &mt, &e) < 0, "but it does not run");
	is_int(e.cls, ERR_INFEASIBLE, "as an infeasible plan");
	ok(mt.ncycle >= 2, "the cycle has %d ops", mt.ncycle);
	ok(strstr(e.msg, "deadlock: ") == e.msg && strstr(e.msg, "1F1") && strstr(e.msg, "0B0"),
	   "the message names the ops of the cycle: %s", e.msg);
	metrics_release(&mt);
	plan_release(&p);
	sim_release(&s);
	model_release(&m);
	cluster_release(&c);
}

static void test_oom_and_idle(void)
{
	struct model m;
	struct cluster c;
	struct plan p;
	struct sim s;
	struct sim_opts o;
	struct metrics mt;
	struct err e = ERR_INIT;
	struct baseline_spec spec = { SCHED_GPIPE, 8, 0, "uniform", NULL, 0, 2, NULL };

	memset(&s, 0, sizeof(s));
	synth_model(&m, 4, 1, 1, 1);
	for (int i = 0; i < 4; i++)
		m.layers[i].act_bytes = 1000000000; /* 1 GB per layer per microbatch */
	synth_cluster(&c, 4, 4, 0, 0);
	c.mem_bytes = 10000000000ULL; /* 10 GB */
	ok(baseline_plan(&p, &m, NULL, &c, NULL, &spec, &e) == 0, "GPipe on 2 of 4 devices (%s)", e.msg);
	sim_opts_default(&o);
	ok(sim_run(&s, &p, &o, &mt, &e) == 0, "simulates");
	ok(mt.noom == 2 && mt.oom[0] == 0 && mt.oom[1] == 1, "both pipeline devices are over capacity (16 GB > 10 GB)");
	is_int(mt.dev[0].peak_mem_bytes, 16000000000LL, "GPipe keeps all 8 microbatches x 2 layers");
	ok(mt.dev[2].busy_ms == 0 && mt.dev[2].bubble_ratio == 1, "an unused device is all bubble");
	metrics_release(&mt);
	plan_release(&p);
	spec.schedule = SCHED_1F1B;
	ok(baseline_plan(&p, &m, NULL, &c, NULL, &spec, &e) == 0, "1F1B on the same devices");
	ok(sim_run(&s, &p, &o, &mt, &e) == 0 && mt.noom == 0, "fits: 1F1B keeps at most 2 in flight");
	metrics_release(&mt);
	plan_release(&p);
	sim_release(&s);
	model_release(&m);
	cluster_release(&c);
}

/* ---- properties on random plans ---------------------------------------------------- */

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static double urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static int irand(int lo, int hi)
{
	return lo + (int)(urand() * (hi - lo + 1));
}

/* Checks one simulated plan; returns the number of violations. */
static int check_properties(const struct plan *p, const struct timeline *t, const struct metrics *mt,
                            const struct sim *s)
{
	int bad = 0, K = plan_ops_per_mb(p);
	double static_bytes;

	(void)s;
	for (int d = 0; d < t->ndevices; d++) {
		for (int i = 1; i < t->dev[d].nops; i++)
			if (t->dev[d].ops[i].start_ms < t->dev[d].ops[i - 1].end_ms - EPS)
				bad++;
		static_bytes = (double)t->dev[d].mem[0].bytes;
		if (t->dev[d].nmem && fabs((double)t->dev[d].mem[t->dev[d].nmem - 1].bytes - static_bytes) > 1)
			bad++;
	}
	/* dependencies, through the simulator's op times */
	for (int st = 0; st < p->nstages; st++)
		for (int m = 0; m < p->microbatches; m++) {
			double f = s->start[sim_op_index(p, st, m, OP_F)], fe = s->end[sim_op_index(p, st, m, OP_F)];
			double b = s->start[sim_op_index(p, st, m, OP_I)], be = s->end[sim_op_index(p, st, m, OP_I)];

			if (st > 0 && f < s->end[sim_op_index(p, st - 1, m, OP_F)] - EPS)
				bad++;
			if (b < fe - EPS)
				bad++;
			if (st + 1 < p->nstages && b < s->end[sim_op_index(p, st + 1, m, OP_I)] - EPS)
				bad++;
			if (K == 3 && s->start[sim_op_index(p, st, m, OP_W)] < be - EPS)
				bad++;
		}
	if (mt->makespan_ms < mt->lower_bound_ms - EPS || mt->makespan_ms < mt->lower_bound_tight_ms - EPS)
		bad++;
	return bad;
}

static void test_random(void)
{
	static const enum sched_kind kinds[] = {
		SCHED_GPIPE, SCHED_1F1B, SCHED_INTERLEAVED, SCHED_ZBH1, SCHED_ZBH2, SCHED_ZBV, SCHED_DUALPIPEV,
		SCHED_ADAPTIVE
	};
	static const char *const parts[] = { "uniform", "balanced", "megatron" };
	int runs = 0, violations = 0, replay_mismatch = 0, refused = 0;
	struct sim s;

	memset(&s, 0, sizeof(s));
	for (int it = 0; it < 300; it++) {
		enum sched_kind k = kinds[irand(0, 7)];
		int p = irand(1, 6), v = sched_default_chunks(k), m = irand(1, 4) * p * (irand(0, 1) + 1);
		int L = p * v + irand(0, 12);
		struct model md;
		struct cluster cl;
		struct plan pl;
		struct metrics mt, mt2;
		struct timeline t;
		struct sim_opts o;
		struct err e = ERR_INIT;
		struct baseline_spec spec = { k, m, 0, parts[irand(0, 2)], NULL, 0, 0, NULL };

		synth_model(&md, L, 1, 1, 1);
		for (int i = 0; i < L; i++) {
			md.layers[i].f_ms = 0.1 + 3 * urand();
			md.layers[i].b_ms = md.layers[i].f_ms * (1 + urand());
			md.layers[i].w_ms = md.layers[i].f_ms * urand();
			md.layers[i].act_bytes = (uint64_t)(1e9 * urand());
			md.layers[i].act_w_bytes = md.layers[i].act_bytes / 2;
			md.layers[i].out_bytes = (uint64_t)(1e8 * urand());
		}
		synth_cluster(&cl, p, irand(1, p), 10 + 500 * urand(), 20 * urand());
		if (baseline_plan(&pl, &md, NULL, &cl, NULL, &spec, &e) < 0) {
			refused++;
			model_release(&md);
			cluster_release(&cl);
			continue;
		}
		sim_opts_default(&o);
		o.record = true;
		if (sim_run(&s, &pl, &o, &mt, &e) < 0) {
			ok(0, "random plan %d (%s, p=%d, m=%d) runs: %s", it, sched_name(k), p, m, e.msg);
		} else if (sim_timeline(&s, &pl, &mt, &t, &e) == 0) {
			runs++;
			violations += check_properties(&pl, &t, &mt, &s);
			/* the order of a policy-driven schedule replays to the same times */
			o.record = false;
			if (sim_run(&s, &pl, &o, &mt2, &e) != 0 || fabs(mt2.makespan_ms - mt.makespan_ms) > 1e-9)
				replay_mismatch++;
			metrics_release(&mt2);
			timeline_release(&t);
		}
		metrics_release(&mt);
		plan_release(&pl);
		model_release(&md);
		cluster_release(&cl);
	}
	ok(runs > 200, "%d random heterogeneous plans simulated (%d refused by their schedule's rules)", runs, refused);
	is_int(violations, 0, "no overlaps, every dependency respected, memory back to static, bound respected");
	is_int(replay_mismatch, 0, "simulating a plan twice gives the same iteration time");
	sim_release(&s);
}

static void test_policy_replay(void)
{
	struct model md;
	struct cluster cl;
	struct plan pl;
	struct sim s;
	struct sim_opts o;
	struct metrics a, b;
	struct err e = ERR_INIT;
	struct baseline_spec spec = { SCHED_ADAPTIVE, 16, 0, "balanced", NULL, 0, 0, NULL };

	memset(&s, 0, sizeof(s));
	synth_model(&md, 12, 1, 1, 0.5);
	md.layers[11].f_ms = 4; /* a heavy head */
	synth_cluster(&cl, 4, 2, 50, 10);
	for (int i = 0; i < 12; i++)
		md.layers[i].out_bytes = 50000000;
	ok(baseline_plan(&pl, &md, NULL, &cl, NULL, &spec, &e) == 0, "adaptive plan (%s)", e.msg);
	sim_opts_default(&o);
	o.policy_driven = true;
	ok(sim_run(&s, &pl, &o, &a, &e) == 0, "policy-driven simulation");
	ok(sim_apply_order(&s, &pl, &e) == 0, "its start order becomes the schedule");
	o.policy_driven = false;
	ok(sim_run(&s, &pl, &o, &b, &e) == 0, "order-driven simulation of that schedule");
	is_dbl(b.makespan_ms, a.makespan_ms, 1e-9, "gives the same iteration time");
	metrics_release(&a);
	metrics_release(&b);
	plan_release(&pl);
	sim_release(&s);
	model_release(&md);
	cluster_release(&cl);
}

/* The latest-start policy by hand: one device holding two stages, F = I = W = 1. The
 * tails are W 1, I(0) 2, I(1) 3, F(1) 4, F(0) 5 and the busiest device works 6 per
 * microbatch; a microbatch due a whole cycle after the one before runs through (1F1B on
 * one device), one due at once runs every forward first (GPipe), and W fills at the end. */
static void test_latest_start_hand(void)
{
	static const struct { double cycle; const char *want; } cases[] = {
		{ 1, "0F0 1F0 1I0 0I0 0F1 1F1 1I1 0I1 1W0 0W0 1W1 0W1" },
		{ 0.01, "0F0 0F1 1F0 1F1 1I0 1I1 0I0 0I1 1W0 0W0 1W1 0W1" },
	};
	struct model md;
	struct cluster cl;
	struct plan pl;
	struct sim s;
	struct err e = ERR_INIT;
	struct baseline_spec spec = { SCHED_ADAPTIVE, 2, 0, "uniform", NULL, 0, 0, NULL };

	memset(&s, 0, sizeof(s));
	synth_model(&md, 2, 1, 1, 1);
	synth_cluster(&cl, 1, 1, 0, 0);
	spec.chunks = 2;
	ok(baseline_plan(&pl, &md, NULL, &cl, NULL, &spec, &e) == 0 && pl.nstages == 2, "two stages on one device (%s)", e.msg);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sim_opts o;
		struct metrics mt;
		char got[256] = "", tok[48];

		sim_opts_default(&o);
		o.policy_driven = true;
		o.policy.lst_cycle = cases[i].cycle;
		ok(sim_run(&s, &pl, &o, &mt, &e) == 0, "latest start, cycle %g: runs", cases[i].cycle);
		for (int k = s.order_start[0]; k < s.order_start[1]; k++) {
			if (got[0])
				strcat(got, " ");
			strcat(got, action_format(&s.order[k], tok));
		}
		is_str(got, cases[i].want, "latest start, cycle %g x the device's work: the order", cases[i].cycle);
		is_dbl(mt.makespan_ms, 12, EPS, "and no idle time");
		metrics_release(&mt);
	}
	plan_release(&pl);
	sim_release(&s);
	model_release(&md);
	cluster_release(&cl);
}

/* The latest-start policy on arbitrary placements (several stages per device in any
 * order, neighbours on one device too, uneven speeds, transfers, memory caps): it
 * schedules every op, its order respects every dependency without overlaps and replays
 * to the same times, and two runs give the same order. */
static void test_latest_start_random(void)
{
	int runs = 0, violations = 0, replay_mismatch = 0, nondet = 0, unscheduled = 0;
	struct sim s, s2;

	memset(&s, 0, sizeof(s));
	memset(&s2, 0, sizeof(s2));
	for (int it = 0; it < 200; it++) {
		int D = irand(1, 5), S = irand(D, 3 * D), M = irand(1, 10), L = S + irand(0, 8);
		struct model md;
		struct cluster cl;
		struct plan pl;
		struct metrics mt, mt2;
		struct timeline t;
		struct sim_opts o;
		struct err e = ERR_INIT;
		struct baseline_spec spec = { SCHED_ADAPTIVE, M, 0, "uniform", NULL, 0, 0, NULL };
		int cap[32], wcap[32];

		synth_model(&md, L, 1, 1, 1);
		for (int i = 0; i < L; i++) {
			md.layers[i].f_ms = 0.1 + 3 * urand();
			md.layers[i].b_ms = md.layers[i].f_ms * (1 + urand());
			md.layers[i].w_ms = md.layers[i].f_ms * urand();
			md.layers[i].act_bytes = (uint64_t)(1e9 * urand());
			md.layers[i].act_w_bytes = md.layers[i].act_bytes / 2;
			md.layers[i].out_bytes = (uint64_t)(1e8 * urand());
		}
		synth_cluster(&cl, D, irand(1, D), 10 + 500 * urand(), 20 * urand());
		for (int d = 0; d < D; d++)
			cl.device_speed[d] = 0.5 + urand();
		spec.chunks = 1;
		if (baseline_plan(&pl, &md, NULL, &cl, NULL, &spec, &e) < 0) {
			ok(0, "a plan to re-place: %s", e.msg);
			model_release(&md);
			cluster_release(&cl);
			continue;
		}
		/* S stages over random layer counts, each on a random device; every device used */
		pl.nstages = S;
		free(pl.stages);
		pl.stages = calloc((size_t)S, sizeof(*pl.stages));
		for (int st = 0; st < S; st++) {
			pl.stages[st].first = st == 0 ? 0 : pl.stages[st - 1].last + 1;
			pl.stages[st].last = st == S - 1 ? L - 1 : pl.stages[st].first + irand(0, L - 1 - pl.stages[st].first - (S - 1 - st));
			pl.stages[st].device = st < D ? st : irand(0, D - 1);
		}
		for (int st = S - 1; st > 0; st--) { /* shuffle which device gets which stage */
			int j = irand(0, st), x = pl.stages[st].device;

			pl.stages[st].device = pl.stages[j].device;
			pl.stages[j].device = x;
		}
		free(pl.order);
		pl.order = calloc((size_t)S * M * 3, sizeof(*pl.order));
		plan_size_orders(&pl, 3);
		sim_opts_default(&o);
		o.policy_driven = true;
		o.policy.mem_admission = urand() < 0.5;
		o.policy.defer_arrivals = urand() < 0.5;
		o.policy.lst_cycle = 0.05 + 2 * urand();
		for (int st = 0; st < S; st++) {
			cap[st] = irand(1, S + 1);
			wcap[st] = irand(1, 2 * D);
		}
		o.policy.stage_cap = urand() < 0.7 ? cap : NULL;
		o.policy.w_cap = urand() < 0.5 ? wcap : NULL;
		if (sim_run(&s, &pl, &o, &mt, &e) < 0) {
			unscheduled++;
		} else if (sim_run(&s2, &pl, &o, &mt2, &e) == 0) {
			long n = s.order_start[D];

			for (long i = 0; i < n; i++)
				if (s.order[i].stage != s2.order[i].stage || s.order[i].mb != s2.order[i].mb ||
				    s.order[i].kind != s2.order[i].kind)
					nondet++;
			metrics_release(&mt2);
			if (sim_apply_order(&s, &pl, &e) == 0) {
				struct sim_opts r;

				sim_opts_default(&r);
				r.record = true;
				if (sim_run(&s2, &pl, &r, &mt2, &e) == 0 && sim_timeline(&s2, &pl, &mt2, &t, &e) == 0) {
					runs++;
					violations += check_properties(&pl, &t, &mt2, &s2);
					if (fabs(mt2.makespan_ms - mt.makespan_ms) > 1e-6 * mt.makespan_ms)
						replay_mismatch++;
					timeline_release(&t);
				}
				metrics_release(&mt2);
			}
		}
		metrics_release(&mt);
		plan_release(&pl);
		model_release(&md);
		cluster_release(&cl);
	}
	is_int(unscheduled, 0, "latest start leaves no op unscheduled on 200 arbitrary placements");
	ok(runs == 200, "%d of them replayed", runs);
	is_int(violations, 0, "no overlaps, every dependency respected, bounds respected");
	is_int(replay_mismatch, 0, "its order replays to the same iteration time");
	is_int(nondet, 0, "two runs give the same order");
	sim_release(&s);
	sim_release(&s2);
}

int main(void)
{
	test_golden();
	test_closed_forms();
	test_blocking();
	test_hand_computed();
	test_deadlock();
	test_oom_and_idle();
	test_policy_replay();
	test_random();
	test_latest_start_hand();
	test_latest_start_random();
	return tap_done();
}
