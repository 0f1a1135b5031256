#!/bin/sh
# Parallel layouts at their edges, from an outside review of issue 11: what a plan with
# a default layout writes, clusters that carry a replica, and how calibrate and the other
# commands treat a plan with a layout.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
T="$TMPDIR_TEST"
M="$top_srcdir/samples/models"
C="$top_srcdir/samples/clusters"

# a layout option that names the default layout changes nothing in the file written
run "$OCTOPIPE" plan --model "$M/llama2-7b.json" --cluster "$C/8xH200.json" --schedule 1f1b --microbatches 8 \
    --embed -o "$T/plain.json"
expect_rc 0 "a pipeline-only plan, embedded"
run "$OCTOPIPE" plan --model "$M/llama2-7b.json" --cluster "$C/8xH200.json" --schedule 1f1b --microbatches 8 \
    --tp 1 --dp 1 --embed -o "$T/tp1.json"
expect_rc 0 "the same with --tp 1 --dp 1"
if cmp -s "$T/plain.json" "$T/tp1.json"; then ok "--tp 1 --dp 1 writes the plan byte-identical"
else not_ok "--tp 1 --dp 1 writes the plan byte-identical" "$(diff "$T/plain.json" "$T/tp1.json" | head -20)"; fi

# a cluster carrying a replica (as one made by parallel_cluster is written) is held to
# the layout's rules: experts sharded over ranks that do not divide the data-parallel
# ones are refused, not simulated (ep 4 > dp 2 divided the experts' memory by zero)
run "$OCTOPIPE" plan --model "$M/deepseek-v2-lite.json" --cluster "$C/8xH200.json" --schedule 1f1b --microbatches 8 \
    --embed -o "$T/moe.json"
for rep in '"tp":1,"dp":2,"ep":4,"zero":3' '"tp":1,"dp":4,"ep":3,"zero":0'; do
    python3 - "$T/moe.json" "$T/rep.json" "$rep" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["cluster"]["replica"] = json.loads("{" + sys.argv[3] + ',"dp_gbytes_per_s":450,"dp_latency_us":5}')
json.dump(p, open(sys.argv[2], "w"))
PY
    run "$OCTOPIPE" sim "$T/rep.json"
    expect_rc 2 "a cluster's replica {$rep} is refused"
    expect_match 'cluster\.replica\.ep: ' "$ERR" "at its path: $ERR"
done

# calibrate on a plan with a layout and recompute: an exact (emulated) run fits factors
# of 1, and the model written is the file's own at its own TP degree, rescaled, which
# the plan then re-prices at its layout as before
run "$OCTOPIPE" plan --model "$M/llama2-7b.json" --cluster "$C/8xH200.json" --schedule 1f1b --microbatches 8 \
    --tp 2 --dp 2 --recompute selective -o "$T/cal.json"
expect_rc 0 "a plan at tp 2 x dp 2 recomputing selectively"
run "$OCTOPIPE" run "$T/cal.json" --timeline-out "$T/cal.tl.json"
expect_rc 0 "runs on the emulator"
run "$OCTOPIPE" calibrate "$T/cal.tl.json" --json -o "$T/cal.model.json"
expect_rc 0 "calibrate from its run"
if printf '%s' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert abs(r["before"]["error"]) < 0.005 and abs(r["after"]["error"]) < 0.005, (r["before"], r["after"])
for s in r["stages"]:
    assert abs(s["f"] - 1) < 0.005 and abs(s["b"] - 1) < 0.005, s'; then
    ok "the recomputing backward is predicted with its redone forward: factors 1, no error after"
else not_ok "calibrate of a recomputing plan" "$OUT"; fi
if python3 - "$M/llama2-7b.json" "$T/cal.model.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert b["source"]["tp"] == a["source"]["tp"], b["source"]["tp"]
for x, y in zip(a["layers"], b["layers"]):
    assert x.get("param_bytes") == y.get("param_bytes"), (x.get("param_bytes"), y.get("param_bytes"))
    assert abs(x["f_ms"] - y["f_ms"]) <= 0.005 * x["f_ms"], (x["f_ms"], y["f_ms"])
PY
then ok "the model written is the file's own table (tp 1), not the tp 2 replica's"
else not_ok "calibrate writes the file's own table"; fi

