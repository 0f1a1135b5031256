/* test_fileio — atomic writes replace files without leaving temporaries, failures leave
 * the old file intact, and reads refuse directories and missing files. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "../tap.h"

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void on_int(int sig)
{
	(void)sig;
}

/* A write that a signal ends part way (here SIGXFSZ, past a file-size limit, at its default
 * action as Ctrl-C or a kill would be) leaves the old file and no temporary one; a signal
 * the program handles itself keeps its handler. */
static void interrupted_write(const char *dir)
{
	char path[160];
	static char big[65536];
	struct err e = ERR_INIT;
	struct sigaction sa, now;
	size_t len;
	char *s;
	pid_t pid;
	int status = 0;

	snprintf(path, sizeof(path), "%s/kept.json", dir);
	ok(fileio_write_atomic(path, "old\n", 4, &e) == 0, "a file to replace");
	memset(big, 'x', sizeof(big));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 4096, 4096 };

		signal(SIGXFSZ, SIG_DFL);
		setrlimit(RLIMIT_FSIZE, &rl);
		fileio_write_atomic(path, big, sizeof(big), &e);
		_exit(0);
	}
	ok(pid > 0 && waitpid(pid, &status, 0) == pid, "a writer that a signal ends");
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ, "dies of the signal, as it would have");
	is_int(count_entries(dir), 1, "and leaves no temporary file behind");
	s = fileio_read(path, &len, &e);
	is_str(s, "old\n", "the old file is intact");
	free(s);
	unlink(path);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_int;
	sigaction(SIGINT, &sa, NULL);
	ok(fileio_write_atomic(path, "new\n", 4, &e) == 0, "a write");
	sigaction(SIGINT, NULL, &now);
	ok(now.sa_handler == on_int, "leaves the program's own SIGINT handler in place");
	sigaction(SIGTERM, NULL, &now);
	ok(now.sa_handler == SIG_DFL, "and SIGTERM at its default after the write");
	signal(SIGINT, SIG_DFL);
	unlink(path);
}

/* Past the guard's table (4096 files read) no existing file is replaced, a new one is
 * written: the guard cannot tell whether an output is one of the inputs it no longer holds. */
static void guard_overflow(const char *dir)
{
	char path[160], out[160];
	struct err e = ERR_INIT;
	size_t len;
	int n = 4100, bad = 0;

	fileio_guard_inputs(true);
	for (int i = 0; i < n; i++) {
		char *s;

		snprintf(path, sizeof(path), "%s/r%d", dir, i);
		if (fileio_write_atomic(path, "x", 1, &e) < 0 || !(s = fileio_read(path, &len, &e)))
			bad++;
		else
			free(s);
	}
	is_int(bad, 0, "4100 files written and read with the guard on");
	snprintf(path, sizeof(path), "%s/r%d", dir, n - 1);
	ok(fileio_write_atomic(path, "y", 1, &e) < 0 && e.cls == ERR_INPUT,
	   "the last one read, past the table, is not replaced (%s)", e.msg);
	snprintf(out, sizeof(out), "%s/new.out", dir);
	ok(fileio_write_atomic(out, "z", 1, &e) == 0, "a new file is still written");
	fileio_guard_inputs(false);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/r%d", dir, i);
		unlink(path);
	}
	unlink(out);
}

/* With regular_only on (the TUI), a FIFO is refused at once and named as one, also while
 * a writer holds it open and writes nothing (the read waited for that writer, and the UI
 * with it: an alarm ends the test instead of hanging it), and so is a write to it; a
 * device too; a regular file is read as before. Off, /dev/null reads as the empty file it
 * is. */
static void regular_only(const char *dir, const char *regular)
{
	struct err e = ERR_INIT;
	char fifo[160], *s;
	size_t len;
	int w;

	snprintf(fifo, sizeof(fifo), "%s/slow-fifo", dir);
	ok(mkfifo(fifo, 0600) == 0, "a FIFO");
	w = open(fifo, O_RDWR | O_NONBLOCK);    /* a writer that never writes */
	ok(w >= 0, "held open by a writer that writes nothing");
	fileio_regular_only(true);
	alarm(10);
	s = fileio_read(fifo, &len, &e);
	alarm(0);
	ok(s == NULL && e.cls == ERR_INPUT, "regular_only: the FIFO is refused without waiting for its writer");
	ok(strstr(e.msg, "slow-fifo: is a FIFO, not a regular file") != NULL, "and named as a FIFO (%s)", e.msg);
	free(s);
	e = (struct err)ERR_INIT;
	s = fileio_read("/dev/null", &len, &e);
	ok(s == NULL && strstr(e.msg, "is a character device, not a regular file") != NULL,
	   "a device is refused too (%s)", e.msg);
	free(s);
	s = fileio_read(regular, &len, &e);
	ok(s != NULL, "a regular file is still read");
	free(s);
	{
		/* more than the FIFO holds, with a reader (the test) that does not read: the
		 * write waited for it */
		size_t big = 1 << 20;
		char *data = calloc(1, big);

		e = (struct err)ERR_INIT;
		alarm(10);
		ok(data && fileio_write_atomic(fifo, data, big, &e) < 0 && strstr(e.msg, "is a FIFO, not a regular file"),
		   "regular_only: a write to a FIFO is refused without waiting for its reader (%s)", e.msg);
		ok(fileio_open_stream(fifo, &e) == NULL && fileio_check_writable(fifo, &e) < 0,
		   "so are a stream opened on it and the check before a write");
		alarm(0);
		free(data);
	}
	fileio_regular_only(false);
	s = fileio_read("/dev/null", &len, &e);
	ok(s != NULL && len == 0, "off (the commands): /dev/null reads as empty");
	free(s);
	close(w);
	unlink(fifo);
}

