#!/bin/sh
# The terminal UI driven through tmux: start octopipe in a detached session of fixed size
# on a private server, send keys, capture the pane and assert on its text. Every wait
# polls for the expected text with a timeout; the tmux server is killed on exit.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
T="$TMPDIR_TEST"

TUI_NAME=tui
. "$top_srcdir/tests/tuilib.sh"
iteration() { screen | sed -n 's/^ iteration \([0-9.]* m*s\).*/\1/p' | head -1; }

# ---- the default sample ------------------------------------------------------------------
start 120 36 --
expect 'OctoPipe +nemotron-nano-v2-9b adaptive' "octopipe with no arguments opens the TUI on the default sample"
expect '^ iteration 1\.84 s +tokens/s [0-9]+ +bubble [0-9.]+% +bound [0-9.]+ s [0-9.]+% +tight [0-9.]+ s [0-9.]+%' "the header shows iteration, tokens/s, bubble, both bounds with the efficiency against each"
expect '8xH200 \(8 gpus\), 32 microbatches' "with the cluster and the microbatches"
expect '^ 0 \[[#.]{7}\] *[0-9]+G' "and a memory bar per gpu"
expect '^gpu7 ' "one chart row per gpu"
expect '^time +\|0ms +\|[0-9]+ms' "a time axis with units"
expect 'F1.Help .*F10.Quit' "the F-key bar"
expect 'F8.Run' "with the run slot"

# zoom: microbatch numbers appear in wide ops
keys + + + +
expect '^gpu0 +F0 +F1 ' "zooming in shows microbatch numbers"
keys 0
expect '^time +\|0ms +\|200ms' "0 fits the iteration to the width again"

# select an op by search and read its details
keys /
expect 'search \(PCRE2\): /' "/ opens the search prompt"
typ '^1I3 '
keys Enter
expect '^ 1I3 input-grad of stage 1 \(layers [0-9]+-[0-9]+' "the details name the op, its stage and layers"
expect 'microbatch 3, on gpu 1' "its microbatch and gpu"
expect '^ time +[0-9.]+ m?s -> [0-9.]+ m?s' "its start and end"
expect '^ waited +[0-9]+[FIW][0-9]+ on gpu [0-9]' "and what it waited for"
keys c
expect 'waited for [0-9]+[FIW][0-9]+ on gpu' "c jumps to the op it waited for"
keys /
typ 'nosuchop'
keys Enter
expect 'no op matches /nosuchop/' "a failed search is visible"
keys Escape
# a pattern whose backtracking explodes (PCRE2's default limit let it take seconds an op,
# and each edit searched again) is refused at once, and the keys go on working
keys /
typ '^(.|.)*[;#]$'
keys Enter
expect 'too costly to match' "a pattern too costly to match is refused, saying so" 5
keys /
typ '^1I3 '
keys Enter
expect '^ 1I3 input-grad of stage 1' "and the next search answers" 5
keys Escape

# move a stage boundary: the iteration time changes; undo brings it back
before=$(iteration)
keys /
typ '^2F0 '
keys Enter
keys '['
expect 'stage 2 now ends at layer [0-9]+, stage 3 starts at layer [0-9]+: iteration 1\.84 s -> ' "[ moves a stage boundary and re-simulates"
after=$(iteration)
if [ -n "$after" ] && [ "$after" != "$before" ]; then ok "the header's iteration time changes ($before -> $after)"; else not_ok "the iteration time changes" "$before -> $after"; fi
expect ' \[modified' "the title marks the plan modified"
keys u
expect 'undid: stage 2 now ends' "u undoes"
expect '^ iteration 1\.84 s' "and the iteration time is back"
expect_not '\[modified' "and the plan is unmodified again"
keys U
expect 'redid: stage 2' "U redoes"
keys u

