#!/bin/sh
# octopipe calibrate: a run whose stage is a known factor slower than the model says
# (the emulator's hidden --emu-slowdown) gives that factor back, and the re-simulated
# iteration time then matches the measurement; bad inputs are refused with exit 2.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
T="$TMPDIR_TEST"
plan="$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"

# check_fit JSON SLOW_STAGE FACTOR KINDS: the factors and the error after, from --json
check_fit() {
    python3 -c '
import json, sys
r = json.loads(sys.argv[1]); slow = int(sys.argv[2]); want = float(sys.argv[3]); kinds = sys.argv[4].split(",")
for s in r["stages"]:
    for k in kinds:
        w = want if s["stage"] == slow else 1.0
        assert abs(s[k] - w) < 1e-6, (s["stage"], k, s[k], w)
        assert s[k + "_samples"] > 0, s
assert abs(r["before"]["error"]) > 0.02, r["before"]
assert abs(r["after"]["error"]) < 0.005, r["after"]
' "$1" "$2" "$3" "$4"
}

run "$OCTOPIPE" run --emu-slowdown 1:1.5 --timeline-out "$T/slow.json" "$plan"
expect_rc 0 "a run with stage 1 made 1.5x slower"
expect_match '"plan": "[^"]*gpt-13b-4xH200-1f1b.json"' "$(cat "$T/slow.json")" "the measured timeline names its plan"
run "$OCTOPIPE" calibrate --json -o "$T/fit.json" "$T/slow.json"
expect_rc 0 "calibrate fits the measured timeline"
if check_fit "$OUT" 1 1.5 f,b; then ok "the factor 1.5 of stage 1 is recovered, the others stay 1, the error drops to ~0"
else not_ok "the fitted factors" "$OUT"; fi
run "$OCTOPIPE" check "$T/fit.json"
expect_rc 0 "the recalibrated model is a valid model"
run "$OCTOPIPE" calibrate -o "$T/fit2.json" "$T/slow.json"
expect_match '^iteration: measured [0-9.]+ ms; predicted [0-9.]+ ms before \(error -[0-9.]+%\), [0-9.]+ ms after \(error [+-]0\.0[0-9]%\)$' "$OUT" "the report shows the error before and after"
expect_match '^    1      1   1\.5000   1\.5000$' "$OUT" "and the factors per stage"

# a cluster with a fixed per-op cost: only the layers' share is rescaled, so the refit
# still lands on the measurement (a factor over the whole op would add the overhead twice)
python3 - "$top_srcdir" "$T" <<'PY'
import json, sys
top, t = sys.argv[1], sys.argv[2]
c = json.load(open(f"{top}/samples/clusters/4xH200.json")); c["op_overhead_us"] = 20000
json.dump(c, open(f"{t}/oh-cluster.json", "w"))
p = json.load(open(f"{top}/plans/gpt-13b-4xH200-1f1b.json"))
p["model"] = f"{top}/samples/models/gpt-13b.json"; p["cluster"] = f"{t}/oh-cluster.json"
json.dump(p, open(f"{t}/oh-plan.json", "w"))
PY
"$OCTOPIPE" run --emu-slowdown 2:1.5 --timeline-out "$T/oh-run.json" "$T/oh-plan.json" >/dev/null 2>&1
run "$OCTOPIPE" calibrate --json --plan "$T/oh-plan.json" -o "$T/oh-fit.json" "$T/oh-run.json"
after=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(abs(json.load(sys.stdin)["after"]["error"]))' 2>/dev/null)
if [ "$RC" = 0 ] && awk -v a="$after" 'BEGIN { exit !(a < 0.002) }'; then
    ok "with a 20 ms per-op overhead the refit lands within 0.2% (error $after)"
else
    not_ok "a refit with a per-op overhead" "exit $RC" "after $after" "$ERR"
fi

# the overhead itself: a run on a runtime with 20 ms per op (the emulator given a cluster
# that says so), calibrated against the plan on a cluster that knows none, gives 20 ms back
# and a cluster file that carries it; uneven stages tell a constant from a scale
"$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 --partition 4,12,12,12 \
    -o "$T/uneven.json" >/dev/null 2>&1
