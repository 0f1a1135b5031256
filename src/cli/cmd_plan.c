/*
 * octopipe plan — build a baseline plan: partition + placement + schedule by name, check
 * it by simulation (a generated order must never deadlock) and write it.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "cli.h"
#include "cli/cli_args.h"
#include "doc.h"
#include "json.h"
#include "sim.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: octopipe plan --model M --cluster C --schedule NAME --microbatches N\n"
	        "                     [--partition uniform|balanced|megatron|...] [--chunks V]\n"
	        "                     [--devices P] [--placement d0,d1,...] [--comm HOW]\n"
	        "                     [--embed] [--tp T] [--dp D] [--ep E] [--zero Z] [--grads G]\n"
	        "                     [--recompute HOW] [--micro-batch-size N] -o PLAN\n"
	        "\n"
	        "Builds a plan for model M on cluster C (files or bundled samples) and writes it\n"
	        "to PLAN (\"-\" for stdout), then prints its simulated iteration time.\n"
	        "\n"
	        "  --schedule NAME   the baseline schedule, one of:\n"
	        "      %s\n"
	        "  --partition HOW   layer counts per stage: uniform, balanced (min-max cost),\n"
	        "                    megatron (decoder layers evenly, the embedding and the\n"
	        "                    loss on top of the first and last stage),\n"
	        "                    megatron-accounted (they count as a layer each), or\n"
	        "                    explicit counts like 7,7,6,6; default: the schedule's own\n"
	        "                    (megatron for 1f1b, interleaved and zb-*); memory: the\n"
	        "                    balanced one among those that fit in memory, or the least\n"
	        "                    peak when none fits (one stage a device: 1f1b, zb-h1, gpipe)\n"
	        "  --chunks V        stages per device (interleaved: 2+; zb-v, dualpipev: 2)\n"
	        "  --devices P       pipeline devices (default: the cluster's GPUs / (T x D))\n"
	        "  --placement LIST  device of each stage (adaptive only)\n"
	        "  --embed           write the model and cluster into the plan instead of paths\n"
	        "  --comm HOW        overlap (transfers run beside compute) or blocking (a device\n"
	        "                    holds until its send is received); default: the schedule's\n"
	        "                    runtime's way (blocking for Megatron's 1f1b, else overlap)\n"
	        CLI_PAR_HELP
	        "                    (--microbatches is per data-parallel replica)\n"
	        "\n"
	        "exit status: 0 ok, 2 bad usage or input, 3 the plan does not fit in memory\n", sched_names());
}

static int *parse_placement(const char *s, int *n)
{
	int cap = 16, *v = malloc((size_t)cap * sizeof(int));

	*n = 0;
	while (v && *s) {
		char *end;
		long d = strtol(s, &end, 10);

		if (end == s || d < 0 || d > 65535 || (*end && *end != ',')) {
			free(v);
			return NULL;
		}
		if (*n == cap) {
			int *w = realloc(v, (size_t)(cap *= 2) * sizeof(int));

			if (!w) {
				free(v);
				return NULL;
			}
			v = w;
		}
		v[(*n)++] = (int)d;
		s = *end ? end + 1 : end;
	}
	return v;
}

/* Simulates the plan and prints the one-line verdict; returns the exit code. */
static int report(const struct plan *p, const char *out)
{
	struct sim s;
	struct sim_opts o;
	struct metrics m;
	struct err e = ERR_INIT;
	struct strbuf sb = STRBUF_INIT;
	int rc = EXIT_OK;

	memset(&s, 0, sizeof(s));
	sim_opts_default(&o);
	if (sim_run(&s, p, &o, &m, &e) < 0) {
		/* a generator that emits a deadlocking order is a bug, not bad input; running
		 * out of host memory is neither */
		if (e.cls == ERR_INFEASIBLE)
			cli_err("octopipe plan: internal error: the generated order does not run: %s\n", e.msg);
		else
			cli_err("octopipe plan: %s\n", e.msg);
		metrics_release(&m);
		sim_release(&s);
		return EXIT_RUNTIME;
	}
	strbuf_addf(&sb, "%s: %s, %d stage%s, %d microbatch%s: iteration ", strcmp(out, "-") ? cli_name(out) : "plan",
	            cli_name(p->name), p->nstages, p->nstages == 1 ? "" : "s", p->microbatches, p->microbatches == 1 ? "" : "es");
	fmt_ms(&sb, m.makespan_ms);
	strbuf_addf(&sb, ", bubble %.1f%%, efficiency %.1f%%", 100 * m.bubble_ratio, 100 * m.efficiency);
	fprintf(strcmp(out, "-") ? stdout : stderr, "%s\n", sb.buf);
	if (m.noom) {
		strbuf_reset(&sb);
		cli_oom_line(&sb, strcmp(out, "-") ? out : "plan", p, &m);
		cli_err("%s\n", sb.buf);
		rc = EXIT_INFEASIBLE;
	}
	strbuf_release(&sb);
	metrics_release(&m);
	sim_release(&s);
	return rc;
}

