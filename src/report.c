/*
 * report — the HTML report (see report.h): one page with the summary, speedups over the
 * baselines, peak memory, bubbles, memory over time, the tuner's steps and a lazily
 * painted Gantt chart per plan. The charts are report_gantt.c's, the steps
 * report_steps.c's; this file lays the page out and writes it atomically.
 */
#include "config.h"
#include "report_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "doc.h"
#include "explain.h"
#include "fileio.h"
#include "json.h"
#include "steps.h"

/* ---- the HTML report -------------------------------------------------------------------------- */

static const char html_css[] =
	"body{font-family:sans-serif;margin:16px;color:#111;max-width:1250px}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:24px 0 8px;border-bottom:1px solid #ccc}"
	"h3{font-size:15px;margin:16px 0 6px}"
	"table{border-collapse:collapse;font-size:13px;margin:4px 0 12px}"
	"th,td{border:1px solid #bbb;padding:3px 7px;text-align:right}th{background:#eee}"
	"td.l,th.l{text-align:left}td.oom{background:#f6d5d5;font-weight:bold}td.best{font-weight:bold}"
	"p.note{font-size:12px;color:#444;max-width:1000px}"
	"svg{max-width:100%;height:auto;display:block}svg.defs{position:absolute;width:0;height:0}"
	"figure{margin:8px 0 16px}figure.lazy{content-visibility:auto}"
	"@media print{body{margin:0;max-width:none;-webkit-print-color-adjust:exact;print-color-adjust:exact}"
	"section{break-before:page}"
	"section#summary{break-before:auto}figure,table{break-inside:avoid}}";

static bool same_setup(const struct plan *a, const struct plan *b)
{
	return a->microbatches == b->microbatches && a->ndevices == b->ndevices &&
	       a->model.nlayers == b->model.nlayers && strcmp(a->model.name, b->model.name) == 0 &&
	       strcmp(a->cluster.name, b->cluster.name) == 0;
}

/* What a baseline's cell says when it has no time: why it has none. */
static const char *baseline_why(const struct baseline_result *r)
{
	if (!r->built)
		return "n/a";
	if (!r->ran)
		return r->why.cls == ERR_INFEASIBLE ? "deadlock" : "n/a";
	return "out of memory";
}

static void put_summary_table(struct strbuf *sb, const struct chart *c, int n)
{
	strbuf_addstr(sb, "<table><tr><th class=\"l\">plan</th><th class=\"l\">model \xc2\xb7 cluster \xc2\xb7 microbatches</th>"
	              "<th>iteration</th><th>tokens/s</th><th>bubble</th><th>lower bound</th><th>efficiency</th>"
	              "<th>peak memory (largest GPU)</th><th>usable per GPU</th><th class=\"l\">feasible</th></tr>\n");
	for (int i = 0; i < n; i++) {
		const struct plan *p = c[i].p;

		strbuf_addstr(sb, "<tr><td class=\"l\">");
		rpt_xml_text(sb, c[i].label);
		strbuf_addstr(sb, "</td><td class=\"l\">");
		rpt_xml_text(sb, p->model.name);
		strbuf_addstr(sb, " \xc2\xb7 ");
		rpt_xml_text(sb, p->cluster.name);
		strbuf_addf(sb, " \xc2\xb7 %d</td>", p->microbatches);
		if (!c[i].ok) {
			strbuf_addstr(sb, "<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td class=\"l oom\">no: ");
			rpt_xml_text(sb, c[i].why.msg);
			strbuf_addstr(sb, "</td></tr>\n");
			continue;
		}
		rpt_td_ms(sb, c[i].m.makespan_ms);
		strbuf_addf(sb, "<td>%.0f</td><td>%.1f%%</td>", c[i].m.throughput_tokens_per_s, 100 * c[i].m.bubble_ratio);
		rpt_td_ms(sb, c[i].m.lower_bound_ms);
		strbuf_addf(sb, "<td>%.1f%%</td><td%s>", 100 * c[i].m.efficiency, c[i].m.noom ? " class=\"oom\"" : "");
		fmt_bytes(sb, c[i].peak);
		strbuf_addstr(sb, "</td><td>");
		fmt_bytes(sb, cluster_usable_bytes(&p->cluster));
		if (c[i].m.noom)
			strbuf_addf(sb, "</td><td class=\"l oom\">no: GPU %d out of memory</td></tr>\n", c[i].m.oom[0]);
		else
			strbuf_addstr(sb, "</td><td class=\"l\">yes</td></tr>\n");
	}
	strbuf_addstr(sb, "</table>\n");
}

