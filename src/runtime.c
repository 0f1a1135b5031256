/*
 * runtime — a training runtime's profile (see runtime.h).
 *
 * The file is flat on purpose, so a person can read which kernels a runtime runs and where
 * each figure comes from:
 *   {"format": "octopipe.runtime/1", "name", "about", "sources": [...],
 *    "kernels": {"attention": "fused|eager|hf", "experts": "grouped|loop",
 *                "loss": {"f_bytes", "b_bytes", "launches"} (absent: PyTorch's fp32 loss),
 *                "launch": "async|serial", "launch_us": N},
 *    "efficiency": {class: {"f", "b"}, ...},          every class of hardware.h
 *    "dropout": {"flash_attn": {"f", "b"}},         a fused core with attention dropout
 *    "gpus": {"A100": {"efficiency": {...}, "dropout": {...}}, ...},   per GPU model (a
 *                                                     prefix of the cluster's "gpu")
 *    "overlap": {"tp_comm": bool},
 *    "recompute": {"selective": "core_attention|ops"}}
 */
#include "config.h"
#include "runtime.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"

static const char *const attention_names[] = { "hf", "fused", "eager", NULL };
static const char *const experts_names[] = { "loop", "grouped", NULL };
static const char *const selective_names[] = { "core_attention", "ops", NULL };
static const char *const launch_names[] = { "serial", "async", NULL };
/* "about" and "sources" are for the people who read the file: known, not read */
static const char *const runtime_keys[] = {
	"format", "name", "about", "sources", "kernels", "efficiency", "dropout", "gpus", "overlap", "recompute", NULL
};
static const char *const kernels_keys[] = { "attention", "experts", "loss", "launch", "launch_us", NULL };
static const char *const loss_keys[] = { "f_bytes", "b_bytes", "launches", NULL };
static const char *const fb_keys[] = { "f", "b", NULL };
static const char *const dropout_keys[] = { "flash_attn", NULL };
static const char *const gpu_keys[] = { "efficiency", "dropout", NULL };
static const char *const overlap_keys[] = { "tp_comm", NULL };
static const char *const recompute_keys[] = { "selective", NULL };


