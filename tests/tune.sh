#!/bin/sh
# octopipe tune and the tuned row of compare: a valid plan that is never slower than the
# baselines, a step record, both bounds, determinism for a seed and an evaluation budget,
# Ctrl-C keeping the best plan, and the usage errors. (The three phases over pure pipeline
# parallelism, --layout pp; tests/parallel.sh has the layout search.)
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
T="$TMPDIR_TEST"
json_ok() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }
ms_of() { "$OCTOPIPE" sim --json "$1" | sed -n 's/^ *"makespan_ms": \([0-9.e+-]*\),*$/\1/p' | head -1; }

# --evals, not the default 1 s budget: on a loaded machine a second of wall time may hold
# no accepted step, and the steps checked below must not depend on the machine's speed
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --evals 3000 -o "$T/tuned.json" \
    --steps-out "$T/steps.json"
expect_rc 0 "tune writes a plan"
if printf '%s\n' "$OUT" | grep -q '^ *[0-9]* start '; then not_ok "by default no step lines, a summary" "$OUT"
else ok "by default no step lines, a summary"; fi
if [ "$(printf '%s\n' "$OUT" | wc -l)" -le 5 ]; then ok "of at most 5 lines"; else not_ok "a summary of at most 5 lines" "$OUT"; fi
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --evals 2000 --verbose
expect_rc 0 "tune --verbose"
expect_match '^   0 start +start: ' "$OUT" "--verbose prints the start"
if printf '%s\n' "$OUT" | grep '^ *[0-9]* [a-z]' | awk 'length > 80 { bad = 1 } END { exit bad }'; then
    ok "every step line fits 80 columns"; else not_ok "step lines fit 80 columns" "$OUT"; fi
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --evals 200 --quiet -o "$T/q.json"
expect_rc 0 "tune --quiet"
if [ -z "$OUT$ERR" ] && [ -s "$T/q.json" ]; then ok "--quiet prints nothing and writes the plan"; else not_ok "--quiet is quiet" "$OUT$ERR"; fi
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 -o "$T/tuned-default.json"
expect_rc 0 "tune with the default budget writes a plan"
expect_match '^tuned: .* per iteration, [0-9.]+x the best baseline' "$(unwrap "$OUT")" "and a summary against the best baseline"
expect_match '^bounds: .* \(efficiency [0-9.]+%\), tight .* \(efficiency [0-9.]+%\)$' "$OUT" "and both bounds"
expect_match '^ +at most [0-9.]+% slower than the best plan can be$' "$OUT" "and the gap to the tight one"
if [ "$(printf '%s\n' "$OUT" | awk 'length > 80' | wc -l)" -eq 0 ]; then ok "every summary line fits 80 columns"
else not_ok "summary lines fit 80 columns" "$OUT"; fi
if printf '%s' "$ERR" | grep -q 'tuning: best'; then not_ok "no progress line when stderr is not a terminal" "$ERR"
else ok "no progress line when stderr is not a terminal"; fi
if printf '%s\n' "$OUT" | grep -q '^memory binds'; then not_ok "no memory line where memory does not bind" "$OUT"
else ok "no memory line where memory does not bind"; fi
# where memory binds a pure pipeline, the summary says how many stages the tuner made recompute
run "$OCTOPIPE" tune --layout pp --model nemotronh-8b-seq32k --cluster 16xH200 --microbatches 32 --evals 300 \
    -o "$T/mem.json"
expect_rc 0 "tune a memory-bound pure pipeline (nemotronh-8b-seq32k, 16 H200s)"
nrc=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(sum(1 for s in p["stages"] if s.get("recompute", "none") != "none"), len(p["stages"]))' "$T/mem.json" 2>/dev/null)
expect_match "^memory binds: ${nrc% *} of ${nrc#* } stages recompute; --layout auto also weighs TP, DP and ZeRO\$" \
    "$(unwrap "$OUT")" "the summary says memory binds and how many stages recompute (${nrc% *} of ${nrc#* })"
