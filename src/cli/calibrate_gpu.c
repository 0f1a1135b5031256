/*
 * calibrate_gpu — `octopipe calibrate --gpu MODEL -o OUT`: the cost model's efficiencies
 * per kernel class, refitted to this GPU. Every kernel of each layer kind of MODEL's
 * architecture runs alone on the GPU (its forward, then its backward), the times become
 * calibration points (calibrate.h: each point's work in one class, and the launches the
 * cuda backend issued for it, kplan_launches), the least-squares fit gives each class's
 * efficiency and the launch overhead per launch, and OUT is MODEL re-priced with them
 * (its source's hardware replaced). The GPU work is the cuda backend's (run_backend.h);
 * octopipe itself hands the command over to octopipe-cuda, as it does for run.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "cli.h"
#include "cli/run_backend.h"
#include "exec/kplan.h"
#include "fileio.h"
#include "json.h"
#include "parallel.h"

/* --emulate-gpu (hidden, for tests of this command without a GPU): each bench "measures"
 * the cost model's own time under the model's hardware, so the fit must give it back. */
static void emulate(struct calib_bench *b, int n, const struct hardware *hw)
{
	for (int i = 0; i < n; i++) {
		b[i].f_ms = cost_kernel_ms(&b[i].f, hw, PASS_F);
		b[i].bw_ms = 0;
		for (int k = 0; k < b[i].nbw; k++)
			b[i].bw_ms += cost_kernel_ms(&b[i].bw[k], hw, PASS_I);
	}
}

/* The predicted (the model's hardware, before the fit) and measured F and I + W times of
 * bench b, in ms. */
static void bench_pred(const struct calib_bench *b, const struct hardware *hw, double *f, double *bw)
{
	*f = cost_kernel_ms(&b->f, hw, PASS_F);
	*bw = 0;
	for (int k = 0; k < b->nbw; k++)
		*bw += cost_kernel_ms(&b->bw[k], hw, k == 0 ? PASS_I : PASS_W);
}

static double rel(double pred, double meas)
{
	return meas > 0 ? 100 * (pred - meas) / meas : 0;
}

/* The per-kernel table: what a miss is attributed to. mode: "gpu" (measured on it) or
 * "emulated" (--emulate-gpu: the cost model's own times stand for the measurement). */
static void kernel_table(const struct calib_bench *b, int n, const struct hardware *before, const char *mode)
{
	printf("\n%-34s %-8s %10s %10s %8s %10s %10s %8s %s\n", "KERNEL", "CLASS", "F PRED ms", "F MEAS ms", "F ERR",
	       "B PRED ms", "B MEAS ms", "B ERR", "MODE");
	for (int i = 0; i < n; i++) {
		double pf, pb;

		bench_pred(&b[i], before, &pf, &pb);
		printf("%-34.34s %-12.12s %10.4f %10.4f %+7.1f%% %10.4f %10.4f %+7.1f%% %s\n", b[i].kind,
		       hardware_class_names[b[i].f.cls], pf, b[i].f_ms, rel(pf, b[i].f_ms), pb, b[i].bw_ms,
		       rel(pb, b[i].bw_ms), mode);
	}
}

