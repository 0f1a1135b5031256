/*
 * test_oom — allocation-failure injection, SQLite style. Each operation (a loader, the
 * cost model, the simulator, the tuner) runs once to count its allocations, then once for
 * every n from 1 to that count with the n-th allocation failing: once with only that one
 * failing (transient) and once with it and every later one failing (persistent). Every
 * run must return an error whose message is one line saying "out of host memory", or succeed
 * with exactly the result of the clean run when the failure was never reached; and every
 * allocation the run made must be freed by the time it returns (failure) or its result is
 * released (success).
 *
 * The hooks: the binary is linked with -Wl,--wrap=malloc,... so every call to the
 * allocator from the engine (libocto.a) and from this file lands in __wrap_malloc() and
 * friends (oom_inject.c); cJSON, a shared library, allocates through the hooks src/json.c
 * gives it, which call malloc() from libocto.a and so land there as well; PCRE2's compile
 * and match-data constructors are wrapped too. Live allocations are kept in a pointer set,
 * so a leak fails this test by itself (valgrind and ASan see the same runs).
 * Without a linker that supports --wrap (configure checks), the test is skipped.
 *
 * Debugging a finding: `tests/unit/test_oom tune` runs only the operations whose name
 * contains "tune"; OOM_ONLY=n runs only injection point n; OOM_TRACE=1 prints the stack
 * of each injected failure (addr2line -f -e tests/unit/test_oom turns the offsets into
 * names); OOM_VERBOSE=1 names every run on stderr before it starts (for crashes).
 */
#include "config.h"

#ifndef OCTO_HAVE_LD_WRAP
#include <stdio.h>

int main(void)
{
	printf("1..0 # SKIP the linker does not support -Wl,--wrap\n");
	return 0;
}
#else

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "baseline.h"
#include "calibrate.h"
#include "cluster.h"
#include "cost.h"
#include "doc.h"
#include "fileio.h"
#include "gantt.h"
#include "hardware.h"
#include "hfconfig.h"
#include "json.h"
#include "megatron.h"
#include "metrics.h"
#include "model.h"
#include "plan.h"
#include "profile.h"
#include "rescale.h"
#include "sim.h"
#include "strbuf.h"
#include "timeline.h"
#include "torchcsv.h"
#include "trace.h"
#include "tune.h"
#include "oom_inject.h"
#include "../tap.h"

/* ---- the operations ------------------------------------------------------------------- */

/* An operation runs with injection armed and returns 0 or -1 (e set). On success it
 * describes its result into fp with injection paused, then releases everything. */
struct op {
	const char *name;
	int (*run)(struct strbuf *fp, struct err *e);
};

/* fp += the JSON text of a built document (consumed). */
static void fp_json(struct strbuf *fp, cJSON *root)
{
	if (!root) {
		strbuf_addstr(fp, "(writer out of memory)");
		return;
	}
	json_write(fp, root);
	cJSON_Delete(root);
}

static int op_model(struct strbuf *fp, struct err *e, const char *file)
{
	struct model m;

	if (model_load(&m, tap_data(file), e) < 0)
		return -1;
	inj_pause();
	fp_json(fp, model_to_json(&m));
	inj_resume();
	model_release(&m);
	return 0;
}

static int op_model_expanded(struct strbuf *fp, struct err *e) { return op_model(fp, e, "tiny-model.json"); }
static int op_model_compact(struct strbuf *fp, struct err *e) { return op_model(fp, e, "tiny-model-compact.json"); }

static int op_cluster(struct strbuf *fp, struct err *e)
{
	struct cluster c;

	if (cluster_load(&c, tap_data("tiny-cluster-2node.json"), e) < 0)
		return -1;
	inj_pause();
	fp_json(fp, cluster_to_json(&c));
	inj_resume();
	cluster_release(&c);
	return 0;
}

static int op_plan(struct strbuf *fp, struct err *e, const char *file)
{
	struct plan p;

	if (plan_load(&p, tap_data(file), e) < 0)
		return -1;
	inj_pause();
	fp_json(fp, plan_to_json(&p, true));
	inj_resume();
	plan_release(&p);
	return 0;
}

static int op_plan_1f1b(struct strbuf *fp, struct err *e) { return op_plan(fp, e, "tiny-plan.json"); }
static int op_plan_v(struct strbuf *fp, struct err *e) { return op_plan(fp, e, "tiny-plan-v.json"); }

