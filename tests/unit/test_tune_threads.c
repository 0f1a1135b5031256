/*
 * test_tune_threads — the tuner's candidate lists simulated on several threads
 * (tune_pool.c) change how fast it searches, never what it finds: under a budget of
 * simulations every thread count gives the same steps, the same evaluations and the same
 * plan, on random heterogeneous models, where memory binds, under a target's rules that
 * refuse some plans (called from several threads at once), and with more threads than
 * candidates. A stop flag ends a threaded search with a plan; so does a time budget. A list
 * of placements balanced at once on the threads (tune_partition_reqs) gets the same
 * boundaries, and leaves the same memo, as one tune_partition_quick, _state or _waits
 * after the other, with repeated placements and more than the memo holds.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "tunecheck.h"
#include "../tap.h"

#define GB 1000000000ULL

/* What a search did: its steps' times and the plan's stages. */
struct run {
	int nsteps, nstages;
	long evals;
	double ms, after[512];
	int first[64], device[64];
	bool ok;
};

static atomic_long refused;

/* A target that refuses about a third of the plans, by the first stage's layers and the
 * stage count: pure, so any thread may call it. */
static int picky(void *arg, const struct plan *p, struct err *e)
{
	(void)arg;
	if ((p->stages[0].last - p->stages[0].first + 1 + p->nstages) % 3 != 0)
		return 0;
	atomic_fetch_add(&refused, 1);
	return err_set(e, ERR_INPUT, "picky");
}

static struct run search(const struct model *m, const struct cluster *c, int M, long evals, int threads,
                         bool target, const volatile sig_atomic_t *stop, double budget)
{
	struct run r = { .ms = INFINITY };
	struct tune_opts o;
	struct tuner *t;
	const struct tune_step *st, *all;
	struct plan p;
	struct metrics mt;
	struct err e = ERR_INIT;

	tune_opts_default(&o);
	o.microbatches = M;
	o.max_evals = evals;
	o.time_budget_s = budget;
	o.threads = threads;
	o.seed = 3;
	o.stop = stop;
	o.recompute_moves = true;
	if (target)
		o.accept = picky;
	if (tune_new(&t, m, c, &o, &e) < 0)
		return r;
	while (tune_step(t, &st, &e) > 0)
		;
	r.nsteps = tune_steps(t, &all);
	for (int i = 0; i < r.nsteps && i < 512; i++)
		r.after[i] = all[i].after_ms;
	tune_stats(t, &r.evals, NULL);
	if (tune_result(t, &p, &mt, &e) == 0) {
		r.ms = mt.noom ? INFINITY : mt.makespan_ms;
		r.nstages = p.nstages;
		for (int s = 0; s < p.nstages && s < 64; s++) {
			r.first[s] = p.stages[s].first;
			r.device[s] = p.stages[s].device;
		}
		r.ok = true;
		plan_release(&p);
		metrics_release(&mt);
	}
	tune_free(t);
	return r;
}

static bool same(const struct run *a, const struct run *b)
{
	if (!a->ok || !b->ok || a->nsteps != b->nsteps || a->evals != b->evals || a->ms != b->ms ||
	    a->nstages != b->nstages)
		return false;
	for (int i = 0; i < a->nsteps && i < 512; i++)
		if (a->after[i] != b->after[i])
			return false;
	for (int s = 0; s < a->nstages && s < 64; s++)
		if (a->first[s] != b->first[s] || a->device[s] != b->device[s])
			return false;
	return true;
}

/* The same search on 1, 2, 3 and 8 threads. */
static void check_threads(const char *what, const struct model *m, const struct cluster *c, int M, long evals,
                          bool target)
{
	struct run one = search(m, c, M, evals, 1, target, NULL, 0);
	int ths[] = { 2, 3, 8 };

	ok(one.ok && isfinite(one.ms), "%s: one thread tunes a plan (%.2f ms, %d steps, %ld simulations)", what, one.ms,
	   one.nsteps, one.evals);
	for (int i = 0; i < 3; i++) {
		struct run r = search(m, c, M, evals, ths[i], target, NULL, 0);

		ok(same(&one, &r), "%s: %d threads take the same %d steps to the same plan (%.2f vs %.2f ms, %ld vs %ld "
		   "simulations)", what, ths[i], one.nsteps, r.ms, one.ms, r.evals, one.evals);
	}
}

