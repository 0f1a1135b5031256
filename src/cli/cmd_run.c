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
 * picked, whatever the build holds.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>
#include <poll.h>
#include <unistd.h>

#include "cli.h"
#include "cli/run_backend.h"
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
	      "                    [--timeout S] [--events-out FILE] [--timeline-out FILE] [--json]\n"
	      "                    [--force] PLAN\n"
	      "       octopipe run --backend cuda --dry-run [--fit] [--json] PLAN\n"
	      "\n"
	      "Runs PLAN on the executor. Every device's worker runs its op list in order, sends\n"
	      "each output as soon as it exists and posts each receive early; the i-th transfer\n"
	      "between two devices is checked to match on both sides (and repaired by moving\n"
	      "receives). Prints the measured iteration time against the simulated one.\n"
	      "\n"
	      "  --backend emu      threads emulating the devices and NCCL's send/recv (default)\n"
	      "  --backend cuda     one thread per GPU: each op runs its layers' kernels from the\n"
	      "                     model's architecture (a model made by octopipe cost), measured\n"
	      "                     as they are; NCCL send/recv of the real activation sizes\n"
	      "  --fit              cuda: fitted proxies instead: a GEMM per op of the stage's\n"
	      "                     activation shape, fitted to the op's predicted time (a test of\n"
	      "                     the protocol; a model without an architecture always runs these)\n"
	      "  --gemm-tflops X    cuda: fitted proxies (implies --fit) sized for this throughput\n"
	      "                     (default: each is timed on the GPU and fitted to its op's time)\n"
	      "  --share-gpus       cuda: run a plan of more devices than there are GPUs, device d\n"
	      "                     on GPU d mod N (devices sharing a GPU run at once: this tests\n"
	      "                     the plan's protocol, its times are not the prediction's)\n"
	      "  --iters N          iterations to run (default 1)\n"
	      "  --time-scale X     wall ms per model ms for the emulator (default 0: no sleeping)\n"
	      "  --timeout S        watchdog: the longest any wait may take (default 10 s)\n"
	      "  --force            run a plan that the simulator finds out of device memory\n"
	      "  --dry-run          with --backend cuda: list the kernels every op would launch,\n"
	      "                     with shapes, FLOPs and bytes (no GPU needed; --json: also each\n"
	      "                     op's \"launches\" and the \"charged_launches\" its prediction\n"
	      "                     charges, equal but for fused attention cores)\n"
	      "  --mpi              one MPI rank per device (automatic under mpirun/srun;\n"
	      "                     needs a build --with-mpi)\n"
	      "  --events-out FILE  octopipe.events/1 JSON lines (\"-\" for stdout)\n"
	      "  --timeline-out F   the measured timeline of the last iteration\n"
	      "  --json             {\"predicted_ms\", \"measured_ms\", \"error\", \"kernels\", \"devices\": [...]}\n"
	      "                     (and \"kernels_note\": why a model's ops run fitted proxies unasked;\n"
	      "                     \"not_run\": what the plan prices that the kernels do not run,\n"
	      "                     and \"predicted_with_collectives_ms\": the plan's own prediction)\n"
	      "\n"
	      "error is the prediction's: (predicted - measured) / measured, as in octopipe calibrate.\n"
	      "predicted is what this run's ops were expected to take: with --backend cuda, kernels\n"
	      "from the architecture and tp > 1 (or ep > 1, or ZeRO 3), one GPU runs each pipeline\n"
	      "rank's share of the kernels without the tensor-parallel all-reduces, the all-to-all\n"
	      "and ZeRO 3's weight gathers, so predicted is the plan priced without those\n"
	      "collectives (the dry run's per-op times too), and\n"
	      "predicted_with_collectives is the plan's own (octopipe sim's, less the data-parallel\n"
	      "sync this executor does not run either).\n"
	      "kernels says what the ops ran: \"emulated\" (the model's times on a virtual clock),\n"
	      "\"architecture\" (cuda: the layers' kernels, timed as they run: a test of the cost\n"
	      "model) or \"fitted\" (cuda proxies fitted to the predicted times: a test of the\n"
	      "protocol and the clocks, not of the cost model). The start event, the summary and\n"
	      "the dry run say it too.\n"
	      "\n"
	      "exit status: 0 ok, 1 a worker failed (named, with the reason), 2 bad input,\n"
	      "3 the plan cannot run (deadlock or out of device memory in simulation)\n", f);
}

/* The octopipe.events/1 stream: one JSON object per line, built with cJSON. A failed
 * write (full disk, closed pipe) is remembered and reported once the run ends. */
