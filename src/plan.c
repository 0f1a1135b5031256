/*
 * plan — load, validate and save plans (see plan.h).
 *
 * The coverage check uses one slot per (stage, microbatch, op) remembering where the op
 * was first seen, so duplicates are reported with both positions and a missing op is
 * found in one pass over the slots.
 */
#include "config.h"
#include "plan.h"

#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "json.h"
#include "layout_json.h"
#include "bounds.h"

static const char *const plan_keys[] = {
	"format", "name", "model", "cluster", "microbatches", "split_backward", "comm",
	"parallel", "stages", "schedule", NULL
};
static const char *const stage_keys[] = { "layers", "device", "recompute", "recompute_layers", NULL };

void plan_release(struct plan *p)
{
	if (!p)
		return;
	free(p->name);
	free(p->model_ref);
	free(p->cluster_ref);
	model_release(&p->model);
	cluster_release(&p->cluster);
	model_release(&p->src_model);
	cluster_release(&p->src_cluster);
	free(p->stages);
	free(p->order_start);
	free(p->order);
	cJSON_Delete(p->extra);
	cJSON_Delete(p->stage_extra);
	memset(p, 0, sizeof(*p));
}

static int oom(struct jv *v)
{
	return err_set(v->e, ERR_RUNTIME, "%s: out of host memory", v->file);
}

/* Reads "model" / "cluster": a path (relative to base_dir) or an embedded object. */
static int read_part(struct jv *v, const cJSON *root, const char *key, const char *base_dir,
                     struct plan *p)
{
	bool is_model = strcmp(key, "model") == 0;
	char path[4096];
	const cJSON *item;
	char **ref = is_model ? &p->model_ref : &p->cluster_ref;
	struct stat st;
	int r;

	if (jv_member(v, root, "", key, JV_REQUIRED, &item) < 0)
		return -1;
	if (cJSON_IsObject(item)) {
		r = is_model ? model_from_json(&p->model, item, v->file, key, v->e)
		             : cluster_from_json(&p->cluster, item, v->file, key, v->e);
		return r;
	}
	if (!cJSON_IsString(item) || !item->valuestring[0])
		return jv_fail(v, key, "must be a path to a %s file or an embedded %s object, not %s",
		               key, key, cJSON_IsString(item) ? "an empty string" : json_type_name(item));
	if (fileio_join(base_dir, item->valuestring, path, sizeof(path)) < 0)
		return jv_fail(v, key, "path too long");
	/* a file the plan names is a file: a plan naming /dev/stdin or a FIFO held every
	 * command that read it (check too) until something wrote there */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return jv_fail(v, key, "'%s' is not a regular file", item->valuestring);
	r = is_model ? model_load(&p->model, path, v->e) : cluster_load(&p->cluster, path, v->e);
	if (r < 0) {
		char where[JPATH_MAX + 256];

		snprintf(where, sizeof(where), "%s: %s", v->file, key);
		err_prefix(v->e, where);
		return -1;
	}
	*ref = strdup(item->valuestring);
	return *ref ? 0 : oom(v);
}

/* "parallel": {"pp", "tp", "dp", "ep", "zero", "grads"}; absent: pipeline parallelism over every
 * device of the cluster. */
static int read_parallel(struct jv *v, const cJSON *root, struct plan *p)
{
	const cJSON *par;
	struct parallel l = { 0 };

	if (jv_object(v, root, "", "parallel", 0, &par) < 0)
		return -1;
	if (!par)
		return 0;
	if (layout_json_read(v, par, "parallel", true, &l) < 0)
		return -1;
	if (plan_apply_parallel(p, &l, v->e) < 0) {
		if (v->e->cls == ERR_INPUT) {
			char where[JPATH_MAX + 256];

			snprintf(where, sizeof(where), "%s: parallel", v->file);
			err_prefix(v->e, where);
		}
		return -1;
	}
	return 0;
}

