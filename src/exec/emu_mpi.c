/*
 * emu_mpi — the emulated backend over MPI (see emu_mpi.h).
 *
 * Each rank runs its own device's program with a virtual clock, as a thread of emu.c
 * does. A send is an MPI_Isend of a small header (the transfer id and the sender's clock
 * when it issued the send) followed by the transfer's tagged payload (payload.h), with
 * tag = its index among the transfers of that pair; a receive is an MPI_Irecv posted at
 * its receive point with the same kind of tag, so the k-th send from a to b meets the
 * k-th receive on b from a, as in NCCL, and a receiver that expected another transfer
 * reports the pair out of order; it checks the payload against the transfer it expects. The receiver alone
 * computes when the data arrives — max(send clock, receive clock, link free) + latency +
 * bytes / bandwidth — because it sees the pair's transfers in matching order and so can
 * keep the link's FIFO itself.
 *
 * Nothing blocks without a deadline: every wait polls its request, an abort message from
 * any rank, and the watchdog. A failing rank sends the abort message to all the others;
 * then every rank meets the others in world_agree() (world.h), so all of them return the
 * same error naming the rank that failed — or, when a rank hung or died unnoticed, the
 * job ends with one line naming it — and rank 0 gathers the measured timeline.
 */
#include "config.h"
#include "exec/emu_mpi.h"

#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/payload.h"
#include "exec/world.h"
#include "clock.h"

enum { TAG_DATA = 1, TAG_SPAN = 30000 };

/* Payload bytes per message: small enough to go eagerly on every transport, so that a
 * send left pending by a failure never reads a buffer already freed. Every message has
 * room for this many (a transfer's payload fills payload_len() of them), so that one
 * received out of order never overflows the receive posted for another. */
#define MSG_PAYLOAD 1024
#define MSG_BYTES (sizeof(struct header) + MSG_PAYLOAD)
enum { ST_OK = 0, ST_FAILED = 1, ST_ABORTED = 2 };

struct header {
	int32_t xfer;
	int32_t pad;
	double send_ms;
};

struct status {
	int32_t status;
	int32_t received;
	char msg[504];
};

struct rank_state {
	const struct plan *p;
	const struct exec_program *x;
	const struct emu_opts *o;
	double *stage_ms;          /* per stage: F, I or B, W on a speed-1 device */
	int me, ndev;
	struct status st;
	int nrecv;                 /* transfers this rank receives */
	int32_t *slot;             /* per transfer: its index among the transfers of its pair */
	MPI_Request *req;          /* per transfer: this rank's send or receive */
	unsigned char **msg;       /* per transfer: the header and payload sent or received */
	uint64_t *stash;           /* per (stage, microbatch) x 2: what ops keep for their backward */
	double *recv_ms;           /* per transfer: clock when the receive was posted */
	double *arrival;           /* per transfer: virtual arrival, -1 until known */
	int32_t **by_slot;         /* per source: the transfers this rank receives, in pair order */
	int *nfrom;                /* per source: how many there are */
	int *processed;            /* per source: how many of them have been matched */
	double *link_free;         /* per source: the link src -> me */
	struct tl_op *ops;
	int nops;
	double *xf;                /* received transfers, 8 numbers each (see gather) */
	int nxf;
};

static bool mpi_started_here;