if [ "$(printf '%s\n' "$OUT" | awk 'length > 80' | wc -l)" -eq 0 ]; then ok "that summary fits 80 columns too"
else not_ok "the memory summary fits 80 columns" "$OUT"; fi
# where no pure pipeline fits at all, how close the closest came, and where else to look
run "$OCTOPIPE" tune --layout pp --model llama2-70b --cluster 8xH200 --microbatches 8 --evals 300 -o "$T/x.json"
expect_rc 3 "no pure pipeline of llama2-70b fits 8 H200s"
expect_match "^octopipe tune: no plan of model 'llama2-70b' fits in the memory of cluster '8xH200': the closest needs 1[4-9][0-9]\.[0-9] GB on a device of 133\.9 GB usable; --layout auto also weighs TP, DP and ZeRO\$" \
    "$ERR" "says how close the closest came: $ERR"
run "$OCTOPIPE" check "$T/tuned.json"
expect_rc 0 "the tuned plan is valid"
if json_ok "$T/steps.json"; then ok "the step record is JSON"; else not_ok "the step record is JSON"; fi
expect_match '"format": "octopipe.steps/1"' "$(cat "$T/steps.json")" "in the steps format"
expect_match '"phase": "(partition|placement|scheduling)"' "$(cat "$T/steps.json")" "with the phase of each step"

tuned=$(ms_of "$T/tuned.json")
for s in 1f1b zb-h1 interleaved; do
    "$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule $s --microbatches 8 -o "$T/$s.json" >/dev/null 2>&1
    base=$(ms_of "$T/$s.json")
    if awk -v t="$tuned" -v b="$base" 'BEGIN { exit !(t <= b + 1e-9) }'; then ok "tuned ($tuned ms) is not slower than $s ($base ms)"
    else not_ok "tuned is not slower than $s" "tuned $tuned, $s $base"; fi
done

# a time budget stops wherever the clock says; an evaluation budget is exact
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --seed 5 --evals 3000 -o "$T/a.json" --quiet
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --seed 5 --evals 3000 -o "$T/b.json"
if cmp -s "$T/a.json" "$T/b.json"; then ok "the same seed and --evals write the same plan"; else not_ok "the same seed and --evals write the same plan"; fi
expect_match 'plans simulated' "$OUT" "an evaluation budget reports what it simulated"

