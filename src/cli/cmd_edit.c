/*
 * octopipe edit PLAN EDIT... -o OUT — the TUI's hand edits as a command: move a stage
 * boundary ([ ]), move a stage to another GPU (m), move an op in its GPU's order (< >),
 * regenerate every GPU's order by the adaptive policy (F9), or take over another plan's
 * or a tuner step's partition, placement and order (a, F6 Enter). The edits run in the
 * order given through the engine's edit_apply, as the UI's do, so a script gets exactly
 * the plan the same keys would; the result is simulated and written (atomically, never
 * over one of the files read).
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "action.h"
#include "cli.h"
#include "cli/cli_args.h"
#include "edit.h"
#include "fileio.h"
#include "json.h"
#include "sim.h"
#include "steps.h"
#include "strbuf.h"

static void usage(FILE *f)
{
	fputs("usage: octopipe edit PLAN EDIT... -o OUT [--json]\n"
	      "\n"
	      "Applies the TUI's hand edits to PLAN, in the order given, and writes the\n"
	      "result to OUT: each edit is the one its key makes in `octopipe tui`, and says\n"
	      "what it did. The edited plan is simulated (its iteration time before and\n"
	      "after) and written even when it cannot run (exit 3), as the UI saves it.\n"
	      "\n"
	      "edits (any number, in order):\n"
	      "  --boundary S:+1|-1  the boundary after stage S moves by a layer ([ and ]):\n"
	      "                      +1 takes the next stage's first layer, -1 gives its last\n"
	      "  --place S:G         stage S moves to GPU G (m); its ops join G's order by\n"
	      "                      their simulated starts (by position if it cannot run)\n"
	      "  --move-op OP:earlier|later   the op OP (as in a schedule: 1B7 is stage 1's\n"
	      "                      backward of microbatch 7) a place in its GPU's order (< >)\n"
	      "  --reorder           every GPU's order by the adaptive policy (F9)\n"
	      "  --adopt FILE[:N]    the partition, placement and order of the plan FILE (a in\n"
	      "                      the compare view), or of step N (0 the first) of a\n"
	      "                      `tune --steps-out` file (Enter in the steps view)\n"
	      "\n"
	      "  -o OUT              the edited plan (not one of the files read)\n"
	      "  --json              what each edit did and the iteration before and after\n"
	      "\n"
	      "exit status: 0 ok, 2 bad input or an edit that does not apply (named; nothing is\n"
	      "written), 3 the edited plan cannot run (deadlock, out of memory: written all the\n"
	      "same), 1 other failures\n", f);
}

enum { OPT_BOUNDARY = 0x300, OPT_PLACE, OPT_MOVE_OP, OPT_REORDER, OPT_ADOPT };

struct edit_args {
	int n, cap;                  /* cap: the command line's words, a bound on its edits */
	int *kind;                   /* OPT_* */
	const char **arg;            /* as given */
};

static int edit_option(void *ctx, int ch, const char *arg)
{
	struct edit_args *ea = ctx;

	if (ch < OPT_BOUNDARY || ch > OPT_ADOPT || ea->n == ea->cap)
		return EXIT_INPUT;
	ea->kind[ea->n] = ch;
	ea->arg[ea->n++] = arg ? arg : "";
	return 0;
}

static const struct option edit_options[] = {
	{ "boundary", required_argument, NULL, OPT_BOUNDARY },
	{ "place", required_argument, NULL, OPT_PLACE },
	{ "move-op", required_argument, NULL, OPT_MOVE_OP },
	{ "reorder", no_argument, NULL, OPT_REORDER },
	{ "adopt", required_argument, NULL, OPT_ADOPT },
	{ NULL, 0, NULL, 0 },
};

static const struct cli_args_spec edit_spec = {
	"edit", CLI_IN_PLAN | CLI_IN_OUTPUT | CLI_IN_JSON, "o:jh", edit_options, edit_option, usage,
};

static const char *opt_name(int kind)
{
	return kind == OPT_BOUNDARY ? "--boundary" : kind == OPT_PLACE ? "--place" : kind == OPT_MOVE_OP ? "--move-op"
	     : kind == OPT_REORDER ? "--reorder" : "--adopt";
}

