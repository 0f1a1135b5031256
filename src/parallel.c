/*
 * parallel — PP x TP x DP (x EP), ZeRO and recompute: see parallel.h for the GPU numbering
 * and the memory rule.
 *
 * The layer table at another TP degree comes from the model's "source" (written by
 * `octopipe cost`: the architecture object it was made from, its sequence length,
 * micro-batch, TP degree and the hardware efficiencies). Each layer of the file is
 * scaled field by field by cost(T) / cost(T0), T0 the degree the file was made at, so a
 * table calibrated or edited by hand keeps its corrections and an untouched one equals
 * the cost model at T exactly.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "bounds.h"
#include "hfconfig.h"
#include "json.h"
#include "parallel.h"
#include "runtime.h"

static const char *const recompute_names[] = { "none", "selective", "full" };

const char *recompute_name(enum recompute r)
{
	return (unsigned)r < 3 ? recompute_names[r] : "?";
}

int recompute_from_name(const char *name, enum recompute *out)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(name, recompute_names[i]) == 0) {
			*out = (enum recompute)i;
			return 0;
		}
	return -1;
}

void parallel_default(struct parallel *l, int pp)
{
	l->pp = pp;
	l->tp = l->dp = l->ep = 1;
	l->zero = 0;
	l->fp32_grads = false;
	l->micro_batch = 0;
}

void parallel_from_replica(const struct replica *r, int pp, struct parallel *out)
{
	parallel_default(out, pp);
	if (r->tp > 0) {
		out->tp = r->tp;
		out->dp = r->dp;
		out->ep = r->ep;
		out->zero = r->zero;
		out->fp32_grads = r->fp32_grads;
	}
}

bool parallel_is_pipeline_only(const struct parallel *l)
{
	return l->tp == 1 && l->dp == 1 && l->ep == 1 && l->zero == 0 && !l->fp32_grads && l->micro_batch == 0;
}

int parallel_check(const struct parallel *l, const struct cluster *g, struct err *e)
{
	long gpus = (long)l->pp * l->tp * l->dp;
	int gpn = g->gpus_per_node, block = l->tp * l->dp;

	if (l->pp < 1 || l->tp < 1 || l->dp < 1 || l->ep < 1 || l->pp > PARALLEL_MAX_DEGREE ||
	    l->tp > PARALLEL_MAX_DEGREE || l->dp > PARALLEL_MAX_DEGREE || l->ep > PARALLEL_MAX_DEGREE)
		return err_set(e, ERR_INPUT, "pp, tp, dp and ep must be 1..%d", PARALLEL_MAX_DEGREE);
	if (l->zero < 0 || l->zero > 3)
		return err_set(e, ERR_INPUT, "zero must be 0, 1, 2 or 3 (the ZeRO stage), not %d", l->zero);
	if (l->micro_batch < 0 || l->micro_batch > OCTO_MAX_MICRO_BATCH)
		return err_set(e, ERR_INPUT, "the micro-batch size must be 1..%ld sequences, not %ld",
		               (long)OCTO_MAX_MICRO_BATCH, l->micro_batch);
	if (gpus > g->devices)
		return err_set(e, ERR_INPUT, "pp %d x tp %d x dp %d = %ld GPUs, but cluster '%s' has %d",
		               l->pp, l->tp, l->dp, gpus, g->name, g->devices);
	if (l->tp > gpn || gpn % l->tp != 0)
		return err_set(e, ERR_INPUT, "tp %d: a tensor-parallel group stays on one node, and cluster '%s' has "
		               "%d GPUs per node (tp must divide it)", l->tp, g->name, gpn);
	if (block % gpn != 0 && gpn % block != 0)
		return err_set(e, ERR_INPUT, "tp %d x dp %d = %d GPUs per pipeline stage neither divides nor is a "
		               "multiple of the %d GPUs of a node: the replicas would straddle nodes",
		               l->tp, l->dp, block, gpn);
	if (l->dp % l->ep != 0)
		return err_set(e, ERR_INPUT, "ep %d must divide dp %d (experts are sharded over data-parallel ranks)",
		               l->ep, l->dp);
	if (l->zero > 0 && l->dp == 1)
		return err_set(e, ERR_INPUT, "zero %d shards over data-parallel ranks, and dp is 1", l->zero);
	return 0;
}

/*
 * A DP ring that leaves the node: its r members on each node each have a NIC of their own
 * (a DGX-class node has one per GPU), and NCCL runs r rings at once, each crossing between
 * nodes on another member's NIC, so a rank's share of the ring moves at r NICs' bandwidth,
 * up to its NVLink's.
 */