python3 - "$T" <<'PY'
import json, sys
t = sys.argv[1]
p = json.load(open(f"{t}/uneven.json")); p["cluster"] = "oh-cluster.json"
json.dump(p, open(f"{t}/uneven-oh.json", "w"))
PY
"$OCTOPIPE" run --timeline-out "$T/oh-only.json" "$T/uneven-oh.json" >/dev/null 2>&1
run "$OCTOPIPE" calibrate --json --fit-overhead --cluster-out "$T/fitted-cluster.json" --plan "$T/uneven.json" \
    -o "$T/oh-fit2.json" "$T/oh-only.json"
got=$(printf '%s' "$OUT" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["op_overhead_us"], abs(r["after"]["error"]))' 2>/dev/null)
if [ "$RC" = 0 ] && printf '%s' "$got" | awk '{ exit !($1 > 19990 && $1 < 20010 && $2 < 0.001) }'; then
    ok "--fit-overhead recovers a 20 ms per-op overhead, and the refit lands (overhead us, error: $got)"
else
    not_ok "--fit-overhead recovers the overhead" "exit $RC" "$got" "$OUT" "$ERR"
fi
expect_match '"op_overhead_us": 2[0-9]{4}' "$(cat "$T/fitted-cluster.json" 2>/dev/null)" "--cluster-out writes it"
"$OCTOPIPE" run --emu-slowdown 1:1.5 --timeline-out "$T/uneven-slow.json" "$T/uneven.json" >/dev/null 2>&1
run "$OCTOPIPE" calibrate --fit-overhead --plan "$T/uneven.json" -o "$T/oh-fit3.json" "$T/uneven-slow.json"
expect_rc 0 "one stage 1.5x slower, no overhead"
expect_match '^per-op overhead: 0\.0 us' "$OUT" "is not taken for an overhead (a robust fit over the stages)"
run "$OCTOPIPE" calibrate --fit-overhead -o "$T/x2.json" "$T/slow.json"
expect_rc 2 "stages of nearly equal cost cannot tell an overhead"
expect_match "stages cost within 25% of each other" "$ERR" "and it says so"
run "$OCTOPIPE" calibrate --cluster-out "$T/c1.json" -o "$T/x1.json" "$T/slow.json"
expect_rc 2 "--cluster-out needs --fit-overhead"

zb="$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-zb-h1.json"
"$OCTOPIPE" run --emu-slowdown 3:2 --timeline-out "$T/zb.json" "$zb" >/dev/null 2>&1
run "$OCTOPIPE" calibrate --json --plan "$zb" -o "$T/zbfit.json" "$T/zb.json"
if [ "$RC" = 0 ] && check_fit "$OUT" 3 2 f,i,w; then ok "a split backward: the F, I and W factors of a stage 3 twice as slow"
else not_ok "a split backward fit" "exit $RC" "$OUT" "$ERR"; fi

"$OCTOPIPE" sim --timeline-out "$T/sim.json" "$plan" >/dev/null 2>&1
run "$OCTOPIPE" calibrate -o "$T/x.json" "$T/sim.json"
expect_rc 2 "a simulated timeline is not a measurement"
run "$OCTOPIPE" calibrate --plan "$zb" -o "$T/x.json" "$T/slow.json"
expect_rc 2 "a timeline of another plan is refused"
expect_match 'slow.json: devices: the timeline has 4 devices, the plan 8' "$ERR" "naming the mismatch"
# --plan a plan of the same shape as the one the run names, but another partition: the fit
# would be of the wrong layers (it fitted factors 0.41 and 1.20 and called it a run of p)
"$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --microbatches 8 --schedule 1f1b --partition 4,12,12,12 \
    -o "$T/pu.json" >/dev/null 2>&1
