#!/bin/sh
# Hardening regressions (issue 16): option errors are one line naming the option, text from
# arguments and files never reaches the terminal raw, every write is checked (stdout, -o,
# --timeline-out, --events-out), outputs never replace a FIFO, a device or a symbolic
# link, and numbers that are not numbers (NaN) are refused.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
T="$TMPDIR_TEST"
data="$top_srcdir/tests/data"
plan="$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
mkplan() { "$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 "$@"; }
lines() { printf '%s\n' "$1" | grep -c .; }

# ---- option errors: one line, naming the option and what is wrong
for args in "sim --trace-out" "sim --bogus $plan" "sim --json=1 $plan" "plan -o" "run --timeout" \
            "plan --m x" "sim -x $plan" "tune --model"; do
    # shellcheck disable=SC2086
    run "$OCTOPIPE" $args
    if [ "$RC" = 2 ] && [ "$(lines "$ERR")" = 1 ] && ! printf '%s' "$ERR" | grep -q "^octopipe: "; then
        ok "'$args': exit 2 with one line ($ERR)"
    else
        not_ok "'$args': exit 2 with one line" "exit $RC" "$ERR"
    fi
done
run "$OCTOPIPE" sim --trace-out
expect_match "option '--trace-out' needs a value" "$ERR" "a missing value names the option, not 'unknown option'"
run "$OCTOPIPE" sim --json=1 "$plan"
expect_match "option '--json' takes no value" "$ERR" "a value given to a flag is named as such"
run "$OCTOPIPE" plan --m x
expect_match "option '--m' is ambiguous" "$ERR" "an ambiguous prefix is named as such"
run "$OCTOPIPE" sim --frobnicate "$plan"
expect_match "unknown option '--frobnicate'" "$ERR" "an unknown option is named"
run mkplan -o ""
expect_rc 2 "-o '' is refused"
expect_match "needs a value, not an empty string" "$ERR" "-o '' says why"
run "$OCTOPIPE" sim "$plan" --timeline-out=
expect_rc 2 "--timeline-out= is refused"
run "$OCTOPIPE" tui --render 80x24 --keys "" "$plan"
expect_rc 0 "--keys '' (no keys) is still accepted"

# ---- an option's value never swallows the next option: `report --steps -o out.html` read
# "-o" as the steps file, `sim --timeline-out --json` wrote a file named --json (exit 0)
steps="$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-tuned.steps"
run "$OCTOPIPE" report "$plan" --steps -o "$T/swallow.html"
expect_rc 2 "report --steps -o FILE: exit 2"
expect_match "^octopipe report: option '--steps' needs a value, not the option '-o'; --steps=VALUE gives a value that starts with '-' \(see 'octopipe report --help'\)\$" \
    "$ERR" "naming the option that lacks its value: $ERR"
if [ -e "$T/swallow.html" ]; then not_ok "and writes nothing"; else ok "and writes nothing"; fi
run sh -c 'cd "$1" && exec "$2" sim "$3" --timeline-out --json' sh "$T" "$OCTOPIPE" "$plan"
expect_rc 2 "sim --timeline-out --json: exit 2"
expect_match "option '--timeline-out' needs a value, not the option '--json'" "$ERR" "--json is not the timeline file: $ERR"
if [ -e "$T/--json" ]; then not_ok "no file named --json"; else ok "no file named --json"; fi
for args in "export torch-csv $plan -o --json" "edit $plan --adopt --reorder -o $T/e.json" \
            "tune --model gpt-13b --cluster -o $T/t.json" "plan --model gpt-13b --cluster 4xH200 --schedule -x"; do
    # shellcheck disable=SC2086
    run sh -c 'cd "$1" && shift && exec "$@"' sh "$T" "$OCTOPIPE" $args   # in $T: where a swallowed -o --json wrote
    if [ "$RC" = 2 ] && [ "$(lines "$ERR")" = 1 ] && printf '%s' "$ERR" | grep -q "needs a value, not the option '-"; then
        ok "'$args': exit 2, the option needs a value ($ERR)"
    else
        not_ok "'$args': exit 2, the option needs a value" "exit $RC" "$ERR"
    fi
done
# numbers, "-" and a value joined to its option are values, judged by the option's own check
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --seed -inf
expect_match "^octopipe tune: --seed: '-inf' is not an integer" "$ERR" "--seed -inf reaches --seed's check: $ERR"
run "$OCTOPIPE" sim "$plan" --timeline-out -
expect_rc 0 "--timeline-out - is standard output"
run sh -c 'cd "$1" && exec "$2" sim "$3" --timeline-out=-t.json' sh "$T" "$OCTOPIPE" "$plan"
if [ "$RC" = 0 ] && [ -s "$T/-t.json" ]; then ok "--timeline-out=-t.json is a file that starts with '-'"
else not_ok "--timeline-out=-t.json is a file that starts with '-'" "exit $RC" "$ERR"; fi

# ---- numbers that are not numbers
for v in nan NaN inf -1 0 1e400 12abc; do
    run "$OCTOPIPE" run --timeout "$v" "$plan"
    expect_rc 2 "run --timeout $v is refused"
done
run "$OCTOPIPE" run --timeout nan "$plan"
expect_match "--timeout: 'nan' is not a number in \(0, 86400\]" "$ERR" "run --timeout nan says why"
run "$OCTOPIPE" tui --time-scale nan "$plan"
expect_rc 2 "tui --time-scale nan is refused"
# a Run launcher longer than the UI keeps was cut at 511 bytes: 'env PAD=... nice' ran 'ni'
long="env PAD=$(printf '%0500d' 0) nice"
run "$OCTOPIPE" tui --render 80x24 --launcher "$long" "$plan"
if [ "$RC" = 2 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && printf '%s' "$ERR" | grep -q -- '--launcher: longer than'; then
    ok "tui --launcher of 513 bytes is refused in one line"
else not_ok "tui --launcher of 513 bytes is refused in one line" "exit $RC" "$ERR"; fi
run env OCTOPIPE_LAUNCHER="$long" "$OCTOPIPE" tui --render 80x24 "$plan"
if [ "$RC" = 2 ] && printf '%s' "$ERR" | grep -q 'OCTOPIPE_LAUNCHER: longer than'; then ok "and so is \$OCTOPIPE_LAUNCHER"
else not_ok "and so is \$OCTOPIPE_LAUNCHER" "exit $RC" "$ERR"; fi
run "$OCTOPIPE" tui --render 80x24 --launcher "env PAD=$(printf '%0498d' 0) nice" "$plan"
expect_rc 0 "a launcher of 511 bytes is kept"
run "$OCTOPIPE" tune --model gpt-13b --cluster 4xH200 --microbatches 8 --time-budget nan -o "$T/t.json"
expect_rc 2 "tune --time-budget nan is refused"
run "$OCTOPIPE" run --kill-device 1.5 "$plan"
expect_rc 2 "run --kill-device 1.5 is refused"

# ---- control characters from arguments and files are escaped
esc=$(printf '\033')
run "$OCTOPIPE" check "$T/${esc}]0;pwned${esc}\\x.json"
if [ "$RC" = 2 ] && ! printf '%s' "$ERR" | grep -q "$esc" && printf '%s' "$ERR" | grep -q 'x1b\]0;pwned'; then
    ok "an escape sequence in a file name is printed escaped"
else
    not_ok "an escape sequence in a file name is printed escaped" "exit $RC" "$(printf '%s' "$ERR" | od -c | head -3)"
fi
run "$OCTOPIPE" "$(printf 'bad\033[2Jcmd')"
if [ "$RC" = 2 ] && ! printf '%s' "$ERR" | grep -q "$esc"; then ok "an escape sequence in a command name is escaped"
else not_ok "an escape sequence in a command name is escaped" "$ERR"; fi
run "$OCTOPIPE" sim --bogus"$(printf '\033[31m')" "$plan"
if [ "$RC" = 2 ] && ! printf '%s' "$ERR" | grep -q "$esc"; then ok "an escape sequence in an option is escaped"
else not_ok "an escape sequence in an option is escaped" "$ERR"; fi
sed 's/"name": "tiny"/"name": "ti\\u001b[2Jny"/' "$data/tiny-model.json" > "$T/esc-model.json"
run "$OCTOPIPE" check "$T/esc-model.json"
expect_rc 2 "a control character in a model name is refused"
expect_match 'name: must not contain control characters' "$ERR" "the refusal names the field"
# a right-to-left override prints the name as other text (a fidelity point id did)
for cp in 202e 2066 200f 061c; do
    sed "s/\"name\": \"tiny\"/\"name\": \"ti\\\\u${cp}ny\"/" "$data/tiny-model.json" > "$T/bidi-model.json"
    run "$OCTOPIPE" check "$T/bidi-model.json"
    expect_rc 2 "a U+$cp in a model name is refused"
    expect_match "name: must not contain bidirectional formatting characters \\(U\\+$(printf '%s' "$cp" | tr a-f A-F | sed 's/^/0*/')\\)" "$ERR" "naming it: $ERR"
done
# ... and a file name holding one is printed escaped in the message about it
bidi_file="$T/$(printf 'id\342\200\256nosj.txt')"
printf '{}' > "$bidi_file"
run "$OCTOPIPE" check "$bidi_file"
expect_rc 2 "a file of no format is refused"
if printf '%s' "$ERR" | grep -q 'id\\u202enosj\.txt' && ! printf '%s' "$ERR" | grep -q "$(printf '\342\200\256')"; then
    ok "a U+202E in a file name prints as \\u202e"
else not_ok "a U+202E in a file name prints as \\u202e" "$ERR"; fi

# ---- every write to stdout is checked
if [ -w /dev/full ]; then
    for args in "show gpt-13b" "show --json gpt-13b" "sim --json $plan" "sim $plan" "export torch-csv $plan" \
                "export megatron-layout $plan" "check $plan"; do
        # shellcheck disable=SC2086
        run sh -c "exec \"\$0\" $args >/dev/full" "$OCTOPIPE"
        if [ "$RC" = 1 ] && [ "$(lines "$ERR")" = 1 ] && printf '%s' "$ERR" | grep -q 'No space left on device'; then
            ok "'$args' to a full disk: exit 1, one line"
        else
            not_ok "'$args' to a full disk: exit 1, one line" "exit $RC" "$ERR"
        fi
    done
    # a document longer than stdio's buffer goes out in one write that fails, leaving the
    # final flush nothing to fail with: the reason must still be said (calibrate -o -, plan
    # -o -, edit -o -, the timelines and the report said "write error")
    "$OCTOPIPE" run --timeline-out "$T/measured.json" "$plan" >/dev/null
    "$OCTOPIPE" export torch-csv "$plan" -o "$T/sched.csv"
    for args in "calibrate -o - $T/measured.json" "calibrate --json -o $T/fit.json $T/measured.json" \
                "plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 -o -" \
                "edit $plan --boundary 0:+1 -o -" "sim --timeline-out - $plan" "sim --json $plan" \
                "run --timeline-out - $plan" "run --json $plan" "report $plan -o -" "export svg $plan -o -" \
                "export megatron-args $plan" "cost nemotronh-8b --cluster 8xH200 -o -" \
                "import torch-csv $T/sched.csv --model gpt-13b --cluster 4xH200 -o -" \
                "tune --model $data/tiny-model.json --cluster $data/tiny-cluster.json --microbatches 4 --evals 20 -o -"; do
        # shellcheck disable=SC2086
        run sh -c "exec \"\$0\" $args >/dev/full" "$OCTOPIPE"
        if [ "$RC" = 1 ] && printf '%s\n' "$ERR" | tail -n 1 | grep -q '^octopipe: cannot write to standard output: No space left on device$'; then
            ok "'$args' to a full disk: exit 1, saying why"
        else
            not_ok "'$args' to a full disk: exit 1, saying why" "exit $RC" "$ERR"
        fi
    done
    run sh -c 'exec "$0" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 -o - >/dev/full' "$OCTOPIPE"
    expect_rc 1 "plan -o - to a full disk exits 1"
    run "$OCTOPIPE" run --events-out /dev/full "$plan"
    expect_rc 1 "run --events-out to a full disk exits 1"
    expect_match "cannot write the events to '/dev/full': No space left on device" "$ERR" "run --events-out says why"
    run "$OCTOPIPE" sim "$plan" --timeline-out /dev/full
    expect_rc 1 "sim --timeline-out to a full disk exits 1"
    run mkplan -o /dev/full
    expect_rc 1 "plan -o /dev/full exits 1"
    if [ -c /dev/full ]; then ok "/dev/full is still a device"; else not_ok "/dev/full is still a device"; fi
else
    skip "writes to a full disk" "no /dev/full"
fi

# ---- a file-size limit (ulimit -f) is a full disk: exit 1 and one line, not death by SIGXFSZ
# with a temporary file left behind
mkdir "$T/fsize"
run sh -c 'ulimit -f 1; exec "$0" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 64 -o "$1/p.json"' "$OCTOPIPE" "$T/fsize"
if [ "$RC" = 1 ] && [ "$(lines "$ERR")" = 1 ] && printf '%s' "$ERR" | grep -q 'p.json: cannot write: File too large'; then
    ok "plan -o past the file-size limit: exit 1, one line ($ERR)"
else
    not_ok "plan -o past the file-size limit: exit 1, one line" "exit $RC" "$ERR"
fi
if [ -z "$(ls -A "$T/fsize")" ]; then ok "and no temporary file is left behind"
else not_ok "and no temporary file is left behind" "$(ls -A "$T/fsize")"; fi
run sh -c 'ulimit -f 1; exec "$0" sim --json "$1" > "$2/s.json"' "$OCTOPIPE" "$plan" "$T/fsize"
if [ "$RC" = 1 ] && [ "$(lines "$ERR")" = 1 ] && printf '%s' "$ERR" | grep -q 'File too large'; then
    ok "sim --json to stdout past the file-size limit: exit 1, one line ($ERR)"
else
    not_ok "sim --json to stdout past the file-size limit: exit 1, one line" "exit $RC" "$ERR"
fi

# ---- two outputs of one command never name one file (the second replaced the first, exit 0)
mkdir "$T/two"
ln -s same.json "$T/two/link.json"
for args in "sim $plan --timeline-out $T/two/same.json --trace-out $T/two/same.json" \
            "sim $plan --timeline-out $T/two/same.json --trace-out $T/two/link.json" \
            "sim $plan --timeline-out $T/two/same.json --trace-out $T/two/../two/same.json" \
            "run $plan --events-out $T/two/same.json --timeline-out $T/two/same.json" \
            "tune --model gpt-13b --cluster 4xH200 --microbatches 8 --evals 5 -o $T/two/same.json --steps-out $T/two/same.json"; do
    # shellcheck disable=SC2086
    run "$OCTOPIPE" $args
    if [ "$RC" = 2 ] && [ "$(lines "$ERR")" = 1 ] && printf '%s' "$ERR" | grep -q "the same file" && [ ! -e "$T/two/same.json" ]; then
        ok "'${args%% *}' with two outputs in one file: exit 2, one line, nothing written ($ERR)"
    else
        not_ok "'$args': two outputs in one file are refused" "exit $RC" "$ERR" "$(ls "$T/two")"
    fi
done
"$OCTOPIPE" run "$data/tiny-plan.json" --timeline-out "$T/two/run.json" >/dev/null 2>&1
run "$OCTOPIPE" calibrate "$T/two/run.json" --fit-overhead -o "$T/two/same.json" --cluster-out "$T/two/same.json"
if [ "$RC" = 2 ] && [ "$(lines "$ERR")" = 1 ] && [ -z "$OUT" ] && [ ! -e "$T/two/same.json" ]; then
    ok "calibrate -o and --cluster-out in one file: exit 2, one line ($ERR)"
else not_ok "calibrate -o and --cluster-out in one file are refused" "exit $RC" "$OUT" "$ERR"; fi
for args in "calibrate $T/two/run.json -o - --json" "cost llama2-7b --cluster 8xH200 -o - --json"; do
    # shellcheck disable=SC2086
    run "$OCTOPIPE" $args
    if [ "$RC" = 2 ] && [ -z "$OUT" ] && printf '%s' "$ERR" | grep -q "would both write to standard output"; then
        ok "'${args%% *} -o - --json': one document on stdout, not two (or one ignored)"
    else not_ok "'$args' is refused" "exit $RC" "$(printf '%s' "$OUT" | head -3)" "$ERR"; fi
done
run "$OCTOPIPE" sim "$plan" --timeline-out "$T/two/a.json" --trace-out "$T/two/b.json"
expect_rc 0 "two outputs in two files are fine"

# ---- an output that will not be written is refused before anything is printed: no
# summary or --json document on stdout with exit 2 (a script would read it as a result)
mkdir "$T/early"
cp "$data/tiny-model.json" "$data/tiny-cluster.json" "$data/tiny-plan.json" "$T/early/"
"$OCTOPIPE" run "$T/early/tiny-plan.json" --timeline-out "$T/early/run.json" >/dev/null 2>&1
for args in "sim $T/early/tiny-plan.json --timeline-out $T/early/tiny-model.json" \
            "sim --json $T/early/tiny-plan.json --trace-out $T/early/tiny-cluster.json" \
            "sim --json $T/early/tiny-plan.json --timeline-out $T/early" \
            "calibrate $T/early/run.json -o $T/early/tiny-model.json" \
            "calibrate $T/early/run.json --json -o $T/early"; do
    # shellcheck disable=SC2086
    run "$OCTOPIPE" $args
    if [ "$RC" != 0 ] && [ -z "$OUT" ] && [ "$(lines "$ERR")" = 1 ]; then
        ok "'${args%% *}' to an output it will not write: exit $RC, one line, nothing on stdout ($ERR)"
    else not_ok "'$args': refused before printing" "exit $RC" "stdout: $(printf '%s' "$OUT" | head -2)" "$ERR"; fi
done
if cmp -s "$data/tiny-model.json" "$T/early/tiny-model.json"; then ok "the model is untouched"; else not_ok "the model is untouched"; fi

# ---- outputs never replace what is not a regular file
run mkplan -o /dev/null
expect_rc 0 "plan -o /dev/null writes through"
if [ -c /dev/null ]; then ok "/dev/null is still a device"; else not_ok "/dev/null is still a device"; fi
# to_reader CMD...: runs CMD (whose output is the FIFO) once its background reader has opened
# the FIFO: the reader's open may come late on a loaded machine, and a FIFO nobody reads
# yet is refused at once (exit 1, checked above), so that refusal alone is tried again
to_reader() {
    n=100
    while :; do
        run "$@"
        [ "$RC" = 1 ] && [ $n -gt 0 ] && printf '%s' "$ERR" | grep -q 'a FIFO that no process is reading' || return 0
        sleep 0.1; n=$((n - 1))
    done
}
if command -v mkfifo >/dev/null 2>&1 && mkfifo "$T/fifo"; then
    run mkplan -o "$T/fifo"
    expect_rc 1 "a FIFO nobody reads is refused, not waited on"
    expect_match "a FIFO that no process is reading" "$ERR" "the refusal says why"
    cat "$T/fifo" > "$T/fifo.out" &
    reader=$!
    to_reader mkplan -o "$T/fifo"
    expect_rc 0 "plan -o FIFO writes through to its reader"
    wait "$reader"
    expect_match '"format": "octopipe.plan/1"' "$(cat "$T/fifo.out")" "the reader got the plan"
    if [ -p "$T/fifo" ]; then ok "the FIFO is still a FIFO"; else not_ok "the FIFO is still a FIFO"; fi
    cat "$T/fifo" > "$T/fifo.tl" &
    reader=$!
    to_reader "$OCTOPIPE" sim "$plan" --timeline-out "$T/fifo"
    wait "$reader"
    expect_rc 0 "sim --timeline-out FIFO writes through"
    expect_match '"format": "octopipe.timeline/1"' "$(cat "$T/fifo.tl")" "the reader got the timeline"
    cat "$T/fifo" > "$T/fifo.ev" &
    reader=$!
    to_reader "$OCTOPIPE" run --events-out "$T/fifo" "$plan"
    wait "$reader"
    expect_rc 0 "run --events-out FIFO streams to its reader"
    expect_match '"ev":"done"' "$(cat "$T/fifo.ev")" "the reader got the whole stream"
    if [ -p "$T/fifo" ]; then ok "the FIFO is still a FIFO after the run"; else not_ok "the FIFO is still a FIFO after the run"; fi
    # an input FIFO nobody writes hung the command in its open: now an error at once
    rm -f "$T/fifo"; mkfifo "$T/fifo"
    run timeout 20 "$OCTOPIPE" check "$T/fifo"
    expect_rc 2 "check of a FIFO nobody writes: exit 2, not a hang"
    expect_match 'fifo: a FIFO with no writer: nothing to read' "$ERR" "saying so"
    OUT=$(cat "$data/tiny-model.json" | timeout 20 "$OCTOPIPE" show /dev/stdin 2>&1); RC=$?
    expect_rc 0 "a pipe being written is read whole (show /dev/stdin)"
else
    skip "FIFO outputs" "no mkfifo"
fi
mkdir "$T/dir"
run mkplan -o "$T/dir"
expect_rc 1 "-o naming a directory is refused"
expect_match "is a directory" "$ERR" "the refusal says why"
mkdir "$T/real"
ln -s real/target.json "$T/link.json"
run mkplan -o "$T/link.json"
expect_rc 0 "-o through a symbolic link"
if [ -L "$T/link.json" ] && [ -f "$T/real/target.json" ]; then ok "the link stays a link and its target holds the plan"
else not_ok "the link stays a link and its target holds the plan" "$(ls -l "$T" "$T/real")"; fi
run "$OCTOPIPE" check "$T/link.json"
expect_rc 0 "the plan saved through the link loads"
printf 'old' > "$T/mode.json"
chmod 600 "$T/mode.json"
run mkplan -o "$T/mode.json"
if [ "$(ls -l "$T/mode.json" | cut -c1-10)" = "-rw-------" ]; then ok "a replaced file keeps its permissions"
else not_ok "a replaced file keeps its permissions" "$(ls -l "$T/mode.json")"; fi

# ---- files the user may not read or write (as root these pass by permission: CI runs
# this file again as a non-root user)
if [ "$(id -u)" != 0 ]; then
    mkdir "$T/ro"
    mkplan -o "$T/ro/kept.json" >/dev/null
    chmod 444 "$T/ro/kept.json"
    before=$(cat "$T/ro/kept.json")
    run "$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule zb-h1 --microbatches 8 -o "$T/ro/kept.json"
    expect_rc 1 "a read-only file is not replaced"
    expect_match "kept.json: cannot write: Permission denied" "$ERR" "and says why"
    if [ "$(cat "$T/ro/kept.json")" = "$before" ]; then ok "the read-only file is unchanged"
    else not_ok "the read-only file is unchanged"; fi
    chmod 555 "$T/ro"
    run mkplan -o "$T/ro/new.json"
    expect_rc 1 "an unwritable directory: exit 1"
    expect_match "new.json: cannot create a temporary file in '.*/ro': Permission denied" "$ERR" "naming the directory"
    if [ -z "$(ls "$T/ro" | grep -v kept.json)" ]; then ok "nothing is left in the directory"
    else not_ok "nothing is left in the directory" "$(ls "$T/ro")"; fi
    chmod 755 "$T/ro"
    cp "$data/tiny-model.json" "$T/secret.json"
    chmod 000 "$T/secret.json"
    run "$OCTOPIPE" check "$T/secret.json"
    expect_rc 2 "an unreadable file: exit 2"
    expect_match "secret.json: cannot open: Permission denied" "$ERR" "saying why"
    run "$OCTOPIPE" sim "$plan" --timeline-out "$T/ro"
    expect_rc 1 "--timeline-out naming a directory: exit 1"
else
    skip "read-only and unreadable files" "running as root (CI runs this again as a non-root user)"
fi

# ---- check simulates plans: a deadlock or a device out of memory is exit 3 with sim's line
for f in deadlock-plan oom-plan; do
    run "$OCTOPIPE" sim "$data/$f.json"
    simline=$ERR
    run "$OCTOPIPE" check "$data/$f.json"
    expect_rc 3 "check $f.json exits 3"
    if [ "$ERR" = "$simline" ] && [ -z "$OUT" ]; then ok "check $f.json prints sim's line and no 'ok'"
    else not_ok "check $f.json prints sim's line and no 'ok'" "check: $OUT / $ERR" "sim: $simline"; fi
    run "$OCTOPIPE" check --structure-only "$data/$f.json"
    expect_rc 0 "check --structure-only $f.json checks the structure alone"
done
# ---- export of a plan that cannot run: refused, exit 3 with sim's line, nothing written
# (torch-csv, megatron-args and torchtitan of either plan, and svg of the out-of-memory one,
# were written with exit 0); --force exports the out-of-memory one, never the deadlock
for f in deadlock-plan oom-plan; do
    run "$OCTOPIPE" sim "$data/$f.json"
    simline=$ERR
    [ "$f" = oom-plan ] && simline="$simline (--force exports it anyway)"
    for fmt in torch-csv megatron-args svg; do
        rm -rf "$T/x.out"
        run "$OCTOPIPE" export $fmt "$data/$f.json" -o "$T/x.out"
        if [ "$RC" = 3 ] && [ "$ERR" = "$simline" ] && [ -z "$OUT" ] && [ ! -e "$T/x.out" ]; then
            ok "export $fmt $f.json: exit 3, sim's line, nothing written"
        else
            not_ok "export $fmt $f.json: exit 3, sim's line, nothing written" "exit $RC" "stderr: $ERR" "want: $simline" \
                "$(ls -d "$T/x.out" 2>/dev/null)"
        fi
    done
    run "$OCTOPIPE" export megatron-layout "$data/$f.json"
    expect_rc 2 "export megatron-layout $f.json: the format's own refusal (a hybrid model) comes first"
    # torchtitan's too: the tiny model's Mamba layer, which torchtitan has no model of (an
    # out-of-memory plan it runs is exit 3: tests/torchtitan.sh)
    rm -rf "$T/x.out"
    run "$OCTOPIPE" export torchtitan "$data/$f.json" -o "$T/x.out"
    if [ "$RC" = 2 ] && printf '%s\n' "$ERR" | grep -q "torchtitan has no Mamba layer" && [ ! -e "$T/x.out" ]; then
        ok "export torchtitan $f.json: the format's own refusal (a Mamba layer) comes first"
    else not_ok "export torchtitan $f.json: the format's refusal first" "exit $RC" "$ERR"; fi
done
for fmt in torch-csv svg; do
    rm -f "$T/x.out"
    run "$OCTOPIPE" export $fmt "$data/oom-plan.json" --force -o "$T/x.out"
    if [ "$RC" = 0 ] && [ -s "$T/x.out" ]; then ok "export $fmt --force exports the out-of-memory plan"
    else not_ok "export $fmt --force exports the out-of-memory plan" "exit $RC" "$ERR"; fi
    run "$OCTOPIPE" export $fmt "$data/deadlock-plan.json" --force -o "$T/y.out"
    if [ "$RC" = 3 ] && [ ! -e "$T/y.out" ]; then ok "export $fmt --force still refuses the deadlock"
    else not_ok "export $fmt --force still refuses the deadlock" "exit $RC" "$ERR"; fi
done
run "$OCTOPIPE" check --json "$data/tiny-plan.json" "$data/oom-plan.json"
expect_rc 3 "check --json exits 3 on an infeasible plan"
expect_match '"infeasible": true' "$OUT" "check --json marks it infeasible"
run "$OCTOPIPE" check "$data/oom-plan.json" "$data/bad/01-empty.json"
expect_rc 2 "a bad file outranks an infeasible plan"

# ---- options that would be silently ignored or impossible are refused
for sched in 1f1b interleaved zb-h1 zb-v dualpipev; do
    run "$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule $sched --microbatches 8 --placement 0,1,2,3 -o "$T/p.json"
    expect_rc 2 "--placement with $sched (which places its stages itself) is refused, even when it matches"
done
expect_match "--placement only works with --schedule adaptive \(dualpipev places its stages itself\)" "$ERR" "and says why"
run "$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule adaptive --microbatches 8 --placement 3,2,1,0 -o "$T/p.json"
expect_rc 0 "--placement with adaptive is used"
cfg="$top_srcdir/samples/profiles/configs"
run "$OCTOPIPE" cost "$cfg/deepseek-16b.json" --cluster 8xH200 --tp 1024 -o "$T/c.json"
expect_rc 2 "--tp above the attention head count is refused"
expect_match "cost: --tp 1024: a tensor-parallel group stays on one node" "$ERR" "beyond a node: says why"
run "$OCTOPIPE" cost "$cfg/gpt-13b.json" --cluster 64xH200 --tp 16 -o "$T/c.json"
expect_rc 2 "--tp 16 beyond an 8-GPU node is refused"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["gpus_per_node"]=2048; c["devices"]=2048; json.dump(c,open(sys.argv[2],"w"))' \
    "$top_srcdir/samples/clusters/8xH200.json" "$T/widenode.json"
run "$OCTOPIPE" cost "$cfg/deepseek-16b.json" --cluster "$T/widenode.json" --tp 1024 -o "$T/c.json"
expect_rc 2 "--tp 1024 on a 16-head model is refused"
expect_match "--tp 1024: layer 1 \(attn\+dense\) has 16 attention heads, which 1024 tensor-parallel ranks cannot split evenly" "$ERR" "naming the layer and its heads"
run "$OCTOPIPE" cost "$cfg/gpt-13b.json" --cluster "$T/widenode.json" --tp 16 -o "$T/c.json"
expect_rc 2 "--tp 16 does not divide gpt-13b's 40 heads: refused"
run "$OCTOPIPE" cost "$cfg/gpt-13b.json" --cluster 8xH200 --predict "$top_srcdir/samples/profiles/gpt-13b.json" \
    --calibrate "$top_srcdir/samples/profiles/gpt-13b.json"
expect_rc 2 "--predict and --calibrate together are refused (one predicted silently before)"
run "$OCTOPIPE" cost "$cfg/nemotron-nano-v2-9b.json" --cluster 8xH200 --tp 8 -o "$T/c.json"
expect_rc 0 "--tp 8 splits nemotron's heads evenly"

# ---- memory: linear in devices, and a host allocation failure is named as such
python3 - "$T" <<'PY'
import json, sys
t = sys.argv[1]
for name, n in (("huge", 65536), ("big", 4096)):
    json.dump({"format": "octopipe.cluster/1", "name": name, "gpu": "H200", "devices": n, "gpus_per_node": 8,
               "mem_bytes": 141000000000, "intra_node": {"gbytes_per_s": 450, "latency_us": 5},
               "inter_node": {"gbytes_per_s": 50, "latency_us": 10}}, open(f"{t}/{name}-cluster.json", "w"))
    layer = {"kind": "attn", "f_ms": 1, "b_ms": 1, "w_ms": 1, "param_bytes": 1000, "act_bytes": 1000,
             "act_w_bytes": 10, "out_bytes": 100}
    json.dump({"format": "octopipe.model/1", "name": name, "seq_len": 1024, "layers": [layer] * n},
              open(f"{t}/{name}-model.json", "w"))
PY
# a sanitizer build reserves terabytes of address space and cannot run under ulimit -v
if (ulimit -v 1500000 && "$OCTOPIPE" --version) >/dev/null 2>&1; then
    run sh -c 'ulimit -v 1500000; exec "$0" plan --model "$1/huge-model.json" --cluster "$1/huge-cluster.json" --schedule 1f1b --microbatches 2 -o "$1/huge-plan.json"' "$OCTOPIPE" "$T"
    expect_rc 0 "a 65 536-device plan is made and simulated in 1.5 GB (a device x device table needed 32 GiB)"
    run sh -c 'ulimit -v 1500000; exec "$0" check "$1/huge-plan.json"' "$OCTOPIPE" "$T"
    expect_rc 0 "and check simulates it in 1.5 GB"
    run sh -c 'ulimit -v 300000; exec "$0" plan --model "$1/big-model.json" --cluster "$1/big-cluster.json" --schedule 1f1b --microbatches 2048 -o "$1/big-plan.json"' "$OCTOPIPE" "$T"
    expect_rc 1 "plan: host memory running out is exit 1"
    expect_match "out of host memory" "$ERR" "plan says 'out of host memory', not 'internal error'"
    if printf '%s' "$ERR" | grep -q "internal error"; then not_ok "plan does not call it an internal error" "$ERR"
    else ok "plan does not call it an internal error"; fi
    run sh -c 'ulimit -v 300000; exec "$0" compare --model "$1/big-model.json" --cluster "$1/big-cluster.json" --microbatches 4096' "$OCTOPIPE" "$T"
    expect_rc 1 "compare: host memory running out is exit 1"
    expect_match "^octopipe compare: out of host memory" "$ERR" "compare says 'out of host memory'"
    if printf '%s' "$OUT" | grep -q "no: device"; then not_ok "compare does not blame the GPU memory" "$OUT"
    else ok "compare does not blame the GPU memory"; fi
else
    skip "memory limits (ulimit -v)" "this build cannot run under ulimit -v (sanitizers)"
fi

# file names that are not UTF-8: every JSON document stays valid JSON (U+FFFD for the
# bytes), and a plan refuses to refer to a file it could not name when read back
bad="$T/$(printf 'm\377.json')"
cp "$top_srcdir/samples/models/gpt-13b.json" "$bad"
if "$OCTOPIPE" check --json "$bad" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[0]["ok"] and "\ufffd" in d[0]["file"]' 2>/dev/null
then ok "check --json of a non-UTF-8 file name is valid JSON"; else not_ok "check --json of a non-UTF-8 file name is valid JSON"; fi
run "$OCTOPIPE" plan --model "$bad" --cluster 8xH200 --schedule 1f1b --microbatches 8 -o "$T/utf8-plan.json"
expect_rc 2 "plan referring to a non-UTF-8 file name"
expect_match "the model file 'm.xff.json' has a name that is not UTF-8, which a plan cannot refer to: rename it, or embed it \(--embed\)$" "$ERR" "says why: $ERR"
if [ ! -e "$T/utf8-plan.json" ]; then ok "and writes no plan"; else not_ok "and writes no plan"; fi
run "$OCTOPIPE" plan --model "$bad" --cluster 8xH200 --schedule 1f1b --microbatches 8 --embed -o "$T/utf8-plan.json"
expect_rc 0 "plan --embed of a model with a non-UTF-8 file name"
run "$OCTOPIPE" check "$T/utf8-plan.json"
expect_rc 0 "and that plan reads back"

# ---- no recursion as deep as the input (issue 28: the partition's branch and bound
# recursed once a stage, and tune crashed with SIGSEGV at ~43k stages on an 8 MB stack).
# The same depth on a 64 KB stack: 1024 stages, one a device, crashed before
python3 - "$T" <<'PY'
import json, sys
t, n = sys.argv[1], 1024
json.dump({"format": "octopipe.cluster/1", "name": "deep", "gpu": "H200", "devices": n, "gpus_per_node": 8,
           "mem_bytes": 141000000000, "intra_node": {"gbytes_per_s": 450, "latency_us": 5},
           "inter_node": {"gbytes_per_s": 50, "latency_us": 10}}, open(f"{t}/deep-cluster.json", "w"))
layer = {"kind": "attn", "f_ms": 1, "b_ms": 1, "w_ms": 1, "param_bytes": 1000, "act_bytes": 1000,
         "act_w_bytes": 10, "out_bytes": 100}
json.dump({"format": "octopipe.model/1", "name": "deep", "seq_len": 1024, "layers": [layer] * n},
          open(f"{t}/deep-model.json", "w"))
PY
if (ulimit -s 64 && ulimit -v 1500000 && "$OCTOPIPE" --version) >/dev/null 2>&1; then
    run sh -c 'ulimit -s 64; ulimit -v 1500000; exec "$0" tune --layout pp --model "$1/deep-model.json" --cluster "$1/deep-cluster.json" --microbatches 2 --evals 20 -o "$1/deep-plan.json"' "$OCTOPIPE" "$T"
    expect_rc 0 "tune of 1024 stages on a 64 KB stack finishes (it died by SIGSEGV in the branch and bound)"
    expect_match '^tuned: ' "$OUT" "and says what it found"
    # compare tunes too: its placement moves were all S x D of them and every S^2 / 2 swap,
    # each a copied state (445 s and 4.3 GB here before; now about 2 s and 70 MB)
    run sh -c 'ulimit -s 64; ulimit -v 1500000; exec timeout 60 "$0" compare --layout pp --model "$1/deep-model.json" --cluster "$1/deep-cluster.json" --microbatches 2' "$OCTOPIPE" "$T"
    expect_rc 0 "compare of 1024 stages finishes in a minute and 1.5 GB on a 64 KB stack"
    expect_match 'speedup of the tuned plan' "$OUT" "with the tuned plan"
else
    skip "a 64 KB stack (ulimit -s)" "this build cannot run under ulimit -s 64 / -v (sanitizers)"
fi

# ---- the budget at scale (issue 28: tune at 8192 GPUs and more ran for minutes past a 1 s
# budget, and --layout pp for minutes after its warning): an answer, or one line saying why
# the budget cannot hold (exit 2), never a crash, on a small stack and address space.
# Wall-clock time is measured by make bench (bench_budget), not here.
python3 - "$T" "$top_srcdir" <<'PY'
import json, sys
t, src = sys.argv[1], sys.argv[2]
for n in (16384, 65536):
    d = json.load(open(src + "/samples/models/llama2-7b.json"))
    L = d["layers"]
    d["layers"] = [L[0] if i == 0 else L[-1] if i == n - 1 else L[1 + (i - 1) % (len(L) - 2)] for i in range(n)]
    d["source"]["architecture"]["num_hidden_layers"] = n - 2
    json.dump(d, open(f"{t}/scale{n}-model.json", "w"))
    json.dump({"format": "octopipe.cluster/1", "name": f"{n}xH200", "gpu": "H200", "devices": n, "gpus_per_node": 8,
               "mem_bytes": 141000000000, "intra_node": {"gbytes_per_s": 450, "latency_us": 5},
               "inter_node": {"gbytes_per_s": 50, "latency_us": 10}}, open(f"{t}/scale{n}-cluster.json", "w"))
PY
# answer_or_refusal WHAT: exit 0 (or 3: nothing fits) with the answer, or exit 2 with one
# line naming --budget or the budget
answer_or_refusal() {
    if [ "$RC" = 2 ] && [ "$(lines "$ERR")" = 1 ] &&
       printf '%s' "$ERR" | grep -Eq -- '--budget [0-9.]+ s (cannot hold|ran out)|the budget ran out'; then
        ok "$1: refused up front ($ERR)"
    elif { [ "$RC" = 0 ] || [ "$RC" = 3 ]; } && ! printf '%s' "$ERR" | grep -q 'internal error'; then
        ok "$1: answered (exit $RC)"
    else
        not_ok "$1: an answer or one line saying why the budget cannot hold" "exit $RC" "$ERR"
    fi
}
if (ulimit -s 256 && ulimit -v 2500000 && "$OCTOPIPE" --version) >/dev/null 2>&1; then
    for n in 16384 65536; do
        mb=$((2 * n))
        run sh -c 'ulimit -s 256; ulimit -v 2500000; exec timeout 60 "$0" tune --model "$1/scale$2-model.json" --cluster "$1/scale$2-cluster.json" --microbatches "$3" --budget 0.5 --quiet -o "$1/scale-plan.json"' "$OCTOPIPE" "$T" "$n" "$mb"
        answer_or_refusal "tune at $n GPUs x $n layers, --budget 0.5"
        run sh -c 'ulimit -s 256; ulimit -v 2500000; exec timeout 60 "$0" tune --layout pp --model "$1/scale$2-model.json" --cluster "$1/scale$2-cluster.json" --microbatches "$3" --budget 0.5 --quiet -o "$1/scale-plan.json"' "$OCTOPIPE" "$T" "$n" "$mb"
        expect_rc 2 "tune --layout pp at $n stages x $mb microbatches, --budget 0.5: refused"
        expect_match "^octopipe tune: --budget 0.5 s cannot hold: (simulating $n stages x $mb microbatches|reading the model)" "$ERR" "naming what cannot fit"
        run sh -c 'ulimit -s 256; ulimit -v 2500000; exec timeout 60 "$0" compare --model "$1/scale$2-model.json" --cluster "$1/scale$2-cluster.json" --microbatches "$3" --budget 0.5' "$OCTOPIPE" "$T" "$n" "$mb"
        answer_or_refusal "compare at $n GPUs x $n layers, --budget 0.5"
        run sh -c 'ulimit -s 256; ulimit -v 2500000; exec timeout 60 "$0" compare --layout pp --model "$1/scale$2-model.json" --cluster "$1/scale$2-cluster.json" --microbatches "$3" --budget 0.5' "$OCTOPIPE" "$T" "$n" "$mb"
        expect_rc 2 "compare --layout pp at $n stages, --budget 0.5: refused"
        expect_match "^octopipe compare: --budget 0.5 s cannot hold" "$ERR" "saying why"
    done
    # a budget the 14 MB model's reading leaves room in: read, searched, then an answer or
    # the refusal, in 2.5 GB and a 256 KB stack
    run sh -c 'ulimit -s 256; ulimit -v 2500000; exec timeout 60 "$0" tune --model "$1/scale65536-model.json" --cluster "$1/scale65536-cluster.json" --microbatches 131072 --budget 3 --quiet -o "$1/scale-plan.json"' "$OCTOPIPE" "$T"
    answer_or_refusal "tune at 65536 GPUs x 65536 layers, --budget 3"
    # a budget that holds one baseline's simulation but not all of them (about 0.3 s each,
    # twice that with two chunks a device): the rows left out say so, the rest are there
    run sh -c 'ulimit -s 256; ulimit -v 2500000; exec timeout 60 "$0" compare --layout pp --model "$1/deep-model.json" --cluster "$1/deep-cluster.json" --microbatches 146 --budget 0.5' "$OCTOPIPE" "$T"
    answer_or_refusal "compare --layout pp of 1024 stages x 146 microbatches, --budget 0.5"
    # (on a loaded machine the reading alone may spend the budget: refused up front, as
    # answer_or_refusal accepts, and then there are no rows to look at)
    if [ "$RC" = 2 ]; then
        ok "every row is there; each one left out says why (refused up front: no rows on this machine now)"
    elif [ "$(printf '%s\n' "$OUT" | grep -Ec '^(gpipe|1f1b|1f1b balanced|interleaved|zb-h1|zb-h2|zb-v|dualpipev|adaptive|tuned) ')" = 10 ] &&
       ! printf '%s\n' "$OUT" | grep -E '^[a-z]' | grep ' skipped' | grep -Evq 'skipped: (its simulation takes about [0-9.]+ s|tuning takes at least [0-9.]+ s), past the budget$|skipped: the budget ran out before it$'; then
        ok "every row is there; each one left out says why ($(printf '%s\n' "$OUT" | grep -c 'skipped: ') skipped)"
    else
        not_ok "every row is there; each one left out says why" "$OUT"
    fi
else
    skip "the budget at scale" "this build cannot run under ulimit -s / -v (sanitizers)"
fi

# ---- plan writes no file its readers refuse (issue 28: 8 gpus x 1,000,000 microbatches
# made a plan over the 256 MiB every command reads): refused up front, the limit named
run "$OCTOPIPE" plan --model gpt-13b --cluster 16xH200 --schedule 1f1b --microbatches 1000000 -o "$T/toolarge.json"
expect_rc 2 "16 stages x 1,000,000 microbatches is refused"
expect_match 'make a plan of at least [0-9]+ MiB, more than the 256 MiB any octopipe command reads back: at most [0-9]+ microbatches with 16 stages' "$ERR" "naming the limit and what fits"
if [ ! -e "$T/toolarge.json" ]; then ok "and writes nothing"; else not_ok "and writes nothing"; fi

# ---- names reach a terminal only as text: file names on the success lines, a newline in a
# name (one line of flags injected into megatron-args, one error split in two), raw C1
# bytes and names of megabytes in a model
O="$OCTOPIPE"
mkdir -p "$T/names"
"$O" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 -o "$T/names/p.json" >/dev/null
esc=$(printf 'e\033[31mRED.json')
cp "$T/names/p.json" "$T/names/$esc"
run "$O" check "$T/names/$esc"
if [ "$RC" = 0 ] && ! printf '%s' "$OUT" | grep -q "$(printf '\033')" && printf '%s' "$OUT" | grep -q 'e\\x1b\[31mRED.json: ok'; then
    ok "check's ok line shows an escape in a file name escaped"
else not_ok "check's ok line" "exit $RC" "$(printf '%s' "$OUT" | cat -v)"; fi
nl=$(printf 'x\n--use-evil-flag\n#.json')
cp "$T/names/p.json" "$T/names/$nl"
run "$O" export megatron-args "$T/names/$nl"
if [ "$RC" = 0 ] && ! printf '%s\n' "$OUT" | grep -q '^--use-evil-flag'; then
    ok "a newline in the plan's file name does not start a line of megatron-args flags"
else not_ok "megatron-args header" "$OUT"; fi
run "$O" check "$(printf 'no\nexist.json')"
if [ "$RC" = 2 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && printf '%s' "$ERR" | grep -q 'no\\x0aexist.json: cannot open'; then
    ok "a newline in a missing file's name stays in its one error line"
else not_ok "one error line" "exit $RC" "$ERR"; fi
python3 - "$top_srcdir/samples/models/gpt-13b.json" "$T/names" <<'PY'
import sys
raw = open(sys.argv[1], "rb").read()
key = b'"name": "gpt-13b"'
assert key in raw
open(sys.argv[2] + "/c1.json", "wb").write(raw.replace(key, b'"name": "gpt\x9b2J"', 1))
open(sys.argv[2] + "/long.json", "wb").write(raw.replace(key, b'"name": "' + b"n" * 5000 + b'"', 1))
PY
run "$O" check "$T/names/c1.json"
expect_rc 2 "a raw C1 byte (the eighth-bit CSI) in a model's name is refused"
expect_match 'c1.json: name: must be UTF-8 text \(byte 0x9b at offset 3 is not\)' "$ERR" "naming the byte"
run "$O" check "$T/names/long.json"
expect_rc 2 "a name of 5000 bytes is refused"
expect_match 'long.json: name: longer than 4096 bytes' "$ERR" "saying the limit"
# an error about a file under a long path keeps its reason (the line was cut at 1024 bytes)
deep="$T/names/$(python3 -c "print('/'.join(['d' * 200] * 18))")"
mkdir -p "$deep" && echo '{' >"$deep/bad.json"
run "$O" check "$deep/bad.json"
expect_rc 2 "a bad file under a 3800-byte path"
expect_match 'bad.json: line 2, column 1: invalid JSON: unexpected end of file$' "$ERR" "its error still says what is wrong"
# a simulated timeline is no measurement: report and export svg refuse it as calibrate does
"$O" sim "$T/names/p.json" --timeline-out "$T/names/sim-tl.json" >/dev/null
run "$O" report "$T/names/p.json" --timeline "$T/names/sim-tl.json" -o "$T/names/r.html"
expect_rc 2 "report --timeline of a simulated timeline is refused"
expect_match "sim-tl.json: source: 'sim', a simulated timeline, not a measurement" "$ERR" "saying why"
run "$O" export svg "$T/names/p.json" --timeline "$T/names/sim-tl.json" -o "$T/names/r.svg"
expect_rc 2 "and so is export svg --timeline"

# a plan whose model is /dev/stdin (or a FIFO) held check until something wrote there
python3 -c '
import json, sys
p = json.load(open(sys.argv[1])); p["model"] = "/dev/stdin"; json.dump(p, open(sys.argv[2], "w"))' \
    "$T/names/p.json" "$T/names/stdin-model.json"
mkfifo "$T/names/fifo-model.json"
python3 -c '
import json, sys
p = json.load(open(sys.argv[1])); p["model"] = "fifo-model.json"; json.dump(p, open(sys.argv[2], "w"))' \
    "$T/names/p.json" "$T/names/fifo-plan.json"
run sh -c "sleep 10 | timeout 5 '$O' check '$T/names/stdin-model.json'"
expect_rc 2 "a plan naming /dev/stdin as its model is refused at once"
expect_match "stdin-model.json: model: '/dev/stdin' is not a regular file" "$ERR" "saying so"
run timeout 5 "$O" check "$T/names/fifo-plan.json"
expect_rc 2 "and one naming a FIFO"

# ---- a second outside probe: the stage limit, compare --json with no layout, steps of
# another run, a slowdown of no stage
run "$O" tune --model gpt-13b --cluster 4xH200 --microbatches 4 --evals 200 --max-stages-per-device 1 --layout pp \
    -o "$T/names/k1.json"
expect_rc 0 "tune --max-stages-per-device 1"
if python3 -c '
import json, sys, collections
p = json.load(open(sys.argv[1]))
sys.exit(max(collections.Counter(s["device"] for s in p["stages"]).values()) > 1)' "$T/names/k1.json"; then
    ok "holds one stage a device, even where a baseline of two (ZB-V) is faster"
else not_ok "the plan holds more than one stage on a device" "$OUT"; fi
run "$O" compare --model llama2-70b --cluster 4xH200 --microbatches 4 --json
expect_rc 3 "compare --json when no parallel layout fits"
if [ "$OUT" = "[]" ]; then ok "still writes a JSON document: []"; else not_ok "compare --json output" "$OUT"; fi
"$O" tune --model gpt-13b --cluster 4xH200 --microbatches 4 --evals 100 --layout pp -o "$T/names/g4.json" \
    --steps-out "$T/names/g4.steps" --quiet
"$O" plan --model gpt-13b --cluster 8xH200 --microbatches 4 --schedule 1f1b -o "$T/names/p8.json" >/dev/null
run "$O" report "$T/names/p8.json" --steps "$T/names/g4.steps" -o "$T/names/r8.html"
expect_rc 2 "report --steps of a run on another cluster is refused"
expect_match "g4.steps: cluster: steps on cluster '4xH200', the plan is on '8xH200'" "$ERR" "naming both clusters"
run "$O" report "$T/names/p.json" --steps "$T/names/g4.steps" -o "$T/names/r4.html"
expect_rc 2 "and of a run at another microbatch count"
expect_match "g4.steps: microbatches: steps of a run at 4 microbatches, the plan has 8" "$ERR" "naming both counts"
run "$O" report "$T/names/g4.json" --steps "$T/names/g4.steps" -o "$T/names/r5.html"
expect_rc 0 "its own plan's steps are charted"
run "$O" run "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json" --emu-slowdown 99:2
expect_rc 2 "run --emu-slowdown of a stage the plan has not"
expect_match "--emu-slowdown: no stage 99 \(the plan has 4\)" "$ERR" "saying so, as --kill-device does"

# cost --calibrate with a bundled cluster's short name rewrote the shared sample in place
# (every later 8xH200 run then priced differently): refused unless --cluster-out is given
# (on a copy of the data directory, so that a regression cannot touch the tree)
mkdir -p "$T/dd"
cp -r "$top_srcdir/samples" "$T/dd/"
run env OCTOPIPE_DATADIR="$T/dd" "$O" cost "$top_srcdir/samples/profiles/configs/gpt-13b.json" --cluster 8xH200 \
    --calibrate "$top_srcdir/samples/profiles/gpt-13b.json"
expect_rc 2 "cost --calibrate into a bundled cluster by its name: exit 2"
expect_match 'is a bundled sample .*: give --cluster-out FILE' "$ERR" "saying to give --cluster-out"
if cmp -s "$T/dd/samples/clusters/8xH200.json" "$top_srcdir/samples/clusters/8xH200.json"; then
    ok "the bundled cluster is unchanged"; else not_ok "the bundled cluster is unchanged"; fi
run env OCTOPIPE_DATADIR="$T/dd" "$O" cost "$top_srcdir/samples/profiles/configs/gpt-13b.json" --cluster 8xH200 \
    --calibrate "$top_srcdir/samples/profiles/gpt-13b.json" --cluster-out "$T/cal.json"
expect_rc 0 "with --cluster-out the fit goes to the copy"
# a positive value under a field's tiny floor was told "must be a number > 0"
sed 's/"gbytes_per_s": [0-9.e+]*/"gbytes_per_s": 1e-300/' "$top_srcdir/samples/clusters/4xH200.json" > "$T/tiny-link.json"
run "$O" check "$T/tiny-link.json"
expect_rc 2 "a link of 1e-300 GB/s is refused"
expect_match 'gbytes_per_s: must be a number >= 1e-06 \(got 1e-300\)' "$ERR" "naming the real floor"
# import profile read a time of 0x10 (and 0x1p4) as 16 ms: strtod's hex
for t in 0x10 0x1p4 1e400 1e308 1.5e9 inf nan -1; do
    printf 'name,phase,ms\ndecoder.layers.0.mixer,F,%s\n' "$t" > "$T/hex.csv"
    run "$O" import profile "$T/hex.csv" --rules "$top_srcdir/tests/data/profile/rules.json" -o "$T/hex.json"
    expect_rc 2 "import profile: a time of $t is refused"
    expect_match "hex.csv: line 2: '$t' is not a time in ms from 0 to 1e\+09" "$ERR" "as no time, naming the range"
done

# --partition: a count below 1 was called an unknown partition, and its line named neither
# the command nor the option's help; it is the option's usage error
rm -f "$T/p.json"
run "$O" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 --partition -1,21,10,10 -o "$T/p.json"
expect_rc 2 "plan --partition -1,21,10,10 is refused"
expect_match "^octopipe plan: partition '-1,21,10,10': expected positive layer counts separated by commas \(see 'octopipe plan --help'\)$" "$ERR" "as counts, by the command: $ERR"
run "$O" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 --partition even -o "$T/p.json"
expect_match "^octopipe plan: unknown partition 'even' \(uniform, balanced" "$ERR" "a name it does not know: $ERR"
run "$O" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 --partition 10,10 -o "$T/p.json"
expect_match "^octopipe plan: partition '10,10' has 2 stages, the schedule needs 4" "$ERR" "too few counts: $ERR"
if [ -e "$T/p.json" ]; then not_ok "and writes no plan" "$T/p.json"; else ok "and writes no plan"; fi
run "$O" import torch-csv "$top_srcdir/tests/data/schedule.csv" --model "$top_srcdir/tests/data/tiny-model.json" \
    --cluster "$top_srcdir/tests/data/tiny-cluster.json" --partition -1,2 -o "$T/p.json"
expect_rc 2 "import torch-csv --partition -1,2 is refused"
expect_match "^octopipe import: partition '-1,2': expected positive layer counts separated by commas \(see 'octopipe import --help'\)$" "$ERR" "by the command: $ERR"
run "$O" import torch-csv "$top_srcdir/tests/data/schedule.csv" --model "$top_srcdir/tests/data/tiny-model.json" \
    --cluster "$top_srcdir/tests/data/tiny-cluster.json" --partition 1,2 -o "$T/p.json"
expect_match "^octopipe import: partition '1,2' covers 3 layers, model 'tiny' has 4" "$ERR" "counts that miss layers: $ERR"

done_testing
