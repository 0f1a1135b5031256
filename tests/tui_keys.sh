#!/bin/sh
# Keys never edit by accident (tmux-driven, on a private server): escape sequences the
# terminfo does not know are read to their end and dropped, well-known ones (PuTTY, rxvt,
# the linux console) mean their key, an arrow split across a slow link is still an arrow;
# ^Z suspends and resumes; a terminal that cannot move the cursor is refused in words.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
T="$TMPDIR_TEST"

TUI_NAME=keys
. "$top_srcdir/tests/tuilib.sh"
unmodified() { expect_not '\[modified|now ends at layer' "$1"; }

PLAN="$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
# ESCDELAY=1000: the bytes of one sequence may come up to a second apart (the default is
# 100 ms); the split arrow below arrives 30 ms apart, so a loaded machine has most of a
# second to deliver the second write before the ESC is taken as the Esc key
start 120 36 ESCDELAY=1000 -- tui "$PLAN"
expect '^gpu0 ' "the UI starts"

# an unknown sequence is dropped whole and said so; before, its '[' moved a boundary
raw '\033[99~'
expect 'unknown key ESC\[99~ ignored' "an unknown CSI sequence is reported as an unknown key"
unmodified "and none of its bytes edits the plan"
raw '\033[3;7y'
expect 'unknown key ESC\[3;7y ignored' "a CSI sequence with parameters is read to its final byte"
unmodified "and dropped"
raw '\033Ox'
expect 'unknown key ESCOx ignored' "an unknown SS3 sequence too"

# PuTTY's and the linux console's keys mean what they say
raw '\033[11~'
expect 'OctoPipe keys' "PuTTY's F1 (ESC[11~) opens the help"
keys q
expect '^gpu0 ' "after the key q: draws the plan"
unmodified "without touching the plan"
keys l l l
expect '#3 in its order' "the cursor moves right"
raw '\033[1~'
expect '#0 in its order' "PuTTY's Home (ESC[1~) goes to the first op"
raw '\033[4~'
expect '#1[0-9] in its order' "PuTTY's End (ESC[4~) to the last"
unmodified "and nothing was edited"
raw '\033[[A'
expect 'OctoPipe keys' "the linux console's F1 (ESC[[A) opens the help"
keys q
expect '^gpu0 ' "after the key q: draws the plan"

# an arrow split across a slow link (ESC, then '[B' 30 ms later, well within ESCDELAY) is
# still an arrow; the gap itself is what is tested, hence the one fixed sleep
raw '\033'
sleep 0.03
typ '[B'
expect 'on gpu 1, #' "an arrow whose bytes arrive apart moves the cursor"
unmodified "and its '[' does not move a stage boundary"
# a terminal's reply (an OSC colour answer ended by ST, a DCS status string, a cursor
# position, device attributes, focus events) is dropped whole and without a word: before,
# its ']' grew a stage and its '/' and '\\' opened the prompts
raw '\033]11;rgb:1c1c/1c1c/1c1c\033\\'
raw '\033P1$r0m\033\\'
raw '\033[12;40R\033[?1;2c\033[I\033[O'
if wait_for 'ESC\]11|ESCP1|ESC\[12;40R|ESC\[\?1|ESC\[[IO] ' 2; then not_ok "terminals' replies are dropped without a word" "$(screen)"
else ok "terminals' replies are dropped without a word"; fi
unmodified "and none of their bytes edits the plan"
expect_not 'search \(PCRE2\)|filter \(PCRE2' "nor opens a prompt"
# a paste that pauses past a second (a slow link) stays text up to its end marker: its
# "wq" after the pause neither saved nor quit (the plan file is compared byte for byte)
cp "$PLAN" "$T/before.json"
raw '\033[200~ab'
sleep 1.5
raw 'wq\033[201~'
expect 'pasted text ignored' "a paused paste is still text"
unmodified "and does not edit"
sleep 0.3
expect '^gpu0 ' "the UI is still there (q was not a key)"
if cmp -s "$PLAN" "$T/before.json"; then ok "and the plan file was not saved"; else not_ok "the plan file changed"; fi
# Ctrl-C in a prompt cancels it (it typed a 'q' into the text: a save-as saved to "NAMEq")
keys /
expect 'search \(PCRE2\): /' "/ opens the search prompt"
typ 'zzz'
keys C-c
expect_gone 'search \(PCRE2\): /zzz' "Ctrl-C closes the prompt"
expect_not 'zzzq' "without typing a q"
expect '^gpu0 ' "and the UI stays"
# on the "terminal too small" screen only quitting acts: an edit and a save there were
# made blind (the plan file changed behind a message)
tm resize-window ${S:+-t "$S"} -x 40 -y 10
expect 'terminal too small' "a 40x10 terminal shows only that it is too small"
keys '>' w
sleep 0.3
tm resize-window ${S:+-t "$S"} -x 120 -y 36
expect '^gpu0 ' "back to size, the plan is drawn"
unmodified "the keys pressed while it was too small did nothing"
if cmp -s "$PLAN" "$T/before.json"; then ok "and saved nothing"; else not_ok "the plan file changed"; fi
# a lone Esc is still Esc: it closes the compare view
keys v
expect ' compare: ' "v opens the compare view"
keys Escape
expect_gone ' compare: ' "a lone Esc still backs out"
# ESC and a key in one read are an Alt chord, which no command has: never the key's
# command (Alt-q quit, Alt-> moved an op); Esc, then a key typed apart, is both
raw '\033/'
expect 'Alt-/ ignored' "ESC / in one read: Alt-/, said and ignored"
expect_not 'search \(PCRE2\): /' "it does not open the search"
raw '\033q'
expect 'Alt-q ignored' "Alt-q is ignored"
expect '^gpu0 ' "and does not quit"
raw '\033>'
expect 'Alt-> ignored' "Alt-> is ignored"
raw '\033]'
expect 'Alt-\] ignored' "Alt-] (ESC ] and no string) is ignored"
unmodified "neither edits the plan"
keys v
expect ' compare: ' "v opens the compare view"
key_settle Escape
keys /
expect 'search \(PCRE2\): /' "Esc, then / typed apart: / opens the search"
key_settle Escape
keys q
expect '^exit status 0' "q quits"

