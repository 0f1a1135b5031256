/*
 * timeline — load, validate and save timelines (see timeline.h).
 *
 * Validation enforces the physical facts a drawing or a comparison relies on: one compute
 * stream per device (ops ordered and non-overlapping), time never runs backwards, and the
 * metrics describe the same number of devices.
 */
#include "config.h"
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "bounds.h"
#include "strbuf.h"

#define BIG 1e15          /* ms */
#define OVERLAP_EPS 1e-6  /* ms: rounding in written files, not real overlap */

static const char *const timeline_keys[] = {
	"format", "source", "plan", "devices", "transfers", "metrics", NULL
};
/* and "not_run", why octopipe run measured no ops (kept as an extra member, which
 * calibrate reads) */
static const char *const timeline_allowed[] = {
	"format", "source", "plan", "devices", "transfers", "metrics", "not_run", NULL
};
static const char *const op_keys[] = { "op", "stage", "mb", "start_ms", "end_ms", NULL };
static const char *const device_keys[] = { "id", "ops", "peak_mem_bytes", "mem", NULL };
static const char *const xfer_keys[] = { "src", "dst", "stage", "mb", "kind", "start_ms", "end_ms", "bytes", NULL };
static const char *const sources[] = { "sim", "emu", "cuda", NULL };

void timeline_release(struct timeline *t)
{
	if (!t)
		return;
	for (int d = 0; d < t->ndevices && t->dev; d++) {
		free(t->dev[d].ops);
		free(t->dev[d].mem);
	}
	free(t->dev);
	free(t->xfers);
	free(t->source);
	free(t->plan_ref);
	metrics_release(&t->metrics);
	cJSON_Delete(t->extra);
	memset(t, 0, sizeof(*t));
}

static int oom(struct jv *v)
{
	return err_set(v->e, ERR_RUNTIME, "%s: out of host memory", v->file);
}

static int read_kind(struct jv *v, const cJSON *o, const char *path, uint8_t *kind)
{
	const char *s;
	char p[JPATH_MAX];
	int k;

	if (jv_string(v, o, path, "op", JV_REQUIRED, NULL, &s) < 0)
		return -1;
	k = s[0] && !s[1] ? op_kind_from_char(s[0]) : -1;
	if (k < 0) {
		jpath_key(p, path, "op");
		return jv_fail(v, p, "must be one of \"F\", \"I\", \"W\", \"B\" (got '%.20s')", s);
	}
	*kind = (uint8_t)k;
	return 0;
}

static int read_interval(struct jv *v, const cJSON *o, const char *path, double *start, double *end)
{
	char p[JPATH_MAX];

	if (jv_number(v, o, path, "start_ms", JV_REQUIRED, 0, BIG, 0, start) < 0 ||
	    jv_number(v, o, path, "end_ms", JV_REQUIRED, 0, BIG, 0, end) < 0)
		return -1;
	if (*end < *start) {
		jpath_key(p, path, "end_ms");
		return jv_fail(v, p, "ends before it starts (start_ms %g, end_ms %g)", *start, *end);
	}
	return 0;
}

static int read_ops(struct jv *v, const cJSON *arr, const char *path, struct tl_device *dev,
                    long *total)
{
	char p[JPATH_MAX];
	long i = 0;

	*total += cJSON_GetArraySize(arr);
	if (*total > OCTO_MAX_OPS)
		return jv_fail(v, path, "more than %ld ops in the timeline", (long)OCTO_MAX_OPS);
	dev->ops = calloc((size_t)(cJSON_GetArraySize(arr) ? cJSON_GetArraySize(arr) : 1), sizeof(*dev->ops));
	if (!dev->ops)
		return oom(v);
	for (const cJSON *o = arr->child; o; o = o->next, i++) {
		struct tl_op *op = &dev->ops[i];
		long stage, mb;

		jpath_index(p, path, i);
		if (!cJSON_IsObject(o))
			return jv_fail(v, p, "must be an object, not %s", json_type_name(o));
		if (jv_keys(v, o, p, op_keys) < 0 || read_kind(v, o, p, &op->kind) < 0 ||
		    jv_int(v, o, p, "stage", JV_REQUIRED, 0, OCTO_MAX_STAGES - 1, 0, &stage) < 0 ||
		    jv_int(v, o, p, "mb", JV_REQUIRED, 0, OCTO_MAX_MICROBATCHES - 1, 0, &mb) < 0 ||
		    read_interval(v, o, p, &op->start_ms, &op->end_ms) < 0)
			return -1;
		op->stage = (int32_t)stage;
		op->mb = (int32_t)mb;
		if (i > 0 && op->start_ms < dev->ops[i - 1].end_ms - OVERLAP_EPS) {
			char q[JPATH_MAX];

			jpath_key(q, p, "start_ms");
			return jv_fail(v, q, "starts at %g ms, before the previous op on this device ends "
			               "(%g ms): a device runs one op at a time", op->start_ms, dev->ops[i - 1].end_ms);
		}
		dev->nops++;
	}
	return 0;
}

