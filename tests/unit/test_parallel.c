/*
 * test_parallel — parallel layouts (parallel.h) against closed forms: memory per GPU
 * under ZeRO 0-3 with expert parallelism to the byte, the data-parallel ring when nothing
 * overlaps it and when weight gradients do, recompute's time and memory, the layer table
 * at another TP degree against the cost model and hand-computed bytes, the plan
 * format's "parallel" section (round trip, refusals), and the layout search reading a
 * model's architecture once (the readers wrapped at link time, as test_oom's allocator).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "baseline.h"
#include "hfconfig.h"
#include "json.h"
#include "layout_search.h"
#include "parallel.h"
#include "plan.h"
#include "sim.h"
#include "../tap.h"

/* 8 GPUs, 4 per node; intra 100 GB/s, inter 10 GB/s, latency lat_us on both. */
static const char *cluster_json =
	"{\"format\":\"octopipe.cluster/1\",\"name\":\"toy\",\"devices\":8,\"gpus_per_node\":4,"
	"\"mem_bytes\":100000000000,\"intra_node\":{\"gbytes_per_s\":100,\"latency_us\":%g},"
	"\"inter_node\":{\"gbytes_per_s\":10,\"latency_us\":%g}}";

/* 4 layers, F = B = W = 1 ms; 1 GB of weights each, layer 1 with 0.4 GB of experts. */
static const char *model_json =
	"{\"format\":\"octopipe.model/1\",\"name\":\"toy\",\"seq_len\":1024,\"layers\":["
	"{\"kind\":\"a\",\"f_ms\":1,\"b_ms\":1,\"w_ms\":1,\"param_bytes\":1000000000,\"act_bytes\":100000000,"
	"\"act_w_bytes\":50000000,\"out_bytes\":1000000,\"core_act_bytes\":20000000,\"core_f_ms\":0.25},"
	"{\"kind\":\"m\",\"f_ms\":1,\"b_ms\":1,\"w_ms\":1,\"param_bytes\":1000000000,\"expert_param_bytes\":400000000,"
	"\"act_bytes\":100000000,\"act_w_bytes\":50000000,\"out_bytes\":1000000,\"in_bytes\":3000000},"
	"{\"kind\":\"a\",\"f_ms\":1,\"b_ms\":1,\"w_ms\":1,\"param_bytes\":1000000000,\"act_bytes\":100000000,"
	"\"act_w_bytes\":50000000,\"out_bytes\":1000000},"
	"{\"kind\":\"a\",\"f_ms\":1,\"b_ms\":1,\"w_ms\":1,\"param_bytes\":1000000000,\"act_bytes\":100000000,"
	"\"act_w_bytes\":50000000,\"out_bytes\":1000000}]}";

/* GPipe order on 2 devices, 2 microbatches, split backward */
static int load_plan(struct plan *p, const char *parallel, const char *rc0, double lat_us, const char *stages,
                     struct err *e)
{
	char cl[1024], text[8192];
	cJSON *root;
	int r;

	snprintf(cl, sizeof(cl), cluster_json, lat_us, lat_us);
	snprintf(text, sizeof(text),
	         "{\"format\":\"octopipe.plan/1\",\"model\":%s,\"cluster\":%s,\"microbatches\":2,"
	         "\"split_backward\":true,%s%s%s \"stages\":%s,"
	         "\"schedule\":[[\"0F0\",\"0F1\",\"0I0\",\"0I1\",\"0W0\",\"0W1\"],"
	         "[\"1F0\",\"1F1\",\"1I0\",\"1I1\",\"1W0\",\"1W1\"]]}",
	         model_json, cl, parallel ? "\"parallel\":" : "", parallel ? parallel : "", parallel ? "," : "",
	         stages ? stages : rc0);
	root = cJSON_Parse(text);
	if (!root) {
		err_set(e, ERR_INPUT, "test JSON does not parse");
		return -1;
	}
	r = plan_from_json(p, root, "t.json", NULL, e);
	cJSON_Delete(root);
	return r;
}

#define STAGES2 "[{\"layers\":[0,1],\"device\":0%s},{\"layers\":[2,3],\"device\":1}]"

static int sim_plan(const struct plan *p, struct metrics *m, struct err *e)
{
	struct sim s = { 0 };
	struct sim_opts o;
	int r;

	sim_opts_default(&o);
	r = sim_run(&s, p, &o, m, e);
	sim_release(&s);
	return r;
}

