/*
 * keys — the command and key tables, and the help text built from them (see keys.h).
 * Letters alias the F-keys (htop's convention) and vim keys alias the arrows, so the UI
 * works over terminals and multiplexers that swallow function keys.
 */
#include "config.h"
#include "keys.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#define CTRL(c) ((c) & 0x1f)

const struct command commands[] = {
	{ CMD_HELP, "Help", "general", "this help (generated from the key table)", 1 },
	{ CMD_SAVE, "Save", "files", "save the plan to its file (atomic: temp file + rename)", 2 },
	{ CMD_SAVE_AS, "SaveAs", "files", "save the plan under a new name (e.g. plans/mine.json)", 0 },
	{ CMD_OPEN, "Open", "files", "pick a recent file, bundled plan or sample to open (type to filter)", 7 },
	{ CMD_REPORT, "report", "files", "write an HTML report of the plan, the compared one and the tuner's steps", 0 },
	{ CMD_SEARCH, "Search", "search", "search ops with a PCRE2 pattern, e.g. mb=3\\b, kind=W, stage=2, attn", 3 },
	{ CMD_FILTER, "Filter", "search", "show only the ops matching a pattern (empty pattern: all)", 4 },
	{ CMD_NEXT_MATCH, "next", "search", "next match", 0 },
	{ CMD_PREV_MATCH, "prev", "search", "previous match", 0 },
	{ CMD_COMPARE, "Compare", "views", "compare: a baseline above the plan, on one time scale", 5 },
	{ CMD_REF_NEXT, "baseline", "views", "compare with the next baseline", 0 },
	{ CMD_SWITCH, "switch", "views", "move the cursor between the two compared plans", 0 },
	{ CMD_STEPS, "Steps", "views", "steps: run the tuner and walk its steps (Enter adopts, b baselines, r re-tunes, Esc cancels)", 6 },
	{ CMD_ADOPT, "adopt", "views", "adopt the selected step (or the compared plan) as the plan", 0 },
	{ CMD_DETAILS, "details", "views", "cycle the panel: details, the run's gauges, none", 0 },
	{ CMD_XFERS, "transfers", "views", "show or hide a transfer row under each gpu", 0 },
	{ CMD_RUN, "Run", "run", "run the plan on the executor and watch it live; while running: stop (asks first)", 8 },
	{ CMD_LEFT, "left", "cursor", "previous op on the gpu", 0 },
	{ CMD_RIGHT, "right", "cursor", "next op on the gpu", 0 },
	{ CMD_UP, "up", "cursor", "gpu above (the op nearest in time)", 0 },
	{ CMD_DOWN, "down", "cursor", "gpu below", 0 },
	{ CMD_FIRST, "first", "cursor", "first op on the gpu", 0 },
	{ CMD_LAST, "last", "cursor", "last op on the gpu", 0 },
	{ CMD_PAGE_UP, "ops back", "cursor", "ten ops back", 0 },
	{ CMD_PAGE_DOWN, "ops on", "cursor", "ten ops on", 0 },
	{ CMD_ROWS_UP, "pgup", "cursor", "a page of gpu rows up", 0 },
	{ CMD_ROWS_DOWN, "pgdn", "cursor", "a page of gpu rows down", 0 },
	{ CMD_TOP, "top", "cursor", "the first gpu", 0 },
	{ CMD_BOTTOM, "bottom", "cursor", "the last gpu", 0 },
	{ CMD_WAITED, "waited", "cursor", "jump to the op this one waited for (back along the critical path)", 0 },
	{ CMD_CRIT_END, "crit", "cursor", "jump to the op that ends last (the end of the critical path)", 0 },
	{ CMD_CRIT_SHOW, "path", "views", "mark or unmark the critical path on the chart", 0 },
	{ CMD_ZOOM_IN, "zoom in", "time axis", "zoom in (microbatch numbers appear in wide ops)", 0 },
	{ CMD_ZOOM_OUT, "zoom out", "time axis", "zoom out", 0 },
	{ CMD_FIT, "fit", "time axis", "fit the iteration to the width", 0 },
	{ CMD_PAN_LEFT, "pan left", "time axis", "pan left", 0 },
	{ CMD_PAN_RIGHT, "pan right", "time axis", "pan right", 0 },
	{ CMD_OP_EARLIER, "earlier", "edit", "move the op one place earlier in its gpu's order", 0 },
	{ CMD_OP_LATER, "later", "edit", "move the op one place later in its gpu's order", 0 },
	{ CMD_STAGE_SHRINK, "shrink", "edit", "the op's stage ends one layer earlier (the next stage grows)", 0 },
	{ CMD_STAGE_GROW, "grow", "edit", "the op's stage ends one layer later (takes one from the next stage)", 0 },
	{ CMD_MOVE_STAGE, "move stage", "edit", "move the op's stage to another gpu", 0 },
	{ CMD_REORDER, "Reorder", "edit", "regenerate every gpu's order by the adaptive policy", 9 },
	{ CMD_UNDO, "undo", "edit", "undo (without limit)", 0 },
	{ CMD_REDO, "redo", "edit", "redo", 0 },
	{ CMD_BACK, "back", "general", "back out: close help, prompt, panel or search", 0 },
	{ CMD_LOG, "messages", "general", "the message log: every message in full, latest last (Up/Down scroll)", 0 },
	{ CMD_REDRAW, "redraw", "general", "redraw the screen", 0 },
	{ CMD_SUSPEND, "suspend", "general", "suspend to the shell (fg resumes; unsaved edits are autosaved first)", 0 },
	{ CMD_QUIT, "Quit", "general", "quit (asks first when there are unsaved edits)", 10 },
	{ CMD_NONE, NULL, NULL, NULL, 0 },
};

