/*
 * cuda_chan — the channels of the cuda backend (see cuda_impl.h).
 *
 * The one idea: NCCL matches a pair's point-to-point operations in issue order and a
 * stream runs them in order, so one communicator and one stream per directed pair of
 * devices gives exactly the channels of the protocol (and of the emulator) — the k-th
 * send from a to b meets the k-th receive, and pairs never block each other. Not one
 * communicator per process group: NCCL serializes a communicator's operations, and the
 * early receives would then hold back sends still in flight (kplan.h says how often,
 * and the care several communicators take: capped CTAs, a hardware queue per stream). A send
 * waits (cudaStreamWaitEvent) for the op that produced it, an op waits for the receives
 * it consumes; nothing else is ordered. Communicators are non-blocking and created, then
 * connected with a one-byte exchange, in one global order of the pairs, so setup cannot
 * deadlock either.
 *
 * Each side of a channel has its own buffer of the channel's largest transfer: transfers
 * of different channels run at once and each must arrive intact. Every byte of a transfer
 * is checked: the host writes its tagged header (payload.h), the sender's GPU fills the
 * rest with the tag's stream and puts the checksum of it all in the header (cuda_work.h,
 * xsum.h), on the channel's stream before the send waits for its producer, so that it
 * overlaps the producer's compute; after the receive the receiver's GPU adds up the
 * checksum of everything that arrived, and the host reads back the header and that sum
 * and checks them once the iteration is done. The receiver's checksum runs after the
 * arrival's end event, so the consuming op does not wait for it. (Built without nvcc the
 * GPU has no such kernels: only the header is written and checked.)
 *
 * Two devices of one process on one GPU (--share-gpus) cannot share an NCCL communicator:
 * their channel is local, and the sender moves the bytes with a device copy on its own
 * stream and reads their head and checksum back, so that its next send cannot overwrite
 * them before they arrived; a host thread can only wait for an event once the other
 * thread recorded it, so each such transfer has a flag the sender raises after recording,
 * and the receiver waits for it while enqueueing (a subset of the waits the protocol
 * already proved free of cycles). The receiver checks those read-backs after waiting for
 * its own streams only, so its side of the channel's stream waits for the sender's event
 * recorded after them (xf_read): without it the check could read the slot before the
 * sender's copies landed. Two MPI ranks on one GPU: the channel is staged — the sender
 * posts an MPI message with the transfer's header once its producer finished (polled,
 * never waited for), the receiver checks its tag right before the consuming op and copies
 * the bytes on its GPU to time the move (the bytes themselves never leave the GPU, so
 * their checksum is not checked there).
 */
#include "config.h"
#include "exec/cuda_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/payload.h"
#ifdef HAVE_NVCC
#include "exec/cuda_work.h"
#endif
#ifdef HAVE_MPI
#include "exec/world.h"
#endif

/* CTAs per communicator: the busiest GPU's channel ends share half its SMs (kplan.h). As
 * ranks each knows only its own GPU: the fewest SMs a GPU has here, and the worst case of
 * channel ends on one GPU (every device's, when ranks share GPUs). */
void cuda_chan_ctas(struct cuda_exec *c)
{
	int sms = 1 << 30, most = 0, *ends = calloc((size_t)c->ndev, sizeof(int));

	for (int i = 0; i < c->info.count; i++)
		if (c->info.dev[i].sm_count > 0 && c->info.dev[i].sm_count < sms)
			sms = c->info.dev[i].sm_count;
	if (sms == 1 << 30)
		sms = 132;
	for (int i = 0; ends && i < c->nchan; i++)
		if (c->ch[i].kind == CH_NCCL) {
			/* ends per GPU: devices on one GPU (shared) add up; as ranks, per device */
			int ga = c->me < 0 ? c->g[c->ch[i].a].gpu : c->ch[i].a, gb = c->me < 0 ? c->g[c->ch[i].b].gpu : c->ch[i].b;

			if (ga >= 0 && ga < c->ndev)
				ends[ga]++;
			if (gb >= 0 && gb < c->ndev)
				ends[gb]++;
		}
	for (int d = 0; ends && d < c->ndev; d++)
		most = ends[d] > most ? ends[d] : most;
	if (!ends || (c->me >= 0 && c->gpus_used < c->ndev))
		most = 2 * c->nchan;   /* unknown or shared among ranks: all of them on one GPU */
	free(ends);
	c->nccl_ctas = kplan_nccl_ctas(sms, most);
}

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
		ch->bufsz = PAYLOAD_MIN;
		ch->kind = c->me < 0 && c->g[ch->a].gpu == c->g[ch->b].gpu ? CH_LOCAL : CH_NCCL;
	}
	for (int k = 0; k < x->nxfers; k++) {
		struct chan *ch = &c->ch[c->chan_of[x->xfers[k].src * D + x->xfers[k].dst]];

		if (x->xfers[k].bytes > ch->bufsz)
			ch->bufsz = x->xfers[k].bytes;
	}
}

