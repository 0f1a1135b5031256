/*
 * test_cost — the cost model: per-kind formulas on hand-computed cases and against the
 * per-block numbers computed by hand from the published configs (docs/METHOD.md §6.2),
 * model totals of every sample architecture against their published parameter counts
 * (within 1%), times from work, tensor parallelism, the arch file form,
 * and calibration recovering known efficiencies from a synthetic profile.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "calibrate.h"
#include "cost.h"
#include "hfconfig.h"
#include "../tap.h"

static struct work block_work(struct block b)
{
	struct work w;

	memset(&w, 0, sizeof(w));
	cost_block(&b, &w);
	return w;
}

static struct block mk(enum block_kind k, long h)
{
	struct block b;

	memset(&b, 0, sizeof(b));
	b.kind = k;
	b.h = h;
	b.norms = 1;
	return b;
}

static void hand_cases(void)
{
	struct block b = mk(BLK_ATTN, 8);
	struct work w;

	/* h 8, 2 query heads and 1 KV head of 4: Q 8x8, K and V 8x4, O 8x8 = 192 weights */
	b.n_q = 2, b.n_kv = 1, b.d_h = 4;
	w = block_work(b);
	is_dbl(w.params, 192 + 8, 0, "attention: Q K V O weights + one norm");
	is_dbl(w.f[EFF_GEMM], 384, 0, "attention: 2 FLOPs per weight");
	is_dbl(w.core_per_ctx, 32, 0, "attention core: 4 n_q d_h per key");
	is_dbl(cost_ctx(16, 0), 8, 0, "causal: s/2 keys on average");
	is_dbl(cost_ctx(16, 4), 4 - 4.0 * 3 / 32, 1e-12, "window 4 of 16: W - W(W-1)/2s");
	is_dbl(cost_ctx(16, 32), 8, 0, "a window longer than the sequence is full attention");
	is_dbl(cost_flops(&w, 16), 384 + 32 * 8, 0, "forward FLOPs at s=16");
	is_dbl(w.act, 2 * (8 + 8 + 8 + 8 + 8) + 8, 0, "attention activations (FlashAttention)");
	b.out_gate = true;
	is_dbl(block_work(b).f[EFF_GEMM], 384 + 2 * 64, 0, "an output gate doubles q_proj");

	b = mk(BLK_MLP, 8);
	b.f = 16;
	b.gated = true;
	w = block_work(b);
	is_dbl(w.params, 3 * 8 * 16 + 8, 0, "gated MLP: 3 matrices");
	is_dbl(w.f[EFF_GEMM], 6 * 8 * 16, 0, "gated MLP: 6hf FLOPs");
	b.gated = false;
	is_dbl(block_work(b).f[EFF_GEMM], 4 * 8 * 16, 0, "plain MLP: 4hf FLOPs");

	b = mk(BLK_MOE, 8);
	b.f = 16, b.gated = true, b.experts = 4, b.top_k = 2, b.f_shared = 16;
	w = block_work(b);
	is_dbl(w.params, 8 * 4 + 4 * 384 + 384 + 8, 0, "MoE: router + experts + shared + norm");
	is_dbl(w.active, 8 * 4 + 2 * 384 + 384 + 8, 0, "MoE active: top-k experts");
	is_dbl(w.f[EFF_GROUPED], 2 * 6 * 8 * 16, 0, "MoE routed FLOPs run as grouped GEMM");
	is_dbl(w.f[EFF_GEMM], 2 * 8 * 4 + 6 * 8 * 16, 0, "router and shared expert run as GEMM");
	is_dbl(w.a2a, 4 * 2 * 8, 0, "all-to-all: dispatch + combine of k copies");
}

