/*
 * test_protocol — the executor's send/receive points: derived from every baseline's
 * simulated timeline they match NCCL's per-pair issue order, every receive comes before
 * its consumer and every send after its producer; a receive order broken on purpose is
 * detected with a one-line reason and repaired by moving receives earlier, exactly as
 * the plain walk (move the receive the sender expects next to the current slot) would;
 * the Ws of a stage may run in any order after their Is.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "baseline.h"
#include "exec/emu.h"
#include "exec/protocol.h"
#include "sim.h"
#include "synth.h"
#include "../tap.h"

/* The shared test plan of schedule k and its protocol. */
static int build(enum sched_kind k, struct plan *p, struct exec_program *x, struct err *e)
{
	struct timeline t;
	int r;

	if (synth_exec_plan(k, p, &t, e) < 0)
		return -1;
	r = exec_build(p, &t, x, e);
	timeline_release(&t);
	return r;
}

/* The reference repair: for every pair, walk its receives in order and move the one the
 * sender expects next to the current slot (quadratic; what exec_repair must equal). */
static int nth(const struct exec_program *x, int dev, int kind, int a, int b, int k)
{
	for (int i = x->start[dev]; i < x->start[dev + 1]; i++) {
		const struct exec_item *it = &x->items[i];

		if (it->kind == kind && x->xfers[it->xfer].src == a && x->xfers[it->xfer].dst == b && k-- == 0)
			return i;
	}
	return -1;
}

static int ref_repair(struct exec_program *x)
{
	int moved = 0;

	for (int a = 0; a < x->ndevices; a++)
		for (int b = 0; b < x->ndevices; b++)
			for (int k = 0;; k++) {
				int s = nth(x, a, EXEC_SEND, a, b, k), r = nth(x, b, EXEC_RECV, a, b, k), want;
				struct exec_item it;

				if (s < 0 || r < 0)
					break;
				if (x->items[s].xfer == x->items[r].xfer)
					continue;
				for (want = r + 1; want < x->start[b + 1]; want++)
					if (x->items[want].kind == EXEC_RECV && x->items[want].xfer == x->items[s].xfer)
						break;
				if (want >= x->start[b + 1])
					break;
				it = x->items[want];
				memmove(&x->items[r + 1], &x->items[r], (size_t)(want - r) * sizeof(it));
				x->items[r] = it;
				moved++;
			}
	return moved;
}

/* Swaps n random pairs of receives on random devices (a deterministic generator). */
static void scramble(struct exec_program *x, unsigned *seed, int n)
{
	for (int t = 0; t < n;) {
		int d = (int)(rand_r(seed) % (unsigned)x->ndevices), len = x->start[d + 1] - x->start[d];
		int i = x->start[d] + (int)(rand_r(seed) % (unsigned)len), j = x->start[d] + (int)(rand_r(seed) % (unsigned)len);
		struct exec_item tmp;

		if (x->items[i].kind != EXEC_RECV || x->items[j].kind != EXEC_RECV || i == j)
			continue;
		tmp = x->items[i];
		x->items[i] = x->items[j];
		x->items[j] = tmp;
		t++;
	}
}

/* Two programs hold the same items in the same order (field by field). */
static bool same_items(const struct exec_program *x, const struct exec_program *y)
{
	for (int i = 0; i < x->start[x->ndevices]; i++) {
		const struct exec_item *a = &x->items[i], *b = &y->items[i];

		if (a->kind != b->kind || a->xfer != b->xfer || a->xfer2 != b->xfer2 || a->op.stage != b->op.stage ||
		    a->op.mb != b->op.mb || a->op.kind != b->op.kind || a->op.pair != b->op.pair)
			return false;
	}
	return true;
}

/* Whether the programs would deadlock on one NCCL communicator per process group (all
 * devices): NCCL runs a communicator's operations one after the other in issue order, so
 * on every device its transfers (sends and receives alike) would complete in program
 * order, and a transfer needs both its sides. A cycle among "a's item precedes b's item
 * on some device" is a deadlock (Kahn's algorithm leaves it). The executor's one
 * communicator per directed pair orders only a pair's own transfers (exec_check). */
