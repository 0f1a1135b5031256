#!/bin/sh
# octopipe plan / sim / compare / import / export from the command line: the outputs,
# their formats (JSON, timeline, Chrome trace, Gantt), round trips and exit codes.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
data="$top_srcdir/tests/data"
T="$TMPDIR_TEST"
json_ok() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }

run "$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 -o "$T/p.json"
expect_rc 0 "plan writes a 1f1b plan"
expect_match 'p.json: gpt-13b 1f1b, 4 stages, 8 microbatches: iteration' "$OUT" "plan reports the simulated iteration"
run "$OCTOPIPE" check "$T/p.json"
expect_rc 0 "the written plan is valid"
# one GPU: "1 stage, 1 microbatch"; and a peak just over the usable memory is not
# rounded to the same number ("needs 134 GB but has 134 GB")
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["name"]="1g"; c["devices"]=c["gpus_per_node"]=1; json.dump(c,open(sys.argv[2],"w"))' \
    "$top_srcdir/samples/clusters/8xH200.json" "$T/1g.json"
run "$OCTOPIPE" plan --model llama2-7b --cluster "$T/1g.json" --schedule 1f1b --microbatches 1 -o "$T/one.json"
expect_match 'one.json: llama2-7b 1f1b, 1 stage, 1 microbatch: iteration' "$OUT" "plan counts one stage and one microbatch"
run "$OCTOPIPE" export svg "$T/one.json" -o "$T/one.svg"
expect_match '1 microbatch, 1 stage on 1 GPU<' "$(cat "$T/one.svg" 2>/dev/null)" "so does the SVG's title line"
run "$OCTOPIPE" tui --render 160x24 "$T/one.json"
expect_match 'on 1g \(1 gpu\), 1 microbatch, 1 stage \|' "$OUT" "and the TUI's header"
run "$OCTOPIPE" sim "$T/one.json"
expect_match ', 1 stage on 1 device, 1 microbatch, ' "$OUT" "and sim's first line"
run "$OCTOPIPE" check "$T/one.json"
expect_match '1 stage on 1 of 1 device, 1 microbatch, ' "$OUT" "and check's"
run "$OCTOPIPE" plan --model llama2-7b --cluster "$T/1g.json" --schedule dualpipev --microbatches 3 -o "$T/dpv1.json"
expect_rc 3 "dualpipev on one H200: just out of memory"
expect_match 'plan infeasible: device 0 needs 134\.[0-9]+ GB at its peak but has 133\.[0-9]+ GB usable' "$ERR" "with the decimals that tell the two apart: $ERR"
run "$OCTOPIPE" sim "$T/dpv1.json"
expect_match ' 134\.30 GB   133\.95 GB  OUT OF MEMORY' "$OUT" "so does sim's table: $(printf '%s\n' "$OUT" | tail -1)"
expect_match '"model": "[^"]*samples/models/gpt-13b.json"' "$(cat "$T/p.json")" "the plan refers to the model by a relative path"
run "$OCTOPIPE" sim "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
a=$(printf '%s\n' "$OUT" | sed -n 's/^iteration \([^ ]*\) s.*/\1/p')
run "$OCTOPIPE" sim "$T/p.json"
b=$(printf '%s\n' "$OUT" | sed -n 's/^iteration \([^ ]*\) s.*/\1/p')
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "the generated 1f1b plan matches the bundled one ($a s)"; else not_ok "generated = bundled 1f1b" "$a vs $b"; fi

for s in gpipe interleaved zb-h1 zb-h2 zb-v dualpipev adaptive; do
    run "$OCTOPIPE" plan --model nemotron-nano-v2-9b --cluster 8xH200 --schedule $s --microbatches 16 -o "$T/$s.json"
    expect_rc 0 "plan --schedule $s"
    run "$OCTOPIPE" sim "$T/$s.json"
    expect_rc 0 "sim runs the $s plan"
done
run "$OCTOPIPE" plan --model nemotron-nano-v2-9b --cluster 8xH200 --schedule adaptive --microbatches 16 \
    --partition balanced --placement 0,1,2,3,4,5,6,7,7,6,5,4,3,2,1,0 --chunks 2 -o "$T/vshape.json"
