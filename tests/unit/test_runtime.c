/*
 * Runtime profiles: the bundled files load, hf-eager is today's fit, bad files are named
 * at their path, and every choice a runtime makes changes the kernel list or its price as
 * the runtime's code does: fused or eager attention (sinks, dropout), grouped or looped
 * experts, expert-parallel shapes, the loss's bytes, asynchronous launches, overlapped
 * TP collectives, what selective recompute redoes; and the MoE layer's TP traffic.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "json.h"
#include "runtime.h"
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

static void load_bundled(struct runtime *rt, const char *name)
{
	const char *top = getenv("top_srcdir");
	char path[4096];
	struct err e = ERR_INIT;

	snprintf(path, sizeof(path), "%s/samples/runtimes/%s.json", top ? top : ".", name);
	ok(runtime_load(rt, path, &e) == 0, "%s loads (%s)", name, e.msg);
}

static void bundled(void)
{
	struct runtime hf, mc, tt;
	struct hardware def, hw;
	double worst = 0;

	load_bundled(&hf, "hf-eager");
	load_bundled(&mc, "megatron-core");
	load_bundled(&tt, "torchtitan");
	hardware_default(&def);
	hw = def;
	runtime_hardware(&hf, "H200", &hw);
	for (int c = 0; c < EFF_NCLASS; c++)
		worst = fmax(worst, fmax(fabs(hw.eff_f[c] - def.eff_f[c]), fabs(hw.eff_b[c] - def.eff_b[c])));
	is_dbl(worst, 0, 0, "hf-eager is the profiles' fit, the built-in defaults");
	ok(!hw.launch_async && hw.launch_us_f == 14.3, "with serial launches of 14.3 us");
	ok(hf.style.attention == COST_ATTN_HF && hf.style.experts == COST_EXPERTS_LOOP && hf.style.loss_f_bytes == 0,
	   "Hugging Face's kernels: attention as the model asks, an expert loop, PyTorch's loss");
	ok(mc.style.attention == COST_ATTN_FUSED && mc.style.experts == COST_EXPERTS_GROUPED && mc.style.tp_overlap &&
	   mc.launch_async, "Megatron-Core: fused attention, grouped GEMM, overlapped TP, async launches");
	ok(tt.style.selective == COST_SEL_OPS, "torchtitan: op-level selective checkpointing");
	hw = def;
	runtime_hardware(&mc, "A100-SXM-80GB", &hw);
	ok(hw.eff_f[EFF_GEMM] == 0.80 && hw.eff_f[EFF_MEMORY] == mc.eff_f[EFF_MEMORY] && hw.peak_tflops == def.peak_tflops,
	   "a GPU model's efficiencies override the runtime's, the rest stay, the peak is the cluster's");
	runtime_release(&hf);
	runtime_release(&mc);
	runtime_release(&tt);
}

static int parse(struct runtime *rt, const char *text, struct err *e)
{
	cJSON *root = json_parse(text, strlen(text), "r.json", e);
	int r;

	if (!root)
		return -1;
	r = runtime_from_json(rt, root, "r.json", e);
	cJSON_Delete(root);
	return r;
}

#define EFFS "\"efficiency\":{\"gemm\":{\"f\":0.7,\"b\":0.7},\"grouped_gemm\":{\"f\":0.5,\"b\":0.5}," \
	"\"flash_attn\":{\"f\":0.5,\"b\":0.4},\"eager_attn\":{\"f\":0.2,\"b\":0.2},\"ssd\":{\"f\":0.1,\"b\":0.1}," \
	"\"scan\":{\"f\":0.1,\"b\":0.1},\"memory\":{\"f\":0.8,\"b\":0.8}}"

static void bad_files(void)
{
	struct runtime rt;
	struct err e = ERR_INIT;

	ok(parse(&rt, "{\"format\":\"octopipe.runtime/1\",\"name\":\"x\",\"kernels\":{\"launch_us\":5}," EFFS "}", &e) == 0,
	   "a minimal runtime loads (%s)", e.msg);
	runtime_release(&rt);
	ok(parse(&rt, "{\"format\":\"octopipe.runtime/1\",\"name\":\"x\",\"kernels\":{\"launch_us\":5},"
	              "\"efficiency\":{\"gemm\":{\"f\":0.7,\"b\":0.7}}}", &e) < 0 && strstr(e.msg, "efficiency") &&
	   strstr(e.msg, "grouped_gemm"), "a class without an efficiency is named: %s", e.msg);
	ok(parse(&rt, "{\"format\":\"octopipe.runtime/1\",\"name\":\"x\",\"kernels\":{\"launch_us\":5,"
	              "\"attention\":\"magic\"}," EFFS "}", &e) < 0 && strstr(e.msg, "kernels.attention: 'magic'"),
	   "an unknown attention kernel is named: %s", e.msg);
	ok(parse(&rt, "{\"format\":\"octopipe.runtime/1\",\"name\":\"x\",\"kernels\":{\"launch_us\":5,"
	              "\"loss\":{\"f_bytes\":8}}," EFFS "}", &e) < 0 && strstr(e.msg, "kernels.loss.b_bytes"),
	   "a loss without its backward bytes is named: %s", e.msg);
	ok(parse(&rt, "{\"format\":\"octopipe.model/1\",\"name\":\"x\"}", &e) < 0 && strstr(e.msg, "format"),
	   "another format is refused: %s", e.msg);
	ok(parse(&rt, "{\"format\":\"octopipe.runtime/1\",\"name\":\"x\",\"kernels\":{\"launch_us\":5}," EFFS
	              ",\"gpus\":{\"A100\":{\"efficiency\":{\"gemm\":{\"f\":2,\"b\":0.5}}}}}", &e) < 0 &&
	   strstr(e.msg, "gpus.A100.efficiency.gemm.f"), "an efficiency above 1 is named at its path: %s", e.msg);
}

static int count(const struct kernel *k, int n, const char *name)
{
	int c = 0;

	for (int i = 0; i < n; i++)
		c += k[i].name && strcmp(k[i].name, name) == 0;
	return c;
}

static void kernel_choices(void)
{
	struct block b = mk(BLK_ATTN, 64);
	struct cost_opts o = { .seq = 16, .micro_batch = 1, .tp = 1 };
	struct kernel k[2 * WORK_MAX_KERNELS];
	struct work w;
	int n;

	/* learned sinks: Hugging Face runs the eager class, Megatron-Core (TE) a fused kernel */
	b.n_q = b.n_kv = 4, b.d_h = 16, b.sinks = true;
	w = block_work(b);
	n = cost_kernels(&w, &o, PASS_F, k, 2 * WORK_MAX_KERNELS);
	ok(count(k, n, "attn_core.bmm") == 1 && count(k, n, "attn_core.scores") == 1, "sinks under HF: eager GEMMs and passes");
	o.style.attention = COST_ATTN_FUSED;
	n = cost_kernels(&w, &o, PASS_F, k, 2 * WORK_MAX_KERNELS);
	ok(count(k, n, "attn_core") == 1 && count(k, n, "attn_core.scores") == 0, "sinks fused: one flash kernel");
	o.style.attention = COST_ATTN_EAGER;
	b.sinks = false;
	w = block_work(b);
	n = cost_kernels(&w, &o, PASS_F, k, 2 * WORK_MAX_KERNELS);
	ok(count(k, n, "attn_core.bmm") == 1, "an eager runtime materializes the scores of any model");

	/* experts: a loop launches each of E, a grouped GEMM once; EP: E / ep groups of ep x rows */
	memset(&o, 0, sizeof(o));
	o.seq = 64, o.micro_batch = 1, o.tp = 1;
	b = mk(BLK_MOE, 32);
	b.f = 16, b.gated = true, b.experts = 8, b.top_k = 2;
	w = block_work(b);
	n = cost_kernels(&w, &o, PASS_F, k, 2 * WORK_MAX_KERNELS);
	for (int i = 0; i < n; i++)
		if (strcmp(k[i].name, "experts.up") == 0)
			ok(k[i].launches == 8 && k[i].groups == 8 && k[i].m == 64 * 2 / 8, "loop: 8 launches of 16 rows");
	o.style.experts = COST_EXPERTS_GROUPED;
	o.ep = 4;
	n = cost_kernels(&w, &o, PASS_F, k, 2 * WORK_MAX_KERNELS);
	for (int i = 0; i < n; i++)
		if (strcmp(k[i].name, "experts.up") == 0) {
			ok(k[i].launches == 1 && k[i].groups == 2 && k[i].m == 64 * 2 / 2,
			   "grouped at ep 4: one launch, 2 experts of 64 rows each");
			is_dbl(k[i].flops, 2.0 * 64 * 2 * 32 * 32, 0, "the same FLOPs as at ep 1");
		}
	o.style.experts = COST_EXPERTS_LOOP;
	n = cost_kernels(&w, &o, PASS_F, k, 2 * WORK_MAX_KERNELS);
	for (int i = 0; i < n; i++)
		if (strcmp(k[i].name, "experts.up") == 0)
			ok(k[i].launches == 2, "a loop at ep 4 launches its 2 experts");

	/* the loss: the runtime's own bytes per vocabulary entry */
	memset(&o, 0, sizeof(o));
	o.seq = 16, o.micro_batch = 1, o.tp = 1;
	b = mk(BLK_HEAD, 8);
	b.vocab = 100;
	w = block_work(b);
	o.style.loss_f_bytes = 38, o.style.loss_b_bytes = 14, o.style.loss_launches = 6;
	n = cost_kernels(&w, &o, PASS_F, k, 2 * WORK_MAX_KERNELS);
	is_dbl(k[n - 1].bytes, 38.0 * 16 * 100, 0, "Megatron's unfused vocab-parallel loss: 38 bytes a logit");
	n = cost_kernels(&w, &o, PASS_I, k, 2 * WORK_MAX_KERNELS);
	is_dbl(k[n - 1].bytes, 14.0 * 16 * 100, 0, "and 14 in its backward");
}

