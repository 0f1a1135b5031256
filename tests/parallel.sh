#!/bin/sh
# Parallel layouts on the command line: plan / sim / tune with --tp --dp --ep --zero
# --recompute, the layout search (the README's two acceptance runs fit, the published
# PP 8 scaling layouts are expressible), what sim reports for them, and the refusals.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
T="$TMPDIR_TEST"
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

# plan with a layout: written as "parallel", stages recompute, sim reports it
run "$OCTOPIPE" plan --model llama2-70b --cluster 64xH200 --schedule 1f1b --microbatches 16 --tp 4 --dp 2 \
    --zero 1 --recompute selective -o "$T/l.json"
expect_rc 0 "plan --tp 4 --dp 2 --zero 1 --recompute selective"
par=$(jget "$T/l.json" 'd["parallel"]')
if [ "$par" = "{'pp': 8, 'tp': 4, 'dp': 2, 'ep': 1, 'zero': 1}" ]; then ok "the plan holds the layout: $par"
else not_ok "the plan holds the layout" "$par"; fi
if [ "$(jget "$T/l.json" 'sorted(set(s.get("recompute") for s in d["stages"]))')" = "['selective']" ]; then
    ok "every stage recomputes selectively"; else not_ok "every stage recomputes selectively"; fi
if [ "$(jget "$T/l.json" 'd["model"]')" = "../../..$top_srcdir/samples/models/llama2-70b.json" ] ||
   jget "$T/l.json" 'd["model"]' | grep -q 'samples/models/llama2-70b.json$'; then
    ok "it refers to the model file itself, not a re-priced copy"; else not_ok "model reference"; fi
run "$OCTOPIPE" sim "$T/l.json"
expect_rc 0 "it simulates"
expect_match '^layout pp 8 x tp 4 x dp 2 = 64 GPUs \(ep 1, ZeRO 1\); data-parallel sync .* exposed$' "$OUT" \
    "sim names the layout and the exposed sync"
expect_match '^memory per GPU of pp [0-9]+: weights .*, grads .*, optimizer .*, activations ' "$OUT" \
    "and the memory breakdown"
"$OCTOPIPE" sim --json "$T/l.json" >"$T/l.sim.json"
if python3 - "$T/l.sim.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
d = m["devices"][0]["memory_breakdown"]
assert m["dp_sync_ms"] > 0, m["dp_sync_ms"]
assert abs(d["weights"] + d["grads"] + d["optimizer"] + d["activations"] - d["peak"]) <= 4, d
assert d["optimizer"] < 6 * d["weights"], d          # ZeRO-1: 12 bytes / 2 replicas vs 2
PY
then ok "sim --json: dp_sync_ms and a memory_breakdown that adds up, optimizer sharded"
else not_ok "sim --json breakdown"; fi

# export megatron-args: the flags of the layout, the partition and the batch
run "$OCTOPIPE" export megatron-args "$T/l.json"
expect_rc 0 "export megatron-args"
for flag in '--pipeline-model-parallel-size 8' '--tensor-model-parallel-size 4' '--sequence-parallel' \
    '--use-distributed-optimizer' '--overlap-grad-reduce' '--recompute-granularity selective' \
    '--recompute-modules core_attn' '--num-layers 80' '--seq-length 4096' '--global-batch-size 32' \
    '--pipeline-model-parallel-layout "Et\*10\|(t\*10\|){6}t\*10L"'; do
    expect_match "^$flag( \\\\)?\$" "$OUT" "megatron-args: $flag"
done
if printf '%s\n' "$OUT" | grep -q -- '--expert-model-parallel-size\|--use-megatron-fsdp'; then
    not_ok "no EP or FSDP flags for a dense ZeRO-1 plan"; else ok "no EP or FSDP flags for a dense ZeRO-1 plan"; fi
# a multi-token-prediction module is Megatron-LM's 'm', not a decoder layer: --num-layers
# counts the decoder layers alone and --mtp-num-layers the modules (DeepSeek-V3: 61 and 1)
python3 - "$top_srcdir/tests/data/tiny-model.json" "$T/mtp-model.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
mtp = dict(m["layers"][1], kind="mtp")
m["layers"] = [dict(m["layers"][0], kind="embedding"), m["layers"][1], m["layers"][1], mtp,
               dict(m["layers"][3], kind="head")]
json.dump(m, open(sys.argv[2], "w"))
PY
"$OCTOPIPE" plan --model "$T/mtp-model.json" --cluster "$top_srcdir/tests/data/tiny-cluster.json" --schedule 1f1b \
    --microbatches 4 --partition 2,3 -o "$T/mtp.json" >/dev/null 2>&1
run "$OCTOPIPE" export megatron-layout "$T/mtp.json"
expect_match '^Et\|tmL$' "$OUT" "megatron-layout: the MTP module is 'm' ($OUT)"
run "$OCTOPIPE" export megatron-args "$T/mtp.json"
expect_match '^--num-layers 2 ' "$OUT" "megatron-args: --num-layers leaves the MTP module out"
expect_match '^--mtp-num-layers 1 ' "$OUT" "megatron-args: --mtp-num-layers 1"
"$OCTOPIPE" plan --model qwen3-next-80b-a3b --cluster 32xH200 --schedule 1f1b --microbatches 8 --tp 2 --dp 4 \
    --ep 4 --zero 3 -o "$T/q.json" >/dev/null 2>&1
