/*
 * octopipe cost — architecture (Hugging Face config.json or octopipe.arch/1) to layer
 * table on a cluster's GPU, with a summary of parameters, FLOPs and the heaviest layers;
 * with --calibrate, fits the cluster's per-class efficiencies to measured profiles first
 * and stores them in its "hardware" section.
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "calibrate.h"
#include "cli.h"
#include "cli/cli_args.h"
#include "cluster.h"
#include "fileio.h"
#include "hfconfig.h"
#include "json.h"
#include "model.h"
#include "parallel.h"
#include "runtime.h"
#include "strbuf.h"

#define MAX_CONFIGS 16
#define HEAVIEST 3

static void usage(FILE *f)
{
	fputs("usage: octopipe cost CONFIG --cluster C [--runtime R] [--seq S]\n"
	      "                     [--micro-batch B] [--tp T] [--recompute] [--name NAME]\n"
	      "                     [--json] [-o MODEL]\n"
	      "       octopipe cost CONFIG... --cluster C --calibrate PROFILE...\n"
	      "                     [--cluster-out FILE]\n"
	      "       octopipe cost CONFIG... --cluster C --predict PROFILE...\n"
	      "\n"
	      "Reads CONFIG, a Hugging Face config.json (model types: llama, mistral, mixtral,\n"
	      "phi3, granite, olmo2, qwen2, qwen2_moe, qwen3, qwen3_moe, qwen3_next, gemma2,\n"
	      "gemma3, gemma3_text, deepseek, deepseek_v2, deepseek_v3, glm4_moe, nemotron_h,\n"
	      "jamba, falcon_h1, gpt_oss, gpt2; another model_type with the standard decoder\n"
	      "fields is priced as a Llama-style decoder, with a warning) or an OctoPipe\n"
	      "architecture file (octopipe.arch/1), and writes its layer table for one GPU of\n"
	      "cluster C: an embedding layer, the decoder layers, MTP modules, and the head\n"
	      "(final norm + LM head + loss). Times are sums over each layer's kernels as\n"
	      "runtime R runs them: (FLOPs / peak + bytes / HBM) / the efficiency of the\n"
	      "kernel's class, and each launch's overhead. The cluster gives the GPU's peak and\n"
	      "bandwidth; the runtime which kernels run and how efficiently (a cluster's\n"
	      "calibrated \"hardware\" efficiencies win over the runtime's). Prints parameters,\n"
	      "FLOPs per token and the heaviest layers.\n"
	      "\n"
	      "  --runtime R       megatron-core (default), torchtitan, hf-eager (the paper's\n"
	      "                    profiling runtime; the default with --calibrate and\n"
	      "                    --predict, whose bundled profiles it measured) or an\n"
	      "                    octopipe.runtime/1 file\n"
	      "  --seq S           sequence length (default: 4096, or the architecture file's)\n"
	      "  --micro-batch B   sequences per microbatch (default 1)\n"
	      "  --tp T            tensor-parallel degree: divides work and weights, adds the\n"
	      "                    all-reduces (and MoE all-to-all) over the intra-node link\n"
	      "  --recompute       full recompute: keep only the layer inputs, redo F in B\n"
	      "  --name NAME       model name (default: MODEL's file name)\n"
	      "  --json            print the summary as JSON\n"
	      "  -o MODEL          write the layer table (octopipe.model/1); '-' for stdout\n"
	      "  --calibrate PROFILE  fit the efficiencies to a measured profile (one per\n"
	      "                    CONFIG, in order; samples/profiles format or a layer table)\n"
	      "                    and save them in the cluster file named by its path (or\n"
	      "                    --cluster-out FILE; needed for a bundled cluster's name)\n"
	      "  --fix NAME[,NAME...]  with --calibrate: hold these parameters at the cluster's\n"
	      "                    values (\"launch\" or a kernel class: gemm, memory, ...),\n"
	      "                    e.g. the launch overhead, which profiles of large kernels\n"
	      "                    cannot determine\n"
	      "  --predict PROFILE like --calibrate, but fits and writes nothing: prints the\n"
	      "                    error per layer kind of the cluster's efficiencies\n", f);
}

static void base_name(const char *path, char *out, size_t n)
{
	const char *s = strrchr(path, '/');
	size_t len;

	s = s ? s + 1 : path;
	len = strlen(s);
	if (len > 5 && strcmp(s + len - 5, ".json") == 0)
		len -= 5;
	snprintf(out, n, "%.*s", (int)len, s);
	/* a model name the reader accepts: no control characters from the file's name */
	for (unsigned char *p = (unsigned char *)out; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '_';
		else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			p[0] = p[1] = '_';
}

