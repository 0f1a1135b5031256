/*
 * octopipe run PLAN — execute a plan: derive every worker's program (ops, sends and
 * early receives, checked and repaired for NCCL's per-pair order), run it on a backend,
 * stream octopipe.events/1 JSON lines, and compare the measured iteration time with the
 * simulated one per device.
 *
 * Under mpirun (or with --mpi, when built --with-mpi) every rank loads the same plan and
 * builds the same programs, runs its own device, and rank 0 alone reports and writes
 * files: the other ranks' output goes to /dev/null, their failures reach rank 0 through
 * the backend, so the job prints one error line naming the rank.
 *
 * The backends are a table (run_backend.h): this file only calls through the entry it
 * picked, whatever the build holds. The events stream is run_events.c's; execute() runs
 * one plan in phases (predict, prepare, start, iterate, report, write the timeline) over
 * one struct run_state, released in one place.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli/cli_args.h"
#include "cli/run_backend.h"
#include "cli/run_events.h"
#include "doc.h"
#include "exec/emu.h"
#include "exec/kplan.h"
#include "exec/protocol.h"
#include "fileio.h"
#include "json.h"
#include "sim.h"
#include "tlcheck.h"

static void usage(FILE *f)
{
	fputs("usage: octopipe run [--backend emu|cuda] [--fit] [--iters N] [--time-scale X]\n"
	      "                    [--timeout S] [--events-out FILE] [--timeline-out FILE]\n"
	      "                    [--json] [--force] PLAN\n"
	      "       octopipe run --backend cuda --dry-run [--fit] [--json] PLAN\n"
	      "\n"
	      "Runs PLAN on the executor. Each device's worker runs its op list in order, sends\n"
	      "each output as soon as it exists and posts each receive early; the i-th transfer\n"
	      "between two devices is checked to match on both sides (and repaired by moving\n"
	      "receives). Prints the measured iteration time against the simulated one.\n"
	      "\n"
	      "  --backend emu      threads emulating the devices and NCCL send/recv (default)\n"
	      "  --backend cuda     one thread per GPU: each op runs its layers' kernels from\n"
	      "                     the model's architecture (a model made by octopipe cost),\n"
	      "                     measured as they are; NCCL send/recv of the real\n"
	      "                     activation sizes\n"
	      "  --fit              cuda: fitted proxies instead: a GEMM per op of the stage's\n"
	      "                     activation shape, fitted to the op's predicted time (a\n"
	      "                     test of the protocol; a model without an architecture\n"
	      "                     always runs these)\n"
	      "  --gemm-tflops X    cuda: fitted proxies (implies --fit) sized for this\n"
	      "                     throughput (default: each is timed on the GPU and fitted\n"
	      "                     to its op's time)\n"
	      "  --share-gpus       cuda: run a plan of more devices than there are GPUs,\n"
	      "                     device d on GPU d mod N (devices sharing a GPU run at\n"
	      "                     once: this tests the plan's protocol, its times are not\n"
	      "                     the prediction's)\n"
	      "  --iters N          iterations to run (default 1)\n"
	      "  --time-scale X     wall ms per model ms, emulator (default 0: no sleeping)\n"
	      "  --timeout S        watchdog: the longest any wait may take (default 10 s)\n"
	      "  --force            run a plan that the simulator finds out of device memory\n"
	      "  --dry-run          with --backend cuda: list the kernels each op would launch,\n"
	      "                     with shapes, FLOPs and bytes (no GPU needed; --json: also\n"
	      "                     each op's \"launches\" and the \"charged_launches\" its\n"
	      "                     prediction charges, equal but for fused attention cores)\n"
	      "  --mpi              one MPI rank per device (automatic under mpirun/srun;\n"
	      "                     needs a build --with-mpi)\n"
	      "  --events-out FILE  octopipe.events/1 JSON lines (\"-\" for stdout)\n"
	      "  --timeline-out F   the measured timeline of the last iteration\n"
	      "  --json             {\"predicted_ms\", \"measured_ms\", \"error\", \"kernels\",\n"
	      "                     \"devices\": [...]} (and \"kernels_note\": why a model's ops\n"
	      "                     run fitted proxies unasked; \"not_run\": what the plan\n"
	      "                     prices that the kernels do not run, and\n"
	      "                     \"predicted_with_collectives_ms\": the plan's own prediction)\n"
	      "\n"
	      "error is the prediction's: (predicted - measured) / measured, as in calibrate.\n"
	      "predicted is what this run's ops were expected to take: with --backend cuda,\n"
	      "kernels from the architecture and tp > 1 (or ep > 1, or ZeRO 3), one GPU runs\n"
	      "each pipeline rank's share of the kernels without the tensor-parallel\n"
	      "all-reduces, the all-to-all and ZeRO 3's weight gathers, so predicted is the\n"
	      "plan priced without those collectives (the dry run's per-op times too), and\n"
	      "predicted_with_collectives is the plan's own (octopipe sim's, less the\n"
	      "data-parallel sync this executor does not run either).\n"
	      "kernels says what the ops ran: \"emulated\" (the model's times on a virtual\n"
	      "clock), \"architecture\" (cuda: the layers' kernels, timed as they run: a test of\n"
	      "the cost model) or \"fitted\" (cuda proxies fitted to the predicted times: a test\n"
	      "of the protocol and the clocks, not of the cost model). The start event, the\n"
	      "summary and the dry run say it too.\n"
	      "\n"
	      "exit status: 0 ok, 1 a worker failed (named, with the reason), 2 bad input,\n"
	      "3 the plan cannot run (deadlock or out of device memory in simulation)\n", f);
}

/* The prediction's error, as octopipe calibrate reports it: (predicted - measured) / measured. */
static double prediction_error(double predicted, double measured)
{
	return measured > 0 ? (predicted - measured) / measured : 0;
}