int plan_apply_parallel(struct plan *p, const struct parallel *l, struct err *e)
{
	struct model m;
	struct cluster c;

	if (parallel_check(l, &p->cluster, e) < 0)
		return -1;
	p->par = *l;
	if (parallel_is_pipeline_only(l) && l->pp == p->cluster.devices)
		return 0;
	if (parallel_replica(&p->model, &p->cluster, l, &m, &c, e) < 0)
		return -1;
	p->src_model = p->model;
	p->src_cluster = p->cluster;
	p->model = m;
	p->cluster = c;
	p->has_parallel = true;
	return 0;
}

/* A stage's "recompute_layers": with full recompute only, 1 .. its layer count (the
 * count itself is every layer, stored as 0). */
static int read_recompute_layers(struct jv *v, const cJSON *s, const char *path, struct stage *st)
{
	char qpath[JPATH_MAX];
	long n;

	if (!cJSON_GetObjectItemCaseSensitive(s, "recompute_layers"))
		return 0;
	jpath_key(qpath, path, "recompute_layers");
	if (st->recompute != RECOMPUTE_FULL)
		return jv_fail(v, qpath, "only a stage with \"recompute\": \"full\" recomputes a number of its layers");
	if (jv_int(v, s, path, "recompute_layers", JV_REQUIRED, 1, st->last - st->first + 1, 0, &n) < 0)
		return -1;
	st->recompute_layers = n == st->last - st->first + 1 ? 0 : (int)n;
	return 0;
}

static int read_stages(struct jv *v, const cJSON *root, struct plan *p)
{
	const cJSON *arr;
	char path[JPATH_MAX];
	long n, i = 0;
	int next = 0;

	if (jv_array(v, root, "", "stages", JV_REQUIRED, &arr) < 0)
		return -1;
	n = cJSON_GetArraySize(arr);
	if (n == 0)
		return jv_fail(v, "stages", "must list at least one stage");
	if (n > p->model.nlayers)
		return jv_fail(v, "stages", "has %ld stages but the model has only %d layers",
		               n, p->model.nlayers);
	p->stages = calloc((size_t)n, sizeof(*p->stages));
	if (!p->stages)
		return oom(v);
	for (const cJSON *s = arr->child; s; s = s->next, i++) {
		struct stage *st = &p->stages[i];
		const cJSON *range;
		char rpath[JPATH_MAX], epath[JPATH_MAX];
		double a, b;
		long dev;

		jpath_index(path, "stages", i);
		if (!cJSON_IsObject(s))
			return jv_fail(v, path, "must be an object, not %s", json_type_name(s));
		if (jv_keys(v, s, path, stage_keys) < 0 || jv_array(v, s, path, "layers", JV_REQUIRED, &range) < 0)
			return -1;
		jpath_key(rpath, path, "layers");
		if (cJSON_GetArraySize(range) != 2)
			return jv_fail(v, rpath, "must be [first, last], an inclusive layer range");
		jpath_index(epath, rpath, 0);
		if (jv_number_value(v, range->child, epath, JV_INTEGER, 0, p->model.nlayers - 1, &a) < 0)
			return -1;
		jpath_index(epath, rpath, 1);
		if (jv_number_value(v, range->child->next, epath, JV_INTEGER, 0, p->model.nlayers - 1, &b) < 0)
			return -1;
		st->first = (int)a;
		st->last = (int)b;
		if (st->last < st->first)
			return jv_fail(v, rpath, "last layer %d comes before first layer %d", st->last, st->first);
		if (st->first != next) {
			if (i == 0)
				return jv_fail(v, rpath, "starts at layer %d but the first stage must start at layer 0",
				               st->first);
			return jv_fail(v, rpath, "starts at layer %d but stages[%ld] ends at layer %d "
			               "(stages must cover every layer once, in order)", st->first, i - 1, next - 1);
		}
		next = st->last + 1;
		if (jv_int(v, s, path, "device", JV_REQUIRED, 0, p->cluster.devices - 1, 0, &dev) < 0) {
			if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(s, "device"))) {
				char dpath[JPATH_MAX];

				jpath_key(dpath, path, "device");
				if (p->has_parallel)
					return jv_fail(v, dpath, "no such device (the layout has %d pipeline devices: 0..%d)",
					               p->cluster.devices, p->cluster.devices - 1);
				return jv_fail(v, dpath, "no such device (cluster '%s' has %d: 0..%d)",
				               p->cluster.name, p->cluster.devices, p->cluster.devices - 1);
			}
			return -1;
		}
		st->device = (int)dev;
		{
			cJSON *x = NULL, *keep;

			if (json_extras(s, stage_keys, &x) < 0)
				return oom(v);
			if (x) {
				if ((!p->stage_extra && !(p->stage_extra = cJSON_CreateArray())) ||
				    !(keep = cJSON_CreateObject()) || !cJSON_AddItemToArray(p->stage_extra, keep)) {
					cJSON_Delete(x);
					return oom(v);
				}
				if (!cJSON_AddNumberToObject(keep, "first", st->first) ||
				    !cJSON_AddNumberToObject(keep, "last", st->last) || !cJSON_AddItemToObject(keep, "extra", x)) {
					cJSON_Delete(x);
					return oom(v);
				}
			}
		}
		{
			const char *rc;

			if (jv_string(v, s, path, "recompute", 0, "none", &rc) < 0)
				return -1;
			if (recompute_from_name(rc, (enum recompute *)&st->recompute) < 0) {
				char qpath[JPATH_MAX];

				jpath_key(qpath, path, "recompute");
				return jv_fail(v, qpath, "must be \"none\", \"selective\" or \"full\", not '%.40s'", rc);
			}
			if (read_recompute_layers(v, s, path, st) < 0)
				return -1;
		}
	}
	if (next != p->model.nlayers)
		return jv_fail(v, "stages", "cover layers 0..%d but the model has %d layers (0..%d)",
		               next - 1, p->model.nlayers, p->model.nlayers - 1);
	p->nstages = (int)n;
	return 0;
}

