/*
 * bench_tune — tuning quality and speed: for every sample model on 4, 8, 16 and 32 H200s
 * with 2x, 4x and 8x as many microbatches as GPUs, the tuned iteration time against 1F1B,
 * interleaved 1F1B, ZB-H1, ZB-V and balanced-partition 1F1B (speedup = baseline / tuned),
 * both lower bounds (the old one and the tight one) with the efficiency against each, and
 * the time the tuner took on one core and the plans it simulated.
 * Prints a table; never fails on timing.
 *
 * The tuner runs as `octopipe tune` does: a budget of OCTOPIPE_BENCH_BUDGET seconds (default
 * 1, the CLI's default; 0 = converge and stop, the tuner before it was anytime).
 * OCTOPIPE_BENCH_EVALS=N replaces the time budget by N simulations in both tables, so a
 * busy machine does not change the plans; OCTOPIPE_BENCH_SEED=N seeds the tuner (to tell
 * a change from the search's own spread) (OCTOPIPE_BENCH_DUMP=1: the profile table also
 * prints each tuned plan's stages and each device's busy and idle time;
 * OCTOPIPE_BENCH_MAX_STAGES=K: --max-stages-per-device K in both tables;
 * OCTOPIPE_BENCH_SAMPLES=a,b: the samples table for those models only).
 *
 * A second table: the measured profiles of samples/profiles on 4 GPUs x 8 microbatches and
 * 8 GPUs x 16 (no communication, W = B = half the measured backward): the converged
 * tuner (no budget) against the anytime one, with both bounds, evaluations and CPU time.
 * Reading it: on each of these plans the iteration ends exactly when the device with the
 * largest warm-up wait plus work does (no idle after its first backward), so the distance
 * to the old bound is structure, not op order: layers that do not split evenly over the
 * devices (deepseek-16b's 28 layers on 8 GPUs: the tight bound caps the old efficiency at
 * 87%; gpt-13b's 40 with a head twice a layer: any assignment of layers to 8 devices leaves
 * one with at least 1567 ms of work at 16 microbatches, 89.6% of the old bound, which the
 * tight bound's packing of the layers now proves up to rounding: 1565.6 ms) and the wait
 * of a device whose stages lie deep in the pipeline.
 *
 * The measurements of this table as the tuner changed, and what was tried and not kept,
 * are in docs/tuning-log.md.
 *
 * usage: bench_tune SRCDIR [MODEL... | profiles | samples]   (profiles, samples: only that table)
 */
#include "config.h"

#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baseline.h"
#include "json.h"
#include "sim.h"
#include "tune.h"

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

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

static double budget_s(void)
{
	const char *b = getenv("OCTOPIPE_BENCH_BUDGET");

	return b ? atof(b) : 1.0;
}

/* OCTOPIPE_BENCH_DUMP: the tuned plan's stages and each device's busy and idle time. */
static void dump_plan(const struct plan *p, const struct metrics *mt)
{
	for (int s = 0; s < p->nstages; s++) {
		double f = 0, c = 0;

		for (int l = p->stages[s].first; l <= p->stages[s].last; l++) {
			f += p->model.layers[l].f_ms;
			c += p->model.layers[l].f_ms + p->model.layers[l].b_ms + p->model.layers[l].w_ms;
		}
		printf("  stage %2d layers %2d-%2d gpu %d  f %.2f  f+b+w %.2f\n", s, p->stages[s].first,
		       p->stages[s].last, p->stages[s].device, f, c);
	}
	for (int d = 0; d < mt->ndevices; d++)
		printf("  gpu %d busy %.1f idle %.1f warm-up %.1f cool-down %.1f\n", d, mt->dev[d].busy_ms,
		       mt->dev[d].idle_ms, mt->dev[d].warmup_idle_ms, mt->dev[d].cooldown_idle_ms);
}

/* Tunes; returns the tuned time (NAN on failure) and fills mt, evals and CPU seconds. */
static double tune_once(const struct model *m, const struct cluster *c, int mbs, double budget,
                        struct metrics *mt, long *evals, double *cpu)
{
	struct tune_opts o;
	struct tuner *t;
	const struct tune_step *st;
	struct plan p;
	struct err e = ERR_INIT;
	clock_t c0 = clock();
	double ms = NAN;

