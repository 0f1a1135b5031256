/*
 * keys — every user action as a named command with a one-line description, and the key
 * table that binds keys to commands. The help screen and the F-key bar are generated
 * from these tables, so they cannot drift from what the keys do.
 */
#ifndef OCTO_UI_KEYS_H
#define OCTO_UI_KEYS_H

#include "strbuf.h"

enum cmd {
	CMD_NONE,
	CMD_HELP, CMD_SAVE, CMD_SEARCH, CMD_FILTER, CMD_COMPARE, CMD_STEPS, CMD_OPEN, CMD_RUN,
	CMD_REORDER, CMD_QUIT,
	CMD_BACK, CMD_LEFT, CMD_RIGHT, CMD_UP, CMD_DOWN, CMD_FIRST, CMD_LAST, CMD_PAGE_UP, CMD_PAGE_DOWN,
	CMD_PAN_LEFT, CMD_PAN_RIGHT, CMD_ZOOM_IN, CMD_ZOOM_OUT, CMD_FIT,
	CMD_WAITED, CMD_CRIT_END, CMD_CRIT_SHOW, CMD_NEXT_MATCH, CMD_PREV_MATCH,
	CMD_OP_EARLIER, CMD_OP_LATER, CMD_STAGE_SHRINK, CMD_STAGE_GROW, CMD_MOVE_STAGE,
	CMD_UNDO, CMD_REDO, CMD_SAVE_AS, CMD_REPORT, CMD_XFERS, CMD_DETAILS, CMD_SWITCH, CMD_REF_NEXT, CMD_ADOPT,
	CMD_REDRAW, CMD_SUSPEND, CMD_ROWS_UP, CMD_ROWS_DOWN, CMD_TOP, CMD_BOTTOM, CMD_LOG,
	CMD_COUNT
};

struct command {
	enum cmd cmd;
	const char *name;      /* short name, also the F-key bar label */
	const char *group;     /* heading in the help screen */
	const char *help;      /* one line */
	int fkey;              /* 1..10: its place in the F-key bar; 0 = not in the bar */
};

extern const struct command commands[];

/* The command bound to a key code (curses KEY_* or a character), CMD_NONE if none. */
enum cmd keys_lookup(int key);
const struct command *keys_command(enum cmd c);
/* The first printable key bound to a command ('?' for help), or 0: the letter the F-key
 * bar shows beside the F-key, for terminals that swallow function keys. */
int keys_letter(enum cmd c);
/* "F1 ?" — the keys bound to a command, by their usual names. */
void keys_names(enum cmd c, struct strbuf *sb);
/* The help screen as lines of text ('\n'-separated), built from the tables: a key's line
 * is "  KEYS\tdescription" (the page lines the descriptions up and wraps them), any other
 * line is text to wrap at the page's width. */
void keys_help(struct strbuf *sb);

#endif
