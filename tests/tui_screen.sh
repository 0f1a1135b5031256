#!/bin/sh
# The screen shows the truth (tmux-driven, on a private server, and --render frames): the
# cursor and search matches show on ops narrower than a column, a column with any work is
# not drawn as bubble, and what the other views show is labelled and reachable.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
T="$TMPDIR_TEST"

TUI_NAME=screen
. "$top_srcdir/tests/tuilib.sh"
# the gpu0 chart row with its colours (256-colour escapes as tmux reports them)
gpu0_row() { tm capture-pane -p -e | grep '^gpu0 \|gpu0 ' | head -1; }

# ---- the cursor shows on every op, however narrow -------------------------------------
start 120 36 --
expect '^gpu0 ' "the default sample at 120 columns"
keys End
expect '#[0-9]+ in its order' "End goes to the last op"
last=$(screen | sed -n 's/.*#\([0-9]*\) in its order.*/\1/p' | head -1)
keys Home
expect '#0 in its order' "Home goes to the first op"
missing=0 i=0
while [ "$i" -le "$last" ]; do
    wait_for "#$i in its order" 5 || break
    # the cursor's colours: black on white (256 colours: 38;5;16 on 48;5;231)
    if ! gpu0_row | grep -q '48;5;231'; then missing=$((missing + 1)); fi
    keys l
    i=$((i + 1))
done
if [ "$i" -gt "$last" ] && [ "$missing" = 0 ]; then ok "the cursor is drawn on each of gpu0's $((last + 1)) ops"
else not_ok "the cursor is drawn on every op" "$missing of $((last + 1)) ops without a visible cursor (walked $i)"; fi

# a search match that is narrower than a column still shows
keys /
typ '^0W(3|5) '
keys Enter
expect 'match 1 of 2' "a search for two narrow ops"
if gpu0_row | grep -q '48;5;51m'; then ok "the match that is not under the cursor is drawn"; else not_ok "the other match is drawn" "$(gpu0_row)"; fi
keys q
expect '^exit status 0' "after the key q: exits with status 0"

# ---- a column with any work is not drawn as bubble ------------------------------------
run "$OCTOPIPE" plan --model "$top_srcdir/samples/models/gpt-13b.json" --cluster "$top_srcdir/samples/clusters/4xH200.json" \
    --schedule 1f1b --microbatches 8 --partition 37,1,1,1 -o "$T/skew.json"
run "$OCTOPIPE" tui --render 100x30 "$T/skew.json"
row=$(printf '%s\n' "$OUT" | grep '^gpu1 ')
if printf '%s\n' "$row" | grep -q '[^.]$\|[:FBfb]'; then ok "a gpu busy a few percent is not drawn as pure bubble"
else not_ok "a nearly idle gpu shows its work" "$row"; fi

# ---- a deadlock: its text wrapped at words, in gpus, its ops marked, memory kept -------
k='/^2I3 \n'
i=0
while [ $i -lt 30 ]; do k="$k<"; i=$((i + 1)); done
run "$OCTOPIPE" tui --render 80x30 --keys "$k"
expect_match 'DEADLOCK' "$OUT" "moving 2I3 before its forwards deadlocks"
text=$(printf '%s\n' "$OUT" | sed -n '/^ deadlock: /,/^$/p' | sed 's/^ //' | tr '\n' ' ')
expect_match '2I3 \(gpu 2\) waits for 2F3 \(gpu 2\)' "$text" "the cycle's text is wrapped at word boundaries and says gpu"
if printf '%s\n' "$text" | grep -q device; then not_ok "the cycle's text says gpu, not device" "$text"; else ok "the cycle's text says gpu, not device"; fi
expect_match '^ 0 \[#+\.*\] *[1-9][0-9]*G' "$OUT" "the memory bars keep the values of the plan shown"
start 120 36 --
expect '^gpu0 ' "the UI draws the plan"
keys /
typ '^2I3 '
keys Enter
i=0
while [ $i -lt 30 ]; do keys '<'; i=$((i + 1)); done
expect 'DEADLOCK' "the edited order deadlocks"
if tm capture-pane -p -e | grep 'gpu2 ' | grep -q '48;5;160'; then ok "the cycle's ops are marked on the chart"
else not_ok "the cycle's ops are marked on the chart" "$(tm capture-pane -p -e | grep 'gpu2 ')"; fi
keys q y
expect '^exit status 0' "quitting without saving"

