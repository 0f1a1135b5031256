/*
 * test_tui_pan — what a pan costs on the wire (issue 28, 11): the UI drawn through curses
 * to a file as an xterm-256color terminal of 200x60, on the dense chart of a 64-gpu plan
 * (llama2-70b, pure pipeline parallelism, 256 microbatches, zoomed in twice), then panned
 * right and left a quarter of the chart at a time. Every pan must cost well under a full
 * repaint of the chart: the terminal shifts the rows it already shows (blit.c) and only
 * the columns that came into view are sent. The bytes are deterministic for one terminal
 * description and size; the bound keeps a wide margin (before the shifts a pan here sent
 * 94-134 kB, with them 20-39 kB). That the shifted screen is the right one is checked on
 * a real terminal emulator in tests/tui_screen.sh (tmux, a pan then Ctrl-L).
 */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>

#include "app.h"
#include "datadir.h"
#include "theme.h"
#include "tui.h"
#include "view.h"
#include "../tap.h"

#define W 200
#define H 60

static FILE *term_out;

/* One key, then the frame drawn and sent as the UI's loop does; the bytes it wrote. */
static long frame(struct app *a, struct screen *s, struct layout *l, int key, bool shift)
{
	long before = ftell(term_out), sh;

	if (key)
		view_key(a, key);
	view_layout(a, W, H, l);
	sh = tui_pan_shift(a->t0, a->ms_per_col);
	view_draw(a, s, l);
	tui_blit_pan(s, shift ? (int)sh : 0);
	fflush(term_out);
	return ftell(term_out) - before;
}

int main(int argc, char **argv)
{
	struct app a;
	struct app_open o = { .model = "llama2-70b", .cluster = "64xH200", .microbatches = 256, .time_scale = -1,
	                      .no_autosave = true };
	struct err e = ERR_INIT;
	struct screen s = { 0, 0, NULL };
	struct layout l;
	FILE *in = fopen("/dev/null", "r");
	SCREEN *scr;
	long full, worst = 0, total = 0, worst_plain = 0;
	int npans = 0;
	static const char keys[] = "LLLLHHHH";

	(void)argc;
	datadir_find(argv[0]);
	term_out = tmpfile();
	if (!term_out || !in || app_init(&a, &o, &e) < 0) {
		printf("not ok 1 - the UI opens llama2-70b on 64xH200: %s\n", e.msg);
		return 1;
	}
	scr = newterm("xterm-256color", term_out, in);
	if (!scr) {
		printf("1..0 # SKIP no terminal description for xterm-256color\n");
		return 0;
	}
	tui_blit_output(fileno(term_out));
	resizeterm(H, W);
	a.fill_glyphs = theme_init(true) == THEME_MONO;
	screen_resize(&s, W, H);
	full = frame(&a, &s, &l, 0, true);
	frame(&a, &s, &l, '+', true);
	frame(&a, &s, &l, '+', true);
	for (const char *k = keys; *k; k++) {
		long n = frame(&a, &s, &l, *k, true);

		total += n;
		npans++;
		worst = n > worst ? n : worst;
	}
	/* the same pans without the shifts: what curses alone sends */
	frame(&a, &s, &l, '0', false);
	frame(&a, &s, &l, '+', false);
	frame(&a, &s, &l, '+', false);
	for (const char *k = keys; *k; k++) {
		long n = frame(&a, &s, &l, *k, false);

		worst_plain = n > worst_plain ? n : worst_plain;
	}
	printf("# first frame %ld bytes; a pan %ld bytes on average, %ld at most (without the shifts: %ld at most)\n",
	       full, total / npans, worst, worst_plain);
	ok(worst_plain > 80000, "without the shifts a pan of the dense chart resends it (%ld bytes)", worst_plain);
	ok(worst < 60000, "with them every pan sends under 60 kB (%ld at most)", worst);
	ok(worst * 2 < worst_plain, "at most half of what curses alone sends (%ld vs %ld)", worst, worst_plain);
	endwin();
	delscreen(scr);
	screen_release(&s);
	app_release(&a);
	fclose(in);
	return tap_done();
}
