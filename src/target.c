/*
 * target — what the runtime a plan is tuned for can run (see target.h).
 *
 * OctoPipe's executor runs anything. Megatron-LM runs only its own 1F1B and interleaved
 * orders, so tuning for it is a search over what it lets a user choose: the virtual
 * stages per rank and the partition its layout flags express, every candidate built
 * with Megatron's own schedule (the baselines' 1F1B and interleaved builders) and
 * checked by megatron_check, the export's own rules. The search starts from the
 * partitions Megatron-LM users pick (its even split, with or without the embedding and
 * loss counted as layers, the cost-balanced split) and moves one boundary one layer at
 * a time while the iteration gets shorter. torchtitan runs any order from a CSV, so it
 * gets OctoPipe's tuner with every candidate outside its placement styles rejected
 * (target_accepts).
 */
#include "config.h"
#include "target.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "clock.h"
#include "megatron.h"
#include "sim.h"
#include "strbuf.h"
#include "torchtitan.h"

const char *target_name(enum target t)
{
	return t == TARGET_MEGATRON ? "megatron" : t == TARGET_TORCHTITAN ? "torchtitan" : "octopipe";
}

int target_from_name(const char *s, enum target *out)
{
	for (int t = TARGET_OCTOPIPE; t <= TARGET_TORCHTITAN; t++)
		if (strcmp(s, target_name((enum target)t)) == 0) {
			*out = (enum target)t;
			return 0;
		}
	return -1;
}

int target_check(enum target t, const struct plan *p, struct err *e)
{
	if (t == TARGET_MEGATRON)
		return megatron_check(p, e);
	if (t == TARGET_TORCHTITAN)
		return torchtitan_check(p, e);
	return 0;
}

int target_accepts(void *arg, const struct plan *p, struct err *e)
{
	return target_check(*(const enum target *)arg, p, e);
}

int target_check_search(enum target t, const struct model *m, int devices, bool pure_pipeline, struct err *e)
{
	if (t != TARGET_TORCHTITAN)
		return 0;
	if (torchtitan_check_model(m, e) < 0)
		return -1;
	/* one replica: no FSDP, so no mixed precision beside PP (torchtitan.c check_layout) */
	if (pure_pipeline && devices > 1)
		return err_set(e, ERR_INPUT, "--layout pp: torchtitan applies mixed precision to a pipeline only under "
		               "FSDP, so it would train a pure pipeline of %d GPUs in fp32, not the bf16 priced: use "
		               "--layout auto, which shards the replicas with FSDP", devices);
	return 0;
}

/* One Megatron candidate: the schedule of v stages per device over counts (NULL: the
 * named partition part), built, checked and simulated. INFINITY when it cannot run. */
struct msearch {
	const struct model *m;
	int block;                  /* >= 0: m is the table without recompute and every stage
	                             * recomputes its first block layers (megatron_recompute_block) */
	const struct cluster *c;
	const struct target_search_opts *o;
	struct sim sim;
	double t0;
	long evals;
	bool oom;
	struct plan best;
	bool have_best;
	double best_ms;
	struct err refused;         /* the first of Megatron-LM's rules a candidate broke */
};

static bool out_of_budget(const struct msearch *s)
{
	if (s->o->stop && *s->o->stop)
		return true;
	if (s->o->max_evals > 0 && s->evals >= s->o->max_evals)
		return true;
	return s->o->time_budget_s > 0 && clock_now_s() - s->t0 >= s->o->time_budget_s;
}

