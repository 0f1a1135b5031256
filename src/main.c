/*
 * octopipe — entry point: global options and dispatch to the subcommands in src/cli/.
 * The only place in the program that calls exit().
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "datadir.h"
#include "fileio.h"

#define DEFAULT_MODEL "nemotron-nano-v2-9b"

/* The commands, in the order --help lists them. */
#ifdef OCTO_CUDA_BACKEND
/* octopipe-cuda: the commands octopipe hands over to it (run --backend cuda, calibrate
 * --gpu), built from the engine and the executor only: no terminal UI, no ncurses. */
static const struct cli_cmd cli_commands[] = {
	{ "run", "PLAN --backend cuda", "execute a plan on GPUs, against its simulation", cmd_run },
	{ "calibrate", "--gpu MODEL -o MODEL", "refit a model's layer costs to this GPU", cmd_calibrate },
	{ NULL, NULL, NULL, NULL },
};
#else
static const struct cli_cmd cli_commands[] = {
	{ "check", "FILE...", "validate model, cluster, plan and timeline files", cmd_check },
	{ "show", "MODEL [--json]", "print a model's layers: kinds, costs, heaviest ones", cmd_show },
	{ "plan", "--model M --cluster C ...", "build a baseline plan (1f1b, zb-*, dualpipev, ...)", cmd_plan },
	{ "sim", "PLAN [--json] [--gantt]", "simulate a plan: iteration, bubbles, memory, trace", cmd_sim },
	{ "edit", "PLAN EDIT... -o OUT", "the TUI's hand edits: boundaries, moves, reorder", cmd_edit },
	{ "tune", "--model M --cluster C ...", "co-optimize partition, placement and schedule", cmd_tune },
	{ "compare", "--model M --cluster C ...", "every baseline and the tuned plan, side by side", cmd_compare },
	{ "import", "torch-csv|profile FILE ...", "PyTorch schedule CSV -> plan, or timings -> model", cmd_import },
	{ "cost", "CONFIG --cluster C -o MODEL", "price a config.json or architecture: a layer table", cmd_cost },
	{ "fidelity", "[POINTS] [--runtime R]", "predict published training runs at their layouts", cmd_fidelity },
	{ "run", "PLAN [--backend emu|cuda]", "execute a plan (emulated or on GPUs), vs. simulated", cmd_run },
	{ "calibrate", "TIMELINE -o MODEL", "fit costs to a measured run (--gpu: to this GPU)", cmd_calibrate },
	{ "export", "torch-csv|megatron-layout|megatron-args|torchtitan|svg PLAN",
	  "write a plan for a runtime, or an SVG Gantt chart", cmd_export },
	{ "report", "PLAN... -o FILE", "one HTML report: summary, speedups, Gantts, memory", cmd_report },
	{ "tui", "[PLAN | --model M --cluster C]", "the terminal UI: Gantts, hand edits, compare, steps", cmd_tui },
	{ NULL, NULL, NULL, NULL },
};
#endif

static void usage(FILE *f)
{
#ifdef OCTO_CUDA_BACKEND
	fputs("usage: octopipe-cuda [--help] [--version] COMMAND [ARGS]\n"
	      "\n"
	      "The GPU half of octopipe: 'octopipe run --backend cuda' and 'octopipe calibrate\n"
	      "--gpu' hand their whole command over to this program, which holds the CUDA and NCCL\n"
	      "code.\n"
	      "\n"
	      "commands:\n", f);
#else
	fputs("usage: octopipe [--help] [--version] COMMAND [ARGS]\n"
	      "\n"
	      "Plans, simulates and shows pipeline-parallel training of heterogeneous LLMs.\n"
	      "Without a command, opens the terminal UI on the bundled default sample\n"
	      "(" DEFAULT_MODEL "); when stdout is not a terminal, prints its layer table.\n"
	      "\n"
	      "commands:\n", f);
#endif
	for (const struct cli_cmd *c = cli_commands; c->name; c++) {
		char head[96];

		/* a synopsis too long for its column gets a line of its own, the summary below */
		snprintf(head, sizeof(head), "%s %s", c->name, c->args);
		if (strlen(head) <= 26)
			fprintf(f, "  %-26s %s\n", head, c->summary);
		else
			fprintf(f, "  %s\n  %-26s %s\n", head, "", c->summary);
	}
	fputs("\n'octopipe COMMAND --help' describes a command. Files: samples/ (models and\n"
	      "clusters), plans/; the formats are described in docs/DESIGN.md.\n"
	      "exit status: 0 ok, 1 runtime failure, 2 bad usage or input, 3 infeasible plan\n", f);
}

