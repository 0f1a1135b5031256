/*
 * statusbar — the two bottom lines: the status line (the latest message, cut with a
 * pointer to the log when long; the open prompt with its cursor; the question asked) and
 * the F-key bar, which is generated from the key table (keys.c) like the help, with each
 * key's letter alternative, so neither can drift from what the keys do.
 */
#include "config.h"
#include "view_int.h"

#include <stdio.h>
#include <string.h>

#include "keys.h"

static const char *prompt_label(enum prompt_kind k)
{
	switch (k) {
	case PROMPT_SEARCH: return "search (PCRE2): /";
	case PROMPT_FILTER: return "filter (PCRE2, empty shows all): \\";
	case PROMPT_SAVE_AS: return "save as: ";
	case PROMPT_REPORT: return "write the report to: ";
	case PROMPT_OPEN: return "open plan: ";
	default: return "move the stage to gpu: ";
	}
}

/* The latest message in w columns of row y (cut, with a pointer to the log, when long). */
static void message_draw(struct app *a, struct screen *s, int y, int w)
{
	if (a->msg[0] && (int)strlen(a->msg) > w && w > 30) {
		/* cut, and say where the rest is */
		static const char more[] = " ... (M: in full)";
		int n = w - (int)sizeof(more) + 1;

		screen_text(s, 0, y, n, a->msg, (enum role)a->msg_role);
		screen_text(s, n, y, w - n, more, R_DIM);
	} else if (a->msg[0])
		screen_text(s, 0, y, w, a->msg, (enum role)a->msg_role);
	else
		screen_text(s, 0, y, w, "? help  / search  arrows move  < > move op  [ ] move boundary  m move stage  u undo  c waited for",
		            R_DIM);
}

int prompt_line_draw(struct screen *s, int x, int y, int room, const struct line *l)
{
	int first, col, n;

	if (room < 1)
		return 0;
	/* the text scrolls so the cursor shows; the cursor is the cell of its character */
	line_view(l, room, &first, &col);
	n = screen_text(s, x, y, room, l->buf + first, R_NORMAL);
	if (l->pos < l->len) {
		char ch[5] = { 0 };
		int k = screen_char_bytes(l->buf + l->pos);

		memcpy(ch, l->buf + l->pos, (size_t)(k > 4 ? 4 : k));
		if (screen_text(s, x + col, y, room - col, ch, R_CURSOR) == 0)
			screen_put(s, x + col, y, ' ', R_CURSOR);
	} else if (col < room) {
		screen_put(s, x + col, y, ' ', R_CURSOR);
	}
	return n;
}

/* The question asked, worded for w columns: its answers always whole at the end (a long
 * path loses its middle, the question its end; prompt_question). */
static void question_text(const struct app *a, int w, char *buf, size_t n)
{
	static const struct {
		const char *head, *answers, *keys;
	} q[] = {
		[Q_QUIT] = { .head = "unsaved edits: ", .keys = "s/y/n",
		             .answers = "s saves and quits, y quits without saving, n or Esc stays" },
		[Q_OPEN] = { .head = "unsaved edits: ", .keys = "s/y/n",
		             .answers = "s saves and opens, y opens without saving, n or Esc stays" },
		[Q_STOP] = { .head = "stop the run? ", .answers = "y stops it (sigterm), n or Esc lets it run", .keys = "y/n" },
		[Q_STOP_QUIT] = { .head = "a run is in progress: ", .answers = "y stops it and quits, n or Esc stays",
		                  .keys = "y/n" },
	};

	switch (a->question) {
	case Q_RECOVER:
		prompt_question(buf, n, w, "recover the unsaved edits of an earlier session (", a->as.path, ")? ",
		                "y recovers them, n leaves them, d deletes them", "y/n/d");
		break;
	case Q_OVERWRITE:
		if (a->pending_changed)
			prompt_question(buf, n, w, "", a->pending_save, " changed on disk since it was opened (another "
			                "program wrote it): ", "y replaces it with this plan, n or Esc does not save", "y/n");
		else
			prompt_question(buf, n, w, "overwrite ", a->pending_save, "? it exists, not this plan's file: ",
			                "y replaces it, n or Esc does not save", "y/n");
		break;
	case Q_OVERWRITE_REPORT:
		prompt_question(buf, n, w, "overwrite ", a->pending_save, "? it exists: ",
		                "y replaces it with the report, n or Esc writes nothing", "y/n");
		break;
	default:
		prompt_question(buf, n, w, q[a->question].head, NULL, "", q[a->question].answers, q[a->question].keys);
		break;
	}
}