/* The slot of an op in the coverage table: B shares I's slot (they never coexist). */
static long op_slot(const struct plan *p, const struct action *a)
{
	return op_slot_index(a->stage, p->microbatches, a->mb, plan_ops_per_mb(p), op_kind_slot(a->kind));
}

/* How many actions the lists of arr hold (a pair "0F3+7I2" counts two); refuses a list
 * that is not an array, or more actions than the plan has ops. */
static int count_actions(struct jv *v, const cJSON *arr, const struct plan *p, long nops, long *total)
{
	char path[JPATH_MAX];
	long d = 0;

	*total = 0;
	for (const cJSON *dl = arr->child; dl; dl = dl->next, d++) {
		jpath_index(path, "schedule", d);
		if (!cJSON_IsArray(dl))
			return jv_fail(v, path, "must be an array of actions, not %s", json_type_name(dl));
		for (const cJSON *t = dl->child; t; t = t->next)
			*total += 1 + (cJSON_IsString(t) && strchr(t->valuestring, '+') != NULL);
		if (*total > nops)
			return jv_fail(v, path, "more actions than the plan has ops (%d stages x %d "
			               "microbatches x %d)", p->nstages, p->microbatches, plan_ops_per_mb(p));
	}
	return 0;
}

/* An action of device d's list (at path) that the plan cannot hold: a stage or microbatch
 * it does not have, a kind its backward is not split into, a stage placed elsewhere. */
static int check_action(struct jv *v, const char *path, const struct plan *p, const struct action *a, long d)
{
	char tok[ACTION_TEXT_MAX];

	action_format(a, tok);
	if (a->stage >= p->nstages)
		return jv_fail(v, path, "'%s' names stage %d but the plan has %d stages", tok,
		               (int)a->stage, p->nstages);
	if (a->mb >= p->microbatches)
		return jv_fail(v, path, "'%s' names microbatch %d but the plan has %d (0..%d)", tok,
		               (int)a->mb, p->microbatches, p->microbatches - 1);
	if (a->kind == OP_B && p->split_backward)
		return jv_fail(v, path, "'%s' is a fused backward but split_backward is true (use I and W)", tok);
	if ((a->kind == OP_I || a->kind == OP_W) && !p->split_backward)
		return jv_fail(v, path, "'%s' needs split_backward: true (without it use B, the fused backward)", tok);
	if (p->stages[a->stage].device != d)
		return jv_fail(v, path, "'%s' belongs to stage %d, which is placed on device %d, not %ld",
		               tok, (int)a->stage, p->stages[a->stage].device, d);
	return 0;
}

