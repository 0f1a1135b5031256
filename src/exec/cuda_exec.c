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
 * W = Xᵀ·dY. Activations are real buffers of the transfer's size (one send and one
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

#define NCOLS_MAX 8192     /* a longer proxy GEMM is repeated instead of widened */

struct shape {
	int m, k, n, reps;
};

struct gpu {
	struct cuda_exec *c;
	int dev;                   /* the plan's device */
	int gpu;                   /* the CUDA device it runs on */
	cudaStream_t compute;
	cublasHandle_t blas;
	void *x, *w, *y;           /* proxy GEMM operands, bf16 */
	void *sendbuf, *recvbuf;
	size_t sendsz, recvsz;
	struct shape *shape;       /* per stage x 3 kinds (F, I or B, W) */
	int nops;
	cudaEvent_t *op_start, *op_end;
	struct err err;
	int failed;
};

struct chan {
	int a, b;                  /* a sends, b receives */
	bool local;                /* both on one GPU: a device copy instead of NCCL */
	ncclUniqueId id;
	ncclComm_t comm[2];        /* a's and b's */
	cudaStream_t stream[2];
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
	int nchan;
	struct chan *ch;
	int *chan_of;              /* ndev x ndev: channel of a -> b, or -1 */
	cudaEvent_t *xf_send, *xf_begin, *xf_end; /* per transfer (on the sender / receiver) */
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
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap(void)
{
	struct timespec ts = { 0, 100000 };

	nanosleep(&ts, NULL);
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
		nap();
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

			if (s < 0)
				continue;
			r = cudaStreamQuery(c->ch[i].stream[s]);
			if (r != cudaSuccess && r != cudaErrorNotReady)
				CUDACHECK(g, r);
			busy = busy || r == cudaErrorNotReady;
			if (!c->ch[i].local && ncclCommGetAsyncError(c->ch[i].comm[s], &nr) == ncclSuccess && nr != ncclSuccess &&
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
		nap();
	}
}

/* The proxy GEMM of a (stage, kind) whose predicted time is ms at tflops. */
static struct shape shape_for(double ms, double tflops, long tokens, uint64_t out_bytes)
{
	double flops = ms * 1e-3 * tflops * 1e12, n;
	struct shape s = { 0, 0, 0, 0 };