struct link parallel_dp_link(const struct parallel *l, const struct cluster *g)
{
	struct link lk = g->inter;
	int r = g->gpus_per_node / (l->tp > 0 ? l->tp : 1);

	if (l->tp * l->dp <= g->gpus_per_node)
		return g->intra;
	if (r < 1)
		r = 1;
	lk.gbytes_per_s = fmin(g->intra.gbytes_per_s, r * g->inter.gbytes_per_s);
	return lk;
}

/*
 * An all-to-all over E ranks of which r share a node: each rank sends (E - r) / E of its
 * tokens through its own NIC and (r - 1) / E over NVLink at the same time. The link returned
 * moves the whole (E - 1) / E in the time the slower of the two takes.
 */
struct link parallel_ep_link(const struct parallel *l, const struct cluster *g)
{
	struct link lk = g->inter;
	double E = l->ep, r, cross, local;

	/* the groups start at multiples of T x E inside node-aligned blocks: all of them stay
	 * in a node only when T x E divides it (T 2 x E 3 on 8 GPUs: GPUs 6-11 span two) */
	if (g->gpus_per_node % (l->tp * l->ep) == 0)
		return g->intra;
	/* r members a node when the groups tile whole nodes; a group smaller than a node that
	 * straddles two has a member alone on one side */
	r = l->tp * l->ep > g->gpus_per_node ? fmax(1, fmin(E, (double)g->gpus_per_node / l->tp)) : 1;
	cross = (E - r) / E / g->inter.gbytes_per_s;
	local = (r - 1) / E / g->intra.gbytes_per_s;
	if (cross > 0 || local > 0)
		lk.gbytes_per_s = (E - 1) / E / fmax(cross, local);
	return lk;
}

int parallel_cluster(const struct cluster *g, const struct parallel *l, struct cluster *out, struct err *e)
{
	int block = l->tp * l->dp;

	if (cluster_copy(out, g, e) < 0)
		return -1;
	out->devices = l->pp;
	out->rep.tp = l->tp;
	out->rep.dp = l->dp;
	out->rep.ep = l->ep;
	out->rep.zero = l->zero;
	out->rep.fp32_grads = l->fp32_grads;
	out->rep.dp_link = parallel_dp_link(l, g);
	out->gpus_per_node = block <= g->gpus_per_node ? g->gpus_per_node / block : 1;
	if (g->device_speed) {
		double *sp = calloc((size_t)l->pp, sizeof(*sp));

		if (!sp) {
			cluster_release(out);
			return err_set(e, ERR_RUNTIME, "out of host memory");
		}
		/* a pipeline device runs at the pace of its slowest GPU */
		for (int p = 0; p < l->pp; p++) {
			sp[p] = INFINITY;
			for (int i = 0; i < block; i++)
				sp[p] = fmin(sp[p], g->device_speed[p * block + i]);
		}
		free(out->device_speed);
		out->device_speed = sp;
	}
	return 0;
}

bool model_recomputes(const struct model *m)
{
	const cJSON *src = m->extra ? cJSON_GetObjectItemCaseSensitive(m->extra, "source") : NULL;

	return src && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(src, "recompute"));
}

bool model_has_source(const struct model *m)
{
	return m->extra && cJSON_GetObjectItemCaseSensitive(m->extra, "source") != NULL;
}

