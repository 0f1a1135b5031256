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

# ---- the same file as the TUI's keys, byte for byte --------------------------------------
# tui_save KEYS OUT: the UI on the plan, headless, the keys, then save as OUT
tui_save() {
    env HOME="$T" XDG_STATE_HOME="$T/state" "$OCTOPIPE" tui --render 120x30 \
        --keys "$1S$(printf '\025')$2\\n" "$P" >"$T/frame.txt" 2>&1
}
same_as_keys() {
    keys=$1 name=$2; shift 2
    rm -f "$T/k-tui.json" "$T/k-edit.json"
    tui_save "$keys" "$T/k-tui.json"
    "$OCTOPIPE" edit "$P" "$@" -o "$T/k-edit.json" >/dev/null 2>&1
    if [ -f "$T/k-tui.json" ] && cmp -s "$T/k-tui.json" "$T/k-edit.json"; then ok "edit $* writes what the keys $name save"
    else not_ok "edit $* writes what the keys $name save" "$(diff "$T/k-tui.json" "$T/k-edit.json" 2>&1 | head -8)"; fi
}
same_as_keys ']' "]" --boundary 0:+1
same_as_keys '>' ">" --move-op 0F0:later
same_as_keys 'p' "F9 (p)" --reorder
# the first move leaves gpu 2 out of memory: the second still merges by simulated starts
same_as_keys 'm2\nm1\n' "m 2, m 1" --place 0:2 --place 0:1

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
if [ "$(field "$T/as.json" "p['name']")" = "gpt-13b tuner step $last" ]; then ok "and named as the UI names an adopted step"
else not_ok "the adopted step's name" "$(field "$T/as.json" "p['name']")"; fi
run "$OCTOPIPE" tune --model gpt-13b --cluster 4xH200 --microbatches 16 --layout pp --evals 100 --steps-out "$T/steps16.json" -o "$T/t16.json"
run "$OCTOPIPE" edit "$P" --adopt "$T/steps16.json:0" -o "$T/no.json"
expect_rc 2 "a step of a run at 16 microbatches into a plan of 8: exit 2"
expect_match 'steps of a run at 16 microbatches, the plan has 8' "$ERR" "naming both counts"
run "$OCTOPIPE" edit "$P" --adopt "$T/steps.json:$n" -o "$T/no.json"
expect_rc 2 "a step past the file's: exit 2"
expect_match "there is no step $n \\(the file has $n, from 0\\)" "$ERR" "naming the count"
run "$OCTOPIPE" plan --model nemotronh-8b --cluster 4xH200 --schedule 1f1b --microbatches 8 -o "$T/other.json"
run "$OCTOPIPE" edit "$P" --adopt "$T/other.json" -o "$T/no.json"
expect_rc 2 "a plan of another model: exit 2"
expect_match "a plan of 'nemotronh-8b' on '4xH200', this plan is of 'gpt-13b' on '4xH200'" "$ERR" "saying why"

# ---- --adopt and report --steps read steps with one reader: a file one refuses the other
# refused too, in the same words (edit took a step numbered -3 or a bubble of 700% that
# report refused, and report refused a step that could not run, null, that edit took)
stepsmod() { python3 -c "import json, sys; s = json.load(open(sys.argv[1])); t = s['steps'][0]; $1; json.dump(s, open(sys.argv[2], 'w'))" "$T/steps.json" "$T/mod.steps"; }
for mod in "t['bubble_after'] = 7" "t['step'] = -3" "t['step'] = 'x'" "t['after_ms'] = 1e301" "t['phase'] = ''" \
           "t['what'] = 5" "t['stages'] = []"; do
    stepsmod "$mod"
    rm -f "$T/mod.json" "$T/mod.html"
    run "$OCTOPIPE" edit "$P" --adopt "$T/mod.steps:0" -o "$T/mod.json"
    erc=$RC edit_err=$ERR
    run "$OCTOPIPE" report "$P" --steps "$T/mod.steps" -o "$T/mod.html"
    if [ "$erc" = 2 ] && [ "$RC" = 2 ] && [ "$edit_err" = "$ERR" ] && [ ! -e "$T/mod.json" ] && [ ! -e "$T/mod.html" ] &&
       printf '%s' "$ERR" | grep -q '^.*mod\.steps: steps\[0\]'; then
        ok "steps with $mod: edit --adopt and report --steps refuse them alike ($ERR)"
    else
        not_ok "steps with $mod: edit --adopt and report --steps refuse them alike" "edit: exit $erc: $edit_err" "report: exit $RC: $ERR"
    fi