"$OCTOPIPE" plan --model "$M/llama2-7b.json" --cluster "$C/8xH200.json" --schedule 1f1b --microbatches 8 --tp 2 \
    --partition 4,10,10,10 -o "$T/cal4.json" >/dev/null 2>&1
"$OCTOPIPE" run "$T/cal4.json" --timeline-out "$T/cal4.tl.json" >/dev/null 2>&1
run "$OCTOPIPE" calibrate "$T/cal4.tl.json" --fit-overhead --cluster-out "$T/cal4.cluster.json" -o "$T/cal4.model.json"
expect_rc 0 "calibrate --fit-overhead of a tp 2 plan"
if [ "$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(c["devices"], "replica" in c)' \
       "$T/cal4.cluster.json")" = "8 False" ]; then
    ok "--cluster-out writes the file's cluster of 8 GPUs, not the replica of 4 pipeline devices"
else not_ok "--cluster-out writes the file's cluster" "$(cat "$T/cal4.cluster.json")"; fi

# tune held to a TP degree a measured table (no architecture) cannot be priced at: the
# same input error as plan's, not "no layout fits ... inf GB"
run "$OCTOPIPE" tune --model "$M/gpt-13b.json" --cluster "$C/8xH200.json" --microbatches 8 --tp 2 --quiet \
    -o "$T/x.json"
expect_rc 2 "tune --tp 2 of a table without an architecture: bad input"
expect_match 'has no architecture .* cannot be priced at tp 2' "$ERR" "and says why: $ERR"
run "$OCTOPIPE" tune --model "$M/gpt-13b.json" --cluster "$C/8xH200.json" --microbatches 8 --quiet -o "$T/x.json"
expect_rc 0 "without --tp the search skips the degrees it cannot price"

# ... but where the table's own degree leaves more pipeline stages than the model has layers
# (28 layers on 32 GPUs, a batch of 1 that no data parallelism splits), that is the reason,
# not the last TP degree the search met ("cannot be priced at tp 8")
run "$OCTOPIPE" tune --model "$M/deepseek-16b.json" --cluster "$C/32xH200.json" --microbatches 1 -o "$T/x.json"
expect_rc 2 "a table at tp 1, 32 GPUs, a global batch of 1: bad input"
expect_match "^octopipe tune: model 'deepseek-16b' has no architecture \(a measured or hand-made table at tp 1\), so only tp 1 can be priced, and at tp 1 the 32 GPUs need at least 32 pipeline stages \(dp 1: a global batch of 1 sequence splits over no more replicas here\), more than the model's 28 layers: give a larger global batch" "$ERR" "says why: $ERR"
if printf '%s\n' "$ERR" | grep -q 'priced at tp 8'; then not_ok "and not the last degree tried" "$ERR"
else ok "and not the last degree tried"; fi
# the TUI's start says the search's words as tune does, named by its command
run "$OCTOPIPE" tui --model "$M/deepseek-16b.json" --cluster "$C/32xH200.json" --microbatches 1 </dev/null
expect_rc 2 "the tui on the same input: bad input"
expect_match "^octopipe tui: model 'deepseek-16b' has no architecture" "$ERR" "named by its command: $ERR"
run "$OCTOPIPE" tui --model "$M/llama2-70b.json" --cluster "$C/8xH200.json" --microbatches 8 --tp 3 </dev/null
expect_rc 2 "the tui with a degree no layout meets"
expect_match "^octopipe tui: no parallel layout of cluster '8xH200'" "$ERR" "says so, named: $ERR"
run "$OCTOPIPE" tune --model "$M/deepseek-16b.json" --cluster "$C/32xH200.json" --microbatches 3 -o "$T/x.json"
expect_match 'at least 32 pipeline stages \(dp 1: a global batch of 3 sequences' "$ERR" "3 sequences split over no 2 or 4 replicas: $ERR"
run "$OCTOPIPE" tune --model "$M/deepseek-16b.json" --cluster "$C/32xH200.json" --microbatches 1 --global-batch 4 \
    --quiet -o "$T/x.json"
