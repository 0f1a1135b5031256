/*
 * fidelity — published runs predicted from their configs and layouts (see fidelity.h).
 *
 * A point goes through exactly what a user's job goes through: `cost` (the architecture
 * priced under the runtime on the GPU), `plan` (the published layout's baseline schedule on
 * one replica), `sim`. The cluster is made from the GPU's datasheet facts alone: peak BF16,
 * HBM bandwidth, memory, NVLink, and one NIC per GPU across nodes.
 */
#include "config.h"
#include "fidelity.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "baseline.h"
#include "hfconfig.h"
#include "json.h"
#include "plan.h"
#include "sim.h"

static int dupstr(char **out, const char *s, struct err *e)
{
	if (!(*out = strdup(s)))
		return err_set(e, ERR_RUNTIME, "out of host memory");
	return 0;
}

/* "about", and a point's "published" (the figure as its source words it), "fpt" (model
 * FLOPs a token, as computed for the table) and "unknowns" (what the source left open) are
 * for the people who read the file: known, not read. The runs are written by others (the
 * project's shared data, with more runs to come): a field near one of these is refused as
 * its typo, one far from all is the source's own, accepted and not read. */
static const char *const points_keys[] = { "format", "about", "gpus", "points", NULL };
static const char *const gpu_keys[] = {
	"gpu", "gpus_per_node", "mem_bytes", "intra", "inter", "peak_tflops", "hbm_gbytes_per_s", NULL
};
static const char *const point_keys[] = {
	"id", "config", "runtime", "gpu", "source", "gpus", "seq", "gbs", "pub_tok", "published", "fpt", "unknowns",
	"tp", "pp", "dp", "ep", "zero", "chunks", "sched", "recompute", "mbs", "mbs_options", NULL
};

static int read_gpus(struct fidelity_set *s, struct jv *v, const cJSON *gpus)
{
	char p[JPATH_MAX];
	int n = cJSON_GetArraySize(gpus);

	if (!(s->gpus = calloc((size_t)(n > 0 ? n : 1), sizeof(*s->gpus))))
		return err_set(v->e, ERR_RUNTIME, "out of host memory");
	for (const cJSON *g = gpus->child; g; g = g->next) {
		struct fidelity_gpu *x;
		const char *name;
		double gpn;

		if (jv_is_comment_key(g->string))
			continue;
		x = &s->gpus[s->ngpus++];
		jpath_key(p, "gpus", g->string);
		if (!cJSON_IsObject(g))
			return jv_fail(v, p, "must be an object, not %s", json_type_name(g));
		if (jv_keys_near(v, g, p, gpu_keys) < 0 || jv_string(v, g, p, "gpu", JV_REQUIRED | JV_NONEMPTY, NULL, &name) < 0 ||
		    jv_number(v, g, p, "gpus_per_node", JV_REQUIRED | JV_INTEGER, 1, 1024, 0, &gpn) < 0 ||
		    jv_number(v, g, p, "mem_bytes", JV_REQUIRED, 1e6, 1e15, 0, &x->mem_bytes) < 0 ||
		    jv_number(v, g, p, "intra", JV_REQUIRED, 1e-3, 1e6, 0, &x->intra) < 0 ||
		    jv_number(v, g, p, "inter", JV_REQUIRED, 1e-3, 1e6, 0, &x->inter) < 0 ||
		    jv_number(v, g, p, "peak_tflops", JV_REQUIRED, 1e-3, 1e6, 0, &x->peak_tflops) < 0 ||
		    jv_number(v, g, p, "hbm_gbytes_per_s", JV_REQUIRED, 1e-3, 1e9, 0, &x->hbm_gbytes_per_s) < 0)
			return -1;
		x->gpus_per_node = (int)gpn;
		if (dupstr(&x->key, g->string, v->e) < 0 || dupstr(&x->gpu, name, v->e) < 0)
			return -1;
	}
	return 0;
}

static int find_gpu(const struct fidelity_set *s, const char *key)
{
	for (int i = 0; i < s->ngpus; i++)
		if (strcmp(s->gpus[i].key, key) == 0)
			return i;
	return -1;
}