# provoke a deadlock: move a backward op in front of its own forward
keys /
typ '^0I0 '
keys Enter
expect '^ 0I0 input-grad' "the cursor is on 0I0"
i=0
while [ $i -lt 40 ]; do keys '<'; i=$((i + 1)); done
expect 'DEADLOCK' "moving an op before its inputs deadlocks, and the header says so"
expect 'deadlock: .*(waits for|comes after)' "the message explains the cycle"
expect 'this order deadlocks' "the details panel lists the cycle"
i=0
while [ $i -lt 45 ]; do keys u; i=$((i + 1)); done
expect 'nothing to undo' "undo goes back without limit"
expect '^ iteration 1\.84 s' "to the plan that ran"

# help, generated from the key table
keys F1
expect 'OctoPipe keys' "F1 opens the help"
expect '^ +F2 w \^S +save the plan' "help lines come from the key table"
keys Escape
expect 'F1.Help' "Esc closes the help"
keys '?'
expect 'OctoPipe keys' "? opens it too"
keys q
expect '^gpu0 ' "q closes the help, not the program"

# compare and steps
keys v
expect ' compare: 1f1b 2\.84 s' "compare shows a baseline above the plan on one time scale"
keys T
expect 'steps: (tuning|the tuner)' "F6/T opens the steps view and runs the tuner"
expect '^ +[0-9]+ +(start|partition|placement|scheduling) +[0-9.]+ m?s -> [0-9.]+ m?s' "tuner steps appear with a phase and the time before -> after"
expect 'tuning done: [0-9]+ steps, [0-9]+ plans simulated' "the tuner finishes and says so" 30
expect 'steps: the tuner.s, [0-9]+ ' "the panel keeps every step"
before=$(iteration)
keys Home
expect 'step 0 of [0-9]+ \(start\): start: ' "Home goes to the first step"
keys j j
expect 'step 2 of [0-9]+ \([a-z]+\): .* -> ' "j steps forward and says what the step did"
expect ' compare: step 2 ' "the compared chart shows the selected step's plan"
keys k
expect 'step 1 of [0-9]+ \([a-z]+\): ' "k steps back"
keys j Enter
expect 'adopted tuner step 2 \([a-z]+\): iteration ' "Enter adopts the step as the plan"
after=$(iteration)
if [ -n "$after" ] && [ "$after" != "$before" ]; then ok "the header's iteration time changes ($before -> $after)"; else not_ok "adopting changes the iteration time" "$before -> $after"; fi
keys u
expect 'undid: adopted tuner step 2' "adopting a step is undone like any edit"
expect '^ iteration 1\.84 s' "and the iteration time is back"
keys b
expect 'steps: the baselines' "b switches to the baselines' generation"
expect '(partition|placement|scheduling) +[0-9.]+ m?s' "a baseline step has its phase and iteration time"
keys b
expect 'steps: the tuner.s, [0-9]+ ' "b switches back to the tuner's steps"
keys Escape Escape

# resize smaller and larger
tm resize-window -x 70 -y 20
expect 'terminal too small: 70x20' "below 80x24 a clear message"
tm resize-window -x 160 -y 50
expect '^gpu7 ' "larger again: relayout"
expect 'F10.Quit' "with the F-key bar at the bottom"

# autosave, save as, quit with unsaved changes
keys /
typ '^3F0 '
keys Enter
keys ']'
expect 'stage 3 now ends' "another edit"
expect 'autosaved' "unsaved edits are autosaved" 6
if ls "$T/home/.local/state/octopipe/"*.autosave.json >/dev/null 2>&1; then ok "the autosave file exists"; else not_ok "the autosave file exists"; fi
keys q
expect 'unsaved edits: s saves and quits, y quits without saving' "q with unsaved edits asks first"
keys n
expect 'nothing discarded' "n stays"
keys S
expect 'save as: plans/' "S asks where to save (plans/ by default)"
keys C-u
typ "$T/mine.json"
keys Enter
expect "saved $T/mine.json" "the plan is saved"
edited=$(iteration)
keys q
expect '^exit status 0' "q quits at once when everything is saved"
expect_not 'F1.Help' "and the terminal is restored"
run "$OCTOPIPE" check "$T/mine.json"
expect_rc 0 "the saved plan is valid"
start 120 36 -- tui "$T/mine.json"
expect "mine\\.json" "the saved plan reopens"
reopened=$(iteration)
if [ -n "$edited" ] && [ "$edited" = "$reopened" ]; then ok "with the edited iteration time ($edited)"; else not_ok "reopened iteration time" "$edited vs $reopened"; fi
keys p
expect 'regenerated by the adaptive policy' "F9/p regenerates the order by policy"
keys q
expect 'unsaved edits' "quitting asks again"
keys y
expect '^exit status 0' "y quits without saving"

