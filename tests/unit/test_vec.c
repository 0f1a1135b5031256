/* test_vec — the growable array doubles from 16, keeps its contents, and refuses what it
 * cannot hold without changing anything. */
#include "config.h"

#include <limits.h>
#include <stdlib.h>

#include "vec.h"
#include "../tap.h"

int main(void)
{
	long *v = NULL, *before;
	int cap = 0, n = 0, grows = 0, last = 0;

	ok(VEC_RESERVE(v, cap, 1) == 0 && v != NULL, "the first element is made room for");
	is_int(cap, 16, "the first capacity is 16");
	int failed = 0;

	for (n = 0; n < 1000; n++) {
		failed |= VEC_RESERVE(v, cap, n + 1L) != 0;
		v[n] = 3L * n;
		if (cap != last) {
			grows++;
			last = cap;
		}
	}
	ok(!failed, "room for 1000 elements, one at a time");
	is_int(cap, 1024, "1000 elements: 16 doubled six times");
	is_int(grows, 7, "seven capacities on the way (16 .. 1024)");
	{
		int same = 1;

		for (int i = 0; i < n; i++)
			same &= v[i] == 3L * i;
		ok(same, "every element survives the moves");
	}
	ok(VEC_RESERVE(v, cap, 10) == 0 && cap == 1024, "asking for less than the capacity changes nothing");
	before = v;
	ok(VEC_RESERVE(v, cap, (long)INT_MAX + 1) < 0, "more than INT_MAX elements are refused");
	ok(v == before && cap == 1024, "and the refusal leaves the array and its capacity as they were");
	free(v);
	return tap_done();
}
