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
#include "doc.h"
#include "json.h"
#include "sim.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: octopipe plan --model M --cluster C --schedule NAME --microbatches N\n"
	        "                     [--partition uniform|balanced|megatron|...] [--chunks V]\n"
	        "                     [--devices P] [--placement d0,d1,...] [--comm HOW] [--embed]\n"
	        "                     [--tp T] [--dp D] [--ep E] [--zero Z] [--grads G] [--recompute HOW] -o PLAN\n"
	        "\n"
	        "Builds a plan for model M on cluster C (files or bundled sample names) and writes it\n"
	        "to PLAN (\"-\" for stdout), then prints its simulated iteration time.\n"
	        "\n"
	        "  --schedule NAME   %s\n"
	        "  --partition HOW   layer counts per stage: uniform, balanced (min-max stage cost),\n"
	        "                    megatron (decoder layers evenly, the embedding and the loss on\n"
	        "                    top of the first and last stage), megatron-accounted (they count\n"
	        "                    as a layer each), or explicit counts like 7,7,6,6; default: the\n"
	        "                    schedule's own (megatron for 1f1b, interleaved and zb-*)\n"
	        "  --chunks V        stages per device (interleaved: 2 or more; zb-v, dualpipev: 2)\n"
	        "  --devices P       pipeline devices (default: the whole cluster, or the GPUs / (T x D))\n"
	        "  --placement LIST  device of each stage (adaptive only)\n"
	        "  --embed           write the model and cluster into the plan instead of paths\n"
	        "  --comm HOW        overlap (transfers run beside compute) or blocking (a device\n"
	        "                    holds until its send is received); default: as the schedule's\n"
	        "                    runtime does it (blocking for Megatron's 1f1b, else overlap)\n"
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
	strbuf_addf(&sb, "%s: %s, %d stages, %d microbatches: iteration ", strcmp(out, "-") ? out : "plan",
	            p->name, p->nstages, p->microbatches);
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

int cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "cluster", required_argument, NULL, 'c' },
		{ "schedule", required_argument, NULL, 's' },
		{ "microbatches", required_argument, NULL, 'n' },
		{ "partition", required_argument, NULL, 'p' },
		{ "chunks", required_argument, NULL, 'v' },
		{ "devices", required_argument, NULL, 'd' },
		{ "placement", required_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ "embed", no_argument, NULL, 'e' },
		{ "comm", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		CLI_PAR_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	const char *model_arg = NULL, *cluster_arg = NULL, *sched = NULL, *out = NULL;
	struct cli_par cp;
	struct baseline_spec spec = { SCHED_1F1B, 0, 0, NULL, NULL, 0, 0, NULL };
	char mpath[4096], cpath[4096];
	struct model m;
	struct cluster c;
	struct plan p;
	struct err e = ERR_INIT;
	bool embed = false;
	int *placement = NULL, rc, k, ch;

	optind = 0;
	cli_par_init(&cp);
	while ((ch = cli_getopt("plan", argc, argv, "o:h", opts)) != -1) {
		if ((k = cli_par_option("plan", ch, optarg, &cp)) != 0) {
			if (k < 0) {
				free(placement);
				return EXIT_INPUT;
			}
			continue;
		}
		switch (ch) {
		case 'm': model_arg = optarg; break;
		case 'c': cluster_arg = optarg; break;
		case 's': sched = optarg; break;
		case 'n': if ((spec.microbatches = cli_positive("plan", "--microbatches", optarg)) < 0) return EXIT_INPUT; break;
		case 'p': spec.partition = optarg; break;
		case 'C': {
			enum plan_comm pc;

			if (plan_comm_from_name(optarg, &pc) < 0)
				return cli_usage_error("plan", "--comm: '%s' is not overlap or blocking", optarg);
			spec.comm = optarg;
			break;
		}
		case 'v': if ((spec.chunks = cli_positive("plan", "--chunks", optarg)) < 0) return EXIT_INPUT; break;
		case 'd': if ((spec.devices = cli_positive("plan", "--devices", optarg)) < 0) return EXIT_INPUT; break;
		case 'P':
			free(placement);
			if (!(placement = parse_placement(optarg, &spec.nplacement)))
				return cli_usage_error("plan", "--placement: expected device numbers like 0,1,2,3");
			break;
		case 'o': out = optarg; break;
		case 'e': embed = true; break;
		case 'h': usage(stdout); return EXIT_OK;
		default: return EXIT_INPUT;
		}
	}
	spec.placement = placement;
	if (!model_arg || !cluster_arg || !sched || !spec.microbatches || !out) {
		free(placement);
		return cli_usage_error("plan", "needs --model, --cluster, --schedule, --microbatches and -o");
	}
	if (optind < argc) {
		free(placement);
		return cli_usage_error("plan", "unexpected argument '%s'", argv[optind]);
	}
	k = sched_from_name(sched);
	if (k < 0) {
		free(placement);
		return cli_usage_error("plan", "unknown schedule '%s' (one of: %s)", sched, sched_names());
	}
	spec.schedule = (enum sched_kind)k;
	if ((rc = cli_load_model(model_arg, &m, mpath)) != 0) {
		free(placement);
		return rc;
	}
	if ((rc = cli_load_cluster(cluster_arg, &c, cpath)) != 0) {
		model_release(&m);
		free(placement);
		return rc;
	}
	/* a plan no command could read back is refused before it is built: its pipeline
	 * devices run one stage each at least */
	if (plan_check_size(spec.devices > 0 ? spec.devices : cli_par_given(&cp) ? 1 : c.devices, spec.microbatches,
	                    &e) < 0) {
		rc = cli_usage_error("plan", "%s", e.msg);
		model_release(&m);
		cluster_release(&c);
		free(placement);
		return rc;
	}
	if (cli_par_given(&cp)) {
		/* build on what one replica sees, then remember the layout and the files */
		struct parallel l;
		struct model rm;
		struct cluster rcl;

		cli_par_layout(&cp, NULL, &c, spec.devices, &l);
		if (parallel_replica(&m, &c, &l, &rm, &rcl, &e) < 0) {
			/* the layout the options ask for: their usage error */
			rc = e.cls == ERR_INPUT ? cli_usage_error("plan", "%s", e.msg) : cli_report(&e);
			model_release(&m);
			cluster_release(&c);
			free(placement);
			return rc;
		}
		spec.devices = 0;
		if (baseline_plan(&p, &rm, NULL, &rcl, NULL, &spec, &e) == 0 &&
		    plan_attach_parallel(&p, &l, &m, &c, &e) < 0)
			plan_release(&p);
		model_release(&rm);
		cluster_release(&rcl);
		if (e.cls != ERR_NONE) {
			rc = cli_report(&e);
			model_release(&m);
			cluster_release(&c);
			free(placement);
			return rc;
		}
	} else if (baseline_plan(&p, &m, NULL, &c, NULL, &spec, &e) < 0) {
		rc = cli_report(&e);
		model_release(&m);
		cluster_release(&c);
		free(placement);
		return rc;
	}
	if (cp.recompute > RECOMPUTE_NONE && model_recomputes(&m)) {
		rc = cli_usage_error("plan", "--recompute %s: the model's layer table already recomputes every layer (made "
		                     "with octopipe cost --recompute)", recompute_name((enum recompute)cp.recompute));
		plan_release(&p);
		model_release(&m);
		cluster_release(&c);
		free(placement);
		return rc;
	}
	if (cp.recompute >= 0)
		plan_set_recompute(&p, (enum recompute)cp.recompute);
	{
		rc = cli_write_plan(&p, out, mpath, cpath, embed);
		if (rc == EXIT_OK)
			rc = report(&p, out);
		plan_release(&p);
	}
	model_release(&m);
	cluster_release(&c);
	free(placement);
	return rc;
}
