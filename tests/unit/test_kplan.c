/*
 * test_kplan — the cuda backend's kernel plan, without a GPU: a proxy's golden shape from
 * the closed form (columns n = FLOPs / 2mk, split into repetitions of at most
 * KPLAN_NCOLS_MAX, rounded up to 8), its FLOPs never short of the op's and at most a
 * rounding over, and its bytes those of its bf16 operands and result. With the
 * architecture, an op's kernels are its layers' cost-model kernels: forward FLOPs equal
 * the per-token count times the tokens, a linear layer's weight gradient does its
 * forward's FLOPs, every GEMM's FLOPs are 2mnk per group, and the kernels' times add up
 * to the layer table's F, I and W times: the executor launches what the prediction priced.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "baseline.h"
#include "exec/kmask.h"
#include "exec/kvisit.h"
#include "exec/kplan.h"
#include "hfconfig.h"
#include "synth.h"
#include "../tap.h"

#define KMAX 4096

/* One architecture through the kernel plan of a balanced 4-stage ZB-H1 plan. */
static void check_arch(const char *name)
{
	const char *top = getenv("top_srcdir");
	char path[4096];
	struct arch a;
	struct model m;
	struct cluster c;
	struct plan p;
	struct hardware hw;
	struct err e = ERR_INIT;
	struct cost_opts o = { .seq = 4096, .micro_batch = 1, .tp = 1 };
	struct baseline_spec spec = { SCHED_ZBH1, 8, 0, "balanced", NULL, 0, 0, NULL };
	struct work *works;
	struct kernel *ks = malloc(KMAX * sizeof(*ks));
	double tok = 4096, worst = 0;
	int bad_flops = 0, bad_gemm = 0, bad_w = 0, bad_launch = 0, n;

	snprintf(path, sizeof(path), "%s/samples/architectures/%s.json", top ? top : ABS_TOP_SRCDIR, name);
	hardware_default(&hw);
	if (!ok(hfconfig_load_any(&a, path, &e) == 0 && arch_to_model(&a, &hw, &o, name, &m, &e) == 0,
	        "%s: architecture and layer table (%s)", name, e.msg)) {
		free(ks);
		return;
	}
	m.seq_len = 4096;
	m.micro_batch_size = 1;
	synth_cluster(&c, 4, 4, 450, 5);
	c.hw = hw;
	c.op_overhead_us = 0;
	works = calloc((size_t)a.nlayers, sizeof(*works));
	for (int l = 0; l < a.nlayers; l++)
		works[l] = a.layers[l].w;
	if (!ok(baseline_plan(&p, &m, NULL, &c, NULL, &spec, &e) == 0, "%s: a 4-stage plan (%s)", name, e.msg))
		goto out;
	for (int s = 0; s < p.nstages; s++) {
		double fl = 0, want = 0, gemm_f = 0, gemm_w = 0, ms[3] = { 0, 0, 0 }, table[3] = { 0, 0, 0 };

		for (int l = p.stages[s].first; l <= p.stages[s].last; l++) {
			want += cost_flops(&works[l], 4096) * tok;
			table[0] += m.layers[l].f_ms;
			table[1] += m.layers[l].b_ms;
			table[2] += m.layers[l].w_ms;
		}
		for (int k = 0; k < 3; k++) {
			n = kplan_kernels(&p, works, &o, 0, s, k, ks, KMAX);
			if (n > KMAX) {
				bad_flops++;
				continue;
			}
			for (int i = 0; i < n; i++) {
				ms[k] += cost_kernel_ms(&ks[i], &hw, k == 0 ? PASS_F : k == 1 ? PASS_I : PASS_W);
				if (ks[i].m > 0)
					bad_gemm += fabs(ks[i].flops - 2 * ks[i].m * ks[i].n * ks[i].k * ks[i].groups) > 1e-6 * ks[i].flops;
				/* the backend launches what the cost model charges (a core aside: kplan.h) */
				if (!(ks[i].heads > 0 && ks[i].flops > 0))
					bad_launch += kplan_launches(&ks[i], k == 0 ? PASS_F : k == 1 ? PASS_I : PASS_W) !=
					              (ks[i].launches > 0 ? ks[i].launches : 1);
				if (k == 0)
					fl += ks[i].flops;
				if (ks[i].m > 0 && k == 0)
					gemm_f += ks[i].flops;
				if (ks[i].m > 0 && k == 2)
					gemm_w += ks[i].flops;
			}
		}
		bad_flops += fabs(fl - want) > 1e-9 * want;
		bad_w += fabs(gemm_f - gemm_w) > 1e-9 * gemm_f;
		for (int k = 0; k < 3; k++)
			if (table[k] > 0)
				worst = fmax(worst, fabs(ms[k] - table[k]) / table[k]);
	}
	is_int(bad_flops, 0, "%s: every stage's forward kernels do the per-token FLOPs times the tokens", name);
	is_int(bad_gemm, 0, "%s: every GEMM does 2mnk FLOPs per group", name);
	is_int(bad_w, 0, "%s: the weight gradients' GEMMs do their forwards' FLOPs", name);
	is_int(bad_launch, 0, "%s: every kernel but the attention cores launches as often as it is charged", name);
	/* the table keeps its times rounded to a nanosecond */
	ok(worst < 1e-6, "%s: the kernels' times add up to the layer table's F, I, W (worst %.2g)", name, worst);
	plan_release(&p);
out:
	free(works);
	free(ks);
	model_release(&m);
	cluster_release(&c);
	arch_release(&a);
}

