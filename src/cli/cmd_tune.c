/*
 * octopipe tune — run the three-phase tuner over the best layouts (tune_layouts.h) and
 * write the best plan. By default: a progress line on a terminal, then a summary of a few
 * lines (the layout and why, the gain over the best baseline, the distance to the tight
 * bound); --verbose prints each accepted step as it happens (one line, at most 80
 * columns), --steps-out keeps them all for replay and for the UI, --quiet prints nothing
 * but errors.
 *
 * The search is anytime: it spends its budget (--budget seconds, --evals candidates) and
 * Ctrl-C stops it early, keeping the best plan so far. SIGINT only raises a flag the
 * tuner polls between candidates; the default action comes back once the search ends,
 * so a second Ctrl-C while the plan is written still stops the program.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "doc.h"
#include "json.h"
#include "fileio.h"
#include "layout_search.h"
#include "layout_json.h"
#include "parallel.h"
#include "sim.h"
#include "target.h"
#include "tune.h"
#include "tune_layouts.h"
#include "clock.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* The progress line on a terminal: rewritten in place, cleared before other output. It
 * must never wrap: "\r\033[K" returns to the start of the last screen row only, so the
 * first row of a wrapped line would stay in the log at every update. So it is fitted to
 * the terminal's width (asked at every update: the window may be resized), dropping the
 * Ctrl-C hint, then the rate, then cutting, and kept off the last column (a terminal that
 * wraps on writing it). All of it is ASCII: a byte is a column. */
struct progress {
	FILE *f;
	bool shown;
};

static void progress_clear(struct progress *pg)
{
	if (pg->shown) {
		fputs("\r\033[K", pg->f);
		pg->shown = false;
	}
}

/* The columns of the terminal on fd: its window size, else $COLUMNS, else 80. */
static int terminal_columns(int fd)
{
	struct winsize ws;
	const char *env = getenv("COLUMNS");
	long n;
	char *end;

	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (env && *env) {
		errno = 0;
		n = strtol(env, &end, 10);
		if (!errno && !*end && n > 0 && n < 100000)
			return (int)n;
	}
	return 80;
}

static void progress_show(void *arg, const struct tune_progress *p)
{
	struct progress *pg = arg;
	struct strbuf line = STRBUF_INIT, rate = STRBUF_INIT;
	static const char hint[] = "  (Ctrl-C keeps the best)";
	size_t room = (size_t)terminal_columns(fileno(pg->f)) - 1;

	strbuf_addstr(&line, "tuning: best ");
	fmt_ms(&line, p->best_ms);
	strbuf_addstr(&line, "  bound ");
	fmt_ms(&line, p->bound_ms);
	strbuf_addf(&line, "  gap %.1f%%",
	            p->bound_ms > 0 && isfinite(p->best_ms) ? 100 * (p->best_ms / p->bound_ms - 1) : 0);
	strbuf_addf(&rate, "  %ld plans, %.0f/s", p->evaluations, p->seconds > 0 ? p->evaluations / p->seconds : 0);
	if (!strbuf_failed(&line) && !strbuf_failed(&rate)) {
		if (line.len + rate.len <= room) {
			strbuf_addstr(&line, rate.buf);
			if (line.len + sizeof(hint) - 1 <= room)
				strbuf_addstr(&line, hint);
		}
		if (!strbuf_failed(&line)) {
			fprintf(pg->f, "\r\033[K%.*s", (int)(line.len < room ? line.len : room), line.buf);
			fflush(pg->f);
			pg->shown = true;
		}
	}
	strbuf_release(&line);
	strbuf_release(&rate);
}

/* Whether stderr takes the progress line: a terminal that knows "erase to end of line"
 * (a dumb one, as in an editor's shell buffer, would show the codes). */
static bool progress_wanted(void)
{
	const char *term = getenv("TERM");

	return isatty(fileno(stderr)) && term && *term && strcmp(term, "dumb") != 0;
}