static int read_mem(struct jv *v, const cJSON *arr, const char *path, struct tl_device *dev)
{
	char p[JPATH_MAX], q[JPATH_MAX];
	long i = 0;

	if (cJSON_GetArraySize(arr) > OCTO_MAX_OPS)
		return jv_fail(v, path, "too many samples");
	dev->mem = calloc((size_t)(cJSON_GetArraySize(arr) ? cJSON_GetArraySize(arr) : 1), sizeof(*dev->mem));
	if (!dev->mem)
		return oom(v);
	for (const cJSON *s = arr->child; s; s = s->next, i++) {
		double t, b;

		jpath_index(p, path, i);
		if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) != 2)
			return jv_fail(v, p, "must be a [time_ms, bytes] pair");
		jpath_index(q, p, 0);
		if (jv_number_value(v, s->child, q, 0, 0, BIG, &t) < 0)
			return -1;
		jpath_index(q, p, 1);
		if (jv_number_value(v, s->child->next, q, JV_INTEGER, 0, 9007199254740992.0, &b) < 0)
			return -1;
		if (i > 0 && t < dev->mem[i - 1].t_ms) {
			jpath_index(q, p, 0);
			return jv_fail(v, q, "time goes backwards (%g ms after %g ms)", t, dev->mem[i - 1].t_ms);
		}
		dev->mem[i].t_ms = t;
		dev->mem[i].bytes = (uint64_t)b;
		dev->nmem++;
	}
	return 0;
}

static int read_devices(struct jv *v, const cJSON *root, struct timeline *t)
{
	const cJSON *arr;
	char p[JPATH_MAX];
	long i = 0, total = 0;

	if (jv_array(v, root, "", "devices", JV_REQUIRED, &arr) < 0)
		return -1;
	if (cJSON_GetArraySize(arr) < 1 || cJSON_GetArraySize(arr) > OCTO_MAX_DEVICES)
		return jv_fail(v, "devices", "must list between 1 and %d devices", OCTO_MAX_DEVICES);
	t->dev = calloc((size_t)cJSON_GetArraySize(arr), sizeof(*t->dev));
	if (!t->dev)
		return oom(v);
	t->ndevices = cJSON_GetArraySize(arr);
	for (const cJSON *d = arr->child; d; d = d->next, i++) {
		const cJSON *ops, *mem;
		char q[JPATH_MAX];
		long id;

		jpath_index(p, "devices", i);
		if (!cJSON_IsObject(d))
			return jv_fail(v, p, "must be an object, not %s", json_type_name(d));
		if (jv_keys(v, d, p, device_keys) < 0 || jv_int(v, d, p, "id", JV_REQUIRED, i, i, 0, &id) < 0 ||
		    jv_array(v, d, p, "ops", JV_REQUIRED, &ops) < 0 ||
		    jv_bytes(v, d, p, "peak_mem_bytes", 0, 0, &t->dev[i].peak_mem_bytes) < 0 ||
		    jv_array(v, d, p, "mem", 0, &mem) < 0)
			return -1;
		jpath_key(q, p, "ops");
		if (read_ops(v, ops, q, &t->dev[i], &total) < 0)
			return -1;
		jpath_key(q, p, "mem");
		if (mem && read_mem(v, mem, q, &t->dev[i]) < 0)
			return -1;
	}
	return 0;
}

