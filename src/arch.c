/*
 * arch — architectures as lists of layers of per-token work (see arch.h).
 *
 * The file form keeps the per-token counts of docs/METHOD.md §6.2 as they are (FLOPs per
 * token, core FLOPs per attended key, bytes per token) and its `eff_class` says which kernel class
 * each count runs in, so a hand-written architecture and one derived from a config.json
 * go through the same cost_layer().
 */
#include "config.h"
#include "arch.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "json.h"
#include "vec.h"

int arch_add(struct arch *a, const char *kind, const struct work *w, bool mtp)
{
	struct arch_layer *l;

	if (a->nlayers >= OCTO_MAX_LAYERS)
		return ARCH_TOO_MANY;
	/* doubling: one realloc per layer made a 100 000-layer config quadratic */
	if (VEC_RESERVE(a->layers, a->cap, a->nlayers + 1L) < 0)
		return -1;
	l = &a->layers[a->nlayers];
	l->kind = strdup(kind);
	if (!l->kind)
		return -1;
	l->w = *w;
	l->mtp = mtp;
	a->nlayers++;
	return 0;
}

void arch_release(struct arch *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->nlayers; i++)
		free(a->layers[i].kind);
	free(a->layers);
	free(a->name);
	free(a->family);
	memset(a, 0, sizeof(*a));
}

/* eff_class: '+'-separated words saying where the GEMM, core and other FLOPs run */
static int read_classes(struct jv *v, const char *path, const char *s, int *gemm, int *core,
                        int *other)
{
	char word[64];

	*gemm = EFF_GEMM;
	*core = EFF_FLASH;
	*other = EFF_SSD;
	while (*s) {
		size_t n = strcspn(s, "+");

		if (n >= sizeof(word)) /* longer than any class: not one (and not cut to one) */
			return jv_fail(v, path, "'%.40s...' is not a kernel class", s);
		snprintf(word, sizeof(word), "%.*s", (int)n, s);
		if (strcmp(word, "gemm") == 0 || strcmp(word, "memory") == 0)
			;
		else if (strcmp(word, "grouped_gemm") == 0)
			*gemm = EFF_GROUPED;
		else if (strcmp(word, "flash_attn") == 0)
			*core = EFF_FLASH;
		else if (strcmp(word, "eager_attn") == 0)
			*core = EFF_EAGER;
		else if (strcmp(word, "mamba2_ssd") == 0 || strcmp(word, "gdn_chunk") == 0 ||
		         strcmp(word, "ssd") == 0)
			*other = EFF_SSD;
		else if (strcmp(word, "mamba1_scan") == 0 || strcmp(word, "scan") == 0)
			*other = EFF_SCAN;
		else
			return jv_fail(v, path, "'%s' is not a kernel class (gemm, grouped_gemm, flash_attn, "
			               "eager_attn, mamba2_ssd, mamba1_scan, gdn_chunk, memory)", word);
		s += n;
		if (*s == '+')
			s++;
	}
	return 0;
}

#define PER_TOK_MAX 1e15

/* The members of a kind; a layer of pre or post may also be "mtp" (a multi-token
 * prediction module, outside the model's own layers). */
#define KIND_KEYS "kind", "params", "active_params", "fwd_gemm_flops_per_tok", "fwd_grouped_gemm_flops_per_tok", \
	"attn_core_flops_per_tok_per_ctx", "fwd_other_flops_per_tok", "fwd_memory_bytes_per_tok", "act_bytes_per_tok", \
	"act_w_bytes_per_tok", "out_bytes_per_tok", "in_bytes_per_tok", "w_bytes_per_microbatch", "tp_syncs", "eff_class", \
	"shared_with", "moe", "attn_window"
static const char *const kind_keys[] = { KIND_KEYS, NULL };
static const char *const list_keys[] = { KIND_KEYS, "mtp", NULL };
static const char *const moe_keys[] = { "a2a_dispatch_bytes_per_tok", "a2a_combine_bytes_per_tok", NULL };
static const char *const arch_keys[] = {
	"format", "name", "seq_len", "hidden_size", "pattern", "kinds", "pre", "post", NULL
};