# colours: 256 by default, none with NO_COLOR or --no-color
start 120 36 -- tui
expect '^gpu0 ' "tui with no plan opens the default sample"
if tm capture-pane -p -e | grep -q '38;5;'; then ok "256 colours on a 256-colour terminal"; else not_ok "256 colours"; fi
keys q
start 120 36 NO_COLOR=1 --
expect '^gpu0 ' "NO_COLOR starts"
if tm capture-pane -p -e | grep -Eq '\[([0-9;]*;)?(3[0-7]|4[0-7]|38;5|48;5)[;m]'; then
    not_ok "NO_COLOR: no colours" "$(tm capture-pane -p -e | head -5)"
else ok "NO_COLOR: no colours"; fi
expect '^gpu0 +F+[fiw]' "monochrome fills blocks with letters"
crit_rows() { tm capture-pane -p -e | grep -Ec 'gpu[0-9].*\[([0-9]+;)*4m'; }
before=$(crit_rows)
keys P
expect 'critical path marked on the chart' "P marks the critical path"
after=$(crit_rows)
if [ "$after" -gt "$before" ]; then ok "the critical path's ops are underlined on the chart ($before -> $after gpu rows)"
else not_ok "the critical path is underlined" "$before -> $after rows with underlines"; fi
keys P
expect 'critical path unmarked on the chart' "P again unmarks it"
keys q
start 120 36 -- tui --no-color --no-mouse
expect '^gpu0 ' "--no-color --no-mouse start"
if tm capture-pane -p -e | grep -q '38;5;'; then not_ok "--no-color: no colours"; else ok "--no-color: no colours"; fi
keys F10
expect '^exit status 0' "F10 quits"

# signals: the terminal is restored on SIGTERM and on a crash
start 120 36 -- tui
expect '^gpu0 ' "the UI draws the plan"
pid=$(ps -o pid= --ppid "$(tm display -p '#{pane_pid}')" | tr -d ' ' | head -1)
kill -TERM "$pid" 2>/dev/null
expect '^exit status 0' "SIGTERM quits cleanly"
expect_not 'F1.Help' "and restores the terminal"
start 120 36 -- tui
expect '^gpu0 ' "the UI draws the plan"
pid=$(ps -o pid= --ppid "$(tm display -p '#{pane_pid}')" | tr -d ' ' | head -1)
kill -SEGV "$pid" 2>/dev/null
expect 'crashed; the terminal was restored' "a crash restores the terminal"
expect '^exit status 139' "and dies by its signal"
tm kill-server >/dev/null 2>&1

# recorded steps: --steps FILE
start 120 36 -- tui "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-tuned.json" --steps "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-tuned.steps"
expect '^gpu0 ' "tui PLAN --steps FILE starts"
keys T
expect 'steps: [0-9]+ from nemotron-nano-v2-9b-8xH200-tuned\.steps' "the steps view shows the file's steps"
expect '^ +[0-9]+ +(partition|placement|scheduling) +[0-9.]+ m?s -> [0-9.]+ m?s' "with phases and times"
keys q
expect '^exit status 0' "and quits"

