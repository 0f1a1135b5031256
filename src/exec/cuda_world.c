/*
 * cuda_world — the cuda backend as one MPI rank per device (see cuda_impl.h; built only
 * --with-mpi). Each rank runs its device on its node-local GPU, in its main thread; rank
 * 0 makes every channel's NCCL id and broadcasts it, every phase ends with all ranks
 * agreeing on the first failure (world.h), so all of them report the same error, and a
 * failing rank also sends an abort message that the others' wait loops poll. Here: which
 * GPU each rank holds (two ranks on one GPU get a staged channel), and the gathers that
 * bring the measured ops, transfer times and NVML samples to rank 0. The buffers of the
 * collectives are allocated up front: a collective cannot be left half way for want of
 * memory.
 */
#include "config.h"
#include "exec/cuda_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/world.h"

/* As ranks: the buffers of rank_layout and gather_ranks. */
bool cuda_world_alloc(struct cuda_exec *c)
{
	const struct exec_program *x = c->x;
	long total = 0;

	c->idents = calloc((size_t)c->ndev, sizeof(*c->idents));
	c->nto = calloc((size_t)c->ndev * c->ndev, sizeof(*c->nto));
	c->counts = calloc((size_t)c->ndev, sizeof(*c->counts));
	c->samples = calloc((size_t)c->ndev * 2, sizeof(*c->samples));
	if (!c->idents || !c->nto || !c->counts || !c->samples)
		return false;
	for (int d = 0; d < c->ndev; d++) {
		for (int i = x->start[d]; i < x->start[d + 1]; i++)
			c->counts[d] += 5 * (x->items[i].kind == EXEC_COMPUTE);
		total += c->counts[d];
	}
	c->mine = malloc((size_t)(c->counts[c->me] + 1) * sizeof(double));
	c->all = c->me == 0 ? malloc((size_t)(total + 1) * sizeof(double)) : NULL;
	return c->mine && (c->me != 0 || c->all);
}

/* As an MPI rank: which GPU every device runs on (a channel between two ranks on one GPU
 * is staged) and the tags of the staged transfers. Collective. */
void cuda_world_identify(struct cuda_exec *c, int local_gpu)
{
	struct rank_ident mine, *all = c->idents;
	int32_t *nto = c->nto;

	memset(&mine, 0, sizeof(mine));
	if (gethostname(mine.host, sizeof(mine.host) - 1) != 0)
		snprintf(mine.host, sizeof(mine.host), "?");
	snprintf(mine.bus, sizeof(mine.bus), "%s", c->info.dev[local_gpu].pci_bus_id);
	snprintf(mine.name, sizeof(mine.name), "%s", c->info.dev[local_gpu].name);
	mine.gpu = local_gpu;
	world_allgather(&mine, all, sizeof(mine));
	c->gpus_used = 0;
	for (int d = 0; d < c->ndev; d++) {
		bool seen = false;

		c->gpu_index[d] = all[d].gpu;
		snprintf(c->gpu_name[d], sizeof(c->gpu_name[d]), "%s", all[d].name);
		for (int e = 0; e < d && !seen; e++)
			seen = strcmp(all[e].host, all[d].host) == 0 && strcmp(all[e].bus, all[d].bus) == 0;
		c->gpus_used += !seen;
	}
	for (int i = 0; i < c->nchan; i++) {
		const struct rank_ident *a = &all[c->ch[i].a], *b = &all[c->ch[i].b];

		c->ch[i].kind = strcmp(a->host, b->host) == 0 && strcmp(a->bus, b->bus) == 0 ? CH_STAGED : CH_NCCL;
	}
	/* a staged transfer's tag: its index among the transfers of its pair, in send order */
	for (int d = 0; d < c->ndev; d++)
		for (int i = c->x->start[d]; i < c->x->start[d + 1]; i++)
			if (c->x->items[i].kind == EXEC_SEND)
				c->slot[c->x->items[i].xfer] = nto[d * c->ndev + c->x->xfers[c->x->items[i].xfer].dst]++;
}

/* As ranks: rank 0 gathers every device's ops, the transfer times and the NVML samples
 * (collective; the other ranks keep only their own device's ops). */
int cuda_world_gather(struct cuda_exec *c, struct timeline *t, struct err *e)
{
	const struct exec_program *x = c->x;
	int me = c->me, n = t->dev[me].nops, *counts = c->counts;
	double *mine = c->mine, *all = c->all, sample[2] = { -1, 0 }, *samples = c->samples;
	uint64_t mem = 0;
	bool ok = true;

	for (int i = 0; i < n; i++) {
		const struct tl_op *o = &t->dev[me].ops[i];

		mine[5 * i] = o->start_ms;
		mine[5 * i + 1] = o->end_ms;
		mine[5 * i + 2] = o->stage;
		mine[5 * i + 3] = o->mb;
		mine[5 * i + 4] = o->kind;
	}
	world_gatherv(mine, 5 * n, all, counts);
	for (int k = 0; k < x->nxfers; k++) {
		if (x->xfers[k].src != me)
			c->xf_send_ms[k] = -1e300;
		if (x->xfers[k].dst != me)
			c->xf_begin_ms[k] = c->xf_end_ms[k] = -1e300;
	}
	world_reduce_max(c->xf_send_ms, x->nxfers);
	world_reduce_max(c->xf_begin_ms, x->nxfers);
	world_reduce_max(c->xf_end_ms, x->nxfers);
	if (nvml_sample(c->nvml, c->info.dev[c->g[me].gpu].pci_bus_id, &sample[0], &mem))
		sample[1] = (double)mem;
	else
		sample[0] = -1;
	world_allgather(sample, samples, sizeof(sample));
	for (int d = 0; d < c->ndev; d++) {
		c->util[d] = samples[2 * d];
		c->mem[d] = samples[2 * d + 1];
	}
	if (me == 0) {
		const double *v = all;

		for (int d = 1; d < c->ndev; d++) {
			v += counts[d - 1];
			if (!(t->dev[d].ops = calloc((size_t)(counts[d] / 5 + 1), sizeof(struct tl_op)))) {
				err_set(e, ERR_RUNTIME, "out of host memory gathering the measured times");
				ok = false;
				break;
			}
			for (int i = 0; i < counts[d] / 5; i++)
				t->dev[d].ops[t->dev[d].nops++] = (struct tl_op){ v[5 * i], v[5 * i + 1], (int32_t)v[5 * i + 2],
				                                                  (int32_t)v[5 * i + 3], (uint8_t)v[5 * i + 4] };
		}
	}
	return world_agree(!ok, e);   /* the ranks go on, or stop, together */
}
