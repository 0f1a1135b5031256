/*
 * tuning — the tuner driven from the UI loop (see tuning.h).
 *
 * The tuner's own step API does the real work; this module only paces it (one accepted
 * move per loop iteration, so keys and redraws interleave with the search) and copies each
 * step out as it arrives, because the tuner's step array moves when it grows. A step keeps
 * the compact tuner state rather than a plan; the plan is regenerated on demand by the
 * same policy-driven scheduler the tuner evaluated, so what the user sees and adopts is
 * exactly what the tuner measured. Steps loaded from a file become the same records.
 */
#include "config.h"
#include "tuning.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "doc.h"
#include "json.h"
#include "screen.h"

static void steps_clear(struct tuning *g)
{
	for (int i = 0; i < g->n; i++) {
		tune_state_release(&g->steps[i].state);
		if (g->steps[i].have_plan)
			plan_release(&g->steps[i].plan);
	}
	free(g->steps);
	g->steps = NULL;
	g->n = g->cap = g->sel = 0;
}

void tuning_release(struct tuning *g)
{
	if (g->t)
		tune_free(g->t);
	steps_clear(g);
	if (g->have_mc) {
		model_release(&g->m);
		cluster_release(&g->c);
	}
	memset(g, 0, sizeof(*g));
}

static struct tstep *push(struct tuning *g)
{
	if (g->n == g->cap) {
		int cap = g->cap ? g->cap * 2 : 32;
		struct tstep *n = realloc(g->steps, (size_t)cap * sizeof(*n));

		if (!n)
			return NULL;
		g->steps = n;
		g->cap = cap;
	}
	memset(&g->steps[g->n], 0, sizeof(g->steps[g->n]));
	return &g->steps[g->n++];
}

/* Copies the edited plan's model and cluster: the steps are of them. */
static int take_model(struct app *a, struct err *e)
{
	struct tuning *g = &a->tuning;

	if (model_copy(&g->m, &a->cur.plan.model, e) < 0)
		return -1;
	if (cluster_copy(&g->c, &a->cur.plan.cluster, e) < 0) {
		model_release(&g->m);
		return -1;
	}
	g->have_mc = true;
	g->microbatches = a->cur.plan.microbatches;
	return 0;
}

int tuning_start(struct app *a)
{
	struct tuning *g = &a->tuning;
	struct tune_opts o;
	struct err e = ERR_INIT;

	tuning_release(g);
	if (take_model(a, &e) < 0) {
		g->state = TUNING_FAILED;
		snprintf(g->why, sizeof(g->why), "%s", e.msg);
		app_msg(a, R_ERROR, "cannot tune: %s", e.msg);
		return -1;
	}
	tune_opts_default(&o);
	o.microbatches = g->microbatches;
	if (tune_new(&g->t, &g->m, &g->c, &o, &e) < 0) {
		g->state = TUNING_FAILED;
		snprintf(g->why, sizeof(g->why), "%s", e.msg);
		app_msg(a, R_ERROR, "cannot tune: %s", e.msg);
		return -1;
	}
	g->state = TUNING_RUNNING;
	app_msg(a, R_NORMAL, "tuning %s on %s with %d microbatches (Esc cancels)", g->m.name, g->c.name,
	        g->microbatches);
	return 0;
}

bool tuning_busy(const struct app *a)
{
	return a->tuning.state == TUNING_RUNNING;
}

static void finish(struct app *a)
{
	struct tuning *g = &a->tuning;
	cJSON *j;

	tune_stats(g->t, &g->evals, &g->seconds);
	/* the baseline the tuner compared against, from its own record */
	j = tune_steps_to_json(g->t);
	if (j) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "best_baseline");
		const cJSON *ms = cJSON_GetObjectItemCaseSensitive(j, "best_baseline_ms");

		if (cJSON_IsString(b))
			snprintf(g->baseline, sizeof(g->baseline), "%s", b->valuestring);
		if (cJSON_IsNumber(ms))
			g->baseline_ms = ms->valuedouble;
		cJSON_Delete(j);
	}
	tune_free(g->t);
	g->t = NULL;
}

