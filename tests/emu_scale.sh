#!/bin/sh
# The emulated executor at scale: its memory is linear in devices plus transfers, and a
# transfer wakes only the device that receives it. A channel per ordered pair of devices
# (D x D, 56 bytes each) took 3.8 GB of host memory at 8192 devices and 940 MB at 4096,
# and one condition variable broadcast to every worker on each transfer made a 2048-device
# run take 76 s (4096: minutes). Here a 4096-device 1f1b plan runs in the address space
# its worker stacks (1 MiB each) need plus 400 MB (a timeout of 600 s only guards a hang).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
T="$TMPDIR_TEST"
N=4096

python3 - "$T/scale" "$N" <<'PY'
import json, sys
n = int(sys.argv[2])
layer = {"kind": "attn", "f_ms": 1, "b_ms": 1, "w_ms": 1, "param_bytes": 1000, "act_bytes": 1000,
         "act_w_bytes": 0, "out_bytes": 1000}
json.dump({"format": "octopipe.model/1", "name": "scale", "seq_len": 1024, "micro_batch_size": 1,
           "layers": [dict(layer) for _ in range(n)]}, open(sys.argv[1] + "-model.json", "w"))
json.dump({"format": "octopipe.cluster/1", "name": "scale", "gpu": "H200", "devices": n, "gpus_per_node": 8,
           "mem_bytes": 141000000000, "speed": 1.0, "intra_node": {"gbytes_per_s": 450, "latency_us": 5},
           "inter_node": {"gbytes_per_s": 50, "latency_us": 10}}, open(sys.argv[1] + "-cluster.json", "w"))
PY
run "$OCTOPIPE" plan --model "$T/scale-model.json" --cluster "$T/scale-cluster.json" --schedule 1f1b \
    --microbatches 2 -o "$T/scale.json"
expect_rc 0 "a $N-device 1f1b plan is made"

# the limit, in KiB: a worker's stack and its guard page per device, plus 400 MB for the
# rest (the plan, its programs and timelines: about 60 MB; the pair table alone was 940 MB).
# glibc reserves 64 MiB of address space per malloc arena, up to 8 arenas a core, which
# would make what fits depend on the machine's cores: one arena here.
page_k=$(( $(getconf PAGESIZE 2>/dev/null || echo 4096) / 1024 ))
limit=$(( N * (1024 + page_k) + 400000 ))
if ! sh -c 'ulimit -v "$1" && exec "$2" --version' sh "$limit" "$OCTOPIPE" >/dev/null 2>&1; then
    skip "$N emulated devices run in $limit KiB of address space" "this build does not start under ulimit -v (sanitizers?)"
else
    run sh -c 'ulimit -v "$1" && MALLOC_ARENA_MAX=1 exec timeout 600 "$2" run --json "$3"' sh "$limit" "$OCTOPIPE" "$T/scale.json"
    err=$(printf '%s\n' "$OUT" | python3 -c 'import json, sys
try: print(json.load(sys.stdin)["error"])
except Exception: pass')
    if [ "$RC" = 0 ] && [ -n "$err" ] && awk -v e="$err" 'BEGIN { exit !(e < 1e-9 && e > -1e-9) }'; then
        ok "$N emulated devices run in $limit KiB of address space, exactly as simulated"
    else
        not_ok "$N emulated devices run in $limit KiB of address space" "exit $RC" "$ERR"
    fi
fi
done_testing
