/*
 * report — SVG Gantt charts and the HTML report (see report.h).
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
#include "report.h"

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
#include "sim.h"
#include "steps.h"

/* ---- text ------------------------------------------------------------------------------ */

/* s as XML character data or attribute text: markup characters escaped, control
 * characters and the noncharacters U+FFFE and U+FFFF (not allowed in XML 1.0) and broken
 * UTF-8 replaced by '?'. */
static void xml_text(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		unsigned cp;
		/* (a NUL ends a sequence early: it is never a continuation byte) */
		int n = (int)strbuf_utf8_len(p, 4, &cp);

		if (n == 0 || (*p < 0x20 && *p != '\t' && *p != '\n')) {
			strbuf_addch(sb, '?');
			p++;
			continue;
		}
		if (cp == 0xfffe || cp == 0xffff) {
			strbuf_addch(sb, '?');
			p += n;
			continue;
		}
		switch (*p) {
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '"': strbuf_addstr(sb, "&quot;"); break;
		case '\'': strbuf_addstr(sb, "&#39;"); break;
		default: strbuf_add(sb, p, (size_t)n); break;
		}
		p += n;
	}
}

/* A coordinate: one decimal, without a trailing ".0" or a leading "0" (".8", "-.5"). */
static void num(struct strbuf *sb, double v)
{
	char b[40], *s = b;
	int n;

	if (!isfinite(v))
		v = 0;
	n = snprintf(b, sizeof(b), "%.1f", v);
	if (n > 2 && b[n - 2] == '.' && b[n - 1] == '0')
		b[n -= 2] = 0;
	if (strcmp(b, "-0") == 0)
		strcpy(b, "0");
	if (b[0] == '-' && b[1] == '0' && b[2] == '.') {
		b[1] = '-';
		s = b + 1;
	} else if (b[0] == '0' && b[1] == '.') {
		s = b + 1;
	}
	strbuf_addstr(sb, s);
}

/* addf for coordinates: %N takes a double and prints it with num(); %d, %s, %% and
 * %.<digit>f are printf's. */
static void put(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	for (const char *f = fmt; *f; f++) {
		if (f[0] == '%' && f[1] == 'N') {
			num(sb, va_arg(ap, double));
			f++;
		} else if (f[0] == '%' && f[1] == 'd') {
			strbuf_addf(sb, "%d", va_arg(ap, int));
			f++;
		} else if (f[0] == '%' && f[1] == 's') {
			strbuf_addstr(sb, va_arg(ap, const char *));
			f++;
		} else if (f[0] == '%' && f[1] == '.' && f[2] >= '0' && f[2] <= '9' && f[3] == 'f') {
			strbuf_addf(sb, "%.*f", f[2] - '0', va_arg(ap, double));
			f += 3;
		} else if (f[0] == '%' && f[1] == '%') {
			strbuf_addch(sb, '%');
			f++;
		} else {
			strbuf_addch(sb, *f);
		}
	}
	va_end(ap);
}

/* ---- styles ------------------------------------------------------------------------------ */

/* The styles of every chart drawn at scale u: line widths and dashes scale with --width
 * too. Op colours are the TUI's (ui/theme.c, 256-colour theme: F 25, I 71, W 179, B 139,
 * critical path 90); their lightness differs (F dark, I and B middle, W light), and W
 * carries dots, B stripes and bubbles a hatch, so the kinds differ in greyscale and
 * without red-green. The dots and stripes are one stroked path per row over the ops (.pw,
 * .pb): a pattern per op rectangle costs a browser far more to paint. Warm-up is light
 * and cool-down darker for the same reason. */
static void put_css(struct strbuf *sb, double u)
{
	strbuf_addstr(sb, ".F{fill:#005faf}.I{fill:#5faf5f}.W{fill:#d7af5f}.B{fill:#af87af}"
	              ".pw,.pb,.rc{fill:none;pointer-events:none}.pw{stroke:url(#pw)}.pb{stroke:url(#pb)}"
	              ".bu{fill:url(#ph)}.wu{fill:#d3e4f5}.cd{fill:#e9a66b}.bz{fill:#9a9a9a}.mo{opacity:.85}"
	              ".cp,.cl{fill:none;stroke:#870087}.gr{fill:none;stroke:#e2e2e2}.ax{fill:none;stroke:#555}"
	              ".cap{fill:none;stroke:#c00}.t{text-anchor:middle}.tw{fill:#fff}.r{text-anchor:end}"
	              ".b{font-weight:bold}.dim{fill:#555}.ln,.sl{fill:none}.sl{stroke:#999}.sw{stroke:#333}"
	              ".dp{fill:#1b4d3e}.rc{stroke:#000}");
	put(sb, ".s{stroke:#fff;stroke-width:%N}.mo .s{stroke-width:%N}.cp{stroke-width:%N}"
	    ".cl{stroke-width:%N;stroke-dasharray:%N %N}.gr{stroke-width:%N}.ax{stroke-width:%N}"
	    ".cap{stroke-width:%N;stroke-dasharray:%N %N}.sw{stroke-width:%N}.ln{stroke-width:%N}"
	    ".sl{stroke-width:%N}.th{stroke-width:%N}.hl{paint-order:stroke;stroke:#fff;stroke-width:%N}"
	    ".rc{stroke-width:%N;stroke-dasharray:%N %N}", 0.4 * u,
	    0.3 * u, 1.6 * u, 0.9 * u, 3 * u, 2 * u, 0.6 * u, 0.8 * u, 1.2 * u, 6 * u, 3 * u, 0.5 * u, 1.2 * u, u,
	    2.4 * u, 2.5 * u, 1.5 * u, 3 * u, 1.5 * u);
}

/* The patterns, in user units of one chart (scaled with u): dots for W, stripes for B and
 * a hatch for bubbles, on a transparent ground (drawn over a colour). */
static void put_defs(struct strbuf *sb, double u)
{
	put(sb, "<defs>"
	    "<pattern id=\"pw\" patternUnits=\"userSpaceOnUse\" width=\"%N\" height=\"%N\">"
	    "<circle cx=\"%N\" cy=\"%N\" r=\"%N\" fill=\"#6b5217\"/></pattern>", 4 * u, 4 * u, 2 * u, 2 * u, 0.8 * u);
	put(sb, "<pattern id=\"pb\" patternUnits=\"userSpaceOnUse\" width=\"%N\" height=\"%N\">"
	    "<rect width=\"%N\" height=\"%N\" fill=\"#5a3a5a\"/></pattern>", 4 * u, 4 * u, 4 * u, 1.2 * u);
	put(sb, "<pattern id=\"ph\" patternUnits=\"userSpaceOnUse\" width=\"%N\" height=\"%N\" "
	    "patternTransform=\"rotate(45)\"><rect width=\"%N\" height=\"%N\" fill=\"#b03030\"/></pattern>"
	    "</defs>", 5 * u, 5 * u, 1.4 * u, 5 * u);
}

