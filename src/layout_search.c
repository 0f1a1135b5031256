/*
 * layout_search — the tuner's outer loop over parallel layouts (see layout_search.h).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "bounds.h"
#include "clock.h"
#include "doc.h"
#include "megatron.h"
#include "layout_search.h"
#include "layout_none.h"
#include "sched.h"
#include "sim.h"

void layout_recompute_model(struct model *m, enum recompute r)
{
	for (int i = 0; i < m->nlayers && r != RECOMPUTE_NONE; i++) {
		struct layer *y = &m->layers[i];
		uint64_t in = model_layer_in_bytes(m, i);

		if (r == RECOMPUTE_FULL) {
			/* kept from F: the input; from the recomputing I to W what W needs, which a
			 * table cannot hold apart from what F keeps (act_w <= act): the larger of the
			 * two, so a split backward's deferred W parts are never under-counted (a plan's
			 * own recomputing stages are priced exactly by the simulator) */
			y->b_ms += y->f_ms;
			y->act_bytes = in > y->act_w_bytes ? in : y->act_w_bytes;
		} else {
			y->b_ms += y->core_f_ms;
			y->act_bytes -= y->core_act_bytes;
			if (y->act_w_bytes > y->act_bytes)
				y->act_w_bytes = y->act_bytes;
		}
		y->core_act_bytes = 0;
	}
}

/* Ops the simulator runs a second (about): a layout whose one baseline simulation would
 * pass the deadline is judged after those that would not. */
#define SIM_OPS_PER_S 1.5e6

/* Whether a simulation of pp stages x mbs microbatches (3 ops each), started now, would
 * end past k's give-up time. */
static bool past_give_up(const struct layout_constraints *k, int pp, int mbs)
{
	return k->give_up_s > 0 && clock_now_s() + 3.0 * pp * mbs / SIM_OPS_PER_S > k->give_up_s;
}

/* What the floor of a layout's peak per GPU needs of a replica's table: weights, routed
 * experts, tied heads and one microbatch's activations under each recompute mode, as the
 * simulator keeps them from F to B. */
struct floor_sums {
	double params, experts, tied, act[3];
};

static void floor_sums(const struct model *rm, struct floor_sums *f)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < rm->nlayers; i++) {
		const struct layer *y = &rm->layers[i];

		f->params += (double)y->param_bytes;
		f->experts += (double)y->expert_param_bytes;
		f->tied += (double)y->tied_bytes;
		f->act[RECOMPUTE_NONE] += (double)y->act_bytes;
		f->act[RECOMPUTE_SELECTIVE] += (double)(y->act_bytes - y->core_act_bytes);
		f->act[RECOMPUTE_FULL] += (double)model_layer_in_bytes(rm, i);
	}
}

/* The weights, gradients and optimizer states, and one microbatch's activations as the
 * stages keep them (rc's), spread perfectly over the pipeline devices: a floor of any
 * plan's peak per GPU at layout l. When the last layer's F of a microbatch ends, every
 * layer holds that microbatch's activations at once; above the memory no plan fits.
 * act_scale: the sequences of l's microbatch over those the sums were priced at (the
 * cost model's activation bytes are per token). */
static double floor_bytes(const struct floor_sums *f, const struct parallel *l, int rc, double act_scale)
{
	struct mem_static st;

	/* one device holds a tied head's matrix once */
	parallel_static_mem(l, (f->params - (l->pp == 1 ? f->tied : 0)) / l->pp, f->experts / l->pp, &st);
	return st.weights + st.grads + st.optimizer + act_scale * f->act[rc] / l->pp;
}

/* Megatron-LM's block method on p, a baseline whose every stage recomputes fully and fits
 * (ms its makespan): the fewest layers a stage (as --recompute-num-layers counts them) that
 * still fit, bisected (the fewer recompute, the more a stage holds); *ms becomes that plan's
 * makespan when it is faster. p is left recomputing fully. -1 only when out of host memory. */
