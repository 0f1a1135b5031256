/*
 * test_report — the engine API behind `octopipe export svg`, `octopipe report` and the
 * TUI's report key: one op rect per op for every schedule, in the group of its kind
 * (its colour), the same bytes twice, a
 * measured run drawn under the rows (and refused when it belongs to another plan), two
 * plans and tuner steps in one HTML file written atomically, and bad steps or widths as
 * one-line ERR_INPUT errors. And the size of a big chart (64 GPUs x 256 microbatches) as
 * properties of its bytes, not of a clock: bytes and elements per op under a bound, and
 * every op's tooltip naming its stage, microbatch, layers, start and end.
 */
#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "fileio.h"
#include "json.h"
#include "report.h"
#include "synth.h"
#include "../tap.h"

/* Whether r starts an op rect: <rect x="N" width="N" height="N"><title> exactly (other
 * rects carry a class or a y). */
static bool is_op_rect(const char *r)
{
	static const char *const parts[] = { "<rect x=\"", "\" width=\"", "\" height=\"", "\"><title>" };

	for (int i = 0; i < 4; i++) {
		if (strncmp(r, parts[i], strlen(parts[i])) != 0)
			return false;
		r += strlen(parts[i]);
		while (i < 3 && ((*r >= '0' && *r <= '9') || *r == '.' || *r == '-'))
			r++;
	}
	return true;
}

/* Op rects: measured ones, or predicted ones. */
static long op_rects(const char *svg, bool measured)
{
	long n = 0;

	for (const char *r = strstr(svg, "<rect x=\""); r; r = strstr(r + 1, "<rect x=\""))
		if (is_op_rect(r) && (strncmp(strstr(r, "<title>") + 7, "measured ", 9) == 0) == measured)
			n++;
	return n;
}

/* Whether every op rect sits in the <g> of its kind: the tooltip of each rect in a
 * <g class="K..."> names an op of kind K (tokens like 3F12, so the letter after the
 * stage number), and every op rect is in such a group. */
static bool ops_in_kind_groups(const char *svg)
{
	long seen = 0;

	for (const char *g = strstr(svg, "<g class=\""); g; g = strstr(g + 1, "<g class=\"")) {
		char kind = g[10];
		const char *end = strstr(g, "</g>");

		if (!strchr("FIWB", kind) || (g[11] != '"' && g[11] != ' ') || !end)
			continue;
		for (const char *r = strstr(g, "<rect x=\""); r && r < end; r = strstr(r + 1, "<rect x=\"")) {
			const char *t = strstr(r, "<title>") + 7;

			if (!is_op_rect(r))
				return false;
			if (strncmp(t, "measured ", 9) == 0)
				t += 9;
			while (*t >= '0' && *t <= '9')
				t++;
			if (*t != kind)
				return false;
			seen++;
		}
	}
	return seen == op_rects(svg, false) + op_rects(svg, true);
}


/* Whether an op's tooltip t (up to '<') reads "[measured ]<stage><F|I|W|B><mb> layer[s]
 * <a>[-<b>][ (recomputes <how>)] <start>-<end> ms": the stage, the microbatch, the layers,
 * the start and the end. */
static bool tooltip_complete(const char *t)
{
	const char *q = t;

	if (strncmp(q, "measured ", 9) == 0)
		q += 9;
	if (*q < '0' || *q > '9')
		return false;
	while (*q >= '0' && *q <= '9')
		q++;
	if (!strchr("FIWB", *q) || !*q)
		return false;
	q++;
	if (*q < '0' || *q > '9')
		return false;
	while (*q >= '0' && *q <= '9')
		q++;
	if (strncmp(q, " layers ", 8) == 0)
		q += 8;
	else if (strncmp(q, " layer ", 7) == 0)
		q += 7;
	else
		return false;
	if (*q < '0' || *q > '9')
		return false;
	while ((*q >= '0' && *q <= '9') || *q == '-')
		q++;
	if (strncmp(q, " (recomputes ", 13) == 0) {
		q = strchr(q, ')');
		if (!q)
			return false;
		q++;
	}
	if (*q++ != ' ' || *q < '0' || *q > '9')
		return false;
	while ((*q >= '0' && *q <= '9') || *q == '.')
		q++;
	if (*q++ != '-' || *q < '0' || *q > '9')
		return false;
	while ((*q >= '0' && *q <= '9') || *q == '.')
		q++;
	return strncmp(q, " ms</title></rect>", 18) == 0;
}

