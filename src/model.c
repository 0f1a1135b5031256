/*
 * model — load, validate and save layer tables (see model.h).
 *
 * Both file forms go through one layer reader, so a layer in `layers[7]` and a kind in
 * `kinds.M` are validated by the same code with different JSON paths in the messages.
 */
#include "config.h"
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "bounds.h"

#define MODEL_KEYS "format", "name", "seq_len", "micro_batch_size", "w_fraction", \
	"layers", "pattern", "kinds", "pre", "post"
static const char *const model_keys[] = { MODEL_KEYS, NULL };
/* and "source", what octopipe cost made the table from (parallel.h reads it): kept as an
 * extra member, so that a rewrite carries it as it came */
static const char *const model_allowed[] = { MODEL_KEYS, "source", NULL };
static const char *const layer_keys[] = {
	"kind", "f_ms", "b_ms", "w_ms", "bw_ms", "w_fraction",
	"param_bytes", "act_bytes", "act_w_bytes", "out_bytes",
	"expert_param_bytes", "in_bytes", "core_act_bytes", "core_f_ms", "a2a_bytes", "tied_bytes", NULL
};

static void layer_release(struct layer *l)
{
	free(l->kind);
	cJSON_Delete(l->extra);
	memset(l, 0, sizeof(*l));
}

void model_release(struct model *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nlayers; i++)
		layer_release(&m->layers[i]);
	free(m->layers);
	free(m->name);
	cJSON_Delete(m->extra);
	memset(m, 0, sizeof(*m));
}

static int oom(struct jv *v)
{
	return err_set(v->e, ERR_RUNTIME, "%s: out of host memory", v->file);
}

/* Reads one layer object at path into l. */
static int layer_read(struct jv *v, const cJSON *obj, const char *path, double model_wf,
                      struct layer *l)
{
	const char *kind;
	const cJSON *bmember, *wmember, *bwmember;
	char p[JPATH_MAX];
	double bw, wf;

