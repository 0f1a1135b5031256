/*
 * world — the MPI services of the executor's ranks (built only --with-mpi, into the
 * programs that run as ranks; the engine library stays MPI-free): collectives to share
 * NCCL ids and agree on failures, an abort message any rank can raise and every rank
 * polls, small tagged point-to-point headers for transfers between ranks that share a
 * GPU, and the gathers that bring a measured timeline to rank 0.
 *
 * Nothing here blocks without a deadline (world_set_deadline): every collective is the
 * non-blocking form polled against it, and world_agree() is point-to-point through rank
 * 0, so that a rank that hangs or dies without its launcher noticing is named. When the
 * deadline passes, the job ends: the report hook (world_on_fatal) gets one line — from
 * rank 0, or from rank 1 when rank 0 is the silent one — and MPI_Abort stops every rank.
 *
 * Every call is made by one thread per rank (MPI_THREAD_SINGLE is enough).
 */
#ifndef OCTO_EXEC_WORLD_H
#define OCTO_EXEC_WORLD_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/* This rank, the number of ranks, and this rank's index among the ranks of its node. */
int world_rank(void);
int world_size(void);
int world_local_rank(void);

/* The longest any collective may wait (seconds; default 60), and who reports the line
 * that ends the job when it passes (called once, on the rank that reports). */
void world_set_deadline(double seconds);
void world_on_fatal(void (*report)(const char *line));

void world_barrier(void);
/* Rank 0's n bytes at buf to every rank. */
void world_bcast(void *buf, size_t n);
/* Every rank's n bytes of mine, in rank order, into all (size x n bytes) on every rank. */
void world_allgather(const void *mine, void *all, size_t n);
/* Every rank says whether it failed (with e); returns 0 when none did, else -1 with e set
 * on every rank to the first failure, prefixed by its rank. */
int world_agree(bool failed, struct err *e);
/* Tells every other rank to stop (once), and whether another rank told this one. */
void world_abort_others(void);
bool world_abort_seen(void);

/* Point-to-point headers, one request slot per transfer k (world_slots(n) first). */
int world_slots(int n);
void world_isend(int k, const void *buf, size_t n, int dst, int tag);
void world_irecv(int k, void *buf, size_t n, int src, int tag);
/* True once slot k's request completed (or when it has none). */
bool world_done(int k);
/* Cancels and frees what is still pending (after a failure), and the slots. */
void world_release_slots(void);

/* Rank 0 gets every rank's n doubles (counts[r] from rank r) in rank order. */
void world_gatherv(const double *mine, int n, double *all, const int *counts);
/* Element-wise maximum of every rank's n doubles, at rank 0. */
void world_reduce_max(double *buf, int n);

#endif
