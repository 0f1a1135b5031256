/*
 * json_write — human-friendly printing of JSON and building documents (see json.h).
 *
 * A value is rendered compactly when it fits on the line (checked with a length-capped
 * compact render, so the cost stays linear in the file size) and expanded otherwise;
 * numbers print as the shortest decimal that reads back, strings as valid UTF-8. The jw
 * builders wrap cJSON's Add* functions so that one flag collects every failed allocation.
 */
#include "config.h"
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"

#define LINE_WIDTH 100

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
			json_fmt_number(num, sizeof(num), item->valuedouble);
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
	/* JSON has no infinity: null, as cJSON would print it, so a tree read in memory (the
	 * UI's steps record, the report) says what the file it becomes says */
	return jw_item(w, obj, key, isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull());
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