/*
 * Keeps what the table was made from in the model ("source": the architecture object,
 * the TP degree, recompute and the hardware efficiencies), so the engine can price the
 * same model at another tensor-parallel degree and the executor can launch its kernels.
 */
static int attach_source(struct model *m, const char *config, const struct cost_opts *o,
                         const struct cluster *c, const struct runtime *rt, struct err *e)
{
	cJSON *arch = json_load_file(config, e);
	int r;

	if (!arch)
		return -1;
	r = model_set_source(m, arch, o, &c->hw, rt->doc, e);
	cJSON_Delete(arch);
	return r;
}

static int print_summary(const struct arch *a, const struct model *m, const struct cost_opts *o,
                          const struct cluster *c, const struct runtime *rt, bool json)
{
	struct arch_totals t;
	int heavy[HEAVIEST], nh = model_heaviest(m, heavy, HEAVIEST);
	struct model_kind_stats tot = model_totals(m);

	arch_totals(a, o->seq, &t);
	if (json) {
		struct jw w = { false };
		cJSON *root = cJSON_CreateObject(), *arr;

		jw_str(&w, root, "name", m->name);
		jw_str(&w, root, "family", a->family);
		jw_num(&w, root, "layers", m->nlayers);
		jw_num(&w, root, "seq_len", (double)o->seq);
		jw_num(&w, root, "micro_batch_size", (double)o->micro_batch);
		jw_num(&w, root, "tp", o->tp);
		jw_str(&w, root, "runtime", rt->name);
		jw_num(&w, root, "params", t.params);
		jw_num(&w, root, "active_params", t.active);
		jw_num(&w, root, "embedding_params", t.embed_params);
		jw_num(&w, root, "head_params", t.head_params);
		jw_num(&w, root, "mtp_params", t.mtp_params);
		jw_num(&w, root, "fwd_flops_per_token", t.flops_per_token);
		jw_num(&w, root, "f_ms", tot.f_ms);
		jw_num(&w, root, "b_ms", tot.b_ms);
		jw_num(&w, root, "w_ms", tot.w_ms);
		jw_str(&w, root, "hardware", c->has_hw ? "cluster" : c->gpu ? "datasheet" : "default");
		arr = jw_arr(&w, root, "heaviest");
		for (int i = 0; i < nh; i++) {
			cJSON *h = jw_push(&w, arr, cJSON_CreateObject());

			jw_num(&w, h, "index", heavy[i]);
			jw_str(&w, h, "kind", m->layers[heavy[i]].kind);
			jw_num(&w, h, "total_ms", layer_total_ms(&m->layers[heavy[i]]));
		}
		return cli_put_json(root, w.oom);
	}
	printf("model %s (%s): %d layers, sequence %ld x micro-batch %ld, tp %d, on %s, runtime %s%s\n",
	       cli_name(m->name), a->family, m->nlayers, o->seq, o->micro_batch, o->tp, c->gpu ? c->gpu : c->name, rt->name,
	       c->hw.eff_given ? " (the cluster's calibrated efficiencies)" : "");
	printf("parameters: %.3f B total, %.3f B active (embedding %.3f B, head %.3f B", t.params / 1e9,
	       t.active / 1e9, t.embed_params / 1e9, t.head_params / 1e9);
	if (t.mtp_params > 0)
		printf(", MTP %.3f B more", t.mtp_params / 1e9);
	printf(")\n");
	printf("forward: %.2f GFLOP per token; per microbatch F %.2f ms, B %.2f ms, W %.2f ms\n",
	       t.flops_per_token / 1e9, tot.f_ms, tot.b_ms, tot.w_ms);
	printf("heaviest layers (F + B + W):\n");
	for (int i = 0; i < nh; i++) {
		const struct layer *l = &m->layers[heavy[i]];

		printf("  %5d  %-16s %9.3f ms  (F %.3f, B %.3f, W %.3f)\n", heavy[i], l->kind,
		       layer_total_ms(l), l->f_ms, l->b_ms, l->w_ms);
	}
	return EXIT_OK;
}

