/*
 * test_tune — the tuner against exhaustive search on tiny instances (every partition and
 * placement under the same list scheduler), never slower than any baseline on random
 * small instances, deterministic for a seed, and its step record replays exactly; the
 * anytime search (an evaluation budget, perturbations past convergence, a stop flag),
 * the state's bound, and the quality on profiled models. The tuner's moves, starts and
 * wait estimate are in test_tune_moves; the helpers both share in tunecheck.h.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "baseline.h"
#include "exec/emu.h"
#include "exec/protocol.h"
#include "json.h"
#include "sim.h"
#include "steps.h"
#include "synth.h"
#include "tune.h"
#include "tune_impl.h"
#include "tunecheck.h"
#include "../tap.h"

/* Best over every composition of L layers into S stages and every placement with at most
 * two stages per device and every device used. */
static double exhaustive(const struct model *m, const struct cluster *c, int mbs, long *count)
{
	int L = m->nlayers, D = c->devices;
	double best = INFINITY;

	for (int S = D; S <= 2 * D && S <= L; S++) {
		struct tune_state st = { 0 };
		long nplace = 1;

		st.nstages = S;
		st.first = calloc((size_t)S + 1, sizeof(int));
		st.device = calloc((size_t)S, sizeof(int));
		st.sched.alternate = true;
		st.sched.cap_extra = S;
		for (int i = 0; i < S; i++)
			nplace *= D;
		/* compositions: choose S-1 cut points among L-1 gaps (bitmask) */
		for (unsigned mask = 0; mask < (1u << (L - 1)); mask++) {
			int k = 0;

			if (__builtin_popcount(mask) != S - 1)
				continue;
			st.first[0] = 0;
			for (int g = 0; g < L - 1; g++)
				if (mask & (1u << g))
					st.first[++k] = g + 1;
			st.first[S] = L;
			for (long pl = 0; pl < nplace; pl++) {
				long x = pl;
				int per[8] = { 0 };
				bool fine = true;

				for (int i = 0; i < S; i++) {
					st.device[i] = (int)(x % D);
					x /= D;
					per[st.device[i]]++;
				}
				for (int d = 0; d < D; d++)
					fine = fine && per[d] >= 1 && per[d] <= 2;
				if (!fine)
					continue;
				(*count)++;
				{
					double ms = eval_state(m, c, mbs, &st);

					if (ms < best)
						best = ms;
				}
			}
		}
		tune_state_release(&st);
	}
	return best;
}

static double run_tuner(const struct model *m, const struct cluster *c, int mbs, unsigned seed,
                        struct plan *out, struct tuner **keep)
{
	struct tune_opts o;
	struct tuner *t;
	const struct tune_step *st;
	struct metrics mt;
	struct err e = ERR_INIT;
	double ms = INFINITY;

	tune_opts_default(&o);
	o.microbatches = mbs;
	o.seed = seed;
	if (tune_new(&t, m, c, &o, &e) < 0)
		return INFINITY;
	while (tune_step(t, &st, &e) > 0)
		;
	if (tune_result(t, out, &mt, &e) == 0)
		ms = mt.noom ? INFINITY : mt.makespan_ms;
	metrics_release(&mt);
	if (keep)
		*keep = t;
	else
		tune_free(t);
	return ms;
}

static void test_exhaustive(void)
{
	for (int inst = 0; inst < 4; inst++) {
		struct model m;
		struct cluster c;
		struct plan p;
		long count = 0;
		int D = 2 + inst % 2;
		double best, tuned;

		random_model(&m, 6);
		synth_cluster(&c, D, D, 100, 5);
		best = exhaustive(&m, &c, 4, &count);
		tuned = run_tuner(&m, &c, 4, 1, &p, NULL);
		ok(tuned <= best * 1.02, "tiny instance %d (%d GPUs): tuned %.3f ms, exhaustive best %.3f ms over %ld "
		   "partitions x placements", inst, D, tuned, best, count);
		plan_release(&p);
		model_release(&m);
		cluster_release(&c);
	}
}

static double baseline_best(const struct model *m, const struct cluster *c, int mbs)
{
	static const char *const parts[] = { "uniform", "balanced" };
	double best = INFINITY;
	struct sim s;

	memset(&s, 0, sizeof(s));
	for (int k = 0; k < SCHED_COUNT; k++)
		for (int pi = 0; pi < 2; pi++) {
			struct baseline_spec spec = { (enum sched_kind)k, mbs, 0, parts[pi], NULL, 0, 0, NULL };
			struct plan p;
			struct metrics mt;
			struct sim_opts o;
			struct err e = ERR_INIT;

			if (baseline_plan(&p, m, NULL, c, NULL, &spec, &e) < 0)
				continue;
			sim_opts_default(&o);
			if (sim_run(&s, &p, &o, &mt, &e) == 0 && !mt.noom && mt.makespan_ms < best)
				best = mt.makespan_ms;
			metrics_release(&mt);
			plan_release(&p);
		}
	sim_release(&s);
	return best;
}

