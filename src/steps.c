/*
 * steps — reading octopipe.steps/1 (see steps.h).
 *
 * A step is a tuner state, so the reader's job is to make sure the state is one the
 * tuner could have produced for this model and cluster: every value goes through the
 * jv_* getters with its JSON path, and the limits that keep tune_state_plan() in range
 * (stage count x microbatches) are checked here rather than trusted there.
 */
#include "config.h"
#include "steps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "json.h"
#include "layout_search.h"

void steps_release(struct steps *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++) {
		free(s->steps[i].what);
		tune_state_release(&s->steps[i].state);
	}
	free(s->steps);
	free(s->model);
	free(s->cluster);
	free(s->best_baseline);
	memset(s, 0, sizeof(*s));
}

/* What tune --steps-out writes; "move", "a", "b", the lower bounds and "layout" (the
 * layout the search chose, before the steps) are not needed to replay or show a step:
 * known, not read. */
static const char *const steps_keys[] = {
	"format", "model", "cluster", "microbatches", "best_baseline", "best_baseline_ms", "evaluations",
	"lower_bound_tight_ms", "lower_bound_memory_ms", "layout", "steps", NULL
};
static const char *const step_keys[] = {
	"step", "phase", "move", "a", "b", "what", "before_ms", "after_ms", "bubble_after", "stages", "scheduler",
	"schedule", NULL
};
static const char *const stage_keys[] = { "layers", "device", NULL };
static const char *const scheduler_keys[] = {
	"alternate", "defer_arrivals", "cap_extra", "wcap", "lst", "recompute_stages", "recompute_ranked",
	"depth_quarters", "reserve", NULL
};

static int parse_phase(struct jv *v, const cJSON *o, const char *path, enum tune_phase *out)
{
	static const enum tune_phase all[] = { PHASE_START, PHASE_PARTITION, PHASE_PLACEMENT, PHASE_SCHEDULING };
	const char *name;
	char p[JPATH_MAX];

	if (jv_string(v, o, path, "phase", JV_REQUIRED, NULL, &name) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(name, tune_phase_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	jpath_key(p, path, "phase");
	return jv_fail(v, p, "'%.40s' is not a phase (start, partition, placement or scheduling)", name);
}

/* A step's number in [lo, hi]; null is what the tuner writes for a number that is not
 * finite (jw_num): a time of a plan that could not run (a perturbation may land on one),
 * read as INFINITY, or a bubble it could not measure, read as NAN (null_as). */
static int step_num(struct jv *v, const cJSON *o, const char *path, const char *key, int flags, double hi,
                    double dflt, double null_as, double *out)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);

	if (x && cJSON_IsNull(x)) {
		*out = null_as;
		return 0;
	}
	return jv_number(v, o, path, key, flags, 0, hi, dflt, out);
}

/* The fields that show a step: its number, phase, move, times and bubble. */
static int read_shown(struct jv *v, const cJSON *o, const char *path, int k, struct steps_step *t,
                      const char **what)
{
	long idx;

	if (jv_int(v, o, path, "step", 0, 0, 1L << 30, k, &idx) < 0 || parse_phase(v, o, path, &t->phase) < 0 ||
	    jv_string(v, o, path, "what", 0, "", what) < 0 ||
	    step_num(v, o, path, "after_ms", JV_REQUIRED, 1e300, 0, INFINITY, &t->after_ms) < 0 ||
	    step_num(v, o, path, "before_ms", 0, 1e300, t->after_ms, INFINITY, &t->before_ms) < 0 ||
	    step_num(v, o, path, "bubble_after", 0, 1, 0, NAN, &t->bubble) < 0)
		return -1;
	t->index = (int)idx;
	return 0;
}

