/*
 * test_tlcheck — a timeline against its plan: the simulator's and the emulator's
 * timelines of every schedule keep every rule (F&B pairs included), and each way a run
 * could break the plan — an op before its input arrived, a transfer before its producer,
 * two ops at once, an op out of order, missing, repeated or on the wrong device — is
 * caught with a one-line reason.
 */
#include "config.h"

#include <stdio.h>

#include "baseline.h"
#include "exec/emu.h"
#include "exec/protocol.h"
#include "synth.h"
#include "tlcheck.h"
#include "../tap.h"

/* A deep copy of t's ops and transfers, to break. */
static void copy(struct timeline *dst, const struct timeline *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->ndevices = src->ndevices;
	dst->dev = calloc((size_t)src->ndevices, sizeof(*dst->dev));
	for (int d = 0; d < src->ndevices; d++) {
		dst->dev[d].nops = src->dev[d].nops;
		dst->dev[d].ops = malloc((size_t)(src->dev[d].nops + 1) * sizeof(struct tl_op));
		memcpy(dst->dev[d].ops, src->dev[d].ops, (size_t)src->dev[d].nops * sizeof(struct tl_op));
	}
	dst->nxfers = src->nxfers;
	dst->xfers = malloc((size_t)(src->nxfers + 1) * sizeof(struct tl_xfer));
	memcpy(dst->xfers, src->xfers, (size_t)src->nxfers * sizeof(struct tl_xfer));
}

/* Checks a broken copy: at least one violation, the first described with want. */
static void expect(const struct plan *p, struct timeline *t, const char *want, const char *what)
{
	struct err e = ERR_INIT;
	long n = timeline_check_plan(p, t, 1e-9, &e);

	ok(n >= 1 && strstr(e.msg, want), "%s: caught (%ld violation%s): %s", what, n, n == 1 ? "" : "s", e.msg);
	timeline_release(t);
}

/* The first op on device d that consumes a transfer (its index), or -1. */
static int first_receiver_op(const struct plan *p, const struct timeline *t, int d)
{
	for (int i = 0; i < t->dev[d].nops; i++) {
		const struct tl_op *o = &t->dev[d].ops[i];

		if (o->kind == OP_F && o->stage > 0 && p->stages[o->stage - 1].device != d)
			return i;
	}
	return -1;
}

int main(void)
{
	static const enum sched_kind kinds[] = {
		SCHED_GPIPE, SCHED_1F1B, SCHED_INTERLEAVED, SCHED_ZBH1, SCHED_ZBV, SCHED_DUALPIPEV, SCHED_ADAPTIVE
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const char *name = sched_name(kinds[i]);
		struct plan p;
		struct timeline t, meas;
		struct exec_program x;
		struct emu_opts eo;
		struct err e = ERR_INIT;

		if (!ok(synth_exec_plan(kinds[i], &p, &t, &e) == 0, "%s: planned and simulated (%s)", name, e.msg))
			continue;
		is_int(timeline_check_plan(&p, &t, 1e-9, &e), 0, "%s: the simulated timeline keeps the plan (%s)", name,
		       e.msg);
		emu_opts_default(&eo);
		if (ok(exec_build(&p, &t, &x, &e) == 0 && (exec_repair(&x), emu_run(&p, &x, &eo, &meas, &e) == 0),
		       "%s: runs on the emulator (%s)", name, e.msg)) {
			is_int(timeline_check_plan(&p, &meas, 1e-6, &e), 0, "%s: the measured timeline keeps the plan (%s)",
			       name, e.msg);
			timeline_release(&meas);
			exec_release(&x);
		}
		timeline_release(&t);
		plan_release(&p);
	}

	{
		struct plan p;
		struct timeline t, b;
		struct err e = ERR_INIT;
		int d = 1, i;

		ok(synth_exec_plan(SCHED_ZBH1, &p, &t, &e) == 0, "zb-h1 plan to break (%s)", e.msg);
		i = first_receiver_op(&p, &t, d);
		ok(i >= 0, "device 1 receives an activation (op %d)", i);

		copy(&b, &t);
		b.dev[d].ops[i].start_ms -= 0.25;
		expect(&p, &b, "before its input from device 0 arrived", "an op that started before its input arrived");

		copy(&b, &t);
		for (long k = 0; k < b.nxfers; k++)
			if (b.xfers[k].src == 0 && b.xfers[k].kind == XFER_ACT) {
				b.xfers[k].start_ms -= 0.3;
				break;
			}
		expect(&p, &b, "(device 0 -> 1) started at", "a transfer sent before its producer ended");

		copy(&b, &t);
		b.dev[0].ops[2].start_ms = (b.dev[0].ops[1].start_ms + b.dev[0].ops[1].end_ms) / 2;
		expect(&p, &b, "while the device was busy until", "two ops of one device at once");

		copy(&b, &t);
		{
			struct tl_op tmp = b.dev[3].ops[0];

			/* the device runs its second op first, then its first */
			b.dev[3].ops[0] = b.dev[3].ops[1];
			b.dev[3].ops[1] = tmp;
			b.dev[3].ops[0].start_ms = tmp.start_ms;
			b.dev[3].ops[0].end_ms = tmp.start_ms + 0.01;
			b.dev[3].ops[1].start_ms = tmp.start_ms + 0.02;
		}
		expect(&p, &b, "against the plan's order", "ops in another order than the plan's");

		copy(&b, &t);
		b.dev[2].nops--;
		expect(&p, &b, "never ran", "a missing op");

		copy(&b, &t);
		b.dev[0].ops[1] = b.dev[0].ops[0];
		expect(&p, &b, "twice", "an op run twice");

		copy(&b, &t);
		b.dev[0].ops[0].stage = p.nstages - 1;
		expect(&p, &b, "which the plan puts on device", "an op on the wrong device");

		copy(&b, &t);
		b.dev[0].ops[0].kind = OP_B;
		expect(&p, &b, "not an op of the plan", "a B in a split-backward plan");

		copy(&b, &t);
		for (long k = 0; k < b.nxfers; k++)
			if (b.xfers[k].dst == d && b.xfers[k].kind == XFER_ACT) {
				b.xfers[k] = b.xfers[--b.nxfers];
				break;
			}
		expect(&p, &b, "no transfer carried", "an op whose input never travelled");

		copy(&b, &t);
		free(b.dev[3].ops);
		b.ndevices = 3;
		expect(&p, &b, "the timeline has 3 devices, the plan 4", "a timeline of another cluster");

		timeline_release(&t);
		plan_release(&p);
	}
	return tap_done();
}