/* plan's own options; the model, cluster, microbatches, -o, --comm and the layout options
 * are cli_args'. */
struct plan_args {
	const char *sched;
	struct baseline_spec spec;
	int *placement;
	bool embed;
};

static int plan_option(void *ctx, int ch, const char *arg)
{
	struct plan_args *pa = ctx;

	switch (ch) {
	case 's': pa->sched = arg; return 0;
	case 'p': pa->spec.partition = arg; return 0;
	case 'v': return (pa->spec.chunks = cli_positive("plan", "--chunks", arg)) < 0 ? EXIT_INPUT : 0;
	case 'd': return (pa->spec.devices = cli_positive("plan", "--devices", arg)) < 0 ? EXIT_INPUT : 0;
	case 'P':
		free(pa->placement);
		if (!(pa->placement = parse_placement(arg, &pa->spec.nplacement)))
			return cli_usage_error("plan", "--placement: expected device numbers like 0,1,2,3");
		return 0;
	case 'e': pa->embed = true; return 0;
	default: return EXIT_INPUT;
	}
}

static const struct option plan_options[] = {
	{ "schedule", required_argument, NULL, 's' },
	{ "partition", required_argument, NULL, 'p' },
	{ "chunks", required_argument, NULL, 'v' },
	{ "devices", required_argument, NULL, 'd' },
	{ "placement", required_argument, NULL, 'P' },
	{ "embed", no_argument, NULL, 'e' },
	{ NULL, 0, NULL, 0 },
};

static const struct cli_args_spec plan_spec = {
	"plan", CLI_IN_MODEL | CLI_IN_CLUSTER | CLI_IN_MICROBATCHES | CLI_IN_OUTPUT | CLI_IN_COMM | CLI_IN_LAYOUT,
	"o:h", plan_options, plan_option, usage,
};

/* What must be given, and the schedule by name. 0 or the exit code. */
static int check_args(const struct cli_args *a, struct plan_args *pa, int argc, char **argv)
{
	int k;

	pa->spec.placement = pa->placement;
	pa->spec.microbatches = a->microbatches;
	pa->spec.comm = a->comm_name;
	if (!a->model_arg || !a->cluster_arg || !pa->sched || !a->microbatches || !a->out)
		return cli_usage_error("plan", "needs --model, --cluster, --schedule, --microbatches and -o");
	if (optind < argc)
		return cli_usage_error("plan", "unexpected argument '%s'", argv[optind]);
	if ((k = sched_from_name(pa->sched)) < 0)
		return cli_usage_error("plan", "unknown schedule '%s' (one of: %s)", pa->sched, sched_names());
	pa->spec.schedule = (enum sched_kind)k;
	return EXIT_OK;
}

