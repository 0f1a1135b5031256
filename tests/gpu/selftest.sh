#!/bin/sh
# GPU self-test of the cuda backend: builds nothing; on the GPUs present (up to 8) it
# plans a small 1F1B run of llama2-7b, runs it with `octopipe run --backend cuda`, prints
# predicted vs measured per GPU (with NVML utilization and memory, or N/A), then
# recalibrates the model from the measurement and shows the error before and after; then
# runs every schedule on 4 devices (sharing the GPUs when there are fewer) and checks
# that a device killed mid-run stops the run with its name, and that a mis-routed or
# corrupted transfer is caught by its receiver.
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

# cluster N FILE: the 8xH200 sample cut to N devices
cluster() {
    python3 - "$top_srcdir/samples/clusters/8xH200.json" "$1" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); n = int(sys.argv[2])
c["name"] = "%dxGPU-selftest" % n; c["devices"] = n; c["gpus_per_node"] = n
json.dump(c, open(sys.argv[3], "w"), indent=2)
PY
}
cluster4() { cluster 4 "$1"; }
cluster "$n" "$logs/cluster.json" || exit 1
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

# Every schedule's protocol on 4 devices: on fewer GPUs the devices share them, which
# tests the protocol (run checks every op ran once, in order, after its inputs) but not
# the times. Then a device killed mid-run must stop the run with its name, never hang.
share=; [ "$n" -lt 4 ] && share=--share-gpus
cluster4 "$logs/cluster4.json" || exit 1
echo
echo "== every schedule on 4 devices, llama2-7b, 8 microbatches${share:+ (--share-gpus: 4 devices on $n GPU$( [ "$n" = 1 ] || echo s))}"
printf '%-12s %6s %12s %12s %8s %s\n' SCHEDULE RC PREDICTED MEASURED ERROR NOTE
fails=0
for sched in 1f1b interleaved zb-h1 zb-v dualpipev; do
    "$OCTOPIPE" plan --model llama2-7b --cluster "$logs/cluster4.json" --schedule $sched --microbatches 8 \
        -o "$logs/plan4.json" >/dev/null || exit 1
    "$OCTOPIPE" run --backend cuda $share --iters 2 --json "$logs/plan4.json" >"$logs/run4.json" 2>"$logs/run4.err"
    rc=$?
    [ "$rc" = 0 ] || fails=$((fails + 1))
    python3 - "$sched" "$rc" "$logs/run4.json" "$logs/run4.err" <<'PY'
import json, sys
sched, rc, out, err = sys.argv[1:5]
try:
    r = json.load(open(out))
    print("%-12s %6s %10.2f ms %10.2f ms %+7.2f%% %s" % (sched, rc, r["predicted_ms"], r["measured_ms"],
          100 * r["error"], "%d receives repaired" % r["repaired_receives"] if r["repaired_receives"] else ""))
except Exception:
    print("%-12s %6s %s" % (sched, rc, open(err).read().strip().splitlines()[-1:] or "no output"))
PY
done
"$OCTOPIPE" plan --model llama2-7b --cluster "$logs/cluster4.json" --schedule 1f1b --microbatches 8 \
    -o "$logs/plan4.json" >/dev/null || exit 1
t0=$(date +%s)
"$OCTOPIPE" run --backend cuda $share --kill-device 1 --kill-after 3 --timeout 20 "$logs/plan4.json" \
    >/dev/null 2>"$logs/kill.err"
rc=$? t1=$(date +%s)
echo
echo "== device 1 killed after 3 ops: exit $rc after $((t1 - t0)) s: $(tail -1 "$logs/kill.err")"
if [ "$rc" != 1 ] || ! grep -q "device 1: killed after 3 ops" "$logs/kill.err"; then
    echo "FAIL: a killed device must stop the run with exit 1 and its name"; fails=$((fails + 1))
fi
# the data every transfer carries is checked on arrival: a mis-routed buffer (transfer 5
# carries another microbatch's output) and a flipped byte must each fail the run, naming it
for fault in misroute corrupt; do
    "$OCTOPIPE" run --backend cuda $share --$fault-xfer 5 --timeout 20 "$logs/plan4.json" >/dev/null 2>"$logs/$fault.err"
    rc=$?
    echo "== transfer 5 $fault: exit $rc: $(tail -1 "$logs/$fault.err")"
    if [ "$rc" != 1 ] || ! grep -q "(transfer 5, iteration [0-9]*), but the data .*(\(mis-routed\|corrupted\)" "$logs/$fault.err"; then
        echo "FAIL: a $fault transfer must fail the run naming it"; fails=$((fails + 1))
    fi
done
# the kernel plan listed without a GPU is the one the run uses
"$OCTOPIPE" run --backend cuda --dry-run "$logs/plan4.json" >"$logs/dry.txt" || fails=$((fails + 1))
[ "${OUT:-}" ] || rm -rf "$logs"
[ "$fails" = 0 ] || { echo "FAIL: $fails of the cuda runs above failed"; exit 1; }
echo "PASS: the cuda backend ran on $n GPU$( [ "$n" = 1 ] || echo s)"