static int serial_deadlock(const struct exec_program *x)
{
	int n = x->nxfers, *indeg = calloc((size_t)n + 1, sizeof(int)), *next = malloc(2 * ((size_t)n + 1) * sizeof(int));
	int *queue = malloc(((size_t)n + 1) * sizeof(int)), head = 0, tail = 0, done = 0;

	/* each transfer has two items, so at most two successors: next[2k], next[2k + 1] */
	for (int k = 0; k < 2 * n; k++)
		next[k] = -1;
	for (int d = 0; d < x->ndevices; d++) {
		int prev = -1;

		for (int i = x->start[d]; i < x->start[d + 1]; i++) {
			const struct exec_item *it = &x->items[i];

			if (it->kind == EXEC_COMPUTE)
				continue;
			if (prev >= 0) {
				next[2 * prev + (it->kind == EXEC_RECV ? 1 : 0) * 0 + (x->xfers[prev].src == d ? 0 : 1)] = it->xfer;
				indeg[it->xfer]++;
			}
			prev = it->xfer;
		}
	}
	for (int k = 0; k < n; k++)
		if (!indeg[k])
			queue[tail++] = k;
	while (head < tail) {
		int k = queue[head++];

		done++;
		for (int j = 0; j < 2; j++)
			if (next[2 * k + j] >= 0 && --indeg[next[2 * k + j]] == 0)
				queue[tail++] = next[2 * k + j];
	}
	free(indeg);
	free(next);
	free(queue);
	return done < n;
}

/* Sends of the programs that one communicator per device would hold back: NCCL runs a
 * communicator's operations in issue order, so a send waits for every receive posted
 * before it on its device; it is held back when one of them arrives (in the simulated
 * timeline t) after the send starts. The executor's channels hold a send back only
 * behind its own pair's earlier transfers. */
static int serial_delays(const struct exec_program *x, const struct timeline *t)
{
	int delayed = 0;
	double *start = calloc((size_t)x->nxfers + 1, sizeof(double)), *end = calloc((size_t)x->nxfers + 1, sizeof(double));

	for (int k = 0; k < x->nxfers; k++) {
		const struct exec_xfer *xf = &x->xfers[k];

		for (int j = 0; j < t->nxfers; j++) {
			const struct tl_xfer *y = &t->xfers[j];

			if (y->src == xf->src && y->dst == xf->dst && y->stage == xf->producer.stage &&
			    y->mb == xf->producer.mb && y->kind == (xf->producer.kind == OP_F ? XFER_ACT : XFER_GRAD)) {
				start[k] = y->start_ms;
				end[k] = y->end_ms;
			}
		}
	}
	for (int d = 0; d < x->ndevices; d++) {
		double arrived = 0;   /* the latest arrival of the receives posted so far */

		for (int i = x->start[d]; i < x->start[d + 1]; i++) {
			const struct exec_item *it = &x->items[i];

			if (it->kind == EXEC_RECV && end[it->xfer] > arrived)
				arrived = end[it->xfer];
			else if (it->kind == EXEC_SEND)
				delayed += arrived > start[it->xfer] + 1e-6;
		}
	}
	free(start);
	free(end);
	return delayed;
}

static const enum sched_kind kinds[] = {
	SCHED_GPIPE, SCHED_1F1B, SCHED_INTERLEAVED, SCHED_ZBH1, SCHED_ZBV, SCHED_DUALPIPEV, SCHED_ADAPTIVE
};

/* Every schedule's protocol: every op once, every transfer sent and received once,
 * validated, per-pair orders matching, no deadlock on one communicator. */
