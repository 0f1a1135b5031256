/*
 * layout — screen rectangles from the terminal size (see layout.h).
 *
 * Rows are handed out top-down by priority: the F-key bar and the status line always,
 * then the header (its text lines plus memory bars, fewer bars when rows are short), then the
 * Gantt charts get what is left, and the panel only keeps its rows if the charts still
 * have room for a few devices. Columns always span the whole width.
 */
#include "config.h"
#include "layout.h"

#include <string.h>

static struct rect row_rect(int cols, int y, int h)
{
	struct rect r = { 0, y, cols, h > 0 ? h : 0 };

	return r;
}

void layout_compute(const struct layout_req *req, struct layout *out)
{
	int cols = req->cols, rows = req->rows, per_dev = req->xfer_rows ? 2 : 1;
	int mem_lines, max_mem, panel_h, left, y, want_main, want_ref;

	memset(out, 0, sizeof(*out));
	if (cols < LAYOUT_MIN_COLS || rows < LAYOUT_MIN_ROWS) {
		out->too_small = true;
		return;
	}
	out->mem_per_line = cols / LAYOUT_MEM_CELL;
	mem_lines = (req->ndevices + out->mem_per_line - 1) / out->mem_per_line;
	max_mem = rows >= 48 ? 4 : rows >= 32 ? 2 : 1;
	if (mem_lines > max_mem)
		mem_lines = max_mem;
	if (mem_lines < 1)
		mem_lines = 1;
	out->mem_lines = mem_lines;
	out->header = row_rect(cols, 0, LAYOUT_HEADER_LINES + mem_lines);
	out->fbar = row_rect(cols, rows - 1, 1);
	out->status = row_rect(cols, rows - 2, 1);
	left = rows - out->header.h - 2;          /* rows for charts and panel */
	want_main = 1 + (per_dev + (req->measured_rows ? 1 : 0)) * req->ndevices;
	want_ref = req->ref_devices > 0 ? 1 + per_dev * req->ref_devices : 0;
	panel_h = req->panel ? LAYOUT_PANEL_ROWS : 0;
	if (panel_h && rows < 30)
		panel_h = 5;
	/* the charts need at least an axis and three devices each, else the panel yields */
	if (panel_h && left - panel_h < (want_ref ? 8 : 4))
		panel_h = 0;
	left -= panel_h;
	y = out->header.h;
	if (want_ref) {
		int ref_h = left / 2, main_h;

		if (want_ref < ref_h)
			ref_h = want_ref;
		main_h = left - ref_h;
		if (main_h > want_main)
			main_h = want_main;
		/* the compared plan goes above: a baseline over the plan being edited */
		out->ref = row_rect(cols, y, ref_h);
		out->gantt = row_rect(cols, y + ref_h, main_h);
		y += main_h + ref_h;
	} else {
		int h = left < want_main ? left : want_main;

		out->gantt = row_rect(cols, y, h);
		out->ref = row_rect(cols, y + h, 0);
		y += h;
	}
	/* spare rows go between the charts and the panel, so the panel sits at the bottom */
	out->panel = row_rect(cols, out->status.y - panel_h, panel_h);
	(void)y;
}
