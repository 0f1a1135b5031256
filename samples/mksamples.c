/*
 * mksamples — regenerates the bundled samples from data committed in the repository.
 *
 *     samples/mksamples SRCDIR
 *
 * reads SRCDIR/samples/profiles (measured per-layer times and relative-costs.json) and
 * writes, through the engine's own writers (so every file is canonical and a second run
 * gives the same bytes):
 *     SRCDIR/samples/models/<model>.json      layer tables, octopipe.model/1
 *     SRCDIR/samples/clusters/<name>.json     H200 / H100 clusters, octopipe.cluster/1
 *     SRCDIR/plans/gpt-13b-4xH200-1f1b.json   a classic 1F1B plan, octopipe.plan/1
 *
 * Times. f_ms is the profiled forward. The profiled full backward of each layer is split
 * into B (input grad) and W (weight grad) with one W share, W / (B + W), per layer class,
 * taken from a row of relative-costs.json (same family as the class, the profile's
 * seq_len, the vocab nearest the model's) or, for a class nobody measured, from the
 * zero-bubble theory W = B. The first and last layers have the embedding and the head
 * folded in: such a layer is read as its base kind (the median of the other layers of
 * the same letter) plus an extra, the remainder. The base part is split with the base
 * share, a head extra with the head share, and an embedding extra goes entirely to W
 * (its backward is only the weight-gradient scatter-add). samples/README.md has the table.
 *
 * Memory. From the public architecture of each model (the specs below) with the per-token
 * formulas of the reference notes: bf16 weights, activations kept for the backward with
 * FlashAttention and no recompute, the part of them W needs (inputs and output grads of
 * every linear layer, clamped to the activations), and the hidden state sent downstream.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "action.h"
#include "cluster.h"
#include "err.h"
#include "json.h"
#include "model.h"
#include "plan.h"

#include "mksamples.h"

#define PATH_LEN 4096
#define ROWS_MAX 256


struct row {
	const char *family;  /* points into the parsed tree */
	long seq_len, vocab;
	double r[9];
};

struct costs {
	cJSON *root;
	int nrows;
	struct row rows[ROWS_MAX];
};

/* A profiled layer. */
struct prof_layer {
	char letter;
	bool emb, head;
	double f_ms, bw_ms;
};

struct profile {
	long seq_len, mbs;
	int n;
	struct prof_layer *l;
};


static double round3(double x)
{
	return round(x * 1000.0) / 1000.0;
}

static int path_join(char *out, const char *dir, const char *rel, struct err *e)
{
	if (snprintf(out, PATH_LEN, "%s/%s", dir, rel) >= PATH_LEN)
		return err_set(e, ERR_INPUT, "%s/%s: path too long", dir, rel);
	return 0;
}

static int make_dir(const char *dir, const char *rel, struct err *e)
{
	char p[PATH_LEN];

	if (path_join(p, dir, rel, e) < 0)
		return -1;
	if (mkdir(p, 0777) < 0 && errno != EEXIST)
		return err_set(e, ERR_RUNTIME, "%s: cannot create: %s", p, strerror(errno));
	return 0;
}

/* ---- reading the committed data ---- */