static int judge_block(struct sim *s, struct plan *p, double *ms, struct err *e)
{
	int most = megatron_recompute_block(p, 1 << 30), lo = 0, hi = most;

	while (hi - lo > 1) {
		int n = lo + (hi - lo) / 2;
		struct sim_opts o;
		struct metrics mt;
		struct err e2 = ERR_INIT;
		int r;

		megatron_recompute_block(p, n);
		sim_opts_default(&o);
		r = sim_run(s, p, &o, &mt, &e2);
		if (r < 0 && e2.cls == ERR_RUNTIME) {
			metrics_release(&mt);
			*e = e2;
			return -1;
		}
		if (r == 0 && !mt.noom) {
			*ms = fmin(*ms, mt.makespan_ms);
			hi = n;
		} else {
			lo = n;
		}
		metrics_release(&mt);
	}
	megatron_recompute_block(p, most);
	return 0;
}

/* The fastest of compare's baselines on one replica of layout l: its makespan, whole-job
 * tokens/s and peak memory per GPU; feasible when it fits. 1 when the model cannot be
 * priced at l (a table without an architecture at another TP degree: why says so), 2 when
 * k's give-up time came before any of its baselines fit, -1 only when out of host memory. */
static int judge(struct parallel_source *src, const struct cluster *c, int mbs, const struct parallel *l,
                 enum recompute rc, struct sim *s, struct layout_choice *got, bool *feasible, struct err *why,
                 const struct layout_constraints *k, bool found, struct err *unrun, struct err *e)
{
	const volatile sig_atomic_t *stop = k->stop;
	struct model rm;
	struct cluster rcl;
	struct err e2 = ERR_INIT;
	int r = 0;

	*feasible = false;
	got->tokens_per_s = 0;
	got->makespan_ms = INFINITY;
	got->peak_bytes = INFINITY;
	if (parallel_source_replica(src, c, l, &rm, &rcl, &e2) < 0) {
		if (e2.cls == ERR_RUNTIME) {
			*e = e2;
			return -1;
		}
		*why = e2;
		return 1;
	}
	{
		/* a deep model's layouts are mostly above the floor: none simulated */
		struct floor_sums fs;
		double fl;

		floor_sums(&rm, &fs);
		fl = floor_bytes(&fs, l, rc, 1);
		if (fl > cluster_usable_bytes(&rcl)) {
			got->peak_bytes = fl;
			model_release(&rm);
			cluster_release(&rcl);
			return 0;
		}
	}
	/* every baseline compare shows, so the layout's yardstick is the one it will be judged
	 * by; when none fits, 1F1B balanced within memory (what the tuner starts from then) */
	for (int i = 0; i <= baseline_nrecipes && !(i == baseline_nrecipes && *feasible); i++) {
		enum sched_kind sk = i < baseline_nrecipes ? baseline_recipes[i].schedule : SCHED_1F1B;
		struct plan p;
		struct metrics mt;
		struct sim_opts o;
		double peak = 0;

		/* Ctrl-C: a large replica's baselines take a while each; the layout is then
		 * judged by those that ran (the first layout, until one fits: an answer) */
		if (k->schedules && !(k->schedules & (1u << sk)))
			continue;
		if (((stop && *stop) || (k->deadline_s > 0 && clock_now_s() > k->deadline_s)) && (found || *feasible))
			break;
		if (past_give_up(k, l->pp, mbs)) {
			r = *feasible ? 0 : 2;
			break;
		}
		/* each stage recomputes as the plan will: the simulator's own memory and time of it */
		if (baseline_recipe_plan(&p, &rm, &rcl, i, mbs, rc, &e2) < 0) {
			if (e2.cls == ERR_RUNTIME) {
				*e = e2;
				r = -1;
				break;
			}
			*unrun = e2;
			continue;
		}
		if (k->accept && k->accept(k->accept_arg, &p, unrun) < 0) {
			if (unrun->cls == ERR_NONE)
				err_set(unrun, ERR_INFEASIBLE, "the target runtime runs none of the baselines");
			plan_release(&p);
			continue;
		}
		sim_opts_default(&o);
		if (sim_run(s, &p, &o, &mt, &e2) == 0) {
			double ms = mt.makespan_ms;

			for (int d = 0; d < mt.ndevices; d++)
				peak = fmax(peak, (double)mt.dev[d].peak_mem_bytes);
			got->peak_bytes = fmin(got->peak_bytes, peak);
			/* Megatron-LM recomputes fewer layers where they fit: the layout's time is that */
			if (!mt.noom && rc == RECOMPUTE_FULL && k->block_recompute && judge_block(s, &p, &ms, e) < 0)
				r = -1;
			if (r == 0 && !mt.noom && ms < got->makespan_ms) {
				/* the whole job's tokens in the time the plan takes */
				got->tokens_per_s = mt.throughput_tokens_per_s * mt.makespan_ms / ms;
				got->makespan_ms = ms;
				*feasible = true;
			}
		} else if (e2.cls == ERR_RUNTIME) {
			*e = e2;
			r = -1;
		} else {
			*unrun = e2;
		}
		metrics_release(&mt);
		plan_release(&p);
		if (r < 0)
			break;
	}
	if (*feasible) {
		/* the estimate of the tuned time: the bound of the table as its stages recompute */
		layout_recompute_model(&rm, rc);
		got->bound_ms = fmin(sim_lower_bound_tight(&rm, &rcl, mbs, true), got->makespan_ms);
		got->estimate_ms = got->makespan_ms - LAYOUT_GAP_CLOSED * (got->makespan_ms - got->bound_ms);
	}
	model_release(&rm);
	cluster_release(&rcl);
	return r;
}