/* per-block numbers computed from the configs (Nemotron-H 8B, DeepSeek-V3) */
static void facts_blocks(void)
{
	struct block b = mk(BLK_MAMBA2, 4096);
	struct work w;

	b.ssm_heads = 128, b.ssm_head_dim = 64, b.groups = 8, b.state = 128, b.conv = 4, b.chunk = 128;
	w = block_work(b);
	is_dbl(w.params, 109640064, 0, "nemotronh-8b M: params");
	is_dbl(w.f[EFF_GEMM], 219152384, 0, "nemotronh-8b M: GEMM FLOPs");
	is_dbl(w.f[EFF_SSD], 6635520, 0, "nemotronh-8b M: conv + chunked SSD FLOPs");
	is_dbl(w.act, 140032, 0, "nemotronh-8b M: activation bytes");
	is_dbl(w.act_w, 69888, 0, "nemotronh-8b M: bytes kept until W");

	b = mk(BLK_MLP, 4096);
	b.f = 21504;
	w = block_work(b);
	is_dbl(w.params, 176164864, 0, "nemotronh-8b -: params");
	is_dbl(w.act, 102400, 0, "nemotronh-8b -: activation bytes");

	b = mk(BLK_ATTN, 4096);
	b.n_q = 32, b.n_kv = 8, b.d_h = 128;
	w = block_work(b);
	is_dbl(w.params, 41947136, 0, "nemotronh-8b *: params");
	is_dbl(w.f[EFF_GEMM], 83886080, 0, "nemotronh-8b *: GEMM FLOPs");
	is_dbl(w.core_per_ctx, 16384, 0, "nemotronh-8b *: core FLOPs per key");
	is_dbl(w.act, 36992, 0, "nemotronh-8b *: activation bytes");
	is_dbl(w.act_w, 36864, 0, "nemotronh-8b *: bytes kept until W");

	b = mk(BLK_HEAD, 4096);
	b.vocab = 131072;
	w = block_work(b);
	is_dbl(w.params, 536875008, 0, "nemotronh-8b head: params");
	is_dbl(w.f[EFF_GEMM], 1073741824, 0, "nemotronh-8b head: 2hV FLOPs");
	is_dbl(w.act, 540672, 0, "nemotronh-8b head: activations with fp32 logits");
	is_dbl(w.act_w, 270336, 0, "nemotronh-8b head: bytes kept until W");

	{
		struct block a = mk(BLK_MLA, 7168), m = mk(BLK_MOE, 7168);

		a.n_q = 128, a.q_lora = 1536, a.kv_lora = 512, a.d_nope = 128, a.d_rope = 64, a.d_v = 128;
		m.f = 2048, m.gated = true, m.experts = 256, m.top_k = 8, m.f_shared = 2048;
		memset(&w, 0, sizeof(w));
		cost_block(&a, &w);
		cost_block(&m, &w);
		/* the hand count also counts the 256 routing-bias entries (e_score_correction_bias) */
		is_dbl(w.params, 11507286272.0, 256, "deepseek-v3 MoE layer: params");
		is_dbl(w.active, 585318400, 0, "deepseek-v3 MoE layer: active params");
		is_dbl(w.f[EFF_GEMM] + w.f[EFF_GROUPED], 1170604032, 0, "deepseek-v3 MoE layer: GEMM FLOPs");
		is_dbl(w.core_per_ctx, 81920, 0, "deepseek-v3 MLA: core FLOPs per key");
		is_dbl(w.a2a, 2 * 114688, 0, "deepseek-v3: dispatch 8 x 7168 x 2 bytes, combine the same");
	}
}

static const struct {
	const char *name;
	long seq;
	double total, active, flops;
} published[] = {
	{ "llama2-7b", 4096, 6.738, 6.738, 14.29 },
	{ "llama2-70b", 4096, 68.977, 68.977, 142.80 },
	{ "gemma2-27b", 8192, 27.227, 27.227, 57.15 },
	{ "gemma3-12b", 4096, 11.766, 11.766, 24.39 },
	{ "gemma3-27b", 4096, 27.009, 27.009, 55.12 },
	{ "nemotronh-8b", 4096, 8.101, 8.101, 15.42 },
	{ "nemotronh-56b", 4096, 56.324, 56.324, 112.33 },
	{ "jamba-v0.1", 4096, 51.570, 12.110, 23.83 },
	{ "deepseek-v2-lite", 4096, 15.706, 2.661, 5.47 },
	{ "deepseek-v3", 4096, 671.026, 37.552, 83.49 },
	{ "qwen3-next-80b-a3b", 4096, 79.674, 3.875, 7.68 },
};