static int read_kind(struct jv *v, const cJSON *o, const char *path, struct arch *a, bool mtp)
{
	struct work w;
	const cJSON *win, *moe;
	const char *kind, *cls, *shared;
	double gemm, grouped, other, memb, d1 = 0, d2 = 0, x;
	int gc, cc, oc;
	char p[JPATH_MAX];

	memset(&w, 0, sizeof(w));
	if (!cJSON_IsObject(o))
		return jv_fail(v, path, "must be an object, not %s", json_type_name(o));
	if (jv_string(v, o, path, "kind", JV_REQUIRED | JV_NONEMPTY, NULL, &kind) < 0 ||
	    jv_number(v, o, path, "params", JV_REQUIRED | JV_INTEGER, 0, PER_TOK_MAX, 0, &w.params) < 0 ||
	    jv_number(v, o, path, "active_params", JV_INTEGER, 0, PER_TOK_MAX, w.params, &w.active) < 0 ||
	    jv_number(v, o, path, "fwd_gemm_flops_per_tok", 0, 0, PER_TOK_MAX, 0, &gemm) < 0 ||
	    jv_number(v, o, path, "fwd_grouped_gemm_flops_per_tok", 0, 0, PER_TOK_MAX, 0, &grouped) < 0 ||
	    jv_number(v, o, path, "attn_core_flops_per_tok_per_ctx", 0, 0, PER_TOK_MAX, 0, &w.core_per_ctx) < 0 ||
	    jv_number(v, o, path, "fwd_other_flops_per_tok", 0, 0, PER_TOK_MAX, 0, &other) < 0 ||
	    jv_number(v, o, path, "fwd_memory_bytes_per_tok", 0, 0, PER_TOK_MAX, 0, &memb) < 0 ||
	    jv_number(v, o, path, "act_bytes_per_tok", 0, 0, PER_TOK_MAX, 0, &w.act) < 0 ||
	    jv_number(v, o, path, "act_w_bytes_per_tok", 0, 0, PER_TOK_MAX, w.act, &w.act_w) < 0 ||
	    jv_number(v, o, path, "out_bytes_per_tok", 0, 0, PER_TOK_MAX, 0, &w.out) < 0 ||
	    jv_number(v, o, path, "in_bytes_per_tok", 0, 0, PER_TOK_MAX, w.out, &w.in) < 0 ||
	    jv_number(v, o, path, "w_bytes_per_microbatch", 0, 0, PER_TOK_MAX, 0, &w.w_bytes) < 0 ||
	    jv_number(v, o, path, "tp_syncs", JV_INTEGER, 0, 64, 0, &x) < 0 ||
	    jv_string(v, o, path, "eff_class", JV_NONEMPTY, "gemm", &cls) < 0 ||
	    jv_string(v, o, path, "shared_with", JV_NONEMPTY, NULL, &shared) < 0 ||
	    jv_object(v, o, path, "moe", 0, &moe) < 0 ||
	    jv_member(v, o, path, "attn_window", 0, &win) < 0)
		return -1;
	w.tp_syncs = (int)x;
	if (w.act_w > w.act) {
		jpath_key(p, path, "act_w_bytes_per_tok");
		return jv_fail(v, p, "must not exceed act_bytes_per_tok (%.0f), the part of it kept until W", w.act);
	}
	if (w.active > w.params) {
		jpath_key(p, path, "active_params");
		return jv_fail(v, p, "must not exceed params (%.0f)", w.params);
	}
	if (win && !cJSON_IsNull(win)) {
		double wd;

		if (jv_number(v, o, path, "attn_window", JV_INTEGER, 1, OCTO_MAX_SEQ_LEN, 0, &wd) < 0)
			return -1;
		w.window = (long)wd;
	}
	jpath_key(p, path, "eff_class");
	if (read_classes(v, p, cls, &gc, &cc, &oc) < 0)
		return -1;
	if (moe) {
		jpath_key(p, path, "moe");
		if (jv_keys(v, moe, p, moe_keys) < 0 ||
		    jv_number(v, moe, p, "a2a_dispatch_bytes_per_tok", 0, 0, PER_TOK_MAX, 0, &d1) < 0 ||
		    jv_number(v, moe, p, "a2a_combine_bytes_per_tok", 0, 0, PER_TOK_MAX, d1, &d2) < 0)
			return -1;
	}
	w.a2a = d1 + d2;
	w.f[gc] += gemm;
	w.f[EFF_GROUPED] += grouped;
	w.f[oc] += other;
	w.f[EFF_MEMORY] += memb;
	w.core_class = cc;
	if (shared) {
		/* the tied weight is counted at its first holder, a layer before this one */
		int i = 0;

		while (i < a->nlayers && strcmp(a->layers[i].kind, shared) != 0)
			i++;
		if (i == a->nlayers) {
			jpath_key(p, path, "shared_with");
			return jv_fail(v, p, "'%s' is not the kind of a layer before this one (the layer whose weights "
			               "this one ties to, e.g. \"embedding\")", shared);
		}
	}
	w.unique = shared ? 0 : w.params;
	switch (arch_add(a, kind, &w, mtp)) {
	case 0: return 0;
	case ARCH_TOO_MANY: return jv_fail(v, path, "more than %d layers", OCTO_MAX_LAYERS);
	default: return err_set(v->e, ERR_RUNTIME, "%s: out of host memory", v->file);
	}
}