run "$OCTOPIPE" export megatron-args "$T/q.json"
expect_match '^--expert-model-parallel-size 4 ' "$OUT" "megatron-args: EP"
expect_match '^--data-parallel-sharding-strategy optim_grads_params ' "$OUT" "megatron-args: ZeRO 3 as Megatron-FSDP"
# Megatron-LM's validate_args: "Megatron FSDP only supports fsdp_dtensor checkpoint format"
expect_match '^--ckpt-format fsdp_dtensor ' "$OUT" "megatron-args: Megatron-FSDP with the checkpoint format it requires"
python3 - "$T/l.json" "$T/mixed.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); p["stages"][3]["recompute"] = "full"; json.dump(p, open(sys.argv[2], "w"))
PY
run "$OCTOPIPE" export megatron-args "$T/mixed.json"
expect_rc 2 "megatron-args refuses stages that recompute differently"
expect_match "mixed.json: stages\[3\].recompute: 'full' but" "$ERR" "and names the file and the stage's path"

# re-pricing a plan under another layout keeps its stages and orders
run "$OCTOPIPE" sim --zero 0 --recompute none --json "$T/l.json"
z0=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["memory_breakdown"]["optimizer"])')
z1=$(jget "$T/l.sim.json" 'd["devices"][0]["memory_breakdown"]["optimizer"]')
if awk -v a="$z0" -v b="$z1" 'BEGIN { exit !(a > 1.99 * b && a < 2.01 * b) }'; then
    ok "sim --zero 0: the optimizer state doubles over 2 replicas ($z1 -> $z0)"; else not_ok "sim --zero 0" "$z0 $z1"; fi

# the published scaling layouts: PP 8 with TP and DP on 16, 32 and 64 GPUs
for g in 16 32 64; do
    # 16 GPUs: 70B over 16 without sharding needs 135 GB at the peak: recompute, as one would
    case $g in 16) tp=2 dp=1 rc=full ;; 32) tp=4 dp=1 rc=none ;; 64) tp=4 dp=2 rc=none ;; esac
    run "$OCTOPIPE" plan --model llama2-70b --cluster ${g}xH200 --schedule interleaved --microbatches 32 \
        --devices 8 --tp $tp --dp $dp --recompute $rc -o "$T/s$g.json"
    expect_rc 0 "PP 8 x TP $tp x DP $dp (recompute $rc) on $g GPUs is expressible and fits"
done

# the layout search: the two runs of the README fit; the first shards over data-parallel
# replicas (with a NIC per GPU a 64-way ring runs at 8 NICs' bandwidth, so sharding the
# weights beats splitting the pipeline: FSDP, as torchtitan trains a 70B on 64 GPUs)
run "$OCTOPIPE" tune --model llama2-70b --cluster 64xH200 --microbatches 64 --quiet -o "$T/t70.json"
expect_rc 0 "tune llama2-70b on 64 H200s"
if [ "$(jget "$T/t70.json" 'd["parallel"]["dp"] > 1 and d["parallel"]["zero"] >= 1')" = True ]; then
    ok "it uses sharded data parallelism: $(jget "$T/t70.json" 'd["parallel"]')"
else not_ok "llama2-70b uses sharded DP" "$(jget "$T/t70.json" 'd.get("parallel")')"; fi
run "$OCTOPIPE" sim "$T/t70.json"
expect_rc 0 "and its plan fits"
# the three layouts with the best estimates are tuned, sharing the budget, and the
# fastest tuned plan is the one written, at its layout
run "$OCTOPIPE" tune --model llama2-70b --cluster 64xH200 --microbatches 64 --evals 600 --verbose -o "$T/t70e.json"
expect_rc 0 "tune llama2-70b with an evaluation budget"
expect_match '^tuning the 3 layouts with the best estimates, sharing the budget left$' "$OUT" "tunes the top 3 layouts"
best=$(printf '%s\n' "$OUT" | sed -n 's/^layout [0-9] of 3 tuned: \([0-9]*\) tokens\/s$/\1/p' | sort -n | tail -1)
chosen="$(printf '%s\n' "$OUT" | sed -n 's/^layout: pp \([0-9]*\) x tp \([0-9]*\) x dp \([0-9]*\) .*/\1 \2 \3/p') $(printf '%s\n' "$OUT" | sed -n 's/^ *the fastest of 3 tuned (\([0-9]*\) tokens\/s).*/\1/p')"
if [ -n "$best" ] && [ "${chosen##* }" = "$best" ]; then ok "the chosen layout is the fastest tuned ($best tokens/s)"
else not_ok "the chosen layout is the fastest tuned" "$OUT"; fi
if [ "$(jget "$T/t70e.json" '"%d %d %d" % (d["parallel"]["pp"], d["parallel"]["tp"], d["parallel"]["dp"])')" = "${chosen% *}" ]; then
    ok "and the plan is written at it ($chosen)"; else not_ok "the plan is at the chosen layout" "$chosen"; fi