"$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --microbatches 8 --schedule 1f1b -o "$T/pm.json" >/dev/null 2>&1
"$OCTOPIPE" run "$T/pu.json" --timeline-out "$T/runu.json" >/dev/null 2>&1
run "$OCTOPIPE" calibrate --plan "$T/pm.json" -o "$T/x-other.json" "$T/runu.json"
expect_rc 2 "--plan of another partition than the run's is refused"
expect_match "runu.json: plan: a run of 'pu.json', whose partition, placement or order is not" "$ERR" "naming the plan it ran"
run "$OCTOPIPE" calibrate --plan "$T/pu.json" -o "$T/x-same.json" "$T/runu.json"
expect_rc 0 "--plan of the plan it ran is fitted"
# a timeline that is not a whole run of its plan (an op missing, a device that ran nothing,
# a microbatch the plan does not have), or whose ops took no time, cannot be fitted: the
# stages it leaves out would keep factor 1 as if measured, and a factor 0 zeroes a model
python3 - "$T/slow.json" "$T" <<'PY'
import copy, json, sys
tl = json.load(open(sys.argv[1])); t = sys.argv[2]
def w(name, f):
    x = copy.deepcopy(tl); f(x); json.dump(x, open(f"{t}/{name}.json", "w"))
w("hole", lambda x: x["devices"][2]["ops"].pop(5))
w("idle", lambda x: x["devices"][2].__setitem__("ops", []))
w("mb99", lambda x: x["devices"][1]["ops"][3].__setitem__("mb", 99))
w("instant", lambda x: [o.__setitem__("end_ms", o["start_ms"]) for d in x["devices"] for o in d["ops"]])
PY
for bad in hole idle mb99 instant; do
    run "$OCTOPIPE" calibrate --plan "$plan" -o "$T/x.json" "$T/$bad.json"
    if [ "$RC" = 2 ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" = 1 ] && printf '%s' "$ERR" | grep -q "$bad.json"; then
        ok "a timeline with '$bad' is refused in one line naming it ($ERR)"
    else
        not_ok "a timeline with '$bad' is refused" "exit $RC" "$OUT" "$ERR"
    fi
done
run "$OCTOPIPE" calibrate "$T/slow.json"
expect_rc 2 "an output model is required"
if [ ! -e "$T/x.json" ]; then ok "nothing is written after a failure"; else not_ok "nothing is written after a failure"; fi
# calibrate --gpu: without a GPU (or without the cuda backend) one line and exit 1; the
# rest of the command (benches, fit, re-priced model) runs with --emulate-gpu, whose
# "measurements" are the model's own prediction: the fit must give the model back
run "$OCTOPIPE" calibrate --gpu -o "$T/gpu.json" gemma3-12b
if [ "$RC" = 0 ]; then
    ok "calibrate --gpu runs here (a GPU is present)"
else
    expect_rc 1 "calibrate --gpu without a GPU: exit 1"
    expect_match '^octopipe calibrate: (no GPU: .|--gpu needs the cuda backend: the cuda backend was not built)' "$ERR" \
        "in one line saying why"
    n=$(printf '%s\n' "$ERR" | grep -c .)
    if [ "$n" = 1 ]; then ok "one line"; else not_ok "one line" "$ERR"; fi
    if [ ! -e "$T/gpu.json" ]; then ok "and nothing is written"; else not_ok "nothing is written without a GPU"; fi
fi
run "$OCTOPIPE" calibrate --emulate-gpu --json -o "$T/gpu.json" gemma3-12b
if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert r["benchmarks"] > 10 and r["error_after_pct"] < 1e-3, r
for c in r["classes"]:
    assert abs(c["f_after"] - c["f_before"]) <= 1e-3 * c["f_before"], c
for x, y in zip(a["layers"], b["layers"]):
    assert abs(x["f_ms"] - y["f_ms"]) <= 1e-6 * x["f_ms"] and abs(x["b_ms"] - y["b_ms"]) <= 1e-6 * max(x["b_ms"], 1e-9), (x, y)
assert b["source"]["hardware"]["source"].startswith("octopipe calibrate --gpu"), b["source"]["hardware"]
' "$top_srcdir/samples/models/gemma3-12b.json" "$T/gpu.json"; then
    ok "calibrate --gpu's fit and model, on emulated times: the efficiencies and layer times come back, the source says where they came from"
else not_ok "calibrate --emulate-gpu" "exit $RC" "$OUT" "$ERR"; fi
run "$OCTOPIPE" calibrate --emulate-gpu -o "$T/gpu2.json" gpt-13b
expect_rc 2 "calibrate --gpu of a profile-only model: exit 2"
expect_match "has no architecture \(a profile-only layer table\)" "$ERR" "saying why"
run "$OCTOPIPE" calibrate --gpu gemma3-12b
expect_rc 2 "calibrate --gpu needs -o"
run "$OCTOPIPE" calibrate --gpu --fit-overhead -o "$T/x.json" gemma3-12b
expect_rc 2 "and takes no timeline options"
# the re-priced model is written after the benchmarks: an unwritable output is refused first
run "$OCTOPIPE" calibrate --emulate-gpu -o "$T/no/such/dir/gpu.json" gemma3-12b
expect_rc 1 "calibrate --gpu -o into a missing directory"
expect_match "^octopipe calibrate: $T/no/such/dir/gpu.json: cannot create a temporary file" "$ERR" "is refused before the benchmarks"
if [ -z "$OUT" ]; then ok "no report printed"; else not_ok "calibrate benchmarked before refusing its output" "$OUT"; fi
# several models are fitted together and --predict models re-priced with that fit: a
# copy of nemotronh-8b whose table was priced with an SSD efficiency of 0.5 (emulated: its
# "measurements" are at 0.5) is the only model of the fit with an SSD, so the joint fit
# must say 0.5, and nemotronh-8b-seq8k, predicted and never benchmarked, is re-priced with
# it: its mamba2 layers get slower by the fit's ratio, its attention layers do not move
python3 - "$top_srcdir/samples/models/nemotronh-8b.json" "$T/nh-ssd.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["source"]["hardware"]["efficiency"]["ssd"] = {"f": 0.5, "b": 0.5}
json.dump(m, open(sys.argv[2], "w"))
PY
run "$OCTOPIPE" calibrate --emulate-gpu --reps 1 --json -o "$T/multi" gemma3-12b "$T/nh-ssd.json" \
    --predict nemotronh-8b-seq8k
if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
d, top = sys.argv[1], sys.argv[2]
assert r["models"] == ["gemma3-12b", "nh-ssd"] and r["predicted"] == ["nemotronh-8b-seq8k"], r
assert {k["model"] for k in r["kernels"]} == {"gemma3-12b", "nh-ssd"}, "a predicted model was benchmarked"
ssd = [c for c in r["classes"] if c["class"] == "ssd"][0]
assert abs(ssd["f_after"] - 0.5) < 1e-3 and abs(ssd["b_after"] - 0.5) < 1e-3, ssd
old = json.load(open(top + "/samples/models/nemotronh-8b-seq8k.json"))
new = json.load(open(d + "/nemotronh-8b-seq8k.json"))
assert new["source"]["hardware"]["efficiency"]["ssd"]["f"] == ssd["f_after"], new["source"]["hardware"]
for a, b in zip(old["layers"], new["layers"]):
    if a["kind"] == "mamba2":
        assert b["f_ms"] < a["f_ms"], (a["f_ms"], b["f_ms"])   # 0.5 is faster than the table s 0.089
    elif a["kind"] == "attn":
        assert abs(a["f_ms"] - b["f_ms"]) <= 1e-6 * a["f_ms"], (a, b)
for n in ("gemma3-12b", "nh-ssd"):
    assert json.load(open("%s/%s.json" % (d, n)))["source"]["hardware"]["source"].startswith("octopipe calibrate --gpu")
' "$T/multi" "$top_srcdir"; then
    ok "calibrate --gpu of several models: one joint fit (each class from the models that have it), every model re-priced into the directory, --predict ones too and not benchmarked"
else not_ok "calibrate --gpu of several models" "exit $RC" "$OUT" "$ERR"; fi
run "$OCTOPIPE" calibrate --emulate-gpu -o "$T/gpu.json" gemma3-12b nemotronh-8b
expect_rc 2 "several models into a file: exit 2"
expect_match "^octopipe calibrate: $T/gpu.json: not a directory" "$ERR" "saying that several go into a directory"
run "$OCTOPIPE" calibrate --emulate-gpu -o - gemma3-12b --predict nemotronh-8b
expect_rc 2 "several models to standard output: exit 2"
run "$OCTOPIPE" calibrate --emulate-gpu -o "$T/multi2" gemma3-12b --predict "$top_srcdir/samples/models/gemma3-12b.json"
expect_rc 2 "two models of one name: exit 2"
expect_match "would both be written as $T/multi2/gemma3-12b.json" "$ERR" "naming the file they would share"
run "$OCTOPIPE" calibrate --emulate-gpu -o "$T/multi3" gemma3-12b --predict gpt-13b
expect_rc 2 "a predicted model must have an architecture to be re-priced"
if [ ! -e "$T/multi3" ]; then ok "and nothing is made"; else not_ok "calibrate made its directory before refusing a model"; fi
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); m["source"]["hardware"]["peak_tflops"]=500; json.dump(m,open(sys.argv[2],"w"))' \
    "$top_srcdir/samples/models/llama2-7b.json" "$T/l7-other-gpu.json"
