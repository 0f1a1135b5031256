#!/bin/sh
# GPU self-test of the cuda backend: builds nothing; on the GPUs present (up to 8) it
# plans a small 1F1B run of llama2-7b, runs it with `octopipe run --backend cuda`, prints
# predicted vs measured per GPU (with NVML utilization and memory, or N/A), then
# recalibrates the model from the measurement and shows the error before and after.
# Logs (events, timeline, calibrated model, outputs) go under $OUT when it is set.
# Exit status: 0 ok, 1 a failure, 77 no GPU here (or a build without the cuda backend).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
OCTOPIPE=${OCTOPIPE:-$top_builddir/octopipe}
probe=$top_builddir/octopipe-gpuinfo
export OCTOPIPE_DATADIR=${OCTOPIPE_DATADIR:-$top_srcdir}

if [ ! -x "$probe" ]; then echo "skip: built without CUDA and NCCL"; exit 77; fi
info=$("$probe" 2>&1); rc=$?
if [ "$rc" = 1 ]; then echo "skip: $(printf '%s\n' "$info" | grep '^no GPU' | head -1)"; exit 77; fi
if [ "$rc" != 0 ]; then printf '%s\n' "$info"; exit 1; fi
if "$OCTOPIPE" run --backend cuda /dev/null 2>&1 | grep -q 'backend was not built'; then
    echo "skip: octopipe was built without the cuda backend (needs cuBLAS)"; exit 77
fi
n=$(printf '%s\n' "$info" | grep -c '^gpu [0-9]*:')
[ "$n" -gt 8 ] && n=8
logs=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/octopipe-gpu.XXXXXX")}
mkdir -p "$logs"
printf '%s\n' "$info" | tee "$logs/gpuinfo.txt"

python3 - "$top_srcdir/samples/clusters/8xH200.json" "$n" "$logs/cluster.json" <<'PY' || exit 1
import json, sys
c = json.load(open(sys.argv[1])); n = int(sys.argv[2])
c["name"] = "%dxGPU-selftest" % n; c["devices"] = n; c["gpus_per_node"] = n
json.dump(c, open(sys.argv[3], "w"), indent=2)
PY
"$OCTOPIPE" plan --model llama2-7b --cluster "$logs/cluster.json" --schedule 1f1b \
    --microbatches $((2 * n)) -o "$logs/plan.json" || exit 1

echo
echo "== octopipe run --backend cuda ($n GPU$( [ "$n" = 1 ] || echo s), llama2-7b, 1F1B, $((2 * n)) microbatches)"
"$OCTOPIPE" run --backend cuda --iters 3 --events-out "$logs/events.jsonl" \
    --timeline-out "$logs/timeline.json" "$logs/plan.json" >"$logs/run.txt" 2>"$logs/run.err"
rc=$?
cat "$logs/run.txt" "$logs/run.err"
[ "$rc" = 0 ] || { echo "FAIL: octopipe run --backend cuda exited $rc"; exit 1; }

echo
echo "== octopipe calibrate (the layer costs rescaled to this GPU)"
"$OCTOPIPE" calibrate -o "$logs/calibrated-model.json" "$logs/timeline.json" | tee "$logs/calibrate.txt"
[ "${OUT:-}" ] || rm -rf "$logs"
echo "PASS: the cuda backend ran on $n GPU$( [ "$n" = 1 ] || echo s)"
