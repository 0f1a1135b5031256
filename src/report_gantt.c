/*
 * report_gantt — the SVG Gantt chart of a simulated plan (see report.h).
 *
 * One idea keeps the files small: a GPU's row is first painted as one hatched "bubble"
 * rectangle over the whole iteration, and the ops are drawn on top of it, so every
 * idle gap shows hatched without a rectangle of its own (gaps are merged for free), and
 * the only per-op element is the op's <rect> with its <title> tooltip. Rows are <g>
 * groups translated to their height, and within a row the ops of one kind sit in one <g>
 * that gives their colour, so an op carries x, width and height only (SVG 1.1 attributes:
 * a height given once in CSS is SVG 2, which not every reader takes, resvg for one). W's dots,
 * B's stripes and the recompute dashes are one stroked path per row over the ops, and
 * only where they can be seen (struct marks): a pattern on each op's rect, or on ops too
 * narrow to show it, costs a browser far more to paint than it tells.
 *
 * What a browser spends on a big chart is per element, not per byte: each op is three DOM
 * nodes (the rect, its title and the title's text), the floor with a tooltip on every op.
 * 64 GPUs x 256 microbatches with a split backward (49152 ops) is about 92-97 bytes an op
 * (4.5-4.8 MB), and Chromium spends about 0.85 s of its main thread on it, two thirds
 * parsing (test_report bounds bytes and elements an op; bench_report times a browser).
 * The HTML report has a browser lay out and paint a Gantt only when it comes near the
 * screen, and HTML parses about twice as fast as a standalone SVG's XML.
 *
 * Every length is a multiple of u = width / 1200, so a chart drawn at another --width is
 * the same picture at another size. Colours are the TUI's (ui/theme.c, xterm 256-colour
 * values); kinds differ in lightness, W and B also carry a pattern where an op is wide
 * enough to show it, and bubbles a hatch, so kinds stay apart in greyscale and for
 * red-green colour blindness; labels say the kind where they fit.
 */
#include "config.h"
#include "report_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "explain.h"

/* ---- the Gantt chart ----------------------------------------------------------------------- */