static double candidate(struct msearch *s, int v, const char *part, struct plan *out)
{
	struct baseline_spec spec = { v > 1 ? SCHED_INTERLEAVED : SCHED_1F1B, s->o->microbatches, v, part, NULL, 0,
	                              s->c->devices, NULL };
	struct err e = ERR_INIT;
	struct sim_opts so;
	struct metrics mt;
	double ms;

	memset(out, 0, sizeof(*out));
	if (baseline_plan(out, s->m, NULL, s->c, NULL, &spec, &e) < 0) {
		s->oom |= e.cls == ERR_RUNTIME;
		return INFINITY;
	}
	if (s->block >= 0)
		megatron_recompute_block(out, s->block);
	if (megatron_check(out, &e) < 0) {
		if (s->refused.cls == ERR_NONE)
			s->refused = e;
		plan_release(out);
		return INFINITY;
	}
	s->evals++;
	sim_opts_default(&so);
	if (sim_run(&s->sim, out, &so, &mt, &e) < 0) {
		s->oom |= e.cls == ERR_RUNTIME;
		metrics_release(&mt);
		plan_release(out);
		return INFINITY;
	}
	ms = mt.noom ? INFINITY : mt.makespan_ms;
	metrics_release(&mt);
	if (!isfinite(ms))
		plan_release(out);
	return ms;
}

static void keep(struct msearch *s, struct plan *p, double ms)
{
	if (ms < s->best_ms) {
		if (s->have_best)
			plan_release(&s->best);
		s->best = *p;
		s->have_best = true;
		s->best_ms = ms;
	} else {
		plan_release(p);
	}
}

/* "a,b,c" of a plan's stage sizes, one moved: boundary i (between stages i-1 and i)
 * by dir layers. false when a stage would be empty. */
static bool moved_counts(const struct plan *p, int i, int dir, struct strbuf *sb)
{
	strbuf_reset(sb);
	for (int st = 0; st < p->nstages; st++) {
		int k = p->stages[st].last - p->stages[st].first + 1;

		k += st == i - 1 ? dir : st == i ? -dir : 0;
		if (k < 1)
			return false;
		strbuf_addf(sb, "%s%d", st ? "," : "", k);
	}
	return !strbuf_failed(sb);
}

/* Moves boundaries of the best plan with v stages per device while one helps. */
static void descend(struct msearch *s, struct plan *start, double start_ms, int v)
{
	struct plan cur = *start;
	double cur_ms = start_ms;
	bool improved = true;
	struct strbuf counts = STRBUF_INIT;

	while (improved && !out_of_budget(s)) {
		improved = false;
		for (int i = 1; i < cur.nstages && !improved && !out_of_budget(s); i++)
			for (int dir = -1; dir <= 1 && !improved; dir += 2) {
				struct plan np;
				double ms;

				if (!moved_counts(&cur, i, dir, &counts)) {
					s->oom |= strbuf_failed(&counts);
					continue;
				}
				ms = candidate(s, v, counts.buf, &np);
				if (ms < cur_ms) {
					plan_release(&cur);
					cur = np;
					cur_ms = ms;
					improved = true;
				} else if (isfinite(ms)) {
					plan_release(&np);
				}
			}
	}
	strbuf_release(&counts);
	keep(s, &cur, cur_ms);
}

/* The virtual-stage counts and partitions of the search (see the top of the file) over s's
 * table, every candidate recomputing as s->block says; s->best holds the fastest. */
static void search_schedules(struct msearch *s, struct target_result *r)
{
	static const char *const starts[] = { "megatron", "megatron-accounted", "balanced", "uniform" };
	int maxv = s->o->max_chunks > 0 ? s->o->max_chunks : 3;

	r->max_chunks = maxv;
	for (int v = 1; v <= maxv && !out_of_budget(s); v++) {
		struct plan sp;
		double sms = INFINITY;
		bool have = false;

		for (size_t k = 0; k < sizeof(starts) / sizeof(starts[0]); k++) {
			struct plan p;
			double ms = candidate(s, v, starts[k], &p);

			if (v == 1 && k == 0)
				r->baseline_ms = ms;  /* Megatron-LM's default: 1F1B, its even split */
			if (!isfinite(ms))
				continue;
			if (ms < sms) {
				if (have)
					plan_release(&sp);
				sp = p;
				sms = ms;
				have = true;
			} else {
				plan_release(&p);
			}
		}
		if (have) {
			r->schedules++;
			descend(s, &sp, sms, v);
		}
	}
}

/* "a,b,c": the sizes of p's stages. */
static bool stage_counts(const struct plan *p, struct strbuf *sb)
{
	for (int st = 0; st < p->nstages; st++)
		strbuf_addf(sb, "%s%d", st ? "," : "", p->stages[st].last - p->stages[st].first + 1);
	return !strbuf_failed(sb);
}

