/*
 * plan_copy — a deep copy of a plan in memory (see plan.h): every string, table, order and
 * kept JSON member duplicated, nothing shared, so either plan can be edited or released
 * alone. A copy writes the same file as its original (tests/unit/test_plan checks it byte
 * for byte); copying through plan_to_json / plan_from_json instead would re-validate and
 * re-derive the replica for nothing, and lose the model and cluster references.
 */
#include "config.h"
#include "plan.h"

#include <stdlib.h>
#include <string.h>

/* *dst = strdup(src) (NULL stays NULL); -1 when out of memory. */
static int dup_str(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -1 : 0;
}

/* *dst = a copy of n elements of size bytes at src (NULL when n is 0); -1 when out of memory. */
static int dup_mem(void *dst, const void *src, size_t n, size_t size)
{
	void *q = NULL;

	if (n) {
		q = malloc(n * size);
		if (!q)
			return -1;
		memcpy(q, src, n * size);
	}
	*(void **)dst = q;
	return 0;
}

static int dup_json(cJSON **dst, const cJSON *src)
{
	*dst = src ? cJSON_Duplicate(src, 1) : NULL;
	return src && !*dst ? -1 : 0;
}

int plan_copy(struct plan *dst, const struct plan *src, struct err *e)
{
	struct plan p = *src;

	/* the scalars come with the struct; every owned pointer is replaced below, and the
	 * copy is released whole if any of them fails */
	p.name = p.model_ref = p.cluster_ref = NULL;
	memset(&p.model, 0, sizeof(p.model));
	memset(&p.cluster, 0, sizeof(p.cluster));
	memset(&p.src_model, 0, sizeof(p.src_model));
	memset(&p.src_cluster, 0, sizeof(p.src_cluster));
	p.stages = NULL;
	p.order_start = NULL;
	p.order = NULL;
	p.extra = p.stage_extra = NULL;
	if (dup_str(&p.name, src->name) < 0 || dup_str(&p.model_ref, src->model_ref) < 0 ||
	    dup_str(&p.cluster_ref, src->cluster_ref) < 0 ||
	    dup_mem(&p.stages, src->stages, (size_t)src->nstages, sizeof(*src->stages)) < 0 ||
	    dup_mem(&p.order_start, src->order_start, src->order_start ? (size_t)src->ndevices + 1 : 0,
	            sizeof(*src->order_start)) < 0 ||
	    dup_mem(&p.order, src->order, src->order_start ? (size_t)src->order_start[src->ndevices] : 0,
	            sizeof(*src->order)) < 0 ||
	    dup_json(&p.extra, src->extra) < 0 || dup_json(&p.stage_extra, src->stage_extra) < 0) {
		plan_release(&p);
		return err_set(e, ERR_RUNTIME, "out of host memory copying a plan");
	}
	if (model_copy(&p.model, &src->model, e) < 0 || cluster_copy(&p.cluster, &src->cluster, e) < 0 ||
	    (src->src_model.nlayers && model_copy(&p.src_model, &src->src_model, e) < 0) ||
	    (src->src_cluster.name && cluster_copy(&p.src_cluster, &src->src_cluster, e) < 0)) {
		plan_release(&p);
		return -1;
	}
	*dst = p;
	return 0;
}