static int report(const char *path, const char *out, const char *gpu, const struct calib_set *s,
                  const struct hardware *before, const struct hardware *after, const struct calib_bench *b,
                  int nbench, bool json, const char *mode)
{
	double f0, b0, f1, b1;

	calibrate_error(s, before, -1, &f0, &b0);
	calibrate_error(s, after, -1, &f1, &b1);
	if (json) {
		struct jw w = { false };
		cJSON *root = cJSON_CreateObject(), *cls;

		jw_str(&w, root, "model", path);
		jw_str(&w, root, "out", out);
		jw_str(&w, root, "gpu", gpu);
		jw_num(&w, root, "benchmarks", nbench);
		jw_num(&w, root, "error_before_pct", round(f0 * 1e3) / 1e3);
		jw_num(&w, root, "bw_error_before_pct", round(b0 * 1e3) / 1e3);
		jw_num(&w, root, "error_after_pct", round(f1 * 1e3) / 1e3);
		jw_num(&w, root, "bw_error_after_pct", round(b1 * 1e3) / 1e3);
		jw_item(&w, root, "hardware", hardware_to_json(after));
		cls = jw_arr(&w, root, "classes");
		for (int c = 0; c < EFF_NCLASS; c++) {
			cJSON *o = jw_push(&w, cls, cJSON_CreateObject());

			jw_str(&w, o, "class", hardware_class_names[c]);
			jw_num(&w, o, "f_before", before->eff_f[c]);
			jw_num(&w, o, "f_after", after->eff_f[c]);
			jw_num(&w, o, "b_before", before->eff_b[c]);
			jw_num(&w, o, "b_after", after->eff_b[c]);
		}
		cls = jw_arr(&w, root, "kernels");
		for (int i = 0; i < nbench; i++) {
			cJSON *o = jw_push(&w, cls, cJSON_CreateObject());
			double pf, pb;

			bench_pred(&b[i], before, &pf, &pb);
			jw_str(&w, o, "kernel", b[i].kind);
			jw_str(&w, o, "class", hardware_class_names[b[i].f.cls]);
			jw_num(&w, o, "f_predicted_ms", pf);
			jw_num(&w, o, "f_measured_ms", b[i].f_ms);
			jw_num(&w, o, "bw_predicted_ms", pb);
			jw_num(&w, o, "bw_measured_ms", b[i].bw_ms);
		}
		jw_str(&w, root, "mode", mode);
		return cli_put_json(root, w.oom);
	}
	printf("model %s on %s (%s): %d kernel microbenchmarks (F and backward)\n", path, gpu, mode, nbench);
	printf("mean error of the kernels' times: F %.1f%% -> %.1f%%, backward %.1f%% -> %.1f%%\n", f0, f1, b0, b1);
	printf("\n%-14s %10s %10s %10s %10s\n", "CLASS", "F BEFORE", "F AFTER", "B BEFORE", "B AFTER");
	for (int c = 0; c < EFF_NCLASS; c++)
		printf("%-14s %10.4f %10.4f %10.4f %10.4f\n", hardware_class_names[c], before->eff_f[c], after->eff_f[c],
		       before->eff_b[c], after->eff_b[c]);
	printf("%-14s %10.2f %10.2f %10.2f %10.2f\n", "launch us", before->launch_us_f, after->launch_us_f,
	       before->launch_us_b, after->launch_us_b);
	kernel_table(b, nbench, before, mode);
	printf("\nwrote %s\n", out);
	return EXIT_OK;
}

