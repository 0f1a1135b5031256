/*
 * app — the TUI's model: the edited plan with its simulation, its edits and undo (see
 * app.h). The rest of the model lives beside it by concern: app_nav.c (cursor and view),
 * app_search.c, app_compare.c (baselines, the compared plan), app_files.c (save, open, report,
 * autosave and recovery) and messages.c.
 *
 * Every change to the edited plan goes through app_edit/app_undo/app_redo, which
 * re-simulate at once (a few milliseconds) and say in the message line what changed and
 * what it did to the iteration time. A plan that cannot run keeps showing the times of
 * its last runnable state, with the ops of the deadlock cycle marked, so the user sees
 * where the problem is rather than an empty chart.
 */
#include "config.h"
#include "app.h"
#include "app_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "datadir.h"
#include "doc.h"
#include "clock.h"
#include "explain.h"
#include "json.h"
#include "screen.h"

#define AUTOSAVE_DELAY_S 2.0


double app_now(void)
{
	return clock_now_s();
}

void pview_release(struct pview *v)
{
	if (v->loaded)
		plan_release(&v->plan);
	sim_release(&v->sim);
	metrics_release(&v->m);
	free(v->start);
	free(v->end);
	free(v->pos);
	free(v->crit);
	free(v->cycle);
	free(v->match);
	memset(v, 0, sizeof(*v));
}

static int grow_arrays(struct pview *v, long nops)
{
	if (nops == v->nops && v->start)
		return 0;
	free(v->start);
	free(v->end);
	free(v->pos);
	free(v->crit);
	free(v->cycle);
	free(v->match);
	v->start = calloc((size_t)nops, sizeof(double));
	v->end = calloc((size_t)nops, sizeof(double));
	v->pos = calloc((size_t)nops, sizeof(long));
	v->crit = calloc((size_t)nops, 1);
	v->cycle = calloc((size_t)nops, 1);
	v->match = calloc((size_t)nops, 1);
	v->nops = nops;
	v->have_times = false;
	return v->start && v->end && v->pos && v->crit && v->cycle && v->match ? 0 : -1;
}

/* The engine says "device"; the UI says "gpu" everywhere. Rewrites s in place. */
static void say_gpu(char *s)
{
	char *p, *out = s;
	const char *in = s;

	while ((p = strstr(in, "device")) != NULL) {
		size_t n = (size_t)(p - in);

		memmove(out, in, n);
		out += n;
		memcpy(out, "gpu", 3);
		out += 3;
		in = p + 6;
	}
	memmove(out, in, strlen(in) + 1);
}

void pview_update(struct pview *v, const pcre2_code *re)
{
	struct plan *p = &v->plan;
	struct sim_opts o;
	struct metrics m;
	struct err e = ERR_INIT;
	long nops = plan_total_ops(p);
	double t0 = app_now();
	int r;

	if (grow_arrays(v, nops) < 0) {
		v->ran = false;
		snprintf(v->why, sizeof(v->why), "out of host memory");
		return;
	}
	sim_opts_default(&o);
	o.record = true;
	r = sim_run(&v->sim, p, &o, &m, &e);
	v->sim_ms = (app_now() - t0) * 1e3;
	/* a plan that cannot run keeps the metrics of the last one that ran, as it keeps its
	 * times: the memory bars and per-gpu figures go on describing the chart shown */
	if (r == 0 || !v->have_times) {
		metrics_release(&v->m);
		v->m = m;
	}
	explain_positions(p, v->pos);
	memset(v->crit, 0, (size_t)nops);
	memset(v->cycle, 0, (size_t)nops);
	v->why[0] = '\0';
	if (r == 0) {
		long *path = malloc((size_t)nops * sizeof(*path)), n;

		v->ran = true;
		v->deadlock = false;
		memcpy(v->start, v->sim.start, (size_t)nops * sizeof(double));
		memcpy(v->end, v->sim.end, (size_t)nops * sizeof(double));
		v->have_times = true;
		v->makespan = m.makespan_ms;
		if (path) {
			n = explain_critical_path(&v->sim, p, v->pos, path, nops);
			for (long i = 0; i < n; i++) {
				const struct action *x = &p->order[path[i]];

				v->crit[sim_op_index(p, x->stage, x->mb, x->kind)] = 1;
			}
			free(path);
		}
		if (m.noom) {
			struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
			int d = m.oom[0];

			fmt_bytes(&a, (double)m.dev[d].peak_mem_bytes);
			fmt_bytes(&b, cluster_usable_bytes(&p->cluster));
			snprintf(v->why, sizeof(v->why), "out of memory: gpu %d needs %s at its peak, has %s usable%s", d,
			         a.buf, b.buf, m.noom > 1 ? " (other gpus too)" : "");
			strbuf_release(&a);
			strbuf_release(&b);
		}
	} else {
		v->ran = false;
		v->deadlock = e.cls == ERR_INFEASIBLE;
		snprintf(v->why, sizeof(v->why), "%s", e.msg);
		say_gpu(v->why);
		for (int i = 0; i < m.ncycle; i++) {
			const struct action *x = &m.cycle[i].op;

			v->cycle[sim_op_index(p, x->stage, x->mb, x->kind)] = 1;
		}
		if (v->m.dev != m.dev)
			metrics_release(&m);
	}
	search_mark(v, re);
}