# catches_sigint PID: the process has its SIGINT handler (bit 2 of /proc's SigCgt mask: its
# last hex digit is one of 2 3 6 7 a b e f); without /proc, a second's wait instead
catches_sigint() {
    [ -r "/proc/$1/status" ] || { sleep 1; return 0; }
    case $(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status") in *[2367abefABEF]) return 0 ;; esac
    return 1
}
# Ctrl-C: the best plan so far, exit 0, and a line saying so
"$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --budget 60 -o "$T/int.json" >"$T/int.out" 2>&1 &
pid=$!
n=300   # up to 30 s for a loaded machine to get the tuner to its search
until catches_sigint $pid || [ $n -eq 0 ] || ! kill -0 $pid 2>/dev/null; do sleep 0.1; n=$((n - 1)); done
kill -INT $pid
# a Ctrl-C that lands before the handler is in place (a background job starts with SIGINT
# ignored) is lost, as a user's would be: press again, every 3 s, while it runs
n=6
while [ $n -gt 0 ]; do
    sleep 3; kill -0 $pid 2>/dev/null || break
    kill -INT $pid 2>/dev/null; n=$((n - 1))
done
wait $pid
RC=$?; OUT=$(cat "$T/int.out"); ERR=
expect_rc 0 "Ctrl-C during tune exits 0"
expect_match '^interrupted: writing the best plan found so far' "$OUT" "and says it was interrupted"
run "$OCTOPIPE" check "$T/int.json"
expect_rc 0 "and writes a valid plan"
# Ctrl-C while the layouts are still being judged (about 2 s of llama2-70b's 64 at 8192
# microbatches): the best layout so far, its best baseline written, exit 0. A shell's
# background job ignores SIGINT, so python starts the tuner with the default action a
# terminal's Ctrl-C meets, and interrupts it once the tuner catches SIGINT and has run
# 0.4 s of CPU (by then a layout that fits was found; the search takes seconds): CPU time,
# not a sleep, so that a loaded machine does not interrupt it earlier in its work. Without
# /proc, after 0.4 s.
python3 -c 'import os, signal, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
tick = os.sysconf("SC_CLK_TCK")
def ready():
    try:
        caught = False
        for line in open("/proc/%d/status" % p.pid):
            if line.startswith("SigCgt:"):
                caught = int(line.split()[1], 16) & (1 << (signal.SIGINT - 1))
        f = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
        return caught and (int(f[11]) + int(f[12])) / tick >= 0.4
    except (OSError, IndexError, ValueError):
        time.sleep(0.4)
        return True
deadline = time.monotonic() + 60
while not ready() and p.poll() is None and time.monotonic() < deadline:
    time.sleep(0.01)
p.send_signal(signal.SIGINT)
r = p.wait()
sys.exit(r if r >= 0 else 128 - r)' "$OCTOPIPE" tune --model llama2-70b --cluster 64xH200 --microbatches 8192 --budget 60 \
    -o "$T/lint.json" >"$T/lint.out" 2>&1
RC=$?; OUT=$(cat "$T/lint.out"); ERR=
expect_rc 0 "Ctrl-C during the layout search exits 0"
expect_match '^ +the best estimate of [0-9]+ judged before the interrupt' "$OUT" "the layout lines say the search was cut short"
expect_match '^interrupted: writing the best plan found so far' "$OUT" "and the tuner does not start"
run "$OCTOPIPE" check "$T/lint.json"
expect_rc 0 "and the plan written is valid"
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --time-budget 0.001 -o "$T/c.json" --quiet
expect_rc 0 "a tiny time budget still gives a plan (at least the best baseline)"

# -o -: the plan alone on stdout, every report line (the layout chosen included) on stderr
"$OCTOPIPE" tune --model gpt-13b --cluster 8xH200 --microbatches 16 --evals 100 -o - >"$T/stdout.json" 2>"$T/stderr.txt"
RC=$?; OUT=$(cat "$T/stderr.txt"); ERR=
expect_rc 0 "tune -o - with the layout search"
if python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["format"] == "octopipe.plan/1"' "$T/stdout.json" 2>/dev/null
then ok "stdout is the plan and nothing else"; else not_ok "stdout is the plan and nothing else" "$(head -3 "$T/stdout.json")"; fi
expect_match '^layout: pp ' "$OUT" "the layout line goes to stderr"

run "$OCTOPIPE" compare --model gpt-13b --cluster 4xH200 --microbatches 8
expect_match '^tuned +[0-9.]+ ' "$OUT" "compare has the tuned row"
expect_match '^speedup of the tuned plan: .*1f1b [0-9.]+x' "$OUT" "with its speedup over each baseline"
run "$OCTOPIPE" compare --model gpt-13b --cluster 4xH200 --microbatches 8 --json
expect_match '"speedup": \{' "$OUT" "compare --json carries the speedups"

run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200
expect_rc 2 "tune without --microbatches is a usage error"
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --time-budget soon
expect_rc 2 "a bad time budget is a usage error"
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --budget -1
expect_rc 2 "a negative budget is a usage error"
# a seed is an unsigned 32-bit number: one outside it was wrapped silently (-1 and 10^20
# both became 4294967295, 4294967296 became 0)
for s in -1 4294967296 99999999999999999999 ' 5'; do
    run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --evals 10 --seed "$s" -o "$T/x.json"
    expect_rc 2 "--seed '$s' is a usage error"
done
expect_match "^octopipe tune: --seed: ' 5' is not an integer in \\[0, 4294967295\\]" "$ERR" "naming the range: $ERR"
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --evals 10 --seed 4294967295 -o "$T/x.json"
expect_rc 0 "--seed 4294967295 is the largest"
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --budget ''
expect_rc 2 "an empty budget is a usage error"
expect_match "option '--budget' needs a value" "$ERR" "naming the option given, not its old alias: $ERR"
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --evals 0
expect_rc 2 "a zero evaluation budget is a usage error"
# an output that cannot be written is refused before the search spends its budget
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --evals 100000 -o "$T/no/such/dir/t.json"
expect_rc 1 "tune -o into a missing directory"
expect_match "^octopipe tune: $T/no/such/dir/t.json: cannot create a temporary file" "$ERR" "says why, naming the file"
if [ -z "$OUT" ]; then ok "and stops before tuning (no steps printed)"; else not_ok "tune tuned before refusing its output" "$OUT"; fi
run "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 4xH200 --microbatches 8 --evals 100000 -o "$T/t.json" --steps-out "$T"
expect_rc 1 "tune --steps-out onto a directory"
expect_match "is a directory" "$ERR" "says so"
if [ ! -e "$T/t.json" ] && [ -z "$OUT" ]; then ok "nothing tuned, nothing written"; else not_ok "a refused tune wrote or ran" "$OUT"; fi
# the progress line on a terminal (a pty of a given width; stdout to a file): the best time,
# the bound, the gap and the rate, each rewrite on one row that never wraps (a wrapped
# line's first row would stay in the log at every update: "\r\033[K" clears the last row
# only), cleared before the summary; none on a dumb terminal
pty_tune() {  # pty_tune COLUMNS TERM OUT: stderr of a 1.5 s tune on a pty, raw, into OUT
    python3 -c 'import fcntl, os, pty, struct, subprocess, sys, termios
cols, term, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
m, s = pty.openpty()
fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
env = dict(os.environ, TERM=term)
env.pop("COLUMNS", None)
p = subprocess.Popen(sys.argv[4:], stdin=subprocess.DEVNULL, stdout=open(out + ".stdout", "w"), stderr=s, env=env)
os.close(s)
data = b""
while True:
    try:
        chunk = os.read(m, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
open(out, "wb").write(data)
sys.exit(p.wait())' "$1" "$2" "$3" "$OCTOPIPE" tune --layout pp --model gpt-13b --cluster 8xH200 --microbatches 64 \
        --budget 1.5 -o "$T/pty.json"
}
# rows_of FILE: each rewrite of the line (split at CR, the erase code dropped), one a line
rows_of() { python3 -c 'import sys
d = open(sys.argv[1], "rb").read().decode("ascii", "replace")
for r in d.replace("\x1b[K", "").split("\r"):
    if r.strip():
        print(r)' "$1"; }
for cols in 200 80 40; do
    if pty_tune $cols xterm "$T/pty$cols"; then
        rows=$(rows_of "$T/pty$cols")
        # 40 columns cannot hold the gap (44 characters): the line is cut, not wrapped
        want='^tuning: best [0-9.]* m*s  bound [0-9.]* m*s  gap [0-9.]*%'
        [ $cols -ge 50 ] || want='^tuning: best [0-9.]* m*s  bound'
        n=$(printf '%s\n' "$rows" | grep -c "$want")
        long=$(printf '%s\n' "$rows" | awk -v c=$cols 'length($0) > c - 1' | head -3)
        nl=$(tr -cd '\n' <"$T/pty$cols" | wc -c)
        if [ "$n" -ge 2 ]; then ok "$cols columns: a progress line with the best, the bound (and the gap where it fits) ($n updates)"
        else not_ok "$cols columns: a progress line with the best, the bound (and the gap where it fits)" "$rows"; fi
        if [ -z "$long" ] && [ "$nl" -eq 0 ]; then ok "$cols columns: every update fits one row, none ends a line"
        else not_ok "$cols columns: every update fits one row, none ends a line" "$long ($nl line ends)"; fi
        case $cols in
        200) expect_match '[0-9]+ plans, [0-9]+/s  \(Ctrl-C keeps the best\)$' "$rows" "wide: with the rate and the Ctrl-C hint" ;;
        80) expect_match '[0-9]+ plans, [0-9]+/s$' "$rows" "80 columns: the rate kept, the hint dropped"
            if printf '%s' "$rows" | grep -q 'Ctrl-C'; then not_ok "80 columns: no hint" "$rows"; else ok "80 columns: no hint"; fi ;;
        esac
        if [ "$(tail -c 4 "$T/pty$cols" | od -An -c | tr -d ' ')" = '\r033[K' ]; then ok "$cols columns: the line is cleared at the end"
        else not_ok "$cols columns: the line is cleared at the end" "$(tail -c 20 "$T/pty$cols" | od -c)"; fi
        expect_match '^tuned: ' "$(cat "$T/pty$cols.stdout")" "$cols columns: the summary still goes to stdout"
    else
        not_ok "tune on a $cols-column pty" "$(cat "$T/pty$cols" "$T/pty$cols.stdout" 2>/dev/null | tail -5)"
    fi
done
if pty_tune 80 dumb "$T/ptydumb"; then
    if grep -q 'tuning: best' "$T/ptydumb"; then not_ok "no progress line on a dumb terminal" "$(cat "$T/ptydumb")"
    else ok "no progress line on a dumb terminal"; fi
else
    not_ok "tune on a dumb terminal" "$(tail -5 "$T/ptydumb.stdout")"
fi
# free links (how profile studies model free communication) tune by default: the replica's
# data-parallel link took the cluster's bandwidth and its own reader refused it above 1e6 GB/s
python3 -c "
import json; d = json.load(open('$top_srcdir/samples/clusters/8xH200.json'))
d['intra_node']['gbytes_per_s'] = 1e7; d['name'] = 'free8'; json.dump(d, open('$T/free8.json', 'w'))"
run "$OCTOPIPE" tune --model gpt-13b --cluster "$T/free8.json" --microbatches 32 --evals 300 --quiet -o "$T/free.json"
expect_rc 0 "tune with free links (1e7 GB/s) finds a layout"
# free links (faster than 1e6 GB/s, how the profile studies model free communication) and
# a measured profile's table: tune succeeds by default, the layout search included
python3 - "$T" "${top_srcdir:-.}" <<'PY'
import json, sys
t, top = sys.argv[1], sys.argv[2]
d = json.load(open(f"{top}/samples/profiles/gpt-13b.json"))
layers = [{"kind": l["arch"], "f_ms": l["f_ms"], "b_ms": l["b_full_ms"] / 2, "w_ms": l["b_full_ms"] / 2,
           "param_bytes": 0, "act_bytes": 0, "act_w_bytes": 0, "out_bytes": 0} for l in d["layers"]]
json.dump({"format": "octopipe.model/1", "name": "gpt-13b-profile", "seq_len": d["seq_len"],
           "micro_batch_size": 1, "layers": layers}, open(f"{t}/prof.json", "w"))
json.dump({"format": "octopipe.cluster/1", "name": "free16", "devices": 16, "gpus_per_node": 8,
           "mem_bytes": 141000000000, "intra_node": {"gbytes_per_s": 1e7, "latency_us": 0},
           "inter_node": {"gbytes_per_s": 1e7, "latency_us": 0}}, open(f"{t}/free16.json", "w"))
PY
run "$OCTOPIPE" check "$T/free16.json"
expect_rc 0 "check accepts free links"
run "$OCTOPIPE" tune --model "$T/prof.json" --cluster "$T/free16.json" --microbatches 16 --evals 600 -o "$T/free.json"
expect_rc 0 "tune works by default with free links"
expect_match '^layout: pp [0-9]+ x tp [0-9]+ x dp [0-9]+ ' "$OUT" "and names the layout"
run "$OCTOPIPE" tune --model "$T/prof.json" --cluster "$T/free16.json" --microbatches 16 --evals 600 --layout pp -o "$T/freepp.json"
expect_rc 0 "and with --layout pp"
# compare --budget bounds its layout search and its tuned row
run "$OCTOPIPE" compare --model gpt-13b --cluster 8xH200 --microbatches 16 --budget 1
expect_rc 0 "compare --budget"
expect_match '^tuned +[0-9.]+ ' "$OUT" "has its tuned row"
run "$OCTOPIPE" compare --model gpt-13b --cluster 8xH200 --microbatches 16 --budget -1
expect_rc 2 "a negative compare --budget is a usage error"
done_testing
