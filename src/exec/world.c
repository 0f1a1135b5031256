/*
 * world — MPI services for the cuda backend's ranks (see world.h). MPI is initialised by
 * octopipe run (emu_mpi_init) before any of these is called.
 */
#include "config.h"
#include "exec/world.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_ABORT = 0 };

static MPI_Request *slots;
static int nslots;
static MPI_Request *abort_req;
static bool aborted_others;

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

int world_local_rank(void)
{
	MPI_Comm node;
	int r = 0;

	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
		return world_rank();
	MPI_Comm_rank(node, &r);
	MPI_Comm_free(&node);
	return r;
}

void world_barrier(void)
{
	MPI_Barrier(MPI_COMM_WORLD);
}

void world_bcast(void *buf, size_t n)
{
	MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
}

void world_allgather(const void *mine, void *all, size_t n)
{
	MPI_Allgather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, MPI_COMM_WORLD);
}

struct verdict {
	int32_t failed;
	char msg[500];
};

int world_agree(bool failed, struct err *e)
{
	int n = world_size();
	struct verdict mine = { failed, "" }, *all = calloc((size_t)n, sizeof(*all));
	int first = -1;

	if (failed)
		snprintf(mine.msg, sizeof(mine.msg), "%.499s", e->msg);
	if (!all) {   /* cannot tell the others: at least this rank's own verdict stands */
		MPI_Abort(MPI_COMM_WORLD, 1);
		return -1;
	}
	MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, MPI_COMM_WORLD);
	for (int r = 0; r < n && first < 0; r++)
		if (all[r].failed)
			first = r;
	if (first >= 0)
		err_set(e, ERR_RUNTIME, "rank %d: %s", first, all[first].msg);
	free(all);
	return first >= 0 ? -1 : 0;
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

	/* a pending header: cancelled, and waited for, so that nothing lands in a buffer the
	 * caller frees next (a small send completes; a receive is cancelled or completes) */
	for (int k = 0; k < nslots; k++)
		if (slots[k] != MPI_REQUEST_NULL) {
			MPI_Cancel(&slots[k]);
			MPI_Wait(&slots[k], MPI_STATUS_IGNORE);
		}
	free(slots);
	slots = NULL;
	nslots = 0;
	/* abort messages: the ones sent are done with, the ones received are drained */
	for (int r = 0; abort_req && r < n; r++)
		if (abort_req[r] != MPI_REQUEST_NULL) {
			MPI_Cancel(&abort_req[r]);
			MPI_Request_free(&abort_req[r]);
		}
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

	if (!displs) {
		MPI_Abort(MPI_COMM_WORLD, 1);
		return;
	}
	for (int r = 1; r < size; r++)
		displs[r] = displs[r - 1] + counts[r - 1];
	MPI_Gatherv(mine, n, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	free(displs);
}

void world_reduce_max(double *buf, int n)
{
	if (world_rank() == 0)
		MPI_Reduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	else
		MPI_Reduce(buf, NULL, n, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
}
