/*
 * bench_budget — does `octopipe tune|compare --budget B` bound the whole command? For
 * GPUs x budget x (tune, compare) x (--layout auto, pp), the wall time of the command
 * (loading, layout search, tuning, the result's simulation and writing the plan) against
 * B + 10% + 0.1 s, the limit the help promises, or its refusal up front. Inputs:
 * llama2-70b on 64 H200s at 512 microbatches (the case), and a model with as many
 * layers as GPUs (llama2-7b's blocks repeated, its architecture saying so, so the layout
 * search prices every TP degree) on N H200s at 2 microbatches a GPU, N = 256 to 65536.
 * Prints a table; never fails on timing (a busy machine runs slower).
 *
 * usage: bench_budget SRCDIR OCTOPIPE [GPUS...]
 *
 * Measured 2026-12-02 on the shared 2-core machine (load average 1-4), seconds; r: refused
 * up front (exit 2: reading the model or one simulation would pass the budget):
 *
 *     gpus command        B=0.1   B=0.5   B=1     B=3     (limit 0.21, 0.65, 1.2, 3.4)
 *       64 tune auto       0.09    0.49    0.98    2.92   before: 1.21 s at B=0.1
 *       64 tune pp         0.21    0.53    0.93    2.69
 *      256 tune pp         0.01 r  0.01 r  1.18    2.67
 *     1024 tune auto       0.09    0.21    0.38    0.97   before: > 60 s at B=1
 *     4096 tune auto       0.14    0.23    0.90    2.27
 *     4096 tune pp         0.05 r  0.05 r  0.05 r  0.05 r before: 90 s and more
 *     8192 tune auto       0.15 r  0.41 r  0.57    2.94   before: 0.8-2.5 s at B=1
 *     8192 compare auto    0.17 r  0.41 r  0.69    1.14
 *    16384 tune auto       0.00 r  0.47 r  0.74 r  2.45   before: 2.3 s at B=0.1 and 1
 *    32768 tune auto       0.00 r  0.44 r  0.78 r  2.07 r before: 5.2 s at B=0.1
 *    65536 tune auto       0.00 r  0.00 r  0.00 r  2.23 r before: > 120 s
 *    65536 compare pp      0.00 r  0.00 r  0.00 r  0.74 r
 *
 * 1 of 144 runs past the limit (64 GPUs, tune pp at B=0.1: 0.21 s, at the limit). The
 * floor at scale: reading a 65536-layer model (14 MB of JSON, 0.7-1.1 s; refused before
 * it is read when the budget cannot hold it) and pricing each candidate replica's table.
 *
 * Re-measured 2026-12-03 (a quieter machine): 2 of 144 past the limit, both at 16384 GPUs
 * and B=1 (tune auto 1.24 s, compare auto 1.34 s against 1.2; the build before that day's
 * changes 1.25 and 1.39 s, so not theirs): no longer refused up front, the tuner's set-up
 * at the chosen layout (its baselines over 32 stages x 256 microbatches) takes its whole
 * share (0.64 s, no plan searched) and runs some 50 ms past it. Up to 8192 GPUs every run
 * holds (4096: tune auto 0.10, 0.51, 0.83, 1.73 s).
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "cluster.h"
#include "model.h"

/* llama2-7b's blocks repeated to n layers (the first and last kept), its architecture's
 * layer count set to match. */
static int write_model(const char *src, int n, const char *path)
{
	char in[4096];
	struct model m, big;
	struct err e = ERR_INIT;
	cJSON *arch, *nh;
	int r;

	snprintf(in, sizeof(in), "%s/samples/models/llama2-7b.json", src);
	if (model_load(&m, in, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return -1;
	}
	big = m;
	big.layers = calloc((size_t)n, sizeof(*big.layers));
	if (!big.layers) {
		model_release(&m);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int from = i == 0 ? 0 : i == n - 1 ? m.nlayers - 1 : 1 + (i - 1) % (m.nlayers - 2);

		big.layers[i] = m.layers[from];
		big.layers[i].extra = NULL;
	}
	big.nlayers = n;
	arch = cJSON_GetObjectItem(cJSON_GetObjectItem(m.extra, "source"), "architecture");
	if ((nh = cJSON_GetObjectItem(arch, "num_hidden_layers")))
		cJSON_SetNumberValue(nh, n - 2);
	r = model_save(&big, path, &e);
	if (r < 0)
		fprintf(stderr, "%s\n", e.msg);
	free(big.layers);
	model_release(&m);
	return r;
}

static int write_cluster(int n, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "{\"format\":\"octopipe.cluster/1\",\"name\":\"%dxH200\",\"gpu\":\"H200\",\"devices\":%d,"
	        "\"gpus_per_node\":8,\"mem_bytes\":141000000000,\"mem_headroom\":0.05,\"speed\":1,"
	        "\"intra_node\":{\"gbytes_per_s\":450,\"latency_us\":5},"
	        "\"inter_node\":{\"gbytes_per_s\":50,\"latency_us\":10}}\n", n, n);
	return fclose(f);
}