/* Per profile and layer kind: mean absolute error of F and of the full backward under hw. */
static void kind_errors(const struct calib_set *s, const struct hardware *hw, char **profiles, int n,
                        struct jw *w, cJSON *arr)
{
	if (!arr)
		printf("\n%-28s %-28s %6s %8s %8s\n", "profile", "kind", "layers", "F err", "BW err");
	for (int k = 0; k < n; k++)
		for (int i = 0; i < s->n; i++) {
			const struct calib_point *p = &s->pts[i];
			double f, b;
			int first = 1, cnt;

			if (p->profile != k)
				continue;
			for (int j = 0; j < i; j++)
				if (s->pts[j].profile == k && strcmp(s->pts[j].kind, p->kind) == 0)
					first = 0;
			if (!first)
				continue;
			cnt = calibrate_error_kind(s, hw, k, p->kind, &f, &b);
			if (arr) {
				cJSON *item = jw_push(w, arr, cJSON_CreateObject());

				jw_str(w, item, "profile", profiles[k]);
				jw_str(w, item, "kind", p->kind);
				jw_num(w, item, "layers", cnt);
				jw_num(w, item, "f_err_pct", round(f * 100) / 100);
				jw_num(w, item, "bw_err_pct", round(b * 100) / 100);
			} else {
				const char *base = strrchr(profiles[k], '/');

				printf("%-28s %-28s %6d %7.1f%% %7.1f%%\n", base ? base + 1 : profiles[k], p->kind, cnt, f, b);
			}
		}
}

/* --predict: the errors of the cluster's hardware against the profiles, nothing fitted */
static int predict(struct arch *archs, int n, char **profiles, struct cluster *c, const struct cost_opts *o,
                   bool json)
{
	struct calib_set s = { NULL, 0, 0, { false } };
	struct err e = ERR_INIT;
	struct jw w = { false };
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	int rc = EXIT_OK;

	for (int i = 0; i < n; i++)
		if (calibrate_add_profile(&s, &archs[i], &c->hw, o, profiles[i], &e) < 0) {
			calibrate_release(&s);
			cJSON_Delete(root);
			return cli_report(&e);
		}
	if (json && !root)
		w.oom = true;
	kind_errors(&s, &c->hw, profiles, n, &w, json ? jw_arr(&w, root, "kinds") : NULL);
	if (json) {
		/* every measured layer with its work units per parameter (cost_units), so the model
		 * can be studied outside */
		cJSON *pts = jw_arr(&w, root, "points");

		for (int i = 0; i < s.n; i++) {
			const struct calib_point *p = &s.pts[i];
			cJSON *item = jw_push(&w, pts, cJSON_CreateObject()), *fu, *bu;
			double f, b;

			calibrate_predict(&s, &c->hw, i, &f, &b);
			jw_num(&w, item, "profile", p->profile);
			jw_str(&w, item, "kind", p->kind);
			jw_num(&w, item, "f_ms", p->f_ms);
			jw_num(&w, item, "bw_ms", p->bw_ms);
			jw_num(&w, item, "f_pred_ms", f);
			jw_num(&w, item, "bw_pred_ms", b);
			fu = jw_arr(&w, item, "f_units");
			bu = jw_arr(&w, item, "bw_units");
			for (int k = 0; k < HW_NPARAM; k++) {
				jw_push(&w, fu, cJSON_CreateNumber(p->fu[k]));
				jw_push(&w, bu, cJSON_CreateNumber(p->bu[k]));
			}
		}
		rc = cli_put_json(root, w.oom);
	}
	calibrate_release(&s);
	return rc;
}

