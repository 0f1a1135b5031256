/*
 * octopipe sim PLAN — simulate a plan and report: a readable summary (iteration time,
 * throughput, bubbles per device split into warm-up and cool-down, memory against
 * capacity), the metrics as JSON, the timeline, a Chrome trace and a text Gantt chart.
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli/cli_args.h"
#include "doc.h"
#include "gantt.h"
#include "fileio.h"
#include "json.h"
#include "sim.h"
#include "trace.h"

static void usage(FILE *f)
{
	fputs("usage: octopipe sim [--json] [--gantt [--width N]] [--timeline-out FILE]\n"
	      "                    [--trace-out FILE] [--comm overlap|blocking]\n"
	      "                    [--tp T] [--dp D] [--ep E] [--zero Z] [--grads G]\n"
	      "                    [--recompute HOW] PLAN\n"
	      "\n"
	      "Simulates PLAN: each device runs its op list in order; transfers between devices\n"
	      "cost latency + bytes / bandwidth and overlap compute, or hold both ends when the\n"
	      "plan's \"comm\" is blocking (Megatron-LM's 1F1B). Prints the iteration time,\n"
	      "throughput, the bubble ratio (1 - busy / (devices x iteration)), idle time per\n"
	      "device before the first backward (warm-up) and after the last forward\n"
	      "(cool-down), and peak memory against capacity.\n"
	      "\n"
	      "  --json              print the metrics object instead of the summary\n"
	      "  --gantt             add a text Gantt chart (--width columns, 10 or more;\n"
	      "                      default 100)\n"
	      "  --timeline-out F    write the predicted timeline (octopipe.timeline/1)\n"
	      "  --trace-out F       write a Chrome trace / Perfetto JSON (for ui.perfetto.dev)\n"
	      "  --comm HOW          simulate transfers as overlap or blocking, whatever the\n"
	      "                      plan says\n"
	      "Layout options re-price the plan (same stages and orders) under another layout:\n"
	      CLI_PAR_HELP
	      "\n"
	      "exit status: 0 ok, 2 bad input, 3 infeasible (deadlock: names the cycle; out of\n"
	      "memory: names the device)\n", f);
}

/* The per-device table: busy, idle, warm-up and cool-down, peak memory against usable. */
static void device_table(struct strbuf *sbp, const struct plan *p, const struct metrics *m, bool layout)
{
	int dec = -1;

	strbuf_addf(sbp, "%4s %10s %10s %7s %10s %10s %11s %11s\n", layout ? "PP" : "GPU", "BUSY ms", "IDLE ms", "BUBBLE",
	            "WARM-UP", "COOL-DOWN", "PEAK MEM", "USABLE");
	/* where some device's peak would read as its capacity, the whole table in GB with the
	 * decimals that tell them apart (one USABLE, the same in every row) */
	for (int d = 0; d < m->ndevices; d++) {
		int x = fmt_bytes_alike((double)m->dev[d].peak_mem_bytes, cluster_usable_bytes(&p->cluster));

		dec = x > dec ? x : dec;
	}
	for (int d = 0; d < m->ndevices; d++) {
		const struct device_metrics *dm = &m->dev[d];
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		bool over = false;

		for (int i = 0; i < m->noom; i++)
			over = over || m->oom[i] == d;
		if (dec >= 0) {
			strbuf_addf(&a, "%.*f GB", dec, (double)dm->peak_mem_bytes / 1e9);
			strbuf_addf(&b, "%.*f GB", dec, cluster_usable_bytes(&p->cluster) / 1e9);
		} else {
			fmt_bytes(&a, (double)dm->peak_mem_bytes);
			fmt_bytes(&b, cluster_usable_bytes(&p->cluster));
		}
		strbuf_addf(sbp, "%4d %10.2f %10.2f %6.1f%% %10.2f %10.2f %11s %11s%s\n", d, dm->busy_ms, dm->idle_ms,
		            100 * dm->bubble_ratio, dm->warmup_idle_ms, dm->cooldown_idle_ms, a.buf, b.buf,
		            over ? "  OUT OF MEMORY" : "");
		strbuf_release(&a);
		strbuf_release(&b);
	}
}

