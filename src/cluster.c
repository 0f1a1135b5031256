/*
 * cluster — load, validate and save cluster descriptions (see cluster.h).
 */
#include "config.h"
#include "cluster.h"
#include "layout_json.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "bounds.h"

static const char *const cluster_keys[] = {
	"format", "name", "gpu", "devices", "gpus_per_node", "mem_bytes", "mem_headroom",
	"speed", "device_speeds", "intra_node", "inter_node", "hardware", "op_overhead_us", "replica", NULL
};

void cluster_release(struct cluster *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->gpu);
	free(c->device_speed);
	hardware_release(&c->hw);
	cJSON_Delete(c->extra);
	cJSON_Delete(c->intra_extra);
	cJSON_Delete(c->inter_extra);
	memset(c, 0, sizeof(*c));
}

static const char *const replica_keys[] = {
	"tp", "dp", "ep", "zero", "grads", "dp_gbytes_per_s", "dp_latency_us", NULL
};
static const char *const link_keys[] = { "gbytes_per_s", "latency_us", NULL };

static int read_link(struct jv *v, const cJSON *root, const char *key, bool required,
                     struct link *l)
{
	const cJSON *obj;
	int r = jv_object(v, root, "", key, required ? JV_REQUIRED : 0, &obj);

	if (r <= 0)
		return r;
	if (jv_keys(v, obj, key, link_keys) < 0 ||
	    jv_number(v, obj, key, "gbytes_per_s", JV_REQUIRED, 1e-6, 1e9, 0, &l->gbytes_per_s) < 0 ||
	    jv_number(v, obj, key, "latency_us", JV_REQUIRED, 0, 1e9, 0, &l->latency_us) < 0)
		return -1;
	return 1;
}

int cluster_from_json(struct cluster *c, const cJSON *root, const char *file, const char *path,
                       struct err *e)
{
	struct jv v = { file, e, path };
	const char *name, *gpu;
	const cJSON *speeds, *hw;
	long devices, per_node;
	double mem; /* (read with its floor of 1: -5 was told ">= 0", 0 ">= 1") */

	memset(c, 0, sizeof(*c));
	hardware_default(&c->hw);
	if (jv_format(&v, root, CLUSTER_FORMAT) < 0 || jv_keys(&v, root, "", cluster_keys) < 0 ||
	    jv_string(&v, root, "", "name", JV_REQUIRED | JV_NONEMPTY, NULL, &name) < 0 ||
	    jv_string(&v, root, "", "gpu", JV_NONEMPTY, NULL, &gpu) < 0 ||
	    jv_int(&v, root, "", "devices", JV_REQUIRED, 1, OCTO_MAX_DEVICES, 0, &devices) < 0 ||
	    jv_int(&v, root, "", "gpus_per_node", JV_REQUIRED, 1, OCTO_MAX_DEVICES, 0, &per_node) < 0 ||
	    jv_number(&v, root, "", "mem_bytes", JV_REQUIRED | JV_INTEGER, 1, 9007199254740992.0, 0, &mem) < 0 ||
	    jv_number(&v, root, "", "mem_headroom", 0, 0, 0.9, 0, &c->mem_headroom) < 0 ||
	    jv_number(&v, root, "", "speed", 0, 1e-3, 1e3, 1.0, &c->speed) < 0 ||
	    jv_number(&v, root, "", "op_overhead_us", 0, 0, 1e6, 0, &c->op_overhead_us) < 0 ||
	    read_link(&v, root, "intra_node", true, &c->intra) < 0)
		goto fail;
	c->mem_bytes = (uint64_t)mem;
	c->devices = (int)devices;
	c->gpus_per_node = (int)per_node;
	if (devices > per_node && !cJSON_GetObjectItemCaseSensitive(root, "inter_node")) {
		jv_fail(&v, "inter_node", "required field is missing: %ld devices span %ld nodes of %ld",
		        devices, (devices + per_node - 1) / per_node, per_node);
		goto fail;
	}
	if (read_link(&v, root, "inter_node", false, &c->inter) < 0)
		goto fail;
	c->device_speed = malloc((size_t)devices * sizeof(*c->device_speed));
	if (!c->device_speed)
		goto oom;
	for (long d = 0; d < devices; d++)
		c->device_speed[d] = c->speed;
	if (jv_array(&v, root, "", "device_speeds", 0, &speeds) < 0)
		goto fail;
	if (speeds) {
		char p[JPATH_MAX];
		long i = 0;

		if (cJSON_GetArraySize(speeds) != devices) {
			jv_fail(&v, "device_speeds", "has %d entries but the cluster has %ld devices",
			        cJSON_GetArraySize(speeds), devices);
			goto fail;
		}
		for (const cJSON *s = speeds->child; s; s = s->next, i++) {
			jpath_index(p, "device_speeds", i);
			if (jv_number_value(&v, s, p, 0, 1e-3, 1e3, &c->device_speed[i]) < 0)
				goto fail;
		}
	}
	if (jv_object(&v, root, "", "hardware", 0, &hw) < 0 ||
	    (hw && hardware_from_json(&c->hw, hw, file, path && path[0] ? path : NULL, "hardware", e) < 0))
		goto fail;
	c->has_hw = hw != NULL;
	/* without the section, the named GPU's datasheet peaks (an A100 is not an H200) */
	c->hw_unknown = !hw && gpu && !hardware_datasheet(gpu, &c->hw);
	{
		/* one replica of a parallel layout (parallel.h), as plans built on it carry it */
		const cJSON *rp;
		struct parallel l = { 0 };

		if (jv_object(&v, root, "", "replica", 0, &rp) < 0)
			goto fail;
		if (rp) {
			if (jv_keys(&v, rp, "replica", replica_keys) < 0 || layout_json_read(&v, rp, "replica", false, &l) < 0)
				goto fail;
			c->rep.tp = l.tp;
			c->rep.dp = l.dp;
			c->rep.ep = l.ep;
			c->rep.zero = l.zero;
			c->rep.fp32_grads = l.fp32_grads;
			/* the memory and sync rules divide by dp / ep (parallel_check's rule) */
			if (c->rep.dp % c->rep.ep != 0) {
				jv_fail(&v, "replica.ep", "ep %d must divide dp %d (experts are sharded over data-parallel ranks)",
				        c->rep.ep, c->rep.dp);
				goto fail;
			}
			if (jv_number(&v, rp, "replica", "dp_gbytes_per_s", JV_REQUIRED, 0, 1e9, 0,
			              &c->rep.dp_link.gbytes_per_s) < 0 ||
			    jv_number(&v, rp, "replica", "dp_latency_us", JV_REQUIRED, 0, 1e9, 0, &c->rep.dp_link.latency_us) < 0)
				goto fail;
		}
	}
	c->name = strdup(name);
	c->gpu = gpu ? strdup(gpu) : NULL;
	if (!c->name || (gpu && !c->gpu) || json_extras(root, cluster_keys, &c->extra) < 0 ||
	    json_extras(cJSON_GetObjectItemCaseSensitive(root, "intra_node"), link_keys, &c->intra_extra) < 0 ||
	    json_extras(cJSON_GetObjectItemCaseSensitive(root, "inter_node"), link_keys, &c->inter_extra) < 0)
		goto oom;
	return 0;
oom:
	err_set(e, ERR_RUNTIME, "%s: out of host memory", file);
fail:
	cluster_release(c);
	return -1;
}

