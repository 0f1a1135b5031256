/*
 * metrics — read, validate and write the metrics object (see metrics.h).
 */
#include "config.h"
#include "metrics.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "bounds.h"

#define BIG 1e15 /* ms: beyond any real iteration, keeps sums finite */

void metrics_release(struct metrics *m)
{
	if (!m)
		return;
	free(m->dev);
	free(m->cycle);
	free(m->oom);
	memset(m, 0, sizeof(*m));
}

static const char *const metrics_keys[] = {
	"makespan_ms", "throughput_tokens_per_s", "bubble_ratio", "lower_bound_ms", "efficiency", "lower_bound_tight_ms",
	"efficiency_tight", "lower_bound_memory_ms", "efficiency_memory", "dp_sync_ms", "devices", "deadlock", "oom", NULL
};
static const char *const device_keys[] = {
	"id", "busy_ms", "idle_ms", "bubble_ratio", "warmup_idle_ms", "cooldown_idle_ms", "peak_mem_bytes",
	"mem_capacity_bytes", "memory_breakdown", "dp_sync", NULL
};
/* "peak" repeats the device's peak_mem_bytes: known, not read */
static const char *const breakdown_keys[] = { "weights", "grads", "optimizer", "activations", "peak", NULL };
static const char *const sync_keys[] = { "start_ms", "end_ms", NULL };
static const char *const deadlock_keys[] = { "cycle", NULL };
static const char *const cycle_keys[] = { "device", "op", NULL };

static int read_device(struct jv *v, const cJSON *o, const char *path, long i,
                       struct device_metrics *d)
{
	long id;

	if (!cJSON_IsObject(o))
		return jv_fail(v, path, "must be an object, not %s", json_type_name(o));
	if (jv_keys(v, o, path, device_keys) < 0 ||
	    jv_int(v, o, path, "id", JV_REQUIRED, i, i, 0, &id) < 0 ||
	    jv_number(v, o, path, "busy_ms", JV_REQUIRED, 0, BIG, 0, &d->busy_ms) < 0 ||
	    jv_number(v, o, path, "idle_ms", JV_REQUIRED, 0, BIG, 0, &d->idle_ms) < 0 ||
	    jv_number(v, o, path, "bubble_ratio", JV_REQUIRED, 0, 1, 0, &d->bubble_ratio) < 0 ||
	    jv_number(v, o, path, "warmup_idle_ms", 0, 0, BIG, 0, &d->warmup_idle_ms) < 0 ||
	    jv_number(v, o, path, "cooldown_idle_ms", 0, 0, BIG, 0, &d->cooldown_idle_ms) < 0 ||
	    jv_bytes(v, o, path, "peak_mem_bytes", 0, 0, &d->peak_mem_bytes) < 0 ||
	    jv_bytes(v, o, path, "mem_capacity_bytes", 0, 0, &d->mem_capacity_bytes) < 0)
		return -1;
	{
		const cJSON *mb, *sy;
		char q[JPATH_MAX];

		if (jv_object(v, o, path, "memory_breakdown", 0, &mb) < 0 || jv_object(v, o, path, "dp_sync", 0, &sy) < 0)
			return -1;
		jpath_key(q, path, "memory_breakdown");
		if (mb && (jv_keys(v, mb, q, breakdown_keys) < 0 || jv_bytes(v, mb, q, "weights", 0, 0, &d->weights_bytes) < 0 ||
		           jv_bytes(v, mb, q, "grads", 0, 0, &d->grads_bytes) < 0 ||
		           jv_bytes(v, mb, q, "optimizer", 0, 0, &d->optimizer_bytes) < 0 ||
		           jv_bytes(v, mb, q, "activations", 0, 0, &d->act_peak_bytes) < 0))
			return -1;
		jpath_key(q, path, "dp_sync");
		if (sy && (jv_keys(v, sy, q, sync_keys) < 0 ||
		           jv_number(v, sy, q, "start_ms", JV_REQUIRED, 0, BIG, 0, &d->sync_start_ms) < 0 ||
		           jv_number(v, sy, q, "end_ms", JV_REQUIRED, d->sync_start_ms, BIG, 0, &d->sync_end_ms) < 0))
			return -1;
	}
	return 0;
}

