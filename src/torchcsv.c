/*
 * torchcsv — import and export of PyTorch's schedule CSV (see torchcsv.h). Import goes
 * through the plan validator like any other plan, so a CSV that names a stage on two
 * ranks or misses an op gets the same one-line errors as a JSON plan.
 */
#include "config.h"
#include "torchcsv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "csv.h"
#include "json.h"
#include "partition.h"

int torchcsv_export(const struct plan *p, struct strbuf *sb, struct err *e)
{
	int used = 0;

	/* one row a pipeline rank: the devices up to the last that holds a stage (a cluster's
	 * idle devices are not ranks of this pipeline), and a rank between them with no
	 * stage has no row PyTorch could load */
	for (int s = 0; s < p->nstages; s++)
		if (p->stages[s].device + 1 > used)
			used = p->stages[s].device + 1;
	for (int d = 0; d < used; d++) {
		int s = 0;

		while (s < p->nstages && p->stages[s].device != d)
			s++;
		if (s == p->nstages)
			return err_set(e, ERR_INPUT, "stages: device %d holds no stage, but devices up to %d do: PyTorch's "
			               "schedule CSV has one row a pipeline rank and every rank runs a stage", d, used - 1);
	}
	torchcsv_export_rows(p, used, sb);
	return 0;
}

void torchcsv_export_rows(const struct plan *p, int nrows, struct strbuf *sb)
{
	char tok[ACTION_TEXT_MAX];

	for (int d = 0; d < nrows && d < p->ndevices; d++) {
		for (int i = p->order_start[d]; i < p->order_start[d + 1]; i++) {
			if (i > p->order_start[d])
				strbuf_addch(sb, ',');
			strbuf_addstr(sb, action_format(&p->order[i], tok));
		}
		strbuf_addch(sb, '\n');
	}
}

/* One cell of a row: an action such as "2F3", trimmed of spaces (empty: *cell is "").
 * -1 with e set when it is not one, or out of range. */
static int read_cell(const struct csv *csv, int col, const char *file, long line, char *cell, size_t size,
                     struct action *a, struct err *e)
{
	const char *s = csv->f[col - 1].s;
	size_t n = csv->f[col - 1].len;
	char pv[96];

	cell[0] = '\0';
	while (n && s[0] == ' ')
		s++, n--;
	while (n && s[n - 1] == ' ')
		n--;
	if (n == 0)
		return 0;
	if (n >= size || memchr(s, '\0', n))
		return err_set(e, ERR_INPUT, "%s: line %ld, column %d: '%s' is not an action", file, line, col,
		               csv_printable(pv, sizeof(pv), s, n, 20));
	memcpy(cell, s, n);
	cell[n] = '\0';
	if (action_parse(cell, a) < 0)
		return err_set(e, ERR_INPUT, "%s: line %ld, column %d: '%s' is not an action", file, line, col,
		               csv_printable(pv, sizeof(pv), s, n, 20));
	if (a->stage >= OCTO_MAX_STAGES || a->mb >= OCTO_MAX_MICROBATCHES)
		return err_set(e, ERR_INPUT, "%s: line %ld, column %d: '%s' is out of range", file, line, col, cell);
	return 0;
}

/* What pass 1 learns of the rows. */
struct rows {
	int n, max_stage, max_mb;
	bool split;
};

/* Pass 1: every row's cells into a schedule list of sched (one a device; blank rows past
 * the cluster's devices are allowed), tracking stages and microbatches. -1 with e set. */
static int read_rows(struct csv *csv, const char *file, const struct cluster *c, cJSON *sched, struct jw *w,
                     struct rows *rs, struct err *e)
{
	int r;

	while ((r = csv_next(csv, file, e)) > 0) {
		long line = csv->line;
		cJSON *row;

		if (rs->n >= c->devices) {
			bool blank = true;

			for (int i = 0; i < csv->n; i++)
				for (size_t k = 0; k < csv->f[i].len; k++)
					blank = blank && csv->f[i].s[k] == ' ';
			if (!blank)
				return err_set(e, ERR_INPUT, "%s: line %ld: more rows than cluster '%s' has devices (%d)", file,
				               line, c->name, c->devices);
			continue;
		}
		row = jw_push(w, sched, cJSON_CreateArray());
		rs->n++;
		for (int col = 1; col <= csv->n; col++) {
			char cell[64];
			struct action a;

			if (read_cell(csv, col, file, line, cell, sizeof(cell), &a, e) < 0)
				return -1;
			if (!cell[0])
				continue;
			if (a.stage > rs->max_stage)
				rs->max_stage = a.stage;
			if (a.mb > rs->max_mb)
				rs->max_mb = a.mb;
			rs->split = rs->split || a.kind == OP_I || a.kind == OP_W;
			jw_push(w, row, cJSON_CreateString(cell));
		}
	}
	return r < 0 ? -1 : 0;
}

