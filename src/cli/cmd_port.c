/*
 * octopipe import / export — plans to and from other tools' formats:
 *   import torch-csv FILE --model M --cluster C [--microbatches N] [--partition P] -o PLAN
 *   import profile FILE --rules RULES [--iters N] [--verbose] -o MODEL   measured timings
 *   export torch-csv PLAN [-o FILE]         PyTorch pipelining's schedule CSV
 *   export megatron-layout PLAN             Megatron-LM --pipeline-model-parallel-layout
 *   export megatron-args PLAN [-o FILE]     the Megatron-LM flags that run it
 *   export torchtitan PLAN -o DIR           torchtitan's job-config TOML and schedule CSV
 * An export of a plan that cannot run is refused (cli_export_runs), writing nothing.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli/cli_args.h"
#include "fileio.h"
#include "json.h"
#include "megatron.h"
#include "metrics.h"
#include "profile.h"
#include "sim.h"
#include "torchcsv.h"
#include "torchtitan.h"

static void import_usage(FILE *f)
{
	fputs("usage: octopipe import torch-csv FILE --model M --cluster C [--microbatches N]\n"
	      "                      [--partition uniform|balanced|megatron|a,b,c...] -o PLAN\n"
	      "       octopipe import profile FILE --rules RULES [--iters N] [--verbose]\n"
	      "                               -o MODEL\n"
	      "\n"
	      "profile: makes a layer table of measured timings: a CSV of name,phase,ms records\n"
	      "(phase F, B, W or BW) or a Chrome trace (e.g. a PyTorch profiler trace). RULES\n"
	      "(octopipe.rules/1) maps names to layers with PCRE2 patterns whose named groups\n"
	      "(?<layer>...), (?<kind>...) and (?<phase>...) say where each record belongs;\n"
	      "--iters divides sums over N iterations; --verbose lists unmatched records.\n"
	      "\n"
	      "torch-csv:\n"
	      "Reads a PyTorch pipelining schedule CSV (one row per rank, cells like 0F0, 0I0,\n"
	      "0W0, 0B0, empty cells idle steps, (0F7;7I3)OVERLAP_F_B an overlapped pair).\n"
	      "Its compute_comms cells (1SEND_F0, 1RECV_F0, 0UNSHARD, 0REDUCE_GRAD, ...) are\n"
	      "checked and dropped: the simulator derives communication itself. A stage goes\n"
	      "on the rank whose row holds it; its layers come from --partition (default\n"
	      "uniform). An order that cannot run (a deadlock, a device out of memory) is\n"
	      "written all the same: exit 3.\n", f);
}

static void export_usage(FILE *f)
{
	fputs("usage: octopipe export torch-csv PLAN [-o FILE] [--force]\n"
	      "       octopipe export megatron-layout PLAN [--force]\n"
	      "       octopipe export megatron-args PLAN [-o FILE] [--force]\n"
	      "       octopipe export torchtitan PLAN -o DIR [--force]\n"
	      "       octopipe export svg PLAN [-o FILE] [--timeline T] [--width PX]\n"
	      "                           [--critical-path] [--force]\n"
	      "\n"
	      "torch-csv writes each device's op order as PyTorch pipelining's schedule CSV\n"
	      "(an overlapped pair as (0F7;7I3)OVERLAP_F_B);\n"
	      "megatron-layout prints the partition as a Megatron pipeline layout string\n"
	      "(E embedding, t decoder layer, L loss, '|' between virtual stages);\n"
	      "megatron-args prints the Megatron-LM flags of the plan's layout and partition\n"
	      "(parallel sizes, sequence parallelism, distributed optimizer / FSDP for ZeRO,\n"
	      "recompute, batch sizes, the pipeline layout or a hybrid model's layer pattern),\n"
	      "one per line, refusing a layout Megatron-LM refuses at start-up (the model's\n"
	      "own flags, --hidden-size, --num-experts and the like, are yours to add);\n"
	      "torchtitan writes DIR/job.toml (torchtitan's [parallelism], [training] and\n"
	      "[activation_checkpoint] keys of its TOML job config, which torchtitan read\n"
	      "until its Python-config refactor of 2026-02-23, commit 9810191; later\n"
	      "versions take the same values under new names) and DIR/schedule.csv (the\n"
	      "order its pipelining runtime runs), refusing placements other than its loop\n"
	      "or v style, PP or TP without FSDP (torchtitan would train them in fp32) and\n"
	      "layers it has no model of (Mamba, gated DeltaNet);\n"
	      "svg draws the plan as a per-GPU Gantt chart (octopipe export svg --help).\n"
	      "\n"
	      "A plan that cannot run is not exported: a deadlock, or a device out of memory\n"
	      "(--force exports that one anyway, as run --force runs it), is exit 3 with the\n"
	      "line sim prints, and nothing is written.\n", f);
}

static int import_profile(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rules", required_argument, NULL, 'r' },
		{ "iters", required_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *rules_path = NULL, *out = NULL;
	struct profile_rules rules;
	struct profile_stats st;
	struct model m;
	struct err e = ERR_INIT;
	bool verbose = false;
	int ch, iters = 1, rc;
	size_t len;
	char *text;

	optind = 0;
	while ((ch = cli_getopt("import", argc, argv, "o:vh", opts)) != -1) {
		switch (ch) {
		case 'r': rules_path = optarg; break;
		case 'n': if ((iters = cli_positive("import", "--iters", optarg)) < 0) return EXIT_INPUT; break;
		case 'v': verbose = true; break;
		case 'o': out = optarg; break;
		case 'h': import_usage(stdout); return EXIT_OK;
		default: return EXIT_INPUT;
		}
	}
	if (optind != argc - 1 || !rules_path || !out)
		return cli_usage_error("import", "profile needs FILE, --rules and -o");
	if (profile_rules_load(&rules, rules_path, &e) < 0)
		return cli_report(&e);
	text = fileio_read(argv[optind], &len, &e);
	if (!text) {
		profile_rules_release(&rules);
		return cli_report(&e);
	}
	if (profile_import(&rules, text, len, argv[optind], iters, &m, &st, &e) < 0) {
		rc = cli_report(&e);
	} else {
		char nested[96] = "";

		/* the summary only for a model written: after a refusal it was a second line */
		if ((rc = cli_write_model(&m, out)) != EXIT_OK)
			goto done;
		if (st.nested)
			snprintf(nested, sizeof(nested), " (%ld inside another of the same layer and phase, counted once)",
			         st.nested);
		cli_err("%s: %ld records, %ld matched%s, %ld unmatched; %d layers%s\n", argv[optind],
		        st.records, st.matched, nested, st.unmatched, m.nlayers,
		        st.unmatched && !verbose ? " (--verbose lists the unmatched)" : "");
		if (verbose && st.unmatched)
			cli_err("unmatched:\n%s", st.unmatched_names.buf);
