/*
 * sim_metrics — the results of a finished run: the data-parallel gradient sync after
 * (and overlapped with) the last backward, iteration time, bubbles per device, peak
 * memory.
 */
#include "config.h"
#include "sim_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

static int piece_cmp(const void *a, const void *b)
{
	const struct sim_sync_piece *x = a, *y = b;

	return (x->ready > y->ready) - (x->ready < y->ready);
}

/*
 * Megatron's overlap-grad-reduce on one GPU per device: a layer's gradients are complete
 * when the last microbatch's weight-gradient op (W, or B without a split) has passed it
 * (the backward runs the stage's layers last to first, each taking its share of the op's
 * time), and then go out on the device's one communication stream, in the order they
 * become ready: an all-reduce over the data-parallel ring (a reduce-scatter under ZeRO).
 * For ZeRO 1-2 the updated weights' all-gather follows, overlapped with the next
 * iteration up to the end of the device's first forward (overlap-param-gather). Whatever
 * of it runs past the device's last op lengthens the iteration.
 *
 * ZeRO 2-3 shard the gradients, so no GPU holds a whole gradient to accumulate into: every
 * microbatch's backward reduce-scatters its own (Megatron-FSDP, FSDP2, DeepSpeed), M of them
 * an iteration. The M - 1 before the last go out on the same stream from the device's first
 * backward on, ahead of the last microbatch's.
 */
static int dp_sync(struct ctx *c, struct metrics *m, double *makespan)
{
	struct sim *s = c->s;
	const struct plan *p = c->p;
	struct parallel par = plan_parallel(p);
	const struct model *mdl = &p->model;
	double compute = *makespan;

	if (par.dp <= 1)
		return 0;
	if (mdl->nlayers > s->sync_cap) {
		if (GROW(s->sync_piece, mdl->nlayers))
			return -1;
		s->sync_cap = mdl->nlayers;
	}
	for (int d = 0; d < p->ndevices; d++) {
		long n = 0;
		double t = 0, gather = 0, first = INFINITY, earlier = 0, first_bwd = INFINITY;

		for (int i = s->dev_stage_start[d]; i < s->dev_stage_start[d + 1]; i++) {
			int st = s->dev_stages[i], k = c->K == 3 ? 2 : 1;
			const struct stage *sg = &p->stages[st];
			double end = 0, start = 0, total = 0, done = 0;

			first_bwd = fmin(first_bwd, s->end[op_id(c, st, 0, k)]);
			for (int mb = 0; mb < c->M; mb++) {
				long op = op_id(c, st, mb, k);

				if (s->end[op] > end) {
					end = s->end[op];
					start = s->start[op];
				}
			}
			for (int l = sg->first; l <= sg->last; l++)
				total += c->K == 3 ? mdl->layers[l].w_ms : mdl->layers[l].b_ms + mdl->layers[l].w_ms;
			for (int l = sg->last; l >= sg->first; l--) {
				const struct layer *y = &mdl->layers[l];
				struct dp_sync_cost dc;

				done += c->K == 3 ? y->w_ms : y->b_ms + y->w_ms;
				parallel_dp_sync(&par, &p->cluster.rep.dp_link, (double)y->param_bytes, (double)y->expert_param_bytes, &dc);
				s->sync_piece[n].ready = total > 0 ? start + (end - start) * done / total : end;
				s->sync_piece[n++].ms = dc.grad_ms;
				gather += dc.gather_ms;
				if (par.zero >= 2)
					earlier += (c->M - 1) * dc.grad_ms;
			}
		}
		qsort(s->sync_piece, (size_t)n, sizeof(*s->sync_piece), piece_cmp);
		if (earlier > 0)
			t = first_bwd + earlier;
		for (long i = 0; i < n; i++) {
			if (i == 0)
				first = s->sync_piece[i].ready;
			t = fmax(t, s->sync_piece[i].ready) + s->sync_piece[i].ms;
		}
		if (gather > 0) {
			/* ZeRO 1-2: the updated weights' all-gather overlaps the next iteration's first
			 * forward on this device (Megatron's overlap-param-gather): what its warm-up wait
			 * and that forward cannot hide lengthens the iteration */
			double hide = INFINITY;

			for (int i = s->dev_stage_start[d]; i < s->dev_stage_start[d + 1]; i++)
				for (int mb = 0; mb < c->M; mb++) {
					long op = op_id(c, s->dev_stages[i], mb, 0);

					hide = fmin(hide, s->end[op]);
				}
			t += fmax(0, gather - (isfinite(hide) ? hide : 0));
		}
		if (n > 0 && t > first) {
			m->dev[d].sync_start_ms = first;
			m->dev[d].sync_end_ms = t;
			if (t > *makespan)
				*makespan = t;
		}
	}
	m->dp_sync_ms = *makespan - compute;
	return 0;
}