int model_made_tp(const struct model *m)
{
	const cJSON *src = m->extra ? cJSON_GetObjectItemCaseSensitive(m->extra, "source") : NULL;
	const cJSON *tp = src ? cJSON_GetObjectItemCaseSensitive(src, "tp") : NULL;

	return cJSON_IsNumber(tp) && tp->valuedouble >= 1 && tp->valuedouble <= PARALLEL_MAX_DEGREE
	       ? (int)tp->valuedouble : 1;
}

/* The architecture and cost options of m's "source"; 1 when it has none. */
static int model_source(const struct model *m, struct arch *a, struct cost_opts *o, struct hardware *hw,
                        struct err *e)
{
	const cJSON *src = m->extra ? cJSON_GetObjectItemCaseSensitive(m->extra, "source") : NULL;
	static const char *const source_keys[] = { "architecture", "hardware", "runtime", "tp", "recompute", NULL };
	const cJSON *arch, *hwj, *rtj;
	struct jv v = { m->name, e, "source" };
	double d;
	bool rc = false;

	if (!src)
		return 1;
	if (!cJSON_IsObject(src))
		return jv_fail(&v, "source", "must be an object");
	if (jv_keys(&v, src, "source", source_keys) < 0 ||
	    jv_object(&v, src, "source", "architecture", JV_REQUIRED, &arch) < 0 ||
	    jv_object(&v, src, "source", "hardware", 0, &hwj) < 0 ||
	    jv_object(&v, src, "source", "runtime", 0, &rtj) < 0 ||
	    jv_number(&v, src, "source", "tp", JV_INTEGER, 1, PARALLEL_MAX_DEGREE, 1, &d) < 0)
		return -1;
	memset(o, 0, sizeof(*o));
	o->tp = (int)d;
	o->seq = m->seq_len;
	o->micro_batch = m->micro_batch_size;
	if (jv_bool(&v, src, "source", "recompute", 0, false, &rc) < 0)
		return -1;
	o->recompute = rc;
	/* a table without a runtime was priced before runtimes existed: as Hugging Face eager */
	if (rtj) {
		struct runtime rt;

		if (runtime_from_json(&rt, rtj, m->name, e) < 0)
			return -1;
		o->style = rt.style;
		runtime_release(&rt);
	}
	hardware_default(hw);
	if (hwj && hardware_from_json(hw, hwj, m->name, "source", "hardware", e) < 0)
		return -1;
	memset(a, 0, sizeof(*a));
	if (cJSON_GetObjectItemCaseSensitive(arch, "format") ? arch_from_json(a, arch, m->name, e) < 0
	                                                        : hfconfig_read(a, arch, m->name, e) < 0) {
		hardware_release(hw);
		return -1;
	}
	if (a->nlayers != m->nlayers) {
		arch_release(a);
		hardware_release(hw);
		return err_set(e, ERR_INPUT, "%s: source.architecture has %d layers but the table has %d",
		               m->name, a->nlayers, m->nlayers);
	}
	return 0;
}

int model_set_source(struct model *m, const cJSON *architecture, const struct cost_opts *o,
                     const struct hardware *hw, const cJSON *runtime, struct err *e)
{
	struct hardware priced = *hw;
	struct jw w = { false };
	cJSON *src;

	/* the efficiencies the table was priced with are what re-pricing it needs */
	priced.eff_given = true;
	if (!m->extra && !(m->extra = cJSON_CreateObject()))
		return err_set(e, ERR_RUNTIME, "out of host memory");
	cJSON_DeleteItemFromObjectCaseSensitive(m->extra, "source");
	src = jw_obj(&w, m->extra, "source");
	jw_item(&w, src, "architecture", cJSON_Duplicate(architecture, true));
	jw_num(&w, src, "tp", o->tp);
	if (o->recompute)
		jw_bool(&w, src, "recompute", true);
	jw_item(&w, src, "hardware", hardware_to_json(&priced));
	if (runtime)
		jw_item(&w, src, "runtime", cJSON_Duplicate(runtime, true));
	return w.oom ? err_set(e, ERR_RUNTIME, "out of host memory") : 0;
}

