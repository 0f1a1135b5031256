/*
 * calibrate_gpu — `octopipe calibrate --gpu -o OUT MODEL... [--predict MODEL]...`: the
 * cost model's efficiencies per kernel class, refitted to this GPU. Every kernel of each
 * layer kind of each MODEL's architecture runs alone on the GPU (its forward, then its
 * backward), the times become calibration points (calibrate.h: each point's work in one
 * class, and the launches the cuda backend issued for it, kplan_launches), one
 * least-squares fit over all of them (each model one profile, weighing the same) gives
 * each class's efficiency and the launch overhead per launch, and every model is
 * re-priced with them (its source's hardware replaced): OUT itself for one model, OUT/NAME.json
 * for several. A --predict model is only re-priced: the fit never saw its kernels, so
 * running it measures a prediction (tests/gpu/selftest.sh does). The GPU work is the cuda
 * backend's (run_backend.h); octopipe itself hands the command over to octopipe-cuda, as
 * it does for run.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

#define CAL_PATH_MAX 4400   /* an output: OUT (a path) and NAME.json */

/* One model of the command: fitted (its kernels benchmarked) or only re-priced. */
struct cal_model {
	char path[4096];
	char name[256];          /* the file's name without .json: OUT/NAME.json */
	struct model m;
	struct work *works;      /* its architecture's layers (model_works), for its benches */
	struct cost_opts o;
	struct hardware hw;      /* what its table was priced with */
	bool fitted, loaded;
	int first, n;            /* its benches in the command's array */
};

/* The per-kernel table: what a miss is attributed to. mode: "gpu" (measured on it) or
 * "emulated" (--emulate-gpu: the cost model's own times stand for the measurement). With
 * several models each one's rows follow its name. */
static void kernel_table(const struct calib_bench *b, const struct cal_model *cm, int ncm, const char *mode)
{
	printf("\n%-34s %-8s %10s %10s %8s %10s %10s %8s %s\n", "KERNEL", "CLASS", "F PRED ms", "F MEAS ms", "F ERR",
	       "B PRED ms", "B MEAS ms", "B ERR", "MODE");
	for (int j = 0; j < ncm; j++) {
		if (!cm[j].fitted)
			continue;
		if (ncm > 1)
			printf("%s:\n", cm[j].name);
		for (int i = cm[j].first; i < cm[j].first + cm[j].n; i++) {
			double pf, pb;

			bench_pred(&b[i], &cm[j].hw, &pf, &pb);
			printf("%-34.34s %-12.12s %10.4f %10.4f %+7.1f%% %10.4f %10.4f %+7.1f%% %s\n", b[i].kind,
			       hardware_class_names[b[i].f.cls], pf, b[i].f_ms, rel(pf, b[i].f_ms), pb, b[i].bw_ms,
			       rel(pb, b[i].bw_ms), mode);
		}
	}
}

static int total_benches(const struct cal_model *cm, int ncm)
{
	int n = 0;

	for (int j = 0; j < ncm; j++)
		n += cm[j].n;
	return n;
}

static void json_models(struct jw *w, cJSON *root, const char *key, const struct cal_model *cm, int ncm, bool fitted)
{
	cJSON *arr = jw_arr(w, root, key);

	for (int j = 0; j < ncm; j++)
		if (cm[j].fitted == fitted)
			jw_push(w, arr, cJSON_CreateString(cm[j].name));
}

