/*
 * octopipe compare — every baseline schedule for one model, cluster and microbatch count,
 * simulated side by side: iteration time, tokens/s, bubble, peak memory, efficiency
 * against the lower bound, and whether it is feasible (or why it cannot be built).
 */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "cli.h"
#include "clock.h"
#include "doc.h"
#include "json.h"
#include "sim.h"
#include "target.h"
#include "tune.h"

#define COMPARE_BASELINES_SHARE 0.75  /* of the budget, for the baselines' rows */

static void usage(FILE *f)
{
	fputs("usage: octopipe compare --model M --cluster C --microbatches N [--json]\n"
	      "                        [--layout auto|pp] [--global-batch B] [--budget SECONDS]\n"
	      "                        [--tp T] [--dp D] [--ep E] [--zero Z] [--grads G]\n"
	      "                        [--recompute HOW] [--micro-batch-size N|auto]\n"
	      "                        [--target octopipe|megatron|torchtitan]\n"
	      "\n"
	      "Builds and simulates every baseline (gpipe, 1f1b, 1f1b on a balanced partition,\n"
	      "interleaved, zb-h1, zb-h2, zb-v, dualpipev, adaptive) on the whole cluster, then\n"
	      "the tuned plan (octopipe tune) with its speedup over each baseline.\n"
	      "A schedule that cannot apply says why. Exit 3 when no plan fits (the table, or\n"
	      "--json, still shows each and why; --json is [] when no parallel layout fits);\n"
	      "exit 2 when no schedule applies at all or the --target runtime runs none of\n"
	      "them.\n"
	      "\n"
	      "Like tune, it first picks the parallel layout (--layout auto, the default: see\n"
	      "octopipe tune --help) and compares the baselines and the tuned plan at it, one\n"
	      "replica's microbatches each; --layout pp compares pure pipeline parallelism over\n"
	      "every GPU.\n"
	      "\n"
	      "--target megatron or torchtitan marks the baselines that runtime cannot run\n"
	      "(n/a, with the reason) and tunes within what it runs (octopipe tune --help,\n"
	      "--target). --budget bounds the whole command (default: none; the tuner runs\n"
	      "until it converges, the same plan every time): a row that cannot be simulated\n"
	      "in it is shown as skipped, saying why, and a budget that reading the inputs or\n"
	      "one simulation already passes is refused up front.\n"
	      CLI_PAR_HELP, f);
}

/* Why a plan that ran does not fit: the first device over its memory, in every row alike. */
static void oom_reason(char *why, size_t n, const struct metrics *mt)
{
	snprintf(why, n, "no: device %d out of memory", mt->oom[0]);
}

/* A row's "feasible", and when it is not, "reason" and (for a plan that ran out of memory)
 * "oom": every device over its memory, as in sim --json. */
static void put_verdict(struct jw *w, cJSON *row, bool feasible, const char *why, const struct metrics *mt)
{
	jw_bool(w, row, "feasible", feasible);
	if (feasible)
		return;
	jw_str(w, row, "reason", why);
	if (mt && mt->noom) {
		cJSON *arr = jw_arr(w, row, "oom");

		for (int i = 0; i < mt->noom; i++)
			jw_push(w, arr, cJSON_CreateNumber(mt->oom[i]));
	}
}

/* What the command line asks for. */
struct cargs {
	struct cli_par cp;
	bool layout_pp, json;
	int global_batch, mbs;
	const char *model, *cluster;
	enum target tgt;
	double budget;
	char tuned_name[32];
};

