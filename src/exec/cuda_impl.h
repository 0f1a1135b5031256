/*
 * cuda_impl — the cuda backend's insides, shared by its files (nothing outside
 * src/exec/cuda_*.c includes this): the state of a run (struct cuda_exec), of each device
 * (struct gpu) and of each directed channel between two devices (struct chan), the
 * CUDACHECK / BLASCHECK / NCCLCHECK macros, and what each file offers the others:
 *
 *   cuda_exec.c    open, iterate, read the times, close; the threads and the waits
 *   cuda_kernels.c the kernels an op launches: its layers' kernel list (GEMMs, attention
 *                  cores, the rest by FLOPs and bytes), or its proxy's bf16 GEMMs
 *   cuda_proxy.c   the kernel lists' operands, or the proxy of each (stage, op kind):
 *                  its GEMM's shape, fitted or not
 *   cuda_chan.c    channels: communicators, buffers, sends, receives, the data checks
 *   cuda_world.c   as one MPI rank per device: who runs where, and the gathers to rank 0
 *   cuda_bench.c   octopipe calibrate --gpu: each kernel of a list alone, timed
 */
#ifndef OCTO_EXEC_CUDA_IMPL_H
#define OCTO_EXEC_CUDA_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "exec/cuda_exec.h"
#include "exec/gpu_probe.h"
#include "exec/kplan.h"
#include "exec/nvml.h"
#include "exec/payload.h"
#include "clock.h"

/* Per transfer, in pinned host memory (cuda_exec.check): the header sent (PAYLOAD_MIN
 * bytes, payload.h), the header that arrived, and the checksum the receiver's GPU
 * computed over all that arrived (the bytes the host reads back after the receive). */
#define SLOT_SENT 0
#define SLOT_HEAD PAYLOAD_MIN
#define SLOT_SUM (2 * PAYLOAD_MIN)
#define SLOT_BYTES (2 * PAYLOAD_MIN + 16)
#define QUEUE_MAX 512      /* launches a device may have queued ahead of its GPU: below the
                            * driver's queue, so that the host never blocks inside a launch,
                            * where it could not see an abort */

struct gpu {
	struct cuda_exec *c;
	int dev;                   /* the plan's device */
	int gpu;                   /* the CUDA device it runs on */
	cudaStream_t compute;
	cublasHandle_t blas;
	void *x, *w, *y;           /* proxy GEMM operands, bf16 */
	size_t recvsz;             /* the largest transfer it receives */
	uint64_t *stash;           /* per (stage, microbatch) x 2: what its ops keep (payload_stash) */
	struct kplan_gemm *shape;  /* per stage x 3 kinds (F, I or B, W): its proxy */
	struct kernel *ks;         /* with the architecture: every kernel of its stages, per stage
	                            * and pass (F, I, W) from k_first[s * 3 + pass] up to the next */
	int *k_first;
	void *work;                /* the non-GEMM kernels' buffer (cuda_work.h) */
	size_t worksz;
	void *core[5];             /* attention cores' operands, bf16: Q, K, V, O (whole
	                            * sequences, per head and sequence) and one block's scores */
	int nops;
	cudaEvent_t *op_start, *op_end;
	long *launch_end;          /* per op: launches enqueued up to its end (this iteration) */
	long launched, finished;   /* launches enqueued, and known finished, this iteration */
	int finished_ops;          /* ops known finished this iteration */
	struct err err;
	int failed;
};

enum chan_kind {
	CH_NCCL,                   /* NCCL send/recv between two GPUs */
	CH_LOCAL,                  /* two devices of this process on one GPU: a device copy */
	CH_STAGED,                 /* two ranks on one GPU: an MPI header, then a device copy */
};

enum { TAG_DATA = 1, TAG_SPAN = 30000 };

/* What a rank tells the others about its GPU. */
struct rank_ident {
	char host[64];
	char bus[32];
	char name[64];
	int32_t gpu;
};

struct header {
	int32_t xfer;
	int32_t pad;
	unsigned char payload[PAYLOAD_MIN];   /* the transfer's header (payload.h) */
};

struct chan {
	int a, b;                  /* a sends, b receives */
	enum chan_kind kind;
	ncclUniqueId id;
	ncclComm_t comm[2];        /* a's and b's */
	cudaStream_t stream[2];
	void *buf[2];              /* a's send buffer, b's receive buffer: the largest transfer */
	size_t bufsz;
	void *sum;                 /* on b's GPU: the checksum of the last arrival */
};