int model_works(const struct model *m, struct work **works, struct cost_opts *o, struct err *e)
{
	struct arch a;
	struct hardware hw;
	int r = model_source(m, &a, o, &hw, e);

	if (r != 0)
		return r;
	hardware_release(&hw);
	*works = calloc((size_t)a.nlayers + 1, sizeof(**works));
	if (!*works) {
		arch_release(&a);
		return err_set(e, ERR_RUNTIME, "out of host memory");
	}
	for (int i = 0; i < a.nlayers; i++)
		(*works)[i] = a.layers[i].w;
	arch_release(&a);
	return 0;
}

static double scaled(double file, double at0, double at)
{
	return at0 > 0 ? file * (at / at0) : at;
}

static uint64_t scaled_bytes(uint64_t file, double at0, double at)
{
	double v = scaled((double)file, at0, at);

	return v > 0 ? (uint64_t)(v + 0.5) : 0;
}

int model_hardware(const struct model *m, struct hardware *hw, struct err *e)
{
	struct arch a;
	struct cost_opts o;
	int r = model_source(m, &a, &o, hw, e);

	if (r == 0)
		arch_release(&a);
	return r;
}

int model_reprice(struct model *m, const struct hardware *hw, struct err *e)
{
	struct arch a;
	struct hardware hw0;
	struct cost_opts o;
	cJSON *src, *hj;
	int r = model_source(m, &a, &o, &hw0, e);

	if (r != 0)
		return r;
	for (int i = 0; i < a.nlayers; i++) {
		struct layer *l = &m->layers[i];
		struct layer_cost c0, c1;

		cost_layer(&a.layers[i].w, &hw0, &o, &c0);
		cost_layer(&a.layers[i].w, hw, &o, &c1);
		l->f_ms = scaled(l->f_ms, c0.f_ms, c1.f_ms);
		l->b_ms = scaled(l->b_ms, c0.b_ms, c1.b_ms);
		l->w_ms = scaled(l->w_ms, c0.w_ms, c1.w_ms);
		l->core_f_ms = fmin(scaled(l->core_f_ms, c0.core_f_ms, c1.core_f_ms), l->f_ms);
	}
	arch_release(&a);
	hardware_release(&hw0);
	src = cJSON_GetObjectItemCaseSensitive(m->extra, "source");
	if (!(hj = hardware_to_json(hw)))
		return err_set(e, ERR_RUNTIME, "out of host memory");
	if (cJSON_GetObjectItemCaseSensitive(src, "hardware"))
		cJSON_ReplaceItemInObjectCaseSensitive(src, "hardware", hj);
	else
		cJSON_AddItemToObject(src, "hardware", hj);
	return 0;
}

/* Rescales every layer of out (a copy of the file's table) from degree o->tp to tp and from
 * micro-batch o->micro_batch to mb; without collectives, to the cost of its kernels alone
 * (the file's own times include them). */
