/*
 * test_kplan — the cuda backend's kernel plan, without a GPU: a proxy's golden shape from
 * the closed form (columns n = FLOPs / 2mk, split into repetitions of at most
 * KPLAN_NCOLS_MAX, rounded up to 8), its FLOPs never short of the op's and at most a
 * rounding over, and its bytes those of its bf16 operands and result.
 */
#include "config.h"

#include <math.h>

#include "exec/kplan.h"
#include "../tap.h"

int main(void)
{
	/* 1 ms at 1000 TFLOP/s = 1e12 FLOPs; 4096 tokens x 4096 hidden: n = 1e12 / (2 x 4096^2)
	 * = 29802.3 columns -> 4 repetitions of 932 x 8 = 7456 */
	struct kplan_gemm g = kplan_proxy(1, 1000, 4096, 4096ull * 4096 * 2);

	is_int(g.m, 4096, "m: the tokens");
	is_int(g.k, 4096, "k: the hidden size, out_bytes / 2 / tokens");
	is_int(g.reps, 4, "reps: ceil(29802.3 / 8192)");
	is_int(g.n, 7456, "n: ceil(29802.3 / 4 / 8) x 8");
	is_dbl(kplan_gemm_flops(&g), 2.0 * 4096 * 4096 * 7456 * 4, 1, "FLOPs: 2 m k n reps");
	is_dbl(kplan_gemm_bytes(&g), 2.0 * (4096.0 * 4096 + 4096.0 * 7456 + 4096.0 * 7456) * 4, 1,
	       "bytes: bf16 X, W and Y, per repetition");
	ok(kplan_gemm_flops(&g) >= 1e12 && kplan_gemm_flops(&g) < 1e12 * 1.002, "never short, a rounding over");
	g = kplan_proxy(0, 1000, 4096, 1 << 20);
	is_int(g.reps, 0, "an op without time has no proxy");
	g = kplan_proxy(2, 500, 4096, 0);
	ok(g.m == g.k && g.m >= 64 && g.m <= 8192, "no activation size: a square-ish GEMM (%d x %d)", g.m, g.k);
	ok(kplan_gemm_flops(&g) >= 1e12, "still doing the op's FLOPs");
	for (double ms = 0.01; ms < 5000; ms *= 3.7) {
		struct kplan_gemm h = kplan_proxy(ms, 800, 8192, 8192ull * 5120 * 2);
		double want = ms * 1e-3 * 800e12;

		if (!ok(h.n >= 8 && h.n <= KPLAN_NCOLS_MAX && h.n % 8 == 0 && kplan_gemm_flops(&h) >= want &&
		        kplan_gemm_flops(&h) <= want + 2.0 * h.m * h.k * 8 * h.reps,
		        "%.3g ms: %d reps of n = %d cover the op's FLOPs within one 8-column step", ms, h.reps, h.n))
			break;
	}
	return tap_done();
}
