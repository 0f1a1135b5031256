/*
 * test_prompt — the prompts' line editor (ui/prompt.c) with keys a byte at a time, as a
 * terminal sends them: UTF-8 characters are kept whole (typed, or broken off by another
 * key), the cursor moves and deletes by characters, a line past LINE_MAX_LEN or holding
 * bytes that are no character is marked, never silently changed, until it is emptied;
 * the history gives the typed line back with its marks; the view keeps the cursor in
 * its columns with wide characters; ~ expansion that does not fit says so.
 */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prompt.h"
#include "screen.h"
#include "../tap.h"

static void type(struct line *l, struct line_hist *h, const char *s)
{
	for (; *s; s++)
		line_key(l, h, (unsigned char)*s);
}

static int cols(const char *s)
{
	return screen_text_cols(s, strlen(s));
}

static bool ends_with(const char *s, const char *end)
{
	size_t a = strlen(s), b = strlen(end);

	return a >= b && strcmp(s + a - b, end) == 0;
}

/* A question always shows its answers whole at the end, at every width, the path losing
 * its middle and the question its end first (at 120 columns a long path cut the answers
 * off the line: "overwrite /tmp/.../and-on"). */
static void questions(void)
{
	static const char ans[] = "y replaces it, n or Esc does not save";
	char path[300], out[600];
	const char *utf = "/tmp/\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e/\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"
	                  "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e/plan.json";
	bool all = true;

	snprintf(path, sizeof(path), "/tmp/octopipe-test.AbCdEf/a-rather-long-directory-name-for-testing/"
	         "another-quite-long-subdirectory-name/and-one-more-level/existing-plan-file.json");
	prompt_question(out, sizeof(out), 200, "overwrite ", "/tmp/x.json", "? it exists: ", ans, "y/n");
	is_str(out, "overwrite /tmp/x.json? it exists: y replaces it, n or Esc does not save", "a question that fits is whole");
	prompt_question(out, sizeof(out), 120, "overwrite ", path, "? it exists, not this plan's file: ", ans, "y/n");
	ok(cols(out) <= 120 && ends_with(out, ans), "at 120 columns a long path leaves the answers whole (%s)", out);
	ok(strncmp(out, "overwrite /tmp/", 15) == 0 && strstr(out, "...") &&
	   strstr(out, "plan-file.json? it exists, not this plan's file: "),
	   "the path loses its middle; its start, its file name and the question stay");
	prompt_question(out, sizeof(out), 80, "overwrite ", path, "? it exists, not this plan's file: ", ans, "y/n");
	ok(cols(out) <= 80 && ends_with(out, ans) && strncmp(out, "overwrite /tmp/", 15) == 0,
	   "at 80 the question is cut at its end, the answers whole (%s)", out);
	prompt_question(out, sizeof(out), 50, "overwrite ", path, "? it exists, not this plan's file: ", ans, "y/n");
	ok(cols(out) <= 50 && ends_with(out, " y/n"), "narrower, the answers are their keys (%s)", out);
	prompt_question(out, sizeof(out), 3, "overwrite ", path, "? ", ans, "y/n");
	is_str(out, "y/n", "at 3 columns only the keys");
	for (int w = 1; w <= 160; w++) {
		prompt_question(out, sizeof(out), w, "overwrite ", utf, "? it exists: ", ans, "y/n");
		if (cols(out) > w || (w >= 3 && !ends_with(out, "y/n") && !ends_with(out, ans)))
			all = false;
		for (const char *c = out; *c; c += screen_char_bytes(c))
			if (screen_char_bytes(c) == 1 && (unsigned char)*c >= 0x80)
				all = false;   /* a character cut in two */
	}
	ok(all, "at every width from 1 to 160 a UTF-8 path's question fits, ends with its answers and keeps "
	   "characters whole");
}

