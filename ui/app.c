/*
 * app — the TUI's model: plans, simulation, cursor, edits, search and files (see app.h).
 *
 * Every change to the edited plan goes through app_edit/app_undo/app_redo, which
 * re-simulate at once (a few milliseconds) and say in the message line what changed and
 * what it did to the iteration time. A plan that cannot run keeps showing the times of
 * its last runnable state, with the ops of the deadlock cycle marked, so the user sees
 * where the problem is rather than an empty chart.
 */
#include "config.h"
#include "app.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baseline.h"
#include "datadir.h"
#include "doc.h"
#include "explain.h"
#include "fileio.h"
#include "json.h"
#include "report.h"
#include "screen.h"

#define DEFAULT_MODEL "nemotron-nano-v2-9b"
#define DEFAULT_CLUSTER "8xH200"
#define DEFAULT_MICROBATCHES 32
#define AUTOSAVE_DELAY_S 2.0

double app_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void app_msg(struct app *a, int role, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->msg, sizeof(a->msg), fmt, ap);
	va_end(ap);
	a->msg_role = role;
	if (!a->log && !(a->log = calloc(APP_LOG_MAX, sizeof(*a->log))))
		return;
	if (a->log_n > 0 && strcmp(app_log_entry(a, a->log_n - 1)->text, a->msg) == 0)
		return;
	{
		struct log_entry *le = &a->log[a->log_next];

		memcpy(le->text, a->msg, sizeof(le->text));
		le->role = role;
		le->when = time(NULL);
		a->log_next = (a->log_next + 1) % APP_LOG_MAX;
		if (a->log_n < APP_LOG_MAX)
			a->log_n++;
	}
}

const struct log_entry *app_log_entry(const struct app *a, int k)
{
	return &a->log[(a->log_next - a->log_n + k + APP_LOG_MAX) % APP_LOG_MAX];
}

/* ---- plan views -------------------------------------------------------------------- */

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

void app_op_text(const struct plan *p, const struct action *x, char *buf, size_t n)
{
	const struct stage *st = &p->stages[x->stage];
	char tok[ACTION_TEXT_MAX];
	size_t len;

	snprintf(buf, n, "%s stage=%d mb=%d kind=%c %s gpu=%d layers=%d-%d", action_format(x, tok), x->stage,
	         x->mb, op_kind_char((enum op_kind)x->kind), op_kind_name((enum op_kind)x->kind), st->device,
	         st->first, st->last);
	/* the layer kinds of the stage, each once */
	for (int l = st->first; l <= st->last; l++) {
		const char *k = p->model.layers[l].kind;
		bool seen = false;

		for (int j = st->first; j < l && !seen; j++)
			seen = strcmp(p->model.layers[j].kind, k) == 0;
		len = strlen(buf);
		if (!seen && len + strlen(k) + 2 < n)
			snprintf(buf + len, n - len, " %s", k);
	}
}

static void update_matches(struct pview *v, const pcre2_code *re)
{
	pcre2_match_data *md;
	char text[512];

	v->nmatch = 0;
	if (!v->match)
		return;
	memset(v->match, 0, (size_t)v->nops);
	if (!re)
		return;
	md = pcre2_match_data_create_from_pattern(re, NULL);
	if (!md)
		return;
	for (long i = 0; i < plan_total_ops(&v->plan); i++) {
		const struct action *x = &v->plan.order[i];

		app_op_text(&v->plan, x, text, sizeof(text));
		if (pcre2_match(re, (PCRE2_SPTR)text, strlen(text), 0, 0, md, NULL) >= 0) {
			v->match[sim_op_index(&v->plan, x->stage, x->mb, x->kind)] = 1;
			v->nmatch++;
		}
	}
	pcre2_match_data_free(md);
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
	update_matches(v, re);
}

static int plan_dup(struct plan *dst, const struct plan *src, struct err *e)
{
	cJSON *j = plan_to_json(src, true);
	int r;

	if (!j)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	r = plan_from_json(dst, j, "(plan)", NULL, e);
	cJSON_Delete(j);
	return r;
}

bool app_modified(const struct app *a)
{
	return edit_state(&a->hist) != a->saved_state;
}

struct pview *app_focus(struct app *a)
{
	return a->focus == 1 && a->compare ? &a->ref : &a->cur;
}

/* ---- steps: the baselines (baseline_recipes), beside the tuner's steps -------------- */