static int read_stages(struct jv *v, const cJSON *o, const char *path, const struct model *m,
                       const struct cluster *c, struct tune_state *st)
{
	const cJSON *arr, *so;
	char sp[JPATH_MAX], p[JPATH_MAX], rp[JPATH_MAX], ep[JPATH_MAX];
	int next = 0, S, k = 0;

	if (jv_array(v, o, path, "stages", JV_REQUIRED, &arr) < 0)
		return -1;
	jpath_key(sp, path, "stages");
	S = cJSON_GetArraySize(arr);
	if (S < 1)
		return jv_fail(v, sp, "must list at least one stage");
	if (S > m->nlayers)
		return jv_fail(v, sp, "%d stages but the model has %d layers", S, m->nlayers);
	st->nstages = S;
	st->first = calloc((size_t)S + 1, sizeof(int));
	st->device = calloc((size_t)S, sizeof(int));
	if (!st->first || !st->device)
		return err_set(v->e, ERR_RUNTIME, "%s: out of host memory", v->file);
	for (so = arr->child; so; so = so->next, k++) {
		const cJSON *range;
		double a, b;
		long dev;

		jpath_index(p, sp, k);
		if (!cJSON_IsObject(so))
			return jv_fail(v, p, "must be an object, not %s", json_type_name(so));
		if (jv_keys(v, so, p, stage_keys) < 0 || jv_array(v, so, p, "layers", JV_REQUIRED, &range) < 0)
			return -1;
		jpath_key(rp, p, "layers");
		if (cJSON_GetArraySize(range) != 2)
			return jv_fail(v, rp, "must be [first, last], an inclusive layer range");
		jpath_index(ep, rp, 0);
		if (jv_number_value(v, range->child, ep, JV_INTEGER, 0, m->nlayers - 1, &a) < 0)
			return -1;
		jpath_index(ep, rp, 1);
		if (jv_number_value(v, range->child->next, ep, JV_INTEGER, 0, m->nlayers - 1, &b) < 0)
			return -1;
		if (b < a)
			return jv_fail(v, rp, "last layer %d comes before first layer %d", (int)b, (int)a);
		if ((int)a != next)
			return jv_fail(v, rp, "starts at layer %d, want %d (stages cover every layer once, in order)",
			               (int)a, next);
		if (jv_int(v, so, p, "device", JV_REQUIRED, 0, c->devices - 1, 0, &dev) < 0) {
			if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(so, "device"))) {
				jpath_key(ep, p, "device");
				return jv_fail(v, ep, "no such device (cluster '%s' has %d: 0..%d)", c->name, c->devices,
				               c->devices - 1);
			}
			return -1;
		}
		st->first[k] = next;
		st->device[k] = (int)dev;
		next = (int)b + 1;
	}
	if (next != m->nlayers)
		return jv_fail(v, sp, "the stages cover %d layers, model '%s' has %d", next, m->name, m->nlayers);
	st->first[S] = next;
	return 0;
}

static int read_scheduler(struct jv *v, const cJSON *o, const char *path, struct tune_sched *out)
{
	const cJSON *sch;
	char p[JPATH_MAX];
	long x;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = jv_object(v, o, path, "scheduler", 0, &sch)) <= 0)
		return r;
	jpath_key(p, path, "scheduler");
	if (jv_keys(v, sch, p, scheduler_keys) < 0 || jv_bool(v, sch, p, "alternate", 0, false, &out->alternate) < 0 ||
	    jv_bool(v, sch, p, "defer_arrivals", 0, false, &out->defer_arrivals) < 0)
		return -1;
	if (jv_int(v, sch, p, "cap_extra", 0, -OCTO_MAX_MICROBATCHES, OCTO_MAX_MICROBATCHES, 0, &x) < 0)
		return -1;
	out->cap_extra = (int)x;
	if (jv_int(v, sch, p, "wcap", 0, 0, OCTO_MAX_MICROBATCHES, 0, &x) < 0)
		return -1;
	out->wcap = (int)x;
	if (jv_int(v, sch, p, "lst", 0, 0, 64, 0, &x) < 0)
		return -1;
	out->lst = (int)x;
	if (jv_int(v, sch, p, "recompute_stages", 0, 0, OCTO_MAX_STAGES, 0, &x) < 0)
		return -1;
	out->rc = (int)x;
	if (jv_bool(v, sch, p, "recompute_ranked", 0, false, &out->rc_ranked) < 0)
		return -1;
	if (jv_int(v, sch, p, "depth_quarters", 0, 0, 3, 0, &x) < 0)
		return -1;
	out->depth_q = (int)x;
	if (jv_int(v, sch, p, "reserve", 0, 0, TUNE_MAX_RESERVE, 0, &x) < 0)
		return -1;
	out->reserve = (int)x;
	return 0;
}

