/*
 * bench_tui — how fast the TUI answers: a full redraw (draw every widget into the cell
 * grid, then copy it to curses and flush to a terminal that writes to /dev/null) and
 * edit-to-screen (apply an edit, re-simulate, redraw), for the bundled model on 16 GPUs
 * with 64 microbatches at 200x60. Prints a table; never fails on timing.
 */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "app.h"
#include "datadir.h"
#include "theme.h"
#include "tui.h"
#include "view.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct row {
	const char *what;
	double ms_mean, ms_max;
	int n;
};

static void report(const struct row *r, const char *budget)
{
	printf("%-44s %6d %10.3f %10.3f   %s\n", r->what, r->n, r->ms_mean, r->ms_max, budget);
}

/* Pans at 4x zoom, right then left, each drawn and sent: the rows shift on the terminal
 * (ui/blit.c). Returns the bytes sent per pan. */
static long bench_pan(struct app *a, struct screen *s, const struct layout *l, FILE *term, struct row *pan)
{
	long bytes = 0;

	view_key(a, '0');
	view_key(a, '+');
	view_key(a, '+');
	view_draw(a, s, l);
	tui_blit_pan(s, tui_pan_shift(a->t0, a->ms_per_col));
	for (int i = 0; i < pan->n; i++) {
		double t0 = now_ms(), dt;
		long b0;
		int sh;

		fflush(term);
		b0 = ftell(term);
		view_key(a, i % 8 < 4 ? 'L' : 'H');
		sh = tui_pan_shift(a->t0, a->ms_per_col);
		view_draw(a, s, l);
		tui_blit_pan(s, sh);
		dt = now_ms() - t0;
		fflush(term);
		bytes += ftell(term) - b0;
		pan->ms_mean += dt / pan->n;
		pan->ms_max = pan->ms_max > dt ? pan->ms_max : dt;
	}
	return bytes / pan->n;
}

/* A run's worth of events per frame: every op of an iteration, the measured rows and
 * the gauges drawn (what the UI does at most every 30 ms while a run streams). */
static void bench_live(struct app *a, struct screen *s, int W, int H, struct row *live)
{
	struct layout l;

	a->run.have_live = live_init(&a->run.live, a->cur.plan.ndevices, a->cur.m.makespan_ms) == 0;
	a->panel = PANEL_RUN;
	a->fit = true;
	view_layout(a, W, H, &l);
	for (int i = 0; i < live->n; i++) {
		double t0 = now_ms(), dt;
		const struct plan *p = &a->cur.plan;

		for (int d = 0; d < p->ndevices; d++)
			for (int k = p->order_start[d]; k < p->order_start[d + 1]; k++) {
				const struct action *x = &p->order[k];
				long op = sim_op_index(p, x->stage, x->mb, x->kind);
				struct event ev = { .kind = EV_OP, .dev = d, .stage = x->stage, .mb = x->mb, .iter = i,
				                    .op = x->kind, .t0_ms = a->cur.start[op], .t1_ms = a->cur.end[op] };

				live_feed(&a->run.live, &ev);
			}
		{
			struct event it = { .kind = EV_ITER, .iter = i, .ms = a->cur.makespan };

			live_feed(&a->run.live, &it);
		}
		view_draw(a, s, &l);
		tui_blit(s);
		dt = now_ms() - t0;
		live->ms_mean += dt / live->n;
		live->ms_max = live->ms_max > dt ? live->ms_max : dt;
	}
}

