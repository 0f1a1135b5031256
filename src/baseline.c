/*
 * baseline — assemble partition + placement + schedule into a plan (see baseline.h), and
 * the one loop that builds and simulates every baseline recipe and picks the best, so
 * compare, the report and the UI cannot disagree on what "the best baseline" is.
 */
#include "config.h"
#include "baseline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "json.h"
#include "partition.h"
#include "sim.h"
#include "strbuf.h"

const struct baseline_recipe baseline_recipes[] = {
	{ "gpipe", SCHED_GPIPE, "uniform" },
	{ "1f1b", SCHED_1F1B, "megatron" },
	{ "1f1b balanced", SCHED_1F1B, "balanced" },
	{ "interleaved", SCHED_INTERLEAVED, "megatron" },
	{ "zb-h1", SCHED_ZBH1, "megatron" },
	{ "zb-h2", SCHED_ZBH2, "megatron" },
	{ "zb-v", SCHED_ZBV, "megatron" },
	{ "dualpipev", SCHED_DUALPIPEV, "uniform" },
	{ "adaptive", SCHED_ADAPTIVE, "balanced" },
};
const int baseline_nrecipes = sizeof(baseline_recipes) / sizeof(baseline_recipes[0]);

const char *baseline_reference_partition(enum sched_kind k)
{
	switch (k) {
	case SCHED_1F1B: case SCHED_INTERLEAVED: case SCHED_ZBH1: case SCHED_ZBH2: case SCHED_ZBV:
		/* Megatron-LM's schedules and the zero-bubble ones built on it split as it does */
		return "megatron";
	default:
		return "uniform";
	}
}

int baseline_plan(struct plan *out, const struct model *m, const char *model_ref,
                  const struct cluster *c, const char *cluster_ref,
                  const struct baseline_spec *spec, struct err *e)
{
	enum sched_kind k = spec->schedule;
	int v = spec->chunks > 0 ? spec->chunks : sched_default_chunks(k);
	int p = spec->devices > 0 ? spec->devices : c->devices;
	int S, *first = NULL;
	long total;

	memset(out, 0, sizeof(*out));
	if (p > c->devices)
		return err_set(e, ERR_INPUT, "%d pipeline devices but cluster '%s' has %d", p, c->name, c->devices);
	if (sched_check(k, p, v, spec->microbatches, e) < 0)
		return -1;
	/* even a placement equal to the schedule's own is refused: accepting it would tell
	 * the user it was used, and a different one would fail only by luck */
	if (spec->placement && k != SCHED_ADAPTIVE)
		return err_set(e, ERR_INPUT, "--placement only works with --schedule adaptive (%s places its stages itself)",
		               sched_name(k));
	S = p * v;
	if (spec->placement && spec->nplacement != S)
		return err_set(e, ERR_INPUT, "--placement lists %d devices but the plan has %d stages (%d devices x %d chunks)",
		               spec->nplacement, S, p, v);
	if (S > m->nlayers)
		return err_set(e, ERR_INPUT, "%s on %d devices x %d chunks needs %d stages, but model '%s' has only %d layers",
		               sched_name(k), p, v, S, m->name, m->nlayers);
	if ((double)S * spec->microbatches * 3 > (double)(1L << 26))
		return err_set(e, ERR_INPUT, "plan too large: %d stages x %d microbatches", S, spec->microbatches);
	if (model_copy(&out->model, m, e) < 0 || cluster_copy(&out->cluster, c, e) < 0)
		goto fail;
	out->microbatches = spec->microbatches;
	out->split_backward = sched_split_backward(k);
	/* Megatron-LM's 1F1B waits for each send/receive pair; its interleaved schedule,
	 * the zero-bubble, DualPipe and OctoPipe runtimes overlap them with compute */
	out->comm = k == SCHED_1F1B ? PLAN_COMM_BLOCKING : PLAN_COMM_OVERLAP;
	if (spec->comm && plan_comm_from_name(spec->comm, &out->comm) < 0) {
		err_set(e, ERR_INPUT, "--comm: '%s' is not overlap or blocking", spec->comm);
		goto fail;
	}
	out->nstages = S;
	out->ndevices = c->devices;
	out->stages = calloc((size_t)S, sizeof(*out->stages));
	first = calloc((size_t)S + 1, sizeof(*first));
	out->order_start = calloc((size_t)c->devices + 1, sizeof(*out->order_start));
	total = (long)S * spec->microbatches * plan_ops_per_mb(out);
	out->order = calloc((size_t)total, sizeof(*out->order));
	if (!out->stages || !first || !out->order_start || !out->order) {
		err_set(e, ERR_RUNTIME, "out of host memory");
		goto fail;
	}
	if (partition_by_name(m, spec->partition ? spec->partition : baseline_reference_partition(k), S, first, e) < 0)
		goto fail;
	for (int s = 0; s < S; s++) {
		out->stages[s].first = first[s];
		out->stages[s].last = first[s + 1] - 1;
		out->stages[s].device = spec->placement ? spec->placement[s] : sched_device_of(k, s, p, v);
		if (out->stages[s].device < 0 || out->stages[s].device >= c->devices) {
			err_set(e, ERR_INPUT, "--placement: stage %d on device %d, but cluster '%s' has devices 0..%d", s,
			        out->stages[s].device, c->name, c->devices - 1);
			goto fail;
		}
	}
	if ((model_ref && !(out->model_ref = strdup(model_ref))) ||
	    (cluster_ref && !(out->cluster_ref = strdup(cluster_ref)))) {
		err_set(e, ERR_RUNTIME, "out of host memory");
		goto fail;
	}
	if (sched_order(out, k, p, v, e) < 0)
		goto fail;
	{
		char suffix[64];

		/* the whole model name (it was cut at 159 bytes, inside a character), shortened only
		 * where the plan's name would not read back */
		snprintf(suffix, sizeof(suffix), " %s", sched_name(k));
		if (!(out->name = str_name_with_suffix(m->name, suffix, JV_STRING_MAX))) {
			err_set(e, ERR_RUNTIME, "out of host memory");
			goto fail;
		}
	}
	free(first);
	return 0;
fail:
	free(first);
	plan_release(out);
	return -1;
}

