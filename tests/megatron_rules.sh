#!/bin/sh
# export megatron-args against Megatron-LM's start-up checks (megatron.c cites each rule
# in Megatron-LM's code): every flag combination it writes is one Megatron-LM accepts,
# and every plan Megatron-LM would refuse is refused here, in one line, exit 2.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
T="$TMPDIR_TEST"
M="$top_srcdir/samples/models"
C="$top_srcdir/samples/clusters"
O="$OCTOPIPE"
has() { printf '%s\n' "$OUT" | grep -q -- "$1"; }
refused() {  # refused PLAN PATTERN DESCRIPTION
    [ -n "$SHOW" ] && "$O" export megatron-args "$1" 2>&1 | tail -1
    run "$O" export megatron-args "$1"
    if [ "$RC" = 2 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && printf '%s\n' "$ERR" | grep -Eq -- "$2"; then
        ok "$3"
    else
        not_ok "$3" "exit $RC" "stdout: $OUT" "stderr: $ERR"
    fi
}
edit() {  # edit IN OUT PYTHON (p is the plan)
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(p, open(sys.argv[2], "w"))
PY
}

# ---- hybrid models: the hybrid layer pattern, never the layout (arguments.py:825) ----
"$O" plan --model nemotron-nano-v2-9b --cluster 8xH200 --schedule 1f1b --microbatches 16 -o "$T/nn.json" >/dev/null 2>&1
run "$O" export megatron-args "$T/nn.json"
expect_rc 0 "a hybrid model exports"
if has '--pipeline-model-parallel-layout'; then not_ok "no --pipeline-model-parallel-layout beside the pattern" "$OUT"
else ok "no --pipeline-model-parallel-layout beside the pattern"; fi
if has '^--num-layers'; then not_ok "no --num-layers for a hybrid model (the pattern sets it)" "$OUT"
else ok "no --num-layers for a hybrid model (the pattern sets it)"; fi
pat=$(printf '%s\n' "$OUT" | sed -n 's/^--hybrid-layer-pattern "\(.*\)"$/\1/p')
if python3 - "$pat" "$T/nn.json" "$M/nemotron-nano-v2-9b.json" <<'PY'
import json, sys
pat, plan, model = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
sym = {"mamba2": "M", "mlp": "-", "attention": "*", "embedding": "", "head": ""}
want = "|".join("".join("".join(sym[t] for t in model["layers"][l]["kind"].split("+"))
                        for l in range(s["layers"][0], s["layers"][1] + 1)) for s in plan["stages"])
assert pat == want, (pat, want)
assert set(pat) <= set("M-*|") and pat.count("|") == 7
PY
then ok "the pattern is the model's sub-layers, '|' between the plan's 8 stages: $pat"
else not_ok "the hybrid pattern" "$pat"; fi
# the block method counts a hybrid block's layers: one per pattern symbol (hybrid_block.py)
"$O" plan --model nemotron-nano-v2-9b --cluster 8xH200 --schedule 1f1b --microbatches 16 --recompute full \
    -o "$T/nnf.json" >/dev/null 2>&1
edit "$T/nnf.json" "$T/nnb.json" '
for s in p["stages"]: s["recompute_layers"] = 3'
run "$O" export megatron-args "$T/nnb.json"
if [ "$RC" = 0 ] && has '^--recompute-method block' && has '^--recompute-num-layers 3 '; then
    ok "hybrid: 3 single-symbol layers recomputed a stage: --recompute-method block --recompute-num-layers 3"
else not_ok "hybrid block recompute" "exit $RC" "$OUT" "$ERR"; fi
"$O" plan --model nemotron-nano-v2-9b --cluster 8xH200 --schedule interleaved --chunks 2 --microbatches 16 \
    -o "$T/nni.json" >/dev/null 2>&1
run "$O" export megatron-args "$T/nni.json"
expect_match '^--hybrid-layer-pattern "([^|]*\|){15}[^|]*"$' "$OUT" "interleaved: 16 segments over pp 8 (segments % pp: arguments.py:849)"
run "$O" export megatron-layout "$T/nn.json"
expect_rc 2 "export megatron-layout refuses a hybrid model"
expect_match 'nn.json: model: a hybrid .*--hybrid-layer-pattern' "$ERR" "and says to use the pattern: $ERR"
# Megatron-LM's hybrid model has Mamba-2 mixers only
"$O" plan --model jamba-v0.1 --cluster 16xH200 --schedule 1f1b --microbatches 16 -o "$T/jamba.json" >/dev/null 2>&1
refused "$T/jamba.json" "jamba.json: model.layers\[[0-9]+\].kind: 'mamba1\+m[a-z]*': .*no Mamba-1 mixer" \
    "a Mamba-1 model is refused in one line"
# qwen3-next: gated DeltaNet layers are Megatron-LM's G
"$O" plan --model qwen3-next-80b-a3b --cluster 32xH200 --schedule 1f1b --microbatches 8 --tp 2 --dp 4 --ep 4 \
    --zero 1 -o "$T/qn.json" >/dev/null 2>&1
run "$O" export megatron-args "$T/qn.json"
expect_match '^--hybrid-layer-pattern "GE[GE*|]*"$' "$OUT" "gated DeltaNet + MoE layers are G and E"

# ---- ZeRO and the gradients' dtype ------------------------------------------------------
for z in 1 2 3; do for g in bf16 fp32; do
    "$O" plan --model llama2-7b --cluster 16xH200 --schedule 1f1b --microbatches 8 --dp 4 --zero $z --grads $g \
        -o "$T/z$z$g.json" >/dev/null 2>&1
    run "$O" export megatron-args "$T/z$z$g.json"
    d="ZeRO $z, $g gradients"
    case $z$g in
    1bf16) has '^--use-distributed-optimizer' && has '^--grad-reduce-in-bf16' && ! has fsdp ;;
    1fp32) has '^--use-distributed-optimizer' && ! has 'grad-reduce-in-bf16' && ! has fsdp ;;
    2*|3*) s=optim_grads; [ $z = 3 ] && s=optim_grads_params
           has "^--use-megatron-fsdp" && has "^--data-parallel-sharding-strategy $s " &&
           has "^--megatron-fsdp-main-grads-dtype $g " && has '^--ckpt-format fsdp_dtensor' &&
           ! has 'grad-reduce-in-bf16' && ! has 'use-distributed-optimizer' ;;
    esac
    if [ $? = 0 ] && [ "$RC" = 0 ]; then ok "$d: the optimizer and gradient flags Megatron-LM reads for it"
    else not_ok "$d" "exit $RC" "$OUT" "$ERR"; fi
    # --overlap-param-gather only with the distributed optimizer or FSDP (arguments.py:1024)
    if has '^--overlap-param-gather' && has '^--overlap-grad-reduce'; then ok "$d: overlaps the param gather"
    else not_ok "$d: --overlap-param-gather with --overlap-grad-reduce" "$OUT"; fi
