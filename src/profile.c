/*
 * profile — timings to layer tables through PCRE2 rules (see profile.h).
 *
 * The one idea: named groups carry the meaning. A pattern such as
 * `^layers\.(?<layer>\d+)\.(?<kind>attn|mlp)` says where the layer index and the kind
 * are in a name, so one rule covers every layer and no record format needs to know what
 * a layer is. Records become (layer, kind, phase, ms) and are summed per layer.
 */
#include "config.h"
#include "profile.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcre2.h>

#include "bounds.h"
#include "json.h"

struct profile_rule {
	pcre2_code *re;
	pcre2_match_data *md;
	long layer;                 /* used when the pattern has no "layer" group; -1 none */
	char *kind, *phase;         /* used when it has no "kind" / "phase" group; may be NULL */
};

enum phase { PH_F, PH_B, PH_W, PH_BW, PH_N };

void profile_rules_release(struct profile_rules *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n; i++) {
		pcre2_match_data_free(r->rules[i].md);
		pcre2_code_free(r->rules[i].re);
		free(r->rules[i].kind);
		free(r->rules[i].phase);
	}
	free(r->rules);
	free(r->name);
	memset(r, 0, sizeof(*r));
}

static int parse_phase(const char *s, size_t n)
{
	static const struct { const char *word; int ph; } words[] = {
		{ "F", PH_F }, { "fwd", PH_F }, { "forward", PH_F },
		{ "B", PH_B }, { "I", PH_B }, { "input_grad", PH_B }, { "bwd_input", PH_B },
		{ "W", PH_W }, { "weight_grad", PH_W }, { "bwd_weight", PH_W },
		{ "BW", PH_BW }, { "bwd", PH_BW }, { "backward", PH_BW },
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i].word) == n && strncasecmp(words[i].word, s, n) == 0)
			return words[i].ph;
	return -1;
}

int profile_rules_load(struct profile_rules *r, const char *path, struct err *e)
{
	struct jv v = { path, e, NULL };
	cJSON *root = json_load_file(path, e);
	const cJSON *rules;
	const char *name;
	char p[JPATH_MAX], q[JPATH_MAX];
	long i = 0;

	memset(r, 0, sizeof(*r));
	if (!root)
		return -1;
	if (jv_format(&v, root, RULES_FORMAT) < 0 ||
	    jv_string(&v, root, "", "name", JV_REQUIRED | JV_NONEMPTY, NULL, &name) < 0 ||
	    jv_int(&v, root, "", "seq_len", JV_REQUIRED, 1, OCTO_MAX_SEQ_LEN, 0, &r->seq_len) < 0 ||
	    jv_int(&v, root, "", "micro_batch_size", 0, 1, OCTO_MAX_MICRO_BATCH, 1, &r->micro_batch) < 0 ||
	    jv_number(&v, root, "", "w_fraction", 0, 0, 1, 0.5, &r->w_fraction) < 0 ||
	    jv_array(&v, root, "", "rules", JV_REQUIRED, &rules) < 0)
		goto fail;
	if (cJSON_GetArraySize(rules) == 0) {
		jv_fail(&v, "rules", "must list at least one rule");
		goto fail;
	}
	r->rules = calloc((size_t)cJSON_GetArraySize(rules), sizeof(*r->rules));
	if (!r->rules || !(r->name = strdup(name)))
		goto oom;
	for (const cJSON *c = rules->child; c; c = c->next, i++) {
		struct profile_rule *pr = &r->rules[r->n];
		const char *pat, *kind, *phase;
		int code;
		PCRE2_SIZE off;

		jpath_index(p, "rules", i);
		if (!cJSON_IsObject(c)) {
			jv_fail(&v, p, "must be an object, not %s", json_type_name(c));
			goto fail;
		}
		if (jv_string(&v, c, p, "pattern", JV_REQUIRED | JV_NONEMPTY, NULL, &pat) < 0 ||
		    jv_int(&v, c, p, "layer", 0, 0, OCTO_MAX_LAYERS - 1, -1, &pr->layer) < 0 ||
		    jv_string(&v, c, p, "kind", JV_NONEMPTY, NULL, &kind) < 0 ||
		    jv_string(&v, c, p, "phase", JV_NONEMPTY, NULL, &phase) < 0)
			goto fail;
		if (phase && parse_phase(phase, strlen(phase)) < 0) {
			jpath_key(q, p, "phase");
			jv_fail(&v, q, "'%s' is not a phase (F, B, W or BW)", phase);
			goto fail;
		}
		pr->re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
		r->n++;
		jpath_key(q, p, "pattern");
		if (!pr->re && code == PCRE2_ERROR_NOMEMORY)
			goto oom;
		if (!pr->re) {
			PCRE2_UCHAR msg[256];

			pcre2_get_error_message(code, msg, sizeof(msg));
			jv_fail(&v, q, "%s at offset %zu", (const char *)msg, (size_t)off);
			goto fail;
		}
		if (pcre2_substring_number_from_name(pr->re, (PCRE2_SPTR)"layer") < 0 && pr->layer < 0) {
			jv_fail(&v, q, "has no (?<layer>...) group and the rule gives no \"layer\"");
			goto fail;
		}
		pr->md = pcre2_match_data_create_from_pattern(pr->re, NULL);
		if (!pr->md || (kind && !(pr->kind = strdup(kind))) || (phase && !(pr->phase = strdup(phase))))
			goto oom;
	}
	cJSON_Delete(root);
	return 0;
oom:
	err_set(e, ERR_RUNTIME, "%s: out of host memory", path);
fail:
	cJSON_Delete(root);
	profile_rules_release(r);
	return -1;
}