# run: the executor as a child, measured rows, utilization, iteration times
start 120 40 -- tui --time-scale 0.2 --iters 3
expect '^gpu0 ' "tui with run options starts"
keys R
expect 'run: running pid [0-9]+' "F8/R starts the executor as a child"
expect '^  meas ' "measured rows appear under the predicted ones"
expect 'F8.Stop' "the F-bar offers to stop it"
expect '^ iterations [0-9.]+ m?s' "iteration times appear" 15
expect '^ gpu0 +\[[#.]{10}\] +[0-9]+%' "each gpu has a utilization bar"
expect ' gpu7 +\[[#.]{10}\] +[0-9]+% \|[^|]{15}\|' "with its history"
expect 'run done: 3 iterations, measured [0-9.]+ m?s vs predicted [0-9.]+ m?s' "the run ends and says how it compared" 20
expect 'F8.Run' "and Run is offered again"
keys q
expect '^exit status 0' "quits after a finished run"

# stopping asks first, then sigterm, and nothing is left behind
start 120 40 -- tui --time-scale 1 --iters 50
expect '^gpu0 ' "the UI draws the plan"
keys R
expect 'run: running pid [0-9]+' "a long run starts"
child=$(screen | sed -n 's/.*run: running pid \([0-9]*\).*/\1/p' | head -1)
keys R
expect 'stop the run\? y stops it' "F8 while running asks before stopping"
keys n
expect 'the run goes on' "n lets it run"
if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then ok "the child is still running"; else not_ok "the child is still running" "pid '$child'"; fi
keys R
expect 'stop the run\?' "R during a run asks whether to stop it"
keys y
expect 'run stopped after [0-9]+ of 50 iterations \(killed by signal 15' "y stops it with sigterm and says so"
if [ -n "$child" ] && [ -z "$(ps -o stat= -p "$child" 2>/dev/null)" ]; then ok "the child is gone and reaped (no zombie)"; else not_ok "the child is reaped" "$(ps -o pid,stat,args -p "$child")"; fi
keys R
expect 'run: running pid [0-9]+' "a second run starts"
child=$(screen | sed -n 's/.*run: running pid \([0-9]*\).*/\1/p' | head -1)
keys q
expect 'a run is in progress: y stops it and quits' "quitting during a run asks first"
keys y
expect '^exit status 0' "y stops the run and quits"
child_gone() { [ -z "$(ps -o stat= -p "$child" 2>/dev/null)" ]; }
[ -n "$child" ] && wait_until 5 child_gone
if [ -n "$child" ] && [ -z "$(ps -o stat= -p "$child" 2>/dev/null)" ]; then ok "no child is left behind"; else not_ok "no child is left behind" "$(ps -o pid,stat,args -p "$child")"; fi

# a failing child is reported in the status line
printf '#!/bin/sh\nexec "$@" --kill-device 1 --kill-after 3\n' > "$T/inject.sh"
chmod +x "$T/inject.sh"
start 120 40 -- tui --launcher "$T/inject.sh" --time-scale 0
expect '^gpu0 ' "the UI draws the plan"
keys R
expect 'run failed: worker 1 died after 3 ops \(injected failure\) \(exit status 1\)' "the executor's error event is reported with its exit status"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# --backend cuda reaches the executor: without a GPU (or a cuda build) it says why
start 160 40 -- tui --backend cuda --iters 1
expect '^gpu0 ' "the UI draws the plan"
keys R
expect 'run failed: the executor ended with exit status [12]: octopipe run: (no GPU|the cuda backend was not built|the plan needs 8 GPUs)' "F8 with --backend cuda runs the cuda executor (or says why it cannot)" 20
keys q
expect '^exit status 0' "after the key q: exits with status 0"
start 120 40 OCTOPIPE_LAUNCHER=/nonexistent/launcher --
expect '^gpu0 ' "the UI draws the plan"
keys R
expect 'run failed: the executor ended with exit status 127: .*/nonexistent/launcher' "a launcher that cannot start is reported with its stderr"
keys q
expect '^exit status 0' "after the key q: exits with status 0"

