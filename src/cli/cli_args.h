/*
 * cli_args — the one declared way a subcommand reads its common options and loads its
 * inputs. A command declares, in a struct cli_args_spec, which of the common inputs it
 * takes (a model, a cluster, a plan, microbatches, the layout options, --comm, -o,
 * --json, --runtime), its own options and the callback that handles them, the way a
 * command table declares each command's arguments. cli_args_parse() runs cli_getopt over
 * the union of both tables, keeps the common values in struct cli_args and hands every
 * other option to the command; cli_args_load() reads the files that were given, each
 * failure one line (file, JSON path, what is wrong) and its exit code.
 *
 * What is required, and in which words a missing input is named, stays the command's
 * (its usage line says it); so do its operands, except a PLAN operand (CLI_IN_PLAN).
 */
#ifndef OCTO_CLI_ARGS_H
#define OCTO_CLI_ARGS_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "cluster.h"
#include "model.h"
#include "plan.h"
#include "runtime.h"

enum cli_input {
	CLI_IN_MODEL = 1 << 0,        /* --model M: a path or a name under samples/models */
	CLI_IN_CLUSTER = 1 << 1,      /* --cluster C: a path or a name under samples/clusters */
	CLI_IN_PLAN = 1 << 2,         /* exactly one PLAN operand: a path or a name under plans/ */
	CLI_IN_MICROBATCHES = 1 << 3, /* --microbatches N, a positive integer */
	CLI_IN_LAYOUT = 1 << 4,       /* --tp --dp --ep --zero --recompute --grads (struct cli_par) */
	CLI_IN_COMM = 1 << 5,         /* --comm overlap|blocking */
	CLI_IN_OUTPUT = 1 << 6,       /* -o/--output FILE ("-": stdout) */
	CLI_IN_JSON = 1 << 7,         /* --json */
	CLI_IN_RUNTIME = 1 << 8,      /* --runtime R: a path or a name under samples/runtimes */
};

struct option;
struct cli_args_spec {
	const char *name;               /* the command, as its messages name it */
	unsigned inputs;                /* enum cli_input bits */
	const char *shortopts;          /* cli_getopt's: every short option, the common ones too */
	const struct option *options;   /* the command's own long options, NULL-terminated (NULL: none) */
	/* One of the command's own options: 0 to go on, else the exit code to stop with
	 * (EXIT_INPUT after a usage line). NULL when it has none. */
	int (*option)(void *ctx, int ch, const char *arg);
	void (*usage)(FILE *f);         /* --help, on stdout */
};

struct cli_args {
	const struct cli_args_spec *spec;
	/* the options as given (NULL / 0 / false when not) */
	const char *model_arg, *cluster_arg, *runtime_arg, *out, *plan_arg;
	int microbatches;
	bool json;
	struct cli_par par;
	const char *comm_name;          /* NULL: --comm not given */
	enum plan_comm comm;
	/* cli_args_load()'s, each with its have_ flag */
	char model_path[4096], cluster_path[4096], plan_path[4096];
	struct model model;
	struct cluster cluster;
	struct runtime runtime;
	struct plan plan;
	bool have_model, have_cluster, have_runtime, have_plan;
};

enum { CLI_ARGS_GO = -1 };
/* Parses argv for spec into a (ctx goes to spec->option): CLI_ARGS_GO when the command
 * goes on (optind is its first operand), else the exit code to return: EXIT_OK after
 * --help, EXIT_INPUT after a usage line. */
int cli_args_parse(const struct cli_args_spec *spec, int argc, char **argv, void *ctx, struct cli_args *a);
/* Loads the inputs of `inputs` (enum cli_input bits) in the order model, cluster, runtime,
 * plan: the model, cluster and plan when given; the runtime always (runtime_arg, which the
 * command may set to its own default first; NULL: megatron-core). 0, or the exit code
 * after printing the error (what was loaded stays loaded: cli_args_release frees it). */
int cli_args_load(struct cli_args *a, unsigned inputs);
void cli_args_release(struct cli_args *a);

#endif
