#!/bin/sh
# GPU self-test of the cuda backend, for one 10-minute slot on a remote GPU machine from
# which only a few files come back. Builds nothing. In order, each part bounded in time:
#
#   0. preflight (30 s): the date, the driver and GPUs (nvidia-smi, octopipe-gpuinfo), and
#      the kernels built into octopipe-cuda (nm; cuobjdump's SASS architectures where the
#      toolkit has it)
#   1. kernel ceilings (90 s): `octopipe calibrate --gpu --ceilings`: bf16 GEMMs on random
#      data by shape, an HBM copy, causal and windowed attention, the SSD's GEMM, the
#      scan's FMAs; then NCCL between two GPUs where two exist (a 2-device llama2-7b run:
#      every transfer's bytes over its time)
#   2. per kernel, predicted against measured (150 s): `octopipe calibrate --gpu
#      gemma3-12b nemotronh-8b jamba-v0.1 deepseek-v2-lite` (every kernel of each layer
#      kind alone: a miss is attributed to its kernel and class; the four cover every
#      kernel class the bundled models use, expert GEMMs of many rows and of few), the
#      classes' efficiencies fitted, and every other model of
#      part 4 re-priced with that fit (--predict): a prediction by a fit that never saw it
#   3. the protocol (non-fatal, each command its own timeout): llama2-7b on the GPUs there
#      are (up to 8), every schedule on 4 devices (--share-gpus on fewer GPUs), a device
#      killed mid-run, a mis-routed and a corrupted transfer, each of which must fail the
#      run naming it
#   4. per model, last, within what is left of the budget: every bundled model made from
#      an architecture (SELFTEST_MODELS="a b" to pick) as a one-GPU plan with every layer
#      its own stage, one microbatch, two iterations (the second counts): the predicted
#      and measured time per layer kind and per iteration, beside the bundled table's
#      own prices (the runtime it was priced for, Hugging Face eager for the samples,
#      not these kernels): the verdict is on the fitted prediction. A model the budget
#      cannot reach is listed as skipped.
#
# The budget is SELFTEST_BUDGET_S (default 540: a 600 s slot less a minute for the
# machine); no command runs past it. Every number printed says which mode produced it:
# gpu (measured on this GPU), emu (the emulator: the model's times on a virtual clock),
# predicted (the cost model's own). Failures are counted, never stop the script; the
# per-model verdicts use SELFTEST_ITER_PCT (20%) per iteration and SELFTEST_KIND_PCT
# (35%) per layer kind of at least 1 ms.
#
# selftest.sh --dry: the same script end to end without a GPU (on this CPU within 2
# minutes): the emulator instead of the cuda backend, calibrate --gpu's --emulate-gpu,
# the preflight of the binary only; it prints the very tables the GPU run fills, each
# row in mode emu or predicted. selftest.sh --list: the models of part 4.
#
# Files: with $OUT set it writes there, and only there, at most 4 files:
#   selftest.log     everything it printed
#   tables.txt       the tables alone, dated (for the README)
#   calibrated.json  gemma3-12b re-priced by part 2's fit
#   status           its exit status
# Its work files live in a temporary directory, removed at the end.
# Exit status: 0 ok, 1 a failure, 77 no GPU here (or a build without the cuda backend).
set -u
if [ -n "${OUT:-}" ] && [ -z "${SELFTEST_TEED:-}" ]; then
    mkdir -p "$OUT" || exit 1
    { SELFTEST_TEED=1 sh "$0" "$@" 2>&1; echo $? >"$OUT/status"; } | tee "$OUT/selftest.log"
    exit "$(cat "$OUT/status" 2>/dev/null || echo 1)"
fi
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
OCTOPIPE=${OCTOPIPE:-$top_builddir/octopipe}
cuda_bin=$top_builddir/octopipe-cuda
probe=$top_builddir/octopipe-gpuinfo
export OCTOPIPE_DATADIR=${OCTOPIPE_DATADIR:-$top_srcdir}
ITER_PCT=${SELFTEST_ITER_PCT:-20}
KIND_PCT=${SELFTEST_KIND_PCT:-35}
BUDGET=${SELFTEST_BUDGET_S:-540}
start=$(date +%s)

