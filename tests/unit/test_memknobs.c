/*
 * test_memknobs — the tuner's knobs that trade memory where it binds, against plans that
 * fit and in closed form.
 *
 * The recompute moves (tune_sched.rc): where memory binds they find a plan at least 5%
 * faster whose first stages recompute, that fits and respects the memory-aware bound;
 * where it does not bind they are not offered (the same plan as without). Which stages the
 * ranked recompute marks, and how many microbatches a share of the depth lets the first
 * stage hold (tune_sched.depth_q). The room a device keeps for its later stages
 * (tune_sched.reserve, sim_policy.reserve) on a V of two devices: without it the early
 * stage fills the device and the late one is admitted past capacity; with room for one or
 * two, the early stage holds one or two fewer. Where memory binds the tuner's starts keep
 * that room, and every step's knobs survive the steps file.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "sim.h"
#include "steps.h"
#include "synth.h"
#include "tune.h"
#include "../tap.h"

#define GB 1000000000ULL

/* Eight equal layers of 10 GB activations (1 GB of them for W) on 4 devices with room for
 * 2.5 of them besides the weights: memory binds. */
static void binding_instance(struct model *md, struct cluster *cl)
{
	synth_model(md, 8, 1, 1, 1);
	for (int l = 0; l < 8; l++) {
		md->layers[l].act_bytes = 10 * GB;
		md->layers[l].act_w_bytes = 1 * GB;
		md->layers[l].out_bytes = GB / 10;
		md->layers[l].param_bytes = GB / 10;
	}
	synth_cluster(cl, 4, 4, 0, 0);
	cl->mem_headroom = 0;
	cl->mem_bytes = (uint64_t)(synth_static_bytes(md, cl) / 2 + 25 * GB);
}

/* The tuner of md on cl at M, run to its end within evals simulations, recompute moves on
 * or off; NULL when it cannot start. *start_rc (unless NULL): whether the search's start
 * (step 0) already recomputed some stages. */
static struct tuner *run_tuner(const struct model *md, const struct cluster *cl, int M, long evals, bool moves,
                               bool *start_rc)
{
	struct tune_opts o;
	struct tuner *t;
	const struct tune_step *st, *all;
	struct err e = ERR_INIT;

	tune_opts_default(&o);
	o.microbatches = M;
	o.max_evals = evals;
	o.recompute_moves = moves;
	if (tune_new(&t, md, cl, &o, &e) < 0)
		return NULL;
	if (start_rc)
		*start_rc = tune_steps(t, &all) > 0 && all[0].state.sched.rc > 0;
	while (tune_step(t, &st, &e) > 0)
		;
	return t;
}

/* The time of the plan the tuner makes (run_tuner at 1500 simulations; the plan in *p, its
 * metrics in *mt), or INFINITY. */
static double tuned(const struct model *md, const struct cluster *cl, int M, bool moves, struct plan *p,
                    struct metrics *mt, bool *start_rc)
{
	struct tuner *t = run_tuner(md, cl, M, 1500, moves, start_rc);
	struct err e = ERR_INIT;
	double r = INFINITY;

	if (t && tune_result(t, p, mt, &e) == 0)
		r = mt->makespan_ms;
	tune_free(t);
	return r;
}

/* The binding instance: a stage of two layers holds one microbatch at a time unless it
 * recomputes. The tuner that may
 * make early stages recompute finds a faster plan; every stage it marks is one of the
 * first ones, the plan fits, and it is no faster than the memory-aware bound. */
