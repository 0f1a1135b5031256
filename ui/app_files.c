/*
 * app_files — opening plans and samples, saving, the HTML report, the recent files the picker
 * offers, autosave and recovery (see app.h).
 *
 * Work is never lost and never shared by accident: each UI claims its own autosave slot,
 * keyed by the plan's real path (or model, cluster and microbatches when it has no file)
 * and locked like vim's swap files; it deletes only the autosave it wrote, and a slot
 * left by an earlier session is offered for recovery before anything is written to it.
 */
#include "config.h"
#include "app.h"
#include "app_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datadir.h"
#include "fileio.h"
#include "json.h"
#include "layout_json.h"
#include "layout_search.h"
#include "report.h"
#include "screen.h"

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
void files_autosave_setup(struct app *a, bool need_empty)
{
	char key[9000], name[300], stem[400];
	const struct plan *p = &a->cur.plan;

	if (a->no_autosave)
		return;
	if (!a->as.dir[0] && !autosave_dir(a->as.dir, sizeof(a->as.dir))) {
		a->no_autosave = true;
		app_msg(a, R_WARN, "autosave is off: neither XDG_STATE_HOME nor HOME names an absolute directory "
		        "to keep it in");
		return;
	}
	if (a->path) {
		char *real = realpath(a->path, NULL);
		const char *b = strrchr(a->path, '/');

		snprintf(key, sizeof(key), "plan=%s", real ? real : a->path);
		snprintf(name, sizeof(name), "%s", b ? b + 1 : a->path);
		free(real);
	} else {
		/* the layout and recompute the start was given are part of what the edits are of:
		 * a UI started without --tp 2 is not offered edits made under it */
		char lay[160] = "";

		if (p->has_parallel)
			snprintf(lay, sizeof(lay), "-pp%d-tp%d-dp%d-ep%d-zero%d-%s", p->par.pp, p->par.tp, p->par.dp, p->par.ep,
			         p->par.zero, parallel_grads_name(p->par.fp32_grads));
		if (p->has_parallel && p->par.micro_batch > 0)
			snprintf(lay + strlen(lay), sizeof(lay) - strlen(lay), "-mbs%ld", p->par.micro_batch);
		if (p->nstages > 0 && p->stages[0].recompute != RECOMPUTE_NONE)
			snprintf(lay + strlen(lay), sizeof(lay) - strlen(lay), "-%s",
			         recompute_name((enum recompute)p->stages[0].recompute));
		snprintf(key, sizeof(key), "model=%s|cluster=%s|microbatches=%d|layout=%s",
		         a->model_path ? a->model_path : p->model.name, a->cluster_path ? a->cluster_path : p->cluster.name,
		         p->microbatches, lay);
		snprintf(name, sizeof(name), "%s-%s-%dmb%s", p->model.name ? p->model.name : "model",
		         p->cluster.name ? p->cluster.name : "cluster", p->microbatches, lay);
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

/* Makes p (taken over) the plan shown, with its file (NULL: none yet) and its model's and
 * cluster's paths (taken over), as a fresh start: no undo history, not modified. */
/* Remembers the plan file as it is now on disk, to notice another program's changes. */
static void stamp_file(struct app *a)
{
	if (!a->path || stat(a->path, &a->disk) < 0)
		memset(&a->disk, 0, sizeof(a->disk));
}

bool app_changed_on_disk(const struct app *a)
{
	struct stat st;

	if (!a->path || !a->disk.st_ino || stat(a->path, &st) < 0)
		return false;   /* never known, or gone: saving takes nothing from anyone */
	return st.st_dev != a->disk.st_dev || st.st_ino != a->disk.st_ino || st.st_size != a->disk.st_size ||
	       st.st_mtim.tv_sec != a->disk.st_mtim.tv_sec || st.st_mtim.tv_nsec != a->disk.st_mtim.tv_nsec;
}

static void adopt(struct app *a, struct plan *p, char *path, char *model_path, char *cluster_path)
{
	if (a->cur.loaded)
		plan_release(&a->cur.plan);
	a->cur.plan = *p;
	a->cur.loaded = true;
	free(a->path);
	free(a->model_path);
	free(a->cluster_path);
	a->path = path;
	a->model_path = model_path;
	a->cluster_path = cluster_path;
	stamp_file(a);
	edit_hist_release(&a->hist);
	a->saved_state = edit_state(&a->hist);
	a->plan_gen++;
}

int files_open_plan(struct app *a, const char *arg, struct err *e)
{
	char path[4096], dir[4096];
	struct plan p;

	datadir_resolve(arg, "plans", path, sizeof(path));
	if (plan_load(&p, path, e) < 0)
		return -1;
	fileio_dirname(path, dir, sizeof(dir));
	adopt(a, &p, strdup(path), p.model_ref ? abs_join(dir, p.model_ref) : NULL,
	      p.cluster_ref ? abs_join(dir, p.cluster_ref) : NULL);
	snprintf(a->source, sizeof(a->source), "%.199s", path);
	compare_build_baselines(a, &p.model, &p.cluster, p.microbatches, false);
	return 0;
}

/* The best baseline of m on c as the edited plan, at layout l on one replica (l NULL:
 * pure pipeline parallelism over every gpu); with a pick (the layout search's), the plan
 * opened is the fastest baseline that fits as the search judged it (layout_baseline). */
static int open_at(struct app *a, const struct model *m, const struct cluster *c, int mbs, const struct parallel *l,
                   int recompute, const struct layout_pick *pk, const char *mpath, const char *cpath, struct err *e)
{
	struct model rm;
	struct cluster rc;
	struct plan p;
	int best, r = -1;

	memset(&rm, 0, sizeof(rm));
	memset(&rc, 0, sizeof(rc));
	/* a layout: the baselines are built on what one replica sees */
	if (l && parallel_replica(m, c, l, &rm, &rc, e) < 0)
		goto out;
	best = compare_build_baselines(a, l ? &rm : m, l ? &rc : c, mbs, !pk);
	if (pk && a->target != TARGET_OCTOPIPE && best >= 0 && !a->steps[best].na && !a->steps[best].oom &&
	    a->steps[best].makespan > 0) {
		/* a target: the fastest baseline it runs (the search's pick may be one it cannot) */
		if (app_plan_dup(&p, &a->steps[best].plan, e) < 0)
			goto out;
		plan_set_recompute(&p, pk->recompute);
	} else if (pk) {
		struct metrics mt;

		if (layout_baseline(m, c, pk, &p, &mt, e) < 0)
			goto out;
		metrics_release(&mt);
		best = best < 0 ? 0 : best;
	} else if (best < 0) {
		err_set(e, ERR_INFEASIBLE, "no baseline of %s on %s with %d microbatches runs", m->name, c->name, mbs);
		goto out;
	} else if (app_plan_dup(&p, &a->steps[best].plan, e) < 0) {
		goto out;
	}
	if (l && plan_attach_parallel(&p, l, m, c, e) < 0) {
		plan_release(&p);
		goto out;
	}
	if (recompute > RECOMPUTE_NONE && !pk)
		plan_set_recompute(&p, (enum recompute)recompute);
	adopt(a, &p, NULL, realpath(mpath, NULL), realpath(cpath, NULL));
	snprintf(a->source, sizeof(a->source), "%s of %s on %s", pk ? "layout search's pick" : "best baseline", m->name,
	         c->name);
	a->step_sel = best;
	r = 0;
out:
	model_release(&rm);
	cluster_release(&rc);
	return r;
}

int files_open_sample(struct app *a, const char *model, const char *cluster, int mbs, const struct start_layout *lo,
                      struct err *e)
{
	char mpath[4096], cpath[4096];
	struct model m;
	struct cluster c;
	struct layout_choice lc;
	int r = -1;

	datadir_resolve(model, "samples/models", mpath, sizeof(mpath));
	datadir_resolve(cluster, "samples/clusters", cpath, sizeof(cpath));
	if (model_load(&m, mpath, e) < 0)
		return -1;
	if (cluster_load(&c, cpath, e) < 0) {
		model_release(&m);
		return -1;
	}
	a->start_msg[0] = '\0';
	if (!lo || lo->pp_only) {
		r = open_at(a, &m, &c, mbs, NULL, -1, NULL, mpath, cpath, e);
	} else if (lo->recompute > RECOMPUTE_NONE && model_recomputes(&m)) {
		err_set(e, ERR_INPUT, "octopipe tui: --recompute: the layer table of '%s' already recomputes every layer",
		        m.name);
	} else if (start_layout_choose(&m, &c, mbs, lo, &lc, a->start_msg, sizeof(a->start_msg), e) < 0) {
		/* none fits: the chart still shows where the memory goes, over every gpu (the
		 * input errors are the options' own, and an interrupt before any fit is a quit) */
		if (e->cls == ERR_INFEASIBLE) {
			struct err why = *e;

			snprintf(a->start_msg, sizeof(a->start_msg), "%.200s: showing pure pipeline parallelism over every gpu",
			         e->msg);
			*e = (struct err)ERR_INIT;
			if ((r = open_at(a, &m, &c, mbs, NULL, -1, NULL, mpath, cpath, e)) < 0)
				*e = why;   /* the search's words: how close the best came */
		}
		if (r < 0) /* the search's own words, as tune says them */
			err_prefix(e, "octopipe tui");
	} else if (parallel_is_pipeline_only(&lc.par) && lc.par.pp == c.devices && lc.recompute == RECOMPUTE_NONE) {
		r = open_at(a, &m, &c, lc.microbatches, NULL, -1, NULL, mpath, cpath, e);
	} else {
		struct layout_pick pk = { .par = lc.par, .recompute = lc.recompute, .microbatches = lc.microbatches,
		                          .makespan_ms = lc.makespan_ms, .tokens_per_s = lc.tokens_per_s,
		                          .peak_bytes = lc.peak_bytes, .bound_ms = lc.bound_ms, .estimate_ms = lc.estimate_ms };

		r = open_at(a, &m, &c, lc.microbatches, &lc.par, lc.recompute, &pk, mpath, cpath, e);
	}
	model_release(&m);
	cluster_release(&c);
	return r;
}

void files_recent_add(struct app *a, const char *path)
{
	char dir[3000];

	/* best effort: a list that cannot be written only forgets a recent file */
	if (!a->no_autosave && autosave_dir(dir, sizeof(dir)))
		picker_recent_add(dir, path);
}

void app_picker_open(struct app *a)
{
	char dir[3000], *recent[PICKER_RECENT_MAX];
	int n = 0;

	if (!a->no_autosave && autosave_dir(dir, sizeof(dir)))
		n = picker_recent_read(dir, recent);
	picker_release(&a->picker);
	if (picker_open(&a->picker, datadir_find(NULL), recent, n) < 0)
		app_msg(a, R_ERROR, "out of host memory listing the plans and samples");
	for (int i = 0; i < n; i++)
		free(recent[i]);
	a->mode = MODE_PICKER;
}

/* The model's or cluster's reference to write into a plan saved in dir (heap; NULL when
 * out of memory or too long): the plan's own, as the user wrote it, when it names that
 * file from dir (an absolute path stays absolute; a relative one is kept while the plan
 * stays in its directory); else the file's path relative to dir, so that it resolves. */
static char *save_ref(const char *ref, const char *dir, const char *file)
{
	char rel[4096];

	if (ref && fileio_join(dir, ref, rel, sizeof(rel)) == 0 && fileio_same_file(rel, file))
		return strdup(ref);
	if (fileio_relative(dir, file, rel, sizeof(rel)) < 0)
		return NULL;
	return strdup(rel);
}

int app_save(struct app *a, const char *path)
{
	struct err e = ERR_INIT;
	char dir[4096];
	struct plan *p = &a->cur.plan;
	bool embed = true;

	if (!path)
		path = a->path;
	if (!path) {
		app_msg(a, R_WARN, "the plan has no file yet: S saves as");
		return -1;
	}
	if (app_refuse_input(a, path, "save"))
		return -1;
	fileio_dirname(path, dir, sizeof(dir));
	if (a->model_path && a->cluster_path) {
		char *m = save_ref(p->model_ref, dir, a->model_path), *c = save_ref(p->cluster_ref, dir, a->cluster_path);

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
		files_autosave_setup(a, true);
	}
	stamp_file(a);
	a->saved_state = edit_state(&a->hist);
	files_recent_add(a, path);
	if (!a->cur.ran || a->cur.m.noom)
		app_msg(a, R_WARN, "saved %s, but the plan cannot run: %s", path, a->cur.why);
	else
		app_msg(a, R_GOOD, "saved %s", path);
	return 0;
}

bool app_refuse_input(struct app *a, const char *path, const char *what)
{
	static const char *const names[] = { "model", "cluster", "tuner's steps file" };
	const char *inputs[] = { a->model_path, a->cluster_path, a->tuning.source[0] ? a->tuning.source : NULL };
	int i = fileio_input_index(path, inputs, 3);

	if (i < 0)
		return false;
	app_msg(a, R_ERROR, "%s refused: '%s' is the plan's %s ('%s'), which the plan reads; give another name", what,
	        path, names[i], inputs[i]);
	return true;
}

bool app_would_overwrite(const struct app *a, const char *path)
{
	struct stat st, own;

	if (stat(path, &st) < 0 || S_ISDIR(st.st_mode))
		return false;   /* nothing to replace; a directory: the save says it cannot */
	if (a->path && stat(a->path, &own) == 0 && own.st_dev == st.st_dev && own.st_ino == st.st_ino)
		return app_changed_on_disk(a);   /* its own file: only when someone else changed it */
	return true;
}

/* What follows opening a plan or a sample: simulate it, drop what belonged to the one
 * before (the tuner's steps, the compared plan), show the whole of it, and say so. */
static void after_open(struct app *a)
{
	const char *what = a->path ? a->path : a->source;

	pview_update(&a->cur, a->re);
	tuning_release(&a->tuning);
	if (a->ref.loaded) {
		plan_release(&a->ref.plan);
		a->ref.loaded = false;
	}
	a->ref_step = -1;
	app_set_ref_step(a, 1 < a->nsteps && a->steps[1].ok ? 1 : 0);
	app_reset_view(a);
	if (a->cur.ran)
		app_msg(a, R_GOOD, "opened %s", what);
	else
		app_msg(a, R_ERROR, "opened %s, but it cannot run: %s", what, a->cur.why);
	files_autosave_setup(a, false);
	if (a->path)
		files_recent_add(a, a->path);
}

int app_open_file(struct app *a, const char *path)
{
	struct err e = ERR_INIT;

	if (files_open_plan(a, path, &e) < 0) {
		app_msg(a, R_ERROR, "cannot open: %s", e.msg);
		return -1;
	}
	after_open(a);
	return 0;
}

int app_open_sample(struct app *a, const char *model, const char *cluster, int mbs)
{
	struct err e = ERR_INIT;

	if (files_open_sample(a, model, cluster, mbs > 0 ? mbs : APP_DEFAULT_MICROBATCHES, NULL, &e) < 0) {
		app_msg(a, R_ERROR, "cannot open: %s", e.msg);
		return -1;
	}
	after_open(a);
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
		files_autosave_setup(a, true);
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
	if (fileio_same_file(path, a->path)) {
		app_msg(a, R_ERROR, "report not written: %s is the plan's own file", path);
		return;
	}
	if (app_refuse_input(a, path, "report"))
		return;
	plans[n] = &a->cur.plan;
	labels[n++] = app_modified(a) ? "this plan (edited)" : "this plan";
	if (a->compare && a->ref.loaded) {
		plans[n] = &a->ref.plan;
		labels[n++] = a->ref_name[0] ? a->ref_name : "compared";
	}
	/* the tuner's steps: the live tuner's, or the steps file the UI was given */
	if (a->tuning.t || a->tuning.record) {
		steps = a->tuning.t ? tune_steps_to_json(a->tuning.t) : cJSON_Duplicate(a->tuning.record, 1);
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