static int op_timeline(struct strbuf *fp, struct err *e)
{
	struct timeline t;

	if (timeline_load(&t, tap_data("tiny-timeline.json"), e) < 0)
		return -1;
	inj_pause();
	fp_json(fp, timeline_to_json(&t));
	inj_resume();
	timeline_release(&t);
	return 0;
}

static void fp_arch(struct strbuf *fp, const struct arch *a)
{
	strbuf_addf(fp, "%s %s %ld %ld %d\n", a->name ? a->name : "-", a->family ? a->family : "-",
	            a->seq_len, a->hidden, a->nlayers);
	for (int i = 0; i < a->nlayers; i++)
		strbuf_addf(fp, "%s %d %.17g %.17g\n", a->layers[i].kind, a->layers[i].mtp,
		            a->layers[i].w.params, cost_flops(&a->layers[i].w, 4096));
}

static int op_arch(struct strbuf *fp, struct err *e, const char *path)
{
	struct arch a;

	memset(&a, 0, sizeof(a));
	if (hfconfig_load_any(&a, path, e) < 0)
		return -1;
	inj_pause();
	fp_arch(fp, &a);
	inj_resume();
	arch_release(&a);
	return 0;
}

/* Path of a file under the source tree. */
static const char *top_file(const char *rel)
{
	static char buf[4][4096];
	static int k;
	const char *top = getenv("top_srcdir");

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", top ? top : ".", rel);
	return buf[k];
}

#define HF_OP(fn, rel) \
	static int fn(struct strbuf *fp, struct err *e) { return op_arch(fp, e, top_file(rel)); }

static int op_arch_file(struct strbuf *fp, struct err *e) { return op_arch(fp, e, tap_data("arch-tiny.json")); }
HF_OP(op_hf_nemotron, "samples/profiles/configs/nemotron-nano-v2-9b.json")
HF_OP(op_hf_deepseek, "samples/profiles/configs/deepseek-16b.json")
HF_OP(op_hf_deepseek_v3, "samples/architectures/deepseek-v3.json")
HF_OP(op_hf_gptoss, "samples/profiles/configs/gpt-oss-20b.json")
HF_OP(op_hf_gpt2, "samples/profiles/configs/gpt-13b.json")
HF_OP(op_hf_llama, "samples/architectures/llama2-7b.json")
HF_OP(op_hf_gemma2, "samples/architectures/gemma2-27b.json")
HF_OP(op_hf_gemma3, "samples/architectures/gemma3-12b.json")
HF_OP(op_hf_jamba, "samples/architectures/jamba-v0.1.json")
HF_OP(op_hf_qwen3next, "samples/architectures/qwen3-next-80b-a3b.json")

/* The cost model: an architecture and a cluster's hardware to a layer table. */
static int op_cost(struct strbuf *fp, struct err *e)
{
	struct arch a;
	struct cluster c;
	struct model m;
	struct cost_opts o = { .seq = 4096, .micro_batch = 1, .tp = 2, .link_gbytes_per_s = 450, .link_latency_us = 5 };
	int r = -1;

	memset(&a, 0, sizeof(a));
	if (hfconfig_load_any(&a, top_file("samples/profiles/configs/nemotron-nano-v2-9b.json"), e) < 0)
		return -1;
	if (cluster_load(&c, tap_data("tiny-cluster.json"), e) < 0)
		goto out_arch;
	if (arch_to_model(&a, &c.hw, &o, "cost", &m, e) < 0)
		goto out_cluster;
	inj_pause();
	fp_json(fp, model_to_json(&m));
	inj_resume();
	model_release(&m);
	r = 0;
out_cluster:
	cluster_release(&c);
out_arch:
	arch_release(&a);
	return r;
}

static int op_profile(struct strbuf *fp, struct err *e, const char *records)
{
	struct profile_rules r;
	struct profile_stats st;
	struct model m;
	size_t len;
	char *text;
	int rc = -1;

	if (profile_rules_load(&r, tap_data("profile/rules.json"), e) < 0)
		return -1;
	if (!(text = fileio_read(tap_data(records), &len, e)))
		goto out_rules;
	if (profile_import(&r, text, len, records, 1, &m, &st, e) < 0) {
		strbuf_release(&st.unmatched_names);
		goto out_text;
	}
	inj_pause();
	fp_json(fp, model_to_json(&m));
	strbuf_addf(fp, "%ld %ld %ld\n%s", st.records, st.matched, st.unmatched,
	            st.unmatched_names.buf ? st.unmatched_names.buf : "");
	inj_resume();
	model_release(&m);
	strbuf_release(&st.unmatched_names);
	rc = 0;
out_text:
	free(text);
out_rules:
	profile_rules_release(&r);
	return rc;
}