/* Bytes as the metrics hold them, rounded; past 2^64 (a model may hold 2^62 bytes of
 * weights, and its optimizer states six times that) it saturates instead of being an
 * undefined conversion. */

/* Over one device's ops [a, end): when its first backward starts (warm-up ends there) and
 * its last forward ends (cool-down starts after both). */
static void warmup_ends(const struct ctx *c, const struct action *a, const struct action *end, double *first_b,
                        double *last_f)
{
	const struct sim *s = c->s;

	*first_b = INFINITY;
	*last_f = 0;
	for (; a < end; a++) {
		long op = action_op(c, a);

		if (a->kind == OP_F && s->end[op] > *last_f)
			*last_f = s->end[op];
		if ((a->kind == OP_I || a->kind == OP_B) && s->start[op] < *first_b)
			*first_b = s->start[op];
	}
}

/* Walks each device's ops in execution order: busy/idle split, memory curve and peak. */
/* The bounds the plan's time is measured against, and its efficiency against each; -1 when
 * out of host memory. */
static int compute_bounds(const struct plan *p, struct metrics *m)
{
	double makespan = m->makespan_ms;

	m->lower_bound_ms = sim_lower_bound(&p->model, &p->cluster, p->microbatches, p->split_backward);
	m->efficiency = makespan > 0 ? m->lower_bound_ms / makespan : 0;
	if (m->efficiency > 1)
		m->efficiency = 1;
	m->lower_bound_tight_ms = sim_lower_bound_tight(&p->model, &p->cluster, p->microbatches, p->split_backward);
	m->efficiency_tight = makespan > 0 ? m->lower_bound_tight_ms / makespan : 0;
	if (m->efficiency_tight > 1)
		m->efficiency_tight = 1;
	m->lower_bound_memory_ms = sim_lower_bound_memory(&p->model, &p->cluster, p->microbatches, p->split_backward);
	if (isnan(m->lower_bound_memory_ms))
		return -1;
	m->efficiency_memory = makespan > 0 ? m->lower_bound_memory_ms / makespan : 0;
	if (m->efficiency_memory > 1)
		m->efficiency_memory = 1;
	return 0;
}

