/*
 * cost — the analytic cost model: per-token FLOPs, parameters and activation bytes of
 * every block kind (docs/METHOD.md §6.2), and the F / I / W times and memory of a layer made
 * of such blocks on a given GPU, sequence length, micro-batch and tensor-parallel degree.
 *
 * A block's work is kept by kernel class (hardware.h) and per token, with the attention
 * core separate (FLOPs per attended key), so one description serves every sequence
 * length and window. Each block also appends its kernel list (struct ktmpl: GEMM shapes,
 * cores, scans, elementwise bytes), and times are sums over it: cost_kernels() expands it
 * for a sequence, micro-batch, TP degree and pass; cost_kernel_ms() prices one kernel.
 */
#ifndef OCTO_COST_H
#define OCTO_COST_H

#include <stdbool.h>

#include "hardware.h"

enum block_kind {
	BLK_ATTN,     /* multi-head / grouped-query attention (optionally windowed, gated, with sinks) */
	BLK_MLA,      /* DeepSeek multi-head latent attention */
	BLK_MLP,      /* dense MLP, gated (SwiGLU / GeGLU) or not (GeLU, squared ReLU) */
	BLK_MOE,      /* router + routed experts + shared experts */
	BLK_MAMBA2,
	BLK_MAMBA1,
	BLK_GDN,      /* Gated DeltaNet */
	BLK_EMBED,
	BLK_HEAD,     /* final norm + LM head + loss */
	BLK_MTP_PROJ, /* DeepSeek MTP: enorm, hnorm, eh_proj */
};

/* One block's shape; only the fields of its kind are read. h is the model's hidden size. */
struct block {
	enum block_kind kind;
	long h;
	int norms;               /* norm vectors of size h in the block (pre-norm 1, Gemma 2) */
	bool bias;               /* linear biases (gpt-oss, GPT-2, ...) */
	/* attention */
	int n_q, n_kv, d_h;
	long window;             /* sliding window; 0 = full causal */
	bool qk_norm, out_gate, sinks;
	bool eager;              /* scores materialized (HF attn_implementation "eager"), not fused */
	/* MLA */
	int q_lora, kv_lora, d_nope, d_rope, d_v;
	/* MLP and MoE */
	long f;                  /* MLP intermediate, or per-expert intermediate for MoE */
	bool gated;
	bool clamped;            /* gpt-oss's clamped SwiGLU (x alpha, sigmoid, +1; unfused) */
	int experts, top_k;
	long f_shared;           /* total shared-expert intermediate (0: none) */
	bool shared_gate;
	/* Mamba-2 / Mamba-1 / GDN */
	int ssm_heads, ssm_head_dim, groups, state, conv, chunk;
	long d_inner;            /* Mamba-1 */
	int dt_rank;
	int k_heads, v_heads, k_dim, v_dim; /* GDN */
	/* embedding and head */
	long vocab;
	bool tied;               /* head shares the embedding matrix */
	bool softcap;            /* tanh logit soft-capping (Gemma) */
	double attn_dropout;     /* dropout on the attention probabilities (GPT-2's attn_pdrop) */
	double hidden_dropout;   /* dropout before each residual add (GPT-2's resid_pdrop) */
	/* more Hugging Face families (issue 23) */
	bool qkv_bias;           /* attention: biases on q, k and v only, none on o (Qwen2, GLM-4.5) */
	bool qk_norm_full;       /* attention: the q/k norms span the whole projection, n_q d_h and
	                          * n_kv d_h wide (OLMo 2), not one head (d_h) as qk_norm */
	bool ssm_no_norm;        /* Mamba-2: y x silu(z) without the gated RMSNorm's weights (Falcon-H1) */
	bool ssm_no_conv_bias;   /* Mamba-2: a convolution without bias */
	bool ssm_in_bias, ssm_out_bias; /* Mamba-2: in_proj / out_proj biases (Falcon-H1) */
};

