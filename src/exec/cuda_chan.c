/*
 * cuda_chan — the channels of the cuda backend (see cuda_impl.h).
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
 * Each side of a channel has its own buffer of the channel's largest transfer: transfers
 * of different channels run at once and each must arrive intact, because its head
 * carries the tagged, checksummed payload (payload.h) that the receiver reads back after
 * the receive and checks once the iteration is done.
 *
 * Two devices of one process on one GPU (--share-gpus) cannot share an NCCL communicator:
 * their channel is local, and the sender moves the bytes with a device copy on its own
 * stream and reads their head back, so that its next send cannot overwrite them before
 * they arrived; a host thread can only wait for an event once the other thread recorded
 * it, so each such transfer has a flag the sender raises after recording, and the
 * receiver waits for it while enqueueing (a subset of the waits the protocol already
 * proved free of cycles). Two MPI ranks on one GPU: the channel is staged — the sender
 * posts an MPI header with the payload once its producer finished (polled, never waited
 * for), the receiver checks it right before the consuming op and copies the bytes on its
 * GPU to time the move.
 */
#include "config.h"
#include "exec/cuda_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/payload.h"
#ifdef HAVE_MPI
#include "exec/world.h"
#endif

void cuda_chan_plan(struct cuda_exec *c)
{
	const struct exec_program *x = c->x;
	int D = c->ndev;

	for (int q = 0; q < D * D; q++)
		c->chan_of[q] = -1;
	/* every directed pair with a transfer, numbered in (a, b) order */
	for (int k = 0; k < x->nxfers; k++)
		c->chan_of[x->xfers[k].src * D + x->xfers[k].dst] = 0;
	for (int q = 0; q < D * D; q++) {
		struct chan *ch;

		if (c->chan_of[q] < 0)
			continue;
		c->chan_of[q] = c->nchan;
		ch = &c->ch[c->nchan++];
		ch->a = q / D;
		ch->b = q % D;
		ch->bufsz = CHECK_BYTES;
		ch->kind = c->me < 0 && c->g[ch->a].gpu == c->g[ch->b].gpu ? CH_LOCAL : CH_NCCL;
	}
	for (int k = 0; k < x->nxfers; k++) {
		struct chan *ch = &c->ch[c->chan_of[x->xfers[k].src * D + x->xfers[k].dst]];

		if (x->xfers[k].bytes > ch->bufsz)
			ch->bufsz = x->xfers[k].bytes;
	}
}

int cuda_chan_alloc(struct gpu *g)
{
	struct cuda_exec *c = g->c;

	for (int i = 0; i < c->nchan; i++) {
		struct chan *ch = &c->ch[i];
		int sd = cuda_side(ch, g->dev);

		if (sd < 0)
			continue;
		CUDACHECK(g, cudaMalloc(&ch->buf[sd], ch->bufsz));
		CUDACHECK(g, cudaMemsetAsync(ch->buf[sd], 0, ch->bufsz, g->compute));
	}
	for (int i = 0; i < c->nchan && !c->stagebuf; i++)
		if (c->ch[i].kind == CH_STAGED && c->ch[i].b == g->dev)
			CUDACHECK(g, cudaMalloc(&c->stagebuf, g->recvsz));
	return 0;
}

/* Phase 2, per GPU: its communicators and a one-byte exchange on each, in the global
 * order of the channels, so no two threads wait on each other in opposite orders. */
int cuda_chan_connect(struct gpu *g)
{
	struct cuda_exec *c = g->c;

	CUDACHECK(g, cudaSetDevice(g->gpu));
	for (int i = 0; i < c->nchan; i++) {
		struct chan *ch = &c->ch[i];
		int s = cuda_side(ch, g->dev);
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
		if (cuda_wait_idle(g, "connecting") < 0)
			return -1;
	}
	return 0;
}

/* A local receive: waits until the sender enqueued the send of transfer k in this
 * iteration (it recorded the event the copy waits for). */