static void summary(const struct plan *p, const char *path, const struct metrics *m, bool blocking)
{
	struct strbuf sb = STRBUF_INIT;
	bool layout = false;

	strbuf_addf(&sb, "plan %s: %s on %s, %d stage%s on %d device%s, %d microbatch%s, %s backward%s\n",
	            cli_name(path), cli_name(p->model.name), cli_name(p->cluster.name), p->nstages, p->nstages == 1 ? "" : "s", p->ndevices,
	            p->ndevices == 1 ? "" : "s", p->microbatches, p->microbatches == 1 ? "" : "es",
	            p->split_backward ? "split" : "fused", blocking ? ", blocking transfers" : "");
	strbuf_addstr(&sb, "iteration ");
	fmt_ms(&sb, m->makespan_ms);
	strbuf_addf(&sb, "   throughput %.0f tokens/s   efficiency %.1f%% of the lower bound (", m->throughput_tokens_per_s,
	            100 * m->efficiency);
	fmt_ms(&sb, m->lower_bound_ms);
	strbuf_addstr(&sb, ")\ntight bound ");
	fmt_ms(&sb, m->lower_bound_tight_ms);
	strbuf_addf(&sb, " (efficiency %.1f%%): at most %.1f%% slower than the best plan can be\n", 100 * m->efficiency_tight,
	            m->lower_bound_tight_ms > 0 ? fmax(0, 100 * (m->makespan_ms / m->lower_bound_tight_ms - 1)) : 0);
	if (m->lower_bound_memory_ms > m->lower_bound_tight_ms * (1 + 1e-9)) {
		strbuf_addstr(&sb, "memory-aware bound ");
		fmt_ms(&sb, m->lower_bound_memory_ms);
		strbuf_addf(&sb, " (efficiency %.1f%%): no plan that fits in memory is faster\n", 100 * m->efficiency_memory);
	}
	strbuf_addf(&sb, "bubble %.1f%% of device time (1 - busy / (devices x iteration))\n", 100 * m->bubble_ratio);
	{
		struct parallel l = plan_parallel(p);
		int worst = 0;

		layout = l.tp * l.dp > 1;
		if (!parallel_is_pipeline_only(&l) || p->has_parallel) {
			for (int d = 1; d < m->ndevices; d++)
				if (m->dev[d].peak_mem_bytes > m->dev[worst].peak_mem_bytes)
					worst = d;
			strbuf_addf(&sb, "layout pp %d x tp %d x dp %d = %d GPUs (ep %d, ZeRO %d%s", l.pp, l.tp, l.dp,
			            parallel_gpus(&l), l.ep, l.zero, l.fp32_grads ? ", fp32 gradients" : "");
			if (l.micro_batch > 0)
				strbuf_addf(&sb, ", micro-batch %ld", l.micro_batch);
			strbuf_addstr(&sb, "); data-parallel sync ");
			fmt_ms(&sb, m->dp_sync_ms);
			strbuf_addstr(&sb, " exposed\n");
			if (layout) {
				strbuf_addstr(&sb, "each row below is a pipeline rank (pp): ");
				if (l.tp > 1)
					strbuf_addf(&sb, "a tensor-parallel group of %d GPUs", l.tp);
				else
					strbuf_addstr(&sb, "one GPU");
				if (l.dp > 1)
					strbuf_addf(&sb, ", the same in each of the %d data-parallel replicas", l.dp);
				strbuf_addstr(&sb, "\n");
			}
			strbuf_addstr(&sb, "memory per GPU of ");
			strbuf_addf(&sb, "%s %d: weights ", layout ? "pp" : "device", worst);
			fmt_bytes(&sb, (double)m->dev[worst].weights_bytes);
			strbuf_addstr(&sb, ", grads ");
			fmt_bytes(&sb, (double)m->dev[worst].grads_bytes);
			strbuf_addstr(&sb, ", optimizer ");
			fmt_bytes(&sb, (double)m->dev[worst].optimizer_bytes);
			strbuf_addstr(&sb, ", activations ");
			fmt_bytes(&sb, (double)m->dev[worst].act_peak_bytes);
			strbuf_addstr(&sb, "\n");
		}
	}
	strbuf_addstr(&sb, "\n");
	device_table(&sb, p, m, layout);
	cli_put_text(sb.buf, sb.len);
	strbuf_release(&sb);
}