static void totals(void)
{
	const char *top = getenv("top_srcdir");
	char path[4096];

	for (size_t i = 0; i < sizeof(published) / sizeof(published[0]); i++) {
		struct arch a;
		struct arch_totals t;
		struct err e = ERR_INIT;

		snprintf(path, sizeof(path), "%s/samples/architectures/%s.json", top ? top : ".", published[i].name);
		if (!ok(hfconfig_load_any(&a, path, &e) == 0, "%s loads (%s)", published[i].name, e.msg))
			continue;
		arch_totals(&a, published[i].seq, &t);
		ok(fabs(t.params / 1e9 / published[i].total - 1) <= 0.01, "%s: %.3f B params (published %.3f B)",
		   published[i].name, t.params / 1e9, published[i].total);
		ok(fabs(t.active / 1e9 / published[i].active - 1) <= 0.01, "%s: %.3f B active (published %.3f B)",
		   published[i].name, t.active / 1e9, published[i].active);
		ok(fabs(t.flops_per_token / 1e9 / published[i].flops - 1) <= 0.01,
		   "%s: %.2f GFLOP/token forward at s=%ld (published %.2f)", published[i].name,
		   t.flops_per_token / 1e9, published[i].seq, published[i].flops);
		if (strcmp(published[i].name, "deepseek-v3") == 0)
			ok(fabs(t.mtp_params / 1e9 / 11.610 - 1) <= 0.01, "deepseek-v3: MTP %.3f B (published 11.610 B)",
			   t.mtp_params / 1e9);
		if (strcmp(published[i].name, "nemotronh-8b") == 0) {
			is_int(a.nlayers, 54, "nemotronh-8b: embedding + 52 pattern layers + head");
			is_str(a.layers[8].kind, "attn", "nemotronh-8b: pattern index 7 is attention");
		}
		if (strcmp(published[i].name, "gemma3-12b") == 0) {
			ok(a.layers[6].w.window == 0 && a.layers[1].w.window == 1024,
			   "gemma3-12b: layer 5 global, layer 0 local (window 1024)");
		}
		arch_release(&a);
	}
}

static void times(void)
{
	struct hardware hw;
	struct work w;
	struct cost_opts o = { .seq = 1000, .micro_batch = 1, .tp = 1, .link_gbytes_per_s = 100 };
	struct layer_cost lc, lt;

	hardware_default(&hw);
	hw.peak_tflops = 1000;
	hw.eff_f[EFF_GEMM] = 0.5;
	hw.eff_b[EFF_GEMM] = 0.25;
	memset(&w, 0, sizeof(w));
	w.f[EFF_GEMM] = 1e9;   /* 1e12 FLOPs per microbatch */
	w.params = 1e6;
	w.act = w.act_w = 100;
	w.in = w.out = 10;
	w.tp_syncs = 1;
	cost_layer(&w, &hw, &o, &lc);
	is_dbl(lc.f_ms, 2, 1e-9, "1 TFLOP at 1000 TFLOP/s x 0.5 is 2 ms");
	is_dbl(lc.b_ms, 4, 1e-9, "its input grad costs the forward FLOPs at the backward efficiency");
	is_dbl(lc.w_ms, 4, 1e-9, "and so does its weight grad");
	is_dbl(lc.param_bytes, 2e6, 0, "bf16 weights");
	is_dbl(lc.act_bytes, 1e5, 0, "activations per microbatch");
	o.tp = 2;
	cost_layer(&w, &hw, &o, &lt);
	/* all-reduce of 1000 x 10 bytes: 2 (t-1)/t = 1 x 1e4 B at 100 GB/s = 1e-4 ms */
	is_dbl(lt.f_ms, 1 + 1e-4, 1e-9, "tp 2 halves the work and adds one all-reduce");
	is_dbl(lt.w_ms, 2, 1e-9, "W has no communication");
	is_dbl(lt.param_bytes, 1e6, 0, "tp 2 halves the weights");
	o.tp = 1;
	o.recompute = true;
	cost_layer(&w, &hw, &o, &lt);
	is_dbl(lt.b_ms, 4 + 2, 1e-9, "recompute redoes F before B");
	is_dbl(lt.act_bytes, 1e4, 0, "recompute keeps only the layer input");
}