/*
 * One entry of a layer's kernel list, per token and forward: what cost_kernels() expands
 * into concrete kernels for a sequence length, micro-batch and pass. Kept compact (a layer
 * holds up to WORK_MAX_KERNELS of them).
 */
enum ktmpl_kind {
	KT_GEMM,     /* a linear layer: rows x k times k x n (per group) */
	KT_CORE,     /* attention core: flops and bytes per attended key */
	KT_OTHER,    /* scan / SSD chunks / convolution: FLOPs in their class */
	KT_ELEM,     /* elementwise, norms, softmax-CE, gathers: bytes */
};

/* How tensor parallelism splits a GEMM over its T ranks, as Megatron-LM does. */
enum ktmpl_split {
	KS_COLUMN,   /* column-parallel (qkv, up projections, lm_head): n / T per rank */
	KS_ROW,      /* row-parallel (o_proj, down and out projections): k / T, then an all-reduce */
	KS_WHOLE,    /* replicated (router, gates, MLA's down-projections): all of it on every rank */
};

/* Kernels a runtime runs its own way (cost_style): the attention core (fused, or two batched
 * GEMMs and the score passes; its bytes and launches are the eager passes'), a routed
 * expert's kernel (launches is per expert: a loop launches each, a grouped GEMM once), the
 * loss (bytes of the unfused fp32 passes). */
enum ktmpl_role { KR_NONE, KR_CORE, KR_EXPERT, KR_LOSS };

struct ktmpl {
	unsigned char kind;      /* enum ktmpl_kind */
	unsigned char cls;       /* enum eff_class of its FLOPs (KT_ELEM: EFF_MEMORY) */
	unsigned short launches; /* kernel launches per pass */
	unsigned char split;     /* KT_GEMM: enum ktmpl_split; others split their work by T */
	unsigned char role;      /* enum ktmpl_role: what a runtime may run differently */
	bool eager;              /* KR_CORE: the model forces the eager class (sinks, "eager") */
	bool dropout;            /* KR_CORE: dropout on the probabilities (a fused core then runs
	                          * a kernel that generates them: FlashAttention-3 has none) */
	const char *name;        /* static string: "qkv", "attn_core", "experts.down", ... */
	float n, k;              /* KT_GEMM: output and reduction features; KT_CORE: the head
	                          * dimensions of PV (n) and QK^T (k), 0 for score passes */
	float rows;              /* KT_GEMM: rows per token (MoE routed: top-k) */
	float groups;            /* KT_GEMM: separate weight matrices (experts); 1 dense;
	                          * KT_CORE: query heads (0: score passes, no GEMMs) */
	float flops, bytes;      /* KT_CORE: per token per key; KT_OTHER / KT_ELEM: per token */
	float bwd;               /* not a GEMM: input-grad work over the forward's (0: twice) */
	float state;             /* KT_OTHER: bytes per token a scan moves through HBM (its
	                          * inputs, outputs and chunk states), not priced: the class's
	                          * fitted efficiency covers them; the executor moves them */
};

#define WORK_MAX_KERNELS 32  /* DeepSeek-V3's MTP layer (projection, MLA, MoE, head) has 24 */

