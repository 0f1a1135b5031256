#!/bin/sh
# Every --help fits an 80-column terminal: `octopipe --help`, `octopipe CMD --help` for
# every command it lists, and the forms with help of their own (import profile, export
# FORMAT, calibrate --gpu). One check per help text; a failure names each line over 80
# columns with its width. The texts are worded by hand to fit (no automatic re-wrapping).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
MAX=${MAX_WIDTH:-80}

cmds=$("$OCTOPIPE" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z-]*\) .*/\1/p')
if [ "$(echo $cmds | wc -w)" -ge 10 ]; then ok "octopipe --help lists the commands ($(echo $cmds | wc -w))"
else not_ok "octopipe --help lists the commands" "got: $cmds"; fi
{
    echo ""
    for c in $cmds; do echo "$c"; done
    echo "import profile"
    for f in torch-csv megatron-layout megatron-args torchtitan svg; do echo "export $f"; done
    echo "calibrate --gpu M"
} > "$TMPDIR_TEST/helps"
while IFS= read -r h; do
    # shellcheck disable=SC2086
    "$OCTOPIPE" $h --help >"$TMPDIR_TEST/out" 2>"$TMPDIR_TEST/err"
    rc=$?
    name="octopipe${h:+ $h} --help"
    if [ $rc != 0 ] || [ ! -s "$TMPDIR_TEST/out" ]; then
        not_ok "$name prints its help" "exit $rc" "$(cat "$TMPDIR_TEST/err")"; continue; fi
    wide=$(awk -v max="$MAX" '{ sub(/\r$/, "") } length($0) > max { print length($0) ": " $0 }' "$TMPDIR_TEST/out")
    if [ -z "$wide" ]; then ok "$name: every line fits $MAX columns ($(wc -l <"$TMPDIR_TEST/out") lines)"
    else not_ok "$name: $(printf '%s\n' "$wide" | wc -l) line(s) over $MAX columns" "$wide"; fi
done < "$TMPDIR_TEST/helps"
done_testing
