/*
 * layout_json — a parallel layout's JSON, read and written in one place (see layout_json.h).
 */
#include "config.h"
#include "layout_json.h"

#include <string.h>

#include "bounds.h"

const char *parallel_grads_name(bool fp32_grads)
{
	return fp32_grads ? "fp32" : "bf16";
}

int parallel_grads_from_name(const char *name, bool *fp32_grads)
{
	if (strcmp(name, "bf16") == 0)
		*fp32_grads = false;
	else if (strcmp(name, "fp32") == 0)
		*fp32_grads = true;
	else
		return -1;
	return 0;
}

int parallel_read_grads(struct jv *v, const cJSON *obj, const char *path, bool *fp32_grads)
{
	const char *name;
	char p[JPATH_MAX];

	*fp32_grads = false;
	if (jv_string(v, obj, path, "grads", 0, NULL, &name) < 0)
		return -1;
	jpath_key(p, path, "grads");
	if (name && parallel_grads_from_name(name, fp32_grads) < 0)
		return jv_fail(v, p, "'%s' is not bf16 or fp32 (the gradients' precision)", name);
	return 0;
}

/* A plan's "parallel" holds nothing else: a misspelt degree must not pass as the default. */
static const char *const degree_keys[] = { "pp", "tp", "dp", "ep", "zero", "grads", "micro_batch_size", NULL };

int layout_json_read(struct jv *v, const cJSON *obj, const char *path, bool with_pp, struct parallel *l)
{
	long x[5] = { l->pp, 1, 1, 1, 0 };
	int flags = with_pp ? 0 : JV_REQUIRED;

	for (int i = with_pp ? 0 : 1; i < 5; i++)
		if (jv_int(v, obj, path, degree_keys[i], i == 0 ? JV_REQUIRED : flags, i == 4 ? 0 : 1,
		           i == 4 ? 3 : PARALLEL_MAX_DEGREE, i == 4 ? 0 : 1, &x[i]) < 0)
			return -1;
	if (with_pp && jv_keys(v, obj, path, degree_keys) < 0)
		return -1;
	l->micro_batch = 0;
	if (with_pp && jv_int(v, obj, path, "micro_batch_size", 0, 1, OCTO_MAX_MICRO_BATCH, 0, &l->micro_batch) < 0)
		return -1;
	if (parallel_read_grads(v, obj, path, &l->fp32_grads) < 0)
		return -1;
	l->pp = (int)x[0];
	l->tp = (int)x[1];
	l->dp = (int)x[2];
	l->ep = (int)x[3];
	l->zero = (int)x[4];
	return 0;
}

void layout_json_write(struct jw *w, cJSON *obj, const struct parallel *l, bool with_pp)
{
	if (with_pp)
		jw_num(w, obj, "pp", l->pp);
	jw_num(w, obj, "tp", l->tp);
	jw_num(w, obj, "dp", l->dp);
	jw_num(w, obj, "ep", l->ep);
	jw_num(w, obj, "zero", l->zero);
	if (l->fp32_grads)
		jw_str(w, obj, "grads", "fp32");
	if (with_pp && l->micro_batch > 0)
		jw_num(w, obj, "micro_batch_size", (double)l->micro_batch);
}