/* the layout members of a point: tp, pp, dp, ep, zero, sched, chunks, recompute */
static int read_layout(struct fidelity_point *x, struct jv *v, const cJSON *pt, const char *p)
{
	double tp, pp, dp, ep, zero, chunks;
	const char *sched, *rec;
	char q[JPATH_MAX];
	int k;

	if (jv_number(v, pt, p, "tp", JV_REQUIRED | JV_INTEGER, 1, PARALLEL_MAX_DEGREE, 0, &tp) < 0 ||
	    jv_number(v, pt, p, "pp", JV_REQUIRED | JV_INTEGER, 1, PARALLEL_MAX_DEGREE, 0, &pp) < 0 ||
	    jv_number(v, pt, p, "dp", JV_REQUIRED | JV_INTEGER, 1, PARALLEL_MAX_DEGREE, 0, &dp) < 0 ||
	    jv_number(v, pt, p, "ep", JV_REQUIRED | JV_INTEGER, 1, PARALLEL_MAX_DEGREE, 0, &ep) < 0 ||
	    jv_number(v, pt, p, "zero", JV_REQUIRED | JV_INTEGER, 0, 3, 0, &zero) < 0 ||
	    jv_number(v, pt, p, "chunks", JV_REQUIRED | JV_INTEGER, 1, 64, 0, &chunks) < 0 ||
	    jv_string(v, pt, p, "sched", JV_REQUIRED | JV_NONEMPTY, NULL, &sched) < 0 ||
	    jv_string(v, pt, p, "recompute", JV_REQUIRED | JV_NONEMPTY, NULL, &rec) < 0)
		return -1;
	x->par = (struct parallel){ .pp = (int)pp, .tp = (int)tp, .dp = (int)dp, .ep = (int)ep, .zero = (int)zero,
	                            .fp32_grads = true };
	x->chunks = (int)chunks;
	if ((k = sched_from_name(sched)) < 0) {
		jpath_key(q, p, "sched");
		return jv_fail(v, q, "'%s' is not a schedule (%s)", sched, sched_names());
	}
	x->sched = (enum sched_kind)k;
	if (recompute_from_name(rec, &x->recompute) < 0) {
		jpath_key(q, p, "recompute");
		return jv_fail(v, q, "'%s' is not none, selective or full", rec);
	}
	if (x->par.pp * x->par.tp * x->par.dp != x->gpus)
		return jv_fail(v, p, "tp %d x pp %d x dp %d is not its %d GPUs", x->par.tp, x->par.pp, x->par.dp, x->gpus);
	return 0;
}

/* "mbs_options" when the source leaves the micro-batch open, else "mbs" */
static int read_mbs(struct fidelity_point *x, struct jv *v, const cJSON *pt, const char *p)
{
	const cJSON *opts;
	char q[JPATH_MAX], r[JPATH_MAX];
	double m;

	if (jv_array(v, pt, p, "mbs_options", 0, &opts) < 0)
		return -1;
	if (!opts) {
		if (jv_number(v, pt, p, "mbs", JV_REQUIRED | JV_INTEGER, 1, 1 << 20, 0, &m) < 0)
			return -1;
		x->mbs[x->nmbs++] = (int)m;
		return 0;
	}
	jpath_key(q, p, "mbs_options");
	if (cJSON_GetArraySize(opts) < 1 || cJSON_GetArraySize(opts) > FIDELITY_MAX_MBS)
		return jv_fail(v, q, "must list 1 to %d micro-batch sizes", FIDELITY_MAX_MBS);
	for (const cJSON *o = opts->child; o; o = o->next) {
		jpath_index(r, q, x->nmbs);
		if (jv_number_value(v, o, r, JV_INTEGER, 1, 1 << 20, &m) < 0)
			return -1;
		for (int k = 0; k < x->nmbs; k++)
			if (x->mbs[k] == (int)m)
				return jv_fail(v, r, "%d is listed twice", (int)m);
		x->mbs[x->nmbs++] = (int)m;
	}
	/* beside the options, mbs (the shared data gives the first) is one of them: it was
	 * not read at all, so "x" or -3 passed */
	if (jv_number(v, pt, p, "mbs", JV_INTEGER, 1, 1 << 20, 0, &m) < 0)
		return -1;
	for (int k = 0; m > 0 && k < x->nmbs; k++)
		if (x->mbs[k] == (int)m)
			return 0;
	if (m > 0) {
		jpath_key(r, p, "mbs");
		return jv_fail(v, r, "%d is not one of mbs_options", (int)m);
	}
	return 0;
}

