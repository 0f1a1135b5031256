/*
 * gpu_probe — device query through the CUDA runtime and the NCCL version (see
 * gpu_probe.h). Every call is checked; "no driver" and "no device" are answers, not
 * crashes.
 */
#include "config.h"
#include "gpu_probe.h"

#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

int gpu_probe(struct gpu_info *g)
{
	cudaError_t rc;
	int n = 0;

	memset(g, 0, sizeof(*g));
	if (ncclGetVersion(&g->nccl_version) != ncclSuccess)
		g->nccl_version = 0;
	if (cudaRuntimeGetVersion(&g->runtime_version) != cudaSuccess)
		g->runtime_version = 0;
	if (cudaDriverGetVersion(&g->driver_version) != cudaSuccess)
		g->driver_version = 0;
	rc = cudaGetDeviceCount(&n);
	if (rc != cudaSuccess) {
		if (g->driver_version == 0)
			snprintf(g->reason, sizeof(g->reason), "no CUDA driver is installed (%s)", cudaGetErrorName(rc));
		else
			snprintf(g->reason, sizeof(g->reason), "%s (%s)", cudaGetErrorString(rc), cudaGetErrorName(rc));
		return 0;
	}
	if (n == 0) {
		snprintf(g->reason, sizeof(g->reason), "the CUDA driver reports no devices");
		return 0;
	}
	if (n > GPU_PROBE_MAX)
		n = GPU_PROBE_MAX;
	for (int i = 0; i < n; i++) {
		struct cudaDeviceProp prop;
		struct gpu_device *d = &g->dev[g->count];

		rc = cudaGetDeviceProperties(&prop, i);
		if (rc != cudaSuccess) {
			snprintf(g->reason, sizeof(g->reason), "device %d: %s", i, cudaGetErrorString(rc));
			continue;
		}
		snprintf(d->name, sizeof(d->name), "%s", prop.name);
		d->mem_bytes = prop.totalGlobalMem;
		d->cc_major = prop.major;
		d->cc_minor = prop.minor;
		d->sm_count = prop.multiProcessorCount;
		if (cudaDeviceGetPCIBusId(d->pci_bus_id, (int)sizeof(d->pci_bus_id), i) != cudaSuccess)
			snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "?");
		g->count++;
	}
	return g->count;
}
