/*
 * fidelity — predicting published, measured training runs (`octopipe.points/1`, the file
 * samples/published/points.json): each point is a model (a Hugging Face config), a GPU type,
 * a runtime and the exact layout its authors ran (TP, PP, DP, EP, ZeRO, schedule, virtual
 * stages, recompute, micro-batch and global batch), with the tokens/s per GPU they
 * published. fidelity_predict() builds the layer table with the cost model under the
 * runtime, the cluster from the GPU's datasheet, the plan of the published layout, and
 * simulates it: the prediction is throughput / GPUs, to set beside the published figure.
 *
 * Nothing here is fitted to the points: they are a check of the cost model against data
 * nobody in this project produced.
 */
#ifndef OCTO_FIDELITY_H
#define OCTO_FIDELITY_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "parallel.h"
#include "runtime.h"
#include "sched.h"

#define FIDELITY_FORMAT "octopipe.points/1"
#define FIDELITY_MAX_MBS 4

struct fidelity_gpu {
	char *key;                 /* the name points refer to ("h100") */
	char *gpu;                 /* its model name ("H100-SXM-80GB") */
	int gpus_per_node;
	double mem_bytes, intra, inter, peak_tflops, hbm_gbytes_per_s;
};

struct fidelity_point {
	char *id, *config, *runtime, *source;
	int gpu;                   /* index into fidelity_set.gpus */
	int gpus, gbs;
	long seq;
	int mbs[FIDELITY_MAX_MBS]; /* the micro-batch, or the options when the source leaves it open */
	int nmbs;
	struct parallel par;
	enum sched_kind sched;
	int chunks;
	enum recompute recompute;
	double pub_tok;            /* published tokens/s per GPU */
};

struct fidelity_set {
	struct fidelity_gpu *gpus;
	int ngpus;
	struct fidelity_point *points;
	int npoints;
};

/* Reads a points file; errors are one line "FILE: PATH: problem". */
int fidelity_load(struct fidelity_set *s, const char *path, struct err *e);
void fidelity_release(struct fidelity_set *s);

struct fidelity_result {
	bool ran;                  /* a micro-batch option was priced and simulated */
	bool fits;                 /* the best one fits in memory */
	int mbs;                   /* the micro-batch predicted (the fastest that fits) */
	double tok_per_gpu;        /* predicted tokens/s per GPU */
	double ratio;              /* predicted / published */
	double makespan_ms, peak_bytes;
};

/*
 * Predicts point p of s: the architecture read from config (a config.json path), priced
 * under runtime rt on the point's GPU. Each micro-batch option is planned and simulated;
 * the fastest that fits is the prediction (as a benchmark's authors would pick), else the
 * fastest overall with fits false. -1 with e when the point cannot be built at all (its
 * config or layout is refused).
 */
int fidelity_predict(const struct fidelity_set *s, const struct fidelity_point *p, const char *config,
                     const struct runtime *rt, struct fidelity_result *out, struct err *e);

#endif