static void usage(FILE *f)
{
	fputs("usage: octopipe tune --model M --cluster C --microbatches N [-o PLAN]\n"
	      "                     [--steps-out STEPS.json] [--max-stages-per-device K]\n"
	      "                     [--budget SECONDS] [--evals N] [--seed N] [--threads N]\n"
	      "                     [--quiet|--verbose] [--layout auto|pp] [--global-batch B]\n"
	      "                     [--tp T] [--dp D] [--ep E] [--zero Z] [--grads G]\n"
	      "                     [--recompute HOW] [--micro-batch-size N|auto]\n"
	      "                     [--target octopipe|megatron|torchtitan]\n"
	      "\n"
	      "Co-optimizes partition, placement and scheduling: starting from the best\n"
	      "baseline, it balances the devices' loads exactly for each stage count and\n"
	      "placement (counting each device's wait for the pipeline to fill and for its\n"
	      "first backward) and moves layers toward the devices with the most bubble,\n"
	      "changes the stage count and moves or swaps stages, tunes the list scheduler and\n"
	      "then moves single ops into the idle time they can fill, keeping a move only\n"
	      "when the simulated iteration time drops (or stays while the devices finish\n"
	      "earlier), until a whole round improves nothing. The result is never slower\n"
	      "than the best baseline. Once converged it keeps searching (iterated local\n"
	      "search: perturb the best plan, descend again) until the budget is spent or the\n"
	      "plan reaches a lower bound (the tight one, or where memory binds the\n"
	      "memory-aware one); Ctrl-C stops it and keeps the best plan so far. On a\n"
	      "terminal a progress line shows the best time, the bound, the gap and the plans\n"
	      "simulated per second; then a summary of a few lines says the layout\n"
	      "chosen and why, the gain over the best baseline and the distance to the bound.\n"
	      "\n"
	      "  -o PLAN                     write the tuned plan (\"-\" for stdout)\n"
	      "  --steps-out FILE            write every accepted step (octopipe.steps/1)\n"
	      "  --verbose                   print every accepted step as it happens\n"
	      "  --quiet                     print nothing but errors\n"
	      "  --max-stages-per-device K   stages one device may hold (default 3)\n"
	      "  --budget SECONDS            the whole command takes at most this long, the\n"
	      "                              layout search and the result included (default\n"
	      "                              1; 0: until converged, or --evals);\n"
	      "                              --time-budget is the old name\n"
	      "  --evals N                   stop after about N candidate plans (without\n"
	      "                              --budget: no time limit, and the same seed gives\n"
	      "                              the same plan)\n"
	      "  --seed N                    seed of tie-breaks and perturbations\n"
	      "  --threads N                 threads that simulate candidate plans (default:\n"
	      "                              one per CPU, at most 64); the plan --evals finds\n"
	      "                              does not depend on it\n"
	      "  --target RUNTIME            what will run the plan: octopipe (the default,\n"
	      "                              any plan), megatron (Megatron-LM's own 1F1B and\n"
	      "                              interleaved schedules over partitions its layout\n"
	      "                              flags express: the virtual stages and the\n"
	      "                              boundaries are searched, not the order; no\n"
	      "                              --steps-out) or torchtitan (stages in its loop\n"
	      "                              or v placement, any order its schedule CSV runs;\n"
	      "                              FSDP where data-parallel, ZeRO 2 unless --zero\n"
	      "                              says 3; on more than one GPU, 2 or more FSDP\n"
	      "                              replicas: without them torchtitan trains in fp32)\n"
	      "\n"
	      "Parallel layout (--layout auto, the default): first it judges every layout the\n"
	      "options leave open - the PP x TP x DP factorisations of the cluster (TP within\n"
	      "a node), the ZeRO stage and the recompute mode - by its best baseline and the\n"
	      "tight bound of its replica (an estimate of the tuned time; with --target, the\n"
	      "baselines that runtime runs), memory first (a layout that does not fit is\n"
	      "sharded or recomputes before it is given up), at one global batch, the\n"
	      "likeliest first and for at most 30% of the budget; then it tunes the three best\n"
	      "estimates (of distinct pipelines: layouts that differ only in ZeRO count once),\n"
	      "each with a share of what is left, and keeps the fastest tuned plan\n"
	      "(Ctrl-C keeps the best). The global batch is --global-batch sequences, else\n"
	      "--microbatches x the micro-batch size x (--dp, else 1): a layout with D\n"
	      "replicas runs 1/D of it on each. The plan's microbatches are per replica.\n"
	      "Exit 3 when no layout fits, with the smallest peak memory found. --layout pp\n"
	      "tunes pure pipeline parallelism over every GPU instead.\n"
	      CLI_PAR_HELP, f);
}

