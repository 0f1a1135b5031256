/*
 * app — the TUI's state and everything it does that is not drawing or the terminal:
 * the plan being edited with its simulation, the compared plan, the steps, the view
 * (zoom, pan, cursor), search, files and autosave. Views read it; key handlers change
 * it through the functions here. No curses, so the headless renderer, the benchmark and
 * the unit tests use the same code as the terminal.
 *
 * One interface, implemented by concern: app.c (the plan, its simulation and edits),
 * app_nav.c (cursor and view), app_search.c, app_compare.c (baselines and the compared plan),
 * app_files.c (files, report, autosave and recovery) and messages.c; each section below
 * names its file.
 */
#ifndef OCTO_UI_APP_H
#define OCTO_UI_APP_H

#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>

#include "autosave.h"
#include "edit.h"
#include "metrics.h"
#include "picker.h"
#include "plan.h"
#include "prompt.h"
#include "run.h"
#include "sim.h"
#include "startlayout.h"
#include "target.h"
#include "tuning.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/* A plan with its simulation, ready to draw. */
struct pview {
	bool loaded;
	struct plan plan;
	struct sim sim;
	struct metrics m;
	bool ran;               /* the last simulation finished (maybe out of host memory) */
	bool deadlock;          /* the last simulation deadlocked: times are the last good run's */
	char why[1024];         /* why the plan cannot run, in words ("" when it can) */
	long nops;
	double *start, *end;    /* per op (sim_op_index): the times shown */
	bool have_times;
	long *pos;              /* per op: index into plan.order */
	char *crit;             /* per op: on the critical path */
	char *cycle;            /* per op: in the deadlock cycle */
	char *match;            /* per op: matches the search */
	long nmatch;
	double makespan;        /* of the times shown */
	double sim_ms;          /* how long the last simulation took */
};

struct step {
	char name[48];          /* "zb-h1" */
	char phase[16];         /* partition, placement, scheduling */
	char move[160];         /* the move in words */
	struct plan plan;
	bool ok;
	double makespan;        /* 0 when it cannot run */
	bool oom;
	bool na;                /* the target runtime cannot run it (why says so) */
	char why[200];
};

enum panel { PANEL_NONE, PANEL_DETAILS, PANEL_STEPS, PANEL_RUN };
enum mode { MODE_NORMAL, MODE_HELP, MODE_PROMPT, MODE_QUESTION, MODE_LOG, MODE_PICKER };

#define APP_LOG_MAX 256         /* messages kept for the message log */

struct log_entry {
	char text[600];
	int role;
	time_t when;
};
enum prompt_kind { PROMPT_SEARCH, PROMPT_FILTER, PROMPT_SAVE_AS, PROMPT_OPEN, PROMPT_REPORT, PROMPT_MOVE_STAGE };
enum question_kind { Q_QUIT, Q_OPEN, Q_STOP, Q_STOP_QUIT, Q_RECOVER, Q_OVERWRITE, Q_OVERWRITE_REPORT };
/* What follows a save that had to ask before overwriting a file. */
enum after_save { AFTER_NOTHING, AFTER_QUIT, AFTER_OPEN };

struct app {
	struct pview cur;       /* the plan being edited */
	struct pview ref;       /* the compared plan (a baseline or a step) */
	struct edit_hist hist;
	long saved_state;       /* edit_state() when last saved or opened */
	char *path;             /* where the plan is saved; NULL = not yet */
	char *model_path;       /* the files the plan refers to (for a saved plan's references) */
	char *cluster_path;
	struct stat disk;       /* path as it was when opened or last saved here (st_ino 0: not known) */
	char source[200];       /* how the plan was made, for the title */
	char start_msg[300];    /* what the layout search chose at the start ("" when none ran) */
	enum target target;     /* the runtime the plans are for (--target): what the tuner searches,
	                         * which baselines are marked n/a */
	unsigned plan_gen;      /* counts the plans opened: which one a run measured */

	struct step *steps;     /* the baselines' generation */
	int nsteps, step_sel;
	int ref_step;           /* the baseline shown in the compare view (-1: none or a tuner step) */
	char ref_name[64];      /* what the compare view shows */
	struct tuning tuning;   /* the tuner's steps */
	bool steps_tuner;       /* the steps panel lists the tuner's steps (else the baselines) */
	struct run run;         /* the executor, its stream and what it measured */

	/* view */
	bool compare;
	int focus;              /* 0: the edited plan, 1: the compared one */
	enum panel panel;
	bool xfer_rows;
	bool crit_marks;        /* the critical path is marked on the chart */
	double t0, ms_per_col;  /* left edge and scale of the charts */
	bool fit;               /* recompute the scale to fit on relayout */
	int chart_cols;         /* columns of the time area (set by the layout) */
	int row0;               /* first device row shown */
	int vis_devs;           /* device rows the main chart has room for (set by the layout) */
	int vis_ref_devs;       /* and the compared chart (0: not shown); both scroll together */
	int sel_dev, sel_pos;   /* cursor: device and index in its list */
	bool fill_glyphs;       /* monochrome: fill blocks with letters */