static void arch_file(void)
{
	struct arch a;
	struct err e = ERR_INIT;
	struct arch_totals t;

	if (!ok(hfconfig_load_any(&a, tap_data("arch-tiny.json"), &e) == 0, "an octopipe.arch/1 file loads (%s)", e.msg))
		return;
	is_int(a.nlayers, 5, "pre + 3 pattern layers + post");
	is_str(a.layers[1].kind, "mamba2", "pattern expands through kinds");
	is_dbl(a.layers[1].w.f[EFF_SSD], 5e5, 0, "mamba2_ssd other FLOPs land in the SSD class");
	is_dbl(a.layers[2].w.core_per_ctx, 64000, 0, "attention core per key is kept");
	ok(a.layers[2].w.window == 16, "attn_window is kept");
	arch_totals(&a, 32, &t);
	is_dbl(t.params, 100 + 2 * 10 + 20 + 0, 0, "shared_with excludes the head from the total");
	is_dbl(t.flops_per_token, 2 * (1e6 + 5e5) + 2e6 + 64000 * cost_ctx(32, 16) + 4e6, 1e-6,
	       "FLOPs per token from the counts");
	arch_release(&a);
}

/* A profile written with known efficiencies is fitted back to them. */
static void calibration(void)
{
	struct hardware truth, hw;
	struct arch a;
	struct err e = ERR_INIT;
	struct cost_opts o = { .seq = 2048, .micro_batch = 1, .tp = 1 };
	struct calib_set s = { NULL, 0, 0, { false } };
	char path[] = "/tmp/octopipe-calib-XXXXXX";
	int fd;
	FILE *f;
	double ef, eb;

	if (!ok(hfconfig_load_any(&a, tap_data("arch-tiny.json"), &e) == 0, "calibration architecture loads"))
		return;
	hardware_default(&truth);
	truth.eff_f[EFF_GEMM] = 0.6, truth.eff_b[EFF_GEMM] = 0.5;
	truth.eff_f[EFF_SSD] = 0.2, truth.eff_b[EFF_SSD] = 0.1;
	truth.eff_f[EFF_FLASH] = 0.4, truth.eff_b[EFF_FLASH] = 0.3;
	truth.eff_f[EFF_MEMORY] = 0.7, truth.eff_b[EFF_MEMORY] = 0.8;
	fd = mkstemp(path);
	f = fdopen(fd, "w");
	fprintf(f, "{\"seq_len\": 2048, \"layers\": [");
	for (int i = 0; i < a.nlayers; i++) {
		struct layer_cost lc;

		cost_layer(&a.layers[i].w, &truth, &o, &lc);
		fprintf(f, "%s{\"f_ms\": %.17g, \"b_full_ms\": %.17g}", i ? ", " : "", lc.f_ms, lc.b_ms + lc.w_ms);
	}
	fprintf(f, "]}\n");
	fclose(f);
	hardware_default(&hw);
	ok(calibrate_add_profile(&s, &a, &hw, &o, path, &e) == 0, "the synthetic profile reads (%s)", e.msg);
	ok(calibrate_fit(&s, &hw, &e) == 0, "the fit succeeds (%s)", e.msg);
	for (int c = 0; c < EFF_NCLASS; c++) {
		if (c != EFF_GEMM && c != EFF_SSD && c != EFF_FLASH && c != EFF_MEMORY)
			continue;
		is_dbl(hw.eff_f[c], truth.eff_f[c], 2e-3 * truth.eff_f[c], "recovers %s forward efficiency",
		       hardware_class_names[c]);
		is_dbl(hw.eff_b[c], truth.eff_b[c], 2e-3 * truth.eff_b[c], "recovers %s backward efficiency",
		       hardware_class_names[c]);
	}
	calibrate_error(&s, &hw, -1, &ef, &eb);
	ok(ef < 0.1 && eb < 0.1, "and reproduces the profile (%.3f%% F, %.3f%% BW)", ef, eb);
	{
		struct hardware d;

		hardware_default(&d);
		is_dbl(hw.eff_f[EFF_GROUPED], d.eff_f[EFF_GROUPED], 1e-12, "a class the profile never uses keeps its value");
	}
	/* a held parameter keeps the cluster's value and the others absorb what it misses */
	ok(calibrate_param("launch") == HW_LAUNCH && calibrate_param("memory") == EFF_MEMORY &&
	   calibrate_param("gemm") == EFF_GEMM && calibrate_param("tensor") == -1, "parameters by name");
	hardware_default(&hw);
	hw.eff_f[EFF_MEMORY] = 0.35, hw.eff_b[EFF_MEMORY] = 0.4;
	s.fixed[EFF_MEMORY] = true;
	ok(calibrate_fit(&s, &hw, &e) == 0, "a fit with memory held");
	ok(hw.eff_f[EFF_MEMORY] == 0.35 && hw.eff_b[EFF_MEMORY] == 0.4, "holds the memory efficiency");
	ok(fabs(hw.eff_f[EFF_GEMM] - truth.eff_f[EFF_GEMM]) > 1e-3 * truth.eff_f[EFF_GEMM],
	   "and the free classes move off the truth to make up for it (gemm F %.4f)", hw.eff_f[EFF_GEMM]);
	calibrate_release(&s);
	unlink(path);
	arch_release(&a);
}

