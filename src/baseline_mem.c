/*
 * baseline_mem — the partition balanced within memory: for a plan whose devices hold one
 * stage each (1F1B, ZB-H1, GPipe), the stage boundaries whose largest stage time is least
 * among those whose every device's peak fits, or where none fits, those of the least
 * peak. It is what a person does by hand when no textbook partition fits: the embedding's
 * and the head's weights (16 bytes a parameter with Adam) and the first stages' deeper
 * warm-up (1F1B keeps S - s microbatches in flight on stage s) make "uniform" and
 * "balanced" overflow one device while another has room.
 *
 * How a stage's peak is priced. The plan's order fixes, for each stage, how many
 * microbatches it holds at each point of its device's list: a forward adds its
 * activations (its recompute mode's bytes), a backward (I, or B fused) drops them but
 * keeps what W needs until W, and a recomputing backward holds its largest redone
 * layer's activations while it runs (as the simulator counts them: sim_metrics.c). Those
 * counts do not depend on the boundaries, so a stage's peak for layers [a, b] is
 *   static(a..b) + max over the list's points of (held x act(a..b) + wpending x act_w(a..b)
 *   + redo(a..b) at a backward),
 * kept as the Pareto set of (held, wpending, at-a-backward) points. Static memory is the
 * layout's weights, gradients and optimizer states (linear in the bytes, so summed per
 * layer) and, under ZeRO 3, the gather buffer of the stage's two largest layers.
 *
 * The search. Every stage's time (F + B + W + redone work, at its device's speed) and
 * peak only grow as its interval grows, so for caps (T, P) a greedy pass that gives each
 * stage in turn the longest prefix within both caps (leaving a layer for each stage
 * after it) succeeds exactly when some partition meets them. Bisection on P with no time
 * cap finds the least peak; when it fits, bisection on T under the usable memory finds
 * the balanced partition within memory.
 */
#include "config.h"
#include "baseline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"

#define BISECT_STEPS 64

/* One point of a stage's list: held full activations, W-pending activations, and whether
 * a backward (with its redone layer) runs there. */
struct hold_pt {
	int held, wpend;
	bool redo;
};

struct memplan {
	const struct plan *p;
	int S, L;
	double *stat, *act, *actw, *redo, *full, *time; /* per layer */
	struct hold_pt **pts;                            /* per stage, Pareto points */
	int *npts;
};

static void memplan_release(struct memplan *x)
{
	for (int s = 0; x->pts && s < x->S; s++)
		free(x->pts[s]);
	free(x->pts);
	free(x->npts);
	free(x->stat);
	free(x->act);
	free(x->actw);
	free(x->redo);
	free(x->full);
	free(x->time);
}

/* Whether a is at least b in every part (b adds nothing to a stage's peak beside a). */
static bool covers(const struct hold_pt *a, const struct hold_pt *b)
{
	return a->held >= b->held && a->wpend >= b->wpend && (a->redo || !b->redo);
}

static void add_point(struct hold_pt *pts, int *n, struct hold_pt q)
{
	int k = 0;

	for (int i = 0; i < *n; i++)
		if (covers(&pts[i], &q))
			return;
	for (int i = 0; i < *n; i++)
		if (!covers(&q, &pts[i]))
			pts[k++] = pts[i];
	pts[k++] = q;
	*n = k;
}

/* Stage s's points from its device's list. False when out of host memory. */
static bool stage_points(struct memplan *x, int s)
{
	const struct plan *p = x->p;
	int d = p->stages[s].device, n = 0, held = 0, wpend = 0;
	struct hold_pt *pts = malloc((size_t)(2 * p->microbatches + 1) * sizeof(*pts));

	if (!pts)
		return false;
	for (int i = p->order_start[d]; i < p->order_start[d + 1]; i++) {
		const struct action *a = &p->order[i];

		if (a->stage != s)
			continue;
		if (a->kind == OP_F) {
			held++;
			add_point(pts, &n, (struct hold_pt){ held, wpend, false });
		} else if (a->kind == OP_I || a->kind == OP_B) {
			add_point(pts, &n, (struct hold_pt){ held, wpend, true });
			held--;
			if (a->kind == OP_I)
				wpend++;
			add_point(pts, &n, (struct hold_pt){ held, wpend, false });
		} else {
			wpend--;
		}
	}
	/* the list's points were sized for every op; the Pareto set left is a few */
	x->pts[s] = malloc((size_t)(n ? n : 1) * sizeof(*pts));
	if (x->pts[s])
		memcpy(x->pts[s], pts, (size_t)n * sizeof(*pts));
	free(pts);
	x->npts[s] = n;
	return x->pts[s] != NULL;
}

