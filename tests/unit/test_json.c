/*
 * test_json — parse errors name line and column; duplicate keys, trailing text and
 * non-object roots are refused; getters produce the house message format; the writer
 * round-trips, prints shortest exact numbers and keeps lines within the width.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "../tap.h"

static const char *parse_error(const char *text)
{
	static struct err e;
	cJSON *root;

	err_clear(&e);
	root = json_parse(text, strlen(text), "t.json", &e);
	if (root) {
		cJSON_Delete(root);
		return "(accepted)";
	}
	return e.msg;
}

static char *write_str(const cJSON *item)
{
	struct strbuf sb = STRBUF_INIT;

	json_write(&sb, item);
	return strbuf_detach(&sb);
}

static void test_parse(void)
{
	is_str(parse_error(""), "t.json: file is empty, expected a JSON object", "empty input");
	is_str(parse_error("{\"a\": 1,\n \"b\": }"), "t.json: line 2, column 7: invalid JSON: unexpected '}'",
	       "syntax errors give line and column");
	is_str(parse_error("{\"a\": [1, 2"), "t.json: line 1, column 12: invalid JSON: unexpected end of file",
	       "truncated input");
	is_str(parse_error("{\"a\": \"unterminated"), "t.json: line 1, column 20: invalid JSON: unexpected end of file",
	       "an unterminated string is a truncated file");
	is_str(parse_error("{\"a\": 1,, \"b\": ["), "t.json: line 1, column 9: invalid JSON: unexpected ','",
	       "an error before the truncation is reported where it is");
	/* a file cut after an opening brace, a comma or a colon ends too soon; it was told
	 * "unexpected '{'" at its last character */
	is_str(parse_error("{"), "t.json: line 1, column 2: invalid JSON: unexpected end of file", "a lone '{'");
	is_str(parse_error("{\"format\":["), "t.json: line 1, column 12: invalid JSON: unexpected end of file",
	       "cut after '['");
	is_str(parse_error("{\"a\":1,"), "t.json: line 1, column 8: invalid JSON: unexpected end of file", "cut after ','");
	is_str(parse_error("{\"a\": [tr"), "t.json: line 1, column 10: invalid JSON: unexpected end of file",
	       "cut inside true");
	is_str(parse_error("{\"a\": [1, x"), "t.json: line 1, column 11: invalid JSON: unexpected 'x'",
	       "a token no value starts with is not a cut");
	is_str(parse_error("{\"a\": [1 2"), "t.json: line 1, column 10: invalid JSON: unexpected '2'",
	       "nor is a missing comma");
	is_str(parse_error("{} {}"), "t.json: line 1, column 4: invalid JSON: unexpected '{' (text after the end of the document)",
	       "text after the document");
	is_str(parse_error("[1]"), "t.json: the document must be a JSON object, not an array", "array root");
	is_str(parse_error("{\"a\": {\"b\": [{\"c\": 1, \"c\": 2}]}}"), "t.json: a.b[0]: duplicate key 'c'",
	       "duplicate keys are found at any depth");
	is_str(parse_error("{\"x\": 1, \"y\": {\"x\": 2}}"), "(accepted)", "equal keys in different objects are fine");
	/* bytes that are not UTF-8 anywhere, a field no reader knows included: every writer
	 * turned them into U+FFFD, so a comment came back changed */
	is_str(parse_error("{\"_comment\": \"caf\xe9\"}"),
	       "t.json: _comment: must be UTF-8 text (byte 0xe9 at offset 3 is not)", "a Latin-1 byte in a comment");
	is_str(parse_error("{\"a\": [{\"b\": [\"ok\", \"\xc0\xaf\"]}]}"),
	       "t.json: a[0].b[1]: must be UTF-8 text (byte 0xc0 at offset 0 is not)", "an overlong form, deep in arrays");
	is_str(parse_error("{\"ok\": 1, \"k\xff\": 1}"),
	       "t.json: key 1 is not UTF-8 text (byte 0xff at offset 1 is not)", "a key");
	is_str(parse_error("{\"s\": \"\xe2\x82\xac \\u00e9 \xf0\x9f\x98\x80\"}"), "(accepted)", "UTF-8 and escapes pass");
	{
		/* nested past cJSON's limit: it said "unexpected '['" at the 1001st bracket */
		char deep[2 * 1001 + 16], *p = deep;

		p += sprintf(p, "{\"a\":");
		for (int i = 0; i < 1000; i++)
			*p++ = '[';
		for (int i = 0; i < 1000; i++)
			*p++ = ']';
		strcpy(p, "}");
		is_str(parse_error(deep), "t.json: line 1, column 1005: arrays and objects nested deeper than 1000 levels",
		       "nesting past the limit is named");
		deep[5 + 999] = ' ';
		deep[5 + 1000] = ' ';
		is_str(parse_error(deep), "(accepted)",
		       "1000 levels, the object's included, pass");
	}
}

