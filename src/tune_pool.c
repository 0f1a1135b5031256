/*
 * tune_pool — the tuner's worker threads. Most of a search's simulations are its ranked
 * candidate lists (best improvement, tune.c best_candidate: 16 to 63 states a list on
 * the bundled models, 85-96% of all simulations), and the candidates of a list are
 * independent of one another. So each thread takes the next candidate of the list,
 * simulates it in its own workspace (struct tune_evalbuf: a plan, the simulator's arrays,
 * the policy's caps) and writes the report beside it; the driver then reads the reports
 * in list order and picks the best exactly as one thread would. Which candidates are
 * simulated and what the search makes of them do not depend on the threads: with a
 * budget of simulations the plan is the same on one thread or sixteen
 * (tests/unit/test_tune_threads.c). Under a time budget the threads simulate more
 * candidates in the same time.
 *
 * The partition searches of a list (tune_partmemo.c) are the pool's other job
 * (tune_pool_for runs any). A pool of n threads is the caller and n - 1 workers, started
 * at the first job and parked on a condition variable between jobs. While a job runs,
 * every thread only reads the tuner (tune_eval_in, tune_partition_devices) and writes its
 * own items' results; the caller counts them into the tuner afterwards.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "tune_impl.h"

struct tune_worker {
	struct tune_pool *pool;
	struct tune_evalbuf buf;
	pthread_t th;
	bool started;
};

struct job;

struct tune_pool {
	int nworkers;
	struct tune_worker *w;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	unsigned long gen;      /* the job the workers are to run: a new one wakes them */
	int running;            /* workers still on the job */
	bool quit;
	struct job *job;        /* the job (the caller's, while it runs) */
};

static bool time_is_up(const struct tuner *t, double deadline)
{
	return (t->opts.stop && *t->opts.stop) || (deadline > 0 && clock_now_s() > deadline);
}

/* What the threads are to do: fn(arg, i, buffer) for every i in [0, n), each i once. */
struct job {
	void (*fn)(void *arg, int i, struct tune_evalbuf *b);
	void *arg;
	int n;
	atomic_int next;
};

/* Takes the job's items one at a time until none is left. */
static void drain(struct job *j, struct tune_evalbuf *b)
{
	for (;;) {
		int i = atomic_fetch_add(&j->next, 1);

		if (i >= j->n)
			return;
		j->fn(j->arg, i, b);
	}
}

static void *worker_main(void *arg)
{
	struct tune_worker *w = arg;
	struct tune_pool *p = w->pool;
	unsigned long seen = 0;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->quit && p->gen == seen)
			pthread_cond_wait(&p->go, &p->mu);
		if (p->quit)
			break;
		seen = p->gen;
		pthread_mutex_unlock(&p->mu);
		drain(p->job, &w->buf);
		pthread_mutex_lock(&p->mu);
		if (--p->running == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

void tune_pool_free(struct tune_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = true;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->nworkers; i++) {
		if (p->w[i].started)
			pthread_join(p->w[i].th, NULL);
		tune_evalbuf_release(&p->w[i].buf);
	}
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->mu);
	free(p->w);
	free(p);
}

/* Starts t->threads - 1 workers into *out: 1; 0 when the system starts no more threads
 * (the caller then works alone); -1 when out of host memory. */
static int pool_start(struct tuner *t, struct tune_pool **out)
{
	struct tune_pool *p = calloc(1, sizeof(*p));
	struct err e = ERR_INIT;

	*out = NULL;
	if (!p)
		return -1;
	p->nworkers = t->threads - 1;
	p->w = calloc((size_t)p->nworkers, sizeof(*p->w));
	if (!p->w || pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p->w);
		free(p);
		return -1;
	}
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	for (int i = 0; i < p->nworkers; i++) {
		int r = tune_evalbuf_init(&p->w[i].buf, t, &e) < 0 ? -1 : 1;

		p->w[i].pool = p;
		if (r > 0 && pthread_create(&p->w[i].th, NULL, worker_main, &p->w[i]) != 0)
			r = 0;
		if (r <= 0) {
			p->nworkers = i + 1; /* release what was set up, join what started */
			tune_pool_free(p);
			return r;
		}
		p->w[i].started = true;
	}
	*out = p;
	return 1;
}

bool tune_pool_for(struct tuner *t, int n, void (*fn)(void *arg, int i, struct tune_evalbuf *b), void *arg)
{
	struct job j = { fn, arg, n, 0 };
	struct tune_pool *p;

	if (t->threads > 1 && n > 1 && !t->pool) {
		int r = pool_start(t, &t->pool);

		if (r < 0) {
			t->oom = true;
			return false;
		}
		if (r == 0)
			t->threads = 1;
	}
	p = t->threads > 1 && n > 1 ? t->pool : NULL;
	if (!p) {
		drain(&j, &t->eb);
		return true;
	}
	pthread_mutex_lock(&p->mu);
	p->job = &j;
	p->running = p->nworkers;
	p->gen++;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	drain(&j, &t->eb);
	pthread_mutex_lock(&p->mu);
	while (p->running > 0)
		pthread_cond_wait(&p->done, &p->mu);
	p->job = NULL;
	pthread_mutex_unlock(&p->mu);
	return true;
}

/* A list of candidates to simulate. */
struct list {
	struct tuner *t;
	const int *idx;
	double deadline;
	struct tune_evalres *res;
};

/* One candidate of the list; past the deadline reported as not simulated. */
static void eval_one(void *arg, int i, struct tune_evalbuf *b)
{
	struct list *l = arg;

	if (time_is_up(l->t, l->deadline))
		l->res[i] = (struct tune_evalres){ .ms = INFINITY, .tie = INFINITY };
	else
		tune_eval_in(l->t, b, &l->t->cands[l->idx[i]].st, NULL, &l->res[i]);
}

void tune_pool_run(struct tuner *t, const int *idx, int n, double deadline, struct tune_evalres *res)
{
	struct list l = { t, idx, deadline, res };

	if (!tune_pool_for(t, n, eval_one, &l))
		for (int i = 0; i < n; i++)
			res[i] = (struct tune_evalres){ .ms = INFINITY, .tie = INFINITY };
}
