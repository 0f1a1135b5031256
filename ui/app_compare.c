/*
 * app_compare — the baselines and the compared plan (see app.h). The baselines come from the
 * engine's one loop (baseline_run_all) and are listed as a "generation", each step named
 * by what changed from the one before (placement, partition, scheduling); any of them,
 * a tuner step or another plan can be shown above the edited plan on one time scale.
 */
#include "config.h"
#include "app.h"
#include "app_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "screen.h"

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

static void release_steps(struct step *steps, int n)
{
	for (int i = 0; i < n; i++)
		if (steps[i].ok)
			plan_release(&steps[i].plan);
	free(steps);
}

void compare_release_baselines(struct app *a)
{
	release_steps(a->steps, a->nsteps);
	a->steps = NULL;
	a->nsteps = 0;
}

/* A baseline the target runtime cannot run is marked n/a with the reason, as compare
 * --target marks it: Megatron-LM runs only its own 1F1B and interleaved orders, and
 * target_check holds the rest of each runtime's rules. */
static void target_mark(enum target t, const struct baseline_result *r, struct step *st)
{
	struct err te = ERR_INIT;

	if (t == TARGET_OCTOPIPE)
		return;
	if (t == TARGET_MEGATRON && r->recipe->schedule != SCHED_1F1B && r->recipe->schedule != SCHED_INTERLEAVED)
		err_set(&te, ERR_INPUT, "Megatron-LM runs only its own 1F1B and interleaved orders");
	if (te.cls == ERR_NONE && target_check(t, &st->plan, &te) == 0)
		return;
	st->na = true;
	snprintf(st->why, sizeof(st->why), "n/a on %s: %.150s", target_name(t), te.msg);
}

/* Each baseline's plan moves into its step: nothing is copied. */
int compare_build_baselines(struct app *a, const struct model *m, const struct cluster *c, int mbs, bool need_best)
{
	struct baseline_set bs;
	struct err e = ERR_INIT;
	const struct step *prev = NULL;
	struct step *steps;
	int best, n = 0;

	if (baseline_run_all(&bs, m, c, mbs, &e) < 0) {
		app_msg(a, R_ERROR, "%s", e.msg);
		if (!need_best)
			compare_release_baselines(a);
		return -1;
	}
	steps = calloc((size_t)bs.n, sizeof(*steps));
	if (!steps) {
		baseline_set_release(&bs);
		if (!need_best)
			compare_release_baselines(a);
		return -1;
	}
	for (int i = 0; i < bs.n; i++) {
		struct baseline_result *r = &bs.r[i];
		struct step *st = &steps[n++];

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
		target_mark(a->target, r, st);
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
	if (a->target != TARGET_OCTOPIPE) {
		/* the fastest the target runs; when it runs none, the fastest (marked n/a) */
		int tb = -1;

		for (int i = 0; i < n; i++)
			if (steps[i].ok && steps[i].makespan > 0 && !steps[i].oom && !steps[i].na &&
			    (tb < 0 || steps[i].makespan < steps[tb].makespan))
				tb = i;
		best = tb >= 0 ? tb : best;
	}
	baseline_set_release(&bs);
	if (need_best && best < 0) {
		release_steps(steps, n);
		return -1;
	}
	compare_release_baselines(a);
	a->steps = steps;
	a->nsteps = n;
	return best;
}

void app_set_ref_plan(struct app *a, const struct plan *p, const char *name)
{
	struct err e = ERR_INIT;

	if (a->ref.loaded)
		plan_release(&a->ref.plan);
	a->ref.loaded = false;
	a->ref_step = -1;
	if (app_plan_dup(&a->ref.plan, p, &e) < 0) {
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
