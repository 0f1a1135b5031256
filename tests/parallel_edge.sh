#!/bin/sh
# Parallel layouts at their edges, from an outside review of issue 11: what a plan with
# a default layout writes, clusters that carry a replica, and how calibrate and the other
# commands treat a plan with a layout.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
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

done_testing
