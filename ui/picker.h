/*
 * picker — what F7 offers to open: the files opened or saved lately, the bundled plans
 * (plans/) and the samples (each model of samples/models on each cluster of
 * samples/clusters), in one list narrowed as the user types, like tig's or fzf's.
 * The list, the filter and the selection only: the view draws it, dialogs.c opens what
 * is chosen. Key codes are curses' values; nothing here draws or touches the terminal.
 */
#ifndef OCTO_UI_PICKER_H
#define OCTO_UI_PICKER_H

#include <stdbool.h>

#include "prompt.h"

#define PICKER_RECENT_MAX 10

enum pick_kind { PICK_RECENT, PICK_PLAN, PICK_SAMPLE };

struct pick_entry {
	enum pick_kind kind;
	char *name;             /* "gpt-13b-4xH200-1f1b", "llama2-7b on 8xH200" */
	char *where;            /* the file, or the model's and cluster's files */
	char *path;             /* recent, plan: the plan file */
	char *model, *cluster;  /* sample: the model's and the cluster's files */
};

struct picker {
	struct pick_entry *e;   /* recent files first (latest first), then plans, then samples */
	int n;
	int *shown;             /* indices into e of the entries the filter keeps, in order */
	int nshown;
	int sel;                /* index into shown; -1 when nothing is shown */
	int top;                /* the first row of shown on the page (kept by the view) */
	int page;               /* rows the page shows (set by the view) */
	struct line filter;     /* words that must all be in an entry's name or file, any case */
};

/* What a key did in the picker. */
enum pick_result {
	PICK_NOTHING,           /* moved, filtered, or not a key of the picker */
	PICK_CHOSE,             /* Enter on an entry: picker_chosen() says which */
	PICK_TYPED,             /* Enter on no entry: the filter's text is a path to open */
	PICK_TAB,               /* Tab: the filter's text goes to the path prompt */
	PICK_CANCEL,            /* Esc */
};

/* Builds the list from data directory dd (NULL: no plans, no samples) and the recent
 * files (latest first; missing files are left out). -1 when out of host memory (the
 * picker is then empty but valid). */
int picker_open(struct picker *pk, const char *dd, char *const *recent, int nrecent);
void picker_release(struct picker *pk);
enum pick_result picker_key(struct picker *pk, int key);
/* The selected entry, or NULL when the filter keeps none. */
const struct pick_entry *picker_chosen(const struct picker *pk);
/* Keeps the selection on the page: top moves so that sel shows among page rows. */
void picker_scroll(struct picker *pk);

/* The recent files list, one absolute path a line in <dir>/recent, latest first. */
/* Reads at most PICKER_RECENT_MAX paths into out (each strdup'd; caller frees); returns
 * how many. */
int picker_recent_read(const char *dir, char **out);
/* Puts path (made absolute) first in the list, once; 0, or -1 when it cannot be written. */
int picker_recent_add(const char *dir, const char *path);

#endif
