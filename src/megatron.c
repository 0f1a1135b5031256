/*
 * megatron — a plan as Megatron-LM runs it (see megatron.h).
 *
 * Megatron-LM describes a partition in one of two ways, never both: a GPT-style model
 * by `--pipeline-model-parallel-layout` ("E" embedding, "t" decoder layer, "m" an MTP
 * module, "L" loss, '|' between virtual stages), a hybrid model (Mamba or gated
 * DeltaNet layers) by `--hybrid-layer-pattern`, one symbol per sub-layer and '|'
 * between pipeline segments. Either way the i-th stage runs on pipeline rank i mod P,
 * so only a round-robin placement is expressible. Everything Megatron-LM checks at
 * start-up about those flags and the rest of a layout is checked here first, so an
 * export that succeeds starts; the rules are the ones of Megatron-LM's own code
 * (commit d98e8a64, 2026-08-22), each cited where it is enforced.
 */
#include "config.h"
#include "megatron.h"
#include "parallel.h"

#include <stdbool.h>
#include <string.h>

/* What one plan is to Megatron-LM: its pipeline and virtual-pipeline sizes. */
struct mshape {
	int pp, vpp;
	bool hybrid;
};

static bool kind_has(const char *kind, const char *token)
{
	size_t n = strlen(token);

	for (const char *s = kind; *s;) {
		size_t len = strcspn(s, "+");

		if (len == n && strncmp(s, token, n) == 0)
			return true;
		s += len;
		if (*s == '+')
			s++;
	}
	return false;
}

static bool mtp_layer(const char *kind)
{
	return strncmp(kind, "mtp", 3) == 0;
}

/* A layer Megatron counts in --num-layers: everything but a pure embedding or head, and
 * an MTP module (counted by --mtp-num-layers). */
static bool decoder_layer(const char *kind)
{
	return strcmp(kind, "embedding") != 0 && strcmp(kind, "head") != 0 && strcmp(kind, "loss") != 0 &&
	       strcmp(kind, "head+loss") != 0 && !mtp_layer(kind);
}

/* Hybrid models are the ones with a mixer Megatron-LM builds only in its hybrid model
 * (megatron/core/models/hybrid/hybrid_layer_allocation.py Symbols: M mamba, G gdn). */
static bool model_is_hybrid(const struct model *m)
{
	for (int i = 0; i < m->nlayers; i++) {
		const char *k = m->layers[i].kind;

		if (kind_has(k, "mamba") || kind_has(k, "mamba1") || kind_has(k, "mamba2") || kind_has(k, "gdn"))
			return true;
	}
	return false;
}

/* The hybrid-pattern symbols of one '+'-token of a layer kind (hybrid_layer_allocation.py
 * Symbols, lines 14-26): NULL for a token Megatron-LM has no layer for. */
