/*
 * emu_mpi — the emulated backend as MPI ranks: one process per device (rank = device)
 * runs that device's protocol program, so the multi-process path of the executor is
 * exercised on machines without GPUs (`mpirun -np 4 octopipe run --backend emu PLAN`).
 *
 * Built only with --with-mpi. Transfers are MPI point-to-point messages that carry the
 * sender's virtual clock instead of the activation; every rank must call these functions
 * with the same plan and program.
 */
#ifndef OCTO_EXEC_EMU_MPI_H
#define OCTO_EXEC_EMU_MPI_H

#include "err.h"
#include "exec/emu.h"
#include "exec/protocol.h"
#include "plan.h"
#include "timeline.h"

/* MPI_Init (once per process); *rank and *size of MPI_COMM_WORLD. */
int emu_mpi_init(int *rank, int *size, struct err *e);
/* MPI_Finalize, when emu_mpi_init() initialised MPI. */
void emu_mpi_finalize(void);

/* Runs one iteration with this rank as device `rank` (o->on_op is not called). Rank 0
 * receives the whole measured timeline (source "emu"); other ranks get an empty one.
 * When any rank fails, every rank returns -1 with the same one-line error in e, naming
 * the rank that failed first, after all of them stopped. */
int emu_mpi_run(const struct plan *p, const struct exec_program *x, const struct emu_opts *o,
                struct timeline *measured, struct err *e);

#endif