static void random_instances(void)
{
	for (int k = 0; k < 4; k++) {
		struct model m;
		struct cluster c;
		int L = 10 + (int)(20 * urand()), D = 2 + (int)(5 * urand()), M = D * (1 + (int)(3 * urand()));
		char what[96];

		random_model(&m, L);
		synth_cluster(&c, D, 4, 25, 5);
		snprintf(what, sizeof(what), "random model of %d layers on %d devices x %d", L, D, M);
		check_threads(what, &m, &c, M, 400 + 200 * k, k == 3);
		model_release(&m);
		cluster_release(&c);
	}
}

/* Eight layers whose activations fill the devices: the memory knobs and recompute. */
static void memory_bound(void)
{
	struct model m;
	struct cluster c;

	synth_model(&m, 8, 1, 1, 1);
	for (int l = 0; l < 8; l++) {
		m.layers[l].act_bytes = 10 * GB;
		m.layers[l].act_w_bytes = 1 * GB;
		m.layers[l].out_bytes = GB / 10;
		m.layers[l].param_bytes = GB / 10;
	}
	synth_cluster(&c, 4, 4, 0, 0);
	c.mem_headroom = 0;
	c.mem_bytes = (uint64_t)(synth_static_bytes(&m, &c) / 2 + 25 * GB);
	check_threads("memory-bound V of 8 layers on 4 devices x 16", &m, &c, 16, 500, false);
	model_release(&m);
	cluster_release(&c);
}

static void refusing_target(void)
{
	struct model m;
	struct cluster c;

	random_model(&m, 16);
	synth_cluster(&c, 4, 4, 25, 5);
	atomic_store(&refused, 0);
	check_threads("a target that refuses a third of the plans", &m, &c, 8, 500, true);
	ok(atomic_load(&refused) > 0, "the target refused %ld candidates", (long)atomic_load(&refused));
	model_release(&m);
	cluster_release(&c);
}

/* One layer a device: the lists are short, the threads many. */
static void tiny(void)
{
	struct model m;
	struct cluster c;

	random_model(&m, 2);
	synth_cluster(&c, 2, 2, 25, 5);
	check_threads("two layers on two devices", &m, &c, 4, 300, false);
	model_release(&m);
	cluster_release(&c);
}

static void stops(void)
{
	struct model m;
	struct cluster c;
	volatile sig_atomic_t stop = 1;
	struct run r;

	random_model(&m, 24);
	synth_cluster(&c, 4, 4, 25, 5);
	r = search(&m, &c, 16, 0, 4, false, &stop, 0);
	ok(r.ok && isfinite(r.ms), "raised stop flag: 4 threads stop with a plan (%.2f ms, %ld simulations)", r.ms,
	   r.evals);
	r = search(&m, &c, 16, 0, 4, false, NULL, 0.05);
	ok(r.ok && isfinite(r.ms), "a time budget of 0.05 s: 4 threads end with a plan (%.2f ms, %ld simulations)", r.ms,
	   r.evals);
	model_release(&m);
	cluster_release(&c);
}

/* A tuner of m on c stopped right after its set-up (threads as given). */
static struct tuner *bare_tuner(const struct model *m, const struct cluster *c, int threads)
{
	struct tune_opts o;
	struct tuner *t;
	struct err e = ERR_INIT;

	tune_opts_default(&o);
	o.microbatches = 8;
	o.max_evals = 1;
	o.threads = threads;
	return tune_new(&t, m, c, &o, &e) < 0 ? NULL : t;
}