static void test_getters(void)
{
	struct err e = ERR_INIT;
	struct jv v = { "g.json", &e, NULL };
	const char *text = "{\"n\": -1, \"i\": 2.5, \"s\": \"\", \"b\": 1, \"big\": 1e400, \"o\": {\"k\": \"v\"},"
	                   " \"eq\": 3, \"by\": 9007199254740994, \"pos\": 0}";
	cJSON *root = json_parse(text, strlen(text), "g.json", &e);
	const cJSON *item;
	const char *s;
	double d;
	long l;
	uint64_t u;
	bool b;

	ok(root != NULL, "the getter document parses");
	ok(jv_number(&v, root, "", "n", JV_REQUIRED, 0, 1e9, 0, &d) < 0, "a negative cost is refused");
	is_str(e.msg, "g.json: n: must be a number >= 0 (got -1)", "and the message names the rule");
	ok(jv_int(&v, root, "", "i", 0, 1, 10, 1, &l) < 0, "a fraction is not an integer");
	is_str(e.msg, "g.json: i: must be an integer in [1, 10] (got 2.5)", "integer message");
	ok(jv_string(&v, root, "", "s", JV_NONEMPTY, NULL, &s) < 0, "an empty string is refused");
	is_str(e.msg, "g.json: s: must not be empty", "empty string message");
	ok(jv_bool(&v, root, "", "b", 0, false, &b) < 0, "1 is not a boolean");
	is_str(e.msg, "g.json: b: must be true or false, not a number", "boolean message");
	ok(jv_number(&v, root, "", "big", 0, 0, 1e9, 0, &d) < 0, "an overflowing number is refused");
	is_str(e.msg, "g.json: big: must be a number <= 1000000000 (got a number too large to represent)",
	       "overflow message");
	ok(jv_number(&v, root, "", "missing", JV_REQUIRED, 0, 1, 0, &d) < 0, "a missing required field fails");
	is_str(e.msg, "g.json: missing: required field is missing", "missing field message");
	ok(jv_number(&v, root, "", "missing", 0, 0, 1, 0.25, &d) == 0 && d == 0.25, "an optional field takes its default");
	ok(jv_string(&v, root, "o", "k", JV_REQUIRED, NULL, &s) < 0, "a key is looked up in the object given, not by path");
	is_str(e.msg, "g.json: o.k: required field is missing", "and the message names the path given");
	ok(jv_object(&v, root, "", "o", JV_REQUIRED, &item) == 1, "an object member is found");
	ok(jv_string(&v, item, "o", "k", JV_REQUIRED, NULL, &s) == 1 && strcmp(s, "v") == 0, "a nested string is read");
	ok(jv_number(&v, item, "o", "k", JV_REQUIRED, 0, 1, 0, &d) < 0, "a string is not a number");
	is_str(e.msg, "g.json: o.k: must be a number in [0, 1], not a string", "nested paths are dotted");
	ok(jv_int(&v, root, "", "eq", 0, 2, 2, 2, &l) < 0, "a fixed value is checked");
	is_str(e.msg, "g.json: eq: must be 2 (got 3)", "fixed value message");
	ok(jv_bytes(&v, root, "", "by", 0, 0, &u) < 0, "byte counts above 2^53 are refused");
	is_str(e.msg, "g.json: by: must be an integer <= 2^53 (got 9007199254740994)", "byte count message");
	ok(jv_number(&v, root, "", "pos", 0, 1e-6, 1e9, 1, &d) < 0, "zero is not positive");
	is_str(e.msg, "g.json: pos: must be a number > 0 (got 0)", "positive message");
	v.prefix = "model";
	ok(jv_number(&v, root, "", "n", 0, 0, 1e9, 0, &d) < 0, "a prefixed document fails");
	is_str(e.msg, "g.json: model.n: must be a number >= 0 (got -1)", "embedded documents prefix the path");
	cJSON_Delete(root);
}