struct agg {
	double ms[PH_N];
	struct strbuf kinds;  /* "a+b" in order of first appearance */
	bool seen;
};

struct importer {
	const struct profile_rules *r;
	struct profile_stats *st;
	struct agg *layers;
	long cap, max;        /* allocated, highest layer index seen */
	const char *file;
	struct err *e;
};

/* named group of the last match into out (NUL-terminated); 0 when the group is unset */
static int group(const struct profile_rule *pr, const char *name, char *out, size_t n)
{
	PCRE2_SIZE len = n;

	if (pcre2_substring_number_from_name(pr->re, (PCRE2_SPTR)name) < 0)
		return 0;
	return pcre2_substring_copy_byname(pr->md, (PCRE2_SPTR)name, (PCRE2_UCHAR *)out, &len) == 0;
}

static bool has_kind(const struct strbuf *kinds, const char *k)
{
	size_t n = strlen(k);

	for (const char *s = kinds->buf; *s;) {
		size_t m = strcspn(s, "+");

		if (m == n && strncmp(s, k, n) == 0)
			return true;
		s += m + (s[m] == '+');
	}
	return false;
}

/* One record. where: "line 7" or "traceEvents[12]" for messages. */
static int record(struct importer *im, const char *name, size_t nlen, int phase, double ms,
                  const char *where)
{
	char buf[64], *subj = strndup(name, nlen);
	int r = 0;

	if (!subj)
		return err_set(im->e, ERR_RUNTIME, "%s: out of host memory", im->file);
	im->st->records++;
	for (int i = 0; i < im->r->n; i++) {
		const struct profile_rule *pr = &im->r->rules[i];
		long layer = pr->layer;
		const char *kind = pr->kind ? pr->kind : "layer";
		char kbuf[128];
		int ph = phase;
		struct agg *a;

		if (pcre2_match(pr->re, (PCRE2_SPTR)subj, nlen, 0, 0, pr->md, NULL) < 0)
			continue;
		if (group(pr, "layer", buf, sizeof(buf))) {
			char *end;

			layer = strtol(buf, &end, 10);
			if (*end || layer < 0 || layer >= OCTO_MAX_LAYERS) {
				r = err_set(im->e, ERR_INPUT, "%s: %s: layer '%s' of '%s' is not a layer index",
				            im->file, where, buf, subj);
				goto out;
			}
		}
		if (group(pr, "kind", kbuf, sizeof(kbuf)))
			kind = kbuf;
		if (group(pr, "phase", buf, sizeof(buf)) && (ph = parse_phase(buf, strlen(buf))) < 0) {
			r = err_set(im->e, ERR_INPUT, "%s: %s: phase '%s' of '%s' is not F, B, W or BW",
			            im->file, where, buf, subj);
			goto out;
		} else if (pr->phase) {
			ph = parse_phase(pr->phase, strlen(pr->phase));
		}
		if (layer >= im->cap) {
			long cap = layer + 64;
			struct agg *n = realloc(im->layers, (size_t)cap * sizeof(*n));

			if (!n) {
				r = err_set(im->e, ERR_RUNTIME, "%s: out of host memory", im->file);
				goto out;
			}
			for (long k = im->cap; k < cap; k++) {
				memset(&n[k], 0, sizeof(n[k]));
				strbuf_init(&n[k].kinds);
			}
			im->layers = n;
			im->cap = cap;
		}
		a = &im->layers[layer];
		a->seen = true;
		a->ms[ph] += ms;
		if (!has_kind(&a->kinds, kind)) {
			if (a->kinds.len)
				strbuf_addch(&a->kinds, '+');
			strbuf_addstr(&a->kinds, kind);
			if (strbuf_failed(&a->kinds)) {
				r = err_set(im->e, ERR_RUNTIME, "%s: out of host memory", im->file);
				goto out;
			}
		}
		if (layer > im->max)
			im->max = layer;
		im->st->matched++;
		goto out;
	}
	im->st->unmatched++;
	strbuf_addf(&im->st->unmatched_names, "%s\n", subj);
	if (strbuf_failed(&im->st->unmatched_names))
		r = err_set(im->e, ERR_RUNTIME, "%s: out of host memory", im->file);
out:
	free(subj);
	return r;
}

