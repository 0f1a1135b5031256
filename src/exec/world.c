/*
 * world — MPI services for the executor's ranks (see world.h). MPI is initialised by
 * octopipe run (emu_mpi_init) before any of these is called.
 *
 * The one idea: a collective whose deadline passes cannot say who is missing, a
 * point-to-point exchange can. So the agreement every phase ends with goes through rank
 * 0, which posts one receive per rank and, at the deadline, names the ranks whose
 * verdict never came; the other ranks wait twice as long for rank 0's answer, so that
 * when rank 0 itself is the silent one, rank 1 says so. Either way MPI_Abort ends the
 * job: a hung rank cannot be asked to leave.
 */
#include "config.h"
#include "exec/world.h"

#include "clock.h"

#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { TAG_ABORT = 0, TAG_VERDICT = 32001, TAG_ANSWER = 32002 };

#define GRACE_S 2.0        /* how much later than the reporter the others end the job */

static MPI_Request *slots;
static int nslots;
static MPI_Request *abort_req;
static bool aborted_others;
static double deadline_s = 60;
static void (*fatal_report)(const char *line);

int world_rank(void)
{
	int r = 0;

	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	return r;
}

int world_size(void)
{
	int n = 1;

	MPI_Comm_size(MPI_COMM_WORLD, &n);
	return n;
}

void world_set_deadline(double seconds)
{
	deadline_s = seconds > 0 && isfinite(seconds) ? seconds : 60;
}

void world_on_fatal(void (*report)(const char *line))
{
	fatal_report = report;
}

/* Polls the n requests until all completed (true) or the clock passes until (false). */
static bool wait_until(MPI_Request *req, int n, double until)
{
	double pause = 20e-6;

	for (;;) {
		int done = 0;

		MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
		if (done)
			return true;
		if (clock_now_s() > until)
			return false;
		clock_nap_s(pause);
		pause = fmin(pause * 2, 1e-3);
	}
}

