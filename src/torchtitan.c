/*
 * torchtitan — a plan as torchtitan runs it (see torchtitan.h): its job-config TOML and
 * the schedule CSV its pipelining runtime loads.
 *
 * torchtitan builds each rank's stages from the named schedule's style — "v" for
 * ZBVZeroBubble and DualPipeV, else "loop" (pipeline_parallel.py pipeline_module_split
 * _get_stage_indices) — and, given pipeline_parallel_schedule_csv, runs the CSV's order
 * through torch's _PipelineScheduleRuntime (build_pipeline_schedule), which takes each
 * stage's rank from the rows that hold it and adds the sends and receives itself. So a
 * plan runs there exactly when its placement is one of those two styles: the named
 * schedule is chosen to match the placement, and the CSV carries the order. The keys
 * are the TOML job config's (torchtitan/config/job_config.py as of commit 238fa995, the
 * last before the Python config refactor of 2026-02-23, commit 9810191: the
 * [parallelism], [training] and [activation_checkpoint] sections).
 */
#include "config.h"
#include "torchtitan.h"

#include <stdbool.h>
#include <string.h>

#include "parallel.h"
#include "torchcsv.h"

enum tt_style { TT_LOOP, TT_V };

struct tt_shape {
	int pp, per_rank;
	enum tt_style style;
};

/* Stage s of k per rank over P ranks: loop puts it on s mod P; v (k = 2) on s for the
 * first P and 2P - 1 - s for the rest. */
static int tt_device(enum tt_style style, int s, int pp)
{
	return style == TT_LOOP || s < pp ? s % pp : 2 * pp - 1 - s;
}

static bool placed_as(const struct plan *p, enum tt_style style, int pp)
{
	for (int s = 0; s < p->nstages; s++)
		if (p->stages[s].device != tt_device(style, s, pp))
			return false;
	return true;
}

static int check_placement(const struct plan *p, struct tt_shape *sh, struct err *e)
{
	int used = 0;

	for (int s = 0; s < p->nstages; s++)
		if (p->stages[s].device + 1 > used)
			used = p->stages[s].device + 1;
	if (used < 2 && p->nstages > 1)
		return err_set(e, ERR_INPUT, "stages: %d stages on device 0: torchtitan pipelines over 2 or more ranks "
		               "(pipeline_parallel_degree 1 turns pipelining off)", p->nstages);
	/* pipeline_module_split: "num_stages must be evenly divisible by pp_degree" */
	if (p->nstages % used != 0)
		return err_set(e, ERR_INPUT, "stages: %d stages on %d devices: torchtitan puts the same number of stages "
		               "on every rank", p->nstages, used);
	sh->pp = used;
	sh->per_rank = p->nstages / used;
	if (placed_as(p, TT_LOOP, used)) {
		sh->style = TT_LOOP;
		return 0;
	}
	/* "v schedules assume 2 stages per rank" */
	if (sh->per_rank == 2 && placed_as(p, TT_V, used)) {
		sh->style = TT_V;
		return 0;
	}
	for (int s = 0; s < p->nstages; s++)
		if (p->stages[s].device != tt_device(TT_LOOP, s, used))
			return err_set(e, ERR_INPUT, "stages[%d].device: %d, but torchtitan places stage %d on device %d "
			               "(its loop style: stage s on s mod %d)%s", s, p->stages[s].device, s,
			               tt_device(TT_LOOP, s, used), used,
			               sh->per_rank == 2 ? " or its v style (stage s on s, then 2P-1-s)" : "");
	return err_set(e, ERR_INPUT, "stages: not torchtitan's loop or v placement");
}

/* Data parallelism: torchtitan shards with FSDP2 (data_parallel_shard_degree) or, with
 * no other parallelism at all, replicates with DDP (llama3/infra/parallelize.py: "DDP
 * has not supported > 1D parallelism"); it has no optimizer-only sharding (ZeRO 1).
 * Expert parallelism borrows FSDP ranks (parallel_dims.py: efsdp = dp_shard x tp /
 * (etp x ep)). */