/* Whether two layouts run the same pipeline: they differ at most in the ZeRO stage, which
 * changes only the memory a device has left and the data-parallel sync (the same volume at
 * every stage but 3). Tuning both would spend the budget on one pipeline twice. */
static bool same_pipeline(const struct layout_pick *a, const struct layout_pick *b)
{
	return a->par.pp == b->par.pp && a->par.tp == b->par.tp && a->par.dp == b->par.dp &&
	       a->par.ep == b->par.ep && a->par.micro_batch == b->par.micro_batch &&
	       a->par.fp32_grads == b->par.fp32_grads && a->recompute == b->recompute &&
	       a->microbatches == b->microbatches;
}

/* Inserts a layout that fits into the ranked top list (the smallest estimate first; a tie
 * keeps the one judged first). Of layouts that run the same pipeline only the best
 * estimate stays, so the layouts tuned are distinct pipelines. */
static void keep_top(struct layout_choice *out, const struct layout_pick *pk)
{
	int i;

	for (int j = 0; j < out->ntop; j++) {
		if (!same_pipeline(&out->top[j], pk))
			continue;
		if (pk->estimate_ms >= out->top[j].estimate_ms)
			return;
		memmove(&out->top[j], &out->top[j + 1], (size_t)(out->ntop - j - 1) * sizeof(out->top[0]));
		out->ntop--;
		break;
	}
	i = out->ntop < LAYOUT_TOP ? out->ntop++ : LAYOUT_TOP;

	while (i > 0 && pk->estimate_ms < out->top[i - 1].estimate_ms) {
		if (i < LAYOUT_TOP)
			out->top[i] = out->top[i - 1];
		i--;
	}
	if (i < LAYOUT_TOP)
		out->top[i] = *pk;
}

/* One PP x TP x DP x EP factorisation, before ZeRO and recompute are chosen for it. */
struct group {
	struct parallel l;
	int mbs;
	double key;               /* see replica_work: the order of judging */
	int idx;                  /* enumeration order: ties */
	bool slow;                /* one baseline's simulation would pass the deadline: judged last */
	double work;              /* the replica's work per microbatch */
	double work_own;          /* the same at the table's own micro-batch */
	/* the replica table's sums at its own micro-batch (one TP and EP degree), for the
	 * floor of a layout's peak without pricing it (floor_bytes) */
	bool sums;
	struct floor_sums fl;
};

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->slow != y->slow)
		return x->slow ? 1 : -1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->idx - y->idx;
}

/* A replica's work per microbatch, over all its layers. The key of a layout is this work
 * over its pp devices stretched by a 1F1B pipeline's fill and drain ((M + pp - 1) / M):
 * a cheap stand-in for the tight bound. */
static double replica_work(const struct model *rm)
{
	double work = 0;

	for (int i = 0; i < rm->nlayers; i++)
		work += layer_total_ms(&rm->layers[i]);
	return work;
}