int calibrate_gpu(int argc, char **argv, const char *model_arg, const char *out, bool json, int reps, bool emulate_gpu)
{
	const struct run_backend *rb = NULL;
	const char *why = "", *gpu = "emulated", *path;
	struct err e = ERR_INIT;
	struct model m;
	struct work *works = NULL;
	struct cost_opts o;
	struct hardware before, after;
	struct calib_bench *b = NULL;
	struct calib_set s;
	const char **kinds = NULL;
	int n = 0, rc = EXIT_OK, r;

	if (!emulate_gpu) {
		if (!(rb = run_backend_find("cuda", false, &why)) || !(rb->bench || rb->hand_over)) {
			cli_err("octopipe calibrate: --gpu needs the cuda backend: %s\n", why);
			return EXIT_RUNTIME;
		}
		if (rb->hand_over)   /* octopipe-cuda holds the GPU code: it does the whole command */
			return rb->hand_over(argc, argv);
	}
	path = cli_resolve(model_arg, "samples/models");
	if (model_load(&m, path, &e) < 0)
		return cli_report(&e);
	memset(&s, 0, sizeof(s));
	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	if ((r = model_works(&m, &works, &o, &e)) != 0) {
		if (r > 0)
			cli_err("%s: model '%s' has no architecture (a profile-only layer table): calibrate --gpu benchmarks "
			        "the kernels of a model made by octopipe cost\n", path, m.name);
		else
			cli_report(&e);
		model_release(&m);
		return EXIT_INPUT;
	}
	if (model_hardware(&m, &before, &e) != 0 || model_hardware(&m, &after, &e) != 0 ||
	    !(kinds = calloc((size_t)m.nlayers + 1, sizeof(*kinds)))) {
		rc = e.msg[0] ? cli_report(&e) : EXIT_RUNTIME;
		goto out;
	}
	for (int l = 0; l < m.nlayers; l++)
		kinds[l] = m.layers[l].kind;
	if (calibrate_benches(works, kinds, m.nlayers, &o, &b, &n, &e) < 0) {
		rc = cli_report(&e);
		goto out;
	}
	/* the model is written after the benchmarks: refuse an unwritable output first */
	if (strcmp(out, "-") != 0 && fileio_check_writable(out, &e) < 0) {
		cli_err("octopipe calibrate: %s\n", e.msg);
		rc = e.cls == ERR_INPUT ? EXIT_INPUT : EXIT_RUNTIME;
		goto out;
	}
	/* the fit charges each bench the launches it issues on the GPU (kplan.h): the cost
	 * model's own for every kernel but a fused attention core, which the backend runs as
	 * its query blocks' GEMMs; so the launch overhead is fitted per launch made and the
	 * core's efficiency is not charged for launches the cost model does not price */
	for (int i = 0; i < n; i++) {
		b[i].f.launches = (int)kplan_launches(&b[i].f, PASS_F);
		for (int k = 0; k < b[i].nbw; k++)
			b[i].bw[k].launches = (int)kplan_launches(&b[i].bw[k], k == 0 ? PASS_I : PASS_W);
	}
	if (emulate_gpu)
		emulate(b, n, &before);
	else if (rb->bench(b, n, reps, &gpu, &e) < 0) {
		cli_err("octopipe calibrate: %s\n", e.msg);
		rc = EXIT_RUNTIME;
		goto out;
	}
	if (calibrate_add_benches(&s, b, n, &after, &e) < 0 || calibrate_fit(&s, &after, &e) < 0) {
		rc = cli_report(&e);
		goto out;
	}
	free(after.source);
	after.source = NULL;
	{
		char src[320];

		snprintf(src, sizeof(src), "octopipe calibrate --gpu on %s", gpu);
		after.source = strdup(src);
	}
	if (model_reprice(&m, &after, &e) != 0 || model_save(&m, out, &e) < 0) {
		rc = cli_report(&e);
		goto out;
	}
	rc = report(path, out, gpu, &s, &before, &after, b, n, json, emulate_gpu ? "emulated" : "gpu");
out:
	calibrate_release(&s);
	free(b);
	free(kinds);
	free(works);
	hardware_release(&before);
	hardware_release(&after);
	model_release(&m);
	return rc;
}

/* A GEMM of m x k times k x n (bf16), as a kernel list holds one. */
static struct kernel gemm_kernel(const char *name, double m, double n, double k)
{
	return (struct kernel){ .cls = EFF_GEMM, .name = name, .m = m, .n = n, .k = k, .groups = 1,
	                        .flops = 2 * m * n * k, .bytes = 2 * (m * k + k * n + m * n), .launches = 1 };
}

/* A causal attention core of 32 heads of 128 over one sequence of seq tokens (window > 0:
 * the last window keys), its FLOPs the cost model's (2 heads (d_qk + d_v) per key). */
static struct kernel core_kernel(const char *name, long seq, long window)
{
	double ctx = cost_ctx(seq, window);

	return (struct kernel){ .cls = EFF_FLASH, .name = name, .flops = 2.0 * 32 * 256 * ctx * (double)seq,
	                        .bytes = 2.0 * 4 * 32 * 128 * (double)seq, .launches = 1, .heads = 32, .d_qk = 128,
	                        .d_v = 128, .seqs = 1, .seq = seq, .window = window };
}

#define NCEIL 9

/* octopipe calibrate --gpu --ceilings: what this GPU's kernels reach on random data, each
 * alone, through the very code a run launches (the cuda backend's cuda_kernel): bf16
 * GEMMs by shape, an HBM copy, attention cores, the SSD's tensor-core GEMM and the scan's
 * CUDA-core FMAs. With --emulate-gpu the cost model's times under the H200 defaults stand
 * in, and every row says so. */
