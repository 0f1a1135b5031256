/*
 * bench_report — how big the pictures get, how long they take to write and to render: the
 * SVG Gantt chart (`octopipe export svg`) of growing pipelines, 1F1B and ZB-H1 (split
 * backward, so half again as many ops), with bytes and elements per op, and the HTML report
 * of three plans at the largest size. A browser's time to render grows with the elements
 * (each op is a <rect>, its <title> and the title's text) and the bytes; at the largest
 * size, when headless Chromium is installed (OCTOPIPE_CHROMIUM, default /usr/bin/chromium),
 * each file is also rendered to a screenshot, and the table gives the median wall time of
 * three runs less that of an empty SVG (the browser's start). tests/report.sh and
 * test_report bound bytes and elements, never time; this prints a table and never fails on one.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../unit/synth.h"
#include "report.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Start tags in a document: the elements a browser builds. */
static long elements(const struct strbuf *sb)
{
	long n = 0;

	for (const char *c = memchr(sb->buf, '<', sb->len); c; c = memchr(c + 1, '<', (size_t)(sb->buf + sb->len - c - 1)))
		if ((c[1] >= 'a' && c[1] <= 'z') || (c[1] >= 'A' && c[1] <= 'Z'))
			n++;
	return n;
}

static const char *chromium(void)
{
	const char *c = getenv("OCTOPIPE_CHROMIUM");

	if (!c)
		c = "/usr/bin/chromium";
	return *c && access(c, X_OK) == 0 ? c : NULL;
}

/* Wall ms of one headless Chromium screenshot of file (in dir), or -1. */
static double browse_once(const char *dir, const char *file)
{
	char profile[600], shot[600], url[700];
	double t0 = now_ms();
	pid_t pid;
	int st;

	snprintf(profile, sizeof(profile), "--user-data-dir=%s/profile", dir);
	snprintf(shot, sizeof(shot), "--screenshot=%s/shot.png", dir);
	snprintf(url, sizeof(url), "file://%s/%s", dir, file);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		dup2(null, 2);
		execl(chromium(), chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		      "--no-first-run", profile, "--window-size=1280,1400", shot, url, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return now_ms() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median wall ms of three screenshots of text written as dir/name, or -1. */
static double browse(const char *dir, const char *name, const char *text, size_t len)
{
	char path[600];
	double t[3];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(text, 1, len, f) != len) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	for (int i = 0; i < 3; i++)
		if ((t[i] = browse_once(dir, name)) < 0)
			return -1;
	qsort(t, 3, sizeof(t[0]), cmp_double);
	return t[1];
}

/* The render column: ms over the browser's start, or "-". */
static void print_render(double ms, double start)
{
	if (ms < 0 || start < 0)
		printf(" %10s\n", "-");
	else
		printf(" %10.0f\n", ms - start);
}

/* A plan of schedule k on p devices with m microbatches (one layer a stage). */
static int make_plan(struct plan *pl, enum sched_kind k, int p, int m, struct err *e)
{
	struct model md;
	struct cluster cl;
	struct baseline_spec spec = { k, m, 0, "uniform", NULL, 0, 0, NULL };
	int rc;

	synth_model(&md, p, 1, 1, 0.5);
	for (int l = 0; l < p; l++)
		md.layers[l].out_bytes = 10000000;
	synth_cluster(&cl, p, 8, 450, 5);
	rc = baseline_plan(pl, &md, NULL, &cl, NULL, &spec, e);
	model_release(&md);
	cluster_release(&cl);
	return rc;
}

int main(void)
{
	static const int shapes[][2] = { { 8, 32 }, { 32, 128 }, { 64, 256 } };
	static const enum sched_kind kinds[] = { SCHED_1F1B, SCHED_ZBH1 };
	struct plan big[2];
	struct err e = ERR_INIT;
	int nbig = 0;

	char dir[] = "/tmp/octopipe-bench-XXXXXX";
	double start = -1;

	if (chromium() && mkdtemp(dir)) {
		static const char empty[] = "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1\" height=\"1\"/>\n";

		start = browse(dir, "empty.svg", empty, strlen(empty));
	}
	printf("%-8s %8s %6s %9s %12s %10s %8s %10s %10s\n", "what", "devices", "mbs", "ops", "bytes", "bytes/op", "elems/op",
	       "write ms", "render ms");
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		for (size_t j = 0; j < sizeof(kinds) / sizeof(kinds[0]); j++) {
			int p = shapes[i][0], m = shapes[i][1];
			struct plan pl;
			struct strbuf sb = STRBUF_INIT;
			double t0;
			long ops;

			if (make_plan(&pl, kinds[j], p, m, &e) < 0) {
				fprintf(stderr, "bench_report: %s\n", e.msg);
				return 1;
			}
			ops = plan_total_ops(&pl);
			t0 = now_ms();
			if (report_svg(&pl, NULL, NULL, &sb, &e) < 0) {
				fprintf(stderr, "bench_report: %s\n", e.msg);
				return 1;
			}
			t0 = now_ms() - t0;
			printf("%-8s %8d %6d %9ld %12zu %10.1f %8.2f %10.1f", sched_name(kinds[j]), p, m, ops, sb.len,
			       (double)sb.len / (double)ops, (double)elements(&sb) / (double)ops, t0);
			fflush(stdout);
			print_render(i + 1 == sizeof(shapes) / sizeof(shapes[0]) && start >= 0 ? browse(dir, "chart.svg", sb.buf, sb.len)
			             : -1, start);
			strbuf_release(&sb);
			if (i + 1 == sizeof(shapes) / sizeof(shapes[0]))
				big[nbig++] = pl;
			else
				plan_release(&pl);
		}
	}
	{
		const struct plan *plans[3] = { &big[0], &big[1], &big[1] };
		struct report_input in = { plans, NULL, 3, NULL, NULL, NULL, 0, false };
		struct strbuf sb = STRBUF_INIT;
		long ops = 2 * plan_total_ops(&big[1]) + plan_total_ops(&big[0]);
		double t0 = now_ms();

		if (report_html(&in, &sb, &e) < 0) {
			fprintf(stderr, "bench_report: %s\n", e.msg);
			return 1;
		}
		t0 = now_ms() - t0;
		printf("%-8s %8d %6d %9ld %12zu %10.1f %8.2f %10.1f", "report", big[0].ndevices, big[0].microbatches, ops, sb.len,
		       (double)sb.len / (double)ops, (double)elements(&sb) / (double)ops, t0);
		fflush(stdout);
		print_render(start >= 0 ? browse(dir, "report.html", sb.buf, sb.len) : -1, start);
		strbuf_release(&sb);
	}
	for (int i = 0; i < nbig; i++)
		plan_release(&big[i]);
	if (start >= 0) {
		char cmd[700];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench_report: cannot remove %s\n", dir);
		printf("render ms: headless Chromium's wall time to a screenshot (1280x1400), median of 3, less an "
		       "empty SVG's (%.0f ms, the browser's start)\n", start);
	}
	return 0;
}
