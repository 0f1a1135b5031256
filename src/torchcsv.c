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
#include "vec.h"

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

/* PyTorch's form of an overlapped pair: "(0F7;7I3)OVERLAP_F_B" (_Action.__repr__ of an
 * action with sub_actions, which _PipelineScheduleRuntime runs one after the other). */
#define OVERLAP_NAME "OVERLAP_F_B"

void torchcsv_export_rows(const struct plan *p, int nrows, struct strbuf *sb)
{
	char tok[ACTION_TEXT_MAX];

	for (int d = 0; d < nrows && d < p->ndevices; d++) {
		for (int i = p->order_start[d]; i < p->order_start[d + 1]; i++) {
			if (i > p->order_start[d])
				strbuf_addch(sb, ',');
			if (p->order[i].pair && i + 1 < p->order_start[d + 1]) {
				strbuf_addf(sb, "(%s;", action_format(&p->order[i], tok));
				strbuf_addf(sb, "%s)" OVERLAP_NAME, action_format(&p->order[++i], tok));
				continue;
			}
			strbuf_addstr(sb, action_format(&p->order[i], tok));
		}
		strbuf_addch(sb, '\n');
	}
}

/* The actions of the compute_comms format (_PipelineScheduleRuntime._dump_csv's default)
 * that compute nothing: "1RECV_F0", "1UNSHARD". The import checks and drops them (the
 * simulator derives the plan's communication itself). A send or a receive names its
 * microbatch; the others may (PyTorch's parser takes one, its runtime ignores it). */
static const struct {
	const char *name;
	bool needs_mb;
} comm_kinds[] = {
	{ "UNSHARD", false }, { "RESHARD", false }, { "REDUCE_GRAD", false }, { "SEND_F", true },
	{ "RECV_F", true }, { "SEND_B", true }, { "RECV_B", true },
};

enum cell_kind { CELL_NONE, CELL_OP, CELL_PAIR, CELL_COMM };

/* One cell: an op (a[0]), a pair (a[0] then a[1]) or a comm action (a[0].stage, a[0].mb,
 * -1 when it names none). */
struct cell {
	enum cell_kind kind;
	struct action a[2];
};

static int parse_comm(const char *s, struct cell *c)
{
	struct action *a = &c->a[0];

	if (!(s = action_number(s, &a->stage)))
		return -1;
	for (size_t k = 0; k < sizeof(comm_kinds) / sizeof(comm_kinds[0]); k++) {
		size_t n = strlen(comm_kinds[k].name);

		if (strncmp(s, comm_kinds[k].name, n) != 0)
			continue;
		a->mb = -1;
		if (s[n] == '\0' && !comm_kinds[k].needs_mb)
			return 0;
		if (!(s = action_number(s + n, &a->mb)) || *s)
			return -1;
		return 0;
	}
	return -1;
}

/* "(A;B)OVERLAP_F_B": -1 when it is not that, -2 when it holds other than two actions,
 * one a forward and the other a backward (the pairs a plan holds). */
static int parse_pair(const char *s, struct cell *c)
{
	const char *close = strchr(s, ')'), *semi;
	char part[ACTION_TEXT_MAX + 8];
	int n = 0;

	if (!close || strcmp(close + 1, OVERLAP_NAME) != 0)
		return -1;
	for (s++; s <= close; s = semi + 1) {
		size_t len;

		semi = memchr(s, ';', (size_t)(close - s));
		if (!semi)
			semi = close;
		while (s < semi && *s == ' ')
			s++;
		for (len = (size_t)(semi - s); len && s[len - 1] == ' ';)
			len--;
		if (len == 0)
			continue;  /* PyTorch's parser skips an empty sub-action */
		if (len >= sizeof(part))
			return -1;
		memcpy(part, s, len);
		part[len] = '\0';
		if (n == 2)
			return -2;
		if (action_parse(part, &c->a[n++]) < 0)
			return -1;
	}
	if (n < 2 || (c->a[0].kind == OP_F) == (c->a[1].kind == OP_F) || c->a[0].kind == OP_W || c->a[1].kind == OP_W)
		return -2;
	return 0;
}

/* One cell of a row, trimmed of spaces into cell (empty: kind CELL_NONE). -1 with e set
 * when it is not an action, or out of range. */
static int read_cell(const struct csv *csv, int col, const char *file, long line, char *cell, size_t size,
                     struct cell *c, struct err *e)
{
	const char *s = csv->f[col - 1].s;
	size_t n = csv->f[col - 1].len;
	char pv[96];
	int r;

	cell[0] = '\0';
	c->kind = CELL_NONE;
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
	c->kind = cell[0] == '(' ? CELL_PAIR : CELL_OP;
	r = c->kind == CELL_PAIR ? parse_pair(cell, c) : action_parse(cell, &c->a[0]);
	if (r < 0 && c->kind == CELL_OP && parse_comm(cell, c) == 0) {
		c->kind = CELL_COMM;
		r = 0;
	}
	if (r == -2)
		return err_set(e, ERR_INPUT, "%s: line %ld, column %d: '%s' is not a pair of one forward and one "
		               "backward, like '(0F3;7I2)" OVERLAP_NAME "'", file, line, col,
		               csv_printable(pv, sizeof(pv), s, n, 40));
	if (r < 0)
		return err_set(e, ERR_INPUT, "%s: line %ld, column %d: '%s' is not an action", file, line, col,
		               csv_printable(pv, sizeof(pv), s, n, 20));
	for (int k = 0; k < (c->kind == CELL_PAIR ? 2 : 1); k++)
		if (c->a[k].stage >= OCTO_MAX_STAGES || c->a[k].mb >= OCTO_MAX_MICROBATCHES)
			return err_set(e, ERR_INPUT, "%s: line %ld, column %d: '%s' is out of range", file, line, col, cell);
	return 0;
}