static void test_every_schedule(void)
{
	int deadlocks = 0;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct plan p;
		struct exec_program x;
		struct err e = ERR_INIT;

		if (!ok(build(kinds[i], &p, &x, &e) == 0, "%s: protocol derived (%s)", sched_name(kinds[i]), e.msg))
			continue;
		is_int(x.start[x.ndevices], plan_total_ops(&p) + 2 * x.nxfers,
		       "%s: every op once, every transfer sent once and received once", sched_name(kinds[i]));
		ok(x.nxfers > 0, "%s: %d transfers cross devices", sched_name(kinds[i]), x.nxfers);
		ok(exec_validate(&x, &e) == 0, "%s: receives before consumers, sends after producers (%s)",
		   sched_name(kinds[i]), e.msg);
		is_int(exec_check(&x, &e), 0, "%s: per-pair send and receive orders match", sched_name(kinds[i]));
		deadlocks += serial_deadlock(&x);
		exec_release(&x);
		plan_release(&p);
	}
	/* why the cuda backend keeps one NCCL communicator per directed pair (kplan.h): on one
	 * communicator for all devices the programs would not deadlock (their transfers are in
	 * a consistent order), but sends would wait behind receives still in flight */
	is_int(deadlocks, 0, "no schedule's program deadlocks even on one communicator for all devices");
	{
		struct plan p;
		struct timeline t;
		struct exec_program x;
		struct err e = ERR_INIT;

		if (ok(synth_exec_plan(SCHED_1F1B, &p, &t, &e) == 0 && exec_build(&p, &t, &x, &e) == 0,
		       "1f1b: plan, timeline and protocol (%s)", e.msg)) {
			int n = serial_delays(&x, &t), sends = x.nxfers;

			ok(n > 0, "but on it %d of the %d sends of a 1F1B program would wait for a receive posted before "
			   "them whose data is still in flight (a wait the prediction does not have)", n, sends);
			exec_release(&x);
			plan_release(&p);
		}
		timeline_release(&t);
	}
}

/* exec_repair equals the reference walk on randomly broken orders, of every schedule */
static void test_repair_walk(void)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct plan p;
		struct exec_program x, y;
		struct err e = ERR_INIT;
		unsigned seed = 12345u + (unsigned)i;
		int same = 0, tries = 20, broken = 0;

		if (!ok(build(kinds[i], &p, &x, &e) == 0, "%s: protocol for the repair test (%s)", sched_name(kinds[i]), e.msg))
			continue;
		for (int t = 0; t < tries; t++) {
			int a, b;

			scramble(&x, &seed, 1 + t % 5);
			broken += exec_check(&x, NULL) > 0;
			y = x;
			y.items = malloc((size_t)x.start[x.ndevices] * sizeof(*y.items));
			memcpy(y.items, x.items, (size_t)x.start[x.ndevices] * sizeof(*y.items));
			a = exec_repair(&x);
			b = ref_repair(&y);
			same += a == b && same_items(&x, &y) &&
			        exec_check(&x, NULL) == 0;
			free(y.items);
		}
		ok(broken > tries / 2, "%s: %d of %d scrambles broke the order", sched_name(kinds[i]), broken, tries);
		is_int(same, tries, "%s: every repair moves what the reference walk moves, and fixes the order",
		       sched_name(kinds[i]));
		exec_release(&x);
		plan_release(&p);
	}
}

/* W takes its inputs from a store keyed by (stage, microbatch): the Ws of a stage in
 * reverse order validate and run; a W before its own I is refused */