static void pricing(void)
{
	struct hardware hw;
	struct kernel k;
	struct block b = mk(BLK_MLP, 1024);
	struct cost_opts o = { .seq = 4096, .micro_batch = 1, .tp = 4, .link_gbytes_per_s = 1000 };
	struct layer_cost plain, over, ref;
	double sync;

	/* asynchronous launches: the larger of the work and the launches, not their sum */
	hardware_default(&hw);
	memset(&k, 0, sizeof(k));
	k.cls = EFF_MEMORY, k.bytes = 1e3, k.launches = 1, k.groups = 1;
	hw.launch_async = true;
	is_dbl(cost_kernel_ms(&k, &hw, PASS_F), hw.launch_us_f * 1e-3, 1e-12, "a tiny kernel costs its launch");
	k.bytes = 1e10;
	is_dbl(cost_kernel_ms(&k, &hw, PASS_F), 1e10 / (hw.hbm_gbytes_per_s * 1e9) / hw.eff_f[EFF_MEMORY] * 1e3, 1e-9,
	       "a large one its work alone");
	hw.launch_async = false;
	is_dbl(cost_kernel_ms(&k, &hw, PASS_F),
	       1e10 / (hw.hbm_gbytes_per_s * 1e9) / hw.eff_f[EFF_MEMORY] * 1e3 + hw.launch_us_f * 1e-3, 1e-9,
	       "serial launches add");

	/* TP collectives overlapped with the GEMMs: only what they cannot cover, at least 1/T */
	b.f = 4096, b.gated = true;
	{
		struct work w = block_work(b);
		struct cost_opts nc = o;

		nc.no_comm = true;
		cost_layer(&w, &hw, &nc, &ref);
		cost_layer(&w, &hw, &o, &plain);
		o.style.tp_overlap = true;
		cost_layer(&w, &hw, &o, &over);
		sync = plain.f_ms - ref.f_ms;
		ok(sync > 0, "tp 4 adds an all-reduce to F (%.3f ms)", sync);
		is_dbl(over.f_ms - ref.f_ms, sync / 4, 1e-9, "overlapped: a quarter of it stays exposed (the GEMMs cover it)");
	}
	/* a MoE layer moves one all-reduce of the hidden state over the TP group, as a dense one */
	{
		struct block m = mk(BLK_MOE, 1024), d = mk(BLK_MLP, 1024);
		struct work wm, wd;
		struct layer_cost cm, cmn, cd, cdn;
		struct cost_opts nc = o;

		m.f = 512, m.gated = true, m.experts = 8, m.top_k = 2;
		d.f = 512, d.gated = true;
		wm = block_work(m);
		wd = block_work(d);
		o.style.tp_overlap = false;
		nc = o;
		nc.no_comm = true;
		cost_layer(&wm, &hw, &o, &cm);
		cost_layer(&wm, &hw, &nc, &cmn);
		cost_layer(&wd, &hw, &o, &cd);
		cost_layer(&wd, &hw, &nc, &cdn);
		is_dbl(cm.f_ms - cmn.f_ms, cd.f_ms - cdn.f_ms, 1e-12,
		       "MoE at ep 1 and tp 4: the dispatcher's TP traffic is a dense layer's all-reduce");
	}
}