/* A size equal to the table's own is stored as 0 (nothing re-priced). */
int layout_mb_candidates(const struct model *m, const struct layout_constraints *k, long *out)
{
	int n = 0;

	if (k->micro_batch >= 0) {
		out[n++] = k->micro_batch == m->micro_batch_size ? 0 : k->micro_batch;
		return n;
	}
	out[n++] = 0;
	if (!model_has_source(m))
		return n;
	for (long b = 1; b <= 16; b *= 2)
		if (b != m->micro_batch_size)
			out[n++] = b;
	return n;
}

int layout_replica_microbatches(long seqs, long size, int dp)
{
	if (size <= 0 || dp <= 0 || seqs % (size * dp) || seqs / (size * dp) > OCTO_MAX_MICROBATCHES)
		return 0;
	return (int)(seqs / (size * dp));
}

/* Appends one group to *out (growing it); -1 when out of host memory. */
static int push_group(struct group **out, int *n, int *cap, const struct group *g, struct err *e)
{
	if (*n == *cap) {
		struct group *x = realloc(*out, (size_t)(*cap = *cap ? 2 * *cap : 32) * sizeof(**out));

		if (!x) {
			free(*out);
			*out = NULL;
			return err_set(e, ERR_RUNTIME, "out of host memory");
		}
		*out = x;
	}
	(*out)[*n] = *g;
	(*out)[*n].idx = *n;
	++*n;
	return 0;
}

/* Prices each group's replica work (see replica_work) and its key. The work is priced once
 * for each TP and EP degree at the table's own micro-batch and scaled by the sequences of
 * the group's (a key only orders the judging: re-pricing every size would cost more than
 * the budget of a large model; what a size really costs is judged by simulation). -1 when
 * out of host memory. */
static int price_groups(const struct model *m, struct parallel_source *src, const struct cluster *c,
                        const struct layout_constraints *k, struct group *gs, int n, struct err *e)
{
	for (int i = 0; i < n; i++) {
		struct group *g = &gs[i];
		double work = -1, own = -1;

		for (int j = 0; j < i && own < 0; j++)
			if (gs[j].l.tp == g->l.tp && gs[j].l.ep == g->l.ep) {
				own = gs[j].work_own;
				g->sums = gs[j].sums;
				g->fl = gs[j].fl;
			}
		if (own < 0) {
			struct parallel l = g->l;
			struct model rm;
			struct cluster rcl;
			struct err e2 = ERR_INIT;

			own = INFINITY;
			l.micro_batch = 0;
			if (parallel_source_replica(src, c, &l, &rm, &rcl, &e2) == 0) {
				own = replica_work(&rm);
				floor_sums(&rm, &g->fl);
				g->sums = true;
				model_release(&rm);
				cluster_release(&rcl);
			} else if (e2.cls == ERR_RUNTIME) {
				*e = e2;
				return -1;
			}
		}
		g->work_own = own;
		work = g->l.micro_batch > 0 ? own * (double)g->l.micro_batch / (double)m->micro_batch_size : own;
		g->work = work;
		g->key = work * (g->mbs + g->l.pp - 1) / g->l.pp;
		g->slow = k->deadline_s > 0 && clock_now_s() + 3.0 * g->l.pp * g->mbs / SIM_OPS_PER_S > k->deadline_s;
	}
	return 0;
}

/* Every factorisation the constraints leave open, at each micro-batch size the search tries
 * (mb_candidates: one that divides the global batch over the replicas), into *out (*n of
 * them), each with the estimate of its replica's time as key (replica_work: the tight bound
 * costs too much to compute for every one), smallest first (ties keep the enumeration
 * order). -1 when out of host memory. */