	/* search */
	pcre2_code *re;
	char pattern[256];
	bool filter;

	/* interaction */
	enum mode mode;
	int help_top;
	int page_rows;          /* the help's or the log's text rows last drawn: PgUp/PgDn's step */
	enum prompt_kind prompt;
	struct line line;       /* the prompt's text */
	struct line_hist prompt_hist[PROMPT_MOVE_STAGE + 1];   /* one history per prompt */
	enum question_kind question;
	char pending_open[4096];   /* Q_OPEN: the plan file to open, or */
	char pending_model[4096];  /* the sample to open (model on cluster) when not "" */
	char pending_cluster[4096];
	struct picker picker;      /* MODE_PICKER: what F7 offers */
	char pending_save[4096];   /* Q_OVERWRITE: the file to overwrite */
	bool pending_changed;      /* Q_OVERWRITE: it is the plan's own file, changed on disk */
	enum after_save after_save;
	char msg[600];
	int msg_role;           /* enum role */
	struct log_entry *log;  /* the last APP_LOG_MAX messages, a ring (NULL until the first) */
	int log_n, log_next;
	int log_top;            /* the message log's first line shown (-1: the end) */
	bool quit;

	/* autosave */
	double autosave_due;    /* monotonic seconds; 0 = nothing pending */
	struct autosave as;     /* this UI's autosave slot and its lock */
	bool no_autosave;
	double last_edit_ms;    /* edit + simulation time of the last edit */
	bool autosaved;         /* the unsaved edits are in the autosave file */
};

/* How to open: a plan file, or a model and cluster with a microbatch count (the best
 * baseline is shown). */
struct app_open {
	const char *plan;
	const char *model;
	const char *cluster;
	int microbatches;
	const char *steps;      /* an octopipe.steps/1 file for the steps view, or NULL */
	const char *launcher;   /* the Run command's prefix (NULL: $OCTOPIPE_LAUNCHER or none) */
	double time_scale;      /* for the emulated executor; < 0: the default */
	int run_iters;          /* 0: the default */
	const char *backend;    /* "emu" or "cuda" (NULL: $OCTOPIPE_BACKEND, else emu) */
	bool share_gpus;        /* cuda: several devices per GPU */
	bool no_autosave;       /* neither autosave nor offer recovery (the headless renderer) */
	/* with model and cluster, or the default sample searched (app_default_sample): the
	 * layout options (NULL: pure pipeline parallelism over every gpu) */
	const struct start_layout *layout;
	enum target target;     /* the runtime the plans are for (TARGET_OCTOPIPE: anything) */
};

int app_init(struct app *a, const struct app_open *o, struct err *e);
/* The sample opened without a plan or a model: nemotron-nano-v2-9b on 8xH200 in pure
 * pipeline parallelism, or, for a target that runs none of its layouts (torchtitan: no
 * Mamba layer), one the target runs, at the layout the layout search picks for it (search)
 * with why, the line that says so on the status line. */
struct app_sample {
	const char *model, *cluster;
	bool search;
	const char *why;        /* NULL: the default sample */
};
void app_default_sample(enum target t, struct app_sample *s);
void app_release(struct app *a);

/* ---- plans and simulation (app.c) ---- */
/* Simulates the view's plan and refreshes times, critical path, cycle and matches. */
void pview_update(struct pview *v, const pcre2_code *re);
void pview_release(struct pview *v);
bool app_modified(const struct app *a);
/* What one chart row is: "gpu", or "pp" (a pipeline rank) where the plan's layout makes a
 * row several GPUs (a tensor-parallel group, data-parallel replicas). */
static inline const char *app_row_name(const struct plan *p)
{
	struct parallel l = plan_parallel(p);

	return l.tp * l.dp > 1 ? "pp" : "gpu";
}
/* The plan view the cursor is in. */
struct pview *app_focus(struct app *a);
/* Monotonic seconds (timing edits and autosave). */
double app_now(void);

/* ---- the cursor and the view (app_nav.c) ---- */
void app_fit(struct app *a);
void app_zoom(struct app *a, double factor);
void app_pan(struct app *a, int cols);
void app_clamp_cursor(struct app *a);
/* Index into plan.order of the op under the cursor, or -1. */
long app_cursor_op(const struct app *a);
void app_cursor_to(struct app *a, long order_index);
void app_cursor_move(struct app *a, int ddev, int dpos);
/* The cursor to gpu dev (clamped), the op nearest in time to where it was. */
void app_cursor_dev(struct app *a, int dev);
/* Pages the gpu rows (dir -1 up, 1 down) like less: the view and the cursor move by one
 * page of rows. */
