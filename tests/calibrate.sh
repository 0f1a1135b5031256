#!/bin/sh
# octopipe calibrate: a run whose stage is a known factor slower than the model says
# (the emulator's hidden --emu-slowdown) gives that factor back, and the re-simulated
# iteration time then matches the measurement; bad inputs are refused with exit 2.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
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
run "$OCTOPIPE" calibrate "$T/slow.json"
expect_rc 2 "an output model is required"
if [ ! -e "$T/x.json" ]; then ok "nothing is written after a failure"; else not_ok "nothing is written after a failure"; fi
done_testing
