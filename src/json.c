/*
 * json — validated reading and human-friendly writing of JSON (see json.h).
 *
 * The one idea: every read goes through a getter that knows the JSON path, so a reader
 * can never reject input without saying where. Writing renders a value compactly when it
 * fits on the line (checked with a length-capped compact render, so the cost stays linear
 * in the file size) and expands it otherwise.
 */
#include "config.h"
#include "json.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"

#define LINE_WIDTH 100
#define MAX_EXACT_INT 9007199254740992.0 /* 2^53 */

/* ---- messages -------------------------------------------------------------------- */

const char *json_type_name(const cJSON *item)
{
	if (!item)
		return "missing";
	if (cJSON_IsNull(item))
		return "null";
	if (cJSON_IsBool(item))
		return "a boolean";
	if (cJSON_IsNumber(item))
		return "a number";
	if (cJSON_IsString(item))
		return "a string";
	if (cJSON_IsArray(item))
		return "an array";
	if (cJSON_IsObject(item))
		return "an object";
	return "an invalid value";
}

void jpath_key(char *out, const char *parent, const char *key)
{
	if (!parent || !parent[0])
		snprintf(out, JPATH_MAX, "%s", key);
	else
		snprintf(out, JPATH_MAX, "%s.%s", parent, key);
}

void jpath_index(char *out, const char *parent, long i)
{
	snprintf(out, JPATH_MAX, "%s[%ld]", parent ? parent : "", i);
}

int jv_fail(struct jv *v, const char *path, const char *fmt, ...)
{
	char what[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (v->prefix && v->prefix[0]) {
		if (path && path[0])
			return err_set(v->e, ERR_INPUT, "%s: %s.%s: %s", v->file, v->prefix, path, what);
		return err_set(v->e, ERR_INPUT, "%s: %s: %s", v->file, v->prefix, what);
	}
	if (path && path[0])
		return err_set(v->e, ERR_INPUT, "%s: %s: %s", v->file, path, what);
	return err_set(v->e, ERR_INPUT, "%s: %s", v->file, what);
}

/* Shortest decimal that reads back as the same double. */
static void fmt_number(char *out, size_t n, double x)
{
	if (x == 0) {
		snprintf(out, n, "0");
		return;
	}
	if (x == floor(x) && fabs(x) < 1e15) {
		snprintf(out, n, "%.0f", x);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(out, n, "%.*g", prec, x);
		if (strtod(out, NULL) == x)
			return;
	}
}

/* ---- parsing --------------------------------------------------------------------- */

/* cJSON returns NULL both for bad text and for a failed allocation. Its allocator hooks
 * note the latter per thread, so that a parse failure can say which one it was. */
static _Thread_local bool alloc_failed;

static void *json_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		alloc_failed = true;
	return p;
}

static void json_free(void *p)
{
	free(p);
}

static void install_hooks(void)
{
	cJSON_Hooks h = { json_malloc, json_free };

	cJSON_InitHooks(&h);
}

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Rejects objects with the same key twice anywhere in the tree (cJSON keeps both and
 * lookups would silently see only the first). */
static int check_duplicates(struct jv *v, const cJSON *item, const char *path)
{
	char sub[JPATH_MAX];
	const cJSON *c;
	long i = 0;

	if (cJSON_IsObject(item)) {
		size_t n = 0, k = 0;
		const char **names;

		for (c = item->child; c; c = c->next)
			n++;
		if (n > 1) {
			names = malloc(n * sizeof(*names));
			if (!names)
				return err_set(v->e, ERR_RUNTIME, "%s: out of host memory", v->file);
			for (c = item->child; c; c = c->next)
				names[k++] = c->string ? c->string : "";
			qsort(names, n, sizeof(*names), name_cmp);
			for (k = 1; k < n; k++) {
				if (strcmp(names[k - 1], names[k]) == 0) {
					char key[80];

					snprintf(key, sizeof(key), "%s", names[k]);
					free(names);
					return jv_fail(v, path, "duplicate key '%s'", key);
				}
			}
			free(names);
		}
		for (c = item->child; c; c = c->next) {
			jpath_key(sub, path, c->string ? c->string : "");
			if (check_duplicates(v, c, sub) < 0)
				return -1;
		}
	} else if (cJSON_IsArray(item)) {
		for (c = item->child; c; c = c->next, i++) {
			if (!cJSON_IsObject(c) && !cJSON_IsArray(c))
				continue;
			jpath_index(sub, path, i);
			if (check_duplicates(v, c, sub) < 0)
				return -1;
		}
	}
	return 0;
}