/* How many op tooltips of svg are not complete (tooltip_complete). */
static long incomplete_tooltips(const char *svg)
{
	long bad = 0;

	for (const char *r = strstr(svg, "<rect x=\""); r; r = strstr(r + 1, "<rect x=\""))
		if (is_op_rect(r) && !tooltip_complete(strstr(r, "<title>") + 7))
			bad++;
	return bad;
}

/* Start tags in svg (elements, not counting the XML declaration). */
static long elements(const char *svg)
{
	long n = 0;

	for (const char *c = strchr(svg, '<'); c; c = strchr(c + 1, '<'))
		if ((c[1] >= 'a' && c[1] <= 'z') || (c[1] >= 'A' && c[1] <= 'Z'))
			n++;
	return n;
}

/* The narrowest stretch of W's dots or B's stripes in svg (paths "M<x> <y>h<w>..." of
 * class pw or pb), or 1e9 when there is none. */
static double narrowest_mark(const char *svg)
{
	double least = 1e9;

	for (const char *c = strstr(svg, "<path class=\"p"); c; c = strstr(c + 1, "<path class=\"p")) {
		const char *d = strstr(c, " d=\""), *end = d ? strchr(d + 4, '"') : NULL;

		if ((c[14] != 'w' && c[14] != 'b') || !end)
			continue;
		for (const char *h = strchr(d, 'h'); h && h < end; h = strchr(h + 1, 'h'))
			if (strtod(h + 1, NULL) < least)
				least = strtod(h + 1, NULL);
	}
	return least;
}

/* A chart of p devices x m microbatches of schedule k (two layers a stage, as a 128-layer
 * model on 64 GPUs has) stays small: its bytes and elements per op under a bound. A browser
 * spends its time on elements (each op is a <rect>, its <title> and the title's text: the
 * floor) and bytes, so these bound the time to render without timing anything. */
static void big_chart(enum sched_kind k, int p, int m, double max_bytes_per_op)
{
	struct model md;
	struct cluster cl;
	struct plan pl;
	struct baseline_spec spec = { k, m, 0, "uniform", NULL, 0, 0, NULL };
	struct strbuf sb = STRBUF_INIT;
	struct err e = ERR_INIT;
	long ops;

	synth_model(&md, 2 * p, 1, 1, 0.5);
	for (int l = 0; l < 2 * p; l++)
		md.layers[l].out_bytes = 10000000;
	synth_cluster(&cl, p, 8, 450, 5);
	if (!ok(baseline_plan(&pl, &md, NULL, &cl, NULL, &spec, &e) == 0, "%s %dx%d: a plan (%s)", sched_name(k), p, m, e.msg)) {
		model_release(&md);
		cluster_release(&cl);
		return;
	}
	ops = plan_total_ops(&pl);
	ok(report_svg(&pl, NULL, NULL, &sb, &e) == 0, "%s %dx%d: report_svg (%s)", sched_name(k), p, m, e.msg);
	is_int(op_rects(sb.buf, false), ops, "%s %dx%d: one op rect per op", sched_name(k), p, m);
	is_int(incomplete_tooltips(sb.buf), 0, "%s %dx%d: every op's tooltip names stage, microbatch, layers, start, end",
	       sched_name(k), p, m);
	ok((double)sb.len / (double)ops <= max_bytes_per_op, "%s %dx%d: %.1f bytes an op (at most %.0f; %.2f MB)",
	   sched_name(k), p, m, (double)sb.len / (double)ops, max_bytes_per_op, sb.len / 1e6);
	ok(elements(sb.buf) - 2 * ops <= 16L * p, "%s %dx%d: a rect and a title an op, and %.1f more elements a GPU "
	   "(at most 16)", sched_name(k), p, m, (double)(elements(sb.buf) - 2 * ops) / p);
	/* at 1200 px, u is 1: a pattern shows from 3 units wide */
	ok(narrowest_mark(sb.buf) >= 3, "%s %dx%d: W's dots and B's stripes only on stretches wide enough to show them "
	   "(narrowest %g)", sched_name(k), p, m, narrowest_mark(sb.buf));
	strbuf_release(&sb);
	plan_release(&pl);
	model_release(&md);
	cluster_release(&cl);
}