/* ---- one simulated plan -------------------------------------------------------------------- */

struct chart {
	const struct plan *p;
	const char *label;
	bool ok;                 /* simulated (no deadlock) */
	struct err why;          /* when not */
	struct sim s;
	struct metrics m;
	struct timeline t;
	long *crit;              /* the critical path as indices into p->order */
	long ncrit;
	double peak;             /* largest peak over the GPUs */
};

static int chart_init(struct chart *c, const struct plan *p, const char *label, bool crit, struct err *e)
{
	struct sim_opts o;

	memset(c, 0, sizeof(*c));
	c->p = p;
	c->label = label ? label : p->name ? p->name : "plan";
	sim_opts_default(&o);
	o.record = true;
	if (sim_run(&c->s, p, &o, &c->m, &c->why) < 0) {
		if (c->why.cls == ERR_RUNTIME) {
			*e = c->why;
			return -1;
		}
		return 0;
	}
	if (sim_timeline(&c->s, p, &c->m, &c->t, e) < 0)
		return -1;
	c->ok = true;
	for (int d = 0; d < c->m.ndevices; d++)
		if ((double)c->m.dev[d].peak_mem_bytes > c->peak)
			c->peak = (double)c->m.dev[d].peak_mem_bytes;
	if (crit) {
		long n = plan_total_ops(p), *pos = malloc((size_t)(n ? n : 1) * sizeof(long));

		c->crit = malloc((size_t)(n ? n : 1) * sizeof(long));
		if (!pos || !c->crit) {
			free(pos);
			return err_set(e, ERR_RUNTIME, "out of host memory finding the critical path");
		}
		explain_positions(p, pos);
		c->ncrit = explain_critical_path(&c->s, p, pos, c->crit, n);
		free(pos);
	}
	return 0;
}

static void chart_release(struct chart *c)
{
	sim_release(&c->s);
	metrics_release(&c->m);
	if (c->ok)
		timeline_release(&c->t);
	free(c->crit);
	memset(c, 0, sizeof(*c));
}

int report_check_measured(const struct plan *p, const struct timeline *t, const char *file, struct err *e)
{
	if (!file)
		file = "timeline";
	if (t->ndevices != p->ndevices)
		return err_set(e, ERR_INPUT, "%s: a run on %d devices, the plan has %d", file, t->ndevices, p->ndevices);
	for (int d = 0; d < p->ndevices; d++) {
		int want = p->order_start[d + 1] - p->order_start[d];

		if (t->dev[d].nops != want)
			return err_set(e, ERR_INPUT, "%s: devices[%d]: %d ops, the plan gives device %d %d ops", file, d,
			               t->dev[d].nops, d, want);
		for (int i = 0; i < t->dev[d].nops; i++) {
			const struct tl_op *o = &t->dev[d].ops[i];

			if (o->stage < 0 || o->stage >= p->nstages || p->stages[o->stage].device != d ||
			    o->mb < 0 || o->mb >= p->microbatches)
				return err_set(e, ERR_INPUT, "%s: devices[%d].ops[%d]: stage %d microbatch %d is not the plan's "
				               "work on device %d", file, d, i, o->stage, o->mb, d);
		}
	}
	return 0;
}

/* Latest op end of a timeline. */
static double ops_end(const struct timeline *t)
{
	double end = 0;

	for (int d = 0; d < t->ndevices; d++)
		for (int i = 0; i < t->dev[d].nops; i++)
			if (t->dev[d].ops[i].end_ms > end)
				end = t->dev[d].ops[i].end_ms;
	return end;
}

/* ---- the Gantt chart ----------------------------------------------------------------------- */

struct gantt_geo {
	int width;
	double u;
	double x0, pw;           /* plot area: left edge and width */
	double tmax;             /* time at the right edge */
	double rh, mh, pitch;    /* row height, measured row height, row pitch */
	double y0;               /* top of the first row */
	double height;
};