	tune_opts_default(&o);
	o.microbatches = mbs;
	o.time_budget_s = budget;
	if (budget > 0 && getenv("OCTOPIPE_BENCH_EVALS")) {
		/* a budget of simulations instead: the same plans whatever the machine's load */
		o.time_budget_s = 0;
		o.max_evals = atol(getenv("OCTOPIPE_BENCH_EVALS"));
	}
	if (getenv("OCTOPIPE_BENCH_SEED"))
		o.seed = (unsigned)atol(getenv("OCTOPIPE_BENCH_SEED"));
	/* as `tune` does on a table that does not recompute (OCTOPIPE_BENCH_NO_RECOMPUTE=1: not) */
	o.recompute_moves = !getenv("OCTOPIPE_BENCH_NO_RECOMPUTE");
	if (getenv("OCTOPIPE_BENCH_MAX_STAGES"))
		o.max_stages_per_device = atoi(getenv("OCTOPIPE_BENCH_MAX_STAGES"));
	memset(mt, 0, sizeof(*mt));
	if (tune_new(&t, m, c, &o, &e) < 0)
		return NAN;
	while (tune_step(t, &st, &e) > 0)
		;
	if (tune_result(t, &p, mt, &e) == 0) {
		ms = mt->makespan_ms;
		if (budget > 0 && getenv("OCTOPIPE_BENCH_DUMP"))
			dump_plan(&p, mt);
		plan_release(&p);
	}
	tune_stats(t, evals, cpu);
	tune_free(t);
	*cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
	return ms;
}

/* The measured profiles: f_ms and b_full_ms per layer; W = B = half the backward. */
static int profile_model(struct model *m, const char *path)
{
	struct err e = ERR_INIT;
	cJSON *root = json_load_file(path, &e), *layers;
	int L, i = 0;

	if (!root)
		return -1;
	layers = cJSON_GetObjectItem(root, "layers");
	L = cJSON_GetArraySize(layers);
	memset(m, 0, sizeof(*m));
	m->name = strdup(cJSON_GetStringValue(cJSON_GetObjectItem(root, "model")));
	m->seq_len = 4096;
	m->micro_batch_size = 1;
	m->nlayers = L;
	m->layers = calloc((size_t)L, sizeof(*m->layers));
	for (const cJSON *y = layers ? layers->child : NULL; y; y = y->next, i++) {
		double b = cJSON_GetNumberValue(cJSON_GetObjectItem(y, "b_full_ms"));

		m->layers[i].kind = strdup("layer");
		m->layers[i].f_ms = cJSON_GetNumberValue(cJSON_GetObjectItem(y, "f_ms"));
		m->layers[i].b_ms = m->layers[i].w_ms = b / 2;
	}
	cJSON_Delete(root);
	return 0;
}

static void profile_table(const char *src)
{
	static const char *const names[] = { "deepseek-16b", "gpt-13b", "gpt-oss-20b", "nemotron-nano-v2-9b", NULL };
	static const int cfg[][2] = { { 4, 8 }, { 8, 16 } };
	double sum0 = 0, sum1 = 0, sumt = 0;
	int n = 0;

	printf("\nmeasured profiles, no communication, W = B = backward / 2: converged (no budget) vs %.3g s budget\n",
	       budget_s());
	printf("%-20s %4s %4s %10s %10s %10s %10s %6s %6s %6s %8s %8s %7s %7s\n", "profile", "gpus", "mbs", "conv ms",
	       "tuned ms", "bound ms", "tight ms", "eff0", "eff", "effT", "evals0", "evals", "cpu0 s", "cpu s");
	for (int i = 0; names[i]; i++) {
		char path[4096];
		struct model m;

		snprintf(path, sizeof(path), "%s/samples/profiles/%s.json", src, names[i]);
		if (profile_model(&m, path) < 0) {
			printf("%-20s cannot read %s\n", names[i], path);
			continue;
		}
		for (int k = 0; k < 2; k++) {
			struct cluster c;
			struct metrics m0, m1;
			long e0, e1;
			double c0, c1, t0, t1;

			memset(&c, 0, sizeof(c));
			c.name = strdup("profile");
			c.devices = cfg[k][0];
			c.gpus_per_node = cfg[k][0];
			c.mem_bytes = 141000000000ULL;
			c.speed = 1;
			c.device_speed = calloc((size_t)c.devices, sizeof(double));
			for (int d = 0; d < c.devices; d++)
				c.device_speed[d] = 1;
			c.intra.gbytes_per_s = 1e9;
			c.inter = c.intra;
			t0 = tune_once(&m, &c, cfg[k][1], 0, &m0, &e0, &c0);
			t1 = tune_once(&m, &c, cfg[k][1], budget_s(), &m1, &e1, &c1);
			printf("%-20s %4d %4d %10.1f %10.1f %10.1f %10.1f %5.1f%% %5.1f%% %5.1f%% %8ld %8ld %7.2f %7.2f\n",
			       names[i], cfg[k][0], cfg[k][1], t0, t1, m1.lower_bound_ms, m1.lower_bound_tight_ms,
			       100 * m0.efficiency, 100 * m1.efficiency, 100 * m1.efficiency_tight, e0, e1, c0, c1);
			fflush(stdout);
			sum0 += m0.efficiency;
			sum1 += m1.efficiency;
			sumt += m1.efficiency_tight;
			n++;
			metrics_release(&m0);
			metrics_release(&m1);
			cluster_release(&c);
		}
		model_release(&m);
	}
	if (n)
		printf("mean efficiency over %d: converged %.1f%%, with the budget %.1f%% of the bound (%.1f%% of the tight bound)\n",
		       n, 100 * sum0 / n, 100 * sum1 / n, 100 * sumt / n);
}