done
stepsmod "t['after_ms'] = None; t['bubble_after'] = None; del t['before_ms']"
run "$OCTOPIPE" edit "$P" --adopt "$T/mod.steps:0" -o "$T/mod.json"
erc=$RC
run "$OCTOPIPE" report "$P" --steps "$T/mod.steps" -o "$T/mod.html"
if [ "$erc" = 0 ] && [ "$RC" = 0 ]; then ok "a step that could not run (null times, as the tuner writes them): both take it"
else not_ok "a step that could not run: both take it" "edit: exit $erc" "report: exit $RC: $ERR"; fi
if grep -q '<td>cannot run</td>' "$T/mod.html" && ! grep -Eq '[ ">(-](nan|inf)\b' "$T/mod.html"; then
    ok "the report shows its time as 'cannot run', no inf or nan"
else not_ok "the report shows its time as 'cannot run'" "$(grep -Eo '.{40}(cannot run|nan|inf).{20}' "$T/mod.html" | head -3)"; fi

# ---- bad edits: one line, exit 2, nothing written -------------------------------------------
for bad in "--boundary 3:+1" "--boundary 0:+2" "--boundary x" "--boundary 0:1" "--boundary 00:+1" "--boundary +0:+1" \
           "--place 1:9" "--place 9:1" "--place 1:-0" "--place 99999999999:1" "--move-op 9F0:later" \
           "--move-op 0F0:up" "--move-op zz:later" "--adopt $T/missing.json" "--adopt $T/steps.json:99999999999"; do
    # shellcheck disable=SC2086
    run "$OCTOPIPE" edit "$P" $bad -o "$T/bad.json"
    n=$(printf '%s\n' "$ERR" | grep -c .)
    if [ "$RC" = 2 ] && [ "$n" = 1 ] && [ ! -e "$T/bad.json" ]; then ok "edit $bad: exit 2, one line, nothing written ($ERR)"
    else not_ok "edit $bad: exit 2, one line, nothing written" "exit $RC, $n lines" "$ERR"; fi
done
# FILE:N with an N that is no step number named the whole word a file it could not open
for k in -1 x "" 1.5 01; do
    run "$OCTOPIPE" edit "$P" --adopt "$T/steps.json:$k" -o "$T/bad.json"
    expect_rc 2 "--adopt STEPS:'$k': exit 2"
    expect_match "^octopipe edit: --adopt '.*steps\.json:$k': the step after ':' is a number from 0 \(the first\) to 1000000, not '$k' \(see 'octopipe edit --help'\)\$" \
        "$ERR" "--adopt STEPS:'$k' names the step as what is wrong: $ERR"
done
if [ -e "$T/bad.json" ]; then not_ok "and writes nothing"; else ok "and writes nothing"; fi
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
run "$OCTOPIPE" edit "$P" --boundary 0:+1 -o -
if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | python3 -c 'import json, sys; assert json.load(sys.stdin)["format"] == "octopipe.plan/1"'
then ok "-o -: standard output is the plan alone, one document"; else not_ok "-o - is one document" "$OUT"; fi
esc=$(printf 'x\033[31my')
run "$OCTOPIPE" edit "$P" --reorder -o "$T/$esc.json"
expect_rc 0 "an output name holding an escape sequence"
if printf '%s' "$OUT" | grep -q "$(printf '\033')"; then not_ok "the summary escapes the name" "$OUT"
else ok "the summary escapes its control characters"; fi
set --
i=0; while [ $i -lt 1200 ]; do set -- "$@" --boundary 0:+1 --boundary 0:-1; i=$((i + 1)); done
run "$OCTOPIPE" edit "$P" "$@" --json -o "$T/many.json"
if [ "$RC" = 0 ] && [ "$(printf '%s\n' "$OUT" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["edits"]))')" = 2400 ]
then ok "2400 edits in one run"; else not_ok "2400 edits" "exit $RC" "$ERR"; fi
# the line that says why an edited plan cannot run ends its line (it ran into stdout's next)
last=$("$OCTOPIPE" edit "$top_srcdir/tests/data/tiny-plan.json" --move-op 1I0:earlier -o "$TMPDIR_TEST/nl.json" 2>&1 >/dev/null | tail -c 1 | od -An -c | tr -d ' ')
if [ "$last" = '\n' ]; then ok "edit's infeasible line ends with a newline"; else not_ok "edit's infeasible line ends with a newline" "last byte '$last'"; fi
done_testing