dry= list=
[ "${1:-}" = --dry ] && dry=1
[ "${1:-}" = --list ] && list=1
# "name layers" of every bundled model made from an architecture (one python: its start
# costs a second on a loaded machine)
catalog=$(SELFTEST_BY_NAME=$list python3 - "$top_srcdir/samples/models" ${SELFTEST_MODELS:-} <<'PY'
import glob, json, os, sys
want, rows = sys.argv[2:], []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    m, name = json.load(open(f)), os.path.basename(f)[:-5]
    if (name in want) if want else m.get("source", {}).get("architecture"):
        rows.append((name, len(m["layers"]), sum(l["f_ms"] + l["b_ms"] + l["w_ms"] for l in m["layers"])))
# --list: by name; the runs: the quickest first, so that the budget reaches the most
for r in rows if os.environ.get("SELFTEST_BY_NAME") else sorted(rows, key=lambda r: r[2]):
    print(r[0], r[1])
PY
)
models=$(printf '%s\n' "$catalog" | cut -d' ' -f1 | tr '\n' ' ')
if [ "$list" ]; then echo "models:" $models; exit 0; fi

# lim S: S seconds, or what is left of the budget if less (at least 1)
lim() {
    l=$((BUDGET - ($(date +%s) - start)))
    [ "$l" -lt "$1" ] && { [ "$l" -lt 1 ] && l=1; echo "$l"; return; }
    echo "$1"
}
left() { echo $((BUDGET - ($(date +%s) - start))); }
stamp=$(date -u '+%Y-%m-%d %H:%M UTC')
work=$(mktemp -d "${TMPDIR:-/tmp}/octopipe-selftest.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
tables=${OUT:+$OUT/tables.txt}
tables=${tables:-$work/tables.txt}
: >"$tables"
fails=0
# tab: a table's line, printed and kept in tables.txt
tab() { printf '%s\n' "$*"; printf '%s\n' "$*" >>"$tables"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# timed CMD...: how the last command went, for a table's NOTE (124: its timeout)
note_rc() { case "$1" in 0) echo ok ;; 124|137) echo "timed out" ;; *) echo "exit $1" ;; esac; }

if [ "$dry" ]; then
    backend=emu mode=emu calmode=--emulate-gpu n=4
    info="dry run: the emulator, no GPU"
else
    if [ ! -x "$probe" ] || [ ! -x "$cuda_bin" ]; then echo "skip: built without CUDA and NCCL"; exit 77; fi
    info=$(timeout "$(lim 20)" "$probe" 2>&1); rc=$?
    if [ "$rc" = 1 ]; then echo "skip: $(printf '%s\n' "$info" | grep '^no GPU' | head -1)"; exit 77; fi
    if [ "$rc" != 0 ]; then printf '%s\n' "$info"; echo "FAIL: octopipe-gpuinfo exited $rc"; exit 1; fi
    backend=cuda mode=gpu calmode=
    n=$(printf '%s\n' "$info" | grep -c '^gpu [0-9]*:')
    [ "$n" -gt 8 ] && n=8
fi
tab "octopipe GPU self-test$( [ "$dry" ] && echo ' (--dry)'), $stamp, budget ${BUDGET} s"

# the 8xH200 sample cut to 1, 2, 4 and n devices: cluster$N.json
python3 - "$top_srcdir/samples/clusters/8xH200.json" "$work" 1 2 4 "$n" <<'PY' || exit 1
import json, sys
for n in set(int(a) for a in sys.argv[3:]):
    c = json.load(open(sys.argv[1]))
    c["name"] = "%dxGPU-selftest" % n; c["devices"] = n; c["gpus_per_node"] = n
    json.dump(c, open("%s/cluster%d.json" % (sys.argv[2], n), "w"), indent=2)
PY

