/*
 * cuda_exec — one thread per GPU, each enqueueing its device's whole program at once and
 * letting the streams do the waiting (see cuda_exec.h). This file holds a run together:
 * open (phases run on every device's thread: set up, fit the proxies, connect the
 * channels, one or two warm-up iterations), one iteration, the measured times, close. The
 * pieces live next to it (cuda_impl.h): the kernels an op launches (cuda_kernels.c),
 * its proxy's shape (cuda_proxy.c), the channels and their data checks (cuda_chan.c),
 * and the MPI ranks' side (cuda_world.c).
 *
 * An op waits only for the data it consumes, a send only for its producer: the channels'
 * streams and the compute stream meet at events, never at the host. The host queues at
 * most QUEUE_MAX launches ahead of a GPU, so that it never blocks inside a launch where
 * it could not see an abort.
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
#include "exec/cuda_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/payload.h"
#ifdef HAVE_MPI
#include "exec/world.h"
#endif

void cuda_exec_opts_default(struct cuda_exec_opts *o)
{
	o->timeout_s = 60;
	o->gemm_tflops = 0;
	o->share_gpus = false;
	o->kill_device = -1;
	o->kill_after_ops = 0;
	o->misroute_xfer = -1;
	o->corrupt_xfer = -1;
	o->works = NULL;
	memset(&o->kernel_opts, 0, sizeof(o->kernel_opts));
	o->rank = -1;
}

/* A pause in a wait loop; as an MPI rank it also notices another rank's abort. */
void cuda_nap(struct cuda_exec *c)
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

/* Records GPU g's failure and tells every other thread to abort; returns -1. */
int cuda_fail(struct gpu *g, const char *fmt, ...)
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

/* Waits until a non-blocking NCCL call is no longer in progress, with the deadline. */
int cuda_nccl_settle(struct gpu *g, ncclComm_t *comm, ncclResult_t r, const char *what, const char *file,
                       int line)
{
	double deadline = clock_now_s() + g->c->o.timeout_s;

	while (r == ncclInProgress) {
		if (atomic_load(&g->c->abort) && !g->failed)
			return -1;
		if (clock_now_s() > deadline)
			return cuda_fail(g, "%s:%d: %s: still in progress after %g s", file, line, what, g->c->o.timeout_s);
		cuda_nap(g->c);
		if (ncclCommGetAsyncError(*comm, &r) != ncclSuccess)
			break;
	}
	if (r != ncclSuccess)
		return cuda_fail(g, "%s:%d: %s: %s (%s)", file, line, what, ncclGetErrorString(r),
		                *comm ? ncclGetLastError(*comm) : "");
	return 0;
}

/* Polls until every stream of g is idle: events, async NCCL errors, abort, deadline. */
int cuda_wait_idle(struct gpu *g, const char *what)
{
	struct cuda_exec *c = g->c;
	double deadline = clock_now_s() + c->o.timeout_s;

	for (;;) {
		bool busy = false;
		cudaError_t r = cudaStreamQuery(g->compute);

		if (r != cudaSuccess && r != cudaErrorNotReady)
			CUDACHECK(g, r);
		busy = r == cudaErrorNotReady;
		for (int i = 0; i < c->nchan; i++) {
			int s = cuda_side(&c->ch[i], g->dev);
			ncclResult_t nr;

			if (s < 0 || !c->ch[i].stream[s])
				continue;
			r = cudaStreamQuery(c->ch[i].stream[s]);
			if (r != cudaSuccess && r != cudaErrorNotReady)
				CUDACHECK(g, r);
			busy = busy || r == cudaErrorNotReady;
			if (c->ch[i].kind == CH_NCCL && ncclCommGetAsyncError(c->ch[i].comm[s], &nr) == ncclSuccess && nr != ncclSuccess &&
			    nr != ncclInProgress)
				return cuda_fail(g, "%s: nccl error on the link %d -> %d: %s (%s)", what, c->ch[i].a, c->ch[i].b,
				                ncclGetErrorString(nr), ncclGetLastError(c->ch[i].comm[s]));
		}
		if (!busy)
			return 0;
		if (atomic_load(&c->abort))
			return -1;
		if (clock_now_s() > deadline)
			return cuda_fail(g, "%s: no progress for %g s (a transfer that never matched, or a hung kernel)", what,
			                c->o.timeout_s);
		cuda_nap(c);
	}
}