done; done
"$O" plan --model llama2-7b --cluster 16xH200 --schedule 1f1b --microbatches 8 --dp 4 -o "$T/z0.json" >/dev/null 2>&1
run "$O" export megatron-args "$T/z0.json"
if has '^--overlap-grad-reduce' && ! has 'overlap-param-gather' && ! has 'distributed-optimizer'; then
    ok "ZeRO 0: no --overlap-param-gather without the distributed optimizer"
else not_ok "ZeRO 0 flags" "$OUT"; fi
expect_match '^--global-batch-size 32 ' "$OUT" "global batch = microbatches x micro-batch size x dp"

# ---- the interleaved schedule -------------------------------------------------------------
"$O" plan --model llama2-7b --cluster 8xH200 --schedule interleaved --chunks 2 --devices 4 --microbatches 8 \
    -o "$T/il.json" >/dev/null 2>&1
run "$O" export megatron-args "$T/il.json"
expect_rc 0 "interleaved pp 4 with 8 microbatches exports"
edit "$T/il.json" "$T/il6.json" '
p["microbatches"] = 6
p["schedule"] = [[a for a in row if int(a[2:] if a[1] in "FBIW" else a[3:]) < 6] for row in p["schedule"]]'
refused "$T/il6.json" "il6.json: microbatches: 6 microbatches over 4 pipeline ranks: .*multiple of the pipeline size" \
    "interleaved with microbatches not a multiple of pp is refused (schedules.py:1172)"
"$O" plan --model llama2-7b --cluster 8xH200 --schedule 1f1b --devices 4 --microbatches 6 -o "$T/f6.json" >/dev/null 2>&1
run "$O" export megatron-args "$T/f6.json"
expect_rc 0 "plain 1F1B has no such rule: 6 microbatches on pp 4 export"
edit "$T/il.json" "$T/one.json" '
p["stages"] = [{"layers": [0, 16], "device": 0}, {"layers": [17, 33], "device": 0}]
p["schedule"] = [["0F%d" % i for i in range(8)] + ["1F%d" % i for i in range(8)] +
                 ["1B%d" % i for i in range(8)] + ["0B%d" % i for i in range(8)]] + [[]] * 7
p["split_backward"] = False'
refused "$T/one.json" "one.json: stages: 2 virtual stages on one pipeline rank" \
    "interleaving on one pipeline rank is refused (arguments.py:1000)"