# ---- measured rows and gauges say which plan they measured, greyed once it changes ----
start 120 40 -- tui --time-scale 0.2 --iters 3 "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect '^gpu0 ' "the UI draws the plan"
keys R
expect 'run done: 3 iterations' "a run of the plan" 20
expect 'run: done, 3 iterations of gpt-13b 1f1b  F8' "the run panel names the plan it measured"
expect '^  meas ' "its measured rows are labelled meas"
keys ']'
expect 'stage 0 now ends' "an edit"
expect 'iterations of gpt-13b 1f1b \[edited since: greyed\]' "the run panel says the run measured the plan before the edit"
expect '^  old ' "the measured rows are labelled old"
if tm capture-pane -p -e | grep '  old' | grep -q '48;5;25m'; then not_ok "and greyed" "$(tm capture-pane -p -e | grep '  old' | head -1)"
else ok "and greyed (no op colours)"; fi
keys u
expect '^  meas ' "undoing the edit makes them current again"
keys o
typ "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
keys Enter
expect 'opened ' "opening a file again"
expect 'iterations of gpt-13b 1f1b \[another file: greyed\]' "greys the run of the plan opened before"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# ---- every gpu is reachable: paging, the position, the header's bars, compare ---------
BIG="--model nemotronh-56b --cluster 64xH200 --microbatches 128 --layout pp"
run "$OCTOPIPE" tui $BIG --render 120x40
expect_match 'gpu 0-25 of 64' "$OUT" "64 gpus: the chart says which rows it shows"
expect_match ' 0-12 of 64$' "$OUT" "and so do the header's memory bars"
run "$OCTOPIPE" tui $BIG --render 120x40 --keys G
expect_match 'gpu 38-63 of 64' "$OUT" "G goes to the last gpu"
expect_match '^gpu63 ' "$OUT" "whose row shows"
expect_match '63 \[[#.]+\] *[0-9]+G' "$OUT" "with its memory bar"
run "$OCTOPIPE" tui $BIG --render 120x40 --keys Gg
expect_match 'gpu 0-25 of 64' "$OUT" "g goes back to the first"
run "$OCTOPIPE" tui $BIG --render 120x40 --keys 'v\tG'
n=$(printf '%s\n' "$OUT" | grep -c '^gpu63 ')
if [ "$n" = 2 ]; then ok "in the compare view both charts scroll to the last gpu"; else not_ok "both charts show gpu63" "$OUT"; fi
expect_match 'compare: 1f1b [0-9.]+ s OUT OF MEMORY \(gpu [0-9]+\)' "$OUT" "a compared plan that does not fit is marked"
expect_match 'plan: [0-9.]+ s, speedup 1\.[0-9]+x' "$OUT" "the plan's title has its speedup over the compared plan"
start 120 40 -- tui $BIG
expect 'gpu 0-[0-9]+ of 64' "the UI with 64 gpus"
page=$(screen | sed -n 's/.*gpu 0-\([0-9]*\) of 64.*/\1/p' | head -1)
keys PageDown
expect "gpu $((page + 1))-$((2 * page + 1)) of 64" "PgDn pages the gpu rows"
expect "on gpu $((page + 1)), #" "with the cursor"
keys PageUp
expect "gpu 0-$page of 64" "PgUp pages back"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# ---- a pan shifts the rows the terminal shows (issue 28, 11): what it shows after pans
# right and left is what a full repaint (Ctrl-L) draws, colours included
# (a line at a time: tmux writes a line's colours as changes from the line before's end,
# and a row shifted on the terminal may end in cleared cells a repaint does not leave)
colours() {
    y=0
    while [ $y -lt 60 ]; do
        tm capture-pane -p -e -S $y -E $y | sed 's/\(\x1b\[[0-9;]*m\)*$//'
        y=$((y + 1))
    done
}
start 200 60 TERM=xterm-256color -- tui $BIG
expect 'gpu 0-[0-9]+ of 64' "the dense chart at 200x60"
key_settle +
key_settle +
for k in L L L H L H H; do key_settle $k; done   # each pan drawn before the next
expect ' at [0-9.]+ ms|#[0-9]+ in its order' "after seven pans"
colours > "$T/panned.txt"
keys C-l
wait_stable
colours > "$T/repaint.txt"
if cmp -s "$T/panned.txt" "$T/repaint.txt" && grep -q 'gpu0 .*[FBIW]' "$T/panned.txt"; then
    ok "after pans the screen is what a repaint draws, cell for cell and colour for colour"