static double end_of(const struct tl_device *d)
{
	double e = 0;

	for (int i = 0; i < d->nops; i++)
		if (d->ops[i].end_ms > e)
			e = d->ops[i].end_ms;
	return e;
}

/* The iteration time of a timeline: its last device's end. */
static double iteration_ms(const struct timeline *t)
{
	double ms = 0;

	for (int d = 0; d < t->ndevices; d++)
		ms = fmax(ms, end_of(&t->dev[d]));
	return ms;
}

struct run_opts {
	struct emu_opts eo;
	const char *events_out, *tl_out;
	int iters;
	bool json;
	double gemm_tflops;
	bool share_gpus;
	bool force;
	bool fit;
};

/* Everything one run holds, from the loaded plan to the measured timeline: execute() runs
 * the phases below over it in order, and run_release() lets go of whatever they made. */
struct run_state {
	const struct run_opts *ro;
	const struct run_backend *rb;
	int rank;
	bool mpi;
	const char *path;           /* the plan, resolved */
	struct emu_opts eo;         /* ro->eo, with the event callback once the stream is open */
	struct run_events ev;
	struct plan p;
	bool have_plan;
	struct sim s;
	struct metrics m;
	struct timeline pred;       /* the simulated timeline the programs are built from */
	bool have_pred;
	struct exec_program x;
	bool have_x;
	void *state;                /* what the backend opened */
	struct timeline meas;       /* the last iteration measured */
	const char *kernels, *kernels_why, *not_run;
	struct work *works;
	struct cost_opts ko;
	enum kplan_mode mode;
	double with_collectives;    /* the plan's prediction, when the run's leaves collectives out; else -1 */
	int repaired;               /* receives moved to match NCCL's per-pair order */
	struct err e, broke;
};

/* As a rank that cannot go on before the backend opened: meets the other ranks' first
 * agreement where the backend needs it, so that all of them stop (e becomes the first
 * failing rank's message). */
static void stop_ranks(const struct run_backend *rb, bool mpi, struct err *e)
{
	if (mpi && rb->fail_ranks)
		rb->fail_ranks(e);
}

/* The hidden options that inject a fault (tests of the failure paths): 1 when ch was one,
 * 0 when not, -1 after a usage error. */
static int fault_option(int ch, const char *arg, struct emu_opts *eo)
{
	switch (ch) {
	case 'K':
		return (eo->kill_device = cli_int("run", "--kill-device", arg, 0, 65535)) < 0 ? -1 : 1;
	case 'A':
		return (eo->kill_after_ops = cli_int("run", "--kill-after", arg, 0, 1000000000)) < 0 ? -1 : 1;
	case 'H':
		/* how the killed worker fails */
		if (strcmp(arg, "die") == 0)
			eo->kill_how = EMU_KILL_FAIL;
		else if (strcmp(arg, "hang") == 0)
			eo->kill_how = EMU_KILL_HANG;
		else if (strcmp(arg, "crash") == 0)
			eo->kill_how = EMU_KILL_CRASH;
		else {
			cli_usage_error("run", "--kill-how: '%s' is not die, hang or crash", arg);
			return -1;
		}
		return 1;
	case 'R':
		/* transfer K carries another microbatch's data (the receiver must notice) */
		return (eo->misroute_xfer = cli_int("run", "--misroute-xfer", arg, 0, 1000000000)) < 0 ? -1 : 1;
	case 'C':
		/* one byte of transfer K flips on the way */
		return (eo->corrupt_xfer = cli_int("run", "--corrupt-xfer", arg, 0, 1000000000)) < 0 ? -1 : 1;
	case 'S':
		/* STAGE:FACTOR makes one stage slower than its model says (calibration tests) */
		if (sscanf(arg, "%d:%lf", &eo->slow_stage, &eo->slow_factor) != 2 || eo->slow_stage < 0 ||
		    !(eo->slow_factor > 0 && eo->slow_factor <= 1000)) {
			cli_usage_error("run", "--emu-slowdown: '%s' is not STAGE:FACTOR", arg);
			return -1;
		}
		return 1;
	default:
		return 0;
	}
}