struct cuda_exec {
	const struct plan *p;
	const struct exec_program *x;
	struct cuda_exec_opts o;
	int ndev;
	int ngpu;                  /* CUDA devices used: ndev, or fewer when shared */
	struct gpu *g;
	cudaStream_t *ref_stream;  /* per GPU: the reference event of an iteration */
	cudaEvent_t *ref;
	atomic_int *posted;        /* per transfer: the generation its send was enqueued in */
	int generation;
	int me;                    /* as an MPI rank: the one device this process runs; else -1 */
	int32_t *slot;             /* staged: per transfer, its index among its pair's (the tag) */
	struct header *hdr;        /* staged: per transfer, the header sent or received */
	int *pending;              /* staged: sends whose producer has not finished yet */
	int npending;
	void *stagebuf;            /* staged: what the receiving copy reads */
	int *gpu_index;            /* per device: its GPU (gathered from the ranks) */
	char (*gpu_name)[64];      /* per device: its GPU's name */
	double *util, *mem;        /* per device: the last NVML sample (ranks), util < 0: none */
	int gpus_used;             /* distinct GPUs the devices run on */
	int fit_turn;              /* ranks sharing GPUs fit their proxies in turn: whose; or -1 */
	bool warming;              /* the warm-up iterations of open (no fault injection) */
	/* as ranks, allocated up front (a collective cannot be left half way for want of
	 * memory): the identities of the ranks, transfers per pair, and the gathers' buffers */
	struct rank_ident *idents;
	int32_t *nto;
	int *counts;               /* per device: 5 x its ops */
	double *mine, *all;        /* this rank's ops; rank 0: everyone's */
	double *samples;           /* per device: NVML utilization and memory */
	pthread_mutex_t fit_lock;  /* threads sharing GPUs fit their proxies one at a time */
	int nchan;
	struct chan *ch;
	int nccl_ctas;             /* CTAs per communicator (kplan_nccl_ctas) */
	int *chan_of;              /* ndev x ndev: channel of a -> b, or -1 */
	cudaEvent_t *xf_send, *xf_begin, *xf_end; /* per transfer (on the sender / receiver) */
	cudaEvent_t *xf_read;      /* per transfer, local channels: recorded on the sender's stream
	                            * once the arrival's header and checksum are read back */
	unsigned char *check;      /* pinned, per transfer SLOT_BYTES: the header sent, and the
	                            * header and checksum of what arrived (read back after the
	                            * receive) */
	double *xf_send_ms, *xf_begin_ms, *xf_end_ms;
	atomic_int abort;
	int broken;
	struct nvml *nvml;
	struct gpu_info info;
	int (*phase)(struct gpu *g);
};

/* The side (0 sender, 1 receiver) device d takes in channel ch, or -1. */
static inline int cuda_side(const struct chan *ch, int d)
{
	return ch->a == d ? 0 : ch->b == d ? 1 : -1;
}