expect_rc 0 "adaptive with an explicit V placement"
run "$OCTOPIPE" plan --model nemotron-nano-v2-9b --cluster 8xH200 --schedule interleaved --microbatches 12 -o "$T/x.json"
expect_rc 2 "interleaved with 12 microbatches on 8 devices is refused"
expect_match 'multiple of the 8 devices' "$ERR" "and says why"
run "$OCTOPIPE" plan --model nemotron-nano-v2-9b --cluster 8xH200 --schedule zigzag --microbatches 8 -o "$T/x.json"
expect_rc 2 "an unknown schedule is refused"
run "$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 --partition 10,10,10 -o "$T/x.json"
expect_rc 2 "a partition with the wrong stage count is refused"
expect_match "has 3 stages, the schedule needs 4" "$ERR" "and says why"
run "$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 --partition 13,9,9,9 -o -
expect_rc 0 "plan -o - writes to stdout"
expect_match '"layers": \[0, 12\]' "$OUT" "explicit counts become the stage ranges"

run "$OCTOPIPE" sim --json "$T/p.json"
expect_rc 0 "sim --json"
printf '%s\n' "$OUT" > "$T/metrics.json"
if json_ok "$T/metrics.json"; then ok "sim --json is JSON"; else not_ok "sim --json is JSON" "$OUT"; fi
expect_match '"makespan_ms": [0-9.]+' "$OUT" "with the makespan"
expect_match '"warmup_idle_ms"' "$OUT" "and per-device warm-up idle"
run "$OCTOPIPE" sim --gantt --width 60 --timeline-out "$T/t.json" --trace-out "$T/trace.json" "$T/p.json"
expect_rc 0 "sim with gantt, timeline and trace"
expect_match '^gpu0  \|F[FB.:]+\|$' "$OUT" "the gantt has a row per GPU"
expect_match 'F forward  I input-grad  W weight-grad  B backward  \. bubble' "$OUT" "and a legend"
run "$OCTOPIPE" check "$T/t.json"
expect_rc 0 "the timeline it wrote is valid"
expect_match 'timeline \(sim\): 4 devices, 64 ops, 48 transfers' "$OUT" "with every op and transfer"
if json_ok "$T/trace.json"; then ok "the trace is JSON"; else not_ok "the trace is JSON"; fi
expect_match '"name": "F s3 mb7"' "$(cat "$T/trace.json")" "trace events are named by op, stage and microbatch"
expect_match '"layers": "30-39"' "$(cat "$T/trace.json")" "and carry the layer range"
expect_match '"name": "GPU 0 -> GPU 1"' "$(cat "$T/trace.json")" "transfers have their own tracks"

run "$OCTOPIPE" sim "$data/deadlock-plan.json"
expect_rc 3 "a deadlocking plan exits 3"
expect_match 'plan infeasible: deadlock: .*1F1 \(device 1\) waits for 0F1 \(device 0\)' "$ERR" "and names its cycle"
run "$OCTOPIPE" sim "$data/oom-plan.json"
expect_rc 3 "a plan over device memory exits 3"
expect_match 'plan infeasible: device 1 needs' "$ERR" "and names the device"
expect_match 'OUT OF MEMORY' "$OUT" "the summary marks the device"

run "$OCTOPIPE" compare --layout pp --model nemotron-nano-v2-9b --cluster 8xH200 --microbatches 16
expect_rc 0 "compare"
for s in gpipe 1f1b 'interleaved' zb-h1 zb-v dualpipev adaptive; do
    expect_match "^$s " "$OUT" "compare has a $s row"
done
run "$OCTOPIPE" compare --layout pp --model nemotron-nano-v2-9b --cluster 8xH200 --microbatches 12 --json
expect_rc 0 "compare --json"
printf '%s\n' "$OUT" > "$T/cmp.json"
if json_ok "$T/cmp.json"; then ok "compare --json is JSON"; else not_ok "compare --json is JSON"; fi
expect_match '"reason": "n/a: interleaved .*multiple of the 8 devices' "$OUT" "a schedule that cannot apply says why"