# ---- 0. preflight ---------------------------------------------------------------------
echo
tab "== 0. preflight ($mode)"
if [ "$dry" ]; then
    tab "driver: not queried (dry run)"
else
    smi=$(timeout "$(lim 15)" nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm \
          --format=csv,noheader 2>&1) || smi="nvidia-smi: $(note_rc $?)"
    printf '%s\n' "$smi" | while IFS= read -r l; do tab "nvidia-smi: $l"; done
fi
printf '%s\n' "$info" | while IFS= read -r l; do tab "gpuinfo: $l"; done
if [ -x "$cuda_bin" ]; then
    k=$(timeout "$(lim 10)" nm "$cuda_bin" 2>/dev/null | grep -o 'octo_[a-z0-9_]*_kernel' | sort -u | tr '\n' ' ')
    tab "kernels in octopipe-cuda: ${k:-none (built without nvcc)}"
    if command -v cuobjdump >/dev/null 2>&1; then
        a=$(timeout "$(lim 10)" cuobjdump --list-elf "$cuda_bin" 2>&1 | grep -o 'sm_[0-9]*' | sort -u | tr '\n' ' ')
        tab "SASS in octopipe-cuda: ${a:-none}"
    else
        tab "SASS in octopipe-cuda: cuobjdump not here"
    fi
else
    tab "kernels in octopipe-cuda: no octopipe-cuda (built without CUDA and NCCL)"
fi

# ---- 1. kernel ceilings -----------------------------------------------------------------
echo
tab "== 1. kernel ceilings: octopipe calibrate --gpu --ceilings ($( [ "$dry" ] && echo predicted || echo gpu))"
timeout "$(lim 90)" "$OCTOPIPE" calibrate --gpu $calmode --ceilings --reps 5 >"$work/ceil.txt" 2>&1
rc=$?
sed -n '2,$p' "$work/ceil.txt" | while IFS= read -r l; do tab "$l"; done
[ "$rc" = 0 ] || fail "calibrate --gpu --ceilings: $(note_rc $rc): $(tail -1 "$work/ceil.txt")"
timeout "$(lim 30)" "$OCTOPIPE" plan --model llama2-7b --cluster "$work/cluster2.json" --schedule 1f1b \
    --microbatches 4 -o "$work/plan2.json" >/dev/null 2>&1 || fail "cannot plan llama2-7b on 2 devices"
tab ""
tab "$(printf '%-20s %10s %10s %10s %s' 'NCCL P2P' 'MB' 'MS' 'GB/S' 'MODE')"
if [ "$dry" ] || [ "$n" -ge 2 ]; then
    timeout "$(lim 60)" "$OCTOPIPE" run --backend "$backend" --iters 2 --timeout 20 \
        --timeline-out "$work/tl2.json" "$work/plan2.json" >/dev/null 2>"$work/run2.err"
    rc=$?
    if [ "$rc" = 0 ]; then
        python3 - "$work/tl2.json" "$mode" <<'PY' | while IFS= read -r l; do tab "$l"; done
import json, sys
t, mode = json.load(open(sys.argv[1])), sys.argv[2]
best = {}
for x in t["transfers"]:
    ms = x["end_ms"] - x["start_ms"]
    k = "%d -> %d" % (x["src"], x["dst"])
    if ms > 0 and (k not in best or x["bytes"] / ms > best[k][0] / best[k][1]):
        best[k] = (x["bytes"], ms)
for k in sorted(best):
    b, ms = best[k]
    print("%-20s %10.1f %10.4f %10.1f %s" % ("device " + k, b / 1e6, ms, b / ms * 1e-6, mode))
PY
    else
        tab "$(printf '%-20s %s' 'device 0 -> 1' "$(note_rc $rc): $(tail -1 "$work/run2.err")")"
        fail "the 2-GPU NCCL run: $(note_rc $rc)"
    fi
else
    tab "$(printf '%-20s %s' 'device 0 -> 1' "not run: one GPU here ($mode)")"
fi