static void test_random_properties(void)
{
	int worse = 0, invalid = 0, runs = 0;

	for (int inst = 0; inst < 12; inst++) {
		struct model m;
		struct cluster c;
		struct plan p, back;
		struct err e = ERR_INIT;
		int D = 2 + inst % 3, L = D * 2 + (int)(urand() * 8), mbs = D * (1 + inst % 3);
		double tuned, base;
		cJSON *root;

		random_model(&m, L);
		synth_cluster(&c, D, 2, 50 + 400 * urand(), 10 * urand());
		tuned = run_tuner(&m, &c, mbs, 7, &p, NULL);
		base = baseline_best(&m, &c, mbs);
		runs++;
		if (!(tuned <= base * (1 + 1e-9)))
			worse++;
		/* the written plan is a valid plan that runs */
		root = plan_to_json(&p, true);
		if (!root || plan_from_json(&back, root, "tuned", NULL, &e) < 0) {
			invalid++;
		} else {
			struct sim s;
			struct sim_opts o;
			struct metrics mt;

			memset(&s, 0, sizeof(s));
			sim_opts_default(&o);
			if (sim_run(&s, &back, &o, &mt, &e) < 0 || mt.noom || fabs(mt.makespan_ms - tuned) > 1e-6)
				invalid++;
			metrics_release(&mt);
			sim_release(&s);
			plan_release(&back);
		}
		cJSON_Delete(root);
		plan_release(&p);
		model_release(&m);
		cluster_release(&c);
	}
	is_int(worse, 0, "on %d random instances the tuned plan is never slower than the best baseline", runs);
	is_int(invalid, 0, "every tuned plan is valid, runs without deadlock, fits, and simulates as reported");
}

static void test_replay_and_seed(void)
{
	struct model m;
	struct cluster c;
	struct plan p1, p2;
	struct tuner *t;
	const struct tune_step *steps;
	struct tune_state st;
	int n, bad = 0;
	double a, b;

	random_model(&m, 16);
	synth_cluster(&c, 4, 4, 100, 5);
	a = run_tuner(&m, &c, 8, 3, &p1, &t);
	b = run_tuner(&m, &c, 8, 3, &p2, NULL);
	is_dbl(a, b, 0, "the same seed gives the same tuned iteration time");
	n = tune_steps(t, &steps);
	ok(n >= 1 && steps[0].kind == MOVE_START, "the record starts with the start state (%d steps)", n);
	ok(tune_state_copy(&st, &steps[0].state) == 0, "copy the start state");
	for (int i = 1; i < n; i++) {
		if (tune_apply_move(&st, &steps[i], m.nlayers) < 0 || !tune_state_equal(&st, &steps[i].state))
			bad++;
		if (steps[i].phase != PHASE_START && steps[i].after_ms > steps[i].before_ms * (1 + 1e-9))
			bad++; /* restarts from another structure may be slower; moves never are (a
			        * move that keeps the time lets the devices finish earlier) */
	}
	is_int(bad, 0, "applying each recorded move gives the recorded state, and no step is slower");
	{
		/* the record as JSON reads back as the same states, explicit orders included */
		cJSON *root = tune_steps_to_json(t);
		struct steps rd;
		struct err e = ERR_INIT;
		int same = 0, ordered = 0;

		ok(root && steps_from_json(&rd, root, "record", &m, &c, 8, &e) == 0 && rd.n == n,
		   "the step record reads back (%s)", e.msg);
		for (int i = 0; i < rd.n && i < n; i++) {
			same += tune_state_equal(&rd.steps[i].state, &steps[i].state);
			ordered += steps[i].state.order != NULL;
		}
		is_int(same, n, "as the same states (%d of them with an explicit order)", ordered);
		ok(ordered > 0, "the scheduling phase refined an order (%d steps carry one)", ordered);
		steps_release(&rd);
		cJSON_Delete(root);
	}
	{
		double replayed = eval_state(&m, &c, 8, &st);
		double last = steps[n - 1].after_ms;

		is_dbl(replayed, last, 1e-9, "the replayed final state simulates to the recorded time");
		ok(a <= last + 1e-9, "the tuned plan is at least as fast as the last step (%.3f <= %.3f)", a, last);
	}
	tune_state_release(&st);
	tune_free(t);
	plan_release(&p1);
	plan_release(&p2);
	model_release(&m);
	cluster_release(&c);
}

