/*
 * gpu_probe — the executor's first contact with the hardware: which CUDA devices exist,
 * which driver/runtime/NCCL versions are present, or why there is no GPU. Built only
 * when configure finds CUDA and NCCL; it must fail cleanly on machines without a GPU or
 * driver, because that is where most builds and all CI runs happen.
 */
#ifndef OCTO_GPU_PROBE_H
#define OCTO_GPU_PROBE_H

#include <stddef.h>

#define GPU_PROBE_MAX 64

struct gpu_device {
	char name[256];
	size_t mem_bytes;
	int cc_major, cc_minor;
	int sm_count;
	char pci_bus_id[32];
};

struct gpu_info {
	int runtime_version;   /* e.g. 13000 for CUDA 13.0 */
	int driver_version;    /* 0 when no driver is installed */
	int nccl_version;      /* e.g. 22809 for NCCL 2.28.9 */
	int count;
	struct gpu_device dev[GPU_PROBE_MAX];
	char reason[256];      /* why count is 0 */
};

/* Fills g; returns the number of GPUs (0 with g->reason set when there are none). Never
 * fails otherwise: every CUDA/NCCL error becomes a reason. */
int gpu_probe(struct gpu_info *g);

#endif