/* True when the text ends inside a string or an unclosed object/array and nothing
 * structural follows off: the file was cut short, whatever cJSON stumbled on last. */
static bool truncated_at(const char *text, size_t len, size_t off)
{
	size_t last_struct = 0;
	long depth = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == '"')
			in_str = true;
		else if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']')
			depth--;
		if (strchr("{}[],:", c))
			last_struct = i;
	}
	return (in_str || depth > 0) && off > last_struct;
}

static void describe_position(const char *text, size_t len, size_t off, char *out, size_t n)
{
	size_t line = 1, col = 1;

	if (truncated_at(text, len, off)) {
		off = len;
	} else {
		/* cJSON stops after the whitespace that follows the offending token */
		while (off > 0 && off <= len && (off == len || strchr(" \t\r\n", text[off])) &&
		       strchr(" \t\r\n", text[off - 1]))
			off--;
		if (off > 0 && off <= len && (off == len || strchr(" \t\r\n", text[off])))
			off--;
	}

	for (size_t i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	if (off >= len)
		snprintf(out, n, "line %zu, column %zu: invalid JSON: unexpected end of file", line, col);
	else if (text[off] == '\n' || text[off] == '\r')
		snprintf(out, n, "line %zu, column %zu: invalid JSON: unexpected end of line", line, col);
	else if ((unsigned char)text[off] >= 0x20 && (unsigned char)text[off] < 0x7f)
		snprintf(out, n, "line %zu, column %zu: invalid JSON: unexpected '%c'", line, col, text[off]);
	else
		snprintf(out, n, "line %zu, column %zu: invalid JSON: unexpected byte 0x%02x",
		         line, col, (unsigned char)text[off]);
}

size_t json_nul_at(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\0')
			return i;
		if (text[i] == '\\' && i + 1 < len) {
			if (text[i + 1] == 'u' && i + 5 < len && memcmp(text + i + 2, "0000", 4) == 0)
				return i;
			i++; /* the escaped character: "\\u0000" is a backslash and text */
		}
	}
	return len;
}

