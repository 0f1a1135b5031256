#!/bin/sh
# Every malformed file in tests/data/bad gets exactly its expected one-line message on
# stderr, nothing on stdout, and exit status 2 from `octopipe check`.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

cd "$top_srcdir/tests/data/bad" || exit 1
count=0
for f in *.json; do
    count=$((count + 1))
    want=$(cat "${f%.json}.expected")
    run "$OCTOPIPE" check "$f"
    lines=$(printf '%s\n' "$ERR" | wc -l)
    if [ "$RC" = 2 ] && [ "$ERR" = "$want" ] && [ "$lines" = 1 ] && [ -z "$OUT" ]; then
        ok "$f: $want"
    else
        not_ok "$f" "exit status $RC (want 2), $lines stderr lines" "got:  $ERR" "want: $want" "stdout: $OUT"
    fi
done
if [ "$count" -ge 30 ]; then ok "corpus holds $count malformed files (at least 30)"; else not_ok "corpus holds only $count files"; fi

# all at once: every file still reported, one line each, exit 2
run "$OCTOPIPE" check *.json
lines=$(printf '%s\n' "$ERR" | wc -l)
if [ "$RC" = 2 ] && [ "$lines" = "$count" ]; then ok "checking all $count together reports each once"
else not_ok "checking all together" "exit $RC, $lines lines for $count files"; fi
done_testing
