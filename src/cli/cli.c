/*
 * cli — the command table and helpers shared by the subcommands (see cli.h).
 */
#include "config.h"
#include "cli.h"
#include "runtime.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bounds.h"
#include "clock.h"
#include "cluster.h"
#include "datadir.h"
#include "doc.h"
#include "fileio.h"
#include "json.h"
#include "model.h"
#include "layout_json.h"
#include "parallel.h"
#include "plan.h"
#include "sim.h"

/* Writes text to stderr with control characters escaped (see strbuf_add_printable). */
static void put_printable(const char *text, size_t len, bool one_line)
{
	struct strbuf sb = STRBUF_INIT;

	/* one line: a newline inside it (a file name holding one) is escaped, its end stays */
	if (one_line && len > 0 && text[len - 1] == '\n') {
		strbuf_add_printable(&sb, text, len - 1, false);
		strbuf_addch(&sb, '\n');
	} else {
		strbuf_add_printable(&sb, text, len, !one_line);
	}
	fputs(strbuf_failed(&sb) ? "octopipe: out of host memory\n" : sb.buf, stderr);
	strbuf_release(&sb);
}

void cli_verr(const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	put_printable(sb.buf, sb.len, false);
	strbuf_release(&sb);
}

const char *cli_name(const char *s)
{
	static char ring[4][CLI_NAME_MAX + 8];
	static int next;
	struct strbuf sb = STRBUF_INIT;
	char *out = ring[next];

	next = (next + 1) % 4;
	if (!s)
		return "(null)";
	strbuf_add_printable(&sb, s, strlen(s), false);
	if (strbuf_failed(&sb))
		snprintf(out, CLI_NAME_MAX, "(out of host memory)");
	else if (sb.len > CLI_NAME_MAX)
		snprintf(out, CLI_NAME_MAX + 8, "%.*s...%s", CLI_NAME_MAX / 2 - 2, sb.buf,
		         sb.buf + sb.len - (CLI_NAME_MAX / 2 - 2));
	else
		memcpy(out, sb.buf, sb.len + 1);
	strbuf_release(&sb);
	return out;
}

void cli_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verr(fmt, ap);
	va_end(ap);
}

int cli_report(const struct err *e)
{
	const char *m = e->msg[0] ? e->msg : "unknown error";
	size_t n = strlen(m);
	char *line = malloc(n + 2);

	/* an error is one line, whatever a name in it holds */
	if (line) {
		memcpy(line, m, n);
		memcpy(line + n, "\n", 2);
		put_printable(line, n + 1, true);
		free(line);
	} else {
		cli_err("%s\n", m);
	}
	switch (e->cls) {
	case ERR_INPUT: return EXIT_INPUT;
	case ERR_INFEASIBLE: return EXIT_INFEASIBLE;
	default: return EXIT_RUNTIME;
	}
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	strbuf_addf(&sb, "octopipe %s: ", cmd);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strbuf_addf(&sb, " (see 'octopipe %s --help')", cmd);
	/* one line, even when an argument holds a newline */
	for (size_t i = 0; i < sb.len; i++)
		if (sb.buf[i] == '\n')
			sb.buf[i] = ' ';
	strbuf_addch(&sb, '\n');
	put_printable(sb.buf, sb.len, true);
	strbuf_release(&sb);
	return EXIT_INPUT;
}

/* The option at argv[i] as the user wrote it, without any "=value". */
static void option_name(char *out, size_t outsz, const char *arg)
{
	size_t n = strcspn(arg, "=");

	snprintf(out, outsz, "%.*s", (int)(n < 200 ? n : 200), arg);
}

/* Whether option o (NULL: a short option with no long name) takes free text, where an
 * empty value or one that starts with '-' means something. */
static bool free_text(const struct option *o)
{
	static const char *const names[] = { "keys", "launcher", NULL };

	for (int i = 0; o && names[i]; i++)
		if (strcmp(o->name, names[i]) == 0)
			return true;
	return false;
}

/* Whether a value looks like an option rather than a value: it starts with '-' and is not
 * "-" alone (standard input or output), a number ("-1", "-0.5", "-inf") or a list that
 * starts with one ("-1,2": the option's own check judges those). */