static void test_tuner_recompute(void)
{
	struct model md;
	struct cluster cl;
	struct plan p0, p1;
	struct metrics m0, m1;
	double t0, t1, lb;
	int nrc = 0, prefix = 1;
	bool rc0;

	binding_instance(&md, &cl);
	t0 = tuned(&md, &cl, 16, false, &p0, &m0, &rc0);
	t1 = tuned(&md, &cl, 16, true, &p1, &m1, NULL);
	lb = sim_lower_bound_memory(&md, &cl, 16, true);
	printf("# without recompute moves %.2f ms, with %.2f ms; tight bound %.2f, memory-aware %.2f\n", t0, t1,
	       sim_lower_bound_tight(&md, &cl, 16, true), lb);
	ok(isfinite(t0) && isfinite(t1), "both tune a plan");
	ok(t1 < t0 * 0.95, "recomputing early stages is at least 5%% faster (%.2f vs %.2f ms)", t1, t0);
	for (int s = 0; s < p0.nstages; s++)
		nrc += p0.stages[s].recompute != RECOMPUTE_NONE;
	is_int(nrc, 0, "without the moves no stage recomputes");
	nrc = 0;
	for (int s = 0; s < p1.nstages; s++) {
		nrc += p1.stages[s].recompute == RECOMPUTE_FULL;
		prefix &= s == 0 || p1.stages[s].recompute <= p1.stages[s - 1].recompute;
	}
	ok(nrc > 0 && prefix, "with them the first %d of %d stages recompute fully", nrc, p1.nstages);
	is_int(m1.noom, 0, "and the plan fits");
	ok(t1 >= lb * (1 - 1e-9), "no faster than the memory-aware bound (%.2f)", lb);
	ok(!rc0, "without the moves the search does not start from a plan that recomputes");
	plan_release(&p0);
	plan_release(&p1);
	metrics_release(&m0);
	metrics_release(&m1);
	/* memory that does not bind: no moves are offered, the plans are the same */
	cl.mem_bytes = 1000 * GB;
	t0 = tuned(&md, &cl, 16, false, &p0, &m0, NULL);
	t1 = tuned(&md, &cl, 16, true, &p1, &m1, NULL);
	is_dbl(t1, t0, 0, "where memory does not bind, the moves change nothing");
	plan_release(&p0);
	plan_release(&p1);
	metrics_release(&m0);
	metrics_release(&m1);
	model_release(&md);
	cluster_release(&cl);
}

/* The largest number of stage st's microbatches past F and before their I along device
 * d's order in p. */
static int max_in_flight(const struct plan *p, int d, int st)
{
	int now = 0, most = 0;

	for (int k = p->order_start[d]; k < p->order_start[d + 1]; k++) {
		const struct action *a = &p->order[k];

		if (a->stage != st)
			continue;
		now += a->kind == OP_F ? 1 : a->kind == OP_I ? -1 : 0;
		if (now > most)
			most = now;
	}
	return most;
}

/* The memory knobs' closed forms. Ranked recompute marks the stages where full recompute
 * frees the most memory for the forward it redoes, times the microbatches a stage holds
 * (its 1F1B depth): four one-layer stages with activations 10, 1, 10, 10 GB, forwards 1,
 * 10, 1, 1 ms and inputs of 0.1 GB (none for the first) score 10 x 4 / 1, 0.9 x 3 / 10,
 * 9.9 x 2 / 1 and 9.9 x 1 / 1: two ranked stages are the first and the third, where the
 * earliest two are the first and the second. A share of the depth caps the microbatches
 * in flight: the first of 4 stages on 4 devices holds up to 4 of 8, with half its depth 2,
 * with a quarter 1. */
static void test_memory_knobs(void)
{
	struct model md;
	struct cluster cl;
	struct tune_state s = { 0 };
	struct plan p;
	struct err e = ERR_INIT;
	static const double act_gb[4] = { 10, 1, 10, 10 };
	static const int want_ranked[4] = { 1, 0, 1, 0 }, want_first[4] = { 1, 1, 0, 0 };
	static const int depth_q[3] = { 0, 2, 1 }, want_depth[3] = { 4, 2, 1 };

	synth_model(&md, 4, 1, 1, 1);
	md.layers[1].f_ms = 10;
	for (int l = 0; l < 4; l++) {
		md.layers[l].act_bytes = (uint64_t)(act_gb[l] * GB);
		md.layers[l].out_bytes = GB / 10;
	}
	synth_cluster(&cl, 4, 4, 0, 0);
	cl.mem_bytes = 1000 * GB;
	s.nstages = 4;
	s.first = malloc(5 * sizeof(int));
	s.device = malloc(4 * sizeof(int));
	for (int i = 0; i <= 4; i++)
		s.first[i] = i;
	for (int i = 0; i < 4; i++)
		s.device[i] = i;
	s.sched.alternate = true;
	s.sched.rc = 2;
	for (int ranked = 0; ranked < 2; ranked++) {
		int same = 1;

		s.sched.rc_ranked = ranked;
		if (tune_state_plan(&md, &cl, 8, &s, &p, &e) < 0) {
			ok(0, "the state makes a plan (%s)", e.msg);
			continue;
		}
		for (int st = 0; st < 4; st++)
			same &= (p.stages[st].recompute == RECOMPUTE_FULL) == (ranked ? want_ranked : want_first)[st];
		ok(same, ranked ? "two ranked stages recompute: the first and the third"
		                : "two earliest stages recompute: the first and the second");
		plan_release(&p);
	}
	s.sched.rc = 0;
	for (int i = 0; i < 3; i++) {
		s.sched.depth_q = depth_q[i];
		if (tune_state_plan(&md, &cl, 8, &s, &p, &e) < 0) {
			ok(0, "the state makes a plan (%s)", e.msg);
			continue;
		}
		is_int(max_in_flight(&p, 0, 0), want_depth[i], "depth quarters %d: the first stage holds up to %d",
		       depth_q[i], want_depth[i]);
		plan_release(&p);
	}
	tune_state_release(&s);
	model_release(&md);
	cluster_release(&cl);
}

