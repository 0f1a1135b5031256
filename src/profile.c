/*
 * profile — timings to layer tables through PCRE2 rules (see profile.h).
 *
 * The one idea: named groups carry the meaning. A pattern such as
 * `^layers\.(?<layer>\d+)\.(?<kind>attn|mlp)` says where the layer index and the kind
 * are in a name, so one rule covers every layer and no record format needs to know what
 * a layer is. Records become (layer, kind, phase, ms) and are summed per layer.
 *
 * A trace nests: a module's event holds its submodules' (layers.3 holds layers.3.mlp), and
 * a rule without an anchor matches both. Trace events are therefore taken per thread in
 * start order, and one that lies inside an event already counted for the same layer and
 * phase is matched but not added again.
 */
#include "config.h"
#include "profile.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcre2.h>

#include "bounds.h"
#include "csv.h"
#include "json.h"

/* Backtracking steps one record's match may take: a rule's usual patterns take hundreds;
 * PCRE2's own default (ten million) let a nested repeat spend seconds a record, and past
 * it the record was counted as unmatched. */
#define RULE_MATCH_LIMIT 100000

struct profile_rule {
	pcre2_code *re;
	pcre2_match_data *md;
	pcre2_match_context *mc;
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
		pcre2_match_context_free(r->rules[i].mc);
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

static const char *const rules_keys[] = {
	"format", "name", "seq_len", "micro_batch_size", "w_fraction", "rules", NULL
};
static const char *const rule_keys[] = { "pattern", "layer", "kind", "phase", NULL };

int profile_rules_from_json(struct profile_rules *r, const cJSON *root, const char *path, struct err *e)
{
	struct jv v = { path, e, NULL };
	const cJSON *rules;
	const char *name;
	char p[JPATH_MAX], q[JPATH_MAX];
	long i = 0;

	memset(r, 0, sizeof(*r));
	if (jv_format(&v, root, RULES_FORMAT) < 0 || jv_keys(&v, root, "", rules_keys) < 0 ||
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
		if (jv_keys(&v, c, p, rule_keys) < 0 ||
		    jv_string(&v, c, p, "pattern", JV_REQUIRED | JV_NONEMPTY, NULL, &pat) < 0 ||
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
		if ((pr->mc = pcre2_match_context_create(NULL))) {
			pcre2_set_match_limit(pr->mc, RULE_MATCH_LIMIT);
			pcre2_set_depth_limit(pr->mc, RULE_MATCH_LIMIT);
		}
		if (!pr->md || !pr->mc || (kind && !(pr->kind = strdup(kind))) || (phase && !(pr->phase = strdup(phase))))
			goto oom;
	}
	return 0;
oom:
	err_set(e, ERR_RUNTIME, "%s: out of host memory", path);
fail:
	profile_rules_release(r);
	return -1;
}

int profile_rules_load(struct profile_rules *r, const char *path, struct err *e)
{
	cJSON *root = json_load_file(path, e);
	int rc;

	memset(r, 0, sizeof(*r));
	if (!root)
		return -1;
	rc = profile_rules_from_json(r, root, path, e);
	cJSON_Delete(root);
	return rc;
}

struct agg {
	double ms[PH_N];
	struct strbuf kinds;  /* "a+b" in order of first appearance */
	bool seen;
};

/* The counted trace events still open on the thread being read (see the top). */
struct open_ev {
	double end;
	long layer;
	int phase;
};
struct nest {
	struct open_ev *v;
	size_t n, cap;
	double ts, dur;       /* of the event being recorded; ts NaN: no nesting known */
};

struct importer {
	const struct profile_rules *r;
	struct profile_stats *st;
	struct agg *layers;
	long cap, max;        /* allocated, highest layer index seen */
	const char *file;
	struct err *e;
};

/* Named group of the last match: 1 with a copy in *out (pcre2_substring_free() it) when
 * the group took part in the match, 0 when the pattern has no such group or it did not,
 * -1 out of host memory. Copied whole, however long: the caller judges the length. */
static int group(const struct profile_rule *pr, const char *name, char **out)
{
	PCRE2_SIZE len;
	int r;

	*out = NULL;
	if (pcre2_substring_number_from_name(pr->re, (PCRE2_SPTR)name) < 0)
		return 0;
	r = pcre2_substring_get_byname(pr->md, (PCRE2_SPTR)name, (PCRE2_UCHAR **)out, &len);
	if (r == 0)
		return 1;
	*out = NULL;
	return r == PCRE2_ERROR_NOMEMORY ? -1 : 0;
}

/* A layer index from its decimal digits (no sign, no spaces); -1 when it is not one. */
static long layer_number(const char *s)
{
	long x = 0;
	size_t n = strlen(s);

	if (n == 0 || n > 9)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = 10 * x + (s[i] - '0');
	}
	return x < OCTO_MAX_LAYERS ? x : -1;
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

/* A trace event of layer and phase inside an open one of the same (a module's event
 * within its parent's: counted once, by the outer one): 1. Otherwise it opens, until its
 * end: 0; -1 out of host memory. */
static int nested(struct nest *ns, long layer, int ph)
{
	for (size_t k = 0; k < ns->n; k++)
		if (ns->v[k].layer == layer && ns->v[k].phase == ph && ns->v[k].end >= ns->ts + ns->dur)
			return 1;
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? 2 * ns->cap : 16;
		struct open_ev *v = realloc(ns->v, cap * sizeof(*v));

		if (!v)
			return -1;
		ns->v = v;
		ns->cap = cap;
	}
	ns->v[ns->n++] = (struct open_ev){ ns->ts + ns->dur, layer, ph };
	return 0;
}

/* ms of phase ph to layer's total, and kind to its kinds. 0, or -1 out of host memory. */
static int add_time(struct importer *im, long layer, int ph, double ms, const char *kind)
{
	struct agg *a;

	if (layer >= im->cap) {
		long cap = layer + 64;
		struct agg *n = realloc(im->layers, (size_t)cap * sizeof(*n));

		if (!n)
			return -1;
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
		if (strbuf_failed(&a->kinds))
			return -1;
	}
	if (layer > im->max)
		im->max = layer;
	return 0;
}

/* One record. where: "line 7" or "traceEvents[12]" for messages. The name is
 * length-delimited: it is matched with its length and never read as a C string. */
static int record(struct importer *im, const char *name, size_t nlen, int phase, double ms,
                  const char *where, struct nest *ns)
{
	/* (the printable name, pn, is made only for a message: a million records each paid
	 * for it before) */
	char *subj, *lbuf = NULL, *kbuf = NULL, *pbuf = NULL, pn[96], pv[96];
	int r = 0;

	for (size_t i = 0; i < nlen; i++)
		if ((unsigned char)name[i] < 0x20 && name[i] != '\t')
			return err_set(im->e, ERR_INPUT, "%s: %s: name '%s' holds a control character (byte 0x%02x)",
			               im->file, where, csv_printable(pn, sizeof(pn), name, nlen, 60),
			               (unsigned char)name[i]);
	/* a kind group would carry the bytes into the model, which is UTF-8 JSON */
	if (!str_is_utf8(name, nlen))
		return err_set(im->e, ERR_INPUT, "%s: %s: name '%s' is not UTF-8 text", im->file, where,
		               csv_printable(pn, sizeof(pn), name, nlen, 60));
	subj = malloc(nlen + 1);
	if (!subj)
		return err_set(im->e, ERR_RUNTIME, "%s: out of host memory", im->file);
	memcpy(subj, name, nlen);
	subj[nlen] = '\0';
	im->st->records++;
	for (int i = 0; i < im->r->n; i++) {
		const struct profile_rule *pr = &im->r->rules[i];
		long layer = pr->layer;
		const char *kind = pr->kind ? pr->kind : "layer";
		int ph = phase, g;

		if ((g = pcre2_match(pr->re, (PCRE2_SPTR)subj, nlen, 0, 0, pr->md, pr->mc)) == PCRE2_ERROR_NOMATCH)
			continue;
		if (g < 0) { /* not "no match": the limit, or an error PCRE2 names */
			PCRE2_UCHAR why[120];

			pcre2_get_error_message(g, why, sizeof(why));
			r = err_set(im->e, ERR_INPUT, "%s: %s: rules[%d] cannot match '%s': %s (a simpler pattern, without "
			            "nested repeats, can)", im->file, where, i, csv_printable(pn, sizeof(pn), subj, nlen, 60),
			            (const char *)why);
			goto out;
		}
		if ((g = group(pr, "layer", &lbuf)) < 0)
			goto oom;
		if (g && (layer = layer_number(lbuf)) < 0) {
			r = err_set(im->e, ERR_INPUT, "%s: %s: layer '%s' of '%s' is not a layer number in [0, %d]",
			            im->file, where, csv_printable(pv, sizeof(pv), lbuf, strlen(lbuf), 24),
			            csv_printable(pn, sizeof(pn), subj, nlen, 60),
			            OCTO_MAX_LAYERS - 1);
			goto out;
		}
		if (layer < 0) {
			r = err_set(im->e, ERR_INPUT, "%s: %s: rules[%d] matches '%s' but its layer group took no part in the match",
			            im->file, where, i, csv_printable(pn, sizeof(pn), subj, nlen, 60));
			goto out;
		}
		if ((g = group(pr, "kind", &kbuf)) < 0)
			goto oom;
		if (g) {
			if (!kbuf[0] || strchr(kbuf, '+')) {
				r = err_set(im->e, ERR_INPUT, "%s: %s: kind '%s' of '%s' is not a kind (not empty, no '+')",
				            im->file, where, csv_printable(pv, sizeof(pv), kbuf, strlen(kbuf), 24),
				            csv_printable(pn, sizeof(pn), subj, nlen, 60));
				goto out;
			}
			kind = kbuf;
		}
		if ((g = group(pr, "phase", &pbuf)) < 0)
			goto oom;
		if (g && (ph = parse_phase(pbuf, strlen(pbuf))) < 0) {
			r = err_set(im->e, ERR_INPUT, "%s: %s: phase '%s' of '%s' is not F, B, W or BW",
			            im->file, where, csv_printable(pv, sizeof(pv), pbuf, strlen(pbuf), 24),
			            csv_printable(pn, sizeof(pn), subj, nlen, 60));
			goto out;
		} else if (!g && pr->phase) {
			ph = parse_phase(pr->phase, strlen(pr->phase));
		}
		if (ns && ns->ts == ns->ts) {
			if ((g = nested(ns, layer, ph)) < 0)
				goto oom;
			if (g) {
				im->st->matched++;
				im->st->nested++;
				goto out;
			}
		}
		if (add_time(im, layer, ph, ms, kind) < 0)
			goto oom;
		im->st->matched++;
		goto out;
	}
	im->st->unmatched++;
	strbuf_addf(&im->st->unmatched_names, "%s\n", subj);
	if (strbuf_failed(&im->st->unmatched_names))
		goto oom;
	goto out;
oom:
	r = err_set(im->e, ERR_RUNTIME, "%s: out of host memory", im->file);
out:
	pcre2_substring_free((PCRE2_UCHAR *)lbuf);
	pcre2_substring_free((PCRE2_UCHAR *)kbuf);
	pcre2_substring_free((PCRE2_UCHAR *)pbuf);
	free(subj);
	return r;
}

/* A field without the spaces around it (and any CR the line end left). */
static void trim(const char **s, size_t *n)
{
	while (*n && ((*s)[0] == ' ' || (*s)[0] == '\t'))
		(*s)++, (*n)--;
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
		(*n)--;
}

/* name,phase,ms records (RFC 4180: a quoted name may hold commas and quotes). */
static int read_csv(struct importer *im, const char *text, size_t len)
{
	struct csv c;
	char where[32], pv[96];
	int r, rc = -1;

	csv_init(&c, text, len);
	while ((r = csv_next(&c, im->file, im->e)) > 0) {
		const char *ph_s, *ms_s;
		size_t ph_n, ms_n;
		char num[64], *e;
		double ms;
		int ph;

		snprintf(where, sizeof(where), "line %ld", c.line);
		if ((c.n == 1 && c.f[0].len == 0) || (c.n == 1 && c.f[0].len == 1 && c.f[0].s[0] == '\r') ||
		    (!c.f[0].quoted && c.f[0].len && c.f[0].s[0] == '#'))
			continue;
		if (c.n != 3) {
			err_set(im->e, ERR_INPUT, "%s: %s: expected name,phase,ms (got %d field%s)", im->file, where,
			        c.n, c.n == 1 ? "" : "s");
			goto out;
		}
		ph_s = c.f[1].s, ph_n = c.f[1].len;
		ms_s = c.f[2].s, ms_n = c.f[2].len;
		trim(&ph_s, &ph_n);
		trim(&ms_s, &ms_n);
		ms = -1;
		if (ms_n < sizeof(num) && !memchr(ms_s, '\0', ms_n)) {
			memcpy(num, ms_s, ms_n);
			num[ms_n] = '\0';
			ms = strtod(num, &e);
			/* decimal only: strtod also reads hex (0x10 as 16), inf and nan */
			if (e == num || *e || strspn(num, "0123456789.eE+-") != ms_n)
				ms = -1;
		}
		if (!(ms >= 0) || ms > OCTO_MAX_COST_MS) {
			if (c.line == 1) /* a header */
				continue;
			err_set(im->e, ERR_INPUT, "%s: %s: '%s' is not a time in ms from 0 to %g", im->file, where,
			        csv_printable(pv, sizeof(pv), ms_s, ms_n, 24), OCTO_MAX_COST_MS);
			goto out;
		}
		if ((ph = parse_phase(ph_s, memchr(ph_s, '\0', ph_n) ? 0 : ph_n)) < 0) {
			err_set(im->e, ERR_INPUT, "%s: %s: phase '%s' is not F, B, W or BW", im->file, where,
			        csv_printable(pv, sizeof(pv), ph_s, ph_n, 24));
			goto out;
		}
		if (record(im, c.f[0].s, c.f[0].len, ph, ms, where, NULL) < 0)
			goto out;
	}
	rc = r;
out:
	csv_release(&c);
	return rc;
}

/* An event's pid or tid as the trace writes it: a number, a string (borrowed from the
 * trace), or neither (absent or another type, all one value). Compared as written, never
 * hashed, so two threads are never taken for one. */
struct trace_id {
	enum { TID_NONE, TID_NUM, TID_STR } kind;
	double num;
	const char *str;
};

/* A trace's complete event, for taking them per thread in start order. */
struct xev {
	const cJSON *ev;
	const char *name;
	double ts, dur;            /* us; ts NaN when the event has none */
	long index;                /* in traceEvents, for messages and a stable order */
	struct trace_id pid, tid;  /* its thread */
};

static struct trace_id trace_id(const cJSON *id)
{
	struct trace_id t = { TID_NONE, 0, NULL };

