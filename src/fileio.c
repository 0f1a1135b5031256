/*
 * fileio — bounded whole-file reads and crash-safe writes (temp file + fsync + rename).
 * With the input guard on, the writers also refuse to replace a file this process read:
 * files are compared by device and inode, so no spelling or link of an input gets past.
 */
#include "config.h"
#include "fileio.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The regular files this process read, while the guard is on (a fixed table: no
 * allocation; a command reads a handful, report one plan, model and cluster per argument).
 * Past the table's end the guard cannot tell, so it replaces no existing file at all. */
#define READ_MAX 4096
static struct { dev_t dev; ino_t ino; } read_set[READ_MAX];
static int nread;
static bool read_overflow;
static bool guard_on;
static bool regular_only;

void fileio_regular_only(bool on)
{
	regular_only = on;
}

/* With regular_only on, -1 and e filled for a file that is not a regular file (nor a
 * directory, which the callers name themselves): the I/O on it may wait for ever. */
static int refuse_special(const char *path, const struct stat *st, const char *done, struct err *e)
{
	mode_t m = st->st_mode;

	if (!regular_only || S_ISREG(m) || S_ISDIR(m))
		return 0;
	return err_set(e, ERR_INPUT, "%s: is %s, not a regular file: only regular files are %s here", path,
	               S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
	               : S_ISSOCK(m) ? "a socket" : "no regular file", done);
}

void fileio_guard_inputs(bool on)
{
	guard_on = on;
	nread = 0;
	read_overflow = false;
}

void fileio_guard_allow(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return;
	for (int i = 0; i < nread; i++)
		if (read_set[i].dev == st.st_dev && read_set[i].ino == st.st_ino)
			read_set[i] = read_set[--nread];
}

static void note_read(const struct stat *st)
{
	if (!guard_on || !S_ISREG(st->st_mode))
		return;
	for (int i = 0; i < nread; i++)
		if (read_set[i].dev == st->st_dev && read_set[i].ino == st->st_ino)
			return;
	if (nread == READ_MAX) {
		read_overflow = true;
		return;
	}
	read_set[nread].dev = st->st_dev;
	read_set[nread].ino = st->st_ino;
	nread++;
}

/* -1 with e filled when path names (through links) a file this process read. */
static int refuse_input(const char *path, struct err *e)
{
	struct stat st;

	if (!guard_on || stat(path, &st) != 0)
		return 0;
	for (int i = 0; i < nread; i++)
		if (read_set[i].dev == st.st_dev && read_set[i].ino == st.st_ino)
			return err_set(e, ERR_INPUT, "%s: will not write it: it is one of this command's inputs", path);
	if (read_overflow && S_ISREG(st.st_mode))
		return err_set(e, ERR_INPUT, "%s: will not replace it: this command read more than %d files and cannot "
		               "tell whether it is one of them (write to a new file)", path, READ_MAX);
	return 0;
}

