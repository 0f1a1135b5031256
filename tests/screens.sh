#!/bin/sh
# Golden screens: `octopipe tui --render WxH [--keys K]` draws one frame as plain text
# without a terminal; each frame must equal its file in tests/data/screens. After an
# intended change of the UI, regenerate them with OCTOPIPE_UPDATE_GOLDEN=1 make check
# TESTS=tests/screens.sh and review the diff.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
dir="$top_srcdir/tests/data/screens"
plans="$top_srcdir/plans"

# name size keys args...
golden() {
    name=$1 size=$2 keys=$3; shift 3
    run "$OCTOPIPE" tui --no-color --render "$size" --keys "$keys" "$@"
    if [ "$RC" != 0 ]; then not_ok "$name renders" "exit $RC" "$ERR"; return; fi
    if [ -n "${OCTOPIPE_UPDATE_GOLDEN:-}" ]; then printf '%s\n' "$OUT" > "$dir/$name.txt"; fi
    if [ "$OUT" = "$(cat "$dir/$name.txt" 2>/dev/null)" ]; then ok "$name matches its golden screen"
    else not_ok "$name matches its golden screen" "$(printf '%s\n' "$OUT" | diff "$dir/$name.txt" - | head -20)"; fi
}

cd "$top_srcdir" || exit 1
golden gpt13b-1f1b-100x30 100x30 "" "$plans/gpt-13b-4xH200-1f1b.json"
golden gpt13b-1f1b-zoom-cursor-100x30 100x30 "++lllj" "$plans/gpt-13b-4xH200-1f1b.json"
golden gpt13b-1f1b-help-100x40 100x40 "?" "$plans/gpt-13b-4xH200-1f1b.json"
golden nemotron-tuned-140x36 140x36 "" "$plans/nemotron-nano-v2-9b-8xH200-tuned.json"
golden nemotron-dualpipev-critical-140x36 140x36 "PC" "$plans/nemotron-nano-v2-9b-8xH200-dualpipev.json"
golden too-small-60x20 60x20 "" "$plans/gpt-13b-4xH200-1f1b.json"
# the search is UTF-8: a quantifier after a character applies to the whole character
# (byte-wise, 日? made only its last byte optional and nothing matched)
run "$OCTOPIPE" tui --render 120x30 --keys "/$(printf '\346\227\245')?1F0\\n" "$plans/gpt-13b-4xH200-1f1b.json"
expect_match 'match 1 of 1' "$OUT" "a pattern with a UTF-8 character and a quantifier matches as written"
done_testing