static int retarget(struct model *out, const struct arch *a, const struct hardware *hw, struct cost_opts o,
                    const struct cluster *g, int tp, int ep, long mb, bool collectives, struct err *e)
{
	for (int i = 0; i < a->nlayers; i++) {
		const struct work *w = &a->layers[i].w;

		if (w->tp_units > 0 && (tp > w->tp_units || w->tp_units % tp != 0))
			return err_set(e, ERR_INPUT, "tp %d: layer %d (%s) has %d %s, which %d tensor-parallel ranks "
			               "cannot split evenly", tp, i, a->layers[i].kind, w->tp_units, w->tp_unit_name, tp);
	}
	o.link_gbytes_per_s = g->intra.gbytes_per_s;
	o.link_latency_us = g->intra.latency_us;
	struct layer_cost c0, c1;

	for (int i = 0, memo = -1; i < a->nlayers; i++) {
		struct layer *l = &out->layers[i];
		struct cost_opts o1 = o;

		/* a layer priced like the one before it (a model's repeated blocks) reuses its
		 * costs: the layout search prices every layer of every candidate replica */
		if (memo < 0 || memcmp(&a->layers[i].w, &a->layers[memo].w, sizeof(a->layers[i].w)) != 0) {
			cost_layer(&a->layers[i].w, hw, &o, &c0);
			o1.tp = tp;
			o1.ep = ep;
			o1.micro_batch = mb;
			o1.no_comm = !collectives;
			cost_layer(&a->layers[i].w, hw, &o1, &c1);
			memo = i;
		}
		l->f_ms = scaled(l->f_ms, c0.f_ms, c1.f_ms);
		l->b_ms = scaled(l->b_ms, c0.b_ms, c1.b_ms);
		l->w_ms = scaled(l->w_ms, c0.w_ms, c1.w_ms);
		l->core_f_ms = fmin(scaled(l->core_f_ms, c0.core_f_ms, c1.core_f_ms), l->f_ms);
		l->param_bytes = scaled_bytes(l->param_bytes, c0.param_bytes, c1.param_bytes);
		l->expert_param_bytes = scaled_bytes(l->expert_param_bytes, c0.expert_param_bytes, c1.expert_param_bytes);
		if (l->expert_param_bytes > l->param_bytes)
			l->expert_param_bytes = l->param_bytes;
		l->act_bytes = scaled_bytes(l->act_bytes, c0.act_bytes, c1.act_bytes);
		l->act_w_bytes = scaled_bytes(l->act_w_bytes, c0.act_w_bytes, c1.act_w_bytes);
		if (l->act_w_bytes > l->act_bytes)
			l->act_w_bytes = l->act_bytes;
		l->core_act_bytes = scaled_bytes(l->core_act_bytes, c0.core_act_bytes, c1.core_act_bytes);
		if (l->core_act_bytes > l->act_bytes)
			l->core_act_bytes = l->act_bytes;
		l->out_bytes = scaled_bytes(l->out_bytes, c0.out_bytes, c1.out_bytes);
		l->in_bytes = scaled_bytes(l->in_bytes, c0.in_bytes, c1.in_bytes);
		l->a2a_bytes = scaled_bytes(l->a2a_bytes, c0.a2a_bytes, c1.a2a_bytes);
		l->tied_bytes = scaled_bytes(l->tied_bytes, c0.tied_bytes, c1.tied_bytes);
		if (l->tied_bytes > l->param_bytes)
			l->tied_bytes = l->param_bytes;
	}
	out->micro_batch_size = mb;
	return 0;
}

void parallel_source_init(struct parallel_source *s, const struct model *m)
{
	memset(s, 0, sizeof(*s));
	s->m = m;
}

void parallel_source_release(struct parallel_source *s)
{
	if (s->read && s->r == 0) {
		arch_release(&s->a);
		hardware_release(&s->hw);
	}
	memset(s, 0, sizeof(*s));
}

/* model_source() of s's model, read on first use and its answer kept: 0 (s->a, s->o and
 * s->hw hold it), 1 (no architecture), or -1 with e set as the read set it. */
static int source_get(struct parallel_source *s, struct err *e)
{
	if (!s->read) {
		s->r = model_source(s->m, &s->a, &s->o, &s->hw, &s->err);
		s->read = true;
	}
	if (s->r < 0)
		*e = s->err;
	return s->r;
}

/* Megatron-LM requires num_experts % expert_model_parallel_size == 0: every rank holds
 * the same number of whole experts. The counts come from the architecture a model made by
 * `octopipe cost` carries (a routed-expert GEMM's groups); a measured table has none to
 * check. */