/* Phase 1, per GPU: streams, cuBLAS, the proxies, buffers, events. Touches no other GPU. */
static int gpu_setup(struct gpu *g)
{
	struct cuda_exec *c = g->c;
	const struct plan *p = c->p;
	const struct exec_program *x = c->x;

	CUDACHECK(g, cudaSetDevice(g->gpu));
	CUDACHECK(g, cudaStreamCreateWithFlags(&g->compute, cudaStreamNonBlocking));
	BLASCHECK(g, cublasCreate(&g->blas));
	BLASCHECK(g, cublasSetStream(g->blas, g->compute));
	if (cuda_proxy_setup(g) < 0)
		return -1;
	g->recvsz = PAYLOAD_MIN;
	for (int k = 0; k < x->nxfers; k++)
		if (x->xfers[k].dst == g->dev && x->xfers[k].bytes > g->recvsz)
			g->recvsz = x->xfers[k].bytes;
	if (!(g->stash = calloc((size_t)p->nstages * p->microbatches * 2 + 1, sizeof(*g->stash))))
		return cuda_fail(g, "out of host memory");
	if (cuda_chan_alloc(g) < 0)
		return -1;
	for (int i = x->start[g->dev]; i < x->start[g->dev + 1]; i++)
		g->nops += x->items[i].kind == EXEC_COMPUTE;
	g->op_start = calloc((size_t)(g->nops ? g->nops : 1), sizeof(cudaEvent_t));
	g->op_end = calloc((size_t)(g->nops ? g->nops : 1), sizeof(cudaEvent_t));
	g->launch_end = calloc((size_t)(g->nops ? g->nops : 1), sizeof(long));
	if (!g->op_start || !g->op_end || !g->launch_end)
		return cuda_fail(g, "out of host memory");
	for (int i = 0; i < g->nops; i++) {
		CUDACHECK(g, cudaEventCreate(&g->op_start[i]));
		CUDACHECK(g, cudaEventCreate(&g->op_end[i]));
	}
	for (int k = 0; k < x->nxfers; k++) {
		if (x->xfers[k].src == g->dev) {
			CUDACHECK(g, cudaEventCreate(&c->xf_send[k]));
			CUDACHECK(g, cudaEventCreateWithFlags(&c->xf_read[k], cudaEventDisableTiming));
		}
		if (x->xfers[k].dst == g->dev) {
			CUDACHECK(g, cudaEventCreate(&c->xf_begin[k]));
			CUDACHECK(g, cudaEventCreate(&c->xf_end[k]));
		}
	}
	/* warm up every GEMM (cuBLAS picks its kernels on first use) */
	return cuda_proxy_warm_up(g);
}

/* Before enqueueing op `op` (`more` launches, consuming transfers k1, k2): waits until
 * the GPU has finished enough of what is queued that the launches fit in QUEUE_MAX. An op
 * larger than that alone goes in once everything before it finished and its inputs
 * arrived, so that nothing outside it can stall its launches. */
static int throttle(struct gpu *g, int op, long more, int k1, int k2)
{
	struct cuda_exec *c = g->c;
	double deadline = clock_now_s() + c->o.timeout_s;

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
		if (clock_now_s() > deadline)
			return cuda_fail(g, "no progress for %g s (a transfer that never matched, or a hung kernel)",
			                c->o.timeout_s);
		cuda_nap(c);
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
			g->launched += 8;   /* its copies, events and the data's fill or checksum kernels */
			if ((it->kind == EXEC_SEND ? cuda_chan_send(g, it, last) : cuda_chan_recv(g, it)) < 0)
				return -1;
		} else {
			const struct action *a = &it->op;
			long launches = cuda_op_launches(g, a);
			char why[96];

			if (throttle(g, op, launches + 4, it->xfer, it->xfer2) < 0)
				return -1;
			if (payload_stash(g->stash, c->p->microbatches, (uint32_t)c->generation, &it->op, why, sizeof(why)) < 0)
				return cuda_fail(g, "%s", why);
			/* wait only for the data this op consumes (heading a pair, its partner's too) */
			if (cuda_chan_consume(g, it->xfer) < 0 || cuda_chan_consume(g, it->xfer2) < 0)
				return -1;
			CUDACHECK(g, cudaEventRecord(g->op_start[op], g->compute));
			if (cuda_op(g, a) < 0)
				return -1;
			CUDACHECK(g, cudaEventRecord(g->op_end[op], g->compute));
			g->launched += launches + 4;
			g->launch_end[op] = g->launched;
			last = g->op_end[op++];
			if (d == c->o.kill_device && op >= c->o.kill_after_ops && !c->warming)
				return cuda_fail(g, "killed after %d ops (--kill-device: a test of the failure path)", op);
		}
		if (atomic_load(&c->abort))
			return -1;
