/*
 * octopipe calibrate TIMELINE -o MODEL — closes the loop between prediction and
 * measurement: fits per-stage, per-kind factors of the plan's layer costs to a measured
 * timeline (rescale.h), writes the rescaled model, and re-simulates the plan with it to
 * show how much of the iteration-time error the new costs explain.
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli/cli_args.h"
#include "cli/run_backend.h"
#include "fileio.h"
#include "json.h"
#include "rescale.h"
#include "sim.h"
#include "tlcheck.h"

static void usage(FILE *f)
{
	fputs("usage: octopipe calibrate [--plan PLAN] [--model MODEL] [--json]\n"
	      "                          [--fit-overhead --cluster-out CLUSTER] -o OUT TIMELINE\n"
	      "       octopipe calibrate --gpu [--reps N] [--json] -o OUT MODEL...\n"
	      "                          [--predict MODEL]...\n"
	      "       octopipe calibrate --gpu --ceilings [--reps N] [--json]\n"
	      "\n"
	      "Rescales the layer costs of a model from a measured timeline (octopipe run\n"
	      "--timeline-out, emu or cuda): for every stage of the plan and every op kind, the\n"
	      "measured durations over the predicted ones give a factor (least squares over the\n"
	      "microbatches) applied to that stage's layers. Writes the new model and reports\n"
	      "the iteration-time error of the simulation before and after.\n"
	      "\n"
	      "  -o, --out FILE   the recalibrated model (octopipe.model/1; \"-\" for stdout)\n"
	      "  --plan PLAN      the plan that ran (default: the timeline's \"plan\" field)\n"
	      "  --model MODEL    the model to rescale (default: the plan's model)\n"
	      "  --json           {\"measured_ms\", \"before\": {...}, \"after\": {...},\n"
	      "                    \"stages\": [...]}\n"
	      "  --fit-overhead   first fit the runtime's fixed cost per op (one scale per op\n"
	      "                   kind and one constant, over stages of different cost), then\n"
	      "                   the factors of the rest; --cluster-out writes the plan's\n"
	      "                   cluster with it (\"op_overhead_us\")\n"
	      "\n"
	      "--gpu MODEL: refits the cost model's efficiency of every kernel class (and the\n"
	      "launch overhead) to the GPU of this machine. Every kernel of each layer kind of\n"
	      "MODEL (made by octopipe cost: it has the architecture) runs alone with its true\n"
	      "shapes, forward and backward, --reps times (default 20; the median counts); the\n"
	      "least-squares fit of octopipe cost --calibrate turns times into efficiencies,\n"
	      "and OUT is MODEL re-priced with them (its source's hardware replaced). Needs the\n"
	      "cuda backend and a GPU; without one: one line (\"no GPU: why\") and exit 1.\n"
	      "It prints each class's efficiency before and after, then each kernel's predicted\n"
	      "and measured F and backward times (a miss attributed to its kernel). Several\n"
	      "MODELs are fitted together (each weighs the same; their tables must be priced\n"
	      "for one GPU) and OUT is a directory (made when missing) that gets each one\n"
	      "re-priced as NAME.json; --predict MODEL (repeatable) is re-priced there with\n"
	      "the fit but not benchmarked: a prediction for a model the fit has not seen.\n"
	      "\n"
	      "--gpu --ceilings: what this GPU reaches, each kernel alone on random data via\n"
	      "the cuda backend's own launches: bf16 GEMMs by shape, an HBM copy, attention\n"
	      "cores (causal, windowed), the SSD's GEMM and the scan's FMAs; a table with the\n"
	      "mode that produced each row (gpu).\n"
	      "\n"
	      "The prediction is of OctoPipe's executor, which overlaps transfers: a measured\n"
	      "run is compared with the plan simulated that way, whatever its \"comm\"; a run\n"
	      "whose timeline says it left the plan's collectives out (\"not_run\": the cuda\n"
	      "backend at tp > 1, ep > 1 or ZeRO 3) with the plan priced without them.\n"
	      "\n"
	      "exit status: 0 ok, 1 runtime failure (--gpu: no GPU or no cuda backend), 2 bad\n"
	      "input (a timeline of another plan; --gpu: a model without an architecture),\n"
	      "3 the plan cannot be simulated\n", f);
}

/* Makes m (taken over) the plan's model. A plan with a layout prices its replica from the
 * files' own model: that is replaced and the replica re-derived from it. */
