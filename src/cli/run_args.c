/*
 * run_args — the command line of `octopipe run` (run_args.h): the options, the hidden
 * fault injections and the usage text.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli/run_args.h"

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
	      "  --timeout S        watchdog: the longest any wait may take (default 10 s;\n"
	      "                     emu: while nothing progresses on any device)\n"
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

int run_parse_options(int argc, char **argv, struct run_args *ra, struct cli_args *a)
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

