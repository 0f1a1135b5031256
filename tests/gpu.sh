#!/bin/sh
# The cuda backend from `make check`: without a GPU it fails cleanly ("no GPU: ...",
# exit 1) and tests/gpu/selftest.sh skips (77); with one, the self-test must pass.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3   # tests/gpu/selftest.sh reads its JSON with python3
plan="$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"

run "$OCTOPIPE" run --backend cuda "$plan"
if [ "$RC" = 0 ]; then
    ok "octopipe run --backend cuda runs here (a GPU is present)"
elif [ "$HAVE_CUDA_NCCL" = yes ] && printf '%s\n' "$ERR" | grep -q '^octopipe run: no GPU: .'; then
    expect_rc 1 "octopipe run --backend cuda without a GPU: one line 'no GPU: why', exit 1"
else
    expect_match 'octopipe run: (no GPU: |the cuda backend was not built|the plan needs [0-9]+ GPUs)' "$ERR" \
        "octopipe run --backend cuda fails cleanly when it cannot run"
fi
# a tp 2 plan's run prices the plan without the all-reduces its kernels leave out before
# it looks for a GPU: without one, that is still the line it fails with
"$OCTOPIPE" plan --model llama2-7b --cluster 8xH200 --schedule 1f1b --microbatches 4 --tp 2 \
    -o "$TMPDIR_TEST/tp2.json" >/dev/null 2>&1
run "$OCTOPIPE" run --backend cuda --json "$TMPDIR_TEST/tp2.json"
if [ "$RC" = 0 ]; then
    expect_match '"predicted_with_collectives_ms"' "$OUT" "a tp 2 run on a GPU reports the plan's own prediction beside"
elif [ "$HAVE_CUDA_NCCL" = yes ] && printf '%s\n' "$ERR" | grep -q '^octopipe run: no GPU: .'; then
    expect_rc 1 "a tp 2 plan gets as far as looking for a GPU"
else
    expect_match 'octopipe run: (no GPU: |the cuda backend was not built|the plan needs [0-9]+ GPUs)' "$ERR" \
        "a tp 2 plan fails cleanly when it cannot run"
fi
run "$OCTOPIPE" run --share-gpus "$plan"
expect_rc 2 "--share-gpus with the emulator is a usage error"
expect_match 'share-gpus is for the cuda backend' "$ERR" "and says why"
if [ "$HAVE_CUDA_NCCL" = yes ]; then
    run "$OCTOPIPE" run --backend cuda --share-gpus --kill-device 1 --kill-after 2 "$plan"
    if [ "$RC" != 0 ] && printf '%s\n' "$ERR" | grep -q '^octopipe run: no GPU: .'; then
        expect_rc 1 "--share-gpus without a GPU still fails cleanly"
    else
        expect_rc 1 "a device killed on the GPU stops the run"
        expect_match 'device 1: killed after 2 ops' "$ERR" "naming the device"
    fi
fi
# the self-test's parts that need no GPU: which models, then the whole script on the
# emulator (--dry), printing the very tables the GPU run fills
st="$top_srcdir/tests/gpu/selftest.sh"
run sh -n "$st"
expect_rc 0 "tests/gpu/selftest.sh is sound shell"
run sh "$st" --list
expect_match '^models: deepseek-v2-lite deepseek-v3 gemma2-27b gemma3-12b .* nemotronh-8b qwen3-next-80b-a3b$' "$OUT" \
    "the self-test covers every bundled model made from an architecture"
t0=$(date +%s)
run env OUT="$TMPDIR_TEST/selftest" SELFTEST_MODELS="gemma3-12b nemotronh-8b llama2-7b" sh "$st" --dry
t1=$(date +%s)
expect_rc 0 "selftest.sh --dry: every part end to end on the emulator"
if [ $((t1 - t0)) -le 120 ]; then ok "within 2 minutes ($((t1 - t0)) s)"; else not_ok "--dry took $((t1 - t0)) s"; fi
expect_match '^octopipe GPU self-test \(--dry\), [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} UTC, budget [0-9]+ s$' "$OUT" \
    "it prints the date and its budget"