void tuning_tick(struct app *a)
{
	struct tuning *g = &a->tuning;
	const struct tune_step *s;
	struct err e = ERR_INIT;
	int r;

	if (g->state != TUNING_RUNNING)
		return;
	r = tune_step(g->t, &s, &e);
	if (r < 0) {
		g->state = TUNING_FAILED;
		snprintf(g->why, sizeof(g->why), "%s", e.msg);
		finish(a);
		app_msg(a, R_ERROR, "tuning failed: %s", e.msg);
		return;
	}
	if (r == 0) {
		double best = INFINITY;
		int bi = -1;

		g->state = TUNING_DONE;
		finish(a);
		for (int i = 0; i < g->n; i++)
			if (g->steps[i].after_ms < best) {
				best = g->steps[i].after_ms;
				bi = i;
			}
		if (bi >= 0) {
			struct strbuf sb = STRBUF_INIT;

			fmt_ms(&sb, best);
			app_msg(a, R_GOOD, "tuning done: %d steps, %ld plans simulated in %.2f s; best step %d at %s (Enter adopts)",
			        g->n, g->evals, g->seconds, bi, sb.buf);
			strbuf_release(&sb);
		}
		return;
	}
	{
		bool follow = g->n == 0 || g->sel == g->n - 1;
		struct tstep *t = push(g);

		if (!t || tune_state_copy(&t->state, &s->state) < 0) {
			if (t)
				g->n--;
			g->state = TUNING_FAILED;
			snprintf(g->why, sizeof(g->why), "out of host memory");
			finish(a);
			return;
		}
		t->index = s->index;
		snprintf(t->phase, sizeof(t->phase), "%s", tune_phase_name(s->phase));
		snprintf(t->what, sizeof(t->what), "%s", s->what);
		t->before_ms = s->before_ms;
		t->after_ms = s->after_ms;
		if (follow && a->panel == PANEL_STEPS && a->steps_tuner)
			tuning_select(a, g->n - 1);
	}
}

void tuning_cancel(struct app *a)
{
	struct tuning *g = &a->tuning;

	if (g->state != TUNING_RUNNING)
		return;
	g->state = TUNING_CANCELLED;
	finish(a);
	app_msg(a, R_WARN, "tuning cancelled after %d steps (the steps so far stay)", g->n);
}

/* ---- steps files --------------------------------------------------------------------- */

static int load_step(struct tuning *g, const cJSON *o, int k, struct err *e)
{
	const cJSON *ph = cJSON_GetObjectItemCaseSensitive(o, "phase"), *what = cJSON_GetObjectItemCaseSensitive(o, "what");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "stages"), *sch = cJSON_GetObjectItemCaseSensitive(o, "scheduler");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "before_ms"), *af = cJSON_GetObjectItemCaseSensitive(o, "after_ms");
	int S = cJSON_IsArray(st) ? cJSON_GetArraySize(st) : 0, next = 0;
	struct tstep *t;

	if (!cJSON_IsObject(o) || !cJSON_IsString(ph) || !cJSON_IsNumber(af) || S < 1)
		return err_set(e, ERR_INPUT, "steps[%d]: needs phase, after_ms and stages", k);
	t = push(g);
	if (!t)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	t->state.nstages = S;
	t->state.first = calloc((size_t)S + 1, sizeof(int));
	t->state.device = calloc((size_t)S, sizeof(int));
	if (!t->state.first || !t->state.device)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	for (int s = 0; s < S; s++) {
		const cJSON *so = cJSON_GetArrayItem(st, s), *ly = cJSON_GetObjectItemCaseSensitive(so, "layers");
		const cJSON *dv = cJSON_GetObjectItemCaseSensitive(so, "device");
		const cJSON *l0 = cJSON_GetArrayItem(ly, 0), *l1 = cJSON_GetArrayItem(ly, 1);

		if (!cJSON_IsNumber(l0) || !cJSON_IsNumber(l1) || !cJSON_IsNumber(dv) || l0->valueint != next ||
		    l1->valueint < l0->valueint || dv->valueint < 0 || dv->valueint >= g->c.devices)
			return err_set(e, ERR_INPUT, "steps[%d].stages[%d]: not a layer range [%d, ...] on one of %d gpus", k, s,
			               next, g->c.devices);
		t->state.first[s] = next;
		t->state.device[s] = dv->valueint;
		next = l1->valueint + 1;
	}
	if (next != g->m.nlayers)
		return err_set(e, ERR_INPUT, "steps[%d]: the stages cover %d layers, the model has %d", k, next, g->m.nlayers);
	t->state.first[S] = next;
	if (cJSON_IsObject(sch)) {
		const cJSON *x;

		t->state.sched.alternate = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sch, "alternate"));
		t->state.sched.defer_arrivals = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sch, "defer_arrivals"));
		if (cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(sch, "cap_extra")))
			t->state.sched.cap_extra = x->valueint;
		if (cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(sch, "wcap")))
			t->state.sched.wcap = x->valueint;
	}
	t->index = k;
	snprintf(t->phase, sizeof(t->phase), "%s", ph->valuestring);
	snprintf(t->what, sizeof(t->what), "%s", cJSON_IsString(what) ? what->valuestring : "");
	t->before_ms = cJSON_IsNumber(b) ? b->valuedouble : 0;
	t->after_ms = af->valuedouble;
	return 0;
}