/* What the command line asks for (the plan and --json are cli_args'). */
struct run_args {
	const char *backend;
	struct run_opts ro;
	bool want_mpi, dry_run;
};

static int run_option(void *ctx, int ch, const char *arg)
{
	struct run_args *ra = ctx;
	struct run_opts *ro = &ra->ro;
	int k = fault_option(ch, arg, &ro->eo);

	if (k != 0)
		return k < 0 ? EXIT_INPUT : 0;
	switch (ch) {
	case 'b': ra->backend = arg; return 0;
	case 'i': return (ro->iters = cli_positive("run", "--iters", arg)) < 0 ? EXIT_INPUT : 0;
	case 's': return cli_number("run", "--time-scale", arg, 0, 100, false, &ro->eo.time_scale) < 0 ? EXIT_INPUT : 0;
	case 't': return cli_number("run", "--timeout", arg, 0, 86400, true, &ro->eo.timeout_s) < 0 ? EXIT_INPUT : 0;
	case 'E': ro->events_out = arg; return 0;
	case 'T': ro->tl_out = arg; return 0;
	case 'M': ra->want_mpi = true; return 0;
	case 'G': return cli_number("run", "--gemm-tflops", arg, 0, 1e6, true, &ro->gemm_tflops) < 0 ? EXIT_INPUT : 0;
	case 'g': ro->share_gpus = true; return 0;
	case 'f': ro->force = true; return 0;
	case 'F': ro->fit = true; return 0;
	case 'D': ra->dry_run = true; return 0;
	default: return EXIT_INPUT;
	}
}

static const struct option run_options[] = {
	{ "backend", required_argument, NULL, 'b' },
	{ "iters", required_argument, NULL, 'i' },
	{ "time-scale", required_argument, NULL, 's' },
	{ "timeout", required_argument, NULL, 't' },
	{ "events-out", required_argument, NULL, 'E' },
	{ "timeline-out", required_argument, NULL, 'T' },
	{ "kill-device", required_argument, NULL, 'K' },
	{ "kill-after", required_argument, NULL, 'A' },
	{ "kill-how", required_argument, NULL, 'H' },
	{ "misroute-xfer", required_argument, NULL, 'R' },
	{ "corrupt-xfer", required_argument, NULL, 'C' },
	{ "emu-slowdown", required_argument, NULL, 'S' },
	{ "mpi", no_argument, NULL, 'M' },
	{ "gemm-tflops", required_argument, NULL, 'G' },
	{ "share-gpus", no_argument, NULL, 'g' },
	{ "force", no_argument, NULL, 'f' },
	{ "fit", no_argument, NULL, 'F' },
	{ "dry-run", no_argument, NULL, 'D' },
	{ NULL, 0, NULL, 0 },
};

static const struct cli_args_spec run_spec = {
	"run", CLI_IN_PLAN | CLI_IN_JSON, "jh", run_options, run_option, usage,
};

/* Parses the options into ra and a: CLI_ARGS_GO to go on, else the exit code (EXIT_OK
 * after --help). */
static int parse_options(int argc, char **argv, struct run_args *ra, struct cli_args *a)
{
	struct run_opts *ro = &ra->ro;
	int rc;

	memset(ra, 0, sizeof(*ra));
	ra->backend = "emu";
	ro->iters = 1;
	emu_opts_default(&ro->eo);
	if ((rc = cli_args_parse(&run_spec, argc, argv, ra, a)) != CLI_ARGS_GO)
		return rc;
	ro->json = a->json;
	{
		const char *names[] = { "--json", "--events-out -", "--timeline-out -" };
		const char *outs[] = { ro->json ? "-" : NULL, ro->events_out, ro->tl_out };

		if (cli_one_stdout("run", names, outs, 3) != EXIT_OK)
			return EXIT_INPUT;
	}
	return CLI_ARGS_GO;
}

/* --dry-run: lists the cuda backend's kernel plan, which needs no GPU and no CUDA library. */
static int dry_run(const struct run_args *a, const char *plan)
{
	const struct run_opts *ro = &a->ro;
	const struct emu_opts *eo = &ro->eo;
	/* it runs nothing: an option about running would be silently ignored */
	const char *idle = ro->events_out ? "--events-out" : ro->tl_out ? "--timeline-out" : ro->iters != 1 ? "--iters"
	                   : eo->kill_device >= 0 || eo->kill_after_ops > 0 ? "--kill-device"
	                   : eo->misroute_xfer >= 0 ? "--misroute-xfer" : eo->corrupt_xfer >= 0 ? "--corrupt-xfer"
	                   : ro->share_gpus ? "--share-gpus" : NULL;

	if (idle)
		return cli_usage_error("run", "--dry-run runs nothing, so %s would do nothing", idle);
	if (strcmp(a->backend, "cuda") != 0)
		return cli_usage_error("run", "--dry-run lists the cuda backend's kernels (--backend cuda)");
	return run_dry(plan, ro->json, ro->gemm_tflops, ro->fit || ro->gemm_tflops > 0);
}

