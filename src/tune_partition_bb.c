/*
 * tune_partition_bb — branch and bound over the boundaries, stage by stage, for a
 * partition whose largest load(d) / weight(d) beats the incumbent: a device's load only
 * grows with its stage's end, and the devices still open must share what is left, so most
 * branches end early. Exact when it finishes within its node budget; the best found
 * either way. The depth is one level a stage (tens of thousands at scale), so the search
 * keeps its own stack of frames instead of recursing: no input can overflow the thread's
 * stack.
 */
#include "config.h"
#include "tune_partition_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct bb_frame {
	int l, e, e_end, d;             /* the stage starts at layer l; e: the end being tried */
	double closed_max, open_load, open_w;
	double add, badd;               /* what the child being tried added to load[d], bytes[d] */
	bool applied;
};

struct bb {
	const struct tune_part_in *in;
	const struct prefix *p;
	int S;
	const int *device, *last_of;   /* per device: its last stage */
	const int *first_of;           /* and its first */
	double *load, *bytes;
	double *eload, *ebytes;        /* scratch for a leaf's whole objective (the wait) */
	double open_w0, best;          /* weight of all devices; the incumbent */
	int *cur, *best_first;
	long nodes, max_nodes;
	struct bb_frame *stack;        /* S + 1 frames */
};

/* Visits the node of stage s starting at layer l: a leaf is scored, a node the bound cuts
 * off ends here; otherwise its frame is set up and true returned (its children follow). */
static bool bb_enter(struct bb *b, int s, int l, double closed_max, double open_load, double open_w)
{
	const struct prefix *p = b->p;
	struct bb_frame *f = &b->stack[s];
	int d, L = p->L;

	if ((b->nodes & 1023) == 1023 && tune_part_late(b->in))
		b->max_nodes = b->nodes;  /* out of time: as out of nodes, from here on */
	if (++b->nodes > b->max_nodes)
		return false;
	if (s == b->S) {
		if (p->wait && closed_max < b->best * (1 - 1e-12)) {
			/* the loads so far count the fill only, a floor of the wait */
			double sq;
			bool fit;

			tune_part_device_eval(b->in, p, b->S, b->device, b->cur, b->eload, b->ebytes, &closed_max, &sq, &fit);
		}
		if (closed_max < b->best * (1 - 1e-12)) {
			b->best = closed_max;
			memcpy(b->best_first, b->cur, (size_t)(b->S + 1) * sizeof(int));
		}
		return false;
	}
	/* the open devices share the layers left: one of them gets at least the average */
	if (open_w > 0 && (open_load + p->c[L] - p->c[l]) / open_w >= b->best * (1 - 1e-12))
		return false;
	d = b->device[s];
	if (b->first_of[d] == s) {
		/* the device waits for the pipeline to fill up to here */
		b->load[d] = p->f[l];
		open_load += p->f[l];
	}
	f->l = l;
	f->d = d;
	f->e = s == b->S - 1 ? L : l + 1;
	f->e_end = L - (b->S - s - 1);
	f->closed_max = closed_max;
	f->open_load = open_load;
	f->open_w = open_w;
	f->applied = false;
	return true;
}

static void bb_search(struct bb *b, double open_w)
{
	const struct prefix *p = b->p;
	int s = 0;

	if (!bb_enter(b, 0, 0, 0, 0, open_w))
		return;
	while (s >= 0) {
		struct bb_frame *f = &b->stack[s];
		int d = f->d, e;
		double w = b->in->weight[d], m = b->in->mem ? b->in->mem[d] : 0, add, q;

		if (f->applied) {
			/* back from a child: take its stage end back, then the next end (or stop) */
			b->load[d] -= f->add;
			b->bytes[d] -= f->badd;
			f->applied = false;
			f->e = b->nodes > b->max_nodes ? f->e_end + 1 : f->e + 1;
		}
		e = f->e;
		if (e > f->e_end) {
			if (b->first_of[d] == s)
				b->load[d] = 0;
			s--;
			continue;
		}
		add = p->c[e] - p->c[f->l];
		q = (b->load[d] + add) / w;
		if (q >= b->best * (1 - 1e-12) || (m > 0 && b->bytes[d] + p->b[e] - p->b[f->l] > m)) {
			f->e = f->e_end + 1;    /* a longer stage only adds */
			continue;
		}
		b->cur[s + 1] = e;
		b->load[d] += add;
		b->bytes[d] += p->b[e] - p->b[f->l];
		f->add = add;
		f->badd = p->b[e] - p->b[f->l];
		f->applied = true;
		if (b->last_of[d] == s ? bb_enter(b, s + 1, e, fmax(f->closed_max, q), f->open_load - (b->load[d] - add),
		                                  f->open_w - w)
		                       : bb_enter(b, s + 1, e, f->closed_max, f->open_load + add, f->open_w))
			s++;
	}
}

double tune_part_bb(const struct tune_part_in *in, const struct prefix *p, int S, const int *device, int *first,
                    double incumbent, long max_nodes)
{
	struct bb b = { in, p, S, device, NULL, NULL, NULL, NULL, NULL, NULL, 0, incumbent, NULL, NULL, 0, max_nodes,
	                NULL };
	int *last_of = malloc((size_t)in->ndevices * sizeof(int)), *first_of = malloc((size_t)in->ndevices * sizeof(int));
	double open_w = 0;

	b.load = calloc((size_t)in->ndevices, sizeof(double));
	b.bytes = calloc((size_t)in->ndevices, sizeof(double));
	b.eload = malloc((size_t)in->ndevices * sizeof(double));
	b.ebytes = malloc((size_t)in->ndevices * sizeof(double));
	b.cur = malloc((size_t)(S + 1) * sizeof(int));
	b.stack = malloc((size_t)(S + 1) * sizeof(*b.stack));
	b.best_first = first;
	if (!last_of || !first_of || !b.load || !b.bytes || !b.eload || !b.ebytes || !b.cur || !b.stack) {
		free(b.stack);
		free(last_of);
		free(first_of);
		free(b.load);
		free(b.bytes);
		free(b.eload);
		free(b.ebytes);
		free(b.cur);
		return NAN;
	}
	for (int d = 0; d < in->ndevices; d++)
		last_of[d] = first_of[d] = -1;
	for (int s = 0; s < S; s++) {
		last_of[device[s]] = s;
		if (first_of[device[s]] < 0)
			first_of[device[s]] = s;
	}
	for (int d = 0; d < in->ndevices; d++)
		if (last_of[d] >= 0)
			open_w += in->weight[d];
	b.last_of = last_of;
	b.first_of = first_of;
	b.cur[0] = 0;
	bb_search(&b, open_w);
	free(b.stack);
	free(last_of);
	free(first_of);
	free(b.load);
	free(b.bytes);
	free(b.eload);
	free(b.ebytes);
	free(b.cur);
	return b.best;
}