	if (flops < 1)
		return s;
	s.m = (int)fmin(fmax((double)tokens, 64), 16384);
	s.k = out_bytes ? (int)fmin(fmax((double)out_bytes / 2 / (double)tokens, 64), 16384) : 0;
	if (!s.k)   /* no activation size: a square-ish GEMM */
		s.m = s.k = (int)fmin(fmax(cbrt(flops / 2), 64), 8192);
	n = flops / (2.0 * s.m * s.k);
	s.reps = (int)ceil(n / NCOLS_MAX);
	if (s.reps < 1)
		s.reps = 1;
	s.n = (int)ceil(n / s.reps / 8) * 8;
	if (s.n < 8)
		s.n = 8;
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
		return gpu_fail(g, "out of memory");
	for (int s = 0; s < p->nstages; s++) {
		double ms[3] = { 0, 0, 0 };
		uint64_t out = p->model.layers[p->stages[s].last].out_bytes;

		if (p->stages[s].device != g->dev)
			continue;
		for (int l = p->stages[s].first; l <= p->stages[s].last; l++) {
			ms[0] += p->model.layers[l].f_ms;
			ms[1] += p->model.layers[l].b_ms + (p->split_backward ? 0 : p->model.layers[l].w_ms);
			ms[2] += p->split_backward ? p->model.layers[l].w_ms : 0;
		}
		for (int k = 0; k < 3; k++) {
			double tf = c->o.gemm_tflops > 0 ? c->o.gemm_tflops :
			            hw->peak_tflops * (k ? hw->eff_b[EFF_GEMM] : hw->eff_f[EFF_GEMM]);
			struct shape *sh = &g->shape[s * 3 + k];

			*sh = shape_for(ms[k] / p->cluster.device_speed[g->dev], tf, tokens ? tokens : 4096, out);
			if (!sh->reps)
				continue;
			xs = xs > (size_t)sh->m * sh->k ? xs : (size_t)sh->m * sh->k;
			ws = ws > (size_t)sh->k * sh->n ? ws : (size_t)sh->k * sh->n;
			ys = ys > (size_t)sh->m * sh->n ? ys : (size_t)sh->m * sh->n;
		}
	}
	for (int k = 0; k < x->nxfers; k++) {
		size_t b = x->xfers[k].bytes ? x->xfers[k].bytes : 1;

		if (x->xfers[k].src == g->dev && b > g->sendsz)
			g->sendsz = b;
		if (x->xfers[k].dst == g->dev && b > g->recvsz)
			g->recvsz = b;
	}
	CUDACHECK(g, cudaMalloc(&g->x, 2 * (xs ? xs : 1)));
	CUDACHECK(g, cudaMalloc(&g->w, 2 * (ws ? ws : 1)));
	CUDACHECK(g, cudaMalloc(&g->y, 2 * (ys ? ys : 1)));
	CUDACHECK(g, cudaMemsetAsync(g->x, 0, 2 * (xs ? xs : 1), g->compute));
	CUDACHECK(g, cudaMemsetAsync(g->w, 0, 2 * (ws ? ws : 1), g->compute));
	CUDACHECK(g, cudaMemsetAsync(g->y, 0, 2 * (ys ? ys : 1), g->compute));
	CUDACHECK(g, cudaMalloc(&g->sendbuf, g->sendsz ? g->sendsz : 1));
	CUDACHECK(g, cudaMalloc(&g->recvbuf, g->recvsz ? g->recvsz : 1));
	for (int i = x->start[g->dev]; i < x->start[g->dev + 1]; i++)
		g->nops += x->items[i].kind == EXEC_COMPUTE;
	g->op_start = calloc((size_t)(g->nops ? g->nops : 1), sizeof(cudaEvent_t));
	g->op_end = calloc((size_t)(g->nops ? g->nops : 1), sizeof(cudaEvent_t));
	if (!g->op_start || !g->op_end)
		return gpu_fail(g, "out of memory");
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
		if (ch->local)
			continue;
		NCCLCHECK(g, &ch->comm[s], ncclCommInitRankConfig(&ch->comm[s], 2, ch->id, s, &cfg));
		if (s == 0)
			NCCLCHECK(g, &ch->comm[s], ncclSend(g->sendbuf, 1, ncclInt8, 1, ch->comm[s], ch->stream[s]));
		else
			NCCLCHECK(g, &ch->comm[s], ncclRecv(g->recvbuf, 1, ncclInt8, 0, ch->comm[s], ch->stream[s]));
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
		nap();
	}
	return 0;
}

