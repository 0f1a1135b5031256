/*
 * test_picker — F7's list (ui/picker.c) on a data directory made here: the recent files
 * come first and only when they exist, then the plans, then each model on each cluster in
 * numeric order; the filter keeps entries holding every word in any case, the selection
 * stays on its entry while the filter keeps it; paging stops at the ends; the recent list
 * puts a file first, once, and keeps at most PICKER_RECENT_MAX.
 */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "picker.h"
#include "../tap.h"

static char dir[64];

static void touch(const char *rel)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	if (f)
		fclose(f);
}

static void type(struct picker *pk, const char *s)
{
	for (; *s; s++)
		picker_key(pk, (unsigned char)*s);
}

static const char *sel_name(const struct picker *pk)
{
	const struct pick_entry *e = picker_chosen(pk);

	return e ? e->name : "(none)";
}

/* the recent list: the last PICKER_RECENT_MAX files, each once, the latest first; one
 * path a line; written past a stale temporary */
static void test_recent(void)
{
	char *recent[PICKER_RECENT_MAX + 2], file[256];
	int n;

	for (int i = 0; i < PICKER_RECENT_MAX + 2; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "plans/r%d.json", i);
		touch(rel);
		snprintf(file, sizeof(file), "%s/%s", dir, rel);
		ok(picker_recent_add(dir, file) == 0, "recent: add %s", rel);
	}
	snprintf(file, sizeof(file), "%s/plans/r3.json", dir);
	picker_recent_add(dir, file);
	n = picker_recent_read(dir, recent);
	is_int(n, PICKER_RECENT_MAX, "the recent list keeps the last %d", PICKER_RECENT_MAX);
	ok(n > 1 && strstr(recent[0], "/plans/r3.json") && strstr(recent[1], "/plans/r11.json"),
	   "a file added again goes first, the rest keep their order");
	{
		int r3 = 0;

		for (int i = 0; i < n; i++)
			r3 += strstr(recent[i], "/plans/r3.json") != NULL;
		is_int(r3, 1, "each file once");
	}
	for (int i = 0; i < n; i++)
		free(recent[i]);
	ok(picker_recent_add(dir, "/nonexistent/x.json") < 0, "a file that does not exist is not remembered");
	{
		/* one path a line: a name with a line break would come back as two other files */
		char nl[300], f2[320], want[320];

		snprintf(nl, sizeof(nl), "%s/nl\n", dir);
		mkdir(nl, 0700);
		snprintf(f2, sizeof(f2), "%s/f.json", nl);
		fclose(fopen(f2, "w"));
		picker_recent_add(dir, f2);
		n = picker_recent_read(dir, recent);
		ok(n > 0 && strcmp(recent[0], "/f.json") != 0 && !strstr(recent[0], "/nl"),
		   "a path with a line break is not remembered as two (first: %s)", n > 0 ? recent[0] : "");
		for (int i = 0; i < n; i++)
			free(recent[i]);
		/* a stale temporary of the list (another UI's, a crash's) does not stop it */
		snprintf(want, sizeof(want), "%s/recent.tmp", dir);
		mkdir(want, 0700);
		snprintf(file, sizeof(file), "%s/plans/r5.json", dir);
		ok(picker_recent_add(dir, file) == 0, "the list is written past a stale recent.tmp");
		n = picker_recent_read(dir, recent);
		ok(n > 0 && strstr(recent[0], "/plans/r5.json"), "and holds the file first");
		for (int i = 0; i < n; i++)
			free(recent[i]);
	}
}