/* The optional explicit order of a step (tune_state.order): one list per device holding
 * every op of that device's stages once, F, I and W only (the tuner splits the backward). */
static int read_schedule(struct jv *v, const cJSON *o, const char *path, const struct cluster *c, int mbs,
                         struct tune_state *st)
{
	const cJSON *arr, *list;
	char sp[JPATH_MAX], dp[JPATH_MAX], tp[JPATH_MAX];
	long total = (long)st->nstages * mbs * 3, n = 0;
	unsigned char *seen;
	int r, d = 0;

	if ((r = jv_array(v, o, path, "schedule", 0, &arr)) <= 0)
		return r;
	jpath_key(sp, path, "schedule");
	if (cJSON_GetArraySize(arr) != c->devices)
		return jv_fail(v, sp, "has %d lists, cluster '%s' has %d devices", cJSON_GetArraySize(arr), c->name,
		               c->devices);
	st->order_start = calloc((size_t)c->devices + 1, sizeof(int));
	st->order = calloc((size_t)total, sizeof(*st->order));
	seen = calloc((size_t)total, 1);
	if (!st->order_start || !st->order || !seen) {
		free(seen);
		return err_set(v->e, ERR_RUNTIME, "%s: out of host memory", v->file);
	}
	st->order_devices = c->devices;
	for (list = arr->child; list; list = list->next, d++) {
		const cJSON *tok;
		int k = 0;

		jpath_index(dp, sp, d);
		if (!cJSON_IsArray(list)) {
			free(seen);
			return jv_fail(v, dp, "must be an array, not %s", json_type_name(list));
		}
		st->order_start[d] = (int)n;
		for (tok = list->child; tok; tok = tok->next, k++) {
			struct action a;
			long id;

			jpath_index(tp, dp, k);
			if (!cJSON_IsString(tok) || action_parse(tok->valuestring, &a) < 0 ||
			    !(a.kind == OP_F || a.kind == OP_I || a.kind == OP_W) || a.stage >= st->nstages || a.mb >= mbs) {
				free(seen);
				return jv_fail(v, tp, "must be an op of the steps' stages like \"0F3\", \"1I0\" or \"2W5\"");
			}
			if (st->device[a.stage] != d) {
				free(seen);
				return jv_fail(v, tp, "stage %d runs on device %d, not %d", a.stage, st->device[a.stage], d);
			}
			id = ((long)a.stage * mbs + a.mb) * 3 + (a.kind == OP_F ? 0 : a.kind == OP_I ? 1 : 2);
			if (seen[id] || n >= total) {
				free(seen);
				return jv_fail(v, tp, "'%s' is listed twice", tok->valuestring);
			}
			seen[id] = 1;
			a.pair = 0;
			st->order[n++] = a;
		}
	}
	st->order_start[c->devices] = (int)n;
	free(seen);
	if (n != total)
		return jv_fail(v, sp, "lists %ld ops, the stages have %ld", n, total);
	return 0;
}