int baseline_recipe_plan(struct plan *out, const struct model *m, const struct cluster *c, int i, int microbatches,
                         enum recompute rc, struct err *e)
{
	bool by_memory = i == baseline_nrecipes;
	struct baseline_spec spec = { by_memory ? SCHED_1F1B : baseline_recipes[i].schedule, microbatches, 0,
	                              by_memory ? "uniform" : baseline_recipes[i].partition, NULL, 0, 0, NULL };

	if (baseline_plan(out, m, NULL, c, NULL, &spec, e) < 0)
		return -1;
	plan_set_recompute(out, rc);
	if (by_memory && baseline_balance_memory(out, e) < 0) {
		plan_release(out);
		return -1;
	}
	return 0;
}

void baseline_set_release(struct baseline_set *s)
{
	for (int i = 0; i < s->n; i++) {
		if (s->r[i].built)
			plan_release(&s->r[i].plan);
		metrics_release(&s->r[i].m);
	}
	free(s->r);
	s->r = NULL;
	s->n = 0;
	s->best = -1;
}

int baseline_run_all(struct baseline_set *out, const struct model *m, const struct cluster *c,
                     int microbatches, struct err *e)
{
	return baseline_run_all_recompute(out, m, c, microbatches, RECOMPUTE_NONE, e);
}

int baseline_run_all_recompute(struct baseline_set *out, const struct model *m, const struct cluster *c,
                               int microbatches, enum recompute rc_mode, struct err *e)
{
	return baseline_run_until(out, m, c, microbatches, rc_mode, 0, e);
}

/* Whether recipe rc's simulation, begun now, would end past deadline_s (0: none): said in why. */
static bool too_late(const struct baseline_recipe *rc, const struct cluster *c, int microbatches, double deadline_s,
                     double rate, struct err *why)
{
	double now = clock_now_s(), ops = 3.0 * c->devices * sched_default_chunks(rc->schedule) * microbatches;

	if (deadline_s <= 0 || now + ops / rate <= deadline_s)
		return false;
	if (now > deadline_s)
		err_set(why, ERR_INPUT, "skipped: the budget ran out before it");
	else
		err_set(why, ERR_INPUT, "skipped: its simulation takes about %.1f s, past the budget", ops / rate);
	return true;
}

int baseline_run_until(struct baseline_set *out, const struct model *m, const struct cluster *c,
                       int microbatches, enum recompute rc_mode, double deadline_s, struct err *e)
{
	struct sim s;

	memset(out, 0, sizeof(*out));
	out->best = -1;
	out->r = calloc((size_t)baseline_nrecipes, sizeof(*out->r));
	if (!out->r)
		return err_set(e, ERR_RUNTIME, "out of host memory building the baselines");
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < baseline_nrecipes; i++) {
		const struct baseline_recipe *rc = &baseline_recipes[i];
		struct baseline_result *r = &out->r[out->n++];
		struct sim_opts o;
		double t1 = clock_now_s();

		r->recipe = rc;
		err_clear(&r->why);
		if ((r->skipped = too_late(rc, c, microbatches, deadline_s,
		                           out->sim_ops_per_s > 0 ? out->sim_ops_per_s : BASELINE_SIM_OPS_PER_S, &r->why)))
			continue;
		r->built = baseline_recipe_plan(&r->plan, m, c, i, microbatches, rc_mode, &r->why) == 0;
		if (r->built) {
			sim_opts_default(&o);
			r->ran = sim_run(&s, &r->plan, &o, &r->m, &r->why) == 0;
			/* the speed later recipes are judged by: built and simulated, the slowest yet */
			{
				double took = clock_now_s() - t1, rate = 3.0 * r->plan.nstages * microbatches / fmax(took, 1e-6);

				if (r->ran && (out->sim_ops_per_s <= 0 || rate < out->sim_ops_per_s))
					out->sim_ops_per_s = rate;
			}
		}
		if (r->why.cls == ERR_RUNTIME) {
			/* the host, not the plan, ran out of something: no result can be trusted */
			*e = r->why;
			sim_release(&s);
			baseline_set_release(out);
			return -1;
		}
		if (!r->ran)
			continue;
		for (int d = 0; d < r->m.ndevices; d++)
			if ((double)r->m.dev[d].peak_mem_bytes > r->peak_mem_bytes)
				r->peak_mem_bytes = (double)r->m.dev[d].peak_mem_bytes;
		r->feasible = r->m.noom == 0;
		if (r->feasible && (out->best < 0 || r->m.makespan_ms < out->r[out->best].m.makespan_ms))
			out->best = i;
	}
	sim_release(&s);
	return 0;
}