else not_ok "the panned screen equals its repaint" "$(diff "$T/panned.txt" "$T/repaint.txt" | head -20)"; fi
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# the run's gauges: every gpu reachable too
start 120 40 -- tui $BIG --time-scale 0 --iters 1
expect '^gpu0 ' "the UI draws the plan"
keys R
expect 'run done: 1 iterations' "a run on 64 gpus" 60
expect 'gpus 0-[0-9]+ of 64 \(PgUp/PgDn\)' "the gauges that do not fit say which show"
keys G
expect ' gpu63 +\[' "and follow the rows to the last gpu"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# ---- per-gpu figures and the bottleneck, the header's bars labelled, help ends at its end
run "$OCTOPIPE" tui --render 140x36
expect_match ' busy bubl peak$' "$OUT" "from 130 columns on, the gpu rows have figures on the right"
expect_match '^gpu0 .* [0-9]+% +[0-9]+% +[0-9]+G!?$' "$OUT" "busy %, bubble % and peak memory per gpu"
n=$(printf '%s\n' "$OUT" | grep -c '^gpu[0-9].*!$')
if [ "$n" = 1 ]; then ok "one gpu is marked the bottleneck"; else not_ok "one bottleneck mark" "$OUT"; fi
expect_match 'mem: peak/gpu of [0-9.]+ GB' "$OUT" "the header says what its memory bars measure"
k='?'
i=0
while [ $i -lt 80 ]; do k="${k}j"; i=$((i + 1)); done
run "$OCTOPIPE" tui --render 100x40 --keys "$k"
last=$(printf '%s\n' "$OUT" | tail -2 | head -1)
expect_match '^ -- lines [0-9]+-([0-9]+) of \1 ' "$last" "scrolling the help stops at its last line"
# ---- the message log: every message in full ------------------------------------------
k='/^2I3 \n<<<<<<<<'   # the eighth move makes a deadlock with a long message
run "$OCTOPIPE" tui --render 80x30 --keys "$k"
expect_match '\.\.\. \(M: in full\)$' "$OUT" "a message longer than the status line says where the rest is"
run "$OCTOPIPE" tui --render 80x30 --keys "${k}M"
expect_match '^ messages: [0-9]+, latest last' "$OUT" "M opens the message log"
expect_match 'waits for .*\(u undoes\)$|^ +.*\(u undoes\)$' "$OUT" "with the whole of the last message, wrapped"
start 100 30 --
expect '^gpu0 ' "the UI draws the plan"
keys /
typ nosuchop
keys Enter
expect 'no op matches' "a search that matches nothing says so"
keys M
expect '^ messages: [0-9]+, latest last' "M opens the message log in the terminal"
expect '[0-9:]{8}  no op matches /nosuchop/' "the messages have their time"
keys Escape
expect '^gpu0 ' "Esc closes it"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# ---- the F-key bar: every label at every width, set apart by a blank at least ---------
# (at 80 and 90 columns they ran together: "F6TStepsF7oOpen", "F9pOrderF10qQuit")
apart='^F1\?[A-Za-z]+ +F2w[A-Za-z]+ +F3/[A-Za-z]+ +F4\\[A-Za-z]+ +F5v[A-Za-z]+ +F6T[A-Za-z]+ +F7o[A-Za-z]+ +F8R[A-Za-z]+ +F9p[A-Za-z]+ +F10q[A-Za-z]+$'
for w in 80 90 100 120; do
    run "$OCTOPIPE" tui --render "${w}x30"
    bar=$(printf '%s\n' "$OUT" | tail -1)
    expect_match "$apart" "$bar" "at $w columns every F-key label shows, with its letter, each set apart from the next"
