/*
 * cluster — the devices a plan runs on (`octopipe.cluster/1`): how many, how they group
 * into nodes, their memory and relative speed, and the two link classes (inside a node,
 * between nodes) with bandwidth and latency.
 */
#ifndef OCTO_CLUSTER_H
#define OCTO_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "hardware.h"

#define CLUSTER_FORMAT "octopipe.cluster/1"

struct link {
	double gbytes_per_s;   /* per direction, GB/s (1e9 bytes) */
	double latency_us;
};

/* What a cluster made for one replica of a parallel layout (parallel_cluster) remembers
 * of it, so every plan built on it is simulated under the layout; tp == 0 on a cluster of
 * GPUs read from a file. */
struct replica {
	int tp, dp, ep, zero;
	bool fp32_grads;       /* "grads": "fp32" (written only then) */
	struct link dp_link;   /* the data-parallel ring's link */
};

struct cluster {
	char *name;
	char *gpu;             /* optional model name, e.g. "H200"; NULL when not given */
	int devices;
	int gpus_per_node;
	uint64_t mem_bytes;    /* per device */
	double mem_headroom;   /* fraction of mem_bytes kept free (allocator, NCCL, fragmentation) */
	double speed;          /* default relative speed (1.0 = the speed the layer costs assume) */
	double *device_speed;  /* devices entries */
	double op_overhead_us; /* fixed time every op costs on top of its work (kernel launches,
	                        * the runtime's bookkeeping): many small stages pay it often */
	struct link intra;
	struct link inter;     /* zero when the cluster is a single node */
	struct replica rep;    /* "replica": written only for such a cluster */
	bool has_hw;           /* a "hardware" section (cost model calibration) was given */
	bool hw_unknown;       /* none was, and gpu names a GPU whose datasheet is not built in
	                        * (hardware_datasheet): nothing can be priced on it */
	struct hardware hw;    /* that section, else the defaults of hardware_default() */
	cJSON *extra;
	cJSON *intra_extra;    /* comments of intra_node / inter_node, kept as well */
	cJSON *inter_extra;
};

/* path: where the document sits inside file (e.g. "model" for a plan's embedded model),
 * used in messages; NULL for a whole file. */
int cluster_from_json(struct cluster *c, const cJSON *root, const char *file, const char *path,
                       struct err *e);
int cluster_load(struct cluster *c, const char *path, struct err *e);
cJSON *cluster_to_json(const struct cluster *c);
int cluster_save(const struct cluster *c, const char *path, struct err *e);
void cluster_release(struct cluster *c);
/* Deep copy (through the JSON form, so it is exactly what a save and load would give). */
int cluster_copy(struct cluster *dst, const struct cluster *src, struct err *e);

static inline int cluster_node_of(const struct cluster *c, int dev)
{
	return dev / c->gpus_per_node;
}

static inline int cluster_nodes(const struct cluster *c)
{
	return (c->devices + c->gpus_per_node - 1) / c->gpus_per_node;
}

/* The link between two devices (intra-node or inter-node). */
static inline const struct link *cluster_link(const struct cluster *c, int a, int b)
{
	return cluster_node_of(c, a) == cluster_node_of(c, b) ? &c->intra : &c->inter;
}

/* The cost of a transfer over link l, for the simulator and both emulators alike: it
 * holds the link for its wire time (bytes / bandwidth; GB/s = 1e6 bytes per ms) and
 * arrives a latency after that. Milliseconds. */
static inline double link_wire_ms(const struct link *l, uint64_t bytes)
{
	return (double)bytes / (l->gbytes_per_s * 1e6);
}

static inline double link_latency_ms(const struct link *l)
{
	return l->latency_us * 1e-3;
}

/* Usable memory per device: mem_bytes minus the headroom. */
static inline double cluster_usable_bytes(const struct cluster *c)
{
	return (double)c->mem_bytes * (1.0 - c->mem_headroom);
}

#endif