static int set_model(struct plan *p, struct model *m, struct err *e)
{
	if (p->has_parallel) {
		struct parallel cur = p->par;

		model_release(&p->src_model);
		p->src_model = *m;
		return plan_set_parallel(p, &cur, e);
	}
	model_release(&p->model);
	p->model = *m;
	return 0;
}

/* p priced without the collectives a measured run left out (plan_drop_collectives). */
static int drop_collectives(struct plan *p, struct err *e)
{
	bool changed;

	return plan_drop_collectives(p, &changed, e);
}

/* Iteration time of plan p as the executor runs it (one replica, no data-parallel sync);
 * -1 after printing the error. */
static double simulate(const struct plan *p, const char *path, int *rc)
{
	struct sim s;
	struct sim_opts so;
	struct metrics m;
	struct err e = ERR_INIT;
	double ms = -1;

	memset(&s, 0, sizeof(s));
	sim_opts_default(&so);
	so.comm = SIM_COMM_OVERLAP;  /* the runs measured here are OctoPipe's executor's */
	if (sim_run(&s, p, &so, &m, &e) < 0) {
		cli_err("%s: plan infeasible: %s\n", path, e.msg);
		*rc = e.cls == ERR_INFEASIBLE ? EXIT_INFEASIBLE : EXIT_RUNTIME;
	} else {
		ms = m.makespan_ms - m.dp_sync_ms;  /* the executor runs no data-parallel sync */
	}
	metrics_release(&m);
	sim_release(&s);
	return ms;
}

static double measured_ms(const struct timeline *t)
{
	double end = 0;

	for (int d = 0; d < t->ndevices; d++)
		for (int i = 0; i < t->dev[d].nops; i++)
			end = fmax(end, t->dev[d].ops[i].end_ms);
	return end;
}

static int report(const struct plan *p, const struct rescale *r, const char *tl_path, const char *plan_path,
                   const char *source, double meas, double before, double after, bool overhead, bool json)
{
	const char *kn[RESCALE_KINDS] = { "f", p->split_backward ? "i" : "b", "w" };
	int kinds = p->split_backward ? 3 : 2;

	if (json) {
		struct jw w = { false };
		cJSON *root = cJSON_CreateObject(), *o, *arr;

		if (!root)
			w.oom = true;
		jw_str(&w, root, "timeline", tl_path);
		jw_str(&w, root, "plan", plan_path);
		jw_str(&w, root, "source", source);
		jw_num(&w, root, "measured_ms", meas);
		if (overhead)
			jw_num(&w, root, "op_overhead_us", p->cluster.op_overhead_us);
		o = jw_obj(&w, root, "before");
		jw_num(&w, o, "predicted_ms", before);
		jw_num(&w, o, "error", meas > 0 ? (before - meas) / meas : 0);
		o = jw_obj(&w, root, "after");
		jw_num(&w, o, "predicted_ms", after);
		jw_num(&w, o, "error", meas > 0 ? (after - meas) / meas : 0);
		arr = jw_arr(&w, root, "stages");
		for (int s = 0; s < r->nstages; s++) {
			char key[16];

			o = jw_push(&w, arr, cJSON_CreateObject());
			jw_num(&w, o, "stage", s);
			jw_num(&w, o, "device", p->stages[s].device);
			for (int k = 0; k < kinds; k++) {
				jw_num(&w, o, kn[k], r->factor[s][k]);
				snprintf(key, sizeof(key), "%s_samples", kn[k]);
				jw_num(&w, o, key, r->samples[s][k]);
			}
		}
		return cli_put_json(root, w.oom);
	}
	printf("calibrated from %s (%s run of %s)\n", cli_name(tl_path), source, cli_name(plan_path));
	if (overhead)
		printf("per-op overhead: %.1f us (the layers' factors below are fitted to the rest)\n",
		       p->cluster.op_overhead_us);
	printf("iteration: measured %.2f ms; predicted %.2f ms before (error %+.2f%%), %.2f ms after (error %+.2f%%)\n\n",
	       meas, before, meas > 0 ? 100 * (before - meas) / meas : 0, after, meas > 0 ? 100 * (after - meas) / meas : 0);
	printf("%5s %6s %8s %8s%s\n", "STAGE", "DEVICE", "F", p->split_backward ? "I" : "B", p->split_backward ? "        W" : "");
	for (int s = 0; s < r->nstages; s++) {
		printf("%5d %6d", s, p->stages[s].device);
		for (int k = 0; k < kinds; k++)
			printf(" %8.4f", r->factor[s][k]);
		printf("\n");
	}
	return EXIT_OK;
}