/* A count as written in a plan: decimal digits, no sign, no leading zero, at most a
 * million; *end past it. False when s does not start with one. */
static bool count(const char *s, long *v, const char **end)
{
	long x = 0;
	int n = 0;

	while (s[n] >= '0' && s[n] <= '9' && n < 8)
		x = 10 * x + (s[n++] - '0');
	if (n == 0 || (n > 1 && s[0] == '0') || (s[n] >= '0' && s[n] <= '9') || x > 1000000)
		return false;
	*v = x;
	*end = s + n;
	return true;
}

/* "A:B", two counts (B signed when sign: "+1" or "-1" only); false when it is not. */
static bool two_ints(const char *s, long *a, long *b, bool sign)
{
	const char *end;

	if (!count(s, a, &end) || *end != ':')
		return false;
	s = end + 1;
	if (sign) {
		if ((s[0] != '+' && s[0] != '-') || s[1] != '1' || s[2])
			return false;
		*b = s[0] == '+' ? 1 : -1;
		return true;
	}
	return count(s, b, &end) && !*end;
}

/* The simulated start of every op (sim_op_index) when p runs, into *times (NULL when it
 * does not: an edit then goes by position). -1 when out of host memory. */
static int start_times(const struct plan *p, double **times)
{
	struct sim s;
	struct sim_opts o;
	struct metrics m;
	struct err e = ERR_INIT;
	long n = plan_total_ops(p);
	int rc = 0;

	*times = NULL;
	memset(&s, 0, sizeof(s));
	sim_opts_default(&o);
	o.record = true;
	o.no_bounds = true;
	/* as the UI: a plan over memory still has times; a deadlocked one has none */
	if (sim_run(&s, p, &o, &m, &e) == 0) {
		if ((*times = malloc(sizeof(**times) * (size_t)n)))
			memcpy(*times, s.start, sizeof(**times) * (size_t)n);
		else
			rc = -1;
	}
	metrics_release(&m);
	sim_release(&s);
	return rc;
}

enum { ADOPT_PLAN = -1, ADOPT_BAD_STEP = -2 };

/* The file of --adopt FILE[:N] into file; returns N, ADOPT_PLAN for a plan, or
 * ADOPT_BAD_STEP when FILE exists but what follows its ':' is not a step number (FILE:-1
 * was tried as a plan named "FILE:-1", and "cannot open" hid what was wrong). */
static long adopt_file(const char *arg, char *file, size_t n)
{
	const char *colon = strrchr(arg, ':'), *end;
	struct stat st;
	long k;

	if (colon && count(colon + 1, &k, &end) && !*end) {
		snprintf(file, n, "%.*s", (int)(colon - arg), arg);
		return k;
	}
	snprintf(file, n, "%s", cli_resolve(arg, "plans"));
	if (!colon || stat(file, &st) == 0)
		return ADOPT_PLAN;
	snprintf(file, n, "%.*s", (int)(colon - arg), arg);
	if (stat(file, &st) == 0)
		return ADOPT_BAD_STEP;
	snprintf(file, n, "%s", cli_resolve(arg, "plans"));
	return ADOPT_PLAN;
}

/* The plan to take over for --adopt FILE[:N] into *with; its label into label. */
static int adopt_plan(const struct plan *cur, const char *arg, struct plan *with, char *label, size_t n,
                      struct err *e)
{
	char path[4096];
	long k = adopt_file(arg, path, sizeof(path));   /* not ADOPT_BAD_STEP: cmd_edit checked */
	struct model m;
	struct cluster c;
	struct steps st;
	int rc;

