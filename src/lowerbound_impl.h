/*
 * lowerbound_impl — the exact packings behind the tight bound's pieces (3) and (5)
 * (lowerbound_pack.c), shared with lowerbound.c, and the memory-aware bound's warm-up
 * term (lowerbound_warm.c), used by lowerbound_mem.c. Not for other modules.
 */
#ifndef OCTO_LOWERBOUND_IMPL_H
#define OCTO_LOWERBOUND_IMPL_H

#include <stdbool.h>

#define TIGHT_TOP 128 /* the heaviest layers and fastest devices kept (on the stack) */

/* Bound (3) at speed 1: the least makespan of the layer costs c[0..n) (descending, n <=
 * TIGHT_TOP) packed onto D identical devices, each op paying oh, after rounding the costs
 * down to a few classes (so it stays a lower bound). Remembered per thread. */
double lb_pack_bound(const double *c, int n, int D, double oh);
/* Bound (5) at speed 1: the same layers in nb bins of which bin j first waits fill[j]
 * (pipeline fill) and then runs M microbatches of its layers; lo is a bound already known
 * (the answer is never below it). Remembered per thread. */
double lb_pack_fill_bound(const double *c, int n, const double *fill, int nb, int M, double oh, double lo);

/* (h) of the memory-aware bound (lowerbound_warm.c): the least iteration time of any plan
 * that fits, from the warm-up its devices' free memory cannot fill (ms); S is the static
 * memory of the whole model (lowerbound_mem.c (c)). 0 when no plan fits at all, NaN when
 * out of host memory. */
struct model;
struct cluster;
double lb_warmup_bound(const struct model *mdl, const struct cluster *cl, int M, bool split, double S);

#endif