#define CALIB_PREDICT_MAX 64

/* calibrate's own options; --model and --json are cli_args'. */
struct calib_args {
	const char *out, *plan_arg, *cluster_out;
	bool fit_overhead, gpu, emulate_gpu, ceilings;
	int reps;
	const char *predict[CALIB_PREDICT_MAX];   /* --predict MODEL, in order */
	int npredict;
};

static int calib_option(void *ctx, int ch, const char *arg)
{
	struct calib_args *ca = ctx;

	switch (ch) {
	case 'o': ca->out = arg; return 0;
	case 'p': ca->plan_arg = arg; return 0;
	case 'F': ca->fit_overhead = true; return 0;
	case 'C': ca->cluster_out = arg; return 0;
	case 'g': ca->gpu = true; return 0;
	case 'r': return (ca->reps = cli_int("calibrate", "--reps", arg, 1, 64)) < 0 ? EXIT_INPUT : 0;
	case 'E': ca->gpu = ca->emulate_gpu = true; return 0;  /* hidden: calibrate --gpu's plumbing, without a GPU */
	case 'c': ca->ceilings = true; return 0;
	case 'P':
		if (ca->npredict == CALIB_PREDICT_MAX)
			return cli_usage_error("calibrate", "--predict: at most 64 models");
		ca->predict[ca->npredict++] = arg;
		return 0;
	default: return EXIT_INPUT;
	}
}

static const struct option calib_options[] = {
	{ "out", required_argument, NULL, 'o' },
	{ "plan", required_argument, NULL, 'p' },
	{ "fit-overhead", no_argument, NULL, 'F' },
	{ "cluster-out", required_argument, NULL, 'C' },
	{ "gpu", no_argument, NULL, 'g' },
	{ "reps", required_argument, NULL, 'r' },
	{ "emulate-gpu", no_argument, NULL, 'E' },
	{ "ceilings", no_argument, NULL, 'c' },
	{ "predict", required_argument, NULL, 'P' },
	{ NULL, 0, NULL, 0 },
};

static const struct cli_args_spec calib_spec = {
	"calibrate", CLI_IN_MODEL | CLI_IN_JSON, "o:jh", calib_options, calib_option, usage,
};

/* The measured run to fit: the timeline tl_path, the plan it ran (--plan, or the one the
 * timeline names, as seen from it) into p and plan_path, with the --model given in place
 * of the plan's. 0, or the exit code with nothing of t and p left loaded. */
static int load_run(struct cli_args *a, const char *plan_arg, const char *tl_path, struct timeline *t,
                    struct plan *p, char *plan_path, size_t plan_path_size)
{
	struct err e = ERR_INIT;
	struct stat st;
	char dir[4096];
	int rc;

	if (timeline_load(t, tl_path, &e) < 0)
		return cli_report(&e);
	if (strcmp(t->source, "sim") == 0) {
		cli_err("%s: a simulated timeline, not a measurement (use octopipe run --timeline-out)\n", tl_path);
		timeline_release(t);
		return EXIT_INPUT;
	}
	if (plan_arg) {
		snprintf(plan_path, plan_path_size, "%s", cli_resolve(plan_arg, "plans"));
	} else if (t->plan_ref) {
		fileio_dirname(tl_path, dir, sizeof(dir));
		if (fileio_join(dir, t->plan_ref, plan_path, plan_path_size) < 0)
			snprintf(plan_path, plan_path_size, "%s", t->plan_ref);
		if (stat(plan_path, &st) == 0 && !S_ISREG(st.st_mode)) { /* a FIFO would hold the command */
			cli_err("%s: plan: '%s' is not a regular file\n", tl_path, t->plan_ref);
			timeline_release(t);
			return EXIT_INPUT;
		}
	} else {
		timeline_release(t);
		return cli_usage_error("calibrate", "%s names no plan: give --plan", tl_path);
	}
	if (plan_load(p, plan_path, &e) < 0) {
		timeline_release(t);
		return cli_report(&e);
	}
	/* a run of another shape is named more precisely by the fit; one of this shape may still
	 * be of another partition, which only the plan it names tells */
	if (plan_arg && t->ndevices == p->ndevices && timeline_check_named_plan(t, tl_path, p, plan_path, &e) < 0) {
		rc = cli_report(&e);
		goto fail;
	}
	if (a->model_arg) {
		if ((rc = cli_args_load(a, CLI_IN_MODEL)) != EXIT_OK)
			goto fail;
		if (a->model.nlayers != p->model.nlayers) {
			cli_err("%s: %d layers, but the plan '%s' partitions %d\n", a->model_path, a->model.nlayers, plan_path,
			        p->model.nlayers);
			rc = EXIT_INPUT;
			goto fail;
		}
		a->have_model = false;   /* the plan's from here on */
		if (set_model(p, &a->model, &e) < 0) {
			rc = cli_report(&e);
			goto fail;
		}
	}
	return EXIT_OK;
fail:
	plan_release(p);
	timeline_release(t);
	return rc;
}