static int read_point(struct fidelity_set *s, struct jv *v, const cJSON *pt, int i)
{
	struct fidelity_point *x = &s->points[i];
	const char *id, *config, *runtime, *gpu, *source;
	double gpus, seq, gbs;
	char p[JPATH_MAX], q[JPATH_MAX];

	jpath_index(p, "points", i);
	if (!cJSON_IsObject(pt))
		return jv_fail(v, p, "must be an object, not %s", json_type_name(pt));
	if (jv_keys_near(v, pt, p, point_keys) < 0 || jv_string(v, pt, p, "id", JV_REQUIRED | JV_NONEMPTY, NULL, &id) < 0 ||
	    jv_string(v, pt, p, "config", JV_REQUIRED | JV_NONEMPTY, NULL, &config) < 0 ||
	    jv_string(v, pt, p, "runtime", JV_REQUIRED | JV_NONEMPTY, NULL, &runtime) < 0 ||
	    jv_string(v, pt, p, "gpu", JV_REQUIRED | JV_NONEMPTY, NULL, &gpu) < 0 ||
	    jv_string(v, pt, p, "source", JV_REQUIRED | JV_NONEMPTY, NULL, &source) < 0 ||
	    jv_number(v, pt, p, "gpus", JV_REQUIRED | JV_INTEGER, 1, 1 << 20, 0, &gpus) < 0 ||
	    jv_number(v, pt, p, "seq", JV_REQUIRED | JV_INTEGER, 1, 1 << 24, 0, &seq) < 0 ||
	    jv_number(v, pt, p, "gbs", JV_REQUIRED | JV_INTEGER, 1, 1 << 24, 0, &gbs) < 0 ||
	    jv_number(v, pt, p, "pub_tok", JV_REQUIRED, 1e-9, 1e12, 0, &x->pub_tok) < 0)
		return -1;
	/* a config is a file name beside the points file: no directories, nothing hidden */
	if (strchr(config, '/') || config[0] == '.' || json_has_control(config)) {
		jpath_key(q, p, "config");
		return jv_fail(v, q, "'%s' must name a file of configs/ (no '/', not hidden)", config);
	}
	x->gpus = (int)gpus;
	x->seq = (long)seq;
	x->gbs = (int)gbs;
	if ((x->gpu = find_gpu(s, gpu)) < 0) {
		jpath_key(q, p, "gpu");
		return jv_fail(v, q, "'%s' is not a member of gpus", gpu);
	}
	for (int k = 0; k < i; k++)
		if (strcmp(s->points[k].id, id) == 0) { /* a table row and a --point would name two runs */
			jpath_key(q, p, "id");
			return jv_fail(v, q, "'%s' is also the id of points[%d]", id, k);
		}
	if (dupstr(&x->id, id, v->e) < 0 || dupstr(&x->config, config, v->e) < 0 ||
	    dupstr(&x->runtime, runtime, v->e) < 0 || dupstr(&x->source, source, v->e) < 0)
		return -1;
	if (read_layout(x, v, pt, p) < 0 || read_mbs(x, v, pt, p) < 0)
		return -1;
	for (int k = 0; k < x->nmbs; k++)
		if (x->gbs % (x->mbs[k] * x->par.dp) != 0)
			return jv_fail(v, p, "gbs %d is not a multiple of mbs %d x dp %d", x->gbs, x->mbs[k], x->par.dp);
	return 0;
}

