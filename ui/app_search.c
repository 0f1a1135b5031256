/*
 * app_search — PCRE2 search and filter over ops (see app.h). Each op is matched by a line of
 * text ("1F12 stage=1 mb=12 kind=F forward gpu=1 layers=7-13 mamba2"), so one regular
 * expression can select by kind, stage, microbatch, gpu or layer type; the matches are a
 * flag per op that the charts draw and n/N walk.
 */
#include "config.h"
#include "app.h"
#include "app_int.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "screen.h"

void app_op_text(const struct plan *p, const struct action *x, char *buf, size_t n)
{
	const struct stage *st = &p->stages[x->stage];
	char tok[ACTION_TEXT_MAX];
	size_t len;

	snprintf(buf, n, "%s stage=%d mb=%d kind=%c %s gpu=%d layers=%d-%d", action_format(x, tok), x->stage,
	         x->mb, op_kind_char((enum op_kind)x->kind), op_kind_name((enum op_kind)x->kind), st->device,
	         st->first, st->last);
	/* the layer kinds of the stage, each once */
	for (int l = st->first; l <= st->last; l++) {
		const char *k = p->model.layers[l].kind;
		bool seen = false;

		for (int j = st->first; j < l && !seen; j++)
			seen = strcmp(p->model.layers[j].kind, k) == 0;
		len = strlen(buf);
		if (!seen && len + strlen(k) + 2 < n)
			snprintf(buf + len, n - len, " %s", k);
	}
}

/* What one search may cost: backtracking steps an op (PCRE2's default, ten million, let
 * '^(.|.)*[;#]$' take seconds an op), and seconds over the whole plan (49k ops at a few
 * hundred steps each take milliseconds); past either the pattern is refused, so no key
 * waits on it. */
#define SEARCH_MATCH_LIMIT 20000
#define SEARCH_SECONDS 0.3

bool search_mark(struct pview *v, const pcre2_code *re)
{
	pcre2_match_data *md;
	pcre2_match_context *mc;
	char text[512];
	double t0 = clock_now_s();
	bool ok = true;

	v->nmatch = 0;
	if (!v->match)
		return true;
	memset(v->match, 0, (size_t)v->nops);
	if (!re)
		return true;
	md = pcre2_match_data_create_from_pattern(re, NULL);
	mc = pcre2_match_context_create(NULL);
	if (!md || !mc) {
		pcre2_match_data_free(md);
		pcre2_match_context_free(mc);
		return false;
	}
	pcre2_set_match_limit(mc, SEARCH_MATCH_LIMIT);
	pcre2_set_depth_limit(mc, SEARCH_MATCH_LIMIT);
	for (long i = 0; ok && i < plan_total_ops(&v->plan); i++) {
		const struct action *x = &v->plan.order[i];
		int r;

		app_op_text(&v->plan, x, text, sizeof(text));
		r = pcre2_match(re, (PCRE2_SPTR)text, strlen(text), 0, 0, md, mc);
		if (r >= 0) {
			v->match[sim_op_index(&v->plan, x->stage, x->mb, x->kind)] = 1;
			v->nmatch++;
		} else if (r != PCRE2_ERROR_NOMATCH || ((i & 255) == 255 && clock_now_s() - t0 > SEARCH_SECONDS)) {
			ok = false; /* the match limit, or the whole search too slow */
		}
	}
	pcre2_match_data_free(md);
	pcre2_match_context_free(mc);
	if (!ok) {
		memset(v->match, 0, (size_t)v->nops);
		v->nmatch = 0;
	}
	return ok;
}

void app_search(struct app *a, const char *pattern, bool filter)
{
	int errcode;
	PCRE2_SIZE off;
	pcre2_code *re;

	if (!*pattern) {
		if (a->re)
			pcre2_code_free(a->re);
		a->re = NULL;
		a->pattern[0] = '\0';
		a->filter = false;
		search_mark(&a->cur, NULL);
		search_mark(&a->ref, NULL);
		app_msg(a, R_NORMAL, "search cleared");
		return;
	}
	/* UTF-8 both ways: a pattern's character is one character (日? is optional 日, not
	 * its last byte), and ops read as UTF-8 (a kind named in a file is) */
	re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_CASELESS | PCRE2_UTF | PCRE2_MATCH_INVALID_UTF,
	                   &errcode, &off, NULL);
	if (!re) {
		PCRE2_UCHAR buf[200];

		pcre2_get_error_message(errcode, buf, sizeof(buf));
		app_msg(a, R_ERROR, "bad pattern '%s' at offset %d: %s", pattern, (int)off, (char *)buf);
		return;
	}
	if (!search_mark(&a->cur, re) || (a->ref.loaded && !search_mark(&a->ref, re))) {
		pcre2_code_free(re);
		search_mark(&a->cur, a->re); /* the search before it stands */
		if (a->ref.loaded)
			search_mark(&a->ref, a->re);
		app_msg(a, R_ERROR, "pattern '%s' is too costly to match (PCRE2's backtracking limit of %d steps an op, "
		        "or %.1f s over the plan): simplify it", pattern, SEARCH_MATCH_LIMIT, SEARCH_SECONDS);
		return;
	}
	if (a->re)
		pcre2_code_free(a->re);
	a->re = re;
	snprintf(a->pattern, sizeof(a->pattern), "%s", pattern);
	a->filter = filter;
	if (app_focus(a)->nmatch == 0) {
		/* how an op reads: the one under the cursor, of this plan (a fixed example named
		 * another model's layers) */
		const struct pview *v = app_focus(a);
		long i = app_cursor_op(a);
		char text[512];

		if (i < 0 && v->loaded && plan_total_ops(&v->plan) > 0)
			i = 0;
		if (i >= 0) {
			app_op_text(&v->plan, &v->plan.order[i], text, sizeof(text));
			app_msg(a, R_ERROR, "no op matches /%s/ (the op at the cursor reads: %s)", pattern, text);
		} else {
			app_msg(a, R_ERROR, "no op matches /%s/ (ops read like: <op> stage=S mb=M kind=K <kind name> gpu=G "
			        "layers=A-B <layer types>)", pattern);
		}
		return;
	}
	if (filter)
		app_msg(a, R_NORMAL, "filter /%s/: %ld of %ld ops shown", pattern, app_focus(a)->nmatch,
		        plan_total_ops(&app_focus(a)->plan));
	else
		app_next_match(a, 1);
}

void app_next_match(struct app *a, int dir)
{
	struct pview *v = app_focus(a);
	long n = plan_total_ops(&v->plan), i = app_cursor_op(a), k = 0;

	if (!a->re || v->nmatch == 0) {
		app_msg(a, R_WARN, a->re ? "no op matches /%s/" : "no search: / searches%s", a->re ? a->pattern : "");
		return;
	}
	/* matches in device order, then list order */
	for (long step = 1; step <= n; step++) {
		long j = ((i < 0 ? -1 : i) + dir * step) % n;
		const struct action *x;

		if (j < 0)
			j += n;
		x = &v->plan.order[j];
		if (v->match[sim_op_index(&v->plan, x->stage, x->mb, x->kind)]) {
			char tok[ACTION_TEXT_MAX];

			app_cursor_to(a, j);
			for (long q = 0; q <= j; q++) {
				const struct action *y = &v->plan.order[q];

				k += v->match[sim_op_index(&v->plan, y->stage, y->mb, y->kind)];
			}
			app_msg(a, R_NORMAL, "/%s/: %s, match %ld of %ld (n next, N previous)", a->pattern,
			        action_format(x, tok), k, v->nmatch);
			return;
		}
	}
}
