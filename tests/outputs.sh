#!/bin/sh
# Outputs never replace a command's inputs: -o, --timeline-out, --trace-out, --events-out
# and --steps-out that name the plan, or the model or cluster a plan or a command reads
# (through any spelling or link), are refused with one line and exit 2, and the input is
# left as it was. The TUI alone saves over the plan it opened, on purpose.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
T="$TMPDIR_TEST"
cp "$top_srcdir/samples/models/gpt-13b.json" "$T/m.json"
cp "$top_srcdir/samples/clusters/4xH200.json" "$T/c.json"
cp "$T/m.json" "$T/m0.json"; cp "$T/c.json" "$T/c0.json"
"$OCTOPIPE" plan --model "$T/m.json" --cluster "$T/c.json" --schedule 1f1b --microbatches 8 -o "$T/p.json" >/dev/null
cp "$T/p.json" "$T/p0.json"
ln -s m.json "$T/mlink.json"

# refused CMD...: the command fails with exit 2 and one line, and no input changed
refused() {
    run "$@"
    if [ "$RC" = 2 ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" = 1 ] &&
       printf '%s' "$ERR" | grep -q "inputs" &&
       cmp -s "$T/m.json" "$T/m0.json" && cmp -s "$T/c.json" "$T/c0.json" && cmp -s "$T/p.json" "$T/p0.json"; then
        ok "refused, inputs intact: ${*#"$OCTOPIPE" }"
    else
        not_ok "refused, inputs intact: ${*#"$OCTOPIPE" }" "exit $RC" "$ERR"
    fi
    cp "$T/m0.json" "$T/m.json"; cp "$T/c0.json" "$T/c.json"; cp "$T/p0.json" "$T/p.json"
}
O="$OCTOPIPE"
refused "$O" export svg "$T/p.json" -o "$T/m.json"
refused "$O" report "$T/p.json" -o "$T/c.json"
refused "$O" export svg "$T/p.json" -o "$T/mlink.json"
refused "$O" export torch-csv "$T/p.json" -o "$T/p.json"
refused "$O" export megatron-args "$T/p.json" -o "$T/m.json"
refused "$O" sim "$T/p.json" --timeline-out "$T/p.json"
refused "$O" sim "$T/p.json" --trace-out "$T/c.json"
refused "$O" run "$T/p.json" --timeline-out "$T/m.json"
refused "$O" run "$T/p.json" --events-out "$T/p.json"
refused "$O" plan --model "$T/m.json" --cluster "$T/c.json" --schedule 1f1b --microbatches 8 -o "$T/m.json"
refused "$O" tune --model "$T/m.json" --cluster "$T/c.json" --microbatches 8 -o "$T/c.json"

# an output that is no input is still written
run "$O" export svg "$T/p.json" -o "$T/p.svg"
expect_rc 0 "an output beside the inputs is written"
run "$O" plan --model "$T/m.json" --cluster "$T/c.json" --schedule gpipe --microbatches 8 -o "$T/p2.json"
expect_rc 0 "and plan -o a new file works"
run "$O" plan --model "$T/m.json" --cluster "$T/c.json" --schedule gpipe --microbatches 8 -o "$T/p2.json"
expect_rc 0 "as does replacing an earlier output that is not read"

# standard output holds one document: two of them ("-" for two outputs, or one with --json)
# parse as neither, so that is refused; one "-" output gets stdout to itself (no summary)
for args in "sim --json --timeline-out -" "sim --timeline-out - --trace-out -" "sim --gantt --trace-out -" \
            "run --json --events-out -" "run --events-out - --timeline-out -" "run --json --timeline-out -"; do
    # shellcheck disable=SC2086
    run "$O" $args "$T/p.json"
    if [ "$RC" = 2 ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" = 1 ] && [ -z "$OUT" ]; then ok "'$args': exit 2, one line ($ERR)"
    else not_ok "'$args': two documents on stdout are refused" "exit $RC" "$ERR"; fi
done
for args in "sim --timeline-out -" "sim --trace-out -" "run --timeline-out -"; do
    # shellcheck disable=SC2086
    run "$O" $args "$T/p.json"
    if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | python3 -c 'import json, sys; json.load(sys.stdin)'; then ok "'$args': stdout is the JSON alone"
    else not_ok "'$args': stdout is the JSON alone" "exit $RC" "$(printf '%s\n' "$OUT" | head -3)"; fi
done

# a command that reads hundreds of files still guards every one of them (the guard kept
# the first 256 and let report -o replace the model of the 300th plan)
mkdir "$T/many"
cp "$top_srcdir/tests/data/tiny-cluster.json" "$T/many/"
i=1
while [ $i -le 300 ]; do
    cp "$top_srcdir/tests/data/tiny-model.json" "$T/many/m$i.json"
    sed "s/tiny-model.json/m$i.json/" "$top_srcdir/tests/data/tiny-plan.json" > "$T/many/p$i.json"
    i=$((i + 1))
done
cp "$T/many/m300.json" "$T/many/keep.json"
# shellcheck disable=SC2046
run "$OCTOPIPE" report $(i=1; while [ $i -le 300 ]; do echo "$T/many/p$i.json"; i=$((i + 1)); done) -o "$T/many/m300.json"
if [ "$RC" = 2 ] && cmp -s "$T/many/m300.json" "$T/many/keep.json"; then
    ok "report over 300 plans will not replace the 300th plan's model ($ERR)"
else not_ok "report over 300 plans will not replace the 300th plan's model" "exit $RC" "$ERR"; fi

# a command with several outputs replaces them together once it succeeded, or none: a
# later output that fails (a full disk, an output that is an input) leaves the earlier
# ones as they were
unchanged() {  # unchanged FILE CONTENT DESCRIPTION
    if [ "$RC" != 0 ] && [ "$(cat "$1")" = "$2" ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" = 1 ] &&
       [ -z "$(ls -A "$T/multi" | grep tmp)" ]; then ok "$3"
    else not_ok "$3" "exit $RC" "$ERR" "$(head -c 200 "$1")"; fi
}
mkdir -p "$T/multi/tt"
echo USER >"$T/multi/a.json"
run "$O" sim "$T/p.json" --timeline-out "$T/multi/a.json" --trace-out /dev/full
unchanged "$T/multi/a.json" USER "sim: the timeline is not written when the trace cannot be"
run "$O" tune --model "$T/m.json" --cluster "$T/c.json" --microbatches 8 --evals 30 -o "$T/multi/a.json" --steps-out /dev/full
unchanged "$T/multi/a.json" USER "tune: the plan is not written when the steps cannot be"
echo "USER DATA" >"$T/multi/tt/schedule.csv"
# a plan torchtitan runs (FSDP over 2 replicas: without it, it would train in fp32)
"$O" plan --model "$T/m.json" --cluster "$T/c.json" --schedule 1f1b --microbatches 8 --dp 2 --zero 2 \
    -o "$T/tt.json" >/dev/null
ln -s ../../tt.json "$T/multi/tt/job.toml"
run "$O" export torchtitan "$T/tt.json" -o "$T/multi/tt"
unchanged "$T/multi/tt/schedule.csv" "USER DATA" "export torchtitan: schedule.csv stays when job.toml is refused"
if [ "$RC" = 2 ]; then ok "(exit 2: job.toml is the plan)"; else not_ok "exit 2" "exit $RC"; fi
cmp -s "$T/p.json" "$T/p0.json" && ok "and the plan is intact" || not_ok "the plan changed"
run "$O" sim "$T/p.json" --timeline-out "$T/multi/a.json" --trace-out "$T/multi/b.json"
if [ "$RC" = 0 ] && grep -q '"octopipe.timeline/1"' "$T/multi/a.json" && grep -q traceEvents "$T/multi/b.json"; then
    ok "both outputs written when both can be"
else not_ok "both outputs" "exit $RC" "$ERR"; fi
run "$O" plan --model "$T/m.json" --cluster "$T/c.json" --schedule 1f1b --microbatches 8 -o "$T/multi/q.json"
if [ "$RC" = 0 ] && [ -s "$T/multi/q.json" ] && [ -z "$(ls -A "$T/multi" | grep tmp)" ]; then ok "a single output is written, no temporary left"
else not_ok "plan -o" "exit $RC" "$ERR"; fi

done_testing
