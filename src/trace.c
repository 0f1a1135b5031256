/*
 * trace — Chrome trace export (see trace.h). Compute ops go to process 0 ("GPUs"), one
 * thread per device; transfers to process 1 ("links"), one thread per directed link, so
 * overlapping transfers and compute are both visible in Perfetto.
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

cJSON *trace_from_timeline(const struct timeline *t, const struct plan *p)
{
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *events;
	char name[96];

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
			cJSON *e = jw_push(&w, events, cJSON_CreateObject()), *args;

			snprintf(name, sizeof(name), "%c s%d mb%d", op_kind_char((enum op_kind)op->kind),
			         (int)op->stage, (int)op->mb);
			jw_str(&w, e, "name", name);
			jw_str(&w, e, "cat", op_kind_name((enum op_kind)op->kind));
			jw_str(&w, e, "ph", "X");
			jw_num(&w, e, "ts", op->start_ms * 1000);
			jw_num(&w, e, "dur", (op->end_ms - op->start_ms) * 1000);
			jw_num(&w, e, "pid", 0);
			jw_num(&w, e, "tid", d);
			args = jw_obj(&w, e, "args");
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
		cJSON *e;

		if (dm->sync_end_ms <= 0)
			continue;
		if (d == 0 || !w.oom) {
			snprintf(name, sizeof(name), "GPU %d data-parallel sync", d);
			meta(&w, events, "thread_name", 2, d, name);
		}
		e = jw_push(&w, events, cJSON_CreateObject());
		jw_str(&w, e, "name", "dp sync");
		jw_str(&w, e, "cat", "dp_sync");
		jw_str(&w, e, "ph", "X");
		jw_num(&w, e, "ts", dm->sync_start_ms * 1000);
		jw_num(&w, e, "dur", (dm->sync_end_ms - dm->sync_start_ms) * 1000);
		jw_num(&w, e, "pid", 2);
		jw_num(&w, e, "tid", d);
	}
	for (long i = 0; i < t->nxfers; i++) {
		const struct tl_xfer *x = &t->xfers[i];
		int tid = x->src * t->ndevices + x->dst;
		cJSON *e = jw_push(&w, events, cJSON_CreateObject()), *args;

		snprintf(name, sizeof(name), "%s s%d mb%d", x->kind == XFER_GRAD ? "grad" : "act", (int)x->stage, (int)x->mb);
		jw_str(&w, e, "name", name);
		jw_str(&w, e, "cat", "transfer");
		jw_str(&w, e, "ph", "X");
		jw_num(&w, e, "ts", x->start_ms * 1000);
		jw_num(&w, e, "dur", (x->end_ms - x->start_ms) * 1000);
		jw_num(&w, e, "pid", 1);
		jw_num(&w, e, "tid", tid);
		args = jw_obj(&w, e, "args");
		jw_num(&w, args, "bytes", (double)x->bytes);
		jw_num(&w, args, "src", x->src);
		jw_num(&w, args, "dst", x->dst);
	}
	/* name the link tracks that carried something */
	{
		bool *used = calloc((size_t)t->ndevices * t->ndevices, sizeof(*used));

		if (!used)
			w.oom = true;
		for (long i = 0; used && i < t->nxfers; i++)
			used[t->xfers[i].src * t->ndevices + t->xfers[i].dst] = true;
		for (int l = 0; used && l < t->ndevices * t->ndevices; l++) {
			if (!used[l])
				continue;
			snprintf(name, sizeof(name), "GPU %d -> GPU %d", l / t->ndevices, l % t->ndevices);
			meta(&w, events, "thread_name", 1, l, name);
		}
		free(used);
	}
	if (w.oom) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}