int cluster_load(struct cluster *c, const char *path, struct err *e)
{
	cJSON *root = json_load_file(path, e);
	int r;

	memset(c, 0, sizeof(*c));
	if (!root)
		return -1;
	r = cluster_from_json(c, root, path, NULL, e);
	cJSON_Delete(root);
	return r;
}

static void write_link(struct jw *w, cJSON *root, const char *key, const struct link *l, const cJSON *extra)
{
	cJSON *o = jw_obj(w, root, key);

	jw_num(w, o, "gbytes_per_s", l->gbytes_per_s);
	jw_num(w, o, "latency_us", l->latency_us);
	jw_extras(w, o, extra);
}

cJSON *cluster_to_json(const struct cluster *c)
{
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject();
	bool uniform = true;

	jw_str(&w, root, "format", CLUSTER_FORMAT);
	jw_str(&w, root, "name", c->name);
	if (c->gpu)
		jw_str(&w, root, "gpu", c->gpu);
	jw_num(&w, root, "devices", c->devices);
	jw_num(&w, root, "gpus_per_node", c->gpus_per_node);
	jw_num(&w, root, "mem_bytes", (double)c->mem_bytes);
	if (c->mem_headroom > 0)
		jw_num(&w, root, "mem_headroom", c->mem_headroom);
	jw_num(&w, root, "speed", c->speed);
	if (c->op_overhead_us > 0)
		jw_num(&w, root, "op_overhead_us", c->op_overhead_us);
	for (int d = 0; d < c->devices; d++)
		if (c->device_speed[d] != c->speed)
			uniform = false;
	if (!uniform) {
		cJSON *arr = jw_arr(&w, root, "device_speeds");

		for (int d = 0; d < c->devices; d++)
			jw_push(&w, arr, cJSON_CreateNumber(c->device_speed[d]));
	}
	write_link(&w, root, "intra_node", &c->intra, c->intra_extra);
	if (c->inter.gbytes_per_s > 0)
		write_link(&w, root, "inter_node", &c->inter, c->inter_extra);
	if (c->has_hw)
		jw_item(&w, root, "hardware", hardware_to_json(&c->hw));
	if (c->rep.tp > 0) {
		cJSON *rp = jw_obj(&w, root, "replica");

		struct parallel l = { .pp = 0, .tp = c->rep.tp, .dp = c->rep.dp, .ep = c->rep.ep, .zero = c->rep.zero,
		                      .fp32_grads = c->rep.fp32_grads };

		layout_json_write(&w, rp, &l, false);
		jw_num(&w, rp, "dp_gbytes_per_s", c->rep.dp_link.gbytes_per_s);
		jw_num(&w, rp, "dp_latency_us", c->rep.dp_link.latency_us);
	}
	jw_extras(&w, root, c->extra);
	if (w.oom) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

int cluster_save(const struct cluster *c, const char *path, struct err *e)
{
	return json_save_built(path, cluster_to_json(c), e);
}

int cluster_copy(struct cluster *dst, const struct cluster *src, struct err *e)
{
	cJSON *root = cluster_to_json(src);
	int r;

	if (!root) {
		memset(dst, 0, sizeof(*dst));
		return err_set(e, ERR_RUNTIME, "out of host memory copying cluster '%s'", src->name);
	}
	r = cluster_from_json(dst, root, src->name, NULL, e);
	cJSON_Delete(root);
	return r;
}