char *fileio_read(const char *path, size_t *len, struct err *e)
{
	struct stat st;
	char *buf = NULL;
	size_t cap = 0, n = 0;
	int fd;

	/* without a wait for a writer: a FIFO nobody writes reads as empty at once (an error
	 * below, not a hang); reads then block as usual, so a pipe being written is read whole */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err_set(e, ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			close(fd);
			err_set(e, ERR_INPUT, "%s: is a directory, not a file", path);
			return NULL;
		}
		/* refused before any read: a FIFO's or a device's read may wait for ever */
		if (refuse_special(path, &st, "read", e) < 0) {
			close(fd);
			return NULL;
		}
		note_read(&st);
	} else {
		st.st_mode = 0;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		err_set(e, ERR_INPUT, "%s: cannot read: %s", path, strerror(errno));
		close(fd);
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
				err_set(e, ERR_RUNTIME, "%s: out of host memory reading the file", path);
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
		if (got == 0) {
			if (n == 0 && S_ISFIFO(st.st_mode)) {
				err_set(e, ERR_INPUT, "%s: a FIFO with no writer: nothing to read", path);
				goto fail;
			}
			break;
		}
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

/* Opens a file that exists but is not a regular file (a FIFO, a terminal, /dev/null) for
 * writing through it. A FIFO nobody reads is refused rather than waited on. */
static int open_special(const char *path, const struct stat *st, struct err *e)
{
	int fd, fl;

	if (S_ISDIR(st->st_mode))
		return err_set(e, ERR_RUNTIME, "%s: is a directory", path);
	if (refuse_special(path, st, "written", e) < 0)
		return -1;
	if (!S_ISFIFO(st->st_mode) && !S_ISCHR(st->st_mode))
		return err_set(e, ERR_RUNTIME, "%s: not a regular file, a FIFO or a device; refusing to replace it", path);
	fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (S_ISFIFO(st->st_mode) ? O_NONBLOCK : 0));
	if (fd < 0) {
		if (errno == ENXIO)
			return err_set(e, ERR_RUNTIME, "%s: a FIFO that no process is reading", path);
		return err_set(e, ERR_RUNTIME, "%s: cannot open: %s", path, strerror(errno));
	}
	/* writes then block as usual: a slow reader is waited for, as by any shell redirection */
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

/* Where a write to path goes: a symbolic link is followed, so that saving through it
 * updates the file it names instead of replacing the link. into receives that path. */
static int resolve_target(const char *path, char *into, size_t intosz, struct err *e)
{
	char buf[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	ssize_t n;
	int hops = 0;

	if (snprintf(into, intosz, "%s", path) >= (int)intosz)
		return err_set(e, ERR_RUNTIME, "%s: path too long", path);
	while (lstat(into, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (++hops > 40)
			return err_set(e, ERR_RUNTIME, "%s: too many levels of symbolic links", path);
		n = readlink(into, buf, sizeof(buf) - 1);
		if (n < 0)
			return err_set(e, ERR_RUNTIME, "%s: cannot read the link: %s", path, strerror(errno));
		buf[n] = '\0';
		if (buf[0] == '/') {
			if (snprintf(into, intosz, "%s", buf) >= (int)intosz)
				return err_set(e, ERR_RUNTIME, "%s: path too long", path);
		} else {
			fileio_dirname(into, dir, sizeof(dir));
			if (fileio_join(dir, buf, into, intosz) < 0)
				return err_set(e, ERR_RUNTIME, "%s: path too long", path);
		}
	}
	return 0;
}

FILE *fileio_open_stream(const char *path, struct err *e)
{
	struct stat st;
	FILE *f;
	int fd;

	if (!path[0]) {
		err_set(e, ERR_INPUT, "an empty file name");
		return NULL;
	}
	if (refuse_input(path, e) < 0)
		return NULL;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		fd = open_special(path, &st, e);
	else if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY | O_CLOEXEC, 0666)) < 0)
		err_set(e, ERR_RUNTIME, "%s: cannot create: %s", path, strerror(errno));
	if (fd < 0)
		return NULL;
	if (!(f = fdopen(fd, "w"))) {
		err_set(e, ERR_RUNTIME, "%s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

/* Writes data through an existing special file (no temp file, no rename). */
static int write_special(const char *path, const struct stat *st, const void *data, size_t len, struct err *e)
{
	int fd = open_special(path, st, e), saved;

	if (fd < 0)
		return -1;
	if (write_all(fd, data, len) != 0) {
		saved = errno;
		close(fd);
		return err_set(e, ERR_RUNTIME, "%s: cannot write: %s", path, strerror(saved));
	}
	if (close(fd) != 0)
		return err_set(e, ERR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
	return 0;
}

/* While temporary files exist, a signal that would end the process (Ctrl-C, a kill, a
 * hang-up, a file-size limit) removes them first, then ends the process as it would have:
 * an interrupted write leaves the old files and nothing else. Signals the program handles
 * or ignores itself are left to it. Several live at once while writes are deferred
 * (fileio_defer): the registry is a list, changed only with those signals blocked. */
static const int temp_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXFSZ };
#define NTEMP_SIGNALS (sizeof(temp_signals) / sizeof(temp_signals[0]))
static char **temp_paths;
static volatile sig_atomic_t temp_n;
static int temp_cap;
static bool temp_caught[NTEMP_SIGNALS];

static void temp_on_signal(int sig)
{
	for (int i = 0; i < temp_n; i++)
		unlink(temp_paths[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void block_temp_signals(sigset_t *old)
{
	sigset_t block;

	sigemptyset(&block);
	for (size_t i = 0; i < NTEMP_SIGNALS; i++)
		sigaddset(&block, temp_signals[i]);
	sigprocmask(SIG_BLOCK, &block, old);
}

/* Called with the signals blocked, so that none finds the list half changed. false when
 * out of host memory (the caller removes the file). */
static bool temp_guard(const char *tmp)
{
	struct sigaction sa, old;
	char *copy = strdup(tmp);

	if (!copy)
		return false;
	if (temp_n == temp_cap) {
		int cap = temp_cap ? 2 * temp_cap : 8;
		char **grown = realloc(temp_paths, (size_t)cap * sizeof(*grown));

		if (!grown) {
			free(copy);
			return false;
		}
		temp_paths = grown;
		temp_cap = cap;
	}
	temp_paths[temp_n] = copy;
	temp_n = temp_n + 1;
	if (temp_n > 1)
		return true;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = temp_on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NTEMP_SIGNALS; i++) {
		temp_caught[i] = false;
		if (sigaction(temp_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO))
			temp_caught[i] = sigaction(temp_signals[i], &sa, NULL) == 0;
	}
	return true;
}

/* tmp is gone (renamed or removed): off the list; with none left, signals act as before. */
static void temp_unguard(const char *tmp)
{
	sigset_t old;

	block_temp_signals(&old);
	for (int i = 0; i < temp_n; i++)
		if (strcmp(temp_paths[i], tmp) == 0) {
			free(temp_paths[i]);
			temp_paths[i] = temp_paths[temp_n - 1];
			temp_n = temp_n - 1;
			break;
		}
	if (temp_n == 0) {
		for (size_t i = 0; i < NTEMP_SIGNALS; i++)
			if (temp_caught[i]) {
				signal(temp_signals[i], SIG_DFL);
				temp_caught[i] = false;
			}
		free(temp_paths); /* nothing kept between writes */
		temp_paths = NULL;
		temp_cap = 0;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void drop_temp(const char *tmp)
{
	unlink(tmp);
	temp_unguard(tmp);
}

/* The temporary file a save of path writes before renaming it over its target (a link
 * followed): target, its directory and tmp (PATH_MAX, PATH_MAX, PATH_MAX + 16 bytes) are
 * filled; the open descriptor, or -1 with e set. */
static int make_temp(const char *path, char *target, char *dir, char *tmp, struct err *e)
{
	sigset_t old;
	const char *base;
	int fd, saved, n;

	if (resolve_target(path, target, PATH_MAX, e) < 0)
		return -1;
	fileio_dirname(target, dir, PATH_MAX);
	/* NAME.tmp.XXXXXX beside it; a name too long for that (NAME_MAX) gets a short one in
	 * its directory, so a file that can be opened can be saved */
	base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
	if (strlen(base) + sizeof(".tmp.XXXXXX") - 1 <= NAME_MAX)
		n = snprintf(tmp, PATH_MAX + 16, "%s.tmp.XXXXXX", target);
	else
		n = snprintf(tmp, PATH_MAX + 16, "%.*s.octopipe.tmp.XXXXXX", (int)(base - target), target);
	if (n < 0 || n >= PATH_MAX + 16)
		return err_set(e, ERR_RUNTIME, "%s: path too long", path);
	/* no moment when the file exists and a signal would leave it behind: the signals
	 * wait until the handler knows its name */
	block_temp_signals(&old);
	fd = mkstemp(tmp);
	saved = errno;
	if (fd >= 0 && !temp_guard(tmp)) {
		close(fd);
		unlink(tmp);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return err_set(e, ERR_RUNTIME, "%s: out of host memory", path);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd < 0)
		return err_set(e, ERR_RUNTIME, "%s: cannot create a temporary file in '%s': %s", path, dir, strerror(saved));
	return fd;
}

/* Renames fileio_defer holds back until fileio_commit: each output's temporary file,
 * its target (links followed) and directory, and the name the caller gave. */
struct pending {
	char *path, *tmp, *target, *dir;
};
static struct pending *pending;
static int npending, pending_cap;
static bool deferring;

static int finish_rename(const char *path, const char *tmp, const char *target, const char *dir, struct err *e);
static int defer_rename(const char *path, const char *tmp, const char *target, const char *dir, struct err *e);

int fileio_check_writable(const char *path, struct err *e)
{
	char target[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX + 16];
	struct stat st;
	int fd;

	if (!path[0])
		return err_set(e, ERR_INPUT, "an empty file name");
	if (refuse_input(path, e) < 0)
		return -1;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return err_set(e, ERR_RUNTIME, "%s: is a directory", path);
		if (refuse_special(path, &st, "written", e) < 0)
			return -1;
		if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
			return err_set(e, ERR_RUNTIME, "%s: not a regular file, a FIFO or a device; refusing to replace it",
			               path);
		return 0;
	}
	if ((fd = make_temp(path, target, dir, tmp, e)) < 0)
		return -1;
	close(fd);
	drop_temp(tmp);
	if (stat(target, &st) == 0 && access(target, W_OK) != 0)
		return err_set(e, ERR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
	return 0;
}

int fileio_write_atomic(const char *path, const void *data, size_t len, struct err *e)
{
	char target[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX + 16];
	struct stat st;
	mode_t mode;
	int fd, saved;

	if (!path[0])
		return err_set(e, ERR_INPUT, "an empty file name");
	if (refuse_input(path, e) < 0)
		return -1;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return write_special(path, &st, data, len, e);
	if ((fd = make_temp(path, target, dir, tmp, e)) < 0)
		return -1;
	/* a replaced file keeps its permissions; a new one gets 0666 minus the umask */
	if (stat(target, &st) == 0) {
		/* the rename would replace a file its owner made read-only: refuse, as cp does */
		if (access(target, W_OK) != 0) {
			saved = errno;
			close(fd);
			drop_temp(tmp);
			return err_set(e, ERR_RUNTIME, "%s: cannot write: %s", path, strerror(saved));
		}
		mode = st.st_mode & 07777;
		/* root replacing another user's file gives the new one that user and group (as
		 * an editor does); elsewhere a failure leaves the file its maker's, as cp does */
		if (st.st_uid != geteuid() || st.st_gid != getegid())
			(void)!fchown(fd, st.st_uid, st.st_gid);
	} else {
		mode_t mask = umask(0);

		umask(mask);
		mode = 0666 & ~mask;
	}
	if (fchmod(fd, mode) != 0 || write_all(fd, data, len) != 0 || fsync(fd) != 0) {
		saved = errno;
		close(fd);
		drop_temp(tmp);
		return err_set(e, ERR_RUNTIME, "%s: cannot write: %s", path, strerror(saved));
	}
	if (close(fd) != 0) {
		saved = errno;
		drop_temp(tmp);
		return err_set(e, ERR_RUNTIME, "%s: cannot write: %s", path, strerror(saved));
	}
	if (deferring)
		return defer_rename(path, tmp, target, dir, e);
	return finish_rename(path, tmp, target, dir, e);
}

/* ---- deferred renames: a command's outputs replaced together, or none --------------- */

static int finish_rename(const char *path, const char *tmp, const char *target, const char *dir, struct err *e)
{
	int fd, saved;

	if (rename(tmp, target) != 0) {
		saved = errno;
		drop_temp(tmp);
		return err_set(e, ERR_RUNTIME, "%s: cannot replace the file: %s", path, strerror(saved));
	}
	temp_unguard(tmp);
	/* Make the rename itself durable; failure here is not worth failing the save. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	return 0;
}

static int defer_rename(const char *path, const char *tmp, const char *target, const char *dir, struct err *e)
{
	struct pending *grown, *q;

	if (npending == pending_cap) {
		int cap = pending_cap ? 2 * pending_cap : 8;

		if (!(grown = realloc(pending, (size_t)cap * sizeof(*grown)))) {
			drop_temp(tmp);
			return err_set(e, ERR_RUNTIME, "%s: out of host memory", path);
		}
		pending = grown;
		pending_cap = cap;
	}
	q = &pending[npending];
	q->path = strdup(path);
	q->tmp = strdup(tmp);
	q->target = strdup(target);
	q->dir = strdup(dir);
	if (!q->path || !q->tmp || !q->target || !q->dir) {
		free(q->path);
		free(q->tmp);
		free(q->target);
		free(q->dir);
		drop_temp(tmp);
		return err_set(e, ERR_RUNTIME, "%s: out of host memory", path);
	}
	npending++;
	return 0;
}

static void pending_free(struct pending *q)
{
	free(q->path);
	free(q->tmp);
	free(q->target);
	free(q->dir);
}

void fileio_defer(void)
{
	deferring = true;
}

int fileio_commit(struct err *e)
{
	int rc = 0, i;

	deferring = false;
	for (i = 0; i < npending && rc == 0; i++)
		rc = finish_rename(pending[i].path, pending[i].tmp, pending[i].target, pending[i].dir, e);
	for (int j = 0; j < npending; j++) {
		if (j >= i)
			drop_temp(pending[j].tmp); /* a rename failed: the rest stay as they were */
		pending_free(&pending[j]);
	}
	free(pending);
	pending = NULL;
	npending = pending_cap = 0;
	return rc;
}

void fileio_discard(void)
{
	deferring = false;
	for (int j = 0; j < npending; j++) {
		drop_temp(pending[j].tmp);
		pending_free(&pending[j]);
	}
	free(pending);
	pending = NULL;
	npending = pending_cap = 0;
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

bool fileio_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int fileio_input_index(const char *out, const char *const *inputs, int n)
{
	for (int i = 0; i < n; i++)
		if (inputs[i] && fileio_same_file(out, inputs[i]))
			return i;
	return -1;
}

bool fileio_same_output(const char *a, const char *b)
{
	char ta[PATH_MAX], tb[PATH_MAX], da[PATH_MAX], db[PATH_MAX];
	struct err e = ERR_INIT;
	struct stat sa, sb;
	const char *na, *nb;

	if (!a || !b)
		return false;
	if (strcmp(a, b) == 0 || fileio_same_file(a, b))
		return true;
	if (resolve_target(a, ta, sizeof(ta), &e) < 0 || resolve_target(b, tb, sizeof(tb), &e) < 0)
		return false;
	if (fileio_same_file(ta, tb))
		return true;
	/* not there yet: one name in one directory */
	na = strrchr(ta, '/') ? strrchr(ta, '/') + 1 : ta;
	nb = strrchr(tb, '/') ? strrchr(tb, '/') + 1 : tb;
	fileio_dirname(ta, da, sizeof(da));
	fileio_dirname(tb, db, sizeof(db));
	return strcmp(na, nb) == 0 && stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}
