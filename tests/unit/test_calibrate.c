/*
 * test_calibrate — the fit behind octopipe calibrate --gpu, without a GPU: the
 * microbenchmarks of an architecture's kernels (one per kernel of each layer kind, its
 * forward and its backward), "measured" under a made-up GPU whose efficiencies and launch
 * overheads are known, must give those efficiencies back; a little noise must cost little
 * accuracy; benches without times are refused; and a model re-priced under the
 * hardware it already has keeps its times, while a profile-only model cannot be re-priced.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "calibrate.h"
#include "hfconfig.h"
#include "parallel.h"
#include "../tap.h"

static const char *top(void)
{
	const char *t = getenv("top_srcdir");

	return t ? t : ABS_TOP_SRCDIR;
}

/* A GPU unlike the defaults in every parameter. */
static void truth(struct hardware *hw)
{
	static const double f[EFF_NCLASS] = { 0.71, 0.33, 0.41, 0.27, 0.12, 0.09, 0.62 };
	static const double b[EFF_NCLASS] = { 0.66, 0.29, 0.37, 0.31, 0.08, 0.06, 0.57 };

	hardware_default(hw);
	for (int c = 0; c < EFF_NCLASS; c++) {
		hw->eff_f[c] = f[c];
		hw->eff_b[c] = b[c];
	}
	hw->launch_us_f = 4;
	hw->launch_us_b = 6;
}

/* Times of every bench under hw, each off by a deterministic +-noise. */
static void measure(struct calib_bench *b, int n, const struct hardware *hw, double noise)
{
	for (int i = 0; i < n; i++) {
		double s = 1 + noise * ((i % 3) - 1);

		b[i].f_ms = s * cost_kernel_ms(&b[i].f, hw, PASS_F);
		b[i].bw_ms = 0;
		for (int k = 0; k < b[i].nbw; k++)
			b[i].bw_ms += s * cost_kernel_ms(&b[i].bw[k], hw, PASS_I);
	}
}

/* The benches of the architectures named, into one set, fitted from the defaults;
 * returns the worst relative error of an efficiency of a class that some bench measures. */
static double recover(const char *const *names, int nn, double noise, bool *seen, struct hardware *got)
{
	struct hardware want;
	struct calib_set s;
	struct err e = ERR_INIT;
	double worst = 0;

	truth(&want);
	hardware_default(got);
	memset(&s, 0, sizeof(s));
	memset(seen, 0, EFF_NCLASS * sizeof(*seen));
	for (int a = 0; a < nn; a++) {
		char path[4096];
		struct arch ar;
		struct cost_opts o = { .seq = 4096, .micro_batch = 1, .tp = 1 };
		struct work *works;
		const char **kinds;
		struct calib_bench *b = NULL;
		int n = 0, r;

		snprintf(path, sizeof(path), "%s/samples/architectures/%s.json", top(), names[a]);
		if (!ok(hfconfig_load_any(&ar, path, &e) == 0, "%s: the architecture loads (%s)", names[a], e.msg))
			continue;
		works = calloc((size_t)ar.nlayers, sizeof(*works));
		kinds = calloc((size_t)ar.nlayers, sizeof(*kinds));
		for (int l = 0; l < ar.nlayers; l++) {
			works[l] = ar.layers[l].w;
			kinds[l] = ar.layers[l].kind;
		}
		r = calibrate_benches(works, kinds, ar.nlayers, &o, &b, &n, &e);
		ok(r == 0 && n > 0, "%s: %d microbenchmarks, one per kernel of each layer kind", names[a], n);
		for (int i = 0; i < n; i++)
			seen[b[i].f.cls] = true;
		measure(b, n, &want, noise);
		ok(calibrate_add_benches(&s, b, n, got, &e) == 0, "%s: their times make calibration points (%s)",
		   names[a], e.msg);
		free(b);
		free(kinds);
		free(works);
		arch_release(&ar);
	}
	ok(calibrate_fit(&s, got, &e) == 0, "the fit runs (%s)", e.msg);
	for (int c = 0; c < EFF_NCLASS; c++)
		if (seen[c]) {
			worst = fmax(worst, fabs(got->eff_f[c] - want.eff_f[c]) / want.eff_f[c]);
			worst = fmax(worst, fabs(got->eff_b[c] - want.eff_b[c]) / want.eff_b[c]);
		}
	calibrate_release(&s);
	return worst;
}

