/*
 * parallel — how a plan uses its GPUs: Megatron-LM's PP x TP x DP (x EP), ZeRO and
 * activation recompute (`"parallel"` in a plan, `"recompute"` per stage).
 *
 * A pipeline *device* of the simulator is a tensor-parallel group of T GPUs on one node,
 * and D identical pipeline replicas split the global batch. GPUs are numbered as
 * Megatron-LM orders its groups (TP fastest, then DP, then PP): GPU (p, d, r) =
 * (p x D + d) x T + r for pipeline device p, data-parallel rank d and TP rank r. So a TP
 * group never leaves a node, a DP group spans T x D consecutive GPUs (one node when that
 * fits), and an EP group (E consecutive DP ranks, E divides D) spans T x E.
 *
 * The engine simulates one replica: parallel_cluster() makes the cluster of its P pipeline
 * devices (links as the GPUs of tensor rank 0 see them: with sequence parallelism each of
 * the T ranks sends its 1/T of the hidden state over its own link at the same time, so
 * the layer table at T already holds per-GPU bytes), and parallel_model() the layer table
 * at T (from the architecture a model made by `octopipe cost` carries) with the EP
 * all-to-all of MoE layers added to their F and B. Memory per GPU and the data-parallel
 * gradient synchronisation are then priced per stage from the layout (sim.c).
 *
 * Memory per parameter (bf16 weights and gradients, fp32 master weights and two Adam
 * moments): 2 + 2 + 12 bytes; with fp32 gradients (`"grads": "fp32"`, Megatron-LM's main
 * gradients, its default for bf16) 2 + 4 + 12, and the data-parallel reduction moves
 * 4 bytes a gradient instead of 2 (the weights' all-gather stays bf16). ZeRO stage Z shards over the D data-parallel ranks: Z >= 1
 * the 12 optimizer bytes (Megatron's distributed optimizer), Z >= 2 the gradients, Z = 3
 * the weights too. Routed-expert parameters are first split over the E expert-parallel
 * ranks and then sharded over their own data-parallel group of D / E. Under ZeRO 3 a
 * layer's weights are gathered while it runs and the next one's prefetched: the two
 * largest layers of a stage are a working buffer on top of the shards.
 */
#ifndef OCTO_PARALLEL_H
#define OCTO_PARALLEL_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "arch.h"
#include "cluster.h"
#include "cost.h"
#include "err.h"
#include "model.h"

/* Activation recompute of a stage (`"recompute"`): selective = the attention core only,
 * as Megatron-LM's default selective granularity; full = every layer from its input. */
enum recompute { RECOMPUTE_NONE = 0, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL };

struct parallel {
	int pp, tp, dp, ep, zero;
	bool fp32_grads;   /* `"grads": "fp32"`: gradients accumulated and reduced in fp32
	                    * (Megatron-LM's default for bf16 training); else in bf16 */
	long micro_batch;  /* `"micro_batch_size"`: the sequences of one microbatch, the layer
	                    * table re-priced from its architecture at it (Megatron-LM's
	                    * --micro-batch-size); 0: the table's own */
};

#define PARALLEL_MAX_DEGREE 4096

const char *recompute_name(enum recompute r);
/* "none", "selective", "full"; -1 for anything else. */
int recompute_from_name(const char *name, enum recompute *out);

/* (pp, 1, 1, 1, 0), bf16 gradients: pure pipeline parallelism over pp devices. */
void parallel_default(struct parallel *l, int pp);
/* The layout of a replica's cluster (cluster.rep) over pp pipeline devices; pure
 * pipeline parallelism when the cluster has no replica. */
void parallel_from_replica(const struct replica *r, int pp, struct parallel *out);
/* the layout's JSON and the gradients' precision by name: layout_json.h */
/* T = D = E = 1, Z = 0, the table's own micro-batch: what every plan without a
 * "parallel" section is. */
bool parallel_is_pipeline_only(const struct parallel *l);
static inline int parallel_gpus(const struct parallel *l)
{
	return l->pp * l->tp * l->dp;
}

/* Whether the layout can run on cluster gpus: P x T x D <= GPUs, T within a node, the
 * TP x DP blocks tile the nodes, E divides D, 0 <= Z <= 3. err names what is wrong
 * (ERR_INPUT); what is the flag or field is the caller's prefix (e.g. "--tp" or
 * "parallel"). */
int parallel_check(const struct parallel *l, const struct cluster *gpus, struct err *e);

/* The link a DP group's ring (an EP group's all-to-all) runs over: intra-node when its span
 * fits a node; across nodes every member's own NIC at once (parallel.c says how). */
struct link parallel_dp_link(const struct parallel *l, const struct cluster *gpus);
struct link parallel_ep_link(const struct parallel *l, const struct cluster *gpus);

/* The cluster of one replica's P pipeline devices (see the top), filled fresh; it
 * remembers the layout (cluster.rep), so plans built on it simulate under it. */
int parallel_cluster(const struct cluster *gpus, const struct parallel *l, struct cluster *out,
                   struct err *e);

/* The layer table at the layout's TP degree and micro-batch plus the EP all-to-all: a copy
 * of m when the degree and micro-batch are the ones m was made at and E = 1. A model
 * without an architecture (a measured profile) only exists at its own degree and
 * micro-batch: asking for another is an ERR_INPUT error that says so, as is E > 1 for a
 * model without routed experts. */
int parallel_model(const struct model *m, const struct cluster *gpus, const struct parallel *l,
                 struct model *out, struct err *e);