	if (k < 0) {
		snprintf(label, n, "the plan %s", cli_name(path));
		if (plan_load(with, path, e) < 0)
			return -1;
		/* the UI adopts only plans of its own model and cluster: so does the command */
		if (strcmp(with->model.name, cur->model.name) != 0 || strcmp(with->cluster.name, cur->cluster.name) != 0) {
			err_set(e, ERR_INPUT, "%s: a plan of '%s' on '%s', this plan is of '%s' on '%s'", cli_name(path),
			        with->model.name, with->cluster.name, cur->model.name, cur->cluster.name);
			plan_release(with);
			return -1;
		}
		return 0;
	}
	if (steps_model_of(cur, &m, &c, e) < 0)
		return -1;
	rc = steps_load(&st, path, &m, &c, cur->microbatches, e);
	if (rc == 0 && k >= st.n)
		rc = err_set(e, ERR_INPUT, "%s: there is no step %ld (the file has %d, from 0)", cli_name(path), k, st.n);
	if (rc == 0 && st.microbatches != cur->microbatches)
		rc = err_set(e, ERR_INPUT, "%s: microbatches: steps of a run at %d microbatches, the plan has %d",
		             cli_name(path), st.microbatches, cur->microbatches);
	if (rc == 0)
		rc = tune_state_plan(&m, &c, cur->microbatches, &st.steps[k].state, with, e);
	if (rc == 0) {
		char suffix[40];

		/* named as the UI names an adopted step */
		snprintf(suffix, sizeof(suffix), " tuner step %ld", k);
		free(with->name);
		with->name = str_name_with_suffix(m.name, suffix, JV_STRING_MAX);
		snprintf(label, n, "tuner step %ld of %s", k, cli_name(path));
	}
	steps_release(&st);
	model_release(&m);
	cluster_release(&c);
	return rc;
}

/* One edit (i of ea) into ed, and what it needs loaded (with, times); 0, or the exit code
 * after one line naming it. */
static int make_edit(const struct edit_args *ea, int i, const struct plan *p, struct edit *ed, struct plan *with,
                     bool *have_with, double **times, char *label, size_t n)
{
	const char *arg = ea->arg[i];
	long a, b;
	struct err e = ERR_INIT;

	memset(ed, 0, sizeof(*ed));
	switch (ea->kind[i]) {
	case OPT_BOUNDARY:
		if (!two_ints(arg, &a, &b, true))
			return cli_usage_error("edit", "--boundary '%s' is not STAGE:+1 or STAGE:-1", cli_name(arg));
		*ed = (struct edit){ .kind = EDIT_BOUNDARY, .stage = (int)a, .delta = (int)b };
		return EXIT_OK;
	case OPT_PLACE:
		if (!two_ints(arg, &a, &b, false))
			return cli_usage_error("edit", "--place '%s' is not STAGE:GPU", cli_name(arg));
		if (start_times(p, times) < 0)
			return EXIT_RUNTIME;
		*ed = (struct edit){ .kind = EDIT_PLACE, .stage = (int)a, .device = (int)b, .times = *times };
		return EXIT_OK;
	case OPT_MOVE_OP: {
		char tok[ACTION_TEXT_MAX + 1];
		const char *colon = strchr(arg, ':');
		struct action act;
		int dir = colon && strcmp(colon + 1, "earlier") == 0 ? -1 : colon && strcmp(colon + 1, "later") == 0 ? 1 : 0;

		if (!colon || !dir || colon - arg > ACTION_TEXT_MAX)
			return cli_usage_error("edit", "--move-op '%s' is not OP:earlier or OP:later", cli_name(arg));
		snprintf(tok, sizeof(tok), "%.*s", (int)(colon - arg), arg);
		if (action_parse(tok, &act) < 0)
			return cli_usage_error("edit", "--move-op: '%s' is not an op (like 1B7: stage, F/I/W/B, microbatch)",
			                       cli_name(tok));
		for (int d = 0; d < p->ndevices; d++)
			for (int k = p->order_start[d]; k < p->order_start[d + 1]; k++)
				if (p->order[k].stage == act.stage && p->order[k].mb == act.mb && p->order[k].kind == act.kind) {
					*ed = (struct edit){ .kind = EDIT_MOVE_OP, .device = d, .pos = k - p->order_start[d],
					                     .delta = dir };
					return EXIT_OK;
				}
		return cli_usage_error("edit", "--move-op: the plan has no op %s", tok);
	}
	case OPT_REORDER:
		ed->kind = EDIT_REORDER;
		return EXIT_OK;
	default:
		if (adopt_plan(p, arg, with, label, n, &e) < 0)
			return cli_report(&e);
		*have_with = true;
		*ed = (struct edit){ .kind = EDIT_REPLACE, .with = with, .label = label };
		return EXIT_OK;
	}
}

/* The model and cluster files plan p (read from path) names, as paths from here ("" for
 * an embedded one); -1 when one does not fit. */
