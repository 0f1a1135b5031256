#!/bin/sh
# export torchtitan: the job-config TOML holds only keys torchtitan's job config defines,
# its model parts are the plan's stages, and the schedule CSV read back with octopipe's
# own `import torch-csv` gives the same plan (stages, placement, every device's order);
# what torchtitan cannot run is refused in one line.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
T="$TMPDIR_TEST"
O="$OCTOPIPE"

# roundtrip NAME MODEL CLUSTER PLAN-ARGS...: plan, export, read back, compare
roundtrip() {
    name=$1 model=$2 cluster=$3
    shift 3
    "$O" plan --model "$model" --cluster "$cluster" --microbatches 8 "$@" -o "$T/$name.json" >/dev/null 2>&1
    run "$O" export torchtitan "$T/$name.json" -o "$T/$name.d"
    if [ "$RC" != 0 ]; then not_ok "$name: export torchtitan" "exit $RC" "$ERR"; return; fi
    parts=$(python3 - "$T/$name.d/job.toml" "$top_srcdir/samples/models/$model.json" <<'PY'
import sys, tomllib
cfg = tomllib.load(open(sys.argv[1], "rb"))
import json
kinds = [l["kind"] for l in json.load(open(sys.argv[2]))["layers"]]
pure = {"embedding", "head", "loss", "head+loss"}
counts = []
for part in cfg["parallelism"]["module_fqns_per_model_part"]:
    n = sum(1 for f in part if f.startswith("layers."))
    n += ("tok_embeddings" in part and kinds[0] in pure) + ("output" in part and kinds[-1] in pure)
    counts.append(str(n))
print(",".join(counts))
PY
)
    run "$O" import torch-csv "$T/$name.d/schedule.csv" --model "$model" --cluster "$cluster" --partition "$parts" \
        -o "$T/$name.back.json"
    if [ "$RC" != 0 ]; then not_ok "$name: import torch-csv of the exported CSV" "exit $RC" "$ERR"; return; fi
    if python3 - "$T/$name.json" "$T/$name.back.json" "$T/$name.d/job.toml" <<'PY'
import json, sys, tomllib
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
cfg = tomllib.load(open(sys.argv[3], "rb"))
sa = [(s["layers"], s["device"]) for s in a["stages"]]
sb = [(s["layers"], s["device"]) for s in b["stages"]]
assert sa == sb, (sa, sb)
pp = cfg["parallelism"]["pipeline_parallel_degree"]
assert a["schedule"][:pp] == b["schedule"][:pp], "orders differ"
assert all(not row for row in a["schedule"][pp:] + b["schedule"][pp:])
assert b["microbatches"] == a["microbatches"] == cfg["training"]["local_batch_size"] // \
    cfg["parallelism"]["pipeline_parallel_microbatch_size"]
assert cfg["parallelism"]["pipeline_parallel_schedule_csv"].endswith("/schedule.csv")
PY
    then ok "$name: the CSV read back is the plan (stages, placement, every device's order, microbatches)"
    else not_ok "$name: round trip"; fi
}
# (FSDP over 2 replicas: without it torchtitan trains a pipeline in fp32, refused below)
roundtrip v llama2-7b 8xH200 --schedule zb-v --dp 2 --zero 2
roundtrip loop llama2-7b 8xH200 --schedule interleaved --chunks 2 --dp 2 --zero 3
roundtrip one gpt-13b 4xH200 --schedule 1f1b --dp 2 --zero 2
roundtrip moe deepseek-v2-lite 8xH200 --schedule zb-h1 --dp 2 --zero 2

# the keys: every one is a field of torchtitan's job config (job_config.py before its
# Python-config refactor: Parallelism, Training, ActivationCheckpoint)
"$O" plan --model deepseek-v2-lite --cluster 16xH200 --schedule interleaved --chunks 2 --microbatches 8 --tp 2 --dp 2 \
    --ep 2 --zero 3 --recompute selective -o "$T/moe.json" >/dev/null 2>&1
