/*
 * nvml — GPU utilization and memory through NVML, loaded with dlopen at run time (as
 * nvtop does) so that octopipe builds and runs without it: every query then answers
 * "not available" and reports print "N/A".
 */
#ifndef OCTO_EXEC_NVML_H
#define OCTO_EXEC_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nvml;

/* Loads and initialises NVML; NULL when the library or the driver is missing (why in
 * reason, reasonsz bytes). nvml_close() it. */
struct nvml *nvml_open(char *reason, size_t reasonsz);
/* Utilization (0..1 over NVML's last sample period) and used memory of the GPU at PCI
 * bus id pci; false when NVML cannot tell. n may be NULL (then always false). */
bool nvml_sample(struct nvml *n, const char *pci, double *util, uint64_t *mem_used);
void nvml_close(struct nvml *n);

#endif
