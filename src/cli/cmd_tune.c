/*
 * octopipe tune — run the three-phase tuner and write the best plan; each accepted step
 * is printed as it happens (phase, the move in words, the iteration time before and
 * after), and --steps-out keeps them for replay and for the UI.
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
	      "                     [--budget SECONDS] [--evals N] [--seed N] [--quiet]\n"
	      "                     [--layout auto|pp] [--global-batch B] [--tp T] [--dp D] [--ep E]\n"
	      "                     [--zero Z] [--grads G] [--recompute HOW]\n"
	      "                     [--target octopipe|megatron|torchtitan]\n"
	      "\n"
	      "Co-optimizes partition, placement and scheduling: starting from the best baseline,\n"
	      "it balances the devices' loads exactly for each stage count and placement (counting\n"
	      "each device's wait for the pipeline to fill and for its first backward) and moves\n"
	      "layers toward the devices with the most bubble, changes the stage count and moves\n"
	      "or swaps stages, tunes the list scheduler and then moves single ops into the idle\n"
	      "time they can fill, keeping a move only when the simulated iteration time drops\n"
	      "(or stays while the devices finish earlier), until a whole round improves nothing.\n"
	      "The result is never slower than the best baseline. Once converged it keeps searching\n"
	      "(iterated local search: perturb the best plan, descend again) until the budget is\n"
	      "spent or the plan reaches the tight lower bound; Ctrl-C stops it and keeps the best\n"
	      "plan so far. On a terminal a progress line shows the best time, the bound, the gap\n"
	      "and the plans simulated per second.\n"
	      "\n"
	      "  -o PLAN                     write the tuned plan (\"-\" for stdout)\n"
	      "  --steps-out FILE            write every accepted step (octopipe.steps/1)\n"
	      "  --max-stages-per-device K   stages one device may hold (default 3)\n"
	      "  --budget SECONDS            tune at most this long, the result included (default\n"
	      "                              1; 0: until converged, or --evals); --time-budget is\n"
	      "                              the old name\n"
	      "  --evals N                   stop after about N candidate plans (without --budget:\n"
	      "                              no time limit, and the same seed gives the same plan)\n"
	      "  --seed N                    seed of tie-breaks and perturbations\n"
	      "  --target RUNTIME            what will run the plan: octopipe (the default, any\n"
	      "                              plan), megatron (Megatron-LM's own 1F1B and interleaved\n"
	      "                              schedules over partitions its layout flags express:\n"
	      "                              the virtual stages and the boundaries are searched,\n"
	      "                              not the order; no --steps-out) or torchtitan (stages\n"
	      "                              in its loop or v placement, any order its schedule\n"
	      "                              CSV runs; FSDP, ZeRO 2 unless --zero says 3)\n"
	      "\n"
	      "Parallel layout (--layout auto, the default): first it judges every layout the\n"
	      "options leave open - the PP x TP x DP factorisations of the cluster (TP within a\n"
	      "node), the ZeRO stage and the recompute mode - by the tokens/s of its best baseline,\n"
	      "memory first (a layout that does not fit is sharded or recomputes before it is given\n"
	      "up), at one global batch; then it tunes the three with the most tokens/s, each with a\n"
	      "third of the budget, and keeps the fastest tuned plan (Ctrl-C keeps the best so far).\n"
	      "The global batch is --global-batch sequences, else --microbatches x the micro-batch\n"
	      "size x (--dp, else 1): a layout with D replicas runs 1/D of it on each. The plan's\n"
	      "microbatches are per replica. Exit 3 when no layout fits, with the smallest peak\n"
	      "memory found. --layout pp tunes pure pipeline parallelism over every GPU instead.\n"
	      CLI_PAR_HELP, f);
}

/* --target megatron: Megatron-LM's own schedules on one layout's replica (target.h), the
 * best simulated into pk and mk. */
static int tune_megatron(const struct model *rm, const struct cluster *rc, const struct tune_opts *ko, struct plan *pk,
                         struct metrics *mk, struct target_result *tr, struct err *e)
{
	struct target_search_opts so = { ko->microbatches, ko->max_stages_per_device, ko->time_budget_s, ko->max_evals,
	                                 ko->stop };
	struct sim sm;
	struct sim_opts sopt;
	int r;

