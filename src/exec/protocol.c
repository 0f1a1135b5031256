/*
 * protocol — send/receive points for the executor's workers (see protocol.h).
 *
 * Receives are placed by simulated time: before the first op of the receiving device
 * that the simulation ends at or after the moment the data is sent, i.e. posted before
 * the op during which the data leaves, so the transfer starts when its data is ready, as
 * the simulation's overlapped transfers do (posted only at the next op, a transfer waited
 * for the receiver's busy op to end and a tuned plan ran 0.3% slower than simulated).
 * Posting early blocks nothing: a receive waits on its own channel, and its consumer
 * still waits for it. Because a
 * device's sends follow its op order and the receiver's ops are ordered by time, this
 * placement already matches NCCL's per-pair issue order in almost every case; ties,
 * overlapped pairs and hand edits are what exec_repair() is for.
 */
#include "config.h"
#include "protocol.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void exec_release(struct exec_program *x)
{
	free(x->start);
	free(x->items);
	free(x->xfers);
	memset(x, 0, sizeof(*x));
}

static long op_index(const struct plan *p, const struct action *a)
{
	return ((long)a->stage * p->microbatches + a->mb) * 3 + op_kind_slot(a->kind);
}

static const struct exec_xfer *sort_base;

static int by_send_time(const void *a, const void *b)
{
	const struct exec_xfer *x = &sort_base[*(const int32_t *)a], *y = &sort_base[*(const int32_t *)b];

	if (x->send_ms != y->send_ms)
		return x->send_ms < y->send_ms ? -1 : 1;
	return *(const int32_t *)a < *(const int32_t *)b ? -1 : 1;
}

/* exec_build's working arrays: per op slot (op_index) its simulated start and end and the
 * transfer it produces / consumes (-1: none); per transfer its order of arrival at its
 * receiver and whether its receive is posted; per device its transfer count. */
struct build {
	double *start, *end;
	int32_t *produces, *consumes, *incoming;
	bool *posted;
	int *count;
};

static void build_release(struct build *b)
{
	free(b->count); free(b->start); free(b->end); free(b->produces); free(b->consumes); free(b->incoming);
	free(b->posted);
}

/* Every cross-device edge is a transfer: F(s) -> F(s+1), I/B(s) -> I/B(s-1); each sends
 * when its producer ends in the simulation, the head of a pair at the end of the pair
 * (see protocol.h). Returns the count. */
static long list_xfers(const struct plan *p, struct exec_program *x, struct build *b)
{
	long nx = 0;

	for (int s = 0; s < p->nstages; s++)
		for (int m = 0; m < p->microbatches; m++) {
			uint8_t bk = p->split_backward ? OP_I : OP_B;

			if (s + 1 < p->nstages && p->stages[s + 1].device != p->stages[s].device)
				x->xfers[nx++] = (struct exec_xfer){
					p->stages[s].device, p->stages[s + 1].device, { s, m, OP_F, 0 }, { s + 1, m, OP_F, 0 },
					p->model.layers[p->stages[s].last].out_bytes, 0 };
			if (s > 0 && p->stages[s - 1].device != p->stages[s].device)
				x->xfers[nx++] = (struct exec_xfer){
					p->stages[s].device, p->stages[s - 1].device, { s, m, bk, 0 }, { s - 1, m, bk, 0 },
					p->model.layers[p->stages[s - 1].last].out_bytes, 0 };
		}
	x->nxfers = (int)nx;
	for (long i = 0; i < nx; i++) {
		struct exec_xfer *xf = &x->xfers[i];

		xf->send_ms = b->end[op_index(p, &xf->producer)];
		b->produces[op_index(p, &xf->producer)] = (int32_t)i;
		b->consumes[op_index(p, &xf->consumer)] = (int32_t)i;
		b->count[xf->src]++;
		b->count[xf->dst]++;
	}
	for (int d = 0; d < p->ndevices; d++)
		for (int i = p->order_start[d]; i + 1 < p->order_start[d + 1]; i++) {
			const struct action *a = &p->order[i], *nb = a + 1;
			long k = op_index(p, a), kb = op_index(p, nb);

			if (!a->pair || b->produces[k] < 0)
				continue;
			if (p->split_backward && i + 2 < p->order_start[d + 1] && a[2].kind == OP_W && a[2].stage == nb->stage &&
			    a[2].mb == nb->mb)
				kb = op_index(p, &a[2]);
			x->xfers[b->produces[k]].send_ms = b->end[kb];
		}
	return nx;
}