/* The attention cores of an architecture as the cuda backend launches them: each core's
 * heads and head dimensions account for its FLOPs exactly (2 heads (d_qk + d_v) per key
 * attended), its query blocks cover the sequence once, each attending to the keys up to
 * its last query (from the window of its first), and the blocks' GEMMs do the core's
 * FLOPs plus at most a block's worth of masked work per query. */
static void check_cores(const char *name)
{
	char path[4096];
	const char *top = getenv("top_srcdir");
	struct arch a;
	struct err e = ERR_INIT;
	struct cost_opts o = { .seq = 4096, .micro_batch = 2, .tp = 1 };
	struct kernel ks[KMAX];
	int cores = 0, bad_shape = 0, bad_tiles = 0, bad_flops = 0, bad_bwd = 0, windowed = 0, bad_mask = 0;
	double worst = 0;

	snprintf(path, sizeof(path), "%s/samples/architectures/%s.json", top ? top : ABS_TOP_SRCDIR, name);
	if (!ok(hfconfig_load_any(&a, path, &e) == 0, "%s: loads (%s)", name, e.msg))
		return;
	for (int l = 0; l < a.nlayers; l++) {
		int n = cost_kernels(&a.layers[l].w, &o, PASS_F, ks, KMAX);
		struct kernel ki[KMAX];
		int ni = cost_kernels(&a.layers[l].w, &o, PASS_I, ki, KMAX);

		for (int i = 0; i < n && i < KMAX; i++) {
			const struct kernel *x = &ks[i];
			struct kplan_tile t[KPLAN_CORE_TILES];
			double want, got, ctx = cost_ctx(x->seq, x->window);
			long next = 0, block = kplan_core_block(x);
			int nt;

			if (x->heads <= 0)
				continue;
			cores++;
			windowed += x->window > 0;
			want = 2.0 * x->heads * (x->d_qk + x->d_v) * ctx * x->seq * x->seqs;
			bad_shape += x->seqs != 2 || x->seq != 4096 || fabs(x->flops - want) > 1e-6 * want;
			nt = kplan_core_tiles(x, t);
			for (int j = 0; j < nt; j++) {
				long k0 = x->window > 0 && t[j].q0 - x->window + 1 > 0 ? t[j].q0 - x->window + 1 : 0;

				bad_tiles += t[j].q0 != next || t[j].rows < 1 || t[j].rows > block || t[j].k0 != k0 ||
				             t[j].k0 + t[j].keys != t[j].q0 + t[j].rows;
				next = t[j].q0 + t[j].rows;
			}
			bad_tiles += next != x->seq || nt > KPLAN_CORE_TILES || block % 64 != 0;
			{
				/* every query attends to min(q + 1, window) keys, each in exactly one block */
				double want_keys = 0, got_keys = 0;

				for (long q = 0; q < x->seq; q++)
					want_keys += x->window > 0 && x->window < q + 1 ? x->window : q + 1;
				for (int j = 0; j < nt; j++)
					for (long q = t[j].q0; q < t[j].q0 + t[j].rows; q++) {
						long lo, hi;

						kmask_row(q, t[j].k0, t[j].keys, x->window, &lo, &hi);
						bad_mask += hi <= lo || lo < 0 || hi > t[j].keys;
						got_keys += (double)(hi - lo);
					}
				bad_mask += got_keys != want_keys;
			}
			got = kplan_core_gemm_flops(x);
			bad_flops += got < x->flops * (1 - 1e-9) || got > x->flops * (1 + block / ctx);
			worst = fmax(worst, got / x->flops - 1);
			/* the I pass's core is the same core at twice the work */
			for (int j = 0; j < ni && j < KMAX; j++)
				if (strcmp(ki[j].name, x->name) == 0)
					bad_bwd += ki[j].heads != x->heads || fabs(ki[j].flops - 2 * x->flops) > 1e-6 * x->flops;
		}
	}
	ok(cores > 0, "%s: %d attention cores (%d windowed)", name, cores, windowed);
	is_int(bad_mask, 0, "%s: the softmax's mask (kmask_row) gives every query its keys, once: s(s+1)/2 causal, "
	       "min(q+1, window) windowed", name);
	is_int(bad_shape, 0, "%s: every core's heads and head dims account for its FLOPs", name);
	is_int(bad_tiles, 0, "%s: query blocks cover the sequence, each attending up to its last query", name);
	is_int(bad_flops, 0, "%s: the blocks' GEMMs do the core's FLOPs and at most a block over (worst +%.1f%%)", name,
	       100 * worst);
	is_int(bad_bwd, 0, "%s: the input grad's core has the same shape and twice the FLOPs", name);
	arch_release(&a);
}