for h in '^== 0\. preflight \(emu\)$' '^kernels in octopipe-cuda: ' \
         '^== 1\. kernel ceilings: octopipe calibrate --gpu --ceilings \(predicted\)$' \
         '^KERNEL +SHAPE +MS +TFLOP/S +GB/S +MODE$' '^gemm square +8192 x 8192 x 8192 .* predicted$' \
         '^hbm copy .* predicted$' '^attention windowed .* predicted$' \
         '^NCCL P2P +MB +MS +GB/S +MODE$' '^device 0 -> 1 +[0-9.]+ +[0-9.]+ +[0-9.]+ emu$' \
         '^== 2\. per kernel, predicted against measured: ' \
         '^KERNEL +CLASS +F PRED ms +F MEAS ms +F ERR +B PRED ms +B MEAS ms +B ERR MODE$' \
         '^swa\+mlp attn_core +flash_attn .* emulated$' \
         '^== 3\. the protocol \(emu; each command under its own timeout\)$' \
         '^CHECK +PREDICTED +MEASURED +ERROR +NOTE \(MODE\)$' '^zb-v, 4 devices .* ok \(emu\)$' \
         '^device 1 killed after 3 ops +exit 1 ' '^transfer 5 misroute +exit 1: .*mis-routed' \
         '^transfer 5 corrupt +exit 1: .*corrupted' '^== 4\. per model \(emu\)' \
         '^  LAYER KIND +TABLE ms +FITTED ms +MEASURED ms +ERROR MODE$' \
         '^  mamba2 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[-+]0\.0% emu$' '^llama2-7b \(predicted: not in the fit\):$' \
         '^nemotronh-8b \(in the fit\):$'; do
    expect_match "$h" "$OUT" "--dry prints /$h/"
done
files=$(ls "$TMPDIR_TEST/selftest" | tr '\n' ' ')
if [ "$(ls "$TMPDIR_TEST/selftest" | wc -l)" -le 4 ]; then ok "it writes at most 4 files to \$OUT ($files)"
else not_ok "it writes more than 4 files to \$OUT" "$files"; fi
if [ "$(cat "$TMPDIR_TEST/selftest/selftest.log" 2>/dev/null)" = "$OUT" ]; then ok "with OUT set, all it printed is in \$OUT/selftest.log"
else not_ok "\$OUT/selftest.log holds what the self-test printed" "$(head -3 "$TMPDIR_TEST/selftest/selftest.log" 2>&1)"; fi
table=$(cat "$TMPDIR_TEST/selftest/tables.txt" 2>&1)
expect_match '^octopipe GPU self-test \(--dry\), [0-9-]+ [0-9:]+ UTC' "$table" "and its tables in \$OUT/tables.txt, dated"
expect_match '^  mamba2 +[0-9.]+ +[0-9.]+ ' "$table" "with every model's rows"
# every number of a table says which mode made it: a row with a decimal number names one
# (model names such as jamba-v0.1 in the headers and the 'wrote' line are not numbers)
unnamed=$(printf '%s\n' "$table" | grep -E '[0-9]\.[0-9]' | grep -Ev '(emu|predicted|emulated|gpu)\)?( +FAIL)?$|^(models?|mean error|wrote) |:$|^(gemm|grouped_gemm|flash_attn|eager_attn|ssd|scan|memory|launch us) ')
if [ -z "$unnamed" ]; then ok "every table row with a number names its mode"
else not_ok "table rows without a mode" "$unnamed"; fi
# the iteration row predicts what sim predicts for the plan the self-test wrote
it=$(sed -n 's/^  iteration  *\([0-9.]*\) .*/\1/p' "$TMPDIR_TEST/selftest/tables.txt" | head -1)
expect_match "^[0-9]+\.[0-9]{3}$" "$it" "an iteration row for each model ($it ms)"
# every command that can touch a GPU (octopipe, the probe, nvidia-smi, cuobjdump, the
# binary) runs under timeout: one hang costs the slot otherwise
untimed=$(grep -nE '"\$OCTOPIPE" |"\$probe"( |\))|nvidia-smi -|cuobjdump -|nm "\$cuda_bin"' "$st" |
          grep -v '^[0-9]*: *#' | grep -v '\[ ! -x' | grep -v 'timeout ')