static void dropout_and_selective(void)
{
	struct block b = mk(BLK_ATTN, 64);
	struct cost_opts o = { .seq = 1024, .micro_batch = 1, .tp = 1 };
	struct hardware hw;
	struct layer_cost with, without;
	struct work w0, w1;

	hardware_default(&hw);
	hw.launch_us_f = hw.launch_us_b = 0;   /* the kernels' work alone */
	b.n_q = b.n_kv = 4, b.d_h = 16;
	o.style.attention = COST_ATTN_FUSED;
	w0 = block_work(b);
	b.attn_dropout = 0.1, b.hidden_dropout = 0.1;
	w1 = block_work(b);
	hw.flash_dropout_f = hw.eff_f[EFF_FLASH] / 2;
	hw.flash_dropout_b = hw.eff_b[EFF_FLASH] / 2;
	cost_layer(&w0, &hw, &o, &without);
	cost_layer(&w1, &hw, &o, &with);
	is_dbl(with.core_f_ms, 2 * without.core_f_ms, 1e-9, "a fused core with dropout runs at the dropout efficiency");
	is_dbl(with.act_bytes - without.act_bytes, 1024.0 * 64, 0.5, "the residual dropout keeps a byte an element");
	/* selective recompute: Megatron redoes the core (a fused one keeps no scores to drop);
	 * torchtitan's op-level policy drops all but every other GEMM's output */
	ok(without.core_act_bytes == 0 && without.core_f_ms > 0, "Megatron's selective: a fused core, nothing to drop");
	o.style.selective = COST_SEL_OPS;
	cost_layer(&w0, &hw, &o, &with);
	ok(with.core_act_bytes > 0 && with.core_act_bytes < with.act_bytes && with.core_f_ms > without.core_f_ms,
	   "op-level selective: drops part of the activations and redoes elementwise work and half the GEMMs");
}

int main(void)
{
	bundled();
	bad_files();
	kernel_choices();
	pricing();
	dropout_and_selective();
	return tap_done();
}
