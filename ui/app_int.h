/*
 * app_int — what the files of the TUI's model (app.c, app_nav.c, app_search.c, app_compare.c,
 * app_files.c, messages.c) share among themselves and no view needs. The views use app.h.
 */
#ifndef OCTO_UI_APP_INT_H
#define OCTO_UI_APP_INT_H

#include "app.h"

#define APP_DEFAULT_MODEL "nemotron-nano-v2-9b"
#define APP_DEFAULT_CLUSTER "8xH200"
#define APP_DEFAULT_MICROBATCHES 32
/* the sample under --target torchtitan (app_default_sample) */
#define APP_TITAN_MODEL "llama2-70b"
#define APP_TITAN_CLUSTER "16xH200"

/* app.c: a deep copy of a plan, through its JSON form (dst is released on failure). */
int app_plan_dup(struct plan *dst, const struct plan *src, struct err *e);
/* app.c: the cursor on gpu 0's first op, the whole iteration in view. */
void app_reset_view(struct app *a);

/* app_compare.c: the baselines of m on c with mbs microbatches as a->steps (the previous ones
 * released); returns the best one's index, -1 when none runs. With need_best, a->steps
 * is left as it was when none runs. */
int compare_build_baselines(struct app *a, const struct model *m, const struct cluster *c, int mbs, bool need_best);
void compare_release_baselines(struct app *a);

/* app_files.c: loads a plan file (a bundled short name resolves under plans/) as the edited
 * plan, with a fresh history and baselines; -1 with e set, the app unchanged. */
int files_open_plan(struct app *a, const char *arg, struct err *e);
/* app_files.c: the best baseline of a model on a cluster (short names or files) as the edited
 * plan, with no file yet, a fresh history and the baselines; -1 with e set (ERR_INFEASIBLE
 * when no baseline runs), the app unchanged. */
/* With lo (and not lo->pp_only), at the layout the layout search picks with lo's degrees
 * held fixed (a->start_msg says which); without, pure pipeline parallelism. */
int files_open_sample(struct app *a, const char *model, const char *cluster, int mbs, const struct start_layout *lo,
                      struct err *e);
/* app_files.c: remembers path among the recent files the picker offers (not in the headless
 * renderer, which writes nothing). */
void files_recent_add(struct app *a, const char *path);
/* app_files.c: claims this UI's autosave slot for the plan as it is now; a slot holding an
 * earlier session's edits is offered for recovery (unless need_empty). */
void files_autosave_setup(struct app *a, bool need_empty);

/* app_search.c: flags the ops of v that re matches (NULL clears). */
/* Marks the ops re matches; false (nothing marked) when the pattern costs too much. */
bool search_mark(struct pview *v, const pcre2_code *re);

#endif