static int read_list(struct jv *v, const cJSON *root, const char *key, struct arch *a)
{
	const cJSON *arr;
	char p[JPATH_MAX];
	long i = 0;

	if (jv_array(v, root, "", key, 0, &arr) < 0)
		return -1;
	for (const cJSON *c = arr ? arr->child : NULL; c; c = c->next, i++) {
		const cJSON *mtp = cJSON_GetObjectItemCaseSensitive(c, "mtp");

		jpath_index(p, key, i);
		if ((cJSON_IsObject(c) && jv_keys(v, c, p, list_keys) < 0) || read_kind(v, c, p, a, cJSON_IsTrue(mtp)) < 0)
			return -1;
	}
	return 0;
}

int arch_from_json(struct arch *a, const cJSON *root, const char *file, struct err *e)
{
	struct jv v = { file, e, NULL };
	const cJSON *kinds;
	const char *name, *pattern;
	char p[JPATH_MAX];
	long hidden;

	memset(a, 0, sizeof(*a));
	if (jv_format(&v, root, ARCH_FORMAT) < 0 || jv_keys(&v, root, "", arch_keys) < 0 ||
	    jv_string(&v, root, "", "name", JV_REQUIRED | JV_NONEMPTY, NULL, &name) < 0 ||
	    jv_int(&v, root, "", "seq_len", 0, 1, OCTO_MAX_SEQ_LEN, 4096, &a->seq_len) < 0 ||
	    jv_int(&v, root, "", "hidden_size", 0, 1, 1L << 24, 0, &hidden) < 0 ||
	    jv_string(&v, root, "", "pattern", JV_REQUIRED | JV_NONEMPTY, NULL, &pattern) < 0 ||
	    jv_object(&v, root, "", "kinds", JV_REQUIRED, &kinds) < 0)
		goto fail;
	a->hidden = hidden;
	if (!(a->name = strdup(name)) || !(a->family = strdup("octopipe.arch"))) {
		err_set(e, ERR_RUNTIME, "%s: out of host memory", file);
		goto fail;
	}
	for (const cJSON *c = kinds->child; c; c = c->next) {
		if (c->string[0] == '_' && c->string[1]) /* a comment ("_" alone is a kind's key) */
			continue;
		jpath_key(p, "kinds", c->string);
		if (!c->string[0] || c->string[1]) {
			jv_fail(&v, p, "kind keys must be single characters");
			goto fail;
		}
		if (cJSON_IsObject(c) && jv_keys(&v, c, p, kind_keys) < 0)
			goto fail;
	}
	if (read_list(&v, root, "pre", a) < 0)
		goto fail;
	for (size_t i = 0; pattern[i]; i++) {
		char key[2] = { pattern[i], 0 };
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(kinds, key);

		if (!k) {
			jpath_index(p, "pattern", (long)i);
			jv_fail(&v, p, "'%c' is not a key of kinds", pattern[i]);
			goto fail;
		}
		jpath_key(p, "kinds", key);
		if (read_kind(&v, k, p, a, false) < 0)
			goto fail;
	}
	if (read_list(&v, root, "post", a) < 0)
		goto fail;
	return 0;
fail:
	arch_release(a);
	return -1;
}

void arch_totals(const struct arch *a, long seq, struct arch_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < a->nlayers; i++) {
		const struct arch_layer *l = &a->layers[i];

		if (l->mtp) {
			t->mtp_params += l->w.unique;
			continue;
		}
		t->params += l->w.unique;
		t->active += l->w.active;
		t->flops_per_token += cost_flops(&l->w, seq);
		if (strcmp(l->kind, "embedding") == 0)
			t->embed_params += l->w.unique;
		else if (strcmp(l->kind, "head") == 0)
			t->head_params += l->w.unique;
	}
}

/* A layer's cost within what the model reader takes back (model.c): an architecture of
 * absurd size (a hidden size of 10^8) is bad input, not a table nobody can load. */
static int check_cost(const char *name, int i, const char *kind, const struct layer_cost *lc,
                      double *sum_params, double *sum_act, struct err *e)
{
	const double ms[3] = { lc->f_ms, lc->b_ms, lc->w_ms };
	const double bytes[4] = { lc->param_bytes, lc->act_bytes, lc->act_w_bytes, lc->out_bytes };

	for (int k = 0; k < 3; k++)
		if (!(ms[k] >= 0 && ms[k] <= OCTO_MAX_COST_MS))
			return err_set(e, ERR_INPUT, "'%s': layer %d (%s) would take %.3g ms, more than a layer table "
			               "holds (%g ms): the architecture is too large", name, i, kind, ms[k], OCTO_MAX_COST_MS);
	for (int k = 0; k < 4; k++)
		if (!(bytes[k] >= 0 && bytes[k] <= 9007199254740992.0))
			return err_set(e, ERR_INPUT, "'%s': layer %d (%s) would hold %.3g bytes, more than a layer table "
			               "holds (2^53): the architecture is too large", name, i, kind, bytes[k]);
	*sum_params += lc->param_bytes;
	*sum_act += lc->act_bytes;
	if (*sum_params > OCTO_MAX_TOTAL_BYTES || *sum_act > OCTO_MAX_TOTAL_BYTES)
		return err_set(e, ERR_INPUT, "'%s': the layers up to %d hold more than 2^62 bytes: the architecture is "
		               "too large", name, i);
	return 0;
}

