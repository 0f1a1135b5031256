/*
 * octopipe tui — the terminal UI on a plan, or on a model and cluster (the best baseline
 * is shown), or on the bundled default sample. The UI itself lives in ui/; this file only
 * reads the options.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ui/tui.h"
#include "cli.h"

static void usage(FILE *f)
{
	fputs("usage: octopipe tui [--no-color] [--no-mouse]\n"
	      "                    [PLAN | --model M --cluster C [--microbatches N]\n"
	      "                    [--layout auto|pp] [--tp T] [--dp D] [--ep E] [--zero Z]\n"
	      "                    [--grads G] [--recompute HOW]]\n"
	      "                    [--target octopipe|megatron|torchtitan]\n"
	      "       octopipe tui --render WxH [--keys KEYS] [PLAN | ...]\n"
	      "\n"
	      "Opens the terminal UI: per-GPU Gantt charts with bubbles, the op at the cursor\n"
	      "and what it waited for, hand edits with instant re-simulation, undo and redo,\n"
	      "compare and steps views, PCRE2 search. Without a plan, opens the model on the\n"
	      "cluster (below), or the best baseline of the default sample (nemotron-nano-v2-9b\n"
	      "on 8xH200, 32 microbatches, pure pipeline parallelism). torchtitan runs no\n"
	      "Mamba layer: under --target torchtitan it opens llama2-70b on 16xH200 at the\n"
	      "layout the search picks for torchtitan, and the status line says so.\n"
	      "F1 or ? in the UI lists every key. ESCDELAY (ms, default 100) is how long the\n"
	      "rest of an escape sequence may take to arrive over a slow link, as in curses.\n"
	      "\n"
	      "  --no-color        monochrome (also when NO_COLOR is set)\n"
	      "  --no-mouse        leave the mouse to the terminal\n"
	      "  --render WxH      print one frame as text instead (no terminal needed)\n"
	      "  --keys KEYS       with --render: keys pressed first (\\n Enter, \\e Esc, \\t Tab)\n"
	      "  --target RT       the runtime the plans are for: the tuner (F6) searches only\n"
	      "                    what it runs; the baselines it cannot run are marked n/a\n"
	      "  --steps FILE      recorded tuner steps (octopipe.steps/1) for the steps view\n"
	      "  --launcher CMD    Run (F8) under this prefix, e.g. 'mpirun -np 8' (default:\n"
	      "                    $OCTOPIPE_LAUNCHER)\n"
	      "  --time-scale X    Run, emulated: wall ms per model ms (default 1)\n"
	      "  --iters N         Run: iterations (default 10)\n"
	      "  --backend B       Run on emu (default) or cuda (default: $OCTOPIPE_BACKEND)\n"
	      "  --share-gpus      Run, cuda: more devices than GPUs (see octopipe run --help)\n"
	      "With --model and --cluster the UI opens on the parallel layout that tune and\n"
	      "compare pick (--layout auto, the default: the layout search, any degree given\n"
	      "below held fixed; --microbatches is the global batch, or per replica with\n"
	      "--dp) and says which on the status line; --layout pp opens pure pipeline\n"
	      "parallelism over every GPU. Ctrl-C during the search takes the best so far.\n"
	      CLI_PAR_HELP, f);
}

/* Options that do not go together, and a Run launcher the UI cannot
 * keep. Returns 0, or the exit code of the one line that says why. */
static int check_options(const struct tui_opts *o)
{
	const char *launcher;

	if (o->plan && (o->model || o->cluster))
		return cli_usage_error("tui", "give a plan or --model and --cluster, not both");
	if (!o->plan && (!o->model) != (!o->cluster))
		return cli_usage_error("tui", "--model and --cluster go together");
	if (o->keys && !o->render)
		return cli_usage_error("tui", "--keys needs --render");
	/* a longer one was cut where the UI's copy ends, and Run ran another command */
	launcher = o->launcher ? o->launcher : getenv("OCTOPIPE_LAUNCHER");
	if (launcher && strlen(launcher) > TUI_LAUNCHER_MAX)
		return cli_usage_error("tui", "%s: longer than %d bytes", o->launcher ? "--launcher" : "$OCTOPIPE_LAUNCHER",
		                       TUI_LAUNCHER_MAX);
	return 0;
}