static int check_layout(const struct parallel *l, const struct tt_shape *sh, struct err *e)
{
	bool ddp_alone = sh->pp == 1 && l->tp == 1 && l->ep == 1 && l->zero == 0;

	if (l->dp > 1 && l->zero < 2 && !ddp_alone)
		return err_set(e, ERR_INPUT, "parallel.zero: %d with %d data-parallel replicas: torchtitan's data "
		               "parallelism beside a pipeline is FSDP (ZeRO 2 or 3); DDP runs only alone and ZeRO 1 "
		               "has no setting", l->zero, l->dp);
	/* distributed/utils.py maybe_enable_amp (with parallel_dims.py fsdp_enabled: dp_shard
	 * or cp above 1): FSDP casts to training.mixed_precision_param, DDP or one GPU runs
	 * under autocast, and TP or PP without FSDP "disables" mixed precision, so the model
	 * trains in its fp32 parameters (train.py builds it in training.dtype, fp32 unless
	 * asked for the pure-bf16 training no plan prices) */
	if (l->dp == 1 && (sh->pp > 1 || l->tp > 1))
		return err_set(e, ERR_INPUT, "parallel.dp: 1 with %s: torchtitan applies mixed precision to TP or PP "
		               "only under FSDP, so it would train this plan in fp32, not the bf16 it was priced "
		               "in: use 2 or more data-parallel replicas at ZeRO 2 or 3",
		               sh->pp > 1 && l->tp > 1 ? "pipeline and tensor parallelism" :
		               sh->pp > 1 ? "pipeline parallelism" : "tensor parallelism");
	if (l->ep > 1 && l->dp % l->ep != 0)
		return err_set(e, ERR_INPUT, "parallel.ep: %d does not divide the %d FSDP ranks torchtitan's expert "
		               "parallelism borrows", l->ep, l->dp);
	return 0;
}

static bool is_mtp(const char *kind)
{
	return strncmp(kind, "mtp", 3) == 0;
}

static bool kind_has(const char *kind, const char *token)
{
	size_t n = strlen(token);

	for (const char *s = kind; *s;) {
		size_t len = strcspn(s, "+");

		if ((len == n && strncmp(s, token, n) == 0))
			return true;
		s += len;
		if (*s == '+')
			s++;
	}
	return false;
}

static bool pure(const char *kind)
{
	return strcmp(kind, "embedding") == 0 || strcmp(kind, "head") == 0 || strcmp(kind, "loss") == 0 ||
	       strcmp(kind, "head+loss") == 0;
}

/* One model part's module names, as torchtitan's models name them (tok_embeddings,
 * layers.<i> over the decoder layers, norm and output). *next is the decoder index. */
static void part_fqns(const struct plan *p, int s, int *next, struct strbuf *sb)
{
	bool first = true;

#define FQN(...) do { strbuf_addstr(sb, first ? "" : ", "); strbuf_addf(sb, __VA_ARGS__); first = false; } while (0)
	if (s == 0)
		FQN("\"tok_embeddings\"");
	for (int l = p->stages[s].first; l <= p->stages[s].last; l++)
		if (!pure(p->model.layers[l].kind))
			FQN("\"layers.%d\"", (*next)++);
	if (s == p->nstages - 1) {
		FQN("\"norm\"");
		FQN("\"output\"");
	}
#undef FQN
}

/* A TOML basic string: quotes, backslashes and control characters escaped. */
static void toml_string(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			strbuf_addf(sb, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			strbuf_addf(sb, "\\u%04x", c);
		else
			strbuf_addch(sb, (char)c);
	}
	strbuf_addch(sb, '"');
}

static void add_parallelism(const struct plan *p, const struct tt_shape *sh, const struct parallel *l,
                            const char *csv_path, struct strbuf *sb)
{
	int next = 0;

	strbuf_addstr(sb, "[parallelism]\n");
	strbuf_addf(sb, "pipeline_parallel_degree = %d\n", sh->pp);
	if (sh->pp == 1)
		goto degrees;
	/* the named schedule only picks the placement style; the CSV is what runs */
	strbuf_addf(sb, "pipeline_parallel_schedule = \"%s\"\n",
	            sh->style == TT_V ? "ZBVZeroBubble" : sh->per_rank > 1 ? "Interleaved1F1B" : "1F1B");
	strbuf_addstr(sb, "pipeline_parallel_schedule_csv = ");
	toml_string(sb, csv_path);
	strbuf_addf(sb, "\npipeline_parallel_microbatch_size = %ld\n", p->model.micro_batch_size);
	strbuf_addstr(sb, "module_fqns_per_model_part = [\n");
	for (int s = 0; s < p->nstages; s++) {
		strbuf_addstr(sb, "    [");
		part_fqns(p, s, &next, sb);
		strbuf_addstr(sb, s + 1 < p->nstages ? "],\n" : "]\n");
	}
	strbuf_addstr(sb, "]\n");
degrees:
	strbuf_addf(sb, "tensor_parallel_degree = %d\n", l->tp);
	if (l->zero >= 2 || l->dp == 1)
		strbuf_addf(sb, "data_parallel_replicate_degree = 1\ndata_parallel_shard_degree = %d\n", l->dp);
	else  /* DDP, alone */
		strbuf_addf(sb, "data_parallel_replicate_degree = %d\ndata_parallel_shard_degree = 1\n", l->dp);
	if (l->dp > 1 && l->zero >= 2)  /* ZeRO 3 frees the gathered weights after each forward, ZeRO 2 keeps them */
		strbuf_addf(sb, "fsdp_reshard_after_forward = \"%s\"\n", l->zero >= 3 ? "always" : "never");
	if (l->ep > 1)  /* experts over E replicas, each split over the TP ranks as dense layers are */
		strbuf_addf(sb, "expert_parallel_degree = %d\nexpert_tensor_parallel_degree = %d\n", l->ep, l->tp);
}

