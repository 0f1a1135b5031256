/*
 * report_chart — what every part of the report draws with: XML-safe text, numbers
 * written short, the shared styles and pattern definitions, and one plan simulated for
 * drawing (its timeline and critical path).
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

/* ---- text ------------------------------------------------------------------------------ */

/* s as XML character data or attribute text: markup characters escaped, control
 * characters and the noncharacters U+FFFE and U+FFFF (not allowed in XML 1.0) and broken
 * UTF-8 replaced by '?'. */
void rpt_xml_text(struct strbuf *sb, const char *s)
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
void rpt_put(struct strbuf *sb, const char *fmt, ...)
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
void rpt_put_css(struct strbuf *sb, double u)
{
	strbuf_addstr(sb, ".F{fill:#005faf}.I{fill:#5faf5f}.W{fill:#d7af5f}.B{fill:#af87af}"
	              ".pw,.pb,.rc{fill:none;pointer-events:none}.pw{stroke:url(#pw)}.pb{stroke:url(#pb)}"
	              ".bu{fill:url(#ph)}.wu{fill:#d3e4f5}.cd{fill:#e9a66b}.bz{fill:#9a9a9a}.mo{opacity:.85}"
	              ".cp,.cl{fill:none;stroke:#870087}.gr{fill:none;stroke:#e2e2e2}.ax{fill:none;stroke:#555}"
	              ".cap{fill:none;stroke:#c00}.t{text-anchor:middle}.tw{fill:#fff}.r{text-anchor:end}"
	              ".b{font-weight:bold}.dim{fill:#555}.ln,.sl{fill:none}.sl{stroke:#999}.sw{stroke:#333}"
	              ".dp{fill:#1b4d3e}.rc{stroke:#000}");
	rpt_put(sb, ".s{stroke:#fff;stroke-width:%N}.mo .s{stroke-width:%N}.cp{stroke-width:%N}"
	    ".cl{stroke-width:%N;stroke-dasharray:%N %N}.gr{stroke-width:%N}.ax{stroke-width:%N}"
	    ".cap{stroke-width:%N;stroke-dasharray:%N %N}.sw{stroke-width:%N}.ln{stroke-width:%N}"
	    ".sl{stroke-width:%N}.th{stroke-width:%N}.hl{paint-order:stroke;stroke:#fff;stroke-width:%N}"
	    ".rc{stroke-width:%N;stroke-dasharray:%N %N}", 0.4 * u,
	    0.3 * u, 1.6 * u, 0.9 * u, 3 * u, 2 * u, 0.6 * u, 0.8 * u, 1.2 * u, 6 * u, 3 * u, 0.5 * u, 1.2 * u, u,
	    2.4 * u, 2.5 * u, 1.5 * u, 3 * u, 1.5 * u);
}

/* The patterns, in user units of one chart (scaled with u): dots for W, stripes for B and
 * a hatch for bubbles, on a transparent ground (drawn over a colour). */
void rpt_put_defs(struct strbuf *sb, double u)
{
	rpt_put(sb, "<defs>"
	    "<pattern id=\"pw\" patternUnits=\"userSpaceOnUse\" width=\"%N\" height=\"%N\">"
	    "<circle cx=\"%N\" cy=\"%N\" r=\"%N\" fill=\"#6b5217\"/></pattern>", 4 * u, 4 * u, 2 * u, 2 * u, 0.8 * u);
	rpt_put(sb, "<pattern id=\"pb\" patternUnits=\"userSpaceOnUse\" width=\"%N\" height=\"%N\">"
	    "<rect width=\"%N\" height=\"%N\" fill=\"#5a3a5a\"/></pattern>", 4 * u, 4 * u, 4 * u, 1.2 * u);
	rpt_put(sb, "<pattern id=\"ph\" patternUnits=\"userSpaceOnUse\" width=\"%N\" height=\"%N\" "
	    "patternTransform=\"rotate(45)\"><rect width=\"%N\" height=\"%N\" fill=\"#b03030\"/></pattern>"
	    "</defs>", 5 * u, 5 * u, 1.4 * u, 5 * u);
}

/* ---- one simulated plan -------------------------------------------------------------------- */


int rpt_chart_init(struct chart *c, const struct plan *p, const char *label, bool crit, struct err *e)
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

void rpt_chart_release(struct chart *c)
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
	/* what the report labels a measurement must be one: a simulated timeline beside its own
	 * plan read as "measured, error +0.0%" */
	if (strcmp(t->source, "sim") == 0)
		return err_set(e, ERR_INPUT, "%s: source: 'sim', a simulated timeline, not a measurement (octopipe run "
		               "--timeline-out writes one)", file);
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
double rpt_ops_end(const struct timeline *t)
{
	double end = 0;

	for (int d = 0; d < t->ndevices; d++)
		for (int i = 0; i < t->dev[d].nops; i++)
			if (t->dev[d].ops[i].end_ms > end)
				end = t->dev[d].ops[i].end_ms;
	return end;
}

void rpt_td_ms(struct strbuf *sb, double ms)
{
	strbuf_addstr(sb, "<td>");
	fmt_ms(sb, ms);
	strbuf_addstr(sb, "</td>");
}