/* The options that only one kind of backend understands, or only one process: -1 when
 * they fit rb, else the exit code. */
static int check_backend_options(const struct run_opts *ro, const struct run_backend *rb, bool as_ranks, int rank)
{
	if (ro->share_gpus && !rb->gpus)
		return cli_usage_error("run", "--share-gpus is for the cuda backend");
	if ((ro->fit || ro->gemm_tflops > 0) && !rb->gpus)
		return cli_usage_error("run", "%s is for the cuda backend (the emulator's ops take the model's times)",
		                       ro->fit ? "--fit" : "--gemm-tflops");
	if (ro->eo.kill_how != EMU_KILL_FAIL && rb->gpus)
		return cli_usage_error("run", "--kill-how %s is for the emu backend",
		                       ro->eo.kill_how == EMU_KILL_HANG ? "hang" : "crash");
	if (ro->eo.kill_how == EMU_KILL_CRASH && !as_ranks)
		return cli_usage_error("run", "--kill-how crash is for MPI ranks (it would end this whole process)");
	if (rb->gpus && ro->share_gpus && as_ranks) {
		/* rank 0 says it and fails the job; the others leave quietly and successfully, so
		 * that mpirun does not kill rank 0 before its line is out */
		if (rank != 0)
			return EXIT_OK;
		return cli_usage_error("run", "--share-gpus is for one process; as MPI ranks, ranks that share a GPU "
		                       "already pass their data through it");
	}
	return -1;
}

static int execute(const char *arg, const struct run_opts *ro, const struct run_backend *rb, int rank, bool mpi);

int cmd_run(int argc, char **argv)
{
	struct run_args ra;
	struct cli_args a;
	bool as_ranks;
	int rank = 0, nranks, rc;
	const struct run_backend *rb;
	const char *why = "";
	struct err e = ERR_INIT;

	if ((rc = parse_options(argc, argv, &ra, &a)) != CLI_ARGS_GO)
		return rc;
	if (ra.dry_run)
		return dry_run(&ra, a.plan_arg);
	nranks = run_ranks_launched(&rank);
	as_ranks = ra.want_mpi || nranks > (run_ranks_built() ? 0 : 1);
	if (as_ranks && !run_ranks_built()) {
		if (rank == 0)
			cli_err("octopipe run: %s, but this octopipe was built without MPI (configure --with-mpi)\n",
			        ra.want_mpi ? "--mpi was given" : "launched as several MPI ranks");
		return EXIT_INPUT;
	}
	if (!(rb = run_backend_find(ra.backend, as_ranks, &why))) {
		if (strcmp(why, "unknown backend") == 0)
			return cli_usage_error("run", "unknown backend '%s' (emu or cuda)", ra.backend);
		cli_err("octopipe run: %s\n", why);
		return EXIT_RUNTIME;
	}
	if (rb->hand_over)   /* the backend lives in another program: it checks the rest */
		return rb->hand_over(argc, argv);
	if ((rc = check_backend_options(&ra.ro, rb, as_ranks, rank)) >= 0)
		return rc;
	if (!as_ranks)
		return execute(a.plan_arg, &ra.ro, rb, 0, false);
	if (run_ranks_init(&rank, &nranks, &e) < 0)
		return cli_report(&e);
	run_ranks_deadline(ra.ro.eo.timeout_s);
	rc = execute(a.plan_arg, &ra.ro, rb, rank, true);
	run_ranks_finalize();
	return rc;
}