void app_page_rows(struct app *a, int dir);
/* Gpu rows a chart shows at once: the fewer of the two charts' in the compare view. */
int app_page_devs(const struct app *a);
/* Scrolls the time axis so the cursor op is visible. */
void app_show_cursor(struct app *a);
/* Cursor to the op at column x of device row d (chart coordinates); false when none. */
bool app_pick(struct app *a, int focus, int dev, int col);
void app_jump_waited(struct app *a);
void app_jump_crit_end(struct app *a);

/* ---- edits (app.c; re-simulate at once, say what happened in a->msg) ---- */
void app_edit(struct app *a, const struct edit *ed);
void app_undo(struct app *a);
void app_redo(struct app *a);
/* Adopts a copy of p as the edited plan (an undoable edit labelled label). */
void app_adopt_plan(struct app *a, const struct plan *p, const char *label);

/* ---- the baselines and the compared plan (app_compare.c) ---- */
/* Adopts baseline i as the edited plan (an undoable edit). */
void app_adopt_step(struct app *a, int i);
/* Shows baseline i as the compared plan. */
void app_set_ref_step(struct app *a, int i);
/* Shows a copy of p as the compared plan, titled name. */
void app_set_ref_plan(struct app *a, const struct plan *p, const char *name);

/* ---- runs and background work (app.c) ---- */
/* A measured row under each gpu of the edited plan (a run was started on it). */
bool app_measured_rows(const struct app *a);
/* The run measured the plan as it is now (not an earlier state of it, not another file):
 * else its rows and gauges are drawn greyed and say so. */
bool app_measured_current(const struct app *a);
/* Screen rows per device in a chart (focus 0: the edited plan, 1: the compared one). */
int app_rows_per_dev(const struct app *a, int focus);
/* Background work for the loop: one tuner step; true when there is more to do. */
bool app_tick(struct app *a);
bool app_busy(const struct app *a);

/* ---- search (app_search.c) ---- */
/* Compiles pattern (empty clears); the message says how many ops match or why not. */
void app_search(struct app *a, const char *pattern, bool filter);
void app_next_match(struct app *a, int dir);
/* The text an op is searched by: "1F12 stage=1 mb=12 kind=F forward gpu=1 layers=7-13 mamba2 attn". */
void app_op_text(const struct plan *p, const struct action *x, char *buf, size_t n);

/* ---- files (app_files.c) ---- */
/* Writes the HTML report (src/report.h) of the edited plan, the compared one when the
 * compare view is open, and the tuner's steps when there are any, to path; says where or
 * why not in the message line. */
void app_write_report(struct app *a, const char *path);
/* Saves to path (NULL: the plan's own file); the message says when the plan saved cannot
 * run. Never asks: callers check app_would_overwrite first. */
int app_save(struct app *a, const char *path);
/* True when saving to path would replace what is not this session's: an existing file other
 * than the plan's own, or the plan's own file changed on disk by someone else. */
bool app_would_overwrite(const struct app *a, const char *path);
/* Whether path is a file the plan reads (its model, its cluster, the tuner's steps file),
 * which no output of the UI may replace: true after an error message saying so, with what
 * ("save", "report") as the subject. The check is the CLI's (fileio_input_index). */
bool app_refuse_input(struct app *a, const char *path, const char *what);
/* Whether the plan's own file was replaced or rewritten by someone else since it was
 * opened or last saved here (saving over it would lose those changes). */
bool app_changed_on_disk(const struct app *a);
/* Answers the recovery question for an autosave found at start or on open: 'y' adopts
 * its plan as an undoable edit (the save target stays the plan's own file), 'n' leaves
 * it for later (this UI takes another slot), 'd' deletes it. */
void app_recover(struct app *a, int answer);
/* Opens a plan file (replacing the edited plan and its history). */
int app_open_file(struct app *a, const char *path);
/* Opens the best baseline of model on cluster (short names or files) with mbs
 * microbatches (0: the default) as a plan with no file yet. */
int app_open_sample(struct app *a, const char *model, const char *cluster, int mbs);
/* Opens the picker (MODE_PICKER) on the recent files, the bundled plans and the samples. */
void app_picker_open(struct app *a);
void app_autosave(struct app *a, double now);
/* Deletes the autosave file if this UI wrote it (never another session's). */
void app_autosave_remove(struct app *a);

/* ---- messages (messages.c) ---- */
/* Says something in the status line; it is kept in the message log as well (a message
 * equal to the one before is kept once). */
void app_msg(struct app *a, int role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The k-th message of the log, oldest first (k < a->log_n). */
const struct log_entry *app_log_entry(const struct app *a, int k);

#endif
