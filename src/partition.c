/*
 * partition — contiguous layer groupings (see partition.h). The balanced partition is
 * the classic linear-partition problem; with prefix sums a candidate split costs O(1),
 * and a binary search over the bottleneck value with a greedy feasibility check finds the
 * exact optimum among the finitely many stage costs.
 */
#include "config.h"
#include "partition.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static double layer_cost(const struct layer *l)
{
	return l->f_ms + l->b_ms + l->w_ms;
}

static int check_stages(const struct model *m, int nstages, struct err *e)
{
	if (nstages < 1)
		return err_set(e, ERR_INPUT, "need at least one stage");
	if (nstages > m->nlayers)
		return err_set(e, ERR_INPUT, "%d stages but model '%s' has only %d layers (a stage holds at least one)",
		               nstages, m->name, m->nlayers);
	return 0;
}

int partition_uniform(const struct model *m, int nstages, int *first, struct err *e)
{
	int base, extra;

	if (check_stages(m, nstages, e) < 0)
		return -1;
	base = m->nlayers / nstages;
	extra = m->nlayers % nstages;
	first[0] = 0;
	for (int s = 0; s < nstages; s++)
		first[s + 1] = first[s] + base + (s < extra);
	return 0;
}

/* Greedy: can the layers be cut into at most nstages groups of cost <= cap, each
 * non-empty, using exactly nstages groups? Fills first when it can. */
static bool fits(const double *prefix, int n, int nstages, double cap, int *first)
{
	int s = 0, start = 0;

	first[0] = 0;
	while (start < n) {
		int end = start + 1;

		if (prefix[end] - prefix[start] > cap)
			return false;
		/* extend while it fits and enough layers remain for the later stages */
		while (end < n && prefix[end + 1] - prefix[start] <= cap && n - (end + 1) >= nstages - s - 1)
			end++;
		if (++s > nstages)
			return false;
		first[s] = end;
		start = end;
	}
	if (s < nstages) {
		/* split the longest groups until there are nstages: costs only drop */
		while (s < nstages) {
			int best = -1;

			for (int i = 0; i < s; i++)
				if (first[i + 1] - first[i] > 1 && (best < 0 || first[i + 1] - first[i] > first[best + 1] - first[best]))
					best = i;
			if (best < 0)
				return false;
			memmove(&first[best + 2], &first[best + 1], (size_t)(s - best) * sizeof(int));
			first[best + 1] = first[best] + (first[best + 2] - first[best]) / 2;
			s++;
		}
	}
	return true;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int partition_balanced(const struct model *m, int nstages, int *first, struct err *e)
{
	int n = m->nlayers;
	double *prefix, *cand;
	long ncand = 0, lo, hi;

	if (check_stages(m, nstages, e) < 0)
		return -1;
	prefix = malloc((size_t)(n + 1) * sizeof(*prefix));
	/* every possible stage cost is a candidate bottleneck; for big models bisect on the
	 * value instead (100 halvings reach adjacent doubles, so the same bottleneck): sorting
	 * n^2/2 sums cost 0.1 s a call at 1024 layers, and the layout search and the tuner
	 * call it for every replica and stage count */
	cand = n <= 256 ? malloc((size_t)n * (size_t)(n + 1) / 2 * sizeof(*cand)) : NULL;
	if (!prefix || (n <= 256 && !cand)) {
		free(prefix);
		free(cand);
		return err_set(e, ERR_RUNTIME, "out of host memory partitioning %d layers", n);
	}
	prefix[0] = 0;
	for (int i = 0; i < n; i++)
		prefix[i + 1] = prefix[i] + layer_cost(&m->layers[i]);
	if (cand) {
		for (int i = 0; i < n; i++)
			for (int j = i + 1; j <= n; j++)
				cand[ncand++] = prefix[j] - prefix[i];
		qsort(cand, (size_t)ncand, sizeof(*cand), cmp_double);
		lo = 0;
		hi = ncand - 1;
		while (lo < hi) {
			long mid = (lo + hi) / 2;

			if (fits(prefix, n, nstages, cand[mid], first))
				hi = mid;
			else
				lo = mid + 1;
		}
		fits(prefix, n, nstages, cand[lo], first);
	} else {
		double a = 0, b = prefix[n];

		for (int it = 0; it < 100; it++) {
			double mid = (a + b) / 2;

			if (fits(prefix, n, nstages, mid, first))
				b = mid;
			else
				a = mid;
		}
		fits(prefix, n, nstages, b, first);
	}
	free(prefix);
	free(cand);
	return 0;
}

int partition_counts(const struct model *m, int nstages, const char *counts, int *first, struct err *e)
{
	const char *p = counts;
	int s = 0;

	first[0] = 0;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < 1 || v > m->nlayers)
			return err_set(e, ERR_INPUT, "partition '%s': expected positive layer counts separated by commas", counts);
		if (s >= nstages)
			return err_set(e, ERR_INPUT, "partition '%s': more than %d stages", counts, nstages);
		first[s + 1] = first[s] + (int)v;
		s++;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return err_set(e, ERR_INPUT, "partition '%s': unexpected '%c'", counts, *p);
	}
	if (s != nstages)
		return err_set(e, ERR_INPUT, "partition '%s' has %d stages, the schedule needs %d", counts, s, nstages);
	if (first[s] != m->nlayers)
		return err_set(e, ERR_INPUT, "partition '%s' covers %d layers, model '%s' has %d", counts, first[s],
		               m->name, m->nlayers);
	return 0;
}

