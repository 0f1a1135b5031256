/*
 * nvml — a handful of NVML entry points resolved with dlsym (see nvml.h). The types
 * below are the few NVML declares for them, written out here so that no NVML header is
 * needed to build.
 */
#include "config.h"
#include "exec/nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int nvml_ret;                      /* nvmlReturn_t: 0 is success */
typedef struct nvml_device *nvml_device;   /* nvmlDevice_t */
struct nvml_util { unsigned int gpu, memory; };
struct nvml_mem { unsigned long long total, free, used; };

struct nvml {
	void *lib;
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	nvml_ret (*by_pci)(const char *pci, nvml_device *dev);
	nvml_ret (*util)(nvml_device dev, struct nvml_util *u);
	nvml_ret (*mem)(nvml_device dev, struct nvml_mem *m);
};

struct nvml *nvml_open(char *reason, size_t reasonsz)
{
	struct nvml *n = calloc(1, sizeof(*n));

	if (!n) {
		snprintf(reason, reasonsz, "out of host memory");
		return NULL;
	}
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(reason, reasonsz, "libnvidia-ml.so.1 not found");
		free(n);
		return NULL;
	}
	*(void **)&n->init = dlsym(n->lib, "nvmlInit_v2");
	*(void **)&n->shutdown = dlsym(n->lib, "nvmlShutdown");
	*(void **)&n->by_pci = dlsym(n->lib, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&n->util = dlsym(n->lib, "nvmlDeviceGetUtilizationRates");
	*(void **)&n->mem = dlsym(n->lib, "nvmlDeviceGetMemoryInfo");
	if (!n->init || !n->shutdown || !n->by_pci || !n->util || !n->mem) {
		snprintf(reason, reasonsz, "libnvidia-ml.so.1 lacks the functions octopipe uses");
	} else if (n->init() != 0) {
		snprintf(reason, reasonsz, "nvmlInit failed (no driver?)");
	} else {
		return n;
	}
	dlclose(n->lib);
	free(n);
	return NULL;
}

bool nvml_sample(struct nvml *n, const char *pci, double *util, uint64_t *mem_used)
{
	nvml_device dev;
	struct nvml_util u;
	struct nvml_mem m;

	if (!n || n->by_pci(pci, &dev) != 0 || n->util(dev, &u) != 0 || n->mem(dev, &m) != 0)
		return false;
	*util = u.gpu / 100.0;
	*mem_used = m.used;
	return true;
}

void nvml_close(struct nvml *n)
{
	if (!n)
		return;
	n->shutdown();
	dlclose(n->lib);
	free(n);
}