# the three are distinct pipelines: a layout that differs from a better-ranked one only in
# its ZeRO stage runs the same pipeline, and tuning it again would halve the others' share
# (llama2-70b on 4096 H200s tuned pp 8 x tp 8 x dp 64 at ZeRO 0 and then at ZeRO 1)
printf '%s' '{"format": "octopipe.cluster/1", "name": "4096xH200", "gpu": "H200", "devices": 4096, "gpus_per_node": 8, "mem_bytes": 141000000000, "mem_headroom": 0.05, "speed": 1, "intra_node": {"gbytes_per_s": 450, "latency_us": 5}, "inter_node": {"gbytes_per_s": 50, "latency_us": 10}}' > "$T/c4096.json"
run "$OCTOPIPE" tune --model llama2-70b --cluster "$T/c4096.json" --global-batch 512 --microbatches 8 --evals 300 --verbose
expect_rc 0 "tune llama2-70b on 4096 H200s"
pipes=$(printf '%s\n' "$OUT" | sed -n 's/^layout [0-9] of [0-9]: \(pp [0-9]* x tp [0-9]* x dp [0-9]*\) (ZeRO [0-9], recompute \([a-z]*\)).*/\1 \2/p')
if [ "$(printf '%s\n' "$pipes" | wc -l)" -ge 2 ] && [ "$(printf '%s\n' "$pipes" | sort -u | wc -l)" = "$(printf '%s\n' "$pipes" | wc -l)" ]; then
    ok "the layouts tuned are distinct pipelines: $(printf '%s; ' "$pipes")"
else not_ok "the layouts tuned are distinct pipelines" "$OUT"; fi
run "$OCTOPIPE" tune --model gemma2-27b --cluster 4xH200 --microbatches 8 -o "$T/g27.json"
expect_rc 0 "tune gemma2-27b on 4 H200s"
expect_match '^layout: pp [0-9]+ x tp [0-9]+ x dp [0-9]+ ' "$OUT" "names the layout it chose"
run "$OCTOPIPE" sim "$T/g27.json"
expect_rc 0 "and its plan fits"
# pure pipeline parallelism: no baseline fits (every one runs out of memory), but the
# tuner's stages that recompute where it frees the most memory do (it said exit 3 before)
run "$OCTOPIPE" tune --model gemma2-27b --cluster 4xH200 --microbatches 8 --layout pp -o "$T/g27pp.json"
expect_rc 0 "pure pipeline parallelism of gemma2-27b on 4 H200s: a plan that recomputes fits"
if [ -f "$T/g27pp.json" ] && [ "$(jget "$T/g27pp.json" '(d.get("parallel") or {}).get("tp", 1) == 1 and (d.get("parallel") or {}).get("dp", 1) == 1 and any(s.get("recompute") == "full" for s in d["stages"])')" = True ]; then
    ok "at pp 4 x tp 1 x dp 1, some stages recomputing"; else not_ok "the pure pipeline plan recomputes" "$(cat "$T/g27pp.json" 2>/dev/null | head -c 400)"; fi
run "$OCTOPIPE" sim "$T/g27pp.json"
expect_rc 0 "and the simulator finds it within memory"
run "$OCTOPIPE" tune --model llama2-70b --cluster 8xH100 --microbatches 8 --tp 1 --dp 1 --zero 0 \
    --recompute none -o "$T/none.json"
expect_rc 3 "no layout fits: exit 3"
expect_match 'no layout fits: [0-9]+ tried, the closest needs [0-9.]+ GB per GPU of [0-9.]+ GB usable' "$ERR" \
    "with the smallest peak memory it found"
run "$OCTOPIPE" tune --model gpt-13b --cluster 8xH200 --microbatches 16 --dp 2 --quiet -o "$T/dp2.json"
expect_rc 0 "tune --dp 2"
if [ "$(jget "$T/dp2.json" '(d["parallel"]["dp"], d["microbatches"])')" = "(2, 16)" ]; then
    ok "a given --dp keeps --microbatches per replica"; else not_ok "--dp 2 microbatches"; fi
run "$OCTOPIPE" tune --model gpt-13b --cluster 8xH200 --microbatches 16 --global-batch 32 --dp 4 --quiet -o "$T/gb.json"
expect_rc 0 "tune --global-batch 32 --dp 4"
if [ "$(jget "$T/gb.json" 'd["microbatches"]')" = 8 ]; then ok "the global batch is split over the replicas"
else not_ok "global batch split" "$(jget "$T/gb.json" 'd["microbatches"]')"; fi