/* The mode of a plan's ops, from its model file: a model made by octopipe cost runs its
 * architecture (every stage's forward kernels doing the per-token FLOPs of its layers),
 * --fit and profile-only models run fitted proxies, the latter saying why. */
static void check_choose(void)
{
	const char *top = getenv("top_srcdir");
	char path[4096];
	const char *models[2] = { "gemma3-12b", "gpt-13b" };

	for (int i = 0; i < 2; i++) {
		struct model m;
		struct cluster c;
		struct plan p;
		struct err e = ERR_INIT;
		struct baseline_spec spec = { SCHED_1F1B, 4, 0, "balanced", NULL, 0, 0, NULL };
		struct work *works = NULL;
		struct cost_opts o;
		enum kplan_mode mode;
		const char *why;
		struct kernel *ks = malloc(KMAX * sizeof(*ks));
		int bad = 0;

		snprintf(path, sizeof(path), "%s/samples/models/%s.json", top ? top : ABS_TOP_SRCDIR, models[i]);
		if (!ok(model_load(&m, path, &e) == 0, "%s: the model loads (%s)", models[i], e.msg)) {
			free(ks);
			continue;
		}
		synth_cluster(&c, 4, 4, 450, 5);
		if (!ok(baseline_plan(&p, &m, NULL, &c, NULL, &spec, &e) == 0, "%s: a 4-stage plan (%s)", models[i], e.msg))
			goto next;
		is_int(kplan_choose(&p, true, &mode, &works, &o, &why, &e), 0, "%s: --fit chooses", models[i]);
		ok(mode == KPLAN_FITTED && !works && !why, "%s: --fit: fitted proxies, no excuse needed", models[i]);
		is_int(kplan_choose(&p, false, &mode, &works, &o, &why, &e), 0, "%s: the default chooses", models[i]);
		if (i == 1) {
			ok(mode == KPLAN_FITTED && !works && why && strstr(why, "no architecture"),
			   "%s (profile-only): fitted, saying why (%s)", models[i], why ? why : "-");
			plan_release(&p);
			goto next;
		}
		ok(mode == KPLAN_ARCHITECTURE && works && !why && o.seq == m.seq_len && o.tp == 1,
		   "%s (made by octopipe cost): architecture kernels at its sequence (%ld)", models[i], o.seq);
		is_str(kplan_mode_name(mode), "architecture", "named \"architecture\"");
		for (int s = 0; works && s < p.nstages; s++) {
			double fl = 0, want = 0;
			int n = kplan_kernels(&p, works, &o, 0, s, 0, ks, KMAX);

			for (int l = p.stages[s].first; l <= p.stages[s].last; l++)
				want += cost_flops(&works[l], o.seq) * (double)o.seq * (double)o.micro_batch;
			for (int k = 0; k < n && k < KMAX; k++)
				fl += ks[k].flops;
			bad += n > KMAX || fabs(fl - want) > 1e-9 * want;
		}
		is_int(bad, 0, "%s: every stage's forward kernels do its layers' FLOPs per token times the tokens", models[i]);
		free(works);
		plan_release(&p);
next:
		free(ks);
		cluster_release(&c);
		model_release(&m);
	}
}