run "$OCTOPIPE" export torch-csv "$T/zb-h1.json" -o "$T/a.csv"
expect_rc 0 "export torch-csv"
run "$OCTOPIPE" import torch-csv "$T/a.csv" --model nemotron-nano-v2-9b --cluster 8xH200 -o "$T/back.json"
expect_rc 0 "import torch-csv"
run "$OCTOPIPE" export torch-csv "$T/back.json" -o "$T/b.csv"
if cmp -s "$T/a.csv" "$T/b.csv"; then ok "torch-csv round trip is exact"; else not_ok "torch-csv round trip" "$(diff "$T/a.csv" "$T/b.csv" | head -5)"; fi
# one row a pipeline rank: a plan on 4 of 8 GPUs is a CSV of 4 rows (PyTorch's loader wants
# as many rows as ranks); a device with no stage below the last that holds one is refused
run "$OCTOPIPE" plan --model llama2-7b --cluster 8xH200 --schedule 1f1b --devices 4 --microbatches 8 -o "$T/dev4.json"
run "$OCTOPIPE" export torch-csv "$T/dev4.json" -o "$T/dev4.csv"
expect_rc 0 "export torch-csv of a plan on 4 of 8 devices"
if [ "$(wc -l <"$T/dev4.csv")" = 4 ] && ! grep -q '^$' "$T/dev4.csv"; then ok "its CSV has 4 rows, none empty"
else not_ok "4 rows" "$(cat -A "$T/dev4.csv" | cut -c1-30)"; fi
python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
for s in p["stages"]:
    s["device"] = {1: 5}.get(s["device"], s["device"])
p["schedule"][5], p["schedule"][1] = p["schedule"][1], []
json.dump(p, open(sys.argv[2], "w"))' "$T/dev4.json" "$T/gap.json"
run "$OCTOPIPE" sim "$T/gap.json"
expect_rc 0 "a plan on devices 0, 2, 3 and 5 simulates"
run "$OCTOPIPE" export torch-csv "$T/gap.json" -o "$T/gap.csv"
expect_rc 2 "export torch-csv of it is refused"
expect_match "^[^ ]*gap.json: stages: device 1 holds no stage, but devices up to 5 do" "$ERR" "naming the idle rank"
if [ ! -e "$T/gap.csv" ]; then ok "and writes nothing"; else not_ok "wrote gap.csv"; fi
s1=$("$OCTOPIPE" sim --json "$T/zb-h1.json" | sed -n 's/.*"makespan_ms": \([0-9.]*\).*/\1/p' | head -1)
s2=$("$OCTOPIPE" sim --json "$T/back.json" | sed -n 's/.*"makespan_ms": \([0-9.]*\).*/\1/p' | head -1)
if [ -n "$s1" ] && [ "$s1" = "$s2" ]; then ok "the imported plan simulates the same ($s1 ms)"; else not_ok "imported plan simulates the same" "$s1 vs $s2"; fi
run "$OCTOPIPE" import torch-csv "$data/schedule.csv" --model "$data/tiny-model.json" --cluster "$data/tiny-cluster.json" -o "$T/csv.json"
expect_rc 0 "import a CSV with idle cells"
expect_match '"microbatches": 4' "$(cat "$T/csv.json")" "microbatches inferred from the cells"
# an order that cannot run is written as the CSV says and told as sim tells it: exit 3 (it
# exited 0 with nothing said)
printf '0F0,0I0,0F1,0F2,0F3,0I1,0W0,0I2,0W1,0I3,0W2,0W3\n1F1,1F0,1I0,1I1,1W0,1F2,1I2,1F3,1I3,1W1,1W2,1W3\n' > "$T/dl.csv"
run "$OCTOPIPE" import torch-csv "$T/dl.csv" --model "$data/tiny-model.json" --cluster "$data/tiny-cluster.json" -o "$T/dl.json"
expect_rc 3 "import of an order that deadlocks: exit 3"
expect_match 'dl.json: plan infeasible: deadlock: ' "$ERR" "saying so"
if [ -s "$T/dl.json" ]; then ok "and the plan is written all the same"; else not_ok "and the plan is written all the same"; fi
printf '0F0,0X1\n' > "$T/bad.csv"
run "$OCTOPIPE" import torch-csv "$T/bad.csv" --model "$data/tiny-model.json" --cluster "$data/tiny-cluster.json" -o "$T/x.json"
expect_rc 2 "a bad cell is refused"
expect_match 'bad.csv: line 1, column 2: .0X1. is not an action' "$ERR" "with its line and column"
printf '0F0,0B0\n0F1\n' > "$T/bad2.csv"
run "$OCTOPIPE" import torch-csv "$T/bad2.csv" --model "$data/tiny-model.json" --cluster "$data/tiny-cluster.json" -o "$T/x.json"
expect_rc 2 "a stage on two ranks is refused"
# RFC 4180: quoted cells are read, malformed quoting and NUL bytes get one clear line
run "$OCTOPIPE" import torch-csv "$data/torchcsv/quoted.csv" --model "$data/tiny-model.json" --cluster "$data/tiny-cluster.json" -o "$T/q.json"
expect_rc 0 "import a CSV with quoted cells and CRLF line ends"
if cmp -s "$T/q.json" "$T/csv.json"; then ok "quoted cells give the same plan"; else not_ok "quoted cells give the same plan" "$(diff "$T/q.json" "$T/csv.json" | head -5)"; fi
run "$OCTOPIPE" import torch-csv "$data/torchcsv/newline-in-cell.csv" --model "$data/tiny-model.json" --cluster "$data/tiny-cluster.json" -o "$T/x.json"
expect_rc 2 "a line break inside a quoted cell is refused"
expect_match "newline-in-cell.csv: line 1, column 2: '0F\\\\n1' is not an action$" "$ERR" "on one line, the break escaped"
run "$OCTOPIPE" import torch-csv "$data/torchcsv/unclosed.csv" --model "$data/tiny-model.json" --cluster "$data/tiny-cluster.json" -o "$T/x.json"
expect_rc 2 "a quote never closed is refused"
expect_match "unclosed.csv: line 1: quoted field is never closed$" "$ERR" "and says so"
run "$OCTOPIPE" import torch-csv "$data/torchcsv/after-quote.csv" --model "$data/tiny-model.json" --cluster "$data/tiny-cluster.json" -o "$T/x.json"
expect_rc 2 "text after a closing quote is refused"
expect_match "after-quote.csv: line 1: text after the closing quote of a field$" "$ERR" "and says so"
run "$OCTOPIPE" import torch-csv "$data/torchcsv/nul-byte.csv" --model "$data/tiny-model.json" --cluster "$data/tiny-cluster.json" -o "$T/x.json"
expect_rc 2 "a NUL byte is not the end of the file"
expect_match "nul-byte.csv: line 2, column 13: '1W3\\\\x00' is not an action$" "$ERR" "the cell with the NUL is named"

