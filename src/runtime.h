/*
 * runtime — how a training runtime executes a layer (`octopipe.runtime/1`): the achieved
 * fraction of the GPU's peak for each kernel class, which attention kernel runs, whether
 * routed experts run as one grouped GEMM or a loop, a fused or eager loss, whether a
 * launch overlaps the previous kernel's execution, whether tensor-parallel collectives
 * hide behind the GEMMs, and what selective recompute redoes.
 *
 * The one idea: a cluster says what the GPU *is* (datasheet peak, HBM bandwidth, links),
 * a runtime says what software makes of it. runtime_hardware() combines the two into the
 * struct hardware the cost model prices kernels with, and runtime_style() gives the
 * kernel-list choices (struct cost_style) that cost_kernels() applies. A cluster whose
 * "hardware" section holds measured efficiencies (`cost --calibrate`) keeps them: a
 * measurement of this machine wins over a runtime's published figures.
 *
 * Bundled: samples/runtimes/{megatron-core,torchtitan,hf-eager}.json; each parameter
 * there names the benchmark or the runtime code that justifies it.
 */
#ifndef OCTO_RUNTIME_H
#define OCTO_RUNTIME_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "cost.h"
#include "err.h"
#include "hardware.h"

#define RUNTIME_FORMAT "octopipe.runtime/1"
#define RUNTIME_DEFAULT "megatron-core"
#define RUNTIME_MAX_GPUS 8

/* Efficiencies for one GPU model (a prefix of the cluster's "gpu", e.g. "A100"). */
struct runtime_gpu {
	char *gpu;
	bool set[EFF_NCLASS];
	double eff_f[EFF_NCLASS], eff_b[EFF_NCLASS];
	double dropout_f, dropout_b;
};

struct runtime {
	char *name;
	struct cost_style style;
	bool launch_async;          /* launches overlap execution (a kernel costs at least one launch) */
	double launch_us;
	double eff_f[EFF_NCLASS], eff_b[EFF_NCLASS];
	double dropout_f, dropout_b; /* a fused core with dropout (0: as without) */
	struct runtime_gpu gpus[RUNTIME_MAX_GPUS];
	int ngpus;
	cJSON *doc;                 /* the document as read (embedded into the models it prices) */
};

/* Reads an `octopipe.runtime/1` document; errors are one line "FILE: PATH: problem".
 * rt->doc takes a copy of root. */
int runtime_from_json(struct runtime *rt, const cJSON *root, const char *file, struct err *e);
/* Reads a file. */
int runtime_load(struct runtime *rt, const char *path, struct err *e);
void runtime_release(struct runtime *rt);

/* hw's efficiencies and launch cost as rt achieves them on a GPU named gpu (NULL: the
 * runtime's defaults). hw's peak and bandwidth are kept. */
void runtime_hardware(const struct runtime *rt, const char *gpu, struct hardware *hw);

#endif