int arch_to_model(const struct arch *a, const struct hardware *hw, const struct cost_opts *o,
                  const char *name, struct model *m, struct err *e)
{
	double sum_params = 0, sum_act = 0, sum_ms = 0;

	memset(m, 0, sizeof(*m));
	/* Megatron splits every head group evenly over the TP ranks: more ranks than heads, or
	 * a degree that does not divide them, is no layout anyone can run */
	for (int i = 0; i < a->nlayers; i++)
		if (a->layers[i].w.k_cut)
			return err_set(e, ERR_RUNTIME, "layer %d (%s) has more than %d kernels: the cost model cannot price it",
			               i, a->layers[i].kind, WORK_MAX_KERNELS);
	for (int i = 0; o->tp > 1 && i < a->nlayers; i++) {
		const struct work *w = &a->layers[i].w;

		if (w->tp_units > 0 && (o->tp > w->tp_units || w->tp_units % o->tp != 0))
			return err_set(e, ERR_INPUT, "--tp %d: layer %d (%s) has %d %s, which %d tensor-parallel ranks cannot "
			               "split evenly", o->tp, i, a->layers[i].kind, w->tp_units, w->tp_unit_name, o->tp);
	}
	m->layers = calloc((size_t)(a->nlayers ? a->nlayers : 1), sizeof(*m->layers));
	m->name = strdup(name);
	if (!m->layers || !m->name)
		goto oom;
	m->seq_len = o->seq;
	m->micro_batch_size = o->micro_batch;
	for (int i = 0; i < a->nlayers; i++) {
		struct layer *l = &m->layers[i];
		struct layer_cost lc;

		cost_layer(&a->layers[i].w, hw, o, &lc);
		if (check_cost(name, i, a->layers[i].kind, &lc, &sum_params, &sum_act, e) < 0) {
			model_release(m);
			return -1;
		}
		if (!(l->kind = strdup(a->layers[i].kind)))
			goto oom;
		m->nlayers++;
		/* rounded to the nanosecond: files stay stable and diffs readable */
		l->f_ms = (double)(long long)(lc.f_ms * 1e6 + 0.5) / 1e6;
		l->b_ms = (double)(long long)(lc.b_ms * 1e6 + 0.5) / 1e6;
		l->w_ms = (double)(long long)(lc.w_ms * 1e6 + 0.5) / 1e6;
		l->param_bytes = (uint64_t)(lc.param_bytes + 0.5);
		l->act_bytes = (uint64_t)(lc.act_bytes + 0.5);
		l->act_w_bytes = (uint64_t)(lc.act_w_bytes + 0.5);
		if (l->act_w_bytes > l->act_bytes)
			l->act_w_bytes = l->act_bytes;
		l->out_bytes = (uint64_t)(lc.out_bytes + 0.5);
		l->expert_param_bytes = (uint64_t)(lc.expert_param_bytes + 0.5);
		if (l->expert_param_bytes > l->param_bytes)
			l->expert_param_bytes = l->param_bytes;
		l->in_bytes = (uint64_t)(lc.in_bytes + 0.5);
		l->core_act_bytes = (uint64_t)(lc.core_act_bytes + 0.5);
		if (l->core_act_bytes > l->act_bytes)
			l->core_act_bytes = l->act_bytes;
		l->core_f_ms = fmin((double)(long long)(lc.core_f_ms * 1e6 + 0.5) / 1e6, l->f_ms);
		l->a2a_bytes = (uint64_t)(lc.a2a_bytes + 0.5);
		l->tied_bytes = (uint64_t)fmin(lc.tied_bytes + 0.5, (double)l->param_bytes);
		sum_ms += l->f_ms + l->b_ms + l->w_ms;
	}
	/* the model reader refuses a table of no work; so does its writer, before it writes one */
	if (!(sum_ms > 0)) {
		err_set(e, ERR_INPUT, "architecture '%s': every layer costs 0 ms at sequence %ld (under a nanosecond "
		        "rounded): there is nothing to schedule", a->name ? a->name : name, o->seq);
		model_release(m);
		return -1;
	}
	return 0;
oom:
	model_release(m);
	return err_set(e, ERR_RUNTIME, "out of host memory building the layer table of '%s'", name);
}