int fidelity_load(struct fidelity_set *s, const char *path, struct err *e)
{
	cJSON *root = json_load_file(path, e);
	struct jv v = { path, e, NULL };
	const cJSON *gpus, *points;
	int n, r = -1;

	memset(s, 0, sizeof(*s));
	if (!root)
		return -1;
	/* the project's shared data writes no "format": a document of "points" and "gpus" is
	 * that form of this one */
	if ((cJSON_GetObjectItemCaseSensitive(root, "format") || !cJSON_GetObjectItemCaseSensitive(root, "points")) &&
	    jv_format(&v, root, FIDELITY_FORMAT) < 0)
		goto out;
	if (jv_keys_near(&v, root, "", points_keys) < 0 ||
	    jv_object(&v, root, "", "gpus", JV_REQUIRED, &gpus) < 0 ||
	    jv_array(&v, root, "", "points", JV_REQUIRED, &points) < 0 || read_gpus(s, &v, gpus) < 0)
		goto out;
	n = cJSON_GetArraySize(points);
	if (n == 0) { /* a median of nothing is NaN, printed as if measured */
		jv_fail(&v, "points", "must list at least one point");
		goto out;
	}
	if (!(s->points = calloc((size_t)(n > 0 ? n : 1), sizeof(*s->points)))) {
		err_set(e, ERR_RUNTIME, "out of host memory");
		goto out;
	}
	for (const cJSON *pt = points->child; pt; pt = pt->next) {
		s->npoints++;
		if (read_point(s, &v, pt, s->npoints - 1) < 0)
			goto out;
	}
	r = 0;
out:
	cJSON_Delete(root);
	if (r < 0)
		fidelity_release(s);
	return r;
}

void fidelity_release(struct fidelity_set *s)
{
	for (int i = 0; s->gpus && i < s->ngpus; i++) {
		free(s->gpus[i].key);
		free(s->gpus[i].gpu);
	}
	for (int i = 0; s->points && i < s->npoints; i++) {
		free(s->points[i].id);
		free(s->points[i].config);
		free(s->points[i].runtime);
		free(s->points[i].source);
	}
	free(s->gpus);
	free(s->points);
	memset(s, 0, sizeof(*s));
}

/* the cluster of the point's GPUs, from the datasheet facts alone */
static int make_cluster(const struct fidelity_set *s, const struct fidelity_point *p, struct cluster *c,
                        struct err *e)
{
	const struct fidelity_gpu *g = &s->gpus[p->gpu];
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *o;
	int r;

	jw_str(&w, root, "format", "octopipe.cluster/1");
	jw_str(&w, root, "name", p->id);
	jw_str(&w, root, "gpu", g->gpu);
	jw_num(&w, root, "devices", p->gpus);
	jw_num(&w, root, "gpus_per_node", g->gpus_per_node);
	jw_num(&w, root, "mem_bytes", floor(g->mem_bytes));
	o = jw_obj(&w, root, "intra_node");
	jw_num(&w, o, "gbytes_per_s", g->intra);
	jw_num(&w, o, "latency_us", 5);
	o = jw_obj(&w, root, "inter_node");
	jw_num(&w, o, "gbytes_per_s", g->inter);
	jw_num(&w, o, "latency_us", 10);
	o = jw_obj(&w, root, "hardware");
	jw_num(&w, o, "peak_tflops", g->peak_tflops);
	jw_num(&w, o, "hbm_gbytes_per_s", g->hbm_gbytes_per_s);
	if (w.oom || !root) {
		cJSON_Delete(root);
		return err_set(e, ERR_RUNTIME, "out of host memory");
	}
	r = cluster_from_json(c, root, p->id, NULL, e);
	cJSON_Delete(root);
	return r;
}

