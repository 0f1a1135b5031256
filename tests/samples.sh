#!/bin/sh
# The bundled samples and plans are valid, the expected ones exist, and they can be
# named by their short names.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
cd "$top_srcdir" || exit 1

for m in nemotron-nano-v2-9b deepseek-16b gpt-oss-20b gpt-13b; do
    if [ -f "samples/models/$m.json" ]; then ok "sample model $m exists"; else not_ok "sample model $m exists"; fi
done
for c in 4xH200 8xH200 16xH200 32xH200 64xH200 8xH100; do
    if [ -f "samples/clusters/$c.json" ]; then ok "sample cluster $c exists"; else not_ok "sample cluster $c exists"; fi
done
for f in samples/models/*.json samples/clusters/*.json plans/*.json; do
    [ -f "$f" ] || continue
    run "$OCTOPIPE" check "$f"
    if [ "$RC" = 0 ]; then ok "$f is valid"; else not_ok "$f is valid" "$ERR"; fi
done
run "$OCTOPIPE" show nemotron-nano-v2-9b
expect_rc 0 "a sample can be named by its short name"
expect_match '^model nemotron-nano-v2-9b: 56 layers' "$OUT" "the default sample has the profile's 56 layers"
run "$OCTOPIPE"
expect_rc 0 "octopipe without arguments opens the default sample"
expect_match 'nemotron-nano-v2-9b' "$OUT" "the default sample is nemotron-nano-v2-9b"
done_testing