run "$OCTOPIPE" export megatron-layout "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_rc 0 "export megatron-layout"
expect_match '^Et\*10\|t\*10\|t\*10\|t\*10L$' "$OUT" "gpt-13b in 4 stages of 10 layers"
run "$OCTOPIPE" export megatron-layout "$T/zb-v.json"
expect_rc 2 "a V placement has no Megatron layout"
expect_match "zb-v.json: stages\[[0-9]+\]\.device: a Megatron layout needs stage s on device s mod [0-9]+" "$ERR" \
    "one line naming the file and the stage's device: $ERR"
run "$OCTOPIPE" export megatron-args "$T/zb-v.json"
expect_rc 2 "nor Megatron-LM flags"
expect_match "zb-v.json: stages\[[0-9]+\]\.device: a Megatron layout needs" "$ERR" "naming the file and the stage's device: $ERR"
# transfers: Megatron's 1F1B blocks on them (the plan says so), --comm overrides; an
# interleaved order cannot run with blocking transfers, and the deadlock says why
run "$OCTOPIPE" sim "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-1f1b.json"
expect_match "fused backward, blocking transfers" "$OUT" "a Megatron 1F1B plan simulates its blocking transfers"
expect_match '"comm": "blocking"' "$(cat "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-1f1b.json")" "and the plan file says so"
run "$OCTOPIPE" sim --comm blocking "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-interleaved.json"
expect_rc 3 "interleaved with blocking transfers deadlocks"
expect_match "waits until device [0-9]+ reaches [0-9]+B[0-9]+ to receive its send \(blocking transfers\)" "$ERR" "naming the send nobody receives"
run "$OCTOPIPE" sim --comm sideways "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-1f1b.json"
expect_rc 2 "--comm takes overlap or blocking"