done:
		model_release(&m);
	}
	strbuf_release(&st.unmatched_names);
	free(text);
	profile_rules_release(&rules);
	return rc;
}

static int import_option(void *ctx, int ch, const char *arg)
{
	if (ch != 'p')
		return EXIT_INPUT;
	*(const char **)ctx = arg;   /* --partition */
	return 0;
}

static const struct option import_options[] = {
	{ "partition", required_argument, NULL, 'p' },
	{ NULL, 0, NULL, 0 },
};

static const struct cli_args_spec import_spec = {
	"import", CLI_IN_MODEL | CLI_IN_CLUSTER | CLI_IN_MICROBATCHES | CLI_IN_OUTPUT, "o:h", import_options,
	import_option, import_usage,
};

/* An imported order that cannot run (a deadlock, a device out of memory) is written as the
 * CSV says, as edit writes such plans, and told as sim tells it: one line, exit 3. */
static int import_verdict(const struct plan *p, const char *out)
{
	struct strbuf why = STRBUF_INIT;
	int rc = cli_plan_verdict(strcmp(out, "-") ? out : "plan", p, &why);

	if (rc != EXIT_OK)
		cli_err("%s\n", why.buf);
	strbuf_release(&why);
	return rc;
}

int cmd_import(int argc, char **argv)
{
	const char *partition = NULL;
	struct cli_args a;
	struct plan p;
	struct err e = ERR_INIT;
	char *text;
	size_t len;
	int rc;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		import_usage(stdout);
		return EXIT_OK;
	}
	if (argc >= 2 && strcmp(argv[1], "profile") == 0)
		return import_profile(argc - 1, argv + 1);
	if (argc < 2 || strcmp(argv[1], "torch-csv") != 0)
		return cli_usage_error("import", "the import formats are torch-csv and profile");
	argc--;
	argv++;
	if ((rc = cli_args_parse(&import_spec, argc, argv, &partition, &a)) != CLI_ARGS_GO)
		return rc;
	if (optind != argc - 1 || !a.model_arg || !a.cluster_arg || !a.out)
		return cli_usage_error("import", "needs FILE, --model, --cluster and -o");
	text = fileio_read(argv[optind], &len, &e);
	if (!text)
		return cli_report(&e);
	if ((rc = cli_args_load(&a, CLI_IN_MODEL | CLI_IN_CLUSTER)) == EXIT_OK) {
		if (torchcsv_import(&p, text, len, argv[optind], &a.model, NULL, &a.cluster, NULL, a.microbatches,
		                    partition, &e) < 0) {
			/* --partition's value (partition_by_name's words): its usage error */
			bool opt = e.cls == ERR_INPUT && partition &&
			           (strncmp(e.msg, "partition '", 11) == 0 || strncmp(e.msg, "unknown partition '", 19) == 0);

			rc = opt ? cli_usage_error("import", "%s", e.msg) : cli_report(&e);
		} else {
			rc = cli_write_plan(&p, a.out, a.model_path, a.cluster_path, false);
			if (rc == EXIT_OK)
				rc = import_verdict(&p, a.out);
			plan_release(&p);
		}
	}
	free(text);
	cli_args_release(&a);
	return rc;
}

