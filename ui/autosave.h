/*
 * autosave — where a UI keeps its unsaved edits, like vim's swap files: one file per plan
 * (keyed by the plan's real path, or by model + cluster + microbatches when it has no file)
 * with a lock beside it that the owning process holds (an fcntl lock, gone when the process
 * is). Two running UIs never share a file (the second takes the next slot), a slot whose
 * process is gone is free again, and a file found in a slot nobody holds is an earlier session's work to offer for
 * recovery. No curses.
 */
#ifndef OCTO_UI_AUTOSAVE_H
#define OCTO_UI_AUTOSAVE_H

#include <stdbool.h>
#include <stddef.h>

#define AUTOSAVE_SLOTS 10

struct autosave {
	char dir[3000];         /* where autosaves live ("" = nowhere: autosave is off) */
	char path[4096];        /* the claimed slot's file */
	char lock[4096];        /* its lock, which this process holds while locked */
	int lock_fd;            /* the open lock file whose fcntl lock is held, while locked */
	bool locked;
	bool found;             /* path held an earlier session's edits when claimed */
	bool written;           /* this process wrote path (only then may it delete it) */
};

/* The directory: $XDG_STATE_HOME/octopipe or ~/.local/state/octopipe; false when neither
 * is set to an absolute path (a relative one is ignored). */
bool autosave_dir(char *buf, size_t n);
/* The file stem for a key (a plan's real path, or "model|cluster|mbs"): "name-0123abcd…",
 * name being the readable part (the plan's file name without .json). */
void autosave_stem(const char *name, const char *key, char *buf, size_t n);
/* Releases any slot held, then claims a slot for stem in as->dir: an unlocked slot with a
 * file first (as->found set) unless need_empty, else the first free slot. -1 with errno
 * set when none can be claimed (every slot held, or the directory cannot be made). */
int autosave_claim(struct autosave *as, const char *stem, bool need_empty);
/* Removes the file if this process wrote it, and the lock; as->path stays for messages. */
void autosave_release(struct autosave *as, bool remove_file);

#endif