static const char *hybrid_symbols(const char *tok, size_t n)
{
	static const struct { const char *tok, *sym; } map[] = {
		{ "mamba", "M" }, { "mamba2", "M" }, { "gdn", "G" },
		{ "attn", "*" }, { "attention", "*" }, { "full-attn", "*" }, { "gated_attn", "*" }, { "swa", "*" },
		{ "mla", "+" }, { "dsa", "D" },
		{ "mlp", "-" }, { "dense", "-" }, { "moe", "E" }, { "transformer", "*-" },
		{ "embedding", "" }, { "head", "" }, { "loss", "" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strlen(map[i].tok) == n && strncmp(map[i].tok, tok, n) == 0)
			return map[i].sym;
	return NULL;
}

static int hybrid_layer(const struct model *m, int l, struct strbuf *sb, struct err *e)
{
	const char *kind = m->layers[l].kind;

	if (mtp_layer(kind))
		return err_set(e, ERR_INPUT, "model.layers[%d].kind: '%s': an MTP module of a hybrid model needs "
		               "Megatron-LM's '/' MTP pattern, which this export does not write", l, kind);
	for (const char *s = kind; *s;) {
		size_t len = strcspn(s, "+");
		const char *sym = hybrid_symbols(s, len);

		if (len == 6 && strncmp(s, "mamba1", 6) == 0)
			return err_set(e, ERR_INPUT, "model.layers[%d].kind: '%s': Megatron-LM's hybrid model has no "
			               "Mamba-1 mixer (its M is Mamba-2)", l, kind);
		if (!sym)
			return err_set(e, ERR_INPUT, "model.layers[%d].kind: '%s': '%.*s' has no symbol in Megatron-LM's "
			               "--hybrid-layer-pattern (M * + D - E G)", l, kind, (int)len, s);
		strbuf_addstr(sb, sym);
		s += len;
		if (*s == '+')
			s++;
	}
	return 0;
}

/* Megatron-LM builds virtual stage v of pipeline rank r from the layout's stage v x P + r
 * (pipeline_parallel_layer_layout.py, hybrid_layer_allocation.py select_pipeline_segment:
 * segment_index = vp_rel * pp_size + pp_rank): stage s must run on device s mod P. */
static int check_placement(const struct plan *p, struct mshape *sh, struct err *e)
{
	int used = 0;

	for (int s = 0; s < p->nstages; s++)
		if (p->stages[s].device + 1 > used)
			used = p->stages[s].device + 1;
	for (int s = 0; s < p->nstages; s++)
		if (p->stages[s].device != s % used)
			return err_set(e, ERR_INPUT, "stages[%d].device: a Megatron layout needs stage s on device s mod %d; "
			               "this plan places stage %d on device %d", s, used, s, p->stages[s].device);
	/* arguments.py:945 (the layout) and :849 (the hybrid pattern's segments) */
	if (p->nstages % used != 0)
		return err_set(e, ERR_INPUT, "stages: a Megatron layout needs the same number of stages on every device "
		               "(%d stages on %d devices)", p->nstages, used);
	sh->pp = used;
	sh->vpp = p->nstages / used;
	sh->hybrid = model_is_hybrid(&p->model);
	return 0;
}

static void flush_run(struct strbuf *sb, int run)
{
	if (run == 1)
		strbuf_addch(sb, 't');
	else if (run > 1)
		strbuf_addf(sb, "t*%d", run);
}

/* The MTP rules of pipeline_parallel_layer_layout.py validate_layer_layout (lines
 * 112-135): decoder layers before every MTP module, all modules in one virtual stage,
 * and that stage the last one of its pipeline rank. */
static int check_mtp(const struct plan *p, const struct mshape *sh, struct err *e)
{
	int mtp_stage = -1, last_decoder = -1, first_mtp = -1;

	for (int s = 0; s < p->nstages; s++)
		for (int l = p->stages[s].first; l <= p->stages[s].last; l++) {
			const char *kind = p->model.layers[l].kind;

			if (mtp_layer(kind)) {
				if (mtp_stage >= 0 && mtp_stage != s)
					return err_set(e, ERR_INPUT, "stages[%d]: MTP modules in stages %d and %d: Megatron-LM needs "
					               "all of them in one virtual stage", s, mtp_stage, s);
				mtp_stage = s;
				if (first_mtp < 0)
					first_mtp = l;
			} else if (decoder_layer(kind)) {
				last_decoder = l;
			}
		}
	if (mtp_stage < 0)
		return 0;
	if (last_decoder > first_mtp)
		return err_set(e, ERR_INPUT, "model.layers[%d]: a decoder layer after the MTP module of layer %d: "
		               "Megatron-LM places decoder layers before MTP layers", last_decoder, first_mtp);
	if (mtp_stage < (sh->vpp - 1) * sh->pp)
		return err_set(e, ERR_INPUT, "stages[%d]: the MTP modules are in virtual stage %d of device %d: "
		               "Megatron-LM needs them in the last virtual stage of a pipeline rank", mtp_stage,
		               mtp_stage / sh->pp, mtp_stage % sh->pp);
	return 0;
}

/* Stage s of a GPT-style layout. Megatron-LM wants "E" first and "L" last, each once
 * (validate_layer_layout, lines 95-106): they go with the first and the last stage,
 * wherever the layer table folded the embedding and the head. */
static void layout_stage(const struct plan *p, int s, struct strbuf *sb)
{
	int run = 0;

	if (s == 0)
		strbuf_addch(sb, 'E');
	for (int l = p->stages[s].first; l <= p->stages[s].last; l++) {
		const char *kind = p->model.layers[l].kind;

		if (mtp_layer(kind)) {
			flush_run(sb, run);
			strbuf_addch(sb, 'm');
			run = 0;
		} else {
			run += decoder_layer(kind);
		}
	}
	flush_run(sb, run);
	if (s == p->nstages - 1)
		strbuf_addch(sb, 'L');
}

static int layout_of(const struct plan *p, const struct mshape *sh, struct strbuf *sb, struct err *e)
{
	if (sh->hybrid)
		return err_set(e, ERR_INPUT, "model: a hybrid (Mamba or gated DeltaNet) model: Megatron-LM refuses "
		               "--pipeline-model-parallel-layout with --hybrid-layer-pattern (arguments.py:825); "
		               "export megatron-args writes its partition into the pattern");
	if (check_mtp(p, sh, e) < 0)
		return -1;
	for (int s = 0; s < p->nstages; s++) {
		if (s)
			strbuf_addch(sb, '|');
		layout_stage(p, s, sb);
	}
	return 0;
}

int megatron_layout(const struct plan *p, struct strbuf *sb, struct err *e)
{
	struct mshape sh;

	if (check_placement(p, &sh, e) < 0)
		return -1;
	return layout_of(p, &sh, sb, e);
}

/* The hybrid pattern, '|' between the plan's stages (segments % P == 0: arguments.py:849;
 * with one stage and P = 1 no '|' at all). A stage of the embedding or the loss alone is
 * an empty segment ("|M-M..." or "...-M|"): Megatron-LM's select_pipeline_segment allows
 * them "for pipeline balancing" (hybrid_layer_allocation.py and its test_empty_segment),
 * and its HybridStack builds an empty layer list there (read at Megatron-LM d98e8a64). */
static int hybrid_pattern(const struct plan *p, struct strbuf *sb, struct err *e)
{
	for (int s = 0; s < p->nstages; s++) {
		if (s)
			strbuf_addch(sb, '|');
		for (int l = p->stages[s].first; l <= p->stages[s].last; l++)
			if (hybrid_layer(&p->model, l, sb, e) < 0)
				return -1;
	}
	return 0;
}

/* How many layers Megatron-LM builds of plan layer l into a virtual stage's block (what
 * --recompute-num-layers counts): a decoder layer of a GPT-style model is one, each
 * symbol of a hybrid one is one (hybrid_block.py: one layer per symbol), the embedding,
 * the loss and MTP modules none (the MTP block recomputes on its own). */
static int block_layers(const struct model *m, int l, bool hybrid)
{
	const char *kind = m->layers[l].kind;
	int n = 0;

	if (!hybrid || mtp_layer(kind))
		return decoder_layer(kind);
	for (const char *s = kind; *s;) {
		size_t len = strcspn(s, "+");
		const char *sym = hybrid_symbols(s, len);

		n += sym ? (int)strlen(sym) : 1;
		s += len;
		if (*s == '+')
			s++;
	}
	return n;
}

int megatron_recompute_block(struct plan *p, int n)
{
	bool hybrid = model_is_hybrid(&p->model);
	int most = 0;

	for (int s = 0; s < p->nstages; s++) {
		struct stage *g = &p->stages[s];
		int have = 0, cover = 0;

		g->recompute = RECOMPUTE_FULL;
		for (int l = g->first; l <= g->last; l++) {
			int k = block_layers(&p->model, l, hybrid);

			if (have < n && k)
				cover = l - g->first + 1;
			have += k;
		}
		most = have > most ? have : most;
		g->recompute_layers = have <= n || cover == g->last - g->first + 1 ? 0 : cover;
	}
	return most;
}

/* One recompute mode for every layer (TransformerConfig has one); *rc gets it, and *block
 * the --recompute-num-layers of the block method (0: every layer, the uniform method). */
static int check_recompute(const struct plan *p, int *rc, int *block, struct err *e)
{
	bool hybrid = model_is_hybrid(&p->model);
	int cut = -1;

	*rc = p->stages[0].recompute;
	*block = 0;
	for (int s = 1; s < p->nstages; s++)
		if (p->stages[s].recompute != *rc)
			return err_set(e, ERR_INPUT, "stages[%d].recompute: '%s' but stages[0] recomputes '%s': "
			               "Megatron-LM sets one recompute mode for every layer", s,
			               recompute_name((enum recompute)p->stages[s].recompute),
			               recompute_name((enum recompute)*rc));
	/* a table made with `octopipe cost --recompute` already prices full recompute (its
	 * stages carry no mode of their own): Megatron-LM must recompute as well */
	if (model_recomputes(plan_src_model(p))) {
		*rc = RECOMPUTE_FULL;
		return 0;  /* every layer: the uniform method */
	}
	if (*rc != RECOMPUTE_FULL)
		return 0;
	/* the block method (recompute.py checkpointed_forward): each virtual stage's block
	 * recomputes its first N layers and keeps the others' activations; one N for all */
	for (int s = 0; s < p->nstages; s++) {
		const struct stage *g = &p->stages[s];
		int have = 0, redo = 0;

		for (int l = g->first; l <= g->last; l++) {
			int k = block_layers(&p->model, l, hybrid);

			have += k;
			redo += plan_layer_recompute(p, s, l) == RECOMPUTE_FULL ? k : 0;
		}
		if (redo < have) {
			if (cut >= 0 && redo != cut)
				return err_set(e, ERR_INPUT, "stages[%d].recompute_layers: recomputes %d decoder layers, an "
				               "earlier stage %d: Megatron-LM's --recompute-num-layers is one number for every "
				               "virtual stage", s, redo, cut);
			cut = redo;
		}
	}
	if (cut == 0)
		return err_set(e, ERR_INPUT, "stages: a stage recomputes none of its decoder layers: Megatron-LM's "
		               "full recompute needs --recompute-num-layers of at least 1 (transformer_config.py:1919)");
	for (int s = 0; s < p->nstages && cut > 0; s++) {
		const struct stage *g = &p->stages[s];
		int have = 0;

		for (int l = g->first; l <= g->last; l++) {
			have += block_layers(&p->model, l, hybrid);
			/* multi_token_prediction.py:1630: the block method skips the MTP modules */
			if (mtp_layer(p->model.layers[l].kind) && plan_layer_recompute(p, s, l) == RECOMPUTE_FULL)
				return err_set(e, ERR_INPUT, "stages[%d]: recomputes MTP module layer %d, which Megatron-LM's "
				               "--recompute-method block never recomputes", s, l);
		}
		if (g->recompute_layers == 0 && have > cut)
			return err_set(e, ERR_INPUT, "stages[%d]: recomputes all its %d layers but another stage only %d: "
			               "Megatron-LM's --recompute-num-layers is one number for every virtual stage",
			               s, have, cut);
	}
	*block = cut > 0 ? cut : 0;
	return 0;
}

/* What Megatron-LM refuses of a layout at start-up, beyond the partition. */
static int check_schedule(const struct plan *p, const struct mshape *sh, const struct parallel *l, struct err *e)
{
	if (sh->vpp > 1) {
		/* arguments.py:1000-1009: an interleaved schedule needs P > 1 (P > 2 only with
		 * --no-overlap-p2p-communication, which is not written) */
		if (sh->pp < 2)
			return err_set(e, ERR_INPUT, "stages: %d virtual stages on one pipeline rank: Megatron-LM's "
			               "interleaved schedule needs at least 2 pipeline ranks", sh->vpp);
		/* schedules.py:1160-1179 with model_parallel_config.py:567 (the group of
		 * microbatches per virtual stage defaults to P): M >= P and M mod P = 0 */
		if (p->microbatches % sh->pp != 0)
			return err_set(e, ERR_INPUT, "microbatches: %d microbatches over %d pipeline ranks: Megatron-LM's "
			               "interleaved schedule needs a multiple of the pipeline size", p->microbatches, sh->pp);
	}
	/* arguments.py:1655-1658 and transformer_config.py:1595: EP needs routed experts, a
	 * number of them EP divides (the plan's loader checks both: parallel.c) */
	if (l->ep > 1) {
		bool experts = false;

		for (int i = 0; i < plan_src_model(p)->nlayers; i++)
			experts |= plan_src_model(p)->layers[i].expert_param_bytes > 0;
		if (!experts)
			return err_set(e, ERR_INPUT, "parallel.ep: %d expert-parallel ranks but the model has no routed "
			               "experts: Megatron-LM refuses --expert-model-parallel-size without --num-experts", l->ep);
	}
	return 0;
}

/* Data parallelism, ZeRO and the gradients' precision. */
static void add_dp_flags(const struct parallel *l, struct strbuf *sb)
{
	/* bf16 weights, and bf16 gradients unless the layout says fp32: Megatron-LM's bf16
	 * default accumulates and reduces in fp32 (arguments.py:1213-1216) */
	strbuf_addstr(sb, "--bf16 \\\n");
	if (l->zero <= 1 && !l->fp32_grads)
		strbuf_addstr(sb, "--grad-reduce-in-bf16 \\\n");
	if (l->zero == 1)
		strbuf_addstr(sb, "--use-distributed-optimizer \\\n");
	if (l->zero >= 2) {
		/* Megatron-FSDP: version 1 (the default) turns the distributed optimizer on
		 * itself and version 2 refuses it beside (arguments.py:1122-1131); only the
		 * fsdp_dtensor checkpoint format (:1169); its gradients are the model's dtype
		 * unless --megatron-fsdp-main-grads-dtype says otherwise (:3691, 'auto'), and
		 * it reduces them in that dtype (--megatron-fsdp-grad-comm-dtype 'auto') */
		strbuf_addf(sb, "--use-megatron-fsdp \\\n--data-parallel-sharding-strategy %s \\\n"
		                "--ckpt-format fsdp_dtensor \\\n--megatron-fsdp-main-grads-dtype %s \\\n",
		            l->zero == 2 ? "optim_grads" : "optim_grads_params", l->fp32_grads ? "fp32" : "bf16");
	}
	if (l->dp > 1) {
		strbuf_addstr(sb, "--overlap-grad-reduce \\\n");
		/* arguments.py:1024-1029: only with the distributed optimizer or Megatron-FSDP,
		 * and with --overlap-grad-reduce */
		if (l->zero >= 1)
			strbuf_addstr(sb, "--overlap-param-gather \\\n");
	}
}

static void add_recompute_flags(int rc, int block, struct strbuf *sb)
{
	/* transformer_config.py:1908-1931: full needs a method and a layer count, selective
	 * neither (also arguments.py:1425); uniform 1 checkpoints every layer's input, block
	 * N only the first N of each virtual stage's */
	if (rc == RECOMPUTE_SELECTIVE)
		strbuf_addstr(sb, "--recompute-granularity selective \\\n--recompute-modules core_attn \\\n");
	else if (rc == RECOMPUTE_FULL && block > 0)
		strbuf_addf(sb, "--recompute-granularity full \\\n--recompute-method block \\\n"
		                "--recompute-num-layers %d \\\n", block);
	else if (rc == RECOMPUTE_FULL)
		strbuf_addstr(sb, "--recompute-granularity full \\\n--recompute-method uniform \\\n"
		                  "--recompute-num-layers 1 \\\n");
}

/* Blackwell (B100, B200, GB200, B300, ...) and later lift the stream-count rule of tensor
 * parallelism; a cluster that names no GPU is taken as Hopper or before, where it holds. */
static bool before_blackwell(const struct cluster *c)
{
	const char *g = c->gpu ? c->gpu : "";

	if (*g == 'G' || *g == 'g')
		g++;
	return !((*g == 'B' || *g == 'b') && g[1] >= '1' && g[1] <= '9');
}

/* What Megatron-LM asserts of the environment at start-up: CUDA_DEVICE_MAX_CONNECTIONS
 * 1 with tensor parallelism before Blackwell (arguments.py:1453-1479), and anything but 1
 * with Megatron-FSDP (:1166), which only warns beside tensor parallelism. */
static void add_env_notes(const struct plan *p, const struct parallel *l, struct strbuf *sb)
{
	if (l->zero >= 2)
		strbuf_addstr(sb, "# environment: CUDA_DEVICE_MAX_CONNECTIONS unset or above 1 (Megatron-FSDP asserts it)\n");
	else if (l->tp > 1 && before_blackwell(plan_src_cluster(p)))
		strbuf_addstr(sb, "# environment: CUDA_DEVICE_MAX_CONNECTIONS=1 (Megatron-LM asserts it with tensor "
		                  "parallelism before Blackwell)\n");
}

/* The layout's degrees: a plan without one is pure pipeline parallelism over the
 * devices its stages use; one whose layout names more pipeline ranks than its stages
 * use cannot be written (Megatron-LM runs a stage on every rank). */
static int layout_degrees(const struct plan *p, const struct mshape *sh, struct parallel *l, struct err *e)
{
	*l = plan_parallel(p);
	if (!p->has_parallel)
		l->pp = sh->pp;
	else if (sh->pp != l->pp)
		return err_set(e, ERR_INPUT, "parallel.pp: %d pipeline ranks but the stages use %d (devices 0..%d): "
		               "Megatron-LM runs a stage on every pipeline rank", l->pp, sh->pp, sh->pp - 1);
	return 0;
}

static int args_of(const struct plan *p, const char *plan_name, struct strbuf *sb, struct err *e)
{
	struct strbuf part = STRBUF_INIT;
	struct mshape sh;
	struct parallel l;
	int rc, block, layers = 0, mtp = 0, r = -1;

	if (check_recompute(p, &rc, &block, e) < 0 || check_placement(p, &sh, e) < 0 || layout_degrees(p, &sh, &l, e) < 0 ||
	    check_schedule(p, &sh, &l, e) < 0)
		goto out;
	if (sh.hybrid ? hybrid_pattern(p, &part, e) < 0 : layout_of(p, &sh, &part, e) < 0)
		goto out;
	for (int i = 0; i < p->model.nlayers; i++) {
		layers += decoder_layer(p->model.layers[i].kind);
		mtp += mtp_layer(p->model.layers[i].kind);
	}
	/* the name is a file name: a newline in it would start a line of flags */
	strbuf_addstr(sb, "# Megatron-LM arguments for ");
	strbuf_add_printable(sb, plan_name, strlen(plan_name), false);
	strbuf_addf(sb, ": pp %d x tp %d x dp %d = %d GPUs (octopipe export megatron-args)\n", l.pp, l.tp, l.dp,
	            parallel_gpus(&l));
	strbuf_addf(sb, "# Megatron runs its own %s order over this partition; a tuned order\n"
	                "# of OctoPipe's needs OctoPipe's executor (octopipe run).\n",
	            sh.vpp > 1 ? "interleaved 1F1B" : "1F1B");
	if (sh.hybrid)
		strbuf_addstr(sb, "# a hybrid model: its partition is the pattern's '|' segments (Megatron-LM with\n"
		                  "# --hybrid-layer-pattern; --num-layers comes from the pattern).\n");
	add_env_notes(p, &l, sb);
	/* no virtual-stage flag: Megatron-LM takes the virtual pipeline size from the layout
	 * or the pattern and refuses one given beside it (arguments.py:814-825, 928-939) */
	strbuf_addf(sb, "--pipeline-model-parallel-size %d \\\n", l.pp);
	strbuf_addf(sb, "--tensor-model-parallel-size %d \\\n", l.tp);
	/* arguments.py:1431-1439 drops sequence parallelism at TP 1; with EP and TP it must be
	 * on (model_parallel_config.py:560-565) */
	if (l.tp > 1)
		strbuf_addstr(sb, "--sequence-parallel \\\n");
	if (l.ep > 1)  /* the all-to-all the simulator prices (Megatron-LM's default gathers every token) */
		strbuf_addf(sb, "--expert-model-parallel-size %d \\\n--moe-token-dispatcher-type alltoall \\\n", l.ep);
	add_dp_flags(&l, sb);
	add_recompute_flags(rc, block, sb);
	if (!sh.hybrid) {
		strbuf_addf(sb, "--num-layers %d \\\n", layers);
		if (mtp)
			strbuf_addf(sb, "--mtp-num-layers %d \\\n", mtp);
	}
	strbuf_addf(sb, "--seq-length %ld \\\n", p->model.seq_len);
	strbuf_addf(sb, "--micro-batch-size %ld \\\n", p->model.micro_batch_size);
	strbuf_addf(sb, "--global-batch-size %ld \\\n", (long)p->microbatches * p->model.micro_batch_size * l.dp);
	strbuf_addf(sb, sh.hybrid ? "--hybrid-layer-pattern \"%s\"\n" : "--pipeline-model-parallel-layout \"%s\"\n",
	            part.buf);
	r = strbuf_failed(sb) || strbuf_failed(&part) ? err_set(e, ERR_RUNTIME, "out of host memory") : 0;
out:
	strbuf_release(&part);
	return r;
}

int megatron_args(const struct plan *p, const char *plan_name, struct strbuf *sb, struct err *e)
{
	if (args_of(p, plan_name, sb, e) < 0) {
		if (e->cls == ERR_INPUT)
			err_prefix(e, plan_name);
		return -1;
	}
	return 0;
}

int megatron_check(const struct plan *p, struct err *e)
{
	struct strbuf sb = STRBUF_INIT;
	int r = args_of(p, "plan", &sb, e);

	strbuf_release(&sb);
	return r;
}