/* 0, 1 after --help, or an exit code. */
static int parse(int argc, char **argv, struct cargs *a)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "cluster", required_argument, NULL, 'c' },
		{ "microbatches", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "layout", required_argument, NULL, 'L' },
		{ "global-batch", required_argument, NULL, 'G' },
		{ "target", required_argument, NULL, 'T' },
		{ "budget", required_argument, NULL, 'B' },
		CLI_PAR_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	int ch, k;

	memset(a, 0, sizeof(*a));
	optind = 0;
	cli_par_init(&a->cp);
	while ((ch = cli_getopt("compare", argc, argv, "jh", opts)) != -1) {
		if ((k = cli_par_option("compare", ch, optarg, &a->cp)) != 0) {
			if (k < 0)
				return EXIT_INPUT;
			continue;
		}
		switch (ch) {
		case 'L':
			if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "pp") != 0)
				return cli_usage_error("compare", "--layout: 'auto' or 'pp', not '%s'", optarg);
			a->layout_pp = strcmp(optarg, "pp") == 0;
			break;
		case 'G':
			if ((a->global_batch = cli_positive("compare", "--global-batch", optarg)) < 0)
				return EXIT_INPUT;
			break;
		case 'T':
			if (target_from_name(optarg, &a->tgt) < 0)
				return cli_usage_error("compare", "--target: 'octopipe', 'megatron' or 'torchtitan', not '%s'",
				                       optarg);
			break;
		case 'm': a->model = optarg; break;
		case 'c': a->cluster = optarg; break;
		case 'n': if ((a->mbs = cli_positive("compare", "--microbatches", optarg)) < 0) return EXIT_INPUT; break;
		case 'j': a->json = true; break;
		case 'B':
			if (cli_number("compare", "--budget", optarg, 0, 1e7, false, &a->budget) < 0)
				return EXIT_INPUT;
			break;
		case 'h': usage(stdout); return 1;
		default: return EXIT_INPUT;
		}
	}
	if (!a->model || !a->cluster || !a->mbs)
		return cli_usage_error("compare", "needs --model, --cluster and --microbatches");
	if (a->tgt == TARGET_TORCHTITAN && !a->cp.zero && !a->layout_pp)
		a->cp.zero = 2 + 1;  /* torchtitan's data parallelism beside a pipeline is FSDP (torchtitan.c) */
	snprintf(a->tuned_name, sizeof(a->tuned_name), "tuned%s%s", a->tgt != TARGET_OCTOPIPE ? " " : "",
	         a->tgt != TARGET_OCTOPIPE ? target_name(a->tgt) : "");
	return 0;
}

/* One run: the rows at the layout, one replica's model and cluster. */
struct ctx {
	const struct cargs *a;
	const struct model *pm;
	const struct cluster *pc;
	/* the replica's table without the layout's recompute folded in: the baselines' stages
	 * recompute as the layout says, priced by the simulator, as the search judged them */
	const struct model *plain;
	const struct model *m;       /* the files' own */
	const struct cluster *c;
	const struct tune_layout *L;
	char layout_text[96];
	struct jw w;
	cJSON *out;
	bool any_fits;
	bool any_ran;             /* a row was simulated (else none applies: each says why) */
	bool any_oom;             /* a row out of memory (else, none fitting, the target refused all) */
	char refused[300];        /* why the target runtime refuses a plan: the tuned row's reason
	                           * (its search's), else the first baseline's */
	bool model_refused;       /* the tuned row's: the runtime cannot run the model at all */
	bool skipped;             /* a row the budget left out */
};

/* The lines above the table: the layout, the bounds, the target, the column names. */
static void print_header(const struct ctx *x, const struct model *m, const struct cluster *c)
{
	const struct tune_layout *L = x->L;
	const struct model *bm = x->plain ? x->plain : x->pm;
	double tight = sim_lower_bound_tight(bm, x->pc, x->a->mbs, true);
	double mem = sim_lower_bound_memory(bm, x->pc, x->a->mbs, true);
	struct strbuf sb = STRBUF_INIT;

	if (L->searched) {
		strbuf_addstr(&sb, "layout: ");
		cli_layout_words(&sb, &L->lc.par, L->lc.recompute);
		strbuf_addf(&sb, ", %d microbatch%s per replica (global batch %ld): the best of %d layouts, %.0f tokens/s "
		            "with its best baseline", L->lc.microbatches, L->lc.microbatches == 1 ? "" : "es",
		            L->global_batch, L->lc.candidates, L->lc.tokens_per_s);
		if (!strbuf_failed(&sb))
			cli_print_wrapped(stdout, sb.buf, 8);
		strbuf_reset(&sb);
	}
	strbuf_addf(&sb, "model %s on %s%s%s, %d microbatch%s%s; lower bound ", m->name, c->name, L->use ? " at " : "",
	            x->layout_text, x->a->mbs, x->a->mbs == 1 ? "" : "es", L->use ? " per replica" : "");
	/* the bounds the rows' efficiencies are of: a recomputing layout's plans may recompute
	 * less than every stage fully, so the table without recompute is the one to bound */
	fmt_ms(&sb, sim_lower_bound(bm, x->pc, x->a->mbs, true));
	strbuf_addstr(&sb, ", tight bound ");
	fmt_ms(&sb, tight);
	if (mem > tight * (1 + 1e-9)) { /* where memory binds: no plan that fits is faster */
		strbuf_addstr(&sb, ", memory-aware bound ");
		fmt_ms(&sb, mem);
	}
	cli_print_wrapped(stdout, strbuf_failed(&sb) ? "?" : sb.buf, 8);
	putchar('\n');
	strbuf_release(&sb);
	if (x->a->tgt == TARGET_MEGATRON)
		cli_print_wrapped(stdout, "target megatron: the tuned plan is Megatron-LM's own 1F1B or interleaved "
		                  "schedule over a partition its layout flags express\n", 8);
	else if (x->a->tgt == TARGET_TORCHTITAN)
		cli_print_wrapped(stdout, "target torchtitan: the tuned plan has its loop or v placement, any order "
		                  "its schedule CSV runs\n", 8);
	printf("%-15s %12s %12s %7s %10s %10s  %s\n", "SCHEDULE", "ITERATION ms", "TOKENS/S", "BUBBLE",
	       "PEAK MEM", "EFFICIENCY", "FEASIBLE");
}

