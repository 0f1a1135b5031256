/*
 * trace — Chrome trace export (see trace.h). Compute ops go to process 0 ("GPUs"), one
 * thread per device; transfers to process 1 ("links"), one thread per directed link, so
 * overlapping transfers and compute are both visible in Perfetto; each device's
 * data-parallel gradient sync to process 2.
 */
#include "config.h"
#include "trace.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "json.h"

static void meta(struct jw *w, cJSON *events, const char *what, int pid, int tid, const char *name)
{
	cJSON *e = jw_push(w, events, cJSON_CreateObject()), *args;

	jw_str(w, e, "name", what);
	jw_str(w, e, "ph", "M");
	jw_num(w, e, "pid", pid);
	jw_num(w, e, "tid", tid);
	args = jw_obj(w, e, "args");
	jw_str(w, args, "name", name);
}

/* One complete ("X") event of [t0, t1] ms on (pid, tid); its "args" object is returned. */
static cJSON *slice(struct jw *w, cJSON *events, const char *name, const char *cat, double t0_ms, double t1_ms,
                    int pid, long tid)
{
	cJSON *e = jw_push(w, events, cJSON_CreateObject());

	jw_str(w, e, "name", name);
	jw_str(w, e, "cat", cat);
	jw_str(w, e, "ph", "X");
	jw_num(w, e, "ts", t0_ms * 1000);
	jw_num(w, e, "dur", (t1_ms - t0_ms) * 1000);
	jw_num(w, e, "pid", pid);
	jw_num(w, e, "tid", (double)tid);
	return jw_obj(w, e, "args");
}

static int key_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

cJSON *trace_from_timeline(const struct timeline *t, const struct plan *p)
{
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *events;
	char name[96];
	long *links = NULL, nlinks = 0;

	jw_str(&w, root, "displayTimeUnit", "ms");
	events = jw_arr(&w, root, "traceEvents");
	meta(&w, events, "process_name", 0, 0, "GPUs");
	meta(&w, events, "process_name", 1, 0, "links");
	meta(&w, events, "process_name", 2, 0, "data-parallel sync");
	for (int d = 0; d < t->ndevices; d++) {
		snprintf(name, sizeof(name), "GPU %d", d);
		meta(&w, events, "thread_name", 0, d, name);
		for (int i = 0; i < t->dev[d].nops; i++) {
			const struct tl_op *op = &t->dev[d].ops[i];
			cJSON *args;

			snprintf(name, sizeof(name), "%c s%d mb%d", op_kind_char((enum op_kind)op->kind),
			         (int)op->stage, (int)op->mb);
			args = slice(&w, events, name, op_kind_name((enum op_kind)op->kind), op->start_ms, op->end_ms, 0, d);
			jw_num(&w, args, "stage", op->stage);
			jw_num(&w, args, "microbatch", op->mb);
			if (p && op->stage < p->nstages) {
				snprintf(name, sizeof(name), "%d-%d", p->stages[op->stage].first, p->stages[op->stage].last);
				jw_str(&w, args, "layers", name);
				if (p->stages[op->stage].recompute != RECOMPUTE_NONE && op->kind != OP_F && op->kind != OP_W)
					jw_str(&w, args, "recompute", recompute_name((enum recompute)p->stages[op->stage].recompute));
			}
		}
	}
	/* the data-parallel gradient sync of each device, on its communication stream */
	for (int d = 0; t->has_metrics && d < t->ndevices && d < t->metrics.ndevices; d++) {
		const struct device_metrics *dm = &t->metrics.dev[d];

		if (dm->sync_end_ms <= 0)
			continue;
		snprintf(name, sizeof(name), "GPU %d data-parallel sync", d);
		meta(&w, events, "thread_name", 2, d, name);
		slice(&w, events, "dp sync", "dp_sync", dm->sync_start_ms, dm->sync_end_ms, 2, d);
	}
	/* one track per directed link that carried something, numbered in (src, dst) order
	 * (a device x device table would be quadratic in the devices) */
	if (t->nxfers > 0 && !(links = malloc((size_t)t->nxfers * sizeof(*links))))
		w.oom = true;
	for (long i = 0; links && i < t->nxfers; i++)
		links[i] = (long)t->xfers[i].src * t->ndevices + t->xfers[i].dst;
	if (links) {
		qsort(links, (size_t)t->nxfers, sizeof(*links), key_cmp);
		for (long i = 0; i < t->nxfers; i++)
			if (i == 0 || links[i] != links[nlinks - 1])
				links[nlinks++] = links[i];
		for (long l = 0; l < nlinks; l++) {
			snprintf(name, sizeof(name), "GPU %ld -> GPU %ld", links[l] / t->ndevices, links[l] % t->ndevices);
			meta(&w, events, "thread_name", 1, (int)l, name);
		}
	}
	for (long i = 0; links && i < t->nxfers; i++) {
		const struct tl_xfer *x = &t->xfers[i];
		long key = (long)x->src * t->ndevices + x->dst;
		long *at = bsearch(&key, links, (size_t)nlinks, sizeof(*links), key_cmp);
		cJSON *args;

		snprintf(name, sizeof(name), "%s s%d mb%d", x->kind == XFER_GRAD ? "grad" : "act", (int)x->stage, (int)x->mb);
		args = slice(&w, events, name, "transfer", x->start_ms, x->end_ms, 1, at ? at - links : 0);
		jw_num(&w, args, "bytes", (double)x->bytes);
		jw_num(&w, args, "src", x->src);
		jw_num(&w, args, "dst", x->dst);
	}
	free(links);
	if (w.oom) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}
