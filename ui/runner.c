/*
 * runner — a child process read through non-blocking pipes (see runner.h).
 *
 * The child gets its own process group so one kill() reaches a launcher and the ranks
 * it started; the pipes' read ends are non-blocking and close-on-exec, so the UI's
 * poll() loop never waits on the child and a second child never inherits the first's
 * pipes. Reaping is always WNOHANG except in runner_finish(), which bounds the wait and
 * falls back to SIGKILL, so no path leaves a zombie or a hang.
 */
#include "config.h"
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

static volatile pid_t current_pgid;

void runner_init(struct runner *r)
{
	memset(r, 0, sizeof(*r));
	r->out_fd = r->err_fd = -1;
}

bool runner_active(const struct runner *r)
{
	return r->pid > 0 && !r->reaped;
}

int runner_start(struct runner *r, char *const argv[], struct err *e)
{
	int out[2], errp[2], ready[2];
	pid_t pid;
	int code = 0;

	runner_init(r);
	if (pipe2(out, O_CLOEXEC) < 0)
		return err_set(e, ERR_RUNTIME, "pipe: %s", strerror(errno));
	if (pipe2(errp, O_CLOEXEC) < 0) {
		close(out[0]);
		close(out[1]);
		return err_set(e, ERR_RUNTIME, "pipe: %s", strerror(errno));
	}
	/* a close-on-exec pipe tells the parent whether exec worked, and errno if not */
	if (pipe2(ready, O_CLOEXEC) < 0) {
		close(out[0]); close(out[1]); close(errp[0]); close(errp[1]);
		return err_set(e, ERR_RUNTIME, "pipe: %s", strerror(errno));
	}
	pid = fork();
	if (pid < 0) {
		close(out[0]); close(out[1]); close(errp[0]); close(errp[1]); close(ready[0]); close(ready[1]);
		return err_set(e, ERR_RUNTIME, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		struct sigaction sa;

		setpgid(0, 0);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigemptyset(&sa.sa_mask);
		for (int s = 1; s < 32; s++)
			if (s != SIGKILL && s != SIGSTOP)
				sigaction(s, &sa, NULL);
		if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0 ||
		    dup2(errp[1], STDERR_FILENO) < 0)
			code = errno;
		if (!code) {
			execvp(argv[0], argv);
			code = errno;
		}
		if (write(ready[1], &code, sizeof(code)) < 0) {
			/* the parent sees end of file and the exit status */
		}
		_exit(127);
	}
	setpgid(pid, pid);    /* also here: whichever runs first, the group exists before any kill */
	close(out[1]);
	close(errp[1]);
	close(ready[1]);
	if (read(ready[0], &code, sizeof(code)) == (ssize_t)sizeof(code)) {
		int st;

		close(ready[0]);
		close(out[0]);
		close(errp[0]);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
			/* retry */
		}
		return err_set(e, ERR_RUNTIME, "cannot start '%s': %s", argv[0], strerror(code));
	}
	close(ready[0]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(errp[0], F_SETFL, O_NONBLOCK);
	r->pid = pid;
	r->out_fd = out[0];
	r->err_fd = errp[0];
	current_pgid = pid;
	return 0;
}

static void keep_err_tail(struct runner *r, const char *buf, long n)
{
	for (long i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			if (r->err_len > 0) {
				r->err_part[r->err_len] = '\0';
				memcpy(r->err_tail, r->err_part, r->err_len + 1);
			}
			r->err_len = 0;
		} else if (r->err_len + 1 < sizeof(r->err_part)) {
			r->err_part[r->err_len++] = buf[i] == '\t' ? ' ' : buf[i];
		}
	}
}

long runner_read(struct runner *r, int fd, char *buf, size_t n)
{
	ssize_t k;

	if (fd < 0 || n == 0)
		return -1;
	do
		k = read(fd, buf, n);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : 0;
	if (fd == r->err_fd && k > 0)
		keep_err_tail(r, buf, (long)k);
	if (k == 0 || (k < 0)) {
		close(fd);
		if (fd == r->out_fd)
			r->out_fd = -1;
		else if (fd == r->err_fd) {
			if (r->err_len > 0)
				keep_err_tail(r, "\n", 1);
			r->err_fd = -1;
		}
		return 0;
	}
	return (long)k;
}

void runner_signal(struct runner *r, bool kill_it)
{
	if (!runner_active(r))
		return;
	if (kill_it) {
		kill(-r->pid, SIGKILL);
		kill(r->pid, SIGKILL);
		return;
	}
	if (r->term_sent)
		return;
	r->term_sent = true;
	r->term_at = clock_now_s();
	kill(-r->pid, SIGTERM);
	kill(r->pid, SIGTERM);
}

bool runner_reap(struct runner *r)
{
	pid_t w;

	if (r->pid <= 0)
		return false;
	if (r->reaped)
		return true;
	do
		w = waitpid(r->pid, &r->status, WNOHANG);
	while (w < 0 && errno == EINTR);
	if (w == r->pid || (w < 0 && errno == ECHILD)) {
		r->reaped = true;
		if (current_pgid == r->pid)
			current_pgid = 0;
		/* anything the group left behind (ranks of a launcher) goes too */
		kill(-r->pid, SIGTERM);
		return true;
	}
	return false;
}

void runner_finish(struct runner *r, double grace_s)
{
	if (runner_active(r)) {
		double until;
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		runner_signal(r, false);
		until = clock_now_s() + grace_s;
		while (!runner_reap(r) && clock_now_s() < until)
			nanosleep(&ts, NULL);
		if (!r->reaped) {
			runner_signal(r, true);
			while (!r->reaped) {
				pid_t w = waitpid(r->pid, &r->status, 0);

				if (w == r->pid || (w < 0 && errno != EINTR))
					r->reaped = true;
			}
			if (current_pgid == r->pid)
				current_pgid = 0;
		}
	}
	if (r->out_fd >= 0)
		close(r->out_fd);
	if (r->err_fd >= 0)
		close(r->err_fd);
	r->out_fd = r->err_fd = -1;
}

void runner_describe(const struct runner *r, char *buf, size_t n)
{
	if (!r->reaped)
		snprintf(buf, n, "running");
	else if (WIFEXITED(r->status))
		snprintf(buf, n, "exit status %d", WEXITSTATUS(r->status));
	else if (WIFSIGNALED(r->status))
		snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(r->status), strsignal(WTERMSIG(r->status)));
	else
		snprintf(buf, n, "status %d", r->status);
}

void runner_emergency_stop(void)
{
	pid_t g = current_pgid;

	if (g > 0)
		kill(-g, SIGTERM);
}