int cmd_tui(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "cluster", required_argument, NULL, 'c' },
		{ "microbatches", required_argument, NULL, 'n' },
		{ "no-color", no_argument, NULL, 'C' },
		{ "no-colour", no_argument, NULL, 'C' },
		{ "no-mouse", no_argument, NULL, 'M' },
		{ "render", required_argument, NULL, 'r' },
		{ "keys", required_argument, NULL, 'k' },
		{ "steps", required_argument, NULL, 's' },
		{ "launcher", required_argument, NULL, 'L' },
		{ "time-scale", required_argument, NULL, 'S' },
		{ "iters", required_argument, NULL, 'i' },
		{ "backend", required_argument, NULL, 'b' },
		{ "share-gpus", no_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ "layout", required_argument, NULL, 'Y' },
		{ "target", required_argument, NULL, 'T' },
		CLI_PAR_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct tui_opts o;
	struct err e = ERR_INIT;
	struct cli_par cp;
	struct start_layout lay;
	bool layout_pp = false, layout_given = false;
	int ch, k;

	memset(&o, 0, sizeof(o));
	o.time_scale = -1;
	cli_par_init(&cp);
	optind = 0;
	while ((ch = cli_getopt("tui", argc, argv, "h", opts)) != -1) {
		if ((k = cli_par_option("tui", ch, optarg, &cp)) != 0) {
			if (k < 0)
				return EXIT_INPUT;
			continue;
		}
		switch (ch) {
		case 'm': o.model = optarg; break;
		case 'c': o.cluster = optarg; break;
		case 'n': if ((o.microbatches = cli_positive("tui", "--microbatches", optarg)) < 0) return EXIT_INPUT; break;
		case 'C': o.no_color = true; break;
		case 'M': o.no_mouse = true; break;
		case 'r': o.render = optarg; break;
		case 'k': o.keys = optarg; break;
		case 's': o.steps = optarg; break;
		case 'L': o.launcher = optarg; break;
		case 'S':
			if (cli_number("tui", "--time-scale", optarg, 0, 100, false, &o.time_scale) < 0)
				return EXIT_INPUT;
			break;
		case 'i': if ((o.run_iters = cli_positive("tui", "--iters", optarg)) < 0) return EXIT_INPUT; break;
		case 'b':
			if (strcmp(optarg, "emu") != 0 && strcmp(optarg, "cuda") != 0)
				return cli_usage_error("tui", "unknown backend '%s' (emu or cuda)", optarg);
			o.backend = optarg;
			break;
		case 'g': o.share_gpus = true; break;
		case 'T':
			if (target_from_name(optarg, &o.target) < 0)
				return cli_usage_error("tui", "--target: 'octopipe', 'megatron' or 'torchtitan', not '%s'", optarg);
			break;
		case 'Y':
			if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "pp") != 0)
				return cli_usage_error("tui", "--layout: 'auto' or 'pp', not '%s'", optarg);
			layout_pp = strcmp(optarg, "pp") == 0;
			layout_given = true;
			break;
		case 'h': usage(stdout); return EXIT_OK;
		default: return EXIT_INPUT;
		}
	}
	if (optind < argc - 1)
		return cli_usage_error("tui", "one plan at a time");
	if (optind == argc - 1)
		o.plan = argv[optind];
	if ((k = check_options(&o)) != 0)
		return k;
	if ((cli_par_given(&cp) || cp.recompute >= 0) && o.plan)
		return cli_usage_error("tui", "the layout options go with --model and --cluster (a plan has its own)");
	if (layout_pp && (cli_par_given(&cp) || cp.recompute >= 0))
		return cli_usage_error("tui", "--layout pp is pure pipeline parallelism: no layout options with it");
	if (layout_given && !o.model)
		return cli_usage_error("tui", "--layout goes with --model and --cluster");
	/* what is not given is searched, as tune and compare search it */
	start_layout_init(&lay);
	lay.tp = cp.tp;
	lay.dp = cp.dp;
	lay.ep = cp.ep;
	lay.zero = cp.zero ? cp.zero - 1 : -1;
	lay.recompute = cp.recompute;
	lay.fp32_grads = cp.grads == 2;
	if (cp.mbs)
		lay.micro_batch = cp.mbs;
	lay.pp_only = layout_pp;
	if (o.target == TARGET_TORCHTITAN && !cp.zero && !layout_pp)
		lay.zero = 2;  /* torchtitan's data parallelism beside a pipeline is FSDP (as compare --target does) */
	lay.zero_where_dp = o.target == TARGET_TORCHTITAN;
	/* layouts judged by the schedules the target runs, as tune and compare judge them */
	if (o.target == TARGET_TORCHTITAN) {
		lay.accept = target_accepts;
		lay.accept_arg = &o.target;
	}
	if (o.target == TARGET_MEGATRON) {
		lay.schedules = TUNE_MEGATRON_SCHEDULES;
		lay.block_recompute = true;
	}
	o.layout = &lay;
	if (tui_run(&o, stdout, &e) < 0)
		return cli_report(&e);
	return EXIT_OK;
}