/* Posts the receive of transfer k on device d's program, once. */
static void post_recv(struct build *b, struct exec_item *out, int *n, int32_t k)
{
	if (k >= 0 && !b->posted[k]) {
		b->posted[k] = true;
		out[(*n)++] = (struct exec_item){ EXEC_RECV, { 0, 0, 0, 0 }, k, -1 };
	}
}

/* Device d's program: before each op post the receives whose data the simulation sends
 * by the time the op ends (oldest first) and, late or not, the op's own input; after the
 * op send what it produced. Returns the number of items placed. */
static int place_device(const struct plan *p, struct exec_program *x, struct build *b, long nx, int d)
{
	struct exec_item *out = x->items + x->start[d];
	int n = 0, nin = 0, next = 0;
	int32_t held = -1;     /* the head of a pair's send, held to the end of the pair */
	int held_until = -1;
	int last = p->order_start[d + 1];

	for (long k = 0; k < nx; k++)
		if (x->xfers[k].dst == d)
			b->incoming[nin++] = (int32_t)k;
	sort_base = x->xfers;
	qsort(b->incoming, (size_t)nin, sizeof(int32_t), by_send_time);
	for (int i = p->order_start[d]; i < last; i++) {
		const struct action *a = &p->order[i];
		long k = op_index(p, a);
		int32_t own = b->consumes[k], own2 = -1;
		bool head = a->pair && i + 1 < last;

		if (head)
			own2 = b->consumes[op_index(p, &p->order[i + 1])];
		/* sent before the op ends (strictly: a send at its very end can wait for the
		 * next op, and a tie of zero-time ops can never make a receive wait on data
		 * that needs this op's own output) */
		while (next < nin && (b->posted[b->incoming[next]] || x->xfers[b->incoming[next]].send_ms <= b->start[k] ||
		                      x->xfers[b->incoming[next]].send_ms < b->end[k])) {
			post_recv(b, out, &n, b->incoming[next]);
			next++;
		}
		post_recv(b, out, &n, own);
		post_recv(b, out, &n, own2);
		out[n++] = (struct exec_item){ EXEC_COMPUTE, *a, own, own2 };
		if (b->produces[k] >= 0 && head) {
			const struct action *nb = &p->order[i + 1], *w = i + 2 < last ? &p->order[i + 2] : NULL;

			held = b->produces[k];
			held_until = i + 1;
			if (p->split_backward && w && w->kind == OP_W && w->stage == nb->stage && w->mb == nb->mb)
				held_until = i + 2;
		} else if (b->produces[k] >= 0) {
			out[n++] = (struct exec_item){ EXEC_SEND, { 0, 0, 0, 0 }, b->produces[k], -1 };
		}
		if (held >= 0 && i == held_until) {
			out[n++] = (struct exec_item){ EXEC_SEND, { 0, 0, 0, 0 }, held, -1 };
			held = -1;
		}
	}
	return n;
}

