#!/bin/sh
# octopipe edit: the TUI's hand edits as a command. Each edit does what its key does (the
# stages, devices and orders of the written plan are checked), edits compose in the order
# given and undo each other, --adopt takes a plan's or a tuner step's structure whole, the
# result is written even when it cannot run (exit 3), and bad edits, outputs that are
# inputs and missing arguments are one line and exit 2 with nothing written.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
T="$TMPDIR_TEST"
P="$T/base.json"

# field FILE EXPR: a Python expression over the plan p, printed
field() { python3 -c "import json, sys; p = json.load(open(sys.argv[1])); print($2)" "$1"; }

run "$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 -o "$P"
expect_rc 0 "a 1F1B plan of gpt-13b on 4 GPUs to edit"
stages0=$(field "$P" "[s['layers'] for s in p['stages']]")

# ---- each edit as its key makes it ------------------------------------------------------
run "$OCTOPIPE" edit "$P" --boundary 0:+1 -o "$T/b.json"
expect_rc 0 "--boundary 0:+1 applies"
expect_match '^--boundary 0:\+1: stage 0 now ends at layer 10, stage 1 starts at layer 11$' "$OUT" \
    "and says what it did, in the words of the UI's ]"
got=$(field "$T/b.json" "[s['layers'] for s in p['stages']][:2]")
if [ "$got" = "[[0, 10], [11, 19]]" ]; then ok "stage 0 took stage 1's first layer ($got)"; else not_ok "stage 0 took a layer" "$got"; fi
expect_match '^iteration: [0-9.]+ ms -> [0-9.]+ ms \([-+][0-9.]+%\)$' "$OUT" "the iteration before and after"
run "$OCTOPIPE" edit "$P" --boundary 0:+1 --boundary 0:-1 -o "$T/bb.json"
got=$(field "$T/bb.json" "[s['layers'] for s in p['stages']]")
if [ "$RC" = 0 ] && [ "$got" = "$stages0" ]; then ok "+1 then -1 gives the partition back"; else not_ok "+1 -1 round trip" "$got vs $stages0"; fi

run "$OCTOPIPE" edit "$P" --place 3:2 -o "$T/pl.json"
expect_rc 0 "--place 3:2 applies"
got=$(field "$T/pl.json" "[s['device'] for s in p['stages']]")
if [ "$got" = "[0, 1, 2, 2]" ]; then ok "stage 3 is on gpu 2 ($got)"; else not_ok "stage 3 on gpu 2" "$got"; fi
run "$OCTOPIPE" check "$T/pl.json"
expect_rc 0 "the moved plan is well formed and runs (its ops joined gpu 2 by their start times)"

run "$OCTOPIPE" edit "$P" --move-op 0F3:later --move-op 0F3:earlier -o "$T/mo.json"
got=$(field "$T/mo.json" "p['schedule']")
want=$(field "$P" "p['schedule']")
if [ "$RC" = 0 ] && [ "$got" = "$want" ]; then ok "an op moved later, then earlier: the order is back"
else not_ok "move-op round trip" "exit $RC" "$ERR"; fi
run "$OCTOPIPE" edit "$P" --move-op 0F3:later -o "$T/mo1.json"
got=$(field "$T/mo1.json" "p['schedule'][0][3:5]")
if [ "$got" = "['0B0', '0F3']" ]; then ok "0F3:later swaps it with the op after it on its gpu ($got)"; else not_ok "0F3 later" "$got"; fi

# an edit that makes the plan unrunnable: written, as the UI saves it, and said (exit 3)
run "$OCTOPIPE" edit "$P" --move-op 0F0:later -o "$T/dl.json"
expect_rc 3 "an order that deadlocks: exit 3"
if [ -f "$T/dl.json" ]; then ok "the plan is written all the same"; else not_ok "the deadlocked plan written"; fi
expect_match 'deadlock' "$ERR" "and stderr names the deadlock"
expect_match 'cannot run' "$OUT" "the summary says it cannot run"