static int report_json(const char *out, const char *gpu, const double err[4], const struct hardware *after,
                       const struct calib_bench *b, const struct cal_model *cm, int ncm, const char *mode)
{
	const struct hardware *before = &cm[0].hw;
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *cls;

	jw_str(&w, root, "model", cm[0].path);
	json_models(&w, root, "models", cm, ncm, true);
	json_models(&w, root, "predicted", cm, ncm, false);
	jw_str(&w, root, "out", out);
	jw_str(&w, root, "gpu", gpu);
	jw_num(&w, root, "benchmarks", total_benches(cm, ncm));
	jw_num(&w, root, "error_before_pct", round(err[0] * 1e3) / 1e3);
	jw_num(&w, root, "bw_error_before_pct", round(err[1] * 1e3) / 1e3);
	jw_num(&w, root, "error_after_pct", round(err[2] * 1e3) / 1e3);
	jw_num(&w, root, "bw_error_after_pct", round(err[3] * 1e3) / 1e3);
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
	for (int j = 0; j < ncm; j++)
		for (int i = cm[j].first; i < cm[j].first + cm[j].n; i++) {
			cJSON *o = jw_push(&w, cls, cJSON_CreateObject());
			double pf, pb;

			bench_pred(&b[i], &cm[j].hw, &pf, &pb);
			jw_str(&w, o, "model", cm[j].name);
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

static int report(const char *out, const char *gpu, const struct calib_set *s, const struct hardware *after,
                  const struct calib_bench *b, const struct cal_model *cm, int ncm, bool json, const char *mode)
{
	const struct hardware *before = &cm[0].hw;
	double err[4];
	int nfit = 0;

	calibrate_error(s, before, -1, &err[0], &err[1]);
	calibrate_error(s, after, -1, &err[2], &err[3]);
	if (json)
		return report_json(out, gpu, err, after, b, cm, ncm, mode);
	for (int j = 0; j < ncm; j++)
		nfit += cm[j].fitted;
	if (ncm == 1) {
		printf("model %s on %s (%s): %d kernel microbenchmarks (F and backward)\n", cli_name(cm[0].path), gpu, mode, cm[0].n);
	} else {
		printf("models");
		for (int j = 0; j < ncm; j++)
			if (cm[j].fitted)
				printf(" %s", cli_name(cm[j].name));
		printf(" on %s (%s): %d kernel microbenchmarks (F and backward)\n", gpu, mode, total_benches(cm, ncm));
	}
	printf("mean error of the kernels' times: F %.1f%% -> %.1f%%, backward %.1f%% -> %.1f%%\n", err[0], err[2],
	       err[1], err[3]);
	printf("\n%-14s %10s %10s %10s %10s\n", "CLASS", "F BEFORE", "F AFTER", "B BEFORE", "B AFTER");
	for (int c = 0; c < EFF_NCLASS; c++)
		printf("%-14s %10.4f %10.4f %10.4f %10.4f\n", hardware_class_names[c], before->eff_f[c], after->eff_f[c],
		       before->eff_b[c], after->eff_b[c]);
	printf("%-14s %10.2f %10.2f %10.2f %10.2f\n", "launch us", before->launch_us_f, after->launch_us_f,
	       before->launch_us_b, after->launch_us_b);
	kernel_table(b, cm, ncm, mode);
	if (ncm == 1) {
		printf("\nwrote %s\n", cli_name(out));
		return EXIT_OK;
	}
	printf("\nwrote %d models to %s/ (fitted:", ncm, out);
	for (int j = 0; j < ncm; j++)
		if (cm[j].fitted)
			printf(" %s", cm[j].name);
	if (nfit < ncm) {
		printf("; re-priced, not benchmarked:");
		for (int j = 0; j < ncm; j++)
			if (!cm[j].fitted)
				printf(" %s", cli_name(cm[j].name));
	}
	printf(")\n");
	return EXIT_OK;
}

/* Loads model j of the command (arg as given) with its architecture and hardware; the
 * exit code on failure. */
static int load_one(struct cal_model *c, const char *arg, const struct cal_model *first)
{
	struct err e = ERR_INIT;
	const char *base;
	size_t len;
	int r;

	snprintf(c->path, sizeof(c->path), "%s", cli_resolve(arg, "samples/models"));
	base = strrchr(c->path, '/') ? strrchr(c->path, '/') + 1 : c->path;
	len = strlen(base);
	if (len > 5 && strcmp(base + len - 5, ".json") == 0)
		len -= 5;
	snprintf(c->name, sizeof(c->name), "%.*s", (int)(len < sizeof(c->name) - 1 ? len : sizeof(c->name) - 1), base);
	if (model_load(&c->m, c->path, &e) < 0)
		return cli_report(&e);
	c->loaded = true;
	if ((r = model_works(&c->m, &c->works, &c->o, &e)) != 0) {
		if (r > 0)
			cli_err("%s: model '%s' has no architecture (a profile-only layer table): calibrate --gpu benchmarks "
			        "the kernels of a model made by octopipe cost\n", c->path, c->m.name);
		else
			cli_report(&e);
		return EXIT_INPUT;
	}
	if (model_hardware(&c->m, &c->hw, &e) != 0)
		return e.msg[0] ? cli_report(&e) : EXIT_RUNTIME;
	/* one fit is of one GPU: every table must be priced for the same peak and bandwidth */
	if (first && (c->hw.peak_tflops != first->hw.peak_tflops || c->hw.hbm_gbytes_per_s != first->hw.hbm_gbytes_per_s)) {
		cli_err("%s: source.hardware: priced for %.1f TFLOP/s and %.0f GB/s, but %s for %.1f and %.0f: one "
		        "calibration is of one GPU\n", c->path, c->hw.peak_tflops, c->hw.hbm_gbytes_per_s, first->path,
		        first->hw.peak_tflops, first->hw.hbm_gbytes_per_s);
		return EXIT_INPUT;
	}
	return EXIT_OK;
}

/* The benches of model c appended to *b (*n of them so far). */
static int add_benches(struct cal_model *c, struct calib_bench **b, int *n)
{
	struct err e = ERR_INIT;
	struct calib_bench *mine = NULL, *grown;
	const char **kinds = calloc((size_t)c->m.nlayers + 1, sizeof(*kinds));
	int k = 0, rc = EXIT_OK;

	if (!kinds)
		return EXIT_RUNTIME;
	for (int l = 0; l < c->m.nlayers; l++)
		kinds[l] = c->m.layers[l].kind;
	if (calibrate_benches(c->works, kinds, c->m.nlayers, &c->o, &mine, &k, &e) < 0) {
		rc = cli_report(&e);
	} else if (!(grown = realloc(*b, (size_t)(*n + k) * sizeof(**b)))) {
		rc = EXIT_RUNTIME;
	} else {
		memcpy(grown + *n, mine, (size_t)k * sizeof(*mine));
		*b = grown;
		c->first = *n;
		c->n = k;
		*n += k;
	}
	free(mine);
	free(kinds);
	return rc;
}

static int unwritable(const struct err *e)
{
	cli_err("octopipe calibrate: %s\n", e->msg);
	return e->cls == ERR_INPUT ? EXIT_INPUT : EXIT_RUNTIME;
}

/* Where model j goes: OUT itself for one model, OUT/NAME.json for several; -1 (with the
 * line said) when that path is longer than path holds. */
static int out_path(const char *out, const struct cal_model *cm, int ncm, int j, char *path, size_t size)
{
	char file[sizeof(cm->name) + 8];

	snprintf(file, sizeof(file), "%s.json", cm[j].name);
	if (ncm == 1 ? snprintf(path, size, "%s", out) >= (int)size : fileio_join(out, file, path, size) < 0) {
		cli_err("octopipe calibrate: %s/%s: the path is too long\n", out, file);
		return -1;
	}
	return 0;
}

/* OUT with several models: a directory (made when missing) that each model goes into as
 * NAME.json; two models of one name would overwrite each other. */
static int check_outputs(const char *out, struct cal_model *cm, int ncm)
{
	struct err e = ERR_INIT;
	struct stat st;
	char path[CAL_PATH_MAX];

	if (ncm == 1)
		return strcmp(out, "-") != 0 && fileio_check_writable(out, &e) < 0 ? unwritable(&e) : EXIT_OK;
	if (strcmp(out, "-") == 0)
		return cli_usage_error("calibrate", "-o -: several models go into a directory");
	for (int j = 0; j < ncm; j++)
		for (int i = 0; i < j; i++)
			if (strcmp(cm[i].name, cm[j].name) == 0) {
				cli_err("octopipe calibrate: %s and %s would both be written as %s/%s.json\n", cm[i].path,
				        cm[j].path, out, cm[j].name);
				return EXIT_INPUT;
			}
	if (stat(out, &st) == 0 && !S_ISDIR(st.st_mode)) {
		cli_err("octopipe calibrate: %s: not a directory (several models are written into one, as NAME.json)\n",
		        out);
		return EXIT_INPUT;
	}
	if (stat(out, &st) != 0 && mkdir(out, 0777) < 0) {
		cli_err("octopipe calibrate: %s: cannot make the directory: %s\n", out, strerror(errno));
		return errno == ENOENT || errno == ENOTDIR ? EXIT_INPUT : EXIT_RUNTIME;
	}
	for (int j = 0; j < ncm; j++) {
		if (out_path(out, cm, ncm, j, path, sizeof(path)) < 0)
			return EXIT_INPUT;
		if (fileio_check_writable(path, &e) < 0)
			return unwritable(&e);
	}
	return EXIT_OK;
}

/* Every model re-priced with the fitted hardware after, into out. */
static int write_models(const char *out, struct cal_model *cm, int ncm, const struct hardware *after)
{
	struct err e = ERR_INIT;
	char path[CAL_PATH_MAX];

	for (int j = 0; j < ncm; j++) {
		if (out_path(out, cm, ncm, j, path, sizeof(path)) < 0)
			return EXIT_INPUT;
		if (model_reprice(&cm[j].m, after, &e) != 0 || model_save(&cm[j].m, path, &e) < 0)
			return cli_report(&e);
	}
	return EXIT_OK;
}

static int measure(const struct run_backend *rb, struct calib_bench *b, int n, const struct cal_model *cm, int ncm,
                   int reps, const char **gpu)
{
	struct err e = ERR_INIT;

	/* the fit charges each bench the launches it issues on the GPU (kplan.h): the cost
	 * model's own for every kernel but a fused attention core, which the backend runs as
	 * its query blocks' GEMMs; so the launch overhead is fitted per launch made and the
	 * core's efficiency is not charged for launches the cost model does not price */
	for (int i = 0; i < n; i++) {
		b[i].f.launches = (int)kplan_launches(&b[i].f, PASS_F);
		for (int k = 0; k < b[i].nbw; k++)
			b[i].bw[k].launches = (int)kplan_launches(&b[i].bw[k], k == 0 ? PASS_I : PASS_W);
	}
	if (!rb) {
		for (int j = 0; j < ncm; j++)
			if (cm[j].fitted)
				emulate(b + cm[j].first, cm[j].n, &cm[j].hw);
		return EXIT_OK;
	}
	if (rb->bench(b, n, reps, gpu, &e) < 0) {
		cli_err("octopipe calibrate: %s\n", e.msg);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

int calibrate_gpu(int argc, char **argv, const struct calib_gpu_args *g)
{
	const struct run_backend *rb = NULL;
	const char *why = "", *gpu = "emulated";
	struct err e = ERR_INIT;
	struct hardware after;
	struct calib_bench *b = NULL;
	struct calib_set s;
	int ncm = g->nfit + g->npredict, n = 0, rc = EXIT_OK;
	struct cal_model *cm = calloc((size_t)ncm, sizeof(*cm));

	if (!g->emulate) {
		if (!(rb = run_backend_find("cuda", false, &why)) || !(rb->bench || rb->hand_over)) {
			cli_err("octopipe calibrate: --gpu needs the cuda backend: %s\n", why);
			free(cm);
			return EXIT_RUNTIME;
		}
		if (rb->hand_over) {   /* octopipe-cuda holds the GPU code: it does the whole command */
			free(cm);
			return rb->hand_over(argc, argv);
		}
	}
	memset(&s, 0, sizeof(s));
	memset(&after, 0, sizeof(after));
	if (!cm)
		return EXIT_RUNTIME;
	for (int j = 0; j < ncm && rc == EXIT_OK; j++) {
		cm[j].fitted = j < g->nfit;
		rc = load_one(&cm[j], j < g->nfit ? g->fit[j] : g->predict[j - g->nfit], j ? &cm[0] : NULL);
		if (rc == EXIT_OK && cm[j].fitted)
			rc = add_benches(&cm[j], &b, &n);
	}
	/* the models are written after the benchmarks: refuse an unwritable output first */
	if (rc == EXIT_OK)
		rc = check_outputs(g->out, cm, ncm);
	if (rc == EXIT_OK)
		rc = measure(rb, b, n, cm, ncm, g->reps, &gpu);
	if (rc != EXIT_OK)
		goto out;
	/* the fit starts from the first model's hardware; each fitted model weighs the same */
	if (model_hardware(&cm[0].m, &after, &e) != 0) {
		rc = cli_report(&e);
		goto out;
	}
	for (int j = 0; j < g->nfit; j++)
		if (calibrate_add_benches(&s, b + cm[j].first, cm[j].n, &after, &e) < 0) {
			rc = cli_report(&e);
			goto out;
		}
	if (calibrate_fit(&s, &after, &e) < 0) {
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
	if ((rc = write_models(g->out, cm, ncm, &after)) == EXIT_OK)
		rc = report(g->out, gpu, &s, &after, b, cm, ncm, g->json, g->emulate ? "emulated" : "gpu");
out:
	calibrate_release(&s);
	free(b);
	for (int j = 0; j < ncm; j++) {
		if (cm[j].loaded)
			model_release(&cm[j].m);
		free(cm[j].works);
		hardware_release(&cm[j].hw);
	}
	free(cm);
	hardware_release(&after);
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