/* an optional string member that must be one of names; *out keeps its value when absent */
static int choice(struct jv *v, const cJSON *obj, const char *path, const char *key, const char *const *names,
                  unsigned char *out)
{
	const char *s;
	char p[JPATH_MAX];
	struct strbuf sb = STRBUF_INIT;

	if (jv_string(v, obj, path, key, JV_NONEMPTY, NULL, &s) < 0)
		return -1;
	if (!s)
		return 0;
	for (int i = 0; names[i]; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (unsigned char)i;
			return 0;
		}
	for (int i = 0; names[i]; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", names[i]);
	jpath_key(p, path, key);
	jv_fail(v, p, "'%s' is not one of %s", s, sb.buf);
	strbuf_release(&sb);
	return -1;
}

/* "efficiency": {class: {"f", "b"}}; every class required when all is set */
static int efficiencies(struct jv *v, const cJSON *obj, const char *path, bool all, double *f, double *b,
                        bool *set)
{
	char q[JPATH_MAX];

	for (const cJSON *c = obj->child; c; c = c->next) {
		int k = hardware_class(c->string);

		if (jv_is_comment_key(c->string))
			continue;
		jpath_key(q, path, c->string);
		if (k < 0)
			return jv_fail(v, q, "not a kernel class (gemm, grouped_gemm, flash_attn, eager_attn, ssd, scan, "
			               "memory)");
		if (!cJSON_IsObject(c))
			return jv_fail(v, q, "must be an object like {\"f\": 0.7, \"b\": 0.6}, not %s", json_type_name(c));
		if (jv_keys(v, c, q, fb_keys) < 0 || jv_number(v, c, q, "f", JV_REQUIRED, 1e-6, 1, 0, &f[k]) < 0 ||
		    jv_number(v, c, q, "b", JV_REQUIRED, 1e-6, 1, 0, &b[k]) < 0)
			return -1;
		if (set)
			set[k] = true;
	}
	if (all)
		for (int k = 0; k < EFF_NCLASS; k++)
			if (!cJSON_GetObjectItemCaseSensitive(obj, hardware_class_names[k]))
				return jv_fail(v, path, "names no efficiency for kernel class '%s' (every class needs one)",
				               hardware_class_names[k]);
	return 0;
}

/* "loss": {"f_bytes", "b_bytes", "launches"}: what the runtime's cross-entropy moves per
 * token and vocabulary entry; absent: PyTorch's fp32 cross-entropy (16 and 22 bytes) */
static int read_loss(struct runtime *rt, struct jv *v, const cJSON *kernels)
{
	const cJSON *l;
	double f, b, n;

	if (jv_object(v, kernels, "kernels", "loss", 0, &l) < 0)
		return -1;
	if (!l)
		return 0;
	if (jv_keys(v, l, "kernels.loss", loss_keys) < 0 ||
	    jv_number(v, l, "kernels.loss", "f_bytes", JV_REQUIRED, 0.5, 1e3, 0, &f) < 0 ||
	    jv_number(v, l, "kernels.loss", "b_bytes", JV_REQUIRED, 0.5, 1e3, 0, &b) < 0 ||
	    jv_number(v, l, "kernels.loss", "launches", JV_REQUIRED | JV_INTEGER, 1, 100, 0, &n) < 0)
		return -1;
	rt->style.loss_f_bytes = (float)f;
	rt->style.loss_b_bytes = (float)b;
	rt->style.loss_launches = (unsigned char)n;
	return 0;
}

/* "dropout": {"flash_attn": {"f", "b"}} (optional) */
static int read_dropout(struct jv *v, const cJSON *obj, const char *path, double *f, double *b)
{
	const cJSON *d, *fa;
	char p[JPATH_MAX], q[JPATH_MAX];

	if (jv_object(v, obj, path, "dropout", 0, &d) < 0)
		return -1;
	if (!d)
		return 0;
	jpath_key(p, path, "dropout");
	if (jv_keys(v, d, p, dropout_keys) < 0 || jv_object(v, d, p, "flash_attn", JV_REQUIRED, &fa) < 0)
		return -1;
	jpath_key(q, p, "flash_attn");
	return jv_keys(v, fa, q, fb_keys) < 0 || jv_number(v, fa, q, "f", JV_REQUIRED, 1e-6, 1, 0, f) < 0 ||
	       jv_number(v, fa, q, "b", JV_REQUIRED, 1e-6, 1, 0, b) < 0 ? -1 : 0;
}

static int read_gpus(struct runtime *rt, struct jv *v, const cJSON *gpus)
{
	char p[JPATH_MAX], q[JPATH_MAX];

	for (const cJSON *g = gpus->child; g; g = g->next) {
		struct runtime_gpu *x;
		const cJSON *effs;

		if (jv_is_comment_key(g->string))
			continue;
		jpath_key(p, "gpus", g->string);
		if (rt->ngpus == RUNTIME_MAX_GPUS)
			return jv_fail(v, p, "at most %d GPU models", RUNTIME_MAX_GPUS);
		if (!cJSON_IsObject(g))
			return jv_fail(v, p, "must be an object, not %s", json_type_name(g));
		if (!g->string[0] || json_has_control(g->string))
			return jv_fail(v, "gpus", "a GPU model's name must be a non-empty printable string");
		if (jv_keys(v, g, p, gpu_keys) < 0 || jv_object(v, g, p, "efficiency", JV_REQUIRED, &effs) < 0)
			return -1;
		x = &rt->gpus[rt->ngpus++];
		if (!(x->gpu = strdup(g->string)))
			return err_set(v->e, ERR_RUNTIME, "%s: out of host memory", v->file);
		jpath_key(q, p, "efficiency");
		if (efficiencies(v, effs, q, false, x->eff_f, x->eff_b, x->set) < 0 ||
		    read_dropout(v, g, p, &x->dropout_f, &x->dropout_b) < 0)
			return -1;
	}
	return 0;
}

static int read_body(struct runtime *rt, struct jv *v, const cJSON *root)
{
	const cJSON *kernels, *effs, *gpus, *overlap, *rec;
	const char *name;
	unsigned char launch = 0;

	if (jv_format(v, root, RUNTIME_FORMAT) < 0 || jv_keys(v, root, "", runtime_keys) < 0 ||
	    jv_string(v, root, "", "name", JV_REQUIRED | JV_NONEMPTY, NULL, &name) < 0 ||
	    jv_object(v, root, "", "kernels", JV_REQUIRED, &kernels) < 0 || jv_keys(v, kernels, "kernels", kernels_keys) < 0 ||
	    jv_object(v, root, "", "efficiency", JV_REQUIRED, &effs) < 0 ||
	    jv_object(v, root, "", "gpus", 0, &gpus) < 0 || jv_object(v, root, "", "overlap", 0, &overlap) < 0 ||
	    jv_object(v, root, "", "recompute", 0, &rec) < 0)
		return -1;
	if (json_has_control(name))
		return jv_fail(v, "name", "must not contain control characters");
	if (!(rt->name = strdup(name)))
		return err_set(v->e, ERR_RUNTIME, "%s: out of host memory", v->file);
	if (choice(v, kernels, "kernels", "attention", attention_names, &rt->style.attention) < 0 ||
	    choice(v, kernels, "kernels", "experts", experts_names, &rt->style.experts) < 0 ||
	    read_loss(rt, v, kernels) < 0 ||
	    choice(v, kernels, "kernels", "launch", launch_names, &launch) < 0 ||
	    jv_number(v, kernels, "kernels", "launch_us", JV_REQUIRED, 0, 1e4, 0, &rt->launch_us) < 0)
		return -1;
	rt->launch_async = launch == 1;
	if (efficiencies(v, effs, "efficiency", true, rt->eff_f, rt->eff_b, NULL) < 0 ||
	    read_dropout(v, root, "", &rt->dropout_f, &rt->dropout_b) < 0 ||
	    (gpus && read_gpus(rt, v, gpus) < 0))
		return -1;
	if (overlap && (jv_keys(v, overlap, "overlap", overlap_keys) < 0 ||
	                jv_bool(v, overlap, "overlap", "tp_comm", 0, false, &rt->style.tp_overlap) < 0))
		return -1;
	if (rec && (jv_keys(v, rec, "recompute", recompute_keys) < 0 ||
	            choice(v, rec, "recompute", "selective", selective_names, &rt->style.selective) < 0))
		return -1;
	return 0;
}

int runtime_from_json(struct runtime *rt, const cJSON *root, const char *file, struct err *e)
{
	struct jv v = { file, e, NULL };

	memset(rt, 0, sizeof(*rt));
	if (!cJSON_IsObject(root))
		return jv_fail(&v, "", "a runtime profile must be a JSON object");
	if (read_body(rt, &v, root) < 0) {
		runtime_release(rt);
		return -1;
	}
	if (!(rt->doc = cJSON_Duplicate(root, true))) {
		runtime_release(rt);
		return err_set(e, ERR_RUNTIME, "%s: out of host memory", file);
	}
	return 0;
}

int runtime_load(struct runtime *rt, const char *path, struct err *e)
{
	cJSON *root = json_load_file(path, e);
	int r;

	if (!root)
		return -1;
	r = runtime_from_json(rt, root, path, e);
	cJSON_Delete(root);
	return r;
}

void runtime_release(struct runtime *rt)
{
	if (!rt)
		return;
	free(rt->name);
	for (int i = 0; i < rt->ngpus; i++)
		free(rt->gpus[i].gpu);
	cJSON_Delete(rt->doc);
	memset(rt, 0, sizeof(*rt));
}

void runtime_hardware(const struct runtime *rt, const char *gpu, struct hardware *hw)
{
	memcpy(hw->eff_f, rt->eff_f, sizeof(hw->eff_f));
	memcpy(hw->eff_b, rt->eff_b, sizeof(hw->eff_b));
	hw->launch_us_f = hw->launch_us_b = rt->launch_us;
	hw->launch_async = rt->launch_async;
	hw->flash_dropout_f = rt->dropout_f;
	hw->flash_dropout_b = rt->dropout_b;
	for (int i = 0; gpu && i < rt->ngpus; i++) {
		const struct runtime_gpu *g = &rt->gpus[i];

		if (strncmp(gpu, g->gpu, strlen(g->gpu)) != 0)
			continue;
		for (int k = 0; k < EFF_NCLASS; k++)
			if (g->set[k]) {
				hw->eff_f[k] = g->eff_f[k];
				hw->eff_b[k] = g->eff_b[k];
			}
		if (g->dropout_f > 0) {
			hw->flash_dropout_f = g->dropout_f;
			hw->flash_dropout_b = g->dropout_b;
		}
		break;
	}
}