# ^Z suspends, in an interactive shell with job control: the shell gets the terminal back
# and the job is stopped; fg resumes it with the screen drawn again
stop_server
n=5
until tm new-session -d -x 120 -y 36 "env HOME=$T/home XDG_STATE_HOME= OCTOPIPE_DATADIR=$top_srcdir PS1='shell> ' ENV= sh -i" \
    2>/dev/null || [ $n -eq 0 ]; do sleep 0.2; n=$((n - 1)); done
expect '^shell>' "an interactive shell"
typ "$OCTOPIPE tui $PLAN"
keys Enter
expect '^gpu0 ' "the UI runs in it"
keys C-z
expect 'Stopped' "^Z stops the job and the shell says so"
expect_not 'F1.Help' "the terminal is given back"
typ fg
keys Enter
expect 'F1.Help' "fg resumes it with the screen drawn again"
expect 'resumed' "and says so"
keys l
expect '#1 in its order' "keys work after resuming"
# a stop from outside (kill -TSTP) gives the terminal back as ^Z does: before, the shell
# got it with the mouse still reported
kill -TSTP "$(ui_pid)"
expect 'Stopped' "kill -TSTP stops the job"
if [ "$(tm display -p ${S:+-t "$S"} '#{mouse_any_flag}')" = 0 ]; then ok "with the mouse reporting off again"
else not_ok "mouse reporting left on after an outside stop"; fi
typ fg
keys Enter
expect 'F1.Help' "fg resumes it"
keys q
wait_gone 'F1.Help' 5
typ 'echo "exit status $?"'
keys Enter
expect '(^|> )exit status 0' "and q quits"  # the prompt may come after the typed echo

# a terminal that cannot move the cursor is refused in words, not a blank screen
start 120 36 TERM=dumb -- tui "$PLAN"
expect 'cannot move the cursor, which the UI needs' "TERM=dumb is refused with a reason"
expect '^exit status 2' "with exit status 2"
# on the "terminal too small" screen q, F10 and Ctrl-C quit (they returned the quit but the
# loop never ended: nothing quit there), at any size it starts at; with unsaved edits none
# does, and the screen says why
for sk in "20 6 q" "30 8 F10" "20 6 C-c"; do
    set -- $sk
    start "$1" "$2" -- tui "$PLAN"
    expect "too small: $1x$2" "a $1x$2 terminal shows that it is too small"
    keys "$3"
    expect '^exit status 0' "and $3 quits there"