/* Fits the plan's costs to the run, reports before against after and writes the model
 * (and, with --fit-overhead, the cluster). The plan is priced without the collectives the
 * run left out (its "not_run") when it left some out. */
static int fit(const struct calib_args *ca, bool json, const char *tl_path, const struct timeline *t,
               struct plan *p, const char *plan_path)
{
	/* the timeline's "not_run": collectives the run left out */
	const cJSON *nr = t->extra ? cJSON_GetObjectItemCaseSensitive(t->extra, "not_run") : NULL;
	struct err e = ERR_INIT;
	struct model fitted;
	struct rescale r;
	struct strbuf sb = STRBUF_INIT;
	double meas = measured_ms(t), before, after, overhead_us = 0;
	cJSON *root;
	int rc = EXIT_OK;

	if ((before = simulate(p, plan_path, &rc)) < 0)
		return rc;
	if (ca->fit_overhead) {
		if (rescale_fit_overhead(p, t, tl_path, &overhead_us, &e) < 0)
			return cli_report(&e);
		p->cluster.op_overhead_us = overhead_us;
		p->src_cluster.op_overhead_us = overhead_us;  /* a layout's: the file's own */
		if (ca->cluster_out && cluster_save(plan_src_cluster(p), ca->cluster_out, &e) < 0)
			return cli_report(&e);
	}
	if (rescale_fit(p, t, tl_path, &r, &e) < 0) {
		rc = cli_report(&e);
		goto out_fit;
	}
	/* the factors apply to the files' own table (a layout's replica is re-priced from it) */
	if (model_copy(&fitted, plan_src_model(p), &e) < 0) {
		rc = cli_report(&e);
		goto out_fit;
	}
	if (rescale_apply(&r, p, &fitted, &e) < 0) {
		err_prefix(&e, tl_path);
		rc = cli_report(&e);
		model_release(&fitted);
		goto out_fit;
	}
	root = model_to_json(&fitted);
	if (root)
		json_write(&sb, root);
	cJSON_Delete(root);
	if (!root || strbuf_failed(&sb)) {
		cli_err("octopipe calibrate: out of host memory writing the model\n");
		rc = EXIT_RUNTIME;
	} else {
		/* re-simulate the same plan with the fitted costs */
		if (set_model(p, &fitted, &e) < 0 || (cJSON_IsString(nr) && drop_collectives(p, &e) < 0))
			rc = cli_report(&e);
		else if ((after = simulate(p, plan_path, &rc)) >= 0) {
			rc = report(p, &r, tl_path, plan_path, t->source, meas, before, after, ca->fit_overhead, json);
			if (rc == EXIT_OK)
				rc = cli_write_text(ca->out, sb.buf, sb.len);
		}
		memset(&fitted, 0, sizeof(fitted));  /* the plan's now */
	}
	model_release(&fitted);
	strbuf_release(&sb);
out_fit:
	rescale_release(&r);
	return rc;
}

/* Everything a fit needs is read: the run's collectives left out, the outputs writable, the
 * timeline a whole run of the plan. 0 or the exit code. */