run "$OCTOPIPE" calibrate --emulate-gpu -o "$T/multi4" gemma3-12b "$T/l7-other-gpu.json"
expect_rc 2 "models priced for two GPUs: exit 2"
expect_match "one calibration is of one GPU" "$ERR" "saying why"
run "$OCTOPIPE" calibrate --predict llama2-7b -o "$T/x.json" "$T/slow.json"
expect_rc 2 "--predict without --gpu is a usage error"
run "$OCTOPIPE" calibrate --gpu --ceilings --predict llama2-7b
expect_rc 2 "and so it is with --ceilings"
# A cuda run at tp > 1 leaves the all-reduces out and says so in its timeline ("not_run"):
# calibrate compares it with the plan priced without them. A measurement that took
# exactly the dry run's per-op predictions (made here from the simulated timeline, each
# op's end moved to its start plus that) gives every layer back unchanged; the same
# timeline without "not_run" would read the missing all-reduces as faster layers.
"$OCTOPIPE" plan --model llama2-7b --cluster 8xH200 --schedule 1f1b --microbatches 4 --tp 2 -o "$T/ctp2.json" >/dev/null 2>&1
"$OCTOPIPE" sim --timeline-out "$T/ctp2.sim.json" "$T/ctp2.json" >/dev/null 2>&1
"$OCTOPIPE" run --backend cuda --dry-run --json "$T/ctp2.json" >"$T/ctp2.dry.json" 2>&1
python3 - "$T/ctp2.sim.json" "$T/ctp2.dry.json" "$T/ctp2.meas.json" "$T/ctp2.full.json" <<'PY'
import json, sys
tl, dry = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ms = {(o["stage"], o["op"]): o["predicted_ms"] for o in dry["ops"]}
tl["source"] = "cuda"
for d in tl["devices"]:
    for o in d["ops"]:
        o["end_ms"] = o["start_ms"] + ms[(o["stage"], o["op"])]