static int read_csv(struct importer *im, const char *text, size_t len)
{
	const char *s = text, *end = text + len;
	long line = 0;
	char where[32];

	while (s < end) {
		const char *eol = memchr(s, '\n', (size_t)(end - s)), *f[3];
		size_t fl[3];
		int nf = 0, ph;
		char num[64], *e;
		double ms;

		if (!eol)
			eol = end;
		line++;
		snprintf(where, sizeof(where), "line %ld", line);
		for (const char *p = s; nf < 3;) {
			const char *c = memchr(p, ',', (size_t)(eol - p));

			f[nf] = p;
			fl[nf] = (size_t)((nf < 2 && c ? c : eol) - p);
			nf++;
			if (!c || nf == 3)
				break;
			p = c + 1;
		}
		while (nf && fl[nf - 1] && (f[nf - 1][fl[nf - 1] - 1] == '\r' || f[nf - 1][fl[nf - 1] - 1] == ' '))
			fl[nf - 1]--;
		if ((eol == s) || s[0] == '#' || (eol - s == 1 && s[0] == '\r')) {
			s = eol + 1;
			continue;
		}
		if (nf != 3)
			return err_set(im->e, ERR_INPUT, "%s: %s: expected name,phase,ms", im->file, where);
		snprintf(num, sizeof(num), "%.*s", (int)(fl[2] < 63 ? fl[2] : 63), f[2]);
		ms = strtod(num, &e);
		if (e == num || *e || !(ms >= 0) || ms > OCTO_MAX_COST_MS) {
			if (line == 1) { /* a header */
				s = eol + 1;
				continue;
			}
			return err_set(im->e, ERR_INPUT, "%s: %s: '%s' is not a time in ms >= 0",
			               im->file, where, num);
		}
		if ((ph = parse_phase(f[1], fl[1])) < 0)
			return err_set(im->e, ERR_INPUT, "%s: %s: phase '%.*s' is not F, B, W or BW", im->file,
			               where, (int)fl[1], f[1]);
		if (record(im, f[0], fl[0], ph, ms, where) < 0)
			return -1;
		s = eol + 1;
	}
	return 0;
}

