/*
 * test_membalance — baseline_balance_memory against exhaustive search: on gemma3-12b over
 * 4 devices (1F1B, 8 microbatches), for device memories from too small for any partition
 * to roomy, and with and without full recompute, every partition of the 50 layers into 4
 * stages is simulated. Where some partition fits, the memory partition must fit and its
 * largest stage work must be the least of those that fit; where none fits, its peak must
 * be the least of all. The simulator, not the module's own pricing, is the judge.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "baseline.h"
#include "sim.h"
#include "samples.h"
#include "../tap.h"

#define S 4

/* Largest stage work (F + B + W + redone forward, speed 1) of p's partition. */
static double max_work(const struct plan *p)
{
	double worst = 0;

	for (int s = 0; s < p->nstages; s++) {
		double w = 0;

		for (int l = p->stages[s].first; l <= p->stages[s].last; l++) {
			const struct layer *y = &p->model.layers[l];

			w += y->f_ms + y->b_ms + y->w_ms + (p->stages[s].recompute == RECOMPUTE_FULL ? y->f_ms : 0);
		}
		worst = fmax(worst, w);
	}
	return worst;
}

/* Simulates p: its largest device peak, and whether every device fits. */
static double peak_of(struct sim *sm, const struct plan *p, bool *fits)
{
	struct sim_opts o;
	struct metrics mt;
	struct err e = ERR_INIT;
	double peak = INFINITY;

	sim_opts_default(&o);
	*fits = false;
	if (sim_run(sm, p, &o, &mt, &e) == 0) {
		peak = 0;
		for (int d = 0; d < mt.ndevices; d++)
			peak = fmax(peak, (double)mt.dev[d].peak_mem_bytes);
		*fits = !mt.noom;
	}
	metrics_release(&mt);
	return peak;
}

static void set_cuts(struct plan *p, const int *cut)
{
	for (int s = 0; s < S; s++) {
		p->stages[s].first = cut[s];
		p->stages[s].last = cut[s + 1] - 1;
	}
}

/* Every partition: the least peak, and the least largest stage work of those that fit. */
static void exhaust(struct sim *sm, struct plan *p, double *least_peak, double *least_work)
{
	int L = p->model.nlayers, cut[S + 1] = { 0, 0, 0, 0, L };

	*least_peak = *least_work = INFINITY;
	for (cut[1] = 1; cut[1] < L - 2; cut[1]++)
		for (cut[2] = cut[1] + 1; cut[2] < L - 1; cut[2]++)
			for (cut[3] = cut[2] + 1; cut[3] < L; cut[3]++) {
				bool fits;
				double pk;

				set_cuts(p, cut);
				pk = peak_of(sm, p, &fits);
				*least_peak = fmin(*least_peak, pk);
				if (fits)
					*least_work = fmin(*least_work, max_work(p));
			}
}

int main(void)
{
	static const double gb[] = { 40, 52, 56, 60, 70, 90 };
	struct model m;
	struct cluster c;
	struct sim sm = { 0 };
	struct err e = ERR_INIT;
	int some_fit = 0, none_fit = 0;

	if (load_sample("gemma3-12b", "4xH200", &m, &c) < 0)
		return tap_done();
	for (size_t i = 0; i < sizeof(gb) / sizeof(gb[0]); i++)
		for (int rc = RECOMPUTE_NONE; rc <= RECOMPUTE_FULL; rc += RECOMPUTE_FULL) {
			struct baseline_spec spec = { SCHED_1F1B, 8, 0, "uniform", NULL, 0, 0, NULL };
			struct plan p;
			double least_peak, least_work, pk;
			bool fits;

			c.mem_bytes = (uint64_t)(gb[i] * 1e9 / (1 - c.mem_headroom));
			if (baseline_plan(&p, &m, NULL, &c, NULL, &spec, &e) < 0) {
				ok(0, "1f1b builds: %s", e.msg);
				continue;
			}
			plan_set_recompute(&p, (enum recompute)rc);
			exhaust(&sm, &p, &least_peak, &least_work);
			ok(baseline_balance_memory(&p, &e) == 0, "%.0f GB, recompute %d: balanced within memory (%s)", gb[i], rc,
			   e.msg);
			pk = peak_of(&sm, &p, &fits);
			if (isfinite(least_work)) {
				some_fit++;
				ok(fits, "%.0f GB, recompute %d: some partition fits, and so does this one (peak %.2f GB)", gb[i], rc,
				   pk / 1e9);
				is_dbl(max_work(&p), least_work, 1e-9 * least_work,
				       "%.0f GB, recompute %d: its largest stage is the least of those that fit", gb[i], rc);
			} else {
				none_fit++;
				ok(!fits, "%.0f GB, recompute %d: nothing fits", gb[i], rc);
				is_dbl(pk, least_peak, 1e-6 * least_peak, "%.0f GB, recompute %d: the least peak of all (%.2f GB)", gb[i],
				       rc, least_peak / 1e9);
			}
			plan_release(&p);
		}
	ok(some_fit >= 3 && none_fit >= 3, "the memories cover both cases (%d fit, %d do not)", some_fit, none_fit);
	{
		/* two stages on one device: refused, with the reason */
		int place[2 * S] = { 0, 1, 2, 3, 3, 2, 1, 0 };
		struct baseline_spec spec = { SCHED_ADAPTIVE, 8, 2, "uniform", place, 2 * S, 0, NULL };
		struct plan p;

		c.mem_bytes = (uint64_t)141e9;
		if (baseline_plan(&p, &m, NULL, &c, NULL, &spec, &e) == 0) {
			ok(baseline_balance_memory(&p, &e) < 0 && e.cls == ERR_INPUT && strstr(e.msg, "one stage a device"),
			   "a device with two stages is refused: %s", e.msg);
			plan_release(&p);
		} else {
			ok(0, "the V builds: %s", e.msg);
		}
	}
	sim_release(&sm);
	model_release(&m);
	cluster_release(&c);
	return tap_done();
}