int emu_mpi_init(int *rank, int *size, struct err *e)
{
	int inited = 0;

	MPI_Initialized(&inited);
	if (!inited) {
		if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
			return err_set(e, ERR_RUNTIME, "cannot initialise MPI");
		mpi_started_here = true;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return 0;
}

void emu_mpi_finalize(void)
{
	int fin = 0;

	MPI_Finalized(&fin);
	if (mpi_started_here && !fin)
		MPI_Finalize();
	mpi_started_here = false;
}

static void fail(struct rank_state *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records this rank's first failure and tells every other rank to stop. */
static void fail(struct rank_state *r, const char *fmt, ...)
{
	va_list ap;

	if (r->st.status != ST_OK)
		return;
	va_start(ap, fmt);
	vsnprintf(r->st.msg, sizeof(r->st.msg), fmt, ap);
	va_end(ap);
	r->st.status = ST_FAILED;
	world_abort_others();
}

/* True once another rank has asked everyone to stop (or this one failed). */
static bool stopped(struct rank_state *r)
{
	if (r->st.status != ST_OK)
		return true;
	if (world_abort_seen())
		r->st.status = ST_ABORTED;
	return r->st.status != ST_OK;
}

/* Polls *req until it completes (0), the run stops or the watchdog fires (-1). */
static int wait_req(struct rank_state *r, MPI_Request *req, const char *what)
{
	double deadline = clock_now_s() + r->o->timeout_s, pause = 20e-6;

	for (;;) {
		int done = 0;

		MPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (done)
			return 0;
		if (stopped(r))
			return -1;
		if (clock_now_s() > deadline) {
			fail(r, "device %d waited %g s for %s (a deadlock or a dead peer)", r->me, r->o->timeout_s, what);
			return -1;
		}
		clock_nap_s(pause);
		pause = fmin(pause * 2, 1e-3);
	}
}

/* Matches the receives from src in pair order up to and including slot k. */
static int match_upto(struct rank_state *r, int src, int k)
{
	const struct link *l = cluster_link(&r->p->cluster, src, r->me);

	while (r->processed[src] <= k) {
		int32_t id = r->by_slot[src][r->processed[src]];
		const struct exec_xfer *xf = &r->x->xfers[id];
		char t1[ACTION_TEXT_MAX], t2[ACTION_TEXT_MAX], what[96];
		double start, wire;
		int32_t got;
		struct header h;
		struct payload_tag want = { (uint32_t)r->o->iter, xf->producer };
		char why[160];

		snprintf(what, sizeof(what), "the output of %s from device %d", action_format(&xf->producer, t1), src);
		if (wait_req(r, &r->req[id], what) < 0)
			return -1;
		memcpy(&h, r->msg[id], sizeof(h));
		got = h.xfer;
		if (got != id) {
			fail(r, "device %d received from device %d the output of %s where it expected that of %s "
			     "(transfer %d between them is out of order)", r->me, src,
			     got >= 0 && got < r->x->nxfers ? action_format(&r->x->xfers[got].producer, t2) : "?",
			     action_format(&xf->producer, t1), r->processed[src]);
			return -1;
		}
		if (payload_check(r->msg[id] + sizeof(h), payload_len(xf->bytes, MSG_PAYLOAD), &want, why, sizeof(why)) < 0) {
			fail(r, "device %d received from device %d the output of %s for %s (transfer %d, iteration %d), but "
			     "the data %s", r->me, src, action_format(&xf->producer, t1), action_format(&xf->consumer, t2), id,
			     r->o->iter, why);
			return -1;
		}
		free(r->msg[id]);
		r->msg[id] = NULL;
		start = fmax(fmax(h.send_ms, r->recv_ms[id]), r->link_free[src]);
		wire = link_wire_ms(l, xf->bytes);
		r->link_free[src] = start + wire;
		r->arrival[id] = start + link_latency_ms(l) + wire;
		{
			double *v = &r->xf[8 * r->nxf++];

			v[0] = src;
			v[1] = r->me;
			v[2] = xf->producer.stage;
			v[3] = xf->producer.mb;
			v[4] = xf->producer.kind == OP_F ? XFER_ACT : XFER_GRAD;
			v[5] = start;
			v[6] = r->arrival[id];
			v[7] = (double)xf->bytes;
		}
		r->processed[src]++;
		r->st.received++;
	}
	return 0;
}

static void run_program(struct rank_state *r)
{
	const struct exec_program *x = r->x;
	const struct plan *p = r->p;
	int d = r->me, ops = 0;
	double clock = 0;

	for (int i = x->start[d]; i < x->start[d + 1] && !stopped(r); i++) {
		const struct exec_item *it = &x->items[i];

		if (it->kind == EXEC_RECV) {
			const struct exec_xfer *xf = &x->xfers[it->xfer];

			r->recv_ms[it->xfer] = clock;
			if (!(r->msg[it->xfer] = malloc(MSG_BYTES))) {
				fail(r, "device %d: out of host memory for the data of transfer %d", d, it->xfer);
				return;
			}
			MPI_Irecv(r->msg[it->xfer], (int)MSG_BYTES, MPI_BYTE, xf->src, TAG_DATA + r->slot[it->xfer] % TAG_SPAN,
			          MPI_COMM_WORLD, &r->req[it->xfer]);
		} else if (it->kind == EXEC_SEND) {
			const struct exec_xfer *xf = &x->xfers[it->xfer];
			size_t len = payload_len(xf->bytes, MSG_PAYLOAD);
			struct header h = { it->xfer, 0, clock };
			struct payload_tag t = { (uint32_t)r->o->iter, xf->producer };

			if (!(r->msg[it->xfer] = calloc(1, MSG_BYTES))) {
				fail(r, "device %d: out of host memory for the data of transfer %d", d, it->xfer);
				return;
			}
			/* injected: another microbatch's data, or a flipped byte */
			if (it->xfer == r->o->misroute_xfer)
				payload_misroute(&t, p->microbatches);
			memcpy(r->msg[it->xfer], &h, sizeof(h));
			payload_fill(r->msg[it->xfer] + sizeof(h), len, &t);
			if (it->xfer == r->o->corrupt_xfer)
				r->msg[it->xfer][sizeof(h) + len / 2] ^= 0x10;
			MPI_Isend(r->msg[it->xfer], (int)MSG_BYTES, MPI_BYTE, xf->dst,
			          TAG_DATA + r->slot[it->xfer] % TAG_SPAN, MPI_COMM_WORLD, &r->req[it->xfer]);
		} else {
			const struct action *a = &it->op;
			double dur, start;

			/* wait only for the data this op consumes (and, heading a pair, its partner's) */
			for (int half = 0; half < 2; half++) {
				int32_t k = half ? it->xfer2 : it->xfer;

				if (k < 0)
					continue;
				if (match_upto(r, x->xfers[k].src, r->slot[k]) < 0)
					return;
				clock = fmax(clock, r->arrival[k]);
			}
			if (d == r->o->kill_device && ops == r->o->kill_after_ops) {
				if (r->o->kill_how == EMU_KILL_CRASH)
					raise(SIGKILL);   /* dies without a word, as a crashed process does */
				if (r->o->kill_how == EMU_KILL_HANG)
					for (;;)          /* stops answering, as a hung process does */
						clock_nap_s(1);
				fail(r, "worker %d died after %d ops (injected failure)", d, ops);
				return;
			}
			{
				char why[96];

				if (payload_stash(r->stash, p->microbatches, (uint32_t)r->o->iter, a, why, sizeof(why)) < 0) {
					fail(r, "device %d: %s", d, why);
					return;
				}
			}
			dur = emu_op_ms(p, r->stage_ms, r->o, d, a);
			start = clock;
			clock += dur;
			r->ops[r->nops++] = (struct tl_op){ start, clock, a->stage, a->mb, a->kind };
			ops++;
			if (r->o->time_scale > 0) {
				/* occupy the device in wall time too; an abort cuts the nap short */
				double until = clock_now_s() + dur * r->o->time_scale / 1000;

				while (clock_now_s() < until && !stopped(r))
					clock_nap_s(fmin(1e-3, until - clock_now_s()));
			}
		}
	}
	/* every receive is matched and every send delivered before the iteration ends */
	for (int s = 0; s < r->ndev && r->st.status == ST_OK; s++)
		if (r->nfrom[s] && match_upto(r, s, r->nfrom[s] - 1) < 0)
			return;
	for (int k = 0; k < x->nxfers && r->st.status == ST_OK; k++)
		if (x->xfers[k].src == d && r->req[k] != MPI_REQUEST_NULL) {
			char what[64];

			snprintf(what, sizeof(what), "device %d to take transfer %d", x->xfers[k].dst, k);
			if (wait_req(r, &r->req[k], what) < 0)
				return;
		}
}

/* Allocates r's arrays and numbers every transfer of this rank within its pair. */
static int setup(struct rank_state *r)
{
	const struct exec_program *x = r->x;
	int D = r->ndev, d = r->me, nops = 0, nrecv = 0, *nto;
	size_t N = (size_t)(x->nxfers ? x->nxfers : 1);

	r->slot = calloc(N, sizeof(int32_t));
	r->req = malloc(N * sizeof(MPI_Request));
	r->msg = calloc(N, sizeof(*r->msg));
	r->stash = calloc((size_t)r->p->nstages * r->p->microbatches * 2 + 1, sizeof(*r->stash));
	r->recv_ms = calloc(N, sizeof(double));
	r->arrival = malloc(N * sizeof(double));
	r->by_slot = calloc((size_t)D, sizeof(int32_t *));
	r->nfrom = calloc((size_t)D, sizeof(int));
	r->processed = calloc((size_t)D, sizeof(int));
	r->link_free = calloc((size_t)D, sizeof(double));
	r->stage_ms = calloc((size_t)r->p->nstages * 3 + 1, sizeof(double));
	nto = calloc((size_t)D, sizeof(int));
	if (!r->slot || !r->req || !r->msg || !r->stash || !r->recv_ms || !r->arrival || !r->by_slot ||
	    !r->nfrom || !r->processed || !r->link_free || !r->stage_ms || !nto) {
		free(nto);
		return -1;
	}
	for (int s = 0; s < r->p->nstages; s++)
		plan_stage_ms(r->p, s, &r->stage_ms[s * 3]);
	for (size_t k = 0; k < N; k++) {
		r->req[k] = MPI_REQUEST_NULL;
		r->arrival[k] = -1;
	}
	for (int i = x->start[d]; i < x->start[d + 1]; i++) {
		const struct exec_item *it = &x->items[i];

		if (it->kind == EXEC_COMPUTE)
			nops++;
		else if (it->kind == EXEC_SEND)
			r->slot[it->xfer] = nto[x->xfers[it->xfer].dst]++;
		else {
			r->slot[it->xfer] = r->nfrom[x->xfers[it->xfer].src]++;
			nrecv++;
		}
	}
	free(nto);
	r->nrecv = nrecv;
	for (int s = 0; s < D; s++)
		if (r->nfrom[s] && !(r->by_slot[s] = malloc((size_t)r->nfrom[s] * sizeof(int32_t))))
			return -1;
	for (int i = x->start[d]; i < x->start[d + 1]; i++) {
		const struct exec_item *it = &x->items[i];

		if (it->kind == EXEC_RECV)
			r->by_slot[x->xfers[it->xfer].src][r->slot[it->xfer]] = it->xfer;
	}
	r->ops = calloc((size_t)(nops ? nops : 1), sizeof(struct tl_op));
	r->xf = calloc((size_t)(nrecv ? nrecv : 1) * 8, sizeof(double));
	return r->ops && r->xf ? 0 : -1;
}

/* Retires every request this rank holds and the abort messages, so that nothing of this
 * iteration is left in flight (a receive is cancelled; a small send has completed). */
static void drain(struct rank_state *r)
{
	for (int k = 0; k < r->x->nxfers; k++) {
		int done = 0;

		if (r->req[k] == MPI_REQUEST_NULL)
			continue;
		MPI_Test(&r->req[k], &done, MPI_STATUS_IGNORE);
		if (done)
			continue;
		if (r->x->xfers[k].dst == r->me)
			MPI_Cancel(&r->req[k]);
		MPI_Request_free(&r->req[k]);
	}
	world_release_slots();
}

/* Rank 0 assembles the timeline from every rank's ops and received transfers. */
static int gather(struct rank_state *r, struct timeline *t)
{
	int D = r->ndev, n[2] = { r->nops, r->nxf }, *counts = calloc((size_t)D * 2, sizeof(int)), rc = 0;
	int *cnt = calloc((size_t)D, sizeof(int));
	double *mine = malloc((size_t)(r->nops ? r->nops : 1) * 5 * sizeof(double)), *all = NULL;
	long total_ops = 0, total_xf = 0;

	if (!mine || !counts || !cnt) {
		/* a collective cannot be left half way: the job ends, saying why */
		free(mine);
		free(counts);
		free(cnt);
		return -1;
	}
	for (int i = 0; i < r->nops; i++) {
		const struct tl_op *o = &r->ops[i];

		mine[5 * i] = o->start_ms;
		mine[5 * i + 1] = o->end_ms;
		mine[5 * i + 2] = o->stage;
		mine[5 * i + 3] = o->mb;
		mine[5 * i + 4] = o->kind;
	}
	/* every rank takes part in the collectives, whatever its local state */
	world_allgather(n, counts, sizeof(n));
	for (int d = 0; d < D; d++) {
		total_ops += counts[2 * d];
		total_xf += counts[2 * d + 1];
	}
	if (r->me == 0) {
		all = malloc((size_t)(total_ops + total_xf + 1) * 8 * sizeof(double));
		t->source = strdup("emu");
		t->ndevices = D;
		t->dev = calloc((size_t)D, sizeof(*t->dev));
		t->xfers = calloc((size_t)(total_xf ? total_xf : 1), sizeof(*t->xfers));
		if (!all || !t->source || !t->dev || !t->xfers)
			rc = -1;
	}
	for (int pass = 0; pass < 2; pass++) {
		int width = pass ? 8 : 5;
		long off = 0;

		for (int d = 0; d < D; d++)
			cnt[d] = counts[2 * d + pass] * width;
		world_gatherv(pass ? r->xf : mine, n[pass] * width, all, cnt);
		if (r->me != 0 || rc != 0)
			continue;
		for (int d = 0; d < D; d++) {
			const double *v = all + off;
			int m = counts[2 * d + pass];

			off += cnt[d];
			if (!pass) {
				struct tl_device *td = &t->dev[d];

				if (!(td->ops = calloc((size_t)(m ? m : 1), sizeof(struct tl_op)))) {
					rc = -1;
					break;
				}
				for (int i = 0; i < m; i++, v += 5)
					td->ops[td->nops++] = (struct tl_op){ v[0], v[1], (int32_t)v[2], (int32_t)v[3],
					                                      (uint8_t)v[4] };
			} else {
				for (int i = 0; i < m; i++, v += 8)
					t->xfers[t->nxfers++] = (struct tl_xfer){ (int)v[0], (int)v[1], (int32_t)v[2],
					                                          (int32_t)v[3], (uint8_t)v[4], v[5], v[6],
					                                          (uint64_t)v[7] };
			}
		}
	}
	free(all);
	free(counts);
	free(cnt);
	free(mine);
	return rc;
}

static void release(struct rank_state *r)
{
	for (int s = 0; r->by_slot && s < r->ndev; s++)
		free(r->by_slot[s]);
	free(r->by_slot);
	free(r->slot);
	free(r->req);
	for (int k = 0; r->msg && k < r->x->nxfers; k++)
		free(r->msg[k]);
	free(r->msg);
	free(r->stash);
	free(r->recv_ms);
	free(r->arrival);
	free(r->nfrom);
	free(r->processed);
	free(r->link_free);
	free(r->stage_ms);
	free(r->ops);
	free(r->xf);
}

int emu_mpi_run(const struct plan *p, const struct exec_program *x, const struct emu_opts *o,
                struct timeline *measured, struct err *e)
{
	struct rank_state r;
	int size = 0, rc = -1;
	bool ready;

	memset(&r, 0, sizeof(r));
	memset(measured, 0, sizeof(*measured));
	MPI_Comm_rank(MPI_COMM_WORLD, &r.me);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != x->ndevices)
		return err_set(e, ERR_INPUT, "the plan has %d devices but %d MPI ranks were started (one per device)",
		               x->ndevices, size);
	r.p = p;
	r.x = x;
	r.o = o;
	r.ndev = x->ndevices;
	ready = setup(&r) == 0;
	if (!ready) {
		/* still meet the others below, so that they stop too */
		r.st.status = ST_FAILED;
		snprintf(r.st.msg, sizeof(r.st.msg), "out of host memory starting the emulated executor");
	} else {
		run_program(&r);
		if (r.st.status == ST_OK && r.st.received != r.nrecv)
			fail(&r, "the run ended with %d of its %d transfers received", r.st.received, r.nrecv);
	}
	if (r.st.status == ST_FAILED)
		err_set(e, ERR_RUNTIME, "%s", r.st.msg);
	if (world_agree(r.st.status == ST_FAILED, e) == 0) {
		if (gather(&r, measured) < 0)
			err_set(e, ERR_RUNTIME, "out of host memory gathering the measured timeline");
		else
			rc = 0;
	}
	if (ready)
		drain(&r);
	else
		world_release_slots();
	if (rc < 0)
		timeline_release(measured);
	release(&r);
	return rc;
}
