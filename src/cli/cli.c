/*
 * cli — the command table and helpers shared by the subcommands (see cli.h).
 */
#include "config.h"
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "datadir.h"
#include "fileio.h"
#include "json.h"
#include "model.h"
#include "plan.h"

const struct cli_cmd cli_commands[] = {
	{ "check", "FILE...", "validate model, cluster, plan and timeline files", cmd_check },
	{ "show", "MODEL [--json]", "print a model's layer table: kinds, costs, heaviest layers", cmd_show },
	{ "plan", "--model M --cluster C ...", "build a baseline plan (gpipe, 1f1b, interleaved, zb-*, dualpipev, adaptive)", cmd_plan },
	{ "sim", "PLAN [--json] [--gantt]", "simulate a plan: iteration time, bubbles, memory; timeline and trace", cmd_sim },
	{ "tune", "--model M --cluster C ...", "co-optimize partition, placement and schedule", cmd_tune },
	{ "compare", "--model M --cluster C ...", "simulate every baseline and the tuned plan side by side", cmd_compare },
	{ "import", "torch-csv|profile FILE ...", "read a PyTorch schedule CSV into a plan, or timings into a model", cmd_import },
	{ "cost", "CONFIG --cluster C -o MODEL", "layer table from a config.json or architecture; --calibrate to profiles", cmd_cost },
	{ "run", "PLAN [--backend emu]", "execute a plan on the emulated executor, measured against the simulation", cmd_run },
	{ "calibrate", "TIMELINE -o MODEL", "rescale a model's layer costs from a measured run; error before and after", cmd_calibrate },
	{ "export", "torch-csv|megatron-layout PLAN", "write a plan as PyTorch CSV or a Megatron layout", cmd_export },
	{ "tui", "[PLAN | --model M --cluster C]", "the terminal UI: Gantt charts, hand edits, compare, steps", cmd_tui },
	{ NULL, NULL, NULL, NULL },
};

int cli_report(const struct err *e)
{
	fprintf(stderr, "%s\n", e->msg[0] ? e->msg : "unknown error");
	switch (e->cls) {
	case ERR_INPUT: return EXIT_INPUT;
	case ERR_INFEASIBLE: return EXIT_INFEASIBLE;
	default: return EXIT_RUNTIME;
	}
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "octopipe %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'octopipe %s --help')\n", cmd);
	return EXIT_INPUT;
}

const char *cli_resolve(const char *arg, const char *subdir)
{
	static char buf[4096];

	datadir_resolve(arg, subdir, buf, sizeof(buf));
	return buf;
}

int cli_load_model(const char *arg, struct model *m, char *path_out)
{
	struct err e = ERR_INIT;

	snprintf(path_out, 4096, "%s", cli_resolve(arg, "samples/models"));
	if (model_load(m, path_out, &e) < 0)
		return cli_report(&e);
	return 0;
}

int cli_load_cluster(const char *arg, struct cluster *c, char *path_out)
{
	struct err e = ERR_INIT;

	snprintf(path_out, 4096, "%s", cli_resolve(arg, "samples/clusters"));
	if (cluster_load(c, path_out, &e) < 0)
		return cli_report(&e);
	return 0;
}

int cli_positive(const char *cmd, const char *opt, const char *value)
{
	char *end;
	long v = strtol(value, &end, 10);

	if (end == value || *end || v < 1 || v > 1000000) {
		cli_usage_error(cmd, "%s: '%s' is not a positive integer", opt, value);
		return -1;
	}
	return (int)v;
}

int cli_set_refs(struct plan *p, const char *model_path, const char *cluster_path, const char *out_path)
{
	char dir[4096], rel[4096];

	fileio_dirname(out_path, dir, sizeof(dir));
	free(p->model_ref);
	free(p->cluster_ref);
	p->model_ref = p->cluster_ref = NULL;
	if (fileio_relative(dir, model_path, rel, sizeof(rel)) < 0 || !(p->model_ref = strdup(rel)))
		return -1;
	if (fileio_relative(dir, cluster_path, rel, sizeof(rel)) < 0 || !(p->cluster_ref = strdup(rel)))
		return -1;
	return 0;
}

int cli_write_text(const char *path, const char *text, size_t len)
{
	struct err e = ERR_INIT;

	if (strcmp(path, "-") == 0) {
		fwrite(text, 1, len, stdout);
		return EXIT_OK;
	}
	if (fileio_write_atomic(path, text, len, &e) < 0)
		return cli_report(&e);
	return EXIT_OK;
}

int cli_write_plan(struct plan *p, const char *out, const char *model_path, const char *cluster_path, bool embed)
{
	struct err e = ERR_INIT;

	if (strcmp(out, "-") == 0) {
		cJSON *root = plan_to_json(p, true);
		struct strbuf sb = STRBUF_INIT;

		if (!root) {
			fprintf(stderr, "octopipe: out of memory\n");
			return EXIT_RUNTIME;
		}
		json_write(&sb, root);
		fputs(sb.buf, stdout);
		strbuf_release(&sb);
		cJSON_Delete(root);
		return EXIT_OK;
	}
	if (!embed && cli_set_refs(p, model_path, cluster_path, out) < 0) {
		fprintf(stderr, "octopipe: cannot refer to '%s' and '%s' from '%s'\n", model_path, cluster_path, out);
		return EXIT_RUNTIME;
	}
	return plan_save(p, out, embed, &e) < 0 ? cli_report(&e) : EXIT_OK;
}