/* What the command line asks for. */
struct args {
	struct cli_par cp;
	struct tune_opts o;
	bool layout_pp, quiet, verbose, budget_given;
	int global_batch;
	const char *model, *cluster, *out, *steps_out;
	enum target tgt;
};

static int parse_seed(const char *arg, unsigned *seed)
{
	char *end;
	unsigned long long v;

	/* digits only: strtoull would take a sign or spaces and wrap (-1 as the largest) */
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (!isdigit((unsigned char)arg[0]) || end == arg || *end || errno || v > 4294967295ULL)
		return cli_usage_error("tune", "--seed: '%s' is not an integer in [0, 4294967295]", arg);
	*seed = (unsigned)v;
	return 0;
}

/* One option of ch; 0, 1 (--help printed) or an exit code. */
static int parse_one(int ch, const char *arg, struct args *a)
{
	int n;

	switch (ch) {
	case 'L':
		if (strcmp(arg, "auto") != 0 && strcmp(arg, "pp") != 0)
			return cli_usage_error("tune", "--layout: 'auto' (search the parallel layouts) or 'pp' (pure "
			                       "pipeline parallelism over every GPU), not '%s'", arg);
		a->layout_pp = strcmp(arg, "pp") == 0;
		return 0;
	case 'G': return (a->global_batch = cli_positive("tune", "--global-batch", arg)) < 0 ? EXIT_INPUT : 0;
	case 'T':
		if (target_from_name(arg, &a->tgt) < 0)
			return cli_usage_error("tune", "--target: 'octopipe', 'megatron' or 'torchtitan', not '%s'", arg);
		return 0;
	case 'm': a->model = arg; return 0;
	case 'c': a->cluster = arg; return 0;
	case 'n': return (a->o.microbatches = cli_positive("tune", "--microbatches", arg)) < 0 ? EXIT_INPUT : 0;
	case 'o': a->out = arg; return 0;
	case 's': a->steps_out = arg; return 0;
	case 'k':
		return (a->o.max_stages_per_device = cli_positive("tune", "--max-stages-per-device", arg)) < 0 ? EXIT_INPUT : 0;
	case 't':
		a->budget_given = true;
		return cli_number("tune", "--budget", arg, 0, 1e7, false, &a->o.time_budget_s) < 0 ? EXIT_INPUT : 0;
	case 'E':
		if ((n = cli_positive("tune", "--evals", arg)) < 0)
			return EXIT_INPUT;
		a->o.max_evals = n;
		return 0;
	case 'S': return parse_seed(arg, &a->o.seed);
	case 'j':
		if ((n = cli_positive("tune", "--threads", arg)) < 0)
			return EXIT_INPUT;
		if (n > TUNE_MAX_THREADS)
			return cli_usage_error("tune", "--threads: at most %d, not %d", TUNE_MAX_THREADS, n);
		a->o.threads = n;
		return 0;
	case 'q': a->quiet = true; return 0;
	case 'V': a->verbose = true; return 0;
	case 'h': usage(stdout); return 1;
	default: return EXIT_INPUT;
	}
}