static const struct binding {
	int key;
	enum cmd cmd;
} bindings[] = {
	{ KEY_F(1), CMD_HELP }, { '?', CMD_HELP },
	{ KEY_F(2), CMD_SAVE }, { 'w', CMD_SAVE }, { CTRL('s'), CMD_SAVE },
	{ 'S', CMD_SAVE_AS }, { 'E', CMD_REPORT },
	{ KEY_F(3), CMD_SEARCH }, { '/', CMD_SEARCH },
	{ KEY_F(4), CMD_FILTER }, { '\\', CMD_FILTER },
	{ 'n', CMD_NEXT_MATCH }, { 'N', CMD_PREV_MATCH },
	{ KEY_F(5), CMD_COMPARE }, { 'v', CMD_COMPARE },
	{ 'V', CMD_REF_NEXT }, { '\t', CMD_SWITCH },
	{ KEY_F(6), CMD_STEPS }, { 'T', CMD_STEPS },
	{ '\n', CMD_ADOPT }, { '\r', CMD_ADOPT }, { KEY_ENTER, CMD_ADOPT },
	{ 'd', CMD_DETAILS }, { 't', CMD_XFERS },
	{ KEY_F(7), CMD_OPEN }, { 'o', CMD_OPEN },
	{ KEY_F(8), CMD_RUN }, { 'R', CMD_RUN },
	{ KEY_F(9), CMD_REORDER }, { 'p', CMD_REORDER },
	{ KEY_F(10), CMD_QUIT }, { 'q', CMD_QUIT },
	{ 27, CMD_BACK },
	{ KEY_LEFT, CMD_LEFT }, { 'h', CMD_LEFT },
	{ KEY_RIGHT, CMD_RIGHT }, { 'l', CMD_RIGHT },
	{ KEY_UP, CMD_UP }, { 'k', CMD_UP },
	{ KEY_DOWN, CMD_DOWN }, { 'j', CMD_DOWN },
	{ KEY_HOME, CMD_FIRST }, { '^', CMD_FIRST },
	{ KEY_END, CMD_LAST }, { '$', CMD_LAST },
	{ '{', CMD_PAGE_UP }, { '}', CMD_PAGE_DOWN },
	{ KEY_PPAGE, CMD_ROWS_UP }, { KEY_NPAGE, CMD_ROWS_DOWN }, { 'g', CMD_TOP }, { 'G', CMD_BOTTOM },
	{ 'c', CMD_WAITED }, { 'C', CMD_CRIT_END }, { 'P', CMD_CRIT_SHOW },
	{ '+', CMD_ZOOM_IN }, { '=', CMD_ZOOM_IN }, { '-', CMD_ZOOM_OUT }, { '0', CMD_FIT }, { 'f', CMD_FIT },
	{ 'H', CMD_PAN_LEFT }, { KEY_SLEFT, CMD_PAN_LEFT }, { 'L', CMD_PAN_RIGHT }, { KEY_SRIGHT, CMD_PAN_RIGHT },
	{ '<', CMD_OP_EARLIER }, { '>', CMD_OP_LATER },
	{ '[', CMD_STAGE_SHRINK }, { ']', CMD_STAGE_GROW }, { 'm', CMD_MOVE_STAGE },
	{ 'u', CMD_UNDO }, { 'U', CMD_REDO }, { CTRL('r'), CMD_REDO },
	{ 'M', CMD_LOG }, { CTRL('l'), CMD_REDRAW }, { CTRL('z'), CMD_SUSPEND },
	{ 0, CMD_NONE },
};