	if (target_megatron_search(rm, rc, &so, pk, tr, e) < 0)
		return -1;
	memset(&sm, 0, sizeof(sm));
	sim_opts_default(&sopt);
	r = sim_run(&sm, pk, &sopt, mk, e);
	sim_release(&sm);
	if (r < 0) {
		metrics_release(mk);
		plan_release(pk);
		/* a deadlock of the search's own best is the search's fault, not the input's */
		e->cls = ERR_RUNTIME;
	}
	return r;
}

int cmd_tune(int argc, char **argv)
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
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "layout", required_argument, NULL, 'L' },
		{ "global-batch", required_argument, NULL, 'G' },
		{ "target", required_argument, NULL, 'T' },
		CLI_PAR_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct cli_par cp;
	bool layout_pp = false;
	int global_batch = 0;
	struct cli_layout L;
	const char *model_arg = NULL, *cluster_arg = NULL, *out = NULL, *steps_out = NULL;
	char mpath[4096], cpath[4096];
	struct tune_opts o;
	struct model m;
	struct cluster c;
	struct tuner *t = NULL;
	struct err e = ERR_INIT;
	struct plan p;
	struct metrics mt;
	const struct tune_step *st;
	bool quiet = false, budget_given = false;
	struct progress pg = { stderr, false };
	struct sigaction sa, old_sa;
	int ch, rc, r, ntune, nc = 0, best = -1;
	long evals;
	double secs, best_tps = -1;
	bool have_p = false;          /* p and mt hold the winner's plan (several layouts tuned) */
	struct cli_layout cand[LAYOUT_TOP];
	enum target tgt = TARGET_OCTOPIPE;
	struct target_result tr = { 0 }, tr_best = { 0 };
	struct err last = ERR_INIT;   /* --target megatron: why the last layout had no plan */

	tune_opts_default(&o);
	cli_par_init(&cp);
	memset(&L, 0, sizeof(L));
	optind = 0;
	while ((ch = cli_getopt("tune", argc, argv, "o:qh", opts)) != -1) {
		if ((r = cli_par_option("tune", ch, optarg, &cp)) != 0) {
			if (r < 0)
				return EXIT_INPUT;
			continue;
		}
		switch (ch) {
		case 'L':
			if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "pp") != 0)
				return cli_usage_error("tune", "--layout: 'auto' (search the parallel layouts) or 'pp' (pure "
				                       "pipeline parallelism over every GPU), not '%s'", optarg);
			layout_pp = strcmp(optarg, "pp") == 0;
			break;
		case 'G':
			if ((global_batch = cli_positive("tune", "--global-batch", optarg)) < 0)
				return EXIT_INPUT;
			break;
		case 'T':
			if (target_from_name(optarg, &tgt) < 0)
				return cli_usage_error("tune", "--target: 'octopipe', 'megatron' or 'torchtitan', not '%s'", optarg);
			break;
		case 'm': model_arg = optarg; break;
		case 'c': cluster_arg = optarg; break;
		case 'n': if ((o.microbatches = cli_positive("tune", "--microbatches", optarg)) < 0) return EXIT_INPUT; break;
		case 'o': out = optarg; break;
		case 's': steps_out = optarg; break;
		case 'k': if ((o.max_stages_per_device = cli_positive("tune", "--max-stages-per-device", optarg)) < 0) return EXIT_INPUT; break;
		case 't':
			if (cli_number("tune", "--budget", optarg, 0, 1e7, false, &o.time_budget_s) < 0)
				return EXIT_INPUT;
			budget_given = true;
			break;
		case 'E': {
			int n = cli_positive("tune", "--evals", optarg);

			if (n < 0)
				return EXIT_INPUT;
			o.max_evals = n;
			break;
		}
		case 'S': {
			char *end;
			unsigned long long v;

			/* digits only: strtoull would take a sign or spaces and wrap (-1 as the largest) */
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (!isdigit((unsigned char)optarg[0]) || end == optarg || *end || errno || v > 4294967295ULL)
				return cli_usage_error("tune", "--seed: '%s' is not an integer in [0, 4294967295]", optarg);
			o.seed = (unsigned)v;
			break;
		}
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return EXIT_OK;
		default: return EXIT_INPUT;
		}
	}
	if (!model_arg || !cluster_arg || !o.microbatches)
		return cli_usage_error("tune", "needs --model, --cluster and --microbatches");
	if (!budget_given && !o.max_evals)
		o.time_budget_s = 1;
	if (optind < argc)
		return cli_usage_error("tune", "unexpected argument '%s'", argv[optind]);
	if (tgt == TARGET_MEGATRON && steps_out)
		return cli_usage_error("tune", "--steps-out: --target megatron searches Megatron-LM's own schedules, "
		                       "not the tuner's steps");
	if (tgt == TARGET_TORCHTITAN) {
		/* torchtitan's data parallelism beside a pipeline is FSDP (torchtitan.c) */
		if (!cp.zero && !layout_pp)
			cp.zero = 2 + 1;
		o.accept = target_accepts;
		o.accept_arg = &tgt;
	}
	{
		const char *names[] = { "-o -", "--steps-out -" };
		const char *outs[] = { out, steps_out };

		if (cli_one_stdout("tune", names, outs, 2) != EXIT_OK)
			return EXIT_INPUT;
	}
	if ((rc = cli_load_model(model_arg, &m, mpath)) != 0)
		return rc;
	if ((rc = cli_load_cluster(cluster_arg, &c, cpath)) != 0) {
		model_release(&m);
		return rc;
	}
	/* the plan and the steps are written after the search: an output that cannot be
	 * written is refused now, not after the budget is spent */
	{
		const char *outs[] = { out, steps_out };

		for (int i = 0; i < 2; i++)
			if (outs[i] && strcmp(outs[i], "-") != 0 && fileio_check_writable(outs[i], &e) < 0) {
				cli_err("octopipe tune: %s\n", e.msg);
				rc = e.cls == ERR_INPUT ? EXIT_INPUT : EXIT_RUNTIME;
				goto out;
			}
	}
	/* from here Ctrl-C keeps the best so far: during the layout search the best layout
	 * judged (its best baseline is then the plan: the tuner sees the flag and stops) */
	interrupted = 0;
	o.stop = &interrupted;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_sa);
	/* with the plan on stdout (-o -) every report line goes to stderr */
	FILE *log = out && strcmp(out, "-") == 0 ? stderr : stdout;

	if ((rc = cli_pick_layout("tune", &cp, layout_pp, global_batch, &m, &c, &o.microbatches, quiet ? NULL : log,
	                          &interrupted, &L)) != 0) {
		sigaction(SIGINT, &old_sa, NULL);
		goto out;
	}
	if (!quiet && tgt == TARGET_MEGATRON)
		fprintf(log, "target megatron: searching Megatron-LM's 1F1B and interleaved schedules (up to %d virtual "
		        "stages a rank), round-robin placement, partitions its layout flags (a hybrid model's layer "
		        "pattern) express\n", o.max_stages_per_device);
	else if (!quiet && tgt == TARGET_TORCHTITAN)
		fprintf(log, "target torchtitan: searching its loop and v placements, any order its schedule CSV runs%s\n",
		        cp.zero == 3 ? ", FSDP keeping the gathered weights (ZeRO 2)" :
		        cp.zero == 4 ? ", FSDP (ZeRO 3)" : "");
	if (!quiet && progress_wanted() && tgt != TARGET_MEGATRON) {
		o.progress = progress_show;
		o.progress_arg = &pg;
	}
	/* the baselines rank the layouts well but not exactly: the first few are tuned, each
	 * with its share of the budget, and the fastest tuned plan wins */
	ntune = L.searched && !L.lc.interrupted && L.lc.ntop > 1 ? L.lc.ntop : 1;
	if (ntune > 1 && !quiet)
		fprintf(log, "tuning the %d layouts with the most tokens/s, each with 1/%d of the budget\n", ntune, ntune);
	for (int k = 0; k < ntune; k++) {
		struct tune_opts ko = o;
		struct tuner *tk = NULL;
		struct metrics mk;
		struct plan pk;
		double tps;

		if (k > 0) {
			if (interrupted)
				break;
			cand[k] = cand[0];
			memset(&cand[k].rm, 0, sizeof(cand[k].rm));
			memset(&cand[k].rc, 0, sizeof(cand[k].rc));
			if ((rc = cli_layout_adopt(&m, &c, k, &cand[k])) != 0)
				goto tuned;
		} else {
			cand[0] = L;
			memset(&L, 0, sizeof(L));
		}
		nc = k + 1;
		if (cand[k].searched)
			ko.microbatches = cand[k].lc.microbatches;
		if (ntune > 1) {
			if (ko.time_budget_s > 0)
				ko.time_budget_s /= ntune;
			if (ko.max_evals > 0)
				ko.max_evals = ko.max_evals / ntune > 0 ? ko.max_evals / ntune : 1;
			if (!quiet)
				fprintf(log, "layout %d of %d: pp %d x tp %d x dp %d (ep %d, ZeRO %d, recompute %s), %d microbatches "
				        "per replica, %.0f tokens/s with its best baseline\n", k + 1, ntune, cand[k].lc.par.pp,
				        cand[k].lc.par.tp, cand[k].lc.par.dp, cand[k].lc.par.ep, cand[k].lc.par.zero,
				        recompute_name(cand[k].lc.recompute), cand[k].lc.microbatches, cand[k].lc.tokens_per_s);
		}
		if (tgt == TARGET_MEGATRON) {
			if (tune_megatron(cand[k].use ? &cand[k].rm : &m, cand[k].use ? &cand[k].rc : &c, &ko, &pk, &mk, &tr,
			                  &e) < 0) {
				if (e.cls == ERR_RUNTIME) {
					rc = cli_report(&e);
					goto tuned;
				}
				/* another of the ranked layouts may run under Megatron's schedules */
				if (!quiet && ntune > 1)
					fprintf(log, "layout %d of %d: %s\n", k + 1, ntune, e.msg);
				last = e;
				e = (struct err)ERR_INIT;
				continue;
			}
			goto pick;
		}
		if (tune_new(&tk, cand[k].use ? &cand[k].rm : &m, cand[k].use ? &cand[k].rc : &c, &ko, &e) < 0) {
			/* another of the ranked layouts may fit as the tuner builds its plans */
			if (e.cls == ERR_RUNTIME || ntune == 1) {
				rc = cli_report(&e);
				goto tuned;
			}
			if (!quiet)
				fprintf(log, "layout %d of %d: %s\n", k + 1, ntune, e.msg);
			last = e;
			e = (struct err)ERR_INIT;
			continue;
		}
		while ((r = tune_step(tk, &st, &e)) > 0) {
			if (quiet)
				continue;
			progress_clear(&pg);
			if (st->kind == MOVE_START)
				fprintf(log, "%4d %-10s %s\n", st->index, tune_phase_name(st->phase), st->what);
			else if (isfinite(st->before_ms))
				fprintf(log, "%4d %-10s %-62s %10.2f -> %10.2f ms\n", st->index, tune_phase_name(st->phase), st->what,
				        st->before_ms, st->after_ms);
			else  /* a perturbation that started from a plan that could not run */
				fprintf(log, "%4d %-10s %-62s %10s -> %10.2f ms\n", st->index, tune_phase_name(st->phase), st->what,
				        "infeasible", st->after_ms);
			fflush(log);
		}
		progress_clear(&pg);
		if (r < 0) {
			tune_free(tk);
			rc = cli_report(&e);
			goto tuned;
		}
		if (ntune == 1) {
			t = tk;
			best = 0;
			break;
		}
		/* ranked as the search ranks layouts: whole-job tokens/s of one replica's plan */
		if (tune_result(tk, &pk, &mk, &e) < 0) {
			tune_free(tk);
			rc = cli_report(&e);
			goto tuned;
		}
pick:
		tps = mk.noom ? -1 : mk.throughput_tokens_per_s;
		if (!quiet)
			fprintf(log, "layout %d of %d tuned: %.0f tokens/s\n", k + 1, ntune, tps);
		if (!have_p || tps > best_tps) {
			tune_free(t);
			if (have_p) {
				plan_release(&p);
				metrics_release(&mt);
			}
			t = tk;
			p = pk;
			mt = mk;
			have_p = true;
			tr_best = tr;
			best_tps = tps;
			best = k;
		} else {
			metrics_release(&mk);
			plan_release(&pk);
			tune_free(tk);
		}
	}
	if (!have_p && last.cls == ERR_INFEASIBLE && tgt == TARGET_OCTOPIPE && nc > 0 && cand[0].searched) {
		/* the tuner's layer table counts a recomputing layer's activations from its
		 * forward on, an upper bound; the search's baseline, priced stage by stage,
		 * fits: it is the answer */
		struct layout_pick pk0 = { cand[0].lc.par, cand[0].lc.recompute, cand[0].lc.microbatches,
		                           cand[0].lc.makespan_ms, cand[0].lc.tokens_per_s, cand[0].lc.peak_bytes };

		if (layout_baseline(&m, &c, &pk0, &p, &mt, &e) == 0) {
			have_p = true;
			best = 0;
			best_tps = mt.throughput_tokens_per_s;
			if (!quiet)
				fprintf(log, "no tuned plan fits; the layout's best baseline does: %.0f tokens/s\n", best_tps);
		} else if (e.cls == ERR_RUNTIME) {
			rc = cli_report(&e);
			goto tuned;
		}
		e = (struct err)ERR_INIT;
	}
	if (!have_p && last.cls != ERR_NONE) {
		rc = cli_report(&last);
		goto tuned;
	}
	if (ntune > 1 && !quiet && have_p && t)
		fprintf(log, "layout chosen: pp %d x tp %d x dp %d (ep %d, ZeRO %d, recompute %s), the fastest of %d tuned, "
		        "%.0f tokens/s\n", cand[best].lc.par.pp, cand[best].lc.par.tp, cand[best].lc.par.dp,
		        cand[best].lc.par.ep, cand[best].lc.par.zero, recompute_name(cand[best].lc.recompute), nc, best_tps);
	rc = EXIT_OK;