/* Parses the command line into a: 0, 1 after --help, or an exit code. */
static int parse(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "cluster", required_argument, NULL, 'c' },
		{ "microbatches", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "steps-out", required_argument, NULL, 's' },
		{ "max-stages-per-device", required_argument, NULL, 'k' },
		{ "time-budget", required_argument, NULL, 't' },
		{ "budget", required_argument, NULL, 't' },
		{ "evals", required_argument, NULL, 'E' },
		{ "seed", required_argument, NULL, 'S' },
		{ "threads", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "layout", required_argument, NULL, 'L' },
		{ "global-batch", required_argument, NULL, 'G' },
		{ "target", required_argument, NULL, 'T' },
		CLI_PAR_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	const char *names[] = { "-o -", "--steps-out -" };
	int ch, r;

	memset(a, 0, sizeof(*a));
	tune_opts_default(&a->o);
	cli_par_init(&a->cp);
	optind = 0;
	while ((ch = cli_getopt("tune", argc, argv, "o:qh", opts)) != -1) {
		if ((r = cli_par_option("tune", ch, optarg, &a->cp)) != 0) {
			if (r < 0)
				return EXIT_INPUT;
			continue;
		}
		if ((r = parse_one(ch, optarg, a)) != 0)
			return r;
	}
	if (!a->model || !a->cluster || !a->o.microbatches)
		return cli_usage_error("tune", "needs --model, --cluster and --microbatches");
	if (!a->budget_given && !a->o.max_evals)
		a->o.time_budget_s = 1;
	if (optind < argc)
		return cli_usage_error("tune", "unexpected argument '%s'", argv[optind]);
	if (a->quiet && a->verbose)
		return cli_usage_error("tune", "--quiet and --verbose: one or the other");
	if (a->tgt == TARGET_MEGATRON && a->steps_out)
		return cli_usage_error("tune", "--steps-out: --target megatron searches Megatron-LM's own schedules, "
		                       "not the tuner's steps");
	if (a->tgt == TARGET_TORCHTITAN && !a->cp.zero && !a->layout_pp)
		a->cp.zero = 2 + 1;  /* torchtitan's data parallelism beside a pipeline is FSDP (torchtitan.c) */
	return cli_one_stdout("tune", names, (const char *[]){ a->out, a->steps_out }, 2) != EXIT_OK ? EXIT_INPUT : 0;
}

/* What the run prints as it goes. */
struct out {
	FILE *log;
	bool verbose;
	int ntune;
	struct progress pg;
};

/* One accepted step on one line of at most 80 columns: index, phase, the iteration time
 * after it, the move in words (cut to fit). */
static void print_step(void *arg, int k, const struct tune_step *st)
{
	struct out *w = arg;
	struct strbuf sb = STRBUF_INIT;
	size_t room;

	(void)k;
	if (!w->verbose)
		return;
	progress_clear(&w->pg);
	strbuf_addf(&sb, "%4d %-10s ", st->index, tune_phase_name(st->phase));
	if (st->kind != MOVE_START) {
		struct strbuf t = STRBUF_INIT;

		fmt_ms(&t, st->after_ms);
		strbuf_addf(&sb, "%10s ", strbuf_failed(&t) ? "?" : t.buf);
		strbuf_release(&t);
	}
	room = sb.len < 80 ? 80 - sb.len : 0;
	if (strlen(st->what) <= room)
		strbuf_addstr(&sb, st->what);
	else if (room > 3)
		strbuf_addf(&sb, "%.*s...", (int)(room - 3), st->what);
	if (!strbuf_failed(&sb))
		fprintf(w->log, "%s\n", sb.buf);
	fflush(w->log);
	strbuf_release(&sb);
}