int app_plan_dup(struct plan *dst, const struct plan *src, struct err *e)
{
	return plan_copy(dst, src, e);
}

bool app_modified(const struct app *a)
{
	return edit_state(&a->hist) != a->saved_state;
}

struct pview *app_focus(struct app *a)
{
	return a->focus == 1 && a->compare ? &a->ref : &a->cur;
}

void app_reset_view(struct app *a)
{
	a->sel_dev = 0;
	a->sel_pos = 0;
	a->row0 = 0;
	a->focus = 0;
	a->fit = true;
	app_fit(a);
	app_clamp_cursor(a);
}

void app_default_sample(enum target t, struct app_sample *s)
{
	s->model = APP_DEFAULT_MODEL;
	s->cluster = APP_DEFAULT_CLUSTER;
	s->search = false;
	s->why = NULL;
	/* torchtitan has no Mamba layer, nor mixed precision in a pipeline of one replica: a
	 * dense model it has, on enough gpus for a pipeline beside 2 FSDP replicas (the layout
	 * search judges only what it runs: tui --target torchtitan sets its rules) */
	if (t == TARGET_TORCHTITAN) {
		s->model = APP_TITAN_MODEL;
		s->cluster = APP_TITAN_CLUSTER;
		s->search = true;
		s->why = "torchtitan cannot run the default sample " APP_DEFAULT_MODEL " (Mamba layers): opened "
		         APP_TITAN_MODEL " on " APP_TITAN_CLUSTER " at a layout it runs; --model and --cluster open another";
	}
}

int app_init(struct app *a, const struct app_open *o, struct err *e)
{
	struct app_sample ds = { NULL, NULL, false, NULL };

	memset(a, 0, sizeof(*a));
	edit_hist_init(&a->hist);
	a->panel = PANEL_DETAILS;
	a->ref_step = -1;
	a->ms_per_col = 1;
	a->chart_cols = 100;
	a->vis_devs = 8;
	a->steps_tuner = true;
	a->target = o->target;
	run_init(&a->run, o->launcher ? o->launcher : getenv("OCTOPIPE_LAUNCHER"), o->time_scale, o->run_iters);
	run_set_backend(&a->run, o->backend ? o->backend : getenv("OCTOPIPE_BACKEND"), o->share_gpus);
	if (o->plan) {
		if (files_open_plan(a, o->plan, e) < 0)
			return -1;
	} else {
		app_default_sample(a->target, &ds);
		if (o->model)
			ds = (struct app_sample){ o->model, o->cluster, true, NULL };
		if (files_open_sample(a, ds.model, ds.cluster, o->microbatches > 0 ? o->microbatches : APP_DEFAULT_MICROBATCHES,
		                      ds.search ? o->layout : NULL, e) < 0)
			return -1;
	}
	a->no_autosave = o->no_autosave;
	pview_update(&a->cur, NULL);
	app_set_ref_step(a, 1 < a->nsteps && a->steps[1].ok ? 1 : 0);
	app_reset_view(a);
	if (o->steps && tuning_load(a, o->steps) < 0) {
		char why[sizeof(a->tuning.why)];

		memcpy(why, a->tuning.why, sizeof(why));
		app_release(a);
		err_set(e, ERR_INPUT, "%s", why);
		return -1;
	}
	if (a->target != TARGET_OCTOPIPE)
		app_msg(a, R_NORMAL, "target %s: the tuner (F6) searches only what %s runs; the baselines it cannot run "
		        "are marked n/a (T, then b, lists them)", target_name(a->target),
		        a->target == TARGET_MEGATRON ? "Megatron-LM" : "torchtitan");
	if (a->start_msg[0])
		app_msg(a, R_NORMAL, "%s", a->start_msg);
	if (!o->plan && !o->model && ds.why)
		app_msg(a, R_WARN, "%s", ds.why);   /* last: the line shown */
	if (!a->cur.ran)
		app_msg(a, R_ERROR, "plan cannot run: %s", a->cur.why);
	files_autosave_setup(a, false);
	if (a->path)
		files_recent_add(a, a->path);
	return 0;
}

