/*
 * tunecheck.h — helpers of the tuner's tests (test_tune, test_tune_moves): a xorshift
 * stream (its state rng is each test program's own), a random heterogeneous model with a
 * heavy head, one (partition, placement) simulated under the tuner's default scheduler,
 * and a tuner run under an evaluation budget and a stop flag.
 */
#ifndef OCTO_TUNECHECK_H
#define OCTO_TUNECHECK_H

#include <math.h>
#include <signal.h>
#include <string.h>

#include "sim.h"
#include "synth.h"
#include "tune.h"
#include "tune_impl.h"

static unsigned long long rng = 88172645463325252ULL;

static inline double urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static inline void random_model(struct model *m, int L)
{
	synth_model(m, L, 1, 1, 1);
	for (int i = 0; i < L; i++) {
		m->layers[i].f_ms = 0.5 + 2 * urand();
		m->layers[i].b_ms = m->layers[i].f_ms * (1 + urand());
		m->layers[i].w_ms = m->layers[i].f_ms * 0.5 * urand();
		m->layers[i].out_bytes = (uint64_t)(2e7 * urand());
		m->layers[i].act_bytes = 1000000;
	}
	m->layers[L - 1].f_ms *= 3; /* a heavy head */
}

/* Simulates one (partition, placement) under the tuner's default scheduler. */
static inline double eval_state(const struct model *m, const struct cluster *c, int mbs, struct tune_state *st)
{
	struct plan p;
	struct sim s;
	struct sim_opts o;
	struct metrics mt;
	struct err e = ERR_INIT;
	double ms = INFINITY;

	memset(&s, 0, sizeof(s));
	if (tune_state_plan(m, c, mbs, st, &p, &e) == 0) {
		sim_opts_default(&o);
		if (sim_run(&s, &p, &o, &mt, &e) == 0 && !mt.noom)
			ms = mt.makespan_ms;
		metrics_release(&mt);
		plan_release(&p);
	}
	sim_release(&s);
	return ms;
}

/* Runs the tuner with a budget of evals (0: none) and a stop flag; returns the time. */
static inline double run_budget(const struct model *m, const struct cluster *c, int mbs, long evals,
                                const volatile sig_atomic_t *stop, struct tuner **keep)
{
	struct tune_opts o;
	struct tuner *t;
	const struct tune_step *st;
	struct plan p;
	struct metrics mt;
	struct err e = ERR_INIT;
	double ms = INFINITY;

	tune_opts_default(&o);
	o.microbatches = mbs;
	o.seed = 7;
	o.max_evals = evals;
	o.stop = stop;
	if (tune_new(&t, m, c, &o, &e) < 0)
		return INFINITY;
	while (tune_step(t, &st, &e) > 0)
		;
	if (tune_result(t, &p, &mt, &e) == 0) {
		ms = mt.noom ? INFINITY : mt.makespan_ms;
		plan_release(&p);
	}
	metrics_release(&mt);
	*keep = t;
	return ms;
}

#endif