run "$OCTOPIPE" edit "$P" --reorder --json -o "$T/ro.json"
expect_rc 0 "--reorder --json"
if printf '%s\n' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["edits"][0]["edit"] == "--reorder" and "adaptive policy" in r["edits"][0]["did"], r
assert r["runs"] and r["after_ms"] > 0 and r["before_ms"] > 0 and r["output"].endswith("ro.json"), r'
then ok "--json says what each edit did and the iteration before and after"; else not_ok "--json" "$OUT"; fi
got=$(field "$T/ro.json" "[s['layers'] for s in p['stages']]")
if [ "$got" = "$stages0" ]; then ok "--reorder keeps the partition"; else not_ok "reorder keeps the partition" "$got"; fi

# ---- --adopt: a plan's or a tuner step's structure, whole ----------------------------------
run "$OCTOPIPE" tune --model gpt-13b --cluster 4xH200 --microbatches 8 --layout pp --evals 200 --steps-out "$T/steps.json" -o "$T/tuned.json"
expect_rc 0 "a tuned plan and its steps"
run "$OCTOPIPE" edit "$P" --adopt "$T/tuned.json" -o "$T/ad.json"
expect_rc 0 "--adopt PLAN"
for k in stages schedule; do
    if [ "$(field "$T/ad.json" "p['$k']")" = "$(field "$T/tuned.json" "p['$k']")" ]; then ok "--adopt takes the plan's $k"
    else not_ok "--adopt takes $k"; fi
done
n=$(field "$T/steps.json" "len(p['steps'])")
last=$((n - 1))
run "$OCTOPIPE" edit "$P" --adopt "$T/steps.json:$last" -o "$T/as.json"
expect_rc 0 "--adopt STEPS:$last (the last step)"
got=$(field "$T/as.json" "[(s['layers'], s['device']) for s in p['stages']]")
want=$(python3 -c "import json, sys; s = json.load(open(sys.argv[1]))['steps'][-1]; print([(x['layers'], x['device']) for x in s['stages']])" "$T/steps.json")
if [ "$got" = "$want" ]; then ok "the step's partition and placement are the plan's"; else not_ok "step adopted" "$got" "$want"; fi
run "$OCTOPIPE" edit "$P" --adopt "$T/steps.json:$n" -o "$T/no.json"
expect_rc 2 "a step past the file's: exit 2"
expect_match "there is no step $n \\(the file has $n, from 0\\)" "$ERR" "naming the count"
run "$OCTOPIPE" plan --model nemotronh-8b --cluster 4xH200 --schedule 1f1b --microbatches 8 -o "$T/other.json"
run "$OCTOPIPE" edit "$P" --adopt "$T/other.json" -o "$T/no.json"
expect_rc 2 "a plan of another model: exit 2"
expect_match 'another model, cluster or microbatch count' "$ERR" "saying why"

# ---- bad edits: one line, exit 2, nothing written -------------------------------------------
for bad in "--boundary 3:+1" "--boundary 0:+2" "--boundary x" "--place 1:9" "--place 9:1" "--move-op 9F0:later" \
           "--move-op 0F0:up" "--move-op zz:later" "--adopt $T/missing.json"; do
    # shellcheck disable=SC2086
    run "$OCTOPIPE" edit "$P" $bad -o "$T/bad.json"
    n=$(printf '%s\n' "$ERR" | grep -c .)
    if [ "$RC" = 2 ] && [ "$n" = 1 ] && [ ! -e "$T/bad.json" ]; then ok "edit $bad: exit 2, one line, nothing written ($ERR)"
    else not_ok "edit $bad: exit 2, one line, nothing written" "exit $RC, $n lines" "$ERR"; fi
done
run "$OCTOPIPE" edit "$P" --reorder -o "$P"
expect_rc 2 "-o the plan itself: refused"
expect_match "it is one of this command's inputs" "$ERR" "as one of its inputs"
run "$OCTOPIPE" edit "$P" --adopt "$T/steps.json:0" -o "$T/steps.json"
expect_rc 2 "-o the steps file it adopts from: refused"
run "$OCTOPIPE" edit "$P" -o "$T/bad.json"
expect_rc 2 "no edit: exit 2"
run "$OCTOPIPE" edit "$P" --reorder
expect_rc 2 "no -o: exit 2"
run "$OCTOPIPE" edit "$P" --boundary 0:+1 -o /dev/full
expect_rc 1 "a full disk: exit 1"
done_testing