/* Relabels a simulated timeline as an emulated run, the stand-in for a measurement. */
static void standin_measured(struct timeline *t)
{
	char *emu = strdup("emu");

	if (emu) {
		free(t->source);
		t->source = emu;
	}
}

/* A simulated timeline is no run: report_svg refuses it. */
static void sim_refused(const struct plan *p, const struct timeline *t)
{
	struct strbuf sb = STRBUF_INIT;
	struct err e = ERR_INIT;

	ok(report_svg(p, t, NULL, &sb, &e) < 0 && e.cls == ERR_INPUT && strstr(e.msg, "not a measurement"),
	   "a simulated timeline is refused as a run (%s)", e.msg);
	strbuf_release(&sb);
}

int main(void)
{
	static const enum sched_kind kinds[] = { SCHED_1F1B, SCHED_INTERLEAVED, SCHED_ZBH1, SCHED_ZBV, SCHED_DUALPIPEV };
	struct plan p1, p2;
	struct timeline t1, t2;
	struct err e = ERR_INIT;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct plan p;
		struct timeline t;
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		struct report_svg_opts o = { 800, true, "x<y" };

		if (!ok(synth_exec_plan(kinds[i], &p, &t, &e) == 0, "%s: a plan (%s)", sched_name(kinds[i]), e.msg))
			continue;
		ok(report_svg(&p, NULL, &o, &a, &e) == 0, "%s: report_svg", sched_name(kinds[i]));
		is_int(op_rects(a.buf, false), plan_total_ops(&p), "%s: one op rect per op", sched_name(kinds[i]));
		ok(ops_in_kind_groups(a.buf), "%s: every op rect is in the group of its kind", sched_name(kinds[i]));
		ok(strstr(a.buf, "<title>x&lt;y</title>") != NULL, "%s: the title is escaped", sched_name(kinds[i]));
		ok(strstr(a.buf, "<path class=\"cp\"") != NULL, "%s: the critical path is drawn", sched_name(kinds[i]));
		report_svg(&p, NULL, &o, &b, &e);
		ok(a.len == b.len && memcmp(a.buf, b.buf, a.len) == 0, "%s: the same plan gives the same bytes",
		   sched_name(kinds[i]));
		/* the simulated timeline stands in for a measured run (labelled as one: a timeline
		 * whose source is "sim" is refused as a measurement) */
		standin_measured(&t);
		strbuf_reset(&b);
		ok(report_svg(&p, &t, &o, &b, &e) == 0, "%s: report_svg with a run", sched_name(kinds[i]));
		is_int(op_rects(b.buf, true), plan_total_ops(&p), "%s: one measured rect per op", sched_name(kinds[i]));
		is_int(op_rects(b.buf, false), plan_total_ops(&p), "%s: and one predicted rect per op", sched_name(kinds[i]));
		ok(ops_in_kind_groups(b.buf), "%s: with a run, every op rect is in the group of its kind", sched_name(kinds[i]));
		strbuf_release(&a);
		strbuf_release(&b);
		timeline_release(&t);
		plan_release(&p);
	}

	if (synth_exec_plan(SCHED_1F1B, &p1, &t1, &e) < 0 || synth_exec_plan(SCHED_ZBV, &p2, &t2, &e) < 0) {
		ok(0, "two plans (%s)", e.msg);
		return tap_done();
	}
	sim_refused(&p1, &t1);
	standin_measured(&t1), standin_measured(&t2);
	{
		struct strbuf sb = STRBUF_INIT;
		struct report_svg_opts o = { 100, false, NULL };

		err_clear(&e);
		ok(report_svg(&p1, NULL, &o, &sb, &e) < 0 && e.cls == ERR_INPUT, "a width of 100 px is refused (%s)", e.msg);
		err_clear(&e);
		/* zb-v runs 2 stages per device: its run is not a run of the 1f1b plan */
		ok(report_svg(&p1, &t2, NULL, &sb, &e) < 0 && e.cls == ERR_INPUT, "another plan's run is refused (%s)", e.msg);
		strbuf_release(&sb);
	}
	{
		const struct plan *plans[2] = { &p1, &p2 };
		const char *labels[2] = { "one & only", "two" };
		/* each step carries the first plan's stages: steps must be of the plans' model */
		char stages[512] = "", steps_text[2048];
		size_t k = 0;

		for (int st = 0; st < p1.nstages && k < sizeof(stages) - 64; st++)
			k += (size_t)snprintf(stages + k, sizeof(stages) - k, "%s{\"layers\": [%d, %d], \"device\": %d}",
			                      st ? ", " : "", p1.stages[st].first, p1.stages[st].last, p1.stages[st].device);
		snprintf(steps_text, sizeof(steps_text),
		         "{\"format\": \"octopipe.steps/1\", \"model\": \"synthetic\", \"cluster\": \"synthetic\","
		         " \"best_baseline\": \"1f1b\", \"best_baseline_ms\": 40, \"steps\": ["
		         "{\"step\": 0, \"phase\": \"start\", \"what\": \"start\", \"before_ms\": 40, \"after_ms\": 40, \"stages\": [%s]},"
		         "{\"step\": 1, \"phase\": \"partition\", \"what\": \"<moved>\", \"before_ms\": 40, \"after_ms\": 35, \"stages\": [%s]},"
		         "{\"step\": 2, \"phase\": \"scheduling\", \"what\": \"knobs\", \"before_ms\": 35, \"after_ms\": 33, \"stages\": [%s]}]}",
		         stages, stages, stages);
		cJSON *steps = json_parse(steps_text, strlen(steps_text), "steps.json", &e);
		const char *bad_text = "{\"format\": \"octopipe.steps/1\", \"steps\": [{\"phase\": 3}]}";
		cJSON *bad = json_parse(bad_text, strlen(bad_text), "bad.json", &e);
		struct report_input in = { plans, labels, 2, steps, "steps.json", &t1, 0, true };
		struct strbuf sb = STRBUF_INIT;
		char path[] = "/tmp/octopipe-report-XXXXXX";
		int fd = mkstemp(path);
		size_t len = 0;
		char *text;

		ok(steps && bad, "steps documents parse");
		ok(report_html(&in, &sb, &e) == 0, "report_html of two plans, steps and a run (%s)", e.msg);
		is_int(op_rects(sb.buf, false), plan_total_ops(&p1) + plan_total_ops(&p2), "one op rect per op of both plans");
		is_int(op_rects(sb.buf, true), plan_total_ops(&p1), "the run under the first plan only");
		ok(ops_in_kind_groups(sb.buf), "every op rect of the report is in the group of its kind");
		ok(strstr(sb.buf, "one &amp; only") != NULL, "labels are escaped");
		ok(strstr(sb.buf, "&lt;moved&gt;") != NULL, "step descriptions are escaped");
		ok(strstr(sb.buf, "<script") == NULL, "no scripts");
		err_clear(&e);
		ok(fd >= 0 && report_write(path, &in, &e) == 0, "report_write (%s)", e.msg);
		text = fileio_read(path, &len, &e);
		ok(text && len == sb.len && memcmp(text, sb.buf, len) == 0, "report_write writes what report_html gives");
		free(text);
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		in.steps = bad;
		in.steps_file = "bad.json";
		err_clear(&e);
		ok(report_html(&in, &sb, &e) < 0 && e.cls == ERR_INPUT && strstr(e.msg, "bad.json: steps[0].phase") == e.msg,
		   "a bad step is one ERR_INPUT line naming its path (%s)", e.msg);
		in.steps = NULL;
		in.measured = &t2;
		err_clear(&e);
		ok(report_html(&in, &sb, &e) < 0 && e.cls == ERR_INPUT, "a run of another plan is refused (%s)", e.msg);
		in.nplans = 0;
		ok(report_html(&in, &sb, &e) < 0 && e.cls == ERR_INPUT, "no plans is refused");
		strbuf_release(&sb);
		cJSON_Delete(steps);
		cJSON_Delete(bad);
	}
	big_chart(SCHED_ZBH1, 64, 256, 99);
	big_chart(SCHED_1F1B, 64, 256, 99);
	timeline_release(&t1);
	timeline_release(&t2);
	plan_release(&p1);
	plan_release(&p2);
	return tap_done();
}
