/*
 * doc — kind detection, loading and one-line descriptions of OctoPipe files (see doc.h).
 */
#include "config.h"
#include "doc.h"

#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "hfconfig.h"
#include "json.h"

static const struct {
	enum doc_kind kind;
	const char *prefix; /* "octopipe.<kind>/" */
	const char *name;
} kinds[] = {
	{ DOC_MODEL, "octopipe.model/", "model" },
	{ DOC_CLUSTER, "octopipe.cluster/", "cluster" },
	{ DOC_PLAN, "octopipe.plan/", "plan" },
	{ DOC_TIMELINE, "octopipe.timeline/", "timeline" },
	{ DOC_ARCH, "octopipe.arch/", "architecture" },
	{ DOC_RUNTIME, "octopipe.runtime/", "runtime" },
	{ DOC_POINTS, "octopipe.points/", "points" },
};

const char *doc_kind_name(enum doc_kind k)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind == k)
			return kinds[i].name;
	return "unknown";
}

#define DOC_FORMATS "octopipe.model/1, octopipe.cluster/1, octopipe.plan/1, octopipe.timeline/1, " \
	"octopipe.arch/1, octopipe.runtime/1 or octopipe.points/1"

int doc_load(struct doc *d, const char *path, struct err *e)
{
	struct jv v = { path, e, NULL };
	const char *format;
	char dir[4096];
	cJSON *root;
	int r = -1;

	memset(d, 0, sizeof(*d));
	root = json_load_file(path, e);
	if (!root)
		return -1;
	if (!cJSON_GetObjectItemCaseSensitive(root, "format") && cJSON_IsObject(root) &&
	    (cJSON_GetObjectItemCaseSensitive(root, "model_type") ||
	     cJSON_GetObjectItemCaseSensitive(root, "architectures"))) {
		/* a Hugging Face config.json, as `cost` reads it */
		d->kind = DOC_ARCH;
		r = hfconfig_read(&d->u.arch, root, path, e);
		goto out;
	}
	if (jv_string(&v, root, "", "format", JV_REQUIRED, NULL, &format) < 0)
		goto out;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strncmp(format, kinds[i].prefix, strlen(kinds[i].prefix)) == 0)
			d->kind = kinds[i].kind;
	switch (d->kind) {
	case DOC_MODEL:
		r = model_from_json(&d->u.model, root, path, NULL, e);
		break;
	case DOC_CLUSTER:
		r = cluster_from_json(&d->u.cluster, root, path, NULL, e);
		break;
	case DOC_PLAN:
		fileio_dirname(path, dir, sizeof(dir));
		r = plan_from_json(&d->u.plan, root, path, dir, e);
		break;
	case DOC_TIMELINE:
		r = timeline_from_json(&d->u.timeline, root, path, e);
		break;
	case DOC_ARCH:
		r = arch_from_json(&d->u.arch, root, path, e);
		break;
	case DOC_RUNTIME:
		r = runtime_from_json(&d->u.runtime, root, path, e);
		break;
	case DOC_POINTS: /* (its reader takes the file: read again, a few kB) */
		r = fidelity_load(&d->u.points, path, e);
		break;
	default:
		/* OctoPipe's own other formats are read where they are used, against a model */
		if (strncmp(format, "octopipe.steps/", 15) == 0 || strncmp(format, "octopipe.rules/", 15) == 0)
			jv_fail(&v, "format", "'%.60s' is not checked on its own: %s reads it (expected %s)", format,
			        format[9] == 's' ? "tui --steps or report --steps with its plan" : "import profile --rules",
			        DOC_FORMATS);
		else
			jv_fail(&v, "format", "'%.60s' is not an OctoPipe format (expected %s)", format, DOC_FORMATS);
	}
out:
	if (r < 0)
		d->kind = DOC_UNKNOWN;
	cJSON_Delete(root);
	return r;
}

void doc_release(struct doc *d)
{
	switch (d->kind) {
	case DOC_MODEL: model_release(&d->u.model); break;
	case DOC_CLUSTER: cluster_release(&d->u.cluster); break;
	case DOC_PLAN: plan_release(&d->u.plan); break;
	case DOC_TIMELINE: timeline_release(&d->u.timeline); break;
	case DOC_ARCH: arch_release(&d->u.arch); break;
	case DOC_RUNTIME: runtime_release(&d->u.runtime); break;
	case DOC_POINTS: fidelity_release(&d->u.points); break;
	default: break;
	}
	d->kind = DOC_UNKNOWN;
}