#ifdef HAVE_MPI
		if (c->npending)
			cuda_chan_progress(c);
#endif
	}
	if (cuda_chan_finish(g) < 0 || cuda_wait_idle(g, "running the iteration") < 0)
		return -1;
	return cuda_chan_check_arrivals(g);
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
		cuda_chan_abort(c);
		return -1;
	}
#endif
	c->phase = phase;
	for (int d = 0; d < c->ndev; d++, started++)
		if (pthread_create(&th[d], NULL, thread_main, &c->g[d]) != 0) {
			cuda_fail(&c->g[d], "cannot start its thread");
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
	cuda_chan_abort(c);
	if (failed >= 0)
		*e = c->g[failed].err;
	else
		err_set(e, ERR_RUNTIME, "the cuda backend stopped without naming a failure");
	return -1;
}

static int iterate(struct cuda_exec *c, struct err *e);

/* The phases of open on every device: set up, fit the proxies (ranks sharing a GPU one
 * after the other), connect the channels, then the warm-up iterations, never measured
 * (kplan_warm_ups): one in every mode, so that the first measured iteration finds the
 * clocks up, cuBLAS's algorithms chosen and NCCL's connections made; with fitted proxies
 * two, each followed by a refit under a real iteration's load (not when devices share a
 * GPU: there each op's time includes the others'). */
static int open_phases(struct cuda_exec *c, struct err *e)
{
	bool refit = c->o.gemm_tflops <= 0 && !c->o.works && c->gpus_used == c->ndev;

	if (all_gpus(c, gpu_setup, e) < 0)
		return -1;
	for (int r = 0; r < (c->me >= 0 && c->gpus_used < c->ndev ? c->ndev : 1); r++) {
		c->fit_turn = c->me >= 0 && c->gpus_used < c->ndev ? r : -1;
		if (all_gpus(c, cuda_proxy_fit, e) < 0)
			return -1;
	}
	if (all_gpus(c, cuda_chan_connect, e) < 0)
		return -1;
	c->warming = true;
	for (int round = 0; round < kplan_warm_ups(c->o.works ? KPLAN_ARCHITECTURE : KPLAN_FITTED, refit); round++)
		if (iterate(c, e) < 0 || (refit && all_gpus(c, cuda_proxy_refit, e) < 0))
			return -1;
	c->warming = false;
	return 0;
}

/* Per GPU this process uses, the stream and event of each iteration's reference; the
 * pinned slots of the transfers' checks. -1 with e set. */
static int open_refs(struct cuda_exec *c, int local_gpu, struct err *e)
{
	size_t slots = (size_t)(c->x->nxfers + 1) * SLOT_BYTES;

	for (int i = 0; i < c->ngpu; i++) {
		cudaError_t r;

		if (c->me >= 0 && i != local_gpu)
			continue;
		if ((r = cudaSetDevice(i)) != cudaSuccess ||
		    (r = cudaStreamCreateWithFlags(&c->ref_stream[i], cudaStreamNonBlocking)) != cudaSuccess ||
		    (r = cudaEventCreate(&c->ref[i])) != cudaSuccess)
			return err_set(e, ERR_RUNTIME, "GPU %d: %s", i, cudaGetErrorString(r));
	}
	if (cudaMallocHost((void **)&c->check, slots) != cudaSuccess)
		return err_set(e, ERR_RUNTIME, "cannot allocate %zu bytes of pinned host memory", slots);
	return 0;
}

