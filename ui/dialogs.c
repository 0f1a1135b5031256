/*
 * dialogs — the prompts (search, filter, save as, open, report, move stage) and the
 * questions (quit or open with unsaved edits, overwrite, stop a run, recover an autosave).
 *
 * A question remembers what asked it (a->question, a->after_save, a->pending_*), so a
 * save that has to ask before overwriting a file still quits or opens afterwards, and
 * nothing is replaced or discarded without a y.
 */
#include "config.h"
#include "view_int.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"

void dialog_prompt(struct app *a, enum prompt_kind k, const char *init)
{
	a->mode = MODE_PROMPT;
	a->prompt = k;
	line_set(&a->line, init);
	line_hist_reset(&a->prompt_hist[k]);
	a->msg[0] = '\0';
}

void dialog_save_name(struct app *a, char *buf, size_t n)
{
	const char *name = a->cur.plan.name ? a->cur.plan.name : "plan";
	size_t k = 0;

	if (a->path) {
		snprintf(buf, n, "%s", a->path);
		return;
	}
	k = (size_t)snprintf(buf, n, "plans/");
	for (const char *c = name; *c && k + 6 < n; c++)
		buf[k++] = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
		           *c == '.' ? *c : '-';
	snprintf(buf + k, n - k, ".json");
}

/* Opens what a->pending_* names: a sample when pending_model is set, else a plan file. */
static void open_pending(struct app *a)
{
	if (a->pending_model[0])
		app_open_sample(a, a->pending_model, a->pending_cluster, 0);
	else
		app_open_file(a, a->pending_open);
}

/* Opens what a->pending_* names, or asks first when there are unsaved edits. */
static int open_or_ask(struct app *a)
{
	if (app_modified(a)) {
		a->mode = MODE_QUESTION;
		a->question = Q_OPEN;
	} else {
		open_pending(a);
	}
	return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
}

/* Tab in a file prompt: completes the path (open also knows the bundled plans' names). */
static void complete(struct app *a)
{
	char msg[600];
	int n = line_complete(&a->line, a->prompt == PROMPT_OPEN ? "plans" : NULL, msg, sizeof(msg));

	app_msg(a, n == 0 ? R_WARN : R_NORMAL, "%s", msg);
}

/* Saves to path, or asks first when that would replace a file that is not the plan's own;
 * then does what was asked for (quit, open). */
static int save_or_ask(struct app *a, const char *path, enum after_save after)
{
	if (app_refuse_input(a, path, "save"))
		return KF_HANDLED | KF_REDRAW;
	if (app_would_overwrite(a, path)) {
		snprintf(a->pending_save, sizeof(a->pending_save), "%s", path);
		a->pending_changed = a->path && fileio_same_file(path, a->path);
		a->after_save = after;
		a->mode = MODE_QUESTION;
		a->question = Q_OVERWRITE;
		return KF_HANDLED | KF_REDRAW;
	}
	if (app_save(a, path) < 0)
		return KF_HANDLED | KF_REDRAW;
	if (after == AFTER_QUIT) {
		a->quit = true;
		return KF_HANDLED | KF_QUIT;
	}
	if (after == AFTER_OPEN) {
		open_pending(a);
		return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
	}
	return KF_HANDLED | KF_REDRAW;
}

int dialog_save(struct app *a)
{
	return save_or_ask(a, a->path, AFTER_NOTHING);
}

