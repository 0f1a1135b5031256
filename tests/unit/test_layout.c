/*
 * test_layout — the TUI layout is a pure function: at every size from the minimum up,
 * with and without the compare view, transfer rows, measured rows and the panel, every rectangle lies
 * inside the screen, no two overlap, the bars sit at the bottom and the charts get rows.
 * Below the minimum it only says "too small".
 */
#include "config.h"

#include <stdio.h>

#include "layout.h"
#include "../tap.h"

static bool inside(const struct rect *r, int cols, int rows)
{
	return r->h == 0 || (r->x >= 0 && r->y >= 0 && r->w >= 0 && r->x + r->w <= cols && r->y + r->h <= rows);
}

static bool overlap(const struct rect *a, const struct rect *b)
{
	if (a->h == 0 || b->h == 0 || a->w == 0 || b->w == 0)
		return false;
	return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

int main(void)
{
	static const int devs[] = { 1, 2, 4, 8, 16, 32, 64 };
	long cases = 0, bad_inside = 0, bad_overlap = 0, bad_bars = 0, bad_chart = 0, bad_header = 0;
	struct layout l;

	for (int cols = LAYOUT_MIN_COLS; cols <= 320; cols += 7)
		for (int rows = LAYOUT_MIN_ROWS; rows <= 120; rows += 3)
			for (size_t di = 0; di < sizeof(devs) / sizeof(devs[0]); di++)
				for (int flags = 0; flags < 16; flags++) {
					struct layout_req req = { cols, rows, devs[di], flags & 1 ? devs[di] : 0, flags & 2,
					                          flags & 4, flags & 8 };
					const struct rect *all[6];

					layout_compute(&req, &l);
					all[0] = &l.header;
					all[1] = &l.gantt;
					all[2] = &l.ref;
					all[3] = &l.panel;
					all[4] = &l.status;
					all[5] = &l.fbar;
					cases++;
					for (int i = 0; i < 6; i++) {
						bad_inside += !inside(all[i], cols, rows);
						for (int j = i + 1; j < 6; j++)
							bad_overlap += overlap(all[i], all[j]);
					}
					bad_bars += l.fbar.y != rows - 1 || l.fbar.h != 1 || l.status.y != rows - 2 ||
					            l.fbar.w != cols;
					/* an axis line and at least one device row, in each chart shown */
					bad_chart += l.gantt.h < 2 || (req.ref_devices && l.ref.h < 2) ||
					             l.gantt.h > 1 + ((req.xfer_rows ? 2 : 1) + (req.measured_rows ? 1 : 0)) * devs[di];
					bad_header += l.header.y != 0 || l.header.h < 3 || l.mem_per_line * LAYOUT_MEM_CELL > cols;
				}
	ok(cases > 10000, "%ld layouts computed", cases);
	is_int(bad_inside, 0, "every rectangle fits on the screen");
	is_int(bad_overlap, 0, "no two rectangles overlap");
	is_int(bad_bars, 0, "status line and F-key bar are the last two rows, full width");
	is_int(bad_chart, 0, "every chart shown has its axis and a device row, and no more rows than it needs");
	is_int(bad_header, 0, "the header is on top with its memory bars fitting the width");

	{
		struct layout_req req = { 79, 40, 8, 0, false, true, false };

		layout_compute(&req, &l);
		ok(l.too_small, "79 columns is too small");
		req.cols = 80;
		req.rows = 23;
		layout_compute(&req, &l);
		ok(l.too_small, "23 rows is too small");
		req.rows = 24;
		layout_compute(&req, &l);
		ok(!l.too_small, "80x24 is enough");
		ok(l.gantt.h >= 4, "80x24 with 8 gpus shows at least 3 device rows (got %d)", l.gantt.h - 1);
	}
	{
		struct layout_req req = { 200, 60, 16, 0, false, true, false };

		layout_compute(&req, &l);
		is_int(l.gantt.h, 17, "200x60 with 16 gpus shows every gpu");
		is_int(l.panel.h, LAYOUT_PANEL_ROWS, "and the details panel");
		req.ref_devices = 16;
		layout_compute(&req, &l);
		ok(l.ref.y < l.gantt.y, "the compared plan is drawn above the edited one");
		is_int(l.ref.h + l.gantt.h <= 60 - l.header.h - 2 - l.panel.h, 1, "compare splits the rows");
	}
	{
		struct layout_req req = { 80, 24, 64, 64, true, true, false };

		layout_compute(&req, &l);
		ok(l.ref.h >= 4 && l.gantt.h >= 4, "at 80x24 two charts with transfer rows keep an axis and 3 rows each");
		req.panel = false;
		layout_compute(&req, &l);
		is_int(l.panel.h, 0, "a closed panel takes no rows");
	}
	return tap_done();
}