static int groups(const struct model *m, struct parallel_source *src, const struct cluster *c,
                  const struct layout_constraints *k, int min_pp, struct group **out, int *n, struct err *e)
{
	int gpn = c->gpus_per_node, cap = 0, nmb;
	long mbs[LAYOUT_MB_SIZES], seqs = (long)k->global_mb * m->micro_batch_size;
	bool moe = false;

	*out = NULL;
	*n = 0;
	nmb = layout_mb_candidates(m, k, mbs);
	for (int i = 0; i < m->nlayers; i++)
		moe |= m->layers[i].expert_param_bytes > 0;
	for (int tp = 1; tp <= gpn; tp++) {
		if (gpn % tp || (k->tp && tp != k->tp))
			continue;
		for (int dp = 1; (long)tp * dp <= c->devices; dp++) {
			/* every micro-batch size's microbatches split over dp: the sequences do; and
			 * ep only where it can be more than 1 (the loops are quadratic in the GPUs) */
			if ((k->dp && dp != k->dp) || seqs % dp)
				continue;
			for (int ep = 1; ep <= (moe || k->ep ? dp : 1); ep++) {
				struct group g = { .key = INFINITY };

				/* expert parallelism only where there are experts to shard */
				if (dp % ep || (k->ep ? ep != k->ep : ep > 1 && !moe))
					continue;
				g.l.tp = tp;
				g.l.dp = dp;
				g.l.ep = ep;
				g.l.fp32_grads = k->fp32_grads;
				g.l.pp = k->pp ? k->pp : c->devices / (tp * dp);
				/* use every GPU: a layout leaving some idle is never the search's answer */
				if (!k->pp && (long)g.l.pp * tp * dp != c->devices)
					continue;
				if (g.l.pp < min_pp || g.l.pp > m->nlayers)
					continue;
				for (int b = 0; b < nmb; b++) {
					int per = layout_replica_microbatches(seqs, mbs[b] ? mbs[b] : m->micro_batch_size, dp);

					if (per == 0)
						continue;
					g.l.micro_batch = mbs[b];
					g.mbs = per;
					if (push_group(out, n, &cap, &g, e) < 0)
						return -1;
				}
			}
		}
	}
	if (price_groups(m, src, c, k, *out, *n, e) < 0) {
		free(*out);
		*out = NULL;
		return -1;
	}
	if (*n > 1)  /* qsort of no groups would be handed a null array */
		qsort(*out, (size_t)*n, sizeof(**out), group_cmp);
	return 0;
}

/* Counts one judged layout into out; keeps it when it fits and has the best estimate. */
static void count(struct layout_choice *out, const struct layout_choice *got, bool feasible, const struct parallel *l,
                  enum recompute rc, int mbs)
{
	out->candidates++;
	out->min_peak_bytes = fmin(out->min_peak_bytes, got->peak_bytes);
	if (!feasible)
		return;
	keep_top(out, &(struct layout_pick){ .par = *l, .recompute = rc, .microbatches = mbs,
	                                     .makespan_ms = got->makespan_ms, .tokens_per_s = got->tokens_per_s,
	                                     .peak_bytes = got->peak_bytes, .bound_ms = got->bound_ms,
	                                     .estimate_ms = got->estimate_ms });
}

/* Judges one factorisation: memory first, shard only as far as needed to fit without
 * recompute (ZeRO 0, 1, 2, 3), recompute (selective, then full) only when no sharding
 * fits; ZeRO 1 is judged even when ZeRO 0 fits: the distributed optimizer moves no more
 * bytes and hides its all-gather under the next forward. 1 when interrupted, 2 when the
 * give-up time came first, -1 on error. */
static int judge_group(const struct model *m, struct parallel_source *src, const struct cluster *c,
                       const struct layout_constraints *k, const struct group *g, struct sim *s, int *valid,
                       bool *found, struct err *unpriced, struct err *unrun, struct layout_choice *out,
                       struct err *e)
{
	struct parallel l = g->l;
	bool plain = false;

	/* the ZeRO stage held fixed, if any, at this factorisation */
	int zero = k->zero >= 0 && k->zero_where_dp && l.dp == 1 ? 0 : k->zero;