expect_rc 0 "with a global batch of 4 (dp 4 x pp 8) it tunes"
run "$OCTOPIPE" tune --model "$M/deepseek-16b.json" --cluster "$C/32xH200.json" --microbatches 4 --dp 1 -o "$T/x.json"
expect_match 'at least 32 pipeline stages \(dp 1, as --dp holds it\), more than the model.s 28 layers: give more --dp or a cluster' "$ERR" "held to --dp 1, the reason is --dp, not the batch: $ERR"
# a table at micro-batch 2 cannot split its one microbatch of 2 sequences over 2 replicas
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); m["micro_batch_size"]=2; json.dump(m,open(sys.argv[2],"w"))' \
    "$M/deepseek-16b.json" "$T/ds2.json"
run "$OCTOPIPE" tune --model "$T/ds2.json" --cluster "$C/32xH200.json" --microbatches 1 -o "$T/x.json"
expect_match 'only tp 1 can be priced, and at tp 1 the 32 GPUs need at least 32 pipeline stages \(dp 1' "$ERR" "counted in whole microbatches: $ERR"
run "$OCTOPIPE" tune --model "$M/deepseek-16b.json" --cluster "$C/32xH200.json" --microbatches 1 --tp 1 -o "$T/x.json"
expect_rc 2 "held to --tp 1"
expect_match "^octopipe tune: no parallel layout of cluster '32xH200' \(32 GPUs, 8 per node\) meets the given degrees: tp 1, a global batch of 1 microbatch: at tp 1 the 32 GPUs need at least 32 pipeline stages" "$ERR" "names the constraints and the depth: $ERR"
run "$OCTOPIPE" tune --model "$M/deepseek-16b.json" --cluster "$C/32xH200.json" --microbatches 1 --layout pp -o "$T/x.json"
expect_rc 2 "pure pipeline parallelism over more GPUs than layers"
expect_match "^octopipe tune: model 'deepseek-16b' has fewer layers \(28\) than cluster '32xH200' has devices \(32\)$" "$ERR" "one line that names the command: $ERR"
run "$OCTOPIPE" compare --model "$M/deepseek-16b.json" --cluster "$C/32xH200.json" --microbatches 1 --layout pp
expect_rc 2 "compare where no schedule applies: bad input, not 'infeasible'"
expect_match "^octopipe compare: no schedule applies to deepseek-16b on 32xH200 at 1 microbatch: each row says why$" "$ERR" "says so: $ERR"
expect_match "tuned .*n/a: model 'deepseek-16b' has fewer layers" "$OUT" "and the tuned row says why"

# the SVG Gantt of a plan with a layout says how many GPUs it uses, not its pipeline devices
run "$OCTOPIPE" export svg "$T/cal.json" -o "$T/cal.svg"
expect_rc 0 "export svg of a tp 2 x dp 2 plan"
if grep -q '2 stages on 2 pipeline devices (pp 2 x tp 2 x dp 2 = 8 GPUs' "$T/cal.svg"; then
    ok "its title line names the layout and its 8 GPUs"
else not_ok "the SVG's title line names the layout" "$(grep -o 'stages on [^<]*' "$T/cal.svg")"; fi

# run and calibrate compare a measurement with the prediction of what the executor runs:
# one replica's pipeline, without the data-parallel sync (here 85 ms of 740 exposed)
run "$OCTOPIPE" plan --model "$M/llama2-7b.json" --cluster "$C/64xH200.json" --schedule 1f1b --microbatches 4 \
    --dp 16 -o "$T/dp16.json"
expect_rc 0 "a plan at dp 16, its ring between nodes"
run "$OCTOPIPE" run --json "$T/dp16.json" --timeline-out "$T/dp16.tl.json"
expect_rc 0 "runs on the emulator"
if printf '%s' "$OUT" | python3 -c 'import json, sys; r = json.load(sys.stdin); assert abs(r["error"]) < 0.01, r'; then
    ok "run: the prediction of the emulated run is within 1%"
else not_ok "run: prediction error of a dp 16 plan" "$OUT"; fi
run "$OCTOPIPE" calibrate --json "$T/dp16.tl.json" -o "$T/dp16.model.json"
if printf '%s' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert abs(r["before"]["error"]) < 0.01 and abs(r["after"]["error"]) < 0.01, r'; then
    ok "calibrate: so is its prediction before and after"
