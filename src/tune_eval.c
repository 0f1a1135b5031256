/*
 * tune_eval — how the tuner turns a state into a plan and an iteration time: the stages
 * (boundaries, devices, which recompute), the list scheduler's options from the state's
 * knobs, and one simulation (tune.h's tune_state_plan regenerates the plan itself).
 *
 * Two knobs trade memory where it binds (tune_sched.c offers them): which stages
 * recompute (the earliest, or those where recompute frees the most memory per ms it
 * costs) and how far each stage may run ahead (its 1F1B depth, or a share of it).
 */
#include "config.h"
#include "tune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "tune_impl.h"
#include "clock.h"

struct rc_rank {
	double score;
	int stage;
};

static int rc_rank_cmp(const void *a, const void *b)
{
	const struct rc_rank *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->stage - y->stage;
}

/* The ranked recompute knob: the rc stages where full recompute frees the most memory for
 * the time it costs. A stage frees its layers' activations less their inputs (what full
 * recompute keeps) for each microbatch it holds, about its 1F1B depth S - i (the policy's
 * cap), and pays its forward once more per microbatch. So on a hybrid model the cheap
 * layers with large activations (Mamba, MLP) recompute before attention at long
 * sequences, whose forward is dear for what it frees. False when out of host memory. */
static bool mark_recompute_ranked(struct plan *p, const struct tune_state *s)
{
	int S = s->nstages, n = s->sched.rc < S ? s->sched.rc : S;
	struct rc_rank *r = malloc((size_t)S * sizeof(*r));

	if (!r)
		return false;
	for (int i = 0; i < S; i++) {
		double freed = 0, cost = 0;

		for (int l = s->first[i]; l < s->first[i + 1]; l++) {
			freed += (double)p->model.layers[l].act_bytes - (double)model_layer_in_bytes(&p->model, l);
			cost += p->model.layers[l].f_ms;
		}
		r[i].score = freed > 0 ? freed * (S - i) / (cost > 0 ? cost : 1e-9) : 0;
		r[i].stage = i;
	}
	qsort(r, (size_t)S, sizeof(*r), rc_rank_cmp);
	for (int i = 0; i < S; i++)
		p->stages[i].recompute = RECOMPUTE_NONE;
	for (int k = 0; k < n; k++)
		p->stages[r[k].stage].recompute = RECOMPUTE_FULL;
	free(r);
	return true;
}

/* Fills p's stages from the state and sizes its order; the policy writes the order. False
 * when out of host memory (the ranked recompute's scratch). */
static bool state_to_stages(struct plan *p, const struct tune_state *s)
{
	p->nstages = s->nstages;
	for (int i = 0; i < s->nstages; i++) {
		p->stages[i].first = s->first[i];
		p->stages[i].last = s->first[i + 1] - 1;
		p->stages[i].device = s->device[i];
		p->stages[i].recompute = i < s->sched.rc ? RECOMPUTE_FULL : RECOMPUTE_NONE;
		p->stages[i].recompute_layers = 0;
	}
	if (s->sched.rc > 0 && s->sched.rc_ranked && !mark_recompute_ranked(p, s))
		return false;
	plan_size_orders(p, 3);
	return true;
}

static void policy_opts(const struct tune_state *s, int *cap, int *wcap, struct sim_opts *o)
{
	sim_opts_default(o);
	o->policy_driven = true;
	o->policy.alternate = s->sched.alternate;
	o->policy.backward_first = !s->sched.alternate;
	o->policy.defer_arrivals = s->sched.defer_arrivals;
	o->policy.mem_admission = true;
	o->policy.reserve = s->sched.reserve;
	for (int st = 0; st < s->nstages; st++) {
		int c = (int)ceil((s->nstages - st) * tune_depth_quarters(&s->sched) / 4.0) + s->sched.cap_extra;

		cap[st] = c < 1 ? 1 : c;
		wcap[st] = s->sched.wcap;
	}
	o->policy.stage_cap = cap;
	o->policy.w_cap = s->sched.wcap > 0 ? wcap : NULL;
	o->policy.lst_cycle = s->sched.lst / 4.0;
}

/* The largest device peak of a simulated plan (bytes). */
static double largest_peak(const struct metrics *m)
{
	double peak = 0;

	for (int d = 0; d < m->ndevices; d++)
		peak = fmax(peak, (double)m->dev[d].peak_mem_bytes);
	return peak;
}

void tune_note_oom(struct tuner *t, const struct metrics *m)
{
	t->min_peak = fmin(t->min_peak, largest_peak(m));
}

int tune_evalbuf_init(struct tune_evalbuf *b, const struct tuner *t, struct err *e)
{
	int D = t->cluster->devices, maxS = t->max_stages, mb = t->opts.microbatches;

	memset(b, 0, sizeof(*b));
	if (model_copy(&b->work.model, t->model, e) < 0 || cluster_copy(&b->work.cluster, t->cluster, e) < 0)
		return -1;
	b->work.microbatches = mb;
	b->work.split_backward = true;
	b->work.ndevices = D;
	b->work.stages = calloc((size_t)maxS, sizeof(*b->work.stages));
	b->work.order_start = calloc((size_t)D + 1, sizeof(int));
	b->work.order = calloc((size_t)maxS * mb * 3, sizeof(*b->work.order));
	b->cap = calloc((size_t)maxS, sizeof(int));
	b->wcap = calloc((size_t)maxS, sizeof(int));
	if (!b->work.stages || !b->work.order_start || !b->work.order || !b->cap || !b->wcap)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	return 0;
}

