#!/bin/sh
# --target in the UI (issue 24): the tuner searches only what the runtime runs (Megatron-LM's
# own search, torchtitan through the tuner's filter), the baselines it cannot run are marked
# n/a as compare --target marks them, the status line names the target, and a tuned plan
# adopted and saved in the UI exports for that runtime. tmux-driven, on a private server.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
T="$TMPDIR_TEST"

TUI_NAME=target
. "$top_srcdir/tests/tuilib.sh"

run "$OCTOPIPE" tui --target nosuch --render 100x30
expect_rc 2 "an unknown --target is refused"
expect_match "--target: 'octopipe', 'megatron' or 'torchtitan', not 'nosuch'" "$ERR" "and says which there are"

# ---- megatron ---------------------------------------------------------------------------
# at a layout the layout search picks, the plan opened is still one Megatron-LM runs
run "$OCTOPIPE" tui --model llama2-70b --cluster 64xH200 --tp 4 --dp 2 --target megatron --render 200x40
expect_rc 0 "llama2-70b at TP 4 x DP 2 for megatron"
expect_match 'OctoPipe +llama2-70b (1f1b|1f1b balanced|interleaved) +llama2-70b on 64xH200 \(pp 8 x tp 4 x dp 2' "$OUT" \
    "opens at the layout on a schedule Megatron-LM runs"
# the layout a --model/--cluster start opens on is the one compare --target picks: judged by
# the target's own schedules (Megatron-LM: 1F1B and interleaved, its block recompute)
for tgt in octopipe megatron; do
    "$OCTOPIPE" compare --model nemotronh-8b-seq32k --cluster 8xH200 --tp 1 --zero 1 --microbatches 16 \
        --target $tgt 2>/dev/null | head -1 >"$T/cmp-$tgt"
    want=$(sed -n 's/^layout: pp \([0-9]*\) x tp \([0-9]*\) x dp \([0-9]*\) (ZeRO \([0-9]\), recompute \([a-z]*\)\(, micro-batch \([0-9]*\)\)\{0,1\}).*/TP \2 x PP \1 x DP \3, ZeRO \4 \5 mb\7/p' "$T/cmp-$tgt")
    run "$OCTOPIPE" tui --model nemotronh-8b-seq32k --cluster 8xH200 --tp 1 --zero 1 --microbatches 16 --target $tgt \
        --render 200x40
    got=$(printf '%s\n' "$OUT" | sed -n 's/.*layout \(TP [0-9]* x PP [0-9]* x DP [0-9]*, ZeRO [0-9]\)\(, \([a-z]*\) recompute\)\{0,1\}\(, micro-batch \([0-9]*\)\)\{0,1\}, chosen by.*/\1 \3 mb\5/p')
    [ -z "${got##*  mb*}" ] && got=$(printf '%s' "$got" | sed 's/  mb/ none mb/')
    if [ -n "$want" ] && [ "$got" = "$want" ]; then ok "--target $tgt: the UI opens on compare's layout ($got)"
    else not_ok "--target $tgt: the UI opens on compare's layout" "compare: $(cat "$T/cmp-$tgt") -> '$want'" "tui: '$got'"; fi
done
if [ "$(cat "$T/cmp-octopipe")" != "$(cat "$T/cmp-megatron")" ]; then
    ok "and the two targets pick differently here (so the UI's follows the target)"
else not_ok "the two targets pick differently here" "$(cat "$T/cmp-octopipe")"; fi

start 160 40 -- tui --target megatron
expect ' target megatron$' "the status line names the target"
expect 'OctoPipe +nemotron-nano-v2-9b (1f1b|1f1b balanced|interleaved) ' "the plan opened is a baseline Megatron-LM runs"
keys T
expect 'tuning for megatron done: [0-9]+ plans simulated' "T tunes with Megatron-LM's own search" 30
expect "^ +0 +megatron .*the fastest plan Megatron-LM runs" "its answer is the step shown"
keys Enter
expect 'tuner step 0 \(megatron\)' "Enter adopts it"
keys S C-u
typ "$T/mega.json"
keys Enter
expect "saved.*mega.json" "and it saves"
keys b
expect '^ +0 +start .*gpipe.*n/a on megatron: Megatron-LM runs only its own 1F1B' \
    "b: the baselines Megatron-LM cannot run are marked n/a, as compare --target marks them"
expect_not '^ +1 +scheduling .*1f1b .*n/a' "and 1f1b is not"
keys q y
expect '^exit status 0' "after the keys q y: exits with status 0"
run "$OCTOPIPE" export megatron-args "$T/mega.json"
expect_rc 0 "the plan tuned for megatron in the UI exports as Megatron-LM's flags"
expect_match '--pipeline-model-parallel-size' "$OUT" "with its pipeline size"

