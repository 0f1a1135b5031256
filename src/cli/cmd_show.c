/*
 * octopipe show MODEL — a model's layer table at a glance: layers per kind with their
 * cost totals and shares, the whole model, and the heaviest layers (the ones that make
 * pipeline stages unequal).
 */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "doc.h"
#include "json.h"
#include "model.h"

#define HEAVIEST 5

static void usage(FILE *f)
{
	fputs("usage: octopipe show [--json] MODEL\n"
	      "\n"
	      "Prints the layer table of MODEL (a model file, or the name of a bundled sample\n"
	      "such as 'nemotron-nano-v2-9b'): layer counts per kind, forward / input-grad /\n"
	      "weight-grad time per microbatch, weights and activations, and the heaviest\n"
	      "layers.\n"
	      "\n"
	      "  --json    print the same as a JSON object\n", f);
}

static double share(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

/* How wide v prints with 2 decimals: a column holds every value the model can have (a
 * total of 1e5 layers of 1e9 ms each is 18 characters), never fewer than least. */
static int ms_width(int least, double v)
{
	int n = snprintf(NULL, 0, "%.2f", v);

	return n > least ? n : least;
}

static void print_text(const struct model *m, const char *path,
                       const struct model_kind_stats *ks, int nk, const int *heavy, int nh)
{
	struct model_kind_stats t = model_totals(m);
	double total = t.f_ms + t.b_ms + t.w_ms;
	/* costs are not negative, so the totals are the widest of their columns */
	int kw = 5, nw = ms_width(ms_width(ms_width(10, t.f_ms), t.b_ms), t.w_ms), hw = 8;

	for (int i = 0; i < nk; i++)
		if ((int)strlen(ks[i].kind) > kw)
			kw = (int)strlen(ks[i].kind);
	for (int i = 0; i < nh; i++) {
		if ((int)strlen(m->layers[heavy[i]].kind) > kw)
			kw = (int)strlen(m->layers[heavy[i]].kind);
		hw = ms_width(hw, layer_total_ms(&m->layers[heavy[i]]));
	}
	printf("model %s: %d layers, sequence %ld x micro-batch %ld  (%s)\n\n", cli_name(m->name), m->nlayers,
	       m->seq_len, m->micro_batch_size, cli_name(path));
	printf("%-*s %6s %*s %*s %*s %6s %10s %10s\n", kw, "KIND", "COUNT", nw, "F ms", nw, "B ms", nw, "W ms",
	       "SHARE", "WEIGHTS", "ACT/MB");
	for (int i = 0; i <= nk; i++) {
		const struct model_kind_stats *s = i < nk ? &ks[i] : &t;
		struct strbuf w = STRBUF_INIT, a = STRBUF_INIT;

		if (i == nk)
			printf("%-*s %6s %*s %*s %*s %6s %10s %10s\n", kw, "", "", nw, "", nw, "", nw, "", "", "", "");
		fmt_bytes(&w, (double)s->param_bytes);
		fmt_bytes(&a, (double)s->act_bytes);
		printf("%-*s %6d %*.2f %*.2f %*.2f %5.1f%% %10s %10s\n", kw, i < nk ? s->kind : "total",
		       s->count, nw, s->f_ms, nw, s->b_ms, nw, s->w_ms, share(s->f_ms + s->b_ms + s->w_ms, total),
		       w.buf, a.buf);
		strbuf_release(&w);
		strbuf_release(&a);
	}
	printf("\nheaviest layers (F + B + W per microbatch; average %.2f ms):\n",
	       m->nlayers ? total / m->nlayers : 0);
	for (int i = 0; i < nh; i++) {
		const struct layer *l = &m->layers[heavy[i]];

		printf("  %5d  %-*s %*.2f ms  (%.2fx average; F %.2f, B %.2f, W %.2f)\n", heavy[i], kw,
		       l->kind, hw, layer_total_ms(l), total > 0 ? layer_total_ms(l) * m->nlayers / total : 0,
		       l->f_ms, l->b_ms, l->w_ms);
	}
}

static void add_stats(struct jw *w, cJSON *o, const struct model_kind_stats *s)
{
	jw_num(w, o, "count", s->count);
	jw_num(w, o, "f_ms", s->f_ms);
	jw_num(w, o, "b_ms", s->b_ms);
	jw_num(w, o, "w_ms", s->w_ms);
	jw_num(w, o, "param_bytes", (double)s->param_bytes);
	jw_num(w, o, "act_bytes", (double)s->act_bytes);
}

static int print_json(const struct model *m, const char *path,
                      const struct model_kind_stats *ks, int nk, const int *heavy, int nh)
{
	struct model_kind_stats t = model_totals(m);
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *arr;

	jw_str(&w, root, "file", path);
	jw_str(&w, root, "name", m->name);
	jw_num(&w, root, "seq_len", (double)m->seq_len);
	jw_num(&w, root, "micro_batch_size", (double)m->micro_batch_size);
	jw_num(&w, root, "layers", m->nlayers);
	arr = jw_arr(&w, root, "kinds");
	for (int i = 0; i < nk; i++) {
		cJSON *o = jw_push(&w, arr, cJSON_CreateObject());

		jw_str(&w, o, "kind", ks[i].kind);
		add_stats(&w, o, &ks[i]);
	}
	add_stats(&w, jw_obj(&w, root, "total"), &t);
	arr = jw_arr(&w, root, "heaviest");
	for (int i = 0; i < nh; i++) {
		const struct layer *l = &m->layers[heavy[i]];
		cJSON *o = jw_push(&w, arr, cJSON_CreateObject());

		jw_num(&w, o, "index", heavy[i]);
		jw_str(&w, o, "kind", l->kind);
		jw_num(&w, o, "f_ms", l->f_ms);
		jw_num(&w, o, "b_ms", l->b_ms);
		jw_num(&w, o, "w_ms", l->w_ms);
	}
	return cli_put_json(root, w.oom);
}

int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct err e = ERR_INIT;
	struct model m;
	struct model_kind_stats *ks;
	int heavy[HEAVIEST], nh, nk = 0, c, rc;
	bool json = false;
	const char *path;

	optind = 0;
	while ((c = cli_getopt("show", argc, argv, "jh", opts)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h': usage(stdout); return EXIT_OK;
		default: return EXIT_INPUT;
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("show", optind >= argc ? "no model given" : "one model at a time");
	path = cli_resolve(argv[optind], "samples/models");
	if (model_load(&m, path, &e) < 0)
		return cli_report(&e);
	ks = model_kind_stats(&m, &nk);
	if (!ks) {
		model_release(&m);
		cli_err("octopipe show: out of host memory\n");
		return EXIT_RUNTIME;
	}
	nh = model_heaviest(&m, heavy, HEAVIEST);
	if (json) {
		rc = print_json(&m, path, ks, nk, heavy, nh);
	} else {
		print_text(&m, path, ks, nk, heavy, nh);
		rc = EXIT_OK;
	}
	free(ks);
	model_release(&m);
	return rc;
}