/* Every cuBLAS call the backend plans for an architecture's kernels (kplan_calls: GEMMs
 * per group, cores per block, SSDs) has leading dimensions of a multiple of 8 bf16
 * elements, and the windowed blocks whose keys are not (rows + window - 1) are there. */
static void check_lds(const char *name, int ep)
{
	char path[4096];
	const char *top = getenv("top_srcdir");
	struct arch a;
	struct err e = ERR_INIT;
	struct cost_opts o = { .seq = 4096, .micro_batch = 2, .tp = 1, .ep = ep };
	struct kernel ks[KMAX];
	static struct kplan_call calls[1 << 14];
	long ncalls = 0, bad = 0, odd_keys = 0, bad_rows = 0;

	snprintf(path, sizeof(path), "%s/samples/architectures/%s.json", top ? top : ABS_TOP_SRCDIR, name);
	if (!ok(hfconfig_load_any(&a, path, &e) == 0, "%s: loads (%s)", name, e.msg))
		return;
	for (int l = 0; l < a.nlayers; l++)
		for (int p = 0; p < 3; p++) {
			int n = cost_kernels(&a.layers[l].w, &o, (enum kernel_pass)p, ks, KMAX);

			for (int i = 0; i < n && i < KMAX; i++) {
				int nc = kplan_calls(&ks[i], (enum kernel_pass)p, calls, (int)(sizeof(calls) / sizeof(*calls)));
				struct kplan_tile t[KPLAN_CORE_TILES];
				int nt = ks[i].heads > 0 && ks[i].flops > 0 ? kplan_core_tiles(&ks[i], t) : 0;

				for (int c = 0; c < nc; c++)
					bad += calls[c].lda % 8 || calls[c].ldb % 8 || calls[c].ldc % 8 || calls[c].lda < 1;
				ncalls += nc;
				for (int j = 0; j < nt; j++) {
					odd_keys += t[j].keys % 8 != 0;
					bad_rows += t[j].ld < t[j].keys || t[j].ld >= t[j].keys + 8;
				}
			}
		}
	ok(ncalls > 0, "%s (ep %d): %ld cuBLAS calls planned", name, ep, ncalls);
	is_int(bad, 0, "%s (ep %d): every one's leading dimensions are multiples of 8 elements (16 bytes)", name, ep);
	is_int(bad_rows, 0, "%s: every block's scores rows are its keys padded to the next multiple of 8", name);
	if (strcmp(name, "gemma3-12b") == 0)
		ok(odd_keys > 0, "%s: %ld windowed blocks have keys that are no multiple of 8 (padded)", name, odd_keys);
	arch_release(&a);
}