# a per-op overhead (cluster op_overhead_us) is paid by every op: the tiny plan's critical
# path holds more than three ops, so 1 ms per op makes it at least 3 ms longer
python3 - "$top_srcdir/tests/data" "$T" <<'PY'
import json, sys
d, t = sys.argv[1], sys.argv[2]
c = json.load(open(f"{d}/tiny-cluster.json")); c["op_overhead_us"] = 1000
json.dump(c, open(f"{t}/oh-cluster.json", "w"))
p = json.load(open(f"{d}/tiny-plan.json")); p["model"] = f"{d}/tiny-model.json"; p["cluster"] = f"{t}/oh-cluster.json"
json.dump(p, open(f"{t}/oh-plan.json", "w"))
PY
run "$OCTOPIPE" check "$T/oh-cluster.json"
expect_match "; 1000 us per op" "$OUT" "check shows a cluster's per-op overhead"
run "$OCTOPIPE" sim --json "$T/oh-plan.json"
with=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["makespan_ms"])')
run "$OCTOPIPE" sim --json "$data/tiny-plan.json"
without=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["makespan_ms"])')
if awk -v a="$with" -v b="$without" 'BEGIN { exit !(a >= b + 3 - 1e-9) }'; then
    ok "a 1 ms per-op overhead lengthens the tiny plan by at least 3 ms ($without -> $with ms)"
else
    not_ok "a per-op overhead lengthens the iteration" "$without -> $with"
fi

# a gpu that works a little in every column is partly idle (':'), not a bubble (issue 28:
# `sim --gantt` drew a 6%-busy gpu as all idle; the UI's chart follows the same rule)
run "$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 64 --partition 1,13,13,13 -o "$T/skew.json"
expect_rc 0 "a plan whose gpu0 holds 1 layer of 40"
run "$OCTOPIPE" sim --gantt --width 80 "$T/skew.json"
expect_rc 0 "sim --gantt of it"
# a width the chart cannot draw is refused, not drawn at 10 columns without a word
run "$OCTOPIPE" sim --gantt --width 9 "$T/skew.json"
expect_rc 2 "sim --gantt --width 9 exits 2"
expect_match "^octopipe sim: --width: '9' is not an integer in \[10, 1000000\]" "$ERR" "naming the range: $ERR"
run "$OCTOPIPE" sim --gantt --width 80 "$T/skew.json"
row=$(printf '%s\n' "$OUT" | grep '^gpu0 ')
n=$(printf '%s' "$row" | tr -cd ':' | wc -c)
if [ "$n" -ge 40 ]; then ok "the lightly busy gpu0 shows ':' where it works ($n columns)"
else not_ok "the lightly busy gpu0 is not drawn all idle" "$row"; fi
expect_match ': partly idle' "$OUT" "and the legend says what ':' is"

# the memory-aware bound on a real model where the head's W backlog decides it:
# nemotronh-8b at 32K tokens keeps 8.9 GB a microbatch for the head's W, and the head's
# device has room for 14 of them, so it cannot leave its W ops for the drain: 9723.0 ms
# where the tight bound says 8935.5; and no plan that fits is faster (the tuned one and
# every baseline that fits)
run "$OCTOPIPE" tune --model nemotronh-8b-seq32k --cluster 16xH200 --microbatches 32 --layout pp --evals 200 --quiet \
    -o "$T/n32.json"
expect_rc 0 "tune nemotronh-8b-seq32k on 16 H200s"
run "$OCTOPIPE" sim "$T/n32.json"
usable=$(printf '%s\n' "$OUT" | awk '/^ *[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%/ {print $(NF-1), $NF}' | sort -u | wc -l)
if [ "$usable" = 1 ]; then ok "sim's USABLE column reads the same on every device"
else not_ok "one USABLE in sim's table" "$OUT"; fi
nfit=0; nslow=0
for f in "$T/n32.json" 1f1b zb-h1 zb-v interleaved dualpipev adaptive; do
    if [ "$f" != "$T/n32.json" ]; then
        "$OCTOPIPE" plan --model nemotronh-8b-seq32k --cluster 16xH200 --microbatches 32 --schedule "$f" \
            -o "$T/nb.json" >/dev/null 2>&1
        f="$T/nb.json"
    fi
    "$OCTOPIPE" sim --json "$f" > "$T/nm.json" 2>/dev/null
    r=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("%d %d %.1f %.1f" % (not j["oom"], j["makespan_ms"] >= j["lower_bound_memory_ms"] * (1 - 1e-12), j["lower_bound_memory_ms"], j["lower_bound_tight_ms"]))' "$T/nm.json" 2>/dev/null)
    set -- $r
    [ "${1:-0}" = 1 ] && nfit=$((nfit + 1)) && [ "$2" = 1 ] && nslow=$((nslow + 1))
    bound="$3 $4"