/* A row that ran, as JSON: its figures and each device's peak. */
static cJSON *json_row(struct ctx *x, const char *name, const char *partition, const struct metrics *mt, double peak)
{
	cJSON *o2 = jw_push(&x->w, x->out, cJSON_CreateObject());

	jw_str(&x->w, o2, "schedule", name);
	if (partition)
		jw_str(&x->w, o2, "partition", partition);
	if (x->L->use)
		jw_str(&x->w, o2, "layout", x->layout_text);
	if (mt) {
		cJSON *arr;

		jw_num(&x->w, o2, "makespan_ms", mt->makespan_ms);
		jw_num(&x->w, o2, "throughput_tokens_per_s", mt->throughput_tokens_per_s);
		jw_num(&x->w, o2, "bubble_ratio", mt->bubble_ratio);
		jw_num(&x->w, o2, "peak_mem_bytes", peak);
		arr = jw_arr(&x->w, o2, "peak_mem_bytes_per_device");
		for (int d = 0; d < mt->ndevices; d++)
			jw_push(&x->w, arr, cJSON_CreateNumber((double)mt->dev[d].peak_mem_bytes));
		jw_num(&x->w, o2, "efficiency", mt->efficiency);
	}
	return o2;
}

/* A row that ran, as a table line. */
static void text_row(const char *name, const struct metrics *mt, double peak, const char *why)
{
	struct strbuf b = STRBUF_INIT;

	fmt_bytes(&b, peak);
	printf("%-15s %12.2f %12.0f %6.1f%% %10s %9.1f%%  %s\n", name, mt->makespan_ms, mt->throughput_tokens_per_s,
	       100 * mt->bubble_ratio, strbuf_failed(&b) ? "?" : b.buf, 100 * mt->efficiency, why);
	strbuf_release(&b);
}

/* One baseline's row (marked infeasible when the target cannot run it). */
static void baseline_row(struct ctx *x, struct baseline_result *r)
{
	const struct metrics *mt = &r->m;
	char why[300] = "yes";
	struct err te = ERR_INIT;
	enum target tgt = x->a->tgt;

	if (r->built && tgt == TARGET_MEGATRON && r->recipe->schedule != SCHED_1F1B &&
	    r->recipe->schedule != SCHED_INTERLEAVED)
		err_set(&te, ERR_INPUT, "Megatron-LM runs only its own 1F1B and interleaved orders");
	if (te.cls != ERR_NONE || (r->built && target_check(tgt, &r->plan, &te) < 0)) {
		/* the runtime cannot run it: shown, not counted */
		snprintf(why, sizeof(why), "n/a on %s: %.220s", target_name(tgt), te.msg);
		r->feasible = false;
		/* an error located in the model (its JSON path), not in this plan: the runtime
		 * cannot run the model at all */
		if (!x->model_refused && strncmp(te.msg, "model.", 6) == 0) {
			snprintf(x->refused, sizeof(x->refused), "%.280s", te.msg);
			x->model_refused = true;
		} else if (!x->refused[0]) {
			snprintf(x->refused, sizeof(x->refused), "%.280s", te.msg);
		}
	} else if (r->ran && !r->feasible) {
		x->any_oom = true;
	}
	x->any_fits |= r->feasible;
	x->any_ran |= r->ran;
	x->skipped |= r->skipped;
	if (r->skipped)
		snprintf(why, sizeof(why), "%.250s", r->why.msg);
	else if (!r->ran)
		snprintf(why, sizeof(why), "n/a: %.250s", r->why.msg);
	else if (!r->feasible && te.cls == ERR_NONE)
		oom_reason(why, sizeof(why), mt);
	if (x->a->json)
		put_verdict(&x->w, json_row(x, r->recipe->name, r->recipe->partition, r->ran ? mt : NULL,
		                            r->peak_mem_bytes), r->feasible, why, r->ran ? mt : NULL);
	else if (r->ran)
		text_row(r->recipe->name, mt, r->peak_mem_bytes, why);
	else
		printf("%-15s %12s %12s %7s %10s %10s  %s\n", r->recipe->name, "-", "-", "-", "-", "-", why);
}

