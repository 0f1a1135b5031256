/*
 * input — keys and the mouse turned into commands (see view.h).
 *
 * A key goes to the mode first (help, log, prompt, question), then to the open panel's
 * widget, then through the key table (keys.c) to a command; a key handler returns flags
 * (KF_*) saying what the loop must do next. Only key codes come from curses (KEY_*
 * values); nothing here touches the terminal.
 */
#include "config.h"
#include "view_int.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gantt_view.h"
#include "keys.h"

static void boundary_edit(struct app *a, int grow)
{
	long i = app_cursor_op(a);
	struct edit ed = { EDIT_BOUNDARY, 0, 0, 0, 0, NULL, NULL, NULL };
	int st;

	if (i < 0)
		return;
	st = app_focus(a)->plan.order[i].stage;
	/* the last stage has no boundary after it: move the one before it instead */
	if (st == app_focus(a)->plan.nstages - 1) {
		ed.stage = st - 1;
		ed.delta = grow ? -1 : 1;
	} else {
		ed.stage = st;
		ed.delta = grow ? 1 : -1;
	}
	app_edit(a, &ed);
}

static int back_out(struct app *a)
{
	if (tuning_busy(a)) {
		tuning_cancel(a);
		return 0;
	}
	if (a->panel == PANEL_STEPS || a->panel == PANEL_RUN) {
		a->panel = PANEL_DETAILS;
		return KF_RELAYOUT;
	}
	if (a->re) {
		app_search(a, "", false);
		return 0;
	}
	if (a->compare) {
		a->compare = false;
		a->focus = 0;
		return KF_RELAYOUT;
	}
	a->msg[0] = '\0';
	return 0;
}

/* Save or save as: the prompt names a file beside the plan's own. */
static int key_save(struct app *a, bool as)
{
	char name[4096];

	if (!as && a->path)
		return dialog_save(a);
	dialog_save_name(a, name, sizeof(name));
	dialog_prompt(a, PROMPT_SAVE_AS, name);
	return KF_HANDLED | KF_REDRAW;
}

/* The report's prompt: beside the plan's file, or plans/NAME.html for a plan without one,
 * spelt from the root so the prompt says where it goes whatever the current directory. */
static void key_report(struct app *a)
{
	char name[4096];
	size_t n;

	dialog_save_name(a, name, sizeof(name));
	if (name[0] != '/' && strlen(name) < 1024) {
		char cwd[2048], rel[1024];

		memcpy(rel, name, strlen(name) + 1);
		if (getcwd(cwd, sizeof(cwd)))
			snprintf(name, sizeof(name), "%s/%s", cwd, rel);
	}
	n = strlen(name);
	if (n > 5 && strcmp(name + n - 5, ".json") == 0)
		n -= 5;
	snprintf(name + n, sizeof(name) - n, ".html");
	dialog_prompt(a, PROMPT_REPORT, name);
}

static void key_compare(struct app *a)
{
	a->compare = !a->compare;
	if (!a->compare)
		a->focus = 0;
	else if (!a->ref.loaded)
		app_set_ref_step(a, 1);
	if (a->compare && a->ref.loaded)
		app_msg(a, R_NORMAL, "compare: %s above the plan, one time scale (V: next baseline, Tab: switch)",
		        a->ref_name);
}

static void key_ref_next(struct app *a)
{
	for (int k = 1; k <= a->nsteps; k++) {
		int i = (a->ref_step + k) % a->nsteps;

		if (a->steps[i].ok) {
			app_set_ref_step(a, i);
			break;
		}
	}
	a->compare = true;
	app_msg(a, R_NORMAL, "compare with %s", a->ref_step >= 0 ? a->steps[a->ref_step].name : "?");
}

static void key_steps(struct app *a)
{
	if (a->panel == PANEL_STEPS) {
		a->panel = PANEL_DETAILS;
		return;
	}
	a->panel = PANEL_STEPS;
	a->compare = true;
	if (!a->steps_tuner) {
		app_set_ref_step(a, a->step_sel);
		app_msg(a, R_NORMAL, "steps: Up/Down walk the generation (shown above the plan), Enter adopts, Esc closes");
	} else if (a->tuning.state == TUNING_NONE || a->tuning.state == TUNING_FAILED) {
		tuning_start(a);
	} else if (a->tuning.n > 0) {
		tuning_select(a, a->tuning.sel);
		panels_say_tstep(a);
	}
}

static void key_adopt(struct app *a)
{
	if (a->compare && a->focus == 1 && a->ref.loaded) {
		char label[100];

		snprintf(label, sizeof(label), "the compared plan (%s)", a->ref_name);
		app_adopt_plan(a, &a->ref.plan, label);
	}
}