done
if [ "$bound" = "9723.0 8935.5" ]; then ok "the memory-aware bound is 9723.0 ms, the tight one 8935.5"
else not_ok "the memory-aware bound is 9723.0 ms, the tight one 8935.5" "$bound"; fi
if [ "$nfit" -ge 1 ] && [ "$nslow" = "$nfit" ]; then ok "none of the $nfit plans that fit is faster than it"
else not_ok "no plan that fits is faster than the memory-aware bound" "$nslow of $nfit"; fi
# so do compare's header and the TUI's, beside the tight bound
run "$OCTOPIPE" tui --render 200x30 "$T/n32.json"
expect_match 'tight 8\.94 s [0-9.]+%  in memory 9\.72 s [0-9.]+%' "$OUT" "the TUI's header names the memory-aware bound"
run "$OCTOPIPE" compare --model nemotronh-8b-seq32k --cluster 16xH200 --microbatches 32 --layout pp
expect_match 'tight bound 8\.94 s, memory-aware bound 9\.72 s' "$OUT" "compare names the memory-aware bound"
run "$OCTOPIPE" compare --model gpt-13b --cluster 4xH200 --microbatches 8 --layout pp
if printf '%s\n' "$OUT" | grep -q 'memory-aware'; then not_ok "and only where memory binds" "$OUT"
else ok "and only where memory binds"; fi
# the predicted timeline names its plan as seen from the timeline's folder (as run's
# measured one does; it named it from the working directory), and leaves out a name JSON
# cannot hold (a control character was written as \u001b, which check then refused)
mkdir -p "$T/tl/out"
cp "$data/tiny-model.json" "$data/tiny-cluster.json" "$data/tiny-plan.json" "$T/tl/"
(cd "$T" && "$OCTOPIPE" sim --timeline-out tl/out/s.json tl/tiny-plan.json >/dev/null 2>&1)
if python3 -c 'import json,os,sys; t=sys.argv[1]; p=json.load(open(t))["plan"]
assert os.path.samefile(os.path.join(os.path.dirname(t), p), sys.argv[2]), p' \
    "$T/tl/out/s.json" "$T/tl/tiny-plan.json" 2>/dev/null; then
    ok "sim --timeline-out names the plan from the timeline's folder"
else not_ok "sim --timeline-out names the plan from the timeline's folder" "$(grep '"plan"' "$T/tl/out/s.json")"; fi
bad="$(printf 'esc\033[31m.json')"
cp "$T/tl/tiny-plan.json" "$T/tl/$bad"
run "$OCTOPIPE" sim --timeline-out "$T/tl/s2.json" "$T/tl/$bad"
expect_rc 0 "sim of a plan whose name holds a control character"
run "$OCTOPIPE" check "$T/tl/s2.json"
expect_rc 0 "writes a timeline that check accepts"
# the Gantt chart's axis labels stand under their ticks, short: past 100 s they were ms
# in exponent form, 11 characters on ticks 10 apart, each pushed further right and so
# naming the time of a column that had no tick ("0  1.85033e+06 4.07073e+06")
"$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 20000 -o "$T/long.json" >/dev/null 2>&1
run "$OCTOPIPE" sim --gantt "$T/long.json"
if printf '%s\n' "$OUT" | python3 -c '
import sys
lines = sys.stdin.read().split("\n")
i = max(k for k, l in enumerate(lines) if l.lstrip().startswith("++"))
ticks, labels = lines[i], lines[i + 1]
assert "e+" not in labels, labels
assert labels.rstrip().endswith(" s"), labels
words = [(k, w) for k, w in enumerate(labels) if w != " " and (k == 0 or labels[k - 1] == " ")]
for k, _ in words[:-1]:
    assert ticks[k] == "+", (k, ticks, labels)
assert len(words) >= 4, labels
'; then ok "sim --gantt of a 1 hour iteration: labels in s, each under its tick"
else not_ok "sim --gantt of a 1 hour iteration: labels in s, each under its tick" "$(printf '%s\n' "$OUT" | tail -3)"; fi
done_testing
