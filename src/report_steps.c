/*
 * report_steps — the tuner's steps in the report: the iteration time after each step,
 * one marker colour per phase, and the table of steps.
 */
#include "config.h"
#include "report_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* ---- tuner steps ---------------------------------------------------------------------------- */


static const char *const phase_names[4] = { "start", "partition", "placement", "scheduling" };
static const char *const phase_colour[4] = { "#000000", "#0072b2", "#e69f00", "#009e73" };

static int phase_of(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(s, phase_names[i]) == 0)
			return i;
	return 0;
}

int rpt_steps_read(const cJSON *root, const char *file, struct rstep **out, int *n, struct err *e)
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
	case 1: rpt_put(sb, "<circle cx=\"%N\" cy=\"%N\" r=\"%N\"", x, y, r); break;
	case 2: rpt_put(sb, "<rect x=\"%N\" y=\"%N\" width=\"%N\" height=\"%N\"", x - r, y - r, 2 * r, 2 * r); break;
	case 3: rpt_put(sb, "<path d=\"M%N %NL%N %NL%N %NZ\"", x, y - 1.2 * r, x + 1.1 * r, y + r, x - 1.1 * r, y + r); break;
	default: rpt_put(sb, "<path d=\"M%N %NL%N %NL%N %NL%N %NZ\"", x, y - 1.3 * r, x + 1.3 * r, y, x, y + 1.3 * r, x - 1.3 * r, y); break;
	}
	rpt_put(sb, " fill=\"%s\" stroke=\"#fff\" stroke-width=\"%N\">", phase_colour[ph], 0.6 * r / 4);
}

void rpt_put_steps(struct strbuf *sb, const cJSON *root, const struct rstep *st, int n, int width)
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
	rpt_put(sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%N\" viewBox=\"0 0 %d %N\" "
	    "font-family=\"sans-serif\" font-size=\"%N\">\n<title>tuner steps</title>\n", width, h, width, h, 10 * u);
	for (int k = 0; k < 4; k++) {
		put_marker(sb, k, lx + 5 * u, 10 * u, 4 * u);
		rpt_put(sb, "</%s><text x=\"%N\" y=\"%N\">%s</text>", k == 1 ? "circle" : k == 2 ? "rect" : "path", lx + 13 * u,
		    14 * u, phase_names[k]);
		lx += 90 * u;
	}
	if (base > 0) {
		rpt_put(sb, "<path class=\"cap\" d=\"M%N %Nh%N\"/><text x=\"%N\" y=\"%N\">best baseline", lx, 10 * u, 18 * u,
		    lx + 22 * u, 14 * u);
		if (cJSON_IsString(bn)) {
			strbuf_addstr(sb, " (");
			rpt_xml_text(sb, bn->valuestring);
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
			rpt_put(sb, "%s%N %N", i ? "L" : "M", x0 + (n > 1 ? i * dx : pw / 2), y0 + ph - (st[i].after_ms - lo) / (hi - lo) * ph);
		strbuf_addstr(sb, "\"/>\n");
		for (int i = 0; i < n; i++) {
			double x = x0 + (n > 1 ? i * dx : pw / 2), y = y0 + ph - (st[i].after_ms - lo) / (hi - lo) * ph;
			int k = phase_of(st[i].phase);

			if (i % every == 0 || i == n - 1)
				rpt_put(sb, "<text class=\"t\" x=\"%N\" y=\"%N\">%d</text>", x, y0 + ph + 13 * u, st[i].index);
			put_marker(sb, k, x, y, (n > 200 ? 2.5 : 4) * u);
			strbuf_addf(sb, "<title>step %d, ", st[i].index);
			rpt_xml_text(sb, st[i].phase);
			strbuf_addstr(sb, ": ");
			rpt_xml_text(sb, st[i].what);
			strbuf_addf(sb, "; %.2f \xe2\x86\x92 %.2f ms</title></%s>\n", st[i].before_ms, st[i].after_ms,
			            k == 1 ? "circle" : k == 2 ? "rect" : "path");
		}
	}
	strbuf_addstr(sb, "</svg>\n");
}

void rpt_put_steps_table(struct strbuf *sb, const struct rstep *st, int n)
{
	strbuf_addstr(sb, "<table><tr><th>step</th><th class=\"l\">phase</th><th class=\"l\">move</th><th>before</th>"
	              "<th>after</th><th>bubble</th></tr>\n");
	for (int i = 0; i < n; i++) {
		strbuf_addf(sb, "<tr><td>%d</td><td class=\"l\">", st[i].index);
		rpt_xml_text(sb, st[i].phase);
		strbuf_addstr(sb, "</td><td class=\"l\">");
		rpt_xml_text(sb, st[i].what);
		strbuf_addstr(sb, "</td>");
		rpt_td_ms(sb, st[i].before_ms);
		rpt_td_ms(sb, st[i].after_ms);
		strbuf_addf(sb, "<td>%.1f%%</td></tr>\n", 100 * st[i].bubble);
	}
	strbuf_addstr(sb, "</table>\n");
}

/* Predicted against measured, per GPU: when each finished and how long it was busy. */

/* The steps' section of the HTML report: which model on which cluster, the chart and the
 * table. */
void rpt_put_steps_section(struct strbuf *sb, const cJSON *root, const struct rstep *st, int nsteps, int width)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "model");
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(root, "cluster");

	strbuf_addstr(sb, "<section id=\"steps\"><h2>Tuner steps</h2>\n<p class=\"note\">");
	if (cJSON_IsString(m) && cJSON_IsString(cl)) {
		strbuf_addstr(sb, "model ");
		rpt_xml_text(sb, m->valuestring);
		strbuf_addstr(sb, " on ");
		rpt_xml_text(sb, cl->valuestring);
		strbuf_addstr(sb, ": ");
	}
	strbuf_addf(sb, "iteration time after each accepted move (%d steps), by phase: shape and colour.</p>\n<figure>",
	            nsteps);
	rpt_put_steps(sb, root, st, nsteps, width);
	strbuf_addstr(sb, "</figure>\n");
	rpt_put_steps_table(sb, st, nsteps);
	strbuf_addstr(sb, "</section>\n");
}