/* A comm action read, checked once the stages' ranks and the microbatches are known. */
struct comm {
	int row, col;
	long line;
	struct action a;
	char text[64];
};

/* What pass 1 learns of the rows. */
struct rows {
	int n, max_stage, max_mb;
	bool split;
	struct comm *comms;
	int ncomms, cap;
};

static int keep_comm(struct rows *rs, long line, int col, const char *cell, const struct cell *c)
{
	struct comm *m;

	if (VEC_RESERVE(rs->comms, rs->cap, rs->ncomms + 1L) < 0)
		return -1;
	m = &rs->comms[rs->ncomms++];
	m->row = rs->n - 1;
	m->line = line;
	m->col = col;
	m->a = c->a[0];
	snprintf(m->text, sizeof(m->text), "%s", cell);
	return 0;
}

/* A cell's ops into row: "0F3", or a pair as the plan writes one ("0F3+7I2"). */
static void push_ops(struct jw *w, cJSON *row, const struct cell *c, struct rows *rs)
{
	char a[ACTION_TEXT_MAX], b[ACTION_TEXT_MAX], pair[2 * ACTION_TEXT_MAX + 2];

	for (int k = 0; k < (c->kind == CELL_PAIR ? 2 : 1); k++) {
		if (c->a[k].stage > rs->max_stage)
			rs->max_stage = c->a[k].stage;
		if (c->a[k].mb > rs->max_mb)
			rs->max_mb = c->a[k].mb;
		rs->split = rs->split || c->a[k].kind == OP_I || c->a[k].kind == OP_W;
	}
	action_format(&c->a[0], a);
	if (c->kind == CELL_PAIR) {
		snprintf(pair, sizeof(pair), "%s+%s", a, action_format(&c->a[1], b));
		jw_push(w, row, cJSON_CreateString(pair));
	} else {
		jw_push(w, row, cJSON_CreateString(a));
	}
}

/* Pass 1: every row's cells into a schedule list of sched (one a device; blank rows past
 * the cluster's devices are allowed), tracking stages and microbatches; comm actions into
 * rs->comms. -1 with e set. */
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
			struct cell cl;

			if (read_cell(csv, col, file, line, cell, sizeof(cell), &cl, e) < 0)
				return -1;
			if (cl.kind == CELL_COMM && keep_comm(rs, line, col, cell, &cl) < 0)
				w->oom = true;
			else if (cl.kind == CELL_OP || cl.kind == CELL_PAIR)
				push_ops(w, row, &cl, rs);
		}
	}
	return r < 0 ? -1 : 0;
}

/* The comm actions: each on a stage of its own row, of a microbatch the schedule has.
 * -1 with e set. */
static int check_comms(const struct rows *rs, const char *file, const int *stage_dev, int max_stage,
                       int microbatches, struct err *e)
{
	for (int i = 0; i < rs->ncomms; i++) {
		const struct comm *m = &rs->comms[i];
		int s = m->a.stage;

		if (s > max_stage)
			return err_set(e, ERR_INPUT, "%s: line %ld, column %d: '%s' names stage %d but the compute "
			               "actions run stages 0..%d", file, m->line, m->col, m->text, s, max_stage);
		if (stage_dev[s] != m->row)
			return err_set(e, ERR_INPUT, "%s: line %ld, column %d: '%s' acts on stage %d, which runs on line "
			               "%d (a rank sends, receives and shards only its own stages)", file, m->line, m->col, m->text,
			               s, stage_dev[s] + 1);
		if (m->a.mb >= microbatches)
			return err_set(e, ERR_INPUT, "%s: line %ld, column %d: '%s' names microbatch %d but the schedule "
			               "has %d (0..%d)", file, m->line, m->col, m->text, (int)m->a.mb, microbatches,
			               microbatches - 1);
	}
	return 0;
}

/* stage -> rank: the row that holds the stage's ops, one row a stage, every stage
 * 0..max_stage present. -1 with e set. */
static int stage_ranks(const cJSON *sched, const char *file, int max_stage, int *stage_dev, struct err *e)
{
	int d = 0;

	for (int s = 0; s <= max_stage; s++)
		stage_dev[s] = -1;
	for (const cJSON *rw = sched->child; rw; rw = rw->next, d++)
		for (const cJSON *cell = rw->child; cell; cell = cell->next)
			for (const char *t = cell->valuestring; t; t = strchr(t, '+') ? strchr(t, '+') + 1 : NULL) {
				struct action a;
				char one[ACTION_TEXT_MAX];

				snprintf(one, sizeof(one), "%.*s", (int)strcspn(t, "+"), t);
				action_parse(one, &a);
				if (stage_dev[a.stage] >= 0 && stage_dev[a.stage] != d)
					return err_set(e, ERR_INPUT, "%s: line %d: stage %d also appears on line %d (a stage runs on "
					               "one rank)", file, d + 1, (int)a.stage, stage_dev[a.stage] + 1);
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
	struct rows rs = { 0, -1, -1, false, NULL, 0, 0 };
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
	if (stage_ranks(sched, file, max_stage, stage_dev, e) < 0 ||
	    check_comms(&rs, file, stage_dev, max_stage, microbatches, e) < 0)
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
	free(rs.comms);
	return r;
}