static int submit_prompt(struct app *a)
{
	char input[4096];
	const char *why = line_problem(&a->line);

	/* a line that is not what was typed never runs: the prompt stays open, saying why */
	if (why) {
		app_msg(a, R_ERROR, "%s", why);
		return KF_HANDLED | KF_REDRAW;
	}
	/* a file name may start with ~ like the shell's; spaces around it are dropped, and one
	 * of only spaces is refused (it saved a file named "   ") */
	if (a->prompt == PROMPT_SAVE_AS || a->prompt == PROMPT_OPEN || a->prompt == PROMPT_REPORT) {
		if ((why = line_file_name(a->line.buf, input, sizeof(input))) != NULL) {
			app_msg(a, R_ERROR, "%s", why);
			return KF_HANDLED | KF_REDRAW;
		}
	} else {
		snprintf(input, sizeof(input), "%s", a->line.buf);
	}
	a->mode = MODE_NORMAL;
	line_hist_add(&a->prompt_hist[a->prompt], a->line.buf);
	switch (a->prompt) {
	case PROMPT_SEARCH:
		app_search(a, input, false);
		break;
	case PROMPT_FILTER:
		app_search(a, input, true);
		break;
	case PROMPT_SAVE_AS:
		if (input[0])
			save_or_ask(a, input, AFTER_NOTHING);
		break;
	case PROMPT_REPORT: {
		struct stat st;

		if (!input[0] || app_refuse_input(a, input, "report"))
			break;
		if (stat(input, &st) == 0) {
			/* a report replaces nothing it was not asked to */
			snprintf(a->pending_save, sizeof(a->pending_save), "%s", input);
			a->mode = MODE_QUESTION;
			a->question = Q_OVERWRITE_REPORT;
			break;
		}
		app_write_report(a, input);
		break;
	}
	case PROMPT_OPEN:
		if (!input[0])
			break;
		snprintf(a->pending_open, sizeof(a->pending_open), "%s", input);
		a->pending_model[0] = '\0';
		return open_or_ask(a);
	case PROMPT_MOVE_STAGE: {
		long i = app_cursor_op(a);
		char *end;
		long d = strtol(input, &end, 10);

		if (i < 0)
			break;
		if (end == input || *end) {
			app_msg(a, R_ERROR, "'%s' is not a gpu number", input);
			break;
		}
		/* before the int the edit takes: 4294967297 is no gpu, not gpu 1 */
		if (d < 0 || d >= a->cur.plan.ndevices) {
			app_msg(a, R_ERROR, "there is no gpu %s (the cluster has %d)", input, a->cur.plan.ndevices);
			break;
		}
		{
			int st = a->cur.plan.order[i].stage;
			struct edit ed = { EDIT_PLACE, st, (int)d, 0, 0, NULL, NULL, NULL };

			ed.times = a->cur.have_times && !a->cur.deadlock ? a->cur.start : NULL;

			app_edit(a, &ed);
			/* follow the stage to its new gpu */
			if (a->cur.plan.stages[st].device == d)
				for (int k = a->cur.plan.order_start[d]; k < a->cur.plan.order_start[d + 1]; k++)
					if (a->cur.plan.order[k].stage == st) {
						app_cursor_to(a, k);
						break;
					}
		}
		break;
	}
	}
	return KF_HANDLED | KF_REDRAW;
}

int dialog_prompt_key(struct app *a, int key)
{
	switch (key) {
	case 27:
		a->mode = MODE_NORMAL;
		app_msg(a, R_DIM, "cancelled");
		break;
	case '\n': case '\r': case KEY_ENTER:
		return submit_prompt(a);
	case '\t':
		/* file names complete like the shell's; open also knows the bundled plans' names */
		if (a->prompt == PROMPT_SAVE_AS || a->prompt == PROMPT_OPEN || a->prompt == PROMPT_REPORT)
			complete(a);
		break;
	default:
		line_key(&a->line, &a->prompt_hist[a->prompt], key);
	}
	return KF_HANDLED | KF_REDRAW;
}

int dialog_quit_or_ask(struct app *a)
{
	if (app_modified(a)) {
		a->mode = MODE_QUESTION;
		a->question = Q_QUIT;
		return KF_HANDLED | KF_REDRAW;
	}
	app_autosave_remove(a);
	a->quit = true;
	return KF_HANDLED | KF_REDRAW | KF_QUIT;
}

