/*
 * fileio — whole-file reads with a size limit and atomic writes.
 *
 * Writes go to a temporary file in the destination's directory, are flushed and
 * fsync()ed, then rename()d over the destination: readers see the old file or the new
 * one, never half of one, and a failure leaves the old file untouched.
 */
#ifndef OCTO_FILEIO_H
#define OCTO_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h"

/* Largest input file accepted (a 256-microbatch, 64-GPU plan is a few MB). */
#define FILEIO_MAX_BYTES ((size_t)256 << 20)

/* Reads all of path into a NUL-terminated heap buffer (caller frees) and its length.
 * Errors (class ERR_INPUT): missing, unreadable, a directory, larger than the limit. */
char *fileio_read(const char *path, size_t *len, struct err *e);

/* Off by default (a command reads a FIFO or /dev/stdin whole, waiting for its writer, and
 * writes through one). On: fileio_read, the writers and fileio_check_writable refuse at
 * once anything but a regular file (ERR_INPUT, "PATH: is a FIFO, not a regular file ..."),
 * without reading or writing it: for the TUI, which must never wait on a FIFO's writer or
 * reader, or on a device. */
void fileio_regular_only(bool on);

/* Replaces path with data atomically; a new file gets mode 0666 minus the umask, a
 * replaced one keeps its mode. A symbolic link is followed (the file it names is
 * replaced, the link stays); a FIFO or a device is written through, never replaced (a
 * FIFO no process reads is an error, not a wait); a directory or socket is refused.
 * ERR_RUNTIME on failure, ERR_INPUT for an empty path or a guarded input. */
int fileio_write_atomic(const char *path, const void *data, size_t len, struct err *e);

/* From now until fileio_commit or fileio_discard, fileio_write_atomic writes and syncs
 * each regular file's temporary file but does not rename it over its target: a command
 * whose second output fails (a full disk, a refused path) leaves its first one as it was.
 * FIFOs and devices are still written through at once (a stream cannot wait). */
void fileio_defer(void);
/* Renames every deferred file over its target, in the order written (a file written twice:
 * the last wins); 0, or -1 with e set when one cannot be (that one and the rest are left
 * as they were, their temporary files removed). Ends the deferral. */
int fileio_commit(struct err *e);
/* Removes every deferred temporary file: no target changes. Ends the deferral. */
void fileio_discard(void);
/* Whether fileio_write_atomic(path) can succeed, checked without writing it: for a command
 * that spends minutes (a GPU run, a long tuning) before it writes, so an unwritable output
 * is refused at the start instead of losing the work at the end. A regular or new file:
 * a temporary file can be made beside it (and is removed) and an existing one is
 * writable; a FIFO or a device is not opened (a FIFO's reader may come later); a
 * directory or socket is refused. Errors as fileio_write_atomic's. */
int fileio_check_writable(const char *path, struct err *e);

/* Opens path for streaming output (truncating a regular file, creating a new one, writing
 * through a FIFO or a device as fileio_write_atomic does). NULL with e filled on failure. */
FILE *fileio_open_stream(const char *path, struct err *e);

/* Off by default. On: fileio_read remembers every regular file it reads, and
 * fileio_write_atomic and fileio_open_stream refuse (ERR_INPUT, "PATH: will not write it:
 * it is one of this command's inputs") to write over one of them, through any link or
 * spelling: a command's output never replaces its plan, model or cluster. Turning it on
 * or off forgets what was read. The TUI leaves it off: it saves over the plan it opened. */
void fileio_guard_inputs(bool on);
/* Lets the guard's writers replace path, an input that is also meant as the output. */
void fileio_guard_allow(const char *path);

/* Whether a and b name one existing file (through links and different spellings): an
 * output about to replace one of a command's own inputs. */
bool fileio_same_file(const char *a, const char *b);

/* The first of the n inputs (NULL entries skipped) that out would replace, as
 * fileio_same_file tells, or -1: the check every writer makes before replacing a file,
 * so no output of a command or of the UI ever replaces a file its plan reads. */
int fileio_input_index(const char *out, const char *const *inputs, int n);

/* Whether writing a and b would write one file: the same existing file, or (for files
 * still to be made) the same name in the same directory, links followed as the writers
 * follow them. Two outputs of one command must not: the second would replace the first. */
bool fileio_same_output(const char *a, const char *b);

/* Directory part of path into out ("." when there is none). */
void fileio_dirname(const char *path, char *out, size_t outsz);

/* Joins dir and a relative path into out; an absolute rel is copied as is.
 * Returns -1 when out is too small. */
int fileio_join(const char *dir, const char *rel, char *out, size_t outsz);

/* The path of target as seen from directory dir (e.g. "../samples/models/m.json"), for
 * references written into a file saved in dir. Falls back to target's absolute path when
 * either cannot be resolved. Returns -1 when out is too small. */
int fileio_relative(const char *dir, const char *target, char *out, size_t outsz);

#endif