/* Per layer: static bytes, activations and W's part under stage s's mode (every stage's:
 * they recompute alike), redone bytes, whole weights (ZeRO 3's buffer) and work (ms at
 * speed 1). */
static void layer_costs(struct memplan *x, int s, int l, const struct parallel *par)
{
	const struct plan *p = x->p;
	const struct layer *y = &p->model.layers[l];
	enum recompute rc = (enum recompute)p->stages[s].recompute;
	struct mem_static ms;
	double redo_ms = rc == RECOMPUTE_FULL ? y->f_ms : rc == RECOMPUTE_SELECTIVE ? y->core_f_ms : 0;

	parallel_static_mem(par, (double)y->param_bytes, (double)y->expert_param_bytes, &ms);
	x->stat[l] = ms.weights + ms.grads + ms.optimizer;
	x->act[l] = rc == RECOMPUTE_FULL ? (double)model_layer_in_bytes(&p->model, l)
	          : rc == RECOMPUTE_SELECTIVE ? (double)(y->act_bytes - y->core_act_bytes) : (double)y->act_bytes;
	x->actw[l] = p->split_backward ? (double)y->act_w_bytes : 0;
	x->redo[l] = rc == RECOMPUTE_FULL ? (double)y->act_bytes : rc == RECOMPUTE_SELECTIVE ? (double)y->core_act_bytes : 0;
	x->full[l] = (double)(y->param_bytes - y->expert_param_bytes) + (double)y->expert_param_bytes / (par->ep > 0 ? par->ep : 1);
	x->time[l] = y->f_ms + y->b_ms + y->w_ms + redo_ms;
}

/* A stage's running sums as its interval grows by one layer at a time. */
struct run {
	double stat, act, actw, redo, big[2], time;
};

static void run_add(struct run *r, const struct memplan *x, int l)
{
	r->stat += x->stat[l];
	r->act += x->act[l];
	r->actw += x->actw[l];
	r->redo = fmax(r->redo, x->redo[l]);
	r->time += x->time[l];
	if (x->full[l] > r->big[0]) {
		r->big[1] = r->big[0];
		r->big[0] = x->full[l];
	} else if (x->full[l] > r->big[1]) {
		r->big[1] = x->full[l];
	}
}

static double run_peak(const struct run *r, const struct memplan *x, int s, bool zero3)
{
	double worst = 0;

	for (int i = 0; i < x->npts[s]; i++) {
		const struct hold_pt *q = &x->pts[s][i];

		worst = fmax(worst, q->held * r->act + q->wpend * r->actw + (q->redo ? r->redo : 0));
	}
	return r->stat + worst + (zero3 ? r->big[0] + r->big[1] : 0);
}

/* Whether a stage's sums are within both caps. */
static bool within(const struct run *r, const struct memplan *x, int s, bool zero3, double tcap, double pcap)
{
	double speed = x->p->cluster.device_speed[x->p->stages[s].device];

	return r->time / (speed > 0 ? speed : 1) <= tcap && run_peak(r, x, s, zero3) <= pcap;
}

/* The greedy pass under caps tcap and pcap: each stage takes the longest prefix of what
 * is left within both, leaving a layer for every stage after it, and the last stage the
 * rest. True (first[] written) when every stage is within them. */
static bool greedy(const struct memplan *x, bool zero3, double tcap, double pcap, int *first)
{
	int l = 0;

	for (int s = 0; s < x->S; s++) {
		struct run r = { 0 };

		first[s] = l;
		if (s == x->S - 1) {
			while (l < x->L)
				run_add(&r, x, l++);
			break;
		}
		run_add(&r, x, l);
		if (!within(&r, x, s, zero3, tcap, pcap))
			return false;
		while (l < x->L - (x->S - s)) {
			struct run n = r;

			run_add(&n, x, l + 1);
			if (!within(&n, x, s, zero3, tcap, pcap))
				break;
			r = n;
			l++;
		}
		l++;
	}
	first[x->S] = x->L;
	{
		struct run r = { 0 };

		for (int l2 = first[x->S - 1]; l2 < x->L; l2++)
			run_add(&r, x, l2);
		return within(&r, x, x->S - 1, zero3, tcap, pcap);
	}
}