static void check_reprice(void)
{
	char path[4096];
	struct model m, before;
	struct hardware hw;
	struct err e = ERR_INIT;
	double worst = 0;

	snprintf(path, sizeof(path), "%s/samples/models/gemma3-12b.json", top());
	if (!ok(model_load(&m, path, &e) == 0 && model_copy(&before, &m, &e) == 0, "gemma3-12b loads (%s)", e.msg))
		return;
	/* the model's own hardware, as its source keeps it */
	hardware_from_json(&hw, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m.extra, "source"),
	                                                         "hardware"), "gemma3-12b", "source", "hardware", &e);
	is_int(model_reprice(&m, &hw, &e), 0, "re-pricing a model with an architecture");
	for (int i = 0; i < m.nlayers; i++)
		worst = fmax(worst, fabs(m.layers[i].f_ms - before.layers[i].f_ms) / before.layers[i].f_ms);
	ok(worst < 1e-9, "under the hardware it was made with, its times stay (worst %.2g)", worst);
	hardware_release(&hw);
	truth(&hw);
	hw.eff_f[EFF_GEMM] /= 2;
	model_reprice(&m, &hw, &e);
	ok(m.layers[1].f_ms > before.layers[1].f_ms, "slower GEMMs make a slower layer (%.3f -> %.3f ms)",
	   before.layers[1].f_ms, m.layers[1].f_ms);
	hardware_release(&hw);
	model_release(&m);
	model_release(&before);
	snprintf(path, sizeof(path), "%s/samples/models/gpt-13b.json", top());
	if (model_load(&m, path, &e) == 0) {
		truth(&hw);
		is_int(model_reprice(&m, &hw, &e), 1, "a profile-only model has no architecture to re-price");
		hardware_release(&hw);
		model_release(&m);
	}
}

int main(void)
{
	static const char *const archs[] = { "nemotronh-8b", "deepseek-v2-lite", "gemma3-12b", "jamba-v0.1" };
	struct hardware got, want;
	struct calib_set s;
	struct calib_bench none;
	struct err e = ERR_INIT;
	bool seen[EFF_NCLASS];
	double worst;

	truth(&want);
	worst = recover(archs, 4, 0, seen, &got);
	ok(seen[EFF_GEMM] && seen[EFF_GROUPED] && seen[EFF_FLASH] && seen[EFF_SSD] && seen[EFF_SCAN] && seen[EFF_MEMORY],
	   "the benches cover GEMMs, grouped GEMMs, attention, SSD, scan and elementwise kernels");
	ok(worst < 1e-3, "exact times give the efficiencies back (worst %.2g)", worst);
	ok(fabs(got.launch_us_f - 4) < 0.05 && fabs(got.launch_us_b - 6) < 0.05,
	   "and the launch overheads (%.3f, %.3f us)", got.launch_us_f, got.launch_us_b);
	{
		struct hardware def;
		int kept = 0, unseen = 0;

		hardware_default(&def);
		for (int c = 0; c < EFF_NCLASS; c++)
			if (!seen[c]) {
				unseen++;
				kept += fabs(got.eff_f[c] - def.eff_f[c]) < 1e-12 && fabs(got.eff_b[c] - def.eff_b[c]) < 1e-12;
			}
		is_int(kept, unseen, "a class no bench measures keeps its value");
		hardware_release(&def);
	}
	hardware_release(&got);
	worst = recover(archs, 4, 0.02, seen, &got);
	ok(worst < 0.05, "times off by 2%% give them within 5%% (worst %.3f)", worst);
	hardware_release(&got);
	hardware_release(&want);

	memset(&s, 0, sizeof(s));
	memset(&none, 0, sizeof(none));
	hardware_default(&got);
	ok(calibrate_add_benches(&s, &none, 1, &got, &e) < 0 && strstr(e.msg, "no microbenchmark has a measured time"),
	   "benches without times are refused (%s)", e.msg);
	hardware_release(&got);
	calibrate_release(&s);
	check_reprice();
	return tap_done();
}