# the step record names the layout step, and the TUI reads it back (a perturbation that
# lands on a plan that cannot run is written as null and read back as infeasible)
run "$OCTOPIPE" tune --model gpt-13b --cluster 8xH200 --microbatches 16 --quiet -o "$T/st.json" --steps-out "$T/st.steps"
expect_rc 0 "tune --steps-out with a layout search"
if [ "$(jget "$T/st.steps" 'sorted(d["layout"].keys())')" = "['best_baseline_tokens_per_s', 'candidates', 'dp', 'ep', 'global_batch', 'grads', 'micro_batch_size', 'microbatches_per_replica', 'pp', 'recompute', 'tp', 'zero']" ]; then
    ok "the step record has the layout step"; else not_ok "layout in the step record" "$(cat "$T/st.steps" | head -20)"; fi
python3 - "$T/st.steps" "$T/null.steps" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["steps"][-1]["after_ms"] = None; json.dump(d, open(sys.argv[2], "w"))
PY
run "$OCTOPIPE" tui "$T/st.json" --steps "$T/null.steps" --render 120x30
expect_rc 0 "the TUI reads a step record with an infeasible step"
expect_match '(gpu|pp)0' "$OUT" "and draws the plan"

# the SVG Gantt marks the data-parallel sync and the recomputing backward ops, and names the layout
"$OCTOPIPE" plan --model llama2-70b --cluster 64xH200 --schedule 1f1b --microbatches 16 --tp 4 --dp 2 \
    --recompute full -o "$T/r.json" >/dev/null 2>&1
run "$OCTOPIPE" export svg "$T/r.json" -o "$T/r.svg"
expect_rc 0 "export svg of a layout plan"
if xmllint --noout "$T/r.svg" 2>/dev/null; then ok "well-formed"; else not_ok "well-formed SVG"; fi
if [ "$(grep -c '<rect class="dp"' "$T/r.svg")" = 8 ]; then ok "one data-parallel sync bar per pipeline device"
else not_ok "dp sync bars" "$(grep -c '<rect class="dp"' "$T/r.svg")"; fi
if [ "$(grep -o 'recomputes full)' "$T/r.svg" | wc -l)" = 128 ]; then ok "every backward op says it recomputes"
else not_ok "recompute tooltips"; fi
expect_match '16 microbatches per replica, 8 stages on 8 pipeline devices \(pp 8 x tp 4 x dp 2 = 64 GPUs' "$(cat "$T/r.svg")" \
    "the subtitle names the layout"
expect_match 'data-parallel sync</text>' "$(cat "$T/r.svg")" "the legend names the sync"

# a layout plan's rows are pipeline ranks: sim says so and names them pp; plain plans keep gpu
run "$OCTOPIPE" sim "$T/r.json" --gantt
expect_match 'each row below is a pipeline rank \(pp\): a tensor-parallel group of 4 GPUs, the same in each of the 2 data-parallel replicas' "$OUT" "sim says what a row is"
expect_match '^  PP +BUSY ms' "$OUT" "the table's column is PP"
expect_match '^pp7 +\|' "$OUT" "the chart's rows are pp0..pp7"
run "$OCTOPIPE" sim "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json" --gantt
expect_rc 0 "sim of a bundled pure-pipeline plan"
expect_match '^gpu3 +\|' "$OUT" "a pure-pipeline plan's rows stay gpus"
if printf '%s' "$OUT" | grep -q 'pipeline rank'; then not_ok "a pure-pipeline plan has no pipeline-rank note"; else ok "a pure-pipeline plan has no pipeline-rank note"; fi

# the TUI's header names the layout and the exposed sync
run "$OCTOPIPE" tui "$T/r.json" --render 140x24
expect_rc 0 "the TUI opens a layout plan"
expect_match 'llama2-70b on 64xH200 \(pp 8 x tp 4 x dp 2 = 64 gpus, ep 1, ZeRO 0\), 16 microbatches per replica, 8 stages' \
    "$OUT" "its header names the layout"
expect_match 'dp sync [0-9.]+ m?s' "$OUT" "and the exposed data-parallel sync"

# ... and its chart shows a device idling on the data-parallel sync (a slow link makes it long)
python3 - "$top_srcdir/samples/clusters/8xH200.json" "$T/slow8.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["name"] = "slow8"; c["intra_node"]["gbytes_per_s"] = 5
json.dump(c, open(sys.argv[2], "w"))
PY
"$OCTOPIPE" plan --model llama2-7b --cluster "$T/slow8.json" --schedule 1f1b --microbatches 8 --dp 4 -o "$T/slow.json" >/dev/null 2>&1
run "$OCTOPIPE" tui "$T/slow.json" --render 120x24
expect_match '^pp0 .*B7b.*~~~~~~~~~~' "$OUT" "the TUI's chart marks the wait for the data-parallel sync"