static int check_run(const struct calib_args *ca, const char *tl_path, const struct timeline *t, struct plan *p,
                     const char *plan_path)
{
	const cJSON *nr = t->extra ? cJSON_GetObjectItemCaseSensitive(t->extra, "not_run") : NULL;
	const char *outs[] = { ca->out, ca->cluster_out };
	struct err e = ERR_INIT;

	/* a run that left collectives out (octopipe run --backend cuda at tp > 1, ep > 1 or ZeRO
	 * 3: "not_run") is compared with the plan priced without them, as the run was */
	if (cJSON_IsString(nr) && drop_collectives(p, &e) < 0)
		return cli_report(&e);
	/* every input is read: an output that cannot be written (one of them, a directory, ...)
	 * is refused now, before the report is printed as if the command had succeeded */
	for (int i = 0; i < 2; i++)
		if (outs[i] && strcmp(outs[i], "-") != 0 && fileio_check_writable(outs[i], &e) < 0)
			return cli_report(&e);
	/* only a whole run of this plan can be fitted: a stage it leaves out would keep
	 * factor 1 as if measured (the run checked its own timeline the same way); another
	 * device count is rescale_fit's to name, with its JSON path */
	switch (t->ndevices != p->ndevices ? 0
	        : timeline_check_plan(p, t, strcmp(t->source, "cuda") == 0 ? TLCHECK_GPU_SLACK_MS : 1e-6, &e)) {
	case 0:
		return EXIT_OK;
	case -1:
		return cli_report(&e);
	default:
		cli_err("%s: not a whole run of '%s': %s\n", tl_path, plan_path, e.msg);
		return EXIT_INPUT;
	}
}

/* --ceilings and --gpu: what the options allow with them, then the mode's own command. */
static int gpu_modes(const struct calib_args *ca, const struct cli_args *a, int argc, char **argv)
{
	if (ca->ceilings) {
		if (!ca->gpu || optind != argc || ca->out || ca->plan_arg || a->model_arg || ca->fit_overhead ||
		    ca->cluster_out || ca->npredict)
			return cli_usage_error("calibrate", "--ceilings goes with --gpu alone (no model, no output)");
		return calibrate_ceilings(argc, argv, a->json, ca->reps, ca->emulate_gpu);
	}
	if (optind >= argc)
		return cli_usage_error("calibrate", "--gpu: no model given");
	if (argc - optind > CALIB_PREDICT_MAX)
		return cli_usage_error("calibrate", "--gpu: at most 64 models");
	if (!ca->out)
		return cli_usage_error("calibrate", "no output model given (-o MODEL)");
	if (ca->plan_arg || a->model_arg || ca->fit_overhead || ca->cluster_out)
		return cli_usage_error("calibrate", "--gpu takes a model and -o, not a timeline's options");
	{
		struct calib_gpu_args g = { (const char *const *)argv + optind, argc - optind, ca->predict, ca->npredict,
		                            ca->out, a->json, ca->emulate_gpu, ca->reps };

		return calibrate_gpu(argc, argv, &g);
	}
}

int cmd_calibrate(int argc, char **argv)
{
	struct calib_args ca = { .reps = 20 };
	struct cli_args a;
	char plan_path[4096];
	const char *tl_path;
	struct timeline t;
	struct plan p;
	int rc;

	if ((rc = cli_args_parse(&calib_spec, argc, argv, &ca, &a)) != CLI_ARGS_GO)
		return rc;
	if (ca.ceilings || ca.gpu)
		return gpu_modes(&ca, &a, argc, argv);
	if (ca.npredict)
		return cli_usage_error("calibrate", "--predict goes with --gpu");
	if (optind != argc - 1)
		return cli_usage_error("calibrate", optind >= argc ? "no timeline given" : "one timeline at a time");
	if (!ca.out)
		return cli_usage_error("calibrate", "no output model given (-o MODEL)");
	if (ca.cluster_out && !ca.fit_overhead)
		return cli_usage_error("calibrate", "--cluster-out writes the fitted overhead: give --fit-overhead");
	{
		const char *names[] = { "-o -", "--cluster-out -", "--json" };
		const char *outs[] = { ca.out, ca.cluster_out, a.json ? "-" : NULL };

		if (cli_one_stdout("calibrate", names, outs, 3) != EXIT_OK)
			return EXIT_INPUT;
	}
	tl_path = argv[optind];
	if ((rc = load_run(&a, ca.plan_arg, tl_path, &t, &p, plan_path, sizeof(plan_path))) != EXIT_OK) {
		cli_args_release(&a);
		return rc;
	}
	if ((rc = check_run(&ca, tl_path, &t, &p, plan_path)) == EXIT_OK)
		rc = fit(&ca, a.json, tl_path, &t, &p, plan_path);
	plan_release(&p);
	timeline_release(&t);
	cli_args_release(&a);
	return rc;
}
