/*
 * plan — partition + placement + per-device order (`octopipe.plan/1`).
 *
 * A plan owns its model and cluster (read from the paths it names, relative to the plan
 * file, or from embedded objects). Validation proves the plan is well formed: stages cover
 * every layer once and in order, every stage sits on an existing device, each device's
 * list holds exactly the ops of its own stages, each once, and W/I appear only with a
 * split backward. Whether the order can run (no deadlock) is the simulator's question.
 *
 * The order is stored flat (CSR): device d runs order[order_start[d] .. order_start[d+1]).
 */
#ifndef OCTO_PLAN_H
#define OCTO_PLAN_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "action.h"
#include "cluster.h"
#include "err.h"
#include "parallel.h"
#include "model.h"

#define PLAN_FORMAT "octopipe.plan/1"

struct stage {
	int first;   /* first layer, inclusive */
	int last;    /* last layer, inclusive */
	int device;
	int recompute;   /* enum recompute (parallel.h) */
	int recompute_layers;   /* with full recompute: only the stage's first n layers
	                         * recompute, the rest keep their activations (Megatron-LM's
	                         * --recompute-method block; `"recompute_layers"`); 0: all */
};

/* How the runtime that runs the plan moves activations between devices (`"comm"`):
 * overlapped with compute (OctoPipe's executor, Megatron's interleaved schedule), or
 * blocking as Megatron-LM's default 1F1B does: a transfer holds the sending device until
 * the receiving one has reached the op that consumes it and the data has arrived. */
enum plan_comm { PLAN_COMM_OVERLAP = 0, PLAN_COMM_BLOCKING };

struct plan {
	char *name;             /* optional; NULL when not given */
	char *model_ref;        /* the path as written in the file; NULL when embedded */
	char *cluster_ref;
	/* With a parallel layout (`"parallel"`), model and cluster are what one pipeline
	 * replica sees: the layer table at the TP degree and the cluster of its pp pipeline
	 * devices (parallel.h); src_model and src_cluster are the files' own, which a save
	 * writes back. Without one, par is (devices, 1, 1, 1, 0) and the src_ are empty. */
	struct model model;
	struct cluster cluster;
	struct parallel par;
	bool has_parallel;
	struct model src_model;
	struct cluster src_cluster;
	int microbatches;
	bool split_backward;
	enum plan_comm comm;    /* default overlap */
	bool no_gathers;        /* ZeRO-3's weight gathers left out of the op times
	                         * (plan_drop_collectives) */
	int nstages;
	struct stage *stages;
	int ndevices;           /* = cluster.devices */
	int *order_start;       /* ndevices + 1 entries */
	struct action *order;
	cJSON *extra;
	cJSON *stage_extra;  /* the stages' comments ("_..."), kept with the
	                      * layers of their stage: [{"first", "last", "extra"}]; a rewrite
	                      * writes them back onto the stage of the same layers (NULL: none) */
};

/* Gives p (whose model and cluster are the files' own, and which has no stages yet) the
 * layout l: keeps them as src_model / src_cluster and makes model and cluster the
 * replica's (parallel_model, parallel_cluster); ndevices becomes l->pp. A pipeline-only
 * layout over all the cluster's devices changes nothing. */
int plan_apply_parallel(struct plan *p, const struct parallel *l, struct err *e);
/* For a plan built on a replica's model and cluster (parallel_replica): records layout l
 * and the files' own model m and cluster c (copied), which a save writes. */
int plan_attach_parallel(struct plan *p, const struct parallel *l, const struct model *m,
                         const struct cluster *c, struct err *e);
/* Re-prices a loaded plan under another layout with the same pp (its devices): from the
 * files' model and cluster again. */
int plan_set_parallel(struct plan *p, const struct parallel *l, struct err *e);
/* Re-prices p without the collectives its op times include: its layer table without the
 * tensor-parallel and expert-parallel ones (parallel_model_compute, at the plan's TP
 * degree, or the degree its model was made at) and, under ZeRO 3, its ops without the
 * weight gathers they wait for: the plan as the cuda executor runs it, one GPU per
 * pipeline rank of one replica. *changed says whether any op's time moved. -1 with e
 * when the collectives cannot be told apart (a table at tp > 1 without architecture). */