static int op_profile_csv(struct strbuf *fp, struct err *e) { return op_profile(fp, e, "profile/records.csv"); }
static int op_profile_trace(struct strbuf *fp, struct err *e) { return op_profile(fp, e, "profile/trace.json"); }

/* The cost model's calibration: a measured profile read against its architecture, and
 * the fit of the hardware's efficiencies. */
static int op_calibrate(struct strbuf *fp, struct err *e)
{
	struct calib_set s = { NULL, 0, 0, { false } };
	struct arch a;
	struct hardware hw;
	struct cost_opts o = { .seq = 4096, .micro_batch = 1, .tp = 1 };
	int r = -1;

	memset(&a, 0, sizeof(a));
	if (hfconfig_load_any(&a, top_file("samples/profiles/configs/gpt-13b.json"), e) < 0)
		return -1;
	hardware_default(&hw);
	if (calibrate_add_profile(&s, &a, &hw, &o, top_file("samples/profiles/gpt-13b.json"), e) < 0 || calibrate_fit(&s, &hw, e) < 0)
		goto out;
	inj_pause();
	for (int c = 0; c < EFF_NCLASS; c++)
		strbuf_addf(fp, "%.17g %.17g\n", hw.eff_f[c], hw.eff_b[c]);
	strbuf_addf(fp, "%d points\n", s.n);
	inj_resume();
	r = 0;
out:
	calibrate_release(&s);
	hardware_release(&hw);
	arch_release(&a);
	return r;
}

/* Model and cluster for the operations below, loaded once with injection off. */
static struct model tiny_model;
static struct cluster tiny_cluster;

static int op_torchcsv(struct strbuf *fp, struct err *e)
{
	struct plan p;
	size_t len;
	char *text = fileio_read(tap_data("schedule.csv"), &len, e);

	if (!text)
		return -1;
	if (torchcsv_import(&p, text, len, "schedule.csv", &tiny_model, "tiny-model.json", &tiny_cluster,
	                    "tiny-cluster.json", 0, NULL, e) < 0) {
		free(text);
		return -1;
	}
	free(text);
	inj_pause();
	fp_json(fp, plan_to_json(&p, false));
	inj_resume();
	plan_release(&p);
	return 0;
}

static int op_doc(struct strbuf *fp, struct err *e)
{
	struct doc d;

	if (doc_load(&d, tap_data("tiny-plan-v.json"), e) < 0)
		return -1;
	inj_pause();
	doc_describe(&d, fp);
	inj_resume();
	doc_release(&d);
	return 0;
}

/* Plans for the simulator, built once with injection off. */
static struct plan sim_plan_order, sim_plan_policy;
static struct plan tiny_plan;
static struct timeline tiny_timeline;

/* calibrate's rescaling: factors fitted to a measured timeline, applied to a model copy. */
static int op_rescale(struct strbuf *fp, struct err *e)
{
	struct rescale r;
	struct model m;
	int rc = -1;

	memset(&r, 0, sizeof(r));
	if (model_copy(&m, &tiny_plan.model, e) < 0)
		return -1;
	if (rescale_fit(&tiny_plan, &tiny_timeline, "tiny-timeline.json", &r, e) < 0 ||
	    rescale_apply(&r, &tiny_plan, &m, e) < 0)
		goto out;
	inj_pause();
	fp_json(fp, model_to_json(&m));
	inj_resume();
	rc = 0;
out:
	rescale_release(&r);
	model_release(&m);
	return rc;
}

/* The writers: a self-contained plan, a model, a cluster and a timeline, each saved
 * atomically (the files are the result). */
static char save_dir[64];
static const char *const saved[] = { "plan.json", "model.json", "cluster.json", "timeline.json" };

static const char *save_path(int i)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", save_dir, saved[i]);
	return path;
}

static int op_save(struct strbuf *fp, struct err *e)
{
	if (plan_save(&sim_plan_order, save_path(0), true, e) < 0 || model_save(&tiny_model, save_path(1), e) < 0 ||
	    cluster_save(&tiny_cluster, save_path(2), e) < 0 || timeline_save(&tiny_timeline, save_path(3), e) < 0)
		return -1;
	inj_pause();
	for (int i = 0; i < 4; i++) {
		size_t len;
		char *text = fileio_read(save_path(i), &len, e);

		strbuf_addstr(fp, text ? text : "(unreadable)");
		free(text);
	}
	inj_resume();
	return 0;
}