# the TUI opens a model and cluster at a layout
run "$OCTOPIPE" tui --model llama2-70b --cluster 64xH200 --microbatches 16 --tp 4 --dp 2 --recompute selective --render 140x24
expect_rc 0 "tui --model --cluster --tp 4 --dp 2 --recompute selective"
expect_match 'llama2-70b on 64xH200 \(pp 8 x tp 4 x dp 2 = 64 gpus' "$OUT" "at that layout"
expect_match '^pp0 ' "$OUT" "each row is a pipeline rank (a TP group in each replica), named pp, not gpu"
expect_match '^ pp +busy' "$OUT" "and so is the breakdown's"
if printf '%s\n' "$OUT" | grep -E '^pp[0-9]' | grep -q '~'; then
    not_ok "no sync mark while a device still has ops to run"; else ok "no sync mark while a device still has ops to run"; fi
run "$OCTOPIPE" tui --model llama2-70b --cluster 64xH200 --microbatches 16 --tp 4 --dp 2 --recompute full --micro-batch-size 1 --render 140x30 \
    --keys llllllllllllllllllllllll
expect_match 'recomputes full \(its forward again\)' "$OUT" "the op details say a backward recomputes"
run "$OCTOPIPE" tui "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json" --tp 2 --render 100x24
expect_rc 2 "a plan keeps its own layout: --tp with a plan is refused"
expect_match 'the layout options go with --model and --cluster' "$ERR" "and says why"

# compare: the baselines at the layout the search chooses, or at the given one
run "$OCTOPIPE" compare --model llama2-70b --cluster 64xH200 --microbatches 64
expect_rc 0 "compare searches the layout"
expect_match '^layout: pp [0-9]+ x tp [0-9]+ x dp [0-9]+ ' "$OUT" "and names it"
expect_match '^model llama2-70b on 64xH200 at pp [0-9]+ x tp [0-9]+ x dp [0-9]+, [0-9]+ microbatch(es)? per replica' "$(unwrap "$OUT")" \
    "the table is at that layout"
expect_match '^tuned +[0-9.]+ ' "$OUT" "with the tuned row"
run "$OCTOPIPE" compare --model llama2-70b --cluster 64xH200 --microbatches 16 --tp 8 --dp 1 --json
expect_rc 0 "compare --tp 8 --dp 1 --json"
if printf '%s' "$OUT" | python3 -c '
import json, sys
rows = json.load(sys.stdin)
assert all(r.get("layout") == "pp 8 x tp 8 x dp 1" for r in rows), rows[0]
assert rows[-1]["schedule"] == "tuned"
'; then ok "every row is at the given layout"; else not_ok "compare --json layout rows" "$OUT"; fi

# a layer table made with cost --recompute already recomputes: no stage may do it again
"$OCTOPIPE" cost "$top_srcdir/samples/architectures/llama2-7b.json" --cluster 8xH200 --recompute -o "$T/rc7.json" >/dev/null
run "$OCTOPIPE" plan --model "$T/rc7.json" --cluster 8xH200 --schedule 1f1b --microbatches 8 --recompute full -o "$T/x.json"
expect_rc 2 "plan --recompute on a recomputing table is refused"
expect_match 'already recomputes every layer' "$ERR" "and says why"
"$OCTOPIPE" plan --model "$T/rc7.json" --cluster 8xH200 --schedule 1f1b --microbatches 8 -o "$T/rc7p.json" >/dev/null 2>&1
python3 - "$T/rc7p.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); p["stages"][2]["recompute"] = "selective"; json.dump(p, open(sys.argv[1], "w"))
PY
run "$OCTOPIPE" check "$T/rc7p.json"
expect_rc 2 "a plan file recomputing such a table is refused"
expect_match 'stages\[2\]\.recompute: the model.s layer table already recomputes' "$ERR" "at its JSON path"