cJSON *json_parse(const char *text, size_t len, const char *file, struct err *e)
{
	struct jv v = { file, e, NULL };
	const char *end = NULL;
	char where[160];
	size_t i;
	cJSON *root;

	for (i = 0; i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'); i++)
		;
	if (i == len) {
		jv_fail(&v, NULL, "file is empty, expected a JSON object");
		return NULL;
	}
	/* cJSON keeps strings NUL-terminated: a NUL inside one would silently cut it */
	if ((i = json_nul_at(text, len)) < len) {
		size_t line = 1, col = 1;

		for (size_t k = 0; k < i; k++)
			text[k] == '\n' ? (line++, col = 1) : col++;
		jv_fail(&v, NULL, "line %zu, column %zu: a NUL character (raw or \\u0000) is not allowed", line, col);
		return NULL;
	}
	pthread_once(&hooks_once, install_hooks);
	alloc_failed = false;
	root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root && alloc_failed) {
		err_set(e, ERR_RUNTIME, "%s: out of host memory", file);
		return NULL;
	}
	if (!root) {
		size_t off = end && end >= text ? (size_t)(end - text) : 0;

		describe_position(text, len, off, where, sizeof(where));
		jv_fail(&v, NULL, "%s", where);
		return NULL;
	}
	if (end) {
		size_t off = (size_t)(end - text);

		while (off < len && (text[off] == ' ' || text[off] == '\t' || text[off] == '\n' || text[off] == '\r'))
			off++;
		if (off < len) {
			describe_position(text, len, off, where, sizeof(where));
			jv_fail(&v, NULL, "%s (text after the end of the document)", where);
			cJSON_Delete(root);
			return NULL;
		}
	}
	if (!cJSON_IsObject(root)) {
		jv_fail(&v, NULL, "the document must be a JSON object, not %s", json_type_name(root));
		cJSON_Delete(root);
		return NULL;
	}
	if (check_duplicates(&v, root, "") < 0) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

cJSON *json_parse_any(const char *text, size_t len, const char **end, bool *oom)
{
	cJSON *root;

	pthread_once(&hooks_once, install_hooks);
	alloc_failed = false;
	root = cJSON_ParseWithLengthOpts(text, len, end, 0);
	*oom = !root && alloc_failed;
	return root;
}

cJSON *json_load_file(const char *path, struct err *e)
{
	size_t len;
	char *text = fileio_read(path, &len, e);
	cJSON *root;

	if (!text)
		return NULL;
	root = json_parse(text, len, path, e);
	free(text);
	return root;
}

/* ---- validated getters ---------------------------------------------------------- */

int jv_member(struct jv *v, const cJSON *obj, const char *path, const char *key,
              int flags, const cJSON **out)
{
	char p[JPATH_MAX];
	const cJSON *c;

	for (c = obj ? obj->child : NULL; c; c = c->next)
		if (c->string && strcmp(c->string, key) == 0)
			break;
	*out = c;
	if (c)
		return 1;
	if (flags & JV_REQUIRED) {
		jpath_key(p, path, key);
		return jv_fail(v, p, "required field is missing");
	}
	return 0;
}

/* A member that must be of one container type (what: "an object", "an array"). */
static int jv_typed(struct jv *v, const cJSON *obj, const char *path, const char *key, int flags,
                    const cJSON **out, cJSON_bool (*is)(const cJSON *), const char *what)
{
	char p[JPATH_MAX];
	int r = jv_member(v, obj, path, key, flags, out);

	if (r <= 0)
		return r;
	if (!is(*out)) {
		jpath_key(p, path, key);
		return jv_fail(v, p, "must be %s, not %s", what, json_type_name(*out));
	}
	return 1;
}

int jv_object(struct jv *v, const cJSON *obj, const char *path, const char *key,
              int flags, const cJSON **out)
{
	return jv_typed(v, obj, path, key, flags, out, cJSON_IsObject, "an object");
}

int jv_array(struct jv *v, const cJSON *obj, const char *path, const char *key,
             int flags, const cJSON **out)
{
	return jv_typed(v, obj, path, key, flags, out, cJSON_IsArray, "an array");
}

/* The rule a value broke, in words. Wide limits that exist only to keep sums finite
 * (hi >= 1e6) are not worth mentioning unless the value broke them. */
static void fmt_range(char *out, size_t n, bool integer, double lo, double hi, int side)
{
	char a[40], b[40];
	const char *what = integer ? "an integer" : "a number";

	fmt_number(a, sizeof(a), lo);
	if (hi == MAX_EXACT_INT)
		snprintf(b, sizeof(b), "2^53");
	else
		fmt_number(b, sizeof(b), hi);
	if (lo == hi)
		snprintf(out, n, "must be %s", a);
	else if (side > 0)
		snprintf(out, n, "must be %s <= %s", what, b);
	else if (hi >= 1e6 && lo > 0 && lo <= 1e-3)
		snprintf(out, n, "must be %s > 0", what);
	else if (hi >= 1e6)
		snprintf(out, n, "must be %s >= %s", what, a);
	else
		snprintf(out, n, "must be %s in [%s, %s]", what, a, b);
}

int jv_number_value(struct jv *v, const cJSON *item, const char *path, int flags,
                    double lo, double hi, double *out)
{
	char range[120], got[40];
	bool integer = flags & JV_INTEGER;
	double x;

	if (!cJSON_IsNumber(item)) {
		fmt_range(range, sizeof(range), integer, lo, hi, 0);
		return jv_fail(v, path, "%s, not %s", range, json_type_name(item));
	}
	x = item->valuedouble;
	if (!isfinite(x)) {
		fmt_range(range, sizeof(range), integer, lo, hi, 1);
		return jv_fail(v, path, "%s (got a number too large to represent)", range);
	}
	if ((integer && x != floor(x)) || x < lo || x > hi) {
		/* the words only on failure: a big layer table reads millions of numbers */
		fmt_number(got, sizeof(got), x);
		fmt_range(range, sizeof(range), integer, lo, hi, x > hi && hi >= 1e6 && lo != hi ? 1 : 0);
		return jv_fail(v, path, "%s (got %s)", range, got);
	}
	*out = x;
	return 0;
}

int jv_number(struct jv *v, const cJSON *obj, const char *path, const char *key,
              int flags, double lo, double hi, double dflt, double *out)
{
	char p[JPATH_MAX];
	const cJSON *c;
	int r = jv_member(v, obj, path, key, flags, &c);

	if (r < 0)
		return -1;
	if (r == 0) {
		*out = dflt;
		return 0;
	}
	jpath_key(p, path, key);
	return jv_number_value(v, c, p, flags, lo, hi, out) < 0 ? -1 : 1;
}

int jv_int(struct jv *v, const cJSON *obj, const char *path, const char *key,
           int flags, long lo, long hi, long dflt, long *out)
{
	double x;
	int r = jv_number(v, obj, path, key, flags | JV_INTEGER, (double)lo, (double)hi,
	                  (double)dflt, &x);

	if (r >= 0)
		*out = (long)x;
	return r;
}

int jv_bytes(struct jv *v, const cJSON *obj, const char *path, const char *key,
             int flags, uint64_t dflt, uint64_t *out)
{
	double x;
	int r = jv_number(v, obj, path, key, flags | JV_INTEGER, 0, MAX_EXACT_INT,
	                  (double)dflt, &x);

	if (r >= 0)
		*out = (uint64_t)x;
	return r;
}

/* Control characters (C0, DEL, and C1 as UTF-8) in a name would reach a terminal raw
 * from every message and table that prints it. */
static bool has_control(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++)
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return true;
	return false;
}