/* Order-driven: metrics and the recorded timeline. */
static int op_sim_order(struct strbuf *fp, struct err *e)
{
	struct sim s;
	struct sim_opts o;
	struct metrics mt;
	struct timeline t;

	memset(&s, 0, sizeof(s));
	sim_opts_default(&o);
	o.record = true;
	if (sim_run(&s, &sim_plan_order, &o, &mt, e) < 0) {
		sim_release(&s);
		return -1;
	}
	if (sim_timeline(&s, &sim_plan_order, &mt, &t, e) < 0) {
		metrics_release(&mt);
		sim_release(&s);
		return -1;
	}
	inj_pause();
	fp_json(fp, timeline_to_json(&t));
	inj_resume();
	timeline_release(&t);
	metrics_release(&mt);
	sim_release(&s);
	return 0;
}

/* Plans the simulator rejects (a deadlock) or flags (devices over capacity). */
static struct plan deadlock_plan, oom_plan;

/* An infeasible plan: the clean run's result is the error and the metrics behind it. */
static int sim_infeasible(struct strbuf *fp, struct err *e, const struct plan *p)
{
	struct sim s;
	struct sim_opts o;
	struct metrics mt;
	int r;

	memset(&s, 0, sizeof(s));
	sim_opts_default(&o);
	r = sim_run(&s, p, &o, &mt, e);
	if (r < 0 && e->cls != ERR_INFEASIBLE) {
		metrics_release(&mt);
		sim_release(&s);
		return -1;
	}
	inj_pause();
	strbuf_addf(fp, "%d %s\n", r, e->msg);
	fp_json(fp, metrics_to_json(&mt));
	inj_resume();
	err_clear(e);
	metrics_release(&mt);
	sim_release(&s);
	return 0;
}

static int op_sim_deadlock(struct strbuf *fp, struct err *e) { return sim_infeasible(fp, e, &deadlock_plan); }
static int op_sim_device_oom(struct strbuf *fp, struct err *e) { return sim_infeasible(fp, e, &oom_plan); }

/* The exporters: Chrome trace, torch CSV, Megatron-LM's flags (the tiny model is a
 * hybrid one: its partition is the hybrid layer pattern), ASCII Gantt. */
static int op_export(struct strbuf *fp, struct err *e)
{
	struct strbuf sb = STRBUF_INIT;
	cJSON *trace = trace_from_timeline(&tiny_timeline, &tiny_plan);
	int r = -1;

	if (!trace) {
		err_set(e, ERR_RUNTIME, "trace: out of host memory");
		return -1;
	}
	json_write(&sb, trace);
	cJSON_Delete(trace);
	if (torchcsv_export(&sim_plan_order, &sb, e) < 0)
		goto out;
	if (megatron_args(&tiny_plan, "tiny", &sb, e) < 0)
		goto out;
	strbuf_addch(&sb, '\n');
	gantt_ascii(&tiny_timeline, 100, "gpu", &sb);
	if (strbuf_failed(&sb)) {
		err_set(e, ERR_RUNTIME, "export: out of host memory");
		goto out;
	}
	inj_pause();
	strbuf_add(fp, sb.buf, sb.len);
	inj_resume();
	r = 0;
out:
	strbuf_release(&sb);
	return r;
}

/* Policy-driven: metrics and the order it chose, written into a copy of the plan. */
static int op_sim_policy(struct strbuf *fp, struct err *e)
{
	struct sim s;
	struct sim_opts o;
	struct metrics mt;
	struct plan p;
	int r = -1;

	memset(&s, 0, sizeof(s));
	inj_pause();
	{
		cJSON *j = plan_to_json(&sim_plan_policy, true);
		struct err e2 = ERR_INIT;

		if (!j || plan_from_json(&p, j, "policy", NULL, &e2) < 0)
			abort();
		cJSON_Delete(j);
	}
	inj_resume();
	sim_opts_default(&o);
	o.policy_driven = true;
	o.policy.max_inflight = 3;
	if (sim_run(&s, &p, &o, &mt, e) < 0)
		goto out;
	if (sim_apply_order(&s, &p, e) < 0)
		goto out_metrics;
	inj_pause();
	fp_json(fp, metrics_to_json(&mt));
	fp_json(fp, plan_to_json(&p, false));
	inj_resume();
	r = 0;
out_metrics:
	metrics_release(&mt);
out:
	plan_release(&p);
	sim_release(&s);
	return r;
}