void statusbar_draw(struct app *a, struct screen *s, const struct rect *r)
{
	if (a->mode == MODE_PROMPT) {
		int x = screen_text(s, 0, r->y, r->w, prompt_label(a->prompt), R_PROMPT);

		/* a line that is not what was typed says so at the right, always in view */
		const char *lost = a->line.cut ? " [cut]" : a->line.not_utf8 || a->line.npend ? " [not UTF-8]" : "";
		int room = r->w - x - 1 - (int)strlen(lost), used;

		if (*lost && room > 0)
			screen_text(s, r->w - (int)strlen(lost), r->y, (int)strlen(lost), lost, R_ERROR);
		used = prompt_line_draw(s, x, r->y, room, &a->line);
		/* a message said while the prompt is open (a completion's matches) beside it */
		if (a->msg[0] && room - used - 3 > 20)
			screen_text(s, x + used + 3, r->y, room - used - 3, a->msg, R_DIM);
		return;
	}
	if (a->mode == MODE_QUESTION) {
		char buf[LINE_MAX_LEN + 400];

		question_text(a, r->w, buf, sizeof(buf));
		screen_text(s, 0, r->y, r->w, buf, R_PROMPT);
		return;
	}
	{
		/* the target runtime (--target) is named at the right end, always */
		char tag[40] = "";
		int w = r->w;

		if (a->target != TARGET_OCTOPIPE && r->w > 60) {
			snprintf(tag, sizeof(tag), " target %s", target_name(a->target));
			w = r->w - (int)strlen(tag);
			screen_text(s, w, r->y, r->w - w, tag, R_LABEL);
		}
		message_draw(a, s, r->y, w);
	}
}

/* A shorter name for the F-key bar when the full ones do not fit (80 columns). */
static const char *fbar_short(enum cmd c, const char *name)
{
	switch (c) {
	case CMD_SEARCH: return "Find";
	case CMD_FILTER: return "Filt";
	case CMD_COMPARE: return "Comp";
	case CMD_STEPS: return "Step";
	case CMD_REORDER: return "Order";
	default: return name;
	}
}

/* One label of the F-key bar: "F5", the letter that does the same ("v") and the name. */
struct fbar_item {
	const struct command *k;
	int x, hit;             /* where it starts; the columns a click on it takes (its gap too) */
	int keyw;               /* "F5" or "F10" and the letter */
	char name[16];
};

static int item_w(const struct fbar_item *it)
{
	return it->keyw + (int)strlen(it->name);
}

/* The F-keys in the order they are left out when even the short names do not fit (at 80
 * columns while a run goes, "Stop" is a letter longer than "Run"): Filter first (a search
 * finds the same ops), Help, Run or Stop and Quit last. */
static const int fbar_drop_order[] = { 4, 5, 6, 9, 3, 7, 2, 1, 8, 10 };

static int fbar_total(const struct fbar_item *it, int n)
{
	int total = n > 0 ? n - 1 : 0;    /* a blank between each two */

	for (int i = 0; i < n; i++)
		total += item_w(&it[i]);
	return total;
}

/* Leaves out the F-key of lowest priority (fbar_drop_order); returns how many are left. */
static int fbar_drop(struct fbar_item *it, int n)
{
	for (size_t d = 0; d < sizeof(fbar_drop_order) / sizeof(fbar_drop_order[0]); d++)
		for (int i = 0; i < n; i++)
			if (it[i].k->fkey == fbar_drop_order[d]) {
				memmove(&it[i], &it[i + 1], (size_t)(n - i - 1) * sizeof(it[0]));
				return n - 1;
			}
	return n > 0 ? n - 1 : 0;
}

