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

#define LINE_MAX_LEN 4095   /* a whole path (PATH_MAX): a cut one would save to another file */
#define LINE_HIST 32

struct line {
	char buf[LINE_MAX_LEN + 1];
	int len, pos;             /* pos: the cursor, 0..len */
};

struct line_hist {
	char *items[LINE_HIST];   /* oldest first; owned (strdup) */
	int n;
	int browse;               /* Up/Down: the item shown, n = the line being typed */
	char typed[LINE_MAX_LEN + 1];
};

void line_set(struct line *l, const char *s);
/* Applies an editing key (Left, Right, Home, End, ^A ^E ^B ^F, Backspace, Delete, ^D,
 * ^U ^K ^W, a printable character; Up/Down with h browse the history). Returns false
 * when the key is not one of these. */
bool line_key(struct line *l, struct line_hist *h, int key);

/* Remembers s (not empty, not equal to the last) and resets browsing. */
void line_hist_add(struct line_hist *h, const char *s);
void line_hist_reset(struct line_hist *h);
void line_hist_release(struct line_hist *h);

/* "~/x" and "~" as $HOME/x; other text as is. */
void line_expand_home(const char *in, char *out, size_t n);
/* Tab: completes the word before the cursor as a path (and, with subdir, as the name of
 * a bundled file in <datadir>/<subdir>/NAME.json): the whole of a single match (a directory
 * with its '/'), else the longest common prefix. Writes what happened in msg ("3 matches:
 * a b c", "no match") and returns the number of matches. */
int line_complete(struct line *l, const char *subdir, char *msg, size_t n);

#endif