static void print_event(void *arg, enum tune_layouts_event ev, int k, const struct tune_layouts_tried *t)
{
	struct out *w = arg;
	struct strbuf sb = STRBUF_INIT;

	if (!w->verbose || w->ntune < 2)
		return;
	progress_clear(&w->pg);
	if (ev == TL_EV_START) {
		strbuf_addf(&sb, "layout %d of %d: ", k + 1, w->ntune);
		cli_layout_words(&sb, &t->pick.par, t->pick.recompute);
		strbuf_addf(&sb, ", %d microbatch%s a replica", t->pick.microbatches,
		            t->pick.microbatches == 1 ? "" : "es");
	} else if (t->ok) {
		strbuf_addf(&sb, "layout %d of %d tuned: %.0f tokens/s", k + 1, w->ntune, t->tokens_per_s);
	} else {
		strbuf_addf(&sb, "layout %d of %d: %s", k + 1, w->ntune, t->why);
	}
	if (!strbuf_failed(&sb))
		cli_print_wrapped(w->log, sb.buf, 8);
	strbuf_release(&sb);
}

/* The layout lines of the summary: which, then why, wrapped to 80 columns. */
static void summary_layout(FILE *log, const struct tune_layouts_result *res)
{
	const struct tune_layout *L = res->L;
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "layout: ");
	cli_layout_words(&sb, &L->lc.par, L->lc.recompute);
	strbuf_addf(&sb, ", %d microbatch%s a replica\n        ", L->lc.microbatches,
	            L->lc.microbatches == 1 ? "" : "es");
	if (res->fallback)
		strbuf_addstr(&sb, "the best estimate");
	else if (res->ntried > 1)
		strbuf_addf(&sb, "the fastest of %d tuned (%.0f tokens/s)", res->ntried, res->tried[res->best].tokens_per_s);
	else
		strbuf_addstr(&sb, "the best estimate");
	strbuf_addf(&sb, " of %d judged%s", L->lc.candidates, L->lc.interrupted ? " before the interrupt" : "");
	if (L->lc.skipped)
		strbuf_addf(&sb, ", %d left by the %s", L->lc.skipped, L->lc.interrupted ? "interrupt" : "budget");
	strbuf_addf(&sb, "; global batch %ld", L->global_batch);
	if (res->relaxed > 0)
		strbuf_addf(&sb, "\n        %d of %d stages recompute less than the layout says", res->relaxed,
		            res->plan.nstages);
	if (!strbuf_failed(&sb))
		cli_print_wrapped(log, sb.buf, 8);
	strbuf_release(&sb);
}