int main(int argc, char **argv)
{
	struct app a;
	struct app_open o = { .model = "nemotron-nano-v2-9b", .cluster = "16xH200", .microbatches = 64, .time_scale = -1,
	                      .no_autosave = true };   /* no lock or autosave in the user's state directory */
	struct err e = ERR_INIT;
	struct screen s = { 0, 0, NULL };
	struct layout l;
	/* the terminal writes to a file, so the bytes a pan sends can be counted */
	FILE *devnull = tmpfile();
	SCREEN *scr;
	const int W = 200, H = 60, N = 200;
	struct row draw = { "draw into the cell grid", 0, 0, N }, full = { "redraw (draw + curses + flush)", 0, 0, N };
	struct row edit = { "edit-to-screen (boundary move, sim, redraw)", 0, 0, N };
	struct row order = { "edit-to-screen (op moved, sim, redraw)", 0, 0, N };
	struct row zoom = { "zoom in + redraw", 0, 0, N };
	struct row live = { "live run: events of an iteration + redraw", 0, 0, N / 10 };
	struct row pan = { "pan a quarter chart + redraw (zoomed in)", 0, 0, N };
	long pan_bytes = 0;

	(void)argc;
	datadir_find(argv[0]);
	if (app_init(&a, &o, &e) < 0) {
		fprintf(stderr, "bench_tui: %s\n", e.msg);
		return 1;
	}
	setenv("TERM", "xterm-256color", 0);
	scr = devnull ? newterm("xterm-256color", devnull, devnull) : NULL;
	if (!scr) {
		fprintf(stderr, "bench_tui: no terminal description for xterm-256color\n");
		return 1;
	}
	if (devnull)
		tui_blit_output(fileno(devnull));
	resizeterm(H, W);
	a.fill_glyphs = theme_init(true) == THEME_MONO;
	screen_resize(&s, W, H);
	view_layout(&a, W, H, &l);
	printf("plan: %s, %d gpus, %d stages, %d microbatches, %ld ops; screen %dx%d, %s\n", a.cur.plan.name,
	       a.cur.plan.ndevices, a.cur.plan.nstages, a.cur.plan.microbatches, plan_total_ops(&a.cur.plan), W, H,
	       theme_name(COLORS >= 256 ? THEME_256 : THEME_8));
	printf("simulation alone: %.3f ms\n\n", a.cur.sim_ms);
	printf("%-44s %6s %10s %10s   %s\n", "", "runs", "mean ms", "max ms", "budget");
	for (int i = 0; i < N; i++) {
		double t0 = now_ms(), t1, t2;

		view_draw(&a, &s, &l);
		t1 = now_ms();
		tui_blit(&s);
		t2 = now_ms();
		draw.ms_mean += (t1 - t0) / N;
		draw.ms_max = draw.ms_max > t1 - t0 ? draw.ms_max : t1 - t0;
		full.ms_mean += (t2 - t0) / N;
		full.ms_max = full.ms_max > t2 - t0 ? full.ms_max : t2 - t0;
		/* vary the screen so curses really has to send something */
		view_key(&a, i % 2 ? KEY_RIGHT : KEY_DOWN);
	}
	for (int i = 0; i < N; i++) {
		double t0 = now_ms(), dt;

		view_key(&a, i % 2 ? '[' : ']');
		view_draw(&a, &s, &l);
		tui_blit(&s);
		dt = now_ms() - t0;
		edit.ms_mean += dt / N;
		edit.ms_max = edit.ms_max > dt ? edit.ms_max : dt;
	}
	for (int i = 0; i < N; i++) {
		double t0 = now_ms(), dt;

		view_key(&a, i % 2 ? '>' : '<');
		view_draw(&a, &s, &l);
		tui_blit(&s);
		dt = now_ms() - t0;
		order.ms_mean += dt / N;
		order.ms_max = order.ms_max > dt ? order.ms_max : dt;
	}
	for (int i = 0; i < N; i++) {
		double t0 = now_ms(), dt;

		view_key(&a, i % 8 == 7 ? '0' : '+');
		view_draw(&a, &s, &l);
		tui_blit(&s);
		dt = now_ms() - t0;
		zoom.ms_mean += dt / N;
		zoom.ms_max = zoom.ms_max > dt ? zoom.ms_max : dt;
	}
	pan_bytes = bench_pan(&a, &s, &l, devnull, &pan);
	bench_live(&a, &s, W, H, &live);
	report(&draw, "");
	report(&full, "< 16 ms");
	report(&edit, "< 50 ms");
	report(&order, "< 50 ms");
	report(&zoom, "< 16 ms");
	report(&live, "< 16 ms");
	report(&pan, "< 16 ms");
	printf("bytes sent to the terminal per pan: %ld on average (xterm-256color)\n", pan_bytes);
	endwin();
	delscreen(scr);
	fclose(devnull);
	screen_release(&s);
	app_release(&a);
	return 0;
}