void tune_evalbuf_release(struct tune_evalbuf *b)
{
	plan_release(&b->work);
	sim_release(&b->sim);
	free(b->cap);
	free(b->wcap);
	memset(b, 0, sizeof(*b));
}

void tune_eval_in(const struct tuner *t, struct tune_evalbuf *b, const struct tune_state *s, struct metrics *keep,
                  struct tune_evalres *r)
{
	struct sim_opts o;
	struct metrics m;
	struct err e = ERR_INIT;

	*r = (struct tune_evalres){ .ms = INFINITY, .tie = INFINITY };
	if (!state_to_stages(&b->work, s)) {
		r->host_oom = true;
		return;
	}
	if (s->order) {
		/* the explicit order, run as it is */
		memcpy(b->work.order_start, s->order_start, (size_t)(s->order_devices + 1) * sizeof(int));
		memcpy(b->work.order, s->order, (size_t)tune_state_order_len(s) * sizeof(*s->order));
		sim_opts_default(&o);
	} else {
		policy_opts(s, b->cap, b->wcap, &o);
	}
	if (t->opts.accept && t->opts.accept(t->opts.accept_arg, &b->work, &e) < 0)
		return;
	o.no_bounds = !keep; /* the search compares times; the kept metrics are shown */
	r->counted = true;
	if (sim_run(&b->sim, &b->work, &o, &m, &e) < 0) {
		r->host_oom = e.cls == ERR_RUNTIME;
		metrics_release(&m);
		return;
	}
	r->ms = m.noom ? INFINITY : m.makespan_ms;
	r->oom_peak = m.noom ? largest_peak(&m) : 0;
	r->tie = 0;
	for (int d = 0; d < t->cluster->devices; d++)
		r->tie += b->sim.dev_free[d];
	if (keep) {
		metrics_release(keep);
		*keep = m;
	} else {
		metrics_release(&m);
	}
}

void tune_eval_count(struct tuner *t, const struct tune_evalres *r)
{
	if (r->host_oom)
		t->oom = true;
	if (r->oom_peak > 0)
		t->min_peak = fmin(t->min_peak, r->oom_peak);
	if (!r->counted)
		return;
	t->evals++;
	if (t->opts.progress) {
		double now = clock_now_s(), every = t->opts.progress_every_s > 0 ? t->opts.progress_every_s : 0.1;

		if (now - t->last_progress >= every) {
			struct tune_progress pr = { t->evals, now - t->t0,
			                            fmin(t->best_ms, t->have_baseline ? t->baseline_ms : INFINITY),
			                            t->bound_ms };

			t->last_progress = now;
			t->opts.progress(t->opts.progress_arg, &pr);
		}
	}
}

/* Simulates a state; returns its iteration time (INFINITY when it does not fit). */
double tune_eval(struct tuner *t, const struct tune_state *s, struct metrics *keep)
{
	struct tune_evalres r;

	tune_eval_in(t, &t->eb, s, keep, &r);
	tune_eval_count(t, &r);
	t->eval_tie = r.tie;
	return r.ms;
}

int tune_state_plan(const struct model *m, const struct cluster *c, int microbatches,
                    const struct tune_state *s, struct plan *out, struct err *e)
{
	struct sim sim;
	struct sim_opts o;
	struct metrics mt;
	int *cap = calloc((size_t)s->nstages * 2, sizeof(int)), r;

	memset(out, 0, sizeof(*out));
	memset(&sim, 0, sizeof(sim));
	if (!cap)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	if (model_copy(&out->model, m, e) < 0 || cluster_copy(&out->cluster, c, e) < 0)
		goto fail;
	out->microbatches = microbatches;
	out->split_backward = true;
	out->ndevices = c->devices;
	out->stages = calloc((size_t)s->nstages, sizeof(*out->stages));
	out->order_start = calloc((size_t)c->devices + 1, sizeof(int));
	out->order = calloc((size_t)s->nstages * microbatches * 3, sizeof(*out->order));
	if (!out->stages || !out->order_start || !out->order) {
		err_set(e, ERR_RUNTIME, "out of host memory");
		goto fail;
	}
	if (!state_to_stages(out, s)) {
		err_set(e, ERR_RUNTIME, "out of host memory");
		goto fail;
	}
	if (s->order) {
		if (s->order_devices != c->devices || tune_state_order_len(s) != plan_total_ops(out)) {
			err_set(e, ERR_INPUT, "the order does not fit the stages");
			goto fail;
		}
		memcpy(out->order_start, s->order_start, (size_t)(c->devices + 1) * sizeof(int));
		memcpy(out->order, s->order, (size_t)tune_state_order_len(s) * sizeof(*s->order));
	} else {
		policy_opts(s, cap, cap + s->nstages, &o);
		r = sim_run(&sim, out, &o, &mt, e);
		metrics_release(&mt);
		if (r < 0 || sim_apply_order(&sim, out, e) < 0)
			goto fail;
	}
	sim_release(&sim);
	free(cap);
	return 0;
fail:
	sim_release(&sim);
	free(cap);
	plan_release(out);
	return -1;
}
