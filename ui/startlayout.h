/*
 * startlayout — the parallel layout a `--model M --cluster C` start opens on: the one the
 * layout search picks (src/layout_search.h, as `tune` and `compare` pick it), with the
 * degrees the command line gives held fixed, or pure pipeline parallelism over every GPU
 * (--layout pp). No curses.
 */
#ifndef OCTO_UI_STARTLAYOUT_H
#define OCTO_UI_STARTLAYOUT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

struct plan;
struct err;
/* The layout options as the command line gave them (the CLI's meaning: what is not given
 * is searched). */
struct start_layout {
	int tp, dp, ep;           /* 0: searched */
	int zero;                 /* ZeRO stage; -1: searched */
	int recompute;            /* enum recompute; -1: searched */
	long micro_batch;         /* sequences a microbatch; -1: searched, 0: the table's own */
	bool fp32_grads;
	bool pp_only;             /* --layout pp: pure pipeline parallelism over every GPU */
	/* the target runtime's filter, as tune and compare pass it (layout_constraints) */
	int (*accept)(void *arg, const struct plan *p, struct err *e);
	void *accept_arg;
	unsigned schedules;
	bool block_recompute;
	bool zero_where_dp;       /* zero only where dp > 1 (torchtitan's FSDP) */
	/* raised (a SIGINT handler): the search answers the best layout judged so far */
	const volatile sig_atomic_t *stop;
};

/* No options given: everything searched. */
static inline void start_layout_init(struct start_layout *l)
{
	l->tp = l->dp = l->ep = 0;
	l->zero = l->recompute = -1;
	l->micro_batch = -1;
	l->fp32_grads = l->pp_only = false;
	l->accept = 0;
	l->accept_arg = 0;
	l->schedules = 0;
	l->block_recompute = l->zero_where_dp = false;
	l->stop = (const volatile sig_atomic_t *)0;
}

struct model;
struct cluster;
struct layout_choice;
struct err;
/* Runs the layout search for m on c with the options of o, mbs microbatches per replica
 * when o->dp is given, else in the global batch (the CLI's meaning). 0 with *lc filled and
 * what it chose said in msg ("layout TP 8 x PP 4 x DP 2, ZeRO 1, chosen by the layout
 * search (N judged); --layout pp for pure PP"); -1 with e as layout_search() sets it. */
int start_layout_choose(const struct model *m, const struct cluster *c, int mbs, const struct start_layout *o,
                        struct layout_choice *lc, char *msg, size_t n, struct err *e);

#endif
