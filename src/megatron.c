/*
 * megatron — export of the partition as a Megatron pipeline layout (see megatron.h).
 * Layer kinds that mention the embedding or the head become E and L around the "t" of
 * the decoder layer they were folded into; a multi-token-prediction module ("mtp", as
 * octopipe cost names DeepSeek-V3's) is Megatron-LM's "m", not a decoder layer.
 */
#include "config.h"
#include "megatron.h"
#include "parallel.h"

#include <stdbool.h>
#include <string.h>

static bool mtp_layer(const char *kind)
{
	return strncmp(kind, "mtp", 3) == 0;
}

static void flush_run(struct strbuf *sb, int run)
{
	if (run == 1)
		strbuf_addch(sb, 't');
	else if (run > 1)
		strbuf_addf(sb, "t*%d", run);
}

int megatron_layout(const struct plan *p, struct strbuf *sb, struct err *e)
{
	int used = 0;

	for (int s = 0; s < p->nstages; s++)
		if (p->stages[s].device + 1 > used)
			used = p->stages[s].device + 1;
	for (int s = 0; s < p->nstages; s++)
		if (p->stages[s].device != s % used)
			return err_set(e, ERR_INPUT, "stages[%d].device: a Megatron layout needs stage s on device s mod %d; "
			               "this plan places stage %d on device %d", s, used, s, p->stages[s].device);
	if (p->nstages % used != 0)
		return err_set(e, ERR_INPUT, "stages: a Megatron layout needs the same number of stages on every device "
		               "(%d stages on %d devices)", p->nstages, used);
	for (int s = 0; s < p->nstages; s++) {
		int run = 0;

		if (s)
			strbuf_addch(sb, '|');
		for (int l = p->stages[s].first; l <= p->stages[s].last; l++) {
			const char *kind = p->model.layers[l].kind;
			bool emb = strstr(kind, "embed") != NULL, head = strstr(kind, "head") != NULL ||
			           strstr(kind, "loss") != NULL;
			bool only = strcmp(kind, "embedding") == 0 || strcmp(kind, "head") == 0 ||
			            strcmp(kind, "loss") == 0 || strcmp(kind, "head+loss") == 0;

			if (emb) {
				flush_run(sb, run);
				strbuf_addch(sb, 'E');
				run = 0;
			}
			if (mtp_layer(kind)) {
				flush_run(sb, run);
				strbuf_addch(sb, 'm');
				run = 0;
				continue;
			}
			run += !only;
			if (head) {
				flush_run(sb, run);
				strbuf_addch(sb, 'L');
				run = 0;
			}
		}
		flush_run(sb, run);
	}
	return 0;
}

/* A layer Megatron counts in --num-layers: everything but a pure embedding or head, and
 * an MTP module (counted by --mtp-num-layers). */
static bool decoder_layer(const char *kind)
{
	return strcmp(kind, "embedding") != 0 && strcmp(kind, "head") != 0 && strcmp(kind, "loss") != 0 &&
	       strcmp(kind, "head+loss") != 0 && !mtp_layer(kind);
}