else not_ok "calibrate: prediction error of a dp 16 plan" "$OUT"; fi
run "$OCTOPIPE" report "$T/dp16.json" --timeline "$T/dp16.tl.json" -o "$T/dp16.html"
expect_rc 0 "report with the measured timeline"
expect_match 'error [+-]0\.[0-9]% \(predicted' "$(grep -o 'iteration: predicted[^<]*' "$T/dp16.html")" \
    "report: so is the predicted iteration it sets against the measured one"

# memory past 2^64 bytes (a model the loader takes: 2^62 bytes of weights, whose Adam
# states are 6 times that) saturates in the metrics instead of wrapping to 0
python3 - "$T/huge.json" "$T/one.json" "$C/8xH200.json" <<'PY'
import json, sys
layer = {"kind": "a", "f_ms": 1, "b_ms": 1, "w_ms": 1, "param_bytes": 2**53, "out_bytes": 1000}
json.dump({"format": "octopipe.model/1", "name": "huge", "seq_len": 1024, "layers": [layer] * 511},
          open(sys.argv[1], "w"))
c = json.load(open(sys.argv[3]))
c.update(name="one", devices=1, gpus_per_node=1)
c.pop("inter_node", None)
json.dump(c, open(sys.argv[2], "w"))
PY
"$OCTOPIPE" plan --model "$T/huge.json" --cluster "$T/one.json" --schedule gpipe --microbatches 1 -o "$T/huge.plan.json" \
    >/dev/null 2>&1
"$OCTOPIPE" sim --json "$T/huge.plan.json" >"$T/huge.sim.json" 2>/dev/null
if python3 - "$T/huge.sim.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
b = d["memory_breakdown"]
assert d["peak_mem_bytes"] >= 1.8e19 and b["optimizer"] >= 1.8e19 and b["peak"] >= 1.8e19, d
PY
then ok "a peak and optimizer state past 2^64 bytes saturate"
else not_ok "memory past 2^64 bytes" "$(cat "$T/huge.sim.json" | head -c 600)"; fi

# Megatron-LM splits attention's key-value heads (query groups) over the TP ranks too:
# qwen3-next has 16 query heads but 2 key-value heads, so tp 4 is no layout of it
run "$OCTOPIPE" plan --model "$M/qwen3-next-80b-a3b.json" --cluster "$C/32xH200.json" --schedule 1f1b --microbatches 8 \
    --tp 4 --dp 2 -o "$T/x.json"
expect_rc 2 "tp 4 of a model with 2 key-value heads is refused"
expect_match 'has 2 key-value heads, which 4 tensor-parallel ranks cannot split evenly' "$ERR" "and says why: $ERR"
run "$OCTOPIPE" plan --model "$M/qwen3-next-80b-a3b.json" --cluster "$C/32xH200.json" --schedule 1f1b --microbatches 8 \
    --tp 2 --dp 2 -o "$T/x.json"
expect_rc 0 "tp 2 splits them"

# export megatron-args asks for the precision the memory model and the sync assume: bf16
# weights and bf16 gradients (Megatron-LM's bf16 default accumulates and all-reduces the
# gradients in fp32: 2 more bytes per parameter and twice the data-parallel traffic)
run "$OCTOPIPE" export megatron-args "$T/cal.json"
expect_rc 0 "export megatron-args of a tp 2 x dp 2 plan"
for flag in '--bf16' '--grad-reduce-in-bf16'; do
    expect_match "^$flag( \\\\)?\$" "$OUT" "megatron-args: $flag"
done

# with experts over several ranks the simulator prices an all-to-all per MoE layer, which
# Megatron-LM runs only with the alltoall dispatcher (its default gathers every token)
run "$OCTOPIPE" plan --model "$M/deepseek-v2-lite.json" --cluster "$C/8xH200.json" --schedule 1f1b --microbatches 8 \
    --dp 4 --ep 4 -o "$T/ep.json"
expect_rc 0 "deepseek-v2-lite at dp 4 x ep 4"
run "$OCTOPIPE" export megatron-args "$T/ep.json"
expect_match '^--moe-token-dispatcher-type alltoall( \\)?$' "$OUT" "megatron-args: the all-to-all dispatcher"
run "$OCTOPIPE" export megatron-args "$T/cal.json"
if printf '%s\n' "$OUT" | grep -q -- '--moe-token-dispatcher-type'; then not_ok "no dispatcher without expert parallelism"
else ok "no dispatcher without expert parallelism"; fi