# without a terminal
run env OCTOPIPE_DATADIR="$top_srcdir" "$OCTOPIPE"
expect_rc 0 "octopipe without a terminal prints the show table"
expect_match 'nemotron' "$OUT" "of the default sample"
run "$OCTOPIPE" tui
expect_rc 2 "octopipe tui without a terminal is refused"
expect_match 'needs a terminal' "$ERR" "and says why"
run "$OCTOPIPE" tui --render 100x30 --keys '/^1F1 \n' "$top_srcdir/tests/data/tiny-plan.json"
expect_rc 0 "--render draws one frame without a terminal"
expect_match '^ 1F1 forward of stage 1' "$OUT" "after the keys it was given"
n=$(printf '%s\n' "$OUT" | wc -l)
if [ "$n" = 30 ]; then ok "the frame has the asked height"; else not_ok "frame height" "$n lines"; fi
# a plan that deadlocks as opened has no earlier plan that ran: the header and the details
# do not promise its chart, an undo or a cycle marked on an empty chart
run "$OCTOPIPE" tui --render 100x30 "$top_srcdir/tests/data/deadlock-plan.json"
expect_match 'DEADLOCK' "$OUT" "a plan opened deadlocked says DEADLOCK"
if printf '%s\n' "$OUT" | grep -q 'last plan that ran\|u undoes\|marked on the chart'; then
    not_ok "and promises no earlier chart, undo or marked cycle" "$OUT"
else ok "and promises no earlier chart, undo or marked cycle"; fi
expect_match 'p regenerates' "$OUT" "it says how to get an order that runs"
# a search that matches nothing shows how an op of this plan reads (the op at the cursor):
# the hint was a fixed op of another model (layers=7-13 mamba2, in a plan of transformers)
run "$OCTOPIPE" tui --render 200x30 --keys 'll/zzz\n' "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_match 'no op matches /zzz/ \(the op at the cursor reads: 0F2 stage=0 mb=2 kind=F forward gpu=0 layers=0-[0-9]+ embedding\+transformer' \
    "$OUT" "a search that matches nothing shows the op at the cursor as the example"
if printf '%s\n' "$OUT" | grep -q 'mamba2'; then not_ok "and no layer type the plan does not have" "$OUT"
else ok "and no layer type the plan does not have"; fi
# m: a gpu number past the int range is no gpu, not that number cut to 32 bits
run "$OCTOPIPE" tui --render 100x30 --keys 'm4294967297\n' "$top_srcdir/tests/data/tiny-plan.json"
expect_match 'there is no gpu 4294967297 \(the cluster has 2\)' "$OUT" "m 4294967297 is no gpu (it moved the stage to gpu 1)"
run "$OCTOPIPE" tui --render 100x30 --keys 'm2147483648\n' "$top_srcdir/tests/data/tiny-plan.json"
expect_match 'there is no gpu 2147483648 ' "$OUT" "m 2147483648 is named as typed, not as -2147483648"
run "$OCTOPIPE" tui --render 60x10 "$top_srcdir/tests/data/tiny-plan.json"
expect_match 'terminal too small: 60x10' "$OUT" "--render below 80x24 shows the message"
# at 30x8 and 20x6 the message is worded to fit: every line whole (it was cut to
# "octopipe needs at le"), the size, the size needed and how to quit all on the screen
for sz in 30x8 20x6; do
    run "$OCTOPIPE" tui --render "$sz" "$top_srcdir/tests/data/tiny-plan.json"
    expect_match "too small: $sz\$" "$OUT" "at $sz the message names the size, whole"
    expect_match '(^| )needs (at least )?80x24$' "$OUT" "at $sz it names the size needed, whole"
    expect_match '^ *q quits$' "$OUT" "at $sz it says how to quit"