int megatron_args(const struct plan *p, const char *plan_name, struct strbuf *sb, struct err *e)
{
	struct parallel l = plan_parallel(p);
	struct strbuf layout = STRBUF_INIT;
	int used = 0, layers = 0, mtp = 0, rc = p->stages[0].recompute;
	/* a table made with `octopipe cost --recompute` already prices full recompute (its
	 * stages carry no mode of their own): Megatron-LM must recompute as well */
	bool table_recomputes = model_recomputes(plan_src_model(p));

	for (int s = 0; s < p->nstages; s++) {
		if (p->stages[s].recompute != rc) {
			strbuf_release(&layout);
			return err_set(e, ERR_INPUT, "%s: stages[%d].recompute: '%s' but stages[0] recomputes '%s': "
			               "Megatron-LM sets one recompute mode for every layer", plan_name, s,
			               recompute_name((enum recompute)p->stages[s].recompute),
			               recompute_name((enum recompute)rc));
		}
		if (p->stages[s].device + 1 > used)
			used = p->stages[s].device + 1;
	}
	if (megatron_layout(p, &layout, e) < 0) {
		strbuf_release(&layout);
		err_prefix(e, plan_name);
		return -1;
	}
	/* Megatron-LM runs a stage on every pipeline rank (the layout's stages divide over
	 * them): a plan without a layout is pure pipeline parallelism over the devices its
	 * stages use; one whose layout names more pipeline ranks cannot be written */
	if (!p->has_parallel) {
		l.pp = used;
	} else if (used != l.pp) {
		strbuf_release(&layout);
		return err_set(e, ERR_INPUT, "%s: parallel.pp: %d pipeline ranks but the stages use %d (devices 0..%d): "
		               "Megatron-LM runs a stage on every pipeline rank", plan_name, l.pp, used, used - 1);
	}
	for (int i = 0; i < p->model.nlayers; i++) {
		layers += decoder_layer(p->model.layers[i].kind);
		mtp += mtp_layer(p->model.layers[i].kind);
	}
	strbuf_addf(sb, "# Megatron-LM arguments for %s: pp %d x tp %d x dp %d = %d GPUs (octopipe export megatron-args)\n",
	            plan_name, l.pp, l.tp, l.dp, parallel_gpus(&l));
	strbuf_addstr(sb, "# Megatron runs its own 1F1B / interleaved order over this partition; a tuned order\n"
	                  "# of OctoPipe's needs OctoPipe's executor (octopipe run).\n");
	/* no virtual-stage flag: Megatron-LM takes the virtual pipeline size from the layout
	 * (its stages over the pipeline size) and refuses one given beside it */
	strbuf_addf(sb, "--pipeline-model-parallel-size %d \\\n", l.pp);
	strbuf_addf(sb, "--tensor-model-parallel-size %d \\\n", l.tp);
	/* the precision the memory model and the data-parallel sync assume (parallel.h): bf16
	 * weights, and bf16 gradients unless the layout says fp32, Megatron-LM's bf16 default */
	strbuf_addstr(sb, l.fp32_grads ? "--bf16 \\\n" : "--bf16 \\\n--grad-reduce-in-bf16 \\\n");
	if (l.tp > 1)
		strbuf_addstr(sb, "--sequence-parallel \\\n");
	if (l.ep > 1)  /* the all-to-all the simulator prices (Megatron-LM's default gathers every token) */
		strbuf_addf(sb, "--expert-model-parallel-size %d \\\n--moe-token-dispatcher-type alltoall \\\n", l.ep);
	if (l.zero >= 1)
		strbuf_addstr(sb, "--use-distributed-optimizer \\\n");
	/* Megatron-LM's validate_args refuses Megatron-FSDP with any other checkpoint format */
	if (l.zero >= 2)
		strbuf_addf(sb, "--use-megatron-fsdp \\\n--data-parallel-sharding-strategy %s \\\n"
		                "--ckpt-format fsdp_dtensor \\\n", l.zero == 2 ? "optim_grads" : "optim_grads_params");
	if (l.dp > 1) {
		strbuf_addstr(sb, "--overlap-grad-reduce \\\n");
		if (l.zero >= 1)
			strbuf_addstr(sb, "--overlap-param-gather \\\n");
	}
	if (table_recomputes)
		rc = RECOMPUTE_FULL;
	if (rc == RECOMPUTE_SELECTIVE)
		strbuf_addstr(sb, "--recompute-granularity selective \\\n--recompute-modules core_attn \\\n");
	else if (rc == RECOMPUTE_FULL)
		strbuf_addstr(sb, "--recompute-granularity full \\\n--recompute-method uniform \\\n"
		                  "--recompute-num-layers 1 \\\n");
	strbuf_addf(sb, "--num-layers %d \\\n", layers);
	if (mtp)
		strbuf_addf(sb, "--mtp-num-layers %d \\\n", mtp);
	strbuf_addf(sb, "--seq-length %ld \\\n", p->model.seq_len);
	strbuf_addf(sb, "--micro-batch-size %ld \\\n", p->model.micro_batch_size);
	strbuf_addf(sb, "--global-batch-size %ld \\\n", (long)p->microbatches * p->model.micro_batch_size * l.dp);
	strbuf_addf(sb, "--pipeline-model-parallel-layout \"%s\"\n", layout.buf);
	strbuf_release(&layout);
	return strbuf_failed(sb) ? err_set(e, ERR_RUNTIME, "out of host memory") : 0;
}