/* The kernel list: shapes per pass, and times that are its sum. */
static void kernels(void)
{
	struct block b = mk(BLK_ATTN, 8);
	struct work w;
	struct cost_opts o = { .seq = 16, .micro_batch = 1, .tp = 1 };
	struct kernel k[WORK_MAX_KERNELS];
	struct hardware hw;
	struct layer_cost lc;
	double f = 0, i = 0, wt = 0;
	int n;

	b.n_q = 2, b.n_kv = 1, b.d_h = 4;
	w = block_work(b);
	n = cost_kernels(&w, &o, PASS_F, k, WORK_MAX_KERNELS);
	is_int(n, 5, "attention forward: norm, qkv, rope, core, o_proj");
	is_str(k[1].name, "qkv", "the fused QKV projection");
	ok(k[1].m == 16 && k[1].n == 16 && k[1].k == 8, "qkv is 16 tokens x 8 in x 16 out (%g %g %g)", k[1].m, k[1].n,
	   k[1].k);
	is_dbl(k[1].flops, 2.0 * 16 * 16 * 8, 0, "qkv FLOPs 2mnk");
	is_dbl(k[1].bytes, 2.0 * (16 * 8 + 16 * 8 + 16 * 16), 0, "qkv moves X, W and Y in bf16");
	is_str(k[3].name, "attn_core", "the attention core");
	ok(k[3].cls == EFF_FLASH && k[3].launches == 1, "a fused (flash) core is one launch");
	is_dbl(k[3].flops, 16 * cost_ctx(16, 0) * 32, 0, "core FLOPs: tokens x keys x 4 n_q d_h");
	is_int(cost_kernels(&w, &o, PASS_F, k, 2), 5, "a short buffer still reports the full count");
	n = cost_kernels(&w, &o, PASS_I, k, WORK_MAX_KERNELS);
	is_int(n, 5, "input grad: the same kernels");
	is_dbl(k[3].flops, 2 * 16 * cost_ctx(16, 0) * 32, 0, "the core's backward is twice its forward");
	n = cost_kernels(&w, &o, PASS_W, k, WORK_MAX_KERNELS);
	ok(n == 2 && strcmp(k[0].name, "qkv") == 0 && strcmp(k[1].name, "o_proj") == 0,
	   "weight grad: the two GEMMs only");

	hardware_default(&hw);
	hw.launch_us_f = 5, hw.launch_us_b = 7;
	cost_layer(&w, &hw, &o, &lc);
	n = cost_kernels(&w, &o, PASS_F, k, WORK_MAX_KERNELS);
	for (int j = 0; j < n; j++)
		f += cost_kernel_ms(&k[j], &hw, PASS_F);
	n = cost_kernels(&w, &o, PASS_I, k, WORK_MAX_KERNELS);
	for (int j = 0; j < n; j++)
		i += cost_kernel_ms(&k[j], &hw, PASS_I);
	n = cost_kernels(&w, &o, PASS_W, k, WORK_MAX_KERNELS);
	for (int j = 0; j < n; j++)
		wt += cost_kernel_ms(&k[j], &hw, PASS_W);
	is_dbl(lc.f_ms, f, 1e-12, "F is the sum of its kernels");
	is_dbl(lc.b_ms, i, 1e-12, "B is the sum of its kernels");
	is_dbl(lc.w_ms, wt, 1e-12, "W is the sum of its kernels");
	ok(lc.f_ms > 6 * 5e-3, "every launch costs its overhead (%g ms for 6 launches)", lc.f_ms);

	/* a small GEMM runs below its class's efficiency: a roofline in its arithmetic intensity */
	{
		struct kernel big = { .cls = EFF_GEMM, .name = "big", .m = 4096, .n = 4096, .k = 4096, .groups = 1,
		                      .flops = 2.0 * 4096 * 4096 * 4096, .bytes = 2.0 * 3 * 4096 * 4096 };
		struct kernel thin = { .cls = EFF_GEMM, .name = "thin", .m = 16, .n = 4096, .k = 4096, .groups = 1,
		                       .flops = 2.0 * 16 * 4096 * 4096, .bytes = 2.0 * (16 * 4096 * 2 + 4096.0 * 4096) };
		double eb = big.flops / (hw.peak_tflops * 1e9) / cost_kernel_ms(&big, &hw, PASS_F);
		double et = thin.flops / (hw.peak_tflops * 1e9) / cost_kernel_ms(&thin, &hw, PASS_F);

		double ridge = hw.peak_tflops * 1e12 / (hw.hbm_gbytes_per_s * 1e9), ib = big.flops / big.bytes;

		is_dbl(eb, hw.eff_f[EFF_GEMM] * ib / (ib + ridge), 1e-9,
		       "a GEMM runs at e x I / (I + I0): a 4096-cube one at %.3f of peak", eb);
		ok(et < 0.1 * hw.eff_f[EFF_GEMM], "a 16-row one far below its class (%.3f)", et);
	}
}