int exec_build(const struct plan *p, const struct timeline *t, struct exec_program *x, struct err *e)
{
	long nslots = (long)p->nstages * p->microbatches * 3, nx, cap;
	struct build b = { NULL, NULL, NULL, NULL, NULL, NULL, NULL };

	memset(x, 0, sizeof(*x));
	if (t->ndevices != p->ndevices)
		return err_set(e, ERR_INPUT, "the timeline has %d devices, the plan %d", t->ndevices, p->ndevices);
	cap = 2L * p->nstages * p->microbatches;
	x->ndevices = p->ndevices;
	x->xfers = calloc((size_t)(cap ? cap : 1), sizeof(*x->xfers));
	x->start = calloc((size_t)p->ndevices + 1, sizeof(int));
	b.count = calloc((size_t)p->ndevices, sizeof(int));
	b.start = calloc((size_t)nslots, sizeof(double));
	b.end = calloc((size_t)nslots, sizeof(double));
	b.produces = malloc((size_t)nslots * sizeof(int32_t));
	b.consumes = malloc((size_t)nslots * sizeof(int32_t));
	b.incoming = malloc((size_t)(cap ? cap : 1) * sizeof(int32_t));
	b.posted = calloc((size_t)(cap ? cap : 1), sizeof(bool));
	if (!x->xfers || !x->start || !b.count || !b.start || !b.end || !b.produces || !b.consumes || !b.incoming ||
	    !b.posted)
		goto oom;
	/* simulated times of every op */
	for (int d = 0; d < t->ndevices; d++)
		for (int i = 0; i < t->dev[d].nops; i++) {
			const struct tl_op *o = &t->dev[d].ops[i];
			struct action a = { o->stage, o->mb, o->kind, 0 };
			long k;

			if (o->stage >= p->nstages || o->mb >= p->microbatches)
				continue;
			k = op_index(p, &a);
			b.start[k] = o->start_ms;
			b.end[k] = o->end_ms;
		}
	for (long k = 0; k < nslots; k++)
		b.produces[k] = b.consumes[k] = -1;
	nx = list_xfers(p, x, &b);
	x->start[0] = 0;
	for (int d = 0; d < p->ndevices; d++)
		x->start[d + 1] = x->start[d] + (p->order_start[d + 1] - p->order_start[d]) + b.count[d];
	x->items = calloc((size_t)(x->start[p->ndevices] ? x->start[p->ndevices] : 1), sizeof(*x->items));
	if (!x->items)
		goto oom;
	for (int d = 0; d < p->ndevices; d++) {
		int n = place_device(p, x, &b, nx, d), want = x->start[d + 1] - x->start[d];

		if (n != want) {
			exec_release(x);
			build_release(&b);
			return err_set(e, ERR_RUNTIME, "device %d: %d of %d protocol items placed", d, n, want);
		}
	}
	build_release(&b);
	return 0;
oom:
	exec_release(x);
	build_release(&b);
	return err_set(e, ERR_RUNTIME, "out of host memory deriving the executor protocol");
}

/* Every transfer's rank among the sends from its src to its dst in the sender's program,
 * and among the receives on its dst from its src in the receiver's: NCCL pairs equal
 * ranks. One pass over the programs; counters are reset only where they were touched. */
static int pair_ranks(const struct exec_program *x, int32_t *send_rank, int32_t *recv_rank)
{
	int D = x->ndevices, *cs = calloc((size_t)D, sizeof(int)), *cr = calloc((size_t)D, sizeof(int));
	int *touched = malloc((size_t)D * sizeof(int));

	if (!cs || !cr || !touched) {
		free(cs);
		free(cr);
		free(touched);
		return -1;
	}
	for (int d = 0; d < D; d++) {
		int nt = 0;

		for (int i = x->start[d]; i < x->start[d + 1]; i++) {
			const struct exec_item *it = &x->items[i];
			const struct exec_xfer *xf;
			int peer;

			if (it->kind == EXEC_COMPUTE)
				continue;
			xf = &x->xfers[it->xfer];
			peer = it->kind == EXEC_SEND ? xf->dst : xf->src;
			if (!cs[peer] && !cr[peer])
				touched[nt++] = peer;
			if (it->kind == EXEC_SEND)
				send_rank[it->xfer] = cs[peer]++;
			else
				recv_rank[it->xfer] = cr[peer]++;
		}
		for (int k = 0; k < nt; k++)
			cs[touched[k]] = cr[touched[k]] = 0;
	}
	free(cs);
	free(cr);
	free(touched);
	return 0;
}

/* The transfers that would meet the wrong partner: send_rank != recv_rank. Fills ranks
 * (nxfers entries each); -1 when out of host memory. */
static long mismatches(const struct exec_program *x, int32_t *send_rank, int32_t *recv_rank)
{
	long bad = 0;

	for (int k = 0; k < x->nxfers; k++)
		send_rank[k] = recv_rank[k] = -1;
	if (pair_ranks(x, send_rank, recv_rank) < 0)
		return -1;
	for (int k = 0; k < x->nxfers; k++)
		bad += send_rank[k] != recv_rank[k];
	return bad;
}