int plan_drop_collectives(struct plan *p, bool *changed, struct err *e);
/* Every stage recomputes as r (all its layers). */
void plan_set_recompute(struct plan *p, enum recompute r);

/* How stage s recomputes its layer l: its mode, but none for a layer past a full
 * recompute's first recompute_layers. */
static inline enum recompute plan_layer_recompute(const struct plan *p, int s, int l)
{
	const struct stage *g = &p->stages[s];

	if (g->recompute == RECOMPUTE_FULL && g->recompute_layers > 0 && l - g->first >= g->recompute_layers)
		return RECOMPUTE_NONE;
	return (enum recompute)g->recompute;
}

/* The layout a plan is simulated under: its cluster's (a replica's), else pure pipeline
 * parallelism over its devices, at the micro-batch its "parallel" names. */
static inline struct parallel plan_parallel(const struct plan *p)
{
	struct parallel l;

	parallel_from_replica(&p->cluster.rep, p->ndevices, &l);
	if (p->has_parallel)
		l.micro_batch = p->par.micro_batch;
	return l;
}
/* The files' model and cluster (src_ with a layout, else model and cluster). */
static inline const struct model *plan_src_model(const struct plan *p)
{
	return p->has_parallel ? &p->src_model : &p->model;
}
static inline const struct cluster *plan_src_cluster(const struct plan *p)
{
	return p->has_parallel ? &p->src_cluster : &p->cluster;
}

/* Validates root; model/cluster paths are resolved against base_dir (the plan file's
 * directory; NULL = current directory). */
int plan_from_json(struct plan *p, const cJSON *root, const char *file, const char *base_dir,
                   struct err *e);
int plan_load(struct plan *p, const char *path, struct err *e);
/* With embed, the model and cluster are written inline even if they came from files. */
cJSON *plan_to_json(const struct plan *p, bool embed);
int plan_save(const struct plan *p, const char *path, bool embed, struct err *e);

/* The fewest bytes the file of a plan with nstages stages and microbatches microbatches
 * can take: every stage runs a forward and a backward of every microbatch, each an order
 * entry of its stage's and microbatch's digits and at least 5 bytes more. */
double plan_file_floor_bytes(long nstages, long microbatches);
/* -1 with e set (ERR_INPUT, naming the limit) when such a plan would be larger than the
 * FILEIO_MAX_BYTES every octopipe command reads: for a command to refuse before it builds
 * a plan no other command could read back. */
int plan_check_size(long nstages, long microbatches, struct err *e);
void plan_release(struct plan *p);
/* A deep copy of src into *dst (plan_copy.c): nothing shared, the same file when written.
 * 0, or -1 with e (out of host memory); *dst is untouched on failure. */
int plan_copy(struct plan *dst, const struct plan *src, struct err *e);

/* Ops each stage needs per microbatch: 3 (F, I, W) with a split backward, else 2 (F, B). */
static inline int plan_ops_per_mb(const struct plan *p)
{
	return p->split_backward ? 3 : 2;
}

static inline long plan_total_ops(const struct plan *p)
{
	return p->order_start[p->ndevices];
}

/* Stage s's time per op slot on a speed-1 device: ms[0] F, ms[1] the backward op (I with
 * a split backward, else the full B = I + W), ms[2] W (0 without a split), each with the
 * cluster's fixed per-op overhead. The backward pays the stage's recompute (the whole
 * forward, or the attention cores for selective); under ZeRO-3 an F or backward op takes
 * at least its prefetched weight all-gather. The one sum that the simulator and every
 * executor backend share. */
void plan_stage_ms(const struct plan *p, int s, double ms[3]);
const char *plan_comm_name(enum plan_comm c);
/* "overlap" or "blocking"; -1 for anything else. */
int plan_comm_from_name(const char *name, enum plan_comm *out);

/* Number of stages placed on device d. */
int plan_stages_on(const struct plan *p, int d);
/* Sets order_start so that device d's list has room for ops_per_stage ops per microbatch
 * of each stage it holds (one pass over the stages: plan_stages_on per device would be
 * quadratic at tens of thousands of devices). */
void plan_size_orders(struct plan *p, int ops_per_stage);

#endif