static void test_anytime(void)
{
	struct model m;
	struct cluster c;
	struct tuner *t0, *t1, *t2, *t3;
	long n0, n1;
	double secs, a, b, b2, x;
	int bad = 0, kicks = 0, n;
	const struct tune_step *steps;
	struct tune_state st;
	static volatile sig_atomic_t stop_now = 1, never = 0;

	random_model(&m, 24);
	synth_cluster(&c, 4, 4, 100, 5);
	a = run_budget(&m, &c, 8, 0, &never, &t0);
	tune_stats(t0, &n0, &secs);
	b = run_budget(&m, &c, 8, n0 + 2000, &never, &t1);
	tune_stats(t1, &n1, &secs);
	b2 = run_budget(&m, &c, 8, n0 + 2000, &never, &t2);
	ok(b <= a + 1e-9, "with a budget past convergence the plan is no slower (%.3f <= %.3f)", b, a);
	is_dbl(b, b2, 0, "the same seed and evaluation budget give the same plan");
	ok(n1 >= n0 + 2000 - 1 && n1 <= n0 + 2001 + 1, "the budget is spent (%ld of %ld evaluations)", n1, n0 + 2000);
	ok(b >= tune_bound(t1) - 1e-9, "never below the tight bound (%.3f >= %.3f)", b, tune_bound(t1));
	n = tune_steps(t1, &steps);
	tune_state_copy(&st, &steps[0].state);
	for (int i = 1; i < n; i++) {
		if (tune_apply_move(&st, &steps[i], m.nlayers) < 0 || !tune_state_equal(&st, &steps[i].state))
			bad++;
		kicks += strncmp(steps[i].what, "perturb", 7) == 0;
	}
	ok(kicks > 0, "it perturbs past convergence (%d perturbations)", kicks);
	is_int(bad, 0, "perturbations replay like every other step");
	ok(!tune_interrupted(t1), "a spent budget is not an interrupt");
	x = run_budget(&m, &c, 8, 0, &stop_now, &t3);
	ok(tune_interrupted(t3) && isfinite(x), "a raised stop flag ends the search with a plan (%.3f ms)", x);
	/* raised before the setup (Ctrl-C during the layout search): the first baseline that
	 * runs is the plan, and nothing else is simulated (no start of the tuner's own) */
	tune_stats(t3, &n1, &secs);
	is_int(n1, 0, "raised before the setup: no plan of the tuner's own is simulated");
	is_int(tune_steps(t3, &steps), 1, "the record is the start alone");
	ok(strstr(steps[0].what, "interrupted while setting up") != NULL, "which says so: %s", steps[0].what);
	{
		struct baseline_spec spec = { SCHED_1F1B, 8, 0, "uniform", NULL, 0, 0, NULL };
		struct plan bp;
		struct sim s;
		struct sim_opts so;
		struct metrics bm;
		struct err e = ERR_INIT;

		memset(&s, 0, sizeof(s));
		sim_opts_default(&so);
		ok(baseline_plan(&bp, &m, NULL, &c, NULL, &spec, &e) == 0 && sim_run(&s, &bp, &so, &bm, &e) == 0,
		   "1F1B, the first baseline");
		is_dbl(x, bm.makespan_ms, 1e-9, "is the plan kept");
		metrics_release(&bm);
		plan_release(&bp);
		sim_release(&s);
	}
	tune_state_release(&st);
	tune_free(t0);
	tune_free(t1);
	tune_free(t2);
	tune_free(t3);
	model_release(&m);
	cluster_release(&c);
}

/* The bound the search prunes by is never above a simulated time: random models with
 * transfers and uneven device speeds, random partitions and placements, every order the
 * policy's knobs give. */