enum cmd keys_lookup(int key)
{
	for (const struct binding *b = bindings; b->key; b++)
		if (b->key == key)
			return b->cmd;
	return CMD_NONE;
}

const struct command *keys_command(enum cmd c)
{
	for (const struct command *k = commands; k->name; k++)
		if (k->cmd == c)
			return k;
	return NULL;
}

int keys_letter(enum cmd c)
{
	for (const struct binding *b = bindings; b->key; b++)
		if (b->cmd == c && b->key > 32 && b->key < 127)
			return b->key;
	return 0;
}

static void keyname_of(int key, struct strbuf *sb)
{
	if (key >= KEY_F(1) && key <= KEY_F(12)) {
		strbuf_addf(sb, "F%d", key - KEY_F(0));
		return;
	}
	switch (key) {
	case KEY_LEFT: strbuf_addstr(sb, "Left"); return;
	case KEY_RIGHT: strbuf_addstr(sb, "Right"); return;
	case KEY_UP: strbuf_addstr(sb, "Up"); return;
	case KEY_DOWN: strbuf_addstr(sb, "Down"); return;
	case KEY_HOME: strbuf_addstr(sb, "Home"); return;
	case KEY_END: strbuf_addstr(sb, "End"); return;
	case KEY_PPAGE: strbuf_addstr(sb, "PgUp"); return;
	case KEY_NPAGE: strbuf_addstr(sb, "PgDn"); return;
	case KEY_SLEFT: strbuf_addstr(sb, "S-Left"); return;
	case KEY_SRIGHT: strbuf_addstr(sb, "S-Right"); return;
	case KEY_ENTER: return;
	case '\r': return;
	case '\n': strbuf_addstr(sb, "Enter"); return;
	case '\t': strbuf_addstr(sb, "Tab"); return;
	case 27: strbuf_addstr(sb, "Esc"); return;
	default: break;
	}
	if (key > 0 && key < 32)
		strbuf_addf(sb, "^%c", key + '@');
	else if (key >= 32 && key < 127)
		strbuf_addch(sb, (char)key);
}

void keys_names(enum cmd c, struct strbuf *sb)
{
	for (const struct binding *b = bindings; b->key; b++)
		if (b->cmd == c) {
			size_t before = sb->len;

			if (before && sb->buf[before - 1] != ' ')
				strbuf_addch(sb, ' ');
			keyname_of(b->key, sb);
			if (sb->len > 0 && sb->buf[sb->len - 1] == ' ')
				strbuf_truncate(sb, sb->len - 1);
		}
}

void keys_help(struct strbuf *sb)
{
	static const char *const groups[] = { "general", "files", "views", "cursor", "time axis", "edit", "search",
	                                      "run", NULL };

	strbuf_addstr(sb, "OctoPipe keys (Esc or q closes this help; Up/Down, PgUp/PgDn, g/G scroll)\n");
	for (int g = 0; groups[g]; g++) {
		strbuf_addf(sb, "\n%s\n", groups[g]);
		for (const struct command *k = commands; k->name; k++) {
			struct strbuf keys = STRBUF_INIT;

			if (strcmp(k->group, groups[g]) != 0)
				continue;
			keys_names(k->cmd, &keys);
			strbuf_addf(sb, "  %s\t%s\n", keys.buf, k->help);
			strbuf_release(&keys);
		}
	}
	/* the legend: one item a line, wrapped by the page to its width */
	strbuf_addstr(sb, "\nlegend\n"
	              "mouse: a click selects an op, the wheel scrolls the gpu rows, shift+wheel pans the time axis "
	              "(where the terminal passes it on), the F-bar labels are buttons (--no-mouse: off)\n"
	              "paste: goes into a prompt as text; anywhere else it is ignored, never taken as keys\n"
	              "ops: F forward, I input-grad, W weight-grad, B full backward, . idle (bubble), : partly idle\n"
	              "bubble = 1 - busy / (gpus x iteration); efficiency = lower bound / iteration\n"
	              "right of each gpu (130 columns on): busy and bubble share of the iteration, peak memory; "
	              "! marks the busiest gpu (each of them when several tie), the bottleneck of the pipeline's steady state\n"
	              "header: each gpu's peak memory against the usable memory of one gpu\n"
	              "compare: '* cursor here' marks the chart the cursor is on (Tab switches)\n"
	              "run panel: [###.......] a gpu's utilization over the last iteration's time; between the bars "
	              "its history, one sample a character, oldest left, from ' ' (idle) through . : - = + * # % "
	              "to @ (busy)\n");
}
