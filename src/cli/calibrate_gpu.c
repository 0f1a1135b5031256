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

static int report(const char *path, const char *out, const char *gpu, const struct calib_set *s,
                  const struct hardware *before, const struct hardware *after, int nbench, bool json)
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
		return cli_put_json(root, w.oom);
	}
	printf("model %s on %s: %d kernel microbenchmarks (F and backward)\n", path, gpu, nbench);
	printf("mean error of the kernels' times: F %.1f%% -> %.1f%%, backward %.1f%% -> %.1f%%\n", f0, f1, b0, b1);
	printf("\n%-14s %10s %10s %10s %10s\n", "CLASS", "F BEFORE", "F AFTER", "B BEFORE", "B AFTER");
	for (int c = 0; c < EFF_NCLASS; c++)
		printf("%-14s %10.4f %10.4f %10.4f %10.4f\n", hardware_class_names[c], before->eff_f[c], after->eff_f[c],
		       before->eff_b[c], after->eff_b[c]);
	printf("%-14s %10.2f %10.2f %10.2f %10.2f\n", "launch us", before->launch_us_f, after->launch_us_f,
	       before->launch_us_b, after->launch_us_b);
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
	rc = report(path, out, gpu, &s, &before, &after, n, json);
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