	memset(l, 0, sizeof(*l));
	if (!cJSON_IsObject(obj))
		return jv_fail(v, path, "must be an object, not %s", json_type_name(obj));
	if (jv_keys(v, obj, path, layer_keys) < 0 ||
	    jv_string(v, obj, path, "kind", JV_REQUIRED | JV_NONEMPTY, NULL, &kind) < 0 ||
	    jv_number(v, obj, path, "f_ms", JV_REQUIRED, 0, OCTO_MAX_COST_MS, 0, &l->f_ms) < 0)
		return -1;
	jv_member(v, obj, path, "b_ms", 0, &bmember);
	jv_member(v, obj, path, "w_ms", 0, &wmember);
	jv_member(v, obj, path, "bw_ms", 0, &bwmember);
	if (bwmember) {
		if (bmember || wmember) {
			jpath_key(p, path, "bw_ms");
			return jv_fail(v, p, "give either bw_ms (split by w_fraction) or b_ms and w_ms, not both");
		}
		if (jv_number(v, obj, path, "bw_ms", 0, 0, OCTO_MAX_COST_MS, 0, &bw) < 0 ||
		    jv_number(v, obj, path, "w_fraction", 0, 0, 1, model_wf, &wf) < 0)
			return -1;
		l->w_ms = bw * wf;
		l->b_ms = bw - l->w_ms;
	} else {
		if (!bmember) {
			jpath_key(p, path, "b_ms");
			return jv_fail(v, p, "required field is missing (or give bw_ms, the full backward)");
		}
		if (jv_number(v, obj, path, "b_ms", JV_REQUIRED, 0, OCTO_MAX_COST_MS, 0, &l->b_ms) < 0 ||
		    jv_number(v, obj, path, "w_ms", JV_REQUIRED, 0, OCTO_MAX_COST_MS, 0, &l->w_ms) < 0)
			return -1;
		jv_member(v, obj, path, "w_fraction", 0, &bmember);
		if (bmember) {
			jpath_key(p, path, "w_fraction");
			return jv_fail(v, p, "only meaningful with bw_ms");
		}
	}
	if (jv_bytes(v, obj, path, "param_bytes", 0, 0, &l->param_bytes) < 0 ||
	    jv_bytes(v, obj, path, "act_bytes", 0, 0, &l->act_bytes) < 0 ||
	    jv_bytes(v, obj, path, "act_w_bytes", 0, 0, &l->act_w_bytes) < 0 ||
	    jv_bytes(v, obj, path, "out_bytes", 0, 0, &l->out_bytes) < 0 ||
	    jv_bytes(v, obj, path, "expert_param_bytes", 0, 0, &l->expert_param_bytes) < 0 ||
	    jv_bytes(v, obj, path, "in_bytes", 0, 0, &l->in_bytes) < 0 ||
	    jv_bytes(v, obj, path, "core_act_bytes", 0, 0, &l->core_act_bytes) < 0 ||
	    jv_number(v, obj, path, "core_f_ms", 0, 0, OCTO_MAX_COST_MS, 0, &l->core_f_ms) < 0 ||
	    jv_bytes(v, obj, path, "a2a_bytes", 0, 0, &l->a2a_bytes) < 0 ||
	    jv_bytes(v, obj, path, "tied_bytes", 0, 0, &l->tied_bytes) < 0)
		return -1;
	if (l->tied_bytes > l->param_bytes) {
		jpath_key(p, path, "tied_bytes");
		return jv_fail(v, p, "must not exceed param_bytes (%llu), the weights it is part of",
		               (unsigned long long)l->param_bytes);
	}
	if (l->act_w_bytes > l->act_bytes) {
		jpath_key(p, path, "act_w_bytes");
		return jv_fail(v, p, "must not exceed act_bytes (%llu), the part of it kept until W",
		               (unsigned long long)l->act_bytes);
	}
	if (l->expert_param_bytes > l->param_bytes) {
		jpath_key(p, path, "expert_param_bytes");
		return jv_fail(v, p, "must not exceed param_bytes (%llu), the weights it is part of",
		               (unsigned long long)l->param_bytes);
	}
	/* a tied matrix is dense (the embedding's): it cannot also be the experts' */
	if ((double)l->tied_bytes + (double)l->expert_param_bytes > (double)l->param_bytes) {
		jpath_key(p, path, "tied_bytes");
		return jv_fail(v, p, "must not exceed param_bytes less expert_param_bytes (%llu): a tied matrix is "
		               "dense, not an expert's", (unsigned long long)(l->param_bytes - l->expert_param_bytes));
	}
	if (l->core_act_bytes > l->act_bytes) {
		jpath_key(p, path, "core_act_bytes");
		return jv_fail(v, p, "must not exceed act_bytes (%llu), the activations it is part of",
		               (unsigned long long)l->act_bytes);
	}
	if (l->core_f_ms > l->f_ms) {
		jpath_key(p, path, "core_f_ms");
		return jv_fail(v, p, "must not exceed f_ms (%g), the forward it is part of", l->f_ms);
	}
	l->kind = strdup(kind);
	if (!l->kind)
		return oom(v);
	if (json_extras(obj, layer_keys, &l->extra) < 0) {
		free(l->kind);
		l->kind = NULL;
		return oom(v);
	}
	return 0;
}

static int layer_copy(struct layer *dst, const struct layer *src)
{
	*dst = *src;
	dst->kind = strdup(src->kind);
	dst->extra = src->extra ? cJSON_Duplicate(src->extra, 1) : NULL;
	if (!dst->kind || (src->extra && !dst->extra)) {
		layer_release(dst);
		return -1;
	}
	return 0;
}

static int push_layer(struct jv *v, struct model *m, int cap)
{
	if (m->nlayers >= cap)
		return jv_fail(v, "layers", "more than %d layers", OCTO_MAX_LAYERS);
	return 0;
}

/* Reads an array of layer objects (layers, pre or post) and appends them. */
static int read_layer_list(struct jv *v, const cJSON *arr, const char *key, double wf,
                           struct model *m, int cap)
{
	char p[JPATH_MAX];
	long i = 0;

	for (const cJSON *c = arr->child; c; c = c->next, i++) {
		if (push_layer(v, m, cap) < 0)
			return -1;
		jpath_index(p, key, i);
		if (layer_read(v, c, p, wf, &m->layers[m->nlayers]) < 0)
			return -1;
		m->nlayers++;
	}
	return 0;
}

