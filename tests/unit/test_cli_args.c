/* test_cli_args — the declared common options of a subcommand (src/cli/cli_args.c): the
 * options a command declares are taken, the others are unknown; the command's own go to
 * its callback; bad values and a wrong PLAN operand get their one usage line and exit 2;
 * --help prints the usage and exits 0; the inputs load in order, a failure names its file
 * and leaves what loaded to cli_args_release. Error lines are read back from stderr.
 * Also cli_print_wrapped(), the 80-column wrap of the commands' summaries. */
#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "clock.h"
#include "../tap.h"

static char errbuf[4096];
static int usage_calls;

static void usage(FILE *f)
{
	(void)f;
	usage_calls++;
}

struct own {
	int foo;
	const char *bar;
};

static int own_option(void *ctx, int ch, const char *arg)
{
	struct own *o = ctx;

	switch (ch) {
	case 'f': o->foo++; return 0;
	case 'b':
		if (strcmp(arg, "bad") == 0)
			return cli_usage_error("t", "--bar: '%s' is refused", arg);
		o->bar = arg;
		return 0;
	default: return EXIT_INPUT;
	}
}

static const struct option own_options[] = {
	{ "foo", no_argument, NULL, 'f' },
	{ "bar", required_argument, NULL, 'b' },
	{ NULL, 0, NULL, 0 },
};

static const struct cli_args_spec full = {
	"t", CLI_IN_MODEL | CLI_IN_CLUSTER | CLI_IN_MICROBATCHES | CLI_IN_LAYOUT | CLI_IN_COMM | CLI_IN_OUTPUT |
	CLI_IN_JSON | CLI_IN_RUNTIME, "o:jh", own_options, own_option, usage,
};
static const struct cli_args_spec plan_only = { "t", CLI_IN_PLAN, "h", own_options, own_option, usage };

/* stderr into a temporary file until capture_end(), which leaves it in errbuf (without
 * the trailing newlines) and returns its length. */
static FILE *cap_file;
static int cap_saved;

static void capture_begin(void)
{
	cap_file = tmpfile();
	fflush(stderr);
	cap_saved = dup(2);
	dup2(fileno(cap_file), 2);
}

static size_t capture_end(void)
{
	size_t n;

	fflush(stderr);
	dup2(cap_saved, 2);
	close(cap_saved);
	rewind(cap_file);
	n = fread(errbuf, 1, sizeof(errbuf) - 1, cap_file);
	errbuf[n] = '\0';
	fclose(cap_file);
	while (n && errbuf[n - 1] == '\n')
		errbuf[--n] = '\0';
	return n;
}

/* Parses the NULL-terminated words (after the command name) with spec; stderr into errbuf
 * (its last line, without the newline). */
static int parse(const struct cli_args_spec *spec, struct own *o, struct cli_args *a, ...)
{
	char *argv[32];
	int argc = 0, rc;
	va_list ap;

	argv[argc++] = (char *)"t";
	va_start(ap, a);
	for (char *w; (w = va_arg(ap, char *)) != NULL && argc < 31;)
		argv[argc++] = w;
	va_end(ap);
	argv[argc] = NULL;
	memset(o, 0, sizeof(*o));
	capture_begin();
	rc = cli_args_parse(spec, argc, argv, o, a);
	capture_end();
	return rc;
}