static bool same_placement(const struct plan *a, const struct plan *b)
{
	if (a->nstages != b->nstages)
		return false;
	for (int s = 0; s < a->nstages; s++)
		if (a->stages[s].device != b->stages[s].device)
			return false;
	return true;
}

static bool same_partition(const struct plan *a, const struct plan *b)
{
	if (a->nstages != b->nstages)
		return false;
	for (int s = 0; s < a->nstages; s++)
		if (a->stages[s].first != b->stages[s].first)
			return false;
	return true;
}

static void steps_release(struct app *a)
{
	for (int i = 0; i < a->nsteps; i++)
		if (a->steps[i].ok)
			plan_release(&a->steps[i].plan);
	free(a->steps);
	a->steps = NULL;
	a->nsteps = 0;
}

/* The baselines as steps (the engine's baseline_run_all, each plan moved into its step);
 * returns the best one's index, -1 when none runs. */
static int steps_build(struct app *a, const struct model *m, const struct cluster *c, int mbs)
{
	struct baseline_set bs;
	struct err e = ERR_INIT;
	const struct step *prev = NULL;
	int best;

	steps_release(a);
	if (baseline_run_all(&bs, m, c, mbs, &e) < 0) {
		app_msg(a, R_ERROR, "%s", e.msg);
		return -1;
	}
	a->steps = calloc((size_t)bs.n, sizeof(*a->steps));
	if (!a->steps) {
		baseline_set_release(&bs);
		return -1;
	}
	for (int i = 0; i < bs.n; i++) {
		struct baseline_result *r = &bs.r[i];
		struct step *st = &a->steps[a->nsteps++];

		snprintf(st->name, sizeof(st->name), "%s", r->recipe->name);
		if (!r->built) {
			snprintf(st->why, sizeof(st->why), "%.199s", r->why.msg);
			snprintf(st->phase, sizeof(st->phase), "-");
			snprintf(st->move, sizeof(st->move), "%s cannot apply", st->name);
			continue;
		}
		st->plan = r->plan;
		r->built = false;
		{
			char nm[160];

			snprintf(nm, sizeof(nm), "%s %s", m->name, st->name);
			free(st->plan.name);
			st->plan.name = strdup(nm);
		}
		st->ok = true;
		if (r->ran) {
			st->makespan = r->m.makespan_ms;
			st->oom = !r->feasible;
			if (!r->feasible)
				snprintf(st->why, sizeof(st->why), "gpu %d out of memory", r->m.oom[0]);
		} else {
			snprintf(st->why, sizeof(st->why), "%.199s", r->why.msg);
		}
		if (!prev) {
			snprintf(st->phase, sizeof(st->phase), "start");
			snprintf(st->move, sizeof(st->move), "%s, %s partition, one stage per gpu", st->name,
			         r->recipe->partition);
		} else if (!same_placement(&prev->plan, &st->plan)) {
			snprintf(st->phase, sizeof(st->phase), "placement");
			snprintf(st->move, sizeof(st->move), "%s -> %s: %d stages, %d per gpu%s", prev->name, st->name,
			         st->plan.nstages, st->plan.nstages / st->plan.ndevices,
			         st->plan.nstages > st->plan.ndevices && st->plan.stages[st->plan.ndevices].device ==
			         st->plan.ndevices - 1 ? " in a V" : st->plan.nstages > st->plan.ndevices ? " round-robin" : "");
		} else if (!same_partition(&prev->plan, &st->plan)) {
			snprintf(st->phase, sizeof(st->phase), "partition");
			snprintf(st->move, sizeof(st->move), "%s -> %s: %s layers per stage", prev->name, st->name,
			         r->recipe->partition);
		} else {
			snprintf(st->phase, sizeof(st->phase), "scheduling");
			snprintf(st->move, sizeof(st->move), "%s -> %s: each gpu's order", prev->name, st->name);
		}
		prev = st;
	}
	best = bs.best;
	baseline_set_release(&bs);
	return best;
}

void app_set_ref_plan(struct app *a, const struct plan *p, const char *name)
{
	struct err e = ERR_INIT;

	if (a->ref.loaded)
		plan_release(&a->ref.plan);
	a->ref.loaded = false;
	a->ref_step = -1;
	if (plan_dup(&a->ref.plan, p, &e) < 0) {
		app_msg(a, R_ERROR, "%s", e.msg);
		return;
	}
	a->ref.loaded = true;
	snprintf(a->ref_name, sizeof(a->ref_name), "%s", name);
	pview_update(&a->ref, a->re);
	if (a->fit)
		app_fit(a);
}