done
run "$OCTOPIPE" tui --render 80x24
bar=$(printf '%s\n' "$OUT" | tail -1)
expect_match '^F1\?Help F2wSave F3/Find F4\\Filt F5vComp F6TStep F7oOpen F8RRun F9pOrder F10qQuit$' "$bar" \
    "at 80 columns the long names are shortened"
run "$OCTOPIPE" tui --render 90x24
bar=$(printf '%s\n' "$OUT" | tail -1)
expect_match 'F3/Search F4\\Filter F5vCompare F6TSteps .*F9pReorder F10qQuit$' "$bar" "at 90, the full names"
run "$OCTOPIPE" tui --render 120x30
bar=$(printf '%s\n' "$OUT" | tail -1)
expect_match 'F3/Search .*F9pReorder +F10qQuit' "$bar" "wider, the full names"
# every label whole at every width the UI accepts (80 and up), idle and while a run goes
# ("Stop" is a letter longer than "Run": at 80 columns "Order" was cut to "Orde"); the
# names all full or all short, F-keys in order, Help, Run or Stop and Quit always shown
# whole_bar W BAR: empty when BAR is whole, else why not
whole_bar() {
    printf '%s\n' "$2" | awk -v w="$1" '
        { if (length($0) > w) print "wider than " w }
        { for (i = 1; i <= NF; i++) {
              if (match($i, /^F(10|[1-9])/) == 0) { print "not a label: " $i; continue }
              f = substr($i, 2, RLENGTH - 1) + 0; name = substr($i, RLENGTH + 2)
              if (f <= last) print "F" f " out of order"
              last = f; seen[f] = 1
              if (name ~ /^(Search|Filter|Compare|Steps|Reorder)$/) full++
              else if (name ~ /^(Find|Filt|Comp|Step|Order)$/) short++
              else if (name !~ /^(Help|Save|Open|Run|Stop|Quit)$/) print "cut or unknown: " $i } }
        END { if (full && short) print "full and short names mixed"
              if (!seen[1] || !seen[8] || !seen[10]) print "Help, Run or Quit left out" }'
}
bad=""
for w in $(seq 80 130) 160 200; do
    for k in "" R; do
        bar=$("$OCTOPIPE" tui --render "${w}x24" ${k:+--keys "$k"} | tail -1)
        why=$(whole_bar "$w" "$bar")
        [ -n "$k" ] && case $bar in *F8RStop*) ;; *) why="$why no Stop (no run going)" ;; esac
        [ -n "$why" ] && bad="$bad
$w${k:+ running}: $why: $bar"
    done
done
if [ -z "$bad" ]; then ok "at every width from 80 columns, idle and running, every F-key label is whole"
else not_ok "every F-key label is whole at every width, idle and running" "$bad"; fi
run "$OCTOPIPE" tui --render 80x24 --keys R
bar=$(printf '%s\n' "$OUT" | tail -1)
expect_match '^F1\?Help +F2wSave +F3/Find +F5vComp +F6TStep +F7oOpen +F8RStop +F9pOrder +F10qQuit$' "$bar" \
    "at 80 columns while a run goes, Filter (lowest priority) is left out, not a name cut"