int cli_export_runs(const char *path, const struct plan *p, bool force)
{
	struct err e = ERR_INIT;
	struct sim s;
	struct sim_opts o;
	struct metrics m;
	int rc = EXIT_OK;

	memset(&s, 0, sizeof(s));
	sim_opts_default(&o);
	if (sim_run(&s, p, &o, &m, &e) < 0) {
		rc = e.cls == ERR_INFEASIBLE ? EXIT_INFEASIBLE : EXIT_RUNTIME;
		cli_err("%s: %s%s\n", path, rc == EXIT_INFEASIBLE ? "plan infeasible: " : "", e.msg);
	} else if (m.noom && !force) {
		struct strbuf sb = STRBUF_INIT;

		cli_oom_line(&sb, path, p, &m);
		cli_err("%s (--force exports it anyway)\n", strbuf_failed(&sb) ? path : sb.buf);
		strbuf_release(&sb);
		rc = EXIT_INFEASIBLE;
	}
	metrics_release(&m);
	sim_release(&s);
	return rc;
}

/* export torchtitan PLAN -o DIR: the CSV first, then the TOML that names it, each
 * written atomically; DIR is made when missing. */
static int export_torchtitan(struct plan *p, const char *plan_arg, const char *path, bool force, const char *dir)
{
	struct strbuf toml = STRBUF_INIT, csv = STRBUF_INIT;
	struct err e = ERR_INIT;
	char abs[PATH_MAX], csv_path[PATH_MAX + 16], toml_path[PATH_MAX + 16];
	struct stat st;
	int rc = EXIT_OK;

	if (strcmp(dir, "-") == 0)
		return cli_usage_error("export", "torchtitan writes two files: -o names a directory");
	if (torchtitan_check(p, &e) < 0) {
		err_prefix(&e, plan_arg);
		return cli_report(&e);
	}
	if ((rc = cli_export_runs(path, p, force)) != EXIT_OK)
		return rc; /* before DIR is made: nothing is written */
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		err_set(&e, ERR_INPUT, "%s: cannot make the directory: %s", dir, strerror(errno));
		return cli_report(&e);
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || !realpath(dir, abs)) {
		err_set(&e, ERR_INPUT, "%s: not a directory", dir);
		return cli_report(&e);
	}
	snprintf(csv_path, sizeof(csv_path), "%s/schedule.csv", abs);
	snprintf(toml_path, sizeof(toml_path), "%s/job.toml", abs);
	if (torchtitan_export(p, plan_arg, csv_path, &toml, &csv, &e) < 0 ||
	    (csv.len && fileio_write_atomic(csv_path, csv.buf, csv.len, &e) < 0) ||
	    fileio_write_atomic(toml_path, toml.buf, toml.len, &e) < 0)
		rc = cli_report(&e);
	strbuf_release(&toml);
	strbuf_release(&csv);
	return rc;
}

