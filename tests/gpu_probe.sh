#!/bin/sh
# The executor's GPU probe links against CUDA + NCCL and answers cleanly with or without
# a GPU: a device list (exit 0), or one "no GPU: reason" line (exit 1), never a crash.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
probe="$top_builddir/octopipe-gpuinfo"
if [ "$HAVE_CUDA_NCCL" != yes ]; then
    skip "octopipe-gpuinfo" "built without CUDA and NCCL"
    done_testing; exit
fi
run "$probe"
case "$RC" in
0) expect_match '^gpu 0: ' "$OUT" "octopipe-gpuinfo lists the GPUs" ;;
1) expect_match '^no GPU: .+' "$OUT" "octopipe-gpuinfo says why there is no GPU" ;;
*) not_ok "octopipe-gpuinfo exits 0 or 1" "exit $RC" "$OUT" "$ERR" ;;
esac
expect_match '^driver .*, runtime [0-9]+\.[0-9]+, nccl 2\.[0-9]+\.[0-9]+' "$OUT" "octopipe-gpuinfo reports CUDA runtime and NCCL versions"
run "$probe" --json
expect_match '"nccl_version": ?[1-9][0-9]+' "$OUT" "octopipe-gpuinfo --json carries the NCCL version"
if printf '%s' "$OUT" | python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["count"] == len(d["devices"]); assert d["count"] or d["reason"]'; then
    ok "octopipe-gpuinfo --json is JSON with a device per count, or the reason"
else
    not_ok "octopipe-gpuinfo --json is JSON with a device per count, or the reason" "$OUT"
fi
run "$probe" --bogus
expect_rc 2 "octopipe-gpuinfo rejects unknown options"
done_testing
