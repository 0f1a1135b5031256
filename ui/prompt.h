/*
 * prompt — the line editor behind the status-line prompts (search, filter, save as, open,
 * move stage): cursor movement, the shell's kill keys (^U ^K ^W), a history per prompt
 * (Up/Down), Tab completion of paths with ~ expanded, and of the bundled plans' short
 * names. Key codes are curses' values; nothing here draws or touches the terminal.
 */
#ifndef OCTO_UI_PROMPT_H
#define OCTO_UI_PROMPT_H

#include <stdbool.h>
#include <stddef.h>

#define LINE_MAX_LEN 4095   /* a whole path (PATH_MAX); a longer line is refused, never cut */
#define LINE_HIST 32

/* The text is UTF-8: keys arrive a byte at a time (typed or pasted), a character's bytes
 * are kept together, and the cursor moves and deletes by characters. Text that could not
 * be kept whole (past LINE_MAX_LEN, or bytes that are no UTF-8 character) marks the line
 * lost until it is emptied or set: what shows is then not what was typed, and the
 * prompts refuse to run it (line_problem). */
struct line {
	char buf[LINE_MAX_LEN + 1];
	int len, pos;             /* in bytes; pos: the cursor, 0..len, on a character's start */
	unsigned char pend[4];    /* a character's bytes so far */
	int npend, need;
	bool cut, not_utf8;       /* what was lost */
};

struct line_hist {
	char *items[LINE_HIST];   /* oldest first; owned (strdup) */
	int n;
	int browse;               /* Up/Down: the item shown, n = the line being typed */
	char typed[LINE_MAX_LEN + 1];
	bool typed_cut, typed_not_utf8;   /* the typed line's losses (struct line) */
};

void line_set(struct line *l, const char *s);
/* Why the line is not what was typed (NULL when it is): the prompts say so and keep it
 * open instead of running it. */
const char *line_problem(const struct line *l);
/* Where to show l in room columns so the cursor shows: the byte it starts at and the
 * cursor's column from there. */
void line_view(const struct line *l, int room, int *first, int *cursor_col);
/* Applies an editing key (Left, Right, Home, End, ^A ^E ^B ^F, Backspace, Delete, ^D,
 * ^U ^K ^W, a printable character; Up/Down with h browse the history). Returns false
 * when the key is not one of these. */
bool line_key(struct line *l, struct line_hist *h, int key);

/* Remembers s (not empty, not equal to the last) and resets browsing. */
void line_hist_add(struct line_hist *h, const char *s);
void line_hist_reset(struct line_hist *h);
void line_hist_release(struct line_hist *h);

/* "~/x" and "~" as $HOME/x; other text as is. False when that does not fit in n bytes
 * (out is then empty). */
bool line_expand_home(const char *in, char *out, size_t n);
/* A file name typed into a prompt, into out: the spaces and tabs around it dropped (a
 * name is never meant to start or end with one: they come with a paste or a slip), then ~
 * expanded. NULL when it is a name (or empty: nothing was typed), else why it is none: only
 * spaces, or too long with ~ expanded (out is then empty). */
const char *line_file_name(const char *in, char *out, size_t n);
/* A question for a status line w columns wide, into out (n bytes): head, path (NULL: none)
 * and tail, then the answers ("y replaces it, n or Esc does not save"). The answers always
 * show: a line too long first loses the middle of the path ("/tmp/a-lo...e/plan.json"),
 * then the end of the question ("..."), and only when the question would keep less than
 * 30 columns are the answers given as their keys alone (keys: "y/n"). */
void prompt_question(char *out, size_t n, int w, const char *head, const char *path, const char *tail,
                     const char *answers, const char *keys);

/* Tab: completes the word before the cursor as a path (and, with subdir, as the name of
 * a bundled file in <datadir>/<subdir>/NAME.json): the whole of a single match (a directory
 * with its '/'), else the longest common prefix. Writes what happened in msg ("3 matches:
 * a b c", "no match") and returns the number of matches. */
int line_complete(struct line *l, const char *subdir, char *msg, size_t n);

#endif