static int wait_posted(struct gpu *g, int k)
{
	struct cuda_exec *c = g->c;
	double deadline = clock_now_s() + c->o.timeout_s;

	while (atomic_load(&c->posted[k]) != c->generation) {
		if (atomic_load(&c->abort))
			return -1;
		if (clock_now_s() > deadline)
			return cuda_fail(g, "device %d never sent transfer %d (waited %g s)", c->x->xfers[k].src, k,
			                c->o.timeout_s);
		cuda_nap(c);
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

	if (k == c->o.misroute_xfer && !c->warming)
		payload_misroute(&t, c->p->microbatches);
	payload_fill(slot, len, &t);
	if (k == c->o.corrupt_xfer && !c->warming)
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
	return cuda_fail(g, "received from device %d the output of %s for %s (transfer %d, iteration %d), but the data %s",
	                xf->src, action_format(&xf->producer, t1), action_format(&xf->consumer, t2), k, c->generation,
	                why);
}

#ifdef HAVE_MPI
/* Staged sends: posts the header of every pending send whose producer has finished. */
void cuda_chan_progress(struct cuda_exec *c)
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
	double deadline = clock_now_s() + c->o.timeout_s;
	char tok[ACTION_TEXT_MAX];

	for (;;) {
		cuda_chan_progress(c);
		if (world_done(k))
			break;
		if (atomic_load(&c->abort))
			return -1;
		if (clock_now_s() > deadline)
			return cuda_fail(g, "waited %g s for the output of %s from device %d: no matching send arrived",
			                c->o.timeout_s, action_format(&xf->producer, tok), xf->src);
		cuda_nap(c);
	}
	if (c->hdr[k].xfer != k) {
		int got = c->hdr[k].xfer;

		return cuda_fail(g, "received from device %d the output of %s where it expected that of %s (out of order)",
		                 xf->src, got >= 0 && got < c->x->nxfers ? action_format(&c->x->xfers[got].producer, tok) : "?",
		                 action_format(&xf->producer, (char[ACTION_TEXT_MAX]){ 0 }));
	}
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
	double deadline = clock_now_s() + c->o.timeout_s;
	const struct exec_program *x = c->x;

	for (;;) {
		bool done = true;

		cuda_chan_progress(c);
		for (int i = x->start[g->dev]; i < x->start[g->dev + 1] && done; i++)
			if (x->items[i].kind == EXEC_SEND)
				done = world_done(x->items[i].xfer);
		if (done && !c->npending)
			return 0;
		if (atomic_load(&c->abort))
			return -1;
		if (clock_now_s() > deadline)
			return cuda_fail(g, "its staged sends did not complete in %g s", c->o.timeout_s);
		cuda_nap(c);
	}
}
#endif

int cuda_chan_send(struct gpu *g, const struct exec_item *it, cudaEvent_t last)
{
	struct cuda_exec *c = g->c;
	const struct exec_xfer *xf = &c->x->xfers[it->xfer];
	struct chan *ch = &c->ch[c->chan_of[xf->src * c->ndev + xf->dst]];
	size_t n = xf->bytes ? xf->bytes : 1, len = payload_len(xf->bytes, CHECK_BYTES);
	unsigned char *slot = fill_payload(c, it->xfer);

	if (last)   /* the data exists once its producer ran */
		CUDACHECK(g, cudaStreamWaitEvent(ch->stream[0], last, 0));
	CUDACHECK(g, cudaEventRecord(c->xf_send[it->xfer], ch->stream[0]));
	if (ch->kind != CH_STAGED)
		CUDACHECK(g, cudaMemcpyAsync(ch->buf[0], slot, len, cudaMemcpyHostToDevice, ch->stream[0]));
	if (ch->kind == CH_LOCAL) {
		/* the sender moves the bytes and reads their head back, on its own stream: the
		 * next send cannot overwrite them before they arrived */
		CUDACHECK(g, cudaEventRecord(c->xf_begin[it->xfer], ch->stream[0]));
		CUDACHECK(g, cudaMemcpyAsync(ch->buf[1], ch->buf[0], n, cudaMemcpyDeviceToDevice, ch->stream[0]));
		CUDACHECK(g, cudaMemcpyAsync(slot + CHECK_BYTES, ch->buf[1], len, cudaMemcpyDeviceToHost, ch->stream[0]));
		CUDACHECK(g, cudaEventRecord(c->xf_end[it->xfer], ch->stream[0]));
		atomic_store(&c->posted[it->xfer], c->generation);
	} else if (ch->kind == CH_STAGED) {
		c->pending[c->npending++] = it->xfer;
	} else {
		NCCLCHECK(g, &ch->comm[0], ncclSend(ch->buf[0], n, ncclInt8, 1, ch->comm[0], ch->stream[0]));
	}
	return 0;
}

