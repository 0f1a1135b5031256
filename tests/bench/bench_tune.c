/*
 * bench_tune — tuning quality and speed: for every sample model on 4, 8, 16 and 32 H200s
 * with 2x, 4x and 8x as many microbatches as GPUs, the tuned iteration time against 1F1B,
 * interleaved 1F1B, ZB-H1, ZB-V and balanced-partition 1F1B (speedup = baseline / tuned),
 * both lower bounds (the old one and the tight one) with the efficiency against each, and
 * the time the tuner took on one core and the plans it simulated.
 * Prints a table; never fails on timing.
 *
 * usage: bench_tune SRCDIR [MODEL...]
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "sim.h"
#include "tune.h"

static double baseline_ms(const struct model *m, const struct cluster *c, int mbs, enum sched_kind k,
                          const char *part)
{
	struct baseline_spec spec = { k, mbs, 0, part, NULL, 0, 0, NULL };
	struct plan p;
	struct sim s;
	struct sim_opts o;
	struct metrics mt;
	struct err e = ERR_INIT;
	double ms = NAN;

	memset(&s, 0, sizeof(s));
	if (baseline_plan(&p, m, NULL, c, NULL, &spec, &e) < 0)
		return NAN;
	sim_opts_default(&o);
	if (sim_run(&s, &p, &o, &mt, &e) == 0 && !mt.noom)
		ms = mt.makespan_ms;
	metrics_release(&mt);
	plan_release(&p);
	sim_release(&s);
	return ms;
}

static void cell(double base, double tuned)
{
	if (isnan(base))
		printf(" %7s", "-");
	else
		printf(" %6.2fx", base / tuned);
}

int main(int argc, char **argv)
{
	static const char *const all[] = { "nemotron-nano-v2-9b", "deepseek-16b", "gpt-oss-20b", "gpt-13b", NULL };
	static const int gpus[] = { 4, 8, 16, 32 };
	const char *const *models = argc > 2 ? (const char *const *)argv + 2 : all;
	const char *src = argc > 1 ? argv[1] : ".";
	double sum_il = 0, sum_1f1b = 0, sum_zb = 0, sum_eff = 0, sum_efft = 0, sum_secs = 0;
	int n = 0, neff = 0;

	printf("%-20s %4s %4s %10s %7s %7s %7s %7s %7s %10s %10s %6s %6s %8s %6s\n", "model", "gpus", "mbs",
	       "tuned ms", "1f1b", "interl", "zb-h1", "zb-v", "1f1b-b", "bound ms", "tight ms", "eff", "effT",
	       "tune s", "evals");
	for (int mi = 0; models[mi]; mi++) {
		char path[4096];
		struct model m;
		struct err e = ERR_INIT;

		snprintf(path, sizeof(path), "%s/samples/models/%s.json", src, models[mi]);
		if (model_load(&m, path, &e) < 0) {
			fprintf(stderr, "%s\n", e.msg);
			return 1;
		}
		for (size_t g = 0; g < sizeof(gpus) / sizeof(gpus[0]); g++) {
			struct cluster c;

			snprintf(path, sizeof(path), "%s/samples/clusters/%dxH200.json", src, gpus[g]);
			if (cluster_load(&c, path, &e) < 0) {
				fprintf(stderr, "%s\n", e.msg);
				return 1;
			}
			for (int f = 2; f <= 8; f *= 2) {
				int mbs = f * gpus[g];
				struct tune_opts o;
				struct tuner *t;
				const struct tune_step *st;
				struct plan p;
				struct metrics mt;
				long evals;
				double secs, tuned, b1, bi, bz, bv, bb;

				if (gpus[g] > m.nlayers) {
					printf("%-20s %4d %4d %10s  (fewer layers than GPUs)\n", m.name, gpus[g], mbs, "-");
					continue;
				}
				tune_opts_default(&o);
				o.microbatches = mbs;
				if (tune_new(&t, &m, &c, &o, &e) < 0) {
					printf("%-20s %4d %4d  n/a: %s\n", m.name, gpus[g], mbs, e.msg);
					continue;
				}
				while (tune_step(t, &st, &e) > 0)
					;
				if (tune_result(t, &p, &mt, &e) < 0) {
					printf("%-20s %4d %4d  n/a: %s\n", m.name, gpus[g], mbs, e.msg);
					tune_free(t);
					continue;
				}
				tune_stats(t, &evals, &secs);
				tuned = mt.makespan_ms;
				b1 = baseline_ms(&m, &c, mbs, SCHED_1F1B, "uniform");
				bi = baseline_ms(&m, &c, mbs, SCHED_INTERLEAVED, "uniform");
				bz = baseline_ms(&m, &c, mbs, SCHED_ZBH1, "uniform");
				bv = baseline_ms(&m, &c, mbs, SCHED_ZBV, "uniform");
				bb = baseline_ms(&m, &c, mbs, SCHED_1F1B, "balanced");
				printf("%-20s %4d %4d %10.1f", m.name, gpus[g], mbs, tuned);
				cell(b1, tuned);
				cell(bi, tuned);
				cell(bz, tuned);
				cell(bv, tuned);
				cell(bb, tuned);
				printf(" %10.1f %10.1f %5.1f%% %5.1f%% %8.2f %6ld\n", mt.lower_bound_ms, mt.lower_bound_tight_ms,
				       100 * mt.efficiency, 100 * mt.efficiency_tight, secs, evals);
				sum_eff += mt.efficiency;
				sum_efft += mt.efficiency_tight;
				sum_secs += secs;
				neff++;
				fflush(stdout);
				if (!isnan(bi) && !isnan(b1) && !isnan(bz)) {
					sum_il += bi / tuned;
					sum_1f1b += b1 / tuned;
					sum_zb += bz / tuned;
					n++;
				}
				metrics_release(&mt);
				plan_release(&p);
				tune_free(t);
			}
			cluster_release(&c);
		}
		model_release(&m);
	}
	if (n)
		printf("\nmean speedup over %d configurations: %.2fx vs interleaved 1F1B, %.2fx vs 1F1B, %.2fx vs ZB-H1\n",
		       n, sum_il / n, sum_1f1b / n, sum_zb / n);
	if (neff)
		printf("mean efficiency over %d configurations: %.1f%% of the bound, %.1f%% of the tight bound; "
		       "%.2f s tuning on average\n", neff, 100 * sum_eff / neff, 100 * sum_efft / neff, sum_secs / neff);
	return 0;
}
