/*
 * layout — where each part of the TUI goes, as a pure function of the terminal size and
 * what is shown: sizes in, rectangles out. No curses, no state; unit-tested for overlap
 * and fit at many sizes (tests/unit/test_layout.c).
 */
#ifndef OCTO_UI_LAYOUT_H
#define OCTO_UI_LAYOUT_H

#include <stdbool.h>

#include "screen.h"

#define LAYOUT_MIN_COLS 80
#define LAYOUT_MIN_ROWS 24
#define LAYOUT_HEADER_LINES 2  /* text lines at the top, above the memory bars (header.c) */
#define LAYOUT_MEM_CELL 16     /* one memory bar in the header: "g12 [#####   ]  " */
#define LAYOUT_PANEL_ROWS 7    /* details / steps panel, when there is room */

struct layout_req {
	int cols, rows;
	int ndevices;          /* device rows of the main plan */
	int ref_devices;       /* of the compared plan; 0 = no compare view */
	bool xfer_rows;        /* a transfer row under each device row */
	bool panel;            /* the details or steps panel is open */
	bool measured_rows;    /* a measured row under each device row of the main plan */
};

struct layout {
	bool too_small;        /* below LAYOUT_MIN_COLS x LAYOUT_MIN_ROWS: only a message */
	struct rect header;    /* LAYOUT_HEADER_LINES of text, then the memory bars */
	int mem_lines;         /* header lines holding memory bars */
	int mem_per_line;
	struct rect gantt;     /* axis line + device rows of the main plan */
	struct rect ref;       /* the compared plan (h = 0 when not shown) */
	struct rect panel;     /* h = 0 when closed or no room */
	struct rect status;    /* messages and prompts */
	struct rect fbar;      /* the F-key bar */
};

void layout_compute(const struct layout_req *req, struct layout *out);

#endif