/* The memory kernel's visits (kvisit.h), run on the host exactly as octo_stream_kernel
 * loops: every visit exactly once, visit i at element i % chunk, and each element's
 * visits a whole chunk of visits apart in block order (the sweep that keeps a revisit out
 * of L2; a thread revisiting its own element at once is what the H200 caught). */
static void check_visits(void)
{
	static const size_t cases[][4] = {   /* total, chunk, blocks, threads */
		{ 1 << 16, 1 << 14, 64, 256 }, { 100003, 4099, 391, 256 }, { 5000, 5000, 20, 256 },
		{ 777, 1, 4, 256 }, { 10, 3, 1, 256 }, { 65536, 300, 7, 32 }, { 1 << 18, 1 << 12, 1024, 256 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t total = cases[c][0], chunk = cases[c][1], nb = cases[c][2], nt = cases[c][3];
		unsigned char *seen = calloc(total, 1);
		size_t *last = malloc(chunk * sizeof(*last)), bad_j = 0, twice = 0, near = 0, order = 0;

		for (size_t e = 0; e < chunk; e++)
			last[e] = (size_t)-1;
		for (size_t b = 0; b < nb; b++) {
			size_t begin, end;

			kvisit_range(total, nb, b, &begin, &end);
			for (size_t t = 0; t < nt && begin + t < end; t++) {
				size_t j = (begin + t) % chunk;

				for (size_t i = begin + t; i < end; i += nt) {
					bad_j += j != i % chunk;
					twice += seen[i]++ != 0;
					j = kvisit_next(j, nt % chunk, chunk);
				}
			}
			/* in block order the visits run i = begin .. end - 1: an element's previous
			 * visit is a whole chunk earlier */
			for (size_t i = begin; i < end; i++) {
				size_t e = i % chunk;

				if (last[e] != (size_t)-1)
					near += i - last[e] < chunk;
				order += last[e] != (size_t)-1 && last[e] >= i;
				last[e] = i;
			}
		}
		{
			size_t missed = 0;

			for (size_t i = 0; i < total; i++)
				missed += !seen[i];
			ok(!bad_j && !twice && !missed && !near && !order,
			   "%zu visits over %zu elements, %zu blocks of %zu: each once (%zu twice, %zu missed), at i %% chunk "
			   "(%zu off), a revisit a whole chunk later (%zu sooner)", total, chunk, nb, nt, twice, missed, bad_j,
			   near + order);
		}
		free(seen);
		free(last);
	}
}

/* The scores buffer of a core: one block's scores, once: heads x sequences x rows x padded
 * keys of the largest block (the softmax works in place; the buffer was twice that). */
static void check_scores(void)
{
	struct kernel x = { .cls = EFF_FLASH, .name = "core", .flops = 1, .heads = 16, .d_qk = 128, .d_v = 128,
	                    .seqs = 1, .seq = 32768, .window = 0 };
	struct kernel w = x;
	long block = kplan_core_block(&x);

	is_int(block, 2048, "a 32K causal core: blocks of 32768 / 16 queries");
	is_dbl(kplan_core_score_elems(&x), 16.0 * 2048 * 32768, 0, "its scores: 16 heads x 2048 rows x 32768 keys "
	       "(%.2f GB of bf16, not twice that)", 2 * kplan_core_score_elems(&x) / 1e9);
	w.window = 1023;   /* keys rows + 1022: padded */
	w.seq = 4096;
	{
		struct kplan_tile t[KPLAN_CORE_TILES];
		int n = kplan_core_tiles(&w, t);
		double most = 0;

		for (int i = 0; i < n; i++)
			most = fmax(most, (double)t[i].rows * (double)((t[i].keys + 7) / 8 * 8));
		is_dbl(kplan_core_score_elems(&w), 16.0 * most, 0, "a windowed core's: its largest block's rows x keys "
		       "padded to 8 (%.0f elements a head)", most);
	}
}

/* At expert-parallel degree 2 (the cost model's, cost_opts.ep: the executor's too) a GPU
 * runs half the experts, each with twice the rows: the same FLOPs, half the GEMM launches
 * and half the per-expert memory launches. */
static void check_ep(void)
{
	char path[4096];
	const char *top = getenv("top_srcdir");
	struct arch a;
	struct err e = ERR_INIT;
	struct cost_opts o = { .seq = 4096, .micro_batch = 1, .tp = 1 }, o2 = { .seq = 4096, .micro_batch = 1, .tp = 1, .ep = 2 };
	struct kernel k1[KMAX], k2[KMAX];
	int grouped = 0, bad = 0, mem = 0;

	snprintf(path, sizeof(path), "%s/samples/architectures/deepseek-v2-lite.json", top ? top : ABS_TOP_SRCDIR);
	if (!ok(hfconfig_load_any(&a, path, &e) == 0, "deepseek-v2-lite: loads (%s)", e.msg))
		return;
	for (int l = 0; l < a.nlayers; l++) {
		int n = cost_kernels(&a.layers[l].w, &o, PASS_F, k1, KMAX);

		bad += cost_kernels(&a.layers[l].w, &o2, PASS_F, k2, KMAX) != n;
		for (int i = 0; i < n && i < KMAX; i++) {
			if (k1[i].cls == EFF_GROUPED && k1[i].m > 0 && k1[i].groups > 1) {
				grouped++;
				bad += k2[i].groups != (k1[i].groups + 1) / 2 || fabs(k2[i].flops - k1[i].flops) > 1e-9 * k1[i].flops ||
				       fabs(2 * k2[i].m * k2[i].n * k2[i].k * k2[i].groups - k2[i].flops) > 1e-6 * k2[i].flops ||
				       kplan_launches(&k2[i], PASS_F) != k2[i].groups;
			} else if (strncmp(k1[i].name, "experts.", 8) == 0) {
				mem++;
				bad += k2[i].launches != (k1[i].launches + 1) / 2 || k2[i].bytes != k1[i].bytes;
			} else {
				bad += memcmp(&k1[i], &k2[i], sizeof(k1[i])) != 0;
			}
		}
	}
	ok(grouped > 0 && mem > 0, "deepseek-v2-lite: %d expert GEMMs, %d per-expert memory kernels", grouped, mem);
	is_int(bad, 0, "at ep 2: half the experts a GPU, twice their rows, the same FLOPs, half the launches; the rest "
	       "unchanged");
	arch_release(&a);
}

/* The SSD's FLOPs as one tensor-core GEMM of a chunk's shape (aligned, its FLOPs within
 * one product over), its bytes on its other launches; a Mamba-1 scan stays on CUDA cores. */
static void check_ssd(void)
{
	const char *names[2] = { "nemotronh-8b", "jamba-v0.1" };

	for (int f = 0; f < 2; f++) {
		char path[4096];
		const char *top = getenv("top_srcdir");
		struct arch a;
		struct err e = ERR_INIT;
		struct cost_opts o = { .seq = 4096, .micro_batch = 1, .tp = 1 };
		struct kernel ks[KMAX];
		int ssd = 0, scan = 0, bad = 0;

		snprintf(path, sizeof(path), "%s/samples/architectures/%s.json", top ? top : ABS_TOP_SRCDIR, names[f]);
		if (!ok(hfconfig_load_any(&a, path, &e) == 0, "%s: loads (%s)", names[f], e.msg))
			continue;
		for (int l = 0; l < a.nlayers; l++)
			for (int p = 0; p < 2; p++) {
				int n = cost_kernels(&a.layers[l].w, &o, (enum kernel_pass)p, ks, KMAX);

				for (int i = 0; i < n && i < KMAX; i++) {
					struct kplan_call c = kplan_ssd_gemm(&ks[i]);
					double fl = 2.0 * c.m * c.n * c.k * c.batch;

					if (ks[i].cls == EFF_SSD && ks[i].flops > 0) {
						ssd++;
						bad += c.batch < 1 || c.batch > KPLAN_SSD_BATCH || fl < ks[i].flops ||
						       fl > ks[i].flops + 2.0 * c.m * c.n * c.k || c.lda % 8 || c.ldb % 8 || c.ldc % 8 ||
						       kplan_launches(&ks[i], (enum kernel_pass)p) < 2;
					} else if (ks[i].cls == EFF_SCAN && ks[i].flops > 0) {
						scan++;
						bad += c.batch != 0;
					}
				}
			}
		ok(ssd + scan > 0, "%s: %d SSD and %d scan kernels", names[f], ssd, scan);
		is_int(bad, 0, "%s: SSDs run their FLOPs as one aligned GEMM (a product over at most), scans none", names[f]);
		arch_release(&a);
	}
}

int main(void)
{
	/* 1 ms at 1000 TFLOP/s = 1e12 FLOPs; 4096 tokens x 4096 hidden: n = 1e12 / (2 x 4096^2)
	 * = 29802.3 columns -> 4 repetitions of 932 x 8 = 7456 */
	struct kplan_gemm g = kplan_proxy(1, 1000, 4096, 4096ull * 4096 * 2);

	is_int(g.m, 4096, "m: the tokens");
	is_int(g.k, 4096, "k: the hidden size, out_bytes / 2 / tokens");
	is_int(g.reps, 4, "reps: ceil(29802.3 / 8192)");
	is_int(g.n, 7456, "n: ceil(29802.3 / 4 / 8) x 8");
	is_dbl(kplan_gemm_flops(&g), 2.0 * 4096 * 4096 * 7456 * 4, 1, "FLOPs: 2 m k n reps");
	is_dbl(kplan_gemm_bytes(&g), 2.0 * (4096.0 * 4096 + 4096.0 * 7456 + 4096.0 * 7456) * 4, 1,
	       "bytes: bf16 X, W and Y, per repetition");
	ok(kplan_gemm_flops(&g) >= 1e12 && kplan_gemm_flops(&g) < 1e12 * 1.002, "never short, a rounding over");
	g = kplan_proxy(0, 1000, 4096, 1 << 20);
	is_int(g.reps, 0, "an op without time has no proxy");
	g = kplan_proxy(2, 500, 4096, 0);
	ok(g.m == g.k && g.m >= 64 && g.m <= 8192, "no activation size: a square-ish GEMM (%d x %d)", g.m, g.k);
	ok(kplan_gemm_flops(&g) >= 1e12, "still doing the op's FLOPs");
	for (double ms = 0.01; ms < 5000; ms *= 3.7) {
		struct kplan_gemm h = kplan_proxy(ms, 800, 8192, 8192ull * 5120 * 2);
		double want = ms * 1e-3 * 800e12;

		if (!ok(h.n >= 8 && h.n <= KPLAN_NCOLS_MAX && h.n % 8 == 0 && kplan_gemm_flops(&h) >= want &&
		        kplan_gemm_flops(&h) <= want + 2.0 * h.m * h.k * 8 * h.reps,
		        "%.3g ms: %d reps of n = %d cover the op's FLOPs within one 8-column step", ms, h.reps, h.n))
			break;
	}
	check_visits();
	check_arch("nemotronh-8b");
	check_arch("deepseek-v2-lite");
	check_arch("gemma3-12b");
	check_choose();
	check_cores("gemma3-12b");
	check_cores("deepseek-v2-lite");
	check_cores("nemotronh-8b");
	check_lds("gemma3-12b", 1);
	check_lds("gemma2-27b", 1);
	check_lds("deepseek-v2-lite", 2);
	check_lds("nemotronh-8b", 1);
	check_lds("qwen3-next-80b-a3b", 1);
	check_scores();
	check_ep();
	check_ssd();
	is_int(kplan_warm_ups(KPLAN_ARCHITECTURE, false), 1, "architecture mode: one warm-up iteration, not measured");
	is_int(kplan_warm_ups(KPLAN_FITTED, false), 1, "fitted, not refitted (--gemm-tflops, shared GPUs): one");
	{
		int worst = 0;

		for (int sms = 16; sms <= 160; sms += 4)
			for (int ch = 1; ch <= 2 * 7 * 2; ch++)
				if (kplan_nccl_ctas(sms, ch) < 1 || (ch <= sms / 2 && kplan_nccl_ctas(sms, ch) * ch > sms / 2))
					worst++;
		is_int(worst, 0, "NCCL: a GPU's channels together take at most half its SMs (every waiting kernel resident)");
		is_int(kplan_nccl_ctas(132, 2), 16, "an H200 with 2 channel ends: 16 CTAs each");
		is_int(kplan_nccl_ctas(132, 14), 4, "with 14 (8 devices, both directions): 4 each");
	}
	is_int(kplan_warm_ups(KPLAN_FITTED, true), 2, "fitted and refitted: two, a refit after each");
	{
		/* an eager core (learned sinks): its GEMMs carry the shape, the score passes none */
		struct block b = { .kind = BLK_ATTN, .h = 2880, .norms = 1, .n_q = 64, .n_kv = 8, .d_h = 64,
		                   .window = 128, .sinks = true };
		struct work w;
		struct cost_opts o = { .seq = 4096, .micro_batch = 1, .tp = 1 };
		struct kernel ks[KMAX];
		int n, bmm = 0, scores = 0;

		memset(&w, 0, sizeof(w));
		cost_block(&b, &w);
		n = cost_kernels(&w, &o, PASS_F, ks, KMAX);
		for (int i = 0; i < n; i++) {
			bmm += strcmp(ks[i].name, "attn_core.bmm") == 0 && ks[i].heads == 64 && ks[i].d_qk == 64 &&
			       ks[i].window == 128;
			scores += strcmp(ks[i].name, "attn_core.scores") == 0 && ks[i].heads == 0 && ks[i].bytes > 0;
		}
		ok(bmm == 1 && scores == 1, "an eager core: its batched GEMMs shaped (64 heads of 64, window 128), its "
		   "score passes in bytes");
	}
	{
		/* a Mamba-2 scan moves its chunk states: H P N fp32 four times per chunk of Q tokens,
		 * plus its bf16 inputs and output; the input grad twice that; priced by its FLOPs */
		struct block b = { .kind = BLK_MAMBA2, .h = 4096, .norms = 1, .ssm_heads = 128, .ssm_head_dim = 64,
		                   .groups = 8, .state = 128, .conv = 4, .chunk = 128 };
		struct work w;
		struct cost_opts o = { .seq = 4096, .micro_batch = 1, .tp = 1 };
		struct kernel ks[KMAX], kp;
		struct hardware hw;
		double din = 128.0 * 64, xbc = din + 2.0 * 8 * 128, want = 4096 * (2 * xbc + 2 * din + 16.0 * 128 * 64 * 128 / 128);
		int n, ni, found = 0;

		memset(&w, 0, sizeof(w));
		cost_block(&b, &w);
		hardware_default(&hw);
		n = cost_kernels(&w, &o, PASS_F, ks, KMAX);
		for (int i = 0; i < n; i++)
			if (strcmp(ks[i].name, "conv+ssd") == 0) {
				found = 1;
				is_dbl(ks[i].state_bytes, want, 1, "a Mamba-2 scan's state bytes: chunk states and its inputs (%.0f MB)",
				       want / 1e6);
				kp = ks[i];
				kp.state_bytes = 0;
				is_dbl(cost_kernel_ms(&ks[i], &hw, PASS_F), cost_kernel_ms(&kp, &hw, PASS_F), 1e-12,
				       "and its price is its FLOPs' alone");
			}
		ok(found, "the Mamba-2 layer has its scan");
		ni = cost_kernels(&w, &o, PASS_I, ks, KMAX);
		for (int i = 0; i < ni; i++)
			if (strcmp(ks[i].name, "conv+ssd") == 0)
				is_dbl(ks[i].state_bytes, 2 * want, 1, "its input grad moves them twice");
		hardware_release(&hw);
	}
	return tap_done();
}
