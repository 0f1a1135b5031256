/*
 * json — parsing, validating and writing OctoPipe's JSON files on top of cJSON.
 *
 * Every reader validates through the jv_* getters below. Each getter knows the JSON path
 * of the value it reads, so any rejection becomes exactly one line in the house format
 *     FILE: JSON.PATH: problem
 * e.g. "plans/x.json: stages[3].device: must be an integer in [0, 7] (got 9)".
 * Paths are built by the caller with jpath_key()/jpath_index() into small local buffers.
 *
 * The writer prints a cJSON tree the way a person would: an object or array goes on one
 * line when it fits in the line width, otherwise one member per line; long arrays of
 * scalars (schedules) are wrapped. Numbers print in their shortest exact form.
 */
#ifndef OCTO_JSON_H
#define OCTO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "strbuf.h"

#define JPATH_MAX 256

/* Validation context: the file name used in messages and where errors go. */
struct jv {
	const char *file;
	struct err *e;
	const char *prefix; /* path of the document inside its file ("model" when embedded), or NULL */
};

/* Parses text (need not be NUL-terminated). Rejects invalid JSON with its line and column,
 * NUL characters, a root that is not an object, and objects with duplicate keys. Caller
 * cJSON_Delete()s. */
cJSON *json_parse(const char *text, size_t len, const char *file, struct err *e);

/* Parses text as any JSON value (an array too), without json_parse's checks; *end (when
 * end is not NULL) is where parsing stopped. Returns NULL when the text is not JSON, or
 * with *oom set when an allocation failed. */
cJSON *json_parse_any(const char *text, size_t len, const char **end, bool *oom);

/* Offset of the first NUL character in JSON text, raw or escaped as \u0000 (cJSON's
 * strings are C strings, so either would cut a string short), or len when there is none. */
size_t json_nul_at(const char *text, size_t len);

/* Reads and parses a whole file (fileio_read + json_parse). */
cJSON *json_load_file(const char *path, struct err *e);

/* "parent.key" (or "key" at the root) and "parent[i]" into out. */
void jpath_key(char *out, const char *parent, const char *key);
void jpath_index(char *out, const char *parent, long i);

/* Fails with "FILE: PATH: <formatted problem>"; returns -1. */
int jv_fail(struct jv *v, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

enum jv_flags {
	JV_OPTIONAL = 0,
	JV_REQUIRED = 1 << 0,
	JV_INTEGER  = 1 << 1, /* the number must be integral */
	JV_NONEMPTY = 1 << 2, /* strings: not "" */
};

/* The longest string jv_string accepts (a path's PATH_MAX): a name of megabytes was
 * printed whole in every line and table row that shows it. */
#define JV_STRING_MAX 4096

/* Whether s holds a control character (C0, DEL or C1), which the readers refuse in strings. */
bool json_has_control(const char *s);

/* Member lookup by exact key. Returns 1 when present (*out set), 0 when absent and
 * optional, -1 (error set) when absent and required or of the wrong type. */
int jv_member(struct jv *v, const cJSON *obj, const char *path, const char *key,
              int flags, const cJSON **out);
int jv_object(struct jv *v, const cJSON *obj, const char *path, const char *key,
              int flags, const cJSON **out);
int jv_array(struct jv *v, const cJSON *obj, const char *path, const char *key,
             int flags, const cJSON **out);
/* Number in [lo, hi], finite. Absent and optional: *out = dflt, returns 0. */
int jv_number(struct jv *v, const cJSON *obj, const char *path, const char *key,
              int flags, double lo, double hi, double dflt, double *out);
int jv_int(struct jv *v, const cJSON *obj, const char *path, const char *key,
           int flags, long lo, long hi, long dflt, long *out);
/* Byte counts: integers in [0, 2^53]. */
int jv_bytes(struct jv *v, const cJSON *obj, const char *path, const char *key,
             int flags, uint64_t dflt, uint64_t *out);
/* *out points into the tree (not copied). */
int jv_string(struct jv *v, const cJSON *obj, const char *path, const char *key,
              int flags, const char *dflt, const char **out);
int jv_bool(struct jv *v, const cJSON *obj, const char *path, const char *key,
            int flags, bool dflt, bool *out);
/* Validates a value that is not a member (an array element): number in [lo, hi]. */
int jv_number_value(struct jv *v, const cJSON *item, const char *path, int flags,
                    double lo, double hi, double *out);

/* Checks "format" against want (e.g. "octopipe.model/1"). */
int jv_format(struct jv *v, const cJSON *root, const char *want);

/* The shortest decimal that reads back as the same double x, into out. */
void json_fmt_number(char *out, size_t n, double x);
/* A JSON type in words for messages: "a string", "an array", ... */
const char *json_type_name(const cJSON *item);

/* Refuses a member of obj whose key is not in known (NULL-terminated): every reader of an
 * octopipe.* object calls it with the object's whole list of keys (also those it reads
 * only in some modes), so a misspelt field is never read as its default. The message names
 * the key's path and, when a known key is within two edits, "did you mean '...'?". Keys
 * beginning with '_' are comments, allowed everywhere. */
int jv_keys(struct jv *v, const cJSON *obj, const char *path, const char *const *known);
/* jv_keys for a document written elsewhere (published runs): a member whose key (of 5
 * characters or more) is near a known one is refused as its typo; any other is the
 * source's own field, accepted and not read. */
int jv_keys_near(struct jv *v, const cJSON *obj, const char *path, const char *const *known);
/* Whether key is a comment's ("_..."). */
bool jv_is_comment_key(const char *key);

/* Copies of the members of obj whose keys are not in known (NULL-terminated) into *out
 * (NULL when there are none). Readers keep these so that writers can preserve the comments
 * ("_..." members; jv_keys refused any other unknown one) and the fields read elsewhere (a
 * model's "source"). Returns -1 when out of host memory. */
int json_extras(const cJSON *obj, const char *const *known, cJSON **out);

/* Pretty-prints item followed by a newline. */
void json_write(struct strbuf *sb, const cJSON *item);
/* json_write + fileio_write_atomic. */
int json_save_file(const char *path, const cJSON *item, struct err *e);
/* The same for a tree just built by a *_to_json() writer: takes ownership of root and
 * frees it; a NULL root (the writer ran out of host memory) is reported as such. */
int json_save_built(const char *path, cJSON *root, struct err *e);

/* Building documents: cJSON's Add* functions return NULL when an allocation fails and
 * silently leave the member out. These wrappers record such a failure in the builder, so a
 * writer checks w.oom once at the end instead of after every call. */
struct jw {
	bool oom;
};
/* Adds item (may be NULL from a failed builder: then w->oom is set) under key. */
cJSON *jw_item(struct jw *w, cJSON *obj, const char *key, cJSON *item);
/* A number; null where x is not finite (as cJSON prints it, so the tree and its file agree). */
cJSON *jw_num(struct jw *w, cJSON *obj, const char *key, double x);
cJSON *jw_str(struct jw *w, cJSON *obj, const char *key, const char *s);
cJSON *jw_bool(struct jw *w, cJSON *obj, const char *key, bool b);
cJSON *jw_null(struct jw *w, cJSON *obj, const char *key);
cJSON *jw_obj(struct jw *w, cJSON *obj, const char *key);
cJSON *jw_arr(struct jw *w, cJSON *obj, const char *key);
/* Appends item (possibly NULL from a failed cJSON_Create*) to an array; returns item. */
cJSON *jw_push(struct jw *w, cJSON *arr, cJSON *item);
/* Adds copies of extra's members (see json_extras). */
void jw_extras(struct jw *w, cJSON *obj, const cJSON *extra);

#endif
