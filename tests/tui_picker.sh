#!/bin/sh
# F7 offers a picker (tmux-driven, on a private server): the recent files, the bundled
# plans and every sample model on every sample cluster, in one list that the arrows,
# PgUp/PgDn and Home/End walk and typing narrows; Enter opens (asking first when there are
# unsaved edits), Esc closes, Tab hands the text to the path prompt, and a path nothing
# listed matches opens as a file.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
T="$TMPDIR_TEST"

TUI_NAME=picker
. "$top_srcdir/tests/tuilib.sh"

count() { ls "$top_srcdir/$1"/*.json | wc -l | tr -d ' '; }
NPLANS=$(count plans)
NSAMPLES=$(( $(count samples/models) * $(count samples/clusters) ))
run "$OCTOPIPE" plan --model "$top_srcdir/samples/models/gpt-13b.json" --cluster "$top_srcdir/samples/clusters/4xH200.json" \
    --schedule 1f1b --microbatches 8 -o "$T/start.json"
expect_rc 0 "a plan of its own to start from"
cp "$T/start.json" "$T/typed.json"

# 100x30: the picker's page holds 26 entries (the title, the filter, the headings and
# the F-key bar take the other 4 rows)
start 100 30 -- tui "$T/start.json"
expect '^gpu0 ' "the UI starts"

# ---- the list: the plan opened (recent), the bundled plans, the samples ---------------
keys F7
N=$((1 + NPLANS + NSAMPLES))
expect "^ open: type to filter" "F7 opens the picker"
expect "1-26 of $N\$" "it lists the recent file, $NPLANS plans and $NSAMPLES samples ($N) and says which it shows"
expect '^ recent  start\.json ' "the file opened is the recent one, first"
expect '^ plan    gpt-13b-4xH200-1f1b ' "a bundled plan by its short name"
# (names in version order: 4xH200 before 16xH200)
first() { ls "$top_srcdir/$1" | sed -n 's/\.json$//p' | sort -V | sed -n "${2}p"; }
M1=$(first samples/models 1) C1=$(first samples/clusters 1) C2=$(first samples/clusters 2)
expect "^ sample  $M1 on $C1 " "samples are a model on a cluster ($M1 on $C1 first)"
l1=$(screen | grep -n "^ sample  $M1 on $C1 " | cut -d: -f1)
l2=$(screen | grep -n "^ sample  $M1 on $C2 " | cut -d: -f1)
if [ -n "$l1" ] && [ "$l2" = $((l1 + 1)) ]; then ok "clusters in version order ($C2 next)"
else not_ok "clusters in version order ($C2 next)" "$(screen)"; fi

# ---- walking it -------------------------------------------------------------------------
keys PageDown PageDown
expect "26-51 of $N\$" "PgDn pages down (the selection one page on, then the page follows)"
keys PageUp PageUp PageUp
expect "1-26 of $N\$" "PgUp pages back, and stops at the top"
keys End
expect "$((N - 25))-$N of $N\$" "End goes to the last entry"
keys Home
expect "1-26 of $N\$" "Home to the first"
# the mouse (X10 reports: ESC [ M, button+32, x+33, y+33; the wheel is button 64/65):
# ten turns of the wheel down move the selection 30 entries, the page follows
wheel_down=$(printf '\033[Ma+/')
tm send-keys -l "$wheel_down$wheel_down$wheel_down$wheel_down$wheel_down$wheel_down$wheel_down$wheel_down$wheel_down$wheel_down"
expect "6-31 of $N\$" "the mouse wheel scrolls the picker"
keys Home
raw '\033[M +%%\033[M#+%%'
# (the selected row is drawn in the selection's colours, 256-colour cyan: 48;5;37)
selected() { tm capture-pane -p -e | grep -- "$1" | grep -q '48;5;37m'; }
if wait_until 5 selected 'gpt-13b-4xH200-1f1b '; then ok "a click on an entry selects it"
else not_ok "a click on an entry selects it" "$(tm capture-pane -p -e | sed -n 4,5p)"; fi
keys Escape
expect '^gpu0 ' "Esc closes the picker"
expect_not '\[modified' "having opened nothing"

# ---- typing narrows it; a letter is text, not a command -------------------------------
keys F7
typ q
expect '^ filter: q' "typing q filters: it does not quit"
keys BSpace
typ 'LLAMA2-7b 8xh2'
expect "1-1 of 1\$" "the words of the filter all match, in any case"
expect '^ sample  llama2-7b on 8xH200 ' "the one entry left"
keys Enter
expect 'opened best baseline of llama2-7b on 8xH200' "Enter opens the sample: the best baseline of the model on the cluster"
expect 'llama2-7b on 8xH200 \(8 gpus\), 32 microbatches' "and the header says what it runs on"
keys F7
typ 'llama2-70b 8xH100'
keys Enter
expect 'cannot open: no baseline of llama2-70b on 8xH100 with 32 microbatches runs' "a sample nothing runs on is refused"
expect 'llama2-7b on 8xH200 \(8 gpus\), 32 microbatches' "and the plan shown stays"

# ---- unsaved edits are asked about; the plan opened joins the recent files ------------
keys ']'
expect 'now ends at layer' "an edit"
keys F7
typ 'gpt-13b-4xH200-1f1b'
expect "1-1 of 1\$" "the bundled plan"
keys Down Up Enter
expect 'unsaved edits: s saves and opens, y opens without saving' "opening over unsaved edits asks first"
keys y
expect 'opened .*plans/gpt-13b-4xH200-1f1b\.json' "y opens the plan chosen"
keys o
expect '^ recent  gpt-13b-4xH200-1f1b\.json ' "o opens the picker too, the plan just opened first"
expect '^ recent  start\.json ' "then the one before"
expect "1-26 of $((N + 1))\$" "two recent files now, each once"

# ---- a path nothing lists opens as a file; Tab completes a path -----------------------
typ "$T/typed.js"
expect "nothing listed matches" "a path the list does not have"
typ on
keys Enter
expect "opened $T/typed\.json" "Enter opens it as a file"
keys F7
typ "$T/typ"
keys Tab
expect "^open plan: $T/typed\.json" "Tab takes the text to the open prompt and completes it"
keys Escape
# a click on the selected entry opens it: the second row (the recent bundled plan)
keys F7
expect '^ recent  typed\.json ' "the typed file is the recent one now"
raw '\033[M +%%\033[M#+%%'
# the first click must have selected the row (drawn in the selection's colours) before the
# second one comes: two clicks in one burst would test the timing of the terminal, not the UI
if wait_until 5 selected ' recent .*gpt-13b-4xH200-1f1b\.json'; then ok "a click selects the second entry"; else not_ok "a click selects the second entry" "$(screen)"; fi
raw '\033[M +%%\033[M#+%%'
expect 'opened .*plans/gpt-13b-4xH200-1f1b\.json' "a second click on it opens it"

# ---- a FIFO or a device is refused at once, never waited on ----------------------------
# the test holds the FIFO open as a writer that writes nothing: the UI's read waited for it
# (every key, Esc too, froze until the writer wrote or closed)
if mkfifo "$T/slow.json" 2>/dev/null; then
    exec 3<>"$T/slow.json"
    keys F7
    expect '^ open: type to filter' "F7 opens the picker"
    typ "$T/slow.json"
    keys Enter
    expect 'slow\.json: is a FIFO, not a regular file' "a FIFO with a writer that does not write is refused, named as a FIFO"
    keys l
    expect '#1 in its order' "and the keys work on at once"
    exec 3>&-
    keys o
    expect '^ open: type to filter' "o opens the picker"
    typ /dev/null
    keys Enter
    expect 'null: is a character device, not a regular file' "a device is refused too"
else
    skip "a FIFO is refused" "no mkfifo"
fi

# ---- the help scrolls with the wheel too ------------------------------------------------
keys '?'
expect '^ OctoPipe keys' "the help"
tm send-keys -l "$wheel_down"
expect '^   F1 \?  ' "the wheel scrolls it"
keys Escape
keys q
expect '^exit status 0' "quits"
done_testing
