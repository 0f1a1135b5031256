/*
 * datadir — where the bundled samples and plans live: the source tree when running from
 * a build directory, $(pkgdatadir) when installed, or $OCTOPIPE_DATADIR when set.
 * Lets users name a bundled file by its short name: `octopipe show gpt-13b`.
 */
#ifndef OCTO_DATADIR_H
#define OCTO_DATADIR_H

#include <stddef.h>

/* The data directory (contains samples/ and plans/), or NULL when none is found.
 * The string is static. argv0 helps find an uninstalled build; may be NULL. */
const char *datadir_find(const char *argv0);

/* Resolves a user's argument: an existing path is returned as is; otherwise a bare name
 * (no '/') is looked up as <datadir>/<subdir>/<name>.json. Writes into out and returns 0,
 * or -1 when nothing matches (out then holds the argument unchanged). */
int datadir_resolve(const char *arg, const char *subdir, char *out, size_t outsz);

#endif
