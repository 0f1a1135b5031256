/*
 * cli_args — a command's common options and inputs, declared once (see cli_args.h).
 *
 * The common options keep the option values (short letters) the commands always used,
 * so a command's short option string and its help text do not change; the command's own
 * table must not reuse a letter of a common input it declares. The union of the two
 * tables is built on the stack for every parse: cli_getopt sees one table, and its
 * messages (a missing or empty value, an unknown or ambiguous option) read as before.
 */
#include "config.h"
#include "cli/cli_args.h"

#include <getopt.h>
#include <string.h>

/* The common options, each with the input that brings it. */
static const struct {
	unsigned input;
	struct option opt;
} common[] = {
	{ CLI_IN_MODEL, { "model", required_argument, NULL, 'm' } },
	{ CLI_IN_CLUSTER, { "cluster", required_argument, NULL, 'c' } },
	{ CLI_IN_MICROBATCHES, { "microbatches", required_argument, NULL, 'n' } },
	{ CLI_IN_OUTPUT, { "output", required_argument, NULL, 'o' } },
	{ CLI_IN_JSON, { "json", no_argument, NULL, 'j' } },
	{ CLI_IN_COMM, { "comm", required_argument, NULL, 'C' } },
	{ CLI_IN_RUNTIME, { "runtime", required_argument, NULL, 'R' } },
	{ CLI_IN_LAYOUT, { "tp", required_argument, NULL, CLI_PAR_TP } },
	{ CLI_IN_LAYOUT, { "dp", required_argument, NULL, CLI_PAR_DP } },
	{ CLI_IN_LAYOUT, { "ep", required_argument, NULL, CLI_PAR_EP } },
	{ CLI_IN_LAYOUT, { "zero", required_argument, NULL, CLI_PAR_ZERO } },
	{ CLI_IN_LAYOUT, { "recompute", required_argument, NULL, CLI_PAR_RECOMPUTE } },
	{ CLI_IN_LAYOUT, { "grads", required_argument, NULL, CLI_PAR_GRADS } },
	{ CLI_IN_LAYOUT, { "micro-batch-size", required_argument, NULL, CLI_PAR_MBS } },
};
enum { NCOMMON = sizeof(common) / sizeof(common[0]), MAX_OPTIONS = 64 };

/* The command's table, then the common options it declares, then --help. */
static void build_table(const struct cli_args_spec *spec, struct option *all)
{
	int n = 0;

	for (const struct option *o = spec->options; o && o->name && n < MAX_OPTIONS - NCOMMON - 2; o++)
		all[n++] = *o;
	for (int i = 0; i < NCOMMON; i++)
		if (spec->inputs & common[i].input)
			all[n++] = common[i].opt;
	all[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	all[n] = (struct option){ NULL, 0, NULL, 0 };
}

/* One common option: 1 when ch was one the command declared, 0 when not, -1 after a usage
 * line. */
static int common_option(struct cli_args *a, int ch, const char *arg)
{
	const char *cmd = a->spec->name;
	unsigned in = a->spec->inputs;

	if (in & CLI_IN_LAYOUT) {
		int k = cli_par_option(cmd, ch, arg, &a->par);

		/* a plan has one micro-batch: only tune, compare and tui search it */
		if (k > 0 && ch == CLI_PAR_MBS && a->par.mbs < 0) {
			cli_usage_error(cmd, "--micro-batch-size auto: only tune, compare and tui search it; give a number");
			return -1;
		}
		if (k != 0)
			return k;
	}
	if (ch == 'm' && (in & CLI_IN_MODEL))
		a->model_arg = arg;
	else if (ch == 'c' && (in & CLI_IN_CLUSTER))
		a->cluster_arg = arg;
	else if (ch == 'n' && (in & CLI_IN_MICROBATCHES))
		return (a->microbatches = cli_positive(cmd, "--microbatches", arg)) < 0 ? -1 : 1;
	else if (ch == 'o' && (in & CLI_IN_OUTPUT))
		a->out = arg;
	else if (ch == 'j' && (in & CLI_IN_JSON))
		a->json = true;
	else if (ch == 'R' && (in & CLI_IN_RUNTIME))
		a->runtime_arg = arg;
	else if (ch == 'C' && (in & CLI_IN_COMM)) {
		if (plan_comm_from_name(arg, &a->comm) < 0) {
			cli_usage_error(cmd, "--comm: '%s' is not overlap or blocking", arg);
			return -1;
		}
		a->comm_name = arg;
	} else
		return 0;
	return 1;
}

int cli_args_parse(const struct cli_args_spec *spec, int argc, char **argv, void *ctx, struct cli_args *a)
{
	struct option all[MAX_OPTIONS];
	int ch, k, rc;

	memset(a, 0, sizeof(*a));
	a->spec = spec;
	cli_par_init(&a->par);
	build_table(spec, all);
	optind = 0;
	while ((ch = cli_getopt(spec->name, argc, argv, spec->shortopts, all)) != -1) {
		if ((k = common_option(a, ch, optarg)) != 0) {
			if (k < 0)
				return EXIT_INPUT;
			continue;
		}
		if (ch == 'h') {
			spec->usage(stdout);
			return EXIT_OK;
		}
		if (ch == '?' || !spec->option)
			return EXIT_INPUT;
		if ((rc = spec->option(ctx, ch, optarg)) != 0)
			return rc;
	}
	if (spec->inputs & CLI_IN_PLAN) {
		if (optind != argc - 1)
			return cli_usage_error(spec->name, optind >= argc ? "no plan given" : "one plan at a time");
		a->plan_arg = argv[optind];
	}
	return CLI_ARGS_GO;
}

int cli_args_load(struct cli_args *a, unsigned inputs)
{
	struct err e = ERR_INIT;
	int rc;

	if ((inputs & CLI_IN_MODEL) && a->model_arg && !a->have_model) {
		if ((rc = cli_load_model(a->model_arg, &a->model, a->model_path)) != 0)
			return rc;
		a->have_model = true;
	}
	if ((inputs & CLI_IN_CLUSTER) && a->cluster_arg && !a->have_cluster) {
		if ((rc = cli_load_cluster(a->cluster_arg, &a->cluster, a->cluster_path)) != 0)
			return rc;
		a->have_cluster = true;
	}
	if ((inputs & CLI_IN_RUNTIME) && !a->have_runtime) {
		if ((rc = cli_load_runtime(a->runtime_arg, &a->runtime)) != 0)
			return rc;
		a->have_runtime = true;
	}
	if ((inputs & CLI_IN_PLAN) && a->plan_arg && !a->have_plan) {
		snprintf(a->plan_path, sizeof(a->plan_path), "%s", cli_resolve(a->plan_arg, "plans"));
		if (plan_load(&a->plan, a->plan_path, &e) < 0)
			return cli_report(&e);
		a->have_plan = true;
	}
	return 0;
}

void cli_args_release(struct cli_args *a)
{
	if (a->have_model)
		model_release(&a->model);
	if (a->have_cluster)
		cluster_release(&a->cluster);
	if (a->have_runtime)
		runtime_release(&a->runtime);
	if (a->have_plan)
		plan_release(&a->plan);
	a->have_model = a->have_cluster = a->have_runtime = a->have_plan = false;
}