/* ---- cuda_exec.c ---- */
/* A pause in a wait loop; as an MPI rank it also notices another rank's abort. */
void cuda_nap(struct cuda_exec *c);
/* Records GPU g's failure and tells every other thread (rank) to abort; returns -1. */
int cuda_fail(struct gpu *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Waits until a non-blocking NCCL call is no longer in progress, with the deadline. */
int cuda_nccl_settle(struct gpu *g, ncclComm_t *comm, ncclResult_t r, const char *what, const char *file, int line);
/* Polls until every stream of g is idle: events, async NCCL errors, abort, deadline. */
int cuda_wait_idle(struct gpu *g, const char *what);

#define CUDACHECK(g, call) do { \
	cudaError_t r_ = (call); \
	if (r_ != cudaSuccess) \
		return cuda_fail((g), "%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(r_)); \
} while (0)

#define BLASCHECK(g, call) do { \
	cublasStatus_t r_ = (call); \
	if (r_ != CUBLAS_STATUS_SUCCESS) \
		return cuda_fail((g), "%s:%d: %s: cublas status %d", __FILE__, __LINE__, #call, (int)r_); \
} while (0)

#define NCCLCHECK(g, commp, call) do { \
	if (cuda_nccl_settle((g), (commp), (call), #call, __FILE__, __LINE__) < 0) \
		return -1; \
} while (0)

/* ---- cuda_kernels.c ---- */
/* Enqueues op kind `kind` of shape s on g's compute stream: F = X·W, I (or B) = dY·Wᵀ,
 * W = Xᵀ·dY, as s->reps bf16 cuBLAS GEMMs. */
int cuda_gemm(struct gpu *g, const struct kplan_gemm *s, int kind);
/* Enqueues one kernel of a layer's list in pass p: a GEMM as a strided-batched cuBLAS call
 * on g->x, g->w, g->y (large enough for it), any other as its FLOPs and bytes on g->work. */
int cuda_kernel(struct gpu *g, const struct kernel *x, enum kernel_pass p);
/* What the kernels of a list need: GEMM operands x, w, y (bf16 elements), the other
 * kernels' buffer (bytes) and the attention cores' operands (elements, cuda_core_need). */
struct cuda_need {
	double x, w, y, work, core[5];
};
/* Maxes into n what kernel x needs (its padded GEMM operands, its core's, its bytes). */
void cuda_kernel_need(const struct kernel *x, struct cuda_need *n);
/* Allocates g's operands for n (work capped at work_max bytes; no work when n->work is 0)
 * and fills them with random bf16 values (opfill.h). */
int cuda_operands_alloc(struct gpu *g, const struct cuda_need *n, size_t work_max);
/* The elements of the attention-core operands (g->core) kernel x needs, maxed into need. */
void cuda_core_need(const struct kernel *x, double need[5]);
/* Allocates g->core for need (random values); cuda_core_free releases it. */
int cuda_core_alloc(struct gpu *g, const double need[5]);
void cuda_core_free(struct gpu *g);
/* Fills bytes at p (device) with the bf16 stream of seed (opfill.h), on g's compute stream. */
int cuda_fill(struct gpu *g, void *p, size_t bytes, uint64_t seed);
/* Enqueues op a: its proxy, or its layers' kernels (g->ks). */
int cuda_op(struct gpu *g, const struct action *a);
/* About how many launches op a makes (for the queue's bound). */
long cuda_op_launches(const struct gpu *g, const struct action *a);

/* ---- cuda_proxy.c ---- */
/* g's proxies (one per stage it runs x op kind) and their operands on its GPU. */
int cuda_proxy_setup(struct gpu *g);
/* One repetition of each of g's proxies, and a wait for them. */
int cuda_proxy_warm_up(struct gpu *g);
/* Phases: fit each proxy to its predicted time on this GPU, and refit it after a warm-up
 * iteration (see cuda_proxy.c). */
int cuda_proxy_fit(struct gpu *g);
int cuda_proxy_refit(struct gpu *g);

/* ---- cuda_chan.c ---- */
/* The channels of the run: every directed pair of devices with a transfer (c->ch, chan_of). */
void cuda_chan_plan(struct cuda_exec *c);
/* The CTAs of every communicator (once the channels' kinds are known). */
void cuda_chan_ctas(struct cuda_exec *c);
/* Device g's buffers for its sides of the channels. */
int cuda_chan_alloc(struct gpu *g);
/* Phase: g's communicators and a one-byte exchange on each. */
int cuda_chan_connect(struct gpu *g);
/* Enqueues item it (a send after `last`, the producer's end event; or a receive). */
int cuda_chan_send(struct gpu *g, const struct exec_item *it, cudaEvent_t last);
int cuda_chan_recv(struct gpu *g, const struct exec_item *it);
/* What an op waits for before it starts: the data of transfer k (-1: none). */
int cuda_chan_consume(struct gpu *g, int k);
/* The end of g's iteration: staged sends out, then the data of every arrival checked. */
int cuda_chan_finish(struct gpu *g);
int cuda_chan_check_arrivals(struct gpu *g);
/* As ranks, between items: posts the staged sends whose producers finished. */
void cuda_chan_progress(struct cuda_exec *c);
/* After a failure: every communicator aborted (its kernels stopped). */
void cuda_chan_abort(struct cuda_exec *c);
void cuda_chan_close(struct cuda_exec *c);

#ifdef HAVE_MPI
/* ---- cuda_world.c ---- */
/* The buffers of the collectives below, allocated up front. */
bool cuda_world_alloc(struct cuda_exec *c);
/* Which GPU every device runs on, the channels' kinds, the staged transfers' tags. Collective. */
void cuda_world_identify(struct cuda_exec *c, int local_gpu);
/* Rank 0 gathers every device's ops, the transfer times and the NVML samples. Collective. */
int cuda_world_gather(struct cuda_exec *c, struct timeline *t, struct err *e);
#endif

#endif