tl.pop("metrics", None)
json.dump(tl, open(sys.argv[4], "w"))
tl["not_run"] = dry["not_run"]
json.dump(tl, open(sys.argv[3], "w"))
PY
for what in meas full; do
    "$OCTOPIPE" calibrate --plan "$T/ctp2.json" -o "$T/ctp2.$what.model.json" "$T/ctp2.$what.json" >"$T/ctp2.$what.out" 2>&1
done
if python3 - "$top_srcdir/samples/models/llama2-7b.json" "$T/ctp2.meas.model.json" "$T/ctp2.full.model.json" <<'PY'
import json, sys
m0, m1, m2 = (json.load(open(f))["layers"] for f in sys.argv[1:4])
worst = max(abs(b[k] - a[k]) / a[k] for a, b in zip(m0, m1) for k in ("f_ms", "b_ms") if a[k] > 0)
assert worst < 1e-4, worst
# without "not_run": the decoder layers' F read about 8% faster than they are
shrunk = min(b["f_ms"] / a["f_ms"] for a, b in zip(m0, m2) if a["f_ms"] > 0)
assert shrunk < 0.97, shrunk
PY
then ok "a run that left its all-reduces out recalibrates against the prediction without them: every layer unchanged"
else not_ok "calibrate from a tp 2 cuda timeline" "$(cat "$T/ctp2.meas.out" "$T/ctp2.full.out" | head -c 400)"; fi
# factors that would take a layer past what a layer table holds (1e9 ms) are refused with
# one line: the model written would not read back (calibrate wrote it, exit 0)
mkdir "$T/huge"
cp "$top_srcdir/tests/data/tiny-cluster.json" "$top_srcdir/tests/data/tiny-plan.json" "$T/huge/"
python3 - "$top_srcdir/tests/data/tiny-model.json" "$T/huge/tiny-model.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for l in m["layers"]:
    l["f_ms"] = l["b_ms"] = l["w_ms"] = 5e6