int dialog_question_key(struct app *a, int key)
{
	bool go = false;

	if (a->question == Q_STOP || a->question == Q_STOP_QUIT) {
		if (key == 'y' || key == 'Y') {
			a->mode = MODE_NORMAL;
			run_stop(a);
			return a->question == Q_STOP_QUIT ? dialog_quit_or_ask(a) : KF_HANDLED | KF_REDRAW;
		}
		if (key == 'n' || key == 'N' || key == 27 || key == 'q') {
			a->mode = MODE_NORMAL;
			app_msg(a, R_DIM, "the run goes on");
			return KF_HANDLED | KF_REDRAW;
		}
		return KF_HANDLED;
	}
	if (a->question == Q_RECOVER) {
		if (key == 27)
			key = 'n';      /* Esc decides nothing: the edits stay for later */
		if (key != 'y' && key != 'Y' && key != 'n' && key != 'N' && key != 'd' && key != 'D')
			return KF_HANDLED;
		a->mode = MODE_NORMAL;
		app_recover(a, key | 0x20);
		return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
	}
	if (a->question == Q_OVERWRITE_REPORT) {
		if (key == 'y' || key == 'Y') {
			a->mode = MODE_NORMAL;
			app_write_report(a, a->pending_save);
			return KF_HANDLED | KF_REDRAW;
		}
		if (key == 'n' || key == 'N' || key == 27 || key == 'q') {
			a->mode = MODE_NORMAL;
			app_msg(a, R_NORMAL, "no report written: %s is left as it was", a->pending_save);
			return KF_HANDLED | KF_REDRAW;
		}
		return KF_HANDLED;
	}
	if (a->question == Q_OVERWRITE) {
		if (key == 'y' || key == 'Y') {
			a->mode = MODE_NORMAL;
			if (app_save(a, a->pending_save) < 0)
				return KF_HANDLED | KF_REDRAW;
			if (a->after_save == AFTER_QUIT) {
				a->quit = true;
				return KF_HANDLED | KF_QUIT;
			}
			if (a->after_save == AFTER_OPEN) {
				open_pending(a);
				return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
			}
			return KF_HANDLED | KF_REDRAW;
		}
		if (key == 'n' || key == 'N' || key == 27 || key == 'q') {
			a->mode = MODE_NORMAL;
			app_msg(a, R_NORMAL, "not saved: %s is left as it was (S saves under another name)", a->pending_save);
			return KF_HANDLED | KF_REDRAW;
		}
		return KF_HANDLED;
	}
	switch (key) {
	case 'y': case 'Y':
		go = true;
		break;
	case 's': case 'S':
		if (!a->path) {
			char name[4096];

			dialog_save_name(a, name, sizeof(name));
			a->mode = MODE_NORMAL;
			return save_or_ask(a, name, a->question == Q_QUIT ? AFTER_QUIT : AFTER_OPEN);
		}
		/* the plan's own file, unless another program changed it since (then asks) */
		a->mode = MODE_NORMAL;
		return save_or_ask(a, a->path, a->question == Q_QUIT ? AFTER_QUIT : AFTER_OPEN);
	case 'n': case 'N': case 27: case 'q':
		a->mode = MODE_NORMAL;
		app_msg(a, R_DIM, "nothing discarded");
		return KF_HANDLED | KF_REDRAW;
	default:
		return KF_HANDLED;
	}
	a->mode = MODE_NORMAL;
	if (!go)
		return KF_HANDLED | KF_REDRAW;
	if (a->question == Q_QUIT) {
		if (app_modified(a))
			app_autosave_remove(a);
		a->quit = true;
		return KF_HANDLED | KF_QUIT;
	}
	app_autosave_remove(a);
	open_pending(a);
	return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
}

int dialog_picker_key(struct app *a, int key)
{
	enum pick_result r = picker_key(&a->picker, key);
	const struct pick_entry *pe = picker_chosen(&a->picker);
	char text[LINE_MAX_LEN + 1];
	const char *why = line_problem(&a->picker.filter);

	if (why && (r == PICK_TAB || r == PICK_TYPED)) {
		app_msg(a, R_ERROR, "%s", why); /* the filter is not what was typed: no path of it */
		return KF_HANDLED | KF_REDRAW;
	}
	switch (r) {
	case PICK_CANCEL:
		picker_release(&a->picker);
		a->mode = MODE_NORMAL;
		return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
	case PICK_TAB:
		/* the filter's text becomes a path to complete */
		snprintf(text, sizeof(text), "%s", a->picker.filter.buf);
		picker_release(&a->picker);
		dialog_prompt(a, PROMPT_OPEN, text);
		if (text[0])
			complete(a);
		return KF_HANDLED | KF_REDRAW | KF_RELAYOUT;
	case PICK_TYPED:
		/* nothing listed matches: the text may be a file's path */
		if ((why = line_file_name(a->picker.filter.buf, a->pending_open, sizeof(a->pending_open))) != NULL) {
			app_msg(a, R_ERROR, "%s", why);
			return KF_HANDLED | KF_REDRAW;
		}
		if (!a->pending_open[0])
			return KF_HANDLED | KF_REDRAW;
		a->pending_model[0] = '\0';
		break;
	case PICK_CHOSE:
		if (!pe)
			return KF_HANDLED | KF_REDRAW;
		if (pe->kind == PICK_SAMPLE) {
			snprintf(a->pending_model, sizeof(a->pending_model), "%s", pe->model);
			snprintf(a->pending_cluster, sizeof(a->pending_cluster), "%s", pe->cluster);
		} else {
			snprintf(a->pending_open, sizeof(a->pending_open), "%s", pe->path);
			a->pending_model[0] = '\0';
		}
		break;
	default:
		return KF_HANDLED | KF_REDRAW;
	}
	picker_release(&a->picker);
	a->mode = MODE_NORMAL;
	return open_or_ask(a);
}