/* the layer table of the point at micro-batch mbs, its source recorded for re-pricing */
static int make_model(const struct fidelity_point *p, const cJSON *config, const struct arch *a,
                      const struct cluster *c, const struct runtime *rt, int mbs, struct model *m, struct err *e)
{
	struct cost_opts o;

	memset(&o, 0, sizeof(o));
	o.seq = p->seq;
	o.micro_batch = mbs;
	o.tp = p->par.tp;
	o.link_gbytes_per_s = c->intra.gbytes_per_s;
	o.link_latency_us = c->intra.latency_us;
	o.style = rt->style;
	if (arch_to_model(a, &c->hw, &o, p->id, m, e) < 0)
		return -1;
	if (model_set_source(m, config, &o, &c->hw, rt->doc, e) < 0) {
		model_release(m);
		return -1;
	}
	return 0;
}

/* plans and simulates one micro-batch option */
static int predict_mbs(const struct fidelity_point *p, const struct model *m, const struct cluster *c, int mbs,
                       struct fidelity_result *r, struct err *e)
{
	struct baseline_spec spec = { p->sched, p->gbs / (mbs * p->par.dp), p->chunks > 1 ? p->chunks : 0,
	                              NULL, NULL, 0, 0, NULL };
	struct model rm;
	struct cluster rc;
	struct plan pl;
	struct sim s;
	struct sim_opts so;
	struct metrics mt;
	int ok;

	if (parallel_replica(m, c, &p->par, &rm, &rc, e) < 0)
		return -1;
	ok = baseline_plan(&pl, &rm, NULL, &rc, NULL, &spec, e) == 0;
	model_release(&rm);
	cluster_release(&rc);
	if (!ok)
		return -1;
	if (plan_attach_parallel(&pl, &p->par, m, c, e) < 0) {
		plan_release(&pl);
		return -1;
	}
	plan_set_recompute(&pl, p->recompute);
	memset(&s, 0, sizeof(s));
	sim_opts_default(&so);
	ok = sim_run(&s, &pl, &so, &mt, e) == 0;
	sim_release(&s);
	plan_release(&pl);
	if (!ok)
		return -1;
	r->mbs = mbs;
	r->makespan_ms = mt.makespan_ms;
	r->tok_per_gpu = mt.throughput_tokens_per_s / p->gpus;
	r->fits = mt.noom == 0;
	r->peak_bytes = 0;
	for (int d = 0; d < mt.ndevices; d++)
		r->peak_bytes = fmax(r->peak_bytes, (double)mt.dev[d].peak_mem_bytes);
	metrics_release(&mt);
	return 0;
}

int fidelity_predict(const struct fidelity_set *s, const struct fidelity_point *p, const char *config,
                     const struct runtime *rt, struct fidelity_result *out, struct err *e)
{
	cJSON *cfg = json_load_file(config, e);
	struct cluster c;
	struct arch a;
	int r = -1;

	memset(out, 0, sizeof(*out));
	if (!cfg)
		return -1;
	memset(&a, 0, sizeof(a));
	if (make_cluster(s, p, &c, e) < 0)
		goto done_cfg;
	if (!c.hw.eff_given)
		runtime_hardware(rt, c.gpu, &c.hw);
	if (hfconfig_read(&a, cfg, config, e) < 0)
		goto done_cluster;
	for (int k = 0; k < p->nmbs; k++) {
		struct fidelity_result one;
		struct model m;

		if (make_model(p, cfg, &a, &c, rt, p->mbs[k], &m, e) < 0)
			goto done_arch;
		memset(&one, 0, sizeof(one));
		if (predict_mbs(p, &m, &c, p->mbs[k], &one, e) < 0) {
			model_release(&m);
			goto done_arch;
		}
		model_release(&m);
		/* the fastest option that fits; the fastest of all only while none fits */
		if (!out->ran || (one.fits && !out->fits) ||
		    (one.fits == out->fits && one.tok_per_gpu > out->tok_per_gpu)) {
			*out = one;
			out->ran = true;
		}
	}
	out->ratio = out->tok_per_gpu / p->pub_tok;
	r = 0;
done_arch:
	arch_release(&a);
done_cluster:
	cluster_release(&c);
done_cfg:
	cJSON_Delete(cfg);
	return r;
}
