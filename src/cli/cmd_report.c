/*
 * octopipe report / export svg — pictures for people who were not at the terminal:
 *   export svg PLAN [-o FILE] [--timeline T] [--width PX] [--critical-path] [--force]
 *   report PLAN... [--steps FILE] [--timeline T] [--width PX] [--critical-path] -o FILE
 * The drawing is the engine's (report.h); this file reads the arguments and the files.
 */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "report.h"
#include "tlcheck.h"

static void svg_usage(FILE *f)
{
	fputs("usage: octopipe export svg PLAN [-o FILE] [--timeline T] [--width PX]\n"
	      "                           [--critical-path] [--force]\n"
	      "\n"
	      "Draws PLAN's simulated iteration as a per-GPU SVG Gantt chart: F/I/W/B ops in\n"
	      "the TUI's colours (W dotted, B striped) with a tooltip each, bubbles hatched,\n"
	      "warm-up and cool-down shaded, a time axis, a legend, and a title line with the\n"
	      "iteration time, tokens/s, bubble and efficiency.\n"
	      "\n"
	      "  -o FILE            write to FILE (default: standard output)\n"
	      "  --timeline T       a measured run of PLAN (octopipe run --timeline-out), drawn\n"
	      "                     under each GPU's predicted row\n"
	      "  --width PX         width in pixels (default 1200); every size scales with it\n"
	      "  --critical-path    outline the ops of the critical path\n"
	      "  --force            draw a plan the simulator finds out of device memory\n"
	      "\n"
	      "A plan that cannot run (a deadlock, a device out of memory) is exit 3 with the\n"
	      "line sim prints, and nothing is written.\n", f);
}

static void report_usage(FILE *f)
{
	fputs("usage: octopipe report PLAN... [--steps FILE] [--timeline T] [--width PX]\n"
	      "                       [--critical-path] -o FILE\n"
	      "\n"
	      "Writes one self-contained HTML file (inline SVG and CSS, no scripts, nothing\n"
	      "fetched; prints one page per plan): a summary of each plan (iteration, tokens/s,\n"
	      "bubble, efficiency against the lower bound, peak memory), its speedup over each\n"
	      "baseline of the same model, cluster and microbatches, the Gantt charts on one\n"
	      "time axis, per-GPU bubbles (warm-up, steady, cool-down) and memory over time.\n"
	      "\n"
	      "  -o FILE            the HTML file (\"-\" for standard output)\n"
	      "  --steps FILE       the tuner's steps (octopipe tune --steps-out): a chart of\n"
	      "                     the iteration time per step by phase, and the moves\n"
	      "  --timeline T       a measured run of the first PLAN, drawn under its Gantt\n"
	      "                     rows, and predicted against measured per GPU\n"
	      "  --width PX         width of the charts in pixels (default 1200)\n"
	      "  --critical-path    outline the critical path in every Gantt chart\n", f);
}

static int parse_width(const char *cmd, const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || *end || v < REPORT_MIN_WIDTH || v > REPORT_MAX_WIDTH)
		return cli_usage_error(cmd, "--width: '%s' is not a number of pixels in [%d, %d]", s, REPORT_MIN_WIDTH,
		                       REPORT_MAX_WIDTH);
	*out = (int)v;
	return 0;
}

/* Loads the measured timeline and checks it is a run of p, read from plan_path. */
static int load_measured(const char *path, const struct plan *p, const char *plan_path, struct timeline *t)
{
	struct err e = ERR_INIT;

	if (timeline_load(t, path, &e) < 0)
		return cli_report(&e);
	if (report_check_measured(p, t, path, &e) < 0 || timeline_check_named_plan(t, path, p, plan_path, &e) < 0) {
		timeline_release(t);
		return cli_report(&e);
	}
	return 0;
}