static int read_deadlock(struct jv *v, const cJSON *obj, const char *path, struct metrics *m)
{
	const cJSON *dl, *cycle;
	char p[JPATH_MAX], q[JPATH_MAX];
	long i = 0;

	if (jv_member(v, obj, path, "deadlock", 0, &dl) <= 0 || cJSON_IsNull(dl))
		return 0;
	jpath_key(p, path, "deadlock");
	if (!cJSON_IsObject(dl))
		return jv_fail(v, p, "must be null or an object with a cycle, not %s", json_type_name(dl));
	if (jv_keys(v, dl, p, deadlock_keys) < 0 || jv_array(v, dl, p, "cycle", JV_REQUIRED, &cycle) < 0)
		return -1;
	jpath_key(q, p, "cycle");
	if (cJSON_GetArraySize(cycle) < 1 || cJSON_GetArraySize(cycle) > OCTO_MAX_OPS)
		return jv_fail(v, q, "must list the ops of the cycle");
	m->cycle = calloc((size_t)cJSON_GetArraySize(cycle), sizeof(*m->cycle));
	if (!m->cycle)
		return err_set(v->e, ERR_RUNTIME, "%s: out of host memory", v->file);
	for (const cJSON *c = cycle->child; c; c = c->next, i++) {
		char ep[JPATH_MAX], fp[JPATH_MAX];
		const char *tok;
		long dev;

		jpath_index(ep, q, i);
		if (!cJSON_IsObject(c))
			return jv_fail(v, ep, "must be an object {\"device\": D, \"op\": \"0F3\"}, not %s",
			               json_type_name(c));
		if (jv_keys(v, c, ep, cycle_keys) < 0 || jv_int(v, c, ep, "device", JV_REQUIRED, 0, m->ndevices - 1, 0, &dev) < 0 ||
		    jv_string(v, c, ep, "op", JV_REQUIRED, NULL, &tok) < 0)
			return -1;
		jpath_key(fp, ep, "op");
		if (action_parse(tok, &m->cycle[i].op) < 0)
			return jv_fail(v, fp, "'%.40s' is not an action", tok);
		m->cycle[i].device = (int)dev;
		m->ncycle++;
	}
	return 0;
}

int metrics_from_json(struct metrics *m, const cJSON *obj, const char *file, const char *path,
                      struct err *e)
{
	struct jv v = { file, e, NULL };
	const cJSON *devs, *oom;
	char p[JPATH_MAX];
	long i = 0;

	memset(m, 0, sizeof(*m));
	if (!cJSON_IsObject(obj)) {
		jv_fail(&v, path, "must be an object, not %s", json_type_name(obj));
		return -1;
	}
	if (jv_keys(&v, obj, path, metrics_keys) < 0 ||
	    jv_number(&v, obj, path, "makespan_ms", JV_REQUIRED, 0, BIG, 0, &m->makespan_ms) < 0 ||
	    jv_number(&v, obj, path, "throughput_tokens_per_s", 0, 0, 1e300, 0, &m->throughput_tokens_per_s) < 0 ||
	    jv_number(&v, obj, path, "bubble_ratio", JV_REQUIRED, 0, 1, 0, &m->bubble_ratio) < 0 ||
	    jv_number(&v, obj, path, "lower_bound_ms", 0, 0, BIG, 0, &m->lower_bound_ms) < 0 ||
	    jv_number(&v, obj, path, "efficiency", 0, 0, 1, 0, &m->efficiency) < 0 ||
	    jv_number(&v, obj, path, "lower_bound_tight_ms", 0, 0, BIG, -1, &m->lower_bound_tight_ms) < 0 ||
	    jv_number(&v, obj, path, "efficiency_tight", 0, 0, 1, -1, &m->efficiency_tight) < 0 ||
	    jv_number(&v, obj, path, "lower_bound_memory_ms", 0, 0, BIG, -1, &m->lower_bound_memory_ms) < 0 ||
	    jv_number(&v, obj, path, "efficiency_memory", 0, 0, 1, -1, &m->efficiency_memory) < 0 ||
	    jv_number(&v, obj, path, "dp_sync_ms", 0, 0, BIG, 0, &m->dp_sync_ms) < 0 ||
	    jv_array(&v, obj, path, "devices", JV_REQUIRED, &devs) < 0)
		goto fail;
	/* files written before the tight bound existed: the old bound is the best they know */
	if (m->lower_bound_tight_ms < 0)
		m->lower_bound_tight_ms = m->lower_bound_ms;
	if (m->efficiency_tight < 0)
		m->efficiency_tight = m->efficiency;
	/* and before the memory-aware one: the tight bound */
	if (m->lower_bound_memory_ms < 0)
		m->lower_bound_memory_ms = m->lower_bound_tight_ms;
	if (m->efficiency_memory < 0)
		m->efficiency_memory = m->efficiency_tight;
	jpath_key(p, path, "devices");
	if (cJSON_GetArraySize(devs) < 1 || cJSON_GetArraySize(devs) > OCTO_MAX_DEVICES) {
		jv_fail(&v, p, "must list between 1 and %d devices", OCTO_MAX_DEVICES);
		goto fail;
	}
	m->ndevices = cJSON_GetArraySize(devs);
	m->dev = calloc((size_t)m->ndevices, sizeof(*m->dev));
	if (!m->dev)
		goto oom;
	for (const cJSON *d = devs->child; d; d = d->next, i++) {
		char dp[JPATH_MAX];

		jpath_index(dp, p, i);
		if (read_device(&v, d, dp, i, &m->dev[i]) < 0)
			goto fail;
	}
	if (read_deadlock(&v, obj, path, m) < 0 || jv_array(&v, obj, path, "oom", 0, &oom) < 0)
		goto fail;
	if (oom && cJSON_GetArraySize(oom) > 0) {
		char op[JPATH_MAX];

		jpath_key(p, path, "oom");
		if (cJSON_GetArraySize(oom) > m->ndevices) {
			jv_fail(&v, p, "lists more devices than there are (%d)", m->ndevices);
			goto fail;
		}
		m->oom = calloc((size_t)cJSON_GetArraySize(oom), sizeof(*m->oom));
		if (!m->oom)
			goto oom;
		i = 0;
		for (const cJSON *c = oom->child; c; c = c->next, i++) {
			double d;

			jpath_index(op, p, i);
			if (jv_number_value(&v, c, op, JV_INTEGER, 0, m->ndevices - 1, &d) < 0)
				goto fail;
			m->oom[m->noom++] = (int)d;
		}
	}
	return 0;
oom:
	err_set(e, ERR_RUNTIME, "%s: out of host memory", file);
fail:
	metrics_release(m);
	return -1;
}

