/*
 * test_tune_partition — the tuner's partitioner against exhaustive search: the stage-level
 * program is exact (per-stage capacities and memory limits, random instances), and the
 * device-level search reaches the best device balance of every small placement it is
 * given, never an empty stage, never over a device's memory.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tune_partition.h"
#include "../tap.h"

static unsigned long long rng = 0x853c49e6748fea9bULL;

static double urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* Calls fn on every composition of L layers into S non-empty stages. */
static void compositions(int L, int S, int *first, void (*fn)(const int *first, void *arg), void *arg)
{
	for (unsigned mask = 0; mask < (1u << (L - 1)); mask++) {
		int k = 0;

		if (__builtin_popcount(mask) != S - 1)
			continue;
		first[0] = 0;
		for (int g = 0; g < L - 1; g++)
			if (mask & (1u << g))
				first[++k] = g + 1;
		first[S] = L;
		fn(first, arg);
	}
}

struct stage_case {
	const struct tune_part_in *in;
	int S;
	const double *cap, *mem;
	double best;
};

static void stage_visit(const int *first, void *arg)
{
	struct stage_case *c = arg;
	double worst = 0;

	for (int s = 0; s < c->S; s++) {
		double cost = 0, bytes = 0;

		for (int l = first[s]; l < first[s + 1]; l++) {
			cost += c->in->cost[l];
			bytes += c->in->bytes[l];
		}
		if (c->mem[s] > 0 && bytes > c->mem[s])
			return;
		worst = fmax(worst, cost / c->cap[s]);
	}
	c->best = fmin(c->best, worst);
}

struct dev_case {
	const struct tune_part_in *in;
	int S;
	const int *device;
	double best;
};

static void dev_visit(const int *first, void *arg)
{
	struct dev_case *c = arg;
	double load[8] = { 0 }, bytes[8] = { 0 }, wait[8], worst = 0;
	bool seen[8] = { false };

	/* with the wait for the first backward: the device's whole wait (its estimate is
	 * checked against the simulator in test_tune) in place of the fill */
	if (c->in->icost && tune_partition_wait(c->in, c->S, c->device, first, wait) == 0)
		for (int d = 0; d < c->in->ndevices; d++) {
			load[d] = c->in->fill * wait[d];
			seen[d] = true;
		}
	for (int s = 0; s < c->S; s++) {
		if (!seen[c->device[s]]) {
			/* the first microbatch's forward through every layer before this stage */
			seen[c->device[s]] = true;
			for (int l = 0; l < first[s]; l++)
				load[c->device[s]] += c->in->fill * c->in->fcost[l];
		}
		for (int l = first[s]; l < first[s + 1]; l++) {
			load[c->device[s]] += c->in->cost[l];
			bytes[c->device[s]] += c->in->bytes[l];
		}
	}
	for (int d = 0; d < c->in->ndevices; d++) {
		if (c->in->mem[d] > 0 && bytes[d] > c->in->mem[d])
			return;
		worst = fmax(worst, load[d] / c->in->weight[d]);
	}
	c->best = fmin(c->best, worst);
}