int main(void)
{
	struct err e = ERR_INIT;
	char tmp[] = "/tmp/octopipe-io-XXXXXX", path[128], bad[160], out[64];
	size_t len;
	char *s;
	struct stat st;

	ok(mkdtemp(tmp) != NULL, "temporary directory");
	snprintf(path, sizeof(path), "%s/f.json", tmp);
	ok(fileio_write_atomic(path, "first\n", 6, &e) == 0, "a new file is written");
	ok(fileio_write_atomic(path, "second\n", 7, &e) == 0, "an existing file is replaced");
	s = fileio_read(path, &len, &e);
	is_str(s, "second\n", "the reader sees the new content");
	is_int(len, 7, "and its length");
	free(s);
	is_int(count_entries(tmp), 1, "no temporary file is left behind");
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == (0666 & ~umask(022)), "the file gets the usual mode");

	snprintf(bad, sizeof(bad), "%s/no-such-dir/f.json", tmp);
	ok(fileio_write_atomic(bad, "x", 1, &e) < 0, "writing into a missing directory fails");
	ok(strstr(e.msg, "cannot create a temporary file") != NULL, "with a message (%s)", e.msg);
	is_int(e.cls, ERR_RUNTIME, "as a runtime failure");
	/* the check before a long command: what a write would say, without writing */
	ok(fileio_check_writable(bad, &e) < 0 && strstr(e.msg, "cannot create a temporary file"),
	   "check_writable: a missing directory, as the write says it (%s)", e.msg);
	ok(fileio_check_writable(tmp, &e) < 0 && strstr(e.msg, "is a directory"), "check_writable: a directory");
	snprintf(out, sizeof(out), "%s/new.json", tmp);
	ok(fileio_check_writable(out, &e) == 0, "check_writable: a new file");
	ok(fileio_check_writable(path, &e) == 0, "check_writable: an existing file");
	is_int(count_entries(tmp), 1, "the check leaves nothing behind (neither the file nor a temporary)");
	{
		char fifo[160];

		snprintf(fifo, sizeof(fifo), "%s/fifo", tmp);
		ok(mkfifo(fifo, 0600) == 0 && fileio_check_writable(fifo, &e) == 0,
		   "check_writable: a FIFO nobody reads yet is not opened (its reader may come later)");
		unlink(fifo);
	}
	ok(chmod(tmp, 0500) == 0, "make the directory read-only");
	if (geteuid() != 0) {
		ok(fileio_check_writable(path, &e) < 0, "check_writable: a read-only directory is refused");
		ok(fileio_write_atomic(path, "third\n", 6, &e) < 0, "a failed write reports an error");
		s = fileio_read(path, &len, &e);
		is_str(s, "second\n", "and the old file is intact");
		free(s);
	} else {
		ok(1, "check_writable: a read-only directory is refused # SKIP root ignores directory permissions");
		ok(1, "a failed write reports an error # SKIP root ignores directory permissions");
		ok(1, "and the old file is intact # SKIP root ignores directory permissions");
	}
	chmod(tmp, 0700);

	ok(fileio_read(tmp, &len, &e) == NULL, "a directory is not read");
	ok(strstr(e.msg, "is a directory") != NULL, "and is named as one");
	ok(fileio_read(bad, &len, &e) == NULL && e.cls == ERR_INPUT, "a missing file is bad input");

	fileio_dirname("a/b/c.json", out, sizeof(out));
	is_str(out, "a/b", "dirname of a relative path");
	fileio_dirname("c.json", out, sizeof(out));
	is_str(out, ".", "dirname without a slash");
	fileio_dirname("/c.json", out, sizeof(out));
	is_str(out, "/", "dirname at the root");
	ok(fileio_join("plans", "../samples/m.json", out, sizeof(out)) == 0, "join");
	is_str(out, "plans/../samples/m.json", "joins relative paths");
	fileio_join("plans", "/abs/m.json", out, sizeof(out));
	is_str(out, "/abs/m.json", "keeps absolute paths");
	ok(fileio_join("plans", "a-very-long-name-that-does-not-fit-in-the-buffer-at-all.json", out, 16) < 0,
	   "refuses to truncate");

	regular_only(tmp, path);
	unlink(path);
	interrupted_write(tmp);
	guard_overflow(tmp);
	rmdir(tmp);
	return tap_done();
}