/* The first op no list names (slots never seen), reported on its stage's device. */
static int report_missing(struct jv *v, const struct plan *p, const int32_t *first_seen, long nslots)
{
	char path[JPATH_MAX], tok2[ACTION_TEXT_MAX];

	for (long s = 0; s < nslots; s++) {
		if (first_seen[s] < 0) {
			int per = plan_ops_per_mb(p), k = (int)(s % per);
			struct action a;

			a.stage = (int32_t)(s / per / p->microbatches);
			a.mb = (int32_t)(s / per % p->microbatches);
			a.kind = (uint8_t)(k == 0 ? OP_F : k == 2 ? OP_W : p->split_backward ? OP_I : OP_B);
			snprintf(path, sizeof(path), "schedule[%d]", p->stages[a.stage].device);
			action_format(&a, tok2);
			jv_fail(v, path, "'%s' is missing (each stage needs %s for every one of the %d microbatches)",
			        tok2, p->split_backward ? "F, I and W" : "F and B", p->microbatches);
			return -1;
		}
	}
	return 0;
}

static int read_schedule(struct jv *v, const cJSON *root, struct plan *p)
{
	const cJSON *arr;
	char path[JPATH_MAX], tok[ACTION_TEXT_MAX];
	long nops, total = 0, d = 0, pos = 0, nslots;
	int32_t *first_seen = NULL, *tok_of_pos = NULL;
	int r = -1;

	if (jv_array(v, root, "", "schedule", JV_REQUIRED, &arr) < 0)
		return -1;
	if (cJSON_GetArraySize(arr) != p->cluster.devices) {
		if (p->has_parallel)
			return jv_fail(v, "schedule", "has %d device lists but the layout has %d pipeline devices",
			               cJSON_GetArraySize(arr), p->cluster.devices);
		return jv_fail(v, "schedule", "has %d device lists but cluster '%s' has %d devices",
		               cJSON_GetArraySize(arr), p->cluster.name, p->cluster.devices);
	}
	/* slots for every op kind (F, I/B, W): bounds the allocation whatever the lists hold;
	 * a wrong kind or count is then reported precisely by the per-token checks */
	nops = (long)p->nstages * p->microbatches * 3;
	if ((double)p->nstages * p->microbatches * plan_ops_per_mb(p) > (double)OCTO_MAX_OPS)
		return jv_fail(v, "schedule", "plan too large: %d stages x %d microbatches is more than %ld ops",
		               p->nstages, p->microbatches, (long)OCTO_MAX_OPS);
	/* count first, so a list with garbage cannot make us allocate for it */
	if (count_actions(v, arr, p, nops, &total) < 0)
		return -1;
	p->ndevices = p->cluster.devices;
	p->order_start = calloc((size_t)p->ndevices + 1, sizeof(*p->order_start));
	p->order = malloc((size_t)(total ? total : 1) * sizeof(*p->order));
	nslots = (long)p->nstages * p->microbatches * plan_ops_per_mb(p);
	first_seen = malloc((size_t)nslots * sizeof(*first_seen));
	tok_of_pos = malloc((size_t)(total ? total : 1) * sizeof(*tok_of_pos));
	if (!p->order_start || !p->order || !first_seen || !tok_of_pos) {
		oom(v);
		goto out;
	}
	for (long i = 0; i < nslots; i++)
		first_seen[i] = -1;
	d = 0;
	for (const cJSON *dl = arr->child; dl; dl = dl->next, d++) {
		long i = 0;

		p->order_start[d] = (int)pos;
		for (const cJSON *t = dl->child; t; t = t->next, i++) {
			const char *text, *plus;
			char part[2][2 * ACTION_TEXT_MAX + 1];
			int nparts = 1;

			snprintf(path, sizeof(path), "schedule[%ld][%ld]", d, i);
			if (!cJSON_IsString(t)) {
				jv_fail(v, path, "must be an action string like '0F3', not %s", json_type_name(t));
				goto out;
			}
			text = t->valuestring;
			plus = strchr(text, '+');
			if (strlen(text) > 2 * ACTION_TEXT_MAX || (plus && strchr(plus + 1, '+'))) {
				jv_fail(v, path, "'%.40s' is not an action", text);
				goto out;
			}
			if (plus) {
				snprintf(part[0], sizeof(part[0]), "%.*s", (int)(plus - text), text);
				snprintf(part[1], sizeof(part[1]), "%s", plus + 1);
				nparts = 2;
			} else {
				snprintf(part[0], sizeof(part[0]), "%s", text);
			}
			for (int k = 0; k < nparts; k++, pos++) {
				struct action *a = &p->order[pos];
				long slot;

				if (action_parse(part[k], a) < 0) {
					jv_fail(v, path, "'%.40s' is not an action", text);
					goto out;
				}
				a->pair = (uint8_t)(nparts == 2 && k == 0);
				action_format(a, tok);
				if (check_action(v, path, p, a, d) < 0)
					goto out;
				slot = op_slot(p, a);
				if (first_seen[slot] >= 0) {
					int fd = 0;

					while (p->order_start[fd + 1] <= first_seen[slot] && fd + 1 <= d)
						fd++;
					jv_fail(v, path, "'%s' appears twice (first at schedule[%d][%d])", tok, fd,
					        tok_of_pos[first_seen[slot]]);
					goto out;
				}
				first_seen[slot] = (int32_t)pos;
				tok_of_pos[pos] = (int32_t)i;
			}
			if (nparts == 2 && !((p->order[pos - 2].kind == OP_F) != (p->order[pos - 1].kind == OP_F) &&
			                     p->order[pos - 2].kind != OP_W && p->order[pos - 1].kind != OP_W)) {
				jv_fail(v, path, "'%s' pairs two ops that cannot overlap (a pair is one forward and one "
				        "backward, like '0F3+7I2')", text);
				goto out;
			}
		}
	}
	p->order_start[p->ndevices] = (int)pos;
	if (report_missing(v, p, first_seen, nslots) < 0)
		goto out;
	r = 0;
out:
	free(first_seen);
	free(tok_of_pos);
	return r;
}