/* Phase 3, per GPU: one iteration — enqueue the program, wait, read the event times. */
static int gpu_iterate(struct gpu *g)
{
	struct cuda_exec *c = g->c;
	const struct exec_program *x = c->x;
	int d = g->dev, op = 0;
	cudaEvent_t last = NULL;

	CUDACHECK(g, cudaSetDevice(g->gpu));
	for (int i = x->start[d]; i < x->start[d + 1]; i++) {
		const struct exec_item *it = &x->items[i];

		if (it->kind == EXEC_SEND || it->kind == EXEC_RECV) {
			const struct exec_xfer *xf = &x->xfers[it->xfer];
			struct chan *ch = &c->ch[c->chan_of[xf->src * c->ndev + xf->dst]];
			int s = it->kind == EXEC_SEND ? 0 : 1;
			size_t n = xf->bytes ? xf->bytes : 1;

			if (s == 0) {
				if (last)   /* the data exists once its producer ran */
					CUDACHECK(g, cudaStreamWaitEvent(ch->stream[0], last, 0));
				CUDACHECK(g, cudaEventRecord(c->xf_send[it->xfer], ch->stream[0]));
				if (ch->local)
					atomic_store(&c->posted[it->xfer], c->generation);
				else
					NCCLCHECK(g, &ch->comm[0], ncclSend(g->sendbuf, n, ncclInt8, 1, ch->comm[0], ch->stream[0]));
			} else if (ch->local) {
				if (wait_posted(g, it->xfer) < 0)
					return -1;
				CUDACHECK(g, cudaStreamWaitEvent(ch->stream[1], c->xf_send[it->xfer], 0));
				CUDACHECK(g, cudaEventRecord(c->xf_begin[it->xfer], ch->stream[1]));
				CUDACHECK(g, cudaMemcpyAsync(g->recvbuf, c->g[xf->src].sendbuf, n, cudaMemcpyDeviceToDevice,
				                             ch->stream[1]));
				CUDACHECK(g, cudaEventRecord(c->xf_end[it->xfer], ch->stream[1]));
			} else {
				CUDACHECK(g, cudaEventRecord(c->xf_begin[it->xfer], ch->stream[1]));
				NCCLCHECK(g, &ch->comm[1], ncclRecv(g->recvbuf, n, ncclInt8, 0, ch->comm[1], ch->stream[1]));
				CUDACHECK(g, cudaEventRecord(c->xf_end[it->xfer], ch->stream[1]));
			}
		} else {
			const struct action *a = &it->op;

			/* wait only for the data this op consumes */
			if (it->xfer >= 0)
				CUDACHECK(g, cudaStreamWaitEvent(g->compute, c->xf_end[it->xfer], 0));
			if (it->xfer2 >= 0)   /* the head of a pair also waits for its partner's input */
				CUDACHECK(g, cudaStreamWaitEvent(g->compute, c->xf_end[it->xfer2], 0));
			CUDACHECK(g, cudaEventRecord(g->op_start[op], g->compute));
			if (run_gemm(g, &g->shape[a->stage * 3 + kind_slot(a->kind)], a->kind) < 0)
				return -1;
			CUDACHECK(g, cudaEventRecord(g->op_end[op], g->compute));
			last = g->op_end[op++];
			if (d == c->o.kill_device && op >= c->o.kill_after_ops)
				return gpu_fail(g, "killed after %d ops (--kill-device: a test of the failure path)", op);
		}
		if (atomic_load(&c->abort))
			return -1;
	}
	return wait_idle(g, "running the iteration");
}

static void *thread_main(void *arg)
{
	struct gpu *g = arg;

	g->c->phase(g);
	return NULL;
}

/* Runs phase on every GPU's thread; on a failure every communicator is aborted and e
 * gets the first failure. */
static int all_gpus(struct cuda_exec *c, int (*phase)(struct gpu *), struct err *e)
{
	pthread_t *th = calloc((size_t)c->ndev, sizeof(pthread_t));
	int started = 0, failed = -1;

	if (!th)
		return err_set(e, ERR_RUNTIME, "out of memory");
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
	for (int i = 0; i < c->nchan; i++)
		for (int s = 0; s < 2; s++)
			if (c->ch[i].comm[s]) {
				ncclCommAbort(c->ch[i].comm[s]);
				c->ch[i].comm[s] = NULL;
			}
	c->broken = 1;
	if (failed >= 0)
		*e = c->g[failed].err;
	else
		err_set(e, ERR_RUNTIME, "the cuda backend stopped without naming a failure");
	return -1;
}