/* R starts a run, or asks whether to stop the one running; q quits, or asks first. */
static int key_run_or_quit(struct app *a, bool quit)
{
	if (run_active(a)) {
		a->mode = MODE_QUESTION;
		a->question = quit ? Q_STOP_QUIT : Q_STOP;
		return 0;
	}
	if (quit)
		return dialog_quit_or_ask(a);
	run_start(a);
	return KF_RELAYOUT;
}

static void key_move_stage(struct app *a, const struct pview *v)
{
	if (app_cursor_op(a) >= 0 && !(a->compare && a->focus == 1)) {
		char cur[16];

		snprintf(cur, sizeof(cur), "%d", a->sel_dev);
		dialog_prompt(a, PROMPT_MOVE_STAGE, "");
		app_msg(a, R_NORMAL, "stage %d is on gpu %s", v->plan.order[app_cursor_op(a)].stage, cur);
	}
}

/* The cursor, the view and the plan's edits; false for any other command. */
static bool navigate(struct app *a, enum cmd c)
{
	switch (c) {
	case CMD_LEFT: app_cursor_move(a, 0, -1); break;
	case CMD_RIGHT: app_cursor_move(a, 0, 1); break;
	case CMD_UP: app_cursor_move(a, -1, 0); break;
	case CMD_DOWN: app_cursor_move(a, 1, 0); break;
	case CMD_FIRST: a->sel_pos = 0; app_clamp_cursor(a); app_show_cursor(a); break;
	case CMD_LAST: a->sel_pos = 1 << 30; app_clamp_cursor(a); app_show_cursor(a); break;
	case CMD_PAGE_UP: app_cursor_move(a, 0, -10); break;
	case CMD_PAGE_DOWN: app_cursor_move(a, 0, 10); break;
	case CMD_ROWS_UP: app_page_rows(a, -1); break;
	case CMD_ROWS_DOWN: app_page_rows(a, 1); break;
	case CMD_TOP: app_cursor_dev(a, 0); break;
	case CMD_BOTTOM: app_cursor_dev(a, 1 << 30); break;
	case CMD_PAN_LEFT: app_pan(a, -a->chart_cols / 4); break;
	case CMD_PAN_RIGHT: app_pan(a, a->chart_cols / 4); break;
	case CMD_ZOOM_IN: app_zoom(a, 2); break;
	case CMD_ZOOM_OUT: app_zoom(a, 0.5); break;
	case CMD_FIT: app_fit(a); break;
	case CMD_WAITED: app_jump_waited(a); break;
	case CMD_CRIT_END: app_jump_crit_end(a); break;
	case CMD_OP_EARLIER:
	case CMD_OP_LATER: {
		struct edit ed = { EDIT_MOVE_OP, 0, a->sel_dev, a->sel_pos, c == CMD_OP_EARLIER ? -1 : 1, NULL, NULL, NULL };

		app_edit(a, &ed);
		app_show_cursor(a);
		break;
	}
	case CMD_REORDER: {
		struct edit ed = { EDIT_REORDER, 0, 0, 0, 0, NULL, NULL, NULL };

		app_edit(a, &ed);
		break;
	}
	case CMD_STAGE_SHRINK: boundary_edit(a, 0); break;
	case CMD_STAGE_GROW: boundary_edit(a, 1); break;
	case CMD_UNDO: app_undo(a); break;
	case CMD_REDO: app_redo(a); break;
	default: return false;
	}
	return true;
}