static int write_json(const char *path, cJSON *root)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (!root) {
		cli_err("octopipe sim: out of host memory\n");
		return EXIT_RUNTIME;
	}
	json_write(&sb, root);
	rc = cli_write_text(path, sb.buf, sb.len);
	strbuf_release(&sb);
	cJSON_Delete(root);
	return rc;
}

/* sim's own options; the plan, --json, --comm and the layout options are cli_args'. */
struct sim_args {
	bool gantt;
	int width;
	const char *tl_out, *trace_out;
};

static int sim_option(void *ctx, int ch, const char *arg)
{
	struct sim_args *sa = ctx;

	switch (ch) {
	case 'g': sa->gantt = true; return 0;
	case 'w': return (sa->width = cli_int("sim", "--width", arg, 10, 1000000)) < 0 ? EXIT_INPUT : 0;
	case 't': sa->tl_out = arg; return 0;
	case 'T': sa->trace_out = arg; return 0;
	default: return EXIT_INPUT;
	}
}

static const struct option sim_options[] = {
	{ "gantt", no_argument, NULL, 'g' },
	{ "width", required_argument, NULL, 'w' },
	{ "timeline-out", required_argument, NULL, 't' },
	{ "trace-out", required_argument, NULL, 'T' },
	{ NULL, 0, NULL, 0 },
};

static const struct cli_args_spec sim_spec = {
	"sim", CLI_IN_PLAN | CLI_IN_JSON | CLI_IN_COMM | CLI_IN_LAYOUT, "jgh", sim_options, sim_option, usage,
};

/* The layout options over the plan's own layout, and --recompute. 0 or the exit code. */
static int apply_layout(struct cli_args *a)
{
	const struct cli_par *cp = &a->par;
	struct plan *p = &a->plan;
	struct err e = ERR_INIT;

	if (cli_par_given(cp)) {
		struct parallel l, cur = plan_parallel(p);

		cli_par_layout(cp, &cur, plan_src_cluster(p), p->ndevices, &l);
		if (plan_set_parallel(p, &l, &e) < 0)
			/* the layout the options ask for: their usage error */
			return e.cls == ERR_INPUT ? cli_usage_error("sim", "%s", e.msg) : cli_report(&e);
	}
	if (cp->recompute > RECOMPUTE_NONE && model_recomputes(plan_src_model(p)))
		return cli_usage_error("sim", "--recompute %s: the model's layer table already recomputes every layer (made "
		                       "with octopipe cost --recompute)", recompute_name((enum recompute)cp->recompute));
	if (cp->recompute >= 0)
		plan_set_recompute(p, (enum recompute)cp->recompute);
	return EXIT_OK;
}

/* The recorded timeline's outputs: the text Gantt chart, the timeline and the trace. */
static int write_timeline(const struct sim_args *sa, const char *path, const struct plan *p, struct sim *s,
                          struct metrics *m)
{
	struct err e = ERR_INIT;
	struct timeline t;
	int rc = EXIT_OK;

	if (sim_timeline(s, p, m, &t, &e) < 0)
		return cli_report(&e);
	free(t.plan_ref);
	t.plan_ref = NULL;
	/* named as seen from the timeline's folder (as run names it; on stdout, from here),
	 * when JSON can hold the name */
	if (sa->tl_out) {
		char dir[4096], rel[4096];

		fileio_dirname(strcmp(sa->tl_out, "-") ? sa->tl_out : "./-", dir, sizeof(dir));
		if (fileio_relative(dir, path, rel, sizeof(rel)) == 0 && timeline_plan_ref_ok(rel))
			t.plan_ref = strdup(rel);
	}
	if (sa->gantt) {
		struct strbuf sb = STRBUF_INIT;
		struct parallel l = plan_parallel(p);

		gantt_ascii(&t, sa->width, l.tp * l.dp > 1 ? "pp" : "gpu", &sb);
		fputs("\n", stdout);
		cli_put_text(sb.buf, sb.len);
		strbuf_release(&sb);
	}
	if (sa->tl_out && rc == EXIT_OK)
		rc = write_json(sa->tl_out, timeline_to_json(&t));
	if (sa->trace_out && rc == EXIT_OK)
		rc = write_json(sa->trace_out, trace_from_timeline(&t, p));
	timeline_release(&t);
	return rc;
}