static int read_transfers(struct jv *v, const cJSON *root, struct timeline *t)
{
	const cJSON *arr;
	char p[JPATH_MAX];
	long i = 0;
	int r = jv_array(v, root, "", "transfers", 0, &arr);

	if (r <= 0)
		return r;
	if (cJSON_GetArraySize(arr) > OCTO_MAX_TRANSFERS)
		return jv_fail(v, "transfers", "more than %ld transfers", (long)OCTO_MAX_TRANSFERS);
	t->xfers = calloc((size_t)(cJSON_GetArraySize(arr) ? cJSON_GetArraySize(arr) : 1), sizeof(*t->xfers));
	if (!t->xfers)
		return oom(v);
	for (const cJSON *o = arr->child; o; o = o->next, i++) {
		struct tl_xfer *x = &t->xfers[i];
		const char *kind;
		long src, dst, stage, mb;

		jpath_index(p, "transfers", i);
		if (!cJSON_IsObject(o))
			return jv_fail(v, p, "must be an object, not %s", json_type_name(o));
		if (jv_keys(v, o, p, xfer_keys) < 0 || jv_int(v, o, p, "src", JV_REQUIRED, 0, t->ndevices - 1, 0, &src) < 0 ||
		    jv_int(v, o, p, "dst", JV_REQUIRED, 0, t->ndevices - 1, 0, &dst) < 0 ||
		    jv_int(v, o, p, "stage", JV_REQUIRED, 0, OCTO_MAX_STAGES - 1, 0, &stage) < 0 ||
		    jv_int(v, o, p, "mb", JV_REQUIRED, 0, OCTO_MAX_MICROBATCHES - 1, 0, &mb) < 0 ||
		    jv_string(v, o, p, "kind", JV_REQUIRED, NULL, &kind) < 0 ||
		    read_interval(v, o, p, &x->start_ms, &x->end_ms) < 0 ||
		    jv_bytes(v, o, p, "bytes", 0, 0, &x->bytes) < 0)
			return -1;
		if (src == dst) {
			char q[JPATH_MAX];

			jpath_key(q, p, "dst");
			return jv_fail(v, q, "a transfer goes between two devices (src and dst are both %ld)", src);
		}
		if (strcmp(kind, "act") != 0 && strcmp(kind, "grad") != 0) {
			char q[JPATH_MAX];

			jpath_key(q, p, "kind");
			return jv_fail(v, q, "must be \"act\" or \"grad\" (got '%.20s')", kind);
		}
		x->src = (int)src;
		x->dst = (int)dst;
		x->stage = (int32_t)stage;
		x->mb = (int32_t)mb;
		x->kind = strcmp(kind, "grad") == 0 ? XFER_GRAD : XFER_ACT;
		t->nxfers++;
	}
	return 0;
}

int timeline_from_json(struct timeline *t, const cJSON *root, const char *file, struct err *e)
{
	struct jv v = { file, e, NULL };
	const char *source, *plan;
	const cJSON *metrics;
	int k;

	memset(t, 0, sizeof(*t));
	if (jv_format(&v, root, TIMELINE_FORMAT) < 0 || jv_keys(&v, root, "", timeline_allowed) < 0 ||
	    jv_string(&v, root, "", "source", JV_REQUIRED, NULL, &source) < 0 ||
	    jv_string(&v, root, "", "plan", JV_NONEMPTY, NULL, &plan) < 0)
		goto fail;
	for (k = 0; sources[k] && strcmp(sources[k], source) != 0; k++)
		;
	if (!sources[k]) {
		jv_fail(&v, "source", "must be \"sim\", \"emu\" or \"cuda\" (got '%.20s')", source);
		goto fail;
	}
	if (read_devices(&v, root, t) < 0 || read_transfers(&v, root, t) < 0 ||
	    jv_object(&v, root, "", "metrics", 0, &metrics) < 0)
		goto fail;
	if (metrics) {
		if (metrics_from_json(&t->metrics, metrics, file, "metrics", e) < 0)
			goto fail;
		t->has_metrics = true;
		if (t->metrics.ndevices != t->ndevices) {
			jv_fail(&v, "metrics.devices", "has %d entries but the timeline has %d devices",
			        t->metrics.ndevices, t->ndevices);
			goto fail;
		}
	}
	t->source = strdup(source);
	t->plan_ref = plan ? strdup(plan) : NULL;
	if (!t->source || (plan && !t->plan_ref) || json_extras(root, timeline_keys, &t->extra) < 0) {
		oom(&v);
		goto fail;
	}
	return 0;
fail:
	timeline_release(t);
	return -1;
}

