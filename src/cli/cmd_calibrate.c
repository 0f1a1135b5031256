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

#include "cli.h"
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
	      "       octopipe calibrate --gpu [--reps N] [--json] -o OUT MODEL\n"
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
	      "  --json           {\"measured_ms\", \"before\": {...}, \"after\": {...}, \"stages\": [...]}\n"
	      "  --fit-overhead   first fit the runtime's fixed cost per op (one scale per op kind\n"
	      "                   and one constant, over stages of different cost), then the\n"
	      "                   factors of the rest; --cluster-out writes the plan's cluster\n"
	      "                   with it (\"op_overhead_us\")\n"
	      "\n"
	      "--gpu MODEL: refits the cost model's efficiency of every kernel class (and the\n"
	      "launch overhead) to the GPU of this machine. Every kernel of each layer kind of\n"
	      "MODEL (made by octopipe cost: it has the architecture) runs alone with its true\n"
	      "shapes, forward and backward, --reps times (default 20; the median counts); the\n"
	      "least-squares fit of octopipe cost --calibrate turns the times into efficiencies,\n"
	      "and OUT is MODEL re-priced with them (its source's hardware replaced). Needs the\n"
	      "cuda backend and a GPU: without one it fails with one line (\"no GPU: why\"), exit 1.\n"
	      "It prints each class's efficiency before and after, then every kernel's predicted\n"
	      "and measured F and backward times (a miss attributed to its kernel).\n"
	      "\n"
	      "--gpu --ceilings: what this GPU reaches, each kernel alone on random data through\n"
	      "the cuda backend's own launches: bf16 GEMMs by shape, an HBM copy, attention\n"
	      "cores (causal, windowed), the SSD's GEMM and the scan's FMAs; a table with the\n"
	      "mode that produced each row (gpu).\n"
	      "\n"
	      "The prediction is of OctoPipe's executor, which overlaps transfers: a measured\n"
	      "run is compared with the plan simulated that way, whatever its \"comm\"; a run\n"
	      "whose timeline says it left the plan's collectives out (\"not_run\": the cuda\n"
	      "backend at tp > 1, ep > 1 or ZeRO 3) with the plan priced without them.\n"
	      "\n"
	      "exit status: 0 ok, 1 runtime failure (--gpu: no GPU or no cuda backend), 2 bad input\n"
	      "(a timeline of another plan; --gpu: a model without an architecture),\n"
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
	printf("calibrated from %s (%s run of %s)\n", tl_path, source, plan_path);
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