/* Simulates the plan and prints or writes what the options ask for. */
static int simulate(const struct cli_args *a, const struct sim_args *sa)
{
	const char *path = a->plan_path, *tl_out = sa->tl_out, *trace_out = sa->trace_out;
	const struct plan *p = &a->plan;
	int comm_mode = !a->comm_name ? SIM_COMM_PLAN : a->comm == PLAN_COMM_BLOCKING ? SIM_COMM_BLOCKING
	                : SIM_COMM_OVERLAP;
	int rc = EXIT_OK;
	struct err e = ERR_INIT;
	struct sim s;
	struct sim_opts o;
	struct metrics m;

	memset(&s, 0, sizeof(s));
	sim_opts_default(&o);
	o.record = tl_out || trace_out || sa->gantt;
	o.comm = comm_mode;
	if (sim_run(&s, p, &o, &m, &e) < 0) {
		if (a->json && m.ncycle)
			write_json("-", metrics_to_json(&m));
		cli_err("%s: plan infeasible: %s\n", path, e.msg);
		rc = e.cls == ERR_INFEASIBLE ? EXIT_INFEASIBLE : EXIT_RUNTIME;
		metrics_release(&m);
		sim_release(&s);
		return rc;
	}
	if (a->json)
		rc = write_json("-", metrics_to_json(&m));
	else if (!(tl_out && strcmp(tl_out, "-") == 0) && !(trace_out && strcmp(trace_out, "-") == 0))
		summary(p, path, &m, comm_mode ? comm_mode == SIM_COMM_BLOCKING : p->comm == PLAN_COMM_BLOCKING);
	if (o.record && rc == EXIT_OK)
		rc = write_timeline(sa, path, p, &s, &m);
	if (rc == EXIT_OK && m.noom) {
		struct strbuf sb = STRBUF_INIT;

		cli_oom_line(&sb, path, p, &m);
		cli_err("%s\n", sb.buf);
		strbuf_release(&sb);
		rc = EXIT_INFEASIBLE;
	}
	metrics_release(&m);
	sim_release(&s);
	return rc;
}

int cmd_sim(int argc, char **argv)
{
	struct sim_args sa = { false, 100, NULL, NULL };
	struct cli_args a;
	struct err e = ERR_INIT;
	int rc;

	if ((rc = cli_args_parse(&sim_spec, argc, argv, &sa, &a)) != CLI_ARGS_GO)
		return rc;
	{
		const char *names[] = { "--json", "--gantt", "--timeline-out -", "--trace-out -" };
		const char *outs[] = { a.json ? "-" : NULL, sa.gantt ? "-" : NULL, sa.tl_out, sa.trace_out };

		if (cli_one_stdout("sim", names, outs, 4) != EXIT_OK)
			return EXIT_INPUT;
	}
	if ((rc = cli_args_load(&a, CLI_IN_PLAN)) == EXIT_OK && (rc = apply_layout(&a)) == EXIT_OK) {
		/* an output that cannot be written (one of the plan's files, a directory, ...) is
		 * refused now, before a summary or --json on stdout could be taken for a result */
		const char *outs[] = { sa.tl_out, sa.trace_out };

		for (int i = 0; i < 2 && rc == EXIT_OK; i++)
			if (outs[i] && strcmp(outs[i], "-") != 0 && fileio_check_writable(outs[i], &e) < 0)
				rc = cli_report(&e);
		if (rc == EXIT_OK)
			rc = simulate(&a, &sa);
	}
	cli_args_release(&a);
	return rc;
}
