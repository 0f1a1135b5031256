/*
 * octopipe fidelity — the cost model against published training runs: each point of a
 * points file (default: the bundled samples/published/points.json) predicted at its
 * published layout and set beside what its authors measured. A table, or --json.
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fidelity.h"
#include "json.h"
#include "runtime.h"

static void usage(FILE *f)
{
	fputs("usage: octopipe fidelity [POINTS] [--runtime R] [--json]\n"
	      "\n"
	      "Predicts every published, measured training run of POINTS (an octopipe.points/1\n"
	      "file, or the same without \"format\" as the project's shared data writes it;\n"
	      "default: the bundled samples/published/points.json, with its sources) at\n"
	      "the layout its authors ran: the config in configs/ beside POINTS priced by\n"
	      "`cost` under the point's runtime on a cluster of its GPUs (datasheet peak, HBM,\n"
	      "NVLink, one NIC per GPU), the published layout planned and simulated. Prints\n"
	      "predicted and published tokens/s per GPU, their ratio, whether it fits, and the\n"
	      "median and worst error. Where a source leaves the micro-batch open, the fastest\n"
	      "option that fits is predicted. Nothing is fitted to the points.\n"
	      "\n"
	      "  --runtime R   price every point under runtime R instead of its own\n"
	      "  --json        print the table as JSON\n", f);
}

/* configs/NAME.json beside the points file */
static void config_path(const char *points, const char *name, char *out, size_t n)
{
	const char *slash = strrchr(points, '/');

	if (slash)
		snprintf(out, n, "%.*s/configs/%s.json", (int)(slash - points), points, name);
	else
		snprintf(out, n, "configs/%s.json", name);
}

/* A point's runtime: a bundled name as it is, a file as seen from the points file (as its
 * configs are), not from wherever the command runs. */
