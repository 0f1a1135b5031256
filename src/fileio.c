/*
 * fileio — bounded whole-file reads and crash-safe writes (temp file + fsync + rename).
 */
#include "config.h"
#include "fileio.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *fileio_read(const char *path, size_t *len, struct err *e)
{
	struct stat st;
	char *buf = NULL;
	size_t cap = 0, n = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err_set(e, ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		err_set(e, ERR_INPUT, "%s: is a directory, not a file", path);
		return NULL;
	}
	for (;;) {
		ssize_t got;

		if (cap - n < 4096) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *p;

			if (ncap > FILEIO_MAX_BYTES + 4096)
				ncap = FILEIO_MAX_BYTES + 4096;
			if (ncap <= cap) {
				err_set(e, ERR_INPUT, "%s: larger than %zu MiB, refusing to read it",
				        path, FILEIO_MAX_BYTES >> 20);
				goto fail;
			}
			p = realloc(buf, ncap);
			if (!p) {
				err_set(e, ERR_RUNTIME, "%s: out of memory reading the file", path);
				goto fail;
			}
			buf = p;
			cap = ncap;
		}
		got = read(fd, buf + n, cap - n - 1);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			err_set(e, ERR_INPUT, "%s: cannot read: %s", path, strerror(errno));
			goto fail;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > FILEIO_MAX_BYTES) {
			err_set(e, ERR_INPUT, "%s: larger than %zu MiB, refusing to read it",
			        path, FILEIO_MAX_BYTES >> 20);
			goto fail;
		}
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int fileio_write_atomic(const char *path, const void *data, size_t len, struct err *e)
{
	char dir[4096], tmp[4200];
	mode_t mask;
	int fd, saved;

	fileio_dirname(path, dir, sizeof(dir));
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
		return err_set(e, ERR_RUNTIME, "%s: path too long", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		return err_set(e, ERR_RUNTIME, "%s: cannot create a temporary file in '%s': %s",
		               path, dir, strerror(errno));
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0 || write_all(fd, data, len) != 0 || fsync(fd) != 0) {
		saved = errno;
		close(fd);
		unlink(tmp);
		return err_set(e, ERR_RUNTIME, "%s: cannot write: %s", path, strerror(saved));
	}
	if (close(fd) != 0) {
		saved = errno;
		unlink(tmp);
		return err_set(e, ERR_RUNTIME, "%s: cannot write: %s", path, strerror(saved));
	}
	if (rename(tmp, path) != 0) {
		saved = errno;
		unlink(tmp);
		return err_set(e, ERR_RUNTIME, "%s: cannot replace the file: %s", path, strerror(saved));
	}
	/* Make the rename itself durable; failure here is not worth failing the save. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	return 0;
}

void fileio_dirname(const char *path, char *out, size_t outsz)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!outsz)
		return;
	if (!slash) {
		snprintf(out, outsz, ".");
		return;
	}
	n = (size_t)(slash - path);
	if (n == 0)
		n = 1; /* "/x" -> "/" */
	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, path, n);
	out[n] = '\0';
}

int fileio_join(const char *dir, const char *rel, char *out, size_t outsz)
{
	int n;

	if (rel[0] == '/' || !dir || !dir[0] || strcmp(dir, ".") == 0)
		n = snprintf(out, outsz, "%s", rel);
	else
		n = snprintf(out, outsz, "%s/%s", dir, rel);
	return (n < 0 || (size_t)n >= outsz) ? -1 : 0;
}

int fileio_relative(const char *dir, const char *target, char *out, size_t outsz)
{
	char d[PATH_MAX], t[PATH_MAX];
	size_t common = 0, i;
	int n = 0;

	if (!realpath(dir, d) || !realpath(target, t)) {
		n = snprintf(out, outsz, "%s", target);
		return n < 0 || (size_t)n >= outsz ? -1 : 0;
	}
	/* longest common prefix ending at a directory boundary */
	for (i = 0; d[i] && d[i] == t[i]; i++)
		if (d[i] == '/')
			common = i;
	if (!d[i] && t[i] == '/')
		common = i;
	if (strcmp(d, "/") == 0)
		common = 0;
	out[0] = '\0';
	/* one ".." per directory of dir below the common prefix */
	for (i = common; d[i]; i++) {
		if (d[i] == '/' && d[i + 1]) {
			if (strlen(out) + 3 >= outsz)
				return -1;
			strcat(out, "../");
		}
	}
	if (strlen(out) + strlen(t + common + 1) >= outsz)
		return -1;
	strcat(out, t + common + 1);
	return 0;
}
