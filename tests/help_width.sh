#!/bin/sh
# Every --help fits an 80-column terminal: `octopipe --help`, `octopipe CMD --help` for
# every command it lists, and the forms with help of their own (import profile, export
# FORMAT, calibrate --gpu). One check per help text; a failure names each line over 80
# columns with its width. The texts are worded by hand to fit (no automatic re-wrapping);
# the summaries of tune and compare, built from numbers and names, are wrapped by the
# program, and checked here too.
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

# The summaries above compare's table and below tune's progress line are prose, wrapped
# to 80 columns by the program (cli_print_wrapped): layouts whose words are long (EP,
# fp32 gradients, selective recompute, a micro-batch size) and budgets that leave some
# layouts unjudged. compare's table rows are a table, not prose, and are not checked.
check_width() {
    wide=$(printf '%s\n' "$2" | awk -v max="$MAX" 'length($0) > max { print length($0) ": " $0 }')
    if [ -z "$wide" ]; then ok "$1: every line fits $MAX columns"
    else not_ok "$1: $(printf '%s\n' "$wide" | wc -l) line(s) over $MAX columns" "$wide"; fi
}
for lay in "" "--grads fp32 --recompute selective"; do
    # shellcheck disable=SC2086
    out=$("$OCTOPIPE" tune --model deepseek-v2-lite --cluster 16xH200 --microbatches 32 --evals 200 \
        $lay --verbose -o "$TMPDIR_TEST/t.json" 2>&1 | grep -v '^ *[0-9]* [a-z]')
    check_width "tune's layout lines and summary (deepseek-v2-lite ${lay:-default})" "$out"
    # shellcheck disable=SC2086
    out=$("$OCTOPIPE" compare --model deepseek-v2-lite --cluster 16xH200 --microbatches 32 \
        $lay --target megatron 2>&1 | sed '/^SCHEDULE/,/^$/d')
    check_width "compare's header and speedup lines (deepseek-v2-lite ${lay:-default})" "$out"
done
done_testing