/* The kernel list by block kind: MoE experts, the backward's launches, gpt-oss's clamped
 * SwiGLU, eager attention and sinks, the loss, an architecture file's pseudo-kernels. */
static void kernels_by_kind(void)
{
	struct block b;
	struct work w;
	struct cost_opts o = { .seq = 16, .micro_batch = 1, .tp = 1 };
	struct kernel k[WORK_MAX_KERNELS];
	int n;

	/* MoE: one GEMM per expert, top-k rows per token */
	b = mk(BLK_MOE, 64);
	b.f = 32, b.gated = true, b.experts = 8, b.top_k = 2;
	w = block_work(b);
	o.seq = 64;
	n = cost_kernels(&w, &o, PASS_F, k, WORK_MAX_KERNELS);
	for (int j = 0; j < n; j++)
		if (strcmp(k[j].name, "experts.up") == 0) {
			ok(k[j].cls == EFF_GROUPED && k[j].groups == 8 && k[j].m == 64.0 * 2 / 8 && k[j].launches == 8,
			   "routed experts: 8 GEMMs of 16 rows, one launch each");
			is_dbl(k[j].flops, 2.0 * 64 * 2 * 64 * 64, 0, "their FLOPs count the top-k copies once");
		} else if (strcmp(k[j].name, "experts.act") == 0) {
			ok(k[j].launches == 16 && k[j].bytes == 64.0 * 2 * 6 * 32,
			   "a SwiGLU: 6 bytes per copy and feature, 2 launches per expert");
		}
	/* the backward of a kernel that is not a GEMM launches twice its forward's kernels */
	{
		struct kernel kf[WORK_MAX_KERNELS], ki[WORK_MAX_KERNELS];
		int nf = cost_kernels(&w, &o, PASS_F, kf, WORK_MAX_KERNELS), bad = 0;

		is_int(cost_kernels(&w, &o, PASS_I, ki, WORK_MAX_KERNELS), nf, "I has F's kernels");
		for (int j = 0; j < nf; j++)
			bad += ki[j].launches != (kf[j].m > 0 ? kf[j].launches : 2 * kf[j].launches);
		is_int(bad, 0, "dX is one launch per GEMM, other kernels launch twice in the backward");
	}
	/* gpt-oss's clamped SwiGLU: eight elementwise kernels over the up-projection's output */
	b.clamped = true, b.bias = true;
	w = block_work(b);
	n = cost_kernels(&w, &o, PASS_F, k, WORK_MAX_KERNELS);
	for (int j = 0; j < n; j++)
		if (strcmp(k[j].name, "experts.act") == 0)
			ok(k[j].launches == 64 && k[j].bytes == 64.0 * 2 * 40 * 32,
			   "a clamped SwiGLU: 40 bytes per copy and feature, 8 launches per expert");

	/* eager attention materializes the scores: bytes per attended key */
	b = mk(BLK_ATTN, 8);
	b.n_q = 2, b.n_kv = 1, b.d_h = 4, b.eager = true;
	w = block_work(b);
	o.seq = 16;
	n = cost_kernels(&w, &o, PASS_F, k, WORK_MAX_KERNELS);
	is_int(n, 6, "eager attention: the core is two kernels");
	ok(w.core_class == EFF_EAGER && strcmp(k[3].name, "attn_core.bmm") == 0 && k[3].cls == EFF_GEMM &&
	   k[3].launches == 2 && k[3].flops == 16 * cost_ctx(16, 0) * 32 && k[3].bytes == 0,
	   "QK^T and PV: two batched GEMMs at the GEMM efficiency (%g FLOPs)", k[3].flops);
	ok(strcmp(k[4].name, "attn_core.scores") == 0 && k[4].cls == EFF_MEMORY && k[4].flops == 0 &&
	   k[4].bytes == 16 * cost_ctx(16, 0) * 2 * 24.0,
	   "the score passes: 24 bytes per score at the memory efficiency (%g)", k[4].bytes);
	b.sinks = true;
	w = block_work(b);
	cost_kernels(&w, &o, PASS_F, k, WORK_MAX_KERNELS);
	is_dbl(k[4].bytes, 16 * cost_ctx(16, 0) * 2 * 36.0, 0, "sink logits: 36 bytes per score");
	n = cost_kernels(&w, &o, PASS_W, k, WORK_MAX_KERNELS);
	ok(n == 2 && strcmp(k[0].name, "qkv") == 0 && strcmp(k[1].name, "o_proj") == 0,
	   "the batched score GEMMs have no weight gradient");

	/* the loss's backward moves 22 bytes per vocabulary entry against the forward's 16 */
	b = mk(BLK_HEAD, 8);
	b.vocab = 100;
	w = block_work(b);
	n = cost_kernels(&w, &o, PASS_F, k, WORK_MAX_KERNELS);
	ok(n == 3 && strcmp(k[2].name, "loss") == 0 && k[2].bytes == 16.0 * 16 * 100, "loss forward: 16 bytes per logit");
	cost_kernels(&w, &o, PASS_I, k, WORK_MAX_KERNELS);
	is_dbl(k[2].bytes, 22.0 * 16 * 100, 0.01, "loss backward: 22 bytes per logit");
	is_dbl(k[0].bytes, 2 * 4.0 * 16 * 8, 0, "a norm's backward stays twice its forward");
	b.softcap = true;
	w = block_work(b);
	cost_kernels(&w, &o, PASS_I, k, WORK_MAX_KERNELS);
	is_dbl(k[2].bytes, (22.0 + 16) * 16 * 100, 0.01, "soft-capping adds twice its forward");

	/* an architecture file's layer has no shapes: one pseudo-kernel per class, no launch */
	memset(&w, 0, sizeof(w));
	w.f[EFF_GEMM] = 10;
	w.f[EFF_MEMORY] = 4;
	n = cost_kernels(&w, &o, PASS_F, k, WORK_MAX_KERNELS);
	ok(n == 2 && k[0].flops == 160 && k[1].bytes == 64 && k[0].launches == 0, "pseudo-kernels per class");
}