static void cell(double base, double tuned)
{
	if (isnan(base))
		printf(" %7s", "-");
	else
		printf(" %6.2fx", base / tuned);
}

/* The sample models of samples/models, sorted by name; NULL-terminated (caller frees). */
static char **sample_names(const char *src, int *n)
{
	char dir[4096];
	DIR *d;
	struct dirent *de;
	char **v = NULL;

	*n = 0;
	snprintf(dir, sizeof(dir), "%s/samples/models", src);
	if (!(d = opendir(dir)))
		return NULL;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char **nv;

		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		if (!(nv = realloc(v, (size_t)(*n + 2) * sizeof(*v))))
			break;
		v = nv;
		if (!(v[*n] = strndup(de->d_name, len - 5)))
			break;
		v[++*n] = NULL;
	}
	closedir(d);
	if (v)
		qsort(v, (size_t)*n, sizeof(*v), name_cmp);
	return v;
}

/*
 * The bundled samples on 8 and 16 H200s (pure pipeline parallelism, 2x, 4x and 8x as many
 * microbatches as GPUs): the tuned plan against the best of every baseline `octopipe
 * compare` runs (baseline_run_all: the same recipes, partitions and simulator options) and
 * against interleaved 1F1B (Megatron's partition, the recipe's). "slower" counts the rows
 * where the tuned plan is slower than the best baseline: the tuner starts from it and
 * keeps a move only when it is faster, so any row there is a bug.
 */
/* Whether name is one of the comma-separated list's entries. */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);

		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p += len + (c != NULL);
	}
	return false;
}