	for (int z = 0; z <= 3 && !(plain && z > 1); z++) {
		if ((zero >= 0 && z != zero) || (z > 0 && l.dp == 1))
			continue;
		for (int rc = RECOMPUTE_NONE; rc <= RECOMPUTE_FULL; rc++) {
			struct layout_choice got;
			bool feasible;
			struct err ec = ERR_INIT;
			int jr;

			if ((k->recompute >= 0 && rc != k->recompute) || (rc != RECOMPUTE_NONE && model_recomputes(m)))
				continue;
			l.zero = z;
			if (parallel_check(&l, c, &ec) < 0)
				break;
			/* interrupted: the first layout that fits is still judged (an answer) */
			if (k->stop && *k->stop && *found)
				return 1;
			/* judge's floor first, from the sums (no table priced): most candidates of a
			 * model too large for its GPUs end here */
			if (g->sums) {
				double fl = floor_bytes(&g->fl, &l, rc, l.micro_batch > 0 ? (double)l.micro_batch /
				                                                        (double)m->micro_batch_size : 1);

				if (fl > cluster_usable_bytes(c)) {
					struct layout_choice none = { .makespan_ms = INFINITY, .peak_bytes = fl };

					++*valid;
					count(out, &none, false, &l, (enum recompute)rc, g->mbs);
					continue;
				}
			}
			jr = judge(src, c, g->mbs, &l, (enum recompute)rc, s, &got, &feasible, unpriced, k, *found, unrun, e);
			if (jr < 0)
				return -1;
			if (jr == 2)
				return 2;  /* the budget ran out */
			if (jr > 0)
				return 0;  /* not a layout of this model */
			++*valid;
			count(out, &got, feasible, &l, (enum recompute)rc, g->mbs);
			*found |= feasible;
			if (feasible) {
				plain = rc == RECOMPUTE_NONE;
				break;
			}
		}
	}
	return 0;
}

/* src: m's architecture, read once for every candidate (not once per candidate) */
static int search(const struct model *m, struct parallel_source *src, const struct cluster *c,
                  const struct layout_constraints *k, int min_pp, struct layout_choice *out, struct err *e)
{
	struct sim s;
	struct group *g;
	int ng, valid = 0, r = 0, i, late = 0;
	bool found = false;
	struct err unpriced = ERR_INIT, unrun = ERR_INIT;

	memset(out, 0, sizeof(*out));
	out->min_peak_bytes = INFINITY;
	out->tokens_per_s = -1;
	if (groups(m, src, c, k, min_pp, &g, &ng, e) < 0)
		return -1;
	memset(&s, 0, sizeof(s));
	for (i = 0; i < ng && r == 0; i++) {
		if (found && k->deadline_s > 0 && (clock_now_s() > k->deadline_s || g[i].slow))
			break;
		/* before any fits: up to the give-up time, each layout whose simulation ends by then */
		if (!found && k->give_up_s > 0 && clock_now_s() > k->give_up_s) {
			r = 2;
			break;
		}
		if (!found && past_give_up(k, g[i].l.pp, g[i].mbs)) {
			late++;
			continue;
		}
		r = judge_group(m, src, c, k, &g[i], &s, &valid, &found, &unpriced, &unrun, out, e);
	}
	out->skipped = ng - i + late;
	sim_release(&s);
	free(g);
	if (r < 0)
		return -1;
	if (!found && (r == 2 || late))
		return err_set(e, ERR_INPUT, "the budget ran out before a layout that fits was found (%d judged, %d not, %d "
		               "of those too large to simulate in time): give a larger budget", out->candidates,
		               out->skipped, late);
	if (r == 1 && !found)
		return err_set(e, ERR_RUNTIME, "interrupted before any layout was found that fits (%d judged)",
		               out->candidates);
	out->interrupted = r == 1;
	if (!valid && unpriced.cls != ERR_NONE)
		return layout_none_unpriced(m, c, k, &unpriced, e);
	if (!valid)
		return layout_none_degrees(m, c, k, e);
	if (!found && !isfinite(out->min_peak_bytes) && unrun.cls != ERR_NONE)
		/* no baseline ran at all: memory is not the reason, what stopped them is */
		return err_set(e, ERR_INFEASIBLE, "no layout could be judged: %d tried, none of their baselines ran "
		               "(the last: %.800s)", out->candidates, unrun.msg);
	if (!found) {
		int dec = fmt_gb_decimals(out->min_peak_bytes, cluster_usable_bytes(c), 1);

		return err_set(e, ERR_INFEASIBLE, "no layout fits: %d tried, the closest needs %.*f GB per GPU of %.*f GB "
		               "usable", out->candidates, dec, out->min_peak_bytes / 1e9, dec, cluster_usable_bytes(c) / 1e9);
	}
	out->par = out->top[0].par;
	out->recompute = out->top[0].recompute;
	out->microbatches = out->top[0].microbatches;
	out->makespan_ms = out->top[0].makespan_ms;
	out->tokens_per_s = out->top[0].tokens_per_s;
	out->peak_bytes = out->top[0].peak_bytes;
	out->bound_ms = out->top[0].bound_ms;
	out->estimate_ms = out->top[0].estimate_ms;
	return 0;
}

