#!/bin/sh
# GPU self-test of the cuda backend. Builds nothing; needs a GPU (exit 77 without one, or
# in a build without the cuda backend).
#
# 1. Predicted vs measured, kernels from the architecture (no fitting): for every bundled
#    model made from an architecture (samples/models/*.json with a source.architecture;
#    SELFTEST_MODELS="a b" to pick), a one-GPU plan with every layer its own stage runs
#    one microbatch (twice: the second iteration counts), so that every op is one layer.
#    Printed: per layer kind, the predicted and the measured F + I + W time (summed over
#    its layers), and the iteration. It fails when an iteration is off by more than
#    SELFTEST_ITER_PCT (default 20%) or a layer kind of at least 1 ms by more than
#    SELFTEST_KIND_PCT (default 35%): thresholds stated before any GPU measured them, to
#    be tightened. About 80 s of predicted GPU time for all 13 models.
# 2. octopipe calibrate --gpu on one model: the kernel classes' efficiencies on this GPU.
# 3. The protocol: llama2-7b on the GPUs present (up to 8), then every schedule on 4
#    devices (sharing GPUs when there are fewer), a device killed mid-run, a mis-routed and
#    a corrupted transfer, each of which must fail the run naming it.
#
# selftest.sh --dry runs part 1 on the emulator instead (no GPU: the models, plans,
# commands and the table are tested; the emulator's times are the prediction's);
# selftest.sh --list prints the models part 1 runs.
# It prints the date (UTC) first. With $OUT set, everything it prints goes to
# $OUT/selftest.log too, part 1's tables to $OUT/table.txt (dated, for the README), and
# its logs (plans, timelines, outputs, the calibrated model) under $OUT; without, the
# logs go to a temporary directory, removed at the end.
# Exit status: 0 ok, 1 a failure, 77 no GPU here (or a build without the cuda backend).
set -u
if [ -n "${OUT:-}" ] && [ -z "${SELFTEST_TEED:-}" ]; then
    # everything printed goes to $OUT/selftest.log as well; the exit status through a file
    # (a pipeline's is its last command's)
    mkdir -p "$OUT" || exit 1
    { SELFTEST_TEED=1 sh "$0" "$@" 2>&1; echo $? >"$OUT/selftest.status"; } | tee "$OUT/selftest.log"
    exit "$(cat "$OUT/selftest.status" 2>/dev/null || echo 1)"
fi
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
OCTOPIPE=${OCTOPIPE:-$top_builddir/octopipe}
probe=$top_builddir/octopipe-gpuinfo
export OCTOPIPE_DATADIR=${OCTOPIPE_DATADIR:-$top_srcdir}
ITER_PCT=${SELFTEST_ITER_PCT:-20}
KIND_PCT=${SELFTEST_KIND_PCT:-35}

dry= list=
[ "${1:-}" = --dry ] && dry=1
[ "${1:-}" = --list ] && list=1
backend=cuda
kernels=architecture
models=${SELFTEST_MODELS:-$(python3 - "$top_srcdir/samples/models" <<'PY'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    if json.load(open(f)).get("source", {}).get("architecture"):
        print(os.path.basename(f)[:-5])
PY
)}
if [ "$list" ]; then echo "models:" $models; exit 0; fi
stamp=$(date -u '+%Y-%m-%d %H:%M UTC')
echo "octopipe GPU self-test$( [ "$dry" ] && echo ' (--dry)'), $stamp"
if [ "$dry" ]; then
    backend=emu kernels=emulated n=1 info="dry run: the emulator, no GPU"
else
    if [ ! -x "$probe" ]; then echo "skip: built without CUDA and NCCL"; exit 77; fi
    info=$("$probe" 2>&1); rc=$?
    if [ "$rc" = 1 ]; then echo "skip: $(printf '%s\n' "$info" | grep '^no GPU' | head -1)"; exit 77; fi
    if [ "$rc" != 0 ]; then printf '%s\n' "$info"; exit 1; fi
    if "$OCTOPIPE" run --backend cuda /dev/null 2>&1 | grep -q 'backend was not built'; then
        echo "skip: octopipe was built without the cuda backend (needs cuBLAS)"; exit 77
    fi
    n=$(printf '%s\n' "$info" | grep -c '^gpu [0-9]*:')
    [ "$n" -gt 8 ] && n=8
fi
logs=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/octopipe-gpu.XXXXXX")}
mkdir -p "$logs" || exit 1
logs=$(cd "$logs" && pwd) || exit 1   # absolute: plans name their clusters from it
printf '%s\n' "$info" | tee "$logs/gpuinfo.txt"
fails=0
{ echo "octopipe GPU self-test, $stamp: $info"
  echo "predicted vs measured ($backend, kernels $kernels), one microbatch, the second of 2 iterations"; } >"$logs/table.txt"

# cluster N FILE: the 8xH200 sample cut to N devices
cluster() {
    python3 - "$top_srcdir/samples/clusters/8xH200.json" "$1" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); n = int(sys.argv[2])
c["name"] = "%dxGPU-selftest" % n; c["devices"] = n; c["gpus_per_node"] = n
json.dump(c, open(sys.argv[3], "w"), indent=2)
PY
}

