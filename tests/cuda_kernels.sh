#!/bin/sh
# The cuda backend's hand-written kernels, without a GPU: cuda_work.cu compiled to PTX for
# sm_90 (the H100/H200's) by nvcc, and each kernel's body read. The memory class's kernel
# must load and store its bytes (the earlier 0-FLOP path compiled to an empty loop, so norms,
# activations, gathers and the loss moved nothing), the FLOP kernel too, the operand fill
# must store; and no operand buffer is zeroed (tensor cores run faster on zeros): each is
# filled from opfill.h's generator, the one the unit test pins. Skips (77) without nvcc.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
src="$top_srcdir/src/exec"
NVCC=${NVCC:-$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })}

# body NAME: the PTX of the .entry whose mangled name holds NAME
body() {
    awk -v n="$1" '/^\.visible \.entry/ { on = index($0, n) > 0 } on { print } on && /^}/ { on = 0 }' "$TMPDIR_TEST/w.ptx"
}
if [ -z "$NVCC" ]; then
    skip "cuda_work.cu's PTX" "no nvcc here"
else
    run "$NVCC" -arch=sm_90 --ptx -O2 -I"$src" -o "$TMPDIR_TEST/w.ptx" "$src/cuda_work.cu"
    expect_rc 0 "cuda_work.cu compiles to PTX for sm_90"
    b=$(body octo_stream_kernel)
    expect_match 'ld\.global\.v4\.f32' "$b" "the memory class's kernel loads its bytes, 16 at a time"
    expect_match 'st\.global\.v4\.f32' "$b" "and stores them"
    b=$(body octo_work_kernel)
    expect_match 'ld\.global' "$b" "the FLOP classes' kernel loads"
    expect_match 'st\.global' "$b" "and stores"
    expect_match 'fma\.rn\.f32' "$b" "and does fused multiply-adds on the CUDA cores"
    expect_match 'st\.global' "$(body octo_opfill_kernel)" "the operand fill stores its values"
fi
# the operands' values come from one generator: the GPU's kernel and the host's fallback
# both call opfill_bf16, and no operand is zeroed anywhere
expect_match '#include "opfill.h"' "$(cat "$src/cuda_work.cu")" "cuda_work.cu fills from opfill.h"
expect_match 'opfill_bf16\(' "$(cat "$src/cuda_work.cu")" "with opfill_bf16"
z=$(grep -n 'cudaMemsetAsync(g->' "$src"/cuda_proxy.c "$src"/cuda_kernels.c "$src"/cuda_bench.c)
if [ -z "$z" ]; then ok "no proxy, kernel-list, core or bench operand is zeroed"
else not_ok "operands zeroed (tensor cores run faster on zeros)" "$z"; fi
done_testing