static void test_memory(void)
{
	/* device 0: layers 0-1, 2e9 bytes of weights of which 0.4e9 experts; dp 4, ep 2:
	 * dense 0.8e9 parameters, experts 0.4e9 / 2 bytes / ep 2 = 0.1e9 on this GPU,
	 * sharded over dp 4 and over the experts' own group of dp / ep = 2 */
	static const double want[4][3] = {
		{ 1.8e9, 1.8e9, 10.8e9 },
		{ 1.8e9, 1.8e9, 12 * (0.2e9 + 0.05e9) },
		{ 1.8e9, 2 * 0.25e9, 12 * 0.25e9 },
		{ 2 * 0.25e9 + 1.8e9, 2 * 0.25e9, 12 * 0.25e9 }, /* + layers 0 and 1 gathered: 1e9 + 0.6e9 + 0.2e9 */
	};

	for (int z = 0; z <= 3; z++) {
		char par[128], stages[256];
		struct plan p;
		struct metrics m;
		struct err e = ERR_INIT;

		snprintf(par, sizeof(par), "{\"pp\":2,\"dp\":4,\"ep\":2,\"zero\":%d}", z);
		snprintf(stages, sizeof(stages), STAGES2, "");
		if (!ok(load_plan(&p, par, NULL, 0, stages, &e) == 0, "zero %d plan loads: %s", z, e.msg))
			continue;
		ok(sim_plan(&p, &m, &e) == 0, "zero %d simulates", z);
		is_dbl((double)m.dev[0].weights_bytes, want[z][0], 0.5, "zero %d: weights per GPU", z);
		is_dbl((double)m.dev[0].grads_bytes, want[z][1], 0.5, "zero %d: gradients per GPU", z);
		is_dbl((double)m.dev[0].optimizer_bytes, want[z][2], 0.5, "zero %d: optimizer per GPU", z);
		/* GPipe holds both microbatches' activations of layers 0-1 at the peak */
		is_dbl((double)m.dev[0].act_peak_bytes, 4e8, 0.5, "zero %d: activations at the peak", z);
		is_dbl((double)m.dev[0].peak_mem_bytes,
		       want[z][0] + want[z][1] + want[z][2] + 4e8, 1, "zero %d: peak = static + activations", z);
		metrics_release(&m);
		plan_release(&p);
	}
	/* fp32 gradients (Megatron-LM's main gradients): 4 bytes a parameter, sharded by ZeRO 2
	 * as the bf16 ones are; weights and optimizer unchanged */
	for (int z = 0; z <= 3; z++) {
		char par[128], stages[256];
		struct plan p;
		struct metrics m;
		struct err e = ERR_INIT;

		snprintf(par, sizeof(par), "{\"pp\":2,\"dp\":4,\"ep\":2,\"zero\":%d,\"grads\":\"fp32\"}", z);
		snprintf(stages, sizeof(stages), STAGES2, "");
		if (!ok(load_plan(&p, par, NULL, 0, stages, &e) == 0, "zero %d fp32 plan loads: %s", z, e.msg))
			continue;
		ok(sim_plan(&p, &m, &e) == 0, "zero %d fp32 simulates", z);
		is_dbl((double)m.dev[0].weights_bytes, want[z][0], 0.5, "zero %d fp32: weights per GPU", z);
		is_dbl((double)m.dev[0].grads_bytes, 2 * want[z][1], 0.5, "zero %d fp32: gradients per GPU twice bf16's", z);
		is_dbl((double)m.dev[0].optimizer_bytes, want[z][2], 0.5, "zero %d fp32: optimizer per GPU", z);
		metrics_release(&m);
		plan_release(&p);
	}
}

static void test_dp_sync(void)
{
	struct plan p;
	struct metrics m, m0;
	struct err e = ERR_INIT;
	char stages[256];
	/* all-reduce of 1 GB over 4 ranks on the 100 GB/s node: 2 x 3/4 x 1e9 / 100e9 s */
	double ring = 2 * 0.75 * 1e9 / 100e9 * 1e3;

	/* one layer per stage (stages 0-0 and 1-3 would be uneven: use 2 layers, 1 each) */
	snprintf(stages, sizeof(stages), STAGES2, "");
	ok(load_plan(&p, "{\"pp\":2}", NULL, 0, stages, &e) == 0, "pipeline-only plan loads: %s", e.msg);
	ok(sim_plan(&p, &m0, &e) == 0, "simulates");
	is_dbl(m0.dp_sync_ms, 0, 0, "no data parallelism, no sync");
	plan_release(&p);

	ok(load_plan(&p, "{\"pp\":2,\"dp\":4}", NULL, 0, stages, &e) == 0, "dp 4 loads: %s", e.msg);
	ok(sim_plan(&p, &m, &e) == 0, "simulates");
	/* device 0 finishes last; its last W covers layer 1 then layer 0 (1 ms each): layer
	 * 1's ring starts 1 ms before the end and overlaps layer 0's weight gradient */
	is_dbl(m.dp_sync_ms, 2 * ring - 1, 1e-9, "two layers: 2 rings - the 1 ms of W one overlaps");
	/* the replicas move pipeline neighbours to GPUs 0 and 4, on two nodes: the critical
	 * path's two transfers of 1 MB take 0.1 ms at 10 GB/s instead of 0.01 ms */
	is_dbl(m.makespan_ms, m0.makespan_ms + 2 * 0.09 + 2 * ring - 1, 1e-9,
	       "the iteration grows by the exposed sync and the inter-node transfers");
	is_dbl(m.dev[0].sync_end_ms, m.makespan_ms, 1e-9, "device 0's sync ends the iteration");
	is_dbl(m.throughput_tokens_per_s, 4 * 2 * 1024 / (m.makespan_ms / 1000), 1e-6,
	       "throughput counts every replica's microbatches");
	metrics_release(&m);
	metrics_release(&m0);
	plan_release(&p);

	/* one layer in the last stage of device 0: nothing overlaps, exactly the ring */
	ok(load_plan(&p, "{\"pp\":2,\"dp\":4}", NULL, 0,
	             "[{\"layers\":[0,0],\"device\":0},{\"layers\":[1,3],\"device\":1}]", &e) == 0, "loads");
	ok(sim_plan(&p, &m, &e) == 0, "simulates");
	is_dbl(m.dev[0].sync_end_ms - m.dev[0].sync_start_ms, ring, 1e-9, "one layer: the ring formula exactly");
	metrics_release(&m);
	plan_release(&p);

	/* latency: 2 (n - 1) steps of 5 us; ZeRO-1: reduce-scatter + all-gather (half each) */
	ok(load_plan(&p, "{\"pp\":2,\"dp\":4}", NULL, 5,
	             "[{\"layers\":[0,0],\"device\":0},{\"layers\":[1,3],\"device\":1}]", &e) == 0, "loads");
	ok(sim_plan(&p, &m, &e) == 0, "simulates");
	is_dbl(m.dev[0].sync_end_ms - m.dev[0].sync_start_ms, ring + 6 * 5e-3, 1e-9, "latency: 2 (n-1) steps");
	metrics_release(&m);
	plan_release(&p);
	ok(load_plan(&p, "{\"pp\":2,\"dp\":4,\"zero\":1}", NULL, 0,
	             "[{\"layers\":[0,0],\"device\":0},{\"layers\":[1,3],\"device\":1}]", &e) == 0, "loads");
	ok(sim_plan(&p, &m, &e) == 0, "simulates");
	/* reduce-scatter (half the ring), then the all-gather, hidden by the next iteration's
	 * first forward on device 0 (F0 of layer 0: 0 to 1 ms) */
	is_dbl(m.dev[0].sync_end_ms - m.dev[0].sync_start_ms, ring / 2 + (ring / 2 - 1), 1e-9,
	       "zero 1: reduce-scatter, then the all-gather less the first forward it hides under");
	metrics_release(&m);
	plan_release(&p);
	/* fp32 gradients: the ring moves 4 bytes a gradient (twice the bytes), the weights'
	 * all-gather stays bf16 */
	ok(load_plan(&p, "{\"pp\":2,\"dp\":4,\"grads\":\"fp32\"}", NULL, 0,
	             "[{\"layers\":[0,0],\"device\":0},{\"layers\":[1,3],\"device\":1}]", &e) == 0, "loads");
	ok(sim_plan(&p, &m, &e) == 0, "simulates");
	is_dbl(m.dev[0].sync_end_ms - m.dev[0].sync_start_ms, 2 * ring, 1e-9, "fp32 gradients: twice the ring");
	metrics_release(&m);
	plan_release(&p);
	ok(load_plan(&p, "{\"pp\":2,\"dp\":4,\"zero\":1,\"grads\":\"fp32\"}", NULL, 0,
	             "[{\"layers\":[0,0],\"device\":0},{\"layers\":[1,3],\"device\":1}]", &e) == 0, "loads");
	ok(sim_plan(&p, &m, &e) == 0, "simulates");
	is_dbl(m.dev[0].sync_end_ms - m.dev[0].sync_start_ms, ring + (ring / 2 - 1), 1e-9,
	       "zero 1, fp32 gradients: an fp32 reduce-scatter, then the bf16 all-gather");
	metrics_release(&m);
	plan_release(&p);
	/* ZeRO 2 shards the gradients: each microbatch's backward reduce-scatters its own. The
	 * first (after W0, at t0) and the last (ready at W1's end, t0 + 1 ms) share the stream:
	 * the last ends at t0 + 2 x ring / 2, then the all-gather less the first forward */
	ok(load_plan(&p, "{\"pp\":2,\"dp\":4,\"zero\":2}", NULL, 0,
	             "[{\"layers\":[0,0],\"device\":0},{\"layers\":[1,3],\"device\":1}]", &e) == 0, "loads");
	ok(sim_plan(&p, &m, &e) == 0, "simulates");
	is_dbl(m.dev[0].sync_end_ms - m.dev[0].sync_start_ms, (ring - 1) + (ring / 2 - 1), 1e-9,
	       "zero 2: a reduce-scatter per microbatch (2 of them), then the all-gather");
	metrics_release(&m);
	plan_release(&p);

}