# refusals: one line, exit 2
run "$OCTOPIPE" plan --model llama2-70b --cluster 8xH200 --schedule 1f1b --microbatches 8 --tp 3 -o "$T/x.json"
expect_rc 2 "--tp 3 on 8-GPU nodes"
expect_match 'tp 3: a tensor-parallel group stays on one node' "$ERR" "says why"
# a layout the options ask for that the cluster cannot hold is a usage error of the
# command, said as one (the line had no command and no pointer to --help)
run "$OCTOPIPE" plan --model llama2-7b --cluster 16xH200 --schedule 1f1b --microbatches 8 --tp 4 --dp 8 -o "$T/x.json"
expect_rc 2 "plan --tp 4 --dp 8 on 16 GPUs"
expect_match "^octopipe plan: pp 1 x tp 4 x dp 8 = 32 GPUs, but cluster '16xH200' has 16 \\(see 'octopipe plan --help'\\)$" "$ERR" "says so as plan's usage error: $ERR"
run "$OCTOPIPE" plan --model llama2-7b --cluster 16xH200 --schedule 1f1b --microbatches 8 --tp 2 --dp 2 -o "$T/rp.json"
run "$OCTOPIPE" sim --tp 4 "$T/rp.json"
expect_rc 2 "sim --tp 4 of a pp 4 x tp 2 x dp 2 plan on 16 GPUs"
expect_match "^octopipe sim: pp 4 x tp 4 x dp 2 = 32 GPUs, but cluster '16xH200' has 16 \\(see 'octopipe sim --help'\\)$" "$ERR" "says so as sim's usage error: $ERR"
run "$OCTOPIPE" tune --model llama2-7b --cluster 16xH200 --microbatches 8 --ep 2 -o "$T/x.json"
expect_rc 2 "tune --ep 2 of a dense model"
expect_match "^octopipe tune: ep 2: model 'llama2-7b' has no routed experts .* \\(see 'octopipe tune --help'\\)$" "$ERR" "says so as tune's usage error: $ERR"
# Megatron-LM: num_experts % expert_model_parallel_size == 0 (a 60-expert model on 8 ranks)
python3 - "$top_srcdir/samples/profiles/configs/deepseek-16b.json" "$T/moe60.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["n_routed_experts"] = 60; c["num_hidden_layers"] = 3
json.dump(c, open(sys.argv[2], "w"))
PY
"$OCTOPIPE" cost "$T/moe60.json" --cluster 8xH200 -o "$T/moe60m.json" >/dev/null
run "$OCTOPIPE" plan --model "$T/moe60m.json" --cluster 8xH200 --schedule 1f1b --microbatches 8 --dp 8 --ep 8 -o "$T/x.json"
expect_rc 2 "--ep 8 on 60 routed experts"
expect_match 'ep 8: layer [0-9]+ \(attn\+moe\) has 60 routed experts, which 8 expert-parallel ranks cannot hold evenly' "$ERR" "says why"
run "$OCTOPIPE" plan --model "$T/moe60m.json" --cluster 8xH200 --schedule 1f1b --microbatches 8 --dp 4 --ep 4 -o "$T/moe60p.json"
expect_rc 0 "--ep 4 on 60 routed experts"
run "$OCTOPIPE" tune --model "$T/moe60m.json" --cluster 8xH200 --microbatches 8 --ep 8 --budget 0 -o "$T/moe60t.json"
expect_rc 2 "a layout search held to --ep 8 on 60 experts is refused"
expect_match 'has 60 routed experts, which 8 expert-parallel ranks cannot hold evenly' "$ERR" "with the reason"
run "$OCTOPIPE" tune --model "$T/moe60m.json" --cluster 8xH200 --microbatches 8 --dp 8 --budget 0 -o "$T/moe60t.json"
expect_rc 0 "the layout search skips expert splits that do not divide"
expect_match 'ep [124]\b|dp 8' "$OUT$ERR" "and picks one that does"
run "$OCTOPIPE" plan --model llama2-70b --cluster 8xH200 --schedule 1f1b --microbatches 8 --dp 16 -o "$T/x.json"
expect_rc 2 "more GPUs than the cluster"
run "$OCTOPIPE" plan --model gpt-13b --cluster 8xH200 --schedule 1f1b --microbatches 8 --tp 2 -o "$T/x.json"
expect_rc 2 "a measured table cannot be re-priced at another TP degree"
expect_match 'has no architecture .* cannot be priced at tp 2' "$ERR" "and says so"
run "$OCTOPIPE" plan --model llama2-70b --cluster 8xH200 --schedule 1f1b --microbatches 8 --dp 4 --ep 3 -o "$T/x.json"
expect_rc 2 "ep not dividing dp"
run "$OCTOPIPE" plan --model llama2-70b --cluster 8xH200 --schedule 1f1b --microbatches 8 --zero 1 -o "$T/x.json"
expect_rc 2 "ZeRO without data parallelism"
run "$OCTOPIPE" plan --model llama2-70b --cluster 8xH200 --schedule 1f1b --microbatches 8 --recompute most -o "$T/x.json"
expect_rc 2 "an unknown recompute mode"
run "$OCTOPIPE" tune --model gpt-13b --cluster 8xH200 --microbatches 8 --layout pp --tp 2 -o "$T/x.json"
expect_rc 2 "--layout pp with a layout option"
run "$OCTOPIPE" tune --model gpt-13b --cluster 8xH200 --microbatches 8 --global-batch 7 --dp 2 -o "$T/x.json"
expect_rc 2 "no layout splits a global batch of 7 over 2 replicas"
expect_match "^octopipe tune: --global-batch 7 \\(7 microbatches of 1 sequence\\) does not split evenly over --dp 2 replicas" "$ERR" "says so, naming the batch and the degree: $ERR"
# the tuner's memory floor is the layout's: llama2-70b at pp 4 x tp 2 x dp 4 with ZeRO 1
# holds 2 + 2 + 12/4 bytes per parameter (61 GB a GPU), not the 16 of pure pipeline
# parallelism (140 GB, over the 134 usable), which ruled out every partition and
# placement it tried: each step was an empty "perturb the best:" of the start, and the
# result only ever the best baseline
run "$OCTOPIPE" tune --model llama2-70b --cluster 32xH200 --microbatches 4 --tp 2 --dp 4 --zero 1 --evals 400 --seed 1 \
    -o "$T/z1.json" --steps-out "$T/z1.steps"