static void test_w_store(void)
{
	struct plan p;
	struct exec_program x;
	struct err e = ERR_INIT;
	struct emu_opts eo;
	struct timeline t;
	int d = 0, w[64], nw = 0, stage = -1, swapped = 0;

	ok(build(SCHED_ZBH1, &p, &x, &e) == 0, "zb-h1 protocol for the W order test (%s)", e.msg);
	for (int i = x.start[d]; i < x.start[d + 1]; i++)
		if (x.items[i].kind == EXEC_COMPUTE && x.items[i].op.kind == OP_W && nw < 64 &&
		    (stage < 0 || x.items[i].op.stage == stage)) {
			stage = x.items[i].op.stage;
			w[nw++] = i;
		}
	ok(nw >= 4, "device 0 runs %d Ws of stage %d", nw, stage);
	/* every other W moves to just after the next W of its stage: W1 before W0, W3 before W2 ... */
	for (int a = 0; a + 1 < nw; a += 2) {
		struct exec_item tmp = x.items[w[a]];

		memmove(&x.items[w[a]], &x.items[w[a] + 1], (size_t)(w[a + 1] - w[a]) * sizeof(tmp));
		x.items[w[a + 1]] = tmp;
		w[a + 1]--;
		swapped++;
	}
	ok(swapped >= 2, "%d Ws of stage %d moved after the next one", swapped, stage);
	ok(exec_validate(&x, &e) == 0, "Ws of stage %d out of the order of their Is validate (%s)", stage, e.msg);
	emu_opts_default(&eo);
	eo.timeout_s = 5;
	ok(emu_run(&p, &x, &eo, &t, &e) == 0, "and run on the emulator (%s)", e.msg);
	timeline_release(&t);
	{
		int wat = w[1], iat = -1;   /* W1, now just before W0 */
		struct action tmp = x.items[wat].op;

		for (int i = x.start[d]; i < x.start[d + 1] && iat < 0; i++)
			if (x.items[i].kind == EXEC_COMPUTE && x.items[i].op.kind == OP_I &&
			    x.items[i].op.stage == tmp.stage && x.items[i].op.mb == tmp.mb)
				iat = i;
		ok(iat >= 0 && iat < wat && tmp.kind == OP_W, "W%d follows its I", tmp.mb);
		/* move that W to just before its I */
		memmove(&x.items[iat + 1], &x.items[iat], (size_t)(wat - iat) * sizeof(x.items[0]));
		x.items[iat] = (struct exec_item){ EXEC_COMPUTE, tmp, -1, -1 };
		ok(exec_validate(&x, &e) < 0 && strstr(e.msg, "runs ") && strstr(e.msg, "whose inputs it takes"),
		   "a W moved before its own I is refused: %s", e.msg);
	}
	exec_release(&x);
	plan_release(&p);
}

/* a program that deadlocks on purpose (device 0 sends its forwards only after its own
 * backward of microbatch 0, which needs device 1's gradient of 0F0's output): the emulator's
 * watchdog follows who waits for whom back to the waiting device and says deadlock */
static void test_deadlock_named(void)
{
	struct plan p;
	struct exec_program x;
	struct err e = ERR_INIT;
	struct emu_opts eo;
	struct timeline t;
	int snd = -1, bwd = -1;

	ok(build(SCHED_1F1B, &p, &x, &e) == 0, "1f1b protocol for the deadlock test (%s)", e.msg);
	for (int i = x.start[0]; i < x.start[1]; i++) {
		const struct exec_item *it = &x.items[i];

		if (snd < 0 && it->kind == EXEC_SEND && x.xfers[it->xfer].producer.mb == 0)
			snd = i;
		if (bwd < 0 && it->kind == EXEC_COMPUTE && it->op.kind != OP_F && it->op.mb == 0)
			bwd = i;
	}
	ok(snd >= 0 && bwd > snd, "device 0 sends 0F0 (item %d) before its backward of microbatch 0 (item %d)", snd,
	   bwd);
	if (snd >= 0 && bwd > snd) {
		/* every send of device 0 before that backward moves after it, in order (so that
		 * the pair's order still matches) */
		struct exec_item tmp[256];
		int nm = 0, w = snd;

		for (int i = snd; i <= bwd && nm < 256; i++) {
			if (x.items[i].kind == EXEC_SEND && i < bwd)
				tmp[nm++] = x.items[i];
			else
				x.items[w++] = x.items[i];
		}
		memcpy(&x.items[w], tmp, (size_t)nm * sizeof(tmp[0]));
	}
	is_int(exec_check(&x, NULL), 0, "the pairs' orders still match");
	ok(exec_validate(&x, &e) == 0, "the send still follows its producer (%s)", e.msg);
	emu_opts_default(&eo);
	eo.timeout_s = 1;
	ok(emu_run(&p, &x, &eo, &t, &e) < 0 && strstr(e.msg, "waits for device") && strstr(e.msg, ": a deadlock)"),
	   "the run stops and names the deadlock: %s", e.msg);
	exec_release(&x);
	plan_release(&p);
}

