#!/bin/sh
# The cuda backend from `make check`: without a GPU it fails cleanly ("no GPU: ...",
# exit 1) and tests/gpu/selftest.sh skips (77); with one, the self-test must pass.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
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
# the self-test's parts that need no GPU: which models, the plans and runs, the table
run sh -n "$top_srcdir/tests/gpu/selftest.sh"
expect_rc 0 "tests/gpu/selftest.sh is sound shell"
run sh "$top_srcdir/tests/gpu/selftest.sh" --list
expect_match '^models: deepseek-v2-lite deepseek-v3 gemma2-27b gemma3-12b .* nemotronh-8b qwen3-next-80b-a3b$' "$OUT" \
    "the self-test covers every bundled model made from an architecture"
run env OUT="$TMPDIR_TEST/selftest" SELFTEST_MODELS="gemma3-12b nemotronh-8b" sh "$top_srcdir/tests/gpu/selftest.sh" --dry
expect_rc 0 "selftest.sh --dry: its plans, runs and tables on the emulator"
expect_match '  mamba2 +[0-9.]+ +[0-9.]+ +[-+]0\.0%' "$OUT" "a row per layer kind, predicted against measured"
expect_match '^octopipe GPU self-test \(--dry\), [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} UTC$' "$OUT" "it prints the date"
if [ "$(cat "$TMPDIR_TEST/selftest/selftest.log" 2>/dev/null)" = "$OUT" ]; then ok "with OUT set, all it printed is in \$OUT/selftest.log"
else not_ok "\$OUT/selftest.log holds what the self-test printed" "$(head -3 "$TMPDIR_TEST/selftest/selftest.log" 2>&1)"; fi
table=$(cat "$TMPDIR_TEST/selftest/table.txt" 2>&1)
expect_match '^octopipe GPU self-test, [0-9-]+ [0-9:]+ UTC: dry run' "$table" "and its tables in \$OUT/table.txt, dated"
expect_match '^  mamba2 +[0-9.]+ +[0-9.]+ ' "$table" "with every model's rows"
# the iteration row predicts what sim predicts for the plan the self-test wrote
it=$("$OCTOPIPE" sim --json "$TMPDIR_TEST/selftest/gemma3-12b.plan.json" 2>/dev/null |
     python3 -c 'import json, sys; print("%.3f" % json.load(sys.stdin)["makespan_ms"])')
expect_match "  iteration +${it:-none} +[0-9.]+ +[-+]0\\.0%" "$OUT" "and the iteration's, at sim's prediction ($it ms)"
run env OUT="$TMPDIR_TEST/selftest" SELFTEST_MODELS=gemma3-12b SELFTEST_ITER_PCT=-1 sh "$top_srcdir/tests/gpu/selftest.sh" --dry
expect_rc 1 "an error above the threshold fails it"
expect_match 'iteration .*  FAIL$' "$OUT" "marking the row"
run sh "$top_srcdir/tests/gpu/selftest.sh"
case "$RC" in
77) skip "tests/gpu/selftest.sh" "$(printf '%s\n' "$OUT" | tail -1)" ;;
0) ok "tests/gpu/selftest.sh: the cuda backend ran on the GPUs present" ;;
*) not_ok "tests/gpu/selftest.sh" "exit $RC" "$OUT" "$ERR" ;;
esac
done_testing