static int put_speedups(struct strbuf *sb, const struct chart *c, int n, struct err *e)
{
	bool *done = calloc((size_t)n, sizeof(bool));
	int rc = 0;

	if (!done)
		return err_set(e, ERR_RUNTIME, "out of host memory building the baselines");
	for (int i = 0; i < n && rc == 0; i++) {
		const struct plan *gp = c[i].p;
		struct baseline_set bs;

		if (done[i])
			continue;
		if (baseline_run_all(&bs, &gp->model, &gp->cluster, gp->microbatches, e) < 0) {
			rc = -1;
			break;
		}
		strbuf_addstr(sb, "<h3>Speedup over the baselines: ");
		rpt_xml_text(sb, gp->model.name);
		strbuf_addstr(sb, " on ");
		rpt_xml_text(sb, gp->cluster.name);
		strbuf_addf(sb, ", %d microbatch%s</h3>\n<table><tr><th class=\"l\">baseline</th><th>iteration</th>",
		            gp->microbatches, gp->microbatches == 1 ? "" : "es");
		for (int j = i; j < n; j++)
			if (!done[j] && same_setup(c[j].p, gp)) {
				strbuf_addstr(sb, "<th>");
				rpt_xml_text(sb, c[j].label);
				strbuf_addstr(sb, "</th>");
			}
		strbuf_addstr(sb, "</tr>\n");
		for (int r = 0; r < bs.n; r++) {
			const struct baseline_result *br = &bs.r[r];
			double ms = br->m.makespan_ms;

			strbuf_addstr(sb, "<tr><td class=\"l\">");
			rpt_xml_text(sb, br->recipe->name);
			strbuf_addstr(sb, "</td>");
			if (br->feasible)
				rpt_td_ms(sb, ms);
			else
				strbuf_addf(sb, "<td>%s</td>", baseline_why(br));
			for (int j = i; j < n; j++) {
				if (done[j] || !same_setup(c[j].p, gp))
					continue;
				if (br->feasible && c[j].ok && !c[j].m.noom)
					strbuf_addf(sb, "<td%s>%.2f\xc3\x97</td>", ms / c[j].m.makespan_ms > 1.0005 ? " class=\"best\"" : "",
					            ms / c[j].m.makespan_ms);
				else
					strbuf_addstr(sb, "<td>-</td>");
			}
			strbuf_addstr(sb, "</tr>\n");
		}
		strbuf_addstr(sb, "</table>\n");
		baseline_set_release(&bs);
		for (int j = i; j < n; j++)
			if (same_setup(c[j].p, gp))
				done[j] = true;
	}
	free(done);
	return rc;
}

static void put_peak_table(struct strbuf *sb, const struct chart *c, int n)
{
	int maxd = 0;

	for (int i = 0; i < n; i++)
		if (c[i].ok && c[i].m.ndevices > maxd)
			maxd = c[i].m.ndevices;
	strbuf_addstr(sb, "<h3>Peak memory per GPU</h3>\n<table><tr><th>GPU</th>");
	for (int i = 0; i < n; i++) {
		strbuf_addstr(sb, "<th>");
		rpt_xml_text(sb, c[i].label);
		strbuf_addstr(sb, "</th>");
	}
	strbuf_addstr(sb, "</tr>\n");
	for (int d = 0; d < maxd; d++) {
		strbuf_addf(sb, "<tr><td>%d</td>", d);
		for (int i = 0; i < n; i++) {
			if (!c[i].ok || d >= c[i].m.ndevices) {
				strbuf_addstr(sb, "<td>-</td>");
				continue;
			}
			if ((double)c[i].m.dev[d].peak_mem_bytes > cluster_usable_bytes(&c[i].p->cluster)) {
				strbuf_addstr(sb, "<td class=\"oom\">");
				fmt_bytes(sb, (double)c[i].m.dev[d].peak_mem_bytes);
				strbuf_addstr(sb, " OOM</td>");
			} else {
				strbuf_addstr(sb, "<td>");
				fmt_bytes(sb, (double)c[i].m.dev[d].peak_mem_bytes);
				strbuf_addstr(sb, "</td>");
			}
		}
		strbuf_addstr(sb, "</tr>\n");
	}
	strbuf_addstr(sb, "</table>\n");
}