int main(void)
{
	char sub[256], *recent[2], file[256];
	struct picker pk;

	snprintf(dir, sizeof(dir), "/tmp/octopipe-picker-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("Bail out! cannot make a temporary directory\n");
		return 1;
	}
	snprintf(sub, sizeof(sub), "%s/plans", dir);
	mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/samples", dir);
	mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/samples/models", dir);
	mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/samples/clusters", dir);
	mkdir(sub, 0700);
	touch("plans/b-plan.json");
	touch("plans/a-plan.json");
	touch("plans/notes.txt");
	touch("samples/models/gpt.json");
	touch("samples/models/llama.json");
	touch("samples/clusters/16xH200.json");
	touch("samples/clusters/4xH200.json");
	touch("samples/clusters/8xH100.json");
	snprintf(file, sizeof(file), "%s/plans/a-plan.json", dir);
	recent[0] = file;
	recent[1] = "/nonexistent/gone.json";

	ok(picker_open(&pk, dir, recent, 2) == 0, "the picker opens");
	is_int(pk.n, 1 + 2 + 2 * 3, "one recent file (the missing one left out), 2 plans, 2 models x 3 clusters");
	ok(pk.e[0].kind == PICK_RECENT && strcmp(pk.e[0].name, "a-plan.json") == 0, "the recent file first");
	ok(pk.e[1].kind == PICK_PLAN && strcmp(pk.e[1].name, "a-plan") == 0 && strcmp(pk.e[2].name, "b-plan") == 0,
	   "then the plans by name (only .json files)");
	ok(pk.e[3].kind == PICK_SAMPLE && strcmp(pk.e[3].name, "gpt on 4xH200") == 0 &&
	   strcmp(pk.e[4].name, "gpt on 8xH100") == 0 && strcmp(pk.e[5].name, "gpt on 16xH200") == 0,
	   "then each model on each cluster, in numeric order (%s, %s, %s)", pk.e[3].name, pk.e[4].name, pk.e[5].name);
	ok(strstr(pk.e[3].model, "/samples/models/gpt.json") && strstr(pk.e[3].cluster, "/samples/clusters/4xH200.json"),
	   "a sample names its model's and cluster's files");
	is_int(pk.nshown, pk.n, "an empty filter shows everything");
	ok(strcmp(sel_name(&pk), "a-plan.json") == 0, "the first entry is selected");

	/* walking */
	pk.page = 4;
	picker_key(&pk, KEY_UP);
	is_int(pk.sel, 0, "Up at the top stays");
	picker_key(&pk, KEY_NPAGE);
	is_int(pk.sel, 3, "PgDn moves a page less one (the last row stays in sight)");
	picker_key(&pk, KEY_NPAGE);
	picker_key(&pk, KEY_NPAGE);
	picker_key(&pk, KEY_NPAGE);
	is_int(pk.sel, pk.n - 1, "PgDn stops at the last entry");
	ok(pk.top == pk.n - 4, "and the page ends with it (top %d)", pk.top);
	picker_key(&pk, KEY_HOME);
	ok(pk.sel == 0 && pk.top == 0, "Home: the first entry, the first page");
	picker_key(&pk, KEY_END);
	is_int(pk.sel, pk.n - 1, "End: the last");

	/* filtering */
	picker_key(&pk, KEY_HOME);
	type(&pk, "LLAMA 8x");
	is_int(pk.nshown, 1, "every word must match, in any case");
	ok(strcmp(sel_name(&pk), "llama on 8xH100") == 0, "and the match is selected (%s)", sel_name(&pk));
	ok(picker_key(&pk, '\n') == PICK_CHOSE, "Enter chooses it");
	picker_key(&pk, KEY_BACKSPACE);
	picker_key(&pk, KEY_BACKSPACE);
	picker_key(&pk, KEY_BACKSPACE);
	is_int(pk.nshown, 3, "Backspace widens the filter again (llama on 3 clusters)");
	ok(strcmp(sel_name(&pk), "llama on 8xH100") == 0, "the selection stays on its entry");
	type(&pk, " zzz");
	is_int(pk.nshown, 0, "a word nothing has: nothing shown");
	ok(picker_chosen(&pk) == NULL, "nothing chosen");
	ok(picker_key(&pk, '\r') == PICK_TYPED, "Enter then means the text typed");
	picker_key(&pk, 'u' & 0x1f);
	is_int(pk.nshown, pk.n, "^U clears the filter");
	type(&pk, "q");
	ok(pk.nshown < pk.n && strcmp(pk.filter.buf, "q") == 0, "letters are text, not commands");
	ok(picker_key(&pk, 27) == PICK_CANCEL, "Esc cancels");
	ok(picker_key(&pk, '\t') == PICK_TAB, "Tab hands the text on");
	picker_release(&pk);
	ok(picker_open(&pk, NULL, NULL, 0) == 0 && pk.n == 0 && picker_chosen(&pk) == NULL,
	   "without a data directory or recent files the picker is empty");
	picker_key(&pk, KEY_DOWN);
	picker_key(&pk, KEY_NPAGE);
	ok(pk.sel == -1, "and walking it selects nothing");
	picker_release(&pk);

	test_recent();

	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	return tap_done();
}