# ---- the placement -----------------------------------------------------------------------
"$O" plan --model llama2-7b --cluster 8xH200 --schedule zb-v --devices 4 --microbatches 8 -o "$T/v.json" >/dev/null 2>&1
refused "$T/v.json" "v.json: stages\[4\].device: a Megatron layout needs stage s on device s mod 4" \
    "a V placement is refused: Megatron-LM runs stage s on rank s mod pp"
edit "$T/il.json" "$T/odd.json" '
p["stages"] = [{"layers": [0, 11], "device": 0}, {"layers": [12, 22], "device": 1}, {"layers": [23, 33], "device": 0}]
p["schedule"] = [[x for i in range(8) for x in ("0F%d" % i, "2F%d" % i, "2B%d" % i, "0B%d" % i)],
                 [x for i in range(8) for x in ("1F%d" % i, "1B%d" % i)]] + [[]] * 6
p["split_backward"] = False'
refused "$T/odd.json" "odd.json: stages(\[[0-9]\].device)?: " "3 stages on 2 ranks are refused (arguments.py:945)"

# ---- the layout: E first, L last, decoder layers and MTP modules ------------------------
python3 - "$top_srcdir/tests/data/tiny-model.json" "$T/plain.json" "$T/mtp2.json" "$T/mtpx.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["layers"] = [dict(m["layers"][1], kind="attn") for _ in range(4)]
json.dump(m, open(sys.argv[2], "w"))
m["layers"] = [dict(m["layers"][0], kind=k) for k in ("embedding", "attn", "attn", "mtp", "mtp", "head")]
json.dump(m, open(sys.argv[3], "w"))
m["layers"] = [dict(m["layers"][0], kind=k) for k in ("embedding", "attn", "mtp", "attn", "head")]
json.dump(m, open(sys.argv[4], "w"))
PY
TC="$top_srcdir/tests/data/tiny-cluster.json"
"$O" plan --model "$T/plain.json" --cluster "$TC" --schedule 1f1b --microbatches 4 -o "$T/pl.json" >/dev/null 2>&1
run "$O" export megatron-args "$T/pl.json"
expect_match '^--pipeline-model-parallel-layout "Et\*2\|t\*2L"$' "$OUT" \
    "a table without embedding or head rows still gets E first and L last (layout.py:95-106)"
expect_match '^--num-layers 4 ' "$OUT" "and --num-layers counts its 4 decoder layers"
"$O" plan --model "$T/mtp2.json" --cluster "$TC" --schedule 1f1b --microbatches 4 --partition 4,2 -o "$T/m42.json" \
    >/dev/null 2>&1
refused "$T/m42.json" "m42.json: stages\[1\]: MTP modules in stages 0 and 1" "MTP modules split over two stages are refused"
"$O" plan --model "$T/mtp2.json" --cluster "$TC" --schedule 1f1b --microbatches 4 --partition 2,4 -o "$T/m24.json" \
    >/dev/null 2>&1
run "$O" export megatron-args "$T/m24.json"
expect_match '^--pipeline-model-parallel-layout "Et\|tmmL"$' "$OUT" "both MTP modules in the last stage: 'Et|tmmL'"
expect_match '^--mtp-num-layers 2 ' "$OUT" "--mtp-num-layers 2"
"$O" plan --model "$T/mtpx.json" --cluster "$TC" --schedule 1f1b --microbatches 4 --partition 2,3 -o "$T/mlate.json" \
    >/dev/null 2>&1
refused "$T/mlate.json" "mlate.json: model.layers\\[3\\]: a decoder layer after the MTP module of layer 2" \
    "a decoder layer after an MTP module is refused (layout.py:115)"

# ---- recompute, TP, EP ------------------------------------------------------------------
"$O" plan --model llama2-7b --cluster 8xH200 --schedule 1f1b --microbatches 8 --tp 2 --recompute full -o "$T/rf.json" \
    >/dev/null 2>&1
run "$O" export megatron-args "$T/rf.json"
if has '^--recompute-granularity full' && has '^--recompute-method uniform' && has '^--recompute-num-layers 1 '; then
    ok "full recompute names its method and layer count (transformer_config.py:1908-1922)"
else not_ok "full recompute flags" "$OUT"; fi
"$O" plan --model llama2-7b --cluster 8xH200 --schedule 1f1b --microbatches 8 --tp 2 --recompute selective \
    -o "$T/rs.json" >/dev/null 2>&1
run "$O" export megatron-args "$T/rs.json"
if has '^--recompute-granularity selective' && ! has 'recompute-method' && ! has 'recompute-num-layers'; then
    ok "selective recompute has neither (arguments.py:1425, transformer_config.py:1926)"
