/*
 * report_impl — what the report's files share (report_chart.c: text, styles and one
 * simulated plan; report_gantt.c: the SVG Gantt chart; report_steps.c: the tuner's
 * steps; report.c: the HTML report). Not for other modules.
 */
#ifndef OCTO_REPORT_IMPL_H
#define OCTO_REPORT_IMPL_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "metrics.h"
#include "plan.h"
#include "report.h"
#include "sim.h"
#include "strbuf.h"
#include "timeline.h"

/* One plan as the report draws it: simulated once, its timeline and critical path. */
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

/* Where a Gantt chart's plot sits, in chart units. */
struct gantt_geo {
	int width;
	double u;
	double x0, pw;           /* plot area: left edge and width */
	double tmax;             /* time at the right edge */
	double rh, mh, pitch;    /* row height, measured row height, row pitch */
	double y0;               /* top of the first row */
	double height;
};

/* report_chart.c */
void rpt_xml_text(struct strbuf *sb, const char *s);
void rpt_put(struct strbuf *sb, const char *fmt, ...);
void rpt_put_css(struct strbuf *sb, double u);
void rpt_put_defs(struct strbuf *sb, double u);
int rpt_chart_init(struct chart *c, const struct plan *p, const char *label, bool crit, struct err *e);
void rpt_chart_release(struct chart *c);
double rpt_ops_end(const struct timeline *t);
void rpt_td_ms(struct strbuf *sb, double ms);

/* report_gantt.c */
double rpt_gantt_height(int nd, bool meas, double u);
double rpt_legend_item(struct strbuf *sb, const struct gantt_geo *g, double x, double y, const char *cls,
                       const char *text);
double rpt_nice_step(double span, int n);
void rpt_put_gantt(struct strbuf *sb, const struct chart *c, const struct timeline *meas, int width, double tmax,
                   bool critical, bool standalone);
void rpt_put_summary_line(struct strbuf *sb, const struct chart *c);
void rpt_tick_label(struct strbuf *sb, double t, double step);


/* report_steps.c */
struct steps;
void rpt_put_steps(struct strbuf *sb, const struct steps *s, int width);
void rpt_put_steps_table(struct strbuf *sb, const struct steps *s);
void rpt_put_steps_section(struct strbuf *sb, const struct steps *s, int width);

#endif
