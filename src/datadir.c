/*
 * datadir — locate bundled data (see datadir.h). The search order puts the explicit
 * environment variable first, then the tree the running binary was built in, then the
 * install prefix, so a developer's build never picks up an older installed copy.
 */
#include "config.h"
#include "datadir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char found[4096];
static int searched;

static int has_samples(const char *dir)
{
	char p[4096];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s/samples/models", dir) >= (int)sizeof(p))
		return 0;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int try_dir(const char *dir)
{
	if (!dir || !dir[0] || strlen(dir) >= sizeof(found) || !has_samples(dir))
		return 0;
	memcpy(found, dir, strlen(dir) + 1);
	return 1;
}

const char *datadir_find(const char *argv0)
{
	char exe[4096], dir[4200];
	ssize_t n;

	if (searched)
		return found[0] ? found : NULL;
	searched = 1;
	if (try_dir(getenv("OCTOPIPE_DATADIR")))
		return found;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 && argv0 && strchr(argv0, '/'))
		n = (ssize_t)snprintf(exe, sizeof(exe), "%s", argv0);
	if (n > 0 && (size_t)n < sizeof(exe)) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			/* an uninstalled build: the binary sits at the top of the build tree */
			if (try_dir(exe))
				return found;
			snprintf(dir, sizeof(dir), "%s/../share/octopipe", exe);
			if (try_dir(dir))
				return found;
		}
	}
	if (try_dir(PKGDATADIR))
		return found;
#ifdef ABS_TOP_SRCDIR
	if (try_dir(ABS_TOP_SRCDIR))
		return found;
#endif
	return NULL;
}

int datadir_resolve(const char *arg, const char *subdir, char *out, size_t outsz)
{
	const char *dd;
	struct stat st;

	snprintf(out, outsz, "%s", arg);
	if (stat(arg, &st) == 0 || strchr(arg, '/'))
		return stat(arg, &st) == 0 ? 0 : -1;
	dd = datadir_find(NULL);
	if (!dd)
		return -1;
	if (strlen(arg) > 5 && strcmp(arg + strlen(arg) - 5, ".json") == 0)
		snprintf(out, outsz, "%s/%s/%s", dd, subdir, arg);
	else
		snprintf(out, outsz, "%s/%s/%s.json", dd, subdir, arg);
	if (stat(out, &st) == 0)
		return 0;
	snprintf(out, outsz, "%s", arg);
	return -1;
}
