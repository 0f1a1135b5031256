/*
 * json_get — the validated getters (jv_*): every member a reader takes goes through one of
 * them, which knows its JSON path, type and range, so bad input is refused with one line
 * naming the file, the path and what is wrong (see json.h). Also the checks of strings
 * (control characters) and the keeping of members a reader does not know (json_extras).
 */
#include "config.h"
#include "json.h"
#include "strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXACT_INT 9007199254740992.0 /* 2^53 */

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

	json_fmt_number(a, sizeof(a), lo);
	if (hi == MAX_EXACT_INT)
		snprintf(b, sizeof(b), "2^53");
	else
		json_fmt_number(b, sizeof(b), hi);
	if (lo == hi)
		snprintf(out, n, "must be %s", a);
	else if (side > 0)
		snprintf(out, n, "must be %s <= %s", what, b);
	else if (hi >= 1e6 && lo > 0 && lo <= 1e-3 && side == 0)
		snprintf(out, n, "must be %s > 0", what);   /* (a value above 0 but under lo: ">= lo") */
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
	if (!isfinite(x)) { /* (-1e400 was "must be <= hi") */
		fmt_range(range, sizeof(range), integer, lo, hi, x > 0 ? 1 : 0);
		return jv_fail(v, path, "%s (got a %snumber too large to represent)", range, x > 0 ? "" : "negative ");
	}
	if ((integer && x != floor(x)) || x < lo || x > hi) {
		/* the words only on failure: a big layer table reads millions of numbers */
		json_fmt_number(got, sizeof(got), x);
		fmt_range(range, sizeof(range), integer, lo, hi,
		          x > hi && hi >= 1e6 && lo != hi ? 1 : x > 0 && x < lo ? -1 : 0);
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

/* The code point of the first character of s that reorders text on a terminal
 * (utf8_reorders), else 0. A name holding one prints as other text, so it is refused as
 * a control character is. A byte that starts no character ends the scan (bad_utf8
 * refuses the string then). */
static unsigned bidi_control(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	while (n > 0) {
		unsigned cp;
		size_t len = strbuf_utf8_len(p, n, &cp);

		if (len == 0)
			return 0;
		if (utf8_reorders(cp))
			return cp;
		p += len;
		n -= len;
	}
	return 0;
}

/* Whether s holds a byte that starts no UTF-8 character (a raw C1 control such as 0x9b,
 * the eighth-bit CSI, is one; Latin-1 text is another): *at is its offset. Every name is
 * printed, so only text a terminal shows as text passes. */
static bool bad_utf8(const char *s, size_t *at)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;

	while (i < n) {
		unsigned cp;
		size_t len = strbuf_utf8_len(p + i, n - i, &cp);

		if (len == 0) {
			*at = i;
			return true;
		}
		i += len;
	}
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
	size_t at;
	unsigned bidi;

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
	if ((bidi = bidi_control(c->valuestring)) != 0)
		return jv_fail(v, p, "must not contain bidirectional formatting characters (U+%04X)", bidi);
	if (bad_utf8(c->valuestring, &at))
		return jv_fail(v, p, "must be UTF-8 text (byte 0x%02x at offset %zu is not)",
		               (unsigned char)c->valuestring[at], at);
	if (strlen(c->valuestring) > JV_STRING_MAX)
		return jv_fail(v, p, "longer than %d bytes", JV_STRING_MAX);
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

/* Whether key is one of known (NULL-terminated). */
static bool key_known(const char *key, const char *const *known)
{
	for (const char *const *k = known; *k; k++)
		if (strcmp(key, *k) == 0)
			return true;
	return false;
}

int json_extras(const cJSON *obj, const char *const *known, cJSON **out)
{
	cJSON *extra = NULL;
	const cJSON *c;

	*out = NULL;
	for (c = obj ? obj->child : NULL; c; c = c->next) {
		cJSON *copy;

		if (!c->string || key_known(c->string, known))
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

/* ---- unknown keys ---------------------------------------------------------------- */

/* Edit distance of a and b (insertions, deletions, substitutions), counted up to cap + 1:
 * enough to tell a typo from another word. */
static size_t edit_distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b), row[65];

	if (la > 64 || lb > 64 || (la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The known key closest to key, when it is close enough to be a typo of it (or key is it
 * without its unit: "makespan" for "makespan_ms"), or NULL. */
static const char *closest_key(const char *key, const char *const *known)
{
	const char *best = NULL;
	size_t best_d = 3, len = strlen(key);

	for (const char *const *k = known; *k; k++) {
		size_t d = edit_distance(key, *k, 2);

		if (d > 2 && len >= 3 && strncmp(*k, key, len) == 0 && (*k)[len] == '_' && !strchr(*k + len + 1, '_'))
			d = 2;

		if (d < best_d && d < len && d < strlen(*k)) {
			best_d = d;
			best = *k;
		}
	}
	return best;
}

/* key as it may be shown: control characters and bytes above ASCII as '?', at most 60. */
static void printable_key(char *out, size_t n, const char *key)
{
	size_t i = 0;

	for (; key[i] && i + 1 < n && i < 60; i++)
		out[i] = (unsigned char)key[i] < 0x20 || (unsigned char)key[i] >= 0x7f ? '?' : key[i];
	out[i] = '\0';
}

/* "known here: a, b, c" (shortened with "..." when long) into out. */
static const char *known_list(const char *const *known, char *out, size_t n)
{
	size_t at = (size_t)snprintf(out, n, "known here:");

	for (const char *const *k = known; *k; k++) {
		if (at + strlen(*k) + 8 >= n) {
			snprintf(out + at, n - at, " ...");
			break;
		}
		at += (size_t)snprintf(out + at, n - at, "%s %s", k == known ? "" : ",", *k);
	}
	return out;
}

bool jv_is_comment_key(const char *key)
{
	return key && key[0] == '_';
}

static int keys_check(struct jv *v, const cJSON *obj, const char *path, const char *const *known, bool near_only)
{
	char p[JPATH_MAX], shown[64], list[320];

	for (const cJSON *c = obj ? obj->child : NULL; c; c = c->next) {
		const char *near;

		if (!c->string || jv_is_comment_key(c->string) || key_known(c->string, known))
			continue;
		near = closest_key(c->string, known);
		/* a short key is within two edits of every short one ("vp" of "tp", "pp" and
		 * "dp"): where unknown fields are the source's own, only a longer one is a typo */
		if (near_only && (!near || strlen(c->string) < 5))
			continue;
		printable_key(shown, sizeof(shown), c->string);
		jpath_key(p, path, shown);
		if (near)
			return jv_fail(v, p, "unknown field (did you mean '%s'?)", near);
		return jv_fail(v, p, "unknown field (%s)", known_list(known, list, sizeof(list)));
	}
	return 0;
}

int jv_keys(struct jv *v, const cJSON *obj, const char *path, const char *const *known)
{
	return keys_check(v, obj, path, known, false);
}

int jv_keys_near(struct jv *v, const cJSON *obj, const char *path, const char *const *known)
{
	return keys_check(v, obj, path, known, true);
}