# ---- 2. per kernel: predicted against measured ---------------------------------------------
# the fit's models (SELFTEST_CAL_MODELS) together cover every kernel class the bundled
# models use, and expert GEMMs of many rows (jamba-v0.1: 16 experts, 2 a token) and of few
# (deepseek-v2-lite: 64, 6 a token); every other model of part 4 is re-priced with the
# fit (--predict) and so predicted by a fit that never saw its kernels
fitm= predm=
for m in ${SELFTEST_CAL_MODELS:-gemma3-12b nemotronh-8b jamba-v0.1 deepseek-v2-lite}; do
    [ -f "$top_srcdir/samples/models/$m.json" ] && fitm="$fitm $m"
done
for m in $models; do
    case " $fitm " in *" $m "*) ;; *) predm="$predm --predict $m" ;; esac
done
echo
tab "== 2. per kernel, predicted against measured: octopipe calibrate --gpu$fitm ($( [ "$dry" ] && echo emulated || echo gpu))"
timeout "$(lim 150)" "$OCTOPIPE" calibrate --gpu $calmode --reps 5 -o "$work/cal" $fitm $predm >"$work/cal.txt" 2>&1
rc=$?
while IFS= read -r l; do tab "$l"; done <"$work/cal.txt"
[ "$rc" = 0 ] || fail "calibrate --gpu$fitm: $(note_rc $rc)"
first=${fitm# }
first=${first%% *}
[ -n "${OUT:-}" ] && [ -s "$work/cal/$first.json" ] && cp "$work/cal/$first.json" "$OUT/calibrated.json"

# ---- 3. the protocol (non-fatal) ----------------------------------------------------------
echo
tab "== 3. the protocol ($mode; each command under its own timeout)"
tab "$(printf '%-28s %12s %12s %8s %s' 'CHECK' 'PREDICTED' 'MEASURED' 'ERROR' 'NOTE (MODE)')"
# row NAME JSON ERR RC: a run's predicted and measured iteration, or why there is none
row() {
    python3 - "$1" "$2" "$3" "$4" "$mode" <<'PY' | while IFS= read -r l; do tab "$l"; done
import json, sys
name, out, err, rc, mode = sys.argv[1:6]
try:
    r = json.load(open(out))
    rep = "%d receives repaired" % r["repaired_receives"] if r.get("repaired_receives") else "ok"
    print("%-28s %9.2f ms %9.2f ms %+7.2f%% %s (%s)" % (name, r["predicted_ms"], r["measured_ms"], 100 * r["error"],
                                                       rep, mode))
except Exception:
    last = (open(err).read().strip().splitlines() or ["no output"])[-1]
    why = "timed out" if rc in ("124", "137") else "exit %s" % rc
    print("%-28s %12s %12s %8s %s: %s (%s)" % (name, "-", "-", "-", why, last[:90], mode))
PY
}
share=
[ "$mode" = gpu ] && [ "$n" -lt 4 ] && share=--share-gpus
if timeout "$(lim 30)" "$OCTOPIPE" plan --model llama2-7b --cluster "$work/cluster$n.json" --schedule 1f1b \
    --microbatches $((2 * n)) -o "$work/plann.json" >/dev/null 2>&1; then
    timeout "$(lim 60)" "$OCTOPIPE" run --backend "$backend" --iters 3 --timeout 20 --json "$work/plann.json" \
        >"$work/runn.json" 2>"$work/runn.err"
    rc=$?
    row "llama2-7b 1f1b on $n GPU$( [ "$n" = 1 ] || echo s)" "$work/runn.json" "$work/runn.err" "$rc"
    [ "$rc" = 0 ] || fail "llama2-7b on $n devices: $(note_rc $rc)"
else
    fail "cannot plan llama2-7b on $n devices"
fi
for sched in 1f1b interleaved zb-h1 zb-v dualpipev; do
    if ! timeout "$(lim 30)" "$OCTOPIPE" plan --model llama2-7b --cluster "$work/cluster4.json" --schedule $sched \
        --microbatches 8 -o "$work/plan4.json" >/dev/null 2>&1; then
        fail "cannot plan $sched on 4 devices"; continue
    fi
    timeout "$(lim 45)" "$OCTOPIPE" run --backend "$backend" $share --iters 2 --timeout 20 --json "$work/plan4.json" \
        >"$work/run4.json" 2>"$work/run4.err"
    rc=$?
    row "$sched, 4 devices${share:+ shared}" "$work/run4.json" "$work/run4.err" "$rc"
    [ "$rc" = 0 ] || fail "$sched on 4 devices: $(note_rc $rc)"
done
timeout "$(lim 30)" "$OCTOPIPE" plan --model llama2-7b --cluster "$work/cluster4.json" --schedule 1f1b \
    --microbatches 8 -o "$work/plan4.json" >/dev/null 2>&1 || fail "cannot plan 1f1b on 4 devices"
t0=$(date +%s)
timeout "$(lim 45)" "$OCTOPIPE" run --backend "$backend" $share --kill-device 1 --kill-after 3 --timeout 20 \
    "$work/plan4.json" >/dev/null 2>"$work/kill.err"
rc=$? t1=$(date +%s)
tab "$(printf '%-28s %s' 'device 1 killed after 3 ops' "exit $rc after $((t1 - t0)) s: $(tail -1 "$work/kill.err" | cut -c1-90) ($mode)")"
if [ "$rc" != 1 ] || ! grep -Eq "device 1: killed after 3 ops|worker 1 died after 3 ops" "$work/kill.err"; then
    fail "a killed device must stop the run with exit 1 and its name"
fi
for fault in misroute corrupt; do
    timeout "$(lim 45)" "$OCTOPIPE" run --backend "$backend" $share --$fault-xfer 5 --timeout 20 "$work/plan4.json" \
        >/dev/null 2>"$work/$fault.err"
    rc=$?
    tab "$(printf '%-28s %s' "transfer 5 $fault" "exit $rc: $(tail -1 "$work/$fault.err" | sed 's/.*but the data/the data/' | cut -c1-90) ($mode)")"
    if [ "$rc" != 1 ] || ! grep -q "(transfer 5, iteration [0-9]*), but the data .*(\(mis-routed\|corrupted\)" "$work/$fault.err"; then
        fail "a $fault transfer must fail the run naming it"
    fi
done

# ---- 4. per model, last, within the budget ------------------------------------------------
echo
tab "== 4. per model ($mode): one GPU, every layer its own stage, 1 microbatch, the second of 2 iterations"
tab "   (budget: $(left) s left; TABLE: the bundled table's prices, FITTED: re-priced by part 2's fit,"
tab "   ERROR: FITTED's; fails above ${ITER_PCT}% per iteration, ${KIND_PCT}% per layer kind of >= 1 ms)"
ran=
for m in $models; do
    if [ "$(left)" -lt 20 ]; then tab "$m: skipped: the budget is spent ($mode)"; continue; fi
    L=$(printf '%s\n' "$catalog" | awk -v m="$m" '$1 == m { print $2 }')
    ones=$(yes 1 | head -n "$L" | paste -sd, -) zeros=$(yes 0 | head -n "$L" | paste -sd, -)
    # (exit 3: the simulator's activations of every layer outgrow one GPU; the executor
    # holds only the largest kernel's operands, and runs it with --force)
    timeout "$(lim 30)" "$OCTOPIPE" plan --model "$m" --cluster "$work/cluster1.json" --schedule adaptive --chunks "$L" \
        --partition "$ones" --placement "$zeros" --microbatches 1 -o "$work/$m.plan.json" >"$work/$m.plan.txt" 2>&1
    rc=$?
    if [ "$rc" != 0 ] && [ "$rc" != 3 ] || [ ! -s "$work/$m.plan.json" ]; then
        fail "$m: cannot plan it: $(tail -1 "$work/$m.plan.txt")"; continue
    fi
    timeout "$(lim 90)" "$OCTOPIPE" run --backend "$backend" --force --iters 2 --timeout 30 --json \
        --timeline-out "$work/$m.tl.json" "$work/$m.plan.json" >"$work/$m.run.json" 2>"$work/$m.run.err"
    rc=$?
    if [ "$rc" != 0 ]; then
        tab "$m: $(note_rc $rc): $(tail -1 "$work/$m.run.err" | cut -c1-100) ($mode)"
        fails=$((fails + 1)); continue
    fi
    ran="$ran $m"
done
# the tables of the models that ran, in one python
python3 - "$top_srcdir/samples/models" "$work" "$ITER_PCT" "$KIND_PCT" "$mode" "$fitm" $ran >"$work/models.txt" <<'PY'
import json, os, sys
top, work, iter_pct, kind_pct, mode, fitm = sys.argv[1:7]
want = {"emu": "emulated", "gpu": "architecture"}[mode]
bad_models = 0
def times(layer):
    return {"F": layer["f_ms"], "I": layer["b_ms"], "W": layer["w_ms"], "B": layer["b_ms"] + layer["w_ms"]}
for name in sys.argv[7:]:
    layers = json.load(open("%s/%s.json" % (top, name)))["layers"]
    cal = "%s/cal/%s.json" % (work, name)
    fitted = json.load(open(cal))["layers"] if os.path.exists(cal) else None
    r = json.load(open("%s/%s.run.json" % (work, name)))
    if r["kernels"] != want:
        print("FAIL: %s: the run's kernels were %s, not %s" % (name, r["kernels"], want)); bad_models += 1; continue
    pred, fit, meas, order = {}, {}, {}, []
    for d in json.load(open("%s/%s.tl.json" % (work, name)))["devices"]:
        for o in d["ops"]:
            k = layers[o["stage"]]["kind"]
            if k not in pred:
                order.append(k)
            pred[k] = pred.get(k, 0) + times(layers[o["stage"]])[o["op"]]
            fit[k] = fit.get(k, 0) + times((fitted or layers)[o["stage"]])[o["op"]]
            meas[k] = meas.get(k, 0) + o["end_ms"] - o["start_ms"]
    bad = 0
    print("%s (%s):" % (name, "no fit: part 2 failed" if fitted is None else
                        "in the fit" if name in fitm.split() else "predicted: not in the fit"))
    print("  %-22s %10s %10s %12s %8s %s" % ("LAYER KIND", "TABLE ms", "FITTED ms", "MEASURED ms", "ERROR", "MODE"))
    def row(k, p, f, m):
        e = (f - m) / m if m > 0 else 0
        over = (f >= 1 and abs(e) * 100 > float(kind_pct)) if k else abs(e) * 100 > float(iter_pct)
        print("  %-22s %10.3f %10.3f %12.3f %+7.1f%% %s%s" % (k or "iteration", p, f, m, 100 * e, mode,
                                                             "  FAIL" if over else ""))
        return over
    for k in order:
        bad += row(k, pred[k], fit[k], meas[k])
    # one device runs every op in turn: the fitted iteration is the sum of its ops
    it_fit = sum(fit.values()) if fitted else r["predicted_ms"]
    bad += row(None, r["predicted_ms"], it_fit, r["measured_ms"])
    bad_models += bad > 0
print("models failing: %d" % bad_models)
PY
while IFS= read -r l; do
    case "$l" in "models failing: "*) fails=$((fails + ${l#models failing: })) ;; *) tab "$l" ;; esac
done <"$work/models.txt"

echo
tab "done in $(($(date +%s) - start)) s of a ${BUDGET} s budget ($mode)"
[ "$fails" = 0 ] || { echo "FAIL: $fails of the checks above failed"; exit 1; }
if [ "$dry" ]; then
    echo "PASS (dry): every part of the self-test ran end to end on the emulator"
else
    echo "PASS: the cuda backend ran on $n GPU$( [ "$n" = 1 ] || echo s)"
fi
exit 0