int tuning_load(struct app *a, const char *path)
{
	struct tuning *g = &a->tuning;
	struct err e = ERR_INIT;
	cJSON *root = json_load_file(path, &e), *steps;
	const cJSON *model, *mbs;
	int n;

	tuning_release(g);
	if (!root || take_model(a, &e) < 0)
		goto fail;
	if (jv_format(&(struct jv){ .e = &e, .file = path }, root, "octopipe.steps/1") < 0)
		goto fail;
	model = cJSON_GetObjectItemCaseSensitive(root, "model");
	mbs = cJSON_GetObjectItemCaseSensitive(root, "microbatches");
	if (cJSON_IsString(model) && strcmp(model->valuestring, g->m.name) != 0) {
		err_set(&e, ERR_INPUT, "%s: steps of model '%s', the plan is of '%s'", path, model->valuestring, g->m.name);
		goto fail;
	}
	if (cJSON_IsNumber(mbs))
		g->microbatches = mbs->valueint;
	steps = cJSON_GetObjectItemCaseSensitive(root, "steps");
	n = cJSON_IsArray(steps) ? cJSON_GetArraySize(steps) : 0;
	if (n < 1) {
		err_set(&e, ERR_INPUT, "%s: no steps", path);
		goto fail;
	}
	for (int k = 0; k < n; k++)
		if (load_step(g, cJSON_GetArrayItem(steps, k), k, &e) < 0) {
			err_prefix(&e, path);
			goto fail;
		}
	{
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "best_baseline");
		const cJSON *bm = cJSON_GetObjectItemCaseSensitive(root, "best_baseline_ms");
		const cJSON *ev = cJSON_GetObjectItemCaseSensitive(root, "evaluations");

		if (cJSON_IsString(b))
			snprintf(g->baseline, sizeof(g->baseline), "%s", b->valuestring);
		if (cJSON_IsNumber(bm))
			g->baseline_ms = bm->valuedouble;
		if (cJSON_IsNumber(ev))
			g->evals = (long)ev->valuedouble;
	}
	cJSON_Delete(root);
	g->state = TUNING_FILE;
	snprintf(g->source, sizeof(g->source), "%s", path);
	return 0;
fail:
	cJSON_Delete(root);
	tuning_release(g);
	g->state = TUNING_FAILED;
	snprintf(g->why, sizeof(g->why), "%s", e.msg);
	app_msg(a, R_ERROR, "cannot load steps: %s", e.msg);
	return -1;
}

/* ---- walking and adopting ---------------------------------------------------------------- */

static int step_plan(struct tuning *g, int i)
{
	struct tstep *t = &g->steps[i];
	struct err e = ERR_INIT;

	if (t->have_plan)
		return 0;
	if (t->why[0])
		return -1;
	if (tune_state_plan(&g->m, &g->c, g->microbatches, &t->state, &t->plan, &e) < 0) {
		snprintf(t->why, sizeof(t->why), "%s", e.msg);
		return -1;
	}
	{
		char name[200];

		snprintf(name, sizeof(name), "%s tuner step %d", g->m.name, t->index);
		free(t->plan.name);
		t->plan.name = strdup(name);
	}
	t->have_plan = true;
	return 0;
}

void tuning_select(struct app *a, int i)
{
	struct tuning *g = &a->tuning;
	char name[64];

	if (i < 0 || i >= g->n)
		return;
	g->sel = i;
	if (step_plan(g, i) < 0) {
		app_msg(a, R_ERROR, "step %d: %s", i, g->steps[i].why);
		return;
	}
	snprintf(name, sizeof(name), "step %d", g->steps[i].index);
	app_set_ref_plan(a, &g->steps[i].plan, name);
}

void tuning_adopt(struct app *a, int i)
{
	struct tuning *g = &a->tuning;
	char label[80];

	if (i < 0 || i >= g->n)
		return;
	if (step_plan(g, i) < 0) {
		app_msg(a, R_ERROR, "step %d cannot be adopted: %s", i, g->steps[i].why);
		return;
	}
	snprintf(label, sizeof(label), "tuner step %d (%s)", g->steps[i].index, g->steps[i].phase);
	app_adopt_plan(a, &g->steps[i].plan, label);
}
