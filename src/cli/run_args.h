/*
 * run_args — the command line of `octopipe run`: its options, the hidden ones that inject
 * faults (tests of the failure paths), and the usage text. cmd_run.c runs what they ask.
 */
#ifndef OCTO_CLI_RUN_ARGS_H
#define OCTO_CLI_RUN_ARGS_H

#include <stdbool.h>

#include "cli/cli_args.h"
#include "exec/emu.h"

/* What a run does, whichever backend runs it. */
struct run_opts {
	struct emu_opts eo;
	const char *events_out, *tl_out;
	int iters;
	bool json;
	double gemm_tflops;
	bool share_gpus;
	bool force;
	bool fit;
};

/* What the command line asks for (the plan and --json are cli_args'). */
struct run_args {
	const char *backend;
	struct run_opts ro;
	bool want_mpi, dry_run;
};

/* Parses the options into ra and a: CLI_ARGS_GO to go on, else the exit code (EXIT_OK
 * after --help; a usage error is printed in one line). */
int run_parse_options(int argc, char **argv, struct run_args *ra, struct cli_args *a);

#endif