static int op_tune(struct strbuf *fp, struct err *e)
{
	struct tuner *t;
	struct tune_opts o;
	const struct tune_step *step;
	struct plan p;
	struct metrics mt;
	int r, steps = 0;

	tune_opts_default(&o);
	o.microbatches = 4;
	o.max_rounds = 1;
	if (tune_new(&t, &tiny_model, &tiny_cluster, &o, e) < 0)
		return -1;
	while ((r = tune_step(t, &step, e)) > 0 && ++steps < 3)
		;
	if (r < 0 || tune_result(t, &p, &mt, e) < 0) {
		tune_free(t);
		return -1;
	}
	inj_pause();
	fp_json(fp, plan_to_json(&p, false));
	fp_json(fp, metrics_to_json(&mt));
	fp_json(fp, tune_steps_to_json(t));
	inj_resume();
	plan_release(&p);
	metrics_release(&mt);
	tune_free(t);
	return 0;
}

/* Every baseline recipe built and simulated: an allocation failure anywhere is the whole
 * call's error, never a recipe quietly marked "cannot apply" or "deadlock". */
static int op_baselines(struct strbuf *fp, struct err *e)
{
	struct baseline_set bs;

	if (baseline_run_all(&bs, &tiny_model, &tiny_cluster, 4, e) < 0)
		return -1;
	inj_pause();
	for (int i = 0; i < bs.n; i++) {
		const struct baseline_result *r = &bs.r[i];

		strbuf_addf(fp, "%s %d %d %d %.17g %.17g %d %s\n", r->recipe->name, r->built, r->ran, r->feasible,
		            r->ran ? r->m.makespan_ms : 0, r->peak_mem_bytes, r->why.cls, r->why.msg);
	}
	strbuf_addf(fp, "best %d\n", bs.best);
	inj_resume();
	baseline_set_release(&bs);
	return 0;
}

/* ---- the driver -------------------------------------------------------------------- */

static bool oom_message(const struct err *e)
{
	return e->cls == ERR_RUNTIME && !strchr(e->msg, '\n') && strstr(e->msg, "out of host memory");
}

/* Runs op for every injection point in one mode. */
static void inject(const struct op *op, bool persistent, long count, const char *ref)
{
	long bad_rc = 0, bad_msg = 0, bad_leak = 0, bad_result = 0, shown = 0;
	bool verbose = getenv("OOM_VERBOSE") != NULL;
	long only = getenv("OOM_ONLY") ? atol(getenv("OOM_ONLY")) : 0;
	const char *mode = persistent ? "persistent" : "transient";

	for (long n = only ? only : 1; n <= (only ? only : count); n++) {
		struct strbuf fp = STRBUF_INIT;
		struct err e = ERR_INIT;
		long before = live_count(), fired, leaked;
		int rc;
		bool bad = false;

		if (verbose)
			fprintf(stderr, "%s %s n=%ld\n", op->name, mode, n);
		inj_arm(n, persistent);
		rc = op->run(&fp, &e);
		fired = inj_fired;
		inj_arm(0, false);
		leaked = live_count() - before;
		if (fired && rc == 0) {
			bad_rc++;
			bad = true;
		} else if (!fired && (rc < 0 || strcmp(fp.buf ? fp.buf : "", ref) != 0)) {
			bad_result++;
			bad = true;
		} else if (rc < 0 && !oom_message(&e)) {
			bad_msg++;
			bad = true;
		}
		if (leaked) {
			bad_leak++;
			bad = true;
		}
		if (bad && shown++ < 8)
			printf("#   %s %s n=%ld: rc %d, %ld failed, %ld leaked, error '%s'\n", op->name, mode,
			       n, rc, fired, leaked, e.msg);
		inj_pause();
		strbuf_release(&fp);
		inj_resume();
	}
	ok(bad_rc == 0, "%s (%s, %ld points): a failed allocation is never a success", op->name, mode, count);
	ok(bad_msg == 0, "%s (%s): the error says out of host memory, in one line", op->name, mode);
	ok(bad_leak == 0, "%s (%s): nothing leaks", op->name, mode);
	ok(bad_result == 0, "%s (%s): unaffected runs give the clean result", op->name, mode);
}