void app_set_ref_step(struct app *a, int i)
{
	if (i < 0 || i >= a->nsteps || !a->steps[i].ok)
		return;
	if (a->ref.loaded && a->ref_step == i)
		return;
	app_set_ref_plan(a, &a->steps[i].plan, a->steps[i].name);
	if (a->ref.loaded)
		a->ref_step = i;
}

/* ---- init ------------------------------------------------------------------------------- */

static char *abs_join(const char *dir, const char *rel)
{
	char buf[4096];

	if (fileio_join(dir, rel, buf, sizeof(buf)) < 0)
		return NULL;
	return strdup(buf);
}

/* Claims this UI's autosave slot for the plan as it is now: keyed by the plan's real path,
 * or by model, cluster and microbatches when it has no file. A slot holding an earlier
 * session's edits is offered for recovery (unless need_empty). */
static void autosave_setup(struct app *a, bool need_empty)
{
	char key[9000], name[300], stem[400];
	const struct plan *p = &a->cur.plan;

	if (a->no_autosave)
		return;
	if (!a->as.dir[0] && !autosave_dir(a->as.dir, sizeof(a->as.dir))) {
		a->no_autosave = true;
		return;
	}
	if (a->path) {
		char *real = realpath(a->path, NULL);
		const char *b = strrchr(a->path, '/');

		snprintf(key, sizeof(key), "plan=%s", real ? real : a->path);
		snprintf(name, sizeof(name), "%s", b ? b + 1 : a->path);
		free(real);
	} else {
		snprintf(key, sizeof(key), "model=%s|cluster=%s|microbatches=%d", a->model_path ? a->model_path : p->model.name,
		         a->cluster_path ? a->cluster_path : p->cluster.name, p->microbatches);
		snprintf(name, sizeof(name), "%s-%s-%dmb", p->model.name ? p->model.name : "model",
		         p->cluster.name ? p->cluster.name : "cluster", p->microbatches);
	}
	autosave_stem(name, key, stem, sizeof(stem));
	if (autosave_claim(&a->as, stem, need_empty) < 0) {
		app_msg(a, R_WARN, "autosave is off: no free autosave slot in %s (%s)", a->as.dir, strerror(errno));
		return;
	}
	if (a->as.found) {
		a->mode = MODE_QUESTION;
		a->question = Q_RECOVER;
	}
}

static void reset_view(struct app *a)
{
	a->sel_dev = 0;
	a->sel_pos = 0;
	a->row0 = 0;
	a->focus = 0;
	a->fit = true;
	app_fit(a);
	app_clamp_cursor(a);
}

static int open_plan(struct app *a, const char *arg, struct err *e)
{
	char path[4096], dir[4096];
	struct plan p;

	datadir_resolve(arg, "plans", path, sizeof(path));
	if (plan_load(&p, path, e) < 0)
		return -1;
	if (a->cur.loaded)
		plan_release(&a->cur.plan);
	a->cur.plan = p;
	a->cur.loaded = true;
	free(a->path);
	free(a->model_path);
	free(a->cluster_path);
	fileio_dirname(path, dir, sizeof(dir));
	a->path = strdup(path);
	a->model_path = p.model_ref ? abs_join(dir, p.model_ref) : NULL;
	a->cluster_path = p.cluster_ref ? abs_join(dir, p.cluster_ref) : NULL;
	snprintf(a->source, sizeof(a->source), "%.199s", path);
	edit_hist_release(&a->hist);
	a->saved_state = edit_state(&a->hist);
	a->plan_gen++;
	steps_build(a, &p.model, &p.cluster, p.microbatches);
	return 0;
}

