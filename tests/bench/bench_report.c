/*
 * bench_report — how big the pictures get and how long they take to write: the SVG Gantt
 * chart (`octopipe export svg`) of growing pipelines, 1F1B and ZB-H1 (split backward, so
 * half again as many ops), with bytes per op, and the HTML report of three plans at the
 * largest size. A browser's time to render grows with the bytes and the elements (one
 * <rect> with its <title> per op); tests/report.sh has no timing, this prints a table and
 * never fails on one.
 */
#include "config.h"

#include <stdio.h>
#include <time.h>

#include "../unit/synth.h"
#include "report.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
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

	printf("%-8s %8s %6s %9s %12s %10s %10s\n", "what", "devices", "mbs", "ops", "bytes", "bytes/op", "write ms");
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
			printf("%-8s %8d %6d %9ld %12zu %10.1f %10.1f\n", sched_name(kinds[j]), p, m, ops, sb.len,
			       (double)sb.len / (double)ops, now_ms() - t0);
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
		printf("%-8s %8d %6d %9ld %12zu %10.1f %10.1f\n", "report", big[0].ndevices, big[0].microbatches, ops, sb.len,
		       (double)sb.len / (double)ops, now_ms() - t0);
		strbuf_release(&sb);
	}
	for (int i = 0; i < nbig; i++)
		plan_release(&big[i]);
	return 0;
}