static const char *point_runtime(const char *points, const char *rt, char *out, size_t n)
{
	const char *slash = strrchr(points, '/');
	size_t len = strlen(rt);
	bool file = strchr(rt, '/') || (len > 5 && strcmp(rt + len - 5, ".json") == 0);

	if (!file || rt[0] == '/' || !slash)
		return rt;
	snprintf(out, n, "%.*s/%s", (int)(slash - points), points, rt);
	return out;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* the median and worst |ratio - 1| of the n points that ran */
static void summary(const double *errs, int n, double *median, double *worst)
{
	double *s = malloc((size_t)(n > 0 ? n : 1) * sizeof(*s));

	*median = *worst = NAN;
	if (!s || n == 0) {
		free(s);
		return;
	}
	memcpy(s, errs, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	*median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	*worst = s[n - 1];
	free(s);
}

static void layout_text(const struct fidelity_point *p, char *out, size_t n)
{
	char ep[16] = "";

	if (p->par.ep > 1)
		snprintf(ep, sizeof(ep), " ep%d", p->par.ep);
	snprintf(out, n, "tp%d pp%d dp%d%s z%d%s%s", p->par.tp, p->par.pp, p->par.dp, ep, p->par.zero,
	         p->sched == SCHED_INTERLEAVED ? " vp" : "",
	         p->recompute == RECOMPUTE_FULL ? " full" : p->recompute == RECOMPUTE_SELECTIVE ? " sel" : "");
}

static int predict_all(const struct fidelity_set *s, const char *points, const char *runtime_arg,
                       struct fidelity_result *res)
{
	for (int i = 0; i < s->npoints; i++) {
		const struct fidelity_point *p = &s->points[i];
		struct runtime rt;
		struct err e = ERR_INIT;
		char cfg[4096], rtp[4096];
		int rc;

		config_path(points, p->config, cfg, sizeof(cfg));
		if (runtime_arg) {
			if ((rc = cli_load_runtime(runtime_arg, &rt)) != 0)
				return rc;
		} else if (runtime_load(&rt, cli_resolve(point_runtime(points, p->runtime, rtp, sizeof(rtp)),
		                                         "samples/runtimes"), &e) < 0) {
			char pre[4200];

			snprintf(pre, sizeof(pre), "%s: points[%d].runtime", points, i);
			err_prefix(&e, pre);
			return cli_report(&e);
		}
		if (fidelity_predict(s, p, cfg, &rt, &res[i], &e) < 0) {
			runtime_release(&rt);
			char pre[256];

			snprintf(pre, sizeof(pre), "point '%s'", p->id);
			err_prefix(&e, pre);
			return cli_report(&e);
		}
		runtime_release(&rt);
	}
	return EXIT_OK;
}

static int print_json(const struct fidelity_set *s, const struct fidelity_result *res, double median, double worst,
                      int oom)
{
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *arr = jw_arr(&w, root, "points");

	for (int i = 0; i < s->npoints; i++) {
		const struct fidelity_point *p = &s->points[i];
		cJSON *o = jw_push(&w, arr, cJSON_CreateObject());

		jw_str(&w, o, "id", p->id);
		jw_str(&w, o, "runtime", p->runtime);
		jw_num(&w, o, "gpus", p->gpus);
		jw_num(&w, o, "mbs", res[i].mbs);
		jw_num(&w, o, "predicted_tok_per_gpu", res[i].tok_per_gpu);
		jw_num(&w, o, "published_tok_per_gpu", p->pub_tok);
		jw_num(&w, o, "ratio", res[i].ratio);
		jw_bool(&w, o, "fits", res[i].fits);
		jw_num(&w, o, "iteration_ms", res[i].makespan_ms);
		jw_num(&w, o, "peak_bytes", res[i].peak_bytes);
		jw_str(&w, o, "source", p->source);
	}
	jw_num(&w, root, "median_abs_error", median);
	jw_num(&w, root, "worst_abs_error", worst);
	jw_num(&w, root, "out_of_memory", oom);
	return cli_put_json(root, w.oom);
}

int cmd_fidelity(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "runtime", required_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *runtime_arg = NULL, *points;
	struct fidelity_set s;
	struct fidelity_result *res;
	struct err e = ERR_INIT;
	double *errs, median, worst;
	bool json = false;
	int ch, rc, n = 0, oom = 0;
	char path[4096];

	optind = 0;
	while ((ch = cli_getopt("fidelity", argc, argv, "h", opts)) != -1) {
		switch (ch) {
		case 'R': runtime_arg = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return EXIT_OK;
		default: return EXIT_INPUT;
		}
	}
	if (argc - optind > 1)
		return cli_usage_error("fidelity", "one points file at a time");
	points = argc - optind == 1 ? argv[optind] : "points";
	snprintf(path, sizeof(path), "%s", cli_resolve(points, "samples/published"));
	if (fidelity_load(&s, path, &e) < 0)
		return cli_report(&e);
	res = calloc((size_t)(s.npoints > 0 ? s.npoints : 1), sizeof(*res));
	errs = calloc((size_t)(s.npoints > 0 ? s.npoints : 1), sizeof(*errs));
	if (!res || !errs) {
		free(res);
		free(errs);
		fidelity_release(&s);
		err_set(&e, ERR_RUNTIME, "out of host memory");
		return cli_report(&e);
	}
	rc = predict_all(&s, path, runtime_arg, res);
	for (int i = 0; rc == EXIT_OK && i < s.npoints; i++) {
		errs[n++] = fabs(res[i].ratio - 1);
		oom += !res[i].fits;
	}
	summary(errs, n, &median, &worst);
	if (rc == EXIT_OK && json) {
		rc = print_json(&s, res, median, worst, oom);
	} else if (rc == EXIT_OK) {
		printf("%-22s %-13s %5s  %-22s %3s %11s %11s %6s %6s\n", "point", "runtime", "GPUs", "layout", "mbs",
		       "predicted", "published", "ratio", "fits");
		for (int i = 0; i < s.npoints; i++) {
			char lay[64];

			layout_text(&s.points[i], lay, sizeof(lay));
			printf("%-22.22s %-13.13s %5d  %-22.22s %3d %11.1f %11.1f %6.3f %6s\n", s.points[i].id,
			       runtime_arg ? runtime_arg : s.points[i].runtime, s.points[i].gpus, lay, res[i].mbs,
			       res[i].tok_per_gpu, s.points[i].pub_tok, res[i].ratio, res[i].fits ? "yes" : "OOM");
		}
		printf("tokens/s per GPU over %d published runs: median error %.1f%%, worst %.1f%%, %d called out of "
		       "memory\n", n, 100 * median, 100 * worst, oom);
	}
	free(res);
	free(errs);
	fidelity_release(&s);
	return rc;
}