/* The summary: the layout, the result against the best baseline, the bounds. */
static void summary(FILE *log, const struct args *a, const struct tune_layouts_result *res)
{
	const struct metrics *mt = &res->mt;
	struct strbuf sb = STRBUF_INIT;
	long evals = res->tr.evals;
	double secs = res->tr.seconds;
	int steps = 0;

	if (res->L->searched)
		summary_layout(log, res);
	if (res->t) {
		const struct tune_step *all;

		steps = tune_steps(res->t, &all) - 1;
		tune_stats(res->t, &evals, &secs);
	}
	if (res->fallback && res->beaten_ms > 0) {
		strbuf_addstr(&sb, "the layout's best baseline: ");
		fmt_ms(&sb, mt->makespan_ms);
		strbuf_addstr(&sb, " per iteration, faster than the tuned plan (");
		fmt_ms(&sb, res->beaten_ms);
		strbuf_addstr(&sb, ", its stages priced recomputing from the forward on)");
	} else if (res->fallback) {
		strbuf_addstr(&sb, "no tuned plan fits; the layout's best baseline does: ");
		fmt_ms(&sb, mt->makespan_ms);
	} else {
		strbuf_addstr(&sb, a->tgt == TARGET_MEGATRON ? "tuned for Megatron-LM: " : "tuned: ");
		fmt_ms(&sb, mt->makespan_ms);
		if (a->tgt == TARGET_MEGATRON && isfinite(res->baseline_ms) && res->baseline_ms > 0) {
			strbuf_addf(&sb, " per iteration, %.2fx its default (1F1B, even split: ",
			            res->baseline_ms / mt->makespan_ms);
			fmt_ms(&sb, res->baseline_ms);
			strbuf_addch(&sb, ')');
		} else if (isfinite(res->baseline_ms) && res->baseline_ms > 0) {
			strbuf_addf(&sb, " per iteration, %.2fx the best baseline (", res->baseline_ms / mt->makespan_ms);
			fmt_ms(&sb, res->baseline_ms);
			strbuf_addch(&sb, ')');
		}
		strbuf_addf(&sb, "\n       bubble %.1f%%; %d steps, %ld plans simulated in %.2f s", 100 * mt->bubble_ratio,
		            steps, evals, secs);
	}
	strbuf_addstr(&sb, "\nbounds: ");
	fmt_ms(&sb, mt->lower_bound_ms);
	strbuf_addf(&sb, " (efficiency %.1f%%), tight ", 100 * mt->efficiency);
	fmt_ms(&sb, mt->lower_bound_tight_ms);
	strbuf_addf(&sb, " (efficiency %.1f%%)\n        at most %.1f%% slower than the best plan can be",
	            100 * mt->efficiency_tight,
	            mt->lower_bound_tight_ms > 0 ? fmax(0, 100 * (mt->makespan_ms / mt->lower_bound_tight_ms - 1)) : 0);
	if (mt->lower_bound_memory_ms > mt->lower_bound_tight_ms * (1 + 1e-9)) {
		/* memory binds: what no plan that fits can beat */
		strbuf_addstr(&sb, "\n        in memory: ");
		fmt_ms(&sb, mt->lower_bound_memory_ms);
		strbuf_addf(&sb, " (efficiency %.1f%%), %.1f%% from the best that fits", 100 * mt->efficiency_memory,
		            fmax(0, 100 * (mt->makespan_ms / mt->lower_bound_memory_ms - 1)));
	}
	if (!res->L->searched && !res->fallback && a->cp.recompute < 0) {
		/* pure pipeline parallelism where the tuner made stages recompute: memory binds */
		int n = 0;

		for (int st = 0; st < res->plan.nstages; st++)
			n += res->plan.stages[st].recompute != RECOMPUTE_NONE;
		if (n > 0)
			strbuf_addf(&sb, "\nmemory binds: %d of %d stages recompute; --layout auto also weighs "
			            "TP, DP and ZeRO", n, res->plan.nstages);
	}
	if (res->interrupted)
		strbuf_addstr(&sb, "\ninterrupted: writing the best plan found so far");
	if (!strbuf_failed(&sb))
		cli_print_wrapped(log, sb.buf, 8);
	strbuf_release(&sb);
}

/* The steps file: the tuner's steps and, before them, the layout step. */
static int write_steps(const char *path, const struct tune_layouts_result *res)
{
	cJSON *root;
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (!res->t) {
		/* Megatron-LM's own schedules, or the search's baseline: no tuner steps were taken */
		cli_err("octopipe tune: --steps-out %s: no tuner steps to write (%s)\n", path,
		        res->fallback ? "the plan is the layout's baseline" : "the Megatron-LM search takes none");
		return EXIT_OK;
	}
	root = tune_steps_to_json(res->t);
	if (root && res->L->searched) {
		const struct layout_choice *lc = &res->L->lc;
		struct jw w = { false };
		cJSON *lo = jw_obj(&w, root, "layout");

		jw_num(&w, lo, "pp", lc->par.pp);
		jw_num(&w, lo, "tp", lc->par.tp);
		jw_num(&w, lo, "dp", lc->par.dp);
		jw_num(&w, lo, "ep", lc->par.ep);
		jw_num(&w, lo, "zero", lc->par.zero);
		jw_str(&w, lo, "grads", parallel_grads_name(lc->par.fp32_grads));
		jw_str(&w, lo, "recompute", recompute_name(lc->recompute));
		jw_num(&w, lo, "microbatches_per_replica", lc->microbatches);
		jw_num(&w, lo, "micro_batch_size", (double)res->plan.model.micro_batch_size);
		jw_num(&w, lo, "global_batch", (double)res->L->global_batch);
		jw_num(&w, lo, "candidates", lc->candidates);
		jw_num(&w, lo, "best_baseline_tokens_per_s", lc->tokens_per_s);
		if (w.oom) {
			cJSON_Delete(root);
			root = NULL;
		}
	}
	if (!root)
		return cli_report(&(struct err){ .cls = ERR_RUNTIME, .msg = "out of host memory writing the steps" });
	json_write(&sb, root);
	rc = cli_write_text(path, sb.buf, sb.len);
	cJSON_Delete(root);
	strbuf_release(&sb);
	return rc;
}