/* Work of one layer per token (forward), by kernel class. */
struct work {
	double params;           /* all weights (memory) */
	double active;           /* weights a token touches (MoE: top-k + shared) */
	double unique;           /* weights counted in the model total (a tied head: 0) */
	double f[EFF_NCLASS];    /* FLOPs (bytes for EFF_MEMORY); attention core excluded */
	double core_per_ctx;     /* attention core FLOPs per attended key: 4 n_q d_h */
	long window;             /* 0 = full causal */
	int core_class;          /* EFF_FLASH or EFF_EAGER */
	double w_bytes;          /* weight-gradient memory traffic per microbatch (embedding) */
	double act, act_w, out;  /* bytes per token: kept for backward, kept until W, sent on */
	double in;               /* bytes per token of the layer input (kept under recompute) */
	double a2a;              /* MoE all-to-all bytes per token (dispatch + combine) */
	double expert_params;    /* the part of params in routed experts (sharded by EP) */
	double tied_params;      /* the part of params that is the embedding's (a tied head) */
	double whole_params;     /* the part of params every tensor-parallel rank holds whole
	                          * (Megatron-LM replicates them): norms, the router and gates,
	                          * MLA's down-projections, row-parallel biases */
	double core_act_per_ctx; /* attention-core activations kept per token per attended key
	                          * when the core runs eager (the softmax probabilities; a fused
	                          * core keeps none) */
	bool core_eager;         /* the model forces the eager attention class (learned sinks,
	                          * attn_implementation "eager"): how COST_ATTN_HF runs it */
	int tp_syncs;            /* tensor-parallel all-reduces of the hidden state per pass */
	int tp_units;            /* heads the layer splits over tensor-parallel ranks (the fewest
	                          * of its blocks: attention or SSM heads); 0 = no such limit */
	const char *tp_unit_name;
	/* the kernel list (cost_block fills it; an arch file's layer has none) */
	int nk;
	bool k_cut;              /* more kernels than k holds: the layer cannot be priced */
	struct ktmpl k[WORK_MAX_KERNELS];
};

/* Adds the work of b to w (a layer is the sum of its blocks). */
void cost_block(const struct block *b, struct work *w);

/* Average number of keys a query attends to: s/2 causal, the exact window formula. */
double cost_ctx(long seq, long window);
/* Forward FLOPs per token at sequence length seq (every compute class + the core). */
double cost_flops(const struct work *w, long seq);

/*
 * How a runtime runs a layer's kernel list (runtime.h fills it from a runtime profile). All
 * zero is how Hugging Face eager PyTorch runs it: attention fused unless the model forces the
 * eager class, one GEMM per routed expert, PyTorch's fp32 cross-entropy, selective recompute of the
 * attention core, tensor-parallel collectives after the GEMMs that need them.
 */
enum cost_attention {
	COST_ATTN_HF,            /* fused (SDPA) unless sinks or attn_implementation "eager" force eager */
	COST_ATTN_FUSED,         /* FlashAttention / cuDNN fused attention, learned sinks included */
	COST_ATTN_EAGER,         /* scores materialized: two batched GEMMs and softmax passes */
};
enum cost_experts { COST_EXPERTS_LOOP, COST_EXPERTS_GROUPED };
enum cost_selective {
	COST_SEL_CORE,           /* Megatron-LM's selective: the attention core is redone */
	COST_SEL_OPS,            /* torchtitan's op-level: every other GEMM output and the attention
	                          * output are kept, elementwise work and the other GEMMs redone */
};

struct cost_style {
	unsigned char attention, experts, selective; /* the enums above */
	unsigned char loss_launches; /* the loss's kernels a pass (0: as Hugging Face's) */
	float loss_f_bytes;      /* HBM bytes per token and vocabulary entry the loss moves in */
	float loss_b_bytes;      /* F and in its backward (0: Hugging Face's fp32 passes, 16 and
	                          * 22; a runtime's own code says its own) */
	bool tp_overlap;         /* TP collectives pipelined with the layer's GEMMs (Megatron-LM's
	                          * --tp-comm-overlap): only what the GEMMs cannot cover is exposed */
};

struct cost_opts {
	long seq, micro_batch;
	int tp;                  /* tensor-parallel degree (1: none) */
	bool recompute;          /* full activation recompute: keep only the layer input */
	double link_gbytes_per_s, link_latency_us; /* the TP / EP group's link */
	bool no_comm;            /* leave out the TP all-reduces and the all-to-all: the work one
	                          * GPU does by itself (what the cuda executor runs at tp > 1) */
	int ep;                  /* expert-parallel degree (0 or 1: none): a rank runs E / ep experts
	                          * with ep times the tokens each */
	struct cost_style style; /* how the runtime runs the kernels (all zero: Hugging Face eager) */
};