else not_ok "selective recompute flags" "$OUT"; fi
# the block method: the first N layers of every virtual stage (recompute.py:167-180)
# (a count is of the stage's layers: stage 0's first is llama2-7b's embedding row)
edit "$T/rf.json" "$T/rb.json" '
for s in p["stages"]: s["recompute_layers"] = 2
p["stages"][0]["recompute_layers"] = 3'
run "$O" export megatron-args "$T/rb.json"
if has '^--recompute-granularity full' && has '^--recompute-method block' && has '^--recompute-num-layers 2 '; then
    ok "recompute_layers 2 on every stage: --recompute-method block --recompute-num-layers 2"
else not_ok "block recompute flags" "exit $RC" "$OUT" "$ERR"; fi
edit "$T/rf.json" "$T/rb0.json" '
for s in p["stages"]: s["recompute_layers"] = 2
p["stages"][0]["recompute_layers"] = 2'
refused "$T/rb0.json" "rb0.json: stages.1..recompute_layers: recomputes 2 decoder layers, an earlier stage 1:" \
    "different counts per stage are refused: --recompute-num-layers is one number"
edit "$T/rf.json" "$T/rb1.json" '
p["stages"][0]["recompute_layers"] = 1'
refused "$T/rb1.json" "rb1.json: stages: a stage recomputes none of its decoder layers" \
    "a stage whose count covers only the embedding recomputes no decoder layer: refused (N >= 1)"
"$O" plan --model "$T/mtp2.json" --cluster "$TC" --schedule 1f1b --microbatches 4 --partition 3,3 -o "$T/m33.json" \
    >/dev/null 2>&1
edit "$T/m33.json" "$T/m33b.json" '
p["stages"][0]["recompute"] = "full"; p["stages"][0]["recompute_layers"] = 2
p["stages"][1]["recompute"] = "full"'
refused "$T/m33b.json" "m33b.json: stages.1.: recomputes MTP module layer 3" \
    "an MTP module recomputed under the block method is refused (multi_token_prediction.py:1630 skips it)"
# PP 1: Megatron-LM accepts the layout (one stage: arguments.py:941-949, no interleaving)
"$O" plan --model llama2-7b --cluster 8xH200 --schedule 1f1b --microbatches 8 --tp 8 -o "$T/pp1.json" >/dev/null 2>&1
run "$O" export megatron-args "$T/pp1.json"
expect_match '^--pipeline-model-parallel-layout "Et\*32L"$' "$OUT" "PP 1: one stage, 'Et*32L' (accepted at PP 1)"
expect_match '^--pipeline-model-parallel-size 1 ' "$OUT" "and --pipeline-model-parallel-size 1"
"$O" plan --model deepseek-v2-lite --cluster 16xH200 --schedule 1f1b --microbatches 8 --tp 2 --dp 4 --ep 4 \
    -o "$T/eptp.json" >/dev/null 2>&1
run "$O" export megatron-args "$T/eptp.json"
if [ "$RC" = 0 ] && has '^--expert-model-parallel-size 4' && has '^--sequence-parallel'; then
    ok "EP with TP comes with sequence parallelism (model_parallel_config.py:560)"
else not_ok "EP with TP and sequence parallelism" "exit $RC" "$OUT" "$ERR"; fi
expect_match '^# environment: CUDA_DEVICE_MAX_CONNECTIONS=1 ' "$OUT" \
    "TP on H200 names CUDA_DEVICE_MAX_CONNECTIONS=1, which Megatron-LM asserts before Blackwell (arguments.py:1477)"
run "$O" export megatron-args "$T/z3fp32.json"
expect_match '^# environment: CUDA_DEVICE_MAX_CONNECTIONS unset or above 1 ' "$OUT" \
    "Megatron-FSDP names CUDA_DEVICE_MAX_CONNECTIONS unset or above 1 (arguments.py:1166)"
run "$O" export megatron-args "$T/z0.json"
if has 'CUDA_DEVICE_MAX_CONNECTIONS'; then not_ok "no environment note at TP 1 without FSDP" "$OUT"
else ok "no environment note at TP 1 without FSDP"; fi
if has 'sequence-parallel'; then not_ok "no sequence parallelism at TP 1" "$OUT"
else ok "no sequence parallelism at TP 1 (arguments.py:1431)"; fi
edit "$T/eptp.json" "$T/ep3.json" 'p["parallel"]["ep"] = 3'
refused "$T/ep3.json" "ep3.json: .*ep 3" "an EP that does not divide the replicas (or the experts) is refused"

done_testing