static int check_expert_split(struct parallel_source *s, int ep, struct err *e)
{
	const struct arch *a = &s->a;
	int r = source_get(s, e);

	if (r != 0)
		return r < 0 ? -1 : 0;
	for (int i = 0; i < a->nlayers; i++)
		for (int k = 0; k < a->layers[i].w.nk; k++) {
			int experts = (int)a->layers[i].w.k[k].groups;

			if (a->layers[i].w.k[k].kind == KT_GEMM && experts > 1 && experts % ep != 0)
				return err_set(e, ERR_INPUT, "ep %d: layer %d (%s) has %d routed experts, which %d "
				               "expert-parallel ranks cannot hold evenly", ep, i, a->layers[i].kind, experts, ep);
		}
	return 0;
}

/* parallel_model, or with collectives false parallel_model_compute, of s's model */
static int model_at(struct parallel_source *s, const struct cluster *g, const struct parallel *l, bool collectives,
                    struct model *out, struct err *e)
{
	const struct model *m = s->m;
	int made = model_made_tp(m);

	if (l->ep > 1) {
		bool experts = false;

		for (int i = 0; i < m->nlayers; i++)
			experts |= m->layers[i].expert_param_bytes > 0;
		/* Megatron-LM refuses expert parallelism without experts (num_experts is None) */
		if (!experts)
			return err_set(e, ERR_INPUT, "ep %d: model '%s' has no routed experts to shard over expert-parallel "
			               "ranks", l->ep, m->name);
		if (check_expert_split(s, l->ep, e) < 0)
			return -1;
	}
	if (model_copy(out, m, e) < 0)
		return -1;
	/* a table made at tp > 1 holds its collectives: only its architecture can take them out;
	 * under expert parallelism a rank runs E / ep experts on ep times the tokens each */
	long mb = l->micro_batch > 0 ? l->micro_batch : m->micro_batch_size;
	bool need_tp = l->tp != made || (!collectives && made > 1), need_mb = mb != m->micro_batch_size;

	if (need_tp || need_mb || l->ep > 1) {
		int r = source_get(s, e);

		/* a measured table's experts stay as measured: there are no kernels to re-price */
		if (r > 0 && !need_tp && !need_mb) {
			/* nothing to re-price */
		} else if (r != 0) {
			model_release(out);
			if (r > 0 && l->tp != made)
				return err_set(e, ERR_INPUT, "model '%s' has no architecture (a measured or hand-made table at "
				               "tp %d): it cannot be priced at tp %d; make it with `octopipe cost` from its "
				               "config.json", m->name, made, l->tp);
			if (r > 0 && need_mb)
				return err_set(e, ERR_INPUT, "model '%s' has no architecture (a measured or hand-made table at "
				               "micro-batch %ld): it cannot be priced at micro-batch %ld; make it with `octopipe "
				               "cost` from its config.json", m->name, m->micro_batch_size, mb);
			if (r > 0)
				return err_set(e, ERR_INPUT, "model '%s' has no architecture (a measured or hand-made table at "
				               "tp %d): its tensor-parallel collectives cannot be told from its kernels",
				               m->name, made);
			return -1;
		} else if (retarget(out, &s->a, &s->hw, s->o, g, l->tp, l->ep, mb, collectives, e) < 0) {
			model_release(out);
			return -1;
		}
	}
	if (l->ep > 1 && collectives) {
		const struct link ep_link = parallel_ep_link(l, g), *lk = &ep_link;

		for (int i = 0; i < out->nlayers; i++) {
			struct layer *y = &out->layers[i];
			double ms;

			if (y->a2a_bytes == 0)
				continue;
			/* dispatch and combine: each rank keeps 1/E of its tokens, sends the rest */
			ms = (lk->gbytes_per_s > 0 ? 1e3 * (double)(l->ep - 1) / l->ep * (double)y->a2a_bytes /
			                             (lk->gbytes_per_s * 1e9) : 0) +
			     2 * lk->latency_us * 1e-3;
			y->f_ms += ms;
			y->b_ms += ms;
		}
	}
	return 0;
}

int parallel_model(const struct model *m, const struct cluster *g, const struct parallel *l, struct model *out,
                   struct err *e)
{
	struct parallel_source s;
	int r;

	parallel_source_init(&s, m);
	r = model_at(&s, g, l, true, out, e);
	parallel_source_release(&s);
	return r;
}