static int costs_load(struct costs *c, const char *path, struct err *e)
{
	struct jv v = { path, e, NULL };
	const cJSON *rows;
	char p[JPATH_MAX], q[JPATH_MAX];

	memset(c, 0, sizeof(*c));
	c->root = json_load_file(path, e);
	if (!c->root)
		return -1;
	if (jv_array(&v, c->root, "", "rows", JV_REQUIRED, &rows) < 0)
		return -1;
	for (const cJSON *it = rows->child; it; it = it->next) {
		struct row *r = &c->rows[c->nrows];
		const cJSON *ratios;
		int i = 0;

		jpath_index(p, "rows", c->nrows);
		if (c->nrows == ROWS_MAX)
			return jv_fail(&v, p, "more than %d rows", ROWS_MAX);
		if (!cJSON_IsObject(it))
			return jv_fail(&v, p, "must be an object, not %s", json_type_name(it));
		if (jv_string(&v, it, p, "family", JV_REQUIRED | JV_NONEMPTY, NULL, &r->family) < 0 ||
		    jv_int(&v, it, p, "seq_len", JV_REQUIRED, 1, 1L << 30, 0, &r->seq_len) < 0 ||
		    jv_int(&v, it, p, "vocab", JV_REQUIRED, 1, 1L << 30, 0, &r->vocab) < 0 ||
		    jv_array(&v, it, p, "ratios", JV_REQUIRED, &ratios) < 0)
			return -1;
		jpath_key(q, p, "ratios");
		if (cJSON_GetArraySize(ratios) != 9)
			return jv_fail(&v, q, "must have 9 entries (got %d)", cJSON_GetArraySize(ratios));
		for (const cJSON *x = ratios->child; x; x = x->next, i++) {
			char xp[JPATH_MAX];

			jpath_index(xp, q, i);
			if (jv_number_value(&v, x, xp, 0, 0, 1e6, &r->r[i]) < 0)
				return -1;
		}
		c->nrows++;
	}
	return 0;
}

/* The row of family at seq_len whose vocab is nearest to vocab (the first on a tie). */
static const struct row *costs_row(const struct costs *c, const char *family, long seq_len,
                                   long vocab, struct err *e)
{
	const struct row *best = NULL;

	for (int i = 0; i < c->nrows; i++) {
		const struct row *r = &c->rows[i];

		if (strcmp(r->family, family) != 0 || r->seq_len != seq_len)
			continue;
		if (!best || labs(r->vocab - vocab) < labs(best->vocab - vocab))
			best = r;
	}
	if (!best)
		err_set(e, ERR_INPUT, "relative-costs.json: no %s row at seq_len %ld", family, seq_len);
	return best;
}

/* Reads "X", "X+E" or "X+H" into l. */
static int parse_arch(const char *s, struct prof_layer *l)
{
	if (!s[0] || s[0] == '+')
		return -1;
	l->letter = s[0];
	for (s++; *s; s += 2) {
		if (s[0] != '+' || (s[1] != 'E' && s[1] != 'H'))
			return -1;
		if (s[1] == 'E')
			l->emb = true;
		else
			l->head = true;
	}
	return l->emb && l->head ? -1 : 0;
}

static int profile_load(struct profile *pr, const char *path, struct err *e)
{
	struct jv v = { path, e, NULL };
	const cJSON *layers;
	cJSON *root;
	char p[JPATH_MAX], q[JPATH_MAX];
	int r = -1, i = 0;

	memset(pr, 0, sizeof(*pr));
	root = json_load_file(path, e);
	if (!root)
		return -1;
	if (jv_int(&v, root, "", "seq_len", JV_REQUIRED, 1, 1L << 24, 0, &pr->seq_len) < 0 ||
	    jv_int(&v, root, "", "micro_batch_size", 0, 1, 1L << 20, 1, &pr->mbs) < 0 ||
	    jv_array(&v, root, "", "layers", JV_REQUIRED, &layers) < 0)
		goto out;
	pr->n = cJSON_GetArraySize(layers);
	if (pr->n < 2) {
		jv_fail(&v, "layers", "must list at least two layers");
		goto out;
	}
	pr->l = calloc((size_t)pr->n, sizeof(*pr->l));
	if (!pr->l) {
		err_set(e, ERR_RUNTIME, "%s: out of memory", path);
		goto out;
	}
	for (const cJSON *it = layers->child; it; it = it->next, i++) {
		struct prof_layer *l = &pr->l[i];
		const char *arch;

		jpath_index(p, "layers", i);
		if (!cJSON_IsObject(it)) {
			jv_fail(&v, p, "must be an object, not %s", json_type_name(it));
			goto out;
		}
		if (jv_string(&v, it, p, "arch", JV_REQUIRED | JV_NONEMPTY, NULL, &arch) < 0 ||
		    jv_number(&v, it, p, "f_ms", JV_REQUIRED, 0, 1e6, 0, &l->f_ms) < 0 ||
		    jv_number(&v, it, p, "b_full_ms", JV_REQUIRED, 0, 1e6, 0, &l->bw_ms) < 0)
			goto out;
		jpath_key(q, p, "arch");
		if (parse_arch(arch, l) < 0) {
			jv_fail(&v, q, "must be a letter, optionally with +E or +H (got \"%s\")", arch);
			goto out;
		}
		if ((l->emb && i != 0) || (l->head && i != pr->n - 1)) {
			jv_fail(&v, q, "the embedding must be on the first layer and the head on the last");
			goto out;
		}
	}
	r = 0;
out:
	cJSON_Delete(root);
	if (r < 0) {
		free(pr->l);
		pr->l = NULL;
	}
	return r;
}