/* The compact form: pre + pattern (one character per layer, a key of kinds) + post. */
static int read_pattern(struct jv *v, const cJSON *root, const char *pattern, double wf,
                        struct model *m)
{
	const cJSON *kinds, *pre, *post;
	struct layer table[256];
	bool have[256] = { false };
	char p[JPATH_MAX];
	size_t plen = strlen(pattern);
	int r = -1, cap;

	memset(table, 0, sizeof(table));
	if (jv_object(v, root, "", "kinds", JV_REQUIRED, &kinds) < 0 ||
	    jv_array(v, root, "", "pre", 0, &pre) < 0 ||
	    jv_array(v, root, "", "post", 0, &post) < 0)
		return -1;
	if (plen == 0)
		return jv_fail(v, "pattern", "must not be empty");
	for (const cJSON *c = kinds->child; c; c = c->next) {
		unsigned char key = (unsigned char)c->string[0];

		if (key == '_' && c->string[1]) /* a comment ("_" alone is a kind's key) */
			continue;
		jpath_key(p, "kinds", c->string);
		if (!c->string[0] || c->string[1] || key < 0x21 || key > 0x7e) {
			jv_fail(v, p, "kind keys must be single printable ASCII characters");
			goto out; /* kinds read so far are released there */
		}
		if (layer_read(v, c, p, wf, &table[key]) < 0)
			goto out;
		have[key] = true;
	}
	cap = (int)(plen + (size_t)cJSON_GetArraySize(pre) + (size_t)cJSON_GetArraySize(post));
	if (plen > OCTO_MAX_LAYERS || cap > OCTO_MAX_LAYERS) {
		jv_fail(v, "pattern", "more than %d layers", OCTO_MAX_LAYERS);
		goto out;
	}
	m->layers = calloc((size_t)cap, sizeof(*m->layers));
	if (!m->layers) {
		oom(v);
		goto out;
	}
	if (pre && read_layer_list(v, pre, "pre", wf, m, cap) < 0)
		goto out;
	for (size_t i = 0; i < plen; i++) {
		unsigned char key = (unsigned char)pattern[i];

		if (!have[key]) {
			jpath_index(p, "pattern", (long)i);
			if (key >= 0x20 && key < 0x7f)
				jv_fail(v, p, "'%c' is not a key of kinds", key);
			else
				jv_fail(v, p, "byte 0x%02x is not a key of kinds", key);
			goto out;
		}
		if (layer_copy(&m->layers[m->nlayers], &table[key]) < 0) {
			oom(v);
			goto out;
		}
		m->nlayers++;
	}
	if (post && read_layer_list(v, post, "post", wf, m, cap) < 0)
		goto out;
	r = 0;
out:
	for (int k = 0; k < 256; k++)
		if (have[k] || table[k].kind)
			layer_release(&table[k]);
	return r;
}

int model_from_json(struct model *m, const cJSON *root, const char *file, const char *path,
                     struct err *e)
{
	struct jv v = { file, e, path };
	const cJSON *layers, *pattern_item;
	const char *name, *pattern;
	double wf, sum_params = 0, sum_act = 0, sum_ms = 0;
	long n;

