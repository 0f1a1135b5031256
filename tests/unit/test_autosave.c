/*
 * test_autosave — the TUI's autosave slots (ui/autosave.c) with real processes: a second
 * process never gets a slot another holds; a process that dies without releasing (a
 * crash, kill -9) leaves its file offered for recovery and its slot free, whatever its
 * lock file says (a garbage or empty one too); twelve processes racing for one stem each
 * get their own slot or none; a release removes the lock and only a file this process
 * wrote.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "autosave.h"
#include "../tap.h"

static char dir[64];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void new_as(struct autosave *as)
{
	memset(as, 0, sizeof(*as));
	snprintf(as->dir, sizeof(as->dir), "%s", dir);
}

/* The slot number of a claimed path: 0 for "stem.autosave.json", k for "stem.k.…". */
static int slot_of(const char *path)
{
	const char *end = strstr(path, ".autosave.json"), *dot;

	if (!end)
		return -1;
	for (dot = end - 1; dot > path && *dot != '.' && *dot != '/'; dot--)
		;
	return *dot == '.' ? atoi(dot + 1) : 0;
}

/* Runs fn in a child and returns its exit status (the child's answer). */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(fn());
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* A second UI: the slot it gets (100 + k), or 99 when none. */
static int other_claims(void)
{
	struct autosave as;

	new_as(&as);
	if (autosave_claim(&as, "plan-1234", false) < 0)
		return 99;
	return 100 + slot_of(as.path);
}

/* A UI that writes its autosave and crashes without releasing anything. */
static int other_crashes(void)
{
	struct autosave as;

	new_as(&as);
	if (autosave_claim(&as, "plan-1234", true) < 0)
		return 99;
	put(as.path, "{\"edits\": true}\n");
	_exit(100 + slot_of(as.path));
}

int main(void)
{
	struct autosave a, b;
	char path[256];
	int got, fds[2];

	snprintf(dir, sizeof(dir), "/tmp/octopipe-test-autosave.XXXXXX");
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}

	/* one UI holds slot 0; another process is refused it and gets slot 1 */
	new_as(&a);
	ok(autosave_claim(&a, "plan-1234", false) == 0 && a.locked && !a.found, "a first UI claims a free slot");
	is_int(slot_of(a.path), 0, "it is slot 0");
	is_int(in_child(other_claims), 101, "a second process gets slot 1 while the first holds 0");
	is_int(in_child(other_claims), 101, "and again: its lock died with it, nothing was judged stale");

	/* a crash leaves its file; the slot is free and the file is offered */
	got = in_child(other_crashes);
	is_int(got, 101, "a crashing UI wrote its edits in slot 1");
	snprintf(path, sizeof(path), "%s/plan-1234.1.autosave.lock", dir);
	ok(exists(path), "its lock file is left behind, as a crash leaves it");
	put(path, "");   /* as if it had crashed between creating and writing the lock */
	new_as(&b);
	ok(autosave_claim(&b, "plan-1234", false) == 0 && b.found, "the next UI finds the crashed one's edits");
	is_int(slot_of(b.path), 1, "in slot 1, despite an empty lock file");
	autosave_release(&b, true);
	snprintf(path, sizeof(path), "%s/plan-1234.1.autosave.json", dir);
	ok(exists(path), "releasing a recovered file it did not write keeps it");
	snprintf(path, sizeof(path), "%s/plan-1234.1.autosave.lock", dir);
	ok(!exists(path), "releasing removes the lock file");

	put(path, "garbage that is no pid\n");
	new_as(&b);
	ok(autosave_claim(&b, "plan-1234", false) == 0 && b.found && slot_of(b.path) == 1,
	   "a garbage lock file does not keep a slot held");
	b.written = true;
	autosave_release(&b, true);
	snprintf(path, sizeof(path), "%s/plan-1234.1.autosave.json", dir);
	ok(!exists(path), "releasing a file this UI wrote removes it");

	/* need_empty skips files; a held slot's file is never offered */
	put(a.path, "{}\n");
	a.written = true;
	new_as(&b);
	ok(autosave_claim(&b, "plan-1234", false) == 0 && !b.found && slot_of(b.path) == 1,
	   "a file in a held slot is not offered for recovery");
	autosave_release(&b, true);

	/* twelve processes race for one stem: every winner has its own slot */
	autosave_release(&a, true);
	ok(!exists(a.path), "the first UI removes the file it wrote");
	if (pipe(fds) == 0) {
		int seen[AUTOSAVE_SLOTS] = { 0 }, dup = 0, winners = 0, losers = 0;
		pid_t kids[12];
		unsigned char slot;

		for (int i = 0; i < 12; i++) {
			kids[i] = fork();
			if (kids[i] == 0) {
				struct autosave c;

				new_as(&c);
				slot = autosave_claim(&c, "race-1", true) == 0 ? (unsigned char)slot_of(c.path) : 255;
				if (write(fds[1], &slot, 1) != 1)
					_exit(1);
				usleep(300000);         /* hold it while the others try */
				autosave_release(&c, true);
				_exit(0);
			}
		}
		close(fds[1]);
		while (read(fds[0], &slot, 1) == 1) {
			if (slot == 255)
				losers++;
			else if (slot < AUTOSAVE_SLOTS) {
				dup += seen[slot]++ > 0;
				winners++;
			}
		}
		close(fds[0]);
		for (int i = 0; i < 12; i++)
			if (kids[i] > 0)
				waitpid(kids[i], NULL, 0);
		is_int(dup, 0, "no slot went to two racing processes");
		is_int(winners + losers, 12, "every racer answered");
		ok(winners >= 1 && winners <= AUTOSAVE_SLOTS, "between 1 and %d won (%d)", AUTOSAVE_SLOTS, winners);
	}

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	/* the state directory is absolute, as the XDG base directory spec asks: a relative
	 * XDG_STATE_HOME (or HOME) would put autosaves under whatever directory the UI was
	 * started in, where a later start elsewhere would never find them */
	{
		char d[256];

		setenv("HOME", "/home/u", 1);
		setenv("XDG_STATE_HOME", "/var/st", 1);
		ok(autosave_dir(d, sizeof(d)) && strcmp(d, "/var/st/octopipe") == 0, "XDG_STATE_HOME: %s", d);
		setenv("XDG_STATE_HOME", "rel/state", 1);
		ok(autosave_dir(d, sizeof(d)) && strcmp(d, "/home/u/.local/state/octopipe") == 0,
		   "a relative XDG_STATE_HOME is ignored: %s", d);
		setenv("HOME", "relhome", 1);
		unsetenv("XDG_STATE_HOME");
		ok(!autosave_dir(d, sizeof(d)), "a relative HOME gives no directory (autosave off, said so)");
	}
	return tap_done();
}