static bool looks_like_option(const char *v)
{
	char *end;

	if (v[0] != '-' || !v[1] || isdigit((unsigned char)v[1]) || v[1] == '.')
		return false;
	strtod(v, &end);
	return *end != '\0';
}

/* The value getopt_long gave option ch (optarg), refused with one usage line when it is
 * empty (an unset shell variable, -o "") or when it is the next option, taken for the value
 * (`--steps -o out.json` read "-o" as the steps file). A value joined to its option
 * (--steps=-x, -o-x) is what was meant. Returns ch, or '?'. */
static int check_value(const char *cmd, int ch, int longindex, const struct option *longopts, char **argv)
{
	/* the option as given (two names may share a value: --budget, --time-budget) */
	const struct option *o = longindex >= 0 ? &longopts[longindex] : longopts;
	bool own_word = optind >= 2 && optarg == argv[optind - 1];
	char name[256], joined[300];

	while (o && o->name && o->val != ch)
		o++;
	if (o && !o->name)
		o = NULL;
	if (free_text(o) || (optarg[0] && !(own_word && looks_like_option(optarg))))
		return ch;
	if (o)
		snprintf(name, sizeof(name), "--%s", o->name);
	else
		snprintf(name, sizeof(name), "-%c", ch);
	snprintf(joined, sizeof(joined), o ? "%s=VALUE" : "%sVALUE", name);
	if (!optarg[0])
		cli_usage_error(cmd, "option '%s' needs a value, not an empty string", name);
	else
		cli_usage_error(cmd, "option '%s' needs a value, not the option '%s'; %s gives a value that starts "
		                "with '-'", name, optarg, joined);
	return '?';
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts)
{
	char spec[128], name[256];
	const char *arg;
	size_t skip = (shortopts[0] == '+' || shortopts[0] == '-') ? 1 : 0;
	int ch, matches = 0, longindex = -1;
	const struct option *hit = NULL;

	/* ':' first: getopt reports a missing value as ':' and prints nothing itself, so the
	 * user gets one line from us, naming the option and what is wrong with it */
	snprintf(spec, sizeof(spec), "%.*s:%s", (int)skip, shortopts, shortopts + skip);
	opterr = 0;
	ch = getopt_long(argc, argv, spec, longopts, &longindex);
	if (ch == -1)
		return -1;
	arg = (optind >= 1 && optind <= argc) ? argv[optind - 1] : "";
	if (ch == ':' || ch == '?') {
		if (strncmp(arg, "--", 2) != 0) {
			/* a short option: optopt is the letter */
			if (ch == ':')
				cli_usage_error(cmd, "option '-%c' needs a value", optopt);
			else if (optopt && isprint(optopt))
				cli_usage_error(cmd, "unknown option '-%c'", optopt);
			else
				cli_usage_error(cmd, "unknown option '%s'", arg);
			return '?';
		}
		option_name(name, sizeof(name), arg);
		for (const struct option *o = longopts; o && o->name; o++) {
			size_t n = strlen(name + 2);

			if (strncmp(o->name, name + 2, n) == 0) {
				matches++;
				if (!hit || strlen(o->name) == n)
					hit = o;
			}
		}
		if (hit && (matches == 1 || strlen(hit->name) == strlen(name + 2)))
			snprintf(name, sizeof(name), "--%s", hit->name);
		else
			hit = NULL;
		if (ch == ':')
			cli_usage_error(cmd, "option '%s' needs a value", name);
		else if (hit && hit->has_arg == no_argument && strchr(arg, '='))
			cli_usage_error(cmd, "option '%s' takes no value", name);
		else if (matches > 1 && !hit)
			cli_usage_error(cmd, "option '%s' is ambiguous", name);
		else
			cli_usage_error(cmd, "unknown option '%s'", name);
		return '?';
	}
	return optarg ? check_value(cmd, ch, longindex, longopts, argv) : ch;
}

