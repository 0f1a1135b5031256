/*
 * sim_setup — what a run needs before its first event: the stages' costs under the plan's
 * layout (and recompute), each device's static memory, the links between devices numbered
 * once, the ops' predecessor counts, the first ops queued, and the latest-start policy's
 * tails. The event loop itself is sim.c.
 */
#include "config.h"
#include "sim_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Numbers the directed links the plan uses. Only adjacent stages talk, so a plan has at
 * most 2(S-1) of them: slot 2s is stage s's activations to s+1, slot 2s+1 the gradients
 * from s+1 back to s. Slots over the same directed pair of devices share one FIFO (found
 * through a small open-addressing table), so memory and time are linear in stages
 * instead of quadratic in devices (65 536 devices needed 32 GiB for a device x device
 * table). */
static void number_links(struct ctx *c)
{
	struct sim *s = c->s;
	const struct stage *g = c->p->stages;
	long mask = s->link_hash_cap - 1;
	int n = 0;

	memset(s->link_hash, 0, (size_t)s->link_hash_cap * sizeof(*s->link_hash));
	for (int slot = 0; slot < 2 * (c->S - 1); slot++) {
		int st = slot / 2, a = g[st + (slot & 1)].device, b = g[st + !(slot & 1)].device;
		uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
		long h = (long)((key * 0x9e3779b97f4a7c15ull) >> 20) & mask;

		/* entries hold slot + 1 of the first slot over the pair; 0 is empty */
		for (;; h = (h + 1) & mask) {
			int q = s->link_hash[h] - 1;

			if (q < 0) {
				s->link_hash[h] = slot + 1;
				s->link_of[slot] = n;
				s->link_free[n++] = 0;
				break;
			}
			if (g[q / 2 + (q & 1)].device == a && g[q / 2 + !(q & 1)].device == b) {
				s->link_of[slot] = s->link_of[q];
				break;
			}
		}
	}
}

/* ---- setup ------------------------------------------------------------------------ */

/* The latest-start policy's tails: per stage and slot the longest chain of work from the
 * op to the end of its microbatch (F runs on to the last stage and back down; I/B down to
 * stage 0 or its own W), and the cycle a microbatch is due after the one before it: the
 * busiest device's work per microbatch times the policy's factor. Transfers are left out:
 * the tails only rank ops against each other. dev_peak is scratch here (zeroed after). */
static void latest_start_tails(struct ctx *c)
{
	struct sim *s = c->s;
	const struct plan *p = c->p;
	double *tail = s->stage_tail, busiest = 0;

	for (int d = 0; d < p->ndevices; d++)
		s->dev_last_end[d] = 0;
	for (int st = 0; st < c->S; st++) {
		long op = op_id(c, st, 0, 0);
		double w = c->K > 2 ? op_dur(c, op + 2) : 0, b = op_dur(c, op + 1);

		tail[3 * st + 2] = w;
		tail[3 * st + 1] = b + fmax(w, st > 0 ? tail[3 * (st - 1) + 1] : 0);
		s->dev_last_end[p->stages[st].device] += op_dur(c, op) + b + w;
	}
	for (int st = c->S - 1; st >= 0; st--)
		tail[3 * st] = op_dur(c, op_id(c, st, 0, 0)) + fmax(tail[3 * st + 1], st + 1 < c->S ? tail[3 * (st + 1)] : 0);
	for (int d = 0; d < p->ndevices; d++) {
		busiest = fmax(busiest, s->dev_last_end[d]);
		s->dev_last_end[d] = 0;
	}
	s->lst_cycle_ms = c->o->policy.lst_cycle * busiest;
}

/* What stage g keeps per microbatch (act: activations for the backward; act_w: what W
 * needs), the largest activations one recomputed layer brings back while it runs (*redo),
 * and its parameters (experts among them). */
struct stage_mem {
	uint64_t act, act_w;
	double params, experts, redo;
};

static struct stage_mem stage_memory(const struct ctx *c, const struct stage *g)
{
	const struct plan *p = c->p;
	const struct model *m = &p->model;
	struct stage_mem r = { 0 };

	for (int l = g->first; l <= g->last; l++) {
		const struct layer *y = &m->layers[l];
		uint64_t in = model_layer_in_bytes(m, l);

		enum recompute rc = plan_layer_recompute(p, (int)(g - p->stages), l);

		/* none keeps every activation; selective drops the attention core's and redoes
		 * it in the backward; full keeps each layer's input and redoes the whole layer
		 * (one at a time: the largest layer's activations are the extra while it runs);
		 * a block-recomputing stage does so for its first layers only */
		if (rc == RECOMPUTE_FULL) {
			r.act += in;
			r.redo = fmax(r.redo, (double)y->act_bytes);
		} else if (rc == RECOMPUTE_SELECTIVE) {
			r.act += y->act_bytes - y->core_act_bytes;
			r.redo = fmax(r.redo, (double)y->core_act_bytes);
		} else {
			r.act += y->act_bytes;
		}
		r.act_w += y->act_w_bytes;
		r.params += (double)y->param_bytes;
		/* a head tied to the embedding on the embedding's own device: one matrix */
		if (y->tied_bytes && p->stages[0].device == g->device)
			r.params -= (double)y->tied_bytes;
		r.experts += (double)y->expert_param_bytes;
	}
	return r;
}