static void test_recompute(void)
{
	struct plan p;
	struct metrics m;
	struct err e = ERR_INIT;
	char stages[256];
	double ms[3];

	snprintf(stages, sizeof(stages), STAGES2, ",\"recompute\":\"full\"");
	ok(load_plan(&p, "{\"pp\":2}", NULL, 0, stages, &e) == 0, "full recompute loads: %s", e.msg);
	plan_stage_ms(&p, 0, ms);
	is_dbl(ms[1], 2 + 2, 1e-12, "full: I pays the stage's forward again");
	is_dbl(ms[2], 2, 1e-12, "full: W unchanged");
	ok(sim_plan(&p, &m, &e) == 0, "simulates");
	/* kept from F to I: layer 0's input (0: the first layer) + layer 1's in_bytes 3e6,
	 * per microbatch; the peak is during the second I: one microbatch's input kept, the
	 * other's W part (2 x 5e7) held, and the largest layer's 1e8 being redone */
	is_dbl((double)m.dev[0].act_peak_bytes, 3e6 + 1e8 + 1e8, 0.5, "full: the peak holds inputs, W parts, one redo");
	metrics_release(&m);
	plan_release(&p);

	snprintf(stages, sizeof(stages), STAGES2, ",\"recompute\":\"selective\"");
	ok(load_plan(&p, "{\"pp\":2}", NULL, 0, stages, &e) == 0, "selective loads: %s", e.msg);
	plan_stage_ms(&p, 0, ms);
	is_dbl(ms[1], 2 + 0.25, 1e-12, "selective: I pays the attention cores' forward");
	ok(sim_plan(&p, &m, &e) == 0, "simulates");
	is_dbl((double)m.dev[0].act_peak_bytes, 2 * (2e8 - 2e7) + 2e7, 0.5,
	       "selective: the cores' activations are not kept, one is redone at a time");
	metrics_release(&m);
	plan_release(&p);

	snprintf(stages, sizeof(stages), STAGES2, ",\"recompute\":\"some\"");
	ok(load_plan(&p, "{\"pp\":2}", NULL, 0, stages, &e) < 0 && strstr(e.msg, "stages[0].recompute"),
	   "an unknown recompute mode is refused at its path: %s", e.msg);
}

