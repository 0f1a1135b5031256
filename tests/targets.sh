#!/bin/sh
# tune --target: a plan tuned for Megatron-LM exports as megatron-args and the output says
# what was searched; compare --target. torchtitan's tune, export and CSV round trip, for
# every bundled model, are in tests/target_acceptance.sh (checked there once).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
T="$TMPDIR_TEST"
O="$OCTOPIPE"

# ---- megatron: bundled samples (dense, MoE, hybrid, MTP-free) on 8 and 16 GPUs ---------
for g in 8 16; do
    for m in llama2-7b gemma3-12b deepseek-v2-lite nemotron-nano-v2-9b nemotronh-8b gpt-oss-20b; do
        run "$O" tune --model "$m" --cluster ${g}xH200 --microbatches 16 --target megatron --evals 300 \
            -o "$T/$m-$g.json"
        if [ "$RC" != 0 ]; then not_ok "tune --target megatron: $m on $g GPUs" "exit $RC" "$ERR"; continue; fi
        said=$(printf '%s\n' "$OUT" | grep -c "^target megatron: searching Megatron-LM's 1F1B and interleaved")
        gain=$(unwrap "$OUT" | sed -n 's/.* per iteration, \([0-9.]*\)x its default (1F1B, even split.*/\1/p')
        run "$O" export megatron-args "$T/$m-$g.json"
        if [ "$RC" = 0 ] && [ "$said" = 1 ] && awk -v x="$gain" 'BEGIN { exit !(x >= 1) }'; then
            ok "$m on $g GPUs: tune --target megatron says what it searched, is ${gain}x Megatron's default, exports"
        else not_ok "$m on $g GPUs: tune --target megatron then export megatron-args" "said $said gain '$gain'" \
            "exit $RC" "$ERR"; fi
    done
done
# its plan simulates to what tune reported
run "$O" tune --model llama2-7b --cluster 16xH200 --microbatches 16 --target megatron --layout pp --evals 300 \
    -o "$T/l16.json"
t=$(unwrap "$OUT" | sed -n 's/^tuned for Megatron-LM: \([0-9.]* [a-z]*\) per iteration.*/\1/p')
run "$O" sim "$T/l16.json"
if [ -n "$t" ] && printf '%s\n' "$OUT" | grep -q "$t"; then ok "the plan simulates to the $t tune reported"
else not_ok "sim of the tuned plan" "tune said '$t'" "$OUT"; fi
run "$O" export megatron-args "$T/l16.json"
expect_match '^--pipeline-model-parallel-size 16 ' "$OUT" "--layout pp: pure pipeline parallelism over 16 ranks"
# a model Megatron-LM cannot build is refused with its reason, not searched in vain
run "$O" tune --model jamba-v0.1 --cluster 16xH200 --microbatches 16 --target megatron --evals 300 -o "$T/j.json"
expect_rc 2 "tune --target megatron of a Mamba-1 model is refused"
expect_match "no Mamba-1 mixer" "$ERR" "and says why: $ERR"
# compare says the same where every row ran but the runtime cannot run any of them: not
# "every baseline and the tuned plan is infeasible" (exit 3, a memory verdict it is not)
run "$O" compare --model jamba-v0.1 --cluster 16xH200 --microbatches 16 --target megatron
expect_rc 2 "compare --target megatron of a Mamba-1 model"
expect_match "^octopipe compare: megatron runs none of these plans: model.layers\[[0-9]+\].kind: 'mamba1\+mlp': Megatron-LM's hybrid model has no Mamba-1 mixer" "$ERR" "says why in one line: $ERR"
expect_match "^1f1b .*n/a on megatron: .*no Mamba-1 mixer" "$OUT" "and its rows say so"
# ... even where the budget left rows out: no budget makes Megatron-LM build the model
# (on a slow machine, say under ASan, the budget may leave every row out before one says so:
# then the budget is all there is to say)
run "$O" compare --layout pp --model jamba-v0.1 --cluster 32xH200 --microbatches 4096 --target megatron --budget 0.3
expect_rc 2 "compare --target megatron of a Mamba-1 model, a budget too short for its rows"
if printf '%s\n' "$OUT" | grep -q 'no Mamba-1 mixer'; then
    expect_match "^octopipe compare: megatron runs none of these plans: .*no Mamba-1 mixer" "$ERR" \
        "a row said the model cannot run: the refusal, not 'give a larger --budget': $ERR"
else
    expect_match "^octopipe compare: --budget 0.3 s (ran out|cannot hold)" "$ERR" "no row ran to say so: the budget line: $ERR"
fi
run "$O" tune --model llama2-7b --cluster 8xH200 --microbatches 16 --target megatron --steps-out "$T/s.json" \
    -o "$T/x.json"
expect_rc 2 "--steps-out with --target megatron is a usage error (no tuner steps)"
run "$O" tune --model llama2-7b --cluster 8xH200 --microbatches 16 --target deepspeed -o "$T/x.json"
expect_rc 2 "an unknown --target is a usage error"

# ---- compare --target -------------------------------------------------------------------
"$O" compare --model llama2-7b --cluster 8xH200 --microbatches 16 --layout pp --target megatron --json >"$T/cm.json"
if python3 - "$T/cm.json" <<'PY2'
import json, sys
rows = {r["schedule"]: r for r in json.load(open(sys.argv[1]))}
for name in ("gpipe", "zb-h1", "zb-v", "adaptive"):
    assert not rows[name]["feasible"] and rows[name]["reason"].startswith("n/a on megatron"), rows[name]
t = rows["tuned megatron"]
assert t["feasible"]
ok = [r["makespan_ms"] for r in rows.values() if r["feasible"] and r["schedule"] != "tuned megatron"]
assert ok and t["makespan_ms"] <= min(ok) + 1e-9, (t["makespan_ms"], ok)
assert set(t["speedup"]) == {"1f1b", "1f1b balanced", "interleaved"}, t["speedup"]
PY2
then ok "compare --target megatron: only 1F1B and interleaved rows count, the tuned row is no slower than them"
else not_ok "compare --target megatron" "$(cat "$T/cm.json")"; fi
# (pp 4 x dp 2: torchtitan trains a pipeline of one replica in fp32, so no --layout pp)
"$O" compare --model llama2-7b --cluster 8xH200 --microbatches 16 --tp 1 --dp 2 --target torchtitan --json >"$T/ct.json"
if python3 -c '
import json, sys
rows = {r["schedule"]: r for r in json.load(open(sys.argv[1]))}
assert rows["tuned torchtitan"]["feasible"], rows' "$T/ct.json"
then ok "compare --target torchtitan has its tuned row"
else not_ok "compare --target torchtitan" "$(cat "$T/ct.json")"; fi

# a layout that must recompute: Megatron-LM's block method over the fewest layers that fit
# beats recomputing every layer, and the export says so (nemotronh-8b at 32K tokens)
run "$O" tune --model nemotronh-8b-seq32k --cluster 8xH200 --microbatches 8 --tp 1 --zero 1 --target megatron \
    --evals 40 -o "$T/nb.json"
expect_rc 0 "tune --target megatron of a model that must recompute"
expect_match 'recompute full' "$OUT" "at a layout that recomputes"
expect_match 'tuned for Megatron-LM: .* 1\.[0-9][0-9]x its default' "$(unwrap "$OUT")" "names its gain over Megatron-LM's default"
run "$O" export megatron-args "$T/nb.json"
expect_match '^--recompute-method block ' "$OUT" "exports the block method (not every layer recomputed)"
expect_match '^--recompute-num-layers [1-9][0-9]* ' "$OUT" "with its layer count"

done_testing