/* The block method is a trade between no recompute and full: of the stages' first n
 * layers only (Megatron-LM's --recompute-method block). The fewer layers recompute, the
 * less time the backward redoes and the more activations it holds, so the smallest n that
 * fits over the best fully recomputing plan's partition is the fastest; its boundaries
 * are then moved as the search moves them. */
static void search_block(struct msearch *s, struct target_result *r)
{
	struct strbuf counts = STRBUF_INIT;
	struct plan full = s->best;
	int v = full.nstages / (full.ndevices > 0 ? full.ndevices : 1), most;
	double full_ms = s->best_ms;

	r->recompute_layers = 0;
	if (!stage_counts(&full, &counts)) {
		s->oom = true;
		strbuf_release(&counts);
		return;
	}
	/* the winner's stages all recompute fully already: this only counts their layers */
	most = megatron_recompute_block(&full, 1 << 30);
	/* the peak grows as n shrinks: bisect for the smallest n that fits (lo does not fit,
	 * hi does: every layer, n = most, is the plan in hand) */
	{
		int lo = 0, hi = most;
		struct plan fit;
		double fit_ms = INFINITY;

		while (hi - lo > 1 && !out_of_budget(s)) {
			int n = lo + (hi - lo) / 2;
			struct plan p;
			double ms;

			s->block = n;
			ms = candidate(s, v, counts.buf, &p);
			if (!isfinite(ms)) {
				lo = n;
				continue;
			}
			if (isfinite(fit_ms))
				plan_release(&fit);
			fit = p;
			fit_ms = ms;
			hi = n;
		}
		if (isfinite(fit_ms)) {
			s->block = hi;
			if (fit_ms < s->best_ms)
				descend(s, &fit, fit_ms, v);
			else
				plan_release(&fit);
			if (s->best_ms < full_ms)
				r->recompute_layers = hi;
		}
	}
	strbuf_release(&counts);
}

static int search_end(struct msearch *s, struct plan *best, struct target_result *r, struct err *e)
{
	sim_release(&s->sim);
	r->evals = s->evals;
	r->seconds = clock_now_s() - s->t0;
	if (s->oom) {
		if (s->have_best)
			plan_release(&s->best);
		return err_set(e, ERR_RUNTIME, "out of host memory");
	}
	/* nothing ran at all: a rule every candidate breaks (a Mamba-1 layer, say) */
	if (!s->have_best && s->evals == 0 && s->refused.cls != ERR_NONE) {
		*e = s->refused;
		return -1;
	}
	if (!s->have_best)
		return err_set(e, ERR_INFEASIBLE, "no plan Megatron-LM can run fits: 1F1B and interleaved (up to %d "
		               "stages a device) over every partition tried deadlock, run out of memory or break one "
		               "of its rules", r->max_chunks);
	*best = s->best;
	r->best_ms = s->best_ms;
	return 0;
}

int target_megatron_search(const struct model *m, const struct cluster *c, const struct target_search_opts *o,
                           struct plan *best, struct target_result *r, struct err *e)
{
	struct msearch s = { m, -1, c, o, { 0 }, clock_now_s(), 0, false, { 0 }, false, INFINITY, ERR_INIT };

	memset(r, 0, sizeof(*r));
	r->baseline_ms = INFINITY;
	search_schedules(&s, r);
	return search_end(&s, best, r, e);
}

int target_megatron_search_full(const struct model *plain, const struct cluster *c,
                                const struct target_search_opts *o, struct plan *best, struct target_result *r,
                                struct err *e)
{
	struct msearch s = { plain, 1 << 30, c, o, { 0 }, clock_now_s(), 0, false, { 0 }, false, INFINITY, ERR_INIT };

	memset(r, 0, sizeof(*r));
	r->baseline_ms = INFINITY;
	search_schedules(&s, r);
	if (s.have_best && !s.oom)
		search_block(&s, r);
	return search_end(&s, best, r, e);
}
