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
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli/cli_args.h"
#include "cli/run_args.h"
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

	if ((rc = run_parse_options(argc, argv, &ra, &a)) != CLI_ARGS_GO)
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
		/* a reader that goes away is a failed write (EPIPE: said, exit 1), not a silent
		 * death by SIGPIPE that leaves no word and no timeline */
		signal(SIGPIPE, SIG_IGN);
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
		if (ev->err && !rs->mpi)
			return EXIT_RUNTIME; /* the events cannot be written: no more iterations (MPI
			                      * ranks go on together; run_release says why) */
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

	bool ev_stdout = rs->ev.f == stdout;

	if (rs->ev.f) {
		run_events_done(&rs->ev, measured, err);
		if (run_events_close(&rs->ev) < 0)
			return EXIT_RUNTIME; /* no summary of a run whose events were lost */
	}
	if (ro->json)
		return print_json(rs, predicted, measured);
	if (ev_stdout || (ro->tl_out && strcmp(ro->tl_out, "-") == 0))
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
	bool unnamed = false;

	fileio_dirname(tl_out, dir, sizeof(dir));
	if (strcmp(tl_out, "-") != 0 && fileio_relative(dir, rs->path, rel, sizeof(rel)) == 0) {
		unnamed = !timeline_plan_ref_ok(rel);
		if (!unnamed)
			rs->meas.plan_ref = strdup(rel);
	}
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
	if (rc == EXIT_OK && unnamed)
		cli_err("octopipe run: %s names no plan: JSON cannot hold the name '%s' (not UTF-8, or a control "
		        "character): give calibrate --plan\n", tl_out, rs->path);
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