/* Loads the inputs and checks the outputs can be written (refused now, not after the
 * budget is spent). 0 or an exit code. */
static int load(const struct args *a, struct model *m, struct cluster *c, char *mpath, char *cpath)
{
	const char *outs[] = { a->out, a->steps_out };
	struct err e = ERR_INIT;
	int rc;

	if ((rc = cli_load_model(a->model, m, mpath)) != 0)
		return rc;
	if ((rc = cli_load_cluster(a->cluster, c, cpath)) != 0) {
		model_release(m);
		return rc;
	}
	for (int i = 0; i < 2; i++)
		if (outs[i] && strcmp(outs[i], "-") != 0 && fileio_check_writable(outs[i], &e) < 0) {
			cli_err("octopipe tune: %s\n", e.msg);
			model_release(m);
			cluster_release(c);
			return e.cls == ERR_INPUT ? EXIT_INPUT : EXIT_RUNTIME;
		}
	return 0;
}

/* Picks the layout and tunes: 0 with res filled, or an exit code after the error. */
static int run(struct args *a, const struct model *m, const struct cluster *c, double t0, struct out *w,
               struct tune_layouts_result *res)
{
	double B = a->o.time_budget_s;
	struct layout_constraints base = {
		.stop = &interrupted,
		.deadline_s = B > 0 ? t0 + TUNE_LAYOUTS_SEARCH_SHARE * B : 0,
		.give_up_s = B > 0 ? t0 + TUNE_LAYOUTS_GIVE_UP_SHARE * tune_budget_limit(B) : 0,
		/* Megatron-LM: its own schedules (a model it cannot build is refused by its search,
		 * with the reason); torchtitan: the baselines its schedule CSV runs */
		.accept = a->tgt == TARGET_TORCHTITAN ? target_accepts : NULL,
		.accept_arg = &a->tgt,
		.schedules = a->tgt == TARGET_MEGATRON ? TUNE_MEGATRON_SCHEDULES : 0,
		.block_recompute = a->tgt == TARGET_MEGATRON,
		.zero_where_dp = a->tgt == TARGET_TORCHTITAN,
	};
	struct tune_layouts_opts to = {
		.tune = a->o, .target = a->tgt, .relax_recompute = a->cp.recompute < 0,
		.deadline_s = B > 0 ? t0 + B : 0, .on_step = print_step, .on_event = print_event, .arg = w,
	};
	struct tune_layout L;
	struct err e = ERR_INIT;
	int rc;