# ---- 1. predicted vs measured, per layer kind and per iteration ---------------------------
cluster 1 "$logs/cluster1.json" || exit 1
echo
echo "== predicted vs measured on one GPU ($backend), kernels from the architecture, 1 microbatch, 2 iterations"
echo "   (fails above ${ITER_PCT}% per iteration, ${KIND_PCT}% per layer kind of >= 1 ms)"
for m in $models; do
    # every layer its own stage, all on device 0: each op is one layer
    L=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["layers"]))' \
        "$top_srcdir/samples/models/$m.json") || exit 1
    ones=$(python3 -c "print(','.join(['1'] * $L))") zeros=$(python3 -c "print(','.join(['0'] * $L))")
    echo "$OCTOPIPE plan --model $m --cluster cluster1.json --schedule adaptive --chunks $L" \
        "--partition 1,...,1 --placement 0,...,0 --microbatches 1" >"$logs/$m.cmd"
    # (exit 3: the simulator's activations of every layer outgrow one GPU; the executor
    # holds only the largest kernel's operands, and runs it with --force)
    "$OCTOPIPE" plan --model "$m" --cluster "$logs/cluster1.json" --schedule adaptive --chunks "$L" \
        --partition "$ones" --placement "$zeros" --microbatches 1 -o "$logs/$m.plan.json" >"$logs/$m.plan.txt" 2>&1
    rc=$?
    if [ "$rc" != 0 ] && [ "$rc" != 3 ] || [ ! -s "$logs/$m.plan.json" ]; then
        echo "FAIL: $m: cannot plan it: $(tail -1 "$logs/$m.plan.txt")"; fails=$((fails + 1)); continue
    fi
    echo "$OCTOPIPE run --backend $backend --force --iters 2 --json --timeline-out $m.timeline.json $m.plan.json" \
        >>"$logs/$m.cmd"
    "$OCTOPIPE" run --backend "$backend" --force --iters 2 --json --timeline-out "$logs/$m.timeline.json" \
        "$logs/$m.plan.json" >"$logs/$m.run.json" 2>"$logs/$m.run.err"
    rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL: $m: octopipe run --backend $backend exited $rc: $(tail -1 "$logs/$m.run.err")"
        fails=$((fails + 1)); continue
    fi
    python3 - "$m" "$top_srcdir/samples/models/$m.json" "$logs/$m.run.json" "$logs/$m.timeline.json" \
        "$kernels" "$ITER_PCT" "$KIND_PCT" >"$logs/$m.table.txt" <<'PY'
import json, sys
name, model, run, tl, want, iter_pct, kind_pct = sys.argv[1:8]
layers = json.load(open(model))["layers"]
r = json.load(open(run))
if r["kernels"] != want:
    print("FAIL: %s: the run's kernels were %s, not %s" % (name, r["kernels"], want)); sys.exit(1)
pred, meas, order = {}, {}, []
for d in json.load(open(tl))["devices"]:
    for o in d["ops"]:
        l = layers[o["stage"]]
        p = {"F": l["f_ms"], "I": l["b_ms"], "W": l["w_ms"], "B": l["b_ms"] + l["w_ms"]}[o["op"]]
        k = l["kind"]
        if k not in pred:
            order.append(k)
        pred[k] = pred.get(k, 0) + p
        meas[k] = meas.get(k, 0) + o["end_ms"] - o["start_ms"]
bad = 0
print("%s:" % name)
print("  %-24s %12s %12s %8s" % ("LAYER KIND", "PREDICTED ms", "MEASURED ms", "ERROR"))
for k in order:
    e = (pred[k] - meas[k]) / meas[k] if meas[k] > 0 else 0
    over = pred[k] >= 1 and abs(e) * 100 > float(kind_pct)
    bad += over
    print("  %-24s %12.3f %12.3f %+7.1f%%%s" % (k, pred[k], meas[k], 100 * e, "  FAIL" if over else ""))
over = abs(r["error"]) * 100 > float(iter_pct)
bad += over
print("  %-24s %12.3f %12.3f %+7.1f%%%s" % ("iteration", r["predicted_ms"], r["measured_ms"], 100 * r["error"],
                                           "  FAIL" if over else ""))
sys.exit(1 if bad else 0)
PY
    rc=$?   # not through a pipe: its status is the table's verdict
    cat "$logs/$m.table.txt"
    cat "$logs/$m.table.txt" >>"$logs/table.txt"
    [ "$rc" = 0 ] || fails=$((fails + 1))
done
if [ "$dry" ]; then
    [ "${OUT:-}" ] || rm -rf "$logs"
    [ "$fails" = 0 ] || { echo "FAIL: $fails of the models above"; exit 1; }
    echo "PASS (dry): the self-test's plans, runs and tables on the emulator"
    exit 0
fi

# ---- 2. the kernel classes' efficiencies on this GPU --------------------------------------
echo
echo "== octopipe calibrate --gpu gemma3-12b (each kernel alone: efficiencies per class on this GPU)"
"$OCTOPIPE" calibrate --gpu --reps 10 -o "$logs/gemma3-12b.gpu-calibrated.json" gemma3-12b \
    >"$logs/calibrate-gpu.txt" 2>&1 || fails=$((fails + 1))
cat "$logs/calibrate-gpu.txt"

# ---- 3. the protocol ----------------------------------------------------------------------
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
cluster 4 "$logs/cluster4.json" || exit 1
echo
echo "== every schedule on 4 devices, llama2-7b, 8 microbatches${share:+ (--share-gpus: 4 devices on $n GPU$( [ "$n" = 1 ] || echo s))}"
printf '%-12s %6s %12s %12s %8s %s\n' SCHEDULE RC PREDICTED MEASURED ERROR NOTE
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
[ "$fails" = 0 ] || { echo "FAIL: $fails of the checks above failed"; exit 1; }
echo "PASS: the cuda backend ran on $n GPU$( [ "$n" = 1 ] || echo s)"