done
run "$OCTOPIPE" tui --model nemotron-nano-v2-9b --cluster 4xH200 --microbatches 8 --layout pp --render 100x30
expect_rc 0 "--model --cluster --microbatches"
expect_match '4xH200 \(4 gpus\), 8 microbatches' "$OUT" "opens that model on that cluster"
# ---- --model/--cluster opens on the layout compare picks, and says so (issue 28, 10) ----
run "$OCTOPIPE" compare --model llama2-70b --cluster 64xH200 --microbatches 32
lay=$(printf '%s\n' "$OUT" | sed -n -e 's/^layout: pp \([0-9]*\) x tp \([0-9]*\) x dp \([0-9]*\) (ep \([0-9]*\), ZeRO \([0-9]\).*/\1 \2 \3 \4 \5/p' \
    -e 's/^layout: pp \([0-9]*\) x tp \([0-9]*\) x dp \([0-9]*\) (ZeRO \([0-9]\).*/\1 \2 \3 1 \4/p')
set -- $lay
run "$OCTOPIPE" tui --model llama2-70b --cluster 64xH200 --render 200x50
expect_rc 0 "llama2-70b on 64 H200s opens"
expect_match "64xH200 \\(pp $1 x tp $2 x dp $3 = 64 gpus, ep $4, ZeRO $5\\)" "$OUT" "at the layout compare picks (pp $1 x tp $2 x dp $3, ZeRO $5), not pure PP"
expect_match "^layout TP $2 x PP $1 x DP $3, ZeRO $5, chosen by the layout search \\([0-9]+ judged\\); --layout pp for pure PP" "$OUT" \
    "the status line says which layout and how it was chosen"
