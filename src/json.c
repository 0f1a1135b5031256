/*
 * json — parsing JSON text into cJSON, and the messages every reader shares (see json.h).
 *
 * The one idea of the json module: every read goes through a getter that knows the JSON
 * path, so a reader can never reject input without saying where. This file parses
 * (strictly: duplicate keys, NUL characters and truncated text are refused with their
 * line and column) and words the failures; the validated getters (jv_*) are in
 * json_get.c, printing and building documents in json_write.c.
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
#include "strbuf.h"


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

void json_fmt_number(char *out, size_t n, double x)
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

/* Offset of the first byte in s that starts no UTF-8 character, or -1. */
static long utf8_bad_at(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;

	while (i < n) {
		unsigned cp;
		size_t len = strbuf_utf8_len(p + i, n - i, &cp);

		if (len == 0)
			return (long)i;
		i += len;
	}
	return -1;
}

/* JSON text is UTF-8: a key or string anywhere in the tree (a field no reader knows, a
 * comment) with bytes that are not would be rewritten as U+FFFD by every writer, so it is
 * refused where it is, as the readers of known fields refuse theirs. */
static int check_text(struct jv *v, const cJSON *item, const char *path)
{
	char sub[JPATH_MAX];
	const cJSON *c;
	long i = 0, at;

	if (cJSON_IsString(item) && (at = utf8_bad_at(item->valuestring)) >= 0)
		return jv_fail(v, path, "must be UTF-8 text (byte 0x%02x at offset %ld is not)",
		               (unsigned char)item->valuestring[at], at);
	for (c = item->child; c; c = c->next, i++) {
		if (cJSON_IsObject(item)) {
			if (c->string && (at = utf8_bad_at(c->string)) >= 0)
				return jv_fail(v, path, "key %ld is not UTF-8 text (byte 0x%02x at offset %ld is not)",
				               i, (unsigned char)c->string[at], at);
			jpath_key(sub, path, c->string ? c->string : "");
		} else {
			jpath_index(sub, path, i);
		}
		if (check_text(v, c, sub) < 0)
			return -1;
	}
	return 0;
}

/* Offset of the first '[' or '{' that opens a level deeper than max outside strings, or
 * len: cJSON stops there with no word of why. */
static size_t too_deep_at(const char *text, size_t len, long max)
{
	long depth = 0;

	for (size_t i = 0; i < len; i++) {
		if (text[i] == '"') {
			for (i++; i < len && text[i] != '"'; i++)
				if (text[i] == '\\')
					i++;
		} else if (text[i] == '{' || text[i] == '[') {
			if (++depth > max)
				return i;
		} else if (text[i] == '}' || text[i] == ']') {
			depth--;
		}
	}
	return len;
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
	if (in_str)
		return off > last_struct;
	if (depth <= 0 || off < last_struct)
		return false; /* cJSON stopped before the last brace, comma or colon: an error there */
	/* an open object or array whose text after its last brace, comma or colon is blank or a
	 * value that may go on ("{", "{\"a\":1,", "[1, 2", "[tr" end too soon; "[1, x" has a
	 * token no JSON value starts with) */
	{
		size_t a = last_struct + 1, b = len, t;

		while (a < len && strchr(" \t\r\n", text[a]))
			a++;
		while (b > a && strchr(" \t\r\n", text[b - 1]))
			b--;
		if (a == b || text[a] == '"')
			return true;
		for (t = a; t < b && strchr("0123456789+-.eE", text[t]); t++)
			;
		if (t == b)
			return true;
		return (b - a <= 4 && strncmp(text + a, "true", b - a) == 0) ||
		       (b - a <= 5 && strncmp(text + a, "false", b - a) == 0) ||
		       (b - a <= 4 && strncmp(text + a, "null", b - a) == 0);
	}
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

/* The first number (outside strings) that JSON's grammar does not allow, or len: cJSON reads
 * numbers with strtod, so "04096" was 4096, "1." and "06.96" numbers too. JSON's:
 * -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, then a delimiter. */
static size_t bad_number_at(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		size_t j = i;

		if (text[i] == '"') {
			for (i++; i < len && text[i] != '"'; i++)
				if (text[i] == '\\')
					i++;
			continue;
		}
		if (text[i] != '-' && !(text[i] >= '0' && text[i] <= '9'))
			continue;
		if (text[j] == '-')
			j++;
		if (j < len && text[j] == '0')
			j++;
		else if (j < len && text[j] >= '1' && text[j] <= '9')
			while (j < len && text[j] >= '0' && text[j] <= '9')
				j++;
		else
			return i;
		if (j < len && text[j] == '.') {
			if (++j >= len || text[j] < '0' || text[j] > '9')
				return i;
			while (j < len && text[j] >= '0' && text[j] <= '9')
				j++;
		}
		if (j < len && (text[j] == 'e' || text[j] == 'E')) {
			if (++j < len && (text[j] == '+' || text[j] == '-'))
				j++;
			if (j >= len || text[j] < '0' || text[j] > '9')
				return i;
			while (j < len && text[j] >= '0' && text[j] <= '9')
				j++;
		}
		if (j < len && !strchr(" \t\r\n,]}", text[j]))
			return i;
		i = j - 1;
	}
	return len;
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
	if ((i = too_deep_at(text, len, CJSON_NESTING_LIMIT)) < len) {
		size_t line = 1, col = 1;

		for (size_t k = 0; k < i; k++)
			text[k] == '\n' ? (line++, col = 1) : col++;
		jv_fail(&v, NULL, "line %zu, column %zu: arrays and objects nested deeper than %d levels",
		        line, col, CJSON_NESTING_LIMIT);
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
	if ((i = bad_number_at(text, len)) < len) {
		size_t line = 1, col = 1;

		for (size_t k = 0; k < i; k++)
			text[k] == '\n' ? (line++, col = 1) : col++;
		jv_fail(&v, NULL, "line %zu, column %zu: invalid JSON: a number with a leading zero, a bare '.' or "
		        "another form JSON does not allow", line, col);
		cJSON_Delete(root);
		return NULL;
	}
	if (!cJSON_IsObject(root)) {
		jv_fail(&v, NULL, "the document must be a JSON object, not %s", json_type_name(root));
		cJSON_Delete(root);
		return NULL;
	}
	if (check_duplicates(&v, root, "") < 0 || check_text(&v, root, "") < 0) {
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