# the same on a terminal, with a run going on the emulator
start 80 24 -- tui --time-scale 50 --iters 100
expect '^gpu0 ' "the default sample at 80 columns"
keys F8
expect 'F8RStop' "F8 starts a run: the bar says Stop"
bar=$(screen | tail -1)
why=$(whole_bar 80 "$bar")
if [ -z "$why" ]; then ok "on the terminal at 80 columns, running, every label is whole"
else not_ok "on the terminal at 80 columns, running, every label is whole" "$why" "$bar"; fi
keys q
expect 'stop the run\?|a run is in progress' "q while running asks first"
keys y
expect '^exit status 0' "y stops the run and quits"
# a click on a label is its key wherever the label is drawn (at 100 columns they are
# packed, not in ten equal slots): F5's label opens the compare view
start 100 30 --
expect '^gpu0 ' "the default sample at 100 columns"
col=$(screen | tail -1 | awk '{ print index($0, "F5v") }')
click=$(printf '\\033[M \\%03o\\%03o' $((col + 3 + 32)) $((30 + 32)))
raw "$click"
expect ' compare: ' "a click on F5's label opens the compare view"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# ---- colours: readable on a light background, matches unlike any op -------------------
start 120 36 --
expect '^gpu0 ' "the UI draws the plan"
n=$(tm capture-pane -p -e | awk -f "$top_srcdir/tests/pale.awk")
if [ "$n" = 0 ]; then ok "no text in white or pale yellow on the terminal's own background"
else not_ok "no pale text on the terminal's background" "$n cells"; fi
keys '?'
expect 'OctoPipe keys' "? opens the help"
n=$(tm capture-pane -p -e | awk -f "$top_srcdir/tests/pale.awk")
if [ "$n" = 0 ]; then ok "nor in the help"; else not_ok "no pale text in the help" "$n cells"; fi
keys q q
expect '^exit status 0' "after the keys q q: exits with status 0"
start 120 36 TERM=xterm --
expect '^gpu0 ' "8 colours"
keys /
typ '^0W(3|5) '
keys Enter
expect 'match 1 of 2' "the search finds the first of two matches"
if tm capture-pane -p -e | grep 'gpu0 ' | grep -Eq '(\[|;)46[;m]'; then ok "a search match (cyan) is unlike a W op (yellow) in 8 colours"
else not_ok "a search match is unlike a W op in 8 colours" "$(tm capture-pane -p -e | grep 'gpu0 ')"; fi
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# ---- the mouse wheel scrolls the gpu rows ---------------------------------------------
# (an X10 mouse report as the terminal sends it: ESC [ M, button+32, x+33, y+33; the
# wheel is button 64/65. Shift+wheel is not tested: ncurses reads it from X10 reports as
# a motion, and most terminals keep it for their own scrollback.)
start 120 40 -- tui $BIG
expect 'gpu 0-[0-9]+ of 64' "the UI shows which of the 64 GPUs are in view"
tm send-keys -l "$(printf '\033[Ma5+')"
expect 'gpu 3-[0-9]+ of 64' "the wheel scrolls the gpu rows"
expect 'on gpu 3, #' "and the cursor stays on a row that shows"
tm send-keys -l "$(printf '\033[M`5+')"
expect 'gpu 0-[0-9]+ of 64' "and back"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# ---- the rows the charts leave empty say where each gpu's iteration goes ---------------
run "$OCTOPIPE" tui --render 120x40
expect_match "where each gpu's iteration goes" "$OUT" "below the chart, a table per gpu"
expect_match '^ gpu +busy +idle: +warm-up +steady +cool-down +peak memory$' "$OUT" "of busy time, idle time by phase and peak memory"
expect_match '^ gpu7 +[0-9.]+ m?s +[0-9]+% +[0-9.]+ m?s +[0-9.]+ m?s +[0-9.]+ m?s +[0-9.]+ GB +[0-9]+%$' "$OUT" "for every gpu shown"
# ---- a filter on a dense chart shows what it matches in every column that has it (issue
# 28: 256 microbatches, kind=W drew no W until zoomed in twice)
run "$OCTOPIPE" plan --model "$top_srcdir/samples/models/gpt-13b.json" --cluster "$top_srcdir/samples/clusters/4xH200.json" \
    --schedule zb-h1 --microbatches 256 -o "$T/dense.json"
expect_rc 0 "a dense plan: 4 gpus x 256 microbatches, with W ops"
start 120 30 -- tui "$T/dense.json"
expect '^gpu0 ' "the UI on it"
keys '\'
typ 'kind=W'
keys Enter
expect 'filter /kind=W/: 1024 of 3072 ops shown' "the filter is on"
nw=$(screen | grep '^gpu0 ' | tr -cd 'W' | wc -c)
if [ "$nw" -ge 100 ]; then ok "the fitted chart shows the filtered kind in the columns that have it ($nw W on gpu0)"
else not_ok "the filtered kind shows on a dense chart" "$nw W on gpu0:" "$(screen)"; fi
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# ---- non-ASCII names are shown as the characters they are in a UTF-8 locale, and as '?'
# (one per column) in the C locale, never as mojibake (issue 28)
if locale -a 2>/dev/null | grep -qi '^c\.utf-\?8$'; then
    sed 's/"name": *"gpt-13b"/"name": "gpt-13b Über测试"/' "$top_srcdir/samples/models/gpt-13b.json" > "$T/u8.json"
    start 120 30 LANG=C.UTF-8 LC_ALL=C.UTF-8 -- tui --model "$T/u8.json" --cluster "$top_srcdir/samples/clusters/4xH200.json" --layout pp
    expect ' OctoPipe  gpt-13b Über测试 ' "a UTF-8 model name shows as itself in a UTF-8 locale"
    expect '^gpu0 ' "and the chart is drawn under it"
    keys q
    expect '^exit status 0' "after the key q: exits with status 0"
    start 120 30 LANG=C LC_ALL=C -- tui --model "$T/u8.json" --cluster "$top_srcdir/samples/clusters/4xH200.json" --layout pp
    expect ' OctoPipe  gpt-13b \?ber\?\?\?\? interleaved' "in the C locale as one '?' a column"
    keys q
    expect '^exit status 0' "after the key q: exits with status 0"