struct events {
	FILE *f;
	const char *path;  /* as the user named it ("-" for stdout) */
	int iter;
	int err;           /* errno of the first failed write, ENOMEM when a line could not be built,
	                    * ETIMEDOUT when the reader stopped reading */
	double timeout_s;  /* the longest a write may wait for its reader (the watchdog's) */
};

/* Microsecond resolution keeps lines short; nothing measured here is finer. */
static double usec(double ms)
{
	return round(ms * 1e6) / 1e6;
}

/* A new event object of kind ev with its iteration (iter < 0: none); w collects failures. */
static cJSON *event_new(struct jw *w, const char *kind, int iter)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		w->oom = true;
	jw_str(w, o, "ev", kind);
	if (iter >= 0)
		jw_num(w, o, "iter", iter);
	return o;
}

/* Writes o as one line and frees it. */
/* Writes all of buf to fd, never waiting more than timeout_s for room: a reader that
 * stopped reading (a stalled TUI, a stopped pipe) must not hang the run. poll() says when
 * a pipe has room for PIPE_BUF bytes, so no write of at most that many blocks. 0, or -1
 * with errno (ETIMEDOUT: no room within timeout_s). */
static int write_within(int fd, const char *buf, size_t n, double timeout_s)
{
	while (n > 0) {
		struct pollfd pf = { fd, POLLOUT, 0 };
		int r = poll(&pf, 1, (int)ceil(timeout_s * 1000));
		ssize_t got;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		got = write(fd, buf, n < PIPE_BUF ? n : PIPE_BUF);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		buf += got;
		n -= (size_t)got;
	}
	return 0;
}

static void event_emit(struct events *ev, cJSON *o, const struct jw *w)
{
	char *line = (o && !w->oom) ? cJSON_PrintUnformatted(o) : NULL;
	size_t n;

	cJSON_Delete(o);
	if (ev->err)
		goto out;
	if (!line) {
		ev->err = ENOMEM;
		goto out;
	}
	/* one line, one write, past whatever stdio holds (stdout may carry other output) */
	n = strlen(line);
	line[n] = '\n';
	errno = 0;
	if (fflush(ev->f) != 0 || write_within(fileno(ev->f), line, n + 1, ev->timeout_s) < 0)
		ev->err = errno ? errno : EIO;
	line[n] = 0;
out:
	free(line);
}

/* Flushes and closes the stream (not stdout, which main closes); reports the first failure
 * as one line and returns -1. */
static int events_close(struct events *ev)
{
	if (!ev->f)
		return 0;
	errno = 0;
	if (fflush(ev->f) != 0 && !ev->err)
		ev->err = errno ? errno : EIO;
	if (ev->f != stdout && fclose(ev->f) != 0 && !ev->err)
		ev->err = errno ? errno : EIO;
	ev->f = NULL;
	if (!ev->err)
		return 0;
	if (ev->err == ETIMEDOUT)
		cli_err("octopipe run: cannot write the events to '%s': its reader stopped reading (no room for %g s)\n",
		        ev->path, ev->timeout_s);
	else
		cli_err("octopipe run: cannot write the events to '%s': %s\n", ev->path, strerror(ev->err));
	return -1;
}

