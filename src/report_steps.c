/*
 * report_steps — the tuner's steps in the report: the iteration time after each step,
 * one marker colour per phase, and the table of steps, as steps.c read them (the one
 * reader of the format, so the report refuses a file as `edit --adopt` does).
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
#include "steps.h"

/* ---- tuner steps ---------------------------------------------------------------------------- */

/* by enum tune_phase */
static const char *const phase_colour[4] = { "#000000", "#0072b2", "#e69f00", "#009e73" };

static void put_marker(struct strbuf *sb, int ph, double x, double y, double r)
{
	switch (ph) {
	case 1: rpt_put(sb, "<circle cx=\"%N\" cy=\"%N\" r=\"%N\"", x, y, r); break;
	case 2: rpt_put(sb, "<rect x=\"%N\" y=\"%N\" width=\"%N\" height=\"%N\"", x - r, y - r, 2 * r, 2 * r); break;
	case 3: rpt_put(sb, "<path d=\"M%N %NL%N %NL%N %NZ\"", x, y - 1.2 * r, x + 1.1 * r, y + r, x - 1.1 * r, y + r); break;
	default: rpt_put(sb, "<path d=\"M%N %NL%N %NL%N %NL%N %NZ\"", x, y - 1.3 * r, x + 1.3 * r, y, x, y + 1.3 * r, x - 1.3 * r, y); break;
	}
	rpt_put(sb, " fill=\"%s\" stroke=\"#fff\" stroke-width=\"%N\">", phase_colour[ph], 0.6 * r / 4);
}

/* A step's time as the table and the tooltips show it: a plan that could not run has none. */
static void put_step_ms(struct strbuf *sb, double ms)
{
	if (isfinite(ms))
		fmt_ms(sb, ms);
	else
		strbuf_addstr(sb, "cannot run");
}

/* The chart's range of times: the finite ones and the best baseline's (0 to 1 when none). */
static void time_range(const struct steps *s, double base, double *lo, double *hi)
{
	bool any = base > 0;

	*lo = *hi = base > 0 ? base : 0;
	for (int i = 0; i < s->n; i++) {
		double t = s->steps[i].after_ms;

		if (!isfinite(t))
			continue;
		if (!any || t < *lo)
			*lo = t;
		if (!any || t > *hi)
			*hi = t;
		any = true;
	}
	if (!any)
		*hi = 1;
}

/* The y of a step's time: one that could not run sits on the chart's top edge. */
static double time_y(double ms, double lo, double hi, double y0, double ph)
{
	return isfinite(ms) ? y0 + ph - (ms - lo) / (hi - lo) * ph : y0;
}