/* run --json: the iteration and each device, predicted against measured. */
static int print_json(const struct run_state *rs, double predicted, double measured)
{
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *devs;
	char *text;

	if (!root)
		w.oom = true;
	jw_num(&w, root, "predicted_ms", run_usec(predicted));
	if (rs->with_collectives >= 0)
		jw_num(&w, root, "predicted_with_collectives_ms", run_usec(rs->with_collectives));
	jw_num(&w, root, "measured_ms", run_usec(measured));
	jw_num(&w, root, "error", run_usec(prediction_error(predicted, measured)));
	jw_num(&w, root, "repaired_receives", rs->repaired);
	jw_str(&w, root, "backend", rs->rb->name);
	jw_str(&w, root, "kernels", rs->kernels);
	if (rs->kernels_why)
		jw_str(&w, root, "kernels_note", rs->kernels_why);
	if (rs->not_run)
		jw_str(&w, root, "not_run", rs->not_run);
	devs = jw_arr(&w, root, "devices");
	for (int d = 0; d < rs->meas.ndevices; d++) {
		double pe = end_of(&rs->pred.dev[d]), me = end_of(&rs->meas.dev[d]);
		cJSON *o = jw_push(&w, devs, cJSON_CreateObject());

		jw_num(&w, o, "id", d);
		jw_num(&w, o, "predicted_ms", run_usec(pe));
		jw_num(&w, o, "measured_ms", run_usec(me));
		jw_num(&w, o, "error", run_usec(prediction_error(pe, me)));
	}
	text = w.oom ? NULL : cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!text) {
		cli_err("octopipe run: out of host memory\n");
		return EXIT_RUNTIME;
	}
	puts(text);
	free(text);
	return EXIT_OK;
}

/* The summary's notes: what the kernels were, and what the prediction leaves out. */
static void print_notes(const struct run_state *rs)
{
	const struct run_backend *rb = rs->rb;

	printf("kernels: %s (%s)\n", rs->kernels,
	       rb->kernels ? "the model's times on a virtual clock"
	       : rs->mode == KPLAN_ARCHITECTURE ? "each op ran its layers' kernels, timed as they ran"
	       : "proxies fitted to the predicted times: a test of the protocol, not of the cost model");
	if (rs->kernels_why)
		printf("note: fitted because %s; octopipe cost makes a model from its architecture\n", rs->kernels_why);
	if (rs->not_run)
		printf("note: %s: the prediction above leaves these collectives out; with them the plan predicts %.2f ms\n",
		       rs->not_run, rs->with_collectives);
	if (rs->m.dp_sync_ms > 0)
		printf("note: the data-parallel sync (%.2f ms exposed in octopipe sim) is not run by this executor,\n"
		       "which runs one replica: the prediction above leaves it out\n", rs->m.dp_sync_ms);
	if (rs->p.comm == PLAN_COMM_BLOCKING)
		printf("note: the plan's transfers block as in Megatron-LM's 1F1B; this executor overlaps them,\n"
		       "and so does the prediction above (octopipe sim shows the blocking one)\n");
	if (rb->gpu_count && rs->state && rb->gpu_count(rs->state) < rs->meas.ndevices)
		printf("note: %d devices on %d GPU%s: devices that share a GPU run at once and slow each other, so\n"
		       "these times test the protocol (every op ran once, in order, after its inputs), not the\n"
		       "prediction\n", rs->meas.ndevices, rb->gpu_count(rs->state), rb->gpu_count(rs->state) == 1 ? "" : "s");
}

/* The per-device table: predicted against measured, and on GPUs what NVML says. */
static void print_devices(const struct run_state *rs)
{
	const struct run_backend *rb = rs->rb;

	printf("%4s %14s %14s %8s%s\n", "GPU", "PREDICTED ms", "MEASURED ms", "ERROR",
	       rb->gpus ? "   UTIL        MEM  NAME" : "");
	for (int d = 0; d < rs->meas.ndevices; d++) {
		double pe = end_of(&rs->pred.dev[d]), me = end_of(&rs->meas.dev[d]);

		printf("%4d %14.2f %14.2f %+7.2f%%", d, pe, me, 100 * prediction_error(pe, me));
		if (rb->gpus && rs->state) {
			double u;
			uint64_t mem;
			const char *name = "?";
			int gpu = rb->gpu_of ? rb->gpu_of(rs->state, d, &name) : -1;

			if (rb->util && rb->util(rs->state, d, &u, &mem))
				printf(" %5.0f%% %7.1f GB", 100 * u, mem / 1e9);
			else
				printf(" %6s %10s", "N/A", "N/A");
			printf("  %d:%s", gpu, name);
		}
		printf("\n");
	}
}

/* A fault to inject that the program has no place for (a device, an op or a transfer it
 * does not have) is bad input: the run would pass without injecting anything. */