int view_key(struct app *a, int key)
{
	const struct widget *pw = panels_widget(a), *page = pages_widget(a->mode);
	struct pview *v = app_focus(a);
	enum cmd c;
	int r;

	if (page)
		return page->key(a, key);
	if (a->mode == MODE_PROMPT)
		return dialog_prompt_key(a, key);
	if (a->mode == MODE_QUESTION)
		return dialog_question_key(a, key);
	if (pw && pw->key && (r = pw->key(a, key)) != 0)
		return r;
	c = keys_lookup(key);
	if (c == CMD_NONE)
		return 0;
	r = KF_HANDLED | KF_REDRAW;
	if (navigate(a, c))
		return r;
	switch (c) {
	case CMD_HELP: a->mode = MODE_HELP; a->help_top = 0; break;
	case CMD_LOG: a->mode = MODE_LOG; a->log_top = -1; break;
	case CMD_SAVE: return key_save(a, false);
	case CMD_SAVE_AS: return key_save(a, true);
	case CMD_OPEN: app_picker_open(a); break;
	case CMD_REPORT: key_report(a); break;
	case CMD_SEARCH: dialog_prompt(a, PROMPT_SEARCH, ""); break;
	case CMD_FILTER: dialog_prompt(a, PROMPT_FILTER, a->filter ? a->pattern : ""); break;
	case CMD_NEXT_MATCH: app_next_match(a, 1); break;
	case CMD_PREV_MATCH: app_next_match(a, -1); break;
	case CMD_COMPARE: key_compare(a); r |= KF_RELAYOUT; break;
	case CMD_REF_NEXT: key_ref_next(a); r |= KF_RELAYOUT; break;
	case CMD_SWITCH:
		if (a->compare) {
			a->focus ^= 1;
			app_clamp_cursor(a);
		}
		break;
	case CMD_STEPS: key_steps(a); r |= KF_RELAYOUT; break;
	case CMD_ADOPT: key_adopt(a); break;
	case CMD_DETAILS:
		/* details -> the run's gauges (once there was a run) -> nothing -> details */
		a->panel = a->panel == PANEL_DETAILS ? (a->run.have_live ? PANEL_RUN : PANEL_NONE) :
		           a->panel == PANEL_RUN ? PANEL_NONE : PANEL_DETAILS;
		r |= KF_RELAYOUT;
		break;
	case CMD_XFERS: a->xfer_rows = !a->xfer_rows; r |= KF_RELAYOUT; break;
	case CMD_CRIT_SHOW:
		a->crit_marks = !a->crit_marks;
		app_msg(a, R_NORMAL, "critical path %s on the chart", a->crit_marks ? "marked" : "unmarked");
		break;
	case CMD_RUN: r |= key_run_or_quit(a, false); break;
	case CMD_QUIT: r |= key_run_or_quit(a, true); break;
	case CMD_BACK: r |= back_out(a); break;
	case CMD_MOVE_STAGE: key_move_stage(a, v); break;
	case CMD_REDRAW: r |= KF_REPAINT; break;
	case CMD_SUSPEND: r |= KF_SUSPEND; break;
	default: break;
	}
	return r;
}

/* The mouse on a full page (help, log, picker): the wheel scrolls it like the arrows; in
 * the picker a click selects an entry and a click on the selected one opens it. */
static int page_mouse(struct app *a, int y, int button)
{
	int r = 0;

	if (button >= 4 && button <= 7) {
		for (int i = 0; i < 3; i++)
			r |= view_key(a, button == 4 || button == 6 ? KEY_UP : KEY_DOWN);
		return r;
	}
	if (button == 1 && a->mode == MODE_PICKER && y >= PAGES_PICKER_ROW0) {
		int k = a->picker.top + y - PAGES_PICKER_ROW0;

		if (k >= a->picker.nshown)
			return 0;
		if (k == a->picker.sel)
			return view_key(a, '\n');
		a->picker.sel = k;
		return KF_HANDLED | KF_REDRAW;
	}
	return 0;
}

int view_mouse(struct app *a, const struct layout *l, int x, int y, int button)
{
	if (l->too_small)
		return 0;
	if (y != l->fbar.y && pages_widget(a->mode))
		return page_mouse(a, y, button);
	if (a->mode != MODE_NORMAL && a->mode != MODE_HELP && a->mode != MODE_LOG)
		return 0;
	if (y == l->fbar.y && button == 1) {
		int fk = statusbar_fbar_key_at(a, l->fbar.w, x - l->fbar.x);

		for (const struct command *k = commands; k->name; k++)
			if (k->fkey == fk)
				return view_key(a, KEY_F(fk));   /* a click is the key press */
		return 0;
	}
	if (button == 6 || button == 7) {
		app_pan(a, button == 6 ? -a->chart_cols / 8 : a->chart_cols / 8);
		return KF_HANDLED | KF_REDRAW;
	}
	if (button == 4 || button == 5) {
		if (a->cur.plan.ndevices > app_page_devs(a)) {
			a->row0 += button == 4 ? -3 : 3;
			if (a->row0 > a->cur.plan.ndevices - app_page_devs(a))
				a->row0 = a->cur.plan.ndevices - app_page_devs(a);
			if (a->row0 < 0)
				a->row0 = 0;
			/* the cursor stays on a row that shows */
			if (a->sel_dev < a->row0 || a->sel_dev >= a->row0 + app_page_devs(a))
				app_cursor_dev(a, a->sel_dev < a->row0 ? a->row0 : a->row0 + app_page_devs(a) - 1);
		} else {
			app_pan(a, button == 4 ? -a->chart_cols / 8 : a->chart_cols / 8);
		}
		return KF_HANDLED | KF_REDRAW;
	}
	if (button != 1 || x < GANTT_LABEL_W)
		return 0;
	for (int f = 0; f < 2; f++) {
		const struct rect *r = f ? &l->ref : &l->gantt;
		int d;

		if (r->h == 0 || y < r->y || y >= r->y + r->h)
			continue;
		d = gantt_view_device_at(a, f, r, y);
		if (d >= 0 && app_pick(a, f, d, x - GANTT_LABEL_W))
			return KF_HANDLED | KF_REDRAW;
	}
	return 0;
}