void app_release(struct app *a)
{
	autosave_release(&a->as, false);
	run_release(&a->run);
	tuning_release(&a->tuning);
	pview_release(&a->cur);
	pview_release(&a->ref);
	edit_hist_release(&a->hist);
	compare_release_baselines(a);
	picker_release(&a->picker);
	if (a->re)
		pcre2_code_free(a->re);
	free(a->path);
	free(a->model_path);
	free(a->cluster_path);
	free(a->log);
	for (int k = 0; k <= PROMPT_MOVE_STAGE; k++)
		line_hist_release(&a->prompt_hist[k]);
	memset(a, 0, sizeof(*a));
}

static void say_result(struct app *a, const char *what, double before, double t_ms)
{
	struct pview *v = &a->cur;
	struct strbuf b = STRBUF_INIT, n = STRBUF_INIT;

	a->last_edit_ms = t_ms;
	if (!v->ran) {
		app_msg(a, R_ERROR, "%s: %s%s", what, v->why, v->deadlock ? " (u undoes)" : "");
		return;
	}
	fmt_ms(&b, before);
	fmt_ms(&n, v->m.makespan_ms);
	if (v->m.noom)
		app_msg(a, R_ERROR, "%s: iteration %s -> %s, but %s", what, b.buf, n.buf, v->why);
	else if (before > 0)
		app_msg(a, v->m.makespan_ms < before - 1e-9 ? R_GOOD : v->m.makespan_ms > before + 1e-9 ? R_WARN : R_NORMAL,
		        "%s: iteration %s -> %s (%+.1f%%)", what, b.buf, n.buf, 100 * (v->m.makespan_ms / before - 1));
	else
		app_msg(a, R_GOOD, "%s: iteration %s", what, n.buf);
	strbuf_release(&b);
	strbuf_release(&n);
}

static void after_change(struct app *a, const char *what, double before, double t0)
{
	pview_update(&a->cur, a->re);
	app_clamp_cursor(a);
	if (a->fit)
		app_fit(a);
	say_result(a, what, before, (app_now() - t0) * 1e3);
	a->autosave_due = app_modified(a) ? app_now() + AUTOSAVE_DELAY_S : 0;
	a->autosaved = false;
}

static double shown_makespan(const struct pview *v)
{
	return v->ran ? v->m.makespan_ms : 0;
}

void app_edit(struct app *a, const struct edit *ed)
{
	struct err e = ERR_INIT;
	char what[200];
	double before = shown_makespan(&a->cur), t0 = app_now();

	if (a->focus == 1 && a->compare && ed->kind != EDIT_REPLACE) {
		app_msg(a, R_WARN, "the compared plan is read-only: Tab moves to the plan you edit");
		return;
	}
	if (edit_apply(&a->hist, &a->cur.plan, ed, what, sizeof(what), &e) < 0) {
		app_msg(a, R_ERROR, "%s", e.msg);
		return;
	}
	if (ed->kind == EDIT_MOVE_OP)
		a->sel_pos += ed->delta < 0 ? -1 : 1;
	after_change(a, what, before, t0);
}

/* One step back (undo) or forward (redo) in the edit history. */
static void history_step(struct app *a, bool undo)
{
	char what[200], buf[240];
	double before = shown_makespan(&a->cur), t0 = app_now();
	int r = undo ? edit_undo(&a->hist, &a->cur.plan, what, sizeof(what))
	             : edit_redo(&a->hist, &a->cur.plan, what, sizeof(what));

	if (r < 0) {
		app_msg(a, R_WARN, "nothing to %s", undo ? "undo" : "redo");
		return;
	}
	snprintf(buf, sizeof(buf), "%s: %s", undo ? "undid" : "redid", what);
	after_change(a, buf, before, t0);
}

void app_undo(struct app *a)
{
	history_step(a, true);
}

void app_redo(struct app *a)
{
	history_step(a, false);
}

void app_adopt_plan(struct app *a, const struct plan *p, const char *label)
{
	struct edit ed = { EDIT_REPLACE, 0, 0, 0, 0, NULL, NULL, NULL };

	ed.with = p;
	ed.label = label;
	a->focus = 0;
	app_edit(a, &ed);
}

bool app_measured_rows(const struct app *a)
{
	return a->run.have_live && a->run.live.ndev == a->cur.plan.ndevices;
}

bool app_measured_current(const struct app *a)
{
	return a->run.have_live && a->run.plan_gen == a->plan_gen && a->run.plan_state == edit_state(&a->hist);
}

int app_rows_per_dev(const struct app *a, int focus)
{
	return 1 + (a->xfer_rows ? 1 : 0) + (focus == 0 && app_measured_rows(a) ? 1 : 0);
}

bool app_busy(const struct app *a)
{
	return tuning_busy(a);
}

bool app_tick(struct app *a)
{
	if (tuning_busy(a))
		tuning_tick(a);
	return app_busy(a);
}
