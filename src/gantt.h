/*
 * gantt — a timeline as plain-text Gantt chart for terminals and logs: one row per device,
 * one character per time slice, the op kind by glyph (F forward, I input-grad, W
 * weight-grad, B backward, '.' bubble, ':' partly idle), and a time axis with ticks in ms.
 */
#ifndef OCTO_GANTT_H
#define OCTO_GANTT_H

#include "strbuf.h"
#include "timeline.h"

/* What one column of a Gantt chart shows, from the work in it: the rule the UI's chart
 * and `sim --gantt` share, so neither draws a device that works a little in every
 * column as idle. */
enum gantt_cell {
	GANTT_IDLE,     /* no work at all: a bubble, '.' */
	GANTT_PARTLY,   /* work, but less than half the column: ':' */
	GANTT_BUSY      /* at least half the column: the largest op's glyph */
};
enum gantt_cell gantt_cell_of(double busy, double column);

/* Appends the chart (several lines, each ending in '\n') to sb; width is the number of
 * time columns (at least 10). row names a row ("gpu", or "pp" where each row is a
 * pipeline rank of several GPUs: a tensor-parallel group, data-parallel replicas). */
void gantt_ascii(const struct timeline *t, int width, const char *row, struct strbuf *sb);

#endif