/*
 * The kernel list of a layer: what the layer launches in one pass of one microbatch on
 * one GPU of a TP group, in launch order. The cost model's times, calibration, tensor
 * parallelism and the executor all read this one list.
 *
 * F is the forward; I the input gradient (a GEMM's dX, the backward of cores, scans and
 * elementwise kernels at twice their forward work and launches, the loss at what its backward
 * moves); W the weight gradient (a GEMM's dW,
 * the embedding's scatter-add). A layer without a kernel list (an architecture file's
 * per-token counts) gets one pseudo-kernel per class with its FLOPs or bytes, no shape
 * and no launch.
 */
enum kernel_pass { PASS_F, PASS_I, PASS_W };

struct kernel {
	int cls;                 /* enum eff_class: which efficiency its FLOPs run at */
	const char *name;        /* static string */
	double m, n, k;          /* GEMM shape of one group: m x k times k x n (0: not a GEMM) */
	int groups;              /* independent GEMMs (experts); 1 otherwise */
	double flops;            /* all groups, per microbatch per GPU */
	double bytes;            /* HBM traffic (operands and results; elementwise traffic) */
	int launches;            /* kernel launches it stands for */
	double state_bytes;      /* a scan's HBM traffic (ktmpl.state), moved by the executor
	                          * along with its FLOPs but not priced */
	/* an attention core's GEMMs (heads > 0): each of seqs sequences of seq queries attends
	 * causally to its keys (window > 0: the last window of them), QK^T with head dimension
	 * d_qk and PV with d_v, per query head of this GPU */
	int heads, d_qk, d_v, seqs;
	long seq, window;
	bool dropout;            /* a fused core with dropout (hardware.flash_dropout_*) */
};

/* Whether an attention core runs eager under style (forced: the model asks for the eager
 * class, as learned sinks or attn_implementation "eager" make Hugging Face do). */
bool cost_core_eager(const struct cost_style *st, bool forced);

/* Writes up to max kernels of pass p of layer w to out (out may be NULL when max is 0);
 * returns how many the layer has (more than max: the list was cut). */
int cost_kernels(const struct work *w, const struct cost_opts *o, enum kernel_pass p,
                 struct kernel *out, int max);

/* Adds kernel k's work units to u (as cost_units counts them: (FLOPs / peak + bytes / HBM)
 * in ms at efficiency 1 in its class, launches / 1000 in u[HW_LAUNCH]). */
void cost_kernel_units(const struct kernel *k, const struct hardware *hw, double u[HW_NPARAM]);

/* Time of one kernel in ms: launches x launch overhead + FLOPs / (peak x efficiency of its
 * class) + bytes / (HBM x memory efficiency), at the pass's (F, or backward) parameters. */
double cost_kernel_ms(const struct kernel *k, const struct hardware *hw, enum kernel_pass p);

struct layer_cost {
	double f_ms, b_ms, w_ms;
	double param_bytes, act_bytes, act_w_bytes, out_bytes;
	/* for parallel layouts (model.h): expert weights, the input kept under full
	 * recompute, what selective recompute drops and redoes, the EP all-to-all bytes */
	double expert_param_bytes, in_bytes, core_act_bytes, core_f_ms, a2a_bytes;
	double tied_bytes;       /* the part of param_bytes that is the embedding's (a tied head) */
};

/* Times and bytes of one layer (per microbatch, per GPU of the TP group). */
void cost_layer(const struct work *w, const struct hardware *hw, const struct cost_opts *o,
                struct layer_cost *lc);

/* Work units that multiply the fitted parameters in F and in the full backward (B + W):
 * units[c] for c < EFF_NCLASS in ms at efficiency 1 (time = units / eff), and
 * units[HW_LAUNCH] the number of launches / 1000 (time = units x launch_us). A layer's
 * time is the sum of units x parameter; calibration fits the parameters. */
void cost_units(const struct work *w, const struct hardware *hw, const struct cost_opts *o,
                double f_units[HW_NPARAM], double bw_units[HW_NPARAM]);

#endif