static double gx(const struct gantt_geo *g, double t)
{
	return g->x0 + t / g->tmax * g->pw;
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) for about n ticks over span. */
double rpt_nice_step(double span, int n)
{
	double raw = span / (n > 0 ? n : 1), p = pow(10, floor(log10(raw > 0 ? raw : 1))), f = raw / p;

	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

void rpt_tick_label(struct strbuf *sb, double t, double step)
{
	if (step >= 1000)
		strbuf_addf(sb, "%g s", t / 1000);
	else if (step >= 1)
		strbuf_addf(sb, "%g ms", t);
	else
		strbuf_addf(sb, "%.*f ms", step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3, t);
}

/* The title line: iteration time, tokens/s, bubble, efficiency. */
void rpt_put_summary_line(struct strbuf *sb, const struct chart *c)
{
	const struct metrics *m = &c->m;

	if (!c->ok) {
		strbuf_addstr(sb, "cannot run: ");
		rpt_xml_text(sb, c->why.msg);
		return;
	}
	strbuf_addstr(sb, "iteration ");
	fmt_ms(sb, m->makespan_ms);
	strbuf_addf(sb, " \xc2\xb7 %.0f tokens/s \xc2\xb7 bubble %.1f%% \xc2\xb7 efficiency %.1f%% of the bound (",
	            m->throughput_tokens_per_s, 100 * m->bubble_ratio, 100 * m->efficiency);
	fmt_ms(sb, m->lower_bound_ms);
	strbuf_addch(sb, ')');
	if (m->noom)
		strbuf_addf(sb, " \xc2\xb7 OUT OF MEMORY on GPU %d", m->oom[0]);
}

/* One legend entry: a swatch of class cls and its text; returns the next x. */
double rpt_legend_item(struct strbuf *sb, const struct gantt_geo *g, double x, double y, const char *cls,
                       const char *text)
{
	double u = g->u;

	if (strcmp(cls, "cp") == 0)
		rpt_put(sb, "<rect class=\"cp\" x=\"%N\" y=\"%N\" width=\"%N\" height=\"%N\"/>", x, y, 14 * u, 10 * u);
	else if (strcmp(cls, "wu") == 0 || strcmp(cls, "cd") == 0)
		rpt_put(sb, "<rect class=\"%s\" x=\"%N\" y=\"%N\" width=\"%N\" height=\"%N\"/>"
		    "<rect class=\"bu sw\" x=\"%N\" y=\"%N\" width=\"%N\" height=\"%N\"/>", cls, x, y, 14 * u, 10 * u,
		    x, y, 14 * u, 10 * u);
	else
		rpt_put(sb, "<rect class=\"%s sw\" x=\"%N\" y=\"%N\" width=\"%N\" height=\"%N\"/>", cls, x, y, 14 * u, 10 * u);
	if (strcmp(cls, "W") == 0 || strcmp(cls, "B") == 0)
		rpt_put(sb, "<path class=\"p%s\" stroke-width=\"%N\" d=\"M%N %Nh%N\"/>", cls[0] == 'W' ? "w" : "b", 10 * u, x,
		    y + 5 * u, 14 * u);
	rpt_put(sb, "<text x=\"%N\" y=\"%N\">%s</text>", x + 18 * u, y + 9 * u, text);
	return x + 18 * u + (double)strlen(text) * 6.2 * u + 14 * u;
}

static const char *const kind_class[OP_KINDS] = { "F", "I", "W", "B" };

/* A row's marks drawn over its ops (W's dots, B's stripes, the recompute dashes) as one
 * path of horizontal stretches: a stretch that starts within join of where the last one
 * ends extends it, and a stretch shorter than min is left out (a pattern narrower than
 * its period cannot be seen, and each stretch costs the browser a pattern fill). So a
 * chart of thousands of narrow ops carries its marks where they show, not on every op. */
struct marks {
	struct strbuf *sb;
	const char *cls;
	double sw;               /* stroke width, 0 for the class's own */
	double y, join, min;
	double x0, x1;           /* the open stretch; none while x1 < x0 */
	bool open;               /* the <path> is started */
};

static void marks_flush(struct marks *m)
{
	if (m->x1 < m->x0 || m->x1 - m->x0 < m->min)
		return;
	if (!m->open) {
		rpt_put(m->sb, "<path class=\"%s\"", m->cls);
		if (m->sw > 0)
			rpt_put(m->sb, " stroke-width=\"%N\"", m->sw);
		strbuf_addstr(m->sb, " d=\"");
	}
	m->open = true;
	rpt_put(m->sb, "M%N %Nh%N", m->x0, m->y, m->x1 - m->x0);
}

static void marks_add(struct marks *m, double x0, double x1)
{
	if (m->x1 >= m->x0 && x0 >= m->x0 && x0 <= m->x1 + m->join) {
		if (x1 > m->x1)
			m->x1 = x1;
		return;
	}
	marks_flush(m);
	m->x0 = x0;
	m->x1 = x1;
}

static void marks_end(struct marks *m)
{
	marks_flush(m);
	if (m->open)
		strbuf_addstr(m->sb, "\"/>\n");
}

/* One row of ops (a device's predicted or measured ops), inside a translated <g>: per
 * kind, a <g> of its colour holding one <rect> per op with its tooltip (stage, kind and
 * microbatch, layers, start-end), white separators when sep; then W's dots and B's
 * stripes, each one stroked path over the row; then the labels that fit. */
static void put_ops(struct strbuf *sb, const struct gantt_geo *g, const struct plan *p, const struct tl_device *dv,
                    double h, bool measured, bool sep)
{
	double u = g->u, fs = 9 * u;
	/* times in tooltips to about a 1e-5 of the axis */
	int dec = g->tmax < 100 ? 2 : g->tmax < 10000 ? 1 : 0;
	char tok[ACTION_TEXT_MAX];
	bool labels = false;

	for (int k = 0; k < OP_KINDS; k++) {
		bool open = false;

		for (int i = 0; i < dv->nops; i++) {
			const struct tl_op *o = &dv->ops[i];
			double x = gx(g, o->start_ms), w = gx(g, o->end_ms) - x;
			const struct stage *st = o->stage >= 0 && o->stage < p->nstages ? &p->stages[o->stage] : NULL;

			if ((o->kind < OP_KINDS ? (int)o->kind : OP_F) != k)
				continue;
			if (!open)
				rpt_put(sb, "<g class=\"%s%s\">", kind_class[k], sep ? " s" : "");
			open = true;
			rpt_put(sb, "<rect x=\"%N\" width=\"%N\" height=\"%N\"><title>%s%s", x, w, h, measured ? "measured " : "",
			    action_format(&(struct action){ o->stage, o->mb, (uint8_t)k, 0 }, tok));
			if (st && st->first == st->last)
				strbuf_addf(sb, " layer %d", st->first);
			else if (st)
				strbuf_addf(sb, " layers %d-%d", st->first, st->last);
			if (st && st->recompute != RECOMPUTE_NONE && (k == OP_I || k == OP_B))
				strbuf_addf(sb, " (recomputes %s)", recompute_name((enum recompute)st->recompute));
			strbuf_addf(sb, " %.*f-%.*f ms</title></rect>", dec, o->start_ms, dec, o->end_ms);
		}
		if (open)
			strbuf_addstr(sb, "</g>\n");
	}
	for (int k = OP_W; k <= OP_B; k++) {
		/* touching ops of the kind share one stretch of the pattern; on a stretch narrower
		 * than 3u a dot (1.6u) or a stripe would not read as one, and the op's lightness
		 * tells its kind there (put_css), so it is left out */
		struct marks m = { sb, k == OP_W ? "pw" : "pb", h, h / 2, 0.1 * u, 3 * u, 0, -1, false };

		for (int i = 0; i < dv->nops; i++)
			if (dv->ops[i].kind == k)
				marks_add(&m, gx(g, dv->ops[i].start_ms), gx(g, dv->ops[i].end_ms));
		marks_end(&m);
	}
	{
		/* a recomputing backward: a dashed line along its top (pattern, not colour);
		 * backwards closer than a dash period (4.5u) share one line */
		struct marks m = { sb, "rc", 0, 0.75 * u, 4.5 * u, 3 * u, 0, -1, false };

		for (int i = 0; i < dv->nops; i++) {
			const struct tl_op *o = &dv->ops[i];
			const struct stage *st = o->stage >= 0 && o->stage < p->nstages ? &p->stages[o->stage] : NULL;

			if (st && st->recompute != RECOMPUTE_NONE && (o->kind == OP_I || o->kind == OP_B))
				marks_add(&m, gx(g, o->start_ms), gx(g, o->end_ms));
		}
		marks_end(&m);
	}
	for (int i = 0; i < dv->nops; i++) {
		const struct tl_op *o = &dv->ops[i];
		double x = gx(g, o->start_ms), w = gx(g, o->end_ms) - x;
		int k = o->kind < OP_KINDS ? o->kind : OP_F;
		char lab[32];
		int n = snprintf(lab, sizeof(lab), "%c%d", op_kind_char((enum op_kind)k), o->mb);

		if (w < n * 0.62 * fs + 3 * u || h < fs)
			continue;
		if (!labels)
			strbuf_addstr(sb, "<g class=\"t\">");
		labels = true;
		rpt_put(sb, "<text%s x=\"%N\" y=\"%N\">%s</text>", k == OP_F ? " class=\"tw\"" : "", x + w / 2, h / 2 + fs * 0.35,
		    lab);
	}
	if (labels)
		strbuf_addstr(sb, "</g>\n");
}

/* Whether ops are wide enough on the whole for white lines between them to help (on
 * narrow ones they would wash the colours out). */
static bool wide_ops(const struct gantt_geo *g, const struct timeline *t)
{
	double busy = 0;
	long n = 0;

	for (int d = 0; d < t->ndevices; d++)
		for (int i = 0; i < t->dev[d].nops; i++, n++)
			busy += t->dev[d].ops[i].end_ms - t->dev[d].ops[i].start_ms;
	return n > 0 && busy / (double)n / g->tmax * g->pw >= 3 * g->u;
}

/* The height of a chart of nd GPUs at scale u, with measured rows or not. */
double rpt_gantt_height(int nd, bool meas, double u)
{
	return 64 * u + nd * (14 * u + (meas ? 11 * u : 0) + 4 * u) + 26 * u;
}

/* The chart as an <svg> element: standalone adds the XML declaration, namespace, styles
 * and patterns (an HTML report has them once for all charts). tmax > 0 forces the time
 * axis (one axis for several plans). */
/* The chart's geometry at width (tmax <= 0: the plan's makespan, or the measured run's
 * end when later). */
static void gantt_geometry(struct gantt_geo *g, const struct chart *c, const struct timeline *meas, int width,
                           double tmax)
{
	double u = width / 1200.0;

	g->width = width;
	g->u = u;
	g->x0 = 64 * u;
	g->pw = width - g->x0 - 16 * u;
	g->tmax = tmax > 0 ? tmax : c->ok ? c->m.makespan_ms : 1;
	if (meas && tmax <= 0 && rpt_ops_end(meas) > g->tmax)
		g->tmax = rpt_ops_end(meas);
	if (g->tmax <= 0)
		g->tmax = 1;
	g->rh = 14 * u;
	g->mh = meas ? 9 * u : 0;
	g->pitch = g->rh + (meas ? g->mh + 2 * u : 0) + 4 * u;
	g->y0 = 64 * u;
	g->height = rpt_gantt_height(c->p->ndevices, meas != NULL, u);
}

/* The svg element, its title and styles, and the two title lines. */
static void put_header(struct strbuf *sb, const struct chart *c, const struct gantt_geo *g, bool standalone)
{
	const struct plan *p = c->p;
	double u = g->u;
	int nd = p->ndevices, width = g->width;

	if (standalone)
		strbuf_addstr(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	rpt_put(sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%N\" viewBox=\"0 0 %d %N\" "
	    "font-family=\"sans-serif\" font-size=\"%N\">\n", width, g->height, width, g->height, 10 * u);
	strbuf_addstr(sb, "<title>");
	rpt_xml_text(sb, c->label);
	strbuf_addstr(sb, "</title>\n");
	if (standalone) {
		strbuf_addstr(sb, "<style>");
		rpt_put_css(sb, u);
		strbuf_addstr(sb, "</style>\n");
		rpt_put_defs(sb, u);
		strbuf_addch(sb, '\n');
	}
	rpt_put(sb, "<rect width=\"%d\" height=\"%N\" fill=\"#fff\"/>\n", width, g->height);
	/* title lines */
	rpt_put(sb, "<text class=\"b\" x=\"%N\" y=\"%N\" font-size=\"%N\">", 8 * u, 17 * u, 13 * u);
	rpt_xml_text(sb, c->label);
	strbuf_addstr(sb, ": ");
	rpt_put_summary_line(sb, c);
	strbuf_addstr(sb, "</text>\n");
	rpt_put(sb, "<text class=\"dim\" x=\"%N\" y=\"%N\">model ", 8 * u, 32 * u);
	rpt_xml_text(sb, p->model.name);
	strbuf_addstr(sb, " on ");
	rpt_xml_text(sb, p->cluster.name);
	{
		/* a plan with a layout: each pipeline device is a group of tp x dp GPUs */
		struct parallel pl = plan_parallel(p);

		if (p->has_parallel || !parallel_is_pipeline_only(&pl))
			strbuf_addf(sb, ", %d microbatch%s per replica, %d stage%s on %d pipeline device%s (pp %d x tp %d x dp %d = "
			            "%d GPUs, ep %d, ZeRO %d)%s</text>\n", p->microbatches, p->microbatches == 1 ? "" : "es",
			            p->nstages, p->nstages == 1 ? "" : "s", nd, nd == 1 ? "" : "s", pl.pp, pl.tp, pl.dp,
			            parallel_gpus(&pl), pl.ep, pl.zero, p->split_backward ? ", split backward (I + W)" : "");
		else
			strbuf_addf(sb, ", %d microbatch%s, %d stage%s on %d GPU%s%s</text>\n", p->microbatches,
			            p->microbatches == 1 ? "" : "es", p->nstages, p->nstages == 1 ? "" : "s", nd, nd == 1 ? "" : "s",
			            p->split_backward ? ", split backward (I + W)" : "");
	}
}

static void put_legend(struct strbuf *sb, const struct chart *c, const struct gantt_geo *g,
                       const struct timeline *meas, bool critical)
{
	const struct plan *p = c->p;
	double u = g->u;

	double lx = 8 * u, ly = 40 * u;

	lx = rpt_legend_item(sb, g, lx, ly, "F", "F forward");
	if (p->split_backward) {
		lx = rpt_legend_item(sb, g, lx, ly, "I", "I input-grad");
		lx = rpt_legend_item(sb, g, lx, ly, "W", "W weight-grad");
	} else {
		lx = rpt_legend_item(sb, g, lx, ly, "B", "B backward");
	}
	lx = rpt_legend_item(sb, g, lx, ly, "bu", "bubble (idle)");
	lx = rpt_legend_item(sb, g, lx, ly, "wu", "warm-up");
	lx = rpt_legend_item(sb, g, lx, ly, "cd", "cool-down");
	if (critical && c->ncrit)
		lx = rpt_legend_item(sb, g, lx, ly, "cp", "critical path");
	if (c->ok && c->m.dp_sync_ms >= 0) {
		bool sync = false, redo = false;

		for (int d = 0; d < c->m.ndevices; d++)
			sync |= c->m.dev[d].sync_end_ms > 0;
		for (int st = 0; st < p->nstages; st++)
			redo |= p->stages[st].recompute != RECOMPUTE_NONE;
		if (sync)
			lx = rpt_legend_item(sb, g, lx, ly, "dp", "data-parallel sync");
		if (redo)
			lx = rpt_legend_item(sb, g, lx, ly, "rc", "recomputes (dashed top)");
	}
	if (meas)
		rpt_put(sb, "<text class=\"dim\" x=\"%N\" y=\"%N\">under each GPU: the measured run (%s)</text>", lx,
		    ly + 9 * u, meas->source && strcmp(meas->source, "cuda") == 0 ? "cuda" : "emu");
	strbuf_addch(sb, '\n');
}

/* The grid and the time axis under nd rows. */
static void put_axis(struct strbuf *sb, const struct gantt_geo *g, int nd)
{
	double u = g->u, y, step;

	step = rpt_nice_step(g->tmax, (int)(g->pw / (90 * u)) > 2 ? (int)(g->pw / (90 * u)) : 2);
	y = g->y0 + nd * g->pitch;
	strbuf_addstr(sb, "<path class=\"gr\" d=\"");
	for (double t = 0; t <= g->tmax * (1 + 1e-9); t += step)
		rpt_put(sb, "M%N %NV%N", gx(g, t), g->y0 - 2 * u, y);
	strbuf_addstr(sb, "\"/>\n");
	rpt_put(sb, "<path class=\"ax\" d=\"M%N %NH%N", g->x0, y, g->x0 + g->pw);
	for (double t = 0; t <= g->tmax * (1 + 1e-9); t += step)
		rpt_put(sb, "M%N %NV%N", gx(g, t), y, y + 4 * u);
	strbuf_addstr(sb, "\"/>\n<g class=\"t\">");
	for (double t = 0; t <= g->tmax * (1 + 1e-9); t += step) {
		rpt_put(sb, "<text x=\"%N\" y=\"%N\">", gx(g, t), y + 15 * u);
		rpt_tick_label(sb, t, step);
		strbuf_addstr(sb, "</text>");
	}
	strbuf_addstr(sb, "</g>\n");
}

/* GPU d's row: hatched as a bubble over the whole iteration with its ops drawn on top, so
 * every idle gap shows hatched without an element of its own; the measured run under it. */
static void put_row(struct strbuf *sb, const struct chart *c, const struct gantt_geo *g,
                    const struct timeline *meas, int d, bool sep)
{
	const struct plan *p = c->p;
	double u = g->u;

	const struct tl_device *dv = &c->t.dev[d];
	double first_b = INFINITY, last_f = 0, mk = c->m.makespan_ms;

	for (int i = 0; i < dv->nops; i++) {
		if (dv->ops[i].kind == OP_F && dv->ops[i].end_ms > last_f)
			last_f = dv->ops[i].end_ms;
		if ((dv->ops[i].kind == OP_I || dv->ops[i].kind == OP_B) && dv->ops[i].start_ms < first_b)
			first_b = dv->ops[i].start_ms;
	}
	rpt_put(sb, "<g transform=\"translate(0 %N)\">", g->y0 + d * g->pitch);
	rpt_put(sb, "<text class=\"r\" x=\"%N\" y=\"%N\">GPU %d</text>", g->x0 - 5 * u, g->rh * 0.72, d);
	if (dv->nops && isfinite(first_b) && first_b > 0)
		rpt_put(sb, "<rect class=\"wu\" x=\"%N\" width=\"%N\" height=\"%N\"><title>GPU %d warm-up: idle %.2f ms"
		    "</title></rect>", g->x0, gx(g, first_b) - g->x0, g->rh, d, c->m.dev[d].warmup_idle_ms);
	if (dv->nops && isfinite(first_b)) {
		double cs = last_f > first_b ? last_f : first_b;

		if (mk > cs)
			rpt_put(sb, "<rect class=\"cd\" x=\"%N\" width=\"%N\" height=\"%N\"><title>GPU %d cool-down: idle %.2f ms"
			    "</title></rect>", gx(g, cs), gx(g, mk) - gx(g, cs), g->rh, d, c->m.dev[d].cooldown_idle_ms);
	}
	rpt_put(sb, "<rect class=\"bu\" x=\"%N\" width=\"%N\" height=\"%N\"><title>GPU %d idle %.2f ms (%.1f%%)</title>"
	    "</rect>\n", g->x0, gx(g, mk) - g->x0, g->rh, d, c->m.dev[d].idle_ms, 100 * c->m.dev[d].bubble_ratio);
	put_ops(sb, g, p, dv, g->rh, false, sep);
	if (c->m.dev[d].sync_end_ms > 0) {
		const struct device_metrics *dm = &c->m.dev[d];

		rpt_put(sb, "<rect class=\"dp\" x=\"%N\" y=\"%N\" width=\"%N\" height=\"%N\"><title>GPU %d data-parallel "
		    "sync %.2f-%.2f ms</title></rect>", gx(g, dm->sync_start_ms), g->rh * 0.72,
		    gx(g, dm->sync_end_ms) - gx(g, dm->sync_start_ms), g->rh * 0.28, d, dm->sync_start_ms,
		    dm->sync_end_ms);
	}
	strbuf_addstr(sb, "</g>\n");
	if (meas) {
		const struct tl_device *mv = &meas->dev[d];
		double mend = 0;

		for (int i = 0; i < mv->nops; i++)
			if (mv->ops[i].end_ms > mend)
				mend = mv->ops[i].end_ms;
		rpt_put(sb, "<g class=\"mo\" transform=\"translate(0 %N)\">", g->y0 + d * g->pitch + g->rh + 2 * u);
		rpt_put(sb, "<text class=\"r dim\" x=\"%N\" y=\"%N\" font-size=\"%N\">measured</text>", g->x0 - 5 * u,
		    g->mh * 0.8, 7.5 * u);
		rpt_put(sb, "<rect class=\"bu\" x=\"%N\" width=\"%N\" height=\"%N\"/>\n", g->x0, gx(g, mend) - g->x0, g->mh);
		put_ops(sb, g, p, mv, g->mh, true, sep);
		strbuf_addstr(sb, "</g>\n");
	}
}

/* The critical path: each op outlined, and what it waited for joined by a dashed line. */
static void put_critical(struct strbuf *sb, const struct chart *c, const struct gantt_geo *g)
{
	const struct plan *p = c->p;

	strbuf_addstr(sb, "<path class=\"cp\" d=\"");
	for (long i = 0; i < c->ncrit; i++) {
		const struct action *a = &p->order[c->crit[i]];
		long op = sim_op_index(p, a->stage, a->mb, a->kind);
		double x = gx(g, c->s.start[op]), w = gx(g, c->s.end[op]) - x;
		double yy = g->y0 + p->stages[a->stage].device * g->pitch;

		rpt_put(sb, "M%N %Nh%Nv%Nh%NZ", x, yy, w, g->rh, -w);
	}
	strbuf_addstr(sb, "\"/>\n<path class=\"cl\" d=\"");
	for (long i = 0; i + 1 < c->ncrit; i++) {
		const struct action *a = &p->order[c->crit[i]], *b = &p->order[c->crit[i + 1]];
		long oa = sim_op_index(p, a->stage, a->mb, a->kind), ob = sim_op_index(p, b->stage, b->mb, b->kind);
		int da = p->stages[a->stage].device, db = p->stages[b->stage].device;

		if (da != db)
			rpt_put(sb, "M%N %NL%N %N", gx(g, c->s.end[ob]), g->y0 + db * g->pitch + g->rh / 2, gx(g, c->s.start[oa]),
			    g->y0 + da * g->pitch + g->rh / 2);
	}
	strbuf_addstr(sb, "\"/>\n");
}

void rpt_put_gantt(struct strbuf *sb, const struct chart *c, const struct timeline *meas, int width, double tmax,
                   bool critical, bool standalone)
{
	struct gantt_geo g;
	bool sep;

	gantt_geometry(&g, c, meas, width, tmax);
	put_header(sb, c, &g, standalone);
	put_legend(sb, c, &g, meas, critical);
	put_axis(sb, &g, c->p->ndevices);
	if (!c->ok) {
		rpt_put(sb, "<text x=\"%N\" y=\"%N\">", g.x0, g.y0 + 12 * g.u);
		rpt_xml_text(sb, c->why.msg);
		strbuf_addstr(sb, "</text>\n</svg>\n");
		return;
	}
	sep = wide_ops(&g, &c->t);
	for (int d = 0; d < c->p->ndevices; d++)
		put_row(sb, c, &g, meas, d, sep);
	if (critical && c->ncrit)
		put_critical(sb, c, &g);
	strbuf_addstr(sb, "</svg>\n");
}

int report_svg(const struct plan *p, const struct timeline *measured, const struct report_svg_opts *o,
               struct strbuf *out, struct err *e)
{
	struct chart c;
	int width = o && o->width_px ? o->width_px : REPORT_DEFAULT_WIDTH;

	if (width < REPORT_MIN_WIDTH || width > REPORT_MAX_WIDTH)
		return err_set(e, ERR_INPUT, "width %d px: must be in [%d, %d]", width, REPORT_MIN_WIDTH, REPORT_MAX_WIDTH);
	if (measured && report_check_measured(p, measured, NULL, e) < 0)
		return -1;
	if (rpt_chart_init(&c, p, o ? o->title : NULL, o && o->critical_path, e) < 0) {
		rpt_chart_release(&c);
		return -1;
	}
	if (!c.ok) {
		*e = c.why;
		rpt_chart_release(&c);
		return -1;
	}
	rpt_put_gantt(out, &c, measured, width, 0, o && o->critical_path, true);
	rpt_chart_release(&c);
	if (strbuf_failed(out))
		return err_set(e, ERR_RUNTIME, "out of host memory drawing the chart");
	return 0;
}