int plan_from_json(struct plan *p, const cJSON *root, const char *file, const char *base_dir,
                   struct err *e)
{
	struct jv v = { file, e, NULL };
	const char *name, *comm;
	long mb;

	memset(p, 0, sizeof(*p));
	if (jv_format(&v, root, PLAN_FORMAT) < 0 || jv_keys(&v, root, "", plan_keys) < 0 ||
	    jv_string(&v, root, "", "name", JV_NONEMPTY, NULL, &name) < 0 ||
	    jv_string(&v, root, "", "comm", 0, "overlap", &comm) < 0 ||
	    jv_int(&v, root, "", "microbatches", JV_REQUIRED, 1, OCTO_MAX_MICROBATCHES, 0, &mb) < 0 ||
	    jv_bool(&v, root, "", "split_backward", JV_REQUIRED, false, &p->split_backward) < 0 ||
	    read_part(&v, root, "model", base_dir, p) < 0 ||
	    read_part(&v, root, "cluster", base_dir, p) < 0)
		goto fail;
	p->microbatches = (int)mb;
	if (plan_comm_from_name(comm, &p->comm) < 0) {
		jv_fail(&v, "comm", "must be \"overlap\" or \"blocking\", not '%.40s'", comm);
		goto fail;
	}
	if (read_parallel(&v, root, p) < 0)
		goto fail;
	if (read_stages(&v, root, p) < 0 || read_schedule(&v, root, p) < 0)
		goto fail;
	for (int st = 0; st < p->nstages && model_recomputes(plan_src_model(p)); st++)
		if (p->stages[st].recompute != RECOMPUTE_NONE) {
			char sp[JPATH_MAX], rp[JPATH_MAX];

			jpath_index(sp, "stages", st);
			jpath_key(rp, sp, "recompute");
			jv_fail(&v, rp, "the model's layer table already recomputes every layer (made with octopipe cost "
			        "--recompute): a stage cannot recompute it again");
			goto fail;
		}
	if (name && !(p->name = strdup(name)))
		goto oom;
	if (json_extras(root, plan_keys, &p->extra) < 0)
		goto oom;
	return 0;
oom:
	oom(&v);
fail:
	plan_release(p);
	return -1;
}

