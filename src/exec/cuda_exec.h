/*
 * cuda_exec — the executor's CUDA/NCCL backend (built only when configure finds CUDA,
 * NCCL and cuBLAS): one thread per plan device in one process, device d on GPU d (or on
 * GPU d mod the GPUs there are, with share_gpus), running the device's protocol program
 * (protocol.h) with its layers' kernels from the architecture (works; else fitted proxy
 * GEMMs of the stage's activation shape) and NCCL point-to-point
 * transfers of the activations' real sizes (device copies between devices on one GPU),
 * whose heads carry tagged, checksummed bytes (payload.h) that the receiver checks.
 * Or, as one MPI rank per device, this process runs only its own device; every call is
 * then collective: all ranks make it, and all get the same result.
 */
#ifndef OCTO_EXEC_CUDA_EXEC_H
#define OCTO_EXEC_CUDA_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "cost.h"
#include "err.h"
#include "exec/protocol.h"
#include "plan.h"
#include "timeline.h"

struct cuda_exec_opts {
	double timeout_s;      /* the longest any wait may take */
	double gemm_tflops;    /* throughput the proxy GEMMs are sized for; 0: sized first for
	                        * the cluster's peak x GEMM efficiency, then timed on the GPU
	                        * and fitted to the op's predicted time */
	bool share_gpus;       /* more devices than GPUs: several devices per GPU (they run at
	                        * once, so the times test the protocol, not the prediction) */
	int kill_device;       /* fault injection: this device fails ... (-1: none) */
	int kill_after_ops;    /* ... after enqueueing this many ops */
	int misroute_xfer;     /* fault injection: this transfer carries another microbatch's
	                        * data (-1: none) */
	int corrupt_xfer;      /* fault injection: a byte of this transfer's head flips (-1: none) */
	const struct work *works; /* one per model layer: each op runs its layers' kernels from the
	                        * architecture (kplan.h), measured as they are, never fitted;
	                        * NULL: fitted proxies */
	struct cost_opts kernel_opts; /* those kernels' sequence, micro-batch and TP degree */
	int rank;              /* >= 0: this process is MPI rank `rank` and runs that device
	                        * alone (one rank per device; needs a build with MPI) */
};

void cuda_exec_opts_default(struct cuda_exec_opts *o);

struct cuda_exec;

/* Opens the GPUs for plan p and program x (both must outlive the handle): streams,
 * buffers, communicators, one warm-up of every GEMM and link. Fails with "no GPU: why"
 * when there is none, and with ERR_RUNTIME naming the device on any CUDA/NCCL error.
 * On success *out is cuda_exec_close()d by the caller. */
int cuda_exec_open(struct cuda_exec **out, const struct plan *p, const struct exec_program *x,
                   const struct cuda_exec_opts *o, struct err *e);
/* As MPI rank, when this rank cannot even open (its plan did not load, say): meets the
 * others' first agreement inside cuda_exec_open, so that every rank stops with e (which
 * gets the first failing rank's message). Returns -1. */
int cuda_exec_fail_ranks(struct err *e);
/* One iteration; fills the measured timeline (source "cuda"). After a failure (every
 * GPU's work aborted, the first failure in e) the handle only accepts close. */
int cuda_exec_run(struct cuda_exec *c, struct timeline *measured, struct err *e);
/* Distinct GPUs in use, and the index of the one device d runs on (on its node). */
int cuda_exec_gpus(const struct cuda_exec *c);
int cuda_exec_gpu_of(const struct cuda_exec *c, int d);
/* The name of device d's GPU, and its NVML utilization (0..1) and used memory now;
 * false when NVML is not available ("N/A"). */
const char *cuda_exec_gpu_name(const struct cuda_exec *c, int d);
bool cuda_exec_util(struct cuda_exec *c, int d, double *util, uint64_t *mem_used);
void cuda_exec_close(struct cuda_exec *c);

#endif