/* --fix: the parameters named in list (comma-separated) are held; false on an unknown name */
static bool parse_fixed(const char *list, bool fixed[HW_NPARAM])
{
	char buf[256], *tok, *save = NULL;
	int n = 0;

	if (strlen(list) >= sizeof(buf))
		return false;
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++) {
		int k = calibrate_param(tok);

		if (k < 0)
			return false;
		fixed[k] = true;
	}
	return n > 0;
}

static int calibrate(struct arch *archs, int n, char **profiles, struct cluster *c,
                     const struct cost_opts *o, const char *cluster_path, const char *cluster_out,
                     const bool fixed[HW_NPARAM], bool json)
{
	struct calib_set s = { NULL, 0, 0, { false } };
	struct hardware before = c->hw;
	struct err e = ERR_INIT;
	struct strbuf src = STRBUF_INIT;
	double f0, b0, f1, b1;
	int rc = EXIT_OK;

	for (int i = 0; i < n; i++)
		if (calibrate_add_profile(&s, &archs[i], &c->hw, o, profiles[i], &e) < 0) {
			calibrate_release(&s);
			return cli_report(&e);
		}
	before.source = NULL;
	before.extra = NULL;   /* both stay c->hw's */
	memcpy(s.fixed, fixed, sizeof(s.fixed));
	if (calibrate_fit(&s, &c->hw, &e) < 0) {
		calibrate_release(&s);
		return cli_report(&e);
	}
	strbuf_addstr(&src, "octopipe cost --calibrate");
	for (int i = 0; i < n; i++)
		strbuf_addf(&src, " %s", profiles[i]);
	free(c->hw.source);
	c->hw.source = strbuf_detach(&src);
	c->has_hw = true;
	struct jw w = { false };
	cJSON *root = json ? cJSON_CreateObject() : NULL, *arr = NULL, *item;

	if (json) {
		if (!root)
			w.oom = true;
		arr = jw_arr(&w, root, "profiles");
	} else {
		printf("%-40s %8s %8s   %8s %8s\n", "profile (mean abs. error)", "F was", "BW was", "F now", "BW now");
	}
	for (int k = 0; k <= n; k++) {
		int p = k < n ? k : -1;

		calibrate_error(&s, &before, p, &f0, &b0);
		calibrate_error(&s, &c->hw, p, &f1, &b1);
		if (json && p >= 0) {
			item = jw_push(&w, arr, cJSON_CreateObject());
			jw_str(&w, item, "profile", profiles[k]);
			jw_num(&w, item, "f_err_pct", round(f1 * 100) / 100);
			jw_num(&w, item, "bw_err_pct", round(b1 * 100) / 100);
			jw_num(&w, item, "f_err_pct_before", round(f0 * 100) / 100);
			jw_num(&w, item, "bw_err_pct_before", round(b0 * 100) / 100);
		} else if (!json) {
			printf("%-40s %7.1f%% %7.1f%%   %7.1f%% %7.1f%%\n", p >= 0 ? profiles[k] : "all",
			       f0, b0, f1, b1);
		}
	}
	if (json) {
		cJSON *eff = jw_obj(&w, root, "efficiency");

		for (int k = 0; k < EFF_NCLASS; k++) {
			item = jw_obj(&w, eff, hardware_class_names[k]);
			jw_num(&w, item, "f", c->hw.eff_f[k]);
			jw_num(&w, item, "b", c->hw.eff_b[k]);
		}
		item = jw_obj(&w, root, "launch_us");
		jw_num(&w, item, "f", c->hw.launch_us_f);
		jw_num(&w, item, "b", c->hw.launch_us_b);
		kind_errors(&s, &c->hw, profiles, n, &w, jw_arr(&w, root, "kinds"));
		rc = cli_put_json(root, w.oom);
	} else {
		printf("\n%-14s %8s %8s\n", "class", "eff F", "eff B");
		for (int k = 0; k < EFF_NCLASS; k++)
			printf("%-14s %8.4f %8.4f\n", hardware_class_names[k], c->hw.eff_f[k], c->hw.eff_b[k]);
		printf("%-14s %7.2fus %7.2fus\n", "launch", c->hw.launch_us_f, c->hw.launch_us_b);
		kind_errors(&s, &c->hw, profiles, n, NULL, NULL);
	}
	calibrate_release(&s);
	if (!cluster_out)
		fileio_guard_allow(cluster_path);   /* the fit is stored in the cluster it read, as documented */
	if (cluster_save(c, cluster_out ? cluster_out : cluster_path, &e) < 0)
		rc = cli_report(&e);
	else if (!json)
		printf("wrote the hardware section to %s\n", cluster_out ? cluster_out : cluster_path);
	return rc;
}