/* ZeRO-3 gathers a layer's whole weights while it runs and prefetches the next, as FSDP
 * does: the two largest layers of g are a working buffer on top of the shards. */
static double zero3_buffer(const struct model *m, const struct stage *g, int ep)
{
	double big[2] = { 0, 0 };

	for (int l = g->first; l <= g->last; l++) {
		const struct layer *y = &m->layers[l];
		double full = (double)(y->param_bytes - y->expert_param_bytes) + (double)y->expert_param_bytes / ep;

		if (full > big[0]) {
			big[1] = big[0];
			big[0] = full;
		} else if (full > big[1]) {
			big[1] = full;
		}
	}
	return big[0] + big[1];
}

/* The stages of each device, and where its ops go in a policy-made order (a counting
 * sort: linear in devices + stages). */
static void index_stages(struct ctx *c)
{
	struct sim *s = c->s;
	const struct plan *p = c->p;

	for (int d = 0; d <= p->ndevices; d++)
		s->dev_stage_start[d] = 0;
	for (int st = 0; st < c->S; st++)
		s->dev_stage_start[p->stages[st].device + 1]++;
	s->order_start[0] = 0;
	for (int d = 0; d < p->ndevices; d++) {
		s->order_start[d + 1] = s->order_start[d] + (long)s->dev_stage_start[d + 1] * c->M * c->K;
		s->dev_stage_start[d + 1] += s->dev_stage_start[d];
		s->work[d] = s->dev_stage_start[d]; /* cursor; work is empty until the run */
	}
	for (int st = 0; st < c->S; st++)
		s->dev_stages[s->work[p->stages[st].device]++] = st;
}

void sim_setup(struct ctx *c)
{
	struct sim *s = c->s;
	const struct plan *p = c->p;
	const struct model *m = &p->model;
	long nops = (long)c->S * c->M * c->K;
	struct parallel par = plan_parallel(p);

	for (int d = 0; d < p->ndevices; d++) {
		s->dev_blocked[d] = 0;
		s->dev_block_op[d] = -1;
		s->dev_last_end[d] = 0;
		s->dev_free[d] = 0;
		s->dev_last_kind[d] = OP_B;
		s->dev_static[d] = 0;
		s->dev_wgo[3 * d] = s->dev_wgo[3 * d + 1] = s->dev_wgo[3 * d + 2] = 0;
		s->dev_peak[d] = 0;
		s->next[d] = c->o->policy_driven ? 0 : p->order_start[d];
		s->marked[d] = 0;
	}
	for (int st = 0; st < c->S; st++) {
		const struct stage *g = &p->stages[st];
		double ms[3];
		struct mem_static ms_;

		struct stage_mem sm = stage_memory(c, g);

		if (c->o->unit_costs) {
			ms[0] = 1;
			ms[1] = p->split_backward ? 1 : 2;
			ms[2] = p->split_backward ? 1 : 0;
		} else {
			plan_stage_ms(p, st, ms);
		}
		s->stage_f[st] = ms[0];
		s->stage_b[st] = ms[1];
		s->stage_w[st] = ms[2];
		s->stage_act[st] = sm.act;
		s->stage_act_w[st] = sm.act_w;
		s->stage_out[st] = m->layers[g->last].out_bytes;
		s->stage_inflight[st] = 0;
		s->stage_wpend[st] = 0;
		s->stage_hold[st] = 0;
		s->stage_redo[st] = sm.redo;
		parallel_static_mem(&par, sm.params, sm.experts, &ms_);
		s->dev_wgo[3 * g->device] += ms_.weights;
		s->dev_wgo[3 * g->device + 1] += ms_.grads;
		s->dev_wgo[3 * g->device + 2] += ms_.optimizer;
		s->dev_static[g->device] += ms_.weights + ms_.grads + ms_.optimizer;
		/* ZeRO-3's gather buffer (dev_peak is scratch until below) */
		if (par.zero >= 3)
			s->dev_peak[g->device] = fmax(s->dev_peak[g->device], zero3_buffer(m, g, par.ep));
	}
	if (c->o->policy_driven && c->o->policy.lst_cycle > 0)
		latest_start_tails(c);
	for (int d = 0; d < p->ndevices; d++) {
		s->dev_wgo[3 * d] += s->dev_peak[d];
		s->dev_static[d] += s->dev_peak[d];
		s->dev_mem[d] = s->dev_static[d];
		s->dev_peak[d] = s->dev_static[d];
	}
	index_stages(c);
	for (int q = 0; q < 3 * c->S; q++)
		s->rq_len[q] = 0;
	number_links(c);
	memset(s->ready, 0, (size_t)nops * sizeof(*s->ready));
	if (c->blocking)
		for (long i = 0; i < nops; i++)
			s->pend_send[i] = -1;
	memset(s->state, 0, (size_t)nops * sizeof(*s->state));
	for (int st = 0; st < c->S; st++) {
		int8_t np[3] = { (int8_t)(st > 0), (int8_t)(1 + (st + 1 < c->S)), 1 };
		long op = (long)st * c->M * c->K;

		for (int mb = 0; mb < c->M; mb++)
			for (int k = 0; k < c->K; k++, op++) {
				s->npred[op] = np[k];
				if (np[k] == 0 && c->o->policy_driven)
					rq_push(c, op);
			}
	}
	s->nheap = 0;
	s->nxfers = 0;
	s->nmem = 0;
}
