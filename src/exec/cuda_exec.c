/*
 * cuda_exec — one thread per GPU, each enqueueing its device's whole program at once and
 * letting the streams do the waiting (see cuda_exec.h).
 *
 * The one idea: NCCL matches a pair's point-to-point operations in issue order and a
 * stream runs them in order, so one communicator and one stream per directed pair of
 * devices gives exactly the channels of the protocol (and of the emulator) — the k-th
 * send from a to b meets the k-th receive, and pairs never block each other. A send
 * waits (cudaStreamWaitEvent) for the op that produced it, an op waits for the receives
 * it consumes; nothing else is ordered. Communicators are non-blocking and created, then
 * connected with a one-byte exchange, in one global order of the pairs, so setup cannot
 * deadlock either.
 *
 * Ops are proxies of the stage: a bf16 cuBLAS GEMM with the activation's shape (tokens x
 * hidden, hidden from out_bytes) and as many columns, repeated, as give the FLOPs the
 * op's predicted time represents at the assumed throughput: F = X·W, I = dY·Wᵀ,
 * W = Xᵀ·dY. Unless a throughput is given, each proxy is then timed on its GPU and its
 * columns refitted, so an op takes its predicted time and what a run measures beyond
 * that is the schedule's and the transfers' doing. Activations are real buffers of the transfer's size (one send and one
 * receive buffer per device: the proxy times the traffic, it does not keep the data).
 *
 * A plan may have more devices than the machine has GPUs (--share-gpus): device d then
 * runs on GPU d mod the GPUs there are, on its own streams. NCCL refuses two ranks of one
 * communicator on one GPU, so a channel between two devices on the same GPU is local: the
 * receiver's stream waits for the sender's "data ready" event and copies the buffer. A
 * host thread can only wait for an event once the other thread recorded it, so each such
 * transfer has a flag the sender raises after recording; a receiver waits for the flag
 * only while enqueueing, a subset of the waits the protocol already proved free of
 * cycles (the emulator's receives wait for the send itself). Devices sharing a GPU run
 * at once and slow each other: such runs test the protocol, not the prediction.
 *
 * As MPI ranks (built --with-mpi, launched by mpirun or srun): each rank runs one device
 * on its node-local GPU, in its main thread; rank 0 makes every channel's NCCL id and
 * broadcasts it, and every phase ends with all ranks agreeing on the first failure
 * (world.h), so all of them report the same error. A failing rank also sends an abort
 * message that the others' wait loops poll. Two ranks on one GPU cannot share an NCCL
 * communicator either: their channel is staged — the sender posts a small MPI header
 * once its producer finished (polled, never waited for), the receiver waits for it only
 * right before the consuming op and then copies the bytes on its GPU. Rank 0 gathers the
 * measured ops, transfer times and NVML samples.
 *
 * Times: before each iteration the main thread records one reference event per GPU, and
 * every time is measured from its GPU's reference, so the devices of one GPU share a clock
 * exactly and GPUs agree to within the host's few microseconds between the records.
 *
 * Every CUDA/NCCL call goes through CUDACHECK/NCCLCHECK, which turn a failure into one
 * line with file:line; the host then polls events, ncclCommGetAsyncError and the shared
 * abort flag against a deadline, and on any failure every thread aborts its
 * communicators, so a run ends with the first error and never hangs.
 */
#include "config.h"
#include "exec/cuda_exec.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "exec/gpu_probe.h"
#include "exec/nvml.h"
#include "exec/payload.h"
#ifdef HAVE_MPI
#include <unistd.h>

#include "exec/world.h"
#endif

#define CHECK_BYTES 256  /* the head of every transfer that carries its tagged payload */
#define NCOLS_MAX 8192     /* a longer proxy GEMM is repeated instead of widened */
#define QUEUE_MAX 512      /* launches a device may have queued ahead of its GPU: below the
                            * driver's queue, so that the host never blocks inside a launch,
                            * where it could not see an abort */

struct shape {
	int m, k, n, reps;
	double ms;                 /* the predicted time it stands for */
};

struct gpu {
	struct cuda_exec *c;
	int dev;                   /* the plan's device */
	int gpu;                   /* the CUDA device it runs on */
	cudaStream_t compute;
	cublasHandle_t blas;
	void *x, *w, *y;           /* proxy GEMM operands, bf16 */
	size_t recvsz;             /* the largest transfer it receives */
	uint64_t *stash;           /* per (stage, microbatch) x 2: what its ops keep (payload_stash) */
	struct shape *shape;       /* per stage x 3 kinds (F, I or B, W) */
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
	unsigned char payload[CHECK_BYTES];
};

struct chan {
	int a, b;                  /* a sends, b receives */
	enum chan_kind kind;
	ncclUniqueId id;
	ncclComm_t comm[2];        /* a's and b's */
	cudaStream_t stream[2];
	void *buf[2];              /* a's send buffer, b's receive buffer: the largest transfer */
	size_t bufsz;
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
	int *chan_of;              /* ndev x ndev: channel of a -> b, or -1 */
	cudaEvent_t *xf_send, *xf_begin, *xf_end; /* per transfer (on the sender / receiver) */
	unsigned char *check;      /* pinned, per transfer 2 x CHECK_BYTES: the payload sent, and
	                            * the head of what arrived (read back after the receive) */
	double *xf_send_ms, *xf_begin_ms, *xf_end_ms;
	atomic_int abort;
	int broken;
	struct nvml *nvml;
	struct gpu_info info;
	int (*phase)(struct gpu *g);
};

