/*
 * vec — the one growable array: room for `need` elements in an array that doubles
 * (from 16), so n pushes cost O(n) copies. A failed allocation changes nothing: the array
 * and its capacity stay as they were, and the caller reports out of memory.
 *
 *     struct item *v = NULL; int n = 0, cap = 0;
 *     if (VEC_RESERVE(v, cap, n + 1) < 0) return -1;
 *     v[n++] = x;
 */
#ifndef OCTO_VEC_H
#define OCTO_VEC_H

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* *(T **)arrp grows to at least need elements of size bytes; *cap is its capacity in
 * elements. 0, or -1 when out of memory or past INT_MAX elements (nothing changed). */
static inline int vec_reserve(void *arrp, int *cap, long need, size_t size)
{
	void *old, *q;
	long nc = *cap > 0 ? *cap : 16;

	if (need <= *cap)
		return 0;
	if (need > INT_MAX)
		return -1;
	while (nc < need)
		nc = nc > INT_MAX / 2 ? INT_MAX : 2 * nc;
	if ((size_t)nc > SIZE_MAX / size)
		return -1;
	memcpy(&old, arrp, sizeof(old));
	q = realloc(old, (size_t)nc * size);
	if (!q)
		return -1;
	memcpy(arrp, &q, sizeof(q));
	*cap = (int)nc;
	return 0;
}

#define VEC_RESERVE(arr, cap, need) vec_reserve(&(arr), &(cap), (need), sizeof(*(arr)))

#endif