int cuda_chan_recv(struct gpu *g, const struct exec_item *it)
{
	struct cuda_exec *c = g->c;
	const struct exec_xfer *xf = &c->x->xfers[it->xfer];
	struct chan *ch = &c->ch[c->chan_of[xf->src * c->ndev + xf->dst]];
	size_t n = xf->bytes ? xf->bytes : 1;

	if (ch->kind == CH_STAGED) {
#ifdef HAVE_MPI
		world_irecv(it->xfer, &c->hdr[it->xfer], sizeof(c->hdr[it->xfer]), xf->src,
		            TAG_DATA + c->slot[it->xfer] % TAG_SPAN);
#endif
		return 0;
	}
	if (ch->kind == CH_LOCAL)   /* the sender recorded the copy's events (see above) */
		return wait_posted(g, it->xfer);
	CUDACHECK(g, cudaEventRecord(c->xf_begin[it->xfer], ch->stream[1]));
	NCCLCHECK(g, &ch->comm[1], ncclRecv(ch->buf[1], n, ncclInt8, 0, ch->comm[1], ch->stream[1]));
	CUDACHECK(g, cudaMemcpyAsync(c->check + ((size_t)it->xfer * 2 + 1) * CHECK_BYTES, ch->buf[1],
	                             payload_len(xf->bytes, CHECK_BYTES), cudaMemcpyDeviceToHost, ch->stream[1]));
	CUDACHECK(g, cudaEventRecord(c->xf_end[it->xfer], ch->stream[1]));
	return 0;
}

/* What an op waits for before it starts: the data of transfer k. */
int cuda_chan_consume(struct gpu *g, int k)
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

int cuda_chan_finish(struct gpu *g)
{
#ifdef HAVE_MPI
	if (g->c->me >= 0)
		return staged_flush(g);
#else
	(void)g;
#endif
	return 0;
}

int cuda_chan_check_arrivals(struct gpu *g)
{
	struct cuda_exec *c = g->c;
	const struct exec_program *x = c->x;
	int d = g->dev;

	/* the head of every transfer that arrived over NCCL or a device copy, as it arrived
	 * (staged ones were checked on arrival) */
	for (int i = x->start[d]; i < x->start[d + 1]; i++) {
		const struct exec_item *it = &x->items[i];

		if (it->kind == EXEC_RECV && c->ch[c->chan_of[x->xfers[it->xfer].src * c->ndev + d]].kind != CH_STAGED &&
		    check_arrival(g, it->xfer) < 0)
			return -1;
	}
	return 0;
}

/* After a failure: every communicator aborted (its kernels stopped); the handle is broken. */
void cuda_chan_abort(struct cuda_exec *c)
{
	for (int i = 0; i < c->nchan; i++)
		for (int s = 0; s < 2; s++)
			if (c->ch[i].comm[s]) {
				ncclCommAbort(c->ch[i].comm[s]);
				c->ch[i].comm[s] = NULL;
			}
	c->broken = 1;
}

void cuda_chan_close(struct cuda_exec *c)
{
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
	if (c->stagebuf)
		cudaFree(c->stagebuf);
	if (c->check)
		cudaFreeHost(c->check);
}