static void check_op(const struct op *op)
{
	struct strbuf ref = STRBUF_INIT;
	struct err e = ERR_INIT;
	long before = live_count(), count;
	int rc;

	inj_arm(0, false);
	rc = op->run(&ref, &e);
	count = inj_calls;
	if (!ok(rc == 0, "%s runs clean (%s)", op->name, e.msg) ||
	    !ok(live_count() == before, "%s: the clean run frees everything", op->name) ||
	    !ok(count > 0, "%s allocates (%ld allocations)", op->name, count)) {
		strbuf_release(&ref);
		return;
	}
	inject(op, false, count, ref.buf);
	inject(op, true, count, ref.buf);
	printf("# %s: %ld injection points, each transient and persistent\n", op->name, count);
	strbuf_release(&ref);
}

static const struct op ops[] = {
	{ "model_load (expanded)", op_model_expanded },
	{ "model_load (compact)", op_model_compact },
	{ "cluster_load", op_cluster },
	{ "plan_load", op_plan_1f1b },
	{ "plan_load (interleaved)", op_plan_v },
	{ "timeline_load", op_timeline },
	{ "doc_load", op_doc },
	{ "arch file", op_arch_file },
	{ "hf config (nemotron-h)", op_hf_nemotron },
	{ "hf config (deepseek)", op_hf_deepseek },
	{ "hf config (deepseek-v3, mtp)", op_hf_deepseek_v3 },
	{ "hf config (gpt-oss)", op_hf_gptoss },
	{ "hf config (gpt2)", op_hf_gpt2 },
	{ "hf config (llama)", op_hf_llama },
	{ "hf config (gemma2)", op_hf_gemma2 },
	{ "hf config (gemma3)", op_hf_gemma3 },
	{ "hf config (jamba)", op_hf_jamba },
	{ "hf config (qwen3-next)", op_hf_qwen3next },
	{ "cost model", op_cost },
	{ "profile import (csv)", op_profile_csv },
	{ "profile import (trace)", op_profile_trace },
	{ "torch csv import", op_torchcsv },
	{ "calibrate (profile + fit)", op_calibrate },
	{ "rescale (timeline fit)", op_rescale },
	{ "writers (plan, model, cluster, timeline)", op_save },
	{ "sim (order-driven)", op_sim_order },
	{ "sim (policy-driven)", op_sim_policy },
	{ "sim (deadlock)", op_sim_deadlock },
	{ "sim (over device memory)", op_sim_device_oom },
	{ "exporters", op_export },
	{ "tune", op_tune },
	{ "baselines (build and simulate every recipe)", op_baselines },
};

int main(int argc, char **argv)
{
	struct err e = ERR_INIT;
	struct baseline_spec spec = { SCHED_ZBV, 4, 0, "balanced", NULL, 0, 0, NULL };
	cJSON *warm;

	inj_trace = getenv("OOM_TRACE") != NULL;
	/* a first parse installs cJSON's allocator hooks (src/json.c) */
	warm = json_parse("{}", 2, "warm-up", &e);
	cJSON_Delete(warm);
	snprintf(save_dir, sizeof(save_dir), "/tmp/octopipe-oom-XXXXXX");
	if (!mkdtemp(save_dir)) {
		printf("Bail out! cannot make a temporary directory\n");
		return 1;
	}
	if (model_load(&tiny_model, tap_data("tiny-model.json"), &e) < 0 ||
	    cluster_load(&tiny_cluster, tap_data("tiny-cluster.json"), &e) < 0 ||
	    plan_load(&sim_plan_order, tap_data("tiny-plan-v.json"), &e) < 0 ||
	    plan_load(&tiny_plan, tap_data("tiny-plan.json"), &e) < 0 ||
	    plan_load(&deadlock_plan, tap_data("deadlock-plan.json"), &e) < 0 ||
	    plan_load(&oom_plan, tap_data("oom-plan.json"), &e) < 0 ||
	    timeline_load(&tiny_timeline, tap_data("tiny-timeline.json"), &e) < 0 ||
	    baseline_plan(&sim_plan_policy, &tiny_model, NULL, &tiny_cluster, NULL, &spec, &e) < 0) {
		printf("Bail out! %s\n", e.msg);
		return 1;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (argc < 2 || strstr(ops[i].name, argv[1]))
			check_op(&ops[i]);
	for (int i = 0; i < 4; i++)
		unlink(save_path(i));
	rmdir(save_dir);
	plan_release(&tiny_plan);
	plan_release(&deadlock_plan);
	plan_release(&oom_plan);
	timeline_release(&tiny_timeline);
	plan_release(&sim_plan_order);
	plan_release(&sim_plan_policy);
	model_release(&tiny_model);
	cluster_release(&tiny_cluster);
	return tap_done();
}

#endif