int calibrate_ceilings(int argc, char **argv, bool json, int reps, bool emulate_gpu)
{
	const struct run_backend *rb = NULL;
	const char *why = "", *gpu = "emulated", *mode = emulate_gpu ? "predicted" : "gpu";
	struct calib_bench b[NCEIL];
	struct hardware hw;
	struct err e = ERR_INIT;
	const char *shape[NCEIL] = { "8192 x 8192 x 8192", "4096 x 14336 x 4096", "4096 x 4096 x 14336",
	                             "16384 x 1024 x 8192", "2 GiB read + written", "32 x 128, 4096 causal",
	                             "32 x 128, 4096, window 1023", "64 GFLOP", "16 GFLOP" };
	struct kernel ks[NCEIL] = {
		gemm_kernel("gemm square", 8192, 8192, 8192),
		gemm_kernel("gemm mlp.up", 4096, 14336, 4096),
		gemm_kernel("gemm mlp.down", 4096, 4096, 14336),
		gemm_kernel("gemm skinny", 16384, 1024, 8192),
		{ .cls = EFF_MEMORY, .name = "hbm copy", .bytes = 2.0 * 1024 * 1024 * 1024, .launches = 1 },
		core_kernel("attention causal", 4096, 0),
		core_kernel("attention windowed", 4096, 1023),
		{ .cls = EFF_SSD, .name = "ssd gemm", .flops = 64e9, .bytes = 1 << 20, .launches = 2 },
		{ .cls = EFF_SCAN, .name = "scan fma", .flops = 16e9, .launches = 1 },
	};

	if (!emulate_gpu) {
		if (!(rb = run_backend_find("cuda", false, &why)) || !(rb->bench || rb->hand_over)) {
			cli_err("octopipe calibrate: --gpu needs the cuda backend: %s\n", why);
			return EXIT_RUNTIME;
		}
		if (rb->hand_over)
			return rb->hand_over(argc, argv);
	}
	hardware_default(&hw);
	for (int i = 0; i < NCEIL; i++) {
		b[i] = (struct calib_bench){ .f = ks[i], .nbw = 0 };
		snprintf(b[i].kind, sizeof(b[i].kind), "%s", ks[i].name);
		b[i].f.launches = (int)kplan_launches(&b[i].f, PASS_F);
		if (emulate_gpu)
			b[i].f_ms = cost_kernel_ms(&b[i].f, &hw, PASS_F);
	}
	if (!emulate_gpu && rb->bench(b, NCEIL, reps, &gpu, &e) < 0) {
		hardware_release(&hw);
		cli_err("octopipe calibrate: %s\n", e.msg);
		return EXIT_RUNTIME;
	}
	if (json) {
		struct jw w = { false };
		cJSON *root = cJSON_CreateObject(), *arr;

		jw_str(&w, root, "gpu", gpu);
		jw_str(&w, root, "mode", mode);
		arr = jw_arr(&w, root, "ceilings");
		for (int i = 0; i < NCEIL; i++) {
			cJSON *o = jw_push(&w, arr, cJSON_CreateObject());

			jw_str(&w, o, "kernel", b[i].kind);
			jw_str(&w, o, "shape", shape[i]);
			jw_num(&w, o, "ms", b[i].f_ms);
			jw_num(&w, o, "flops", ks[i].flops);
			jw_num(&w, o, "bytes", ks[i].bytes);
		}
		hardware_release(&hw);
		return cli_put_json(root, w.oom);
	}
	printf("kernel ceilings on %s (%s): each kernel alone, random bf16 operands, the median of %d runs\n", gpu,
	       mode, reps);
	printf("%-20s %-28s %10s %10s %10s %s\n", "KERNEL", "SHAPE", "MS", "TFLOP/S", "GB/S", "MODE");
	for (int i = 0; i < NCEIL; i++) {
		double ms = b[i].f_ms;

		printf("%-20s %-28s %10.4f %10.1f %10.1f %s\n", b[i].kind, shape[i], ms,
		       ms > 0 ? ks[i].flops / ms * 1e-9 : 0, ms > 0 ? ks[i].bytes / ms * 1e-6 : 0, mode);
	}
	hardware_release(&hw);
	return EXIT_OK;
}