/* The hardware section's launch overhead: written, read back, optional in old files. */
static void hardware_json(void)
{
	struct hardware hw, back;
	struct err e = ERR_INIT;
	cJSON *j;

	hardware_default(&hw);
	hw.launch_us_f = 3.5, hw.launch_us_b = 4.5;
	hw.eff_given = true;
	j = hardware_to_json(&hw);
	ok(j && hardware_from_json(&back, j, "c.json", NULL, "hardware", &e) == 0, "a hardware section reads back");
	is_dbl(back.launch_us_f, 3.5, 0, "forward launch overhead");
	is_dbl(back.launch_us_b, 4.5, 0, "backward launch overhead");
	hardware_release(&back);
	cJSON_DeleteItemFromObject(j, "launch_us");
	ok(hardware_from_json(&back, j, "c.json", NULL, "hardware", &e) == 0, "a section without launch_us loads");
	hardware_default(&hw);
	is_dbl(back.launch_us_f, hw.launch_us_f, 0, "with the default overhead");
	hardware_release(&back);
	cJSON_AddItemToObject(j, "launch_us", cJSON_CreateString("fast"));
	ok(hardware_from_json(&back, j, "c.json", NULL, "hardware", &e) < 0 &&
	   strstr(e.msg, "c.json: hardware.launch_us: must be an object") != NULL, "a bad launch_us is named (%s)", e.msg);
	hardware_release(&back);
	cJSON_Delete(j);
}

int main(void)
{
	hand_cases();
	facts_blocks();
	totals();
	times();
	arch_file();
	calibration();
	kernels();
	kernels_by_kind();
	hardware_json();
	return tap_done();
}