	memset(m, 0, sizeof(*m));
	if (jv_format(&v, root, MODEL_FORMAT) < 0 || jv_keys(&v, root, "", model_allowed) < 0 ||
	    jv_string(&v, root, "", "name", JV_REQUIRED | JV_NONEMPTY, NULL, &name) < 0 ||
	    jv_int(&v, root, "", "seq_len", JV_REQUIRED, 1, OCTO_MAX_SEQ_LEN, 0, &m->seq_len) < 0 ||
	    jv_int(&v, root, "", "micro_batch_size", 0, 1, OCTO_MAX_MICRO_BATCH, 1, &m->micro_batch_size) < 0 ||
	    jv_number(&v, root, "", "w_fraction", 0, 0, 1, 0.5, &wf) < 0 ||
	    jv_array(&v, root, "", "layers", 0, &layers) < 0 ||
	    jv_member(&v, root, "", "pattern", 0, &pattern_item) < 0)
		goto fail;
	if (layers && pattern_item) {
		jv_fail(&v, "pattern", "give either layers or pattern + kinds, not both");
		goto fail;
	}
	if (pattern_item) {
		if (jv_string(&v, root, "", "pattern", JV_REQUIRED, NULL, &pattern) < 0 ||
		    read_pattern(&v, root, pattern, wf, m) < 0)
			goto fail;
	} else {
		const cJSON *unused;

		if (!layers) {
			jv_fail(&v, "layers", "required field is missing (or give pattern + kinds)");
			goto fail;
		}
		if (jv_member(&v, root, "", "kinds", 0, &unused) > 0) {
			jv_fail(&v, "kinds", "only meaningful with pattern");
			goto fail;
		}
		n = cJSON_GetArraySize(layers);
		if (n == 0) {
			jv_fail(&v, "layers", "must list at least one layer");
			goto fail;
		}
		if (n > OCTO_MAX_LAYERS) {
			jv_fail(&v, "layers", "more than %d layers", OCTO_MAX_LAYERS);
			goto fail;
		}
		m->layers = calloc((size_t)n, sizeof(*m->layers));
		if (!m->layers) {
			oom(&v);
			goto fail;
		}
		if (read_layer_list(&v, layers, "layers", wf, m, (int)n) < 0)
			goto fail;
	}
	for (int i = 0; i < m->nlayers; i++) {
		sum_params += (double)m->layers[i].param_bytes;
		sum_act += (double)m->layers[i].act_bytes;
		sum_ms += m->layers[i].f_ms + m->layers[i].b_ms + m->layers[i].w_ms;
	}
	/* an iteration of no work takes no time: every speedup and efficiency of it is 0 / 0 */
	if (!(sum_ms > 0)) {
		jv_fail(&v, "layers", "every layer costs 0 ms (f_ms + b_ms + w_ms): there is nothing to schedule");
		goto fail;
	}
	if (sum_params > OCTO_MAX_TOTAL_BYTES || sum_act > OCTO_MAX_TOTAL_BYTES) {
		jv_fail(&v, "layers", "total %s of all layers exceeds 2^62 bytes",
		        sum_params > OCTO_MAX_TOTAL_BYTES ? "param_bytes" : "act_bytes");
		goto fail;
	}
	m->name = strdup(name);
	if (!m->name) {
		oom(&v);
		goto fail;
	}
	if (json_extras(root, model_keys, &m->extra) < 0) {
		oom(&v);
		goto fail;
	}
	return 0;
fail:
	model_release(m);
	return -1;
}

int model_load(struct model *m, const char *path, struct err *e)
{
	cJSON *root = json_load_file(path, e);
	int r;

	memset(m, 0, sizeof(*m));
	if (!root)
		return -1;
	r = model_from_json(m, root, path, NULL, e);
	cJSON_Delete(root);
	return r;
}