/* The F-key bar laid out in w columns, into it (at most 10); returns how many show. Every
 * label is set apart from the next by a blank at least (at 80 and 90 columns they ran
 * together): in ten equal slots when each fits its slot, else packed with the spare
 * columns spread between them, every name in its short form when the full ones do not
 * fit (as htop and mc do); when even those do not, the F-keys of lowest priority are left
 * out (fbar_drop_order). A name is whole or absent, never cut. */
static int fbar_layout(const struct app *a, int w, struct fbar_item *it)
{
	int n = 0, total = 0, slot = w / 10, x = 0, spare;
	bool equal = true;

	for (int f = 1; f <= 10; f++)
		for (const struct command *k = commands; k->name; k++) {
			if (k->fkey != f)
				continue;
			memset(&it[n], 0, sizeof(it[n]));
			it[n].k = k;
			it[n].keyw = (f == 10 ? 3 : 2) + (keys_letter(k->cmd) ? 1 : 0);
			snprintf(it[n].name, sizeof(it[n].name), "%s", k->cmd == CMD_RUN && run_active(a) ? "Stop" : k->name);
			n++;
			break;
		}
	for (int i = 0; i < n; i++) {
		int end = i == n - 1 ? w : (it[i].k->fkey) * slot - 1;    /* a blank before the next */

		equal = equal && (it[i].k->fkey - 1) * slot + item_w(&it[i]) <= end;
	}
	if (equal) {
		for (int i = 0; i < n; i++) {
			it[i].x = (it[i].k->fkey - 1) * slot;
			it[i].hit = i == n - 1 ? w - it[i].x : slot;
		}
		return n;
	}
	/* the short names for all or for none, so the bar reads alike; a name is never cut */
	if (fbar_total(it, n) > w)
		for (int i = 0; i < n; i++) {
			const char *sh = fbar_short(it[i].k->cmd, it[i].name);

			if (sh != it[i].name)
				snprintf(it[i].name, sizeof(it[i].name), "%s", sh);
		}
	while (n > 0 && fbar_total(it, n) > w)
		n = fbar_drop(it, n);
	total = fbar_total(it, n);
	spare = w - total;
	for (int i = 0; i < n; i++) {
		int gap = i == n - 1 ? 0 : 1 + spare / (n > 1 ? n - 1 : 1) + (i < spare % (n > 1 ? n - 1 : 1));

		it[i].x = x;
		it[i].hit = i == n - 1 ? w - x : item_w(&it[i]) + gap;
		x += item_w(&it[i]) + gap;
	}
	return n;
}

int statusbar_fbar_key_at(const struct app *a, int w, int x)
{
	struct fbar_item it[10];
	int n = fbar_layout(a, w, it);

	for (int i = 0; i < n; i++)
		if (x >= it[i].x && x < it[i].x + it[i].hit)
			return it[i].k->fkey;
	return 0;
}

/* The F-key bar: each label is the F-key, the letter that does the same (highlighted) and
 * the command's name (fbar_layout). */
void statusbar_draw_fbar(struct app *a, struct screen *s, const struct rect *r)
{
	struct fbar_item it[10];
	int n = fbar_layout(a, r->w, it);

	for (int i = 0; i < n; i++) {
		const struct command *k = it[i].k;
		/* Run is greyed while the plan cannot run (it reads Stop while a run is going) */
		bool grey = k->cmd == CMD_RUN && !a->cur.ran && !run_active(a);
		int x = r->x + it[i].x, letter = keys_letter(k->cmd), lx = x + (k->fkey == 10 ? 3 : 2);
		int nw = (int)strlen(it[i].name);

		screen_textf(s, x, r->y, 3, R_FKEY, "F%d", k->fkey);
		if (letter)
			screen_put(s, lx++, r->y, (char)letter, R_HELP_KEY);
		/* the label's colour runs on through its gap to the next F-key, as in htop */
		screen_fill(s, &(struct rect){ .x = lx, .y = r->y, .w = x + it[i].hit - lx, .h = 1 }, ' ',
		            grey ? R_FGREY : R_FLABEL);
		screen_text(s, lx, r->y, nw, it[i].name, grey ? R_FGREY : R_FLABEL);
	}
}