static int refs_of(const struct plan *p, const char *path, char *mpath, char *cpath)
{
	char dir[4096];

	fileio_dirname(path, dir, sizeof(dir));
	if (p->model_ref && fileio_join(dir, p->model_ref, mpath, 4096) < 0)
		return -1;
	if (p->cluster_ref && fileio_join(dir, p->cluster_ref, cpath, 4096) < 0)
		return -1;
	return 0;
}

/* The iteration time of p, or -1 when it cannot run. */
static double iteration_ms(const struct plan *p)
{
	struct sim s;
	struct sim_opts o;
	struct metrics m;
	struct err e = ERR_INIT;
	double ms = -1;

	memset(&s, 0, sizeof(s));
	sim_opts_default(&o);
	o.no_bounds = true;
	if (sim_run(&s, p, &o, &m, &e) == 0 && !m.noom)
		ms = m.makespan_ms;
	metrics_release(&m);
	sim_release(&s);
	return ms;
}

/* Applies every edit to a->plan; the words of each into whats (a JSON array). */
static int apply_all(struct cli_args *a, const struct edit_args *ea, cJSON *whats)
{
	struct edit_hist h;
	int rc = EXIT_OK;

	edit_hist_init(&h);
	for (int i = 0; i < ea->n && rc == EXIT_OK; i++) {
		struct edit ed;
		struct plan with;
		bool have_with = false;
		double *times = NULL;
		char what[512], label[300] = "";
		struct err e = ERR_INIT;
		cJSON *o;

		memset(&with, 0, sizeof(with));
		rc = make_edit(ea, i, &a->plan, &ed, &with, &have_with, &times, label, sizeof(label));
		if (rc == EXIT_OK && edit_apply(&h, &a->plan, &ed, what, sizeof(what), &e) < 0) {
			struct strbuf pre = STRBUF_INIT;

			strbuf_addf(&pre, "%s: %s %s", a->plan_path, opt_name(ea->kind[i]), ea->arg[i]);
			err_prefix(&e, strbuf_failed(&pre) ? a->plan_path : pre.buf);
			strbuf_release(&pre);
			rc = cli_report(&e); /* one line, whatever the names hold */
		}
		if (rc == EXIT_OK && (!(o = cJSON_CreateObject()) || !cJSON_AddItemToArray(whats, o) ||
		                      !cJSON_AddStringToObject(o, "edit", opt_name(ea->kind[i])) ||
		                      !cJSON_AddStringToObject(o, "arg", ea->arg[i]) ||
		                      !cJSON_AddStringToObject(o, "did", what)))
			rc = EXIT_RUNTIME;
		free(times);
		if (have_with)
			plan_release(&with);
	}
	edit_hist_release(&h);
	return rc;
}

static int report(const struct cli_args *a, const cJSON *whats, double before, double after, int rc)
{
	if (a->json) {
		cJSON *root = cJSON_CreateObject();

		if (!root || !cJSON_AddItemToObject(root, "edits", cJSON_Duplicate(whats, true)) ||
		    !(before < 0 ? cJSON_AddNullToObject(root, "before_ms") : cJSON_AddNumberToObject(root, "before_ms", before)) ||
		    !(after < 0 ? cJSON_AddNullToObject(root, "after_ms") : cJSON_AddNumberToObject(root, "after_ms", after)) ||
		    !cJSON_AddBoolToObject(root, "runs", after >= 0) || !cJSON_AddStringToObject(root, "output", a->out)) {
			cJSON_Delete(root);
			return EXIT_RUNTIME;
		}
		return cli_put_json(root, false) == EXIT_OK ? rc : EXIT_RUNTIME;
	}
	if (strcmp(a->out, "-") == 0)
		return rc; /* standard output holds the plan, one document */
	for (const cJSON *o = whats->child; o; o = o->next)
		printf("%s%s%s: %s\n", cJSON_GetStringValue(cJSON_GetObjectItem(o, "edit")),
		       *cJSON_GetStringValue(cJSON_GetObjectItem(o, "arg")) ? " " : "",
		       cli_name(cJSON_GetStringValue(cJSON_GetObjectItem(o, "arg"))),
		       cli_name(cJSON_GetStringValue(cJSON_GetObjectItem(o, "did"))));
	if (before >= 0 && after >= 0)
		printf("iteration: %.2f ms -> %.2f ms (%+.1f%%)\n", before, after, 100 * (after / before - 1));
	else if (after >= 0)
		printf("iteration: %.2f ms (the plan did not run before)\n", after);
	else
		printf("iteration: the edited plan cannot run (why on stderr)\n");
	printf("wrote %s\n", cli_name(a->out));
	return rc;
}