static int check_faults(const struct emu_opts *o, const struct exec_program *x, int nstages, struct err *e)
{
	if (o->slow_stage >= nstages)
		return err_set(e, ERR_INPUT, "--emu-slowdown: no stage %d (the plan has %d)", o->slow_stage, nstages);
	if (o->kill_device >= x->ndevices)
		return err_set(e, ERR_INPUT, "--kill-device: no device %d (the plan has %d)", o->kill_device, x->ndevices);
	if (o->kill_device < 0 && o->kill_after_ops > 0)
		return err_set(e, ERR_INPUT, "--kill-after: needs --kill-device");
	if (o->kill_device >= 0) {
		int ops = 0;

		for (int i = x->start[o->kill_device]; i < x->start[o->kill_device + 1]; i++)
			ops += x->items[i].kind == EXEC_COMPUTE;
		if (o->kill_after_ops >= ops)
			return err_set(e, ERR_INPUT, "--kill-after: device %d runs %d ops, so it can fail after 0 to %d of them",
			               o->kill_device, ops, ops - 1);
	}
	if (o->misroute_xfer >= x->nxfers)
		return err_set(e, ERR_INPUT, "--misroute-xfer: no transfer %d (the run has %d)", o->misroute_xfer, x->nxfers);
	if (o->corrupt_xfer >= x->nxfers)
		return err_set(e, ERR_INPUT, "--corrupt-xfer: no transfer %d (the run has %d)", o->corrupt_xfer, x->nxfers);
	return 0;
}

/* Stops the other ranks with rs->e and prints it as the one error line: its exit code. */
static int fail(struct run_state *rs)
{
	stop_ranks(rs->rb, rs->mpi, &rs->e);
	return cli_report(&rs->e);
}

/* As fail(), for an error about this command's own output: "octopipe run: " first. */
static int fail_output(struct run_state *rs)
{
	stop_ranks(rs->rb, rs->mpi, &rs->e);
	cli_err("octopipe run: %s\n", rs->e.msg);
	return rs->e.cls == ERR_INPUT ? EXIT_INPUT : EXIT_RUNTIME;
}

/* Phase 1: loads the plan, picks the kernels and simulates it as this executor runs it
 * (every transfer overlapped with compute, whatever runtime the plan was written for). */
static int predict(struct run_state *rs)
{
	struct sim_opts so;
	int r, rc;

	if (plan_load(&rs->p, rs->path, &rs->e) < 0)
		return fail(rs);
	rs->have_plan = true;
	if (!rs->kernels) {
		/* the backend runs kernels: the layers' architecture, or fitted proxies */
		if (kplan_choose(&rs->p, rs->ro->fit || rs->ro->gemm_tflops > 0, &rs->mode, &rs->works, &rs->ko,
		                 &rs->kernels_why, &rs->e) < 0)
			return fail(rs);
		rs->kernels = kplan_mode_name(rs->mode);
		rs->not_run = kplan_not_run(&rs->p, rs->works, &rs->ko);
	}
	sim_opts_default(&so);
	so.record = true;
	so.comm = SIM_COMM_OVERLAP;
	r = sim_run(&rs->s, &rs->p, &so, &rs->m, &rs->e);
	if (r == 0 && rs->not_run) {
		/* the kernels leave the TP / EP collectives (and ZeRO 3's gathers) out: what the run
		 * is compared with is the plan priced without them; the plan's own is kept beside it */
		bool changed = false;

		rs->with_collectives = rs->m.makespan_ms - rs->m.dp_sync_ms;
		metrics_release(&rs->m);
		sim_release(&rs->s);
		if (plan_drop_collectives(&rs->p, &changed, &rs->e) < 0)
			return fail(rs);
		if (!changed) {
			rs->with_collectives = -1;
			rs->not_run = NULL;
		}
		r = sim_run(&rs->s, &rs->p, &so, &rs->m, &rs->e);
	}
	if (r < 0) {
		rc = rs->e.cls == ERR_INFEASIBLE ? EXIT_INFEASIBLE : EXIT_RUNTIME;
		err_prefix(&rs->e, "plan infeasible");
		err_prefix(&rs->e, rs->path);
		stop_ranks(rs->rb, rs->mpi, &rs->e);
		cli_err("%s\n", rs->e.msg);
		return rc;
	}
	return EXIT_OK;
}

/* Phase 2: refuses a plan out of device memory (unless --force), builds every worker's
 * program from the simulated timeline, repairs its receive order and checks the faults
 * to inject have a place in it. */
static int prepare(struct run_state *rs)
{
	const struct emu_opts *eo = &rs->eo;

	/* a collective waits for the slowest rank's iteration: the watchdog plus ten predicted
	 * iterations at the pace the run keeps; on GPUs a minute more, for the slowest rank's
	 * setup (driver, communicators, fitting the proxies) */
	if (rs->mpi)
		run_ranks_deadline(eo->timeout_s + 10 * rs->m.makespan_ms * (rs->rb->gpus ? 1 : eo->time_scale) / 1000 +
		                   (rs->rb->gpus ? 60 : 0));
	if (rs->m.noom && !rs->ro->force) {
		struct strbuf sb = STRBUF_INIT;

		cli_oom_line(&sb, rs->path, &rs->p, &rs->m);
		strbuf_addstr(&sb, " (--force runs it anyway)");
		err_set(&rs->e, ERR_INFEASIBLE, "%s", sb.buf);
		strbuf_release(&sb);
		stop_ranks(rs->rb, rs->mpi, &rs->e);
		cli_err("%s\n", rs->e.msg);
		return EXIT_INFEASIBLE;
	}
	if (sim_timeline(&rs->s, &rs->p, &rs->m, &rs->pred, &rs->e) < 0)
		return fail(rs);
	rs->have_pred = true;
	if (exec_build(&rs->p, &rs->pred, &rs->x, &rs->e) < 0)
		return fail(rs);
	rs->have_x = true;
	if (exec_check(&rs->x, &rs->e) > 0) {
		if (rs->rank == 0)
			cli_err("%s: %s; repairing\n", rs->path, rs->e.msg);
		rs->repaired = exec_repair(&rs->x);
	}
	if (exec_check(&rs->x, &rs->e) > 0 || exec_validate(&rs->x, &rs->e) < 0 ||
	    check_faults(eo, &rs->x, rs->p.nstages, &rs->e) < 0) {
		err_prefix(&rs->e, rs->path);
		return fail(rs);
	}
	return EXIT_OK;
}

