/*
 * cli — the command line front end: one function per subcommand, a shared table that
 * gives `octopipe --help` and dispatch, and small output helpers. This directory and
 * main.c are the only parts of src/ that write to stdout/stderr; commands return an exit
 * code (0 ok, 1 runtime failure, 2 bad usage or input, 3 infeasible plan) and main exits.
 */
#ifndef OCTO_CLI_H
#define OCTO_CLI_H

#include <stdio.h>

#include "err.h"

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_INPUT = 2, EXIT_INFEASIBLE = 3 };

struct cli_cmd {
	const char *name;
	const char *args;     /* synopsis after the name */
	const char *summary;  /* one line for `octopipe --help` */
	int (*run)(int argc, char **argv);
};

extern const struct cli_cmd cli_commands[];

int cmd_check(int argc, char **argv);
int cmd_show(int argc, char **argv);

/* Prints e's message as the one error line and returns the exit code for its class. */
int cli_report(const struct err *e);
/* "octopipe CMD: <message>" + a pointer to --help, exit code 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Resolves a sample name or path (see datadir_resolve) into a static buffer. */
const char *cli_resolve(const char *arg, const char *subdir);

#endif