void fmt_bytes(struct strbuf *sb, double b)
{
	static const char *const unit[] = { "B", "kB", "MB", "GB", "TB", "PB" };
	int u = 0;

	while (b >= 1000 && u < 5) {
		b /= 1000;
		u++;
	}
	if (u == 0)
		strbuf_addf(sb, "%.0f B", b);
	else
		strbuf_addf(sb, "%.*f %s", b < 10 ? 2 : b < 100 ? 1 : 0, b, unit[u]);
}

int fmt_gb_decimals(double x, double y, int least)
{
	int dec = least;
	char a[64], b[64];

	for (; dec < 9 && x != y; dec++) {
		snprintf(a, sizeof(a), "%.*f", dec, x / 1e9);
		snprintf(b, sizeof(b), "%.*f", dec, y / 1e9);
		if (strcmp(a, b) != 0)
			break;
	}
	return dec;
}

int fmt_bytes_alike(double x, double y)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	bool alike;

	fmt_bytes(&a, x);
	fmt_bytes(&b, y);
	alike = x != y && !strbuf_failed(&a) && !strbuf_failed(&b) && strcmp(a.buf, b.buf) == 0;
	strbuf_release(&a);
	strbuf_release(&b);
	return alike ? fmt_gb_decimals(x, y, 2) : -1;
}

void fmt_bytes_apart(struct strbuf *a, struct strbuf *b, double x, double y)
{
	int dec = fmt_bytes_alike(x, y);

	if (dec < 0) {
		fmt_bytes(a, x);
		fmt_bytes(b, y);
		return;
	}
	/* rounded alike ("134 GB" and "134 GB"): in GB, as many decimals as tell them apart */
	strbuf_addf(a, "%.*f GB", dec, x / 1e9);
	strbuf_addf(b, "%.*f GB", dec, y / 1e9);
}

void fmt_ms(struct strbuf *sb, double ms)
{
	if (ms >= 10000)
		strbuf_addf(sb, "%.1f s", ms / 1000);
	else if (ms >= 1000)
		strbuf_addf(sb, "%.2f s", ms / 1000);
	else if (ms >= 10)
		strbuf_addf(sb, "%.1f ms", ms);
	else
		strbuf_addf(sb, "%.2f ms", ms);
}

static void describe_model(const struct model *m, struct strbuf *sb)
{
	struct model_kind_stats t = model_totals(m), *ks;
	int nk = 0;

	strbuf_addf(sb, "model '%s': %d layers", m->name, m->nlayers);
	ks = model_kind_stats(m, &nk);
	if (ks && nk > 1 && nk <= 6) {
		strbuf_addstr(sb, " (");
		for (int i = 0; i < nk; i++)
			strbuf_addf(sb, "%s%d %s", i ? ", " : "", ks[i].count, ks[i].kind);
		strbuf_addch(sb, ')');
	} else if (ks && nk > 6) {
		strbuf_addf(sb, " of %d kinds", nk);
	}
	free(ks);
	strbuf_addf(sb, ", seq %ld x %ld; per microbatch F ", m->seq_len, m->micro_batch_size);
	fmt_ms(sb, t.f_ms);
	strbuf_addstr(sb, ", B ");
	fmt_ms(sb, t.b_ms);
	strbuf_addstr(sb, ", W ");
	fmt_ms(sb, t.w_ms);
	strbuf_addstr(sb, "; weights ");
	fmt_bytes(sb, (double)t.param_bytes);
}

static void describe_cluster(const struct cluster *c, struct strbuf *sb)
{
	strbuf_addf(sb, "cluster '%s': %d %s%sdevices", c->name, c->devices, c->gpu ? c->gpu : "",
	            c->gpu ? " " : "");
	strbuf_addf(sb, " (%d node%s of %d), ", cluster_nodes(c), cluster_nodes(c) == 1 ? "" : "s",
	            c->gpus_per_node);
	fmt_bytes(sb, (double)c->mem_bytes);
	strbuf_addf(sb, " each; intra-node %g GB/s + %g us", c->intra.gbytes_per_s, c->intra.latency_us);
	if (cluster_nodes(c) > 1)
		strbuf_addf(sb, ", inter-node %g GB/s + %g us", c->inter.gbytes_per_s, c->inter.latency_us);
	if (c->op_overhead_us > 0)
		strbuf_addf(sb, "; %g us per op", c->op_overhead_us);
}