json.dump(m, open(sys.argv[2], "w"))
PY
"$OCTOPIPE" run --emu-slowdown 0:1000 --timeline-out "$T/huge/run.json" "$T/huge/tiny-plan.json" >/dev/null 2>&1
run "$OCTOPIPE" calibrate -o "$T/huge/fit.json" "$T/huge/run.json"
if [ "$RC" = 2 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && [ ! -e "$T/huge/fit.json" ]; then
    ok "calibrate refuses factors past a layer table's limit, in one line ($ERR)"
else not_ok "calibrate refuses factors past a layer table's limit" "exit $RC" "$ERR" "$(ls "$T/huge")"; fi
# a plan whose file name is not UTF-8 (or holds a control character): JSON cannot record
# the name, so the run's timeline leaves "plan" out (it was written as U+FFFD or \u001b,
# and calibrate then looked for a file that is not there, or refused the timeline), says
# so in one line, and calibrate asks for --plan; with it the timeline calibrates
mkdir "$T/names"
cp "$top_srcdir/tests/data/tiny-model.json" "$top_srcdir/tests/data/tiny-cluster.json" \
    "$top_srcdir/tests/data/tiny-plan.json" "$T/names/"
for how in "not UTF-8" "with an escape"; do
    case $how in not*) bad="$(printf 'caf\351.json')" ;; *) bad="$(printf 'esc\033[31m.json')" ;; esac
    cp "$T/names/tiny-plan.json" "$T/names/$bad"
    run "$OCTOPIPE" run --timeline-out "$T/names/run.json" "$T/names/$bad"
    if [ "$RC" = 0 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && printf '%s' "$ERR" | grep -q 'give calibrate --plan' \
        && ! printf '%s' "$ERR" | grep -q "$(printf '\033')" && ! grep -q '"plan"' "$T/names/run.json"; then
        ok "run of a plan named $how: the timeline names no plan, said in one line"
    else not_ok "run of a plan named $how" "exit $RC" "$ERR" "$(grep '"plan"' "$T/names/run.json")"; fi
    run "$OCTOPIPE" check "$T/names/run.json"
    expect_rc 0 "and the timeline it wrote is valid"
    run "$OCTOPIPE" calibrate -o "$T/names/fit.json" "$T/names/run.json"
    if [ "$RC" = 2 ] && printf '%s' "$ERR" | grep -q 'names no plan: give --plan'; then ok "calibrate asks for --plan"
    else not_ok "calibrate asks for --plan" "exit $RC" "$ERR"; fi
    run "$OCTOPIPE" calibrate --plan "$T/names/$bad" -o "$T/names/fit.json" "$T/names/run.json"
    expect_rc 0 "and calibrates with it"
    rm -f "$T/names/run.json" "$T/names/fit.json"
done
done_testing