static double gx(const struct gantt_geo *g, double t)
{
	return g->x0 + t / g->tmax * g->pw;
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) for about n ticks over span. */
static double nice_step(double span, int n)
{
	double raw = span / (n > 0 ? n : 1), p = pow(10, floor(log10(raw > 0 ? raw : 1))), f = raw / p;

	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

static void tick_label(struct strbuf *sb, double t, double step)
{
	if (step >= 1000)
		strbuf_addf(sb, "%g s", t / 1000);
	else if (step >= 1)
		strbuf_addf(sb, "%g ms", t);
	else
		strbuf_addf(sb, "%.*f ms", step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3, t);
}

/* The title line: iteration time, tokens/s, bubble, efficiency. */
static void put_summary_line(struct strbuf *sb, const struct chart *c)
{
	const struct metrics *m = &c->m;

	if (!c->ok) {
		strbuf_addstr(sb, "cannot run: ");
		xml_text(sb, c->why.msg);
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
static double legend_item(struct strbuf *sb, const struct gantt_geo *g, double x, double y, const char *cls,
                          const char *text)
{
	double u = g->u;

	if (strcmp(cls, "cp") == 0)
		put(sb, "<rect class=\"cp\" x=\"%N\" y=\"%N\" width=\"%N\" height=\"%N\"/>", x, y, 14 * u, 10 * u);
	else if (strcmp(cls, "wu") == 0 || strcmp(cls, "cd") == 0)
		put(sb, "<rect class=\"%s\" x=\"%N\" y=\"%N\" width=\"%N\" height=\"%N\"/>"
		    "<rect class=\"bu sw\" x=\"%N\" y=\"%N\" width=\"%N\" height=\"%N\"/>", cls, x, y, 14 * u, 10 * u,
		    x, y, 14 * u, 10 * u);
	else
		put(sb, "<rect class=\"%s sw\" x=\"%N\" y=\"%N\" width=\"%N\" height=\"%N\"/>", cls, x, y, 14 * u, 10 * u);
	if (strcmp(cls, "W") == 0 || strcmp(cls, "B") == 0)
		put(sb, "<path class=\"p%s\" stroke-width=\"%N\" d=\"M%N %Nh%N\"/>", cls[0] == 'W' ? "w" : "b", 10 * u, x,
		    y + 5 * u, 14 * u);
	put(sb, "<text x=\"%N\" y=\"%N\">%s</text>", x + 18 * u, y + 9 * u, text);
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
		put(m->sb, "<path class=\"%s\"", m->cls);
		if (m->sw > 0)
			put(m->sb, " stroke-width=\"%N\"", m->sw);
		strbuf_addstr(m->sb, " d=\"");
	}
	m->open = true;
	put(m->sb, "M%N %Nh%N", m->x0, m->y, m->x1 - m->x0);
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
				put(sb, "<g class=\"%s%s\">", kind_class[k], sep ? " s" : "");
			open = true;
			put(sb, "<rect x=\"%N\" width=\"%N\" height=\"%N\"><title>%s%s", x, w, h, measured ? "measured " : "",
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
		put(sb, "<text%s x=\"%N\" y=\"%N\">%s</text>", k == OP_F ? " class=\"tw\"" : "", x + w / 2, h / 2 + fs * 0.35,
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
static double gantt_height(int nd, bool meas, double u)
{
	return 64 * u + nd * (14 * u + (meas ? 11 * u : 0) + 4 * u) + 26 * u;
}

/* The chart as an <svg> element: standalone adds the XML declaration, namespace, styles
 * and patterns (an HTML report has them once for all charts). tmax > 0 forces the time
 * axis (one axis for several plans). */
static void put_gantt(struct strbuf *sb, const struct chart *c, const struct timeline *meas, int width, double tmax,
                      bool critical, bool standalone)
{
	const struct plan *p = c->p;
	struct gantt_geo g;
	double u = width / 1200.0, y, step;
	int nd = p->ndevices;
	bool sep;

	g.width = width;
	g.u = u;
	g.x0 = 64 * u;
	g.pw = width - g.x0 - 16 * u;
	g.tmax = tmax > 0 ? tmax : c->ok ? c->m.makespan_ms : 1;
	if (meas && tmax <= 0 && ops_end(meas) > g.tmax)
		g.tmax = ops_end(meas);
	if (g.tmax <= 0)
		g.tmax = 1;
	g.rh = 14 * u;
	g.mh = meas ? 9 * u : 0;
	g.pitch = g.rh + (meas ? g.mh + 2 * u : 0) + 4 * u;
	g.y0 = 64 * u;
	g.height = gantt_height(nd, meas != NULL, u);

	if (standalone)
		strbuf_addstr(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	put(sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%N\" viewBox=\"0 0 %d %N\" "
	    "font-family=\"sans-serif\" font-size=\"%N\">\n", width, g.height, width, g.height, 10 * u);
	strbuf_addstr(sb, "<title>");
	xml_text(sb, c->label);
	strbuf_addstr(sb, "</title>\n");
	if (standalone) {
		strbuf_addstr(sb, "<style>");
		put_css(sb, u);
		strbuf_addstr(sb, "</style>\n");
		put_defs(sb, u);
		strbuf_addch(sb, '\n');
	}
	put(sb, "<rect width=\"%d\" height=\"%N\" fill=\"#fff\"/>\n", width, g.height);
	/* title lines */
	put(sb, "<text class=\"b\" x=\"%N\" y=\"%N\" font-size=\"%N\">", 8 * u, 17 * u, 13 * u);
	xml_text(sb, c->label);
	strbuf_addstr(sb, ": ");
	put_summary_line(sb, c);
	strbuf_addstr(sb, "</text>\n");
	put(sb, "<text class=\"dim\" x=\"%N\" y=\"%N\">model ", 8 * u, 32 * u);
	xml_text(sb, p->model.name);
	strbuf_addstr(sb, " on ");
	xml_text(sb, p->cluster.name);
	{
		/* a plan with a layout: each pipeline device is a group of tp x dp GPUs */
		struct parallel pl = plan_parallel(p);

		if (p->has_parallel || !parallel_is_pipeline_only(&pl))
			strbuf_addf(sb, ", %d microbatches per replica, %d stages on %d pipeline devices (pp %d x tp %d x dp %d = %d GPUs, "
			            "ep %d, ZeRO %d)%s</text>\n", p->microbatches, p->nstages, nd, pl.pp, pl.tp, pl.dp,
			            parallel_gpus(&pl), pl.ep, pl.zero, p->split_backward ? ", split backward (I + W)" : "");
		else
			strbuf_addf(sb, ", %d microbatches, %d stages on %d GPUs%s</text>\n", p->microbatches, p->nstages, nd,
			            p->split_backward ? ", split backward (I + W)" : "");
	}
	/* legend */
	{
		double lx = 8 * u, ly = 40 * u;

		lx = legend_item(sb, &g, lx, ly, "F", "F forward");
		if (p->split_backward) {
			lx = legend_item(sb, &g, lx, ly, "I", "I input-grad");
			lx = legend_item(sb, &g, lx, ly, "W", "W weight-grad");
		} else {
			lx = legend_item(sb, &g, lx, ly, "B", "B backward");
		}
		lx = legend_item(sb, &g, lx, ly, "bu", "bubble (idle)");
		lx = legend_item(sb, &g, lx, ly, "wu", "warm-up");
		lx = legend_item(sb, &g, lx, ly, "cd", "cool-down");
		if (critical && c->ncrit)
			lx = legend_item(sb, &g, lx, ly, "cp", "critical path");
		if (c->ok && c->m.dp_sync_ms >= 0) {
			bool sync = false, redo = false;

			for (int d = 0; d < c->m.ndevices; d++)
				sync |= c->m.dev[d].sync_end_ms > 0;
			for (int st = 0; st < p->nstages; st++)
				redo |= p->stages[st].recompute != RECOMPUTE_NONE;
			if (sync)
				lx = legend_item(sb, &g, lx, ly, "dp", "data-parallel sync");
			if (redo)
				lx = legend_item(sb, &g, lx, ly, "rc", "recomputes (dashed top)");
		}
		if (meas)
			put(sb, "<text class=\"dim\" x=\"%N\" y=\"%N\">under each GPU: the measured run (%s)</text>", lx,
			    ly + 9 * u, meas->source && strcmp(meas->source, "cuda") == 0 ? "cuda" : "emu");
		strbuf_addch(sb, '\n');
	}
	/* grid and time axis */
	step = nice_step(g.tmax, (int)(g.pw / (90 * u)) > 2 ? (int)(g.pw / (90 * u)) : 2);
	y = g.y0 + nd * g.pitch;
	strbuf_addstr(sb, "<path class=\"gr\" d=\"");
	for (double t = 0; t <= g.tmax * (1 + 1e-9); t += step)
		put(sb, "M%N %NV%N", gx(&g, t), g.y0 - 2 * u, y);
	strbuf_addstr(sb, "\"/>\n");
	put(sb, "<path class=\"ax\" d=\"M%N %NH%N", g.x0, y, g.x0 + g.pw);
	for (double t = 0; t <= g.tmax * (1 + 1e-9); t += step)
		put(sb, "M%N %NV%N", gx(&g, t), y, y + 4 * u);
	strbuf_addstr(sb, "\"/>\n<g class=\"t\">");
	for (double t = 0; t <= g.tmax * (1 + 1e-9); t += step) {
		put(sb, "<text x=\"%N\" y=\"%N\">", gx(&g, t), y + 15 * u);
		tick_label(sb, t, step);
		strbuf_addstr(sb, "</text>");
	}
	strbuf_addstr(sb, "</g>\n");
	if (!c->ok) {
		put(sb, "<text x=\"%N\" y=\"%N\">", g.x0, g.y0 + 12 * u);
		xml_text(sb, c->why.msg);
		strbuf_addstr(sb, "</text>\n</svg>\n");
		return;
	}
	sep = wide_ops(&g, &c->t);
	/* rows: a GPU's row is hatched as a bubble over the whole iteration and its ops drawn
	 * on top, so every idle gap shows hatched without an element of its own */
	for (int d = 0; d < nd; d++) {
		const struct tl_device *dv = &c->t.dev[d];
		double first_b = INFINITY, last_f = 0, mk = c->m.makespan_ms;

		for (int i = 0; i < dv->nops; i++) {
			if (dv->ops[i].kind == OP_F && dv->ops[i].end_ms > last_f)
				last_f = dv->ops[i].end_ms;
			if ((dv->ops[i].kind == OP_I || dv->ops[i].kind == OP_B) && dv->ops[i].start_ms < first_b)
				first_b = dv->ops[i].start_ms;
		}
		put(sb, "<g transform=\"translate(0 %N)\">", g.y0 + d * g.pitch);
		put(sb, "<text class=\"r\" x=\"%N\" y=\"%N\">GPU %d</text>", g.x0 - 5 * u, g.rh * 0.72, d);
		if (dv->nops && isfinite(first_b) && first_b > 0)
			put(sb, "<rect class=\"wu\" x=\"%N\" width=\"%N\" height=\"%N\"><title>GPU %d warm-up: idle %.2f ms"
			    "</title></rect>", g.x0, gx(&g, first_b) - g.x0, g.rh, d, c->m.dev[d].warmup_idle_ms);
		if (dv->nops && isfinite(first_b)) {
			double cs = last_f > first_b ? last_f : first_b;

			if (mk > cs)
				put(sb, "<rect class=\"cd\" x=\"%N\" width=\"%N\" height=\"%N\"><title>GPU %d cool-down: idle %.2f ms"
				    "</title></rect>", gx(&g, cs), gx(&g, mk) - gx(&g, cs), g.rh, d, c->m.dev[d].cooldown_idle_ms);
		}
		put(sb, "<rect class=\"bu\" x=\"%N\" width=\"%N\" height=\"%N\"><title>GPU %d idle %.2f ms (%.1f%%)</title>"
		    "</rect>\n", g.x0, gx(&g, mk) - g.x0, g.rh, d, c->m.dev[d].idle_ms, 100 * c->m.dev[d].bubble_ratio);
		put_ops(sb, &g, p, dv, g.rh, false, sep);
		if (c->m.dev[d].sync_end_ms > 0) {
			const struct device_metrics *dm = &c->m.dev[d];

			put(sb, "<rect class=\"dp\" x=\"%N\" y=\"%N\" width=\"%N\" height=\"%N\"><title>GPU %d data-parallel "
			    "sync %.2f-%.2f ms</title></rect>", gx(&g, dm->sync_start_ms), g.rh * 0.72,
			    gx(&g, dm->sync_end_ms) - gx(&g, dm->sync_start_ms), g.rh * 0.28, d, dm->sync_start_ms,
			    dm->sync_end_ms);
		}
		strbuf_addstr(sb, "</g>\n");
		if (meas) {
			const struct tl_device *mv = &meas->dev[d];
			double mend = 0;

			for (int i = 0; i < mv->nops; i++)
				if (mv->ops[i].end_ms > mend)
					mend = mv->ops[i].end_ms;
			put(sb, "<g class=\"mo\" transform=\"translate(0 %N)\">", g.y0 + d * g.pitch + g.rh + 2 * u);
			put(sb, "<text class=\"r dim\" x=\"%N\" y=\"%N\" font-size=\"%N\">measured</text>", g.x0 - 5 * u,
			    g.mh * 0.8, 7.5 * u);
			put(sb, "<rect class=\"bu\" x=\"%N\" width=\"%N\" height=\"%N\"/>\n", g.x0, gx(&g, mend) - g.x0, g.mh);
			put_ops(sb, &g, p, mv, g.mh, true, sep);
			strbuf_addstr(sb, "</g>\n");
		}
	}
	/* the critical path: each op outlined, and what it waited for joined by a dashed line */
	if (critical && c->ncrit) {
		strbuf_addstr(sb, "<path class=\"cp\" d=\"");
		for (long i = 0; i < c->ncrit; i++) {
			const struct action *a = &p->order[c->crit[i]];
			long op = sim_op_index(p, a->stage, a->mb, a->kind);
			double x = gx(&g, c->s.start[op]), w = gx(&g, c->s.end[op]) - x;
			double yy = g.y0 + p->stages[a->stage].device * g.pitch;

			put(sb, "M%N %Nh%Nv%Nh%NZ", x, yy, w, g.rh, -w);
		}
		strbuf_addstr(sb, "\"/>\n<path class=\"cl\" d=\"");
		for (long i = 0; i + 1 < c->ncrit; i++) {
			const struct action *a = &p->order[c->crit[i]], *b = &p->order[c->crit[i + 1]];
			long oa = sim_op_index(p, a->stage, a->mb, a->kind), ob = sim_op_index(p, b->stage, b->mb, b->kind);
			int da = p->stages[a->stage].device, db = p->stages[b->stage].device;

			if (da != db)
				put(sb, "M%N %NL%N %N", gx(&g, c->s.end[ob]), g.y0 + db * g.pitch + g.rh / 2, gx(&g, c->s.start[oa]),
				    g.y0 + da * g.pitch + g.rh / 2);
		}
		strbuf_addstr(sb, "\"/>\n");
	}
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
	if (chart_init(&c, p, o ? o->title : NULL, o && o->critical_path, e) < 0) {
		chart_release(&c);
		return -1;
	}
	if (!c.ok) {
		*e = c.why;
		chart_release(&c);
		return -1;
	}
	put_gantt(out, &c, measured, width, 0, o && o->critical_path, true);
	chart_release(&c);
	if (strbuf_failed(out))
		return err_set(e, ERR_RUNTIME, "out of host memory drawing the chart");
	return 0;
}

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

static void td_ms(struct strbuf *sb, double ms)
{
	strbuf_addstr(sb, "<td>");
	fmt_ms(sb, ms);
	strbuf_addstr(sb, "</td>");
}

static void put_summary_table(struct strbuf *sb, const struct chart *c, int n)
{
	strbuf_addstr(sb, "<table><tr><th class=\"l\">plan</th><th class=\"l\">model \xc2\xb7 cluster \xc2\xb7 microbatches</th>"
	              "<th>iteration</th><th>tokens/s</th><th>bubble</th><th>lower bound</th><th>efficiency</th>"
	              "<th>peak memory (largest GPU)</th><th>usable per GPU</th><th class=\"l\">feasible</th></tr>\n");
	for (int i = 0; i < n; i++) {
		const struct plan *p = c[i].p;

		strbuf_addstr(sb, "<tr><td class=\"l\">");
		xml_text(sb, c[i].label);
		strbuf_addstr(sb, "</td><td class=\"l\">");
		xml_text(sb, p->model.name);
		strbuf_addstr(sb, " \xc2\xb7 ");
		xml_text(sb, p->cluster.name);
		strbuf_addf(sb, " \xc2\xb7 %d</td>", p->microbatches);
		if (!c[i].ok) {
			strbuf_addstr(sb, "<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td class=\"l oom\">no: ");
			xml_text(sb, c[i].why.msg);
			strbuf_addstr(sb, "</td></tr>\n");
			continue;
		}
		td_ms(sb, c[i].m.makespan_ms);
		strbuf_addf(sb, "<td>%.0f</td><td>%.1f%%</td>", c[i].m.throughput_tokens_per_s, 100 * c[i].m.bubble_ratio);
		td_ms(sb, c[i].m.lower_bound_ms);
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
		xml_text(sb, gp->model.name);
		strbuf_addstr(sb, " on ");
		xml_text(sb, gp->cluster.name);
		strbuf_addf(sb, ", %d microbatches</h3>\n<table><tr><th class=\"l\">baseline</th><th>iteration</th>",
		            gp->microbatches);
		for (int j = i; j < n; j++)
			if (!done[j] && same_setup(c[j].p, gp)) {
				strbuf_addstr(sb, "<th>");
				xml_text(sb, c[j].label);
				strbuf_addstr(sb, "</th>");
			}
		strbuf_addstr(sb, "</tr>\n");
		for (int r = 0; r < bs.n; r++) {
			const struct baseline_result *br = &bs.r[r];
			double ms = br->m.makespan_ms;

			strbuf_addstr(sb, "<tr><td class=\"l\">");
			xml_text(sb, br->recipe->name);
			strbuf_addstr(sb, "</td>");
			if (br->feasible)
				td_ms(sb, ms);
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
		xml_text(sb, c[i].label);
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

	put(sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%N\" viewBox=\"0 0 %d %N\" "
	    "font-family=\"sans-serif\" font-size=\"%N\">\n<title>bubbles per GPU</title>\n", width, h, width, h, 10 * u);
	lx = legend_item(sb, &g, lx, 4 * u, "bz", "busy");
	lx = legend_item(sb, &g, lx, 4 * u, "wu", "warm-up idle");
	lx = legend_item(sb, &g, lx, 4 * u, "bu", "steady idle");
	legend_item(sb, &g, lx, 4 * u, "cd", "cool-down idle");
	strbuf_addch(sb, '\n');
	for (int d = 0; d < nd; d++) {
		const struct device_metrics *dm = &c->m.dev[d];
		double steady = dm->idle_ms - dm->warmup_idle_ms - dm->cooldown_idle_ms, x = x0;
		double seg[4] = { dm->busy_ms, dm->warmup_idle_ms, steady > 0 ? steady : 0, dm->cooldown_idle_ms };
		static const char *const cls[4] = { "bz", "wu", "bu", "cd" };
		static const char *const what[4] = { "busy", "warm-up idle", "steady idle", "cool-down idle" };

		put(sb, "<g transform=\"translate(0 %N)\">", y0 + d * pitch);
		put(sb, "<text class=\"r\" x=\"%N\" y=\"%N\">GPU %d</text>", x0 - 5 * u, rh * 0.8, d);
		for (int k = 0; k < 4; k++) {
			double w = seg[k] / mk * pw;

			if (w <= 0)
				continue;
			if (k == 1 || k == 3)
				put(sb, "<rect class=\"%s\" x=\"%N\" width=\"%N\" height=\"%N\"/>", cls[k], x, w, rh);
			put(sb, "<rect class=\"%s\" x=\"%N\" width=\"%N\" height=\"%N\"><title>GPU %d %s %.2f ms</title></rect>",
			    k == 0 ? "bz" : "bu", x, w, rh, d, what[k], seg[k]);
			x += w;
		}
		put(sb, "<text x=\"%N\" y=\"%N\">", x0 + pw + 6 * u, rh * 0.8);
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
		put(sb, "%s%N", i ? " " : "", ds[i] * u);
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

	if (top <= 0)
		top = 1;
	for (int d = 0; d < nd; d++)
		if (c->m.dev[d].peak_mem_bytes > c->m.dev[dmax].peak_mem_bytes)
			dmax = d;
	put(sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%N\" viewBox=\"0 0 %d %N\" "
	    "font-family=\"sans-serif\" font-size=\"%N\">\n<title>memory over time</title>\n", width, h, width, h, 10 * u);
	/* axes: GB on the left, time below */
	step = nice_step(top / 1e9, 5) * 1e9;
	strbuf_addstr(sb, "<path class=\"gr\" d=\"");
	for (double b = 0; b <= top; b += step)
		put(sb, "M%N %NH%N", x0, y0 + ph - b / top * ph, x0 + pw);
	strbuf_addstr(sb, "\"/>");
	for (double b = 0; b <= top; b += step)
		put(sb, "<text class=\"r\" x=\"%N\" y=\"%N\">%N GB</text>", x0 - 4 * u, y0 + ph - b / top * ph + 3 * u, b / 1e9);
	step = nice_step(mk, 8);
	for (double t = 0; t <= mk * (1 + 1e-9); t += step) {
		put(sb, "<text class=\"t\" x=\"%N\" y=\"%N\">", x0 + t / mk * pw, y0 + ph + 14 * u);
		tick_label(sb, t, step);
		strbuf_addstr(sb, "</text>");
	}
	put(sb, "<path class=\"ax\" d=\"M%N %NV%NH%N\"/>\n", x0, y0, y0 + ph, x0 + pw);
	put(sb, "<path class=\"cap\" d=\"M%N %NH%N\"/>", x0, y0 + ph - cap / top * ph, x0 + pw);
	put(sb, "<text x=\"%N\" y=\"%N\">usable ", x0 + pw + 4 * u, y0 + ph - cap / top * ph + 3 * u);
	fmt_bytes(sb, cap);
	strbuf_addstr(sb, "</text>\n");
	for (int d = 0; d < nd; d++) {
		const struct tl_device *dv = &c->t.dev[d];
		double col = -1, colmax = 0, last_y = -1, peak = -1, px = 0, py = 0;
		bool first = true;

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
		put(sb, "<path class=\"ln%s\" stroke=\"%s\"", d == dmax ? " th" : "", palette[d % 8]);
		put_dashes(sb, d, u);
		strbuf_addstr(sb, " d=\"");
		/* one point per pixel column: the column's largest value */
		for (int i = 0; i <= dv->nmem; i++) {
			double x = i < dv->nmem ? floor((x0 + ms[i].t / mk * pw) / u) * u : x0 + pw;

			if (i == dv->nmem || x != col) {
				if (col >= 0) {
					double yy = y0 + ph - colmax / top * ph;

					if (first)
						put(sb, "M%N %N", col, yy);
					else if (yy != last_y)
						put(sb, "H%NV%N", col, yy);
					first = false;
					last_y = yy;
					if (colmax > peak) {
						peak = colmax;
						px = col;
						py = yy;
					}
				}
				if (i == dv->nmem)
					break;
				col = x;
				colmax = ms[i].bytes;
			} else if (ms[i].bytes > colmax) {
				colmax = ms[i].bytes;
			}
		}
		put(sb, "H%N\"><title>GPU %d, peak ", x0 + pw, d);
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
			put(&lab, "<text x=\"%N\" y=\"%N\">%s%d</text>", px, py, nd <= 16 ? "" : "GPU ", d);
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
	/* legend: the GPUs' colours (the first 16), and the one with the highest peak */
	{
		double lx = x0, ly = y0 + ph + 22 * u;

		for (int d = 0; d < nd && d < 16; d++) {
			put(sb, "<path class=\"ln\" stroke=\"%s\"", palette[d % 8]);
			put_dashes(sb, d, u);
			put(sb, " d=\"M%N %Nh%N\"/>", lx, ly + 4 * u, 16 * u);
			put(sb, "<text x=\"%N\" y=\"%N\">GPU %d</text>", lx + 19 * u, ly + 7 * u, d);
			lx += 62 * u;
		}
		put(sb, "<text x=\"%N\" y=\"%N\">%sthick: GPU %d, the highest peak (", lx, ly + 7 * u,
		    nd > 16 ? "\xe2\x80\xa6 one line per GPU (hover for its name); " : "each line's GPU at its peak; ", dmax);
		fmt_bytes(sb, c->peak);
		strbuf_addstr(sb, ")</text>\n</svg>\n");
	}
	return 0;
}

/* ---- tuner steps ---------------------------------------------------------------------------- */

struct rstep {
	int index;
	const char *phase, *what;
	double before_ms, after_ms, bubble;
};

static const char *const phase_names[4] = { "start", "partition", "placement", "scheduling" };
static const char *const phase_colour[4] = { "#000000", "#0072b2", "#e69f00", "#009e73" };

static int phase_of(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(s, phase_names[i]) == 0)
			return i;
	return 0;
}

static int steps_read(const cJSON *root, const char *file, struct rstep **out, int *n, struct err *e)
{
	struct jv v = { file, e, NULL };
	const cJSON *arr;
	int k = 0;

	*out = NULL;
	*n = 0;
	if (jv_format(&v, root, "octopipe.steps/1") < 0 || jv_array(&v, root, NULL, "steps", JV_REQUIRED, &arr) < 0)
		return -1;
	if (cJSON_GetArraySize(arr) < 1)
		return jv_fail(&v, "steps", "no steps");
	*out = calloc((size_t)cJSON_GetArraySize(arr), sizeof(**out));
	if (!*out)
		return err_set(e, ERR_RUNTIME, "out of host memory reading steps");
	for (const cJSON *it = arr->child; it; it = it->next, k++) {
		char path[JPATH_MAX];
		struct rstep *s = &(*out)[k];
		long idx;

		jpath_index(path, "steps", k);
		if (!cJSON_IsObject(it)) {
			free(*out);
			*out = NULL;
			return jv_fail(&v, path, "must be an object (got %s)", json_type_name(it));
		}
		if (jv_int(&v, it, path, "step", JV_OPTIONAL, 0, 1L << 30, k, &idx) < 0 ||
		    jv_string(&v, it, path, "phase", JV_REQUIRED | JV_NONEMPTY, NULL, &s->phase) < 0 ||
		    jv_string(&v, it, path, "what", JV_OPTIONAL, "", &s->what) < 0 ||
		    jv_number(&v, it, path, "after_ms", JV_REQUIRED, 0, 1e12, 0, &s->after_ms) < 0 ||
		    jv_number(&v, it, path, "before_ms", JV_OPTIONAL, 0, 1e12, s->after_ms, &s->before_ms) < 0 ||
		    jv_number(&v, it, path, "bubble_after", JV_OPTIONAL, 0, 1, 0, &s->bubble) < 0) {
			free(*out);
			*out = NULL;
			return -1;
		}
		s->index = (int)idx;
	}
	*n = k;
	return 0;
}

static void put_marker(struct strbuf *sb, int ph, double x, double y, double r)
{
	switch (ph) {
	case 1: put(sb, "<circle cx=\"%N\" cy=\"%N\" r=\"%N\"", x, y, r); break;
	case 2: put(sb, "<rect x=\"%N\" y=\"%N\" width=\"%N\" height=\"%N\"", x - r, y - r, 2 * r, 2 * r); break;
	case 3: put(sb, "<path d=\"M%N %NL%N %NL%N %NZ\"", x, y - 1.2 * r, x + 1.1 * r, y + r, x - 1.1 * r, y + r); break;
	default: put(sb, "<path d=\"M%N %NL%N %NL%N %NL%N %NZ\"", x, y - 1.3 * r, x + 1.3 * r, y, x, y + 1.3 * r, x - 1.3 * r, y); break;
	}
	put(sb, " fill=\"%s\" stroke=\"#fff\" stroke-width=\"%N\">", phase_colour[ph], 0.6 * r / 4);
}

static void put_steps(struct strbuf *sb, const cJSON *root, const struct rstep *st, int n, int width)
{
	double u = width / 1200.0, x0 = 80 * u, pw = width - x0 - 40 * u, ph = 220 * u, y0 = 26 * u;
	double lo = st[0].after_ms, hi = st[0].after_ms, base = -1, h = y0 + ph + 34 * u, step;
	const cJSON *bb = cJSON_GetObjectItemCaseSensitive(root, "best_baseline_ms");
	const cJSON *bn = cJSON_GetObjectItemCaseSensitive(root, "best_baseline");
	double lx = x0;

	if (cJSON_IsNumber(bb) && isfinite(bb->valuedouble) && bb->valuedouble > 0)
		base = bb->valuedouble;
	for (int i = 0; i < n; i++) {
		if (st[i].after_ms < lo)
			lo = st[i].after_ms;
		if (st[i].after_ms > hi)
			hi = st[i].after_ms;
	}
	if (base > 0 && base > hi)
		hi = base;
	if (base > 0 && base < lo)
		lo = base;
	if (hi - lo < 1e-9 * (hi > 0 ? hi : 1) || hi - lo <= 0) {
		hi += hi > 0 ? hi * 0.01 : 1;
		lo -= lo > 0 ? lo * 0.01 : 0;
	}
	{
		double pad = (hi - lo) * 0.08;

		hi += pad;
		lo = lo - pad > 0 ? lo - pad : 0;
	}
	put(sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%N\" viewBox=\"0 0 %d %N\" "
	    "font-family=\"sans-serif\" font-size=\"%N\">\n<title>tuner steps</title>\n", width, h, width, h, 10 * u);
	for (int k = 0; k < 4; k++) {
		put_marker(sb, k, lx + 5 * u, 10 * u, 4 * u);
		put(sb, "</%s><text x=\"%N\" y=\"%N\">%s</text>", k == 1 ? "circle" : k == 2 ? "rect" : "path", lx + 13 * u,
		    14 * u, phase_names[k]);
		lx += 90 * u;
	}
	if (base > 0) {
		put(sb, "<path class=\"cap\" d=\"M%N %Nh%N\"/><text x=\"%N\" y=\"%N\">best baseline", lx, 10 * u, 18 * u,
		    lx + 22 * u, 14 * u);
		if (cJSON_IsString(bn)) {
			strbuf_addstr(sb, " (");
			xml_text(sb, bn->valuestring);
			strbuf_addch(sb, ')');
		}
		strbuf_addstr(sb, "</text>");
	}
	strbuf_addch(sb, '\n');
	step = nice_step(hi - lo, 5);
	strbuf_addstr(sb, "<path class=\"gr\" d=\"");
	for (double v = ceil(lo / step) * step; v <= hi; v += step)
		put(sb, "M%N %NH%N", x0, y0 + ph - (v - lo) / (hi - lo) * ph, x0 + pw);
	strbuf_addstr(sb, "\"/>");
	for (double v = ceil(lo / step) * step; v <= hi; v += step) {
		put(sb, "<text class=\"r\" x=\"%N\" y=\"%N\">", x0 - 4 * u, y0 + ph - (v - lo) / (hi - lo) * ph + 3 * u);
		tick_label(sb, v, step);
		strbuf_addstr(sb, "</text>");
	}
	put(sb, "<path class=\"ax\" d=\"M%N %NV%NH%N\"/>\n", x0, y0, y0 + ph, x0 + pw);
	put(sb, "<text class=\"t\" x=\"%N\" y=\"%N\">step (accepted moves, in order)</text>\n", x0 + pw / 2, y0 + ph + 28 * u);
	if (base > 0)
		put(sb, "<path class=\"cap\" d=\"M%N %NH%N\"/>\n", x0,
		    y0 + ph - (base - lo) / (hi - lo) * ph, x0 + pw);
	{
		double dx = n > 1 ? pw / (n - 1) : 0;
		int every = (int)ceil(n / (pw / (30 * u)));

		if (every < 1)
			every = 1;
		strbuf_addstr(sb, "<path class=\"sl\" d=\"");
		for (int i = 0; i < n; i++)
			put(sb, "%s%N %N", i ? "L" : "M", x0 + (n > 1 ? i * dx : pw / 2), y0 + ph - (st[i].after_ms - lo) / (hi - lo) * ph);
		strbuf_addstr(sb, "\"/>\n");
		for (int i = 0; i < n; i++) {
			double x = x0 + (n > 1 ? i * dx : pw / 2), y = y0 + ph - (st[i].after_ms - lo) / (hi - lo) * ph;
			int k = phase_of(st[i].phase);

			if (i % every == 0 || i == n - 1)
				put(sb, "<text class=\"t\" x=\"%N\" y=\"%N\">%d</text>", x, y0 + ph + 13 * u, st[i].index);
			put_marker(sb, k, x, y, (n > 200 ? 2.5 : 4) * u);
			strbuf_addf(sb, "<title>step %d, ", st[i].index);
			xml_text(sb, st[i].phase);
			strbuf_addstr(sb, ": ");
			xml_text(sb, st[i].what);
			strbuf_addf(sb, "; %.2f \xe2\x86\x92 %.2f ms</title></%s>\n", st[i].before_ms, st[i].after_ms,
			            k == 1 ? "circle" : k == 2 ? "rect" : "path");
		}
	}
	strbuf_addstr(sb, "</svg>\n");
}

static void put_steps_table(struct strbuf *sb, const struct rstep *st, int n)
{
	strbuf_addstr(sb, "<table><tr><th>step</th><th class=\"l\">phase</th><th class=\"l\">move</th><th>before</th>"
	              "<th>after</th><th>bubble</th></tr>\n");
	for (int i = 0; i < n; i++) {
		strbuf_addf(sb, "<tr><td>%d</td><td class=\"l\">", st[i].index);
		xml_text(sb, st[i].phase);
		strbuf_addstr(sb, "</td><td class=\"l\">");
		xml_text(sb, st[i].what);
		strbuf_addstr(sb, "</td>");
		td_ms(sb, st[i].before_ms);
		td_ms(sb, st[i].after_ms);
		strbuf_addf(sb, "<td>%.1f%%</td></tr>\n", 100 * st[i].bubble);
	}
	strbuf_addstr(sb, "</table>\n");
}

/* Predicted against measured, per GPU: when each finished and how long it was busy. */
static void put_measured_table(struct strbuf *sb, const struct chart *c, const struct timeline *t)
{
	/* a run is of one replica's pipeline: the data-parallel sync is not in it */
	double pend = c->m.makespan_ms - c->m.dp_sync_ms, mend = ops_end(t);

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
		td_ms(sb, pb);
		td_ms(sb, mb);
		if (mb > 0)
			strbuf_addf(sb, "<td>%+.1f%%</td>", fabs(pb - mb) < 5e-4 * mb ? 0.0 : 100 * (pb - mb) / mb);
		else
			strbuf_addstr(sb, "<td>-</td>");
		td_ms(sb, pe);
		td_ms(sb, me);
		strbuf_addstr(sb, "</tr>\n");
	}
	strbuf_addstr(sb, "</table>\n");
}

int report_html(const struct report_input *in, struct strbuf *sb, struct err *e)
{
	int n = in->nplans, width = in->width_px ? in->width_px : REPORT_DEFAULT_WIDTH, nsteps = 0, rc = -1;
	struct chart *c;
	struct rstep *st = NULL;
	double tmax = 0;

	if (n < 1)
		return err_set(e, ERR_INPUT, "a report needs at least one plan");
	if (width < REPORT_MIN_WIDTH || width > REPORT_MAX_WIDTH)
		return err_set(e, ERR_INPUT, "width %d px: must be in [%d, %d]", width, REPORT_MIN_WIDTH, REPORT_MAX_WIDTH);
	if (in->measured && report_check_measured(in->plans[0], in->measured, NULL, e) < 0)
		return -1;
	if (in->steps) {
		/* steps of another model or cluster would chart someone else's tuner run: the
		 * engine's reader checks them against the first plan; the chart then takes the
		 * display fields (step numbers, bubbles) that replaying a step does not need */
		struct steps chk;
		const char *sf = in->steps_file ? in->steps_file : "steps";
		int r = steps_from_json(&chk, in->steps, sf, &in->plans[0]->model, &in->plans[0]->cluster,
		                        in->plans[0]->microbatches, e);

		steps_release(&chk);
		if (r < 0 || steps_read(in->steps, sf, &st, &nsteps, e) < 0)
			return -1;
	}
	c = calloc((size_t)n, sizeof(*c));
	if (!c) {
		free(st);
		return err_set(e, ERR_RUNTIME, "out of host memory");
	}
	for (int i = 0; i < n; i++) {
		if (chart_init(&c[i], in->plans[i], in->labels ? in->labels[i] : NULL, in->critical_path, e) < 0)
			goto out;
		if (c[i].ok && c[i].m.makespan_ms > tmax)
			tmax = c[i].m.makespan_ms;
	}
	if (in->measured && ops_end(in->measured) > tmax)
		tmax = ops_end(in->measured);

	strbuf_addstr(sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>\n"
	              "<meta name=\"generator\" content=\"octopipe " PACKAGE_VERSION "\"/>\n<title>OctoPipe report: ");
	for (int i = 0; i < n; i++) {
		if (i)
			strbuf_addstr(sb, ", ");
		xml_text(sb, c[i].label);
	}
	strbuf_addf(sb, "</title>\n<style>%s", html_css);
	put_css(sb, width / 1200.0);
	strbuf_addstr(sb, "</style>\n</head><body>\n");
	strbuf_addstr(sb, "<svg class=\"defs\" xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" height=\"0\" aria-hidden=\"true\">");
	put_defs(sb, width / 1200.0);
	strbuf_addstr(sb, "</svg>\n");

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
		put(sb, "<figure class=\"lazy\" style=\"contain-intrinsic-size:auto %Npx\">",
		    gantt_height(c[i].p->ndevices, i == 0 && in->measured, width / 1200.0));
		put_gantt(sb, &c[i], i == 0 ? in->measured : NULL, width, tmax, in->critical_path, false);
		strbuf_addstr(sb, "</figure>\n");
	}
	strbuf_addstr(sb, "</section>\n");

	for (int i = 0; i < n; i++) {
		strbuf_addstr(sb, "<section class=\"plan\"><h2>");
		xml_text(sb, c[i].label);
		strbuf_addstr(sb, "</h2>\n<p>");
		put_summary_line(sb, &c[i]);
		strbuf_addstr(sb, "</p>\n");
		if (!c[i].ok) {
			strbuf_addstr(sb, "</section>\n");
			continue;
		}
		strbuf_addstr(sb, "<h3>Bubbles per GPU: warm-up, steady state, cool-down</h3>\n<figure>");
		put_bubbles(sb, &c[i], width);
		strbuf_addstr(sb, "</figure>\n<h3>Memory over time</h3>\n<figure>");
		if (put_memory(sb, &c[i], width, e) < 0)
			goto out;
		strbuf_addstr(sb, "</figure>\n");
		if (i == 0 && in->measured) {
			strbuf_addstr(sb, "<h3>Predicted vs measured</h3>\n");
			put_measured_table(sb, &c[i], in->measured);
		}
		strbuf_addstr(sb, "</section>\n");
	}
	if (st) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(in->steps, "model");
		const cJSON *cl = cJSON_GetObjectItemCaseSensitive(in->steps, "cluster");

		strbuf_addstr(sb, "<section id=\"steps\"><h2>Tuner steps</h2>\n<p class=\"note\">");
		if (cJSON_IsString(m) && cJSON_IsString(cl)) {
			strbuf_addstr(sb, "model ");
			xml_text(sb, m->valuestring);
			strbuf_addstr(sb, " on ");
			xml_text(sb, cl->valuestring);
			strbuf_addstr(sb, ": ");
		}
		strbuf_addf(sb, "iteration time after each accepted move (%d steps), by phase: shape and colour.</p>\n<figure>",
		            nsteps);
		put_steps(sb, in->steps, st, nsteps, width);
		strbuf_addstr(sb, "</figure>\n");
		put_steps_table(sb, st, nsteps);
		strbuf_addstr(sb, "</section>\n");
	}
	strbuf_addstr(sb, "</body></html>\n");
	if (strbuf_failed(sb))
		err_set(e, ERR_RUNTIME, "out of host memory writing the report");
	else
		rc = 0;
out:
	for (int i = 0; i < n; i++)
		chart_release(&c[i]);
	free(c);
	free(st);
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