/* Per GPU: busy, then warm-up, steady and cool-down idle as one stacked bar. */
static void put_bubbles(struct strbuf *sb, const struct chart *c, int width)
{
	double u = width / 1200.0, x0 = 64 * u, pw = width - x0 - 400 * u, rh = 11 * u, pitch = 15 * u;
	double mk = c->m.makespan_ms > 0 ? c->m.makespan_ms : 1, y0 = 22 * u;
	int nd = c->m.ndevices;
	double h = y0 + nd * pitch + 6 * u, lx = x0;
	struct gantt_geo g = { .u = u };

	rpt_put(sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%N\" viewBox=\"0 0 %d %N\" "
	    "font-family=\"sans-serif\" font-size=\"%N\">\n<title>bubbles per GPU</title>\n", width, h, width, h, 10 * u);
	lx = rpt_legend_item(sb, &g, lx, 4 * u, "bz", "busy");
	lx = rpt_legend_item(sb, &g, lx, 4 * u, "wu", "warm-up idle");
	lx = rpt_legend_item(sb, &g, lx, 4 * u, "bu", "steady idle");
	rpt_legend_item(sb, &g, lx, 4 * u, "cd", "cool-down idle");
	strbuf_addch(sb, '\n');
	for (int d = 0; d < nd; d++) {
		const struct device_metrics *dm = &c->m.dev[d];
		double steady = dm->idle_ms - dm->warmup_idle_ms - dm->cooldown_idle_ms, x = x0;
		double seg[4] = { dm->busy_ms, dm->warmup_idle_ms, steady > 0 ? steady : 0, dm->cooldown_idle_ms };
		static const char *const cls[4] = { "bz", "wu", "bu", "cd" };
		static const char *const what[4] = { "busy", "warm-up idle", "steady idle", "cool-down idle" };

		rpt_put(sb, "<g transform=\"translate(0 %N)\">", y0 + d * pitch);
		rpt_put(sb, "<text class=\"r\" x=\"%N\" y=\"%N\">GPU %d</text>", x0 - 5 * u, rh * 0.8, d);
		for (int k = 0; k < 4; k++) {
			double w = seg[k] / mk * pw;

			if (w <= 0)
				continue;
			if (k == 1 || k == 3)
				rpt_put(sb, "<rect class=\"%s\" x=\"%N\" width=\"%N\" height=\"%N\"/>", cls[k], x, w, rh);
			rpt_put(sb, "<rect class=\"%s\" x=\"%N\" width=\"%N\" height=\"%N\"><title>GPU %d %s %.2f ms</title></rect>",
			    k == 0 ? "bz" : "bu", x, w, rh, d, what[k], seg[k]);
			x += w;
		}
		rpt_put(sb, "<text x=\"%N\" y=\"%N\">", x0 + pw + 6 * u, rh * 0.8);
		strbuf_addf(sb, "bubble %.1f%%: warm-up %.1f \xc2\xb7 steady %.1f \xc2\xb7 cool-down %.1f ms</text></g>\n",
		            100 * dm->bubble_ratio, dm->warmup_idle_ms, seg[2], dm->cooldown_idle_ms);
	}
	strbuf_addstr(sb, "</svg>\n");
}

/* Okabe-Ito: told apart with any colour vision; lines also differ in dashes by the eight,
 * and each line of up to 16 GPUs is labelled with its GPU at its peak, so that greyscale
 * tells them apart too. */
static const char *const palette[8] = { "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00",
                                        "#000000", "#f0e442" };
static const double dashes[4][4] = { { 0 }, { 6, 3 }, { 2, 2 }, { 8, 3, 2, 3 } };

/* The stroke-dasharray attribute of GPU d's line at scale u (none for a solid line). */
static void put_dashes(struct strbuf *sb, int d, double u)
{
	const double *ds = dashes[(d / 8) % 4];

	if (ds[0] <= 0)
		return;
	strbuf_addstr(sb, " stroke-dasharray=\"");
	for (int i = 0; i < 4 && ds[i] > 0; i++)
		rpt_put(sb, "%s%N", i ? " " : "", ds[i] * u);
	strbuf_addch(sb, '"');
}

struct msample {
	double t;
	double bytes;
	long i;
};