int cli_number(const char *cmd, const char *opt, const char *value, double lo, double hi, bool lo_open,
               double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	/* written as "not inside" so that NaN, which compares false, is refused */
	if (end == value || *end || errno == ERANGE || !(lo_open ? v > lo : v >= lo) || !(v <= hi)) {
		cli_usage_error(cmd, "%s: '%s' is not a number in %c%g, %g]", opt, value, lo_open ? '(' : '[', lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

const char *cli_resolve(const char *arg, const char *subdir)
{
	static char buf[4096];

	datadir_resolve(arg, subdir, buf, sizeof(buf));
	return buf;
}

int cli_load_model(const char *arg, struct model *m, char *path_out)
{
	struct err e = ERR_INIT;

	snprintf(path_out, 4096, "%s", cli_resolve(arg, "samples/models"));
	if (model_load(m, path_out, &e) < 0)
		return cli_report(&e);
	return 0;
}

int cli_load_cluster(const char *arg, struct cluster *c, char *path_out)
{
	struct err e = ERR_INIT;

	snprintf(path_out, 4096, "%s", cli_resolve(arg, "samples/clusters"));
	if (cluster_load(c, path_out, &e) < 0)
		return cli_report(&e);
	return 0;
}

int cli_load_runtime(const char *arg, struct runtime *rt)
{
	struct err e = ERR_INIT;

	if (runtime_load(rt, cli_resolve(arg ? arg : RUNTIME_DEFAULT, "samples/runtimes"), &e) < 0)
		return cli_report(&e);
	return 0;
}

void cli_apply_runtime(const struct runtime *rt, struct cluster *c, struct cost_opts *o)
{
	/* a calibration of this machine is a measurement: it wins over the runtime's figures */
	if (!c->hw.eff_given)
		runtime_hardware(rt, c->gpu, &c->hw);
	o->style = rt->style;
}

int cli_int(const char *cmd, const char *opt, const char *value, int lo, int hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (end == value || *end || errno == ERANGE || v < lo || v > hi) {
		cli_usage_error(cmd, "%s: '%s' is not an integer in [%d, %d]", opt, value, lo, hi);
		return -1;
	}
	return (int)v;
}

int cli_positive(const char *cmd, const char *opt, const char *value)
{
	return cli_int(cmd, opt, value, 1, 1000000);
}

void cli_par_init(struct cli_par *cp)
{
	memset(cp, 0, sizeof(*cp));
	cp->recompute = -1;
}

int cli_par_option(const char *cmd, int ch, const char *arg, struct cli_par *cp)
{
	enum recompute r;

	switch (ch) {
	case CLI_PAR_TP: return (cp->tp = cli_int(cmd, "--tp", arg, 1, PARALLEL_MAX_DEGREE)) < 0 ? -1 : 1;
	case CLI_PAR_DP: return (cp->dp = cli_int(cmd, "--dp", arg, 1, PARALLEL_MAX_DEGREE)) < 0 ? -1 : 1;
	case CLI_PAR_EP: return (cp->ep = cli_int(cmd, "--ep", arg, 1, PARALLEL_MAX_DEGREE)) < 0 ? -1 : 1;
	case CLI_PAR_ZERO:
		if ((cp->zero = cli_int(cmd, "--zero", arg, 0, 3)) < 0)
			return -1;
		cp->zero += 1;  /* 0 means not given */
		return 1;
	case CLI_PAR_RECOMPUTE:
		if (recompute_from_name(arg, &r) < 0) {
			cli_usage_error(cmd, "--recompute: '%s' is not none, selective or full", arg);
			return -1;
		}
		cp->recompute = (int)r;
		return 1;
	case CLI_PAR_MBS:
		if (strcmp(arg, "auto") == 0) {
			cp->mbs = -1;
			return 1;
		}
		return (cp->mbs = cli_int(cmd, "--micro-batch-size", arg, 1, OCTO_MAX_MICRO_BATCH)) < 0 ? -1 : 1;
	case CLI_PAR_GRADS: {
		bool fp32;

		if (parallel_grads_from_name(arg, &fp32) < 0) {
			cli_usage_error(cmd, "--grads: '%s' is not bf16 or fp32", arg);
			return -1;
		}
		cp->grads = fp32 ? 2 : 1;
		return 1;
	}
	default:
		return 0;
	}
}

bool cli_par_given(const struct cli_par *cp)
{
	return cp->tp || cp->dp || cp->ep || cp->zero || cp->grads || cp->mbs;
}

void cli_par_layout(const struct cli_par *cp, const struct parallel *base, const struct cluster *c, int pp,
                    struct parallel *out)
{
	struct parallel l;

	if (base)
		l = *base;
	else
		parallel_default(&l, 0);
	if (cp->tp)
		l.tp = cp->tp;
	if (cp->dp)
		l.dp = cp->dp;
	if (cp->ep)
		l.ep = cp->ep;
	if (cp->zero)
		l.zero = cp->zero - 1;
	if (cp->grads)
		l.fp32_grads = cp->grads == 2;
	if (cp->mbs > 0)
		l.micro_batch = cp->mbs;
	l.pp = pp > 0 ? pp : c->devices / (l.tp * l.dp);
	if (l.pp < 1)
		l.pp = 1;  /* parallel_check() then says why it does not fit */
	*out = l;
}

int cli_pick_layout(const char *cmd, const struct cli_par *cp, bool layout_pp, int global_batch,
                    const struct model *m, const struct cluster *c, int *microbatches,
                    const struct layout_constraints *base, struct tune_layout *out)
{
	struct layout_constraints k = { .pp = 0, .tp = cp->tp, .dp = cp->dp, .ep = cp->ep,
	                                .zero = cp->zero ? cp->zero - 1 : -1, .recompute = cp->recompute,
	                                .fp32_grads = cp->grads == 2 };
	struct err e = ERR_INIT;

	memset(out, 0, sizeof(*out));
	if (base) {
		k.stop = base->stop;
		k.deadline_s = base->deadline_s;
		k.give_up_s = base->give_up_s;
		k.accept = base->accept;
		k.accept_arg = base->accept_arg;
		k.schedules = base->schedules;
		k.block_recompute = base->block_recompute;
		k.zero_where_dp = base->zero_where_dp;
	}
	if (layout_pp) {
		if (cli_par_given(cp) || cp->recompute >= 0 || global_batch)
			return cli_usage_error(cmd, "--layout pp is pure pipeline parallelism: no layout options with it");
		return 0;
	}
	if (cp->recompute > RECOMPUTE_NONE && model_recomputes(m))
		return cli_usage_error(cmd, "--recompute %s: the model's layer table already recomputes every layer (made "
		                       "with octopipe cost --recompute)", recompute_name((enum recompute)cp->recompute));
	/* the micro-batch size is searched unless given (a measured table has only its own) */
	k.micro_batch = cp->mbs ? cp->mbs : -1;
	/* the sequences of a microbatch the batch options count in */
	long size = cp->mbs > 0 ? cp->mbs : m->micro_batch_size;

	if (global_batch) {
		if (global_batch % m->micro_batch_size)
			return cli_usage_error(cmd, "--global-batch %d is not a multiple of the model's micro-batch size %ld",
			                       global_batch, m->micro_batch_size);
		k.global_mb = (int)(global_batch / m->micro_batch_size);
		if (global_batch % size)
			return cli_usage_error(cmd, "--global-batch %d is not a multiple of --micro-batch-size %ld",
			                       global_batch, size);
		if (cp->dp && (global_batch / size) % cp->dp)
			return cli_usage_error(cmd, "--global-batch %d (%ld microbatches of %ld sequence%s) does not split "
			                       "evenly over --dp %d replicas", global_batch, global_batch / size, size,
			                       size == 1 ? "" : "s", cp->dp);
	} else {
		/* --microbatches of --micro-batch-size sequences each (else the table's own) */
		long long seqs = (long long)*microbatches * (cp->dp ? cp->dp : 1) * size;

		if (seqs / m->micro_batch_size > 1000000) {
			char of[96] = "";

			if (size != m->micro_batch_size)
				snprintf(of, sizeof(of), " of %ld sequences (%lld of the table's %ld)", size, seqs / m->micro_batch_size,
				         m->micro_batch_size);
			return cli_usage_error(cmd, "--microbatches %d x --dp %d = %lld microbatches%s in the global batch, more "
			                       "than 1000000", *microbatches, cp->dp ? cp->dp : 1, seqs / size, of);
		}
		if (seqs % m->micro_batch_size)
			return cli_usage_error(cmd, "--micro-batch-size %ld: the global batch of %lld sequences is not a "
			                       "multiple of the model's micro-batch size %ld", cp->mbs, seqs,
			                       m->micro_batch_size);
		k.global_mb = (int)(seqs / m->micro_batch_size);
	}
	if (tune_layout_pick(m, c, &k, out, &e) < 0) {
		tune_layout_release(out);
		if (e.cls == ERR_RUNTIME) {
			cli_err("octopipe %s: %s\n", cmd, e.msg);
			return EXIT_RUNTIME;
		}
		/* the degrees the options hold fixed allow no layout: their usage error */
		if (e.cls == ERR_INPUT)
			return cli_usage_error(cmd, "%s", e.msg);
		cli_err("octopipe %s: %s\n", cmd, e.msg);
		return EXIT_INFEASIBLE;
	}
	*microbatches = out->lc.microbatches;
	return 0;
}

int cli_budget_read_holds(const char *cmd, double B, const char *model)
{
	struct stat st;
	double need;

	if (B <= 0 || stat(cli_resolve(model, "samples/models"), &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	need = (double)st.st_size / CLI_READ_BYTES_PER_S;
	if (need <= TUNE_LAYOUTS_GIVE_UP_SHARE * tune_budget_limit(B))
		return 0;
	cli_err("octopipe %s: --budget %g s cannot hold: reading the model (%.1f MB) takes about %.1f s; give --budget "
	        "%.0f or more\n", cmd, B, st.st_size / 1e6, need, ceil(2 * need / TUNE_LAYOUTS_GIVE_UP_SHARE));
	return EXIT_INPUT;
}

/* Seconds `sims` simulations of S stages x M microbatches take, about (3 ops a stage a
 * microbatch at TUNE_SIM_OPS_PER_S). */
static double sims_seconds(int sims, int S, int M)
{
	return sims * 3.0 * S * M / TUNE_SIM_OPS_PER_S;
}

int cli_budget_holds(const char *cmd, double B, double t0, int sims, int S, int M)
{
	double spent = clock_now_s() - t0, need = sims_seconds(sims, S, M), lim = tune_budget_limit(B);

	if (B <= 0)
		return 0;
	/* the cheapest answer cannot come in time: said now, not after the budget */
	if (spent > TUNE_LAYOUTS_GIVE_UP_SHARE * lim) {
		cli_err("octopipe %s: --budget %g s cannot hold: reading the model and the cluster took %.2f s; give "
		        "--budget %.0f or more\n", cmd, B, spent, ceil(2 * spent / TUNE_LAYOUTS_GIVE_UP_SHARE));
		return EXIT_INPUT;
	}
	if (S > 0 && spent + need > (1 - TUNE_LAYOUTS_SEARCH_SHARE) * lim) {
		cli_err("octopipe %s: --budget %g s cannot hold: simulating %d stages x %d microbatches %s takes about "
		        "%.1f s on one core; give --budget %.0f or more, or fewer microbatches\n", cmd, B, S, M,
		        sims > 1 ? "(the best baseline, then the result)" : "once", need,
		        ceil((need + spent) / (1 - TUNE_LAYOUTS_SEARCH_SHARE)));
		return EXIT_INPUT;
	}
	return 0;
}

int cli_budget_holds_after_search(const char *cmd, double B, double t0, int S, int M)
{
	double spent = clock_now_s() - t0, need = sims_seconds(2, S, M), lim = tune_budget_limit(B);

	if (B <= 0 || spent + need <= lim)
		return 0;
	cli_err("octopipe %s: --budget %g s cannot hold: reading the inputs and the layout search took %.2f s, and "
	        "simulating %d stages x %d microbatches (the best baseline, then the result) takes about %.1f s "
	        "more; give --budget %.0f or more\n", cmd, B, spent, S, M, need, ceil(2 * (spent + need)));
	return EXIT_INPUT;
}

/* Where to end a piece of at most room characters of text (len of them left): after the
 * last ", ", "; ", ": " or " (" within it outside parentheses, else at its last space outside
 * them, else at its last space, else at the first space after it (a word longer than the
 * room). Returns the length to print before the break (the separator kept, the space
 * dropped); len when the rest fits. */
static size_t wrap_at(const char *text, size_t len, size_t room)
{
	size_t clause = 0, space = 0, any = 0;
	int depth = 0;

	if (len <= room)
		return len;
	for (size_t i = 0; i <= room && i < len; i++) {
		if (text[i] == '(')
			depth++;
		else if (text[i] == ')' && depth > 0)
			depth--;
		if (text[i] != ' ' || i == 0)
			continue;
		any = i;
		if (depth > 0)
			continue;
		space = i;
		if (text[i - 1] == ',' || text[i - 1] == ';' || text[i - 1] == ':' || text[i + 1] == '(')
			clause = i;
	}
	if (clause > room / 3)
		return clause;
	if (space)
		return space;
	if (any)
		return any;
	for (size_t i = room; i < len; i++)
		if (text[i] == ' ')
			return i;
	return len;
}

void cli_print_wrapped(FILE *f, const char *text, int indent)
{
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text), lead = 0, col;

		while (lead < len && text[lead] == ' ')
			lead++;
		fwrite(text, 1, lead, f);
		col = lead;
		text += lead;
		len -= lead;
		while (len > 0) {
			size_t room = col < CLI_WIDTH ? CLI_WIDTH - col : 1, n = wrap_at(text, len, room);

			fwrite(text, 1, n, f);
			text += n;
			len -= n;
			if (len == 0)
				break;
			while (len > 0 && *text == ' ') {
				text++;
				len--;
			}
			fprintf(f, "\n%*s", indent, "");
			col = (size_t)indent;
		}
		fputc('\n', f);
		text += nl ? 1 : 0;
	}
}

void cli_layout_words(struct strbuf *sb, const struct parallel *par, enum recompute rc)
{
	strbuf_addf(sb, "pp %d x tp %d x dp %d (", par->pp, par->tp, par->dp);
	if (par->ep > 1)
		strbuf_addf(sb, "ep %d, ", par->ep);
	strbuf_addf(sb, "ZeRO %d%s, recompute %s", par->zero, par->fp32_grads ? ", fp32 grads" : "", recompute_name(rc));
	if (par->micro_batch > 0)
		strbuf_addf(sb, ", micro-batch %ld", par->micro_batch);
	strbuf_addch(sb, ')');
}

int cli_set_refs(struct plan *p, const char *model_path, const char *cluster_path, const char *out_path)
{
	char dir[4096], rel[4096];

	fileio_dirname(out_path, dir, sizeof(dir));
	free(p->model_ref);
	free(p->cluster_ref);
	p->model_ref = p->cluster_ref = NULL;
	if (fileio_relative(dir, model_path, rel, sizeof(rel)) < 0 || !(p->model_ref = strdup(rel)))
		return -1;
	if (fileio_relative(dir, cluster_path, rel, sizeof(rel)) < 0 || !(p->cluster_ref = strdup(rel)))
		return -1;
	return 0;
}

int cli_one_stdout(const char *cmd, const char *const *names, const char *const *outs, int n)
{
	int first = -1;

	for (int i = 0; i < n; i++) {
		if (!outs[i] || strcmp(outs[i], "-") != 0)
			continue;
		if (first >= 0)
			return cli_usage_error(cmd, "%s and %s would both write to standard output: send one to a file",
			                       names[first], names[i]);
		first = i;
	}
	/* two files that are one: the second write would replace the first, silently */
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n && outs[i] && strcmp(outs[i], "-") != 0; j++)
			if (outs[j] && strcmp(outs[j], "-") != 0 && fileio_same_output(outs[i], outs[j]))
				return cli_usage_error(cmd, "%.*s and %.*s name the same file ('%s'): give each its own",
				                       (int)strcspn(names[i], " "), names[i], (int)strcspn(names[j], " "),
				                       names[j], outs[j]);
	return EXIT_OK;
}

int cli_refuse_input(const char *cmd, const char *out, const char *const *inputs, int n)
{
	int i = strcmp(out, "-") != 0 ? fileio_input_index(out, inputs, n) : -1;

	if (i >= 0) {
		cli_err("octopipe %s: will not write '%s': it is one of this command's inputs ('%s')\n", cmd, out,
		        inputs[i]);
		return EXIT_INPUT;
	}
	return EXIT_OK;
}

int cli_write_text(const char *path, const char *text, size_t len)
{
	struct err e = ERR_INIT;

	if (strcmp(path, "-") == 0) {
		cli_put_text(text, len);
		return EXIT_OK;
	}
	if (fileio_write_atomic(path, text, len, &e) < 0)
		return cli_report(&e);
	return EXIT_OK;
}

int cli_write_plan(struct plan *p, const char *out, const char *model_path, const char *cluster_path, bool embed)
{
	struct err e = ERR_INIT;

	if (strcmp(out, "-") == 0)
		return cli_put_json(plan_to_json(p, true), false);
	if (!embed && cli_set_refs(p, model_path, cluster_path, out) < 0) {
		fprintf(stderr, "octopipe: cannot refer to '%s' and '%s' from '%s'\n", model_path, cluster_path, out);
		return EXIT_RUNTIME;
	}
	return plan_save(p, out, embed, &e) < 0 ? cli_report(&e) : EXIT_OK;
}

int cli_write_model(const struct model *m, const char *out)
{
	struct err e = ERR_INIT;

	if (strcmp(out, "-") == 0) {
		cJSON *root = model_to_json(m);
		struct strbuf sb = STRBUF_INIT;
		int rc;

		json_write(&sb, root);
		rc = root ? cli_write_text("-", sb.buf, sb.len) : EXIT_RUNTIME;
		strbuf_release(&sb);
		cJSON_Delete(root);
		return rc;
	}
	return model_save(m, out, &e) < 0 ? cli_report(&e) : EXIT_OK;
}

void cli_oom_line(struct strbuf *sb, const char *path, const struct plan *p, const struct metrics *m)
{
	int d = m->oom[0];
	/* under a layout a device is a pipeline rank of tp x dp GPUs, each with this peak */
	bool rank = p->has_parallel && p->cluster.rep.tp * p->cluster.rep.dp > 1;

	double need = (double)m->dev[d].peak_mem_bytes, have = cluster_usable_bytes(&p->cluster);
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

	fmt_bytes_apart(&a, &b, need, have); /* never "needs 134 GB but has 134 GB" */
	strbuf_addf(sb, "%s: plan infeasible: %s %d needs %s", path, rank ? "pipeline rank" : "device", d,
	            strbuf_failed(&a) ? "?" : a.buf);
	strbuf_addstr(sb, rank ? " per GPU at its peak but has " : " at its peak but has ");
	strbuf_addstr(sb, strbuf_failed(&b) ? "?" : b.buf);
	strbuf_release(&a);
	strbuf_release(&b);
	strbuf_addf(sb, " usable%s", m->noom > 1 ? (rank ? " (other ranks too)" : " (other devices too)") : "");
}

int cli_plan_verdict(const char *path, const struct plan *p, struct strbuf *why)
{
	struct err e = ERR_INIT;
	struct sim s;
	struct sim_opts o;
	struct metrics m;
	int rc = EXIT_OK;

	memset(&s, 0, sizeof(s));
	sim_opts_default(&o);
	if (sim_run(&s, p, &o, &m, &e) < 0) {
		rc = e.cls == ERR_INFEASIBLE ? EXIT_INFEASIBLE : EXIT_RUNTIME;
		if (rc == EXIT_INFEASIBLE)
			strbuf_addf(why, "%s: plan infeasible: %s", path, e.msg);
		else
			strbuf_addf(why, "%s: %s", path, e.msg);
	} else if (m.noom) {
		cli_oom_line(why, path, p, &m);
		rc = EXIT_INFEASIBLE;
	}
	metrics_release(&m);
	sim_release(&s);
	return rc;
}

int cli_put_json(cJSON *root, bool oom)
{
	struct strbuf sb = STRBUF_INIT;

	if (!root || oom) {
		cJSON_Delete(root);
		cli_err("octopipe: out of host memory\n");
		return EXIT_RUNTIME;
	}
	json_write(&sb, root);
	cJSON_Delete(root);
	if (strbuf_failed(&sb)) {
		strbuf_release(&sb);
		cli_err("octopipe: out of host memory\n");
		return EXIT_RUNTIME;
	}
	cli_put_text(sb.buf, sb.len);
	strbuf_release(&sb);
	return EXIT_OK;
}

/* why the first write of cli_put_text failed (0: none did, or stdio gave no reason) */
static int stdout_errno;

void cli_put_text(const char *text, size_t len)
{
	errno = 0;
	if (fwrite(text, 1, len, stdout) != len && errno && !stdout_errno)
		stdout_errno = errno;
}

int cli_stdout_errno(void)
{
	return stdout_errno;
}
