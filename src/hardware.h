/*
 * hardware — what the cost model needs to know about one GPU: dense BF16 peak, HBM
 * bandwidth, and the achieved fraction of each for every kernel class, forward and
 * backward. Stored as the optional "hardware" section of a cluster file; `octopipe cost
 * --calibrate` writes it, and without it the H200 defaults below are used.
 *
 * JSON: {"peak_tflops", "hbm_gbytes_per_s", "efficiency": {class: {"f", "b"}},
 * "launch_us": {"f", "b"}, "source"}; every member is optional (files written before
 * "launch_us" existed load with the default overhead).
 */
#ifndef OCTO_HARDWARE_H
#define OCTO_HARDWARE_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "err.h"

/* Kernel classes: the work of every block is split into these, each with its own
 * efficiency. Compute classes count FLOPs against the peak; EFF_MEMORY counts bytes
 * against the HBM bandwidth. */
enum eff_class {
	EFF_GEMM,        /* dense linear layers */
	EFF_GROUPED,     /* MoE routed experts (grouped GEMM) */
	EFF_FLASH,       /* attention core with a fused (flash) kernel */
	EFF_EAGER,       /* attention core that cannot use one (learned sink logits) */
	EFF_SSD,         /* Mamba-2 SSD, Gated DeltaNet chunks, their convolutions */
	EFF_SCAN,        /* Mamba-1 selective scan (CUDA cores) */
	EFF_MEMORY,      /* elementwise kernels: norms, activations, softmax-CE, gathers */
	EFF_NCLASS
};

/* The fitted parameters: one inverse efficiency per class, then the launch overhead. */
#define HW_LAUNCH EFF_NCLASS
#define HW_NPARAM (EFF_NCLASS + 1)

struct hardware {
	double peak_tflops;       /* dense BF16 tensor-core peak */
	double hbm_gbytes_per_s;  /* HBM bandwidth */
	double eff_f[EFF_NCLASS]; /* achieved fraction in the forward pass */
	double eff_b[EFF_NCLASS]; /* in the backward (input grad and weight grad) */
	double launch_us_f;       /* fixed cost of one kernel launch in the forward (us): */
	double launch_us_b;       /* dispatch, launch, tail; and in the backward */
	bool launch_async;        /* launches overlap the previous kernels' execution (a runtime
	                           * that queues ahead): a kernel costs the larger of its launches
	                           * and its work, not their sum */
	double flash_dropout_f;   /* a fused attention core with dropout: its fraction of peak (a */
	double flash_dropout_b;   /* kernel that generates the masks); 0: as without dropout */
	bool eff_given;           /* the section named efficiencies or launch costs (a calibration):
	                           * they win over a runtime's (runtime_hardware) */
	char *source;             /* where the efficiencies come from (heap), or NULL */
	cJSON *extra;             /* comments ("_..."), kept for rewrites */
};

extern const char *const hardware_class_names[EFF_NCLASS];

/* The H200 defaults (fit to the measured profiles in samples/profiles). */
void hardware_default(struct hardware *hw);
/* The datasheet peaks (dense BF16, HBM) of a GPU named without a "hardware" section, set in
 * hw (its efficiencies left as they are): false when gpu (any case) is not one of the
 * GPUs whose sheets are built in (A100, H100, H200). */
bool hardware_datasheet(const char *gpu, struct hardware *hw);
/* Class by name, -1 when unknown. */
int hardware_class(const char *name);
/* Reads a "hardware" object at path (e.g. "hardware") of file, inside the document at
 * prefix (NULL for a whole file); classes it does not name keep the defaults. */
int hardware_from_json(struct hardware *hw, const cJSON *obj, const char *file, const char *prefix,
                       const char *path, struct err *e);
/* New cJSON object (NULL when out of host memory). */
cJSON *hardware_to_json(const struct hardware *hw);
void hardware_release(struct hardware *hw);

#endif