else
    skip "non-ASCII names in a UTF-8 locale" "no C.UTF-8 locale"
fi
# ---- polish (issue 28): "1 layers", the position's total, '!' on every tied gpu, E's
# default path from the root
run "$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 --partition 1,13,13,13 -o "$T/skew.json"
expect_rc 0 "a plan whose stage 0 has one layer"
start 140 36 -- tui "$T/skew.json"
expect '^gpu0 ' "the UI on it"
expect 'forward of stage 0 \(layer 0\), microbatch 0, on gpu 0, #0 in its order of 16' "one layer is 'layer 0', and the position has the gpu's count"
expect_not '1 layers' "never '1 layers'"
keys E
expect "write the report to: /" "E's default path is spelt from the root"
key_settle Escape
keys q
expect '^exit status 0' "after the keys Escape, then q: exits with status 0"
layer='{"kind": "attn", "f_ms": 1, "b_ms": 2, "w_ms": 1, "param_bytes": 1000, "act_bytes": 1000, "act_w_bytes": 10, "out_bytes": 100}'
printf '{"format": "octopipe.model/1", "name": "even", "seq_len": 1024, "layers": [%s, %s, %s, %s, %s, %s, %s, %s]}\n' \
    "$layer" "$layer" "$layer" "$layer" "$layer" "$layer" "$layer" "$layer" > "$T/even-model.json"
run "$OCTOPIPE" plan --model "$T/even-model.json" --cluster 4xH200 --schedule gpipe --microbatches 8 -o "$T/even.json"
expect_rc 0 "a plan of identical layers, evenly split: every gpu equally busy"
start 140 30 -- tui "$T/even.json"
expect '^gpu3 ' "the UI on it"
n=$(screen | grep -c '^gpu[0-9].*!$')
if [ "$n" = 4 ]; then ok "the four tied gpus are all marked the bottleneck"; else not_ok "every tied gpu has its '!'" "$n marked:" "$(screen)"; fi
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# the compare view's '*' and the run panel's history strip are explained on screen
start 120 40 -- tui "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect '^gpu0 ' "a UI"
keys v
expect 'plan: 2\.00 s, speedup [0-9.]+x \* cursor here \(Tab\)' "the compare view says what its '*' marks"
keys F1 G
expect "^ compare: '\\* cursor here' marks the chart the cursor is on" "the help's legend explains it"
expect "through \\. : - = \\+ \\* # % to @" "and the run panel's history levels"
keys q q
expect '^exit status 0' "after the keys q q: exits with status 0"
# under a filter l and h step over the ops it hides
start 140 36 -- tui "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect '^gpu0 ' "a UI"
keys '\'
typ 'kind=B'
keys Enter
expect 'filter /kind=B/' "a filter on the backward ops"
keys l
expect '0B0 backward of stage 0 .*#4 in its order' "l goes to the next shown op, over the hidden forwards"
keys l
expect '0B1 backward .*#6 in its order' "and on to the next shown one"
keys h
expect '0B0 backward .*#4 in its order' "h back to the one before"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# a terminal without an alternate screen (vt100, the linux console) gets a clean screen
# back: the last frame stayed, and the shell's output landed in its F-key bar
start 120 36 TERM=vt100 -- tui "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect '^gpu0 ' "the UI draws on a vt100"
keys q
expect '^exit status 0' "q quits"
expect_not 'F1.Help|^gpu0 ' "and leaves no frame behind"
done_testing