run "$O" export torchtitan "$T/moe.json" -o "$T/moe.d"
expect_rc 0 "export torchtitan of a pp 4 x tp 2 x dp 2, ep 2, ZeRO 3 plan"
if python3 - "$T/moe.d/job.toml" <<'PY'
import sys, tomllib
cfg = tomllib.load(open(sys.argv[1], "rb"))
known = {
    "parallelism": {"data_parallel_replicate_degree", "data_parallel_shard_degree", "fsdp_reshard_after_forward",
                    "tensor_parallel_degree", "pipeline_parallel_degree", "module_fqns_per_model_part",
                    "pipeline_parallel_schedule", "pipeline_parallel_schedule_csv",
                    "pipeline_parallel_microbatch_size", "expert_parallel_degree", "expert_tensor_parallel_degree"},
    "training": {"seq_len", "local_batch_size", "global_batch_size", "mixed_precision_param",
                 "mixed_precision_reduce"},
    "activation_checkpoint": {"mode", "selective_ac_option"},
}
assert set(cfg) == set(known), cfg.keys()
for sec, keys in cfg.items():
    assert set(keys) <= known[sec], (sec, set(keys) - known[sec])
p = cfg["parallelism"]
assert (p["pipeline_parallel_degree"], p["tensor_parallel_degree"], p["data_parallel_shard_degree"]) == (4, 2, 2), p
assert (p["expert_parallel_degree"], p["expert_tensor_parallel_degree"]) == (2, 2), p
assert p["fsdp_reshard_after_forward"] == "always" and p["pipeline_parallel_schedule"] == "Interleaved1F1B", p
assert cfg["activation_checkpoint"] == {"mode": "selective", "selective_ac_option": "op"}, cfg
assert cfg["training"]["global_batch_size"] == 2 * cfg["training"]["local_batch_size"] == 16, cfg
assert cfg["training"]["mixed_precision_reduce"] == "float32"
PY
then ok "only job-config keys, with the plan's degrees, schedule style, recompute and batch sizes"
else not_ok "the TOML's keys and values" "$(cat "$T/moe.d/job.toml")"; fi
ls -A "$T/moe.d" >"$T/ls"
if [ "$(tr '\n' ' ' <"$T/ls")" = "job.toml schedule.csv " ]; then ok "DIR holds the two files and no temporary"
else not_ok "DIR's files" "$(cat "$T/ls")"; fi