/* The bytes transfer xf moves: its own, at least a header. */
static size_t xfer_len(const struct exec_xfer *xf)
{
	return xf->bytes > PAYLOAD_MIN ? (size_t)xf->bytes : PAYLOAD_MIN;
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
		if (sd == 1) {
			CUDACHECK(g, cudaMalloc(&ch->sum, sizeof(uint64_t)));
			CUDACHECK(g, cudaMemsetAsync(ch->sum, 0, sizeof(uint64_t), g->compute));
		}
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
		cfg.minCTAs = cfg.maxCTAs = c->nccl_ctas;   /* kplan.h: every channel's kernel resident */
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

/* The header of transfer k in this iteration, into its pinned send slot (injected: another
 * microbatch's); *seed gets the seed of the stream that follows it. */
static unsigned char *fill_header(struct cuda_exec *c, int k, uint64_t *seed)
{
	const struct exec_xfer *xf = &c->x->xfers[k];
	unsigned char *slot = c->check + (size_t)k * SLOT_BYTES + SLOT_SENT;
	struct payload_tag t = { (uint32_t)c->generation, xf->producer };

	if (k == c->o.misroute_xfer && !c->warming)
		payload_misroute(&t, c->p->microbatches);
	payload_header(slot, xfer_len(xf), &t);
	*seed = payload_tag_hash(&t);
	return slot;
}

/* Whether transfer k has a byte flipped on the way (--corrupt-xfer). */
static bool corrupt(const struct cuda_exec *c, int k)
{
	return k == c->o.corrupt_xfer && !c->warming;
}

/* Transfer k as it arrived (the header and, with_sum, the checksum the receiver's GPU
 * computed, in its pinned slot) against what it must be. */
static int check_arrival(struct gpu *g, int k, bool with_sum)
{
	struct cuda_exec *c = g->c;
	const struct exec_xfer *xf = &c->x->xfers[k];
	struct payload_tag want = { (uint32_t)c->generation, xf->producer };
	const unsigned char *slot = c->check + (size_t)k * SLOT_BYTES;
	char why[160], t1[ACTION_TEXT_MAX], t2[ACTION_TEXT_MAX];
	uint64_t sum;

	memcpy(&sum, slot + SLOT_SUM, sizeof(sum));
#ifndef HAVE_NVCC
	with_sum = false;   /* no checksum kernel: the header alone */
#endif
	if (payload_check_head(slot + SLOT_HEAD, xfer_len(xf), with_sum ? &sum : NULL, &want, why, sizeof(why)) == 0)
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
			memcpy(c->hdr[k].payload, c->check + (size_t)k * SLOT_BYTES + SLOT_SENT, PAYLOAD_MIN);
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
	memcpy(c->check + (size_t)k * SLOT_BYTES + SLOT_HEAD, c->hdr[k].payload, PAYLOAD_MIN);
	if (check_arrival(g, k, false) < 0)
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

/* Enqueues on stream s the checksum of the n bytes at buf into the channel's sum, and the
 * read-back of their header and that sum into transfer k's slot. */
static int read_back(struct gpu *g, struct chan *ch, cudaStream_t s, int k, const void *buf, size_t n)
{
	unsigned char *slot = g->c->check + (size_t)k * SLOT_BYTES;

#ifdef HAVE_NVCC
	int r = cuda_xsum(s, buf, n, ch->sum);

	if (r != 0)
		return cuda_fail(g, "%s:%d: cuda_xsum: %s", __FILE__, __LINE__, cudaGetErrorString((cudaError_t)r));
	CUDACHECK(g, cudaMemcpyAsync(slot + SLOT_SUM, ch->sum, sizeof(uint64_t), cudaMemcpyDeviceToHost, s));
#else
	(void)ch;
	(void)n;
#endif
	CUDACHECK(g, cudaMemcpyAsync(slot + SLOT_HEAD, buf, PAYLOAD_MIN, cudaMemcpyDeviceToHost, s));
	return 0;
}

/* Enqueues on stream s the data of transfer k into buf (n bytes): its header from the host,
 * the stream and the checksum by the GPU, and an injected flipped byte. */
static int fill_data(struct gpu *g, cudaStream_t s, int k, void *buf, size_t n)
{
	uint64_t seed;
	unsigned char *slot = fill_header(g->c, k, &seed);

	CUDACHECK(g, cudaMemcpyAsync(buf, slot, PAYLOAD_MIN, cudaMemcpyHostToDevice, s));
#ifdef HAVE_NVCC
	{
		int r = cuda_payload_fill(s, buf, n, seed);

		if (r == 0 && corrupt(g->c, k))   /* in the middle of the data, past any header */
			r = cuda_flip_byte(s, (char *)buf + n / 2);
		if (r != 0)
			return cuda_fail(g, "%s:%d: filling transfer %d: %s", __FILE__, __LINE__, k,
			                 cudaGetErrorString((cudaError_t)r));
	}
#else
	(void)seed;
	(void)n;
	if (corrupt(g->c, k)) {   /* the header is all there is to flip */
		slot[0] ^= 0x10;
		CUDACHECK(g, cudaMemcpyAsync(buf, slot, PAYLOAD_MIN, cudaMemcpyHostToDevice, s));
	}
#endif
	return 0;
}

int cuda_chan_send(struct gpu *g, const struct exec_item *it, cudaEvent_t last)
{
	struct cuda_exec *c = g->c;
	const struct exec_xfer *xf = &c->x->xfers[it->xfer];
	struct chan *ch = &c->ch[c->chan_of[xf->src * c->ndev + xf->dst]];
	size_t n = xfer_len(xf);

	if (ch->kind == CH_STAGED) {
		/* only the header travels (over MPI) */
		uint64_t seed;
		unsigned char *slot = fill_header(c, it->xfer, &seed);

		if (corrupt(c, it->xfer))
			slot[0] ^= 0x10;
	} else if (fill_data(g, ch->stream[0], it->xfer, ch->buf[0], n) < 0) {
		return -1;
	}
	if (last)   /* the data exists once its producer ran */
		CUDACHECK(g, cudaStreamWaitEvent(ch->stream[0], last, 0));
	CUDACHECK(g, cudaEventRecord(c->xf_send[it->xfer], ch->stream[0]));
	if (ch->kind == CH_LOCAL) {
		/* the sender moves the bytes and reads their header and checksum back, on its own
		 * stream: the next send cannot overwrite them before they arrived */
		CUDACHECK(g, cudaEventRecord(c->xf_begin[it->xfer], ch->stream[0]));
		CUDACHECK(g, cudaMemcpyAsync(ch->buf[1], ch->buf[0], n, cudaMemcpyDeviceToDevice, ch->stream[0]));
		CUDACHECK(g, cudaEventRecord(c->xf_end[it->xfer], ch->stream[0]));
		if (read_back(g, ch, ch->stream[0], it->xfer, ch->buf[1], n) < 0)
			return -1;
		CUDACHECK(g, cudaEventRecord(c->xf_read[it->xfer], ch->stream[0]));
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
	size_t n = xfer_len(xf);

	if (ch->kind == CH_STAGED) {
#ifdef HAVE_MPI
		world_irecv(it->xfer, &c->hdr[it->xfer], sizeof(c->hdr[it->xfer]), xf->src,
		            TAG_DATA + c->slot[it->xfer] % TAG_SPAN);
#endif
		return 0;
	}
	if (ch->kind == CH_LOCAL) {
		/* the sender recorded the copy's events (see above); the receiver's own stream of
		 * the channel waits for the read-back of the header and checksum the sender
		 * enqueued, so that waiting for its own streams (cuda_wait_idle) before
		 * cuda_chan_check_arrivals covers them: it must not read the slot before they land */
		if (wait_posted(g, it->xfer) < 0)
			return -1;
		CUDACHECK(g, cudaStreamWaitEvent(ch->stream[1], c->xf_read[it->xfer], 0));
		return 0;
	}
	CUDACHECK(g, cudaEventRecord(c->xf_begin[it->xfer], ch->stream[1]));
	NCCLCHECK(g, &ch->comm[1], ncclRecv(ch->buf[1], n, ncclInt8, 0, ch->comm[1], ch->stream[1]));
	CUDACHECK(g, cudaEventRecord(c->xf_end[it->xfer], ch->stream[1]));
	/* after the arrival's end: the consuming op does not wait for the check */
	return read_back(g, ch, ch->stream[1], it->xfer, ch->buf[1], n);
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

	/* every transfer that arrived over NCCL or a device copy: its header and the checksum
	 * of all its bytes, as they arrived (staged ones' headers were checked on arrival) */
	for (int i = x->start[d]; i < x->start[d + 1]; i++) {
		const struct exec_item *it = &x->items[i];

		if (it->kind == EXEC_RECV && c->ch[c->chan_of[x->xfers[it->xfer].src * c->ndev + d]].kind != CH_STAGED &&
		    check_arrival(g, it->xfer, true) < 0)
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
				if (s == 1 && c->ch[i].sum)
					cudaFree(c->ch[i].sum);
			}
		}
	if (c->stagebuf)
		cudaFree(c->stagebuf);
	if (c->check)
		cudaFreeHost(c->check);
}