/* parallel_model without the collectives the layer costs include: the tensor-parallel
 * all-reduces and all-to-all of every layer (cost_opts.no_comm) and the EP all-to-all, so
 * each layer costs what one GPU of its TP group computes by itself — what the cuda
 * executor runs, one GPU per pipeline rank. A table made at tp > 1 is re-priced from its
 * architecture even at its own degree (its times hold the collectives); without one
 * (a measured table at tp > 1) that is an ERR_INPUT error. */
int parallel_model_compute(const struct model *m, const struct cluster *gpus, const struct parallel *l,
                           struct model *out, struct err *e);

/* parallel_check, parallel_model and parallel_cluster: what one replica of layout l sees
 * (rm and rc are filled fresh). */
int parallel_replica(const struct model *m, const struct cluster *gpus, const struct parallel *l,
                     struct model *rm, struct cluster *rc, struct err *e);

/* A model's architecture (its "source"), read once for pricing it at many layouts: the
 * functions above read it afresh on every call that needs it (another TP degree, E > 1).
 * Caller-owned: parallel_source_init() (reads nothing; m must outlive s), any number of
 * parallel_source_replica(), parallel_source_release(). The first call that needs the
 * architecture reads it and keeps the answer, an unreadable source's error included. */
struct parallel_source {
	const struct model *m;
	bool read;                 /* r, err and (r == 0) a, o, hw hold the read's answer */
	int r;                     /* 0 read, 1 none (a measured or hand-made table), -1 err */
	struct err err;
	struct arch a;
	struct cost_opts o;
	struct hardware hw;
};

void parallel_source_init(struct parallel_source *s, const struct model *m);
void parallel_source_release(struct parallel_source *s);
/* parallel_replica() of s's model. */
int parallel_source_replica(struct parallel_source *s, const struct cluster *gpus, const struct parallel *l,
                            struct model *rm, struct cluster *rc, struct err *e);

/* Whether m records what its table was priced from (a "source" with an architecture): the
 * engine can then price it at another TP degree or micro-batch size. */
bool model_has_source(const struct model *m);

/* Whether m's layer table was made with `octopipe cost --recompute` (its activations
 * already recomputed: a stage must not recompute it again). */
bool model_recomputes(const struct model *m);

/* Records what m's table was priced from as its "source": a copy of the architecture (a
 * config.json or octopipe.arch/1 object), the TP degree and recompute of o, the hardware
 * (peak, bandwidth and the efficiencies used) and the runtime profile (may be NULL), so the
 * engine can price it again at another layout and the executor launch its kernels. */
int model_set_source(struct model *m, const cJSON *architecture, const struct cost_opts *o,
                     const struct hardware *hw, const cJSON *runtime, struct err *e);

/* The architecture of m's layers, from its "source" (a table made by `octopipe cost`):
 * *works gets a heap array of one struct work per layer (caller frees) and o the
 * sequence, micro-batch and TP degree the table was made at. Returns 1 (and sets
 * nothing) when m has no architecture (a measured profile or a hand-made table), 0, or
 * -1 with e set when its source is unreadable. */
int model_works(const struct model *m, struct work **works, struct cost_opts *o, struct err *e);

/* The hardware m's table was priced with (its source's, else the H200 defaults) into hw
 * (release it). 1 when m has no architecture, 0, or -1 with e. */
int model_hardware(const struct model *m, struct hardware *hw, struct err *e);

/* Re-prices m's layers under hw (new efficiencies, e.g. from octopipe calibrate --gpu):
 * each layer's times scaled by the cost model's under hw over those under the source's
 * hardware, so hand corrections and the TP communication terms are kept in proportion,
 * and hw becomes the source's hardware. 1 when m has no architecture, 0, or -1 with e. */
int model_reprice(struct model *m, const struct hardware *hw, struct err *e);

/* The tensor-parallel degree m's layer table was made at (its "source", else 1). */
int model_made_tp(const struct model *m);

/* Ring collectives over n ranks of bytes each (ms): all-reduce moves 2 (n-1)/n of the
 * bytes in 2 (n-1) steps, reduce-scatter and all-gather (n-1)/n in n-1 steps. */
double ring_allreduce_ms(double bytes, int n, const struct link *lk);
double ring_half_ms(double bytes, int n, const struct link *lk);

/* Static memory per GPU of parameters (bf16 bytes at the layer table's TP), of which
 * expert bytes are routed experts. */
struct mem_static {
	double weights, grads, optimizer;
};
void parallel_static_mem(const struct parallel *l, double param_bytes, double expert_bytes,
                       struct mem_static *out);

/* What one GPU of a stage holds and sends for its gradients and weights. The bytes its
 * data-parallel synchronisation moves: the gradients (all-reduce, or reduce-scatter
 * under ZeRO >= 1) and, for ZeRO 1-2, the updated weights' all-gather. */
struct dp_sync_cost {
	double grad_ms;          /* all-reduce / reduce-scatter of the gradients */
	double gather_ms;        /* ZeRO 1-2: the all-gather of the updated weights */
};
void parallel_dp_sync(const struct parallel *l, const struct link *dp_link, double param_bytes,
                      double expert_bytes, struct dp_sync_cost *out);

/* ZeRO-3: the all-gather of a stage's weights before each of its F and backward ops
 * (prefetched: it costs only what the op's compute does not hide). */
double parallel_zero3_gather_ms(const struct parallel *l, const struct link *dp_link,
                                double param_bytes, double expert_bytes);

#endif
