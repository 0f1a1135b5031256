#!/bin/sh
# Work is never lost (tmux-driven, on a private server): autosaves are keyed by the plan
# and locked like vim's swap files, found ones are offered for recovery, saving never
# replaces another file without asking, and saving a plan that cannot run says so.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
T="$TMPDIR_TEST"

TUI_NAME=files
. "$top_srcdir/tests/tuilib.sh"
STATE="$T/home/.local/state/octopipe"

# open NAME W H -- ARGS...: octopipe in session NAME (other sessions keep running); the
# pane stays after it exits and shows "exit status N"
open() {
    name=$1 w=$2 h=$3; shift 4
    tm kill-session -t "$name" >/dev/null 2>&1
    run_script "run-$name.sh"
    tm new-session -d -s "$name" -x "$w" -y "$h" "$T/run-$name.sh $*"
    n=50
    while [ $n -gt 0 ] && ! tm has-session -t "$name" >/dev/null 2>&1; do sleep 0.1; n=$((n - 1)); done
}
pid_of() { ps -o pid= --ppid "$(tm display -p -t "$1" '#{pane_pid}')" | tr -d ' ' | head -1; }
nautosaves() { ls "$STATE"/*.autosave.json 2>/dev/null | wc -l | tr -d ' '; }

run "$OCTOPIPE" plan --model "$top_srcdir/samples/models/gpt-13b.json" --cluster "$top_srcdir/samples/clusters/4xH200.json" \
    --schedule 1f1b --microbatches 8 -o "$T/p.json"
expect_rc 0 "a plan file to edit"
cp "$T/p.json" "$T/other.json"

# ---- two UIs on one plan never share an autosave; q deletes only its own -------------
S=a; open a 120 36 -- tui "$T/p.json"
expect '^gpu0 ' "the first UI opens the plan"
S=b; open b 120 36 -- tui "$T/p.json"
expect '^gpu0 ' "a second UI opens the same plan"
S=a; keys ']'
expect 'stage 0 now ends' "the first UI edits"
expect 'autosaved' "and autosaves" 6
S=b; keys ']' ']'
expect 'stage 0 now ends' "the second UI edits"
expect 'autosaved' "and autosaves" 6
n=$(nautosaves)
if [ "$n" = 2 ]; then ok "two UIs on one plan keep two autosave files"; else not_ok "two autosave files" "$(ls -la "$STATE")"; fi
S=a; keys q
expect 'unsaved edits: s saves and quits, y quits without saving' "the first UI asks before quitting"
keys y
expect '^exit status 0' "and quits without saving"
n=$(nautosaves)
if [ "$n" = 1 ]; then ok "quitting deletes only the UI's own autosave"; else not_ok "one autosave left" "$(ls -la "$STATE")"; fi

# ---- a crash leaves the autosave and a stale lock; the next UI offers it -------------
killed=$(pid_of b)
S=b; kill -KILL "$killed"
expect 'exit status 137' "the second UI is killed (a crash)"
S=c; open c 120 36 -- tui "$T/p.json"
expect 'recover the unsaved edits of an earlier session \(.*\)\? y recovers them, n leaves them, d deletes them' \
    "the next UI on the plan offers to recover the crashed session's edits, its answers whole at 120 columns"
keys n
expect 'left the earlier session.s unsaved edits' "n leaves them"
keys q
expect '^exit status 0' "an unmodified UI quits at once"
n=$(nautosaves)
if [ "$n" = 1 ]; then ok "and a plain q does not delete the earlier session's edits"; else not_ok "the found autosave survives q" "$(ls -la "$STATE")"; fi
S=d; open d 120 36 -- tui "$T/p.json"
expect 'recover the unsaved edits of an earlier session' "it is offered again"
keys y
expect 'recovered the unsaved edits of an earlier session' "y recovers them"
expect '\[modified' "as unsaved edits of the plan"
expect 'p\.json' "whose save target is still the plan's own file"
keys w
expect "saved $T/p.json" "F2 saves to the plan's own file"
if cmp -s "$T/p.json" "$T/other.json"; then not_ok "the recovered edits are in the plan file"; else ok "the recovered edits are in the plan file"; fi
n=$(nautosaves)
if [ "$n" = 0 ]; then ok "saving removes the autosave"; else not_ok "no autosave left after saving" "$(ls -la "$STATE")"; fi

# ---- save as never replaces another file without asking -------------------------------
keys ']'
expect 'stage 0 now ends' "after the key ']': moves stage 0's boundary"
keys S
expect 'save as: ' "S asks where to save"
keys C-u
typ "$T/other.json"
keys Enter
expect "overwrite $T/other.json\\? it exists, not this plan's file" "saving over another existing file asks first"
keys n
expect 'not saved' "n does not save"
run "$OCTOPIPE" plan --model "$top_srcdir/samples/models/gpt-13b.json" --cluster "$top_srcdir/samples/clusters/4xH200.json" \
    --schedule 1f1b --microbatches 8 -o "$T/fresh.json"
if cmp -s "$T/other.json" "$T/fresh.json"; then ok "and the other file is untouched"; else not_ok "the other file is untouched"; fi
keys S C-u
typ "$T/other.json"
keys Enter
expect "overwrite $T/other.json\\?" "saving over it again asks again"
keys y
expect "saved $T/other.json" "y replaces it"
mkdir "$T/adir"
keys S C-u
typ "$T/adir"
keys Enter
expect "$T/adir: is a directory" "save as a directory says it cannot, without asking to overwrite it"
# a name of only spaces is no name (it saved a file named "   "); spaces around a name are
# dropped
keys S C-u
typ '   '
keys Enter
expect 'a name of only spaces is no file name' "save as a name of only spaces is refused, saying why"
expect '^save as: ' "and the prompt stays open"
if [ -e "$T/   " ]; then not_ok "no file named by the spaces" "$(ls -a "$T")"; else ok "no file named by the spaces"; fi
keys C-u
typ "  $T/spaced.json  "
keys Enter
expect "saved $T/spaced\\.json" "spaces around a name are dropped"
if [ -f "$T/spaced.json" ]; then ok "the file has the name without them"; else not_ok "spaced.json saved" "$(ls -a "$T")"; fi
# a question keeps its answers at 120 columns, however long the path (it was cut at the
# edge: "overwrite /tmp/.../and-on", the y and n gone); the path loses its middle
deep="$T/a-rather-long-directory-name-for-testing/another-quite-long-subdirectory-name/and-one-more-level"
mkdir -p "$deep"
printf '{}\n' > "$deep/existing-plan-file.json"
keys S C-u
typ "$deep/existing-plan-file.json"
keys Enter
expect "^overwrite /.*\\.\\.\\..*plan-file\\.json\\? it exists, not this plan's file: y replaces it, n or Esc does not save" \
    "a long path's overwrite question shows its answers whole, the path's middle left out"
keys n
expect 'not saved' "n does not save"
keys S C-u
typ "$T/new.json"
keys Enter
expect "saved $T/new.json" "a new file is saved without asking"
keys w
expect "saved $T/new.json" "and F2 then saves to it without asking"

# ---- E writes the HTML report, next to the plan, and asks before replacing a file ------
keys v
expect 'compare:' "the compare view is open (the report then carries both plans)"
keys E
expect "write the report to: $T/new.html" "E offers the plan's name with .html"
keys Enter
expect "report written to $T/new.html \\(the plan, the compared plan" "the report is written and says what is in it"
if grep -q '<svg' "$T/new.html" 2>/dev/null && ! grep -qi '<script' "$T/new.html"; then ok "it holds the charts and no script"
else not_ok "the report holds the charts and no script" "$(head -c 300 "$T/new.html" 2>/dev/null)"; fi
if command -v xmllint >/dev/null 2>&1; then
    if xmllint --html --noout "$T/new.html" 2>/dev/null; then ok "the report is well-formed HTML"; else not_ok "the report is well-formed HTML"; fi
fi
printf 'mine\n' > "$T/keep.html"
keys E C-u
typ "$T/keep.html"
keys Enter
expect "overwrite $T/keep.html\\? it exists" "writing over an existing file asks first"
keys n
expect "no report written: $T/keep.html is left as it was" "n writes nothing"
if [ "$(cat "$T/keep.html")" = mine ]; then ok "and the file is untouched"; else not_ok "the file is untouched"; fi
keys E C-u
typ "$T/keep.html"
keys Enter
expect "overwrite $T/keep.html\\?" "writing over it again asks again"
keys y
expect "report written to $T/keep.html" "y replaces it"
keys v

# ---- saving a plan that cannot run says so --------------------------------------------
keys /
typ '^0B0 '
keys Enter
i=0
while [ $i -lt 12 ]; do keys '<'; i=$((i + 1)); done
expect 'DEADLOCK' "an order that deadlocks"
keys w
expect "saved $T/new.json, but the plan cannot run: deadlock" "saving it says the plan cannot run"
keys q
expect 'unsaved|^exit status 0' "after the key q: asks about unsaved edits or exits"
keys y
expect '^exit status 0' "after the key y: exits with status 0"

# ---- without a file: keyed by model, cluster and microbatches -------------------------
M="--model gpt-13b --cluster 4xH200 --layout pp"
S=e; open e 120 36 -- tui $M --microbatches 8
expect '^gpu0 ' "a model and cluster open without a file"
keys ']'
expect 'autosaved' "its edits are autosaved" 6
p=$(pid_of e); killed="$killed $p"
kill -KILL "$p"
S=f; open f 120 36 -- tui $M --microbatches 16
expect '^gpu0 ' "the same model with other microbatches"
expect_not 'recover the unsaved edits' "is not offered the other run's edits"
keys q
S=g; open g 120 36 -- tui $M --microbatches 8
expect 'recover the unsaved edits of an earlier session' "the same model, cluster and microbatches are"
keys d
expect "deleted the earlier session's unsaved edits" "d deletes them"
n=$(nautosaves)
if [ "$n" = 0 ]; then ok "and the file is gone"; else not_ok "the autosave is deleted" "$(ls -la "$STATE")"; fi
# the quit question's "s" on a plan without a file asks before replacing plans/NAME.json
mkdir -p "$T/plans"
keys S
expect 'save as: plans/' "S offers a name under plans/"
default=$(screen | sed -n 's/^save as: \(plans\/[^ _]*\.json\).*/\1/p' | head -1)
keys Escape
echo '{}' > "$T/$default"
keys ']'
expect 'stage 0 now ends' "after the key ']': moves stage 0's boundary"
keys q
expect 'unsaved edits' "after the key q: asks about the unsaved edits"
keys s
expect "overwrite $default\\?" "s on quit asks before replacing an existing $default"
keys n
expect 'not saved' "n keeps it"
if [ "$(cat "$T/$default")" = '{}' ]; then ok "and the file is untouched"; else not_ok "the file is untouched"; fi
keys q y
expect '^exit status 0' "after the keys q y: exits with status 0"
# every UI above has quit or was killed: only the killed UIs' stale locks may be left
left=
for l in "$STATE"/*.lock; do
    [ -e "$l" ] || continue
    p=$(cut -d' ' -f1 < "$l")
    case " $killed " in *" $p "*) ;; *) left="$left $l (pid $p)" ;; esac
done
if [ -z "$left" ]; then ok "locks are released on quit (only the killed UIs' are left)"
else not_ok "locks are released on quit" "left by UIs that quit:$left" "killed: $killed"; fi

# ---- the plan file changed on disk since it was opened (an editor, git checkout, another
# UI): saving asks before replacing it, as vim does, instead of losing those changes
cp "$T/other.json" "$T/ext.json"
S=
start 120 36 -- tui "$T/ext.json"
expect '^gpu0 ' "a UI on a plan"
# another program rewrites the plan (a field the plan keeps, as a reader keeps unknown ones)
sed '1s/^{/{"note": "written by another program",/' "$T/ext.json" > "$T/ext.json.new"
mv "$T/ext.json.new" "$T/ext.json"
keys ']'
expect 'stage 0 now ends' "after the key ']': moves stage 0's boundary"
keys w
expect "ext.json changed on disk since it was opened" "w asks before replacing a plan file changed on disk"
keys n
expect 'not saved' "n does not save"
if grep -q 'written by another program' "$T/ext.json"; then ok "and the other program's changes are kept"
else not_ok "the other program's changes are kept"; fi
keys q
expect 'unsaved edits' "after the key q: asks about the unsaved edits"
keys s
expect "ext.json changed on disk" "s on quit asks too"
keys y
expect '^exit status 0' "y replaces it and quits"
if grep -q 'written by another program' "$T/ext.json"; then not_ok "y replaced the file"; else ok "y replaced the file"; fi
start 120 36 -- tui "$T/ext.json"
expect '^gpu0 ' "the plan again"
keys ']'
expect 'stage 0 now ends' "after the key ']': moves stage 0's boundary"
keys w
expect "saved $T/ext.json" "an unchanged file is saved without a question"
keys ']'
expect 'stage 0 now ends' "after the key ']': moves stage 0's boundary"
keys w
expect "saved $T/ext.json" "and again after its own save (the file it wrote is not a change)"
keys q
expect '^exit status 0' "after the key q: exits with status 0"

# ---- a plan whose path is longer than 511 characters: S then Enter saves to its own file
# (the prompt kept 511 characters and saved to a new file of a cut name)
long=$(printf 'd%.0s' $(seq 1 200))
mkdir -p "$T/$long/$long"
lp="$T/$long/$long/$(printf 'p%.0s' $(seq 1 200)).json"
"$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 8 -o "$lp" >/dev/null
start 150 36 -- tui "$lp"
expect '^gpu0 ' "a UI on a plan with a ${#lp}-character path"
keys ']'
expect 'stage 0 now ends' "after the key ']': moves stage 0's boundary"
keys S
expect 'save as: ' "S opens the save-as prompt"
keys Enter
expect '^saved ' "S Enter saves"
n=$(ls "$T/$long/$long" | wc -l)
if [ "$n" = 1 ]; then ok "to the plan's own file, not to a new file of a cut name"
else not_ok "S Enter saves to the plan's own file" "$(ls "$T/$long/$long")"; fi
keys q
expect '^exit status 0' "after the key q: exits with status 0"

# ---- with no absolute directory for autosaves (HOME unset or relative), the UI says that
# autosave is off instead of keeping no autosave silently (a relative HOME or
# XDG_STATE_HOME put them under the directory the UI started in)
S=
start 120 36 HOME=relhome XDG_STATE_HOME=relstate -- tui "$T/p.json"
expect '^gpu0 ' "a UI with a relative HOME and XDG_STATE_HOME opens"
keys ']'
expect 'stage 0 now ends' "after the key ']': moves stage 0's boundary"
keys M
expect 'autosave is off: neither XDG_STATE_HOME nor HOME' "says that autosave is off (the message log)"
keys Escape
if [ ! -e "$T/relhome" ] && [ ! -e "$T/relstate" ]; then ok "and makes no autosave folder under the working directory"
else not_ok "no autosave folder under the working directory" "$(ls -la "$T")"; fi
keys q y
expect '^exit status 0' "after the keys q y: exits with status 0"
# ---- no UI output replaces a file the plan reads: its model, its cluster (issue 28) ----
S=
mkdir -p "$T/in"
cp "$top_srcdir/samples/models/gpt-13b.json" "$T/in/m.json"
cp "$top_srcdir/samples/clusters/4xH200.json" "$T/in/c.json"
run "$OCTOPIPE" plan --model "$T/in/m.json" --cluster "$T/in/c.json" --schedule 1f1b --microbatches 8 -o "$T/in/p.json"
expect_rc 0 "a plan that refers to a model and a cluster file"
start 120 36 -- tui "$T/in/p.json"
expect '^gpu0 ' "a UI on it"
keys ']'
expect 'stage 0 now ends' "after the key ']': moves stage 0's boundary"
keys S C-u
typ "$T/in/m.json"
keys Enter
expect "save refused: '$T/in/m.json' is the plan's model" "S onto the plan's model is refused in words"
expect_not 'overwrite' "without asking to overwrite it"
keys S C-u
typ "$T/in/../in/c.json"
keys Enter
expect "save refused: '$T/in/../in/c.json' is the plan's cluster" "S onto the plan's cluster, spelt otherwise, too"
keys E C-u
typ "$T/in/m.json"
keys Enter
expect "report refused: '$T/in/m.json' is the plan's model" "and E onto it"
keys q y
expect '^exit status 0' "after the keys q y: exits with status 0"
run "$OCTOPIPE" sim "$T/in/p.json"
expect_rc 0 "the plan still loads: its model and cluster are untouched"
start 120 36 -- tui --model "$T/in/m.json" --cluster "$T/in/c.json" --layout pp
expect '^gpu0 ' "a UI started on a model and a cluster"
keys S C-u
typ "$T/in/c.json"
keys Enter
expect "save refused: '$T/in/c.json' is the plan's cluster" "S onto the cluster it was started on is refused"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
if cmp -s "$T/in/c.json" "$top_srcdir/samples/clusters/4xH200.json" && cmp -s "$T/in/m.json" "$top_srcdir/samples/models/gpt-13b.json"
then ok "the model and cluster files are unchanged"; else not_ok "the model and cluster files are unchanged"; fi
# ---- saving keeps the model and cluster references as the user wrote them ------------
# (an absolute path was rewritten as a relative one); saved elsewhere, a relative one is
# rewritten so that it still names its file
mkdir -p "$T/elsewhere"
python3 - "$T/in/p.json" "$T/in/refs.json" "$T/in/m.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["model"] = sys.argv[3]
p["cluster"] = "./c.json"
json.dump(p, open(sys.argv[2], "w"), indent=1)
PY
refs() { python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); print(p["model"], p["cluster"])' "$1"; }
start 120 36 -- tui "$T/in/refs.json"
expect '^gpu0 ' "a UI on a plan naming its model by an absolute path, its cluster as ./c.json"
keys ']'
expect 'stage 0 now ends' "after the key ']': moves stage 0's boundary"
keys w
expect "saved $T/in/refs\\.json" "w saves it"
expect_match "^$T/in/m\\.json \\./c\\.json\$" "$(refs "$T/in/refs.json")" "the absolute model path stays absolute, ./c.json stays as written"
keys S C-u
typ "$T/elsewhere/refs.json"
keys Enter
expect "saved $T/elsewhere/refs\\.json" "save as into another directory"
expect_match "^$T/in/m\\.json \\.\\./in/c\\.json\$" "$(refs "$T/elsewhere/refs.json")" \
    "there the absolute path stays, the relative one is rewritten to name the same file"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
run "$OCTOPIPE" sim "$T/elsewhere/refs.json"
expect_rc 0 "the plan saved elsewhere loads: its references resolve"

# ---- E after tuning has finished still carries the tuner's steps (issue 28) -----------
start 140 40 -- tui "$top_srcdir/tests/data/tiny-plan.json"
expect '^gpu0 ' "a UI on a tiny plan"
keys F6
expect 'tuning done: ' "F6 tunes to the end" 30
keys E C-u
typ "$T/tuned.html"
keys Enter
expect "report written to $T/tuned.html \\(the plan.*, the tuner's steps\\)" "E after tuning says the steps are in the report"
if grep -q 'id="steps"><h2>Tuner steps' "$T/tuned.html" 2>/dev/null; then ok "and the report has the tuner's steps"
else not_ok "the report after tuning has the tuner's steps" "$(grep -c step "$T/tuned.html" 2>&1)"; fi
keys q
expect '^exit status 0' "after the key q: exits with status 0"
# ---- the autosave of a --model/--cluster start is keyed by its layout too (issue 28: edits
# made under --tp 2 were offered to a UI started without it)
M7="$top_srcdir/samples/models/llama2-7b.json" C4="$top_srcdir/samples/clusters/4xH200.json"
S=tp; open tp 120 36 -- tui --model "$M7" --cluster "$C4" --tp 2 --dp 1
expect 'pp 2 x tp 2' "a UI started with --tp 2"
keys ']'
expect 'now ends at layer' "edits"
expect 'autosaved' "and autosaves" 6
kill -KILL "$(pid_of tp)"
expect 'exit status 137' "then crashes"
S=notp; open notp 120 36 -- tui --model "$M7" --cluster "$C4"
expect '^(gpu|pp)0 ' "a UI on the same model and cluster without --tp"
expect_not 'recover the unsaved edits' "is not offered the edits made under --tp 2"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
S=tp2; open tp2 120 36 -- tui --model "$M7" --cluster "$C4" --tp 2 --dp 1
expect 'earlier session \(.*\)\? y recovers' "a UI started with --tp 2 again is offered them"
keys y
expect 'pp 2 x tp 2' "and recovering keeps the layout"
expect_not 'cannot|error' "without an error"
keys q y
expect '^exit status 0' "after the keys q y: exits with status 0"
# ... and by its micro-batch size: edits of a plan priced at 2 sequences a microbatch are
# not edits of one at 1
S=mb2; open mb2 120 36 -- tui --model "$M7" --cluster "$C4" --tp 2 --dp 1 --micro-batch-size 2
expect 'micro-batch 2' "a UI started with --micro-batch-size 2 says so"
keys ']'
expect 'now ends at layer' "edits"
expect 'autosaved' "and autosaves" 6
kill -KILL "$(pid_of mb2)"
expect 'exit status 137' "then crashes"
S=mb1; open mb1 120 36 -- tui --model "$M7" --cluster "$C4" --tp 2 --dp 1 --micro-batch-size 1
expect 'pp 2 x tp 2' "a UI at the same layout with --micro-batch-size 1"
expect_not 'recover the unsaved edits' "is not offered the edits made at micro-batch 2"
keys q
expect '^exit status 0' "after the key q: exits with status 0"
S=

# ---- a prompt keeps the text it is given whole, or refuses to run it -------------------
# UTF-8 (pasted: tmux passes a buffer's bytes as they are) goes into a file name as typed
S=u8; open u8 120 36 -- tui "$T/p.json"
expect '^gpu0 ' "a UI for the prompts' text"
printf '%s/caf\303\251_\346\227\245\346\234\254.json' "$T" > "$T/u8name"
tm load-buffer -b u8 "$T/u8name"
keys S C-u
tm paste-buffer -p -b u8 -t u8
keys Enter
expect '^saved ' "save as a UTF-8 name saves"
if [ -f "$(cat "$T/u8name")" ]; then ok "under the name as typed, every character kept"
else not_ok "the UTF-8 name kept" "$(ls "$T")"; fi
# a name longer than the line holds is cut: marked, and Enter does not save anything
python3 -c "import sys; sys.stdout.write(sys.argv[1] + '/' + 'n' * 4200 + '.json')" "$T" > "$T/longname"
tm load-buffer -b long "$T/longname"
keys S C-u
tm paste-buffer -p -b long -t u8
expect '\[cut\]' "a name past the line's 4095 bytes shows [cut]"
before=$(ls "$T" | wc -l)
keys Enter
expect '\[cut\]' "Enter leaves the prompt open"
if [ "$(ls "$T" | wc -l)" = "$before" ]; then ok "and saves nothing under a cut name"; else not_ok "nothing saved" "$(ls "$T")"; fi
keys C-u
expect_gone '\[cut\]' "^U empties the line and its mark"
printf 'x\377y' > "$T/badbytes"
tm load-buffer -b bad "$T/badbytes"
tm paste-buffer -p -b bad -t u8
expect '\[not UTF-8\]' "a byte that is no UTF-8 character is marked, not silently dropped"
key_settle Escape
keys q y
expect '^exit status 0' "after the keys Esc, q y: exits with status 0"
S=
done_testing