int parallel_model_compute(const struct model *m, const struct cluster *g, const struct parallel *l,
                           struct model *out, struct err *e)
{
	struct parallel_source s;
	int r;

	parallel_source_init(&s, m);
	r = model_at(&s, g, l, false, out, e);
	parallel_source_release(&s);
	return r;
}

int parallel_source_replica(struct parallel_source *s, const struct cluster *g, const struct parallel *l,
                            struct model *rm, struct cluster *rc, struct err *e)
{
	if (parallel_check(l, g, e) < 0 || model_at(s, g, l, true, rm, e) < 0)
		return -1;
	if (parallel_cluster(g, l, rc, e) < 0) {
		model_release(rm);
		return -1;
	}
	return 0;
}

int parallel_replica(const struct model *m, const struct cluster *g, const struct parallel *l, struct model *rm,
                     struct cluster *rc, struct err *e)
{
	struct parallel_source s;
	int r;

	parallel_source_init(&s, m);
	r = parallel_source_replica(&s, g, l, rm, rc, e);
	parallel_source_release(&s);
	return r;
}

double ring_allreduce_ms(double bytes, int n, const struct link *lk)
{
	if (n <= 1 || bytes <= 0)
		return 0;
	return (lk->gbytes_per_s > 0 ? 1e3 * 2.0 * (n - 1) / n * bytes / (lk->gbytes_per_s * 1e9) : 0) +
	       2.0 * (n - 1) * lk->latency_us * 1e-3;
}

double ring_half_ms(double bytes, int n, const struct link *lk)
{
	if (n <= 1 || bytes <= 0)
		return 0;
	return (lk->gbytes_per_s > 0 ? 1e3 * (double)(n - 1) / n * bytes / (lk->gbytes_per_s * 1e9) : 0) +
	       (double)(n - 1) * lk->latency_us * 1e-3;
}

void parallel_static_mem(const struct parallel *l, double param_bytes, double expert_bytes, struct mem_static *out)
{
	/* parameter counts on this GPU before ZeRO: dense ones, and its 1/E of the experts */
	double dense = (param_bytes - expert_bytes) / 2, experts = expert_bytes / 2 / l->ep;
	int edp = l->dp / l->ep;  /* the experts' own data-parallel group */
	double dz = l->zero >= 1 ? l->dp : 1, ez = l->zero >= 1 ? edp : 1, gb = l->fp32_grads ? 4 : 2;

	out->weights = 2 * (l->zero >= 3 ? dense / l->dp + experts / edp : dense + experts);
	out->grads = gb * (l->zero >= 2 ? dense / l->dp + experts / edp : dense + experts);
	out->optimizer = 12 * (dense / dz + experts / ez);
}

void parallel_dp_sync(const struct parallel *l, const struct link *dl, double param_bytes, double expert_bytes,
                      struct dp_sync_cost *out)
{
	double dense = param_bytes - expert_bytes, experts = expert_bytes / l->ep;
	double g = l->fp32_grads ? 2 : 1;  /* the gradients' bytes against the bf16 weights' */
	int edp = l->dp / l->ep;

	if (l->zero == 0) {
		out->grad_ms = ring_allreduce_ms(g * dense, l->dp, dl) + ring_allreduce_ms(g * experts, edp, dl);
		out->gather_ms = 0;
	} else {
		out->grad_ms = ring_half_ms(g * dense, l->dp, dl) + ring_half_ms(g * experts, edp, dl);
		out->gather_ms = l->zero < 3 ? ring_half_ms(dense, l->dp, dl) + ring_half_ms(experts, edp, dl) : 0;
	}
}

double parallel_zero3_gather_ms(const struct parallel *l, const struct link *dl, double param_bytes,
                                double expert_bytes)
{
	if (l->zero < 3)
		return 0;
	return ring_half_ms(param_bytes - expert_bytes, l->dp, dl) + ring_half_ms(expert_bytes / l->ep, l->dp / l->ep, dl);
}