/* The tuned plan at the layout, as tune tunes the first of its layouts (tune_layouts.h:
 * the target's search on the replica, the result priced at the layout with every stage
 * recomputing as it says, lighter where memory allows): p and mt filled, or -1 with e
 * (ERR_INFEASIBLE also when only the layout's baseline fits: it is not a tuned plan). */
static int tuned_at_layout(const struct ctx *x, double budget, struct plan *p, struct metrics *mt, struct err *e)
{
	const struct cargs *a = x->a;
	struct tune_layout L = { .searched = x->L->searched, .global_batch = x->L->global_batch, .lc = x->L->lc };
	struct tune_layouts_opts o = { .target = a->tgt, .relax_recompute = a->cp.recompute < 0, .ntune = 1 };
	struct tune_layouts_result res;
	int r;

	tune_opts_default(&o.tune);
	o.tune.microbatches = a->mbs;
	/* no budget: the tuner converges (Megatron-LM's search is bounded by a second) */
	o.tune.time_budget_s = budget > 0 ? budget : a->tgt == TARGET_MEGATRON ? 1 : 0;
	if (a->tgt == TARGET_TORCHTITAN) {
		o.tune.accept = target_accepts;
		o.tune.accept_arg = (void *)&a->tgt;
	}
	if (tune_layout_adopt(x->m, x->c, 0, &L, e) < 0) {
		tune_layout_release(&L);
		return -1;
	}
	r = tune_layouts_run(x->m, x->c, &L, &o, &res, e);
	tune_layout_release(&L);
	if (r < 0)
		return -1;
	if (res.fallback) {
		tune_layouts_release(&res);
		return err_set(e, ERR_INFEASIBLE, "no tuned plan fits at this layout (its best baseline is tune's answer)");
	}
	*p = res.plan;
	*mt = res.mt;
	memset(&res.plan, 0, sizeof(res.plan));
	memset(&res.mt, 0, sizeof(res.mt));
	tune_layouts_release(&res);
	return 0;
}