	if (cJSON_IsNumber(id)) {
		t.kind = TID_NUM;
		t.num = id->valuedouble;
	} else if (cJSON_IsString(id)) {
		t.kind = TID_STR;
		t.str = id->valuestring;
	}
	return t;
}

static int trace_id_cmp(const struct trace_id *a, const struct trace_id *b)
{
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->kind == TID_NUM && a->num != b->num)
		return a->num < b->num ? -1 : 1;
	return a->kind == TID_STR ? strcmp(a->str, b->str) : 0;
}

/* by pid, then tid */
static int thread_cmp(const struct xev *a, const struct xev *b)
{
	int c = trace_id_cmp(&a->pid, &b->pid);

	return c ? c : trace_id_cmp(&a->tid, &b->tid);
}

/* thread, then start (events without one last, in file order), the longer (enclosing)
 * event first, then file order */
static int xev_cmp(const void *pa, const void *pb)
{
	const struct xev *a = pa, *b = pb;
	bool na = a->ts != a->ts, nb = b->ts != b->ts;
	int c = thread_cmp(a, b);

	if (c)
		return c;
	if (na != nb)
		return na ? 1 : -1;
	if (!na && a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (!na && a->dur != b->dur)
		return a->dur > b->dur ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* A key of ev's that the import reads, given twice (cJSON would see the first alone), or
 * NULL. Only these: a profiler's args and metadata are not the import's to judge. */
static const char *trace_duplicate(const cJSON *ev)
{
	static const char *const read[] = { "ph", "name", "dur", "ts", "pid", "tid", NULL };

	for (int k = 0; read[k]; k++) {
		int n = 0;

		for (const cJSON *c = ev->child; c; c = c->next)
			n += c->string && strcmp(c->string, read[k]) == 0;
		if (n > 1)
			return read[k];
	}
	return NULL;
}

static int read_trace(struct importer *im, const char *text, size_t len)
{
	struct jv v = { im->file, im->e, NULL };
	const char *end = NULL;
	size_t nul = json_nul_at(text, len);
	bool oom = false;
	cJSON *root = nul < len ? NULL : json_parse_any(text, len, &end, &oom);
	const cJSON *events;
	char p[JPATH_MAX];
	long i = 0;
	int r = -1, n;
	struct xev *xs = NULL;
	size_t nx = 0;
	struct nest ns = { NULL, 0, 0, NAN, 0 };

	if (nul < len)
		return err_set(im->e, ERR_INPUT, "%s: a NUL character (raw or \\u0000) at byte %zu", im->file, nul);
	if (oom)
		return err_set(im->e, ERR_RUNTIME, "%s: out of host memory", im->file);
	if (!root)
		return err_set(im->e, ERR_INPUT, "%s: not valid JSON (a Chrome trace) nor CSV", im->file);
	/* the whole file is the trace: a NUL or anything else after it is not ignored */
	while (end && end < text + len && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
		end++;
	if (end && end < text + len) {
		err_set(im->e, ERR_INPUT, "%s: text after the end of the trace (at byte %zu)", im->file,
		        (size_t)(end - text));
		goto out;
	}
	events = cJSON_IsArray(root) ? root : cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
	if (!cJSON_IsArray(events)) {
		jv_fail(&v, "traceEvents", "required field is missing or not an array");
		goto out;
	}
	n = cJSON_GetArraySize(events);
	if (n > 0 && !(xs = calloc((size_t)n, sizeof(*xs)))) {
		err_set(im->e, ERR_RUNTIME, "%s: out of host memory", im->file);
		goto out;
	}
	/* every complete ("X") event, checked, then taken per thread in start order */
	for (const cJSON *ev = events->child; ev; ev = ev->next, i++) {
		const char *name, *ph, *dup;
		struct xev *x = &xs[nx];

		jpath_index(p, "traceEvents", i);
		if (!cJSON_IsObject(ev)) {
			jv_fail(&v, p, "must be an object, not %s", json_type_name(ev));
			goto out;
		}
		if ((dup = trace_duplicate(ev))) {
			jv_fail(&v, p, "duplicate key '%s'", dup);
			goto out;
		}
		if (jv_string(&v, ev, p, "ph", 0, "X", &ph) < 0)
			goto out;
		if (strcmp(ph, "X") != 0)
			continue;
		if (jv_string(&v, ev, p, "name", JV_REQUIRED, NULL, &name) < 0 ||
		    jv_number(&v, ev, p, "dur", JV_REQUIRED, 0, OCTO_MAX_COST_MS * 1e3, 0, &x->dur) < 0 ||
		    jv_number(&v, ev, p, "ts", 0, -1e18, 1e18, NAN, &x->ts) < 0)
			goto out;
		x->ev = ev;
		x->name = name;
		x->index = i;
		x->pid = trace_id(cJSON_GetObjectItemCaseSensitive(ev, "pid"));
		x->tid = trace_id(cJSON_GetObjectItemCaseSensitive(ev, "tid"));
		nx++;
	}
	if (nx > 1)
		qsort(xs, nx, sizeof(*xs), xev_cmp);
	for (size_t k = 0; k < nx; k++) {
		const struct xev *x = &xs[k];

		if (k == 0 || thread_cmp(x, &xs[k - 1]) != 0)
			ns.n = 0;
		/* events that ended by this one's start are no longer open */
		for (size_t j = 0; j < ns.n;)
			if (ns.v[j].end <= x->ts)
				ns.v[j] = ns.v[--ns.n];
			else
				j++;
		ns.ts = x->ts;
		ns.dur = x->dur;
		jpath_index(p, "traceEvents", x->index);
		/* autograd names its backward nodes "...Backward..." */
		if (record(im, x->name, strlen(x->name), strcasestr(x->name, "backward") ? PH_BW : PH_F, x->dur / 1e3, p,
		           &ns) < 0)
			goto out;
	}
	r = 0;
out:
	free(ns.v);
	free(xs);
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
	double total = 0;
	for (long l = 0; l <= im.max; l++) {
		struct agg *a = &im.layers[l];
		struct layer *ly = &m->layers[l];
		double n = iters > 0 ? iters : 1;

		if (a->kinds.len > JV_STRING_MAX) {
			err_set(e, ERR_INPUT, "%s: layer %ld: its kinds joined by '+' are longer than the %d bytes a "
			        "model's kind may have", file, l, JV_STRING_MAX);
			goto out;
		}
		if (!(ly->kind = strdup(a->kinds.buf)))
			goto oom;
		m->nlayers++;
		ly->f_ms = a->ms[PH_F] / n;
		ly->b_ms = (a->ms[PH_B] + a->ms[PH_BW] * (1 - r->w_fraction)) / n;
		ly->w_ms = (a->ms[PH_W] + a->ms[PH_BW] * r->w_fraction) / n;
		total += ly->f_ms + ly->b_ms + ly->w_ms;
		if (!(ly->f_ms <= OCTO_MAX_COST_MS && ly->b_ms <= OCTO_MAX_COST_MS && ly->w_ms <= OCTO_MAX_COST_MS)) {
			err_set(e, ERR_INPUT, "%s: layer %ld: its records add up to more than the %g ms a layer's F, B "
			        "or W may take per iteration", file, l, OCTO_MAX_COST_MS);
			goto out;
		}
	}
	/* the model reader refuses a table of no work (every speedup of it is 0 / 0) */
	if (!(total > 0)) {
		err_set(e, ERR_INPUT, "%s: every matched record takes 0 ms: a layer table of no work", file);
		goto out;
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