done
start 120 36 -- tui "$PLAN"
expect '^gpu0 ' "the UI starts"
key_settle '>'
tm resize-window ${S:+-t "$S"} -x 30 -y 8
expect 'enlarge to save' "too small with an unsaved edit: says to enlarge it to save"
keys q
tm resize-window ${S:+-t "$S"} -x 120 -y 36
expect 'unsaved edits: enlarge the terminal' "q there did not quit over the edit, and says so"
expect_not '^exit status' "the UI is still running"
keys q
expect 'unsaved edits' "q at full size asks about the edit"
keys y
expect '^exit status 0' "y quits without saving"
# ---- prompts are edited like the shell's line: cursor, kill keys, history, Tab ---------
mkdir -p "$T/data"
start 120 36 -- tui "$PLAN"
expect '^gpu0 ' "the UI draws the plan"
keys /
typ abc
keys Left Left
typ X
expect '^search \(PCRE2\): /aXbc' "Left moves the cursor in a prompt and typing inserts there"
keys C-a
typ '^'
expect '^search \(PCRE2\): /\^aXbc' "^A goes to the start"
keys C-e C-w
expect '^search \(PCRE2\): / *$' "^E goes to the end and ^W deletes the word before it"
typ nosuch1
keys Enter
expect 'no op matches /nosuch1/' "a search for nosuch1 finds no op"
keys /
keys Up
expect '^search \(PCRE2\): /nosuch1' "Up brings back the last search"
keys Escape
keys S C-u
typ "$T/da"
keys Tab
expect "^save as: $T/data/" "Tab completes a directory"
typ x.json
keys Enter
expect "saved $T/data/x.json" "and the completed path is used"
keys S C-u
typ '~/mine.json'
keys Enter
expect "saved $T/home/mine.json" "~ is the home directory"
keys o
typ gpt-13b-4xH200-1
keys Tab
expect '^open plan: gpt-13b-4xH200-1f1b' "Tab completes a bundled plan's short name"
keys Enter
expect 'opened .*plans/gpt-13b-4xH200-1f1b\.json' "which opens"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# ---- nothing but a whole, known key acts (issue 28): SS3 with a modifier, mouse reports
# with the mouse off, pasted text (sent raw, as terminals send them)
start 120 36 -- tui --no-mouse "$PLAN"
expect '^gpu0 ' "a UI with the mouse off"
raw '\033O2R'
keys l
expect '#1 in its order' "after ESC O 2 R (an older terminal's Shift-F3) the next key still works"
expect_not 'running|a run is in progress' "and ESC O 2 R started no run: its R is no key"
raw '\033[M ]]\033[M ]]'
keys l
expect '#2 in its order' "after two X10 mouse reports the next key still works"
unmodified "mouse bytes under --no-mouse move no stage boundary"
expect_not 'unknown key' "and are dropped silently"
raw '\033[<0;30;5M\033[<0;30;5m'
keys l
expect '#3 in its order' "an SGR click under --no-mouse is dropped too"
unmodified "without an edit"
raw '\033[200~]]p<>R\033[201~'
expect 'pasted text ignored \(6 bytes\)' "a paste outside a prompt is dropped and said so"
unmodified "its text edits nothing"
expect_not 'running' "and starts no run"
# text after an end marker held in a paste, sent in the same write, is paste text up to the
# terminal's own end marker: its v opened the compare view and its > moved an op
raw '\033[200~ab\033[201~v>\033[201~'
expect 'pasted text ignored \(2 bytes\)' "a paste whose text holds an end marker is dropped"
wait_stable
expect_not ' compare: ' "the v after the marker held in it did not open the compare view"
unmodified "nor did its > move an op"
keys /
expect 'search \(PCRE2\): /' "/ opens the search prompt"
raw '\033[200~kind=W\033[201~'
expect '^search \(PCRE2\): /kind=W' "a paste inside a prompt is its text"
keys C-a
raw '\033[1;5C'
typ '!'
expect '^search \(PCRE2\): /kind=W!' "Ctrl-Right in a prompt moves the cursor past the word"
raw '\033[1;5D'
typ '@'
expect '^search \(PCRE2\): /@kind=W!' "Ctrl-Left moves back to the word's start"
keys Escape
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# a paste start whose end never comes, then a key every 0.3 s (the pace is the test): the
# keys are paste text until the paste is ended, a bounded time after its start that keys
# do not extend; then they act again (each key extended the wait: they never did). A UI of
# its own (and autosaves of its own): a decoder no earlier test has left inside a paste
start 120 36 XDG_STATE_HOME="$T/stray-state" -- tui --no-mouse "$PLAN"
expect '^gpu0 ' "a UI with the mouse off"
keys l l l
expect '#3 in its order' "the cursor moves to #3"
raw '\033[200~'
n=0
until screen | grep -Eq '#([4-9]|[1-9][0-9]) in its order' || [ $n -ge 80 ]; do
    keys l
    sleep 0.3
    n=$((n + 1))
done
expect '#([4-9]|[1-9][0-9]) in its order' "after a paste start without its end, keys typed on act again" 1
expect "paste's end marker never came" "and the UI says the paste was ended"
unmodified "the keys swallowed meanwhile edited nothing"
keys q
expect '^exit status 0' "q quits"
done_testing
