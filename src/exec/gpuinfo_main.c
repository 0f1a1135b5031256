/*
 * octopipe-gpuinfo — prints the GPUs the CUDA executor would use, with the CUDA driver,
 * runtime and NCCL versions. Without a GPU it says so in one line and exits 1.
 *
 * usage: octopipe-gpuinfo [--json]
 * exit status: 0 at least one GPU, 1 no GPU (the reason is printed)
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gpu_probe.h"

static void print_version(const char *what, int v, int major_div)
{
	if (v <= 0)
		printf("%s none", what);
	else if (major_div == 1000)
		printf("%s %d.%d", what, v / 1000, v % 1000 / 10);
	else
		printf("%s %d.%d.%d", what, v / 10000, v / 100 % 100, v % 100);
}

int main(int argc, char **argv)
{
	static struct gpu_info g;
	int json = argc > 1 && strcmp(argv[1], "--json") == 0;

	if (argc > 1 && !json) {
		fprintf(stderr, "usage: octopipe-gpuinfo [--json]\n");
		return 2;
	}
	gpu_probe(&g);
	if (json) {
		printf("{\"driver_version\": %d, \"runtime_version\": %d, \"nccl_version\": %d, "
		       "\"count\": %d, \"devices\": [", g.driver_version, g.runtime_version,
		       g.nccl_version, g.count);
		for (int i = 0; i < g.count; i++)
			printf("%s{\"id\": %d, \"name\": \"%s\", \"mem_bytes\": %zu, \"cc\": \"%d.%d\", "
			       "\"sms\": %d, \"pci\": \"%s\"}", i ? ", " : "", i, g.dev[i].name,
			       g.dev[i].mem_bytes, g.dev[i].cc_major, g.dev[i].cc_minor,
			       g.dev[i].sm_count, g.dev[i].pci_bus_id);
		printf("]");
		if (!g.count)
			printf(", \"reason\": \"%s\"", g.reason);
		printf("}\n");
		return g.count ? 0 : 1;
	}
	print_version("driver", g.driver_version, 1000);
	print_version(", runtime", g.runtime_version, 1000);
	print_version(", nccl", g.nccl_version, 10000);
	printf("\n");
	if (!g.count) {
		printf("no GPU: %s\n", g.reason);
		return 1;
	}
	for (int i = 0; i < g.count; i++)
		printf("gpu %d: %s, %.1f GiB, compute %d.%d, %d SMs, %s\n", i, g.dev[i].name,
		       (double)g.dev[i].mem_bytes / (1 << 30), g.dev[i].cc_major, g.dev[i].cc_minor,
		       g.dev[i].sm_count, g.dev[i].pci_bus_id);
	return 0;
}
