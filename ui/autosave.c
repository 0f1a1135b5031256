/*
 * autosave — slots of autosave files with vim-like locks (see autosave.h).
 *
 * A slot's lock is an fcntl write lock on its .lock file, held for as long as the UI
 * keeps the slot and released by the kernel when the process ends, however it ends: a
 * crash or a kill -9 leaves the file but no lock, and the next UI takes the slot without
 * judging anything stale (pid files cannot do that safely: two processes can both judge
 * one stale and both take it, and a lock left empty by a crash is never judged at all).
 * The file names its holder ("<pid> <host>") for a person looking at the directory.
 */
#include "config.h"
#include "autosave.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool autosave_dir(char *buf, size_t n)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

	/* relative paths are invalid (the XDG base directory spec: ignore them), as they would
	 * depend on the directory the UI was started in */
	if (state && *state == '/')
		snprintf(buf, n, "%s/octopipe", state);
	else if (home && *home == '/')
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

/* Open-file-description locks (Linux 3.15+) belong to this open file, not to the
 * process: a second claim in the same process is refused like any other, and closing
 * another descriptor of the file cannot drop the lock. Plain POSIX locks elsewhere. */
#ifdef F_OFD_SETLK
#define LOCK_CMD F_OFD_SETLK
#else
#define LOCK_CMD F_SETLK
#endif

/*
 * Takes the lock of a slot: the lock file is opened (made if need be) and write-locked
 * with fcntl, which the kernel releases when this process ends however it ends, so a
 * crashed UI never leaves a lock that must be judged stale, and no two processes can
 * both decide one is. Returns the open descriptor that holds it, or -1 when another
 * process holds it or the file cannot be locked. The descriptor must stay open while
 * the slot is held.
 */
static int take_lock(const char *lock)
{
	char buf[300], host[256] = "";
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct stat held, now;
	int fd, len;

	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	if (fcntl(fd, LOCK_CMD, &fl) < 0) {
		close(fd);
		return -1;
	}
	/* the holder we waited behind may have removed the file on release: a lock on an
	 * unlinked file guards nothing, so the slot must still be this very file */
	if (fstat(fd, &held) < 0 || stat(lock, &now) < 0 || held.st_ino != now.st_ino ||
	    held.st_dev != now.st_dev || !S_ISREG(held.st_mode)) {
		close(fd);
		return -1;
	}
	/* who holds it, for a person looking at the directory */
	gethostname(host, sizeof(host) - 1);
	len = snprintf(buf, sizeof(buf), "%ld %s\n", (long)getpid(), host[0] ? host : "-");
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)len, 0) != len) {
		close(fd);
		return -1;
	}
	return fd;
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

			int fd;

			slot_paths(as, stem, k, file, lock, sizeof(file));
			if ((access(file, F_OK) == 0) != (pass == 0))
				continue;       /* not this pass's kind of slot */
			if ((fd = take_lock(lock)) < 0)
				continue;
			has_file = access(file, F_OK) == 0;
			if (has_file != (pass == 0)) {
				/* its holder released it between the look and the lock */
				unlink(lock);
				close(fd);
				continue;
			}
			snprintf(as->path, sizeof(as->path), "%s", file);
			snprintf(as->lock, sizeof(as->lock), "%s", lock);
			as->lock_fd = fd;
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
	if (as->locked) {
		unlink(as->lock);       /* while still held: nobody can take the name meanwhile */
		close(as->lock_fd);
	}
	as->locked = false;
}