static void test_parse(void)
{
	struct cli_args a;
	struct own o;
	int rc;

	rc = parse(&full, &o, &a, "--model", "m1", "--cluster", "c1", "--microbatches", "8", "--tp", "2", "--zero", "1",
	           "--comm", "blocking", "-o", "out", "--json", "--runtime", "r1", "--foo", "--bar", "x", "--foo", NULL);
	is_int(rc, CLI_ARGS_GO, "every declared option parses: go on");
	is_str(a.model_arg, "m1", "--model kept");
	is_str(a.cluster_arg, "c1", "--cluster kept");
	is_int(a.microbatches, 8, "--microbatches kept");
	is_int(a.par.tp, 2, "--tp into the layout options");
	is_int(a.par.zero, 2, "--zero 1 kept as given + 1 (0: not given)");
	is_int(a.par.recompute, -1, "--recompute not given");
	is_str(a.comm_name, "blocking", "--comm kept by name");
	is_int(a.comm, PLAN_COMM_BLOCKING, "and as the enum");
	is_str(a.out, "out", "-o kept");
	ok(a.json, "--json set");
	is_str(a.runtime_arg, "r1", "--runtime kept");
	is_int(o.foo, 2, "the command's own flag reached its callback each time");
	is_str(o.bar, "x", "the command's own value too");
	ok(!a.have_model && !a.have_cluster && !a.have_plan, "parsing loads nothing");
	is_str(errbuf, "", "and prints nothing");

	rc = parse(&plan_only, &o, &a, "--cluster", "c1", "p.json", NULL);
	is_int(rc, EXIT_INPUT, "an option of an input the command does not declare is refused");
	is_str(errbuf, "octopipe t: unknown option '--cluster' (see 'octopipe t --help')", "as unknown, in one line");
	rc = parse(&full, &o, &a, "--microbatches", "0", NULL);
	is_int(rc, EXIT_INPUT, "--microbatches 0 exits 2");
	is_str(errbuf, "octopipe t: --microbatches: '0' is not an integer in [1, 1000000] (see 'octopipe t --help')",
	       "naming the range");
	rc = parse(&full, &o, &a, "--comm", "sometimes", NULL);
	is_int(rc, EXIT_INPUT, "--comm of another word exits 2");
	is_str(errbuf, "octopipe t: --comm: 'sometimes' is not overlap or blocking (see 'octopipe t --help')",
	       "naming the two");
	rc = parse(&full, &o, &a, "--tp", "0", NULL);
	is_int(rc, EXIT_INPUT, "a bad layout degree exits 2");
	rc = parse(&full, &o, &a, "--bar", "bad", "--foo", NULL);
	is_int(rc, EXIT_INPUT, "the command's own refusal stops the parse with its code");
	is_int(o.foo, 0, "before the options after it");
	is_str(errbuf, "octopipe t: --bar: 'bad' is refused (see 'octopipe t --help')", "with its line alone");
	rc = parse(&full, &o, &a, "-o", "", NULL);
	is_str(errbuf, "octopipe t: option '--output' needs a value, not an empty string (see 'octopipe t --help')",
	       "an empty -o is named by its long name, as before");
	usage_calls = 0;
	rc = parse(&full, &o, &a, "--foo", "--help", "--bar", "bad", NULL);
	is_int(rc, EXIT_OK, "--help exits 0");
	is_int(usage_calls, 1, "after printing the usage once");
	is_str(errbuf, "", "and nothing after it is parsed");
}

static void test_plan_operand(void)
{
	struct cli_args a;
	struct own o;

	is_int(parse(&plan_only, &o, &a, NULL), EXIT_INPUT, "CLI_IN_PLAN without a plan exits 2");
	is_str(errbuf, "octopipe t: no plan given (see 'octopipe t --help')", "no plan given");
	is_int(parse(&plan_only, &o, &a, "a.json", "b.json", NULL), EXIT_INPUT, "two plans exit 2");
	is_str(errbuf, "octopipe t: one plan at a time (see 'octopipe t --help')", "one plan at a time");
	is_int(parse(&plan_only, &o, &a, "--foo", "a.json", NULL), CLI_ARGS_GO, "one plan: go on");
	is_str(a.plan_arg, "a.json", "the operand is the plan");
	is_int(o.foo, 1, "options before it still parsed");
}

static void test_load(void)
{
	const char *top = getenv("top_srcdir") ? getenv("top_srcdir") : ABS_TOP_SRCDIR;
	char model[4096], missing[4096];
	struct cli_args a;
	struct own o;
	int rc;
	size_t n;

	snprintf(model, sizeof(model), "%s/samples/models/gpt-13b.json", top);
	snprintf(missing, sizeof(missing), "%s/samples/clusters/no-such-cluster.json", top);
	is_int(parse(&full, &o, &a, "--model", model, "--cluster", missing, NULL), CLI_ARGS_GO, "parsed");
	capture_begin();
	rc = cli_args_load(&a, CLI_IN_MODEL | CLI_IN_CLUSTER | CLI_IN_RUNTIME);
	n = capture_end();
	is_int(rc, EXIT_INPUT, "a missing cluster file exits 2");
	ok(n > strlen(missing) && strncmp(errbuf, missing, strlen(missing)) == 0 && !strchr(errbuf, '\n'),
	   "in one line that starts with its path");
	ok(a.have_model, "the model before it is loaded");
	is_str(a.model_path, model, "from the path given");
	ok(a.model.nlayers > 0, "with its layers");
	ok(!a.have_cluster && !a.have_runtime, "the cluster is not, nor the runtime after it");
	cli_args_release(&a);
	ok(!a.have_model, "release lets go of the model");
	is_int(cli_args_load(&a, CLI_IN_RUNTIME), EXIT_OK, "no --runtime: the default runtime loads");
	ok(a.have_runtime, "and is held");
	is_int(cli_args_load(&a, CLI_IN_PLAN), EXIT_OK, "no plan given: nothing to load is no error");
	ok(!a.have_plan, "and no plan is held");
	cli_args_release(&a);
}

