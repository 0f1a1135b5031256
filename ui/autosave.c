/*
 * autosave — slots of autosave files with vim-like locks (see autosave.h).
 *
 * A lock is "<pid> <host>" created with O_EXCL, so of two processes racing for a slot one
 * wins. A lock of this host whose process no longer exists is stale (a crash, a kill -9)
 * and is removed; a lock from another host (a shared home over NFS) is always respected.
 */
#include "config.h"
#include "autosave.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool autosave_dir(char *buf, size_t n)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

	if (state && *state)
		snprintf(buf, n, "%s/octopipe", state);
	else if (home && *home)
		snprintf(buf, n, "%s/.local/state/octopipe", home);
	else
		return false;
	return true;
}

void autosave_stem(const char *name, const char *key, char *buf, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	char base[128];
	size_t k = 0;

	for (const char *c = key; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	for (const char *c = name; *c && k + 1 < sizeof(base); c++)
		base[k++] = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		            *c == '-' || *c == '.' || *c == '_' ? *c : '-';
	base[k] = '\0';
	if (k > 5 && strcmp(base + k - 5, ".json") == 0)
		base[k - 5] = '\0';
	snprintf(buf, n, "%s-%08x", base[0] ? base : "plan", (unsigned)(h ^ (h >> 32)));
}

static int mkdirs(const char *dir)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s/", dir);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0700) < 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return 0;
}

/* True when another live process (or one we cannot check) holds the lock. */
static bool lock_held(const char *lock)
{
	char buf[300], host[256] = "", mine[256] = "";
	FILE *f = fopen(lock, "r");
	long pid = 0;

	if (!f)
		return errno != ENOENT;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%ld %255s", &pid, host) < 1 || pid <= 0) {
		fclose(f);
		return true;    /* being written right now, or not ours to judge */
	}
	fclose(f);
	gethostname(mine, sizeof(mine) - 1);
	if (host[0] && strcmp(host, mine) != 0)
		return true;
	if (pid == (long)getpid())
		return true;
	if (kill((pid_t)pid, 0) == 0 || errno == EPERM)
		return true;
	unlink(lock);       /* stale: its process is gone */
	return false;
}

static bool take_lock(const char *lock)
{
	char buf[300], host[256] = "";
	int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600), len;
	bool ok;

	if (fd < 0)
		return false;
	gethostname(host, sizeof(host) - 1);
	len = snprintf(buf, sizeof(buf), "%ld %s\n", (long)getpid(), host[0] ? host : "-");
	ok = write(fd, buf, (size_t)len) == len;
	close(fd);
	if (!ok)
		unlink(lock);
	return ok;
}

static void slot_paths(const struct autosave *as, const char *stem, int k, char *file, char *lock, size_t n)
{
	char suffix[16] = "";

	if (k > 0)
		snprintf(suffix, sizeof(suffix), ".%d", k);
	snprintf(file, n, "%s/%s%s.autosave.json", as->dir, stem, suffix);
	snprintf(lock, n, "%s/%s%s.autosave.lock", as->dir, stem, suffix);
}

int autosave_claim(struct autosave *as, const char *stem, bool need_empty)
{
	char file[4096], lock[4096];

	autosave_release(as, false);
	as->found = as->written = false;
	as->path[0] = as->lock[0] = '\0';
	if (!as->dir[0] || mkdirs(as->dir) < 0)
		return -1;
	/* two passes: a slot with an earlier session's file, then an empty one */
	for (int pass = need_empty ? 1 : 0; pass < 2; pass++)
		for (int k = 0; k < AUTOSAVE_SLOTS; k++) {
			bool has_file;

			slot_paths(as, stem, k, file, lock, sizeof(file));
			if (lock_held(lock))
				continue;
			has_file = access(file, F_OK) == 0;
			if (has_file != (pass == 0))
				continue;
			if (!take_lock(lock))
				continue;
			snprintf(as->path, sizeof(as->path), "%s", file);
			snprintf(as->lock, sizeof(as->lock), "%s", lock);
			as->locked = true;
			as->found = has_file;
			return 0;
		}
	errno = EBUSY;
	return -1;
}

void autosave_release(struct autosave *as, bool remove_file)
{
	if (remove_file && as->written && as->path[0])
		unlink(as->path);
	if (remove_file)
		as->written = false;
	if (as->locked)
		unlink(as->lock);
	as->locked = false;
}