static void test_format(void)
{
	struct plan p, q;
	struct err e = ERR_INIT;
	char stages[256], *a, *b;
	cJSON *j;

	snprintf(stages, sizeof(stages), STAGES2, ",\"recompute\":\"selective\"");
	ok(load_plan(&p, "{\"pp\":2,\"tp\":1,\"dp\":2,\"ep\":2,\"zero\":1}", NULL, 0, stages, &e) == 0, "loads");
	is_int(p.ndevices, 2, "two pipeline devices");
	is_int(p.src_cluster.devices, 8, "the file's cluster keeps its 8 GPUs");
	j = plan_to_json(&p, true);
	a = cJSON_PrintUnformatted(j);
	ok(plan_from_json(&q, j, "rt.json", NULL, &e) == 0, "round trip loads: %s", e.msg);
	cJSON_Delete(j);
	j = plan_to_json(&q, true);
	b = cJSON_PrintUnformatted(j);
	is_str(b, a, "parallel + recompute round-trip byte-identical");
	ok(strstr(a, "\"parallel\":{\"pp\":2,\"tp\":1,\"dp\":2,\"ep\":2,\"zero\":1}") != NULL, "parallel written");
	ok(strstr(a, "\"devices\":8") != NULL, "the embedded cluster is the file's");
	free(a);
	free(b);
	cJSON_Delete(j);
	plan_release(&q);
	plan_release(&p);

	snprintf(stages, sizeof(stages), STAGES2, "");
	ok(load_plan(&p, "{\"pp\":2,\"dp\":8}", NULL, 0, stages, &e) < 0 && strstr(e.msg, "16 GPUs"),
	   "more GPUs than the cluster: %s", e.msg);
	ok(load_plan(&p, "{\"pp\":2,\"tp\":3}", NULL, 0, stages, &e) < 0 && strstr(e.msg, "parallel"),
	   "tp not dividing a node: %s", e.msg);
	ok(load_plan(&p, "{\"pp\":2,\"dp\":4,\"ep\":3}", NULL, 0, stages, &e) < 0 && strstr(e.msg, "ep 3"),
	   "ep not dividing dp: %s", e.msg);
	ok(load_plan(&p, "{\"pp\":2,\"zero\":1}", NULL, 0, stages, &e) < 0 && strstr(e.msg, "dp is 1"),
	   "zero without data parallelism: %s", e.msg);
	ok(load_plan(&p, "{\"pp\":2,\"zero\":4}", NULL, 0, stages, &e) < 0 && strstr(e.msg, "parallel.zero"),
	   "zero 4: %s", e.msg);
	ok(load_plan(&p, "{\"pp\":2,\"sp\":2}", NULL, 0, stages, &e) < 0 && strstr(e.msg, "parallel.sp"),
	   "an unknown member: %s", e.msg);
	ok(load_plan(&p, "{\"pp\":2,\"grads\":\"fp16\"}", NULL, 0, stages, &e) < 0 &&
	   strstr(e.msg, "parallel.grads") && strstr(e.msg, "'fp16' is not bf16 or fp32"), "grads fp16: %s", e.msg);
	ok(load_plan(&p, "{\"pp\":2,\"grads\":32}", NULL, 0, stages, &e) < 0 && strstr(e.msg, "parallel.grads"),
	   "grads not a string: %s", e.msg);
	/* fp32 gradients round-trip (and make even a pure-pipeline plan a layout plan) */
	ok(load_plan(&p, "{\"pp\":2,\"grads\":\"fp32\"}", NULL, 0, stages, &e) == 0, "grads fp32 loads: %s", e.msg);
	j = plan_to_json(&p, true);
	a = cJSON_PrintUnformatted(j);
	ok(a && strstr(a, "\"parallel\":{\"pp\":2,\"tp\":1,\"dp\":1,\"ep\":1,\"zero\":0,\"grads\":\"fp32\"}") != NULL,
	   "grads fp32 written");
	ok(plan_from_json(&q, j, "rt.json", NULL, &e) == 0 && q.par.fp32_grads && q.cluster.rep.fp32_grads,
	   "grads fp32 read back, into the replica's cluster too: %s", e.msg);
	free(a);
	cJSON_Delete(j);
	plan_release(&q);
	plan_release(&p);
	ok(load_plan(&p, "{\"pp\":2,\"tp\":2}", NULL, 0, stages, &e) < 0 && strstr(e.msg, "no architecture"),
	   "a table without an architecture keeps its TP: %s", e.msg);
	ok(load_plan(&p, "{\"pp\":3}", NULL, 0, stages, &e) < 0 && strstr(e.msg, "schedule"),
	   "pp must match the schedule's device lists: %s", e.msg);
}

/* The layer table of a model made by `octopipe cost` at another TP degree: equal to the
 * cost model run at that degree, and to hand-computed bytes. */
