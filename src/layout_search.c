/*
 * layout_search — the tuner's outer loop over parallel layouts (see layout_search.h).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "baseline.h"
#include "layout_search.h"
#include "sched.h"
#include "sim.h"

void layout_recompute_model(struct model *m, enum recompute r)
{
	for (int i = 0; i < m->nlayers && r != RECOMPUTE_NONE; i++) {
		struct layer *y = &m->layers[i];
		uint64_t in = y->in_bytes ? y->in_bytes : i > 0 ? m->layers[i - 1].out_bytes : 0;

		if (r == RECOMPUTE_FULL) {
			y->b_ms += y->f_ms;
			/* kept from F: the input; from I to W the recomputed part W needs */
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

/* The fastest baseline on one replica of layout l: its makespan, whole-job tokens/s and
 * peak memory per GPU; feasible when it fits. -1 only when out of host memory. */
static int judge(const struct model *m, const struct cluster *c, int mbs, const struct parallel *l,
                 enum recompute rc, struct sim *s, struct layout_choice *got, bool *feasible, struct err *e)
{
	static const struct { enum sched_kind k; const char *part; } tries[] = {
		{ SCHED_1F1B, "megatron" }, { SCHED_1F1B, "balanced" }, { SCHED_ZBH1, "megatron" }, { SCHED_ZBH1, "balanced" },
	};
	struct model rm;
	struct cluster rcl;
	struct err e2 = ERR_INIT;
	int r = 0;

	*feasible = false;
	got->makespan_ms = INFINITY;
	got->peak_bytes = INFINITY;
	if (parallel_replica(m, c, l, &rm, &rcl, &e2) < 0)
		return e2.cls == ERR_RUNTIME ? (*e = e2, -1) : 0;
	layout_recompute_model(&rm, rc);
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		struct baseline_spec spec = { tries[i].k, mbs, 0, tries[i].part, NULL, 0, 0, NULL };
		struct plan p;
		struct metrics mt;
		struct sim_opts o;
		double peak = 0;

		if (baseline_plan(&p, &rm, NULL, &rcl, NULL, &spec, &e2) < 0) {
			if (e2.cls == ERR_RUNTIME) {
				*e = e2;
				r = -1;
				break;
			}
			continue;
		}
		sim_opts_default(&o);
		if (sim_run(s, &p, &o, &mt, &e2) == 0) {
			for (int d = 0; d < mt.ndevices; d++)
				peak = fmax(peak, (double)mt.dev[d].peak_mem_bytes);
			got->peak_bytes = fmin(got->peak_bytes, peak);
			if (!mt.noom && mt.makespan_ms < got->makespan_ms) {
				got->makespan_ms = mt.makespan_ms;
				got->tokens_per_s = mt.throughput_tokens_per_s;
				*feasible = true;
			}
		} else if (e2.cls == ERR_RUNTIME) {
			*e = e2;
			r = -1;
		}
		metrics_release(&mt);
		plan_release(&p);
		if (r < 0)
			break;
	}
	model_release(&rm);
	cluster_release(&rcl);
	return r;
}

static int search(const struct model *m, const struct cluster *c, const struct layout_constraints *k,
                  int min_pp, struct layout_choice *out, struct err *e)
{
	struct sim s;
	int gpn = c->gpus_per_node, valid = 0;
	bool found = false, moe = false;

	for (int i = 0; i < m->nlayers; i++)
		moe |= m->layers[i].expert_param_bytes > 0;

	memset(&s, 0, sizeof(s));
	memset(out, 0, sizeof(*out));
	out->min_peak_bytes = INFINITY;
	out->tokens_per_s = -1;
	for (int tp = 1; tp <= gpn; tp++) {
		if (gpn % tp || (k->tp && tp != k->tp))
			continue;
		for (int dp = 1; (long)tp * dp <= c->devices; dp++) {
			int mbs = k->global_mb / dp;

			if ((k->dp && dp != k->dp) || k->global_mb % dp)
				continue;
			for (int ep = 1; ep <= dp; ep++) {
				struct parallel l;
				bool plain = false;

				/* expert parallelism only where there are experts to shard */
				if (dp % ep || (k->ep ? ep != k->ep : ep > 1 && !moe))
					continue;
				l.tp = tp;
				l.dp = dp;
				l.ep = ep;
				l.pp = k->pp ? k->pp : c->devices / (tp * dp);
				/* use every GPU: a layout leaving some idle is never the search's answer */
				if (!k->pp && (long)l.pp * tp * dp != c->devices)
					continue;
				if (l.pp < min_pp || l.pp > m->nlayers)
					continue;
				/* memory first: shard only as far as needed to fit without recompute (ZeRO
				 * 0, 1, 2, 3), recompute (selective, then full) only when no sharding fits */
				for (int z = 0; z <= 3 && !plain; z++) {
					if ((k->zero >= 0 && z != k->zero) || (z > 0 && dp == 1))
						continue;
					for (int rc = RECOMPUTE_NONE; rc <= RECOMPUTE_FULL; rc++) {
						struct layout_choice got;
						bool feasible;
						struct err ec = ERR_INIT;

						if (k->recompute >= 0 && rc != k->recompute)
							continue;
						l.zero = z;
						if (parallel_check(&l, c, &ec) < 0)
							break;
						valid++;
						if (judge(m, c, mbs, &l, (enum recompute)rc, &s, &got, &feasible, e) < 0) {
							sim_release(&s);
							return -1;
						}
						out->candidates++;
						out->min_peak_bytes = fmin(out->min_peak_bytes, got.peak_bytes);
						if (feasible && got.tokens_per_s > out->tokens_per_s) {
							out->par = l;
							out->recompute = (enum recompute)rc;
							out->microbatches = mbs;
							out->makespan_ms = got.makespan_ms;
							out->tokens_per_s = got.tokens_per_s;
							out->peak_bytes = got.peak_bytes;
							found = true;
						}
						if (feasible) {
							plain = rc == RECOMPUTE_NONE;
							break;
						}
					}
				}
			}
		}
	}
	sim_release(&s);
	if (!valid)
		return err_set(e, ERR_INPUT, "no parallel layout of cluster '%s' (%d GPUs, %d per node) meets the "
		               "given degrees", c->name, c->devices, gpn);
	if (!found)
		return err_set(e, ERR_INFEASIBLE, "no layout fits: %d tried, the smallest peak memory per GPU was %.1f GB "
		               "of %.1f GB usable", out->candidates, out->min_peak_bytes / 1e9, cluster_usable_bytes(c) / 1e9);
	return 0;
}

int layout_search(const struct model *m, const struct cluster *c, const struct layout_constraints *k,
                  struct layout_choice *out, struct err *e)
{
	int r;

	/* a pipeline tool's search: two stages or more, and one only when nothing else fits
	 * (tensor and data parallelism alone) */
	if (k->pp)
		return search(m, c, k, 1, out, e);
	r = search(m, c, k, 2, out, e);
	if (r < 0 && e->cls != ERR_RUNTIME) {
		struct layout_choice first = *out;

		*e = (struct err)ERR_INIT;
		r = search(m, c, k, 1, out, e);
		out->candidates += first.candidates;
		out->min_peak_bytes = fmin(out->min_peak_bytes, first.min_peak_bytes);
	}
	return r;
}