/* ---- models ---- */

static const struct letter *find_letter(const struct spec *s, char c)
{
	for (int i = 0; i < LETTERS_MAX && s->letters[i].arch; i++)
		if (s->letters[i].arch == c)
			return &s->letters[i];
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median f and full backward of the plain layers of one letter; -1 when there are none. */
static int median_of(const struct profile *pr, char letter, double *f, double *bw)
{
	double *fs = malloc((size_t)pr->n * sizeof(*fs)), *bs = malloc((size_t)pr->n * sizeof(*bs));
	int n = 0;

	if (!fs || !bs) {
		free(fs);
		free(bs);
		return -1;
	}
	for (int i = 0; i < pr->n; i++) {
		if (pr->l[i].letter != letter || pr->l[i].emb || pr->l[i].head)
			continue;
		fs[n] = pr->l[i].f_ms;
		bs[n++] = pr->l[i].bw_ms;
	}
	if (n) {
		qsort(fs, (size_t)n, sizeof(*fs), cmp_double);
		qsort(bs, (size_t)n, sizeof(*bs), cmp_double);
		*f = n % 2 ? fs[n / 2] : (fs[n / 2 - 1] + fs[n / 2]) / 2;
		*bw = n % 2 ? bs[n / 2] : (bs[n / 2 - 1] + bs[n / 2]) / 2;
	}
	free(fs);
	free(bs);
	return n ? 0 : -1;
}

static int share_of(const struct costs *c, const struct share_ref *ref, long seq_len, long vocab,
                    double *share, const struct row **row, struct err *e)
{
	const struct row *r;
	double b, w;

	*row = NULL;
	if (!ref->family) {
		*share = 0.5;
		return 0;
	}
	r = costs_row(c, ref->family, seq_len, vocab, e);
	if (!r)
		return -1;
	b = r->r[3 * ref->triple + 1];
	w = r->r[3 * ref->triple + 2];
	if (b + w <= 0)
		return err_set(e, ERR_INPUT, "relative-costs.json: the %s row at seq_len %ld, vocab %ld "
		               "has no backward for triple %d", r->family, r->seq_len, r->vocab,
		               (int)ref->triple);
	*share = w / (b + w);
	*row = r;
	return 0;
}

static void print_share(const char *model, const char *what, const struct share_ref *ref,
                        const struct row *r, double share)
{
	static const char *const triple_names[] = { "layer", "moe/mamba", "head" };

	if (r)
		printf("  %-20s %-31s %-9s %5ld %7ld %-9s %5.2f %5.2f %6.4f\n", model, what,
		       r->family, r->seq_len, r->vocab, triple_names[ref->triple],
		       r->r[3 * ref->triple + 1], r->r[3 * ref->triple + 2], share);
	else
		printf("  %-20s %-31s %-45s %6.4f\n", model, what, "zero-bubble theory, W = B", share);
}

/* Splits a full backward: base (at most base_bw) with share s_base, the rest with s_extra. */
static void split_backward(double bw, double base_bw, double s_base, double s_extra,
                           double *b, double *w)
{
	double extra = bw > base_bw ? bw - base_bw : 0;
	double wx = (bw - extra) * s_base + extra * s_extra;

	*b = round3(bw - wx);
	*w = round3(bw - *b);
}

/* What a model run reports after the share table. */
struct fold {
	char kind[128];
	double f, bw, base_f, base_bw, b, w;
};

struct totals {
	double params, public_params;
	int nfold;
	struct fold fold[2];
};

static int build_model(const struct spec *s, const struct profile *pr, const struct costs *c,
                       const char *out, struct totals *t, struct err *e)
{
	const struct sample_arch *a = &s->a;
	uint64_t tok = (uint64_t)pr->seq_len * (uint64_t)pr->mbs;
	double shares[LETTERS_MAX], head_share;
	const struct row *row;
	struct model m;
	int r = -1;

	memset(&m, 0, sizeof(m));
	for (int i = 0; i < LETTERS_MAX && s->letters[i].arch; i++) {
		const struct letter *lt = &s->letters[i];

		if (share_of(c, &lt->share, pr->seq_len, a->vocab, &shares[i], &row, e) < 0)
			return -1;
		print_share(s->name, lt->what, &lt->share, row, shares[i]);
	}
	if (share_of(c, &s->head, pr->seq_len, a->vocab, &head_share, &row, e) < 0)
		return -1;
	print_share(s->name, "head extra", &s->head, row, head_share);
	printf("  %-20s %-31s %-45s %6.4f\n", s->name, "embedding extra", "all W (scatter-add)", 1.0);

	m.name = strdup(s->name);
	m.seq_len = pr->seq_len;
	m.micro_batch_size = pr->mbs;
	m.nlayers = pr->n;
	m.layers = calloc((size_t)pr->n, sizeof(*m.layers));
	if (!m.name || !m.layers)
		goto oom;
	t->params = 0;
	t->nfold = 0;
	for (int i = 0; i < pr->n; i++) {
		const struct prof_layer *pl = &pr->l[i];
		const struct letter *lt = find_letter(s, pl->letter);
		struct layer *l = &m.layers[i];
		double base_f = pl->f_ms, base_bw = pl->bw_ms, s_base;
		struct mem mm;
		char kind[128];

		if (!lt) {
			err_set(e, ERR_INPUT, "%s: layers[%d].arch: letter '%c' is not known for this model",
			        s->name, i, pl->letter);
			goto fail;
		}
		s_base = shares[lt - s->letters];
		mm = block_mem(a, lt->parts);
		snprintf(kind, sizeof(kind), "%s%s%s", pl->emb ? "embedding+" : "", lt->kind,
		         pl->head ? "+head" : "");
		if ((pl->emb || pl->head) && median_of(pr, pl->letter, &base_f, &base_bw) < 0) {
			err_set(e, ERR_INPUT, "%s: layers[%d]: no other '%c' layer to take the base from",
			        s->name, i, pl->letter);
			goto fail;
		}
		l->kind = strdup(kind);
		if (!l->kind)
			goto oom;
		l->f_ms = pl->f_ms;
		split_backward(pl->bw_ms, base_bw, s_base, pl->emb ? 1.0 : head_share, &l->b_ms, &l->w_ms);
		if ((pl->emb || pl->head) && t->nfold < 2) {
			struct fold *fd = &t->fold[t->nfold++];

			*fd = (struct fold){ .f = pl->f_ms, .bw = pl->bw_ms, .base_f = base_f,
			                     .base_bw = base_bw, .b = l->b_ms, .w = l->w_ms };
			snprintf(fd->kind, sizeof(fd->kind), "%s", kind);
		}
		if (pl->emb)
			embedding_mem(a, &mm);
		if (pl->head)
			head_mem(a, &mm);
		l->param_bytes = 2 * mm.params;
		l->act_bytes = tok * mm.act;
		l->act_w_bytes = tok * mm.act_w < l->act_bytes ? tok * mm.act_w : l->act_bytes;
		l->out_bytes = i == pr->n - 1 ? 0 : tok * (uint64_t)a->h * 2;
		t->params += (double)mm.params;
	}
	/* The published layout, for the sanity table only. */
	t->public_params = t->params;
	if (s->public_layout) {
		size_t n = strlen(s->public_layout);
		struct mem mm = { 0, 0, 0 };

		for (size_t i = 0; i < n; i++) {
			const struct letter *lt = find_letter(s, s->public_layout[i]);

			if (lt)
				mm.params += block_mem(a, lt->parts).params;
		}
		embedding_mem(a, &mm);
		head_mem(a, &mm);
		t->public_params = (double)mm.params;
	}
	r = model_save(&m, out, e);
	goto fail;
oom:
	err_set(e, ERR_RUNTIME, "%s: out of memory", out);
fail:
	model_release(&m);
	return r;
}

/* ---- clusters ---- */

/* What a GPU's datasheet says; efficiency is the runtime's (samples/runtimes). */
struct gpu_sheet {
	const char *gpu;
	uint64_t mem_bytes;
	double peak_tflops, hbm_gbytes_per_s, nvlink, nic;
	const char *source;
};

static const struct gpu_sheet H200 = { "H200", 141000000000ULL, 989.4, 4800, 450, 50,
	"H200 SXM datasheet: 989.4 TFLOP/s dense BF16, 4.8 TB/s HBM3e, NVLink 4 450 GB/s a direction, "
	"one 400 Gb/s NIC a GPU" };
static const struct gpu_sheet H100 = { "H100", 80000000000ULL, 989.4, 3350, 450, 50,
	"H100 SXM5 datasheet: 989.4 TFLOP/s dense BF16, 3.35 TB/s HBM3, NVLink 4 450 GB/s a direction, "
	"one 400 Gb/s NIC a GPU" };
static const struct gpu_sheet A100 = { "A100", 80000000000ULL, 312, 2039, 300, 25,
	"A100 SXM4 80 GB datasheet: 312 TFLOP/s dense BF16, 2.039 TB/s HBM2e, NVLink 3 300 GB/s a direction, "
	"one 200 Gb/s NIC a GPU" };

struct cluster_spec {
	const char *name;
	const struct gpu_sheet *sheet;
	int devices;
};

static const struct cluster_spec clusters[] = {
	{ "4xH200", &H200, 4 },
	{ "8xH200", &H200, 8 },
	{ "16xH200", &H200, 16 },
	{ "32xH200", &H200, 32 },
	{ "64xH200", &H200, 64 },
	{ "8xH100", &H100, 8 },
	{ "64xH100", &H100, 64 },
	{ "64xA100", &A100, 64 },
};

#define GPUS_PER_NODE 8

static int build_cluster(const struct cluster_spec *cs, const char *out, struct err *e)
{
	struct cluster c;
	int r = -1;

	memset(&c, 0, sizeof(c));
	c.name = strdup(cs->name);
	c.gpu = strdup(cs->sheet->gpu);
	c.device_speed = malloc((size_t)cs->devices * sizeof(*c.device_speed));
	hardware_default(&c.hw);
	c.hw.source = strdup(cs->sheet->source);
	if (!c.name || !c.gpu || !c.device_speed || !c.hw.source) {
		err_set(e, ERR_RUNTIME, "%s: out of memory", out);
		goto out;
	}
	c.devices = cs->devices;
	c.gpus_per_node = GPUS_PER_NODE;
	c.mem_bytes = cs->sheet->mem_bytes;
	c.has_hw = true;
	c.hw.peak_tflops = cs->sheet->peak_tflops;
	c.hw.hbm_gbytes_per_s = cs->sheet->hbm_gbytes_per_s;
	c.mem_headroom = 0.05;
	c.speed = 1.0;
	for (int d = 0; d < c.devices; d++)
		c.device_speed[d] = c.speed;
	/* NVLink through NVSwitch; InfiniBand, one port per GPU */
	c.intra = (struct link){ cs->sheet->nvlink, 5 };
	if (c.devices > c.gpus_per_node)
		c.inter = (struct link){ cs->sheet->nic, 10 };
	r = cluster_save(&c, out, e);
out:
	cluster_release(&c);
	return r;
}

/* ---- the 1F1B plan ---- */

#define PLAN_MODEL "gpt-13b"
#define PLAN_CLUSTER "4xH200"
#define PLAN_MICROBATCHES 8

static void push_action(struct plan *p, int *n, int stage, int mb, enum op_kind k)
{
	p->order[*n] = (struct action){ .stage = stage, .mb = mb, .kind = (uint8_t)k };
	(*n)++;
}

static int build_plan(const char *srcdir, const char *out, struct err *e)
{
	char mpath[PATH_LEN], cpath[PATH_LEN];
	int m = PLAN_MICROBATCHES, n = 0, per, r = -1;
	struct plan p;

	memset(&p, 0, sizeof(p));
	if (path_join(mpath, srcdir, "samples/models/" PLAN_MODEL ".json", e) < 0 ||
	    path_join(cpath, srcdir, "samples/clusters/" PLAN_CLUSTER ".json", e) < 0)
		return -1;
	p.name = strdup(PLAN_MODEL " 1f1b");
	p.model_ref = strdup("../samples/models/" PLAN_MODEL ".json");
	p.cluster_ref = strdup("../samples/clusters/" PLAN_CLUSTER ".json");
	if (!p.name || !p.model_ref || !p.cluster_ref)
		goto oom;
	if (model_load(&p.model, mpath, e) < 0 || cluster_load(&p.cluster, cpath, e) < 0)
		goto out;
	p.microbatches = m;
	p.split_backward = false;
	p.comm = PLAN_COMM_BLOCKING;  /* Megatron-LM's 1F1B blocks on its sends, as `plan` writes it */
	p.ndevices = p.cluster.devices;
	p.nstages = p.ndevices;
	if (p.model.nlayers % p.nstages) {
		err_set(e, ERR_INPUT, "%s: %d layers do not split evenly into %d stages", mpath,
		        p.model.nlayers, p.nstages);
		goto out;
	}
	per = p.model.nlayers / p.nstages;
	p.stages = calloc((size_t)p.nstages, sizeof(*p.stages));
	p.order_start = calloc((size_t)p.ndevices + 1, sizeof(*p.order_start));
	p.order = calloc((size_t)p.nstages * (size_t)m * 2, sizeof(*p.order));
	if (!p.stages || !p.order_start || !p.order)
		goto oom;
	/* Stage d on device d; PipeDream-flush: warm-up forwards, then one F one B, then drain. */
	for (int d = 0; d < p.ndevices; d++) {
		int warm = p.nstages - 1 - d < m ? p.nstages - 1 - d : m, f = 0, b = 0;

		p.stages[d] = (struct stage){ d * per, d * per + per - 1, d, RECOMPUTE_NONE };
		p.order_start[d] = n;
		while (f < warm)
			push_action(&p, &n, d, f++, OP_F);
		while (f < m) {
			push_action(&p, &n, d, f++, OP_F);
			push_action(&p, &n, d, b++, OP_B);
		}
		while (b < m)
			push_action(&p, &n, d, b++, OP_B);
	}
	p.order_start[p.ndevices] = n;
	r = plan_save(&p, out, false, e);
	goto out;
oom:
	err_set(e, ERR_RUNTIME, "%s: out of memory", out);
out:
	plan_release(&p);
	return r;
}

/* ---- main ---- */

static int run(const char *srcdir, struct err *e)
{
	struct totals tot[NSPECS];
	char path[PATH_LEN], rel[PATH_LEN];
	struct costs *c;
	int r = -1;

	c = calloc(1, sizeof(*c));
	if (!c)
		return err_set(e, ERR_RUNTIME, "out of memory");
	if (path_join(path, srcdir, "samples/profiles/relative-costs.json", e) < 0 ||
	    costs_load(c, path, e) < 0)
		goto out;
	if (make_dir(srcdir, "samples/models", e) < 0 || make_dir(srcdir, "samples/clusters", e) < 0 ||
	    make_dir(srcdir, "plans", e) < 0)
		goto out;

	printf("W shares, W / (B + W), by layer class:\n");
	printf("  %-20s %-31s %-9s %5s %7s %-9s %5s %5s %6s\n", "model", "class", "row", "seq",
	       "vocab", "triple", "B", "W", "share");
	for (int i = 0; i < NSPECS; i++) {
		struct profile pr;

		snprintf(rel, sizeof(rel), "samples/profiles/%s.json", specs[i].name);
		if (path_join(path, srcdir, rel, e) < 0 || profile_load(&pr, path, e) < 0)
			goto out;
		snprintf(rel, sizeof(rel), "samples/models/%s.json", specs[i].name);
		if (path_join(path, srcdir, rel, e) < 0 ||
		    build_model(&specs[i], &pr, c, path, &tot[i], e) < 0) {
			free(pr.l);
			goto out;
		}
		free(pr.l);
	}

	printf("\nfolded layers: measured = base (median of the other layers of the letter) + extra:\n");
	printf("  %-20s %-24s %7s %7s %7s %7s %7s %7s %7s %7s\n", "model", "layer", "f", "bw",
	       "base f", "base bw", "extra f", "extra bw", "b", "w");
	for (int i = 0; i < NSPECS; i++)
		for (int j = 0; j < tot[i].nfold; j++) {
			const struct fold *fd = &tot[i].fold[j];

			printf("  %-20s %-24s %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f\n",
			       specs[i].name, fd->kind, fd->f, fd->bw, fd->base_f, fd->base_bw,
			       fd->f > fd->base_f ? fd->f - fd->base_f : 0,
			       fd->bw > fd->base_bw ? fd->bw - fd->base_bw : 0, fd->b, fd->w);
		}

	printf("\nparameters (weights only):\n");
	printf("  %-20s %12s %14s %9s  %s\n", "model", "computed", "public layout", "known", "reference");
	for (int i = 0; i < NSPECS; i++)
		printf("  %-20s %11.3fB %13.3fB %8.1fB  %s\n", specs[i].name, tot[i].params / 1e9,
		       tot[i].public_params / 1e9, specs[i].known_params / 1e9, specs[i].known);

	for (size_t i = 0; i < sizeof(clusters) / sizeof(clusters[0]); i++) {
		snprintf(rel, sizeof(rel), "samples/clusters/%s.json", clusters[i].name);
		if (path_join(path, srcdir, rel, e) < 0 || build_cluster(&clusters[i], path, e) < 0)
			goto out;
	}
	if (path_join(path, srcdir, "plans/" PLAN_MODEL "-" PLAN_CLUSTER "-1f1b.json", e) < 0 ||
	    build_plan(srcdir, path, e) < 0)
		goto out;
	r = 0;
out:
	cJSON_Delete(c->root);
	free(c);
	return r;
}

int main(int argc, char **argv)
{
	struct err e = ERR_INIT;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: mksamples SRCDIR\n\n"
		       "Regenerates SRCDIR/samples/models, SRCDIR/samples/clusters and the bundled\n"
		       "plans from the profiles in SRCDIR/samples/profiles.\n");
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: mksamples SRCDIR\n");
		return 2;
	}
	if (run(argv[1], &e) < 0) {
		fprintf(stderr, "mksamples: %s\n", e.msg);
		return e.cls == ERR_INPUT ? 2 : 1;
	}
	return 0;
}