# expert parallelism of a model without routed experts: Megatron-LM refuses
# --expert-model-parallel-size without experts, so no plan or search offers it
run "$OCTOPIPE" plan --model "$M/llama2-7b.json" --cluster "$C/8xH200.json" --schedule 1f1b --microbatches 8 \
    --dp 2 --ep 2 -o "$T/x.json"
expect_rc 2 "plan --ep 2 of a dense model is refused"
expect_match "ep 2: model 'llama2-7b' has no routed experts" "$ERR" "and says why: $ERR"
run "$OCTOPIPE" tune --model "$M/llama2-7b.json" --cluster "$C/8xH200.json" --microbatches 8 --ep 2 --quiet -o "$T/x.json"
expect_rc 2 "so is tune --ep 2"

# export megatron-args as Megatron-LM (the versions with --pipeline-model-parallel-layout)
# reads it: the layout sets the virtual pipeline size itself (its stage count over
# --pipeline-model-parallel-size) and validate_args refuses another virtual-stage flag
# beside it; there is no --virtual-pipeline-model-parallel-size argument to give
run "$OCTOPIPE" plan --model "$M/llama2-7b.json" --cluster "$C/16xH200.json" --schedule interleaved --chunks 2 \
    --microbatches 8 --tp 2 --dp 2 -o "$T/il.json"
expect_rc 0 "an interleaved pp 4 x tp 2 x dp 2 plan"
run "$OCTOPIPE" export megatron-args "$T/il.json"
expect_rc 0 "export megatron-args of it"
expect_match '^--pipeline-model-parallel-layout "Et\*4\|(t\*4\|){6}t\*4L"$' "$OUT" "the layout holds the 8 virtual stages"
if printf '%s\n' "$OUT" | grep -q -- '--virtual-pipeline-model-parallel-size\|--num-virtual-stages-per-pipeline-rank\|--num-layers-per-virtual-pipeline-stage'
then not_ok "no virtual-stage flag beside the layout" "$OUT"; else ok "no virtual-stage flag beside the layout"; fi

# the pipeline size is the ranks the layout's stages go round: a pipeline-only plan on 4
# of 8 GPUs is pp 4 (a layout of 4 stages under --pipeline-model-parallel-size 8 fails
# Megatron-LM's check that the stages divide over the ranks), and a plan whose
# "parallel" says pp 4 while its stages use 2 devices cannot be written for Megatron-LM
run "$OCTOPIPE" plan --model "$M/llama2-7b.json" --cluster "$C/8xH200.json" --schedule 1f1b --microbatches 8 \
    --devices 4 -o "$T/d4.json"
run "$OCTOPIPE" export megatron-args "$T/d4.json"
expect_rc 0 "export megatron-args of a plan on 4 of 8 GPUs"
expect_match '^--pipeline-model-parallel-size 4( \\)?$' "$OUT" "its pipeline size is the 4 devices its stages use"
expect_match '^# Megatron-LM arguments for .*: pp 4 x tp 1 x dp 1 = 4 GPUs' "$OUT" "and its header counts 4 GPUs"
python3 - "$T/il.json" "$T/pp4of2.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["stages"] = [{"layers": [0, 16], "device": 0}, {"layers": [17, 33], "device": 1}]
p["schedule"] = [["0F%d" % i for i in range(8)] + ["0B%d" % i for i in range(8)],
                 [x for i in range(8) for x in ("1F%d" % i, "1B%d" % i)], [], []]
p["split_backward"] = False
json.dump(p, open(sys.argv[2], "w"))
PY
run "$OCTOPIPE" export megatron-args "$T/pp4of2.json"
expect_rc 2 "a pp 4 plan whose stages use 2 devices is refused"
expect_match "pp4of2.json: parallel.pp: 4 pipeline ranks but the stages use 2" "$ERR" "in one line naming the file and the field: $ERR"

# a layer table made with octopipe cost --recompute already prices full recompute (its
# stages carry no mode of their own): Megatron-LM must be told to recompute too
run "$OCTOPIPE" cost "$top_srcdir/samples/architectures/llama2-7b.json" --cluster "$C/16xH200.json" --recompute \
    -o "$T/l7rc.json"