/* What is timed: tune or compare, at --layout auto or pp. */
struct variant {
	const char *cmd, *layout;
};

static const double budgets[] = { 0.1, 0.5, 1, 3 };

static const struct variant variants[] = {
	{ "tune", "auto" }, { "tune", "pp" }, { "compare", "auto" }, { "compare", "pp" },
};

/* Seconds the command took; NAN when it could not run. */
static double run(const char *exe, const struct variant *v, const char *model, const char *cluster, int mbs,
                  double budget, int *rc)
{
	char mb[32], b[32];
	double t0 = clock_now_s();
	pid_t pid;
	int st;

	snprintf(mb, sizeof(mb), "%d", mbs);
	snprintf(b, sizeof(b), "%g", budget);
	fflush(stdout);
	if ((pid = fork()) < 0)
		return NAN;
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		if (strcmp(v->cmd, "tune") == 0)
			execl(exe, exe, "tune", "--layout", v->layout, "--model", model, "--cluster", cluster, "--microbatches",
			      mb, "--budget", b, "--quiet", "-o", "/dev/null", (char *)NULL);
		else
			execl(exe, exe, "compare", "--layout", v->layout, "--model", model, "--cluster", cluster,
			      "--microbatches", mb, "--budget", b, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return NAN;
	*rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	return clock_now_s() - t0;
}

/* One row per variant: n GPUs, mbs microbatches, every budget. */
static void rows(const char *exe, int n, int mbs, const char *tag, const char *mp, const char *cp, int *over,
                 int *runs)
{
	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		char what[32];

		snprintf(what, sizeof(what), "%s %s%s", variants[v].cmd, variants[v].layout, tag);
		printf("%6d %6d %-17s", n, mbs, what);
		for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++) {
			int rc = -1;
			double s = run(exe, &variants[v], mp, cp, mbs, budgets[b], &rc);
			bool late = !(s <= budgets[b] * 1.1 + 0.1);

			*over += late;
			(*runs)++;
			printf("  %5.2f%s%s", s, late ? "!" : " ", rc == 0 ? " " : rc == 2 ? "r" : rc == 3 ? "i" : "x");
			fflush(stdout);
		}
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 64, 256, 1024, 2048, 4096, 8192, 16384, 32768, 65536 };
	const char *src = argc > 1 ? argv[1] : ".", *exe = argc > 2 ? argv[2] : "./octopipe";
	char dir[] = "/tmp/octopipe-bench-budget.XXXXXX";
	int ns = argc > 3 ? argc - 3 : (int)(sizeof(sizes) / sizeof(sizes[0])), over = 0, runs = 0;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	printf("octopipe tune|compare --budget B: wall seconds of the whole command (limit B x 1.1 + 0.1 s)\n");
	printf("%6s %6s %-17s", "gpus", "mbs", "command");
	for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++)
		printf("  B=%-5g", budgets[b]);
	printf("\n");
	for (int i = 0; i < ns; i++) {
		int n = argc > 3 ? atoi(argv[3 + i]) : sizes[i], mbs;
		char mp[4200], cp[4200];

		if (n < 2)
			continue;
		if (n == 64) {
			snprintf(mp, sizeof(mp), "%s/samples/models/llama2-70b.json", src);
			snprintf(cp, sizeof(cp), "%s/samples/clusters/64xH200.json", src);
			mbs = 512;
		} else {
			snprintf(mp, sizeof(mp), "%s/m%d.json", dir, n);
			snprintf(cp, sizeof(cp), "%s/c%d.json", dir, n);
			mbs = 2 * n;
			if (write_model(src, n, mp) < 0 || write_cluster(n, cp) < 0)
				continue;
		}
		rows(exe, n, mbs, "", mp, cp, &over, &runs);
		if (n != 64) {
			remove(mp);
			remove(cp);
		}
	}
	/* deep: 2000 layers over hundreds of pipeline devices, where the tuner's partition
	 * search (not its simulations) once ran 10x past the budget (outside testing,
	 * 2026-12-05: 18-28 s at B=2 on 256 GPUs, over 120 s on 1024) */
	for (int i = 0; argc <= 3 && i < 2; i++) {
		int n = i ? 1024 : 256;
		char mp[4200], cp[4200];

		snprintf(mp, sizeof(mp), "%s/deep%d.json", dir, n);
		snprintf(cp, sizeof(cp), "%s/cdeep%d.json", dir, n);
		if (write_model(src, 2000, mp) == 0 && write_cluster(n, cp) == 0)
			rows(exe, n, 64, " deep", mp, cp, &over, &runs);
		remove(mp);
		remove(cp);
	}
	rmdir(dir);
	printf("%d of %d runs past the limit (!); r: refused up front (exit 2, the budget cannot hold), i: no plan\n"
	       "fits (exit 3), x: the command failed otherwise\n", over, runs);
	return 0;
}