expect_rc 0 "tune llama2-70b at pp 4 x tp 2 x dp 4, ZeRO 1"
if python3 - "$T/z1.steps" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))["steps"]
empty = [s for s in st if s["what"].strip() == "perturb the best:"]
moved = [s for s in st if s["phase"] in ("partition", "placement")]
assert not empty and moved, (len(empty), len(moved), len(st))
PY
then ok "its search moves layers and stages, and never records an empty perturbation"
else not_ok "the tuner's search at a ZeRO layout" "$(head -5 "$T/z1.steps")"; fi

# --microbatches x --dp past what an int holds was a signed overflow (a negative global
# batch in the message); it is held to the million microbatches --global-batch allows
run "$OCTOPIPE" tune --model gpt-13b --cluster 8xH200 --microbatches 1000000 --dp 4096 -o "$T/x.json"
expect_rc 2 "tune --microbatches 1000000 --dp 4096"
expect_match "^octopipe tune: --microbatches 1000000 x --dp 4096 = 4096000000 microbatches in the global batch, more than 1000000" "$ERR" "says so: $ERR"

# no degree left open fits the batch: the line says what was held fixed
run "$OCTOPIPE" tune --model gpt-13b --cluster 16xH200 --microbatches 8 --global-batch 3 --zero 1 -o "$T/x.json"
expect_rc 2 "ZeRO 1 with a global batch of 3 on 16 GPUs (no dp > 1 both splits 3 and tiles a node)"
expect_match "^octopipe tune: no parallel layout of cluster '16xH200' \\(16 GPUs, 8 per node\\) meets the given degrees: zero 1, a global batch of 3 microbatches" "$ERR" "names the constraints: $ERR"
run "$OCTOPIPE" compare --model gpt-13b --cluster 8xH200 --microbatches 8 --global-batch 12 --dp 8
expect_rc 2 "compare: a global batch of 12 over 8 replicas"
expect_match "^octopipe compare: --global-batch 12 \\(12 microbatches of 1 sequence\\) does not split evenly over --dp 8 replicas" "$ERR" "says so too: $ERR"
if [ -e "$T/x.json" ]; then not_ok "no plan written by a refused command"; else ok "no plan written by a refused command"; fi

# fp32 gradients (Megatron-LM's bf16 default): 2 more bytes a parameter, the sync's
# gradients twice the bytes; the export then leaves out --grad-reduce-in-bf16
run "$OCTOPIPE" plan --model llama2-70b --cluster 64xH200 --schedule 1f1b --microbatches 16 --tp 4 --dp 2 \
    --zero 1 --grads fp32 -o "$T/g32.json"
expect_rc 0 "plan --grads fp32"
if [ "$(jget "$T/g32.json" 'd["parallel"].get("grads")')" = "fp32" ]; then ok "the plan holds grads fp32"
else not_ok "the plan holds grads fp32"; fi
run "$OCTOPIPE" plan --model llama2-70b --cluster 64xH200 --schedule 1f1b --microbatches 16 --tp 4 --dp 2 \
    --zero 1 -o "$T/g16.json"
if [ "$(jget "$T/g16.json" '"grads" in d["parallel"]')" = "False" ]; then ok "bf16 gradients are left out of the file"
else not_ok "bf16 gradients are left out of the file"; fi
run "$OCTOPIPE" sim "$T/g32.json"
expect_match '^layout pp 8 x tp 4 x dp 2 = 64 GPUs \(ep 1, ZeRO 1, fp32 gradients\); ' "$OUT" "sim names the fp32 gradients"
"$OCTOPIPE" sim --json "$T/g32.json" >"$T/g32.sim.json"
"$OCTOPIPE" sim --json "$T/g16.json" >"$T/g16.sim.json"
r=$(python3 - "$T/g16.sim.json" "$T/g32.sim.json" <<'PY'
import json, sys
a, b = [json.load(open(f)) for f in sys.argv[1:]]
ma, mb = [[d["memory_breakdown"] for d in x["devices"]] for x in (a, b)]
print(all(abs(y["grads"] - 2 * x["grads"]) < 1 and x["weights"] == y["weights"] and x["optimizer"] == y["optimizer"]
          for x, y in zip(ma, mb)) and len(ma) == 8, b["dp_sync_ms"] > a["dp_sync_ms"])
PY
)
if [ "$r" = "True True" ]; then ok "fp32 gradients: twice the gradient bytes per GPU, the rest equal; more sync"
else not_ok "fp32 gradients in the memory breakdown" "$r"; fi
run "$OCTOPIPE" export megatron-args "$T/g32.json"
expect_rc 0 "export megatron-args of an fp32-gradient plan"
if printf '%s\n' "$OUT" | grep -q -- '--grad-reduce-in-bf16'; then not_ok "no --grad-reduce-in-bf16 for fp32 gradients"
else ok "no --grad-reduce-in-bf16 for fp32 gradients (Megatron-LM's default)"; fi
run "$OCTOPIPE" export megatron-args "$T/g16.json"
expect_match '^--grad-reduce-in-bf16 \\$' "$OUT" "bf16 gradients export --grad-reduce-in-bf16"
run "$OCTOPIPE" plan --model llama2-70b --cluster 64xH200 --schedule 1f1b --microbatches 16 --tp 4 --grads fp16 -o "$T/x.json"
expect_rc 2 "--grads fp16"
expect_match "^octopipe plan: --grads: 'fp16' is not bf16 or fp32" "$ERR" "says what --grads takes: $ERR"
"$OCTOPIPE" tune --model llama2-70b --cluster 16xH200 --microbatches 16 --grads fp32 --budget 0 --quiet -o "$T/t32.json" \
    --steps-out "$T/t32.steps" >/dev/null 2>&1
