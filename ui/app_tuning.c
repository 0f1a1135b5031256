/*
 * app_tuning — the tuner driven from the UI loop (see tuning.h).
 *
 * The tuner's own step API does the real work; this module only paces it (one accepted
 * move per loop iteration, so keys and redraws interleave with the search) and copies each
 * step out as it arrives, because the tuner's step array moves when it grows. A step keeps
 * the compact tuner state rather than a plan; the plan is regenerated on demand by the
 * same policy-driven scheduler the tuner evaluated, so what the user sees and adopts is
 * exactly what the tuner measured. Steps loaded from a file (read and checked by the
 * engine's steps_load) become the same records.
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
#include "layout_search.h"
#include "screen.h"
#include "steps.h"
#include "strbuf.h"

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
	cJSON_Delete(g->record);
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

	if (steps_model_of(&a->cur.plan, &g->m, &g->c, e) < 0)
		return -1;
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
	g->target = a->target;
	if (g->target == TARGET_MEGATRON) {
		/* one search, run on the next tick so the screen says what is going on first */
		g->megatron = true;
		g->state = TUNING_RUNNING;
		app_msg(a, R_NORMAL, "tuning %s on %s with %d microbatches for megatron: Megatron-LM's own 1F1B and "
		        "interleaved schedules over the partitions its layout flags express (about a second)", g->m.name,
		        g->c.name, g->microbatches);
		return 0;
	}
	tune_opts_default(&o);
	o.microbatches = g->microbatches;
	if (g->target != TARGET_OCTOPIPE) {
		/* only candidates the runtime runs (as tune --target torchtitan filters them) */
		o.accept = target_accepts;
		o.accept_arg = &g->target;
	}
	if (tune_new(&g->t, &g->m, &g->c, &o, &e) < 0) {
		g->state = TUNING_FAILED;
		snprintf(g->why, sizeof(g->why), "%s", e.msg);
		app_msg(a, R_ERROR, "cannot tune: %s", e.msg);
		return -1;
	}
	g->state = TUNING_RUNNING;
	app_msg(a, R_NORMAL, "tuning %s on %s with %d microbatches%s%s (Esc cancels)", g->m.name, g->c.name,
	        g->microbatches, g->target != TARGET_OCTOPIPE ? ", only what runs on " : "",
	        g->target != TARGET_OCTOPIPE ? target_name(g->target) : "");
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

	if (!g->t)
		return;   /* the megatron search keeps no tuner */
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
		/* kept for the report: the tuner that could make it again is freed below */
		cJSON_Delete(g->record);
		g->record = j;
	}
	tune_free(g->t);
	g->t = NULL;
}

/* target megatron: Megatron-LM's own search (target.h), at the CLI's budget; its best plan
 * is the one step, measured against Megatron-LM's default (1F1B over its even split). */
static void megatron_tick(struct app *a)
{
	struct tuning *g = &a->tuning;
	struct target_search_opts so = { .microbatches = g->microbatches, .max_chunks = 3, .time_budget_s = 1,
	                                 .max_evals = 0, .stop = NULL };
	struct target_result tr;
	struct err e = ERR_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct tstep *t;
	struct plan p;

	g->megatron = false;
	if (target_megatron_search(&g->m, &g->c, &so, &p, &tr, &e) < 0) {
		g->state = TUNING_FAILED;
		snprintf(g->why, sizeof(g->why), "%s", e.msg);
		app_msg(a, R_ERROR, "tuning for megatron failed: %s", e.msg);
		return;
	}
	if (!(t = push(g))) {
		plan_release(&p);
		g->state = TUNING_FAILED;
		snprintf(g->why, sizeof(g->why), "out of host memory");
		return;
	}
	g->evals = tr.evals;
	g->seconds = tr.seconds;
	snprintf(g->baseline, sizeof(g->baseline), "megatron 1f1b");
	g->baseline_ms = isfinite(tr.baseline_ms) ? tr.baseline_ms : 0;
	snprintf(t->phase, sizeof(t->phase), "megatron");
	snprintf(t->what, sizeof(t->what), "the fastest plan Megatron-LM runs (%d of 1..%d virtual stages had one)",
	         tr.schedules, tr.max_chunks);
	t->before_ms = isfinite(tr.baseline_ms) ? tr.baseline_ms : tr.best_ms;
	t->after_ms = tr.best_ms;
	t->plan = p;
	t->have_plan = true;
	{
		char name[200];

		snprintf(name, sizeof(name), "%s megatron", g->m.name);
		free(t->plan.name);
		t->plan.name = strdup(name);
	}
	g->state = TUNING_DONE;
	if (a->panel == PANEL_STEPS && a->steps_tuner)
		tuning_select(a, 0);
	fmt_ms(&sb, tr.best_ms);
	app_msg(a, R_GOOD, "tuning for megatron done: %ld plans simulated in %.2f s; best step 0 at %s (Enter adopts)",
	        tr.evals, tr.seconds, sb.buf);
	strbuf_release(&sb);
}

void tuning_tick(struct app *a)
{
	struct tuning *g = &a->tuning;
	const struct tune_step *s;
	struct err e = ERR_INIT;
	int r;

	if (g->state != TUNING_RUNNING)
		return;
	if (g->megatron) {
		megatron_tick(a);
		return;
	}
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

			/* the step the message names is the one selected, shown and adopted by Enter */
			if (a->panel == PANEL_STEPS && a->steps_tuner)
				tuning_select(a, bi);
			else
				g->sel = bi;
			fmt_ms(&sb, best);
			app_msg(a, R_GOOD, "tuning done: %d steps, %ld plans simulated in %.2f s; best step %d at %s (Enter adopts)",
			        g->n, g->evals, g->seconds, g->steps[bi].index, sb.buf);
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

/* The engine reads and checks the file (steps_load); the steps become the same records
 * as the tuner's, taking over each step's state. */
int tuning_load(struct app *a, const char *path)
{
	struct tuning *g = &a->tuning;
	struct err e = ERR_INIT;
	struct steps st;

	tuning_release(g);
	memset(&st, 0, sizeof(st));
	if (take_model(a, &e) < 0 || steps_load(&st, path, &g->m, &g->c, g->microbatches, &e) < 0)
		goto fail;
	g->microbatches = st.microbatches;
	for (int k = 0; k < st.n; k++) {
		struct steps_step *s = &st.steps[k];
		struct tstep *t = push(g);

		if (!t) {
			err_set(&e, ERR_RUNTIME, "out of host memory");
			goto fail;
		}
		t->index = k;
		snprintf(t->phase, sizeof(t->phase), "%s", tune_phase_name(s->phase));
		snprintf(t->what, sizeof(t->what), "%s", s->what);
		t->before_ms = s->before_ms;
		t->after_ms = s->after_ms;
		t->state = s->state;
		memset(&s->state, 0, sizeof(s->state));
	}
	if (st.best_baseline)
		snprintf(g->baseline, sizeof(g->baseline), "%s", st.best_baseline);
	g->baseline_ms = st.best_baseline_ms;
	g->evals = st.evaluations;
	steps_release(&st);
	g->state = TUNING_FILE;
	snprintf(g->source, sizeof(g->source), "%s", path);
	return 0;
fail:
	steps_release(&st);
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
		char suffix[40];

		/* the model's whole name (cut at 199 bytes before, inside a character, and at 299 by
		 * `octopipe edit --adopt`), as edit names it */
		snprintf(suffix, sizeof(suffix), " tuner step %d", t->index);
		free(t->plan.name);
		t->plan.name = str_name_with_suffix(g->m.name, suffix, JV_STRING_MAX);
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