expect_rc 0 "a llama2-7b table made with full recompute"
run "$OCTOPIPE" plan --model "$T/l7rc.json" --cluster "$C/16xH200.json" --schedule 1f1b --microbatches 8 --tp 2 --dp 2 \
    -o "$T/l7rc-plan.json"
run "$OCTOPIPE" export megatron-args "$T/l7rc-plan.json"
expect_rc 0 "export megatron-args of a plan on it"
expect_match '^--recompute-granularity full( \\)?$' "$OUT" "asks Megatron-LM for full recompute"
# and recomputing it again is refused by tune and compare as plan and sim refuse it, not
# reported as 'no parallel layout ... meets the given degrees'
for cmd in tune compare; do
    run "$OCTOPIPE" $cmd --model "$T/l7rc.json" --cluster "$C/16xH200.json" --microbatches 8 --recompute selective \
        -o "$T/x.json"
    [ $cmd = compare ] && run "$OCTOPIPE" $cmd --model "$T/l7rc.json" --cluster "$C/16xH200.json" --microbatches 8 \
        --recompute selective
    expect_rc 2 "$cmd --recompute selective of a table made with full recompute"
    expect_match "^octopipe $cmd: --recompute selective: the model's layer table already recomputes every layer" "$ERR" \
        "says why: $ERR"
done

# stages recomputing differently: one line naming the file and the stage's JSON path
python3 - "$T/il.json" "$T/mixrc.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); p["stages"][5]["recompute"] = "selective"; json.dump(p, open(sys.argv[2], "w"))
PY
run "$OCTOPIPE" export megatron-args "$T/mixrc.json"
expect_rc 2 "megatron-args refuses stages that recompute differently"
expect_match "mixrc.json: stages\[5\].recompute: 'selective' but stages\[0\] recomputes 'none'" "$ERR" "naming the file and the stage's path: $ERR"

# a layout plan's schedule has one list per pipeline device: a wrong count names the
# layout's devices, not the replica's as the cluster's (cluster '16xH200' has 4 devices)
python3 - "$T/il.json" "$T/sched5.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); p["schedule"].append([]); json.dump(p, open(sys.argv[2], "w"))
PY
run "$OCTOPIPE" check "$T/sched5.json"
expect_rc 2 "a pp 4 plan with 5 schedule lists"
expect_match "sched5.json: schedule: has 5 device lists but the layout has 4 pipeline devices$" "$ERR" "says so: $ERR"

# out of memory under a layout: the device is a pipeline rank, and its memory per GPU
run "$OCTOPIPE" plan --model "$M/llama2-70b.json" --cluster "$C/16xH200.json" --schedule gpipe --microbatches 32 \
    --tp 2 --dp 2 -o "$T/oom.json"
expect_rc 3 "a gpipe plan of llama2-70b at pp 4 x tp 2 x dp 2 does not fit"
run "$OCTOPIPE" check "$T/oom.json"
expect_rc 3 "check says so"
expect_match "oom.json: plan infeasible: pipeline rank 0 needs [0-9.]+ GB per GPU at its peak but has [0-9.]+ GB usable \\(other ranks too\\)$" \
    "$ERR$OUT" "naming the pipeline rank and the memory per GPU: $ERR$OUT"

# the TUI on a plan with a layout (last: without tmux the rest of the file is skipped)
TUI_NAME=paredge
. "$top_srcdir/tests/tuilib.sh"
start 160 30 -- tui "$T/cal.json"
expect 'llama2-7b on 8xH200 \(pp 2 x tp 2 x dp 2 = 8 gpus' "the header names the layout and the GPUs it uses"
expect_not '\(2 gpus\)' "not the replica's 2 pipeline devices as its gpus"
# a run from the TUI sets the measured iteration against the same prediction as run does
start 160 40 -- tui --time-scale 0 --iters 1 "$T/dp16.json"
expect '^pp0 ' "the TUI opens the dp 16 plan (its rows are pipeline ranks)"
keys R
expect 'run done: 1 iterations, measured [0-9.]+ m?s vs predicted [0-9.]+ m?s' "a run from the TUI ends" 30
line=$(screen | grep -o 'run done: .*')
if printf '%s\n' "$line" | python3 -c '
import re, sys
m = re.search(r"measured ([0-9.]+) (m?s) vs predicted ([0-9.]+) (m?s)", sys.stdin.read())
f = lambda v, u: float(v) * (1 if u == "ms" else 1000)
a, b = f(m[1], m[2]), f(m[3], m[4])
assert abs(b - a) <= 0.01 * a, (a, b)'; then
    ok "the predicted iteration it shows leaves out the sync the run has not: $line"