if [ "$(jget "$T/t32.steps" 'd["layout"]["grads"]')" = "fp32" ] && [ "$(jget "$T/t32.json" 'd["parallel"].get("grads")')" = "fp32" ]; then
    ok "tune --grads fp32: the layout search keeps fp32 gradients in every candidate"
else not_ok "tune --grads fp32" "$(head -c 300 "$T/t32.out")"; fi

# fp32 gradients (18 bytes a parameter) still fit gemma2-27b on 4 H200s: the layout search
# judges full recompute as the simulator keeps it (each layer's input), not every activation
run "$OCTOPIPE" tune --model gemma2-27b --cluster 4xH200 --microbatches 8 --grads fp32 --evals 300 -o "$T/g27f.json"
expect_rc 0 "gemma2-27b with fp32 gradients fits on 4 H200s"
# expert parallelism re-prices the experts: deepseek-v2-lite's loop (hf-eager) launches each
# of the E / ep experts a GPU holds, so its MoE layers get cheaper at ep 2 beside the all-to-all
"$OCTOPIPE" plan --model deepseek-v2-lite --cluster 16xH200 --schedule 1f1b --microbatches 8 --dp 2 --devices 8 \
    -o "$T/ep1.json" >/dev/null 2>&1
"$OCTOPIPE" plan --model deepseek-v2-lite --cluster 16xH200 --schedule 1f1b --microbatches 8 --dp 2 --ep 2 --devices 8 \
    -o "$T/ep2.json" >/dev/null 2>&1
f1=$("$OCTOPIPE" sim "$T/ep1.json" --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(x["busy_ms"] for x in d["devices"]))')
f2=$("$OCTOPIPE" sim "$T/ep2.json" --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(x["busy_ms"] for x in d["devices"]))')
if [ -n "$f1" ] && [ -n "$f2" ] && python3 -c "import sys; sys.exit(0 if $f2 < $f1 else 1)"; then
    ok "ep 2 re-prices the experts: less busy time ($f2 vs $f1 ms) though it adds the all-to-all"
else not_ok "ep 2 re-prices the experts" "$f1 $f2"; fi

# compare at a layout that must recompute: its baselines recompute stage by stage as the
# layout search judged them (not a table with every activation of a recomputing layer kept,
# which called all of them out of memory at the layout the search had found fitting), and
# its tuned row is tune's (Megatron-LM: the block method, 1.10x its default)
run "$OCTOPIPE" compare --model nemotronh-8b-seq32k --cluster 8xH200 --microbatches 16 --tp 1 --zero 1 \
    --micro-batch-size 1 --json
expect_rc 0 "compare at a layout that recomputes fully"
if printf '%s\n' "$OUT" | python3 -c '
import json, sys
rows = {r["schedule"]: r for r in json.load(sys.stdin)}
assert rows["1f1b"]["feasible"] and rows["gpipe"]["feasible"], rows["1f1b"]
'; then ok "its 1F1B and GPipe baselines fit, as the search judged the layout"
else not_ok "compare's baselines at a recomputing layout" "$(printf '%s' "$OUT" | head -c 600)"; fi
run "$OCTOPIPE" compare --model nemotronh-8b-seq32k --cluster 8xH200 --microbatches 16 --tp 1 --zero 1 \
    --micro-batch-size 1
if printf '%s\n' "$OUT" | python3 -c '
import re, sys
t = sys.stdin.read()
b = re.search(r";\s+lower bound ([0-9.]+) (m?s),", t)
bound = float(b.group(1)) * (1 if b.group(2) == "ms" else 1000)
r = re.search(r"^1f1b +([0-9.]+) .* ([0-9.]+)%  yes$", t, re.M)
assert abs(bound / float(r.group(1)) * 100 - float(r.group(2))) < 0.2, (bound, r.groups())
'; then ok "the header's lower bound is the one the rows' efficiencies are of"
else not_ok "compare's header bound and its rows' efficiencies" "$(printf '%s' "$OUT" | head -6)"; fi
run "$OCTOPIPE" compare --model nemotronh-8b-seq32k --cluster 8xH200 --microbatches 16 --tp 1 --zero 1 \
    --micro-batch-size 1 --target megatron
expect_rc 0 "compare --target megatron there"
expect_match '^tuned megatron +[0-9.]+ .* yes$' "$OUT" "the tuned row is a plan Megatron-LM runs that fits"
expect_match 'speedup of the tuned plan: 1f1b 1\.10x' "$OUT" "block recompute, 1.10x Megatron's default, as tune finds"

done_testing