int plan_load(struct plan *p, const char *path, struct err *e)
{
	char dir[4096];
	cJSON *root = json_load_file(path, e);
	int r;

	memset(p, 0, sizeof(*p));
	if (!root)
		return -1;
	fileio_dirname(path, dir, sizeof(dir));
	r = plan_from_json(p, root, path, dir, e);
	cJSON_Delete(root);
	return r;
}

void plan_stage_ms(const struct plan *p, int s, double ms[3])
{
	double f = 0, b = 0, w = 0, redo = 0, o = p->cluster.op_overhead_us * 1e-3, bw;
	for (int l = p->stages[s].first; l <= p->stages[s].last; l++) {
		const struct layer *y = &p->model.layers[l];
		enum recompute rc = plan_layer_recompute(p, s, l);

		f += y->f_ms;
		b += y->b_ms;
		w += y->w_ms;
		redo += rc == RECOMPUTE_FULL ? y->f_ms : rc == RECOMPUTE_SELECTIVE ? y->core_f_ms : 0;
	}
	bw = (p->split_backward ? b : b + w) + redo;
	if (p->cluster.rep.zero >= 3 && !p->no_gathers) {
		struct parallel par = plan_parallel(p);
		double params = 0, experts = 0, g;

		for (int l = p->stages[s].first; l <= p->stages[s].last; l++) {
			params += (double)p->model.layers[l].param_bytes;
			experts += (double)p->model.layers[l].expert_param_bytes;
		}
		g = parallel_zero3_gather_ms(&par, &p->cluster.rep.dp_link, params, experts);
		f = fmax(f, g);
		bw = fmax(bw, g);
	}
	/* the runtime's fixed cost per op, whatever the op's size */
	ms[0] = f + o;
	ms[1] = bw + o;
	ms[2] = p->split_backward ? w + o : 0;
}

int plan_attach_parallel(struct plan *p, const struct parallel *l, const struct model *m, const struct cluster *c,
                         struct err *e)
{
	p->par = *l;
	if (parallel_is_pipeline_only(l) && l->pp == c->devices) {
		/* the plan is the files' own: no replica to write into its cluster */
		memset(&p->cluster.rep, 0, sizeof(p->cluster.rep));
		return 0;
	}
	if (model_copy(&p->src_model, m, e) < 0)
		return -1;
	if (cluster_copy(&p->src_cluster, c, e) < 0) {
		model_release(&p->src_model);
		return -1;
	}
	p->has_parallel = true;
	return 0;
}

int plan_set_parallel(struct plan *p, const struct parallel *l, struct err *e)
{
	struct parallel x = *l;

	x.pp = p->ndevices;
	if (p->has_parallel) {
		/* back to the files' own, then on to the new layout */
		if (parallel_check(&x, &p->src_cluster, e) < 0)
			return -1;
		model_release(&p->model);
		cluster_release(&p->cluster);
		p->model = p->src_model;
		p->cluster = p->src_cluster;
		memset(&p->src_model, 0, sizeof(p->src_model));
		memset(&p->src_cluster, 0, sizeof(p->src_cluster));
		p->has_parallel = false;
	}
	return plan_apply_parallel(p, &x, e);
}