/* Phase 3: checks the timeline can be written, opens the events stream and the backend,
 * and says "start". */
static int start(struct run_state *rs)
{
	const struct run_opts *ro = rs->ro;
	const struct run_backend *rb = rs->rb;

	/* the timeline is written after the run: an output that cannot be written is refused
	 * now, not after minutes of GPU time */
	if (ro->tl_out && strcmp(ro->tl_out, "-") != 0 && rs->rank == 0 && fileio_check_writable(ro->tl_out, &rs->e) < 0)
		return fail_output(rs);
	if (ro->events_out && rs->rank == 0) {
		rs->ev.path = ro->events_out;
		rs->ev.f = strcmp(ro->events_out, "-") == 0 ? stdout : fileio_open_stream(ro->events_out, &rs->e);
		if (!rs->ev.f)
			return fail_output(rs);
	}
	if (rb->open) {
		struct run_backend_opts bo = { .eo = rs->eo, .timeout_s = rs->eo.timeout_s, .gemm_tflops = ro->gemm_tflops,
		                               .works = rs->works, .kernel_opts = rs->ko, .share_gpus = ro->share_gpus,
		                               .rank = rs->mpi ? rs->rank : -1 };

		/* on GPUs a wait covers a whole iteration: the watchdog plus ten predicted ones */
		if (rb->gpus)
			bo.timeout_s = rs->eo.timeout_s + 10 * rs->m.makespan_ms / 1000;
		if (rb->open(&rs->state, &rs->p, &rs->x, &bo, &rs->e) < 0) {
			cli_err("octopipe run: %s\n", rs->e.msg);
			return rs->e.cls == ERR_INPUT ? EXIT_INPUT : EXIT_RUNTIME;
		}
	}
	if (rs->ev.f) {
		/* one replica: no data-parallel sync */
		run_events_start(&rs->ev, rs->path, rb->name, rs->kernels, rs->kernels_why, rs->p.ndevices, ro->iters,
		                 rs->m.makespan_ms - rs->m.dp_sync_ms, rs->with_collectives);
		rs->eo.on_op = run_events_on_op;
		rs->eo.ctx = &rs->ev;
	}
	return EXIT_OK;
}

/* Phase 4: runs the iterations, checks each kept the plan's rules and streams its events;
 * rs->meas keeps the last. */
static int iterate(struct run_state *rs)
{
	const struct run_backend *rb = rs->rb;
	struct run_events *ev = &rs->ev;
	int rc = EXIT_OK;

	for (int it = 0; it < rs->ro->iters; it++) {
		struct timeline t;

		ev->iter = it;
		rs->eo.iter = it;
		if (rb->run(rs->state, &rs->p, &rs->x, &rs->eo, &t, &rs->e) < 0) {
			if (ev->err == ETIMEDOUT)
				/* the stalled event reader held the workers up past their watchdog: the
				 * line run_events_close prints is the cause, the watchdog's blame is not */
				return EXIT_RUNTIME;
			if (ev->f)
				run_events_error(ev, rs->e.msg);
			cli_err("%s: run failed: %s\n", rs->path, rs->e.msg);
			return rs->e.cls == ERR_INPUT ? EXIT_INPUT : EXIT_RUNTIME;
		}
		/* the run must have kept the plan's rules: every op once, in order, after its inputs
		 * (rank 0 holds the whole timeline; the ranks go on together either way) */
		if (rs->rank == 0 && !rs->broke.msg[0] &&
		    timeline_check_plan(&rs->p, &t, rb->gpus ? TLCHECK_GPU_SLACK_MS : 1e-6, &rs->broke) != 0) {
			if (ev->f)
				run_events_error(ev, rs->broke.msg);
			cli_err("%s: iteration %d broke the plan: %s\n", rs->path, it, rs->broke.msg);
			rc = EXIT_RUNTIME;
		}
		if (ev->f) {
			if (rs->mpi || rb->gpus)
				run_events_replay_ops(ev, &t);
			run_events_xfers(ev, &t);
			run_events_util(ev, &t, rb, rs->state);
			run_events_iter(ev, it, iteration_ms(&t));
		}
		timeline_release(&rs->meas);
		rs->meas = t;
	}
	return rc;
}