/* F&B pairs: the head waits for its partner's input, received before the head */
static void test_pairs(void)
{
	struct plan p;
	struct exec_program x;
	struct err e = ERR_INIT;
	int heads = 0, early = 0, moved = -1;

	ok(build(SCHED_DUALPIPEV, &p, &x, &e) == 0, "dualpipev protocol for the pair test (%s)", e.msg);
	for (int d = 0; d < x.ndevices; d++)
		for (int i = x.start[d]; i < x.start[d + 1]; i++) {
			const struct exec_item *it = &x.items[i];

			if (it->kind != EXEC_COMPUTE || it->xfer2 < 0)
				continue;
			heads++;
			ok(it->op.pair, "only the head of a pair waits for a second input");
			for (int j = x.start[d]; j < i; j++)
				if (x.items[j].kind == EXEC_RECV && x.items[j].xfer == it->xfer2) {
					early++;
					if (moved < 0)
						moved = j;
				}
		}
	ok(heads > 0, "%d pair heads wait for their partner's input", heads);
	is_int(early, heads, "every such input is received before its pair starts");
	ok(exec_validate(&x, &e) == 0, "the pair protocol validates (%s)", e.msg);
	/* move one such receive after its pair's head: validation must refuse it */
	for (int j = moved; moved >= 0 && j + 1 < x.start[x.ndevices]; j++) {
		struct exec_item tmp = x.items[j];

		if (x.items[j + 1].kind == EXEC_COMPUTE && x.items[j + 1].xfer2 == tmp.xfer) {
			x.items[j] = x.items[j + 1];
			x.items[j + 1] = tmp;
			break;
		}
		x.items[j] = x.items[j + 1];
		x.items[j + 1] = tmp;
	}
	ok(exec_validate(&x, &e) < 0 && strstr(e.msg, "after its pair started"),
	   "a partner's input received after the pair started is refused: %s", e.msg);
	exec_release(&x);
	plan_release(&p);
}

/* break the order on purpose: swap two receives from the same sender */
static void test_mismatch(void)
{
	struct plan p;
	struct exec_program x;
	struct err e = ERR_INIT;
	int d = -1, r1 = -1, r2 = -1, moved;

	ok(build(SCHED_1F1B, &p, &x, &e) == 0, "1f1b protocol for the mismatch test");
	for (int dev = 0; dev < x.ndevices && r2 < 0; dev++) {
		r1 = -1;
		for (int i = x.start[dev]; i < x.start[dev + 1] && r2 < 0; i++) {
			if (x.items[i].kind != EXEC_RECV)
				continue;
			if (r1 < 0) {
				r1 = i;
			} else if (x.xfers[x.items[i].xfer].src == x.xfers[x.items[r1].xfer].src) {
				r2 = i;
				d = dev;
			}
		}
	}
	ok(r2 > r1 && r1 >= 0, "found two receives from one sender on device %d", d);
	{
		struct exec_item tmp = x.items[r1];

		x.items[r1] = x.items[r2];
		x.items[r2] = tmp;
	}
	ok(exec_check(&x, &e) >= 1, "a swapped receive is detected");
	{
		struct emu_opts eo;
		struct timeline t;
		struct err e2 = ERR_INIT;

		emu_opts_default(&eo);
		eo.timeout_s = 5;
		ok(emu_run(&p, &x, &eo, &t, &e2) < 0 && strstr(e2.msg, "out of order"),
		   "run unrepaired, the emulator stops with the mismatch instead of hanging: %s", e2.msg);
	}
	ok(strstr(e.msg, "the sender sends the output of") != NULL, "with the ops named: %s", e.msg);
	moved = exec_repair(&x);
	ok(moved >= 1, "repair moved %d receive(s) earlier", moved);
	is_int(exec_check(&x, NULL), 0, "after repair every pair matches");
	ok(exec_validate(&x, &e) == 0, "and every receive still precedes its consumer (%s)", e.msg);
	{
		struct emu_opts eo;
		struct timeline t;

		emu_opts_default(&eo);
		ok(emu_run(&p, &x, &eo, &t, &e) == 0, "the repaired program runs (%s)", e.msg);
		timeline_release(&t);
		eo.kill_device = 2;
		eo.kill_after_ops = 3;
		eo.timeout_s = 5;
		ok(emu_run(&p, &x, &eo, &t, &e) < 0 && strstr(e.msg, "worker 2 died after 3 ops"),
		   "a dead worker stops the run with its name: %s", e.msg);
	}
	exec_release(&x);
	plan_release(&p);
}

int main(void)
{
	test_every_schedule();
	test_repair_walk();
	test_w_store();
	test_deadlock_named();
	test_pairs();
	test_mismatch();
	return tap_done();
}