static void add_rest(const struct plan *p, const struct parallel *l, struct strbuf *sb)
{
	int rc = p->stages[0].recompute;

	strbuf_addstr(sb, "\n[training]\n");
	strbuf_addf(sb, "seq_len = %ld\n", p->model.seq_len);
	/* pipelined: n_microbatches = local_batch_size / pipeline_parallel_microbatch_size; one
	 * rank: train.py accumulates global / (local x dp) forwards of local_batch_size each,
	 * so local is one microbatch and the accumulation runs the plan's microbatches */
	strbuf_addf(sb, "local_batch_size = %ld\n",
	            (long)(l->pp == 1 ? 1 : p->microbatches) * p->model.micro_batch_size);
	strbuf_addf(sb, "global_batch_size = %ld\n", (long)p->microbatches * p->model.micro_batch_size * l->dp);
	strbuf_addstr(sb, "mixed_precision_param = \"bfloat16\"\n");
	/* the only value job_config.py allows: bf16 gradients cannot be asked for */
	strbuf_addstr(sb, "mixed_precision_reduce = \"float32\"\n");
	strbuf_addstr(sb, "\n[activation_checkpoint]\n");
	if (model_recomputes(plan_src_model(p)))
		rc = RECOMPUTE_FULL;
	if (rc == RECOMPUTE_SELECTIVE)  /* the closest: per-op selective checkpointing */
		strbuf_addstr(sb, "mode = \"selective\"\nselective_ac_option = \"op\"\n");
	else
		strbuf_addf(sb, "mode = \"%s\"\n", rc == RECOMPUTE_FULL ? "full" : "none");
}

/* The mixers torchtitan has no layer for: its models (torchtitan/models as of 238fa995:
 * llama3, llama4, deepseek_v3, qwen3, gpt_oss, flux) attend in every block; there is no
 * Mamba or gated DeltaNet anywhere in it. */
static const struct {
	const char *token, *name;
} unbuilt[] = {
	{ "mamba", "Mamba" }, { "mamba1", "Mamba-1" }, { "mamba2", "Mamba-2" }, { "gdn", "gated DeltaNet" },
};

int torchtitan_check_model(const struct model *m, struct err *e)
{
	for (int i = 0; i < m->nlayers; i++)
		for (size_t k = 0; k < sizeof(unbuilt) / sizeof(unbuilt[0]); k++)
			if (kind_has(m->layers[i].kind, unbuilt[k].token))
				return err_set(e, ERR_INPUT, "model.layers[%d].kind: '%s': torchtitan has no %s layer (its "
				               "models, llama3, llama4, deepseek_v3, qwen3 and gpt_oss, attend in every "
				               "block)", i, m->layers[i].kind, unbuilt[k].name);
	return 0;
}

static int check_model(const struct plan *p, int *rc, struct err *e)
{
	if (torchtitan_check_model(&p->model, e) < 0)
		return -1;
	*rc = p->stages[0].recompute;
	for (int s = 1; s < p->nstages; s++)
		if (p->stages[s].recompute != *rc)
			return err_set(e, ERR_INPUT, "stages[%d].recompute: '%s' but stages[0] recomputes '%s': torchtitan "
			               "sets one activation-checkpoint mode for every layer", s,
			               recompute_name((enum recompute)p->stages[s].recompute),
			               recompute_name((enum recompute)*rc));
	/* its full mode wraps every transformer block, its selective layer mode every n-th:
	 * nothing recomputes a stage's first layers only */
	for (int s = 0; s < p->nstages; s++)
		if (plan_layer_recompute(p, s, p->stages[s].last) != (enum recompute)p->stages[s].recompute)
			return err_set(e, ERR_INPUT, "stages[%d].recompute_layers: %d of the stage's layers: torchtitan's "
			               "activation checkpointing has no block method (its full mode wraps every layer)", s,
			               p->stages[s].recompute_layers);
	for (int i = 0; i < p->model.nlayers; i++) {
		if (is_mtp(p->model.layers[i].kind))
			return err_set(e, ERR_INPUT, "model.layers[%d].kind: '%s': torchtitan's models have no "
			               "multi-token-prediction module", i, p->model.layers[i].kind);
		if (kind_has(p->model.layers[i].kind, "embedding") && i > 0)
			return err_set(e, ERR_INPUT, "model.layers[%d].kind: '%s': torchtitan runs the embedding first",
			               i, p->model.layers[i].kind);
	}
	return 0;
}