static void describe_plan(const struct plan *p, struct strbuf *sb)
{
	int max_per_dev = 0, used = 0, *count = calloc((size_t)p->ndevices, sizeof(*count));

	/* one pass over the stages (a plan may have tens of thousands of devices) */
	for (int s = 0; count && s < p->nstages; s++)
		count[p->stages[s].device]++;
	for (int d = 0; count && d < p->ndevices; d++) {
		used += count[d] > 0;
		if (count[d] > max_per_dev)
			max_per_dev = count[d];
	}
	free(count);
	strbuf_addstr(sb, "plan");
	if (p->name)
		strbuf_addf(sb, " '%s'", p->name);
	strbuf_addf(sb, ": model '%s' on cluster '%s', %d stage%s on %d of %d device%s",
	            p->model.name, p->cluster.name, p->nstages, p->nstages == 1 ? "" : "s", used, p->ndevices,
	            p->ndevices == 1 ? "" : "s");
	if (max_per_dev > 1)
		strbuf_addf(sb, " (up to %d per device)", max_per_dev);
	strbuf_addf(sb, ", %d microbatch%s, %s backward, %ld ops", p->microbatches, p->microbatches == 1 ? "" : "es",
	            p->split_backward ? "split" : "fused", plan_total_ops(p));
}

static void describe_timeline(const struct timeline *t, struct strbuf *sb)
{
	strbuf_addf(sb, "timeline (%s): %d devices, %ld ops, %ld transfers, ", t->source,
	            t->ndevices, timeline_total_ops(t), t->nxfers);
	if (t->has_metrics) {
		strbuf_addstr(sb, "iteration ");
		fmt_ms(sb, t->metrics.makespan_ms);
		strbuf_addf(sb, ", bubble %.1f%%", 100 * t->metrics.bubble_ratio);
	} else {
		strbuf_addstr(sb, "ends at ");
		fmt_ms(sb, timeline_end_ms(t));
	}
}

static void describe_arch(const struct arch *a, struct strbuf *sb)
{
	struct arch_totals t;
	long seq = a->seq_len > 0 ? a->seq_len : 4096;

	arch_totals(a, seq, &t);
	strbuf_addf(sb, "architecture '%s'", a->name ? a->name : "?");
	if (a->family && strcmp(a->family, "octopipe.arch") != 0)
		strbuf_addf(sb, " (a Hugging Face config, %s)", a->family);
	strbuf_addf(sb, ": %d layers, ", a->nlayers);
	if (t.params >= 1e9)
		strbuf_addf(sb, "%.3f B parameters (%.3f B active)", t.params / 1e9, t.active / 1e9);
	else
		strbuf_addf(sb, "%.3f M parameters (%.3f M active)", t.params / 1e6, t.active / 1e6);
	strbuf_addf(sb, ", %.4g GFLOP per token forward at sequence %ld", t.flops_per_token / 1e9, seq);
}

void doc_describe(const struct doc *d, struct strbuf *sb)
{
	switch (d->kind) {
	case DOC_MODEL: describe_model(&d->u.model, sb); break;
	case DOC_CLUSTER: describe_cluster(&d->u.cluster, sb); break;
	case DOC_PLAN: describe_plan(&d->u.plan, sb); break;
	case DOC_TIMELINE: describe_timeline(&d->u.timeline, sb); break;
	case DOC_ARCH: describe_arch(&d->u.arch, sb); break;
	case DOC_RUNTIME:
		strbuf_addf(sb, "runtime '%s': %d GPU table%s, %g us per launch%s", d->u.runtime.name,
		            d->u.runtime.ngpus, d->u.runtime.ngpus == 1 ? "" : "s", d->u.runtime.launch_us,
		            d->u.runtime.launch_async ? " (overlapped)" : "");
		break;
	case DOC_POINTS:
		strbuf_addf(sb, "published points: %d run%s on %d GPU model%s", d->u.points.npoints,
		            d->u.points.npoints == 1 ? "" : "s", d->u.points.ngpus, d->u.points.ngpus == 1 ? "" : "s");
		break;
	default: strbuf_addstr(sb, "unknown document"); break;
	}
}
