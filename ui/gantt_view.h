/*
 * gantt_view — one plan's per-GPU Gantt chart in a rectangle: a time axis with ticks and
 * units, one row per GPU (optionally a transfer row under each), ops as blocks whose kind
 * shows by colour and by letter, microbatch numbers when an op is wide enough, bubbles
 * marked with '.', and the cursor, search matches and deadlock cycle highlighted.
 */
#ifndef OCTO_UI_GANTT_VIEW_H
#define OCTO_UI_GANTT_VIEW_H

#include "app.h"
#include "screen.h"

#define GANTT_LABEL_W 7   /* "gpu12 " and a margin */
#define GANTT_STATS_W 16  /* per-gpu figures right of the chart: " 93%  7% 116G !" */
#define GANTT_STATS_MIN 130 /* from this width on (narrower, the chart needs the room) */

/* Columns the per-gpu figures take in a chart this wide (0: no room for them). */
static inline int gantt_view_stats_w(int width)
{
	return width >= GANTT_STATS_MIN ? GANTT_STATS_W : 0;
}

/* Draws view v (focus: 0 the edited plan, 1 the compared one) into r. */
void gantt_view_draw(const struct app *a, const struct pview *v, int focus, const char *title,
                     struct screen *s, const struct rect *r);
/* Maps a screen row inside r (of chart focus) to a device (-1: the axis, a transfer or
 * a measured row). */
int gantt_view_device_at(const struct app *a, int focus, const struct rect *r, int y);

#endif