static void test_tp(void)
{
	const char *dir = getenv("OCTOPIPE_DATADIR") ? getenv("OCTOPIPE_DATADIR") : ".";
	char path[4096];
	struct model m, m2, want;
	struct cluster c;
	struct arch a;
	struct parallel l;
	struct cost_opts o = { 0 };
	struct err e = ERR_INIT;
	double h = 4096, f = 11008, tok = 4096, worst = 0;

	snprintf(path, sizeof(path), "%s/samples/models/llama2-7b.json", dir);
	if (!ok(model_load(&m, path, &e) == 0, "llama2-7b loads: %s", e.msg))
		return;
	snprintf(path, sizeof(path), "%s/samples/clusters/8xH200.json", dir);
	ok(cluster_load(&c, path, &e) == 0, "8xH200 loads");
	parallel_default(&l, 4);
	l.tp = 2;
	ok(parallel_model(&m, &c, &l, &m2, &e) == 0, "the table at tp 2: %s", e.msg);
	snprintf(path, sizeof(path), "%s/samples/architectures/llama2-7b.json", dir);
	ok(hfconfig_load_any(&a, path, &e) == 0, "architecture loads");
	o.seq = 4096;
	o.micro_batch = 1;
	o.tp = 2;
	o.link_gbytes_per_s = c.intra.gbytes_per_s;
	o.link_latency_us = c.intra.latency_us;
	ok(arch_to_model(&a, &c.hw, &o, "x", &want, &e) == 0, "cost model at tp 2");
	for (int i = 0; i < m2.nlayers; i++) {
		worst = fmax(worst, fabs(m2.layers[i].f_ms - want.layers[i].f_ms));
		worst = fmax(worst, fabs(m2.layers[i].b_ms - want.layers[i].b_ms));
		worst = fmax(worst, fabs(m2.layers[i].w_ms - want.layers[i].w_ms));
		worst = fmax(worst, fabs((double)m2.layers[i].param_bytes - (double)want.layers[i].param_bytes) / 1e6);
		worst = fmax(worst, fabs((double)m2.layers[i].act_bytes - (double)want.layers[i].act_bytes) / 1e6);
	}
	ok(worst < 1e-5, "every layer equals the cost model at tp 2 (worst %g)", worst);
	/* a decoder layer: q, k, v, o (32 heads of 128 = h) + gate, up, down split over 2 ranks,
	 * the two norms whole on each (Megatron-LM replicates them), 2 bytes each; the hidden
	 * state sent on: tokens x h x 2 / 2 */
	is_dbl((double)m2.layers[1].param_bytes, 2 * ((4 * h * h + 3 * h * f) / 2 + 2 * h), 1, "tp 2 weights by hand");
	is_dbl((double)m2.layers[1].out_bytes, tok * h * 2 / 2, 0.5, "tp 2 sends half the hidden state per GPU");
	ok(m2.layers[1].f_ms < m.layers[1].f_ms * 0.6 && m2.layers[1].f_ms > m.layers[1].f_ms * 0.5,
	   "tp 2 forward: half the work plus the all-reduces (%g vs %g)", m2.layers[1].f_ms, m.layers[1].f_ms);
	{
		/* FLOPs: every GEMM of a decoder layer splits over 2 ranks, the attention core over
		 * its heads: 2 x tokens x (4 h^2 + 3 h f) / 2 plus the causal core 4 x tokens x
		 * h x ctx / 2, ctx the mean keys per query, (s + 1) / 2 */
		struct kernel ks[64];
		struct cost_opts o1 = o;
		double sum = 0, want_f = 2 * tok * (4 * h * h + 3 * h * f) / 2 + 4 * tok * h * cost_ctx(4096, 0) / 2;
		int n = cost_kernels(&a.layers[1].w, &o1, PASS_F, ks, 64);

		for (int i = 0; i < n && i < 64; i++)
			sum += ks[i].flops;
		ok(fabs(sum - want_f) / want_f < 1e-3, "tp 2 forward FLOPs per GPU by hand (%.6g vs %.6g; norms and "
		   "activations are bytes)", sum, want_f);
	}
	model_release(&want);
	model_release(&m2);
	arch_release(&a);
	l.tp = 3;
	ok(parallel_model(&m, &c, &l, &m2, &e) < 0 && strstr(e.msg, "cannot split evenly"),
	   "tp 3 cannot split 32 heads: %s", e.msg);
	cluster_release(&c);
	model_release(&m);
}

/* The layer table without its collectives (what the cuda executor runs): at tp 2 each
 * layer of llama2-7b is cheaper in F and I by its all-reduces of the hidden state, ring
 * all-reduces over 2 GPUs of tokens x h x 2 bytes (two per decoder layer, attention's and
 * the MLP's; one for the embedding, none for the head), W alike; at ep 2 a MoE layer by
 * its all-to-all, (E-1)/E of its bytes plus two latencies; at tp 1 and ep 1 nothing. */
static void test_compute_only(void)
{
	const char *dir = getenv("OCTOPIPE_DATADIR") ? getenv("OCTOPIPE_DATADIR") : ".";
	char path[4096];
	struct model m, full, run;
	struct cluster c;
	struct parallel l;
	struct err e = ERR_INIT;
	double sync, worst = 0, moved = 0;
	int n;

	snprintf(path, sizeof(path), "%s/samples/models/llama2-7b.json", dir);
	if (!ok(model_load(&m, path, &e) == 0, "llama2-7b loads: %s", e.msg))
		return;
	snprintf(path, sizeof(path), "%s/samples/clusters/8xH200.json", dir);
	ok(cluster_load(&c, path, &e) == 0, "8xH200 loads");
	parallel_default(&l, 4);
	l.tp = 2;
	ok(parallel_model(&m, &c, &l, &full, &e) == 0 && parallel_model_compute(&m, &c, &l, &run, &e) == 0,
	   "llama2-7b at tp 2, with and without its collectives: %s", e.msg);
	sync = ring_allreduce_ms(4096.0 * 4096 * 2, 2, &c.intra);
	n = m.nlayers;
	for (int i = 0; i < n; i++) {
		int syncs = i == 0 ? 1 : i == n - 1 ? 0 : 2;

		worst = fmax(worst, fabs(full.layers[i].f_ms - run.layers[i].f_ms - syncs * sync));
		worst = fmax(worst, fabs(full.layers[i].b_ms - run.layers[i].b_ms - syncs * sync));
		worst = fmax(worst, fabs(full.layers[i].w_ms - run.layers[i].w_ms));
		worst = fmax(worst, fabs((double)full.layers[i].out_bytes - (double)run.layers[i].out_bytes));
	}
	/* (the file's times are rounded, and the table is scaled from them) */
	ok(worst < 1e-6, "every layer: F and I less its ring all-reduces (%.6f ms each), W and bytes unchanged "
	   "(worst %g)", sync, worst);
	model_release(&full);
	model_release(&run);
	l.tp = 1;
	ok(parallel_model(&m, &c, &l, &full, &e) == 0 && parallel_model_compute(&m, &c, &l, &run, &e) == 0,
	   "at tp 1");
	worst = 0;
	for (int i = 0; i < n; i++)
		worst = fmax(worst, fabs(full.layers[i].f_ms - run.layers[i].f_ms) + fabs(full.layers[i].b_ms - run.layers[i].b_ms));
	ok(worst == 0, "at tp 1 there is nothing to leave out (worst %g)", worst);
	model_release(&full);
	model_release(&run);
	model_release(&m);

	snprintf(path, sizeof(path), "%s/samples/models/deepseek-v2-lite.json", dir);
	if (!ok(model_load(&m, path, &e) == 0, "deepseek-v2-lite loads: %s", e.msg)) {
		cluster_release(&c);
		return;
	}
	parallel_default(&l, 4);
	l.dp = 2;
	l.ep = 2;
	ok(parallel_model(&m, &c, &l, &full, &e) == 0 && parallel_model_compute(&m, &c, &l, &run, &e) == 0,
	   "deepseek-v2-lite at dp 2, ep 2: %s", e.msg);
	worst = 0;
	for (int i = 0; i < m.nlayers; i++) {
		const struct link ep_link = parallel_ep_link(&l, &c), *lk = &ep_link;
		double a2a = full.layers[i].a2a_bytes ? 0.5 * (double)full.layers[i].a2a_bytes / (lk->gbytes_per_s * 1e9) * 1e3 +
		                                        2 * lk->latency_us * 1e-3 : 0;

		moved += a2a;
		worst = fmax(worst, fabs(full.layers[i].f_ms - run.layers[i].f_ms - a2a));
		worst = fmax(worst, fabs(full.layers[i].b_ms - run.layers[i].b_ms - a2a));
		worst = fmax(worst, fabs(full.layers[i].w_ms - run.layers[i].w_ms));
	}
	ok(moved > 0 && worst < 1e-9, "every MoE layer: F and I less its expert-parallel all-to-all (%.4f ms in all; "
	   "worst %g)", moved, worst);
	model_release(&full);
	model_release(&run);
	model_release(&m);
	cluster_release(&c);
}