/* Phase 5: the last iteration against the prediction: the "done" event, and --json or the
 * summary (unless stdout carries the events or the timeline). */
static int report(struct run_state *rs)
{
	const struct run_opts *ro = rs->ro;
	/* the executor runs one replica's pipeline: no data-parallel sync to predict */
	double predicted = rs->m.makespan_ms - rs->m.dp_sync_ms, measured = iteration_ms(&rs->meas);
	double err = prediction_error(predicted, measured);

	if (rs->ev.f)
		run_events_done(&rs->ev, measured, err);
	if (ro->json)
		return print_json(rs, predicted, measured);
	if (rs->ev.f == stdout || (ro->tl_out && strcmp(ro->tl_out, "-") == 0))
		return EXIT_OK;
	printf("plan %s on %s%s: %d iteration%s, %d transfers%s\n", cli_name(rs->path), rs->rb->name, rs->mpi ? " over MPI" : "",
	       ro->iters, ro->iters == 1 ? "" : "s", rs->x.nxfers, rs->repaired ? " (receives repaired)" : "");
	printf("iteration: predicted %.2f ms, measured %.2f ms, error %+.2f%%\n", predicted, measured, 100 * err);
	print_notes(rs);
	printf("\n");
	print_devices(rs);
	return EXIT_OK;
}

/* Phase 6: the measured timeline of the last iteration, naming its plan (as seen from the
 * file, for octopipe calibrate) and what the run left out. rc is the run's so far. */
static int write_timeline(struct run_state *rs, int rc)
{
	const char *tl_out = rs->ro->tl_out;
	cJSON *root;
	struct strbuf sb = STRBUF_INIT;
	char dir[4096], rel[4096];

	fileio_dirname(tl_out, dir, sizeof(dir));
	if (strcmp(tl_out, "-") != 0 && fileio_relative(dir, rs->path, rel, sizeof(rel)) == 0)
		rs->meas.plan_ref = strdup(rel);
	/* so that calibrate compares it with the same prediction */
	if (rs->not_run && (!(rs->meas.extra = cJSON_CreateObject()) ||
	                    !cJSON_AddStringToObject(rs->meas.extra, "not_run", rs->not_run))) {
		cli_err("octopipe run: out of host memory\n");
		rc = EXIT_RUNTIME;
	}
	root = rc == EXIT_OK ? timeline_to_json(&rs->meas) : NULL;
	if (root) {
		json_write(&sb, root);
		rc = cli_write_text(tl_out, sb.buf, sb.len);
		cJSON_Delete(root);
	}
	strbuf_release(&sb);
	return rc;
}

/* Lets go of what the phases made; a failure to write the events turns success into
 * EXIT_RUNTIME. Returns the exit code. */
static int run_release(struct run_state *rs, int rc)
{
	timeline_release(&rs->meas);
	if (run_events_close(&rs->ev) < 0 && rc == EXIT_OK)
		rc = EXIT_RUNTIME;
	if (rs->rb->close && rs->state)
		rs->rb->close(rs->state);
	if (rs->have_x)
		exec_release(&rs->x);
	if (rs->have_pred)
		timeline_release(&rs->pred);
	free(rs->works);
	metrics_release(&rs->m);
	sim_release(&rs->s);
	if (rs->have_plan)
		plan_release(&rs->p);
	return rc;
}

static int execute(const char *arg, const struct run_opts *ro, const struct run_backend *rb, int rank, bool mpi)
{
	struct run_state rs;
	int rc;

	memset(&rs, 0, sizeof(rs));
	rs.ro = ro;
	rs.rb = rb;
	rs.rank = rank;
	rs.mpi = mpi;
	rs.eo = ro->eo;
	rs.ev.timeout_s = ro->eo.timeout_s;
	rs.kernels = rb->kernels;
	rs.mode = KPLAN_FITTED;
	rs.with_collectives = -1;
	rs.e = (struct err)ERR_INIT;
	rs.broke = (struct err)ERR_INIT;
	rs.path = cli_resolve(arg, "plans");
	if ((rc = predict(&rs)) == EXIT_OK && (rc = prepare(&rs)) == EXIT_OK && (rc = start(&rs)) == EXIT_OK &&
	    (rc = iterate(&rs)) == EXIT_OK) {
		rc = report(&rs);
		if (ro->tl_out && rank == 0)
			rc = write_timeline(&rs, rc);
	}
	return run_release(&rs, rc);
}