int sim_compute_metrics(struct ctx *c, struct metrics *m)
{
	struct sim *s = c->s;
	const struct plan *p = c->p;
	const struct action *ord = c->o->policy_driven ? s->order : p->order;
	const int *ostart = c->o->policy_driven ? s->order_start : p->order_start;
	double makespan = 0, busy_all = 0, usable = cluster_usable_bytes(&p->cluster);
	long nops = (long)c->S * c->M * c->K;

	for (long op = 0; op < nops; op++)
		if (s->end[op] > makespan)
			makespan = s->end[op];
	m->ndevices = p->ndevices;
	m->dev = calloc((size_t)p->ndevices, sizeof(*m->dev));
	if (!m->dev)
		return -1;
	if (dp_sync(c, m, &makespan) < 0)
		return -1;
	for (int d = 0; d < p->ndevices; d++) {
		struct device_metrics *dm = &m->dev[d];
		double first_b, last_f, prev_end = 0, mem = s->dev_static[d], peak = mem;
		double warm = 0, cool = 0, busy = 0;

		warmup_ends(c, ord + ostart[d], ord + ostart[d + 1], &first_b, &last_f);
		for (int i = ostart[d]; i < ostart[d + 1]; i++) {
			const struct action *a = &ord[i];
			int k = a->kind == OP_F ? 0 : a->kind == OP_W ? 2 : 1;
			long op = op_id(c, a->stage, a->mb, k);
			double gap = s->start[op] - prev_end;

			if (gap > 0) {
				if (s->start[op] <= first_b)
					warm += gap;
				else if (prev_end >= last_f && prev_end >= first_b)
					cool += gap;
			}
			busy += s->end[op] - s->start[op];
			prev_end = s->end[op];
			if (k == 0) {
				mem += (double)s->stage_act[a->stage];
				if (mem > peak)
					peak = mem;
			} else if (k == 1) {
				/* while it runs, a recomputing backward holds its redone activations */
				if (mem + s->stage_redo[a->stage] > peak)
					peak = mem + s->stage_redo[a->stage];
				mem -= p->split_backward ? (double)s->stage_act[a->stage] - (double)s->stage_act_w[a->stage]
				                         : (double)s->stage_act[a->stage];
				/* after a full recompute's I, what W needs can exceed the input it kept */
				if (mem > peak)
					peak = mem;
			} else {
				mem -= (double)s->stage_act_w[a->stage];
			}
			if (c->record) {
				if (s->nmem + 2 > s->mem_cap) {
					long cap = s->mem_cap ? s->mem_cap * 2 : 4096;

					if (GROW(s->mem, cap))
						return -1;
					s->mem_cap = cap;
				}
				s->mem[s->nmem].dev = d;
				s->mem[s->nmem].t = k == 0 ? s->start[op] : s->end[op];
				s->mem[s->nmem++].bytes = mem;
			}
		}
		if (ostart[d + 1] > ostart[d] && makespan > prev_end)
			cool += makespan - prev_end;
		dm->busy_ms = busy;
		dm->idle_ms = makespan - busy > 0 ? makespan - busy : 0;
		dm->bubble_ratio = makespan > 0 ? dm->idle_ms / makespan : 0;
		dm->warmup_idle_ms = warm;
		dm->cooldown_idle_ms = cool;
		dm->peak_mem_bytes = mem_bytes(peak);
		dm->mem_capacity_bytes = p->cluster.mem_bytes;
		dm->weights_bytes = mem_bytes(s->dev_wgo[3 * d]);
		dm->grads_bytes = mem_bytes(s->dev_wgo[3 * d + 1]);
		dm->optimizer_bytes = mem_bytes(s->dev_wgo[3 * d + 2]);
		dm->act_peak_bytes = mem_bytes(peak - s->dev_static[d]);
		s->dev_peak[d] = peak;
		busy_all += busy;
		if (peak > usable)
			m->noom++;
	}
	if (m->noom) {
		int k = 0;

		m->oom = calloc((size_t)m->noom, sizeof(*m->oom));
		if (!m->oom)
			return -1;
		for (int d = 0; d < p->ndevices; d++)
			if (s->dev_peak[d] > usable)
				m->oom[k++] = d;
	}
	m->makespan_ms = makespan;
	m->bubble_ratio = makespan > 0 ? 1 - busy_all / (p->ndevices * makespan) : 0;
	if (m->bubble_ratio < 0)
		m->bubble_ratio = 0;
	if (!c->o->no_bounds && compute_bounds(p, m) < 0)
		return -1; /* out of host memory */
	/* every data-parallel replica runs its own microbatches */
	m->throughput_tokens_per_s = makespan > 0
		? (double)plan_parallel(p).dp * p->microbatches * (double)p->model.seq_len * (double)p->model.micro_batch_size /
		  (makespan / 1000)
		: 0;
	return 0;
}

/* ---- results ---------------------------------------------------------------------- */