/* The tuned row and its speedup over each baseline that fits; 0 or an exit code. */
static int tuned_row(struct ctx *x, const struct baseline_set *bs, double t0)
{
	const struct cargs *a = x->a;
	struct err e = ERR_INIT;
	struct plan p;
	struct metrics mt;
	/* what is left of the budget, less a tenth for the row's own simulation */
	double left = a->budget > 0 ? fmax(1e-3, 0.9 * (t0 + a->budget - clock_now_s())) : 0, peak = 0;
	char why[300] = "yes";
	/* the tuner simulates a baseline and its result at least: not begun when they cannot
	 * end within the budget */
	double least = 2 * 3.0 * x->pc->devices * a->mbs / (bs->sim_ops_per_s > 0 ? bs->sim_ops_per_s : TUNE_SIM_OPS_PER_S);
	bool late = a->budget > 0 && clock_now_s() + least > t0 + tune_budget_limit(a->budget);

	if (late || tuned_at_layout(x, left, &p, &mt, &e) < 0) {
		if (!late && e.cls == ERR_RUNTIME) {
			cli_err("octopipe compare: %s\n", e.msg);
			return EXIT_RUNTIME;
		}
		/* as a baseline that cannot apply: the row is there, saying why */
		if (late)
			snprintf(why, sizeof(why), "skipped: tuning takes at least %.1f s, past the budget", least);
		else
			snprintf(why, sizeof(why), "n/a: %.250s", e.msg);
		x->skipped |= late;
		if (!late && e.cls == ERR_INPUT && a->tgt != TARGET_OCTOPIPE) {
			snprintf(x->refused, sizeof(x->refused), "%.280s", e.msg);  /* the runtime cannot run the model */
			x->model_refused = true;
		}
		else if (!late && e.cls == ERR_INFEASIBLE)
			x->any_oom = true;
		if (a->json)
			put_verdict(&x->w, json_row(x, a->tuned_name, NULL, NULL, 0), false, why, NULL);
		else
			printf("%-15s %12s %12s %7s %10s %10s  %s\n", a->tuned_name, "-", "-", "-", "-", "-", why);
		return EXIT_OK;
	}
	x->any_fits |= !mt.noom;
	x->any_oom |= mt.noom;
	x->any_ran = true;
	if (mt.noom)
		oom_reason(why, sizeof(why), &mt);
	for (int d = 0; d < mt.ndevices; d++)
		peak = fmax(peak, (double)mt.dev[d].peak_mem_bytes);
	if (a->json) {
		cJSON *o2 = json_row(x, a->tuned_name, NULL, &mt, peak), *sp;

		put_verdict(&x->w, o2, !mt.noom, why, &mt);
		sp = jw_obj(&x->w, o2, "speedup");
		for (int i = 0; i < bs->n; i++)
			if (bs->r[i].feasible)
				jw_num(&x->w, sp, bs->r[i].recipe->name, bs->r[i].m.makespan_ms / mt.makespan_ms);
	} else {
		struct strbuf b = STRBUF_INIT;

		text_row(a->tuned_name, &mt, peak, why);
		strbuf_addstr(&b, "speedup of the tuned plan:");
		for (int i = 0, n = 0; i < bs->n; i++)
			if (bs->r[i].feasible)
				strbuf_addf(&b, "%s %s %.2fx", n++ ? "," : "", bs->r[i].recipe->name,
				            bs->r[i].m.makespan_ms / mt.makespan_ms);
		putchar('\n');
		cli_print_wrapped(stdout, strbuf_failed(&b) ? "speedup of the tuned plan: ?" : b.buf, 8);
		strbuf_release(&b);
	}
	metrics_release(&mt);
	plan_release(&p);
	return EXIT_OK;
}

/* The baselines' rows, then the tuned one; 0 or an exit code. */
static int rows(struct ctx *x, double t0)
{
	struct baseline_set bs;
	struct err be = ERR_INIT;
	int rc = EXIT_OK;
	/* the baselines' rows until COMPARE_BASELINES_SHARE of the budget, the tuned row after */
	double dl = x->a->budget > 0 ? t0 + COMPARE_BASELINES_SHARE * tune_budget_limit(x->a->budget) : 0;

	if (x->plain ? baseline_run_until(&bs, x->plain, x->pc, x->a->mbs, x->L->lc.recompute, dl, &be) < 0
	             : baseline_run_until(&bs, x->pm, x->pc, x->a->mbs, RECOMPUTE_NONE, dl, &be) < 0) {
		cli_err("octopipe compare: %s\n", be.msg);
		rc = EXIT_RUNTIME;
	}
	for (int i = 0; i < bs.n; i++)
		baseline_row(x, &bs.r[i]);
	if (rc == EXIT_OK)
		rc = tuned_row(x, &bs, t0);
	baseline_set_release(&bs);
	return rc;
}