/* The text of export FORMAT (not torchtitan) of p into sb: 0, or the exit code after
 * one line (a layout the runtime refuses). */
static int export_text(const char *what, struct plan *p, const char *plan_arg, struct strbuf *sb)
{
	struct err e = ERR_INIT;
	int r;

	if (strcmp(what, "torch-csv") == 0)
		r = torchcsv_export(p, sb, &e);
	else if (strcmp(what, "megatron-args") == 0)
		return megatron_args(p, plan_arg, sb, &e) < 0 ? cli_report(&e) : EXIT_OK; /* names the plan */
	else if ((r = megatron_layout(p, sb, &e)) >= 0)
		strbuf_addch(sb, '\n');
	if (r < 0) {
		err_prefix(&e, plan_arg);
		return cli_report(&e);
	}
	return EXIT_OK;
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct plan p;
	struct err e = ERR_INIT;
	struct strbuf sb = STRBUF_INIT;
	const char *what, *plan_arg = NULL, *out = NULL;
	char path[PATH_MAX];
	bool force = false;
	int ch, rc;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		export_usage(stdout);
		return EXIT_OK;
	}
	if (argc >= 2 && strcmp(argv[1], "svg") == 0)
		return cmd_export_svg(argc - 1, argv + 1);
	if (argc < 3)
		return cli_usage_error("export", "needs a format (torch-csv, megatron-layout, megatron-args, torchtitan, svg) "
		                       "and a plan");
	what = argv[1];
	/* the options after FORMAT, read as every command's are (cli_getopt) */
	optind = 0;
	while ((ch = cli_getopt("export", argc - 1, argv + 1, "o:h", opts)) != -1) {
		switch (ch) {
		case 'o': out = optarg; break;
		case 'f': force = true; break;
		case 'h': export_usage(stdout); return EXIT_OK; /* `export FORMAT --help`, as svg answers */
		default: return EXIT_INPUT;                       /* cli_getopt said why */
		}
	}
	if (optind >= argc - 1)
		return cli_usage_error("export", "no plan given");
	if (optind < argc - 2)
		return cli_usage_error("export", "unexpected argument '%s'", argv[1 + optind + 1]);
	plan_arg = argv[1 + optind];
	if (strcmp(what, "torch-csv") != 0 && strcmp(what, "megatron-layout") != 0 && strcmp(what, "megatron-args") != 0 &&
	    strcmp(what, "torchtitan") != 0)
		return cli_usage_error("export", "unknown format '%s' (torch-csv, megatron-layout, megatron-args, torchtitan "
		                       "or svg)", what);
	if (strcmp(what, "torchtitan") == 0 && !out)
		return cli_usage_error("export", "torchtitan needs -o DIR");
	if (!out)
		out = "-";
	snprintf(path, sizeof(path), "%s", cli_resolve(plan_arg, "plans"));
	if (plan_load(&p, path, &e) < 0)
		return cli_report(&e);
	/* what the format refuses (exit 2) first, then whether the plan runs (exit 3), then
	 * the output: a plan that cannot run leaves nothing behind */
	if (strcmp(what, "torchtitan") == 0)
		rc = export_torchtitan(&p, plan_arg, path, force, out);
	else if ((rc = export_text(what, &p, plan_arg, &sb)) == EXIT_OK &&
	         (rc = cli_export_runs(path, &p, force)) == EXIT_OK)
		rc = cli_write_text(out, sb.buf, sb.len);
	strbuf_release(&sb);
	plan_release(&p);
	return rc;
}