bool json_has_control(const char *s)
{
	return has_control(s);
}

int jv_string(struct jv *v, const cJSON *obj, const char *path, const char *key,
              int flags, const char *dflt, const char **out)
{
	char p[JPATH_MAX];
	const cJSON *c;
	int r = jv_member(v, obj, path, key, flags, &c);

	if (r < 0)
		return -1;
	if (r == 0) {
		*out = dflt;
		return 0;
	}
	jpath_key(p, path, key);
	if (!cJSON_IsString(c))
		return jv_fail(v, p, "must be a string, not %s", json_type_name(c));
	if ((flags & JV_NONEMPTY) && !c->valuestring[0])
		return jv_fail(v, p, "must not be empty");
	if (has_control(c->valuestring))
		return jv_fail(v, p, "must not contain control characters");
	*out = c->valuestring;
	return 1;
}

int jv_bool(struct jv *v, const cJSON *obj, const char *path, const char *key,
            int flags, bool dflt, bool *out)
{
	char p[JPATH_MAX];
	const cJSON *c;
	int r = jv_member(v, obj, path, key, flags, &c);

	if (r < 0)
		return -1;
	if (r == 0) {
		*out = dflt;
		return 0;
	}
	if (!cJSON_IsBool(c)) {
		jpath_key(p, path, key);
		return jv_fail(v, p, "must be true or false, not %s", json_type_name(c));
	}
	*out = cJSON_IsTrue(c);
	return 1;
}

int jv_format(struct jv *v, const cJSON *root, const char *want)
{
	const char *got, *slash;
	size_t kind_len;

	if (jv_string(v, root, "", "format", JV_REQUIRED, NULL, &got) < 0)
		return -1;
	if (strcmp(got, want) == 0)
		return 0;
	slash = strchr(want, '/');
	kind_len = slash ? (size_t)(slash - want) : strlen(want);
	if (strncmp(got, want, kind_len) == 0 && got[kind_len] == '/')
		return jv_fail(v, "format", "unsupported version '%.60s' (this octopipe reads %s)", got, want);
	return jv_fail(v, "format", "expected '%s', got '%.60s'", want, got);
}

int json_extras(const cJSON *obj, const char *const *known, cJSON **out)
{
	cJSON *extra = NULL;
	const cJSON *c;

	*out = NULL;
	for (c = obj ? obj->child : NULL; c; c = c->next) {
		const char *const *k;
		cJSON *copy;

		for (k = known; *k; k++)
			if (c->string && strcmp(c->string, *k) == 0)
				break;
		if (*k || !c->string)
			continue;
		if (!extra && !(extra = cJSON_CreateObject()))
			return -1;
		copy = cJSON_Duplicate(c, 1);
		if (!copy || !cJSON_AddItemToObject(extra, c->string, copy)) {
			cJSON_Delete(copy);
			cJSON_Delete(extra);
			return -1;
		}
	}
	*out = extra;
	return 0;
}

/* ---- writing ---------------------------------------------------------------------- */

/* A JSON string is UTF-8: a byte that starts no valid sequence (a file name in another
 * encoding) is written as U+FFFD, so every document stays readable by any JSON parser. */