static void test_stage_level(void)
{
	int wrong = 0, feasible = 0, bad_shape = 0;

	for (int trial = 0; trial < 300; trial++) {
		int L = 3 + (int)(urand() * 10), S = 1 + (int)(urand() * (L < 6 ? L : 6));
		double cost[16], bytes[16], cap[8], mem[8], got;
		int first[9], scratch[9];
		struct tune_part_in in = { L, cost, bytes, NULL, NULL, 0, 1, NULL, NULL, 0, 0, 0 };
		struct stage_case c = { &in, S, cap, mem, INFINITY };

		for (int l = 0; l < L; l++) {
			cost[l] = 0.2 + 3 * urand() * urand();
			bytes[l] = urand() < 0.3 ? 0 : 100 * urand();
		}
		for (int s = 0; s < S; s++) {
			cap[s] = 0.3 + urand();
			mem[s] = urand() < 0.4 ? 0 : 60 + 200 * urand();
		}
		compositions(L, S, scratch, stage_visit, &c);
		got = tune_partition_minmax(&in, S, cap, mem, first);
		if (isfinite(c.best))
			feasible++;
		if (isfinite(c.best) != isfinite(got) || (isfinite(got) && fabs(got - c.best) > 1e-9 * c.best))
			wrong++;
		if (isfinite(got)) {
			bool okay = first[0] == 0 && first[S] == L;

			for (int s = 0; s < S; s++)
				okay = okay && first[s + 1] > first[s];
			bad_shape += !okay;
		}
	}
	is_int(wrong, 0, "per-stage capacities and memory: the optimum of every composition (%d of 300 fit)", feasible);
	is_int(bad_shape, 0, "every stage non-empty, the layers covered in order");
	ok(feasible > 100 && feasible < 300, "the instances include some that cannot fit (%d fit)", feasible);
}

static void test_device_level(void)
{
	int wrong = 0, worse = 0, n = 0, over = 0, bad_shape = 0;

	for (int trial = 0; trial < 200; trial++) {
		int D = 2 + (int)(urand() * 3), S = D + (int)(urand() * (D + 1)), L = S + (int)(urand() * (14 - S));
		double cost[16], bytes[16], fwd[16], bwd[16], weight[8], mem[8], got, used[8] = { 0 };
		int first[16], scratch[16], device[16];
		/* a third of the cases also count each device's wait for the pipeline to fill,
		 * half of those its wait for the first backward too */
		struct tune_part_in in = { L, cost, bytes, fwd, trial % 6 == 5 ? bwd : NULL, trial % 3 == 2 ? 0.25 : 0, D,
		                           weight, mem, 0, 0, 0 };
		struct dev_case c = { &in, S, device, INFINITY };

		if (L > 14 || S > L)
			continue;
		for (int l = 0; l < L; l++) {
			cost[l] = 0.5 + 2 * urand();
			bytes[l] = 10 * urand();
			fwd[l] = cost[l] * (0.2 + 0.2 * urand());
			bwd[l] = fwd[l] * (1 + urand());
		}
		cost[L - 1] *= 3;   /* a heavy head */
		for (int d = 0; d < D; d++) {
			weight[d] = 0.6 + 0.4 * urand();
			mem[d] = urand() < 0.5 ? 0 : 10 * L / D + 10;
		}
		/* round robin, the V, or a random placement with every device used */
		for (int s = 0; s < S; s++)
			device[s] = trial % 3 == 0 ? s % D : trial % 3 == 1 ? ((s / D) % 2 ? D - 1 - s % D : s % D)
			                                    : (s < D ? s : (int)(urand() * D));
		compositions(L, S, scratch, dev_visit, &c);
		if (!isfinite(c.best))
			continue;
		n++;
		got = tune_partition_devices(&in, S, device, first);
		if (!isfinite(got)) {
			worse++;
			continue;
		}
		bad_shape += first[0] != 0 || first[S] != L;
		for (int s = 0; s < S; s++) {
			bad_shape += first[s + 1] <= first[s];
			for (int l = first[s]; l < first[s + 1]; l++) {
				used[device[s]] += bytes[l];
			}
		}
		for (int d = 0; d < D; d++)
			over += mem[d] > 0 && used[d] > mem[d];
		if (fabs(got - tune_partition_objective(&in, S, device, first)) > 1e-9 * got)
			wrong++;
		if (got > c.best * (1 + 1e-9))
			worse++;
	}
	ok(n > 100, "%d small placements with a partition that fits", n);
	is_int(worse, 0, "the device-level search reaches the exhaustive optimum on each");
	is_int(wrong, 0, "and reports the objective of the partition it writes");
	is_int(over, 0, "no device over its memory");
	is_int(bad_shape, 0, "every stage non-empty, the layers covered in order");
}

int main(void)
{
	test_stage_level();
	test_device_level();
	return tap_done();
}