int cuda_exec_open(struct cuda_exec **out, const struct plan *p, const struct exec_program *x,
                   const struct cuda_exec_opts *o, struct err *e)
{
	struct cuda_exec *c;
	char reason[128];

	*out = NULL;
	if (!(c = calloc(1, sizeof(*c))))
		return err_set(e, ERR_RUNTIME, "out of memory");
	if (gpu_probe(&c->info) == 0) {
		err_set(e, ERR_RUNTIME, "no GPU: %s", c->info.reason);
		free(c);
		return -1;
	}
	if (c->info.count < x->ndevices && !o->share_gpus) {
		err_set(e, ERR_RUNTIME, "the plan needs %d GPUs, %d found (--share-gpus runs several devices on a GPU, "
		        "to test a plan's protocol)", x->ndevices, c->info.count);
		free(c);
		return -1;
	}
	c->p = p;
	c->x = x;
	c->o = *o;
	c->ndev = x->ndevices;
	c->ngpu = c->info.count < c->ndev ? c->info.count : c->ndev;
	c->nvml = nvml_open(reason, sizeof(reason));
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
	c->ref_stream = calloc((size_t)c->ngpu, sizeof(*c->ref_stream));
	c->ref = calloc((size_t)c->ngpu, sizeof(*c->ref));
	if (!c->g || !c->chan_of || !c->ch || !c->xf_send || !c->xf_begin || !c->xf_end || !c->xf_send_ms ||
	    !c->xf_begin_ms || !c->xf_end_ms || !c->posted || !c->ref_stream || !c->ref) {
		cuda_exec_close(c);
		return err_set(e, ERR_RUNTIME, "out of memory");
	}
	for (int d = 0; d < c->ndev; d++)
		c->g[d] = (struct gpu){ .c = c, .dev = d, .gpu = d % c->ngpu };
	for (int i = 0; i < c->ngpu; i++) {
		cudaError_t r;

		if ((r = cudaSetDevice(i)) != cudaSuccess ||
		    (r = cudaStreamCreateWithFlags(&c->ref_stream[i], cudaStreamNonBlocking)) != cudaSuccess ||
		    (r = cudaEventCreate(&c->ref[i])) != cudaSuccess) {
			cuda_exec_close(c);
			return err_set(e, ERR_RUNTIME, "GPU %d: %s", i, cudaGetErrorString(r));
		}
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
			c->ch[c->nchan].local = c->g[a].gpu == c->g[b].gpu;
			if (!c->ch[c->nchan].local && ncclGetUniqueId(&c->ch[c->nchan].id) != ncclSuccess) {
				cuda_exec_close(c);
				return err_set(e, ERR_RUNTIME, "ncclGetUniqueId failed (no network interface for NCCL's bootstrap?)");
			}
			c->nchan++;
		}
	if (all_gpus(c, gpu_setup, e) < 0 || all_gpus(c, gpu_connect, e) < 0) {
		cuda_exec_close(c);
		return -1;
	}
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

int cuda_exec_run(struct cuda_exec *c, struct timeline *t, struct err *e)
{
	const struct exec_program *x = c->x;

	memset(t, 0, sizeof(*t));
	if (c->broken)
		return err_set(e, ERR_RUNTIME, "the cuda backend was aborted by an earlier failure");
	/* one clock per GPU for this iteration, taken at (nearly) one host instant */
	c->generation++;
	for (int i = 0; i < c->ngpu; i++)
		if (cudaSetDevice(i) != cudaSuccess || cudaEventRecord(c->ref[i], c->ref_stream[i]) != cudaSuccess)
			return err_set(e, ERR_RUNTIME, "GPU %d: cannot record the reference event", i);
	if (all_gpus(c, gpu_iterate, e) < 0)
		return -1;
	t->source = strdup("cuda");
	t->ndevices = c->ndev;
	t->dev = calloc((size_t)c->ndev, sizeof(*t->dev));
	t->xfers = calloc((size_t)(x->nxfers + 1), sizeof(*t->xfers));
	if (!t->source || !t->dev || !t->xfers)
		goto oom;
	/* times from the reference of each device's GPU */
	for (int d = 0; d < c->ndev; d++) {
		struct gpu *g = &c->g[d];
		cudaEvent_t t0 = c->ref[g->gpu];
		int op = 0;

		if (cudaSetDevice(g->gpu) != cudaSuccess || !(t->dev[d].ops = calloc((size_t)(g->nops + 1), sizeof(struct tl_op))))
			goto oom;
		for (int i = x->start[d]; i < x->start[d + 1]; i++) {
			const struct exec_item *it = &x->items[i];
			double s0, s1;

			if (it->kind == EXEC_SEND) {
				elapsed(t0, c->xf_send[it->xfer], &c->xf_send_ms[it->xfer]);
				continue;
			}
			if (it->kind == EXEC_RECV) {
				elapsed(t0, c->xf_begin[it->xfer], &c->xf_begin_ms[it->xfer]);
				elapsed(t0, c->xf_end[it->xfer], &c->xf_end_ms[it->xfer]);
				continue;
			}
			if (elapsed(t0, g->op_start[op], &s0) < 0 || elapsed(t0, g->op_end[op], &s1) < 0) {
				timeline_release(t);
				return err_set(e, ERR_RUNTIME, "device %d: cannot read the time of op %d", d, op);
			}
			t->dev[d].ops[t->dev[d].nops++] = (struct tl_op){ s0, s1, it->op.stage, it->op.mb, it->op.kind };
			op++;
		}
	}
	for (int k = 0; k < x->nxfers; k++) {
		const struct exec_xfer *xf = &x->xfers[k];

		t->xfers[t->nxfers++] = (struct tl_xfer){ xf->src, xf->dst, xf->producer.stage, xf->producer.mb,
		                                          (uint8_t)(xf->producer.kind == OP_F ? XFER_ACT : XFER_GRAD),
		                                          fmax(c->xf_send_ms[k], c->xf_begin_ms[k]), c->xf_end_ms[k],
		                                          xf->bytes };
	}
	return 0;
oom:
	timeline_release(t);
	return err_set(e, ERR_RUNTIME, "out of memory reading the measured times");
}

int cuda_exec_gpu_of(const struct cuda_exec *c, int d)
{
	return d >= 0 && d < c->ndev ? c->g[d].gpu : -1;
}

int cuda_exec_gpus(const struct cuda_exec *c)
{
	return c->ngpu;
}

const char *cuda_exec_gpu_name(const struct cuda_exec *c, int d)
{
	int i = cuda_exec_gpu_of(c, d);

	return i >= 0 && i < c->info.count ? c->info.dev[i].name : "?";
}

bool cuda_exec_util(struct cuda_exec *c, int d, double *util, uint64_t *mem_used)
{
	int i = cuda_exec_gpu_of(c, d);

	return i >= 0 && i < c->info.count && nvml_sample(c->nvml, c->info.dev[i].pci_bus_id, util, mem_used);
}

void cuda_exec_close(struct cuda_exec *c)
{
	if (!c)
		return;
	for (int i = 0; c->ch && i < c->nchan; i++)
		for (int s = 0; s < 2; s++) {
			if (c->ch[i].comm[s])
				ncclCommDestroy(c->ch[i].comm[s]);
			if (c->ch[i].stream[s])
				cudaStreamDestroy(c->ch[i].stream[s]);
		}
	for (int d = 0; c->g && d < c->ndev; d++) {
		struct gpu *g = &c->g[d];

		if (cudaSetDevice(g->gpu) != cudaSuccess)
			continue;
		if (g->blas)
			cublasDestroy(g->blas);
		cudaFree(g->x);
		cudaFree(g->w);
		cudaFree(g->y);
		cudaFree(g->sendbuf);
		cudaFree(g->recvbuf);
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
		free(g->shape);
	}
	for (int k = 0; c->x && k < c->x->nxfers; k++) {
		if (c->xf_send && c->xf_send[k])
			cudaEventDestroy(c->xf_send[k]);
		if (c->xf_begin && c->xf_begin[k])
			cudaEventDestroy(c->xf_begin[k]);
		if (c->xf_end && c->xf_end[k])
			cudaEventDestroy(c->xf_end[k]);
	}
	for (int i = 0; i < c->ngpu; i++) {
		if (cudaSetDevice(i) != cudaSuccess)
			continue;
		if (c->ref && c->ref[i])
			cudaEventDestroy(c->ref[i]);
		if (c->ref_stream && c->ref_stream[i])
			cudaStreamDestroy(c->ref_stream[i]);
	}
	nvml_close(c->nvml);
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
	free(c);
}
