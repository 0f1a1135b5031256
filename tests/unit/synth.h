/*
 * synth.h — in-memory models, clusters and plans for simulator tests: uniform layers
 * (docs/METHOD.md §2's golden setting), random heterogeneous layers, and hand-written orders.
 */
#ifndef OCTO_SYNTH_H
#define OCTO_SYNTH_H

#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "cluster.h"
#include "model.h"
#include "parallel.h"
#include "plan.h"
#include "sim.h"

/* The static memory (weights, gradients, optimizer) of m's whole table under c's layout. */
static inline double synth_static_bytes(const struct model *m, const struct cluster *c)
{
	struct parallel par;
	struct mem_static ms;
	double params = 0;

	for (int l = 0; l < m->nlayers; l++)
		params += (double)m->layers[l].param_bytes;
	parallel_from_replica(&c->rep, c->devices, &par);
	parallel_static_mem(&par, params, 0, &ms);
	return ms.weights + ms.grads + ms.optimizer;
}

static inline void synth_model(struct model *m, int L, double f, double b, double w)
{
	memset(m, 0, sizeof(*m));
	m->name = strdup("synthetic");
	m->seq_len = 1024;
	m->micro_batch_size = 1;
	m->nlayers = L;
	m->layers = calloc((size_t)L, sizeof(*m->layers));
	for (int i = 0; i < L; i++) {
		m->layers[i].kind = strdup("layer");
		m->layers[i].f_ms = f;
		m->layers[i].b_ms = b;
		m->layers[i].w_ms = w;
	}
}

/* p devices, gpus_per_node per node; bandwidth in GB/s (0 = free), latency in us. */
static inline void synth_cluster(struct cluster *c, int p, int per_node, double gbps, double lat_us)
{
	memset(c, 0, sizeof(*c));
	c->name = strdup("synthetic");
	c->devices = p;
	c->gpus_per_node = per_node;
	c->mem_bytes = 141000000000ULL;
	c->speed = 1;
	c->device_speed = calloc((size_t)p, sizeof(double));
	for (int i = 0; i < p; i++)
		c->device_speed[i] = 1;
	c->intra.gbytes_per_s = gbps > 0 ? gbps : 1e9;
	c->intra.latency_us = lat_us;
	c->inter = c->intra;
}

/* The executor tests' plan: schedule k on 4 devices (2 per node, 50 GB/s), 8 microbatches,
 * uneven layers sending 20 MB activations, and its simulated timeline (the plan is
 * released on failure). */
static inline int synth_exec_plan(enum sched_kind k, struct plan *p, struct timeline *t, struct err *e)
{
	struct model m;
	struct cluster c;
	struct sim s;
	struct sim_opts o;
	struct metrics mt;
	int v = sched_default_chunks(k), r = -1;
	struct baseline_spec spec = { k, 8, 0, "balanced", NULL, 0, 0, NULL };

	memset(&s, 0, sizeof(s));
	synth_model(&m, 4 * v + 3, 1, 1, 0.5);
	for (int i = 0; i < m.nlayers; i++) {
		m.layers[i].f_ms = 0.5 + 0.1 * (i % 3);
		m.layers[i].out_bytes = 20000000;
	}
	synth_cluster(&c, 4, 2, 50, 10);
	if (baseline_plan(p, &m, NULL, &c, NULL, &spec, e) == 0) {
		sim_opts_default(&o);
		o.record = true;
		if (sim_run(&s, p, &o, &mt, e) == 0)
			r = sim_timeline(&s, p, &mt, t, e);
		metrics_release(&mt);
		if (r < 0)
			plan_release(p);
	}
	sim_release(&s);
	model_release(&m);
	cluster_release(&c);
	return r;
}

#endif