int plan_drop_collectives(struct plan *p, bool *changed, struct err *e)
{
	const struct model *src = plan_src_model(p);
	struct parallel l = p->par;
	double *before = malloc((size_t)p->nstages * 3 * sizeof(*before) + 1);

	*changed = false;
	if (!before)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	for (int s = 0; s < p->nstages; s++)
		plan_stage_ms(p, s, &before[s * 3]);
	if (!p->has_parallel) {
		parallel_default(&l, p->ndevices);
		l.tp = model_made_tp(src);
	}
	if (l.tp > 1 || l.ep > 1) {
		struct model m;

		if (parallel_model_compute(src, plan_src_cluster(p), &l, &m, e) < 0) {
			free(before);
			return -1;
		}
		model_release(&p->model);
		p->model = m;
	}
	p->no_gathers = true;
	for (int s = 0; s < p->nstages && !*changed; s++) {
		double ms[3];

		plan_stage_ms(p, s, ms);
		for (int k = 0; k < 3; k++)
			*changed |= ms[k] != before[s * 3 + k];
	}
	free(before);
	return 0;
}

void plan_set_recompute(struct plan *p, enum recompute r)
{
	for (int s = 0; s < p->nstages; s++) {
		p->stages[s].recompute = r;
		p->stages[s].recompute_layers = 0;
	}
}

const char *plan_comm_name(enum plan_comm c)
{
	return c == PLAN_COMM_BLOCKING ? "blocking" : "overlap";
}

int plan_comm_from_name(const char *name, enum plan_comm *out)
{
	if (strcmp(name, "overlap") == 0)
		*out = PLAN_COMM_OVERLAP;
	else if (strcmp(name, "blocking") == 0)
		*out = PLAN_COMM_BLOCKING;
	else
		return -1;
	return 0;
}

void plan_size_orders(struct plan *p, int ops_per_stage)
{
	long per = (long)p->microbatches * ops_per_stage;

	for (int d = 0; d <= p->ndevices; d++)
		p->order_start[d] = 0;
	for (int s = 0; s < p->nstages; s++)
		p->order_start[p->stages[s].device + 1] += per;
	for (int d = 0; d < p->ndevices; d++)
		p->order_start[d + 1] += p->order_start[d];
}

int plan_stages_on(const struct plan *p, int d)
{
	int n = 0;

	for (int s = 0; s < p->nstages; s++)
		n += p->stages[s].device == d;
	return n;
}