/* Recompute only where memory binds: the toy's stages both recompute fully; with memory
 * for 16 GB of weights and optimizer plus 390 MB, stage 0 can go selective (its peak 380
 * MB, 400 MB without recompute) and stage 1 cannot (400 MB either way: no attention core). */
static void test_relax(void)
{
	struct plan p;
	struct err e = ERR_INIT;
	char stages[256];

	snprintf(stages, sizeof(stages),
	         "[{\"layers\":[0,1],\"device\":0,\"recompute\":\"full\"},{\"layers\":[2,3],\"device\":1,\"recompute\":\"full\"}]");
	if (!ok(load_plan(&p, "{\"pp\":2}", NULL, 0, stages, &e) == 0, "loads: %s", e.msg))
		return;
	p.cluster.mem_bytes = (uint64_t)(16e9 + 3.9e8);
	is_int(layout_relax_recompute(&p, &e), 1, "one stage gets lighter");
	is_int(p.stages[0].recompute, RECOMPUTE_SELECTIVE, "stage 0: selective fits (380 MB)");
	is_int(p.stages[1].recompute, RECOMPUTE_FULL, "stage 1: only full fits");
	p.cluster.mem_bytes = (uint64_t)100e9;
	is_int(layout_relax_recompute(&p, &e), 2, "with room, both drop recompute");
	is_int(p.stages[0].recompute + p.stages[1].recompute, 0, "none left");
	plan_release(&p);
}

/* The link an expert-parallel group's all-to-all runs over: E consecutive DP ranks of T
 * GPUs each, from the start of their pipeline device's block; when T x E does not divide
 * a node, some group has GPUs on two nodes (tp 2 x ep 3 on 8-GPU nodes: GPUs 6-11). */
static void test_ep_link(void)
{
	struct cluster g;
	struct parallel l = { .pp = 2, .tp = 2, .dp = 12, .ep = 3 };
	struct err e = ERR_INIT;

	memset(&g, 0, sizeof(g));
	g.name = "g";
	g.devices = 64;
	g.gpus_per_node = 8;
	g.intra.gbytes_per_s = 100;
	g.inter.gbytes_per_s = 10;
	ok(parallel_check(&l, &g, &e) == 0, "pp 2 x tp 2 x dp 12 x ep 3 on 8-GPU nodes is a layout: %s", e.msg);
	ok(parallel_ep_link(&l, &g).gbytes_per_s == 10,
	   "its EP groups of 6 GPUs straddle nodes: a member alone on one node sends 2/3 on its NIC");
	l.ep = 2;
	ok(parallel_ep_link(&l, &g).gbytes_per_s == 100, "ep 2: groups of 4 GPUs stay in a node");
	l.tp = 8;
	l.dp = 2;
	l.ep = 2;
	l.pp = 4;
	ok(parallel_ep_link(&l, &g).gbytes_per_s == 10, "tp 8 x ep 2: two nodes, one NIC each");
	/* tp 1 x ep 16 on two nodes: 7 / 16 over NVLink, 8 / 16 through each GPU's own NIC */
	l.tp = 1, l.dp = 16, l.ep = 16, l.pp = 1;
	is_dbl(parallel_ep_link(&l, &g).gbytes_per_s, (15.0 / 16) / (8.0 / 16 / 10), 1e-9,
	       "ep 16 over two nodes: the NIC part bounds it (18.75 GB/s for 15/16 of the tokens)");
	/* a DP ring across nodes runs on every member's NIC at once */
	l.tp = 2, l.dp = 16, l.ep = 1;
	is_dbl(parallel_dp_link(&l, &g).gbytes_per_s, 40, 0, "dp 16 x tp 2 over 8-GPU nodes: 4 NICs a node, 40 GB/s");
	l.tp = 1, l.dp = 64;
	is_dbl(parallel_dp_link(&l, &g).gbytes_per_s, 80, 0, "dp 64: 8 NICs, 80 GB/s");
	g.inter.gbytes_per_s = 50;
	is_dbl(parallel_dp_link(&l, &g).gbytes_per_s, 100, 0, "and never faster than NVLink");
	l.dp = 8;
	is_dbl(parallel_dp_link(&l, &g).gbytes_per_s, 100, 0, "dp 8 in one node: NVLink");
}