/* cli_print_wrapped() into a buffer */
static const char *wrapped(const char *text, int indent)
{
	static char buf[2048];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	if (!f)
		return "";
	cli_print_wrapped(f, text, indent);
	fclose(f);
	return buf;
}

static int widest(const char *s)
{
	int w = 0, col = 0;

	for (; *s; s++) {
		col = *s == '\n' ? 0 : col + 1;
		w = col > w ? col : w;
	}
	return w;
}

static void test_wrap(void)
{
	static const char layout[] = "layout: pp 1 x tp 1 x dp 16 (ep 8, ZeRO 1, recompute none, micro-batch 2), "
	                             "1 microbatch a replica";
	char longword[200];
	const char *got;

	is_str(wrapped("short line", 8), "short line\n", "a line that fits is printed as it is");
	is_str(wrapped("  kept\n        indented", 8), "  kept\n        indented\n",
	       "a line's own leading spaces and the text's newlines are kept");
	got = wrapped(layout, 8);
	is_str(got, "layout: pp 1 x tp 1 x dp 16 (ep 8, ZeRO 1, recompute none, micro-batch 2),\n"
	            "        1 microbatch a replica\n", "breaks after the clause, not inside the parentheses");
	got = wrapped("model x on y at pp 1 x tp 1 x dp 16 (ep 8, ZeRO 1, fp32 grads, recompute selective, "
	              "micro-batch 2), 1 microbatch per replica; lower bound 1 ms, tight bound 1 ms", 8);
	ok(widest(got) <= 80, "a long parenthesis moves to its own line (%d columns)", widest(got));
	ok(strstr(got, "\n        (ep 8, ZeRO 1, fp32 grads, recompute selective, micro-batch 2),\n") != NULL,
	   "the parenthesis whole on one line");
	memset(longword, 'x', sizeof(longword) - 1);
	longword[sizeof(longword) - 1] = 0;
	got = wrapped(longword, 8);
	is_int((int)strlen(got), (int)sizeof(longword), "a word longer than the line is printed whole");
	ok(widest(wrapped("a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j k l m n o p "
	                  "q r s t u v w x y z", 4)) <= 80, "words wrap at spaces within 80 columns");
}

/* --budget 0.2 promises 0.32 s (1.1 B + 0.1); reading may take 0.6 of that (0.19 s). Once
 * the layout search found a layout (it may run to that give-up time, or past it on a
 * loaded machine), only the two simulations left must still fit: 16 x 16 take ~1 ms. */
static void test_budget(void)
{
	double now = clock_now_s();
	int rc;

	capture_begin();
	rc = cli_budget_holds("tune", 0.2, now - 0.25, 0, 16, 16);
	capture_end();
	is_int(rc, 2, "before the search: reading took 0.25 s of --budget 0.2: refused");
	ok(strstr(errbuf, "reading the model and the cluster took 0.2") != NULL, "saying what took it: %s", errbuf);
	capture_begin();
	rc = cli_budget_holds_after_search("tune", 0.2, clock_now_s() - 0.21, 16, 16);
	capture_end();
	is_int(rc, 0, "after a search that ran 0.21 s (past 0.19): the simulations left still fit 0.32 s");
	is_str(errbuf, "", "and nothing said");
	capture_begin();
	rc = cli_budget_holds_after_search("tune", 0.2, now - 0.4, 16, 16);
	capture_end();
	is_int(rc, 2, "after a search that ran 0.4 s: past 0.32 s, refused");
	ok(strstr(errbuf, "the layout search took 0.4") != NULL, "naming the search, not the reading: %s", errbuf);
	capture_begin();
	rc = cli_budget_holds_after_search("tune", 0.2, now - 0.1, 256, 2000);
	capture_end();
	is_int(rc, 2, "256 stages x 2000 microbatches (~2 s to simulate twice) cannot fit 0.32 s");
	ok(strstr(errbuf, "simulating 256 stages x 2000 microbatches") != NULL, "saying so: %s", errbuf);
	is_int(cli_budget_holds_after_search("tune", 0, now - 100, 256, 2000), 0, "no budget: nothing to hold");
}

int main(void)
{
	test_budget();
	test_wrap();
	test_parse();
	test_plan_operand();
	test_load();
	return tap_done();
}