/* The least cap in (lo, hi] the greedy pass meets, hi being met: on the time with the
 * peak capped at other, or on the peak with the time capped at other. */
static double bisect(const struct memplan *x, bool zero3, bool on_time, double lo, double hi, double other, int *first)
{
	for (int i = 0; i < BISECT_STEPS && hi - lo > 1e-9 * hi; i++) {
		double mid = 0.5 * (lo + hi);

		if (on_time ? greedy(x, zero3, mid, other, first) : greedy(x, zero3, other, mid, first))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

static int setup(struct memplan *x, struct plan *p, struct err *e)
{
	struct parallel par = plan_parallel(p);
	bool *seen = calloc((size_t)p->ndevices, sizeof(bool));

	memset(x, 0, sizeof(*x));
	x->p = p;
	x->S = p->nstages;
	x->L = p->model.nlayers;
	if (!seen)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	for (int s = 0; s < x->S; s++) {
		bool again = seen[p->stages[s].device];

		seen[p->stages[s].device] = true;
		if (again || p->stages[s].recompute_layers > 0 || p->stages[s].recompute != p->stages[0].recompute) {
			free(seen);
			return err_set(e, ERR_INPUT, "the memory partition needs one stage a device, all recomputing alike");
		}
	}
	free(seen);
	x->stat = malloc((size_t)x->L * sizeof(double));
	x->act = malloc((size_t)x->L * sizeof(double));
	x->actw = malloc((size_t)x->L * sizeof(double));
	x->redo = malloc((size_t)x->L * sizeof(double));
	x->full = malloc((size_t)x->L * sizeof(double));
	x->time = malloc((size_t)x->L * sizeof(double));
	x->pts = calloc((size_t)x->S, sizeof(*x->pts));
	x->npts = calloc((size_t)x->S, sizeof(int));
	if (!x->stat || !x->act || !x->actw || !x->redo || !x->full || !x->time || !x->pts || !x->npts)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	for (int s = 0; s < x->S; s++)
		if (!stage_points(x, s))
			return err_set(e, ERR_RUNTIME, "out of host memory");
	for (int l = 0; l < x->L; l++)
		layer_costs(x, 0, l, &par);
	return 0;
}

int baseline_balance_memory(struct plan *p, struct err *e)
{
	struct memplan x;
	struct parallel par = plan_parallel(p);
	bool zero3 = par.zero >= 3;
	double usable = cluster_usable_bytes(&p->cluster), tall = 0, pmax = 0, pmin;
	int *first = NULL, r = 0;
	struct run all = { 0 };

	if (setup(&x, p, e) < 0 || !(first = malloc((size_t)(x.S + 1) * sizeof(int)))) {
		if (!first && e->cls == ERR_NONE)
			err_set(e, ERR_RUNTIME, "out of host memory");
		memplan_release(&x);
		return -1;
	}
	/* caps every partition meets: the whole model's time, and its peak as one stage */
	for (int l = 0; l < x.L; l++)
		run_add(&all, &x, l);
	tall = all.time * 1.000001 + 1e-9;
	for (int s = 0; s < x.S; s++) {
		double speed = p->cluster.device_speed[p->stages[s].device];

		tall = fmax(tall, all.time / (speed > 0 ? speed : 1) * 1.000001 + 1e-9);
	}
	for (int s = 0; s < x.S; s++)
		pmax = fmax(pmax, run_peak(&all, &x, s, zero3));
	pmax = pmax * 1.000001 + 1;
	pmin = bisect(&x, zero3, false, 0, pmax, INFINITY, first);
	if (pmin > usable) {
		/* nothing fits: the least peak, for the message that says by how much */
		if (!greedy(&x, zero3, INFINITY, pmin, first))
			r = err_set(e, ERR_RUNTIME, "memory partition: no pass at its own least peak");
	} else {
		double tcap = bisect(&x, zero3, true, 0, tall, usable, first);

		if (!greedy(&x, zero3, tcap, usable, first))
			r = err_set(e, ERR_RUNTIME, "memory partition: no pass at its own least time");
	}
	if (r == 0)
		for (int s = 0; s < x.S; s++) {
			p->stages[s].first = first[s];
			p->stages[s].last = first[s + 1] - 1;
		}
	free(first);
	memplan_release(&x);
	return r;
}