static void version(void)
{
	const char *dd = datadir_find(NULL);

	printf("octopipe %s\n", PACKAGE_VERSION);
#ifdef HAVE_CUDA_NCCL
	printf("executor: cuda+nccl backend available (octopipe-gpuinfo)\n");
#else
	printf("executor: cuda+nccl backend not built\n");
#endif
#ifdef HAVE_MPI
	printf("mpi: yes\n");
#else
	printf("mpi: no\n");
#endif
	printf("data: %s\n", dd ? dd : "(not found)");
}

/* Exits with rc once everything written to stdout has reached it: a full disk, /dev/full
 * or a closed pipe turns a success into exit 1 with one line, instead of a silent cut.
 * The line says why; where the last write had failed already (a long document), it is
 * cli_put_text's reason. */
static void finish(int rc)
{
	int saved;

	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
		saved = errno ? errno : cli_stdout_errno();
		cli_err("octopipe: cannot write to standard output: %s\n", saved ? strerror(saved) : "write error");
		exit(rc == EXIT_OK ? EXIT_RUNTIME : rc);
	}
	exit(rc);
}

/* After a command: its standard output flushed, then its deferred files renamed into place
 * where it succeeded (or wrote a plan that does not fit: exit 3), else left as they were. */
static void finish_command(int rc)
{
	struct err e = ERR_INIT;
	int saved;

	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		saved = errno ? errno : cli_stdout_errno();
		fileio_discard();
		cli_err("octopipe: cannot write to standard output: %s\n", saved ? strerror(saved) : "write error");
		exit(rc == EXIT_OK ? EXIT_RUNTIME : rc);
	}
	if (rc != EXIT_OK && rc != EXIT_INFEASIBLE)
		fileio_discard();
	else if (fileio_commit(&e) < 0)
		rc = cli_report(&e);
	finish(rc);
}

int main(int argc, char **argv)
{
	const char *cmd;

	/* A file-size limit (ulimit -f) is a full disk: the write fails with EFBIG and says so
	 * in one line, instead of SIGXFSZ killing the program silently mid-write. */
	signal(SIGXFSZ, SIG_IGN);
	datadir_find(argv[0]);
	if (argc < 2) {
#ifdef OCTO_CUDA_BACKEND
		usage(stderr);
		finish(EXIT_INPUT);
#else
		char *args[] = { "show", DEFAULT_MODEL, NULL };
		char *tui_args[] = { "tui", NULL };

		if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
			finish(cmd_tui(1, tui_args));
		finish(cmd_show(2, args));
#endif
	}
	cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		finish(EXIT_OK);
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
		version();
		finish(EXIT_OK);
	}
	for (const struct cli_cmd *c = cli_commands; c->name; c++)
		if (strcmp(c->name, cmd) == 0) {
			bool tui = strcmp(c->name, "tui") == 0;

			/* outputs never replace inputs, except the plan the TUI opened and saves */
			fileio_guard_inputs(!tui);
			/* a command's files are replaced together once it succeeded, or none are;
			 * not the TUI's saves (each is its own act) nor a GPU run's measurement
			 * (worth keeping whatever failed after it) */
			if (tui || strcmp(c->name, "run") == 0)
				finish(c->run(argc - 1, argv + 1));
			fileio_defer();
			finish_command(c->run(argc - 1, argv + 1));
		}
	cli_err("octopipe: '%s' is not a command (see 'octopipe --help')\n", cmd);
	finish(EXIT_INPUT);
}