int sim_timeline(const struct sim *s, const struct plan *p, const struct metrics *m,
                 struct timeline *t, struct err *e)
{
	const struct action *ord = p->order;
	const int *ostart = p->order_start;
	int K = plan_ops_per_mb(p);
	long mi = 0;

	memset(t, 0, sizeof(*t));
	t->source = strdup("sim");
	t->ndevices = p->ndevices;
	t->dev = calloc((size_t)p->ndevices, sizeof(*t->dev));
	if (!t->source || !t->dev)
		goto oom;
	for (int d = 0; d < p->ndevices; d++) {
		struct tl_device *td = &t->dev[d];
		int n = ostart[d + 1] - ostart[d], nm = 0;

		td->ops = calloc((size_t)(n ? n : 1), sizeof(*td->ops));
		if (!td->ops)
			goto oom;
		for (int i = 0; i < n; i++) {
			const struct action *a = &ord[ostart[d] + i];
			long op = op_slot_index(a->stage, p->microbatches, a->mb, K, op_kind_slot(a->kind));

			td->ops[i] = (struct tl_op){ s->start[op], s->end[op], a->stage, a->mb, a->kind };
		}
		td->nops = n;
		/* the order-driven plan lists ops in start order already; keep it sorted anyway */
		for (int i = 1; i < n; i++) {
			struct tl_op x = td->ops[i];
			int j = i;

			while (j > 0 && td->ops[j - 1].start_ms > x.start_ms) {
				td->ops[j] = td->ops[j - 1];
				j--;
			}
			td->ops[j] = x;
		}
		while (mi + nm < s->nmem && s->mem[mi + nm].dev == d)
			nm++;
		td->mem = calloc((size_t)nm + 1, sizeof(*td->mem));
		if (!td->mem)
			goto oom;
		td->mem[0] = (struct tl_mem){ 0, mem_bytes(s->dev_static[d]) };
		for (int i = 0; i < nm; i++)
			td->mem[i + 1] = (struct tl_mem){ s->mem[mi + i].t, mem_bytes(s->mem[mi + i].bytes) };
		td->nmem = nm + 1;
		mi += nm;
		td->peak_mem_bytes = m->dev ? m->dev[d].peak_mem_bytes : 0;
	}
	t->xfers = calloc((size_t)(s->nxfers ? s->nxfers : 1), sizeof(*t->xfers));
	if (!t->xfers)
		goto oom;
	for (long i = 0; i < s->nxfers; i++) {
		const struct sim_xfer *x = &s->xfers[i];

		t->xfers[i] = (struct tl_xfer){ x->src, x->dst, x->stage, x->mb, x->kind,
		                                x->start_ms, x->end_ms, x->bytes };
	}
	t->nxfers = s->nxfers;
	if (m->dev) {
		t->metrics = *m;
		t->metrics.dev = malloc((size_t)m->ndevices * sizeof(*m->dev));
		t->metrics.cycle = NULL;
		t->metrics.ncycle = 0;
		t->metrics.oom = m->noom ? malloc((size_t)m->noom * sizeof(int)) : NULL;
		if (!t->metrics.dev || (m->noom && !t->metrics.oom))
			goto oom;
		memcpy(t->metrics.dev, m->dev, (size_t)m->ndevices * sizeof(*m->dev));
		if (m->noom)
			memcpy(t->metrics.oom, m->oom, (size_t)m->noom * sizeof(int));
		t->has_metrics = true;
	}
	return 0;
oom:
	timeline_release(t);
	return err_set(e, ERR_RUNTIME, "out of host memory building the timeline");
}

int sim_apply_order(const struct sim *s, struct plan *p, struct err *e)
{
	long n = s->order_start[p->ndevices];

	if (n != plan_total_ops(p))
		return err_set(e, ERR_RUNTIME, "the simulated order has %ld ops, the plan %ld", n, plan_total_ops(p));
	memcpy(p->order, s->order, (size_t)n * sizeof(*p->order));
	memcpy(p->order_start, s->order_start, (size_t)(p->ndevices + 1) * sizeof(int));
	return 0;
}