static void put_string(struct strbuf *sb, const char *s)
{
	size_t n = strlen(s);

	strbuf_addch(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x80) {
			unsigned cp;
			size_t len = strbuf_utf8_len(p, n - (size_t)(p - (const unsigned char *)s), &cp);

			if (len == 0) {
				strbuf_addstr(sb, "\xef\xbf\xbd");
			} else {
				strbuf_add(sb, (const char *)p, len);
				p += len - 1;
			}
			continue;
		}
		switch (*p) {
		case '"': strbuf_addstr(sb, "\\\""); break;
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\n': strbuf_addstr(sb, "\\n"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		case '\r': strbuf_addstr(sb, "\\r"); break;
		case '\b': strbuf_addstr(sb, "\\b"); break;
		case '\f': strbuf_addstr(sb, "\\f"); break;
		default:
			if (*p < 0x20)
				strbuf_addf(sb, "\\u%04x", *p);
			else
				strbuf_addch(sb, (char)*p);
		}
	}
	strbuf_addch(sb, '"');
}

static void put_scalar(struct strbuf *sb, const cJSON *item)
{
	char num[40];

	if (cJSON_IsString(item)) {
		put_string(sb, item->valuestring);
	} else if (cJSON_IsNumber(item)) {
		if (!isfinite(item->valuedouble)) {
			strbuf_addstr(sb, "null"); /* JSON has no infinities */
		} else {
			fmt_number(num, sizeof(num), item->valuedouble);
			strbuf_addstr(sb, num);
		}
	} else if (cJSON_IsTrue(item)) {
		strbuf_addstr(sb, "true");
	} else if (cJSON_IsFalse(item)) {
		strbuf_addstr(sb, "false");
	} else {
		strbuf_addstr(sb, "null");
	}
}

static bool is_container(const cJSON *item)
{
	return cJSON_IsArray(item) || cJSON_IsObject(item);
}

/* Compact rendering; gives up (returns false) once the text grows past limit bytes. */
static bool put_compact(struct strbuf *sb, const cJSON *item, size_t limit)
{
	const cJSON *c;
	bool obj = cJSON_IsObject(item);

	if (!is_container(item)) {
		put_scalar(sb, item);
		return sb->len <= limit;
	}
	strbuf_addch(sb, obj ? '{' : '[');
	for (c = item->child; c; c = c->next) {
		if (obj) {
			put_string(sb, c->string ? c->string : "");
			strbuf_addstr(sb, ": ");
		}
		if (!put_compact(sb, c, limit))
			return false;
		if (c->next)
			strbuf_addstr(sb, ", ");
		if (sb->len > limit)
			return false;
	}
	strbuf_addch(sb, obj ? '}' : ']');
	return sb->len <= limit && !sb->oom;
}

static void put_pretty(struct strbuf *sb, const cJSON *item, size_t indent, size_t col)
{
	struct strbuf tmp = STRBUF_INIT;
	size_t room = col + 1 < LINE_WIDTH ? LINE_WIDTH - col - 1 : 0;
	bool obj = cJSON_IsObject(item), scalars = true;
	const cJSON *c;

	if (!is_container(item)) {
		put_scalar(sb, item);
		return;
	}
	if (!item->child) {
		strbuf_addstr(sb, obj ? "{}" : "[]");
		return;
	}
	for (c = item->child; c; c = c->next)
		if (is_container(c))
			scalars = false;
	/* a flat object is a record (a layer, an op, a stage): one line reads best, however long */
	if (obj && scalars)
		room = (size_t)-1;
	if (put_compact(&tmp, item, room)) {
		strbuf_add(sb, tmp.buf, tmp.len);
		strbuf_release(&tmp);
		return;
	}
	/* the trial ran out of host memory: fail the text rather than change its layout */
	sb->oom = sb->oom || tmp.oom;
	strbuf_release(&tmp);
	if (!obj && scalars) {
		/* wrap a long list of scalars, filling each line */
		struct strbuf tok = STRBUF_INIT;
		size_t x = indent + 2;

		strbuf_addstr(sb, "[\n");
		strbuf_pad(sb, ' ', indent + 2);
		for (c = item->child; c; c = c->next) {
			strbuf_reset(&tok);
			put_scalar(&tok, c);
			if (c->next)
				strbuf_addch(&tok, ',');
			if (x > indent + 2 && x + 1 + tok.len > LINE_WIDTH) {
				strbuf_addch(sb, '\n');
				strbuf_pad(sb, ' ', indent + 2);
				x = indent + 2;
			} else if (x > indent + 2) {
				strbuf_addch(sb, ' ');
				x++;
			}
			strbuf_add(sb, tok.buf, tok.len);
			x += tok.len;
		}
		sb->oom = sb->oom || tok.oom; /* a token that failed would be missing */
		strbuf_release(&tok);
		strbuf_addch(sb, '\n');
		strbuf_pad(sb, ' ', indent);
		strbuf_addch(sb, ']');
		return;
	}
	strbuf_addstr(sb, obj ? "{\n" : "[\n");
	for (c = item->child; c; c = c->next) {
		size_t start = sb->len;

		strbuf_pad(sb, ' ', indent + 2);
		if (obj) {
			put_string(sb, c->string ? c->string : "");
			strbuf_addstr(sb, ": ");
		}
		put_pretty(sb, c, indent + 2, sb->len - start + (c->next ? 1 : 0));
		if (c->next)
			strbuf_addch(sb, ',');
		strbuf_addch(sb, '\n');
	}
	strbuf_pad(sb, ' ', indent);
	strbuf_addch(sb, obj ? '}' : ']');
}

