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
#include "cli/cli_args.h"

static void usage(FILE *f)
{
	fputs("usage: octopipe tui [--no-color] [--no-mouse] [PLAN | --model M --cluster C [--microbatches N]\n"
	      "                    [--tp T] [--dp D] [--ep E] [--zero Z] [--grads G]\n"
	      "                    [--recompute HOW]]\n"
	      "       octopipe tui --render WxH [--keys KEYS] [PLAN | ...]\n"
	      "\n"
	      "Opens the terminal UI: per-GPU Gantt charts with bubbles, the op under the cursor\n"
	      "and what it waited for, hand edits with instant re-simulation, undo and redo,\n"
	      "compare and steps views, PCRE2 search. Without a plan, opens the best baseline of\n"
	      "the model on the cluster (default: nemotron-nano-v2-9b on 8xH200, 32 microbatches).\n"
	      "F1 or ? in the UI lists every key.\n"
	      "\n"
	      "  --no-color        monochrome (also when NO_COLOR is set)\n"
	      "  --no-mouse        leave the mouse to the terminal\n"
	      "  --render WxH      print one frame as text instead (no terminal needed)\n"
	      "  --keys KEYS       with --render: keys pressed first (\\n Enter, \\e Esc, \\t Tab)\n"
	      "  --steps FILE      show recorded tuner steps (octopipe.steps/1) in the steps view\n"
	      "  --launcher CMD    Run (F8) under this prefix, e.g. 'mpirun -np 8' (default: $OCTOPIPE_LAUNCHER)\n"
	      "  --time-scale X    Run: wall ms per model ms for the emulated executor (default 1)\n"
	      "  --iters N         Run: iterations (default 10)\n"
	      "  --backend B       Run on emu (default) or cuda (default: $OCTOPIPE_BACKEND)\n"
	      "  --share-gpus      Run, cuda: more devices than GPUs (see octopipe run --help)\n"
	      "With --model and --cluster, the plan's parallel layout (see octopipe plan --help):\n"
	      CLI_PAR_HELP, f);
}

static int tui_option(void *ctx, int ch, const char *arg)
{
	struct tui_opts *o = ctx;

	switch (ch) {
	case 'C': o->no_color = true; return 0;
	case 'M': o->no_mouse = true; return 0;
	case 'r': o->render = arg; return 0;
	case 'k': o->keys = arg; return 0;
	case 's': o->steps = arg; return 0;
	case 'L': o->launcher = arg; return 0;
	case 'S': return cli_number("tui", "--time-scale", arg, 0, 100, false, &o->time_scale) < 0 ? EXIT_INPUT : 0;
	case 'i': return (o->run_iters = cli_positive("tui", "--iters", arg)) < 0 ? EXIT_INPUT : 0;
	case 'b':
		if (strcmp(arg, "emu") != 0 && strcmp(arg, "cuda") != 0)
			return cli_usage_error("tui", "unknown backend '%s' (emu or cuda)", arg);
		o->backend = arg;
		return 0;
	case 'g': o->share_gpus = true; return 0;
	default: return EXIT_INPUT;
	}
}

static const struct option tui_options[] = {
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
	{ NULL, 0, NULL, 0 },
};

/* The plan operand is optional here (none: --model and --cluster), so it stays the
 * command's. */
static const struct cli_args_spec tui_spec = {
	"tui", CLI_IN_MODEL | CLI_IN_CLUSTER | CLI_IN_MICROBATCHES | CLI_IN_LAYOUT, "h", tui_options, tui_option, usage,
};

int cmd_tui(int argc, char **argv)
{
	struct tui_opts o;
	struct err e = ERR_INIT;
	struct cli_args a;
	const struct cli_par *cp = &a.par;
	int rc;

	memset(&o, 0, sizeof(o));
	o.time_scale = -1;
	if ((rc = cli_args_parse(&tui_spec, argc, argv, &o, &a)) != CLI_ARGS_GO)
		return rc;
	o.model = a.model_arg;
	o.cluster = a.cluster_arg;
	o.microbatches = a.microbatches;
	if (optind < argc - 1)
		return cli_usage_error("tui", "one plan at a time");
	if (optind == argc - 1)
		o.plan = argv[optind];
	if (o.plan && (o.model || o.cluster))
		return cli_usage_error("tui", "give a plan or --model and --cluster, not both");
	if (!o.plan && (!o.model) != (!o.cluster))
		return cli_usage_error("tui", "--model and --cluster go together");
	if (o.keys && !o.render)
		return cli_usage_error("tui", "--keys needs --render");
	if ((cli_par_given(cp) || cp->recompute >= 0) && o.plan)
		return cli_usage_error("tui", "the layout options go with --model and --cluster (a plan has its own)");
	o.recompute = cp->recompute;
	if (cli_par_given(cp) || cp->recompute >= 0) {
		o.par.tp = cp->tp ? cp->tp : 1;
		o.par.dp = cp->dp ? cp->dp : 1;
		o.par.ep = cp->ep ? cp->ep : 1;
		o.par.zero = cp->zero ? cp->zero - 1 : 0;
		o.par.fp32_grads = cp->grads == 2;
		o.par.pp = 0;
	}
	if (tui_run(&o, stdout, &e) < 0)
		return cli_report(&e);
	return EXIT_OK;
}