static void test_write(void)
{
	const char *text = "{\"format\": \"x\", \"a\": [0.1, 3.35, 1e-300, 1e20, 42, -0, 2.5e-7],"
	                   " \"s\": \"q\\\"\\n\\u0001\", \"nested\": {\"t\": true, \"f\": false, \"z\": null}}";
	struct err e = ERR_INIT;
	cJSON *root = json_parse(text, strlen(text), "w.json", &e), *again, *big, *arr;
	char *out, *out2, *line;
	size_t maxlen = 0;

	out = write_str(root);
	again = json_parse(out, strlen(out), "w2.json", &e);
	ok(again && cJSON_Compare(root, again, 1), "write then parse gives the same tree");
	ok(strstr(out, "[0.1, 3.35, 1e-300, 1e+20, 42, 0, 2.5e-07]") != NULL,
	   "numbers print in their shortest exact form");
	ok(strstr(out, "\"q\\\"\\n\\u0001\"") != NULL, "strings are escaped");
	out2 = write_str(again);
	is_str(out2, out, "writing is deterministic (byte-identical second write)");
	free(out);
	free(out2);
	cJSON_Delete(again);
	cJSON_Delete(root);

	/* a long list of tokens wraps within 100 columns */
	big = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(big, "schedule");
	for (int d = 0; d < 3; d++) {
		cJSON *dl = cJSON_CreateArray();

		for (int i = 0; i < 300; i++) {
			char tok[16];

			snprintf(tok, sizeof(tok), "%dF%d", d, i);
			cJSON_AddItemToArray(dl, cJSON_CreateString(tok));
		}
		cJSON_AddItemToArray(arr, dl);
	}
	out = write_str(big);
	for (line = out; *line;) {
		size_t n = strcspn(line, "\n");

		if (n > maxlen)
			maxlen = n;
		line += n + (line[n] ? 1 : 0);
	}
	ok(maxlen <= 100, "wrapped lines stay within 100 columns (longest %zu)", maxlen);
	again = json_parse(out, strlen(out), "w3.json", &e);
	ok(again && cJSON_Compare(big, again, 1), "a wrapped schedule reads back the same");
	ok(strstr(out, "{\"format\"") == NULL && strstr(out, "\"schedule\": [\n") != NULL,
	   "a document too long for one line is expanded");
	cJSON_Delete(again);
	cJSON_Delete(big);
	free(out);
}

/* jv_keys on text: 0, or -1 with the message in e */
static int keys_of(const char *text, const char *const *known, struct err *e)
{
	struct jv v = { "k.json", e, NULL };
	cJSON *root = json_parse(text, strlen(text), "k.json", e);
	int r;

	err_clear(e);
	r = jv_keys(&v, cJSON_GetObjectItem(root, "o"), "o", known);
	cJSON_Delete(root);
	return r;
}

static void test_unknown_keys(void)
{
	static const char *const known[] = { "kind", "params", "eff_class", "hidden", "b_ms", NULL };
	struct err e = ERR_INIT;

	ok(keys_of("{\"o\": {\"kind\": 1, \"params\": 2}}", known, &e) == 0, "known keys pass");
	ok(keys_of("{\"o\": {\"kind\": 1, \"_comment\": \"x\", \"_\": {}}}", known, &e) == 0,
	   "keys beginning with '_' are comments, allowed");
	ok(keys_of("{\"o\": {\"kind\": 1, \"eff_cl`ss\": \"gemm\"}}", known, &e) < 0 && e.cls == ERR_INPUT, "a typo is refused");
	is_str(e.msg, "k.json: o.eff_cl`ss: unknown field (did you mean 'eff_class'?)", "with its path and the key meant");
	keys_of("{\"o\": {\"hiden\": 5}}", known, &e);
	is_str(e.msg, "k.json: o.hiden: unknown field (did you mean 'hidden'?)", "a letter left out");
	keys_of("{\"o\": {\"Kind\": 5}}", known, &e);
	is_str(e.msg, "k.json: o.Kind: unknown field (did you mean 'kind'?)", "another case");
	keys_of("{\"o\": {\"colour\": 5}}", known, &e);
	is_str(e.msg, "k.json: o.colour: unknown field (known here: kind, params, eff_class, hidden, b_ms)",
	       "nothing close: the keys it may be");
	keys_of("{\"o\": {\"param\": 5}}", known, &e);
	is_str(e.msg, "k.json: o.param: unknown field (did you mean 'params'?)", "a letter too few");
	keys_of("{\"o\": {\"b\": 5}}", known, &e);
	ok(!strstr(e.msg, "did you mean"), "a key too short to be a typo of one is not guessed at: %s", e.msg);
	keys_of("{\"o\": {\"x\\u001b[2J\": 5}}", known, &e);
	is_str(e.msg, "k.json: o.x?[2J: unknown field (known here: kind, params, eff_class, hidden, b_ms)",
	       "a control character in the key is not printed");
	ok(keys_of("{\"o\": {}}", known, &e) == 0, "an empty object passes");
	keys_of("{\"o\": {\"b\": 5}}", (const char *const[]){ "b_ms", "makespan_ms", NULL }, &e);
	ok(!strstr(e.msg, "did you mean"), "one letter is not a unit-less name: %s", e.msg);
	keys_of("{\"o\": {\"makespan\": 5}}", (const char *const[]){ "b_ms", "makespan_ms", NULL }, &e);
	is_str(e.msg, "k.json: o.makespan: unknown field (did you mean 'makespan_ms'?)", "a name without its unit");
}

