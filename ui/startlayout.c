/*
 * startlayout — the layout a --model/--cluster start opens on (see startlayout.h): the
 * engine's layout search with the given degrees held fixed, and the words that say what
 * it chose and how to get pure pipeline parallelism instead.
 */
#include "config.h"
#include "startlayout.h"

#include <stdio.h>
#include <string.h>

#include "layout_search.h"

int start_layout_choose(const struct model *m, const struct cluster *c, int mbs, const struct start_layout *o,
                        struct layout_choice *lc, char *msg, size_t n, struct err *e)
{
	struct layout_constraints k = { .pp = 0, .tp = o->tp, .dp = o->dp, .ep = o->ep, .zero = o->zero,
	                                .recompute = o->recompute, .global_mb = mbs * (o->dp > 0 ? o->dp : 1),
	                                .stop = o->stop, .fp32_grads = o->fp32_grads,
	                                .micro_batch = o->micro_batch, .accept = o->accept,
	                                .accept_arg = o->accept_arg, .schedules = o->schedules,
	                                .block_recompute = o->block_recompute,
	                                .zero_where_dp = o->zero_where_dp };
	char extra[120] = "";
	/* the microbatches are of --micro-batch-size sequences when it is given */
	long long seqs = (long long)k.global_mb * (o->micro_batch > 0 ? o->micro_batch : m->micro_batch_size);

	memset(lc, 0, sizeof(*lc));
	if (seqs % m->micro_batch_size || seqs / m->micro_batch_size > 1000000)
		return err_set(e, ERR_INPUT, "a global batch of %lld sequences is not a whole number of at most 1000000 "
		               "microbatches of the model's %ld", seqs, m->micro_batch_size);
	k.global_mb = (int)(seqs / m->micro_batch_size);
	if (layout_search(m, c, &k, lc, e) < 0)
		return -1;
	if (lc->par.ep > 1)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ", EP %d", lc->par.ep);
	if (lc->recompute != RECOMPUTE_NONE)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ", %s recompute",
		         recompute_name(lc->recompute));
	if (lc->par.fp32_grads)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ", fp32 gradients");
	if (lc->par.micro_batch > 0)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ", micro-batch %ld", lc->par.micro_batch);
	snprintf(msg, n, "layout TP %d x PP %d x DP %d, ZeRO %d%s, chosen by the layout "
	         "search (%d judged%s)%s", lc->par.tp, lc->par.pp, lc->par.dp, lc->par.zero,
	         extra, lc->candidates, lc->interrupted ? ", interrupted: the best so far" : "",
	         /* torchtitan (FSDP where dp > 1) trains a pure pipeline in fp32: not offered */
	         o->zero_where_dp ? "" : "; --layout pp for pure PP");
	return 0;
}