static int read_trace(struct importer *im, const char *text, size_t len)
{
	struct jv v = { im->file, im->e, NULL };
	bool oom;
	cJSON *root = json_parse_any(text, len, NULL, &oom);
	const cJSON *events;
	char p[JPATH_MAX];
	long i = 0;
	int r = -1;

	if (oom)
		return err_set(im->e, ERR_RUNTIME, "%s: out of host memory", im->file);
	if (!root)
		return err_set(im->e, ERR_INPUT, "%s: not valid JSON (a Chrome trace) nor CSV", im->file);
	events = cJSON_IsArray(root) ? root : cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
	if (!cJSON_IsArray(events)) {
		jv_fail(&v, "traceEvents", "required field is missing or not an array");
		goto out;
	}
	for (const cJSON *ev = events->child; ev; ev = ev->next, i++) {
		const char *name, *ph;
		double dur;

		jpath_index(p, "traceEvents", i);
		if (!cJSON_IsObject(ev)) {
			jv_fail(&v, p, "must be an object, not %s", json_type_name(ev));
			goto out;
		}
		if (jv_string(&v, ev, p, "ph", 0, "X", &ph) < 0)
			goto out;
		if (strcmp(ph, "X") != 0)
			continue;
		if (jv_string(&v, ev, p, "name", JV_REQUIRED, NULL, &name) < 0 ||
		    jv_number(&v, ev, p, "dur", JV_REQUIRED, 0, OCTO_MAX_COST_MS * 1e3, 0, &dur) < 0)
			goto out;
		/* autograd names its backward nodes "...Backward..." */
		if (record(im, name, strlen(name), strcasestr(name, "backward") ? PH_BW : PH_F, dur / 1e3, p) < 0)
			goto out;
	}
	r = 0;
out:
	cJSON_Delete(root);
	return r;
}

int profile_import(const struct profile_rules *r, const char *text, size_t len, const char *file,
                   int iters, struct model *m, struct profile_stats *st, struct err *e)
{
	struct importer im = { r, st, NULL, 0, -1, file, e };
	size_t k = 0;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	memset(st, 0, sizeof(*st));
	strbuf_init(&st->unmatched_names);
	while (k < len && isspace((unsigned char)text[k]))
		k++;
	if ((k < len && (text[k] == '{' || text[k] == '[')) ? read_trace(&im, text, len) < 0
	                                                  : read_csv(&im, text, len) < 0)
		goto out;
	if (im.max < 0) {
		err_set(e, ERR_INPUT, "%s: no record matched a rule (%ld records)", file, st->records);
		goto out;
	}
	for (long l = 0; l <= im.max; l++)
		if (!im.layers[l].seen) {
			err_set(e, ERR_INPUT, "%s: no record matched layer %ld (layers 0..%ld must all be present)",
			        file, l, im.max);
			goto out;
		}
	m->layers = calloc((size_t)im.max + 1, sizeof(*m->layers));
	m->name = strdup(r->name);
	if (!m->layers || !m->name)
		goto oom;
	m->seq_len = r->seq_len;
	m->micro_batch_size = r->micro_batch;
	for (long l = 0; l <= im.max; l++) {
		struct agg *a = &im.layers[l];
		struct layer *ly = &m->layers[l];
		double n = iters > 0 ? iters : 1;

		if (!(ly->kind = strdup(a->kinds.buf)))
			goto oom;
		m->nlayers++;
		ly->f_ms = a->ms[PH_F] / n;
		ly->b_ms = (a->ms[PH_B] + a->ms[PH_BW] * (1 - r->w_fraction)) / n;
		ly->w_ms = (a->ms[PH_W] + a->ms[PH_BW] * r->w_fraction) / n;
	}
	rc = 0;
	goto out;
oom:
	err_set(e, ERR_RUNTIME, "%s: out of host memory", file);
out:
	for (long l = 0; l < im.cap; l++)
		strbuf_release(&im.layers[l].kinds);
	free(im.layers);
	if (rc < 0)
		model_release(m);
	return rc;
}