void cuda_exec_opts_default(struct cuda_exec_opts *o)
{
	o->timeout_s = 60;
	o->gemm_tflops = 0;
	o->share_gpus = false;
	o->kill_device = -1;
	o->kill_after_ops = 0;
	o->misroute_xfer = -1;
	o->corrupt_xfer = -1;
	o->rank = -1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A pause in a wait loop; as an MPI rank it also notices another rank's abort. */
static void nap(struct cuda_exec *c)
{
	struct timespec ts = { 0, 100000 };

	nanosleep(&ts, NULL);
#ifdef HAVE_MPI
	if (c->me >= 0 && world_abort_seen())
		atomic_store(&c->abort, 1);
#else
	(void)c;
#endif
}

static int gpu_fail(struct gpu *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records GPU g's failure and tells every other thread to abort; returns -1. */
static int gpu_fail(struct gpu *g, const char *fmt, ...)
{
	char msg[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!g->failed)
		err_set(&g->err, ERR_RUNTIME, "device %d: %s", g->dev, msg);
	g->failed = 1;
	atomic_store(&g->c->abort, 1);
#ifdef HAVE_MPI
	if (g->c->me >= 0)
		world_abort_others();
#endif
	return -1;
}

#define CUDACHECK(g, call) do { \
	cudaError_t r_ = (call); \
	if (r_ != cudaSuccess) \
		return gpu_fail((g), "%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(r_)); \
} while (0)

#define BLASCHECK(g, call) do { \
	cublasStatus_t r_ = (call); \
	if (r_ != CUBLAS_STATUS_SUCCESS) \
		return gpu_fail((g), "%s:%d: %s: cublas status %d", __FILE__, __LINE__, #call, (int)r_); \
} while (0)

/* Waits until a non-blocking NCCL call is no longer in progress, with the deadline. */
static int nccl_settle(struct gpu *g, ncclComm_t *comm, ncclResult_t r, const char *what, const char *file,
                       int line)
{
	double deadline = now_s() + g->c->o.timeout_s;

	while (r == ncclInProgress) {
		if (atomic_load(&g->c->abort) && !g->failed)
			return -1;
		if (now_s() > deadline)
			return gpu_fail(g, "%s:%d: %s: still in progress after %g s", file, line, what, g->c->o.timeout_s);
		nap(g->c);
		if (ncclCommGetAsyncError(*comm, &r) != ncclSuccess)
			break;
	}
	if (r != ncclSuccess)
		return gpu_fail(g, "%s:%d: %s: %s (%s)", file, line, what, ncclGetErrorString(r),
		                *comm ? ncclGetLastError(*comm) : "");
	return 0;
}

#define NCCLCHECK(g, commp, call) do { \
	if (nccl_settle((g), (commp), (call), #call, __FILE__, __LINE__) < 0) \
		return -1; \
} while (0)

/* The side (0 sender, 1 receiver) device d takes in channel ch, or -1. */
static int side(const struct chan *ch, int d)
{
	return ch->a == d ? 0 : ch->b == d ? 1 : -1;
}

/* Polls until every stream of g is idle: events, async NCCL errors, abort, deadline. */
static int wait_idle(struct gpu *g, const char *what)
{
	struct cuda_exec *c = g->c;
	double deadline = now_s() + c->o.timeout_s;

	for (;;) {
		bool busy = false;
		cudaError_t r = cudaStreamQuery(g->compute);

		if (r != cudaSuccess && r != cudaErrorNotReady)
			CUDACHECK(g, r);
		busy = r == cudaErrorNotReady;
		for (int i = 0; i < c->nchan; i++) {
			int s = side(&c->ch[i], g->dev);
			ncclResult_t nr;

			if (s < 0 || !c->ch[i].stream[s])
				continue;
			r = cudaStreamQuery(c->ch[i].stream[s]);
			if (r != cudaSuccess && r != cudaErrorNotReady)
				CUDACHECK(g, r);
			busy = busy || r == cudaErrorNotReady;
			if (c->ch[i].kind == CH_NCCL && ncclCommGetAsyncError(c->ch[i].comm[s], &nr) == ncclSuccess && nr != ncclSuccess &&
			    nr != ncclInProgress)
				return gpu_fail(g, "%s: nccl error on the link %d -> %d: %s (%s)", what, c->ch[i].a, c->ch[i].b,
				                ncclGetErrorString(nr), ncclGetLastError(c->ch[i].comm[s]));
		}
		if (!busy)
			return 0;
		if (atomic_load(&c->abort))
			return -1;
		if (now_s() > deadline)
			return gpu_fail(g, "%s: no progress for %g s (a transfer that never matched, or a hung kernel)", what,
			                c->o.timeout_s);
		nap(c);
	}
}

/* Columns and repetitions of an m x k proxy so that it does `flops` of work. */
static void fit_columns(struct shape *s, double flops)
{
	double n = flops / (2.0 * s->m * s->k);

	s->reps = (int)ceil(n / NCOLS_MAX);
	if (s->reps < 1)
		s->reps = 1;
	s->n = (int)ceil(n / s->reps / 8) * 8;
	if (s->n < 8)
		s->n = 8;
}

/* The proxy GEMM of a (stage, kind) whose predicted time is ms at tflops. */
static struct shape shape_for(double ms, double tflops, long tokens, uint64_t out_bytes)
{
	double flops = ms * 1e-3 * tflops * 1e12;
	struct shape s = { 0, 0, 0, 0, ms };

	if (flops < 1)
		return s;
	s.m = (int)fmin(fmax((double)tokens, 64), 16384);
	s.k = out_bytes ? (int)fmin(fmax((double)out_bytes / 2 / (double)tokens, 64), 16384) : 0;
	if (!s.k)   /* no activation size: a square-ish GEMM */
		s.m = s.k = (int)fmin(fmax(cbrt(flops / 2), 64), 8192);
	fit_columns(&s, flops);
	return s;
}

static int run_gemm(struct gpu *g, const struct shape *s, int kind)
{
	const float one = 1, zero = 0;

	for (int r = 0; r < s->reps; r++) {
		if (kind == OP_F)          /* Y[m x n] = X[m x k] W[k x n] */
			BLASCHECK(g, cublasGemmEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, s->m, s->n, s->k, &one, g->x, CUDA_R_16BF,
			                          s->m, g->w, CUDA_R_16BF, s->k, &zero, g->y, CUDA_R_16BF, s->m,
			                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		else if (kind == OP_W)     /* dW[k x n] = X^T dY */
			BLASCHECK(g, cublasGemmEx(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, s->k, s->n, s->m, &one, g->x, CUDA_R_16BF,
			                          s->m, g->y, CUDA_R_16BF, s->m, &zero, g->w, CUDA_R_16BF, s->k,
			                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		else                       /* dX[m x k] = dY W^T (I, or the full B) */
			BLASCHECK(g, cublasGemmEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, s->m, s->k, s->n, &one, g->y, CUDA_R_16BF,
			                          s->m, g->w, CUDA_R_16BF, s->k, &zero, g->x, CUDA_R_16BF, s->m,
			                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	}
	return 0;
}

static int kind_slot(int kind)
{
	return kind == OP_F ? 0 : kind == OP_W ? 2 : 1;
}

/* One repetition of each of g's proxies. */
static int warm_up(struct gpu *g)
{
	const struct plan *p = g->c->p;

	for (int s = 0; s < p->nstages; s++)
		for (int k = 0; k < 3; k++)
			if (p->stages[s].device == g->dev && g->shape[s * 3 + k].reps) {
				struct shape one = g->shape[s * 3 + k];

				one.reps = 1;
				if (run_gemm(g, &one, k == 0 ? OP_F : k == 2 ? OP_W : OP_I) < 0)
					return -1;
			}
	return wait_idle(g, "warm-up");
}

/* Times one repetition of each proxy and refits its columns to the throughput reached. */
static int fit_proxies(struct gpu *g)
{
	const struct plan *p = g->c->p;
	cudaEvent_t a = NULL, b = NULL;
	int rc = 0;

	CUDACHECK(g, cudaEventCreate(&a));
	if (cudaEventCreate(&b) != cudaSuccess) {
		cudaEventDestroy(a);
		return gpu_fail(g, "cannot create an event to time the proxies");
	}
	for (int s = 0; s < p->nstages && rc == 0; s++)
		for (int k = 0; k < 3 && rc == 0; k++) {
			struct shape *sh = &g->shape[s * 3 + k], one;
			float ms = 0;

			if (p->stages[s].device != g->dev || !sh->reps)
				continue;
			one = *sh;
			one.reps = 1;
			if (cudaEventRecord(a, g->compute) != cudaSuccess ||
			    run_gemm(g, &one, k == 0 ? OP_F : k == 2 ? OP_W : OP_I) < 0 ||
			    cudaEventRecord(b, g->compute) != cudaSuccess || wait_idle(g, "timing the proxies") < 0 ||
			    cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
				/* an abort elsewhere is not this device's failure */
				rc = g->failed || atomic_load(&g->c->abort) ? -1 : gpu_fail(g, "cannot time the proxy of stage %d", s);
				break;
			}
			if (ms > 0)
				fit_columns(sh, sh->ms * (2.0 * one.m * one.k * one.n / ms));
		}
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	return rc;
}

/* Phase 1, per GPU: streams, cuBLAS, buffers, events, shapes. Touches no other GPU. */
static int gpu_setup(struct gpu *g)
{
	struct cuda_exec *c = g->c;
	const struct plan *p = c->p;
	const struct exec_program *x = c->x;
	const struct hardware *hw = &p->cluster.hw;
	size_t xs = 0, ws = 0, ys = 0;
	long tokens = p->model.seq_len * (p->model.micro_batch_size > 0 ? p->model.micro_batch_size : 1);

	CUDACHECK(g, cudaSetDevice(g->gpu));
	CUDACHECK(g, cudaStreamCreateWithFlags(&g->compute, cudaStreamNonBlocking));
	BLASCHECK(g, cublasCreate(&g->blas));
	BLASCHECK(g, cublasSetStream(g->blas, g->compute));
	if (!(g->shape = calloc((size_t)p->nstages * 3, sizeof(*g->shape))))
		return gpu_fail(g, "out of host memory");
	for (int s = 0; s < p->nstages; s++) {
		double ms[3];
		uint64_t out = p->model.layers[p->stages[s].last].out_bytes;

		if (p->stages[s].device != g->dev)
			continue;
		plan_stage_ms(p, s, ms);
		for (int k = 0; k < 3; k++) {
			double tf = c->o.gemm_tflops > 0 ? c->o.gemm_tflops :
			            hw->peak_tflops * (k ? hw->eff_b[EFF_GEMM] : hw->eff_f[EFF_GEMM]);
			struct shape *sh = &g->shape[s * 3 + k];

			*sh = shape_for(ms[k] / p->cluster.device_speed[g->dev], tf, tokens ? tokens : 4096, out);
			if (!sh->reps)
				continue;
			/* columns may grow to NCOLS_MAX when the proxies are fitted to this GPU */
			xs = xs > (size_t)sh->m * sh->k ? xs : (size_t)sh->m * sh->k;
			ws = ws > (size_t)sh->k * NCOLS_MAX ? ws : (size_t)sh->k * NCOLS_MAX;
			ys = ys > (size_t)sh->m * NCOLS_MAX ? ys : (size_t)sh->m * NCOLS_MAX;
		}
	}
	for (int k = 0; k < x->nxfers; k++) {
		size_t b = x->xfers[k].bytes > CHECK_BYTES ? x->xfers[k].bytes : CHECK_BYTES;

		if (x->xfers[k].dst == g->dev && b > g->recvsz)
			g->recvsz = b;
	}
	if (!(g->stash = calloc((size_t)p->nstages * p->microbatches * 2 + 1, sizeof(*g->stash))))
		return gpu_fail(g, "out of host memory");
	CUDACHECK(g, cudaMalloc(&g->x, 2 * (xs ? xs : 1)));
	CUDACHECK(g, cudaMalloc(&g->w, 2 * (ws ? ws : 1)));
	CUDACHECK(g, cudaMalloc(&g->y, 2 * (ys ? ys : 1)));
	CUDACHECK(g, cudaMemsetAsync(g->x, 0, 2 * (xs ? xs : 1), g->compute));
	CUDACHECK(g, cudaMemsetAsync(g->w, 0, 2 * (ws ? ws : 1), g->compute));
	CUDACHECK(g, cudaMemsetAsync(g->y, 0, 2 * (ys ? ys : 1), g->compute));
	/* one buffer per channel side: transfers of different channels run at once, and each
	 * must arrive intact (its head is checked) */
	for (int i = 0; i < c->nchan; i++) {
		struct chan *ch = &c->ch[i];
		int sd = side(ch, g->dev);

		if (sd < 0)
			continue;
		CUDACHECK(g, cudaMalloc(&ch->buf[sd], ch->bufsz));
		CUDACHECK(g, cudaMemsetAsync(ch->buf[sd], 0, ch->bufsz, g->compute));
	}
	for (int i = 0; i < c->nchan && !c->stagebuf; i++)
		if (c->ch[i].kind == CH_STAGED && c->ch[i].b == g->dev)
			CUDACHECK(g, cudaMalloc(&c->stagebuf, g->recvsz));
	for (int i = x->start[g->dev]; i < x->start[g->dev + 1]; i++)
		g->nops += x->items[i].kind == EXEC_COMPUTE;
	g->op_start = calloc((size_t)(g->nops ? g->nops : 1), sizeof(cudaEvent_t));
	g->op_end = calloc((size_t)(g->nops ? g->nops : 1), sizeof(cudaEvent_t));
	g->launch_end = calloc((size_t)(g->nops ? g->nops : 1), sizeof(long));
	if (!g->op_start || !g->op_end || !g->launch_end)
		return gpu_fail(g, "out of host memory");
	for (int i = 0; i < g->nops; i++) {
		CUDACHECK(g, cudaEventCreate(&g->op_start[i]));
		CUDACHECK(g, cudaEventCreate(&g->op_end[i]));
	}
	for (int k = 0; k < x->nxfers; k++) {
		if (x->xfers[k].src == g->dev)
			CUDACHECK(g, cudaEventCreate(&c->xf_send[k]));
		if (x->xfers[k].dst == g->dev) {
			CUDACHECK(g, cudaEventCreate(&c->xf_begin[k]));
			CUDACHECK(g, cudaEventCreate(&c->xf_end[k]));
		}
	}
	/* warm up every GEMM (cuBLAS picks its kernels on first use) */
	return warm_up(g);
}

/* Phase 1b, per GPU, without --gemm-tflops: fit each proxy to the time it stands for on
 * this GPU — time one repetition, resize by the throughput it reached, twice (it depends
 * a little on the width), then warm the final shape up. Devices that share a GPU take
 * turns, or each would time the others' work too. */
static int gpu_fit(struct gpu *g)
{
	struct cuda_exec *c = g->c;
	int rc = 0;

	if (c->o.gemm_tflops > 0 || (c->fit_turn >= 0 && c->fit_turn != g->dev))
		return 0;
	CUDACHECK(g, cudaSetDevice(g->gpu));
	if (c->me < 0 && c->gpus_used < c->ndev)
		pthread_mutex_lock(&c->fit_lock);
	for (int round = 0; round < 2 && rc == 0; round++)
		rc = fit_proxies(g) < 0 || warm_up(g) < 0 ? -1 : 0;
	if (c->me < 0 && c->gpus_used < c->ndev)
		pthread_mutex_unlock(&c->fit_lock);
	return rc;
}

/* Phase 2, per GPU: its communicators and a one-byte exchange on each, in the global
 * order of the channels, so no two threads wait on each other in opposite orders. */
static int gpu_connect(struct gpu *g)
{
	struct cuda_exec *c = g->c;

	CUDACHECK(g, cudaSetDevice(g->gpu));
	for (int i = 0; i < c->nchan; i++) {
		struct chan *ch = &c->ch[i];
		int s = side(ch, g->dev);
		ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;

		if (s < 0)
			continue;
		cfg.blocking = 0;
		CUDACHECK(g, cudaStreamCreateWithFlags(&ch->stream[s], cudaStreamNonBlocking));
		if (ch->kind != CH_NCCL)
			continue;
		NCCLCHECK(g, &ch->comm[s], ncclCommInitRankConfig(&ch->comm[s], 2, ch->id, s, &cfg));
		if (s == 0)
			NCCLCHECK(g, &ch->comm[s], ncclSend(ch->buf[0], 1, ncclInt8, 1, ch->comm[s], ch->stream[s]));
		else
			NCCLCHECK(g, &ch->comm[s], ncclRecv(ch->buf[1], 1, ncclInt8, 0, ch->comm[s], ch->stream[s]));
		if (wait_idle(g, "connecting") < 0)
			return -1;
	}
	return 0;
}

/* A local receive: waits until the sender enqueued the send of transfer k in this
 * iteration (it recorded the event the copy waits for). */
static int wait_posted(struct gpu *g, int k)
{
	struct cuda_exec *c = g->c;
	double deadline = now_s() + c->o.timeout_s;

	while (atomic_load(&c->posted[k]) != c->generation) {
		if (atomic_load(&c->abort))
			return -1;
		if (now_s() > deadline)
			return gpu_fail(g, "device %d never sent transfer %d (waited %g s)", c->x->xfers[k].src, k,
			                c->o.timeout_s);
		nap(c);
	}
	return 0;
}

/* The payload of transfer k in this iteration, into its pinned send slot (injected: another
 * microbatch's, or a flipped byte). */
static unsigned char *fill_payload(struct cuda_exec *c, int k)
{
	const struct exec_xfer *xf = &c->x->xfers[k];
	unsigned char *slot = c->check + (size_t)k * 2 * CHECK_BYTES;
	struct payload_tag t = { (uint32_t)c->generation, xf->producer };
	size_t len = payload_len(xf->bytes, CHECK_BYTES);

	if (k == c->o.misroute_xfer)
		t.op.mb = (t.op.mb + 1) % c->p->microbatches;
	payload_fill(slot, len, &t);
	if (k == c->o.corrupt_xfer)
		slot[len / 2] ^= 0x10;
	return slot;
}

/* The head of transfer k as it arrived (in its pinned receive slot) against what it must be. */
static int check_arrival(struct gpu *g, int k)
{
	struct cuda_exec *c = g->c;
	const struct exec_xfer *xf = &c->x->xfers[k];
	struct payload_tag want = { (uint32_t)c->generation, xf->producer };
	char why[160], t1[ACTION_TEXT_MAX], t2[ACTION_TEXT_MAX];

	if (payload_check(c->check + ((size_t)k * 2 + 1) * CHECK_BYTES, payload_len(xf->bytes, CHECK_BYTES), &want, why,
	                  sizeof(why)) == 0)
		return 0;
	return gpu_fail(g, "received from device %d the output of %s for %s (transfer %d, iteration %d), but the data %s",
	                xf->src, action_format(&xf->producer, t1), action_format(&xf->consumer, t2), k, c->generation,
	                why);
}

#ifdef HAVE_MPI
/* Staged sends: posts the header of every pending send whose producer has finished. */
static void progress_sends(struct cuda_exec *c)
{
	int kept = 0;

	for (int i = 0; i < c->npending; i++) {
		int k = c->pending[i];

		if (cudaEventQuery(c->xf_send[k]) == cudaSuccess) {
			c->hdr[k].xfer = k;
			c->hdr[k].pad = 0;
			memcpy(c->hdr[k].payload, c->check + (size_t)k * 2 * CHECK_BYTES, CHECK_BYTES);
			world_isend(k, &c->hdr[k], sizeof(c->hdr[k]), c->x->xfers[k].dst, TAG_DATA + c->slot[k] % TAG_SPAN);
		} else {
			c->pending[kept++] = k;
		}
	}
	c->npending = kept;
}

/* A staged receive, right before its consumer: waits for the header (sending what can be
 * sent meanwhile), then copies the bytes on this GPU. */
static int staged_arrival(struct gpu *g, struct chan *ch, int k)
{
	struct cuda_exec *c = g->c;
	const struct exec_xfer *xf = &c->x->xfers[k];
	double deadline = now_s() + c->o.timeout_s;
	char tok[ACTION_TEXT_MAX];

	for (;;) {
		progress_sends(c);
		if (world_done(k))
			break;
		if (atomic_load(&c->abort))
			return -1;
		if (now_s() > deadline)
			return gpu_fail(g, "waited %g s for the output of %s from device %d: no matching send arrived",
			                c->o.timeout_s, action_format(&xf->producer, tok), xf->src);
		nap(c);
	}
	if (c->hdr[k].xfer != k)
		return gpu_fail(g, "received from device %d the output of %s where it expected that of %s (out of order)",
		                xf->src, action_format(&c->x->xfers[c->hdr[k].xfer].producer, tok),
		                action_format(&xf->producer, (char[ACTION_TEXT_MAX]){ 0 }));
	memcpy(c->check + ((size_t)k * 2 + 1) * CHECK_BYTES, c->hdr[k].payload, CHECK_BYTES);
	if (check_arrival(g, k) < 0)
		return -1;
	CUDACHECK(g, cudaEventRecord(c->xf_begin[k], ch->stream[1]));
	CUDACHECK(g, cudaMemcpyAsync(ch->buf[1], c->stagebuf, xf->bytes ? xf->bytes : 1, cudaMemcpyDeviceToDevice,
	                             ch->stream[1]));
	CUDACHECK(g, cudaEventRecord(c->xf_end[k], ch->stream[1]));
	return 0;
}

/* The end of a rank's iteration: every staged header sent and delivered. */
static int staged_flush(struct gpu *g)
{
	struct cuda_exec *c = g->c;
	double deadline = now_s() + c->o.timeout_s;
	const struct exec_program *x = c->x;

	for (;;) {
		bool done = true;

		progress_sends(c);
		for (int i = x->start[g->dev]; i < x->start[g->dev + 1] && done; i++)
			if (x->items[i].kind == EXEC_SEND)
				done = world_done(x->items[i].xfer);
		if (done && !c->npending)
			return 0;
		if (atomic_load(&c->abort))
			return -1;
		if (now_s() > deadline)
			return gpu_fail(g, "its staged sends did not complete in %g s", c->o.timeout_s);
		nap(c);
	}
}
#endif

/* What an op waits for before it starts: the data of transfer k. */
static int consume(struct gpu *g, int k)
{
	struct cuda_exec *c = g->c;

	if (k < 0)
		return 0;
#ifdef HAVE_MPI
	{
		const struct exec_xfer *xf = &c->x->xfers[k];
		struct chan *ch = &c->ch[c->chan_of[xf->src * c->ndev + xf->dst]];

		if (ch->kind == CH_STAGED && staged_arrival(g, ch, k) < 0)
			return -1;
	}
#endif
	CUDACHECK(g, cudaStreamWaitEvent(g->compute, c->xf_end[k], 0));
	return 0;
}

/* Before enqueueing op `op` (`more` launches, consuming transfers k1, k2): waits until
 * the GPU has finished enough of what is queued that the launches fit in QUEUE_MAX. An op
 * larger than that alone goes in once everything before it finished and its inputs
 * arrived, so that nothing outside it can stall its launches. */
static int throttle(struct gpu *g, int op, long more, int k1, int k2)
{
	struct cuda_exec *c = g->c;
	double deadline = now_s() + c->o.timeout_s;

	for (;;) {
		while (g->finished_ops < op && cudaEventQuery(g->op_end[g->finished_ops]) == cudaSuccess)
			g->finished = g->launch_end[g->finished_ops++];
		if (g->launched - g->finished + more <= QUEUE_MAX)
			return 0;
		if (g->finished_ops == op && (k1 < 0 || cudaEventQuery(c->xf_end[k1]) == cudaSuccess) &&
		    (k2 < 0 || cudaEventQuery(c->xf_end[k2]) == cudaSuccess))
			return 0;
		if (atomic_load(&c->abort))
			return -1;
		if (now_s() > deadline)
			return gpu_fail(g, "no progress for %g s (a transfer that never matched, or a hung kernel)",
			                c->o.timeout_s);
		nap(c);
	}
}

/* Phase 3, per GPU: one iteration — enqueue the program, wait, read the event times. */
static int gpu_iterate(struct gpu *g)
{
	struct cuda_exec *c = g->c;
	const struct exec_program *x = c->x;
	int d = g->dev, op = 0;
	cudaEvent_t last = NULL;

	if (g->failed)   /* as a rank, a failure before the phase still meets the others */
		return -1;
	g->launched = g->finished = 0;
	g->finished_ops = 0;
	memset(g->stash, 0, ((size_t)c->p->nstages * c->p->microbatches * 2 + 1) * sizeof(*g->stash));
	CUDACHECK(g, cudaSetDevice(g->gpu));
	for (int i = x->start[d]; i < x->start[d + 1]; i++) {
		const struct exec_item *it = &x->items[i];

		if (it->kind == EXEC_SEND || it->kind == EXEC_RECV) {
			const struct exec_xfer *xf = &x->xfers[it->xfer];
			struct chan *ch = &c->ch[c->chan_of[xf->src * c->ndev + xf->dst]];
			int s = it->kind == EXEC_SEND ? 0 : 1;
			size_t n = xf->bytes ? xf->bytes : 1;

			g->launched += 3;

			if (s == 0) {
				unsigned char *slot = fill_payload(c, it->xfer);
				size_t len = payload_len(xf->bytes, CHECK_BYTES);

				if (last)   /* the data exists once its producer ran */
					CUDACHECK(g, cudaStreamWaitEvent(ch->stream[0], last, 0));
				CUDACHECK(g, cudaEventRecord(c->xf_send[it->xfer], ch->stream[0]));
				if (ch->kind != CH_STAGED)
					CUDACHECK(g, cudaMemcpyAsync(ch->buf[0], slot, len, cudaMemcpyHostToDevice, ch->stream[0]));
				if (ch->kind == CH_LOCAL) {
					/* the sender moves the bytes and reads their head back, on its own stream:
					 * the next send cannot overwrite them before they arrived */
					CUDACHECK(g, cudaEventRecord(c->xf_begin[it->xfer], ch->stream[0]));
					CUDACHECK(g, cudaMemcpyAsync(ch->buf[1], ch->buf[0], n, cudaMemcpyDeviceToDevice, ch->stream[0]));
					CUDACHECK(g, cudaMemcpyAsync(slot + CHECK_BYTES, ch->buf[1], len, cudaMemcpyDeviceToHost,
					                             ch->stream[0]));
					CUDACHECK(g, cudaEventRecord(c->xf_end[it->xfer], ch->stream[0]));
					atomic_store(&c->posted[it->xfer], c->generation);
				} else if (ch->kind == CH_STAGED) {
					c->pending[c->npending++] = it->xfer;
				} else {
					NCCLCHECK(g, &ch->comm[0], ncclSend(ch->buf[0], n, ncclInt8, 1, ch->comm[0], ch->stream[0]));
				}
			} else if (ch->kind == CH_STAGED) {
#ifdef HAVE_MPI
				world_irecv(it->xfer, &c->hdr[it->xfer], sizeof(c->hdr[it->xfer]), xf->src,
				            TAG_DATA + c->slot[it->xfer] % TAG_SPAN);
#endif
			} else if (ch->kind == CH_LOCAL) {
				/* the sender recorded the copy's events (see above) */
				if (wait_posted(g, it->xfer) < 0)
					return -1;
			} else {
				CUDACHECK(g, cudaEventRecord(c->xf_begin[it->xfer], ch->stream[1]));
				NCCLCHECK(g, &ch->comm[1], ncclRecv(ch->buf[1], n, ncclInt8, 0, ch->comm[1], ch->stream[1]));
				CUDACHECK(g, cudaMemcpyAsync(c->check + ((size_t)it->xfer * 2 + 1) * CHECK_BYTES, ch->buf[1],
				                             payload_len(xf->bytes, CHECK_BYTES), cudaMemcpyDeviceToHost,
				                             ch->stream[1]));
				CUDACHECK(g, cudaEventRecord(c->xf_end[it->xfer], ch->stream[1]));
			}
		} else {
			const struct action *a = &it->op;
			const struct shape *sh = &g->shape[a->stage * 3 + kind_slot(a->kind)];

			char why[96];

			if (throttle(g, op, sh->reps + 4, it->xfer, it->xfer2) < 0)
				return -1;
			if (payload_stash(g->stash, c->p->microbatches, (uint32_t)c->generation, &it->op, why, sizeof(why)) < 0)
				return gpu_fail(g, "%s", why);
			/* wait only for the data this op consumes (heading a pair, its partner's too) */
			if (consume(g, it->xfer) < 0 || consume(g, it->xfer2) < 0)
				return -1;
			CUDACHECK(g, cudaEventRecord(g->op_start[op], g->compute));
			if (run_gemm(g, sh, a->kind) < 0)
				return -1;
			CUDACHECK(g, cudaEventRecord(g->op_end[op], g->compute));
			g->launched += sh->reps + 4;
			g->launch_end[op] = g->launched;
			last = g->op_end[op++];
			if (d == c->o.kill_device && op >= c->o.kill_after_ops && !c->warming)
				return gpu_fail(g, "killed after %d ops (--kill-device: a test of the failure path)", op);
		}
		if (atomic_load(&c->abort))
			return -1;
#ifdef HAVE_MPI
		if (c->npending)
			progress_sends(c);
#endif
	}
#ifdef HAVE_MPI
	if (c->me >= 0 && staged_flush(g) < 0)
		return -1;
#endif
	if (wait_idle(g, "running the iteration") < 0)
		return -1;
	/* the head of every transfer that arrived over NCCL or a device copy, as it arrived
	 * (staged ones were checked on arrival) */
	for (int i = x->start[d]; i < x->start[d + 1]; i++) {
		const struct exec_item *it = &x->items[i];

		if (it->kind == EXEC_RECV &&
		    c->ch[c->chan_of[x->xfers[it->xfer].src * c->ndev + d]].kind != CH_STAGED &&
		    check_arrival(g, it->xfer) < 0)
			return -1;
	}
	return 0;
}

static void *thread_main(void *arg)
{
	struct gpu *g = arg;

	g->c->phase(g);
	return NULL;
}

/* After a failure: every communicator aborted (its kernels stopped); the handle is broken. */
static void abort_comms(struct cuda_exec *c)
{
	for (int i = 0; i < c->nchan; i++)
		for (int s = 0; s < 2; s++)
			if (c->ch[i].comm[s]) {
				ncclCommAbort(c->ch[i].comm[s]);
				c->ch[i].comm[s] = NULL;
			}
	c->broken = 1;
}

/* Runs phase on every GPU's thread; on a failure every communicator is aborted and e
 * gets the first failure. */
static int all_gpus(struct cuda_exec *c, int (*phase)(struct gpu *), struct err *e)
{
	pthread_t *th = calloc((size_t)c->ndev, sizeof(pthread_t));
	int started = 0, failed = -1;

	if (!th)
		return err_set(e, ERR_RUNTIME, "out of host memory");
#ifdef HAVE_MPI
	if (c->me >= 0) {
		/* one device in this rank's own thread; then every rank agrees on the first failure */
		struct gpu *g = &c->g[c->me];

		free(th);
		phase(g);
		if (g->failed)
			*e = g->err;
		if (world_agree(g->failed != 0, e) == 0)
			return 0;
		abort_comms(c);
		return -1;
	}
#endif
	c->phase = phase;
	for (int d = 0; d < c->ndev; d++, started++)
		if (pthread_create(&th[d], NULL, thread_main, &c->g[d]) != 0) {
			gpu_fail(&c->g[d], "cannot start its thread");
			break;
		}
	for (int d = 0; d < started; d++)
		pthread_join(th[d], NULL);
	free(th);
	for (int d = 0; d < c->ndev; d++)
		if (c->g[d].failed && failed < 0)
			failed = d;
	if (failed < 0 && !atomic_load(&c->abort))
		return 0;
	abort_comms(c);
	if (failed >= 0)
		*e = c->g[failed].err;
	else
		err_set(e, ERR_RUNTIME, "the cuda backend stopped without naming a failure");
	return -1;
}

#ifdef HAVE_MPI

/* As an MPI rank: which GPU every device runs on (a channel between two ranks on one GPU
 * is staged) and the tags of the staged transfers. Collective. */
static void rank_identify(struct cuda_exec *c, int local_gpu)
{
	struct rank_ident mine, *all = c->idents;
	int32_t *nto = c->nto;

	memset(&mine, 0, sizeof(mine));
	if (gethostname(mine.host, sizeof(mine.host) - 1) != 0)
		snprintf(mine.host, sizeof(mine.host), "?");
	snprintf(mine.bus, sizeof(mine.bus), "%s", c->info.dev[local_gpu].pci_bus_id);
	snprintf(mine.name, sizeof(mine.name), "%s", c->info.dev[local_gpu].name);
	mine.gpu = local_gpu;
	world_allgather(&mine, all, sizeof(mine));
	c->gpus_used = 0;
	for (int d = 0; d < c->ndev; d++) {
		bool seen = false;

		c->gpu_index[d] = all[d].gpu;
		snprintf(c->gpu_name[d], sizeof(c->gpu_name[d]), "%s", all[d].name);
		for (int e = 0; e < d && !seen; e++)
			seen = strcmp(all[e].host, all[d].host) == 0 && strcmp(all[e].bus, all[d].bus) == 0;
		c->gpus_used += !seen;
	}
	for (int i = 0; i < c->nchan; i++) {
		const struct rank_ident *a = &all[c->ch[i].a], *b = &all[c->ch[i].b];

		c->ch[i].kind = strcmp(a->host, b->host) == 0 && strcmp(a->bus, b->bus) == 0 ? CH_STAGED : CH_NCCL;
	}
	/* a staged transfer's tag: its index among the transfers of its pair, in send order */
	for (int d = 0; d < c->ndev; d++)
		for (int i = c->x->start[d]; i < c->x->start[d + 1]; i++)
			if (c->x->items[i].kind == EXEC_SEND)
				c->slot[c->x->items[i].xfer] = nto[d * c->ndev + c->x->xfers[c->x->items[i].xfer].dst]++;
}
#endif

static int iterate(struct cuda_exec *c, struct err *e);
static int gpu_refit(struct gpu *g);

int cuda_exec_fail_ranks(struct err *e)
{
#ifdef HAVE_MPI
	return world_agree(true, e);
#else
	(void)e;
	return -1;
#endif
}

/* As ranks: the buffers of rank_layout and gather_ranks. */
static bool alloc_rank_buffers(struct cuda_exec *c)
{
	const struct exec_program *x = c->x;
	long total = 0;

	c->idents = calloc((size_t)c->ndev, sizeof(*c->idents));
	c->nto = calloc((size_t)c->ndev * c->ndev, sizeof(*c->nto));
	c->counts = calloc((size_t)c->ndev, sizeof(*c->counts));
	c->samples = calloc((size_t)c->ndev * 2, sizeof(*c->samples));
	if (!c->idents || !c->nto || !c->counts || !c->samples)
		return false;
	for (int d = 0; d < c->ndev; d++) {
		for (int i = x->start[d]; i < x->start[d + 1]; i++)
			c->counts[d] += 5 * (x->items[i].kind == EXEC_COMPUTE);
		total += c->counts[d];
	}
	c->mine = malloc((size_t)(c->counts[c->me] + 1) * sizeof(double));
	c->all = c->me == 0 ? malloc((size_t)(total + 1) * sizeof(double)) : NULL;
	return c->mine && (c->me != 0 || c->all);
}

int cuda_exec_open(struct cuda_exec **out, const struct plan *p, const struct exec_program *x,
                   const struct cuda_exec_opts *o, struct err *e)
{
	struct cuda_exec *c;
	char reason[128];
	bool failed = false;
	int local_gpu = 0;

	*out = NULL;
	if (!(c = calloc(1, sizeof(*c))))
		return err_set(e, ERR_RUNTIME, "out of host memory");
	c->p = p;
	c->x = x;
	c->o = *o;
	c->ndev = x->ndevices;
	c->me = o->rank;
	pthread_mutex_init(&c->fit_lock, NULL);
#ifndef HAVE_MPI
	if (c->me >= 0) {
		pthread_mutex_destroy(&c->fit_lock);
		free(c);
		return err_set(e, ERR_INPUT, "this octopipe-cuda was built without MPI (configure --with-mpi)");
	}
#else
	if (c->me >= 0 && world_size() != c->ndev) {
		pthread_mutex_destroy(&c->fit_lock);
		free(c);
		return err_set(e, ERR_INPUT, "the plan has %d devices but %d MPI ranks were started (one per device)",
		               x->ndevices, world_size());
	}
#endif
	/* every failure up to the ranks' first agreement must be one they all see */
	if (gpu_probe(&c->info) == 0) {
		err_set(e, ERR_RUNTIME, "no GPU: %s", c->info.reason);
		failed = true;
	} else if (c->me < 0 && c->info.count < x->ndevices && !o->share_gpus) {
		err_set(e, ERR_RUNTIME, "the plan needs %d GPUs, %d found (--share-gpus runs several devices on a GPU, "
		        "to test a plan's protocol)", x->ndevices, c->info.count);
		failed = true;
	}
	c->ngpu = c->info.count < c->ndev ? c->info.count : c->ndev;
	if (c->me >= 0) {
#ifdef HAVE_MPI
		c->ngpu = c->info.count;
#endif
	}
	c->g = calloc((size_t)c->ndev, sizeof(*c->g));
	c->chan_of = malloc((size_t)c->ndev * c->ndev * sizeof(int));
	c->ch = calloc((size_t)c->ndev * c->ndev, sizeof(*c->ch));
	c->xf_send = calloc((size_t)(x->nxfers + 1), sizeof(cudaEvent_t));
	c->xf_begin = calloc((size_t)(x->nxfers + 1), sizeof(cudaEvent_t));
	c->xf_end = calloc((size_t)(x->nxfers + 1), sizeof(cudaEvent_t));
	c->xf_send_ms = calloc((size_t)(x->nxfers + 1), sizeof(double));
	c->xf_begin_ms = calloc((size_t)(x->nxfers + 1), sizeof(double));
	c->xf_end_ms = calloc((size_t)(x->nxfers + 1), sizeof(double));
	c->posted = calloc((size_t)(x->nxfers + 1), sizeof(*c->posted));
	c->slot = calloc((size_t)(x->nxfers + 1), sizeof(*c->slot));
	c->hdr = calloc((size_t)(x->nxfers + 1), sizeof(*c->hdr));
	c->pending = calloc((size_t)(x->nxfers + 1), sizeof(*c->pending));
	c->ref_stream = calloc((size_t)(c->ngpu + 1), sizeof(*c->ref_stream));
	c->ref = calloc((size_t)(c->ngpu + 1), sizeof(*c->ref));
	c->gpu_index = calloc((size_t)c->ndev, sizeof(*c->gpu_index));
	c->gpu_name = calloc((size_t)c->ndev, sizeof(*c->gpu_name));
	c->util = calloc((size_t)c->ndev, sizeof(*c->util));
	c->mem = calloc((size_t)c->ndev, sizeof(*c->mem));
	if (c->me >= 0 && !alloc_rank_buffers(c)) {
		err_set(e, ERR_RUNTIME, "out of host memory");
		failed = true;
	}
	if (!c->g || !c->chan_of || !c->ch || !c->xf_send || !c->xf_begin || !c->xf_end || !c->xf_send_ms ||
	    !c->xf_begin_ms || !c->xf_end_ms || !c->posted || !c->slot || !c->hdr || !c->pending || !c->ref_stream ||
	    !c->ref || !c->gpu_index || !c->gpu_name || !c->util || !c->mem) {
		err_set(e, ERR_RUNTIME, "out of host memory");
		failed = true;
	}
#ifdef HAVE_MPI
	if (!failed && c->me >= 0 && world_slots(x->nxfers) < 0) {
		err_set(e, ERR_RUNTIME, "out of host memory");
		failed = true;
	}
	/* the ranks' first agreement (cuda_exec_fail_ranks meets it too) */
	if (c->me >= 0 && world_agree(failed, e) < 0)
		failed = true;
#endif
	if (failed) {
		cuda_exec_close(c);
		return -1;
	}
#ifdef HAVE_MPI
	if (c->me >= 0)   /* collective: every rank is here */
		local_gpu = world_local_rank() % c->info.count;
#endif
	c->nvml = nvml_open(reason, sizeof(reason));
	c->gpus_used = c->ngpu;
	for (int d = 0; d < c->ndev; d++) {
		int gpu = c->me >= 0 ? (d == c->me ? local_gpu : -1) : d % c->ngpu;

		c->g[d] = (struct gpu){ .c = c, .dev = d, .gpu = gpu };
		c->gpu_index[d] = gpu;
		if (gpu >= 0)
			snprintf(c->gpu_name[d], sizeof(c->gpu_name[d]), "%s", c->info.dev[gpu].name);
	}
	for (int i = 0; i < c->ngpu; i++) {
		cudaError_t r;

		if (c->me >= 0 && i != local_gpu)
			continue;
		if ((r = cudaSetDevice(i)) != cudaSuccess ||
		    (r = cudaStreamCreateWithFlags(&c->ref_stream[i], cudaStreamNonBlocking)) != cudaSuccess ||
		    (r = cudaEventCreate(&c->ref[i])) != cudaSuccess) {
			err_set(e, ERR_RUNTIME, "GPU %d: %s", i, cudaGetErrorString(r));
			failed = true;
			break;
		}
	}
	if (!failed && cudaMallocHost((void **)&c->check, (size_t)(x->nxfers + 1) * 2 * CHECK_BYTES) != cudaSuccess) {
		err_set(e, ERR_RUNTIME, "cannot allocate %zu bytes of pinned host memory",
		        (size_t)(x->nxfers + 1) * 2 * CHECK_BYTES);
		failed = true;
	}
	/* the channels: every directed pair with a transfer, in (a, b) order */
	for (int a = 0; a < c->ndev; a++)
		for (int b = 0; b < c->ndev; b++) {
			int used = 0;

			for (int k = 0; k < x->nxfers && !used; k++)
				used = x->xfers[k].src == a && x->xfers[k].dst == b;
			c->chan_of[a * c->ndev + b] = used ? c->nchan : -1;
			if (!used)
				continue;
			c->ch[c->nchan].a = a;
			c->ch[c->nchan].b = b;
			c->ch[c->nchan].bufsz = CHECK_BYTES;
			for (int k = 0; k < x->nxfers; k++)
				if (x->xfers[k].src == a && x->xfers[k].dst == b && x->xfers[k].bytes > c->ch[c->nchan].bufsz)
					c->ch[c->nchan].bufsz = x->xfers[k].bytes;
			c->ch[c->nchan].kind = c->me < 0 && c->g[a].gpu == c->g[b].gpu ? CH_LOCAL : CH_NCCL;
			c->nchan++;
		}
#ifdef HAVE_MPI
	if (c->me >= 0)
		rank_identify(c, local_gpu);   /* collective: the channels' kinds */
#endif
	/* NCCL ids: in one process every channel's; as ranks rank 0 makes them, and broadcasts
	 * them once every rank agreed it can go on */
	for (int i = 0; i < c->nchan && !failed; i++)
		if (c->ch[i].kind == CH_NCCL && c->me <= 0 && ncclGetUniqueId(&c->ch[i].id) != ncclSuccess) {
			err_set(e, ERR_RUNTIME, "ncclGetUniqueId failed (no network interface for NCCL's bootstrap?)");
			failed = true;
		}
#ifdef HAVE_MPI
	if (c->me >= 0) {
		if (world_agree(failed, e) < 0) {
			cuda_exec_close(c);
			return -1;
		}
		for (int i = 0; i < c->nchan; i++)
			if (c->ch[i].kind == CH_NCCL)
				world_bcast(&c->ch[i].id, sizeof(c->ch[i].id));
	}
#endif
	c->fit_turn = -1;
	if (failed || all_gpus(c, gpu_setup, e) < 0) {
		cuda_exec_close(c);
		return -1;
	}
	/* ranks that share a GPU fit their proxies one after the other */
	for (int r = 0; r < (c->me >= 0 && c->gpus_used < c->ndev ? c->ndev : 1); r++) {
		c->fit_turn = c->me >= 0 && c->gpus_used < c->ndev ? r : -1;
		if (all_gpus(c, gpu_fit, e) < 0) {
			cuda_exec_close(c);
			return -1;
		}
	}
	if (all_gpus(c, gpu_connect, e) < 0) {
		cuda_exec_close(c);
		return -1;
	}
	/* two warm-up iterations refit the proxies under a real iteration's load (not when
	 * devices share a GPU: there each op's time includes the others') */
	c->warming = true;
	for (int round = 0; round < 2 && c->o.gemm_tflops <= 0 && c->gpus_used == c->ndev; round++)
		if (iterate(c, e) < 0 || all_gpus(c, gpu_refit, e) < 0) {
			cuda_exec_close(c);
			return -1;
		}
	c->warming = false;
	*out = c;
	return 0;
}

static int elapsed(cudaEvent_t t0, cudaEvent_t ev, double *ms)
{
	float f = 0;

	if (cudaEventElapsedTime(&f, t0, ev) != cudaSuccess)
		return -1;
	*ms = f;
	return 0;
}

/* One iteration on every device (collective as ranks). */
static int iterate(struct cuda_exec *c, struct err *e)
{
	/* one clock per GPU for this iteration, taken at (nearly) one host instant */
	c->generation++;
#ifdef HAVE_MPI
	if (c->me >= 0)
		world_barrier();
#endif
	for (int i = 0; i < c->ngpu; i++)
		if (c->ref[i] && (cudaSetDevice(i) != cudaSuccess || cudaEventRecord(c->ref[i], c->ref_stream[i]) != cudaSuccess)) {
			if (c->me < 0)
				return err_set(e, ERR_RUNTIME, "GPU %d: cannot record the reference event", i);
			gpu_fail(&c->g[c->me], "cannot record the reference event");   /* then agree */
		}
	return all_gpus(c, gpu_iterate, e);
}

/* After a warm-up iteration, per GPU: each proxy's measured time (the mean over its
 * microbatches) against the time it stands for; its columns are refitted by the ratio.
 * This is what the timing of single repetitions misses: clocks and power under the
 * sustained load of a real iteration. */
static int gpu_refit(struct gpu *g)
{
	struct cuda_exec *c = g->c;
	const struct exec_program *x = c->x;
	const struct plan *p = c->p;
	double *sum = calloc((size_t)p->nstages * 3, sizeof(double));
	int *cnt = calloc((size_t)p->nstages * 3, sizeof(int)), op = 0;

	if (!sum || !cnt) {
		free(sum);
		free(cnt);
		return gpu_fail(g, "out of host memory");
	}
	CUDACHECK(g, cudaSetDevice(g->gpu));
	for (int i = x->start[g->dev]; i < x->start[g->dev + 1]; i++) {
		const struct exec_item *it = &x->items[i];
		float ms = 0;

		if (it->kind != EXEC_COMPUTE)
			continue;
		if (cudaEventElapsedTime(&ms, g->op_start[op], g->op_end[op]) == cudaSuccess) {
			sum[it->op.stage * 3 + kind_slot(it->op.kind)] += ms;
			cnt[it->op.stage * 3 + kind_slot(it->op.kind)]++;
		}
		op++;
	}
	for (int k = 0; k < p->nstages * 3; k++) {
		struct shape *sh = &g->shape[k];
		double measured = cnt[k] ? sum[k] / cnt[k] : 0;

		if (sh->reps && measured > 0)
			fit_columns(sh, 2.0 * sh->m * sh->k * sh->n * sh->reps * (sh->ms / measured));
	}
	free(sum);
	free(cnt);
	return warm_up(g);
}

/* Device d's measured ops (into t->dev[d]) and the transfer times it knows: the sends
 * it made, the receives it waited for. */
static int read_device(struct cuda_exec *c, int d, struct timeline *t, struct err *e)
{
	const struct exec_program *x = c->x;
	struct gpu *g = &c->g[d];
	cudaEvent_t t0 = c->ref[g->gpu];
	int op = 0;

	if (cudaSetDevice(g->gpu) != cudaSuccess || !(t->dev[d].ops = calloc((size_t)(g->nops + 1), sizeof(struct tl_op))))
		return err_set(e, ERR_RUNTIME, "out of host memory reading the measured times");
	for (int i = x->start[d]; i < x->start[d + 1]; i++) {
		const struct exec_item *it = &x->items[i];
		double s0, s1;

		if (it->kind == EXEC_SEND) {
			if (elapsed(t0, c->xf_send[it->xfer], &c->xf_send_ms[it->xfer]) < 0)
				return err_set(e, ERR_RUNTIME, "device %d: cannot read the time of transfer %d", d, it->xfer);
			continue;
		}
		if (it->kind == EXEC_RECV) {
			if (elapsed(t0, c->xf_begin[it->xfer], &c->xf_begin_ms[it->xfer]) < 0 ||
			    elapsed(t0, c->xf_end[it->xfer], &c->xf_end_ms[it->xfer]) < 0)
				return err_set(e, ERR_RUNTIME, "device %d: cannot read the time of transfer %d", d, it->xfer);
			continue;
		}
		if (elapsed(t0, g->op_start[op], &s0) < 0 || elapsed(t0, g->op_end[op], &s1) < 0)
			return err_set(e, ERR_RUNTIME, "device %d: cannot read the time of op %d", d, op);
		t->dev[d].ops[t->dev[d].nops++] = (struct tl_op){ s0, s1, it->op.stage, it->op.mb, it->op.kind };
		op++;
	}
	return 0;
}

#ifdef HAVE_MPI
/* As ranks: rank 0 gathers every device's ops, the transfer times and the NVML samples
 * (collective; the other ranks keep only their own device's ops). */
static int gather_ranks(struct cuda_exec *c, struct timeline *t, struct err *e)
{
	const struct exec_program *x = c->x;
	int me = c->me, n = t->dev[me].nops, *counts = c->counts;
	double *mine = c->mine, *all = c->all, sample[2] = { -1, 0 }, *samples = c->samples;
	uint64_t mem = 0;
	bool ok = true;

	for (int i = 0; i < n; i++) {
		const struct tl_op *o = &t->dev[me].ops[i];

		mine[5 * i] = o->start_ms;
		mine[5 * i + 1] = o->end_ms;
		mine[5 * i + 2] = o->stage;
		mine[5 * i + 3] = o->mb;
		mine[5 * i + 4] = o->kind;
	}
	world_gatherv(mine, 5 * n, all, counts);
	for (int k = 0; k < x->nxfers; k++) {
		if (x->xfers[k].src != me)
			c->xf_send_ms[k] = -1e300;
		if (x->xfers[k].dst != me)
			c->xf_begin_ms[k] = c->xf_end_ms[k] = -1e300;
	}
	world_reduce_max(c->xf_send_ms, x->nxfers);
	world_reduce_max(c->xf_begin_ms, x->nxfers);
	world_reduce_max(c->xf_end_ms, x->nxfers);
	if (nvml_sample(c->nvml, c->info.dev[c->g[me].gpu].pci_bus_id, &sample[0], &mem))
		sample[1] = (double)mem;
	else
		sample[0] = -1;
	world_allgather(sample, samples, sizeof(sample));
	for (int d = 0; d < c->ndev; d++) {
		c->util[d] = samples[2 * d];
		c->mem[d] = samples[2 * d + 1];
	}
	if (me == 0) {
		const double *v = all;

		for (int d = 1; d < c->ndev; d++) {
			v += counts[d - 1];
			if (!(t->dev[d].ops = calloc((size_t)(counts[d] / 5 + 1), sizeof(struct tl_op)))) {
				err_set(e, ERR_RUNTIME, "out of host memory gathering the measured times");
				ok = false;
				break;
			}
			for (int i = 0; i < counts[d] / 5; i++)
				t->dev[d].ops[t->dev[d].nops++] = (struct tl_op){ v[5 * i], v[5 * i + 1], (int32_t)v[5 * i + 2],
				                                                  (int32_t)v[5 * i + 3], (uint8_t)v[5 * i + 4] };
		}
	}
	return world_agree(!ok, e);   /* the ranks go on, or stop, together */
}
#endif

int cuda_exec_run(struct cuda_exec *c, struct timeline *t, struct err *e)
{
	const struct exec_program *x = c->x;
	bool failed = false;

	memset(t, 0, sizeof(*t));
	if (c->broken)
		return err_set(e, ERR_RUNTIME, "the cuda backend was aborted by an earlier failure");
	if (iterate(c, e) < 0)
		return -1;
	t->source = strdup("cuda");
	t->ndevices = c->ndev;
	t->dev = calloc((size_t)c->ndev, sizeof(*t->dev));
	t->xfers = calloc((size_t)(x->nxfers + 1), sizeof(*t->xfers));
	if (!t->source || !t->dev || !t->xfers) {
		err_set(e, ERR_RUNTIME, "out of host memory reading the measured times");
		if (c->me < 0) {
			timeline_release(t);
			return -1;
		}
		failed = true;
	}
	/* times from the reference of each device's GPU */
	for (int d = 0; d < c->ndev && !failed; d++)
		if ((c->me < 0 || d == c->me) && read_device(c, d, t, e) < 0) {
			if (c->me < 0) {
				timeline_release(t);
				return -1;
			}
			failed = true;
		}
#ifdef HAVE_MPI
	/* as ranks, every path meets the others: agree, then gather */
	if (c->me >= 0 && (world_agree(failed, e) < 0 || gather_ranks(c, t, e) < 0)) {
		timeline_release(t);
		return -1;
	}
#else
	(void)failed;
#endif
	for (int k = 0; k < x->nxfers; k++) {
		const struct exec_xfer *xf = &x->xfers[k];

		t->xfers[t->nxfers++] = (struct tl_xfer){ xf->src, xf->dst, xf->producer.stage, xf->producer.mb,
		                                          (uint8_t)(xf->producer.kind == OP_F ? XFER_ACT : XFER_GRAD),
		                                          fmax(c->xf_send_ms[k], c->xf_begin_ms[k]), c->xf_end_ms[k],
		                                          xf->bytes };
	}
	return 0;
}

int cuda_exec_gpu_of(const struct cuda_exec *c, int d)
{
	return d >= 0 && d < c->ndev ? c->gpu_index[d] : -1;
}

int cuda_exec_gpus(const struct cuda_exec *c)
{
	return c->gpus_used;
}

const char *cuda_exec_gpu_name(const struct cuda_exec *c, int d)
{
	return d >= 0 && d < c->ndev && c->gpu_name[d][0] ? c->gpu_name[d] : "?";
}

bool cuda_exec_util(struct cuda_exec *c, int d, double *util, uint64_t *mem_used)
{
	int i = cuda_exec_gpu_of(c, d);

	if (d < 0 || d >= c->ndev)
		return false;
	if (c->me >= 0) {   /* as ranks: the samples gathered after the iteration */
		if (c->util[d] < 0)
			return false;
		*util = c->util[d];
		*mem_used = (uint64_t)c->mem[d];
		return true;
	}
	return i >= 0 && i < c->info.count && nvml_sample(c->nvml, c->info.dev[i].pci_bus_id, util, mem_used);
}

void cuda_exec_close(struct cuda_exec *c)
{
	if (!c)
		return;
	for (int i = 0; c->ch && i < c->nchan; i++)
		for (int s = 0; s < 2; s++) {
			int gpu = c->g ? c->g[s ? c->ch[i].b : c->ch[i].a].gpu : -1;

			if (c->ch[i].comm[s])
				ncclCommDestroy(c->ch[i].comm[s]);
			if (gpu >= 0 && (c->ch[i].stream[s] || c->ch[i].buf[s]) && cudaSetDevice(gpu) == cudaSuccess) {
				if (c->ch[i].stream[s])
					cudaStreamDestroy(c->ch[i].stream[s]);
				if (c->ch[i].buf[s])
					cudaFree(c->ch[i].buf[s]);
			}
		}
	if (c->check)
		cudaFreeHost(c->check);
	for (int d = 0; c->g && d < c->ndev; d++) {
		struct gpu *g = &c->g[d];

		if (g->gpu < 0 || !g->compute || cudaSetDevice(g->gpu) != cudaSuccess) {
			free(g->op_start);
			free(g->op_end);
			free(g->launch_end);
			free(g->shape);
			free(g->stash);
			continue;
		}
		if (g->blas)
			cublasDestroy(g->blas);
		cudaFree(g->x);
		cudaFree(g->w);
		cudaFree(g->y);

		for (int i = 0; i < g->nops; i++) {
			if (g->op_start && g->op_start[i])
				cudaEventDestroy(g->op_start[i]);
			if (g->op_end && g->op_end[i])
				cudaEventDestroy(g->op_end[i]);
		}
		if (g->compute)
			cudaStreamDestroy(g->compute);
		free(g->op_start);
		free(g->op_end);
		free(g->launch_end);
		free(g->shape);
		free(g->stash);
	}
	for (int k = 0; c->x && k < c->x->nxfers; k++) {
		if (c->xf_send && c->xf_send[k])
			cudaEventDestroy(c->xf_send[k]);
		if (c->xf_begin && c->xf_begin[k])
			cudaEventDestroy(c->xf_begin[k]);
		if (c->xf_end && c->xf_end[k])
			cudaEventDestroy(c->xf_end[k]);
	}
	for (int i = 0; c->ref && c->ref_stream && i < c->ngpu; i++) {
		if ((!c->ref[i] && !c->ref_stream[i]) || cudaSetDevice(i) != cudaSuccess)
			continue;
		if (c->ref[i])
			cudaEventDestroy(c->ref[i]);
		if (c->ref_stream[i])
			cudaStreamDestroy(c->ref_stream[i]);
	}
	if (c->stagebuf)
		cudaFree(c->stagebuf);
#ifdef HAVE_MPI
	if (c->me >= 0)
		world_release_slots();
#endif
	nvml_close(c->nvml);
	free(c->slot);
	free(c->hdr);
	free(c->pending);
	free(c->gpu_index);
	free(c->gpu_name);
	free(c->util);
	free(c->mem);
	free(c->idents);
	free(c->nto);
	free(c->counts);
	free(c->mine);
	free(c->all);
	free(c->samples);
	free(c->ref);
	free(c->ref_stream);
	free((void *)c->posted);
	free(c->g);
	free(c->chan_of);
	free(c->ch);
	free(c->xf_send);
	free(c->xf_begin);
	free(c->xf_end);
	free(c->xf_send_ms);
	free(c->xf_begin_ms);
	free(c->xf_end_ms);
	pthread_mutex_destroy(&c->fit_lock);
	free(c);
}