static void test_state_bound(void)
{
	int above = 0, n = 0;

	for (int trial = 0; trial < 60; trial++) {
		struct model m;
		struct cluster c;
		struct tune_opts o;
		struct tuner *t;
		struct err e = ERR_INIT;
		int D = 2 + trial % 3, L = 6 + trial % 5;

		random_model(&m, L);
		synth_cluster(&c, D, 2, 20 + 100 * urand(), 5);
		for (int d = 0; d < D; d++)
			c.device_speed[d] = 0.5 + urand();
		tune_opts_default(&o);
		o.microbatches = 2 + trial % 6;
		o.max_evals = 1;
		if (tune_new(&t, &m, &c, &o, &e) == 0) {
			for (int k = 0; k < 8; k++) {
				struct tune_state st;
				int S = D + (int)(urand() * (L - D + 1));
				double ms;

				if (S > L || tune_state_alloc(&st, S) < 0)
					continue;
				st.first[0] = 0;
				for (int s = 1; s < S; s++)
					st.first[s] = s;  /* then spread the rest at random */
				st.first[S] = L;
				for (int extra = L - S; extra > 0; extra--) {
					int s = 1 + (int)(urand() * (S - 1));

					for (int q = s; q < S; q++)
						st.first[q]++;
					if (st.first[S - 1] >= L)
						for (int q = s; q < S; q++)
							st.first[q]--;
				}
				for (int s = 0; s < S; s++)
					st.device[s] = s < D ? s : (int)(urand() * D);
				st.sched.alternate = urand() < 0.5;
				st.sched.cap_extra = (int)(urand() * 4) - 1;
				st.sched.wcap = urand() < 0.5 ? 0 : D;
				ms = eval_state(&m, &c, o.microbatches, &st);
				if (isfinite(ms)) {
					n++;
					above += tune_state_bound(t, &st) > ms * (1 + 1e-9);
				}
				tune_state_release(&st);
			}
			tune_free(t);
		}
		model_release(&m);
		cluster_release(&c);
	}
	ok(n > 200, "%d random partitions and placements simulated", n);
	is_int(above, 0, "the bound the search prunes by is never above the simulated time");
}

/* A measured profile of samples/profiles as the bench reads it: W = B = half the backward. */
static int profile_model(struct model *m, const char *name)
{
	const char *top = getenv("top_srcdir");
	char path[4096];
	struct err e = ERR_INIT;
	cJSON *root, *layers;
	int i = 0;

	snprintf(path, sizeof(path), "%s/samples/profiles/%s.json", top ? top : ABS_TOP_SRCDIR, name);
	if (!(root = json_load_file(path, &e)))
		return -1;
	layers = cJSON_GetObjectItem(root, "layers");
	synth_model(m, cJSON_GetArraySize(layers), 1, 1, 1);
	for (const cJSON *y = layers ? layers->child : NULL; y; y = y->next, i++) {
		double b = cJSON_GetNumberValue(cJSON_GetObjectItem(y, "b_full_ms"));

		m->layers[i].f_ms = cJSON_GetNumberValue(cJSON_GetObjectItem(y, "f_ms"));
		m->layers[i].b_ms = m->layers[i].w_ms = b / 2;
		m->layers[i].out_bytes = m->layers[i].act_bytes = m->layers[i].act_w_bytes = 0;
	}
	cJSON_Delete(root);
	return 0;
}

/* Quality where the search has to search: measured heterogeneous layers (a heavy head, a
 * light embedding), 4 GPUs, 8 microbatches, W = B, no communication, and a fixed budget of
 * 2000 simulations. The exact device balance with the pipeline fill, the bubble-aware
 * rebalance and the gap-targeted order moves reach these; the tuner before them stopped at
 * 93.0% (deepseek-16b) and 96.2% (gpt-oss-20b) of the tight bound with the same budget. */
static void test_quality(void)
{
	static const struct { const char *name; double want; } cases[] = {
		{ "deepseek-16b", 0.96 }, { "gpt-oss-20b", 0.97 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct model m;
		struct cluster c;
		struct tune_opts o;
		struct tuner *t;
		const struct tune_step *st;
		struct plan p;
		struct metrics mt;
		struct err e = ERR_INIT;

		if (profile_model(&m, cases[i].name) < 0) {
			ok(0, "samples/profiles/%s.json loads", cases[i].name);
			continue;
		}
		synth_cluster(&c, 4, 4, 0, 0);
		tune_opts_default(&o);
		o.microbatches = 8;
		o.max_evals = 2000;
		memset(&mt, 0, sizeof(mt));
		if (tune_new(&t, &m, &c, &o, &e) == 0) {
			while (tune_step(t, &st, &e) > 0)
				;
			if (tune_result(t, &p, &mt, &e) == 0)
				plan_release(&p);
			tune_free(t);
		}
		ok(mt.efficiency_tight >= cases[i].want, "%s, 4 GPUs x 8 microbatches, 2000 simulations: %.1f%% of the "
		   "tight bound (at least %.0f%%)", cases[i].name, 100 * mt.efficiency_tight, 100 * cases[i].want);
		metrics_release(&mt);
		model_release(&m);
		cluster_release(&c);
	}
}

int main(void)
{
	test_exhaustive();
	test_random_properties();
	test_replay_and_seed();
	test_anytime();
	test_state_bound();
	test_quality();
	return tap_done();
}