if [ -z "$untimed" ]; then ok "every GPU command line of selftest.sh runs under timeout"
else not_ok "selftest.sh: GPU commands without a timeout" "$untimed"; fi
run env OUT="$TMPDIR_TEST/selftest2" SELFTEST_MODELS=gemma3-12b SELFTEST_ITER_PCT=-1 sh "$st" --dry
expect_rc 1 "an error above the threshold fails it"
expect_match 'iteration .*  FAIL$' "$OUT" "marking the row"
# the GPU path of the script (its GPU-only branches never run before the slot otherwise)
# on a fake GPU: two fake H200s, nvidia-smi, and an octopipe whose cuda backend is the
# emulator and whose calibrate --gpu is --emulate-gpu's
fake="$TMPDIR_TEST/fakegpu"
mkdir -p "$fake/bin"
printf '#!/bin/sh\necho "gpu 0: fake H200"\necho "gpu 1: fake H200"\n' >"$fake/octopipe-gpuinfo"
printf '#!/bin/sh\necho "0, fake H200, 570.00, 143771 MiB"\n' >"$fake/bin/nvidia-smi"
{
    echo '#!/bin/sh'
    echo 'json='
    echo 'for a in "$@"; do'
    echo '    shift'
    echo '    case "$a" in cuda) a=emu ;; --share-gpus) continue ;; --gpu) set -- "$@" --emulate-gpu ;; --json) json=1 ;; esac'
    echo '    set -- "$@" "$a"'
    echo 'done'
    echo "[ -z \"\$json\" ] && exec \"$OCTOPIPE\" \"\$@\""
    echo "\"$OCTOPIPE\" \"\$@\" | sed 's/\"kernels\": *\"emulated\"/\"kernels\": \"architecture\"/'"
} >"$fake/octopipe"
cp "$fake/octopipe-gpuinfo" "$fake/octopipe-cuda"
chmod +x "$fake/octopipe" "$fake/octopipe-gpuinfo" "$fake/octopipe-cuda" "$fake/bin/nvidia-smi"
run env PATH="$fake/bin:$PATH" top_builddir="$fake" OCTOPIPE="$fake/octopipe" OUT="$TMPDIR_TEST/fakeout" \
    SELFTEST_MODELS=nemotronh-8b sh "$st"
expect_rc 0 "selftest.sh's GPU path runs end to end on a fake GPU (the emulator behind it)"
expect_match '^nvidia-smi: 0, fake H200' "$OUT" "its preflight asks nvidia-smi"
expect_match '^llama2-7b 1f1b on 2 GPUs .* \(gpu\)$' "$OUT" "it counts the GPUs and runs on them"
expect_match '^zb-v, 4 devices shared .* \(gpu\)$' "$OUT" "sharing them among 4 devices"
expect_match '^device 0 -> 1 .* gpu$' "$OUT" "NCCL between the two"
expect_match '^  iteration .* gpu$' "$OUT" "and per model, last"
run sh "$top_srcdir/tests/gpu/selftest.sh"
case "$RC" in
77) skip "tests/gpu/selftest.sh" "$(printf '%s\n' "$OUT" | tail -1)" ;;
0) ok "tests/gpu/selftest.sh: the cuda backend ran on the GPUs present" ;;
*) not_ok "tests/gpu/selftest.sh" "exit $RC" "$OUT" "$ERR" ;;
esac
done_testing