if printf '%s\n' "$OUT" | grep -q 'plan cannot run\|out of memory'; then not_ok "the layout picked fits" "$OUT"; else ok "the layout picked fits"; fi
run "$OCTOPIPE" tui --model llama2-70b --cluster 64xH200 --layout pp --render 200x50
expect_match '64xH200 \(64 gpus\), 32 microbatches' "$OUT" "--layout pp opens pure pipeline parallelism over every gpu"
if printf '%s\n' "$OUT" | grep -q 'chosen by the layout search'; then not_ok "--layout pp: no search is said to have chosen it" "$OUT"
else ok "--layout pp: no search is said to have chosen it"; fi
run "$OCTOPIPE" compare --model llama2-70b --cluster 64xH200 --microbatches 32 --tp 8
lay=$(printf '%s\n' "$OUT" | sed -n 's/^layout: pp \([0-9]*\) x tp \([0-9]*\) x dp \([0-9]*\) .*/\1 \2 \3/p')
set -- $lay
run "$OCTOPIPE" tui --model llama2-70b --cluster 64xH200 --tp 8 --render 200x50
expect_match "64xH200 \\(pp $1 x tp 8 x dp $3 = 64 gpus" "$OUT" "--tp 8 holds TP at 8 and searches the rest, as compare --tp 8 does"
run "$OCTOPIPE" tui --model llama2-70b --cluster 64xH200 --layout pp --tp 2 --render 100x30
expect_rc 2 "--layout pp with a degree is refused"
run "$OCTOPIPE" tui --layout pp --render 100x30
expect_rc 2 "--layout without --model is refused"
run "$OCTOPIPE" tui nosuch.json
expect_rc 2 "a missing plan is refused"
run "$OCTOPIPE" tui --render 100x30 --steps "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-tuned.json"
expect_rc 2 "a steps file that is not one is refused"
expect_match 'format' "$ERR" "and says why"
run "$OCTOPIPE" tui --render 100x30 --steps "$top_srcdir/tests/data/badsteps/14-no-such-device.json" "$top_srcdir/tests/data/tiny-plan.json"
expect_rc 2 "a steps file with a stage on a missing gpu is refused"
expect_match '14-no-such-device.json: steps\[0\]\.stages\[1\]\.device: no such device \(cluster .2xtest. has 2: 0\.\.1\)$' "$ERR" "with the engine's path-aware message"
run "$OCTOPIPE" tui --render 120x36 --keys T --steps "$top_srcdir/tests/data/tiny.steps" "$top_srcdir/tests/data/tiny-plan.json"
expect_rc 0 "a tiny steps file opens with its plan"
expect_match 'steps: 7 from tiny\.steps' "$OUT" "and shows its 7 steps"
run "$OCTOPIPE" tui --render 140x40 --keys 'T' "$top_srcdir/tests/data/tiny-plan.json"
expect_rc 0 "--render runs the tuner to the end before drawing"
expect_match 'steps: the tuner.s, [0-9]+ ' "$OUT" "and shows its steps"
# ---- the step the tuner names as best is the one Enter adopts (issue 28: it named step 27
# and adopted the last, 36)
start 160 50 -- tui "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-1f1b.json"
expect '^gpu0 ' "a UI on a plan the tuner improves, then worsens from a restart"
keys F6
expect 'tuning done: .* best step [0-9]+ at' "F6 tunes to the end and names the best step" 60
best=$(screen | sed -n 's/.*best step \([0-9][0-9]*\) at.*/\1/p' | head -1)
last=$(screen | sed -n 's/.*tuning done: \([0-9][0-9]*\) steps.*/\1/p' | head -1)
if [ -n "$best" ] && [ -n "$last" ] && [ "$best" -lt $((last - 1)) ]; then ok "the best step ($best) is not the last ($((last - 1)))"
else not_ok "the best step is not the last" "best '$best', steps '$last'"; fi
expect "^ +$best +[a-z]+ .*$" "the named step is in the list"
keys Enter
expect "adopted tuner step $best \\(" "Enter adopts the step the message named"
keys q y
expect '^exit status 0' "after the keys q y: exits with status 0"
# ---- F1 help fits 80x24: long lines wrap, the page scrolls to its legend (issue 28)
start 80 24 -- tui "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect '^gpu0 ' "a UI at 80x24"
keys F1
expect 'OctoPipe keys' "F1 opens the help"
expect '^ +the tuner.s steps$' "a description longer than the line wraps under itself"
expect '^ -- lines 1-[0-9]+ of [0-9]+ \(Up/Down' "the last row says which lines show and how to scroll"
rows=$(screen | sed -n 's/^ -- lines 1-\([0-9]*\) of.*/\1/p')
keys PageDown
expect "^ -- lines $((rows + 1))-$((2 * rows)) of" "PgDn scrolls the help a page ($rows lines), not 10"
keys PageUp
expect '^ -- lines 1-' "PgUp a page back"
keys G
expect '^ header: each gpu.s peak memory against the usable memory of one gpu$' "G scrolls to the end of the legend"
expect '^ +buttons \(--no-mouse: off\)$' "the mouse legend wraps whole"
expect '^ +bottleneck of the pipeline.s steady state$' "and so does the bottleneck mark's"
keys q
expect '^gpu0 ' "q closes the help"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# ---- Ctrl-C during the layout search opens the best layout judged so far, not a dead UI
# (SIGINT to octopipe alone, as a terminal's Ctrl-C reaches it from an interactive shell;
# ^C typed into the pane would stop this test's own script too)
# (4096 gpus: a search of about a second here, so the signal, sent once the search says it
# runs, lands inside it; on 64 gpus it is over in a fraction of that)
sed 's/"devices": 64/"devices": 4096/; s/"name": "64xH200"/"name": "4096xH200"/' \
    "$top_srcdir/samples/clusters/64xH200.json" > "$T/4096xH200.json"
start 200 50 -- tui --model deepseek-v2-lite --cluster "$T/4096xH200.json" --microbatches 4096
expect 'choosing the parallel layout \(Ctrl-C takes the best judged so far\)' "the layout search says it runs" 30
kill -INT "$(ui_pid)"
expect 'chosen by the layout search \([0-9]+ judged, interrupted: the best so far\)' \
    "Ctrl-C while the layout is searched opens the UI on the best layout so far" 30
expect 'OctoPipe +deepseek-v2-lite .*\(pp [0-9]+ x tp [0-9]+ x dp [0-9]+ = 4096 gpus' "at that layout"
keys q
expect '^exit status 0' "and quits as usual"
done_testing