cJSON *metrics_to_json(const struct metrics *m)
{
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *arr;
	char tok[ACTION_TEXT_MAX];

	jw_num(&w, root, "makespan_ms", m->makespan_ms);
	jw_num(&w, root, "throughput_tokens_per_s", m->throughput_tokens_per_s);
	jw_num(&w, root, "bubble_ratio", m->bubble_ratio);
	jw_num(&w, root, "lower_bound_ms", m->lower_bound_ms);
	jw_num(&w, root, "efficiency", m->efficiency);
	jw_num(&w, root, "lower_bound_tight_ms", m->lower_bound_tight_ms);
	jw_num(&w, root, "efficiency_tight", m->efficiency_tight);
	jw_num(&w, root, "lower_bound_memory_ms", m->lower_bound_memory_ms);
	jw_num(&w, root, "efficiency_memory", m->efficiency_memory);
	jw_num(&w, root, "dp_sync_ms", m->dp_sync_ms);
	arr = jw_arr(&w, root, "devices");
	for (int d = 0; d < m->ndevices; d++) {
		const struct device_metrics *dm = &m->dev[d];
		cJSON *o = jw_push(&w, arr, cJSON_CreateObject());

		jw_num(&w, o, "id", d);
		jw_num(&w, o, "busy_ms", dm->busy_ms);
		jw_num(&w, o, "idle_ms", dm->idle_ms);
		jw_num(&w, o, "bubble_ratio", dm->bubble_ratio);
		jw_num(&w, o, "warmup_idle_ms", dm->warmup_idle_ms);
		jw_num(&w, o, "cooldown_idle_ms", dm->cooldown_idle_ms);
		jw_num(&w, o, "peak_mem_bytes", (double)dm->peak_mem_bytes);
		jw_num(&w, o, "mem_capacity_bytes", (double)dm->mem_capacity_bytes);
		if (dm->weights_bytes || dm->grads_bytes || dm->optimizer_bytes || dm->act_peak_bytes) {
			cJSON *mb = jw_obj(&w, o, "memory_breakdown");

			jw_num(&w, mb, "weights", (double)dm->weights_bytes);
			jw_num(&w, mb, "grads", (double)dm->grads_bytes);
			jw_num(&w, mb, "optimizer", (double)dm->optimizer_bytes);
			jw_num(&w, mb, "activations", (double)dm->act_peak_bytes);
			jw_num(&w, mb, "peak", (double)dm->peak_mem_bytes);
		}
		if (dm->sync_end_ms > 0) {
			cJSON *sy = jw_obj(&w, o, "dp_sync");

			jw_num(&w, sy, "start_ms", dm->sync_start_ms);
			jw_num(&w, sy, "end_ms", dm->sync_end_ms);
		}
	}
	if (m->ncycle) {
		cJSON *dl = jw_obj(&w, root, "deadlock"), *cyc = jw_arr(&w, dl, "cycle");

		for (int i = 0; i < m->ncycle; i++) {
			cJSON *o = jw_push(&w, cyc, cJSON_CreateObject());

			jw_num(&w, o, "device", m->cycle[i].device);
			jw_str(&w, o, "op", action_format(&m->cycle[i].op, tok));
		}
	} else {
		jw_null(&w, root, "deadlock");
	}
	arr = jw_arr(&w, root, "oom");
	for (int i = 0; i < m->noom; i++)
		jw_push(&w, arr, cJSON_CreateNumber(m->oom[i]));
	if (w.oom) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}