/* An overlapped pair ("0F3+7I2", DualPipeV's forward beside a backward) is one
 * "(0F3;7I2)OVERLAP_F_B" cell of the schedule CSV, but torchtitan registers its overlap
 * callback only on a ScheduleDualPipeV it builds itself (pipeline_parallel.py
 * build_pipeline_schedule), never on the _PipelineScheduleRuntime that runs a CSV, which
 * runs the pair's two actions one after the other: not the plan simulated, so the target
 * refuses it (and the tuner does not pick it). */
static int check_no_pairs(const struct plan *p, struct err *e)
{
	for (int d = 0; d < p->ndevices; d++)
		for (int i = p->order_start[d]; i < p->order_start[d + 1]; i++)
			if (p->order[i].pair) {
				char a[ACTION_TEXT_MAX], b[ACTION_TEXT_MAX];

				action_format(&p->order[i], a);
				action_format(&p->order[i + 1], b);
				return err_set(e, ERR_INPUT, "schedule[%d]: '%s+%s' overlaps a forward with a backward, but "
				               "torchtitan runs a schedule CSV's OVERLAP_F_B one action after the other (it "
				               "overlaps only under its own ScheduleDualPipeV, not from a CSV): use a plan "
				               "without overlapped pairs (not dualpipev)", d, a, b);
			}
	return 0;
}

static int export_of(const struct plan *p, const char *csv_path, struct strbuf *toml, struct strbuf *csv,
                     struct err *e)
{
	struct tt_shape sh = { 0, 0, TT_LOOP };
	struct parallel l;
	int rc;

	if (check_model(p, &rc, e) < 0 || check_placement(p, &sh, e) < 0 || check_no_pairs(p, e) < 0)
		return -1;
	l = plan_parallel(p);
	if (!p->has_parallel)
		l.pp = sh.pp;
	else if (l.pp != sh.pp)
		return err_set(e, ERR_INPUT, "parallel.pp: %d pipeline ranks but the stages use %d: torchtitan runs "
		               "stages on every pipeline rank", l.pp, sh.pp);
	if (check_layout(&l, &sh, e) < 0)
		return -1;
	if (!toml)
		return 0;
	strbuf_addf(toml, "# torchtitan job config for %s: pp %d x tp %d x dp %d = %d GPUs, %s placement\n"
	                  "# (octopipe export torchtitan); merge it into your job's TOML (torchtitan's\n"
	                  "# TOML job config, before its Python-config refactor, commit 9810191).\n",
	            p->name ? p->name : "this plan", l.pp, l.tp, l.dp, parallel_gpus(&l),
	            sh.style == TT_V ? "v" : "loop");
	strbuf_addstr(toml, "# module names follow torchtitan's llama3 / deepseek_v3 / qwen3 models.\n");
	if (l.dp > 1 && !l.fp32_grads)
		strbuf_addstr(toml, "# torchtitan reduces gradients in fp32: the data-parallel sync moves twice the\n"
		                    "# bytes this plan priced (simulate it with --grads fp32 to see the cost).\n");
	strbuf_addch(toml, '\n');
	if (sh.pp == 1)
		strbuf_addstr(toml, "# one pipeline rank: no pipelining, so no schedule CSV.\n\n");
	add_parallelism(p, &sh, &l, csv_path, toml);
	add_rest(p, &l, toml);
	if (sh.pp > 1)
		torchcsv_export_rows(p, sh.pp, csv);
	if (strbuf_failed(toml) || strbuf_failed(csv))
		return err_set(e, ERR_RUNTIME, "out of host memory");
	return 0;
}

int torchtitan_export(const struct plan *p, const char *plan_name, const char *csv_path, struct strbuf *toml,
                      struct strbuf *csv, struct err *e)
{
	if (export_of(p, csv_path, toml, csv, e) < 0) {
		if (e->cls == ERR_INPUT)
			err_prefix(e, plan_name);
		return -1;
	}
	return 0;
}

int torchtitan_check(const struct plan *p, struct err *e)
{
	return export_of(p, NULL, NULL, NULL, e);
}