int layout_search(const struct model *m, const struct cluster *c, const struct layout_constraints *k,
                  struct layout_choice *out, struct err *e)
{
	struct parallel_source src;
	int r;

	parallel_source_init(&src, m);
	r = search(m, &src, c, k, 1, out, e);
	parallel_source_release(&src);
	return r;
}

/* Whether p runs within every device's memory; -1 when the simulation itself failed for
 * want of host memory. */
static int fits(struct sim *s, const struct plan *p, struct err *e)
{
	struct sim_opts o;
	struct metrics mt;
	int r;

	sim_opts_default(&o);
	if (sim_run(s, p, &o, &mt, e) < 0) {
		metrics_release(&mt);
		return e->cls == ERR_RUNTIME ? -1 : 0;
	}
	r = mt.noom == 0;
	metrics_release(&mt);
	return r;
}

int layout_relax_recompute(struct plan *p, struct err *e)
{
	return layout_relax_recompute_until(p, 0, e);
}

int layout_relax_recompute_until(struct plan *p, double deadline_s, struct err *e)
{
	struct sim s;
	int changed = 0;

	memset(&s, 0, sizeof(s));
	for (int st = p->nstages - 1; st >= 0 && !(deadline_s > 0 && clock_now_s() > deadline_s); st--) {
		int was = p->stages[st].recompute;

		for (int mode = RECOMPUTE_NONE; mode < was; mode++) {
			int r;

			p->stages[st].recompute = mode;
			r = fits(&s, p, e);
			if (r < 0) {
				p->stages[st].recompute = was;
				sim_release(&s);
				return -1;
			}
			if (r) {
				changed++;
				break;
			}
			p->stages[st].recompute = was;
		}
	}
	sim_release(&s);
	return changed;
}

int layout_baseline(const struct model *m, const struct cluster *c, const struct layout_pick *pk, struct plan *out,
                    struct metrics *mt, struct err *e)
{
	struct model rm;
	struct cluster rcl;
	struct sim s;
	bool have = false;

	if (parallel_replica(m, c, &pk->par, &rm, &rcl, e) < 0)
		return -1;
	memset(&s, 0, sizeof(s));
	/* as judge: with 1F1B balanced within memory where none fits */
	for (int i = 0; i <= baseline_nrecipes && !(i == baseline_nrecipes && have); i++) {
		struct err e2 = ERR_INIT;
		struct plan p;
		struct metrics x;
		struct sim_opts o;

		if (baseline_recipe_plan(&p, &rm, &rcl, i, pk->microbatches, pk->recompute, &e2) < 0) {
			if (e2.cls == ERR_RUNTIME)
				goto oom;
			continue;
		}
		sim_opts_default(&o);
		if (sim_run(&s, &p, &o, &x, &e2) < 0) {
			plan_release(&p);
			if (e2.cls == ERR_RUNTIME)
				goto oom;
			continue;
		}
		if (!x.noom && (!have || x.makespan_ms < mt->makespan_ms)) {
			if (have) {
				plan_release(out);
				metrics_release(mt);
			}
			*out = p;
			*mt = x;
			have = true;
		} else {
			plan_release(&p);
			metrics_release(&x);
		}
	}
	sim_release(&s);
	model_release(&rm);
	cluster_release(&rcl);
	if (!have)
		return err_set(e, ERR_INFEASIBLE, "no baseline of model '%s' fits at pp %d x tp %d x dp %d", m->name,
		               pk->par.pp, pk->par.tp, pk->par.dp);
	return 0;
oom:
	if (have) {
		plan_release(out);
		metrics_release(mt);
	}
	sim_release(&s);
	model_release(&rm);
	cluster_release(&rcl);
	return err_set(e, ERR_RUNTIME, "out of host memory");
}