static void fatal(bool report, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* Ends the job: the reporting rank hands the line to the hook at once, the others give it
 * GRACE_S to do so first; then MPI_Abort stops every rank. */
static void fatal(bool report, const char *fmt, ...)
{
	char line[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (report && fatal_report)
		fatal_report(line);
	else
		clock_nap_s(GRACE_S);
	MPI_Abort(MPI_COMM_WORLD, 1);
	for (;;)   /* MPI_Abort does not return; should it, this rank stays out of the way */
		clock_nap_s(1);
}

/* Waits for a collective: rank 0 ends the job at the deadline; the others wait longer (a
 * live rank 0 ends it first), and then rank 1 says that rank 0 did not answer. */
static void collective(MPI_Request *req, const char *what)
{
	int me = world_rank();

	if (wait_until(req, 1, clock_now_s() + deadline_s))
		return;
	if (me == 0)
		fatal(true, "rank 0: %s did not complete within %g s (a rank hung or died); the job is aborted", what,
		      deadline_s);
	if (wait_until(req, 1, clock_now_s() + deadline_s + GRACE_S))
		return;
	fatal(me == 1, "rank 0 did not answer within %g s (%s; hung, or dead without the launcher noticing); the job "
	      "is aborted", 2 * deadline_s + GRACE_S, what);
}

int world_local_rank(void)
{
	int me = world_rank(), n = world_size(), r = 0;
	char (*hosts)[64] = calloc((size_t)n, sizeof(*hosts)), mine[64] = "";

	if (!hosts)
		return me;
	if (gethostname(mine, sizeof(mine) - 1) != 0)
		snprintf(mine, sizeof(mine), "?");
	world_allgather(mine, hosts, sizeof(mine));
	for (int q = 0; q < me; q++)
		r += strncmp(hosts[q], mine, sizeof(mine)) == 0;
	free(hosts);
	return r;
}

void world_barrier(void)
{
	MPI_Request req;

	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	collective(&req, "a barrier");
}

void world_bcast(void *buf, size_t n)
{
	MPI_Request req;

	MPI_Ibcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
	collective(&req, "a broadcast");
}

void world_allgather(const void *mine, void *all, size_t n)
{
	MPI_Request req;

	MPI_Iallgather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, MPI_COMM_WORLD, &req);
	collective(&req, "an allgather");
}

struct verdict {
	int32_t failed;            /* to rank 0: this rank failed; from it: the first that did, or -1 */
	char msg[500];
};

/* Rank 0's side: every verdict, or the line naming the ranks that never sent theirs. */
static void collect_verdicts(struct verdict *all, int n)
{
	MPI_Request *req = malloc((size_t)n * sizeof(*req));
	char missing[300] = "", cause[560] = "";
	int nmiss = 0, first = -1;

	if (!req)
		fatal(true, "rank 0: out of host memory agreeing with the other ranks; the job is aborted");
	req[0] = MPI_REQUEST_NULL;
	for (int r = 1; r < n; r++)
		MPI_Irecv(&all[r], (int)sizeof(*all), MPI_BYTE, r, TAG_VERDICT, MPI_COMM_WORLD, &req[r]);
	if (wait_until(req, n, clock_now_s() + deadline_s)) {
		free(req);
		return;
	}
	for (int r = 1; r < n; r++) {
		int done = 0;
		size_t len = strlen(missing);

		MPI_Test(&req[r], &done, MPI_STATUS_IGNORE);
		if (done) {
			if (all[r].failed && first < 0)
				first = r;
			continue;
		}
		if (nmiss++ < 8 && len < sizeof(missing) - 16)
			snprintf(missing + len, sizeof(missing) - len, "%s%d", len ? ", " : "", r);
	}
	if (first < 0 && all[0].failed)
		first = 0;
	if (first >= 0) {
		all[first].msg[sizeof(all[0].msg) - 1] = 0;
		snprintf(cause, sizeof(cause), " (first failure: rank %d: %s)", first, all[first].msg);
	}
	fatal(true, "rank%s %s%s did not answer within %g s (hung, or dead without the launcher noticing); the job "
	      "is aborted%s", nmiss > 1 ? "s" : "", missing, nmiss > 8 ? ", ..." : "", deadline_s, cause);
}

int world_agree(bool failed, struct err *e)
{
	int n = world_size(), me = world_rank();
	struct verdict mine = { failed, "" }, answer = { -1, "" };

	if (failed)
		snprintf(mine.msg, sizeof(mine.msg), "%.499s", e->msg);
	if (me == 0) {
		struct verdict *all = calloc((size_t)n, sizeof(*all));
		MPI_Request *req = malloc((size_t)n * sizeof(*req));

		if (!all || !req)
			fatal(true, "rank 0: out of host memory agreeing with the other ranks; the job is aborted");
		all[0] = mine;
		collect_verdicts(all, n);
		for (int r = 0; r < n && answer.failed < 0; r++)
			if (all[r].failed) {
				answer.failed = r;
				memcpy(answer.msg, all[r].msg, sizeof(answer.msg));
				answer.msg[sizeof(answer.msg) - 1] = 0;
			}
		req[0] = MPI_REQUEST_NULL;
		for (int r = 1; r < n; r++)
			MPI_Isend(&answer, (int)sizeof(answer), MPI_BYTE, r, TAG_ANSWER, MPI_COMM_WORLD, &req[r]);
		if (!wait_until(req, n, clock_now_s() + deadline_s))
			fatal(true, "rank 0: the other ranks did not take the verdict within %g s; the job is aborted",
			      deadline_s);
		free(all);
		free(req);
	} else {
		MPI_Request req[2];

		MPI_Isend(&mine, (int)sizeof(mine), MPI_BYTE, 0, TAG_VERDICT, MPI_COMM_WORLD, &req[0]);
		MPI_Irecv(&answer, (int)sizeof(answer), MPI_BYTE, 0, TAG_ANSWER, MPI_COMM_WORLD, &req[1]);
		/* rank 0 may arrive up to a deadline late and then wait one for the others */
		if (!wait_until(req, 2, clock_now_s() + 2 * deadline_s + GRACE_S))
			fatal(me == 1, "rank 0 did not answer within %g s (hung, or dead without the launcher noticing); "
			      "the job is aborted", 2 * deadline_s + GRACE_S);
		answer.msg[sizeof(answer.msg) - 1] = 0;
	}
	if (answer.failed < 0)
		return 0;
	err_set(e, ERR_RUNTIME, "rank %d: %s", (int)answer.failed, answer.msg);
	return -1;
}

void world_abort_others(void)
{
	static int32_t token = 1;
	int n = world_size(), me = world_rank();

	if (aborted_others)
		return;
	aborted_others = true;
	if (!abort_req && !(abort_req = calloc((size_t)n, sizeof(*abort_req))))
		return;
	for (int r = 0; r < n; r++) {
		abort_req[r] = MPI_REQUEST_NULL;
		if (r != me)
			MPI_Isend(&token, 1, MPI_INT32_T, r, TAG_ABORT, MPI_COMM_WORLD, &abort_req[r]);
	}
}

bool world_abort_seen(void)
{
	int flag = 0;

	MPI_Iprobe(MPI_ANY_SOURCE, TAG_ABORT, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
	return flag != 0;
}

int world_slots(int n)
{
	world_release_slots();
	if (!(slots = malloc((size_t)(n ? n : 1) * sizeof(*slots))))
		return -1;
	nslots = n;
	for (int k = 0; k < n; k++)
		slots[k] = MPI_REQUEST_NULL;
	return 0;
}

void world_isend(int k, const void *buf, size_t n, int dst, int tag)
{
	MPI_Isend(buf, (int)n, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &slots[k]);
}

void world_irecv(int k, void *buf, size_t n, int src, int tag)
{
	MPI_Irecv(buf, (int)n, MPI_BYTE, src, tag, MPI_COMM_WORLD, &slots[k]);
}

bool world_done(int k)
{
	int flag = 1;

	if (slots[k] != MPI_REQUEST_NULL)
		MPI_Test(&slots[k], &flag, MPI_STATUS_IGNORE);
	return flag != 0;
}

void world_release_slots(void)
{
	int n = world_size();

	/* a pending header: cancelled, and waited for (within the deadline), so that nothing
	 * lands in a buffer the caller frees next (a small send completes; a receive is
	 * cancelled or completes); one that still hangs is left to MPI */
	for (int k = 0; k < nslots; k++)
		if (slots[k] != MPI_REQUEST_NULL) {
			MPI_Cancel(&slots[k]);
			if (!wait_until(&slots[k], 1, clock_now_s() + deadline_s))
				MPI_Request_free(&slots[k]);
		}
	free(slots);
	slots = NULL;
	nslots = 0;
	/* abort messages: the ones sent are done with, the ones received are drained */
	for (int r = 0; abort_req && r < n; r++)
		if (abort_req[r] != MPI_REQUEST_NULL)
			MPI_Request_free(&abort_req[r]);
	free(abort_req);
	abort_req = NULL;
	aborted_others = false;
	for (;;) {
		int flag = 0, token;
		MPI_Status st;

		MPI_Iprobe(MPI_ANY_SOURCE, TAG_ABORT, MPI_COMM_WORLD, &flag, &st);
		if (!flag)
			break;
		MPI_Recv(&token, 1, MPI_INT32_T, st.MPI_SOURCE, TAG_ABORT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
}

void world_gatherv(const double *mine, int n, double *all, const int *counts)
{
	int size = world_size();
	int *displs = calloc((size_t)size, sizeof(int));
	MPI_Request req;

	if (!displs)
		fatal(true, "rank %d: out of host memory gathering the measured times; the job is aborted", world_rank());
	for (int r = 1; r < size && counts; r++)
		displs[r] = displs[r - 1] + counts[r - 1];
	MPI_Igatherv(mine, n, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req);
	collective(&req, "gathering the measured times");
	free(displs);
}

void world_reduce_max(double *buf, int n)
{
	MPI_Request req;

	if (world_rank() == 0)
		MPI_Ireduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD, &req);
	else
		MPI_Ireduce(buf, NULL, n, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD, &req);
	collective(&req, "gathering the transfer times");
}