int cmd_compare(int argc, char **argv)
{
	double t0 = clock_now_s();
	struct cargs a;
	struct ctx x = { .a = &a };
	struct tune_layout L;
	/* static: the tuner below needs the stack (a 64 KB one in tests/hardening.sh) */
	static char mpath[4096], cpath[4096];
	struct model m, plain;
	struct cluster c;
	int rc;

	if ((rc = parse(argc, argv, &a)) != 0)
		return rc == 1 ? EXIT_OK : rc;
	if ((rc = cli_budget_read_holds("compare", a.budget, a.model)) != 0 ||
	    (rc = cli_load_model(a.model, &m, mpath)) != 0)
		return rc;
	if ((rc = cli_load_cluster(a.cluster, &c, cpath)) != 0) {
		model_release(&m);
		return rc;
	}
	{
		struct err why = ERR_INIT;

		if (target_check_search(a.tgt, &m, c.devices, a.layout_pp, &why) < 0) {
			cli_err("octopipe compare: %s\n", why.msg);
			model_release(&m);
			cluster_release(&c);
			return EXIT_INPUT;
		}
	}
	{
		/* the layouts are judged by the schedules the target runs */
		struct layout_constraints base = { .deadline_s = a.budget > 0 ? t0 + TUNE_LAYOUTS_SEARCH_SHARE * a.budget : 0,
		                                   .give_up_s = a.budget > 0 ? t0 + TUNE_LAYOUTS_GIVE_UP_SHARE * tune_budget_limit(a.budget) : 0,
		                                   .accept = a.tgt == TARGET_TORCHTITAN ? target_accepts : NULL,
		                                   .accept_arg = &a.tgt,
		                                   .schedules = a.tgt == TARGET_MEGATRON ? TUNE_MEGATRON_SCHEDULES : 0,
		                                   .block_recompute = a.tgt == TARGET_MEGATRON,
		                                   .zero_where_dp = a.tgt == TARGET_TORCHTITAN };

		/* up front: a budget the inputs' reading has spent, or (--layout pp) shorter than
		 * one baseline's simulation */
		if ((rc = cli_budget_holds("compare", a.budget, t0, a.layout_pp, c.devices, a.mbs)) != 0 ||
		    (rc = cli_pick_layout("compare", &a.cp, a.layout_pp, a.global_batch, &m, &c, &a.mbs, &base, &L)) != 0) {
			if (a.json && rc == EXIT_INFEASIBLE)
				fputs("[]\n", stdout); /* no layout, so no rows: still a document to parse */
			model_release(&m);
			cluster_release(&c);
			return rc;
		}
	}
	x.L = &L;
	x.m = &m;
	x.c = &c;
	x.pm = tune_layout_model(&L, &m);
	x.pc = tune_layout_cluster(&L, &c);
	if (L.use && L.lc.recompute != RECOMPUTE_NONE) {
		struct err e = ERR_INIT;

		if (parallel_model(&m, &c, &L.lc.par, &plain, &e) < 0) {
			cli_err("octopipe compare: %s\n", e.msg);
			tune_layout_release(&L);
			model_release(&m);
			cluster_release(&c);
			return e.cls == ERR_RUNTIME ? EXIT_RUNTIME : EXIT_INPUT;
		}
		x.plain = &plain;
	}
	if (L.use)
		snprintf(x.layout_text, sizeof(x.layout_text), "pp %d x tp %d x dp %d", L.lc.par.pp, L.lc.par.tp,
		         L.lc.par.dp);
	if (a.json)
		x.out = cJSON_CreateArray();
	else
		print_header(&x, &m, &c);
	rc = rows(&x, t0);
	if (a.json && rc == EXIT_OK) {
		struct strbuf sb = STRBUF_INIT;

		json_write(&sb, x.out);
		cli_put_text(sb.buf, sb.len);
		strbuf_release(&sb);
	}
	/* the table says why each plan cannot run; the status says that none can (a runtime
	 * that cannot run the model at all first: no budget changes that) */
	if (rc == EXIT_OK && !x.any_fits && (x.model_refused || (x.refused[0] && !x.any_oom && !x.skipped))) {
		/* none is out of memory, or the model itself is refused: the runtime runs none */
		cli_err("octopipe compare: %s runs none of these plans: %s\n", target_name(a.tgt), x.refused);
		rc = EXIT_INPUT;
	} else if (rc == EXIT_OK && !x.any_fits && x.skipped) {
		cli_err("octopipe compare: --budget %g s ran out before a plan that fits was simulated: give a larger "
		        "--budget\n", a.budget);
		rc = EXIT_INPUT;
	} else if (rc == EXIT_OK && !x.any_ran) {
		cli_err("octopipe compare: no schedule applies to %s on %s at %d microbatch%s: each row says why\n",
		        m.name, c.name, a.mbs, a.mbs == 1 ? "" : "es");
		rc = EXIT_INPUT;
	} else if (rc == EXIT_OK && !x.any_fits) {
		cli_err("octopipe compare: no plan fits %s on %s at %d microbatch%s: every baseline and the tuned plan is "
		        "infeasible\n", m.name, c.name, a.mbs, a.mbs == 1 ? "" : "es");
		rc = EXIT_INFEASIBLE;
	}
	cJSON_Delete(x.out);
	if (x.plain)
		model_release(&plain);
	tune_layout_release(&L);
	model_release(&m);
	cluster_release(&c);
	return rc != EXIT_OK ? rc : x.w.oom ? EXIT_RUNTIME : EXIT_OK;
}