int steps_from_json(struct steps *s, const cJSON *root, const char *file, const struct model *m,
                    const struct cluster *c, int microbatches, struct err *e)
{
	struct jv v = { file, e, NULL };
	const cJSON *arr, *o;
	const char *model = NULL, *cluster = NULL, *baseline = NULL, *what;
	char p[JPATH_MAX];
	long mbs, evals;
	int k = 0;

	memset(s, 0, sizeof(*s));
	if (jv_format(&v, root, STEPS_FORMAT) < 0 || jv_keys(&v, root, "", steps_keys) < 0 ||
	    jv_string(&v, root, "", "model", JV_NONEMPTY, NULL, &model) < 0 ||
	    jv_int(&v, root, "", "microbatches", 0, 1, OCTO_MAX_MICROBATCHES, microbatches, &mbs) < 0 ||
	    jv_string(&v, root, "", "best_baseline", 0, NULL, &baseline) < 0 ||
	    jv_number(&v, root, "", "best_baseline_ms", 0, 0, 1e300, 0, &s->best_baseline_ms) < 0 ||
	    jv_int(&v, root, "", "evaluations", 0, 0, 1L << 53, 0, &evals) < 0 ||
	    jv_array(&v, root, "", "steps", JV_REQUIRED, &arr) < 0)
		return -1;
	if (model && strcmp(model, m->name) != 0)
		return jv_fail(&v, "model", "steps of model '%.100s', the plan is of '%s'", model, m->name);
	/* another cluster's steps were caught only where a device index ran past this one's */
	if (jv_string(&v, root, "", "cluster", 0, NULL, &cluster) < 0)
		return -1;
	if (cluster && strcmp(cluster, c->name) != 0)
		return jv_fail(&v, "cluster", "steps on cluster '%.100s', the plan is on '%s'", cluster, c->name);
	if (cJSON_GetArraySize(arr) < 1)
		return jv_fail(&v, "steps", "must list at least one step");
	s->microbatches = (int)mbs;
	s->evaluations = evals;
	if ((model && !(s->model = strdup(model))) || (cluster && !(s->cluster = strdup(cluster))) ||
	    (baseline && !(s->best_baseline = strdup(baseline))))
		goto oom;
	s->steps = calloc((size_t)cJSON_GetArraySize(arr), sizeof(*s->steps));
	if (!s->steps)
		goto oom;
	for (o = arr->child; o; o = o->next, k++) {
		struct steps_step *t = &s->steps[s->n];
		long ops;

		jpath_index(p, "steps", k);
		if (!cJSON_IsObject(o))
			return jv_fail(&v, p, "must be an object, not %s", json_type_name(o));
		s->n++;
		if (jv_keys(&v, o, p, step_keys) < 0 || read_shown(&v, o, p, k, t, &what) < 0 ||
		    read_stages(&v, o, p, m, c, &t->state) < 0 ||
		    read_scheduler(&v, o, p, &t->state.sched) < 0)
			return -1;
		if (!(t->what = strdup(what)))
			goto oom;
		/* what tune_state_plan() will allocate for this step */
		ops = (long)t->state.nstages * s->microbatches * 3;
		if (ops > OCTO_MAX_OPS)
			return jv_fail(&v, p, "%d stages x %d microbatches is more than %ld ops", t->state.nstages,
			               s->microbatches, (long)OCTO_MAX_OPS);
		if (read_schedule(&v, o, p, c, s->microbatches, &t->state) < 0)
			return -1;
	}
	return 0;
oom:
	return err_set(e, ERR_RUNTIME, "%s: out of host memory", file);
}

int steps_load(struct steps *s, const char *path, const struct model *m, const struct cluster *c,
               int microbatches, struct err *e)
{
	cJSON *root = json_load_file(path, e);
	int r;

	memset(s, 0, sizeof(*s));
	if (!root)
		return -1;
	r = steps_from_json(s, root, path, m, c, microbatches, e);
	cJSON_Delete(root);
	return r;
}

int steps_model_of(const struct plan *p, struct model *m, struct cluster *c, struct err *e)
{
	bool uniform = p->nstages > 0;

	if (model_copy(m, &p->model, e) < 0)
		return -1;
	for (int i = 1; i < p->nstages; i++)
		uniform &= p->stages[i].recompute == p->stages[0].recompute;
	if (uniform)
		layout_recompute_model(m, (enum recompute)p->stages[0].recompute);
	if (cluster_copy(c, &p->cluster, e) < 0) {
		model_release(m);
		return -1;
	}
	return 0;
}