/* The room a device keeps for its later stages (tune_sched.reserve), in closed form: a V
 * over two devices (stages 0 and 2 on device 0, 1 on device 1), one layer each of 1 GB of
 * activations (stage 1's forward 10 ms, the rest 1), 4 GB of room on device 0 and memory
 * alone capping the warm-up. Without
 * the reserve stage 0 takes all 4 GB and stage 2, holding nothing, is admitted past
 * capacity; keeping room for one microbatch of stage 2 leaves stage 0 three, which fits;
 * for two, stage 0 two. */
static void test_reserve(void)
{
	struct model md;
	struct cluster cl;
	struct tune_state s = { 0 };
	static const int want[3] = { 4, 3, 2 };

	synth_model(&md, 3, 1, 1, 1);
	for (int l = 0; l < 3; l++) {
		md.layers[l].act_bytes = md.layers[l].act_w_bytes = GB;
		md.layers[l].param_bytes = 0;
	}
	md.layers[1].f_ms = 10; /* device 0 has the time to run ahead before stage 2's first F */
	synth_cluster(&cl, 2, 2, 0, 0);
	cl.mem_headroom = 0;
	cl.mem_bytes = 4 * GB;
	s.nstages = 3;
	s.first = malloc(4 * sizeof(int));
	s.device = malloc(3 * sizeof(int));
	for (int i = 0; i <= 3; i++)
		s.first[i] = i;
	s.device[0] = s.device[2] = 0;
	s.device[1] = 1;
	s.sched.cap_extra = 8;
	for (int r = 0; r < 3; r++) {
		struct plan p;
		struct metrics m;
		struct sim sim = { 0 };
		struct sim_opts o;
		struct err e = ERR_INIT;

		s.sched.reserve = r;
		if (tune_state_plan(&md, &cl, 8, &s, &p, &e) < 0) {
			ok(0, "the state makes a plan (%s)", e.msg);
			continue;
		}
		sim_opts_default(&o);
		if (sim_run(&sim, &p, &o, &m, &e) < 0) {
			ok(0, "the plan runs (%s)", e.msg);
		} else {
			is_int(max_in_flight(&p, 0, 0), want[r], "room for %d of stage 2: stage 0 holds up to %d", r, want[r]);
			ok((m.noom == 0) == (r > 0), "room for %d of stage 2: %s", r, r > 0 ? "fits" : "over capacity");
			metrics_release(&m);
		}
		sim_release(&sim);
		plan_release(&p);
	}
	tune_state_release(&s);
	model_release(&md);
	cluster_release(&cl);
}

/* Where memory binds the tuner's starts keep room for later stages (reserve 1 or 2), and a
 * step's knobs survive the steps file: every state read back equals the one recorded. */
static void test_reserve_steps(void)
{
	struct model md;
	struct cluster cl;
	struct tuner *t;
	const struct tune_step *all;
	struct err e = ERR_INIT;
	struct steps back = { 0 };
	cJSON *js;
	int n, same = 0, with_reserve = 0;

	binding_instance(&md, &cl);
	if (!(t = run_tuner(&md, &cl, 16, 600, true, NULL))) {
		ok(0, "the tuner starts");
		return;
	}
	n = tune_steps(t, &all);
	js = tune_steps_to_json(t);
	if (!js || steps_from_json(&back, js, "steps", &md, &cl, 16, &e) < 0) {
		ok(0, "the steps read back (%s)", e.msg);
	} else {
		for (int i = 0; i < n && i < back.n; i++) {
			same += tune_state_equal(&all[i].state, &back.steps[i].state);
			with_reserve += all[i].state.sched.reserve > 0;
		}
		ok(all[0].state.sched.reserve > 0, "memory binds: the start keeps room for later stages (%d)",
		   all[0].state.sched.reserve);
		ok(back.n == n && same == n, "every step's state reads back the same (%d of %d, %d keep room)", same, n,
		   with_reserve);
	}
	steps_release(&back);
	cJSON_Delete(js);
	tune_free(t);
	model_release(&md);
	cluster_release(&cl);
}

int main(void)
{
	test_tuner_recompute();
	test_memory_knobs();
	test_reserve();
	test_reserve_steps();
	return tap_done();
}