/* The layout search keeps the layouts that fit ranked: the choice first, then the next
 * best by tokens/s, each a different layout that fits; the ranking is the one each
 * layout's own search (its degrees held fixed) answers with. */
static void test_layout_top(void)
{
	const char *top = getenv("top_srcdir");
	char mp[4096], cp[4096];
	struct model m;
	struct cluster c;
	struct layout_constraints k = { .zero = -1, .recompute = -1, .global_mb = 64 };
	struct layout_choice lc;
	struct err e = ERR_INIT;
	int bad = 0, again = 0;

	snprintf(mp, sizeof(mp), "%s/samples/models/llama2-70b.json", top ? top : ".");
	snprintf(cp, sizeof(cp), "%s/samples/clusters/64xH200.json", top ? top : ".");
	if (model_load(&m, mp, &e) < 0 || cluster_load(&c, cp, &e) < 0) {
		ok(0, "llama2-70b and 64xH200 load: %s", e.msg);
		return;
	}
	ok(layout_search(&m, &c, &k, &lc, &e) == 0, "llama2-70b on 64 H200s: a layout (%s)", e.msg);
	is_int(lc.ntop, LAYOUT_TOP, "%d layouts ranked", LAYOUT_TOP);
	ok(lc.top[0].par.pp == lc.par.pp && lc.top[0].par.tp == lc.par.tp && lc.top[0].par.dp == lc.par.dp &&
	   lc.top[0].tokens_per_s == lc.tokens_per_s, "the first is the choice");
	for (int i = 1; i < lc.ntop; i++) {
		if (lc.top[i].estimate_ms < lc.top[i - 1].estimate_ms)
			bad++;
		for (int j = 0; j < i; j++)
			if (lc.top[i].par.pp == lc.top[j].par.pp && lc.top[i].par.tp == lc.top[j].par.tp &&
			    lc.top[i].par.dp == lc.top[j].par.dp && lc.top[i].par.ep == lc.top[j].par.ep)
				bad++;
	}
	is_int(bad, 0, "the best estimate first, each a different layout");
	for (int i = 0; i < lc.ntop; i++)
		if (!(lc.top[i].bound_ms <= lc.top[i].estimate_ms && lc.top[i].estimate_ms <= lc.top[i].makespan_ms))
			bad++;
	is_int(bad, 0, "each estimate lies between its tight bound and its best baseline");
	for (int i = 0; i < lc.ntop; i++) {
		struct layout_constraints one = k;
		struct layout_choice lo;

		one.tp = lc.top[i].par.tp;
		one.dp = lc.top[i].par.dp;
		one.ep = lc.top[i].par.ep;
		if (layout_search(&m, &c, &one, &lo, &e) == 0 && lo.par.pp == lc.top[i].par.pp &&
		    lo.par.zero == lc.top[i].par.zero && lo.recompute == lc.top[i].recompute &&
		    lo.tokens_per_s == lc.top[i].tokens_per_s && lo.microbatches == lc.top[i].microbatches)
			again++;
	}
	is_int(again, lc.ntop, "each is what the search answers with its degrees held fixed");
	model_release(&m);
	cluster_release(&c);
}

#ifdef OCTO_HAVE_LD_WRAP
/* Every read of an architecture: an HF config.json or an arch JSON. */
static long arch_reads;

int __real_hfconfig_read(struct arch *a, const cJSON *root, const char *file, struct err *e);
int __wrap_hfconfig_read(struct arch *a, const cJSON *root, const char *file, struct err *e);
int __real_arch_from_json(struct arch *a, const cJSON *root, const char *file, struct err *e);
int __wrap_arch_from_json(struct arch *a, const cJSON *root, const char *file, struct err *e);

int __wrap_hfconfig_read(struct arch *a, const cJSON *root, const char *file, struct err *e)
{
	arch_reads++;
	return __real_hfconfig_read(a, root, file, e);
}

int __wrap_arch_from_json(struct arch *a, const cJSON *root, const char *file, struct err *e)
{
	arch_reads++;
	return __real_arch_from_json(a, root, file, e);
}
#endif

/* The layout search prices every candidate from the model's architecture (another TP
 * degree; E > 1, whose experts must split evenly): it reads it once, not once per
 * candidate, and the choice is what pricing each candidate on its own gives. */
/* Full recompute as the layout search judges it is what the simulator does with a plan
 * whose stages recompute: each layer keeps its input, not the activations its backward
 * redoes (llama2-70b FSDP over 64 GPUs: the search saw 110.9 GB, the plan 27.2 GB). */