int cmd_calibrate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "plan", required_argument, NULL, 'p' },
		{ "model", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "fit-overhead", no_argument, NULL, 'F' },
		{ "cluster-out", required_argument, NULL, 'C' },
		{ "gpu", no_argument, NULL, 'g' },
		{ "reps", required_argument, NULL, 'r' },
		{ "emulate-gpu", no_argument, NULL, 'E' },
		{ "ceilings", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *plan_arg = NULL, *model_arg = NULL, *tl_path, *cluster_out = NULL;
	bool fit_overhead = false;
	double overhead_us = 0;
	char plan_path[4096], model_path[4096], dir[4096];
	bool json = false, gpu = false, emulate_gpu = false, ceilings = false;
	int ch, rc = EXIT_OK, reps = 20;
	struct err e = ERR_INIT;
	struct timeline t;
	struct plan p;
	struct model fitted;
	struct rescale r;
	double meas, before, after;
	cJSON *root;
	const cJSON *nr;   /* the timeline's "not_run": collectives the run left out */
	struct strbuf sb = STRBUF_INIT;

	optind = 0;
	while ((ch = cli_getopt("calibrate", argc, argv, "o:jh", opts)) != -1) {
		switch (ch) {
		case 'o': out = optarg; break;
		case 'p': plan_arg = optarg; break;
		case 'm': model_arg = optarg; break;
		case 'j': json = true; break;
		case 'F': fit_overhead = true; break;
		case 'C': cluster_out = optarg; break;
		case 'g': gpu = true; break;
		case 'r': if ((reps = cli_int("calibrate", "--reps", optarg, 1, 64)) < 0) return EXIT_INPUT; break;
		case 'E': gpu = emulate_gpu = true; break;  /* hidden: calibrate --gpu's plumbing, without a GPU */
		case 'c': ceilings = true; break;
		case 'h': usage(stdout); return EXIT_OK;
		default: return EXIT_INPUT;
		}
	}
	if (ceilings) {
		if (!gpu || optind != argc || out || plan_arg || model_arg || fit_overhead || cluster_out)
			return cli_usage_error("calibrate", "--ceilings goes with --gpu alone (no model, no output)");
		return calibrate_ceilings(argc, argv, json, reps, emulate_gpu);
	}
	if (gpu) {
		if (optind != argc - 1)
			return cli_usage_error("calibrate", optind >= argc ? "--gpu: no model given" : "--gpu: one model at a time");
		if (!out)
			return cli_usage_error("calibrate", "no output model given (-o MODEL)");
		if (plan_arg || model_arg || fit_overhead || cluster_out)
			return cli_usage_error("calibrate", "--gpu takes a model and -o, not a timeline's options");
		return calibrate_gpu(argc, argv, argv[optind], out, json, reps, emulate_gpu);
	}
	if (optind != argc - 1)
		return cli_usage_error("calibrate", optind >= argc ? "no timeline given" : "one timeline at a time");
	if (!out)
		return cli_usage_error("calibrate", "no output model given (-o MODEL)");
	if (cluster_out && !fit_overhead)
		return cli_usage_error("calibrate", "--cluster-out writes the fitted overhead: give --fit-overhead");
	{
		const char *names[] = { "-o -", "--cluster-out -", "--json" };
		const char *outs[] = { out, cluster_out, json ? "-" : NULL };

		if (cli_one_stdout("calibrate", names, outs, 3) != EXIT_OK)
			return EXIT_INPUT;
	}
	tl_path = argv[optind];
	if (timeline_load(&t, tl_path, &e) < 0)
		return cli_report(&e);
	if (strcmp(t.source, "sim") == 0) {
		cli_err("%s: a simulated timeline, not a measurement (use octopipe run --timeline-out)\n", tl_path);
		timeline_release(&t);
		return EXIT_INPUT;
	}
	if (plan_arg) {
		snprintf(plan_path, sizeof(plan_path), "%s", cli_resolve(plan_arg, "plans"));
	} else if (t.plan_ref) {
		fileio_dirname(tl_path, dir, sizeof(dir));
		if (fileio_join(dir, t.plan_ref, plan_path, sizeof(plan_path)) < 0)
			snprintf(plan_path, sizeof(plan_path), "%s", t.plan_ref);
	} else {
		timeline_release(&t);
		return cli_usage_error("calibrate", "%s names no plan: give --plan", tl_path);
	}
	if (plan_load(&p, plan_path, &e) < 0) {
		timeline_release(&t);
		return cli_report(&e);
	}
	if (model_arg) {
		struct model m;

		if ((rc = cli_load_model(model_arg, &m, model_path)) != 0)
			goto out_plan;
		if (m.nlayers != p.model.nlayers) {
			cli_err("%s: %d layers, but the plan '%s' partitions %d\n", model_path, m.nlayers, plan_path,
			        p.model.nlayers);
			model_release(&m);
			rc = EXIT_INPUT;
			goto out_plan;
		}
		if (set_model(&p, &m, &e) < 0) {
			rc = cli_report(&e);
			goto out_plan;
		}
	}
	/* a run that left collectives out (octopipe run --backend cuda at tp > 1, ep > 1 or ZeRO
	 * 3: "not_run") is compared with the plan priced without them, as the run was */
	nr = t.extra ? cJSON_GetObjectItemCaseSensitive(t.extra, "not_run") : NULL;
	if (cJSON_IsString(nr) && drop_collectives(&p, &e) < 0) {
		rc = cli_report(&e);
		goto out_plan;
	}
	/* every input is read: an output that cannot be written (one of them, a directory, ...)
	 * is refused now, before the report is printed as if the command had succeeded */
	{
		const char *outs[] = { out, cluster_out };

		for (int i = 0; i < 2; i++)
			if (outs[i] && strcmp(outs[i], "-") != 0 && fileio_check_writable(outs[i], &e) < 0) {
				rc = cli_report(&e);
				goto out_plan;
			}
	}
	/* only a whole run of this plan can be fitted: a stage it leaves out would keep
	 * factor 1 as if measured (the run checked its own timeline the same way); another
	 * device count is rescale_fit's to name, with its JSON path */
	switch (t.ndevices != p.ndevices ? 0
	        : timeline_check_plan(&p, &t, strcmp(t.source, "cuda") == 0 ? TLCHECK_GPU_SLACK_MS : 1e-6, &e)) {
	case 0:
		break;
	case -1:
		rc = cli_report(&e);
		goto out_plan;
	default:
		cli_err("%s: not a whole run of '%s': %s\n", tl_path, plan_path, e.msg);
		rc = EXIT_INPUT;
		goto out_plan;
	}
	meas = measured_ms(&t);
	if ((before = simulate(&p, plan_path, &rc)) < 0)
		goto out_plan;
	if (fit_overhead) {
		if (rescale_fit_overhead(&p, &t, tl_path, &overhead_us, &e) < 0) {
			rc = cli_report(&e);
			goto out_plan;
		}
		p.cluster.op_overhead_us = overhead_us;
		p.src_cluster.op_overhead_us = overhead_us;  /* a layout's: the file's own */
		if (cluster_out && cluster_save(plan_src_cluster(&p), cluster_out, &e) < 0) {
			rc = cli_report(&e);
			goto out_plan;
		}
	}
	if (rescale_fit(&p, &t, tl_path, &r, &e) < 0) {
		rc = cli_report(&e);
		goto out_fit;
	}
	/* the factors apply to the files' own table (a layout's replica is re-priced from it) */
	if (model_copy(&fitted, plan_src_model(&p), &e) < 0) {
		rc = cli_report(&e);
		goto out_fit;
	}
	if (rescale_apply(&r, &p, &fitted, &e) < 0) {
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
		if (set_model(&p, &fitted, &e) < 0 || (cJSON_IsString(nr) && drop_collectives(&p, &e) < 0))
			rc = cli_report(&e);
		else if ((after = simulate(&p, plan_path, &rc)) >= 0) {
			rc = report(&p, &r, tl_path, plan_path, t.source, meas, before, after, fit_overhead, json);
			if (rc == EXIT_OK)
				rc = cli_write_text(out, sb.buf, sb.len);
		}
		memset(&fitted, 0, sizeof(fitted));  /* the plan's now */
	}
	model_release(&fitted);
	strbuf_release(&sb);
out_fit:
	rescale_release(&r);
out_plan:
	plan_release(&p);
	timeline_release(&t);
	return rc;
}
