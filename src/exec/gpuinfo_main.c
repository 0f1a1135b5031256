/*
 * octopipe-gpuinfo — prints the GPUs the CUDA executor would use, with the CUDA driver,
 * runtime and NCCL versions. Without a GPU it says so in one line and exits 1.
 *
 * usage: octopipe-gpuinfo [--json]
 * exit status: 0 at least one GPU, 1 no GPU (the reason is printed)
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

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

/* --json: built with cJSON, so a device name or reason with quotes stays valid JSON. */
static int print_json(const struct gpu_info *g)
{
	cJSON *root = cJSON_CreateObject(), *devs = cJSON_CreateArray(), *d;
	char cc[32], *text = NULL;
	bool ok = root && devs && cJSON_AddNumberToObject(root, "driver_version", g->driver_version) &&
	          cJSON_AddNumberToObject(root, "runtime_version", g->runtime_version) &&
	          cJSON_AddNumberToObject(root, "nccl_version", g->nccl_version) &&
	          cJSON_AddNumberToObject(root, "count", g->count) && cJSON_AddItemToObject(root, "devices", devs);

	if (!ok)
		cJSON_Delete(devs);
	for (int i = 0; ok && i < g->count; i++) {
		snprintf(cc, sizeof(cc), "%d.%d", g->dev[i].cc_major, g->dev[i].cc_minor);
		ok = (d = cJSON_CreateObject()) != NULL && cJSON_AddItemToArray(devs, d) &&
		     cJSON_AddNumberToObject(d, "id", i) && cJSON_AddStringToObject(d, "name", g->dev[i].name) &&
		     cJSON_AddNumberToObject(d, "mem_bytes", (double)g->dev[i].mem_bytes) &&
		     cJSON_AddStringToObject(d, "cc", cc) && cJSON_AddNumberToObject(d, "sms", g->dev[i].sm_count) &&
		     cJSON_AddStringToObject(d, "pci", g->dev[i].pci_bus_id);
	}
	if (ok && !g->count)
		ok = cJSON_AddStringToObject(root, "reason", g->reason) != NULL;
	if (ok)
		text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!text) {
		fprintf(stderr, "octopipe-gpuinfo: out of host memory\n");
		return 1;
	}
	puts(text);
	free(text);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "octopipe-gpuinfo: cannot write to standard output\n");
		return 1;
	}
	return g->count ? 0 : 1;
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
	if (json)
		return print_json(&g);
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