int main(void)
{
	struct line l;
	struct line_hist h;
	char *big, out[16];
	int first, col;

	memset(&h, 0, sizeof(h));
	line_hist_reset(&h);
	line_set(&l, "");
	type(&l, &h, "plans/caf\xc3\xa9_\xe6\x97\xa5\xe6\x9c\xac.json");
	is_str(l.buf, "plans/caf\xc3\xa9_\xe6\x97\xa5\xe6\x9c\xac.json", "UTF-8 typed a byte at a time is kept whole");
	ok(line_problem(&l) == NULL, "and the line is what was typed");
	/* the cursor moves by characters: from the end, 5 left is before '.', 1 more before 本 */
	for (int i = 0; i < 6; i++)
		line_key(&l, &h, KEY_LEFT);
	is_int(l.pos, (int)strlen("plans/caf\xc3\xa9_\xe6\x97\xa5"), "Left steps over a character's bytes");
	line_key(&l, &h, KEY_BACKSPACE);
	is_str(l.buf, "plans/caf\xc3\xa9_\xe6\x9c\xac.json", "Backspace deletes a whole character");
	line_key(&l, &h, KEY_DC);
	is_str(l.buf, "plans/caf\xc3\xa9_.json", "and so does Delete");
	line_key(&l, &h, KEY_RIGHT);
	is_int(l.pos, (int)strlen("plans/caf\xc3\xa9_."), "Right steps one character");

	/* bytes that are no character: the line is marked, not silently changed */
	line_set(&l, "");
	type(&l, &h, "x\xff" "y");
	ok(l.not_utf8 && line_problem(&l) != NULL, "a byte that starts no character marks the line");
	is_str(l.buf, "xy", "(the rest is kept)");
	line_set(&l, "");
	type(&l, &h, "a\xc3");
	line_key(&l, &h, 'b');
	ok(l.not_utf8, "a character broken off by a key marks the line");
	line_set(&l, "");
	type(&l, &h, "\xc0\xaf\xe0\x80\xaf\xed\xa0\x80\xc2\x85");
	ok(l.not_utf8 && l.len == 0, "overlong forms, a surrogate and a C1 control are no characters");
	line_key(&l, &h, 'z');
	line_key(&l, &h, KEY_BACKSPACE);
	ok(!l.not_utf8 && line_problem(&l) == NULL, "emptying the line clears the mark");

	line_set(&l, "");
	type(&l, &h, "t/x\xe6\x97");
	ok(line_problem(&l) != NULL, "a line ending in part of a character is not run");
	line_key(&l, &h, KEY_BACKSPACE);
	ok(l.not_utf8 && strcmp(l.buf, "t/") == 0, "a key after it drops the part, marks the line and acts");

	/* a combining mark belongs to the character before it: the cursor never stops on it */
	line_set(&l, "e\xcc\x81x"); /* e, combining acute, x */
	line_key(&l, &h, KEY_HOME);
	line_key(&l, &h, KEY_RIGHT);
	is_int(l.pos, 3, "Right steps over a letter and its combining mark");
	line_key(&l, &h, KEY_BACKSPACE);
	is_str(l.buf, "x", "Backspace deletes the letter with its mark");

	/* past LINE_MAX_LEN: cut, said, and nothing half a character */
	big = malloc(LINE_MAX_LEN + 100);
	memset(big, 'c', LINE_MAX_LEN + 99);
	big[LINE_MAX_LEN + 99] = 0;
	line_set(&l, "");
	type(&l, &h, big);
	ok(l.cut && line_problem(&l) != NULL, "a line past %d bytes is marked cut", LINE_MAX_LEN);
	is_int(l.len, LINE_MAX_LEN, "and holds what fits");
	line_set(&l, "");
	big[LINE_MAX_LEN - 1] = 0;
	type(&l, &h, big);
	type(&l, &h, "\xe6\x97\xa5");
	is_int(l.len, LINE_MAX_LEN - 1, "a character that does not fit whole is not inserted in part");
	ok(l.cut, "and marks the line");
	line_key(&l, &h, 21); /* ^U */
	ok(!l.cut && l.len == 0, "^U clears it and the mark");
	line_set(&l, big);
	ok(!l.cut, "line_set of what fits is not cut");
	big[LINE_MAX_LEN - 1] = 'c';
	line_set(&l, big);
	ok(l.cut, "line_set of more than fits is");

	/* the history brings the typed line back with its mark */
	line_hist_add(&h, "older");
	line_set(&l, "");
	type(&l, &h, "typed\xff");
	line_key(&l, &h, KEY_UP);
	ok(!l.not_utf8 && strcmp(l.buf, "older") == 0, "Up shows the older entry, unmarked");
	line_key(&l, &h, KEY_DOWN);
	ok(l.not_utf8 && strcmp(l.buf, "typed") == 0, "Down gives the typed line back, still marked");
	line_hist_release(&h);

	/* the view: wide characters take two columns, the cursor stays in view */
	line_set(&l, "\xe6\x97\xa5\xe6\x9c\xac\xe6\x97\xa5\xe6\x9c\xac"); /* 4 wide: 8 columns */
	line_view(&l, 20, &first, &col);
	ok(first == 0 && col == 8, "the cursor at the end of 4 wide characters is column 8 (%d, %d)", first, col);
	line_view(&l, 5, &first, &col);
	ok(first == 6 && col == 4, "in 5 columns the view starts 2 characters on, cursor at 4 (%d, %d)", first, col);
	line_key(&l, NULL, KEY_HOME);
	line_view(&l, 5, &first, &col);
	ok(first == 0 && col == 0, "at Home the view starts at the line's start");

	/* ~ that does not fit */
	setenv("HOME", "/home/someone", 1);
	ok(line_expand_home("~/x", out, sizeof(out)) && strcmp(out, "/home/someone/x") == 0, "~/x expands");
	ok(!line_expand_home("~/xy", out, sizeof(out)) && out[0] == 0, "an expansion past its room is refused, empty");
	/* a file name: spaces around it dropped; only spaces is no name (a save made "   ") */
	ok(line_file_name("   ", out, sizeof(out)) != NULL && out[0] == 0, "a name of only spaces is refused");
	ok(strstr(line_file_name(" \t ", out, sizeof(out)), "only spaces") != NULL, "saying why (tabs too)");
	ok(line_file_name("  a b.json \t", out, sizeof(out)) == NULL && strcmp(out, "a b.json") == 0,
	   "spaces around a name are dropped, those inside kept");
	ok(line_file_name(" ~/x ", out, sizeof(out)) == NULL && strcmp(out, "/home/someone/x") == 0,
	   "a ~ after spaces still expands");
	ok(line_file_name("", out, sizeof(out)) == NULL && out[0] == 0, "nothing typed is no error (nothing is done)");
	ok(line_file_name("~/much-too-long", out, sizeof(out)) != NULL && out[0] == 0, "too long with ~ expanded");
	free(big);
	questions();
	return tap_done();
}