# ---- torchtitan ---------------------------------------------------------------------------
# (a model torchtitan has, over 2 FSDP replicas: a Mamba model, or a pipeline of one
# replica, which it would train in fp32, leaves nothing to tune for it)
start 160 40 -- tui --target torchtitan --model llama2-7b --cluster 16xH200 --tp 1 --dp 2 --microbatches 64
expect ' target torchtitan$' "the status line names torchtitan"
keys T
expect 'tuning .* only what runs on torchtitan|tuning done: [0-9]+ steps' "T tunes only what torchtitan runs" 10
expect 'tuning done: [0-9]+ steps' "and finishes" 60
keys Enter
expect 'tuner step [0-9]+' "Enter adopts the best step"
keys S C-u
typ "$T/titan.json"
keys Enter
expect "saved.*titan.json" "and it saves"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
run "$OCTOPIPE" export torchtitan "$T/titan.json" -o "$T/titan"
expect_rc 0 "the plan tuned for torchtitan in the UI exports for torchtitan"
if [ -s "$T/titan/schedule.csv" ] && [ -s "$T/titan/job.toml" ]; then ok "with its job config and schedule CSV"
else not_ok "export torchtitan writes job.toml and schedule.csv" "$(ls -la "$T/titan" 2>&1)"; fi

# a plan torchtitan runs none of (a pipeline of one replica: it would train it in fp32):
# T says why, not that no plan fits in memory
"$OCTOPIPE" plan --model llama2-7b --cluster 8xH200 --schedule 1f1b --microbatches 16 -o "$T/pp8.json" >/dev/null 2>&1
start 160 40 -- tui --target torchtitan "$T/pp8.json"
expect ' target torchtitan$' "a pure pipeline opens under --target torchtitan"
keys T
expect 'cannot tune: the target runtime runs none of the baselines of model .llama2-7b. \(the first refused: parallel\.dp: 1 with pipel' \
    "T says torchtitan runs none of its baselines, and why" 20
keys q
expect '^exit status 0' "after the key q: exits with status 0"

# ---- torchtitan without a plan: not the default sample, which it cannot run -------------
# (nemotron-nano-v2-9b's Mamba layers; the UI opened it and only T said why) but one it
# runs, at a layout with FSDP replicas, and the status line says so at once
run "$OCTOPIPE" compare --target torchtitan --model nemotron-nano-v2-9b --cluster 8xH200 --microbatches 32
expect_match 'torchtitan has no Mamba-2 layer' "$ERR" "torchtitan runs no layout of the default sample (Mamba layers)"
run "$OCTOPIPE" tui --target torchtitan --render 200x40
expect_rc 0 "tui --target torchtitan without a plan opens"
expect_match 'OctoPipe +llama2-70b .* on 16xH200 \(pp [0-9]+ x tp [0-9]+ x dp ([2-9]|[1-9][0-9]+) = 16 gpus' "$OUT" \
    "on llama2-70b on 16xH200 with 2 or more data-parallel (FSDP) replicas, not the default sample"
expect_match '^torchtitan cannot run the default sample nemotron-nano-v2-9b \(Mamba layers\): opened llama2-70b on 16xH200' \
    "$OUT" "the status line says why at once"
if printf '%s\n' "$OUT" | grep -q 'plan cannot run\|--layout pp'; then not_ok "the plan opened runs, no --layout pp offered" "$OUT"
else ok "the plan opened runs, and --layout pp (refused by torchtitan) is not offered"; fi
run "$OCTOPIPE" tui --render 200x40
expect_match 'OctoPipe +nemotron-nano-v2-9b ' "$OUT" "without --target the default sample is still nemotron-nano-v2-9b"
start 120 36 -- tui --target torchtitan
expect 'torchtitan cannot run the default sample' "on the terminal the status line says why at once"
keys T
# (a fast machine finishes the tuning before the screen is read: its end line counts too)
expect 'tuning .* only what runs on torchtitan|tuning done: [0-9]+ steps' \
    "T tunes for torchtitan (it did not: it runs none of the default's baselines)" 20
expect_not 'cannot tune' "and does not say it cannot"
keys Escape
wait_gone 'tuning .* only what' 30
keys S C-u
typ "$T/titan-default.json"
keys Enter
expect "saved.*titan-default.json" "the plan opened saves"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
run "$OCTOPIPE" export torchtitan "$T/titan-default.json" -o "$T/titan-default"
expect_rc 0 "and exports for torchtitan: the plan opened is one it runs"

done_testing