/* cost's own options; the cluster, -o, --json and --runtime are cli_args'. */
struct cost_args {
	struct cost_opts o;
	const char *name, *cluster_out;
	char *profiles[MAX_CONFIGS];
	int nprof;
	bool only_predict;                   /* the profiles are --predict's, not --calibrate's */
	bool fixed[HW_NPARAM], fix;
};

static int cost_option(void *ctx, int ch, const char *arg)
{
	struct cost_args *ca = ctx;
	int v, rc;

	switch (ch) {
	case 's': if ((v = cli_positive("cost", "--seq", arg)) < 0) return EXIT_INPUT; ca->o.seq = v; return 0;
	case 'b': if ((v = cli_positive("cost", "--micro-batch", arg)) < 0) return EXIT_INPUT; ca->o.micro_batch = v; return 0;
	case 't': if ((v = cli_positive("cost", "--tp", arg)) < 0) return EXIT_INPUT; ca->o.tp = v; return 0;
	case 'r': ca->o.recompute = true; return 0;
	case 'n':
		/* the reader refuses such a name: the table written would not read back */
		if (json_has_control(arg))
			return cli_usage_error("cost", "--name: must not contain control characters");
		/* what the reader refuses is refused here, not cut or replaced: it was cut to 255
		 * bytes (inside a character) and a byte that is not UTF-8 written as U+FFFD */
		if (!str_is_utf8(arg, strlen(arg)))
			return cli_usage_error("cost", "--name: not UTF-8");
		if (strlen(arg) > JV_STRING_MAX)
			return cli_usage_error("cost", "--name: longer than %d bytes", JV_STRING_MAX);
		ca->name = arg;
		return 0;
	case 'P':
	case 'C':
		/* the profiles are one list: predicting from some and fitting others is not a mode */
		if (ca->nprof > 0 && ca->only_predict != (ch == 'P'))
			return cli_usage_error("cost", "--predict and --calibrate do not mix: predict or fit");
		ca->only_predict = ch == 'P';
		if (ca->nprof == MAX_CONFIGS)
			return cli_usage_error("cost", "at most %d profiles", MAX_CONFIGS);
		ca->profiles[ca->nprof++] = (char *)arg;
		return 0;
	case 'O': ca->cluster_out = arg; return 0;
	case 'F':
		if (!parse_fixed(arg, ca->fixed)) {
			struct strbuf sb = STRBUF_INIT;

			for (int k = 0; k < EFF_NCLASS; k++)
				strbuf_addf(&sb, ", %s", hardware_class_names[k]);
			rc = cli_usage_error("cost", "--fix %s: not a parameter (launch%s)", arg, sb.buf);
			strbuf_release(&sb);
			return rc;
		}
		ca->fix = true;
		return 0;
	default: return EXIT_INPUT;
	}
}