void json_write(struct strbuf *sb, const cJSON *item)
{
	put_pretty(sb, item, 0, 0);
	strbuf_addch(sb, '\n');
}

int json_save_file(const char *path, const cJSON *item, struct err *e)
{
	struct strbuf sb = STRBUF_INIT;
	int r;

	json_write(&sb, item);
	if (strbuf_failed(&sb)) {
		strbuf_release(&sb);
		return err_set(e, ERR_RUNTIME, "%s: out of host memory formatting the file", path);
	}
	/* a document no octopipe command would read back is not written */
	if (sb.len > FILEIO_MAX_BYTES) {
		r = err_set(e, ERR_INPUT, "%s: not written: it would be %zu MiB, more than the %zu MiB any octopipe command "
		            "reads back", path, sb.len >> 20, FILEIO_MAX_BYTES >> 20);
		strbuf_release(&sb);
		return r;
	}
	r = fileio_write_atomic(path, sb.buf, sb.len, e);
	strbuf_release(&sb);
	return r;
}

int json_save_built(const char *path, cJSON *root, struct err *e)
{
	int r;

	if (!root)
		return err_set(e, ERR_RUNTIME, "%s: out of host memory", path);
	r = json_save_file(path, root, e);
	cJSON_Delete(root);
	return r;
}

/* ---- building --------------------------------------------------------------------- */

cJSON *jw_item(struct jw *w, cJSON *obj, const char *key, cJSON *item)
{
	if (!item || !obj || !cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		w->oom = true;
		return NULL;
	}
	return item;
}

cJSON *jw_num(struct jw *w, cJSON *obj, const char *key, double x)
{
	return jw_item(w, obj, key, cJSON_CreateNumber(x));
}

cJSON *jw_str(struct jw *w, cJSON *obj, const char *key, const char *s)
{
	return jw_item(w, obj, key, cJSON_CreateString(s ? s : ""));
}

cJSON *jw_bool(struct jw *w, cJSON *obj, const char *key, bool b)
{
	return jw_item(w, obj, key, cJSON_CreateBool(b));
}

cJSON *jw_null(struct jw *w, cJSON *obj, const char *key)
{
	return jw_item(w, obj, key, cJSON_CreateNull());
}

cJSON *jw_obj(struct jw *w, cJSON *obj, const char *key)
{
	return jw_item(w, obj, key, cJSON_CreateObject());
}

cJSON *jw_arr(struct jw *w, cJSON *obj, const char *key)
{
	return jw_item(w, obj, key, cJSON_CreateArray());
}

cJSON *jw_push(struct jw *w, cJSON *arr, cJSON *item)
{
	if (!item || !arr || !cJSON_AddItemToArray(arr, item)) {
		cJSON_Delete(item);
		w->oom = true;
		return NULL;
	}
	return item;
}

void jw_extras(struct jw *w, cJSON *obj, const cJSON *extra)
{
	for (const cJSON *c = extra ? extra->child : NULL; c; c = c->next) {
		if (cJSON_GetObjectItemCaseSensitive(obj, c->string))
			continue; /* a known field written by the caller wins */
		jw_item(w, obj, c->string, cJSON_Duplicate(c, 1));
	}
}