static void test_layout_full_recompute(void)
{
	const char *top = getenv("top_srcdir");
	char mp[4096], cp[4096];
	struct model m, rm;
	struct cluster c, rc;
	struct layout_constraints k = { .pp = 1, .tp = 1, .dp = 64, .ep = 1, .zero = 3, .recompute = RECOMPUTE_FULL,
	                                .global_mb = 64, .fp32_grads = true };
	struct layout_choice lc;
	struct parallel l = { .pp = 1, .tp = 1, .dp = 64, .ep = 1, .zero = 3, .fp32_grads = true };
	struct baseline_spec spec = { SCHED_1F1B, 1, 0, NULL, NULL, 0, 0, NULL };
	struct plan p;
	struct metrics mt;
	struct err e = ERR_INIT;
	double peak = 0;

	snprintf(mp, sizeof(mp), "%s/samples/models/llama2-70b.json", top ? top : ".");
	snprintf(cp, sizeof(cp), "%s/samples/clusters/64xH200.json", top ? top : ".");
	if (model_load(&m, mp, &e) < 0 || cluster_load(&c, cp, &e) < 0) {
		ok(0, "llama2-70b and 64xH200 load: %s", e.msg);
		return;
	}
	ok(layout_search(&m, &c, &k, &lc, &e) == 0, "llama2-70b FSDP-64 with full recompute is judged (%s)", e.msg);
	ok(parallel_replica(&m, &c, &l, &rm, &rc, &e) == 0 && baseline_plan(&p, &rm, NULL, &rc, NULL, &spec, &e) == 0,
	   "and planned by hand (%s)", e.msg);
	plan_set_recompute(&p, RECOMPUTE_FULL);
	ok(sim_plan(&p, &mt, &e) == 0, "the plan simulates (%s)", e.msg);
	for (int d = 0; d < mt.ndevices; d++)
		peak = fmax(peak, (double)mt.dev[d].peak_mem_bytes);
	is_dbl(lc.peak_bytes, peak, 0.01 * peak, "the search's peak is the plan's (%.1f GB, plan %.1f GB)",
	       lc.peak_bytes / 1e9, peak / 1e9);
	ok(peak < 60e9, "which keeps the layer inputs, not every activation (%.1f GB)", peak / 1e9);
	metrics_release(&mt);
	plan_release(&p);
	/* the layer table the tuner sees under full recompute: the larger of the input and
	 * what W needs after the recomputing I (an upper bound the tuner cannot undercut) */
	{
		uint64_t in = rm.layers[5].in_bytes, w = rm.layers[5].act_w_bytes;

		layout_recompute_model(&rm, RECOMPUTE_FULL);
		is_int((long)rm.layers[5].act_bytes, (long)(in > w ? in : w), "a recomputing layer keeps max(input, W's part)");
	}
	model_release(&rm);
	cluster_release(&rc);
	model_release(&m);
	cluster_release(&c);
}

/* A head tied to the embedding holds the embedding's matrix: once on a device that holds
 * both (gemma2-27b at TP 4 on one pipeline device: 4.7 GB a GPU less), on each of two. */
static void test_tied_head(void)
{
	const char *top = getenv("top_srcdir");
	char mp[4096], cp[4096];
	struct model m, rm;
	struct cluster c, rc;
	struct parallel l = { .pp = 1, .tp = 4, .dp = 1, .ep = 1, .fp32_grads = true };
	struct baseline_spec spec = { SCHED_1F1B, 2, 0, NULL, NULL, 0, 0, NULL };
	struct plan p;
	struct metrics mt;
	struct err e = ERR_INIT;
	double sum = 0, tied;

	snprintf(mp, sizeof(mp), "%s/samples/models/gemma2-27b.json", top ? top : ".");
	snprintf(cp, sizeof(cp), "%s/samples/clusters/4xH200.json", top ? top : ".");
	if (model_load(&m, mp, &e) < 0 || cluster_load(&c, cp, &e) < 0) {
		ok(0, "gemma2-27b and 4xH200 load: %s", e.msg);
		return;
	}
	ok(parallel_replica(&m, &c, &l, &rm, &rc, &e) == 0 && baseline_plan(&p, &rm, NULL, &rc, NULL, &spec, &e) == 0,
	   "gemma2-27b at tp 4 on one pipeline device (%s)", e.msg);
	tied = (double)rm.layers[rm.nlayers - 1].tied_bytes;
	is_dbl(tied, 2.0 * 256000 * 4608 / 4, 1, "the head's tied matrix: V x h bf16 over 4 ranks");
	for (int i = 0; i < rm.nlayers; i++)
		sum += (double)rm.layers[i].param_bytes;
	ok(sim_plan(&p, &mt, &e) == 0, "simulates (%s)", e.msg);
	is_dbl((double)mt.dev[0].weights_bytes, sum - tied, 1, "the device holds the embedding's matrix once");
	metrics_release(&mt);
	plan_release(&p);
	model_release(&rm);
	cluster_release(&rc);
	model_release(&m);
	cluster_release(&c);
}

static void test_layout_reads(void)
{
#ifdef OCTO_HAVE_LD_WRAP
	const char *top = getenv("top_srcdir");
	char mp[4096], cp[4096];
	struct model m;
	struct cluster c;
	struct layout_constraints k = { .zero = -1, .recompute = -1, .global_mb = 64 };
	struct layout_choice lc;
	struct parallel one;
	struct model rm;
	struct cluster rc;
	struct err e = ERR_INIT;

	snprintf(mp, sizeof(mp), "%s/samples/models/deepseek-v2-lite.json", top ? top : ".");
	snprintf(cp, sizeof(cp), "%s/samples/clusters/16xH200.json", top ? top : ".");
	if (model_load(&m, mp, &e) < 0 || cluster_load(&c, cp, &e) < 0) {
		ok(0, "deepseek-v2-lite and 16xH200 load: %s", e.msg);
		return;
	}
	arch_reads = 0;
	ok(layout_search(&m, &c, &k, &lc, &e) == 0, "deepseek-v2-lite on 16 H200s: a layout (%s)", e.msg);
	ok(lc.candidates > 10 && lc.par.ep > 1, "%d candidates judged, the choice at ep %d", lc.candidates, lc.par.ep);
	is_int(arch_reads, 1, "the architecture is read once for the whole search");
	arch_reads = 0;
	one = lc.par;
	one.tp = 2;
	one.dp = lc.par.dp / 2;
	ok(parallel_replica(&m, &c, &one, &rm, &rc, &e) == 0, "one replica at tp 2, dp %d, ep %d: %s", one.dp, one.ep,
	   e.msg);
	is_int(arch_reads, 1, "parallel_replica reads it once, for both the experts and the TP degree");
	model_release(&rm);
	cluster_release(&rc);
	model_release(&m);
	cluster_release(&c);
#else
	ok(1, "# SKIP the linker does not support -Wl,--wrap");
#endif
}

int main(void)
{
	test_relax();
	test_memory();
	test_dp_sync();
	test_recompute();
	test_format();
	test_tp();
	test_compute_only();
	test_ep_link();
	test_layout_top();
	test_layout_reads();
	test_layout_full_recompute();
	test_tied_head();
	return tap_done();
}