/* stage -> rank: the row that holds the stage's ops, one row a stage, every stage
 * 0..max_stage present. -1 with e set. */
static int stage_ranks(const cJSON *sched, const char *file, int max_stage, int *stage_dev, struct err *e)
{
	int d = 0;

	for (int s = 0; s <= max_stage; s++)
		stage_dev[s] = -1;
	for (const cJSON *rw = sched->child; rw; rw = rw->next, d++)
		for (const cJSON *cell = rw->child; cell; cell = cell->next) {
			struct action a;

			action_parse(cell->valuestring, &a);
			if (stage_dev[a.stage] >= 0 && stage_dev[a.stage] != d)
				return err_set(e, ERR_INPUT, "%s: line %d: stage %d also appears on line %d (a stage runs on one "
				               "rank)", file, d + 1, (int)a.stage, stage_dev[a.stage] + 1);
			stage_dev[a.stage] = d;
		}
	for (int s = 0; s <= max_stage; s++)
		if (stage_dev[s] < 0)
			return err_set(e, ERR_INPUT, "%s: stage %d has no actions (stages must be numbered 0..%d)", file, s,
			               max_stage);
	return 0;
}

int torchcsv_import(struct plan *out, const char *text, size_t len, const char *file,
                    const struct model *m, const char *model_ref,
                    const struct cluster *c, const char *cluster_ref,
                    int microbatches, const char *partition, struct err *e)
{
	cJSON *root = NULL, *sched, *stages, *embedded_model = NULL, *embedded_cluster = NULL;
	int max_stage, *stage_dev = NULL, *first = NULL, r = -1;
	struct rows rs = { 0, -1, -1, false };
	struct csv csv;
	struct jw w = { false };

	memset(out, 0, sizeof(*out));
	csv_init(&csv, text, len);
	root = cJSON_CreateObject();
	sched = jw_arr(&w, root, "schedule");
	if (!root || !sched)
		goto oom;
	if (read_rows(&csv, file, c, sched, &w, &rs, e) < 0)
		goto fail;
	if (w.oom)
		goto oom; /* a cell left out would look like a missing stage */
	max_stage = rs.max_stage;
	if (max_stage < 0) {
		err_set(e, ERR_INPUT, "%s: no actions found", file);
		goto fail;
	}
	while (rs.n < c->devices) {
		jw_push(&w, sched, cJSON_CreateArray());
		rs.n++;
	}
	if (microbatches <= 0)
		microbatches = rs.max_mb + 1;
	stage_dev = malloc((size_t)(max_stage + 1) * sizeof(*stage_dev));
	first = calloc((size_t)max_stage + 2, sizeof(*first));
	if (!stage_dev || !first)
		goto oom;
	if (stage_ranks(sched, file, max_stage, stage_dev, e) < 0)
		goto fail;
	if (partition_by_name(m, partition, max_stage + 1, first, e) < 0)
		goto fail;
	stages = jw_arr(&w, root, "stages");
	for (int s = 0; s <= max_stage; s++) {
		cJSON *o = jw_push(&w, stages, cJSON_CreateObject()), *range = jw_arr(&w, o, "layers");

		jw_push(&w, range, cJSON_CreateNumber(first[s]));
		jw_push(&w, range, cJSON_CreateNumber(first[s + 1] - 1));
		jw_num(&w, o, "device", stage_dev[s]);
	}
	jw_str(&w, root, "format", PLAN_FORMAT);
	jw_num(&w, root, "microbatches", microbatches);
	jw_bool(&w, root, "split_backward", rs.split);
	embedded_model = model_to_json(m);
	embedded_cluster = cluster_to_json(c);
	jw_item(&w, root, "model", embedded_model);
	jw_item(&w, root, "cluster", embedded_cluster);
	if (w.oom)
		goto oom;
	r = plan_from_json(out, root, file, NULL, e);
	if (r == 0) {
		free(out->model_ref);
		free(out->cluster_ref);
		out->model_ref = model_ref ? strdup(model_ref) : NULL;
		out->cluster_ref = cluster_ref ? strdup(cluster_ref) : NULL;
		if ((model_ref && !out->model_ref) || (cluster_ref && !out->cluster_ref)) {
			plan_release(out);
			goto oom;
		}
	}
	goto done;
oom:
	err_set(e, ERR_RUNTIME, "%s: out of host memory", file);
fail:
	r = -1;
done:
	cJSON_Delete(root);
	csv_release(&csv);
	free(stage_dev);
	free(first);
	return r;
}