# refusals: one line, exit 2
refused() {  # refused PLAN PATTERN DESCRIPTION
    run "$O" export torchtitan "$1" -o "$T/refused.d"
    if [ "$RC" = 2 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && printf '%s\n' "$ERR" | grep -Eq -- "$2" &&
       [ ! -e "$T/refused.d/job.toml" ]; then ok "$3"
    else not_ok "$3" "exit $RC" "stderr: $ERR"; fi
}
python3 - "$T/v.json" "$T/twisted.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for s in p["stages"]:
    s["device"] = {0: 1, 1: 0}.get(s["device"], s["device"])
p["schedule"][0], p["schedule"][1] = p["schedule"][1], p["schedule"][0]
json.dump(p, open(sys.argv[2], "w"))
PY
refused "$T/twisted.json" "twisted.json: stages\[0\].device: 1, but torchtitan places stage 0 on device 0 .*loop style.*v style" \
    "a placement in neither loop nor v style is refused"
"$O" plan --model llama2-7b --cluster 16xH200 --schedule 1f1b --microbatches 8 --dp 4 --zero 1 -o "$T/z1.json" \
    >/dev/null 2>&1
refused "$T/z1.json" "z1.json: parallel.zero: 1 with 4 data-parallel replicas: .*FSDP" "ZeRO 1 is refused (no such sharding)"
"$O" plan --model llama2-7b --cluster 16xH200 --schedule 1f1b --microbatches 8 --dp 4 -o "$T/z0.json" >/dev/null 2>&1
refused "$T/z0.json" "z0.json: parallel.zero: 0 with 4 .*DDP runs only alone" "DDP beside a pipeline is refused"
python3 - "$top_srcdir/tests/data/tiny-model.json" "$T/mtp-model.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["layers"] = [dict(m["layers"][0], kind=k) for k in ("embedding", "attn", "attn", "mtp", "head")]
json.dump(m, open(sys.argv[2], "w"))
PY
"$O" plan --model "$T/mtp-model.json" --cluster "$top_srcdir/tests/data/tiny-cluster.json" --schedule 1f1b \
    --microbatches 4 -o "$T/mtp.json" >/dev/null 2>&1
refused "$T/mtp.json" "mtp.json: model.layers\[3\].kind: 'mtp': torchtitan's models have no multi-token" \
    "an MTP module is refused"
# full recompute of a stage's first layers only (Megatron-LM's block method): torchtitan has none
"$O" plan --model llama2-7b --cluster 8xH200 --schedule 1f1b --microbatches 8 --recompute full --dp 2 --zero 2 \
    -o "$T/rf.json" >/dev/null 2>&1
python3 -c '
import json, sys
p = json.load(open(sys.argv[1])); p["stages"][1]["recompute_layers"] = 2; json.dump(p, open(sys.argv[2], "w"))' \
    "$T/rf.json" "$T/rb.json"
refused "$T/rb.json" "rb.json: stages\[1\].recompute_layers: 2 of the stage's layers: torchtitan's activation .*no block" \
    "a stage recomputing its first layers only is refused (no block method)"
run "$O" export torchtitan "$T/rf.json" -o "$T/rf.d"
if [ "$RC" = 0 ] && grep -q '^mode = "full"' "$T/rf.d/job.toml"; then ok "every layer recomputed: mode \"full\""
else not_ok "full activation checkpointing" "exit $RC" "$ERR"; fi
run "$O" export torchtitan "$T/v.json"
expect_rc 2 "export torchtitan without -o DIR is a usage error"
run "$O" export torchtitan "$T/v.json" -o -
expect_rc 2 "and -o - too (two files)"

# an overlapped pair (DualPipeV's F beside a B) is one OVERLAP_F_B cell, but torchtitan
# registers its overlap callback only on its own ScheduleDualPipeV, not on the runtime that
# runs a CSV, which runs the pair's two actions one after the other: not the plan
# simulated, so the export refuses it and the target's tuner never picks it
"$O" plan --model llama2-7b --cluster 8xH200 --schedule dualpipev --microbatches 16 -o "$T/dpv.json" >/dev/null 2>&1
run "$O" export torchtitan "$T/dpv.json" -o "$T/dpv.d"
expect_rc 2 "export torchtitan of a plan with overlapped pairs is refused"
expect_match "schedule\[0\]: '0F[0-9]+\+[0-9]+I[0-9]+' overlaps a forward with a backward, but torchtitan runs a schedule CSV's OVERLAP_F_B one action after the other \(it overlaps only under its own ScheduleDualPipeV, not from a CSV\)" "$ERR" "naming the pair and why"
if [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ]; then ok "on one line"; else not_ok "on one line" "$ERR"; fi
run "$O" tune --model llama2-7b --cluster 8xH200 --microbatches 16 --target torchtitan --tp 1 --dp 2 --evals 40 \
    -o "$T/nopair.json"
expect_rc 0 "tune --target torchtitan (pp 4 x dp 2)"
if grep -q '+' "$T/nopair.json"; then not_ok "the torchtitan plan has no overlapped pair" "$(grep -c '+' "$T/nopair.json")"
else ok "the torchtitan plan has no overlapped pair"; fi

# mixed precision: torchtitan casts to mixed_precision_param under FSDP (dp_shard > 1)
# and autocasts DDP or one GPU, but TP or PP without FSDP it trains in fp32
# (distributed/utils.py maybe_enable_amp): such a plan, priced in bf16, is refused
"$O" plan --model llama2-7b --cluster 8xH200 --schedule interleaved --chunks 2 --devices 4 --microbatches 8 \
    -o "$T/il.json" >/dev/null 2>&1
refused "$T/il.json" "il.json: parallel.dp: 1 with pipeline parallelism: torchtitan applies mixed precision to TP or PP only under FSDP, so it would train this plan in fp32, not the bf16 it was priced in: use 2 or more data-parallel replicas at ZeRO 2 or 3$" \
    "a pipeline of one replica is refused (torchtitan would train it in fp32)"
"$O" plan --model llama2-7b --cluster 8xH200 --schedule 1f1b --tp 8 --microbatches 8 -o "$T/tp8.json" >/dev/null 2>&1
refused "$T/tp8.json" "tp8.json: parallel.dp: 1 with tensor parallelism: .* in fp32" "so is TP of one replica"
"$O" plan --model llama2-7b --cluster 8xH200 --schedule interleaved --chunks 2 --microbatches 8 --dp 2 --zero 3 \
    -o "$T/il2.json" >/dev/null 2>&1
run "$O" export torchtitan "$T/il2.json" -o "$T/il2.d"
expect_rc 0 "the same pipeline over 2 FSDP replicas exports"
expect_match '^data_parallel_shard_degree = 2$' "$(cat "$T/il2.d/job.toml" 2>/dev/null)" "sharded (FSDP)"
expect_match '^mixed_precision_param = "bfloat16"$' "$(cat "$T/il2.d/job.toml" 2>/dev/null)" "which casts to bf16"
# DDP alone (no TP, no PP) runs under autocast: bf16 without FSDP
"$O" plan --model llama2-7b --cluster 8xH200 --schedule 1f1b --dp 8 --microbatches 8 -o "$T/ddp.json" >/dev/null 2>&1
run "$O" export torchtitan "$T/ddp.json" -o "$T/ddp.d"
expect_rc 0 "DDP alone exports (torchtitan autocasts it to mixed_precision_param)"
expect_match '^data_parallel_replicate_degree = 8$' "$(cat "$T/ddp.d/job.toml" 2>/dev/null)" "as 8 DDP replicas"
# the tuner offers only what torchtitan trains in bf16: --layout pp (one replica) is refused
# up front, and a batch that no replicas split (5 sequences on 8 GPUs) leaves no layout
run "$O" tune --model llama2-7b --cluster 8xH200 --microbatches 16 --target torchtitan --layout pp --evals 40 \
    -o "$T/x.json"
expect_rc 2 "tune --target torchtitan --layout pp is refused"
expect_match "^octopipe tune: --layout pp: torchtitan applies mixed precision to a pipeline only under FSDP, so it would train a pure pipeline of 8 GPUs in fp32, not the bf16 priced: use --layout auto" "$ERR" "saying why and what to use"
run "$O" compare --model llama2-7b --cluster 8xH200 --microbatches 16 --target torchtitan --layout pp
expect_rc 2 "and so is compare --target torchtitan --layout pp"
run "$O" tune --model llama2-7b --cluster 8xH200 --microbatches 5 --target torchtitan --evals 40 -o "$T/tt5.json"
expect_rc 3 "tune --target torchtitan with a batch no replicas split: no layout"
expect_match "none of their baselines ran \(the last: parallel.dp: 1 with .* in fp32" "$ERR" "with torchtitan's reason"
run "$O" tune --model llama2-7b --cluster 8xH200 --microbatches 16 --target torchtitan --tp 1 --dp 2 --evals 40 \
    -o "$T/tt2.json"
expect_match 'FSDP keeping the gathered weights \(ZeRO 2\) where data-parallel' "$(unwrap "$OUT")" "the target line says where FSDP applies"
run "$O" export torchtitan "$T/tt2.json" -o "$T/tt2.d"
expect_rc 0 "a tuned pp 4 x dp 2 plan exports"
run "$O" tune --model llama2-7b --cluster 8xH200 --microbatches 5 --target torchtitan --zero 3 --tp 8 --dp 2 \
    --evals 40 -o "$T/x.json"
expect_rc 2 "tp 8 x dp 2 on 8 GPUs: no layout"
expect_match "meets the given degrees: tp 8, dp 2, zero 3 where data-parallel, a global batch of 10 microbatches" "$ERR" \
    "the line says ZeRO is held where data-parallel: $ERR"

# torchtitan's models (llama3, llama4, deepseek_v3, qwen3, gpt_oss) attend in every block:
# a Mamba or gated DeltaNet layer is refused by export, tune and compare alike
"$O" plan --model nemotronh-8b --cluster 8xH200 --schedule 1f1b --microbatches 16 --dp 2 --zero 2 -o "$T/nh.json" \
    >/dev/null 2>&1
refused "$T/nh.json" "nh.json: model.layers\[1\].kind: 'mamba2': torchtitan has no Mamba-2 layer" \
    "export torchtitan of a hybrid Mamba model is refused"
run "$O" tune --model nemotronh-8b --cluster 8xH200 --microbatches 16 --target torchtitan --evals 40 -o "$T/x.json"
expect_rc 2 "tune --target torchtitan of it too, up front"
expect_match "^octopipe tune: model.layers\[1\].kind: 'mamba2': torchtitan has no Mamba-2 layer" "$ERR" "naming the layer"
run "$O" compare --model qwen3-next-80b-a3b --cluster 8xH200 --microbatches 16 --target torchtitan
expect_rc 2 "compare --target torchtitan of a gated DeltaNet model is refused"
expect_match "^octopipe compare: model.layers\[1\].kind: 'gdn\+moe': torchtitan has no gated DeltaNet layer" "$ERR" "naming it"
run "$O" tune --model gpt-oss-20b --cluster 8xH200 --microbatches 16 --target torchtitan --tp 1 --dp 2 --evals 20 \
    -o "$T/oss.json"
expect_rc 0 "an MoE model (gpt-oss) is not: torchtitan has it"

# a plan torchtitan runs but that runs out of memory: sim's line, exit 3, nothing written
"$O" plan --model llama2-7b --cluster 8xH200 --schedule gpipe --microbatches 64 --dp 2 --zero 2 -o "$T/gp.json" \
    >/dev/null 2>&1
run "$O" export torchtitan "$T/gp.json" -o "$T/gp.d"
if [ "$RC" = 3 ] && printf '%s\n' "$ERR" | grep -q "gp.json: plan infeasible: " && [ ! -e "$T/gp.d" ]; then
    ok "an out-of-memory plan torchtitan would run: exit 3, nothing written"
else not_ok "an out-of-memory plan: exit 3" "exit $RC" "$ERR"; fi

# one pipeline rank: torchtitan accumulates global / (local x dp) forwards of local_batch_size
# sequences each, so local is one microbatch and the accumulation count the plan's
# microbatches (local = every microbatch ran all 8 sequences in one forward: 168 GB a GPU)
run "$O" tune --model llama2-7b --cluster 8xH200 --microbatches 64 --micro-batch-size 1 --target torchtitan \
    --evals 40 -o "$T/dp8.json"
expect_rc 0 "tune --target torchtitan of a data-parallel-only layout"
run "$O" export torchtitan "$T/dp8.json" -o "$T/dp8.d"
expect_rc 0 "export torchtitan at pp 1"
if python3 - "$T/dp8.json" "$T/dp8.d/job.toml" <<'PY'
import json, sys, tomllib
p = json.load(open(sys.argv[1]))
cfg = tomllib.load(open(sys.argv[2], "rb"))
par, tr = cfg["parallelism"], cfg["training"]
assert par["pipeline_parallel_degree"] == 1, par
dp = par["data_parallel_shard_degree"] * par["data_parallel_replicate_degree"]
assert tr["local_batch_size"] == 1, tr
assert tr["global_batch_size"] // (tr["local_batch_size"] * dp) == p["microbatches"] == 64 // dp, (tr, dp)
PY
then ok "pp 1: local_batch_size is one microbatch, the accumulation steps the plan's microbatches"
else not_ok "pp 1 batch sizes" "$(cat "$T/dp8.d/job.toml")"; fi

done_testing