/* The run's host arrays (false: out of host memory). */
static bool alloc_run(struct cuda_exec *c, const struct exec_program *x)
{
	c->g = calloc((size_t)c->ndev, sizeof(*c->g));
	c->chan_of = malloc((size_t)c->ndev * c->ndev * sizeof(int));
	c->ch = calloc((size_t)c->ndev * c->ndev, sizeof(*c->ch));
	c->xf_send = calloc((size_t)(x->nxfers + 1), sizeof(cudaEvent_t));
	c->xf_read = calloc((size_t)(x->nxfers + 1), sizeof(cudaEvent_t));
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
	return c->g && c->chan_of && c->ch && c->xf_send && c->xf_read && c->xf_begin && c->xf_end && c->xf_send_ms &&
	       c->xf_begin_ms && c->xf_end_ms && c->posted && c->slot && c->hdr && c->pending && c->ref_stream && c->ref &&
	       c->gpu_index && c->gpu_name && c->util && c->mem;
}


int cuda_exec_fail_ranks(struct err *e)
{
#ifdef HAVE_MPI
	return world_agree(true, e);
#else
	(void)e;
	return -1;
#endif
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
	/* before CUDA makes a context: a hardware queue per stream (up to CUDA's 32), so that
	 * no channel's NCCL kernel waits behind another stream's work (kplan.h); a value the
	 * user set wins */
	setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
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
#ifdef HAVE_MPI
	if (c->me >= 0 && !cuda_world_alloc(c)) {
		err_set(e, ERR_RUNTIME, "out of host memory");
		failed = true;
	}
#endif
	if (!alloc_run(c, x)) {
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
	if (open_refs(c, local_gpu, e) < 0)
		failed = true;
	cuda_chan_plan(c);
#ifdef HAVE_MPI
	if (c->me >= 0)
		cuda_world_identify(c, local_gpu);   /* collective: the channels' kinds */
#endif
	cuda_chan_ctas(c);
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
	if (failed || open_phases(c, e) < 0) {
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
			cuda_fail(&c->g[c->me], "cannot record the reference event");   /* then agree */
		}
	return all_gpus(c, gpu_iterate, e);
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
	if (c->me >= 0 && (world_agree(failed, e) < 0 || cuda_world_gather(c, t, e) < 0)) {
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

/* The host arrays of GPU g's state (the device's own are freed with its context). */
static void gpu_free_host(struct gpu *g)
{
	free(g->op_start);
	free(g->op_end);
	free(g->launch_end);
	free(g->shape);
	free(g->stash);
	free(g->ks);
	free(g->k_first);
}

void cuda_exec_close(struct cuda_exec *c)
{
	if (!c)
		return;
	cuda_chan_close(c);
	for (int d = 0; c->g && d < c->ndev; d++) {
		struct gpu *g = &c->g[d];

		if (g->gpu < 0 || !g->compute || cudaSetDevice(g->gpu) != cudaSuccess) {
			gpu_free_host(g);
			continue;
		}
		if (g->blas)
			cublasDestroy(g->blas);
		cudaFree(g->x);
		cudaFree(g->w);
		cudaFree(g->y);
		cuda_core_free(g);
		cudaFree(g->work);
		for (int i = 0; i < g->nops; i++) {
			if (g->op_start && g->op_start[i])
				cudaEventDestroy(g->op_start[i]);
			if (g->op_end && g->op_end[i])
				cudaEventDestroy(g->op_end[i]);
		}
		if (g->compute)
			cudaStreamDestroy(g->compute);
		gpu_free_host(g);
	}
	for (int k = 0; c->x && k < c->x->nxfers; k++) {
		if (c->xf_send && c->xf_send[k])
			cudaEventDestroy(c->xf_send[k]);
		if (c->xf_read && c->xf_read[k])
			cudaEventDestroy(c->xf_read[k]);
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
	free(c->xf_read);
	free(c->xf_begin);
	free(c->xf_end);
	free(c->xf_send_ms);
	free(c->xf_begin_ms);
	free(c->xf_end_ms);
	pthread_mutex_destroy(&c->fit_lock);
	free(c);
}