int app_init(struct app *a, const struct app_open *o, struct err *e)
{
	memset(a, 0, sizeof(*a));
	edit_hist_init(&a->hist);
	a->panel = PANEL_DETAILS;
	a->ref_step = -1;
	a->ms_per_col = 1;
	a->chart_cols = 100;
	a->vis_devs = 8;
	a->steps_tuner = true;
	run_init(&a->run, o->launcher ? o->launcher : getenv("OCTOPIPE_LAUNCHER"), o->time_scale, o->run_iters);
	run_set_backend(&a->run, o->backend ? o->backend : getenv("OCTOPIPE_BACKEND"), o->share_gpus);
	if (o->plan) {
		if (open_plan(a, o->plan, e) < 0)
			return -1;
	} else {
		const char *mname = o->model ? o->model : DEFAULT_MODEL;
		const char *cname = o->cluster ? o->cluster : DEFAULT_CLUSTER;
		int mbs = o->microbatches > 0 ? o->microbatches : DEFAULT_MICROBATCHES;
		char mpath[4096], cpath[4096];
		struct model m;
		struct cluster c;
		int best;

		datadir_resolve(mname, "samples/models", mpath, sizeof(mpath));
		datadir_resolve(cname, "samples/clusters", cpath, sizeof(cpath));
		if (model_load(&m, mpath, e) < 0)
			return -1;
		if (cluster_load(&c, cpath, e) < 0) {
			model_release(&m);
			return -1;
		}
		best = steps_build(a, &m, &c, mbs);
		
		if (best < 0) {
			err_set(e, ERR_INFEASIBLE, "no baseline of %s on %s with %d microbatches runs", m.name, c.name, mbs);
			model_release(&m);
			cluster_release(&c);
			return -1;
		}
		if (plan_dup(&a->cur.plan, &a->steps[best].plan, e) < 0) {
			model_release(&m);
			cluster_release(&c);
			return -1;
		}
		a->cur.loaded = true;
		a->model_path = realpath(mpath, NULL);
		a->cluster_path = realpath(cpath, NULL);
		snprintf(a->source, sizeof(a->source), "best baseline of %s on %s", m.name, c.name);
		a->step_sel = best;
		model_release(&m);
		cluster_release(&c);
	}
	a->no_autosave = o->no_autosave;
	pview_update(&a->cur, NULL);
	app_set_ref_step(a, 1 < a->nsteps && a->steps[1].ok ? 1 : 0);
	reset_view(a);
	if (o->steps && tuning_load(a, o->steps) < 0) {
		char why[sizeof(a->tuning.why)];

		memcpy(why, a->tuning.why, sizeof(why));
		app_release(a);
		err_set(e, ERR_INPUT, "%s", why);
		return -1;
	}
	if (!a->cur.ran)
		app_msg(a, R_ERROR, "plan cannot run: %s", a->cur.why);
	autosave_setup(a, false);
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
	steps_release(a);
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

/* ---- view and cursor --------------------------------------------------------------------- */

static double view_span(const struct app *a)
{
	double s = a->cur.makespan;

	if (a->compare && a->ref.loaded && a->ref.makespan > s)
		s = a->ref.makespan;
	return s > 0 ? s : 1;
}

void app_fit(struct app *a)
{
	int cols = a->chart_cols > 10 ? a->chart_cols : 10;

	a->t0 = 0;
	a->ms_per_col = view_span(a) / cols;
	a->fit = true;
}

static void clamp_t0(struct app *a)
{
	double max = view_span(a) - a->ms_per_col * a->chart_cols / 2;

	if (a->t0 > max)
		a->t0 = max;
	if (a->t0 < 0)
		a->t0 = 0;
}

void app_zoom(struct app *a, double factor)
{
	struct pview *v = app_focus(a);
	long i = app_cursor_op(a);
	double center = a->t0 + a->ms_per_col * a->chart_cols / 2, min_mpc = view_span(a) / 1e5;

	if (i >= 0 && v->have_times) {
		const struct action *x = &v->plan.order[i];
		long op = sim_op_index(&v->plan, x->stage, x->mb, x->kind);
		double t = v->start[op];

		if (t >= a->t0 && t <= a->t0 + a->ms_per_col * a->chart_cols)
			center = (v->start[op] + v->end[op]) / 2;
	}
	a->ms_per_col /= factor;
	if (a->ms_per_col < min_mpc)
		a->ms_per_col = min_mpc;
	if (a->ms_per_col >= view_span(a) / a->chart_cols) {
		app_fit(a);
		return;
	}
	a->fit = false;
	a->t0 = center - a->ms_per_col * a->chart_cols / 2;
	clamp_t0(a);
}

void app_pan(struct app *a, int cols)
{
	a->t0 += cols * a->ms_per_col;
	a->fit = false;
	clamp_t0(a);
}

static int dev_len(const struct plan *p, int d)
{
	return p->order_start[d + 1] - p->order_start[d];
}

void app_clamp_cursor(struct app *a)
{
	struct pview *v = app_focus(a);
	int n;

	if (!v->loaded)
		return;
	if (a->sel_dev >= v->plan.ndevices)
		a->sel_dev = v->plan.ndevices - 1;
	if (a->sel_dev < 0)
		a->sel_dev = 0;
	n = dev_len(&v->plan, a->sel_dev);
	if (a->sel_pos >= n)
		a->sel_pos = n - 1;
	if (a->sel_pos < 0)
		a->sel_pos = 0;
	/* both charts show the same gpu rows: scroll them so the cursor's row shows in each */
	{
		int vis = app_page_devs(a);

		if (a->sel_dev < a->row0)
			a->row0 = a->sel_dev;
		if (vis > 0 && a->sel_dev >= a->row0 + vis)
			a->row0 = a->sel_dev - vis + 1;
	}
}

int app_page_devs(const struct app *a)
{
	int vis = a->vis_devs;

	if (a->compare && a->ref.loaded && a->vis_ref_devs > 0 && a->vis_ref_devs < vis)
		vis = a->vis_ref_devs;
	return vis > 0 ? vis : 1;
}

void app_cursor_dev(struct app *a, int dev)
{
	const struct pview *v = app_focus(a);

	if (!v->loaded)
		return;
	if (dev >= v->plan.ndevices)
		dev = v->plan.ndevices - 1;
	if (dev < 0)
		dev = 0;
	if (dev != a->sel_dev)
		app_cursor_move(a, dev - a->sel_dev, 0);
}

void app_page_rows(struct app *a, int dir)
{
	int page = app_page_devs(a), n = app_focus(a)->plan.ndevices, top = a->row0 + dir * page;

	if (top > n - page)
		top = n - page;
	if (top < 0)
		top = 0;
	a->row0 = top;
	app_cursor_dev(a, a->sel_dev + dir * page);
}

long app_cursor_op(const struct app *a)
{
	const struct pview *v = a->focus == 1 && a->compare ? &a->ref : &a->cur;

	if (!v->loaded || a->sel_dev < 0 || a->sel_dev >= v->plan.ndevices)
		return -1;
	if (a->sel_pos < 0 || a->sel_pos >= dev_len(&v->plan, a->sel_dev))
		return -1;
	return v->plan.order_start[a->sel_dev] + a->sel_pos;
}

void app_show_cursor(struct app *a)
{
	struct pview *v = app_focus(a);
	long i = app_cursor_op(a);
	double s, e, w = a->ms_per_col * a->chart_cols;

	if (i < 0 || !v->have_times)
		return;
	{
		const struct action *x = &v->plan.order[i];
		long op = sim_op_index(&v->plan, x->stage, x->mb, x->kind);

		s = v->start[op];
		e = v->end[op];
	}
	if (s < a->t0)
		a->t0 = s - w / 10;
	else if (e > a->t0 + w)
		a->t0 = e - w + w / 10;
	if (s < a->t0 || e > a->t0 + w)
		a->fit = false;
	clamp_t0(a);
}

void app_cursor_to(struct app *a, long i)
{
	struct pview *v = app_focus(a);

	for (int d = 0; d < v->plan.ndevices; d++)
		if (i >= v->plan.order_start[d] && i < v->plan.order_start[d + 1]) {
			a->sel_dev = d;
			a->sel_pos = (int)(i - v->plan.order_start[d]);
		}
	app_clamp_cursor(a);
	app_show_cursor(a);
}

void app_cursor_move(struct app *a, int ddev, int dpos)
{
	struct pview *v = app_focus(a);
	long i = app_cursor_op(a);
	double t = 0;

	if (!v->loaded)
		return;
	if (i >= 0 && v->have_times) {
		const struct action *x = &v->plan.order[i];

		t = v->start[sim_op_index(&v->plan, x->stage, x->mb, x->kind)];
	}
	if (ddev) {
		int d = a->sel_dev + ddev;

		if (d < 0 || d >= v->plan.ndevices)
			return;
		a->sel_dev = d;
		a->sel_pos = 0;
		/* the op nearest in time to where the cursor was */
		if (v->have_times) {
			double best = INFINITY;

			for (int k = v->plan.order_start[d]; k < v->plan.order_start[d + 1]; k++) {
				const struct action *x = &v->plan.order[k];
				long op = sim_op_index(&v->plan, x->stage, x->mb, x->kind);
				double dist = t < v->start[op] ? v->start[op] - t : t > v->end[op] ? t - v->end[op] : 0;

				if (dist < best) {
					best = dist;
					a->sel_pos = k - v->plan.order_start[d];
				}
			}
		}
	}
	a->sel_pos += dpos;
	app_clamp_cursor(a);
	app_show_cursor(a);
}

bool app_pick(struct app *a, int focus, int dev, int col)
{
	struct pview *v = focus ? &a->ref : &a->cur;
	double t = a->t0 + (col + 0.5) * a->ms_per_col, best = INFINITY;
	int bestk = -1;

	if (!v->loaded || !v->have_times || dev < 0 || dev >= v->plan.ndevices)
		return false;
	for (int k = v->plan.order_start[dev]; k < v->plan.order_start[dev + 1]; k++) {
		const struct action *x = &v->plan.order[k];
		long op = sim_op_index(&v->plan, x->stage, x->mb, x->kind);
		double dist = t < v->start[op] ? v->start[op] - t : t > v->end[op] ? t - v->end[op] : 0;

		if (dist < best) {
			best = dist;
			bestk = k;
		}
	}
	if (bestk < 0)
		return false;
	a->focus = focus;
	a->sel_dev = dev;
	a->sel_pos = bestk - v->plan.order_start[dev];
	app_clamp_cursor(a);
	return true;
}

void app_jump_waited(struct app *a)
{
	struct pview *v = app_focus(a);
	long i = app_cursor_op(a);
	struct op_wait w;
	char t1[ACTION_TEXT_MAX], t2[ACTION_TEXT_MAX];

	if (i < 0)
		return;
	if (!v->ran) {
		app_msg(a, R_ERROR, "the plan cannot run, so nothing waits for anything: u undoes the last edit");
		return;
	}
	explain_wait(&v->sim, &v->plan, v->pos, &v->plan.order[i], &w);
	action_format(&v->plan.order[i], t1);
	if (w.kind == WAIT_NONE) {
		app_msg(a, R_NORMAL, "%s started at once: the critical path starts here", t1);
		return;
	}
	action_format(&w.on, t2);
	app_cursor_to(a, v->pos[sim_op_index(&v->plan, w.on.stage, w.on.mb, w.on.kind)]);
	app_msg(a, R_NORMAL, "%s waited for %s on gpu %d%s%s", t1, t2, w.device,
	        w.kind == WAIT_DATA ? (w.transfer ? " (its output, sent over the link)" : " (its output)") :
	        " (the gpu was busy)", v->crit[sim_op_index(&v->plan, w.on.stage, w.on.mb, w.on.kind)] ?
	        "; on the critical path" : "");
}

void app_jump_crit_end(struct app *a)
{
	struct pview *v = app_focus(a);
	long best = -1;
	double last = -1;

	if (!v->have_times)
		return;
	for (long i = 0; i < plan_total_ops(&v->plan); i++) {
		const struct action *x = &v->plan.order[i];
		double e = v->end[sim_op_index(&v->plan, x->stage, x->mb, x->kind)];

		if (e > last) {
			last = e;
			best = i;
		}
	}
	if (best >= 0) {
		app_cursor_to(a, best);
		app_msg(a, R_NORMAL, "the op that ends last; c follows the critical path back to the start");
	}
}

/* ---- edits ----------------------------------------------------------------------------- */

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

void app_write_report(struct app *a, const char *path)
{
	const struct plan *plans[2];
	const char *labels[2];
	struct report_input in;
	struct err e = ERR_INIT;
	cJSON *steps = NULL;
	const char *steps_what = "";
	int n = 0;

	if (!a->cur.loaded) {
		app_msg(a, R_ERROR, "no plan to report on");
		return;
	}
	if (fileio_same_file(path, a->path) || fileio_same_file(path, a->tuning.source)) {
		app_msg(a, R_ERROR, "report not written: %s is the plan's own file", path);
		return;
	}
	plans[n] = &a->cur.plan;
	labels[n++] = app_modified(a) ? "this plan (edited)" : "this plan";
	if (a->compare && a->ref.loaded) {
		plans[n] = &a->ref.plan;
		labels[n++] = a->ref_name[0] ? a->ref_name : "compared";
	}
	/* the tuner's steps: the live tuner's, or the steps file the UI was given */
	if (a->tuning.t) {
		steps = tune_steps_to_json(a->tuning.t);
		steps_what = ", the tuner's steps";
	} else if (a->tuning.source[0]) {
		steps = json_load_file(a->tuning.source, &e);
		if (!steps) {
			app_msg(a, R_ERROR, "report not written: %s", e.msg);
			return;
		}
		steps_what = ", the recorded steps";
	}
	memset(&in, 0, sizeof(in));
	in.plans = plans;
	in.labels = labels;
	in.nplans = n;
	in.steps = steps;
	in.steps_file = a->tuning.source[0] ? a->tuning.source : NULL;
	in.critical_path = true;
	if (report_write(path, &in, &e) < 0)
		app_msg(a, R_ERROR, "report not written: %s", e.msg);
	else
		app_msg(a, R_GOOD, "report written to %s (the plan%s%s); open it in a browser", path,
		        n > 1 ? ", the compared plan" : "", steps_what);
	cJSON_Delete(steps);
}

void app_adopt_plan(struct app *a, const struct plan *p, const char *label)
{
	struct edit ed = { EDIT_REPLACE, 0, 0, 0, 0, NULL, NULL, NULL };

	ed.with = p;
	ed.label = label;
	a->focus = 0;
	app_edit(a, &ed);
}

void app_adopt_step(struct app *a, int i)
{
	char label[80];

	if (i < 0 || i >= a->nsteps)
		return;
	if (!a->steps[i].ok) {
		app_msg(a, R_ERROR, "step %s cannot be adopted: %s", a->steps[i].name, a->steps[i].why);
		return;
	}
	snprintf(label, sizeof(label), "step %d (%s)", i, a->steps[i].name);
	app_adopt_plan(a, &a->steps[i].plan, label);
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

/* ---- search ------------------------------------------------------------------------------ */

void app_search(struct app *a, const char *pattern, bool filter)
{
	int errcode;
	PCRE2_SIZE off;
	pcre2_code *re;

	if (!*pattern) {
		if (a->re)
			pcre2_code_free(a->re);
		a->re = NULL;
		a->pattern[0] = '\0';
		a->filter = false;
		update_matches(&a->cur, NULL);
		update_matches(&a->ref, NULL);
		app_msg(a, R_NORMAL, "search cleared");
		return;
	}
	re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_CASELESS, &errcode, &off, NULL);
	if (!re) {
		PCRE2_UCHAR buf[200];

		pcre2_get_error_message(errcode, buf, sizeof(buf));
		app_msg(a, R_ERROR, "bad pattern '%s' at offset %d: %s", pattern, (int)off, (char *)buf);
		return;
	}
	if (a->re)
		pcre2_code_free(a->re);
	a->re = re;
	snprintf(a->pattern, sizeof(a->pattern), "%s", pattern);
	a->filter = filter;
	update_matches(&a->cur, a->re);
	if (a->ref.loaded)
		update_matches(&a->ref, a->re);
	if (app_focus(a)->nmatch == 0) {
		app_msg(a, R_ERROR, "no op matches /%s/ (ops read like: 1F12 stage=1 mb=12 kind=F forward gpu=1 layers=7-13 mamba2)",
		        pattern);
		return;
	}
	if (filter)
		app_msg(a, R_NORMAL, "filter /%s/: %ld of %ld ops shown", pattern, app_focus(a)->nmatch,
		        plan_total_ops(&app_focus(a)->plan));
	else
		app_next_match(a, 1);
}

void app_next_match(struct app *a, int dir)
{
	struct pview *v = app_focus(a);
	long n = plan_total_ops(&v->plan), i = app_cursor_op(a), k = 0;

	if (!a->re || v->nmatch == 0) {
		app_msg(a, R_WARN, a->re ? "no op matches /%s/" : "no search: / searches%s", a->re ? a->pattern : "");
		return;
	}
	/* matches in device order, then list order */
	for (long step = 1; step <= n; step++) {
		long j = ((i < 0 ? -1 : i) + dir * step) % n;
		const struct action *x;

		if (j < 0)
			j += n;
		x = &v->plan.order[j];
		if (v->match[sim_op_index(&v->plan, x->stage, x->mb, x->kind)]) {
			char tok[ACTION_TEXT_MAX];

			app_cursor_to(a, j);
			for (long q = 0; q <= j; q++) {
				const struct action *y = &v->plan.order[q];

				k += v->match[sim_op_index(&v->plan, y->stage, y->mb, y->kind)];
			}
			app_msg(a, R_NORMAL, "/%s/: %s, match %ld of %ld (n next, N previous)", a->pattern,
			        action_format(x, tok), k, v->nmatch);
			return;
		}
	}
}

/* ---- files ------------------------------------------------------------------------------- */

int app_save(struct app *a, const char *path)
{
	struct err e = ERR_INIT;
	char dir[4096], rel[4096];
	struct plan *p = &a->cur.plan;
	bool embed = true;

	if (!path)
		path = a->path;
	if (!path) {
		app_msg(a, R_WARN, "the plan has no file yet: S saves as");
		return -1;
	}
	fileio_dirname(path, dir, sizeof(dir));
	if (a->model_path && a->cluster_path) {
		char *m = NULL, *c = NULL;

		if (fileio_relative(dir, a->model_path, rel, sizeof(rel)) == 0)
			m = strdup(rel);
		if (fileio_relative(dir, a->cluster_path, rel, sizeof(rel)) == 0)
			c = strdup(rel);
		if (m && c) {
			free(p->model_ref);
			free(p->cluster_ref);
			p->model_ref = m;
			p->cluster_ref = c;
			embed = false;
		} else {
			free(m);
			free(c);
		}
	}
	if (plan_save(p, path, embed, &e) < 0) {
		app_msg(a, R_ERROR, "cannot save: %s", e.msg);
		return -1;
	}
	app_autosave_remove(a);
	if (path != a->path) {
		free(a->path);
		a->path = strdup(path);
		autosave_setup(a, true);
	}
	a->saved_state = edit_state(&a->hist);
	if (!a->cur.ran || a->cur.m.noom)
		app_msg(a, R_WARN, "saved %s, but the plan cannot run: %s", path, a->cur.why);
	else
		app_msg(a, R_GOOD, "saved %s", path);
	return 0;
}

bool app_would_overwrite(const struct app *a, const char *path)
{
	struct stat st, own;

	if (stat(path, &st) < 0)
		return false;
	return !(a->path && stat(a->path, &own) == 0 && own.st_dev == st.st_dev && own.st_ino == st.st_ino);
}

int app_open_file(struct app *a, const char *path)
{
	struct err e = ERR_INIT;

	if (open_plan(a, path, &e) < 0) {
		app_msg(a, R_ERROR, "cannot open: %s", e.msg);
		return -1;
	}
	pview_update(&a->cur, a->re);
	tuning_release(&a->tuning);
	if (a->ref.loaded) {
		plan_release(&a->ref.plan);
		a->ref.loaded = false;
	}
	a->ref_step = -1;
	app_set_ref_step(a, 1 < a->nsteps && a->steps[1].ok ? 1 : 0);
	reset_view(a);
	if (a->cur.ran)
		app_msg(a, R_GOOD, "opened %s", a->path);
	else
		app_msg(a, R_ERROR, "opened %s, but it cannot run: %s", a->path, a->cur.why);
	autosave_setup(a, false);
	return 0;
}

void app_recover(struct app *a, int answer)
{
	struct err e = ERR_INIT;
	struct plan p;
	char path[4096];

	snprintf(path, sizeof(path), "%s", a->as.path);
	a->as.found = false;
	switch (answer) {
	case 'y':
		if (plan_load(&p, path, &e) < 0) {
			/* ask again: the file must not be left to this UI's next autosave */
			app_msg(a, R_ERROR, "cannot recover: %s (n leaves it, d deletes it)", e.msg);
			a->as.found = true;
			a->mode = MODE_QUESTION;
			a->question = Q_RECOVER;
			return;
		}
		app_adopt_plan(a, &p, "recovered the unsaved edits of an earlier session");
		plan_release(&p);
		a->as.written = true;   /* recovered, they are this UI's edits: saving or discarding them removes the file */
		break;
	case 'd':
		if (unlink(path) < 0)
			app_msg(a, R_ERROR, "cannot delete %s: %s", path, strerror(errno));
		else
			app_msg(a, R_NORMAL, "deleted the earlier session's unsaved edits (%s)", path);
		break;
	default:
		autosave_setup(a, true);
		app_msg(a, R_NORMAL, "left the earlier session's unsaved edits in %s", path);
		break;
	}
}

void app_autosave(struct app *a, double now)
{
	struct err e = ERR_INIT;

	if (a->no_autosave || a->autosave_due <= 0 || now < a->autosave_due)
		return;
	a->autosave_due = 0;
	if (!app_modified(a))
		return;
	if (!a->as.locked)
		return;
	if (plan_save(&a->cur.plan, a->as.path, true, &e) < 0) {
		app_msg(a, R_WARN, "autosave failed: %s", e.msg);
		a->no_autosave = true;
		return;
	}
	a->as.written = true;
	a->autosaved = true;
}

void app_autosave_remove(struct app *a)
{
	if (a->as.written && a->as.path[0])
		unlink(a->as.path);
	a->as.written = false;
	a->autosaved = false;
	a->autosave_due = 0;
}
