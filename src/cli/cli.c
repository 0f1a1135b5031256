/*
 * cli — the command table and helpers shared by the subcommands (see cli.h).
 */
#include "config.h"
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>

#include "datadir.h"

const struct cli_cmd cli_commands[] = {
	{ "check", "FILE...", "validate model, cluster, plan and timeline files", cmd_check },
	{ "show", "MODEL [--json]", "print a model's layer table: kinds, costs, heaviest layers", cmd_show },
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
