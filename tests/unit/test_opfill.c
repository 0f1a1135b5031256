/*
 * test_opfill — the operands' values (opfill.h), as the GPU's fill kernel computes them:
 * uniform in [-1, 1) (mean 0, variance 1/3), almost never zero (a run on zeros measures
 * tensor cores about 13% faster than on data), different per seed and per element, the
 * same for the same (seed, element) whoever computes it.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "exec/opfill.h"
#include "../tap.h"

#define N (1 << 20)

int main(void)
{
	double sum = 0, sq = 0, lo = 1, hi = -1, bins[8] = { 0 };
	long zeros = 0, same = 0, repeat = 0;

	for (long i = 0; i < N; i++) {
		uint16_t h = opfill_bf16(OPFILL_X, (uint64_t)i);
		double v = opfill_bf16_to_float(h);

		sum += v;
		sq += v * v;
		lo = fmin(lo, v);
		hi = fmax(hi, v);
		zeros += v == 0;
		if (v >= -1 && v < 1)
			bins[(int)((v + 1) * 4)]++;
		same += h == opfill_bf16(OPFILL_W, (uint64_t)i);
		repeat += h != opfill_bf16(OPFILL_X, (uint64_t)i);
	}
	sum /= N;
	sq = sq / N - sum * sum;
	ok(fabs(sum) < 0.003, "mean 0 (%.5f; 3 sigma of 2^20 draws is 0.0017)", sum);
	ok(fabs(sq - 1.0 / 3) < 0.003, "variance 1/3 of a uniform on [-1, 1) (%.5f)", sq);
	ok(lo >= -1 && hi < 1 && lo < -0.99 && hi > 0.99, "every value in [-1, 1), both ends reached (%.4f, %.4f)", lo, hi);
	ok(zeros <= 2, "zeros: %ld of %d (an exact zero is one draw in 2^24)", zeros, N);
	{
		int flat = 1;

		for (int b = 0; b < 8; b++)
			flat &= fabs(bins[b] / N - 0.125) < 0.003;
		ok(flat, "uniform: each eighth of [-1, 1) holds an eighth of the values");
	}
	ok(same < N / 100, "another seed, another stream (%ld of %d bf16 values equal)", same, N);
	is_int(repeat, 0, "the same seed and element give the same value (any thread computes its own)");
	{
		float v = opfill_value(OPFILL_Y, 12345);
		uint16_t h = opfill_bf16(OPFILL_Y, 12345);
		float r = opfill_bf16_to_float(h);

		ok(fabs(r) <= fabs(v) && fabs(v - r) <= fabs(v) / 128, "bf16: the fp32 value rounded towards zero "
		   "(%.7f -> %.7f)", v, r);
	}
	return tap_done();
}