static int msample_cmp(const void *a, const void *b)
{
	const struct msample *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Memory of every GPU over the iteration: step lines, one column of pixels keeping the
 * largest value it saw, and the usable capacity. */
/* Where the memory chart's plot sits. */
struct mem_geo {
	double u, x0, pw, ph, y0, mk, top;
};

/* One GPU's memory line through its samples ms[0..n) (sorted by time): one point per pixel
 * column, the column's largest value; *px, *py get where the line peaks. */
static void put_mem_line(struct strbuf *sb, const struct mem_geo *mg, const struct msample *ms, int n, double *px,
                         double *py)
{
	double u = mg->u, x0 = mg->x0, pw = mg->pw, ph = mg->ph, y0 = mg->y0, mk = mg->mk, top = mg->top;
	double col = -1, colmax = 0, last_y = -1, peak = -1;
	bool first = true;

	for (int i = 0; i <= n; i++) {
		double x = i < n ? floor((x0 + ms[i].t / mk * pw) / u) * u : x0 + pw;

		if (i == n || x != col) {
			if (col >= 0) {
				double yy = y0 + ph - colmax / top * ph;

				if (first)
					rpt_put(sb, "M%N %N", col, yy);
				else if (yy != last_y)
					rpt_put(sb, "H%NV%N", col, yy);
				first = false;
				last_y = yy;
				if (colmax > peak) {
					peak = colmax;
					*px = col;
					*py = yy;
				}
			}
			if (i == n)
				break;
			col = x;
			colmax = ms[i].bytes;
		} else if (ms[i].bytes > colmax) {
			colmax = ms[i].bytes;
		}
	}
}

/* The legend: the GPUs' colours (the first 16), and the one with the highest peak. */
static void put_mem_legend(struct strbuf *sb, const struct chart *c, const struct mem_geo *mg, int dmax)
{
	int nd = c->t.ndevices;
	double u = mg->u, lx = mg->x0, ly = mg->y0 + mg->ph + 22 * u;

	for (int d = 0; d < nd && d < 16; d++) {
		rpt_put(sb, "<path class=\"ln\" stroke=\"%s\"", palette[d % 8]);
		put_dashes(sb, d, u);
		rpt_put(sb, " d=\"M%N %Nh%N\"/>", lx, ly + 4 * u, 16 * u);
		rpt_put(sb, "<text x=\"%N\" y=\"%N\">GPU %d</text>", lx + 19 * u, ly + 7 * u, d);
		lx += 62 * u;
	}
	rpt_put(sb, "<text x=\"%N\" y=\"%N\">%sthick: GPU %d, the highest peak (", lx, ly + 7 * u,
	    nd > 16 ? "\xe2\x80\xa6 one line per GPU (hover for its name); " : "each line's GPU at its peak; ", dmax);
	fmt_bytes(sb, c->peak);
	strbuf_addstr(sb, ")</text>\n</svg>\n");
}

static int put_memory(struct strbuf *sb, const struct chart *c, int width, struct err *e)
{
	double u = width / 1200.0, x0 = 80 * u, pw = width - x0 - 110 * u, ph = 220 * u, y0 = 10 * u;
	double mk = c->m.makespan_ms > 0 ? c->m.makespan_ms : 1, cap = cluster_usable_bytes(&c->p->cluster);
	double top = (c->peak > cap ? c->peak : cap) * 1.08, h = y0 + ph + 40 * u, step;
	int nd = c->t.ndevices, dmax = 0;
	struct msample *ms = NULL;
	struct strbuf lab = STRBUF_INIT;   /* the labels, drawn over every line */
	double lxy[17][2];                 /* where they are, to keep them apart */
	int nlab = 0;
	struct mem_geo mg;

	if (top <= 0)
		top = 1;
	mg = (struct mem_geo){ u, x0, pw, ph, y0, mk, top };
	for (int d = 0; d < nd; d++)
		if (c->m.dev[d].peak_mem_bytes > c->m.dev[dmax].peak_mem_bytes)
			dmax = d;
	rpt_put(sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%N\" viewBox=\"0 0 %d %N\" "
	    "font-family=\"sans-serif\" font-size=\"%N\">\n<title>memory over time</title>\n", width, h, width, h, 10 * u);
	/* axes: GB on the left, time below */
	step = rpt_nice_step(top / 1e9, 5) * 1e9;
	strbuf_addstr(sb, "<path class=\"gr\" d=\"");
	for (double b = 0; b <= top; b += step)
		rpt_put(sb, "M%N %NH%N", x0, y0 + ph - b / top * ph, x0 + pw);
	strbuf_addstr(sb, "\"/>");
	for (double b = 0; b <= top; b += step)
		rpt_put(sb, "<text class=\"r\" x=\"%N\" y=\"%N\">%N GB</text>", x0 - 4 * u, y0 + ph - b / top * ph + 3 * u, b / 1e9);
	step = rpt_nice_step(mk, 8);
	for (double t = 0; t <= mk * (1 + 1e-9); t += step) {
		rpt_put(sb, "<text class=\"t\" x=\"%N\" y=\"%N\">", x0 + t / mk * pw, y0 + ph + 14 * u);
		rpt_tick_label(sb, t, step);
		strbuf_addstr(sb, "</text>");
	}
	rpt_put(sb, "<path class=\"ax\" d=\"M%N %NV%NH%N\"/>\n", x0, y0, y0 + ph, x0 + pw);
	rpt_put(sb, "<path class=\"cap\" d=\"M%N %NH%N\"/>", x0, y0 + ph - cap / top * ph, x0 + pw);
	rpt_put(sb, "<text x=\"%N\" y=\"%N\">usable ", x0 + pw + 4 * u, y0 + ph - cap / top * ph + 3 * u);
	fmt_bytes(sb, cap);
	strbuf_addstr(sb, "</text>\n");
	for (int d = 0; d < nd; d++) {
		const struct tl_device *dv = &c->t.dev[d];
		double px = 0, py = 0;

		if (dv->nmem == 0)
			continue;
		free(ms);
		ms = malloc((size_t)dv->nmem * sizeof(*ms));
		if (!ms) {
			strbuf_release(&lab);
			return err_set(e, ERR_RUNTIME, "out of host memory drawing memory");
		}
		for (int i = 0; i < dv->nmem; i++)
			ms[i] = (struct msample){ dv->mem[i].t_ms, (double)dv->mem[i].bytes, i };
		qsort(ms, (size_t)dv->nmem, sizeof(*ms), msample_cmp);
		rpt_put(sb, "<path class=\"ln%s\" stroke=\"%s\"", d == dmax ? " th" : "", palette[d % 8]);
		put_dashes(sb, d, u);
		strbuf_addstr(sb, " d=\"");
		put_mem_line(sb, &mg, ms, dv->nmem, &px, &py);
		rpt_put(sb, "H%N\"><title>GPU %d, peak ", x0 + pw, d);
		fmt_bytes(sb, (double)c->m.dev[d].peak_mem_bytes);
		strbuf_addstr(sb, "</title></path>\n");
		if ((nd <= 16 || d == dmax) && nlab < 17) {
			/* along the line, right of any label it would cover */
			px += 2 * u;
			py -= 3 * u;
			for (int j = 0; j < nlab; j++)
				if (fabs(lxy[j][1] - py) < 9 * u && px - lxy[j][0] < 12 * u && lxy[j][0] - px < 12 * u) {
					px = lxy[j][0] + 12 * u;
					j = -1;
				}
			lxy[nlab][0] = px;
			lxy[nlab++][1] = py;
			rpt_put(&lab, "<text x=\"%N\" y=\"%N\">%s%d</text>", px, py, nd <= 16 ? "" : "GPU ", d);
		}
	}
	free(ms);
	if (lab.len)
		strbuf_addf(sb, "<g class=\"hl\">%s</g>\n", lab.buf);
	if (strbuf_failed(&lab)) {
		strbuf_release(&lab);
		return err_set(e, ERR_RUNTIME, "out of host memory drawing memory");
	}
	strbuf_release(&lab);
	put_mem_legend(sb, c, &mg, dmax);
	return 0;
}

static void put_measured_table(struct strbuf *sb, const struct chart *c, const struct timeline *t)
{
	/* a run is of one replica's pipeline: the data-parallel sync is not in it */
	double pend = c->m.makespan_ms - c->m.dp_sync_ms, mend = rpt_ops_end(t);

	strbuf_addstr(sb, "<p>iteration: predicted ");
	fmt_ms(sb, pend);
	strbuf_addstr(sb, ", measured ");
	fmt_ms(sb, mend);
	if (mend > 0)
		strbuf_addf(sb, ", error %+.1f%% (predicted \xe2\x88\x92 measured) / measured", 100 * (pend - mend) / mend);
	strbuf_addstr(sb, "</p>\n<table><tr><th>GPU</th><th>predicted busy</th><th>measured busy</th><th>error</th>"
	              "<th>predicted end</th><th>measured end</th></tr>\n");
	for (int d = 0; d < c->t.ndevices && d < t->ndevices; d++) {
		double pb = 0, mb = 0, pe = 0, me = 0;

		for (int i = 0; i < c->t.dev[d].nops; i++) {
			pb += c->t.dev[d].ops[i].end_ms - c->t.dev[d].ops[i].start_ms;
			if (c->t.dev[d].ops[i].end_ms > pe)
				pe = c->t.dev[d].ops[i].end_ms;
		}
		for (int i = 0; i < t->dev[d].nops; i++) {
			mb += t->dev[d].ops[i].end_ms - t->dev[d].ops[i].start_ms;
			if (t->dev[d].ops[i].end_ms > me)
				me = t->dev[d].ops[i].end_ms;
		}
		strbuf_addf(sb, "<tr><td>%d</td>", d);
		rpt_td_ms(sb, pb);
		rpt_td_ms(sb, mb);
		if (mb > 0)
			strbuf_addf(sb, "<td>%+.1f%%</td>", fabs(pb - mb) < 5e-4 * mb ? 0.0 : 100 * (pb - mb) / mb);
		else
			strbuf_addstr(sb, "<td>-</td>");
		rpt_td_ms(sb, pe);
		rpt_td_ms(sb, me);
		strbuf_addstr(sb, "</tr>\n");
	}
	strbuf_addstr(sb, "</table>\n");
}

/* The report's steps, read by the engine's reader (steps.c, the one `edit --adopt` and
 * the UI use, so a file is refused alike) against the first plan: steps of another model or
 * cluster would chart someone else's tuner run. */
static int read_steps(const struct report_input *in, struct steps *st, struct err *e)
{
	const char *sf = in->steps_file ? in->steps_file : "steps";

	if (steps_from_json(st, in->steps, sf, &in->plans[0]->model, &in->plans[0]->cluster,
	                    in->plans[0]->microbatches, e) < 0)
		return -1;
	/* a tuner run at another microbatch count charted beside this plan's times */
	if (st->microbatches != in->plans[0]->microbatches)
		return err_set(e, ERR_INPUT, "%s: microbatches: steps of a run at %d microbatches, the plan has %d", sf,
		               st->microbatches, in->plans[0]->microbatches);
	return 0;
}

/* The page's head: title, styles and the shared pattern definitions. */
static void put_head(struct strbuf *sb, const struct chart *c, int n, int width)
{
	strbuf_addstr(sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>\n"
	              "<meta name=\"generator\" content=\"octopipe " PACKAGE_VERSION "\"/>\n<title>OctoPipe report: ");
	for (int i = 0; i < n; i++) {
		if (i)
			strbuf_addstr(sb, ", ");
		rpt_xml_text(sb, c[i].label);
	}
	strbuf_addf(sb, "</title>\n<style>%s", html_css);
	rpt_put_css(sb, width / 1200.0);
	strbuf_addstr(sb, "</style>\n</head><body>\n");
	strbuf_addstr(sb, "<svg class=\"defs\" xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" height=\"0\" aria-hidden=\"true\">");
	rpt_put_defs(sb, width / 1200.0);
	strbuf_addstr(sb, "</svg>\n");
}

/* One plan's section: its summary, bubbles per GPU, memory over time and, for the first
 * plan with a measured run (meas), predicted against measured. */
static int put_plan_section(struct strbuf *sb, const struct chart *c, const struct timeline *meas, int width,
                            struct err *e)
{
	strbuf_addstr(sb, "<section class=\"plan\"><h2>");
	rpt_xml_text(sb, c->label);
	strbuf_addstr(sb, "</h2>\n<p>");
	rpt_put_summary_line(sb, c);
	strbuf_addstr(sb, "</p>\n");
	if (!c->ok) {
		strbuf_addstr(sb, "</section>\n");
		return 0;
	}
	strbuf_addstr(sb, "<h3>Bubbles per GPU: warm-up, steady state, cool-down</h3>\n<figure>");
	put_bubbles(sb, c, width);
	strbuf_addstr(sb, "</figure>\n<h3>Memory over time</h3>\n<figure>");
	if (put_memory(sb, c, width, e) < 0)
		return -1;
	strbuf_addstr(sb, "</figure>\n");
	if (meas) {
		strbuf_addstr(sb, "<h3>Predicted vs measured</h3>\n");
		put_measured_table(sb, c, meas);
	}
	strbuf_addstr(sb, "</section>\n");
	return 0;
}

int report_html(const struct report_input *in, struct strbuf *sb, struct err *e)
{
	int n = in->nplans, width = in->width_px ? in->width_px : REPORT_DEFAULT_WIDTH, rc = -1;
	struct chart *c;
	struct steps st;
	double tmax = 0;

	if (n < 1)
		return err_set(e, ERR_INPUT, "a report needs at least one plan");
	if (width < REPORT_MIN_WIDTH || width > REPORT_MAX_WIDTH)
		return err_set(e, ERR_INPUT, "width %d px: must be in [%d, %d]", width, REPORT_MIN_WIDTH, REPORT_MAX_WIDTH);
	if (in->measured && report_check_measured(in->plans[0], in->measured, NULL, e) < 0)
		return -1;
	memset(&st, 0, sizeof(st));
	if (in->steps && read_steps(in, &st, e) < 0) {
		steps_release(&st);
		return -1;
	}
	c = calloc((size_t)n, sizeof(*c));
	if (!c) {
		steps_release(&st);
		return err_set(e, ERR_RUNTIME, "out of host memory");
	}
	for (int i = 0; i < n; i++) {
		if (rpt_chart_init(&c[i], in->plans[i], in->labels ? in->labels[i] : NULL, in->critical_path, e) < 0)
			goto out;
		if (c[i].ok && c[i].m.makespan_ms > tmax)
			tmax = c[i].m.makespan_ms;
	}
	if (in->measured && rpt_ops_end(in->measured) > tmax)
		tmax = rpt_ops_end(in->measured);

	put_head(sb, c, n, width);
	strbuf_addf(sb, "<section id=\"summary\"><h1>OctoPipe report</h1>\n<p class=\"note\">%d plan%s, simulated by octopipe "
	            PACKAGE_VERSION ". Bubble = 1 \xe2\x88\x92 \xce\xa3 busy / (GPUs \xc3\x97 iteration); efficiency = the lower "
	            "bound (no plan of this model, cluster and microbatch count can be faster) / iteration; speedup = "
	            "baseline iteration / plan iteration.</p>\n", n, n == 1 ? "" : "s");
	strbuf_addstr(sb, "<h2>Summary</h2>\n");
	put_summary_table(sb, c, n);
	if (put_speedups(sb, c, n, e) < 0)
		goto out;
	put_peak_table(sb, c, n);
	strbuf_addstr(sb, "</section>\n");

	strbuf_addstr(sb, "<section id=\"gantts\"><h2>Gantt charts on one time axis</h2>\n");
	if (in->measured)
		strbuf_addstr(sb, "<p class=\"note\">Under each GPU of the first plan: its measured run.</p>\n");
	for (int i = 0; i < n; i++) {
		/* a browser lays out and paints a chart only when it comes near the screen
		 * (content-visibility), told its height beforehand so the page does not jump */
		rpt_put(sb, "<figure class=\"lazy\" style=\"contain-intrinsic-size:auto %Npx\">",
		    rpt_gantt_height(c[i].p->ndevices, i == 0 && in->measured, width / 1200.0));
		rpt_put_gantt(sb, &c[i], i == 0 ? in->measured : NULL, width, tmax, in->critical_path, false);
		strbuf_addstr(sb, "</figure>\n");
	}
	strbuf_addstr(sb, "</section>\n");

	for (int i = 0; i < n; i++)
		if (put_plan_section(sb, &c[i], i == 0 ? in->measured : NULL, width, e) < 0)
			goto out;
	if (in->steps)
		rpt_put_steps_section(sb, &st, width);
	strbuf_addstr(sb, "</body></html>\n");
	if (strbuf_failed(sb))
		err_set(e, ERR_RUNTIME, "out of host memory writing the report");
	else
		rc = 0;
out:
	for (int i = 0; i < n; i++)
		rpt_chart_release(&c[i]);
	free(c);
	steps_release(&st);
	return rc;
}

int report_write(const char *path, const struct report_input *in, struct err *e)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = report_html(in, &sb, e);

	if (rc == 0)
		rc = fileio_write_atomic(path, sb.buf, sb.len, e);
	strbuf_release(&sb);
	return rc;
}