else not_ok "the TUI's run prediction" "$line"; fi
keys q
stop_server

# a cluster whose GPUs are not whole nodes: check accepts it, and the layout search says
# why no layout exists (it said 'meets the given degrees' with none given)
sed 's/"gpus_per_node": 8/"gpus_per_node": 3/' "$top_srcdir/samples/clusters/64xH200.json" > "$T/gpn3.json"
run "$OCTOPIPE" tune --model gpt-13b --cluster "$T/gpn3.json" --microbatches 64 --budget 1 -o "$T/gpn3-plan.json"
expect_rc 2 "tune on 64 GPUs in nodes of 3: exit 2"
expect_match "its 64 GPUs are not whole nodes of 3 \(gpus_per_node\)" "$ERR" "naming gpus_per_node"
# but a cluster of part of a node has layouts (4 GPUs of 8: pp x dp), so where degrees are
# given and none fits, the degrees are the reason, not the nodes
run "$OCTOPIPE" compare --model gpt-13b --cluster 4xH200 --microbatches 8 --dp 3
expect_rc 2 "compare --dp 3 on 4 of a node's 8 GPUs: exit 2"
expect_match "meets the given degrees: dp 3" "$ERR" "naming the degree given"
if printf '%s' "$ERR" | grep -q "not whole nodes"; then not_ok "not the nodes, which have layouts" "$ERR"
else ok "not the nodes, which have layouts"; fi
# memory so tight that the textbook partitions but one do not fit (gemma3-12b on 3 H100s: the embedding's
# and the head's optimizer states sit on the end stages): a partition balanced within
# memory does, at full recompute, so tune finds a plan where it said 'no layout fits'
cat > "$T/3xH100.json" <<'JSON'
{"format": "octopipe.cluster/1", "name": "3xH100", "gpu": "H100", "devices": 3, "gpus_per_node": 3,
 "mem_bytes": 80000000000, "mem_headroom": 0.05, "speed": 1, "intra_node": {"gbytes_per_s": 450, "latency_us": 5}}
JSON
for part in balanced megatron; do
    run "$OCTOPIPE" plan --model gemma3-12b --cluster "$T/3xH100.json" --schedule 1f1b --microbatches 7 \
        --recompute full --partition "$part" -o "$T/g3-$part.json"
    expect_rc 3 "1f1b $part at full recompute does not fit"
done
run "$OCTOPIPE" plan --model gemma3-12b --cluster "$T/3xH100.json" --schedule 1f1b --microbatches 7 \
    --recompute full --partition memory -o "$T/g3-mem.json"
expect_rc 0 "1f1b --partition memory at full recompute fits"
run "$OCTOPIPE" plan --model gemma3-12b --cluster "$T/3xH100.json" --schedule 1f1b --microbatches 7 \
    --partition memory -o "$T/g3-mem0.json"
expect_rc 3 "without recompute nothing fits: the least peak, said"
expect_match 'plan infeasible: device [0-9] needs 8[0-9.]* GB' "$ERR" "by how much: $ERR"
run "$OCTOPIPE" plan --model gemma3-12b --cluster "$T/3xH100.json" --schedule zb-v --microbatches 7 \
    --partition memory -o "$T/g3-v.json"
expect_rc 2 "--partition memory with two stages a device: a usage error"
expect_match 'one stage a device' "$ERR" "saying why: $ERR"
run "$OCTOPIPE" tune --model gemma3-12b --cluster "$T/3xH100.json" --microbatches 7 --budget 1 -o "$T/g3-tuned.json"
expect_rc 0 "tune finds a layout that fits"
expect_match 'recompute full' "$OUT$ERR" "recomputing: $OUT$ERR"
run "$OCTOPIPE" sim "$T/g3-tuned.json"
expect_rc 0 "its plan fits"
done_testing