int cmd_export_svg(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "timeline", required_argument, NULL, 't' },
		{ "width", required_argument, NULL, 'w' },
		{ "critical-path", no_argument, NULL, 'c' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = "-", *tl_path = NULL;
	struct report_svg_opts o = { .width_px = 0, .critical_path = false, .title = NULL };
	bool force = false;
	struct strbuf sb = STRBUF_INIT;
	struct err e = ERR_INIT;
	struct timeline t;
	struct plan p;
	int ch, rc;

	memset(&t, 0, sizeof(t));
	optind = 0;
	while ((ch = cli_getopt("export", argc, argv, "o:h", opts)) != -1) {
		switch (ch) {
		case 'o': out = optarg; break;
		case 't': tl_path = optarg; break;
		case 'w': if (parse_width("export", optarg, &o.width_px)) return EXIT_INPUT; break;
		case 'c': o.critical_path = true; break;
		case 'f': force = true; break;
		case 'h': svg_usage(stdout); return EXIT_OK;
		default: return EXIT_INPUT;   /* cli_getopt said why */
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("export", "svg needs one PLAN");
	{
		const char *inputs[] = { cli_resolve(argv[optind], "plans"), tl_path };

		if ((rc = cli_refuse_input("export", out, inputs, 2)) != EXIT_OK)
			return rc;
	}
	if (plan_load(&p, cli_resolve(argv[optind], "plans"), &e) < 0)
		return cli_report(&e);
	o.title = p.name ? p.name : argv[optind];
	if (tl_path && (rc = load_measured(tl_path, &p, cli_resolve(argv[optind], "plans"), &t)) != 0) {
		plan_release(&p);
		return rc;
	}
	/* a plan that cannot run is refused as every export refuses it (an out-of-memory one
	 * was drawn, exit 0): nothing is drawn or written */
	rc = cli_export_runs(cli_resolve(argv[optind], "plans"), &p, force);
	if (rc == EXIT_OK && report_svg(&p, tl_path ? &t : NULL, &o, &sb, &e) < 0) {
		if (e.cls == ERR_INFEASIBLE || e.cls == ERR_INPUT)
			err_prefix(&e, argv[optind]);
		rc = cli_report(&e);
	} else if (rc == EXIT_OK) {
		rc = cli_write_text(out, sb.buf, sb.len);
	}
	strbuf_release(&sb);
	timeline_release(&t);
	plan_release(&p);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "steps", required_argument, NULL, 's' },
		{ "timeline", required_argument, NULL, 't' },
		{ "width", required_argument, NULL, 'w' },
		{ "critical-path", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *steps_path = NULL, *tl_path = NULL;
	struct report_input in;
	struct strbuf sb = STRBUF_INIT;
	struct err e = ERR_INIT;
	struct timeline t;
	struct plan *plans = NULL;
	const struct plan **pp = NULL;
	const char **labels = NULL;
	cJSON *steps = NULL;
	int ch, rc = EXIT_OK, n, loaded = 0;

	memset(&in, 0, sizeof(in));
	memset(&t, 0, sizeof(t));
	optind = 0;
	while ((ch = cli_getopt("report", argc, argv, "o:h", opts)) != -1) {
		switch (ch) {
		case 'o': out = optarg; break;
		case 's': steps_path = optarg; break;
		case 't': tl_path = optarg; break;
		case 'w': if (parse_width("report", optarg, &in.width_px)) return EXIT_INPUT; break;
		case 'c': in.critical_path = true; break;
		case 'h': report_usage(stdout); return EXIT_OK;
		default: return EXIT_INPUT;   /* cli_getopt said why */
		}
	}
	n = argc - optind;
	if (n < 1)
		return cli_usage_error("report", "needs at least one PLAN");
	if (!out)
		return cli_usage_error("report", "needs -o FILE");
	plans = calloc((size_t)n, sizeof(*plans));
	pp = calloc((size_t)n, sizeof(*pp));
	labels = calloc((size_t)n, sizeof(*labels));
	if (!plans || !pp || !labels) {
		cli_err("octopipe: out of host memory\n");
		rc = EXIT_RUNTIME;
		goto done;
	}
	if ((rc = cli_refuse_input("report", out, (const char *const[]){ steps_path, tl_path }, 2)) != EXIT_OK)
		goto done;
	for (loaded = 0; loaded < n; loaded++) {
		const char *path = cli_resolve(argv[optind + loaded], "plans");

		if ((rc = cli_refuse_input("report", out, &path, 1)) != EXIT_OK)
			goto done;
		if (plan_load(&plans[loaded], cli_resolve(argv[optind + loaded], "plans"), &e) < 0) {
			rc = cli_report(&e);
			goto done;
		}
		pp[loaded] = &plans[loaded];
		labels[loaded] = plans[loaded].name ? plans[loaded].name : argv[optind + loaded];
	}
	if (steps_path && !(steps = json_load_file(steps_path, &e))) {
		rc = cli_report(&e);
		goto done;
	}
	if (tl_path && (rc = load_measured(tl_path, &plans[0], cli_resolve(argv[optind], "plans"), &t)) != 0)
		goto done;
	in.plans = pp;
	in.labels = labels;
	in.nplans = n;
	in.steps = steps;
	in.steps_file = steps_path;
	in.measured = tl_path ? &t : NULL;
	if (report_html(&in, &sb, &e) < 0)
		rc = cli_report(&e);
	else
		rc = cli_write_text(out, sb.buf, sb.len);
done:
	strbuf_release(&sb);
	timeline_release(&t);
	cJSON_Delete(steps);
	for (int i = 0; i < loaded; i++)
		plan_release(&plans[i]);
	free(plans);
	free(pp);
	free(labels);
	return rc;
}