cJSON *model_to_json(const struct model *m)
{
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *arr;

	jw_str(&w, root, "format", MODEL_FORMAT);
	jw_str(&w, root, "name", m->name);
	jw_num(&w, root, "seq_len", (double)m->seq_len);
	jw_num(&w, root, "micro_batch_size", (double)m->micro_batch_size);
	jw_extras(&w, root, m->extra);
	arr = jw_arr(&w, root, "layers");
	for (int i = 0; i < m->nlayers; i++) {
		const struct layer *l = &m->layers[i];
		cJSON *o = jw_push(&w, arr, cJSON_CreateObject());

		jw_str(&w, o, "kind", l->kind);
		jw_num(&w, o, "f_ms", l->f_ms);
		jw_num(&w, o, "b_ms", l->b_ms);
		jw_num(&w, o, "w_ms", l->w_ms);
		jw_num(&w, o, "param_bytes", (double)l->param_bytes);
		jw_num(&w, o, "act_bytes", (double)l->act_bytes);
		jw_num(&w, o, "act_w_bytes", (double)l->act_w_bytes);
		jw_num(&w, o, "out_bytes", (double)l->out_bytes);
		if (l->expert_param_bytes)
			jw_num(&w, o, "expert_param_bytes", (double)l->expert_param_bytes);
		if (l->in_bytes)
			jw_num(&w, o, "in_bytes", (double)l->in_bytes);
		if (l->core_act_bytes)
			jw_num(&w, o, "core_act_bytes", (double)l->core_act_bytes);
		if (l->tied_bytes)
			jw_num(&w, o, "tied_bytes", (double)l->tied_bytes);
		if (l->core_f_ms > 0)
			jw_num(&w, o, "core_f_ms", l->core_f_ms);
		if (l->a2a_bytes)
			jw_num(&w, o, "a2a_bytes", (double)l->a2a_bytes);
		jw_extras(&w, o, l->extra);
	}
	if (w.oom) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

int model_save(const struct model *m, const char *path, struct err *e)
{
	return json_save_built(path, model_to_json(m), e);
}

struct model_kind_stats *model_kind_stats(const struct model *m, int *n)
{
	struct model_kind_stats *s = calloc((size_t)(m->nlayers ? m->nlayers : 1), sizeof(*s));
	int k = 0;

	if (!s)
		return NULL;
	for (int i = 0; i < m->nlayers; i++) {
		const struct layer *l = &m->layers[i];
		int j;

		for (j = 0; j < k && strcmp(s[j].kind, l->kind) != 0; j++)
			;
		if (j == k)
			s[k++].kind = l->kind;
		s[j].count++;
		s[j].f_ms += l->f_ms;
		s[j].b_ms += l->b_ms;
		s[j].w_ms += l->w_ms;
		s[j].param_bytes += l->param_bytes;
		s[j].act_bytes += l->act_bytes;
	}
	*n = k;
	return s;
}

struct model_kind_stats model_totals(const struct model *m)
{
	struct model_kind_stats t;

	memset(&t, 0, sizeof(t));
	for (int i = 0; i < m->nlayers; i++) {
		const struct layer *l = &m->layers[i];

		t.count++;
		t.f_ms += l->f_ms;
		t.b_ms += l->b_ms;
		t.w_ms += l->w_ms;
		t.param_bytes += l->param_bytes;
		t.act_bytes += l->act_bytes;
	}
	return t;
}

int model_heaviest(const struct model *m, int *idx, int k)
{
	int n = 0;

	/* insertion into a short sorted list: k is small (a report shows 3 to 10) */
	for (int i = 0; i < m->nlayers; i++) {
		double c = layer_total_ms(&m->layers[i]);
		int j = n < k ? n++ : k;

		if (j == k && (k == 0 || c <= layer_total_ms(&m->layers[idx[k - 1]])))
			continue;
		if (j == k)
			j = k - 1;
		while (j > 0 && layer_total_ms(&m->layers[idx[j - 1]]) < c) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = i;
	}
	return n;
}

int model_copy(struct model *dst, const struct model *src, struct err *e)
{
	struct model m = { 0 };

	/* field by field: the JSON round trip this replaces gave the same table and cost
	 * the layout search half its time (a layer's numbers printed and parsed again) */
	m.seq_len = src->seq_len;
	m.micro_batch_size = src->micro_batch_size;
	if (!(m.name = strdup(src->name ? src->name : "")) ||
	    (src->extra && !(m.extra = cJSON_Duplicate(src->extra, 1))))
		goto oom;
	if (src->nlayers > 0 && !(m.layers = calloc((size_t)src->nlayers, sizeof(*m.layers))))
		goto oom;
	for (int i = 0; i < src->nlayers; i++) {
		struct layer *l = &m.layers[i];

		*l = src->layers[i];
		l->kind = NULL;
		l->extra = NULL;
		m.nlayers = i + 1;
		if (!(l->kind = strdup(src->layers[i].kind ? src->layers[i].kind : "")) ||
		    (src->layers[i].extra && !(l->extra = cJSON_Duplicate(src->layers[i].extra, 1))))
			goto oom;
	}
	*dst = m;
	return 0;
oom:
	model_release(&m);
	memset(dst, 0, sizeof(*dst));
	return err_set(e, ERR_RUNTIME, "out of host memory copying model '%s'", src->name);
}