/* Entries of a layer table that are not decoder layers: a leading embedding, and a
 * trailing head (with its loss) or multi-token-prediction modules. Cost-model tables list
 * them on their own; measured tables fold them into the first and last layer. */
static bool is_embedding(const struct layer *l)
{
	return strcmp(l->kind, "embedding") == 0;
}

static bool is_output(const struct layer *l)
{
	return strcmp(l->kind, "head") == 0 || strcmp(l->kind, "mtp") == 0 || strcmp(l->kind, "loss") == 0;
}

int partition_megatron(const struct model *m, int nstages, int *first, bool accounted, struct err *e)
{
	int lead = 0, tail = 0, dec, units, base, extra, at;
	int *count;

	if (check_stages(m, nstages, e) < 0)
		return -1;
	while (lead < m->nlayers && is_embedding(&m->layers[lead]))
		lead++;
	while (tail < m->nlayers - lead && is_output(&m->layers[m->nlayers - 1 - tail]))
		tail++;
	dec = m->nlayers - lead - tail;
	/* with the flags, the embedding and the loss each take a decoder layer's place */
	units = dec + (accounted && nstages > 1 ? 2 : 0);
	if (units < nstages)  /* (an end stage left with no decoder layer is caught below) */
		return err_set(e, ERR_INPUT, "%d stages are too many for a Megatron split of %d decoder layers", nstages, dec);
	count = calloc((size_t)nstages, sizeof(*count));
	if (!count)
		return err_set(e, ERR_RUNTIME, "out of host memory");
	base = units / nstages;
	extra = units % nstages;
	for (int s = 0; s < nstages; s++)
		count[s] = base;
	/* Megatron-LM wants the split to be even; when it is not, the middle stages (which
	 * hold neither the embedding nor the loss) take the extra layers first */
	for (int s = 1; extra > 0 && s < nstages - 1; s++, extra--)
		count[s]++;
	if (extra > 0) {
		count[0]++;
		extra--;
	}
	if (extra > 0)
		count[nstages - 1]++;
	if (accounted && nstages > 1) {
		count[0]--;
		count[nstages - 1]--;
	}
	at = 0;
	first[0] = 0;
	for (int s = 0; s < nstages; s++) {
		if (count[s] < 1) {
			free(count);
			return err_set(e, ERR_INPUT, "%d stages are too many for a Megatron split of %d decoder layers", nstages,
			               dec);
		}
		at += count[s] + (s == 0 ? lead : 0) + (s == nstages - 1 ? tail : 0);
		first[s + 1] = at;
	}
	free(count);
	if (first[nstages] != m->nlayers)
		return err_set(e, ERR_RUNTIME, "megatron partition miscounted (%d of %d layers)", first[nstages], m->nlayers);
	return 0;
}

double partition_max_cost(const struct model *m, int nstages, const int *first)
{
	double worst = 0;

	for (int s = 0; s < nstages; s++) {
		double c = 0;

		for (int l = first[s]; l < first[s + 1]; l++)
			c += layer_cost(&m->layers[l]);
		if (c > worst)
			worst = c;
	}
	return worst;
}

int partition_by_name(const struct model *m, const char *how, int nstages, int *first, struct err *e)
{
	if (!how || strcmp(how, "uniform") == 0)
		return partition_uniform(m, nstages, first, e);
	if (strcmp(how, "balanced") == 0)
		return partition_balanced(m, nstages, first, e);
	if (strcmp(how, "megatron") == 0)
		return partition_megatron(m, nstages, first, false, e);
	if (strcmp(how, "megatron-accounted") == 0)
		return partition_megatron(m, nstages, first, true, e);
	/* counts, or what was meant as counts (-1,21,10,10): the counts' own message */
	if ((how[0] >= '0' && how[0] <= '9') || how[0] == '-' || how[0] == '+')
		return partition_counts(m, nstages, how, first, e);
	return err_set(e, ERR_INPUT, "unknown partition '%s' (uniform, balanced, megatron, megatron-accounted or layer "
	               "counts like 7,7,6,6)", how);
}