void rpt_put_steps(struct strbuf *sb, const struct steps *s, int width)
{
	double u = width / 1200.0, x0 = 80 * u, pw = width - x0 - 40 * u, ph = 220 * u, y0 = 26 * u;
	double lo, hi, base = -1, h = y0 + ph + 34 * u, step;
	const struct steps_step *st = s->steps;
	int n = s->n;
	double lx = x0;

	if (isfinite(s->best_baseline_ms) && s->best_baseline_ms > 0)
		base = s->best_baseline_ms;
	time_range(s, base, &lo, &hi);
	if (hi - lo < 1e-9 * (hi > 0 ? hi : 1) || hi - lo <= 0) {
		hi += hi > 0 ? hi * 0.01 : 1;
		lo -= lo > 0 ? lo * 0.01 : 0;
	}
	{
		double pad = (hi - lo) * 0.08;

		hi += pad;
		lo = lo - pad > 0 ? lo - pad : 0;
	}
	rpt_put(sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%N\" viewBox=\"0 0 %d %N\" "
	    "font-family=\"sans-serif\" font-size=\"%N\">\n<title>tuner steps</title>\n", width, h, width, h, 10 * u);
	for (int k = 0; k < 4; k++) {
		put_marker(sb, k, lx + 5 * u, 10 * u, 4 * u);
		rpt_put(sb, "</%s><text x=\"%N\" y=\"%N\">%s</text>", k == 1 ? "circle" : k == 2 ? "rect" : "path", lx + 13 * u,
		    14 * u, tune_phase_name((enum tune_phase)k));
		lx += 90 * u;
	}
	if (base > 0) {
		rpt_put(sb, "<path class=\"cap\" d=\"M%N %Nh%N\"/><text x=\"%N\" y=\"%N\">best baseline", lx, 10 * u, 18 * u,
		    lx + 22 * u, 14 * u);
		if (s->best_baseline) {
			strbuf_addstr(sb, " (");
			rpt_xml_text(sb, s->best_baseline);
			strbuf_addch(sb, ')');
		}
		strbuf_addstr(sb, "</text>");
	}
	strbuf_addch(sb, '\n');
	step = rpt_nice_step(hi - lo, 5);
	strbuf_addstr(sb, "<path class=\"gr\" d=\"");
	for (double v = ceil(lo / step) * step; v <= hi; v += step)
		rpt_put(sb, "M%N %NH%N", x0, y0 + ph - (v - lo) / (hi - lo) * ph, x0 + pw);
	strbuf_addstr(sb, "\"/>");
	for (double v = ceil(lo / step) * step; v <= hi; v += step) {
		rpt_put(sb, "<text class=\"r\" x=\"%N\" y=\"%N\">", x0 - 4 * u, y0 + ph - (v - lo) / (hi - lo) * ph + 3 * u);
		rpt_tick_label(sb, v, step);
		strbuf_addstr(sb, "</text>");
	}
	rpt_put(sb, "<path class=\"ax\" d=\"M%N %NV%NH%N\"/>\n", x0, y0, y0 + ph, x0 + pw);
	rpt_put(sb, "<text class=\"t\" x=\"%N\" y=\"%N\">step (accepted moves, in order)</text>\n", x0 + pw / 2, y0 + ph + 28 * u);
	if (base > 0)
		rpt_put(sb, "<path class=\"cap\" d=\"M%N %NH%N\"/>\n", x0,
		    y0 + ph - (base - lo) / (hi - lo) * ph, x0 + pw);
	{
		double dx = n > 1 ? pw / (n - 1) : 0;
		int every = (int)ceil(n / (pw / (30 * u)));

		if (every < 1)
			every = 1;
		strbuf_addstr(sb, "<path class=\"sl\" d=\"");
		for (int i = 0; i < n; i++)
			rpt_put(sb, "%s%N %N", i ? "L" : "M", x0 + (n > 1 ? i * dx : pw / 2), time_y(st[i].after_ms, lo, hi, y0, ph));
		strbuf_addstr(sb, "\"/>\n");
		for (int i = 0; i < n; i++) {
			double x = x0 + (n > 1 ? i * dx : pw / 2), y = time_y(st[i].after_ms, lo, hi, y0, ph);
			int k = (int)st[i].phase;

			if (i % every == 0 || i == n - 1)
				rpt_put(sb, "<text class=\"t\" x=\"%N\" y=\"%N\">%d</text>", x, y0 + ph + 13 * u, st[i].index);
			put_marker(sb, k, x, y, (n > 200 ? 2.5 : 4) * u);
			strbuf_addf(sb, "<title>step %d, ", st[i].index);
			rpt_xml_text(sb, tune_phase_name(st[i].phase));
			strbuf_addstr(sb, ": ");
			rpt_xml_text(sb, st[i].what);
			strbuf_addstr(sb, "; ");
			put_step_ms(sb, st[i].before_ms);
			strbuf_addstr(sb, " \xe2\x86\x92 ");
			put_step_ms(sb, st[i].after_ms);
			strbuf_addf(sb, "</title></%s>\n", k == 1 ? "circle" : k == 2 ? "rect" : "path");
		}
	}
	strbuf_addstr(sb, "</svg>\n");
}

void rpt_put_steps_table(struct strbuf *sb, const struct steps *s)
{
	strbuf_addstr(sb, "<table><tr><th>step</th><th class=\"l\">phase</th><th class=\"l\">move</th><th>before</th>"
	              "<th>after</th><th>bubble</th></tr>\n");
	for (int i = 0; i < s->n; i++) {
		const struct steps_step *st = &s->steps[i];

		strbuf_addf(sb, "<tr><td>%d</td><td class=\"l\">", st->index);
		rpt_xml_text(sb, tune_phase_name(st->phase));
		strbuf_addstr(sb, "</td><td class=\"l\">");
		rpt_xml_text(sb, st->what);
		strbuf_addstr(sb, "</td><td>");
		put_step_ms(sb, st->before_ms);
		strbuf_addstr(sb, "</td><td>");
		put_step_ms(sb, st->after_ms);
		if (isnan(st->bubble))
			strbuf_addstr(sb, "</td><td>n/a</td></tr>\n");
		else
			strbuf_addf(sb, "</td><td>%.1f%%</td></tr>\n", 100 * st->bubble);
	}
	strbuf_addstr(sb, "</table>\n");
}

/* Predicted against measured, per GPU: when each finished and how long it was busy. */

/* The steps' section of the HTML report: which model on which cluster, the chart and the
 * table. */
void rpt_put_steps_section(struct strbuf *sb, const struct steps *s, int width)
{
	strbuf_addstr(sb, "<section id=\"steps\"><h2>Tuner steps</h2>\n<p class=\"note\">");
	if (s->model && s->cluster) {
		strbuf_addstr(sb, "model ");
		rpt_xml_text(sb, s->model);
		strbuf_addstr(sb, " on ");
		rpt_xml_text(sb, s->cluster);
		strbuf_addstr(sb, ": ");
	}
	strbuf_addf(sb, "iteration time after each accepted move (%d steps), by phase: shape and colour.</p>\n<figure>",
	            s->n);
	rpt_put_steps(sb, s, width);
	strbuf_addstr(sb, "</figure>\n");
	rpt_put_steps_table(sb, s);
	strbuf_addstr(sb, "</section>\n");
}