static const struct option cost_options[] = {
	{ "seq", required_argument, NULL, 's' },
	{ "micro-batch", required_argument, NULL, 'b' },
	{ "tp", required_argument, NULL, 't' },
	{ "recompute", no_argument, NULL, 'r' },
	{ "name", required_argument, NULL, 'n' },
	{ "calibrate", required_argument, NULL, 'C' },
	{ "cluster-out", required_argument, NULL, 'O' },
	{ "predict", required_argument, NULL, 'P' },
	{ "fix", required_argument, NULL, 'F' },
	{ NULL, 0, NULL, 0 },
};

static const struct cli_args_spec cost_spec = {
	"cost", CLI_IN_CLUSTER | CLI_IN_OUTPUT | CLI_IN_JSON | CLI_IN_RUNTIME, "o:h", cost_options, cost_option, usage,
};

/* How the operands, the profiles and the outputs go together. 0 or the exit code. */
static int check_args(const struct cli_args *a, const struct cost_args *ca, int nconf)
{
	if (nconf < 1)
		return cli_usage_error("cost", "no architecture or config.json given");
	if (!a->cluster_arg)
		return cli_usage_error("cost", "needs --cluster (the GPU and its links)");
	if (ca->nprof > 0 && ca->nprof != nconf)
		return cli_usage_error("cost", "%d configs but %d profiles: --calibrate pairs them in order",
		                       nconf, ca->nprof);
	if (ca->fix && (ca->nprof == 0 || ca->only_predict))
		return cli_usage_error("cost", "--fix holds parameters of a fit: it needs --calibrate");
	if (ca->only_predict && (a->out || ca->cluster_out))
		return cli_usage_error("cost", "--predict writes nothing (no -o, no --cluster-out)");
	{
		const char *names[] = { "-o -", "--cluster-out -", "--json" };
		const char *outs[] = { a->out, ca->cluster_out, a->json ? "-" : NULL };

		if (cli_one_stdout("cost", names, outs, 3) != EXIT_OK)
			return EXIT_INPUT;
	}
	if (ca->nprof == 0 && nconf > 1)
		return cli_usage_error("cost", "one config at a time (several only with --calibrate)");
	if (nconf > MAX_CONFIGS)
		return cli_usage_error("cost", "at most %d configs", MAX_CONFIGS);
	return EXIT_OK;
}

/* The n architectures named (config.json files or names under samples/architectures),
 * each one's warning printed; 0, or the exit code with none of them left loaded. */
static int load_archs(char **names, int n, struct arch *archs)
{
	struct err e = ERR_INIT;

	for (int i = 0; i < n; i++) {
		if (hfconfig_load_any(&archs[i], cli_resolve(names[i], "samples/architectures"), &e) < 0) {
			for (int k = 0; k < i; k++)
				arch_release(&archs[k]);
			return cli_report(&e);
		}
		if (archs[i].warning[0])
			cli_err("warning: %s\n", archs[i].warning);
	}
	return EXIT_OK;
}