int exec_check(const struct exec_program *x, struct err *e)
{
	int32_t *sr = malloc((size_t)(x->nxfers ? x->nxfers : 1) * sizeof(int32_t));
	int32_t *rr = malloc((size_t)(x->nxfers ? x->nxfers : 1) * sizeof(int32_t));
	long bad = sr && rr ? mismatches(x, sr, rr) : -1;

	if (bad < 0) {
		free(sr);
		free(rr);
		err_set(e, ERR_RUNTIME, "out of host memory checking the transfer order");
		return 1;
	}
	for (int m = 0; m < x->nxfers && bad > 0 && e; m++) {
		const struct exec_xfer *xf = &x->xfers[m];
		char t1[ACTION_TEXT_MAX], t2[ACTION_TEXT_MAX] = "?";

		if (sr[m] == rr[m])
			continue;
		/* what the receiver expects at the sender's rank of m */
		for (int y = 0; y < x->nxfers; y++)
			if (x->xfers[y].src == xf->src && x->xfers[y].dst == xf->dst && rr[y] == sr[m])
				action_format(&x->xfers[y].producer, t2);
		err_set(e, ERR_INFEASIBLE, "transfer %d from device %d to %d: the sender sends the output of %s but "
		        "the receiver expects that of %s", (int)sr[m], xf->src, xf->dst, action_format(&xf->producer, t1), t2);
		break;
	}
	free(sr);
	free(rr);
	return bad > 0x7fffffff ? 0x7fffffff : (int)bad;
}

/* A device's item with the place it takes after the repair: before the item at position
 * `key` (a moved receive: sub 0, in its pair's order) or where it is (sub 1). */
struct placed {
	int32_t key, sub, src, rank;
	struct exec_item it;
};

static int by_place(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->sub != y->sub)
		return x->sub - y->sub;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Every pair's k-th receive must carry the sender's k-th send. The receive of the k-th
 * send moves to just before the earliest receive of sends k, k+1, ... (a suffix minimum
 * of their positions): that is where the walk "move the wanted receive to the current
 * slot" puts it too, it only ever moves earlier, and the pair's receives come out in send
 * order. One sort per device whose items move: O(n log n). */
int exec_repair(struct exec_program *x)
{
	int N = x->nxfers, D = x->ndevices, moved = 0, total = x->start[D];
	size_t n1 = (size_t)(N ? N : 1);
	int32_t *sr = malloc(n1 * sizeof(int32_t)), *rr = malloc(n1 * sizeof(int32_t));
	int32_t *pos = malloc(n1 * sizeof(int32_t)), *key = malloc(n1 * sizeof(int32_t));
	int32_t *order = malloc(n1 * sizeof(int32_t)), *first = calloc((size_t)D * D + 1, sizeof(int32_t));
	bool *dirty = calloc((size_t)D + 1, sizeof(bool));
	struct placed *buf = NULL;

	if (!sr || !rr || !pos || !key || !order || !first || !dirty || mismatches(x, sr, rr) <= 0)
		goto out;
	for (int k = 0; k < N; k++)
		pos[k] = -1;
	for (int i = 0; i < total; i++)
		if (x->items[i].kind == EXEC_RECV)
			pos[x->items[i].xfer] = i;
	/* the transfers grouped by pair (a counting sort), each group in send order */
	for (int k = 0; k < N; k++)
		first[x->xfers[k].src * D + x->xfers[k].dst + 1]++;
	for (int q = 0; q < D * D; q++)
		first[q + 1] += first[q];
	for (int k = 0; k < N; k++)
		order[k] = -1;
	for (int k = 0; k < N; k++) {
		int q = x->xfers[k].src * D + x->xfers[k].dst;

		if (sr[k] >= 0 && first[q] + sr[k] < first[q + 1])
			order[first[q] + sr[k]] = k;
	}
	for (int q = 0; q < D * D; q++) {
		int32_t low = INT32_MAX;

		for (int j = first[q + 1] - 1; j >= first[q]; j--) {
			int k = order[j];

			if (k < 0)
				continue;
			if (pos[k] >= 0 && pos[k] < low)
				low = pos[k];
			key[k] = low;
			if (pos[k] >= 0 && low < pos[k]) {
				dirty[x->xfers[k].dst] = true;
				moved++;
			}
		}
	}
	for (int d = 0; d < D && moved; d++) {
		int n = x->start[d + 1] - x->start[d];

		if (!dirty[d])
			continue;
		if (!buf && !(buf = malloc((size_t)(total ? total : 1) * sizeof(*buf)))) {
			moved = 0;
			break;
		}
		for (int i = 0; i < n; i++) {
			const struct exec_item *it = &x->items[x->start[d] + i];
			int32_t at = x->start[d] + i;

			if (it->kind == EXEC_RECV && sr[it->xfer] >= 0 && key[it->xfer] < at)
				buf[i] = (struct placed){ key[it->xfer], 0, x->xfers[it->xfer].src, sr[it->xfer], *it };
			else
				buf[i] = (struct placed){ at, 1, 0, 0, *it };
		}
		qsort(buf, (size_t)n, sizeof(*buf), by_place);
		for (int i = 0; i < n; i++)
			x->items[x->start[d] + i] = buf[i].it;
	}
out:
	free(sr);
	free(rr);
	free(pos);
	free(key);
	free(order);
	free(first);
	free(dirty);
	free(buf);
	return moved;
}