bool timeline_plan_ref_ok(const char *ref)
{
	size_t n = strlen(ref);

	return n > 0 && n <= JV_STRING_MAX && str_is_utf8(ref, n) && !json_has_control(ref);
}

int timeline_load(struct timeline *t, const char *path, struct err *e)
{
	cJSON *root = json_load_file(path, e);
	int r;

	memset(t, 0, sizeof(*t));
	if (!root)
		return -1;
	r = timeline_from_json(t, root, path, e);
	cJSON_Delete(root);
	return r;
}

cJSON *timeline_to_json(const struct timeline *t)
{
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *arr;
	char k[2] = { 0, 0 };

	jw_str(&w, root, "format", TIMELINE_FORMAT);
	jw_str(&w, root, "source", t->source);
	if (t->plan_ref)
		jw_str(&w, root, "plan", t->plan_ref);
	if (t->has_metrics)
		jw_item(&w, root, "metrics", metrics_to_json(&t->metrics));
	arr = jw_arr(&w, root, "devices");
	for (int d = 0; d < t->ndevices; d++) {
		const struct tl_device *dev = &t->dev[d];
		cJSON *o = jw_push(&w, arr, cJSON_CreateObject()), *ops, *mem;

		jw_num(&w, o, "id", d);
		jw_num(&w, o, "peak_mem_bytes", (double)dev->peak_mem_bytes);
		ops = jw_arr(&w, o, "ops");
		for (int i = 0; i < dev->nops; i++) {
			const struct tl_op *op = &dev->ops[i];
			cJSON *x = jw_push(&w, ops, cJSON_CreateObject());

			k[0] = op_kind_char((enum op_kind)op->kind);
			jw_str(&w, x, "op", k);
			jw_num(&w, x, "stage", op->stage);
			jw_num(&w, x, "mb", op->mb);
			jw_num(&w, x, "start_ms", op->start_ms);
			jw_num(&w, x, "end_ms", op->end_ms);
		}
		if (dev->nmem) {
			mem = jw_arr(&w, o, "mem");
			for (int i = 0; i < dev->nmem; i++) {
				cJSON *pair = jw_push(&w, mem, cJSON_CreateArray());

				jw_push(&w, pair, cJSON_CreateNumber(dev->mem[i].t_ms));
				jw_push(&w, pair, cJSON_CreateNumber((double)dev->mem[i].bytes));
			}
		}
	}
	arr = jw_arr(&w, root, "transfers");
	for (long i = 0; i < t->nxfers; i++) {
		const struct tl_xfer *x = &t->xfers[i];
		cJSON *o = jw_push(&w, arr, cJSON_CreateObject());

		jw_num(&w, o, "src", x->src);
		jw_num(&w, o, "dst", x->dst);
		jw_num(&w, o, "stage", x->stage);
		jw_num(&w, o, "mb", x->mb);
		jw_str(&w, o, "kind", x->kind == XFER_GRAD ? "grad" : "act");
		jw_num(&w, o, "start_ms", x->start_ms);
		jw_num(&w, o, "end_ms", x->end_ms);
		jw_num(&w, o, "bytes", (double)x->bytes);
	}
	jw_extras(&w, root, t->extra);
	if (w.oom) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

int timeline_save(const struct timeline *t, const char *path, struct err *e)
{
	return json_save_built(path, timeline_to_json(t), e);
}

long timeline_total_ops(const struct timeline *t)
{
	long n = 0;

	for (int d = 0; d < t->ndevices; d++)
		n += t->dev[d].nops;
	return n;
}

double timeline_end_ms(const struct timeline *t)
{
	double end = 0;

	for (int d = 0; d < t->ndevices; d++)
		if (t->dev[d].nops && t->dev[d].ops[t->dev[d].nops - 1].end_ms > end)
			end = t->dev[d].ops[t->dev[d].nops - 1].end_ms;
	for (long i = 0; i < t->nxfers; i++)
		if (t->xfers[i].end_ms > end)
			end = t->xfers[i].end_ms;
	/* the data-parallel sync that runs past the last op */
	for (int d = 0; t->has_metrics && d < t->metrics.ndevices; d++)
		if (t->metrics.dev[d].sync_end_ms > end)
			end = t->metrics.dev[d].sync_end_ms;
	return end;
}
