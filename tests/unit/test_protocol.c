/*
 * test_protocol — the executor's send/receive points: derived from every baseline's
 * simulated timeline they match NCCL's per-pair issue order, every receive comes before
 * its consumer and every send after its producer; a receive order broken on purpose is
 * detected with a one-line reason and repaired by moving receives earlier.
 */
#include "config.h"

#include <stdio.h>

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

int main(void)
{
	static const enum sched_kind kinds[] = {
		SCHED_GPIPE, SCHED_1F1B, SCHED_INTERLEAVED, SCHED_ZBH1, SCHED_ZBV, SCHED_DUALPIPEV, SCHED_ADAPTIVE
	};

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
		exec_release(&x);
		plan_release(&p);
	}

	/* F&B pairs: the head waits for its partner's input, received before the head */
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
	return tap_done();
}