static void on_op(void *ctx, int dev, const struct action *a, double t0, double t1)
{
	struct events *ev = ctx;
	struct jw w = { false };
	cJSON *o = event_new(&w, "op", ev->iter);
	char kind[2] = { op_kind_char((enum op_kind)a->kind), 0 };

	jw_num(&w, o, "dev", dev);
	jw_str(&w, o, "op", kind);
	jw_num(&w, o, "stage", a->stage);
	jw_num(&w, o, "mb", a->mb);
	jw_num(&w, o, "t0_ms", usec(t0));
	jw_num(&w, o, "t1_ms", usec(t1));
	event_emit(ev, o, &w);
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

/* The backend of a run and what it opened. */
struct backend {
	const struct run_backend *b;
	void *state;
};

static int execute(const char *arg, const struct run_opts *ro, const struct run_backend *rb, int rank, bool mpi);

/* Ranks in the job when a launcher started this process (Open MPI, PMI, PMIx; 0 when
 * none did); *rank gets this process's rank. */
static int launched_ranks(int *rank)
{
	static const char *const size_vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", NULL };
	static const char *const rank_vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", NULL };
	const char *v;

	*rank = 0;
	for (int i = 0; rank_vars[i]; i++)
		if ((v = getenv(rank_vars[i])) != NULL) {
			*rank = atoi(v);
			break;
		}
	for (int i = 0; size_vars[i]; i++)
		if ((v = getenv(size_vars[i])) != NULL)
			return atoi(v);
	return getenv("PMIX_RANK") ? 1 : 0;
}

/* As a rank that cannot go on before the backend opened: meets the other ranks' first
 * agreement where the backend needs it, so that all of them stop (e becomes the first
 * failing rank's message). */
static void stop_ranks(const struct run_backend *rb, bool mpi, struct err *e)
{
	if (mpi && rb->fail_ranks)
		rb->fail_ranks(e);
}

/* Per device after an iteration: the measured busy fraction and, on GPUs, what NVML says
 * (null when it cannot: no NVML, or not a GPU run). */
static void util_events(const struct timeline *t, const struct backend *be, struct events *ev)
{
	double it = 0;

	for (int d = 0; d < t->ndevices; d++)
		for (int i = 0; i < t->dev[d].nops; i++)
			it = fmax(it, t->dev[d].ops[i].end_ms);
	for (int d = 0; d < t->ndevices; d++) {
		double busy = 0, util = 0;
		uint64_t mem = 0;
		bool have = false;
		struct jw w;
		cJSON *o;

		for (int i = 0; i < t->dev[d].nops; i++)
			busy += t->dev[d].ops[i].end_ms - t->dev[d].ops[i].start_ms;
		have = be->b->util && be->state && be->b->util(be->state, d, &util, &mem);
		w = (struct jw){ false };
		o = event_new(&w, "util", ev->iter);
		jw_num(&w, o, "dev", d);
		jw_num(&w, o, "busy", round((it > 0 ? busy / it : 0) * 1e4) / 1e4);
		if (have) {
			jw_num(&w, o, "gpu_util", round(util * 100) / 100);
			jw_num(&w, o, "mem_bytes", (double)mem);
		} else {
			jw_null(&w, o, "gpu_util");
			jw_null(&w, o, "mem_bytes");
		}
		event_emit(ev, o, &w);
	}
}

/* The transfers of an iteration, once it is done (their times come from both ends). */
static void xfer_events(const struct timeline *t, struct events *ev)
{
	for (long k = 0; k < t->nxfers; k++) {
		const struct tl_xfer *x = &t->xfers[k];

		struct jw w = { false };
		cJSON *o = event_new(&w, "xfer", ev->iter);

		jw_num(&w, o, "src", x->src);
		jw_num(&w, o, "dst", x->dst);
		jw_num(&w, o, "stage", x->stage);
		jw_num(&w, o, "mb", x->mb);
		jw_str(&w, o, "kind", x->kind == XFER_ACT ? "act" : "grad");
		jw_num(&w, o, "t0_ms", usec(x->start_ms));
		jw_num(&w, o, "t1_ms", usec(x->end_ms));
		jw_num(&w, o, "bytes", (double)x->bytes);
		event_emit(ev, o, &w);
	}
}

/* An error event; "dev" names the device (or rank) the message starts with, else null. */
static void error_event(struct events *ev, const char *msg)
{
	static const char *const who[] = { "rank ", "device ", "worker ", NULL };
	struct jw w = { false };
	cJSON *o = event_new(&w, "error", -1);
	int dev = -1;

	for (int i = 0; who[i] && dev < 0; i++) {
		size_t n = strlen(who[i]);

		if (strncmp(msg, who[i], n) == 0 && msg[n] >= '0' && msg[n] <= '9')
			dev = atoi(msg + n);
	}
	if (dev >= 0)
		jw_num(&w, o, "dev", dev);
	else
		jw_null(&w, o, "dev");
	jw_str(&w, o, "msg", msg);
	event_emit(ev, o, &w);
}

/* Under MPI the ops are known only once rank 0 gathered them: stream them then. */
static void replay_ops(const struct timeline *t, struct events *ev)
{
	for (int d = 0; d < t->ndevices; d++)
		for (int i = 0; i < t->dev[d].nops; i++) {
			const struct tl_op *o = &t->dev[d].ops[i];
			struct action a = { o->stage, o->mb, o->kind, 0 };

			on_op(ev, d, &a, o->start_ms, o->end_ms);
		}
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
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
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *backend = "emu", *events_out = NULL, *tl_out = NULL;
	struct emu_opts eo;
	struct run_opts ro;
	bool json = false, want_mpi = false, share_gpus = false, force = false, dry_run = false, fit = false, as_ranks;
	int iters = 1, ch, rank = 0, nranks, rc;
	double gemm_tflops = 0;
	const struct run_backend *rb;
	const char *why = "";
	struct err e = ERR_INIT;

	emu_opts_default(&eo);
	optind = 0;
	while ((ch = cli_getopt("run", argc, argv, "jh", opts)) != -1) {
		switch (ch) {
		case 'b': backend = optarg; break;
		case 'i': if ((iters = cli_positive("run", "--iters", optarg)) < 0) return EXIT_INPUT; break;
		case 's':
			if (cli_number("run", "--time-scale", optarg, 0, 100, false, &eo.time_scale) < 0)
				return EXIT_INPUT;
			break;
		case 't':
			if (cli_number("run", "--timeout", optarg, 0, 86400, true, &eo.timeout_s) < 0)
				return EXIT_INPUT;
			break;
		case 'E': events_out = optarg; break;
		case 'T': tl_out = optarg; break;
		case 'K':
			if ((eo.kill_device = cli_int("run", "--kill-device", optarg, 0, 65535)) < 0)
				return EXIT_INPUT;
			break;
		case 'A':
			if ((eo.kill_after_ops = cli_int("run", "--kill-after", optarg, 0, 1000000000)) < 0)
				return EXIT_INPUT;
			break;
		case 'H':
			/* hidden: how the killed worker fails (a test of the failure paths) */
			if (strcmp(optarg, "die") == 0)
				eo.kill_how = EMU_KILL_FAIL;
			else if (strcmp(optarg, "hang") == 0)
				eo.kill_how = EMU_KILL_HANG;
			else if (strcmp(optarg, "crash") == 0)
				eo.kill_how = EMU_KILL_CRASH;
			else
				return cli_usage_error("run", "--kill-how: '%s' is not die, hang or crash", optarg);
			break;
		case 'R':
			/* hidden: transfer K carries another microbatch's data (the receiver must notice) */
			if ((eo.misroute_xfer = cli_int("run", "--misroute-xfer", optarg, 0, 1000000000)) < 0)
				return EXIT_INPUT;
			break;
		case 'C':
			/* hidden: one byte of transfer K flips on the way */
			if ((eo.corrupt_xfer = cli_int("run", "--corrupt-xfer", optarg, 0, 1000000000)) < 0)
				return EXIT_INPUT;
			break;
		case 'S':
			/* hidden: STAGE:FACTOR makes one stage slower than its model says (calibration tests) */
			if (sscanf(optarg, "%d:%lf", &eo.slow_stage, &eo.slow_factor) != 2 || eo.slow_stage < 0 ||
			    !(eo.slow_factor > 0 && eo.slow_factor <= 1000))
				return cli_usage_error("run", "--emu-slowdown: '%s' is not STAGE:FACTOR", optarg);
			break;
		case 'M': want_mpi = true; break;
		case 'G':
			if (cli_number("run", "--gemm-tflops", optarg, 0, 1e6, true, &gemm_tflops) < 0)
				return EXIT_INPUT;
			break;
		case 'g': share_gpus = true; break;
		case 'f': force = true; break;
		case 'F': fit = true; break;
		case 'D': dry_run = true; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return EXIT_OK;
		default: return EXIT_INPUT;
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("run", optind >= argc ? "no plan given" : "one plan at a time");
	{
		const char *names[] = { "--json", "--events-out -", "--timeline-out -" };
		const char *outs[] = { json ? "-" : NULL, events_out, tl_out };

		if (cli_one_stdout("run", names, outs, 3) != EXIT_OK)
			return EXIT_INPUT;
	}
	if (dry_run) {
		/* it runs nothing: an option about running would be silently ignored */
		const char *idle = events_out ? "--events-out" : tl_out ? "--timeline-out" : iters != 1 ? "--iters"
		                   : eo.kill_device >= 0 || eo.kill_after_ops > 0 ? "--kill-device"
		                   : eo.misroute_xfer >= 0 ? "--misroute-xfer" : eo.corrupt_xfer >= 0 ? "--corrupt-xfer"
		                   : share_gpus ? "--share-gpus" : NULL;

		if (idle)
			return cli_usage_error("run", "--dry-run runs nothing, so %s would do nothing", idle);
	}
	if (dry_run) {
		/* the kernel plan needs no GPU and no CUDA library: octopipe lists it itself */
		if (strcmp(backend, "cuda") != 0)
			return cli_usage_error("run", "--dry-run lists the cuda backend's kernels (--backend cuda)");
		return run_dry(argv[optind], json, gemm_tflops, fit || gemm_tflops > 0);
	}
	nranks = launched_ranks(&rank);
	as_ranks = want_mpi || nranks > (run_ranks_built() ? 0 : 1);
	if (as_ranks && !run_ranks_built()) {
		if (rank == 0)
			cli_err("octopipe run: %s, but this octopipe was built without MPI (configure --with-mpi)\n",
			        want_mpi ? "--mpi was given" : "launched as several MPI ranks");
		return EXIT_INPUT;
	}
	if (!(rb = run_backend_find(backend, as_ranks, &why))) {
		if (strcmp(why, "unknown backend") == 0)
			return cli_usage_error("run", "unknown backend '%s' (emu or cuda)", backend);
		cli_err("octopipe run: %s\n", why);
		return EXIT_RUNTIME;
	}
	if (rb->hand_over)   /* the backend lives in another program: it checks the rest */
		return rb->hand_over(argc, argv);
	ro = (struct run_opts){ eo, events_out, tl_out, iters, json, gemm_tflops, share_gpus, force, fit };
	if (share_gpus && !rb->gpus)
		return cli_usage_error("run", "--share-gpus is for the cuda backend");
	if ((fit || gemm_tflops > 0) && !rb->gpus)
		return cli_usage_error("run", "%s is for the cuda backend (the emulator's ops take the model's times)",
		                       fit ? "--fit" : "--gemm-tflops");
	if (eo.kill_how != EMU_KILL_FAIL && rb->gpus)
		return cli_usage_error("run", "--kill-how %s is for the emu backend",
		                       eo.kill_how == EMU_KILL_HANG ? "hang" : "crash");
	if (eo.kill_how == EMU_KILL_CRASH && !as_ranks)
		return cli_usage_error("run", "--kill-how crash is for MPI ranks (it would end this whole process)");
	if (rb->gpus && share_gpus && as_ranks) {
		/* rank 0 says it and fails the job; the others leave quietly and successfully, so
		 * that mpirun does not kill rank 0 before its line is out */
		if (rank != 0)
			return EXIT_OK;
		return cli_usage_error("run", "--share-gpus is for one process; as MPI ranks, ranks that share a GPU "
		                       "already pass their data through it");
	}
	if (!as_ranks)
		return execute(argv[optind], &ro, rb, 0, false);
	if (run_ranks_init(&rank, &nranks, &e) < 0)
		return cli_report(&e);
	run_ranks_deadline(eo.timeout_s);
	rc = execute(argv[optind], &ro, rb, rank, true);
	run_ranks_finalize();
	return rc;
}

/* run --json: the iteration and each device, predicted against measured. */
static int print_json(double predicted, double with_collectives, const struct timeline *pred,
                      const struct timeline *meas, double measured, int repaired, const struct run_backend *rb,
                      const char *kernels, const char *kernels_why, const char *not_run)
{
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *devs;
	char *text;

	if (!root)
		w.oom = true;
	jw_num(&w, root, "predicted_ms", usec(predicted));
	if (with_collectives >= 0)
		jw_num(&w, root, "predicted_with_collectives_ms", usec(with_collectives));
	jw_num(&w, root, "measured_ms", usec(measured));
	jw_num(&w, root, "error", usec(prediction_error(predicted, measured)));
	jw_num(&w, root, "repaired_receives", repaired);
	jw_str(&w, root, "backend", rb->name);
	jw_str(&w, root, "kernels", kernels);
	if (kernels_why)
		jw_str(&w, root, "kernels_note", kernels_why);
	if (not_run)
		jw_str(&w, root, "not_run", not_run);
	devs = jw_arr(&w, root, "devices");
	for (int d = 0; d < meas->ndevices; d++) {
		double pe = end_of(&pred->dev[d]), me = end_of(&meas->dev[d]);
		cJSON *o = jw_push(&w, devs, cJSON_CreateObject());

		jw_num(&w, o, "id", d);
		jw_num(&w, o, "predicted_ms", usec(pe));
		jw_num(&w, o, "measured_ms", usec(me));
		jw_num(&w, o, "error", usec(prediction_error(pe, me)));
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

/* A fault to inject that the program has no place for (a device, an op or a transfer it
 * does not have) is bad input: the run would pass without injecting anything. */
static int check_faults(const struct emu_opts *o, const struct exec_program *x, struct err *e)
{
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

static int execute(const char *arg, const struct run_opts *ro, const struct run_backend *rb, int rank, bool mpi)
{
	const char *path, *events_out = ro->events_out, *tl_out = ro->tl_out;
	struct emu_opts eo = ro->eo;
	struct events ev = { NULL, NULL, 0, 0, ro->eo.timeout_s };
	bool json = ro->json;
	int iters = ro->iters, rc = EXIT_OK, repaired = 0, r;
	double with_collectives = -1;   /* the plan's prediction, when the run's leaves collectives out */
	struct err e = ERR_INIT, broke = ERR_INIT;
	struct plan p;
	struct sim s;
	struct sim_opts so;
	struct metrics m;
	struct timeline pred, meas;
	struct exec_program x;
	struct backend be = { rb, NULL };
	const char *bname = rb->name, *kernels = rb->kernels, *kernels_why = NULL, *not_run = NULL;
	struct work *works = NULL;
	struct cost_opts ko = { 0 };
	enum kplan_mode mode = KPLAN_FITTED;

	path = cli_resolve(arg, "plans");
	if (plan_load(&p, path, &e) < 0) {
		stop_ranks(rb, mpi, &e);
		return cli_report(&e);
	}
	if (!kernels) {
		/* the backend runs kernels: the layers' architecture, or fitted proxies */
		if (kplan_choose(&p, ro->fit || ro->gemm_tflops > 0, &mode, &works, &ko, &kernels_why, &e) < 0) {
			stop_ranks(rb, mpi, &e);
			plan_release(&p);
			return cli_report(&e);
		}
		kernels = kplan_mode_name(mode);
		not_run = kplan_not_run(&p, works, &ko);
	}
	memset(&s, 0, sizeof(s));
	sim_opts_default(&so);
	so.record = true;
	/* the prediction is of this executor, which overlaps every transfer with compute,
	 * whatever runtime the plan was written for */
	so.comm = SIM_COMM_OVERLAP;
	r = sim_run(&s, &p, &so, &m, &e);
	if (r == 0 && not_run) {
		/* the kernels leave the TP / EP collectives (and ZeRO 3's gathers) out: what the run
		 * is compared with is the plan priced without them; the plan's own is kept beside it */
		bool changed = false;

		with_collectives = m.makespan_ms - m.dp_sync_ms;
		metrics_release(&m);
		sim_release(&s);
		memset(&s, 0, sizeof(s));
		if (plan_drop_collectives(&p, &changed, &e) < 0) {
			stop_ranks(rb, mpi, &e);
			free(works);
			plan_release(&p);
			return cli_report(&e);
		}
		if (!changed) {
			with_collectives = -1;
			not_run = NULL;
		}
		r = sim_run(&s, &p, &so, &m, &e);
	}
	if (r < 0) {
		rc = e.cls == ERR_INFEASIBLE ? EXIT_INFEASIBLE : EXIT_RUNTIME;
		err_prefix(&e, "plan infeasible");
		err_prefix(&e, path);
		stop_ranks(rb, mpi, &e);
		cli_err("%s\n", e.msg);
		metrics_release(&m);
		sim_release(&s);
		free(works);
		plan_release(&p);
		return rc;
	}
	/* a collective waits for the slowest rank's iteration: the watchdog plus ten predicted
	 * iterations at the pace the run keeps; on GPUs a minute more, for the slowest rank's
	 * setup (driver, communicators, fitting the proxies) */
	if (mpi)
		run_ranks_deadline(eo.timeout_s + 10 * m.makespan_ms * (rb->gpus ? 1 : eo.time_scale) / 1000 +
		                   (rb->gpus ? 60 : 0));
	if (m.noom && !ro->force) {
		struct strbuf sb = STRBUF_INIT;

		cli_oom_line(&sb, path, &p, &m);
		strbuf_addstr(&sb, " (--force runs it anyway)");
		err_set(&e, ERR_INFEASIBLE, "%s", sb.buf);
		strbuf_release(&sb);
		stop_ranks(rb, mpi, &e);
		cli_err("%s\n", e.msg);
		rc = EXIT_INFEASIBLE;
		goto out_sim;
	}
	if (sim_timeline(&s, &p, &m, &pred, &e) < 0 || exec_build(&p, &pred, &x, &e) < 0) {
		stop_ranks(rb, mpi, &e);
		rc = cli_report(&e);
		goto out_sim;
	}
	if (exec_check(&x, &e) > 0) {
		if (rank == 0)
			cli_err("%s: %s; repairing\n", path, e.msg);
		repaired = exec_repair(&x);
	}
	if (exec_check(&x, &e) > 0 || exec_validate(&x, &e) < 0) {
		err_prefix(&e, path);
		stop_ranks(rb, mpi, &e);
		rc = cli_report(&e);
		goto out_x;
	}
	if (check_faults(&eo, &x, &e) < 0) {
		err_prefix(&e, path);
		stop_ranks(rb, mpi, &e);
		rc = cli_report(&e);
		goto out_x;
	}
	/* the timeline is written after the run: an output that cannot be written is refused
	 * now, not after minutes of GPU time */
	if (tl_out && strcmp(tl_out, "-") != 0 && rank == 0 && fileio_check_writable(tl_out, &e) < 0) {
		stop_ranks(rb, mpi, &e);
		cli_err("octopipe run: %s\n", e.msg);
		rc = e.cls == ERR_INPUT ? EXIT_INPUT : EXIT_RUNTIME;
		goto out_x;
	}
	if (events_out && rank == 0) {
		ev.path = events_out;
		ev.f = strcmp(events_out, "-") == 0 ? stdout : fileio_open_stream(events_out, &e);
		if (!ev.f) {
			stop_ranks(rb, mpi, &e);
			cli_err("octopipe run: %s\n", e.msg);
			rc = e.cls == ERR_INPUT ? EXIT_INPUT : EXIT_RUNTIME;
			goto out_x;
		}
	}
	if (rb->open) {
		struct run_backend_opts bo = { .eo = eo, .timeout_s = eo.timeout_s, .gemm_tflops = ro->gemm_tflops,
		                               .works = works, .kernel_opts = ko, .share_gpus = ro->share_gpus, .rank = mpi ? rank : -1 };

		/* on GPUs a wait covers a whole iteration: the watchdog plus ten predicted ones */
		if (rb->gpus)
			bo.timeout_s = eo.timeout_s + 10 * m.makespan_ms / 1000;
		if (rb->open(&be.state, &p, &x, &bo, &e) < 0) {
			cli_err("octopipe run: %s\n", e.msg);
			rc = e.cls == ERR_INPUT ? EXIT_INPUT : EXIT_RUNTIME;
			goto out_x;
		}
	}
	if (ev.f) {
		setvbuf(ev.f, NULL, _IOLBF, 0);
		struct jw w = { false };
		cJSON *o = event_new(&w, "start", -1);

		jw_str(&w, o, "plan", path);
		jw_str(&w, o, "backend", bname);
		jw_str(&w, o, "kernels", kernels);
		if (kernels_why)
			jw_str(&w, o, "kernels_note", kernels_why);
		jw_num(&w, o, "devices", p.ndevices);
		jw_num(&w, o, "iters", iters);
		jw_num(&w, o, "predicted_ms", usec(m.makespan_ms - m.dp_sync_ms));  /* one replica: no sync */
		if (with_collectives >= 0)
			jw_num(&w, o, "predicted_with_collectives_ms", usec(with_collectives));
		event_emit(&ev, o, &w);
		eo.on_op = on_op;
		eo.ctx = &ev;
	}
	memset(&meas, 0, sizeof(meas));
	for (int it = 0; it < iters; it++) {
		struct timeline t;

		ev.iter = it;
		eo.iter = it;
		if (rb->run(be.state, &p, &x, &eo, &t, &e) < 0) {
			if (ev.err == ETIMEDOUT) {
				/* the stalled event reader held the workers up past their watchdog: the
				 * line events_close prints is the cause, the watchdog's blame is not */
				rc = EXIT_RUNTIME;
				break;
			}
			if (ev.f)
				error_event(&ev, e.msg);
			cli_err("%s: run failed: %s\n", path, e.msg);
			rc = e.cls == ERR_INPUT ? EXIT_INPUT : EXIT_RUNTIME;
			break;
		}
		/* the run must have kept the plan's rules: every op once, in order, after its inputs
		 * (rank 0 holds the whole timeline; the ranks go on together either way) */
		if (rank == 0 && !broke.msg[0] &&
		    timeline_check_plan(&p, &t, rb->gpus ? TLCHECK_GPU_SLACK_MS : 1e-6, &broke) != 0) {
			if (ev.f)
				error_event(&ev, broke.msg);
			cli_err("%s: iteration %d broke the plan: %s\n", path, it, broke.msg);
			rc = EXIT_RUNTIME;
		}
		if (ev.f && (mpi || rb->gpus))
			replay_ops(&t, &ev);
		if (ev.f)
			xfer_events(&t, &ev);
		if (ev.f)
			util_events(&t, &be, &ev);
		if (ev.f) {
			struct jw w = { false };
			cJSON *o = event_new(&w, "iter", it);
			double ms = 0;

			for (int d = 0; d < t.ndevices; d++)
				ms = fmax(ms, end_of(&t.dev[d]));
			jw_num(&w, o, "ms", usec(ms));
			event_emit(&ev, o, &w);
		}
		timeline_release(&meas);
		meas = t;
	}
	if (rc == EXIT_OK) {
		/* the executor runs one replica's pipeline: no data-parallel sync to predict */
		double measured = 0, err, predicted = m.makespan_ms - m.dp_sync_ms;

		for (int d = 0; d < meas.ndevices; d++)
			measured = fmax(measured, end_of(&meas.dev[d]));
		err = prediction_error(predicted, measured);
		if (ev.f) {
			struct jw w = { false };
			cJSON *o = event_new(&w, "done", -1);

			jw_num(&w, o, "measured_ms", usec(measured));
			jw_num(&w, o, "error", usec(err));
			event_emit(&ev, o, &w);
		}
		if (json) {
			rc = print_json(predicted, with_collectives, &pred, &meas, measured, repaired, rb, kernels, kernels_why,
			                not_run);
		} else if (ev.f != stdout && !(tl_out && strcmp(tl_out, "-") == 0)) {
			printf("plan %s on %s%s: %d iteration%s, %d transfers%s\n", path, bname, mpi ? " over MPI" : "", iters,
			       iters == 1 ? "" : "s", x.nxfers, repaired ? " (receives repaired)" : "");
			printf("iteration: predicted %.2f ms, measured %.2f ms, error %+.2f%%\n", predicted, measured,
			       100 * err);
			printf("kernels: %s (%s)\n", kernels,
			       rb->kernels ? "the model's times on a virtual clock"
			       : mode == KPLAN_ARCHITECTURE ? "each op ran its layers' kernels, timed as they ran"
			       : "proxies fitted to the predicted times: a test of the protocol, not of the cost model");
			if (kernels_why)
				printf("note: fitted because %s; octopipe cost makes a model from its architecture\n",
				       kernels_why);
			if (not_run)
				printf("note: %s: the prediction above leaves these collectives out; with them the plan predicts %.2f ms\n",
				       not_run, with_collectives);
			if (m.dp_sync_ms > 0)
				printf("note: the data-parallel sync (%.2f ms exposed in octopipe sim) is not run by this executor,\n"
				       "which runs one replica: the prediction above leaves it out\n", m.dp_sync_ms);
			if (p.comm == PLAN_COMM_BLOCKING)
				printf("note: the plan's transfers block as in Megatron-LM's 1F1B; this executor overlaps them,\n"
				       "and so does the prediction above (octopipe sim shows the blocking one)\n");
			if (rb->gpu_count && be.state && rb->gpu_count(be.state) < meas.ndevices)
				printf("note: %d devices on %d GPU%s: devices that share a GPU run at once and slow each other, so\n"
				       "these times test the protocol (every op ran once, in order, after its inputs), not the\n"
				       "prediction\n", meas.ndevices, rb->gpu_count(be.state), rb->gpu_count(be.state) == 1 ? "" : "s");
			printf("\n");
			printf("%4s %14s %14s %8s%s\n", "GPU", "PREDICTED ms", "MEASURED ms", "ERROR",
			       rb->gpus ? "   UTIL        MEM  NAME" : "");
			for (int d = 0; d < meas.ndevices; d++) {
				double pe = end_of(&pred.dev[d]), me = end_of(&meas.dev[d]);

				printf("%4d %14.2f %14.2f %+7.2f%%", d, pe, me, 100 * prediction_error(pe, me));
				if (rb->gpus && be.state) {
					double u;
					uint64_t mem;
					const char *name = "?";
					int gpu = rb->gpu_of ? rb->gpu_of(be.state, d, &name) : -1;

					if (rb->util && rb->util(be.state, d, &u, &mem))
						printf(" %5.0f%% %7.1f GB", 100 * u, mem / 1e9);
					else
						printf(" %6s %10s", "N/A", "N/A");
					printf("  %d:%s", gpu, name);
				}
				printf("\n");
			}
		}
		if (tl_out && rank == 0) {
			cJSON *root;
			struct strbuf sb = STRBUF_INIT;
			char dir[4096], rel[4096];

			/* name the plan as seen from the timeline, for octopipe calibrate */
			fileio_dirname(tl_out, dir, sizeof(dir));
			if (strcmp(tl_out, "-") != 0 && fileio_relative(dir, path, rel, sizeof(rel)) == 0)
				meas.plan_ref = strdup(rel);
			/* what the run left out, so that calibrate compares it with the same prediction */
			if (not_run && (!(meas.extra = cJSON_CreateObject()) ||
			                !cJSON_AddStringToObject(meas.extra, "not_run", not_run))) {
				cli_err("octopipe run: out of host memory\n");
				rc = EXIT_RUNTIME;
			}
			root = rc == EXIT_OK ? timeline_to_json(&meas) : NULL;
			if (root) {
				json_write(&sb, root);
				rc = cli_write_text(tl_out, sb.buf, sb.len);
				cJSON_Delete(root);
			}
			strbuf_release(&sb);
		}
	}
	timeline_release(&meas);
out_x:
	if (events_close(&ev) < 0 && rc == EXIT_OK)
		rc = EXIT_RUNTIME;
	if (rb->close && be.state)
		rb->close(be.state);
	exec_release(&x);
	timeline_release(&pred);
out_sim:
	free(works);
	metrics_release(&m);
	sim_release(&s);
	plan_release(&p);
	return rc;
}