int cmd_edit(int argc, char **argv)
{
	struct edit_args *ea = calloc(1, sizeof(*ea));
	struct cli_args a;
	struct strbuf why = STRBUF_INIT;
	cJSON *whats = cJSON_CreateArray();
	double before = -1, after = -1;
	char mpath[4096] = "", cpath[4096] = "";
	int rc;

	if (ea) {
		ea->cap = argc;
		ea->kind = calloc((size_t)argc + 1, sizeof(*ea->kind));
		ea->arg = calloc((size_t)argc + 1, sizeof(*ea->arg));
	}
	if (!ea || !ea->kind || !ea->arg || !whats) {
		if (ea) {
			free(ea->kind);
			free(ea->arg);
		}
		free(ea);
		cJSON_Delete(whats);
		cli_err("octopipe edit: out of host memory\n");
		return EXIT_RUNTIME;
	}
	if ((rc = cli_args_parse(&edit_spec, argc, argv, ea, &a)) != CLI_ARGS_GO)
		goto out_args;
	if (!a.out)
		rc = cli_usage_error("edit", "no -o OUT: where the edited plan goes");
	else if (ea->n == 0)
		rc = cli_usage_error("edit", "no edit given (--boundary, --place, --move-op, --reorder, --adopt)");
	else if (a.json && strcmp(a.out, "-") == 0)
		rc = cli_usage_error("edit", "--json and -o - would both write to standard output: send one to a file");
	if (rc == CLI_ARGS_GO)
		rc = cli_args_load(&a, CLI_IN_PLAN);
	if (rc == EXIT_OK && refs_of(&a.plan, a.plan_path, mpath, cpath) < 0)
		rc = cli_usage_error("edit", "the paths of the model and cluster '%s' names are too long", a.plan_path);
	if (rc == EXIT_OK) {
		const char *inputs[3];
		int n = 0;

		inputs[n++] = a.plan_path;
		if (mpath[0])
			inputs[n++] = mpath;
		if (cpath[0])
			inputs[n++] = cpath;
		for (int i = 0; i < ea->n && rc == EXIT_OK; i++) {
			char file[4096];

			if (ea->kind[i] != OPT_ADOPT)
				continue;
			if (adopt_file(ea->arg[i], file, sizeof(file)) == ADOPT_BAD_STEP)
				rc = cli_usage_error("edit", "--adopt '%s': the step after ':' is a number from 0 (the "
				                     "first) to 1000000, not '%s'", cli_name(ea->arg[i]),
				                     cli_name(strrchr(ea->arg[i], ':') + 1));
			else
				rc = cli_refuse_input("edit", a.out, (const char *const[]){ file }, 1);
		}
		if (rc == EXIT_OK)
			rc = cli_refuse_input("edit", a.out, inputs, n);
	}
	if (rc == EXIT_OK) {
		before = iteration_ms(&a.plan);
		rc = apply_all(&a, ea, whats);
	}
	if (rc == EXIT_OK) {
		after = iteration_ms(&a.plan);
		rc = cli_plan_verdict(a.out, &a.plan, &why);
		if (rc == EXIT_OK || rc == EXIT_INFEASIBLE) {
			/* the files the plan names, named from where it goes; embedded ones stay so */
			int wrc = cli_write_plan(&a.plan, a.out, mpath, cpath, !mpath[0] || !cpath[0]);

			rc = wrc != EXIT_OK ? wrc : report(&a, whats, before, after, rc);
			if (rc == EXIT_INFEASIBLE && why.len)
				cli_err("%s%s", why.buf, why.buf[why.len - 1] == '\n' ? "" : "\n");
		}
	}
	cli_args_release(&a);
out_args:
	strbuf_release(&why);
	cJSON_Delete(whats);
	free(ea->kind);
	free(ea->arg);
	free(ea);
	return rc == CLI_ARGS_GO ? EXIT_OK : rc;
}