cJSON *plan_to_json(const struct plan *p, bool embed)
{
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *arr;
	char tok[ACTION_TEXT_MAX];

	jw_str(&w, root, "format", PLAN_FORMAT);
	if (p->name)
		jw_str(&w, root, "name", p->name);
	if (p->model_ref && !embed)
		jw_str(&w, root, "model", p->model_ref);
	else
		jw_item(&w, root, "model", model_to_json(plan_src_model(p)));
	if (p->cluster_ref && !embed)
		jw_str(&w, root, "cluster", p->cluster_ref);
	else
		jw_item(&w, root, "cluster", cluster_to_json(plan_src_cluster(p)));
	jw_num(&w, root, "microbatches", p->microbatches);
	jw_bool(&w, root, "split_backward", p->split_backward);
	if (p->comm != PLAN_COMM_OVERLAP)  /* the default is left out: older plans stay byte-identical */
		jw_str(&w, root, "comm", plan_comm_name(p->comm));
	if (p->has_parallel) {
		cJSON *par = jw_obj(&w, root, "parallel");

		layout_json_write(&w, par, &p->par, true);
	}
	arr = jw_arr(&w, root, "stages");
	for (int s = 0; s < p->nstages; s++) {
		cJSON *o = jw_push(&w, arr, cJSON_CreateObject()), *range;

		range = jw_arr(&w, o, "layers");
		jw_push(&w, range, cJSON_CreateNumber(p->stages[s].first));
		jw_push(&w, range, cJSON_CreateNumber(p->stages[s].last));
		jw_num(&w, o, "device", p->stages[s].device);
		if (p->stages[s].recompute != RECOMPUTE_NONE)
			jw_str(&w, o, "recompute", recompute_name((enum recompute)p->stages[s].recompute));
		if (p->stages[s].recompute == RECOMPUTE_FULL && p->stages[s].recompute_layers > 0 &&
		    p->stages[s].recompute_layers <= p->stages[s].last - p->stages[s].first)
			jw_num(&w, o, "recompute_layers", p->stages[s].recompute_layers);
		/* what a user wrote into a stage goes back onto the stage of the same layers */
		for (const cJSON *k = p->stage_extra ? p->stage_extra->child : NULL; k; k = k->next)
			if (cJSON_GetNumberValue(cJSON_GetObjectItem(k, "first")) == p->stages[s].first &&
			    cJSON_GetNumberValue(cJSON_GetObjectItem(k, "last")) == p->stages[s].last) {
				jw_extras(&w, o, cJSON_GetObjectItem(k, "extra"));
				break;
			}
	}
	arr = jw_arr(&w, root, "schedule");
	for (int d = 0; d < p->ndevices; d++) {
		cJSON *dl = jw_push(&w, arr, cJSON_CreateArray());

		for (int i = p->order_start[d]; i < p->order_start[d + 1]; i++) {
			char pair[2 * ACTION_TEXT_MAX + 4];

			action_format(&p->order[i], tok);
			if (p->order[i].pair && i + 1 < p->order_start[d + 1]) {
				char tok2[ACTION_TEXT_MAX];

				snprintf(pair, sizeof(pair), "%s+%s", tok, action_format(&p->order[++i], tok2));
				jw_push(&w, dl, cJSON_CreateString(pair));
			} else {
				jw_push(&w, dl, cJSON_CreateString(tok));
			}
		}
	}
	jw_extras(&w, root, p->extra);
	if (w.oom) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

int plan_save(const struct plan *p, const char *path, bool embed, struct err *e)
{
	/* JSON text is UTF-8: a reference to a file whose name is not would be written as
	 * U+FFFD and name no file when the plan is read back */
	const char *refs[] = { embed ? NULL : p->model_ref, embed ? NULL : p->cluster_ref };

	for (int i = 0; i < 2; i++)
		if (refs[i] && !str_is_utf8(refs[i], strlen(refs[i]))) {
			struct strbuf sb = STRBUF_INIT;

			strbuf_add_printable(&sb, refs[i], strlen(refs[i]), false);
			err_set(e, ERR_INPUT, "%s: the %s file '%s' has a name that is not UTF-8, which a plan cannot refer "
			        "to: rename it, or embed it (--embed)", path, i ? "cluster" : "model", sb.buf ? sb.buf : "");
			strbuf_release(&sb);
			return -1;
		}
	return json_save_built(path, plan_to_json(p, embed), e);
}

/* The digits of 0, 1, ..., n - 1, all together. */
static double digit_sum(long n)
{
	double sum = 0;
	long lo = 0, hi = 10;

	for (int d = 1; lo < n; d++, lo = hi, hi *= 10)
		sum += (double)d * (double)((n < hi ? n : hi) - lo);
	return sum;
}

double plan_file_floor_bytes(long nstages, long microbatches)
{
	/* each of the two entries of (stage, mb): "SkM", (quotes, kind, comma, space: 5) */
	return 2 * ((double)microbatches * digit_sum(nstages) + (double)nstages * digit_sum(microbatches) +
	            5.0 * (double)nstages * (double)microbatches);
}

int plan_check_size(long nstages, long microbatches, struct err *e)
{
	double bytes = plan_file_floor_bytes(nstages, microbatches);
	long most = 0;

	if (bytes <= (double)FILEIO_MAX_BYTES)
		return 0;
	for (long step = 1L << 20; step > 0; step >>= 1)
		if (plan_file_floor_bytes(nstages, most + step) <= (double)FILEIO_MAX_BYTES)
			most += step;
	return err_set(e, ERR_INPUT, "%ld stages x %ld microbatches make a plan of at least %.0f MiB, more than the %zu "
	               "MiB any octopipe command reads back: at most %ld microbatches with %ld stages", nstages,
	               microbatches, bytes / (1 << 20), FILEIO_MAX_BYTES >> 20, most, nstages);
}