tuned:
	/* the winner's layout is the one the plan is written at */
	for (int k = 0; k < nc; k++)
		if (k != best)
			cli_layout_release(&cand[k]);
	if (nc > 0 && best >= 0)
		L = cand[best];
	if (rc != EXIT_OK) {
		sigaction(SIGINT, &old_sa, NULL);
		if (have_p) {
			plan_release(&p);
			metrics_release(&mt);
		}
		goto out;
	}
	r = 0;
	sigaction(SIGINT, &old_sa, NULL);
	if (!have_p && (r < 0 || tune_result(t, &p, &mt, &e) < 0)) {
		rc = cli_report(&e);
		goto out;
	}
	if (L.use) {
		/* the plan on the replica as the files and the simulator see it: the layer table
		 * without the search's uniform recompute, every stage recomputing as chosen */
		struct model pm;
		struct sim sm;
		struct sim_opts so;

		if (parallel_model(&m, &c, &L.lc.par, &pm, &e) < 0) {
			rc = cli_report(&e);
			plan_release(&p);
			metrics_release(&mt);
			goto out;
		}
		model_release(&p.model);
		p.model = pm;
		plan_set_recompute(&p, L.lc.recompute);
		/* the search chose it, not the user; Megatron-LM and torchtitan have one mode */
		if (L.lc.recompute != RECOMPUTE_NONE && cp.recompute < 0 && tgt == TARGET_OCTOPIPE) {
			int n = layout_relax_recompute(&p, &e);

			if (n < 0) {
				rc = cli_report(&e);
				plan_release(&p);
				metrics_release(&mt);
				goto out;
			}
			if (n > 0 && !quiet)
				fprintf(log, "recompute only where memory binds: %d of %d stages lighter\n", n, p.nstages);
		}
		metrics_release(&mt);
		memset(&sm, 0, sizeof(sm));
		sim_opts_default(&so);
		r = sim_run(&sm, &p, &so, &mt, &e);
		sim_release(&sm);
		if (r < 0 || plan_attach_parallel(&p, &L.lc.par, &m, &c, &e) < 0) {
			rc = cli_report(&e);
			plan_release(&p);
			metrics_release(&mt);
			goto out;
		}
	}
	if (tgt != TARGET_OCTOPIPE && target_check(tgt, &p, &e) < 0) {
		cli_err("octopipe tune: no plan found that %s runs: %s\n", tgt == TARGET_MEGATRON ? "Megatron-LM" :
		        "torchtitan", e.msg);
		rc = EXIT_INFEASIBLE;
		plan_release(&p);
		metrics_release(&mt);
		goto out;
	}
	if (!t && tgt != TARGET_MEGATRON) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(&sb, "the best baseline: ");
		fmt_ms(&sb, mt.makespan_ms);
		strbuf_addf(&sb, " per iteration, bubble %.1f%%\n", 100 * mt.bubble_ratio);
		if (!strbuf_failed(&sb))
			fprintf(log, "%s", sb.buf);
		strbuf_release(&sb);
	} else if (!t) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(&sb, "tuned for Megatron-LM: ");
		fmt_ms(&sb, mt.makespan_ms);
		if (isfinite(tr_best.baseline_ms)) {
			strbuf_addf(&sb, " per iteration, %.2fx its default (1F1B, even split: ",
			            tr_best.baseline_ms / tr_best.best_ms);
			fmt_ms(&sb, tr_best.baseline_ms);
			strbuf_addch(&sb, ')');
		}
		strbuf_addf(&sb, ", bubble %.1f%%; %ld plans simulated in %.2f s over %d virtual-stage counts%s\n",
		            100 * mt.bubble_ratio, tr_best.evals, tr_best.seconds, tr_best.schedules,
		            interrupted ? "\ninterrupted: writing the best plan found so far" : "");
		if (!strbuf_failed(&sb))
			fprintf(log, "%s", sb.buf);
		strbuf_release(&sb);
	} else {
		tune_stats(t, &evals, &secs);
	}
	if (t) {
		const struct tune_step *all;
		int n = tune_steps(t, &all);
		struct strbuf sb = STRBUF_INIT;
		double base = all[0].before_ms;

		strbuf_addstr(&sb, "tuned: ");
		fmt_ms(&sb, mt.makespan_ms);
		strbuf_addf(&sb, " per iteration, %.2fx the best baseline (", base / mt.makespan_ms);
		fmt_ms(&sb, base);
		strbuf_addf(&sb, "), bubble %.1f%%; %d steps, %ld plans simulated in %.2f s\n", 100 * mt.bubble_ratio, n - 1,
		            evals, secs);
		strbuf_addstr(&sb, "bounds: ");
		fmt_ms(&sb, mt.lower_bound_ms);
		strbuf_addf(&sb, " (efficiency %.1f%%), tight ", 100 * mt.efficiency);
		fmt_ms(&sb, mt.lower_bound_tight_ms);
		strbuf_addf(&sb, " (efficiency %.1f%%): at most %.1f%% slower than the best plan can be", 100 * mt.efficiency_tight,
		            mt.lower_bound_tight_ms > 0 ? fmax(0, 100 * (mt.makespan_ms / mt.lower_bound_tight_ms - 1)) : 0);
		if (tune_interrupted(t) || interrupted)
			strbuf_addstr(&sb, "\ninterrupted: writing the best plan found so far");
		if (!strbuf_failed(&sb))
			fprintf(log, "%s\n", sb.buf);
		strbuf_release(&sb);
	}
	rc = EXIT_OK;
	if (out)
		rc = cli_write_plan(&p, out, mpath, cpath, false);
	if (rc == EXIT_OK && steps_out && !t) {
		/* Megatron-LM's own schedules, or the search's baseline: no tuner steps were taken */
		fprintf(stderr, "octopipe tune: --steps-out %s: no tuner steps to write (%s)\n", steps_out,
		        tgt == TARGET_MEGATRON ? "the Megatron-LM search takes none" : "the plan is the layout's baseline");
	} else if (rc == EXIT_OK && steps_out) {
		cJSON *root = tune_steps_to_json(t);
		struct strbuf sb = STRBUF_INIT;

		/* the layout step before the three phases: what was chosen, among how many */
		if (root && L.searched) {
			const struct layout_choice *lc = &L.lc;
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
			jw_num(&w, lo, "global_batch", (double)L.global_batch);
			jw_num(&w, lo, "candidates", lc->candidates);
			jw_num(&w, lo, "best_baseline_tokens_per_s", lc->tokens_per_s);
			if (w.oom) {
				cJSON_Delete(root);
				root = NULL;
			}
		}

		if (!root) {
			rc = EXIT_RUNTIME;
		} else {
			json_write(&sb, root);
			rc = cli_write_text(steps_out, sb.buf, sb.len);
			cJSON_Delete(root);
		}
		strbuf_release(&sb);
	}
	if (rc == EXIT_OK && mt.noom)
		rc = EXIT_INFEASIBLE;
	metrics_release(&mt);
	plan_release(&p);
out:
	tune_free(t);
	cli_layout_release(&L);
	model_release(&m);
	cluster_release(&c);
	return rc;
}