static void test_extras(void)
{
	static const char *const known[] = { "a", NULL };
	const char *text = "{\"a\": 1, \"b\": {\"c\": [1]}, \"d\": \"x\"}";
	struct err e = ERR_INIT;
	cJSON *root = json_parse(text, strlen(text), "x.json", &e), *extra = NULL, *out;
	struct jw w = { false };

	ok(json_extras(root, known, &extra) == 0 && extra, "unknown members are collected");
	is_int(cJSON_GetArraySize(extra), 2, "both unknown members");
	out = cJSON_CreateObject();
	jw_num(&w, out, "a", 2);
	jw_extras(&w, out, extra);
	ok(!w.oom && cJSON_GetObjectItem(out, "b") && cJSON_GetObjectItem(out, "d"), "extras are written back");
	is_int(cJSON_GetObjectItem(out, "a")->valueint, 2, "a known member written by the caller wins");
	cJSON_Delete(out);
	cJSON_Delete(extra);
	ok(json_extras(root, (const char *const[]){ "a", "b", "d", NULL }, &extra) == 0 && !extra,
	   "no extras gives NULL");
	cJSON_Delete(root);
}

/* Numbers as JSON writes them and only those: cJSON's strtod took "04096" as 4096. */
static void test_numbers(void)
{
	static const char *const bad[] = { "04096", "1.", "06.96", "00", "-01", ".5", "1.e3", "1e+", "0x10", "+1" };
	static const char *const good[] = { "0", "-0", "10", "0.5", "-1.5e-3", "1E+5", "2e10" };
	char text[64];
	struct err e = ERR_INIT;
	cJSON *root;
	int nbad = 0, ngood = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "{\"a\": [1, %s], \"s\": \"01\"}", bad[i]);
		root = json_parse(text, strlen(text), "n.json", &e);
		nbad += root == NULL;
		cJSON_Delete(root);
	}
	ok(nbad == (int)(sizeof(bad) / sizeof(bad[0])), "every number form JSON does not allow is refused (%d)", nbad);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "{\"a\": [1, %s], \"s\": \"01 1. 0x\"}", good[i]);
		root = json_parse(text, strlen(text), "n.json", &e);
		ngood += root != NULL;
		cJSON_Delete(root);
	}
	ok(ngood == (int)(sizeof(good) / sizeof(good[0])), "every JSON number is read, and strings are not numbers (%d)",
	   ngood);
	root = json_parse("{\n  \"seq\": 04096}", 17, "n.json", &e);
	ok(!root && strstr(e.msg, "n.json: line 2, column 10: invalid JSON: a number with a leading zero"),
	   "the refusal names the line and column (%s)", e.msg);
	cJSON_Delete(root);
}

int main(void)
{
	test_parse();
	test_numbers();
	test_getters();
	test_write();
	test_extras();
	test_unknown_keys();
	/* NUL characters: cJSON's strings are C strings, so one would cut a string short */
	{
		static const char esc[] = "{\"a\": \"x\\u0000y\"}", bs[] = "{\"a\": \"x\\\\u0000y\"}";
		static const char raw[] = "{\"a\": 1}\0";
		struct err e2 = ERR_INIT;

		is_int(json_nul_at(esc, sizeof(esc) - 1), 8, "an escaped \\u0000 is found");
		is_int(json_nul_at(bs, sizeof(bs) - 1), sizeof(bs) - 1, "an escaped backslash before u0000 is not one");
		is_int(json_nul_at(raw, sizeof(raw) - 1), 8, "a raw NUL is found");
		ok(json_parse(esc, sizeof(esc) - 1, "n.json", &e2) == NULL &&
		   strcmp(e2.msg, "n.json: line 1, column 9: a NUL character (raw or \\u0000) is not allowed") == 0,
		   "json_parse refuses it with its position (%s)", e2.msg);
	}
	return tap_done();
}