/* The layer table of the first architecture: written to -o, or summarised. */
static int write_model(struct cli_args *a, const struct cost_args *ca, const struct arch *arch, const char *config)
{
	const char *out = a->out;
	struct err e = ERR_INIT;
	char nbuf[JV_STRING_MAX + 1];
	struct model m;
	int rc = EXIT_OK;

	if (ca->name)
		snprintf(nbuf, sizeof(nbuf), "%s", ca->name);
	else
		base_name(out && strcmp(out, "-") != 0 ? out : arch->name, nbuf, sizeof(nbuf));
	if (arch_to_model(arch, &a->cluster.hw, &ca->o, nbuf, &m, &e) < 0 ||
	    attach_source(&m, cli_resolve(config, "samples/architectures"), &ca->o, &a->cluster, &a->runtime, &e) < 0) {
		rc = cli_report(&e);
	} else if (out && (rc = cli_write_model(&m, out)) != EXIT_OK) {
		/* cli_write_model said why */
	} else if (ca->nprof == 0 && !(out && strcmp(out, "-") == 0)) {
		rc = print_summary(arch, &m, &ca->o, &a->cluster, &a->runtime, a->json);
		if (out && !a->json)
			printf("wrote %s\n", cli_name(out));
	}
	model_release(&m);
	return rc;
}

int cmd_cost(int argc, char **argv)
{
	struct cost_args ca = { .o = { .micro_batch = 1, .tp = 1 } };
	struct arch archs[MAX_CONFIGS];
	struct cli_args a;
	struct cluster *c = &a.cluster;
	int nconf, rc;

	if ((rc = cli_args_parse(&cost_spec, argc, argv, &ca, &a)) != CLI_ARGS_GO)
		return rc;
	nconf = argc - optind;
	if ((rc = check_args(&a, &ca, nconf)) != EXIT_OK)
		return rc;
	/* profiles are measurements of a runtime: the bundled ones of the paper's */
	if (!a.runtime_arg && ca.nprof > 0)
		a.runtime_arg = "hf-eager";
	if ((rc = cli_args_load(&a, CLI_IN_CLUSTER | CLI_IN_RUNTIME)) != EXIT_OK)
		goto out;
	if (ca.nprof > 0 && !ca.only_predict && !ca.cluster_out && strcmp(a.cluster_path, a.cluster_arg) != 0) {
		/* a cluster named by its short name is the bundled sample every user shares: the
		 * fit is stored in place only in a file named by its path */
		rc = cli_usage_error("cost", "--cluster %s is a bundled sample (%s): give --cluster-out FILE for the "
		                     "calibrated copy", a.cluster_arg, a.cluster_path);
		goto out;
	}
	if (c->hw_unknown) {
		/* its peaks would be an H200's: a price, silently, of another GPU */
		cli_err("%s: hardware: gpu '%s' has no built-in datasheet (A100, H100 and H200 do): give "
		        "hardware.peak_tflops and hardware.hbm_gbytes_per_s to price on it\n", a.cluster_path, c->gpu);
		rc = EXIT_INPUT;
		goto out;
	}
	cli_apply_runtime(&a.runtime, c, &ca.o);
	if (ca.o.tp > c->gpus_per_node) {
		/* its all-reduces run on the intra-node link, as every TP layout does */
		rc = cli_usage_error("cost", "--tp %d: a tensor-parallel group stays on one node, and cluster '%s' has "
		                     "%d GPUs per node", ca.o.tp, c->name, c->gpus_per_node);
		goto out;
	}
	ca.o.link_gbytes_per_s = c->intra.gbytes_per_s;
	ca.o.link_latency_us = c->intra.latency_us;
	if ((rc = load_archs(argv + optind, nconf, archs)) != EXIT_OK)
		goto out;
	if (ca.o.seq == 0)
		ca.o.seq = archs[0].seq_len > 0 ? archs[0].seq_len : 4096;
	if (ca.only_predict)
		rc = predict(archs, nconf, ca.profiles, c, &ca.o, a.json);
	else if (ca.nprof > 0)
		rc = calibrate(archs, nconf, ca.profiles, c, &ca.o, a.cluster_path, ca.cluster_out, ca.fixed, a.json);
	if (!ca.only_predict && rc == EXIT_OK && (ca.nprof == 0 || a.out))
		rc = write_model(&a, &ca, &archs[0], argv[optind]);
	for (int i = 0; i < nconf; i++)
		arch_release(&archs[i]);
out:
	cli_args_release(&a);
	return rc;
}
