/*
 * layout_none — the line a layout search answers when it found no layout (layout_none.h).
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>

#include "layout_none.h"
#include "parallel.h"

/* Whether d replicas split the global batch into whole microbatches of some size the
 * search tries (the search's own rule). */
static bool splits(const struct model *m, const struct layout_constraints *k, int d)
{
	long sizes[LAYOUT_MB_SIZES], seqs = (long)k->global_mb * m->micro_batch_size;
	int n = layout_mb_candidates(m, k, sizes);

	for (int i = 0; i < n; i++)
		if (layout_replica_microbatches(seqs, sizes[i] ? sizes[i] : m->micro_batch_size, d) > 0)
			return true;
	return false;
}

/* The fewest pipeline stages a layout at tp can have on c under k: the most data-parallel
 * replicas that divide the GPUs tp leaves and split the global batch (*dp gets them, 0 and
 * the result 0 when none does). */
static int fewest_stages(const struct model *m, const struct cluster *c, const struct layout_constraints *k, int tp,
                         int *dp)
{
	*dp = 0;
	if (tp <= 0 || c->devices % tp)
		return 0;
	for (int d = c->devices / tp; d >= 1; d--)
		if ((c->devices / tp) % d == 0 && (!k->dp || d == k->dp) && splits(m, k, d)) {
			*dp = d;
			return c->devices / (tp * d);
		}
	return 0;
}

/* Why tp leaves no layout, where that is the pipeline's depth: a stage holds a layer at
 * least, and the replicas must split the batch. Empty when it is not the reason. */
static void depth_reason(const struct model *m, const struct cluster *c, const struct layout_constraints *k, int tp,
                         char *buf, size_t n)
{
	long seqs = (long)k->global_mb * m->micro_batch_size;
	int dp, pp = fewest_stages(m, c, k, tp, &dp);

	buf[0] = '\0';
	if (k->pp || pp <= m->nlayers)
		return;
	if (k->dp)
		snprintf(buf, n, "at tp %d the %d GPUs need at least %d pipeline stages (dp %d, as --dp holds it), more than "
		         "the model's %d layers", tp, c->devices, pp, dp, m->nlayers);
	else
		snprintf(buf, n, "at tp %d the %d GPUs need at least %d pipeline stages (dp %d: a global batch of %ld "
		         "sequence%s splits over no more replicas here), more than the model's %d layers", tp, c->devices,
		         pp, dp, seqs, seqs == 1 ? "" : "s", m->nlayers);
}

/* Why no layout was valid: what was held fixed, the degrees given and the batch every dp
 * must divide; and where the TP degrees allowed all leave more stages than layers, that. */
int layout_none_degrees(const struct model *m, const struct cluster *c, const struct layout_constraints *k,
                        struct err *e)
{
	char given[256] = "", why[320] = "";
	size_t n = 0;
	static const char *const names[] = { "pp", "tp", "dp", "ep" };
	const int deg[] = { k->pp, k->tp, k->dp, k->ep };
	int best = 0, best_pp = 0, dp;

	for (int i = 0; i < 4; i++)
		if (deg[i] && n < sizeof(given))
			n += (size_t)snprintf(given + n, sizeof(given) - n, "%s %d, ", names[i], deg[i]);
	if (k->zero >= 0 && n < sizeof(given))
		n += (size_t)snprintf(given + n, sizeof(given) - n, "zero %d%s, ", k->zero,
		                      k->zero_where_dp && k->zero > 0 ? " where data-parallel" : "");
	if (k->fp32_grads && n < sizeof(given))
		n += (size_t)snprintf(given + n, sizeof(given) - n, "fp32 gradients, ");
	if (k->recompute >= 0 && n < sizeof(given))
		n += (size_t)snprintf(given + n, sizeof(given) - n, "recompute %s, ",
		                      recompute_name((enum recompute)k->recompute));
	/* the TP degree (of those allowed) that leaves the fewest stages speaks for them all */
	for (int tp = 1; tp <= c->gpus_per_node; tp++) {
		int pp = c->gpus_per_node % tp || (k->tp && tp != k->tp) ? 0 : fewest_stages(m, c, k, tp, &dp);

		if (pp > 0 && (!best || pp < best_pp)) {
			best = tp;
			best_pp = pp;
		}
	}
	/* with no degree given, a cluster of partial nodes that has no layout at all is why;
	 * with some given, those are (the same cluster may have layouts of other degrees) */
	if (!given[0] && c->gpus_per_node > 0 && c->devices % c->gpus_per_node != 0)
		return err_set(e, ERR_INPUT, "no parallel layout of cluster '%s': its %d GPUs are not whole nodes of %d "
		               "(gpus_per_node), and a layout's TP x DP blocks tile whole nodes; --layout pp needs no "
		               "nodes", c->name, c->devices, c->gpus_per_node);
	if (best)
		depth_reason(m, c, k, best, why, sizeof(why));
	return err_set(e, ERR_INPUT, "no parallel layout of cluster '%s' (%d GPU%s, %d per node) meets %s%sa global "
	               "batch of %d microbatch%s%s%s", c->name, c->devices, c->devices == 1 ? "" : "s", c->gpus_per_node,
	               given[0] ? "the given degrees: " : "", given, k->global_mb, k->global_mb == 1 ? "" : "es",
	               why[0] ? ": " : "", why);
}

/* Every layout was at a TP degree the model's table cannot be priced at (no architecture).
 * When its own degree leaves more stages than layers, that is the reason to give; else
 * the pricing error (the last one met) is. */
int layout_none_unpriced(const struct model *m, const struct cluster *c, const struct layout_constraints *k,
                         const struct err *unpriced, struct err *e)
{
	int made = model_made_tp(m);
	char why[320];

	depth_reason(m, c, k, made, why, sizeof(why));
	if ((k->tp && k->tp != made) || !why[0]) {
		*e = *unpriced;
		return -1;
	}
	return err_set(e, ERR_INPUT, "model '%s' has no architecture (a measured or hand-made table at tp %d), so only "
	               "tp %d can be priced, and %s: give %s a cluster of fewer GPUs, or make "
	               "the model with `octopipe cost` from its config.json (then other TP degrees are priced)", m->name,
	               made, made, why, k->dp ? "more --dp or" : "a larger global batch or");
}