/* Builds the baseline the options ask for into p: under layout options on what one
 * replica sees, then with the layout and the files remembered. 0 or the exit code. */
static int make_plan(const struct cli_args *a, struct baseline_spec *spec, struct plan *p)
{
	struct err e = ERR_INIT;
	struct parallel l;
	struct model rm;
	struct cluster rcl;

	/* a plan no command could read back is refused before it is built: its pipeline
	 * devices run one stage each at least */
	if (plan_check_size(spec->devices > 0 ? spec->devices : cli_par_given(&a->par) ? 1 : a->cluster.devices,
	                    spec->microbatches, &e) < 0)
		return cli_usage_error("plan", "%s", e.msg);
	if (!cli_par_given(&a->par))
		return baseline_plan(p, &a->model, NULL, &a->cluster, NULL, spec, &e) == 0 ? EXIT_OK :
		       /* what the options ask for (--partition, --chunks, --placement): their usage error */
		       e.cls == ERR_INPUT ? cli_usage_error("plan", "%s", e.msg) : cli_report(&e);
	cli_par_layout(&a->par, NULL, &a->cluster, spec->devices, &l);
	if (parallel_replica(&a->model, &a->cluster, &l, &rm, &rcl, &e) < 0)
		/* the layout the options ask for: their usage error */
		return e.cls == ERR_INPUT ? cli_usage_error("plan", "%s", e.msg) : cli_report(&e);
	spec->devices = 0;
	if (baseline_plan(p, &rm, NULL, &rcl, NULL, spec, &e) == 0 &&
	    plan_attach_parallel(p, &l, &a->model, &a->cluster, &e) < 0)
		plan_release(p);
	model_release(&rm);
	cluster_release(&rcl);
	return e.cls == ERR_NONE ? EXIT_OK : e.cls == ERR_INPUT ? cli_usage_error("plan", "%s", e.msg) : cli_report(&e);
}

int cmd_plan(int argc, char **argv)
{
	struct plan_args pa = { NULL, { .schedule = SCHED_1F1B }, NULL, false };
	const struct cli_par *cp;
	struct cli_args a;
	struct plan p;
	struct err e = ERR_INIT;
	bool by_memory;
	int rc;

	if ((rc = cli_args_parse(&plan_spec, argc, argv, &pa, &a)) != CLI_ARGS_GO ||
	    (rc = check_args(&a, &pa, argc, argv)) != EXIT_OK ||
	    (rc = cli_args_load(&a, CLI_IN_MODEL | CLI_IN_CLUSTER)) != EXIT_OK)
		goto out;
	/* the memory partition moves the boundaries of a built plan, once its recompute is set */
	if ((by_memory = pa.spec.partition && strcmp(pa.spec.partition, "memory") == 0))
		pa.spec.partition = "uniform";
	if ((rc = make_plan(&a, &pa.spec, &p)) != EXIT_OK)
		goto out;
	cp = &a.par;
	if (cp->recompute > RECOMPUTE_NONE && model_recomputes(&a.model)) {
		rc = cli_usage_error("plan", "--recompute %s: the model's layer table already recomputes every layer (made "
		                     "with octopipe cost --recompute)", recompute_name((enum recompute)cp->recompute));
		plan_release(&p);
		goto out;
	}
	if (cp->recompute >= 0)
		plan_set_recompute(&p, (enum recompute)cp->recompute);
	if (by_memory && baseline_balance_memory(&p, &e) < 0) {
		rc = e.cls == ERR_INPUT ? cli_usage_error("plan", "--partition memory: %s", e.msg) : cli_report(&e);
		plan_release(&p);
		goto out;
	}
	rc = cli_write_plan(&p, a.out, a.model_path, a.cluster_path, pa.embed);
	if (rc == EXIT_OK)
		rc = report(&p, a.out);
	plan_release(&p);
out:
	free(pa.placement);
	cli_args_release(&a);
	return rc;
}
