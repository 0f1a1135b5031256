/*
 * cli — the command line front end: one function per subcommand, a shared table that
 * gives `octopipe --help` and dispatch, and small output helpers. This directory and
 * main.c are the only parts of src/ that write to stdout/stderr; commands return an exit
 * code (0 ok, 1 runtime failure, 2 bad usage or input, 3 infeasible plan) and main exits.
 */
#ifndef OCTO_CLI_H
#define OCTO_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "err.h"

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_INPUT = 2, EXIT_INFEASIBLE = 3 };

struct cli_cmd {
	const char *name;
	const char *args;     /* synopsis after the name */
	const char *summary;  /* one line for `octopipe --help` */
	int (*run)(int argc, char **argv);
};


int cmd_check(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_edit(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_export(int argc, char **argv);
/* export svg (cmd_report.c): argv[0] is "svg". */
int cmd_export_svg(int argc, char **argv);
/* Whether an export of plan p (read from path) may go on: EXIT_OK, or EXIT_INFEASIBLE after
 * the line `octopipe sim` prints for it (EXIT_RUNTIME after a line on another failure). A
 * deadlock is always refused; a device out of memory unless force (--force, as run's). */
struct plan;
int cli_export_runs(const char *path, const struct plan *p, bool force);
int cmd_report(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_cost(int argc, char **argv);
int cmd_fidelity(int argc, char **argv);
int cmd_tui(int argc, char **argv);

/* Prints one message to stderr, with control characters from names and paths escaped
 * (every error line of the CLI goes through here or cli_report / cli_usage_error). */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A file or model name as the lines on stdout show it: control characters, newlines and
 * bytes that are no UTF-8 escaped (as the error lines escape them), a name longer than
 * CLI_NAME_MAX cut in the middle. In one of four rotating buffers: up to four in one line. */
#define CLI_NAME_MAX 1000
const char *cli_name(const char *s);
void cli_verr(const char *fmt, va_list ap);
/* getopt_long for a subcommand: one usage line naming the option on a missing value, an
 * unknown or ambiguous option, a value given to a flag, an empty value, or a value that is
 * the next option (`--steps -o`: a word after the option that starts with '-' and is not
 * "-" or a number; --steps=-x gives such a value); it then returns '?' (the caller returns
 * EXIT_INPUT). Otherwise as getopt_long. */
struct option;
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts);
/* A number option inside [lo, hi] (lo excluded with lo_open); NaN, infinities and trailing
 * text are refused with a usage line. Returns 0, or -1 after printing. */
int cli_number(const char *cmd, const char *opt, const char *value, double lo, double hi, bool lo_open,
               double *out);
/* Prints e's message as the one error line and returns the exit code for its class. */
int cli_report(const struct err *e);
/* "octopipe CMD: <message>" + a pointer to --help, exit code 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Resolves a sample name or path (see datadir_resolve) into a static buffer. */
const char *cli_resolve(const char *arg, const char *subdir);

struct model;
struct cluster;
struct plan;
/* Loads MODEL / CLUSTER arguments (paths or sample names); on failure prints the error
 * and returns its exit code, else 0. path_out receives the resolved path (4096 bytes). */
int cli_load_model(const char *arg, struct model *m, char *path_out);
int cli_load_cluster(const char *arg, struct cluster *c, char *path_out);
/* Loads a runtime profile (a path or a bundled name under samples/runtimes; NULL: the
 * default, megatron-core); on failure prints the error and returns its exit code. */
struct runtime;
struct cost_opts;
int cli_load_runtime(const char *arg, struct runtime *rt);
/* The efficiencies rt achieves on c's GPU into c->hw (unless c holds a calibration) and
 * rt's kernel choices into o. */
void cli_apply_runtime(const struct runtime *rt, struct cluster *c, struct cost_opts *o);
/* An integer option value in [lo, hi] (lo >= 0), or -1 after printing a usage error. */
int cli_int(const char *cmd, const char *opt, const char *value, int lo, int hi);
/* A positive integer option value (up to a million), or -1 after printing a usage error. */
int cli_positive(const char *cmd, const char *opt, const char *value);
/* Sets p's model/cluster references to the given files as seen from out_path's
 * directory, so the written plan finds them wherever it is opened from. */
int cli_set_refs(struct plan *p, const char *model_path, const char *cluster_path, const char *out_path);
/* Writes plan p to out: "-" prints it to stdout with the model and cluster embedded;
 * otherwise the file refers to model_path / cluster_path relative to it (or embeds them
 * with embed). Prints the error and returns its exit code. */
int cli_write_plan(struct plan *p, const char *out, const char *model_path, const char *cluster_path, bool embed);
/* Writes model m to out ("-": stdout, else atomically to the file); prints the error and
 * returns its exit code. */
int cli_write_model(const struct model *m, const char *out);
/* --tp --dp --ep --zero --recompute: the parallel layout options of plan, sim, compare
 * and tune (long options only; their values are CLI_PAR_* above any short option). */
enum { CLI_PAR_TP = 0x200, CLI_PAR_DP, CLI_PAR_EP, CLI_PAR_ZERO, CLI_PAR_RECOMPUTE, CLI_PAR_GRADS, CLI_PAR_MBS };
#define CLI_PAR_OPTIONS \
	{ "tp", required_argument, NULL, CLI_PAR_TP }, { "dp", required_argument, NULL, CLI_PAR_DP }, \
	{ "ep", required_argument, NULL, CLI_PAR_EP }, { "zero", required_argument, NULL, CLI_PAR_ZERO }, \
	{ "recompute", required_argument, NULL, CLI_PAR_RECOMPUTE }, { "grads", required_argument, NULL, CLI_PAR_GRADS }, \
	{ "micro-batch-size", required_argument, NULL, CLI_PAR_MBS }
#define CLI_PAR_HELP \
	"  --tp T, --dp D    tensor-parallel degree (in a node), data-parallel replicas\n" \
	"  --ep E, --zero Z  expert parallelism over the replicas (E divides D); ZeRO 0-3\n" \
	"  --recompute none|selective|full   activation recompute of every stage\n" \
	"  --grads bf16|fp32 gradient precision (default bf16: 16 bytes a parameter with\n" \
	"                    Adam; fp32, Megatron-LM's bf16 default: 18 bytes, and the\n" \
	"                    data-parallel reduction moves twice the bytes)\n" \
	"  --micro-batch-size N  sequences a microbatch (the table re-priced at N; tune\n" \
	"                    and compare also take auto: searched over 1, 2, 4, 8, 16)\n"
struct cli_par {
	int tp, dp, ep, zero;    /* 0: not given */
	long mbs;                /* --micro-batch-size: 0 not given, -1 auto */
	int grads;               /* 0: not given, 1: bf16, 2: fp32 */
	int recompute;           /* enum recompute; -1: not given */
};
void cli_par_init(struct cli_par *cp);
/* Handles one of the options above: 1 when ch was one (0 when not, -1 after a usage error). */
int cli_par_option(const char *cmd, int ch, const char *arg, struct cli_par *cp);
/* Whether any of --tp --dp --ep --zero was given. */
bool cli_par_given(const struct cli_par *cp);
struct parallel;
/* The layout the options ask for on cluster c with pp pipeline devices (0: all the
 * GPUs that T x D leave, c->devices / (T x D)); base gives the values not given. */
void cli_par_layout(const struct cli_par *cp, const struct parallel *base, const struct cluster *c, int pp,
                    struct parallel *out);
/* The layout a tune or compare run works at (tune_layouts.h): searched over what the
 * layout options leave open unless layout_pp, at the global batch the options give. */
#include "tune_layouts.h"
/* Picks it; *microbatches becomes the per-replica count. base (NULL: none) gives the
 * search's stop flag, deadline and schedule filter. Returns 0 or the exit code after
 * printing the error. */
int cli_pick_layout(const char *cmd, const struct cli_par *cp, bool layout_pp, int global_batch,
                    const struct model *m, const struct cluster *c, int *microbatches,
                    const struct layout_constraints *base, struct tune_layout *out);
/* Whether --budget B (seconds from t0; 0: none) can hold (tune_budget_limit(B)): refused
 * (one line, exit 2) once reading the inputs took more than the layout search may
 * (TUNE_LAYOUTS_GIVE_UP_SHARE of it), or when `sims` simulations of S stages x M
 * microbatches (TUNE_SIM_OPS_PER_S) cannot fit the part left after the search. Returns 0,
 * or the exit code after saying why. */
int cli_budget_holds(const char *cmd, double B, double t0, int sims, int S, int M);
/* The same once the layout search found a layout at S stages x M microbatches: the search
 * may have run up to its give-up time, so only whether the best baseline and the result
 * can still be simulated within tune_budget_limit(B) is judged. */
int cli_budget_holds_after_search(const char *cmd, double B, double t0, int S, int M);
/* The same before the model is read: refused when reading its file (CLI_READ_BYTES_PER_S)
 * would take more than the layout search may. */
#define CLI_READ_BYTES_PER_S 20e6
int cli_budget_read_holds(const char *cmd, double B, const char *model);
struct strbuf;
/* The layout in words: "pp P x tp T x dp D (ep E, ZeRO Z, recompute R, micro-batch B)" (ep
 * only when > 1, the micro-batch only when the layout re-prices the table at it). */
void cli_layout_words(struct strbuf *sb, const struct parallel *par, enum recompute rc);
/* The width prose output keeps to (a terminal's 80 columns). */
#define CLI_WIDTH 80
/* Prints text and a newline to f, each of its lines wrapped to CLI_WIDTH columns: at a
 * clause (after ", ", "; " or ": ", or before " (") where one lies in the last two thirds of the room,
 * else at a space, outside parentheses where it can; a continuation starts with indent
 * spaces. A line's own leading spaces are kept. */
void cli_print_wrapped(FILE *f, const char *text, int indent);
struct metrics;
struct strbuf;
/* The line sim prints for a plan whose device runs out of host memory (m->noom > 0). */
void cli_oom_line(struct strbuf *sb, const char *path, const struct plan *p, const struct metrics *m);
/* Simulates p: EXIT_OK when it runs, else EXIT_INFEASIBLE (deadlock, out of device memory) or
 * EXIT_RUNTIME, with the line `octopipe sim` prints for it appended to why. */
int cli_plan_verdict(const char *path, const struct plan *p, struct strbuf *why);
/* Prints a built JSON document to stdout with the project's printer and frees it; oom
 * (a jw builder's flag) or a NULL root is reported as one line. Returns the exit code. */
#include <cjson/cJSON.h>
int cli_put_json(cJSON *root, bool oom);
/* Standard output holds one document, and a file one output: EXIT_INPUT after one line
 * when more than one of the n outputs goes to stdout (outs[i] "-"; a flag such as --json
 * passes "-" when given, NULL when not) or two name the same file, else EXIT_OK.
 * names[i] is how the option is spelt in the message (up to a space: "--trace-out -"). */
int cli_one_stdout(const char *cmd, const char *const *names, const char *const *outs, int n);
/* EXIT_INPUT after one line when out (not "-") is the same file as one of the n inputs
 * (NULL entries are skipped): a picture or report must never replace the plan it shows. */
int cli_refuse_input(const char *cmd, const char *out, const char *const *inputs, int n);
/* Writes text to path ("-" = stdout) atomically; prints the error and returns its code. */
int cli_write_text(const char *path, const char *text, size_t len);
/* Writes len bytes of text to stdout, keeping why the first such write failed: stdio
 * writes a long text past its buffer, so the final fflush (main) has nothing left to fail
 * on and cannot tell the reason ("No space left on device") any more. */
void cli_put_text(const char *text, size_t len);
/* That reason (an errno), 0 when no write of cli_put_text failed with one. */
int cli_stdout_errno(void);

#endif