static void samples_table(const char *src)
{
	static const int gpus[] = { 8, 16 };
	int n = 0, nrows = 0, nslower = 0, nil = 0;
	char **names = sample_names(src, &n);
	double sum_best = 0, min_best = INFINITY, sum_il = 0, sum_eff = 0, sum_efft = 0, sum_effm = 0, sum_secs = 0;

	printf("\nbundled samples on 8 and 16 H200s (pure pipeline): tuned vs the best baseline and interleaved 1F1B,"
	       " %s\n", getenv("OCTOPIPE_BENCH_EVALS") ? "a budget of simulations" : "the time budget");
	if (!names) {
		printf("cannot list %s/samples/models\n", src);
		return;
	}
	printf("%-22s %4s %4s %10s %-14s %10s %7s %7s %10s %10s %10s %6s %6s %6s %6s %6s\n", "model", "gpus", "mbs",
	       "tuned ms", "best baseline", "best ms", "vs best", "vs intl", "bound ms", "tight ms", "memory ms", "eff",
	       "effT", "effM", "tune s", "evals");
	for (int mi = 0; mi < n; mi++) {
		char path[4096];
		struct model m;
		struct err e = ERR_INIT;

		if (getenv("OCTOPIPE_BENCH_SAMPLES") && !in_list(getenv("OCTOPIPE_BENCH_SAMPLES"), names[mi]))
			continue;
		snprintf(path, sizeof(path), "%s/samples/models/%s.json", src, names[mi]);
		if (model_load(&m, path, &e) < 0) {
			printf("%-22s cannot load: %s\n", names[mi], e.msg);
			continue;
		}
		for (size_t g = 0; g < sizeof(gpus) / sizeof(gpus[0]); g++) {
			struct cluster c;

			snprintf(path, sizeof(path), "%s/samples/clusters/%dxH200.json", src, gpus[g]);
			if (cluster_load(&c, path, &e) < 0) {
				printf("%s\n", e.msg);
				continue;
			}
			for (int f = 2; f <= 8; f *= 2) {
				int mbs = f * gpus[g], il = -1;
				struct baseline_set bs;
				struct metrics mt;
				long evals;
				double secs, tuned, best;

				if (gpus[g] > m.nlayers) {
					printf("%-22s %4d %4d  (fewer layers than GPUs)\n", m.name, gpus[g], mbs);
					continue;
				}
				if (baseline_run_all(&bs, &m, &c, mbs, &e) < 0) {
					printf("%-22s %4d %4d  n/a: %s\n", m.name, gpus[g], mbs, e.msg);
					continue;
				}
				tuned = tune_once(&m, &c, mbs, budget_s(), &mt, &evals, &secs);
				if (isnan(tuned) || bs.best < 0) {
					printf("%-22s %4d %4d  n/a: %s\n", m.name, gpus[g], mbs,
					       bs.best < 0 ? "no baseline fits in memory (pure pipeline)" : "the tuner failed");
					metrics_release(&mt);
					baseline_set_release(&bs);
					continue;
				}
				for (int r = 0; r < bs.n; r++)
					if (bs.r[r].recipe->schedule == SCHED_INTERLEAVED && bs.r[r].feasible)
						il = r;
				best = bs.r[bs.best].m.makespan_ms;
				printf("%-22s %4d %4d %10.1f %-14s %10.1f %6.3fx", m.name, gpus[g], mbs, tuned,
				       bs.r[bs.best].recipe->name, best, best / tuned);
				cell(il >= 0 ? bs.r[il].m.makespan_ms : NAN, tuned);
				printf(" %10.1f %10.1f %10.1f %5.1f%% %5.1f%% %5.1f%% %6.2f %6ld%s\n", mt.lower_bound_ms,
				       mt.lower_bound_tight_ms, mt.lower_bound_memory_ms, 100 * mt.efficiency,
				       100 * mt.efficiency_tight, 100 * mt.efficiency_memory, secs, evals,
				       tuned > best * (1 + 1e-9) ? "  SLOWER than the best baseline" : "");
				nrows++;
				nslower += tuned > best * (1 + 1e-9);
				sum_best += best / tuned;
				min_best = fmin(min_best, best / tuned);
				if (il >= 0) {
					sum_il += bs.r[il].m.makespan_ms / tuned;
					nil++;
				}
				sum_eff += mt.efficiency;
				sum_efft += mt.efficiency_tight;
				sum_effm += mt.efficiency_memory;
				sum_secs += secs;
				fflush(stdout);
				metrics_release(&mt);
				baseline_set_release(&bs);
			}
			cluster_release(&c);
		}
		model_release(&m);
	}
	if (nrows)
		printf("over %d configurations: %.3fx the best baseline on average (least %.3fx; slower in %d), "
		       "%.2fx interleaved 1F1B (%d), %.1f%% of the bound, %.1f%% of the tight bound, %.1f%% of the "
		       "memory-aware bound, %.2f s tuning\n",
		       nrows, sum_best / nrows, min_best, nslower, nil ? sum_il / nil : NAN, nil, 100 * sum_eff / nrows,
		       100 * sum_efft / nrows, 100 * sum_effm / nrows, sum_secs / nrows);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int main(int argc, char **argv)
{
	static const char *const all[] = { "nemotron-nano-v2-9b", "deepseek-16b", "gpt-oss-20b", "gpt-13b", NULL };
	static const int gpus[] = { 4, 8, 16, 32 };
	const char *const *models = argc > 2 ? (const char *const *)argv + 2 : all;
	const char *src = argc > 1 ? argv[1] : ".";
	double sum_il = 0, sum_1f1b = 0, sum_zb = 0, sum_eff = 0, sum_efft = 0, sum_secs = 0;
	int n = 0, neff = 0;

	if (argc == 3 && strcmp(argv[2], "profiles") == 0) {
		profile_table(src);
		return 0;
	}
	if (argc == 3 && strcmp(argv[2], "samples") == 0) {
		samples_table(src);
		return 0;
	}
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
				o.time_budget_s = budget_s();
				if (o.time_budget_s > 0 && getenv("OCTOPIPE_BENCH_EVALS")) {
					o.time_budget_s = 0;
					o.max_evals = atol(getenv("OCTOPIPE_BENCH_EVALS"));
				}
				if (getenv("OCTOPIPE_BENCH_SEED"))
					o.seed = (unsigned)atol(getenv("OCTOPIPE_BENCH_SEED"));
				o.recompute_moves = !getenv("OCTOPIPE_BENCH_NO_RECOMPUTE");
				if (getenv("OCTOPIPE_BENCH_MAX_STAGES"))
					o.max_stages_per_device = atoi(getenv("OCTOPIPE_BENCH_MAX_STAGES"));
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
	if (argc <= 2) {
		profile_table(src);
		samples_table(src);
	}
	return 0;
}