	/* up front: what the target runs none of, a budget the inputs' reading has spent, or
	 * no plan of this size can be simulated within (--layout pp: one baseline and the result) */
	if (target_check_search(a->tgt, m, c->devices, a->layout_pp, &e) < 0) {
		cli_err("octopipe tune: %s\n", e.msg);
		return EXIT_INPUT;
	}
	if ((rc = cli_budget_holds("tune", B, t0, a->layout_pp ? 2 : 0, c->devices, to.tune.microbatches)) != 0)
		return rc;
	if ((rc = cli_pick_layout("tune", &a->cp, a->layout_pp, a->global_batch, m, c, &to.tune.microbatches, &base,
	                          &L)) != 0)
		return rc;
	w->ntune = L.searched && !L.lc.interrupted && L.lc.ntop > 1 ? L.lc.ntop : 1;
	if (L.searched && (rc = cli_budget_holds_after_search("tune", B, t0, L.lc.par.pp, L.lc.microbatches)) != 0) {
		tune_layout_release(&L);
		return rc;
	}
	if (a->tgt == TARGET_TORCHTITAN) {
		to.tune.accept = target_accepts;
		to.tune.accept_arg = &a->tgt;
	}
	if (!a->quiet && progress_wanted() && a->tgt != TARGET_MEGATRON) {
		to.tune.progress = progress_show;
		to.tune.progress_arg = &w->pg;
	}
	if (!a->quiet && a->tgt != TARGET_OCTOPIPE) {
		struct strbuf t = STRBUF_INIT;

		if (a->tgt == TARGET_MEGATRON)
			strbuf_addf(&t, "target megatron: searching Megatron-LM's 1F1B and interleaved schedules "
			            "(up to %d virtual stages a rank)", a->o.max_stages_per_device);
		else
			strbuf_addf(&t, "target torchtitan: searching its loop and v placements%s",
			            a->cp.zero == 3 ? ", FSDP keeping the gathered weights (ZeRO 2) where "
			                              "data-parallel" :
			            a->cp.zero == 4 ? ", FSDP (ZeRO 3) where data-parallel" : "");
		if (!strbuf_failed(&t))
			cli_print_wrapped(w->log, t.buf, 8);
		strbuf_release(&t);
	}
	if (w->verbose && w->ntune > 1)
		fprintf(w->log, "tuning the %d layouts with the best estimates, sharing the budget left\n", w->ntune);
	rc = tune_layouts_run(m, c, &L, &to, res, &e);
	progress_clear(&w->pg);
	tune_layout_release(&L);
	if (rc < 0) {
		/* one line that names the command, as every other error of tune's; a pure
		 * pipeline that fits nowhere may fit with the other degrees */
		cli_err("octopipe tune: %s%s\n", e.msg, a->layout_pp && e.cls == ERR_INFEASIBLE &&
		        a->tgt == TARGET_OCTOPIPE && c->devices > 1 ? "; --layout auto also weighs TP, DP and ZeRO" : "");
		return e.cls == ERR_INPUT ? EXIT_INPUT : e.cls == ERR_INFEASIBLE ? EXIT_INFEASIBLE : EXIT_RUNTIME;
	}
	return 0;
}

int cmd_tune(int argc, char **argv)
{
	double t0 = clock_now_s();
	struct args a;
	/* static: the tuner below needs the stack (a 64 KB one in tests/hardening.sh) */
	static char mpath[4096], cpath[4096];
	struct model m;
	struct cluster c;
	struct tune_layouts_result res;
	struct out w = { .pg = { stderr, false } };
	struct sigaction sa, old_sa;
	int rc;

	if ((rc = parse(argc, argv, &a)) != 0)
		return rc == 1 ? EXIT_OK : rc;
	if ((rc = cli_budget_read_holds("tune", a.o.time_budget_s, a.model)) != 0 ||
	    (rc = load(&a, &m, &c, mpath, cpath)) != 0)
		return rc;
	/* with the plan on stdout (-o -) every report line goes to stderr */
	w.log = a.out && strcmp(a.out, "-") == 0 ? stderr : stdout;
	w.verbose = a.verbose;
	/* from here Ctrl-C keeps the best so far: during the layout search the best layout
	 * judged (its best baseline is then the plan: the tuner sees the flag and stops) */
	interrupted = 0;
	a.o.stop = &interrupted;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_sa);
	rc = run(&a, &m, &c, t0, &w, &res);
	sigaction(SIGINT, &old_sa, NULL);
	if (rc == 0) {
		if (!a.quiet)
			summary(w.log, &a, &res);
		if (a.out)
			rc = cli_write_plan(&res.plan, a.out, mpath, cpath, false);
		if (rc == EXIT_OK && a.steps_out)
			rc = write_steps(a.steps_out, &res);
		if (rc == EXIT_OK && res.mt.noom)
			rc = EXIT_INFEASIBLE;
		tune_layouts_release(&res);
	}
	model_release(&m);
	cluster_release(&c);
	return rc;
}