/* n random placements of S stages on D devices as candidates of t (the same on every
 * tuner for the same seed); every third repeats an earlier one. */
static void random_placements(struct tuner *t, int n, int S, int D, unsigned long long seed)
{
	unsigned long long x = seed;
	struct tune_state s;

	tune_state_alloc(&s, S);
	for (int i = 0; i < n; i++) {
		if (i % 3 != 2 || i < 3) {
			for (int st = 0; st < S; st++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				s.device[st] = (int)(x % (unsigned long long)D);
			}
		}
		tune_cand_add(t, &s, MOVE_RESTRUCTURE, S, 0);
	}
	tune_state_release(&s);
}

static bool same_memo(const struct tuner *a, const struct tuner *b, int D)
{
	if (a->memo_next != b->memo_next)
		return false;
	for (int i = 0; i < PART_MEMO; i++) {
		const struct part_memo *x = &a->memo[i], *y = &b->memo[i];

		if (!x->first != !y->first)
			return false;
		if (!x->first)
			continue;
		if (x->nstages != y->nstages || x->ok != y->ok || x->quick != y->quick || x->wait != y->wait ||
		    x->pending != y->pending || memcmp(x->device, y->device, (size_t)x->nstages * sizeof(int)) ||
		    memcmp(x->weight, y->weight, (size_t)D * sizeof(double)) ||
		    (x->ok && memcmp(x->first, y->first, (size_t)(x->nstages + 1) * sizeof(int))))
			return false;
	}
	return true;
}

static void partition_lists(void)
{
	struct model m;
	struct cluster c;

	random_model(&m, 30);
	synth_cluster(&c, 6, 8, 25, 5);
	/* kind 0: full, 1: quick, 2: each item its own request (quick, full, the wait for the
	 * first backward, or less work on devices that idle) */
	static const double idle[2][6] = { { 5, 0, 1, 9, 2, 0 }, { 0, 3, 3, 0, 7, 1 } };
	static const char *const kinds[] = { "full", "quick", "mixed requests" };

	for (int kind = 0; kind < 3; kind++) {
		struct tuner *a = bare_tuner(&m, &c, 4), *b = bare_tuner(&m, &c, 1);
		int n = 150, from, agree = 0, fine = 0;
		struct part_req req[150];
		bool *ok;

		if (!a || !b) {
			ok(0, "tuners for the partition lists");
			return;
		}
		from = a->ncands;
		random_placements(a, n, 12, 6, 99);
		random_placements(b, n, 12, 6, 99);
		for (int i = 0; i < n; i++) {
			int q = kind < 2 ? kind : i % 5;

			req[i] = (struct part_req){ q >= 3 ? idle[q - 3] : NULL, 40, q == 1, q == 2 };
		}
		if (!(ok = tune_partition_reqs(a, from, req))) {
			ok(0, "out of host memory balancing a list");
			return;
		}
		for (int i = 0; i < n; i++) {
			struct tune_state *sa = &a->cands[from + i].st, *sb = &b->cands[from + i].st;
			bool okb = req[i].quick ? tune_partition_quick(b, sb)
			         : req[i].wait ? tune_partition_waits(b, sb) : tune_partition_state(b, sb, req[i].idle, 40);

			fine += okb;
			agree += ok[i] == okb && (!okb || memcmp(sa->first, sb->first, 13 * sizeof(int)) == 0);
		}
		is_int(agree, n, "%s: %d placements (%d repeats, %d balanced) on 4 threads get the boundaries one "
		       "call after the other gets", kinds[kind], n, n / 3, fine);
		ok(same_memo(a, b, 6) && !a->oom && !b->oom, "%s: and leave the same memo", kinds[kind]);
		free(ok);
		tune_free(a);
		tune_free(b);
	}
	model_release(&m);
	cluster_release(&c);
}

int main(void)
{
	random_instances();
	memory_bound();
	refusing_target();
	tiny();
	stops();
	partition_lists();
	return tap_done();
}