/* Op slots: (stage, microbatch, F | I or B | W). */
static long slot_of(const struct action *a, int M)
{
	return ((long)a->stage * M + a->mb) * 3 + op_kind_slot(a->kind);
}

/* Where every op runs (its position), then one pass: every receive before its consumer
 * (and before the pair its consumer heads), every send after its producer, every W after
 * its I on the same device. W takes its inputs from the store that I fills, keyed by
 * (stage, microbatch), so the Ws of a stage may run in any order after their Is. O(n). */
int exec_validate(const struct exec_program *x, struct err *e)
{
	int S = 0, M = 0, N = x->nxfers, total = x->start[x->ndevices], rc = 0;
	int32_t *at = NULL, *head = NULL;
	char tok[ACTION_TEXT_MAX], tok2[ACTION_TEXT_MAX];

	for (int i = 0; i < total; i++)
		if (x->items[i].kind == EXEC_COMPUTE) {
			S = x->items[i].op.stage + 1 > S ? x->items[i].op.stage + 1 : S;
			M = x->items[i].op.mb + 1 > M ? x->items[i].op.mb + 1 : M;
		}
	at = malloc((size_t)((long)S * M * 3 + 1) * sizeof(int32_t));
	head = malloc((size_t)(N ? N : 1) * sizeof(int32_t));
	if (!at || !head) {
		rc = err_set(e, ERR_RUNTIME, "out of host memory validating the executor protocol");
		goto out;
	}
	for (long k = 0; k < (long)S * M * 3; k++)
		at[k] = -1;
	for (int k = 0; k < N; k++)
		head[k] = -1;
	for (int i = 0; i < total; i++)
		if (x->items[i].kind == EXEC_COMPUTE) {
			at[slot_of(&x->items[i].op, M)] = i;
			if (x->items[i].xfer2 >= 0 && x->items[i].xfer2 < N)
				head[x->items[i].xfer2] = i;
		}
	for (int d = 0; d < x->ndevices && rc == 0; d++) {
		for (int i = x->start[d]; i < x->start[d + 1] && rc == 0; i++) {
			const struct exec_item *it = &x->items[i];
			const struct exec_xfer *xf;
			const struct action *o;
			long k;

			if (it->kind == EXEC_COMPUTE) {
				struct action in = it->op;

				if (it->op.kind != OP_W)
					continue;
				in.kind = OP_I;
				k = at[slot_of(&in, M)];
				if (k < x->start[d] || k > i)
					rc = err_set(e, ERR_INPUT, "device %d runs %s before %s, whose inputs it takes", d,
					             action_format(&it->op, tok), action_format(&in, tok2));
				continue;
			}
			xf = &x->xfers[it->xfer];
			o = it->kind == EXEC_RECV ? &xf->consumer : &xf->producer;
			k = o->stage >= 0 && o->mb >= 0 && o->stage < S && o->mb < M ? at[slot_of(o, M)] : -1;
			if (it->kind == EXEC_RECV) {
				if (k <= i || k >= x->start[d + 1])
					rc = err_set(e, ERR_RUNTIME, "device %d receives the input of %s after running it", d,
					             action_format(o, tok));
				/* the head of a pair waits for its partner's input too */
				else if (head[it->xfer] >= x->start[d] && head[it->xfer] < i)
					rc = err_set(e, ERR_RUNTIME, "device %d receives the input of %s after its pair started", d,
					             action_format(o, tok));
			} else if (k < x->start[d] || k >= i) {
				rc = err_set(e, ERR_RUNTIME, "device %d sends the output of %s before running it", d,
				             action_format(o, tok));
			}
		}
	}
out:
	free(at);
	free(head);
	return rc;
}
