#!/bin/sh
# octopipe export svg and octopipe report: well-formed SVG and HTML (xmllint, skipped when
# missing), a golden SVG of the toy plan (regenerate with OCTOPIPE_UPDATE_GOLDEN=1 make check
# TESTS=tests/report.sh and review the diff), exactly one op <rect> with its tooltip per op,
# escaping of strings from files, bad input as one line with exit 2, and a headless
# Chromium screenshot of a report that must not be blank (skipped without /usr/bin/chromium).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
data="$top_srcdir/tests/data"
plans="$top_srcdir/plans"
tuned="$plans/nemotron-nano-v2-9b-8xH200-tuned.json"
steps="$plans/nemotron-nano-v2-9b-8xH200-tuned.steps"
T=$TMPDIR_TEST

have_xmllint=no
command -v xmllint >/dev/null 2>&1 && have_xmllint=yes

# wellformed FILE DESCRIPTION [--html]: xmllint --noout (XML), or --html for HTML
wellformed() {
    if [ "$have_xmllint" = no ]; then skip "$2" "xmllint not installed (Debian: libxml2-utils)"; return; fi
    if [ "${3:-}" = --html ]; then
        # libxml2's HTML parser knows HTML 4 only: it names <svg>, <section>... "invalid"
        # tags; any other complaint is a real one
        errs=$(xmllint --html --noout "$1" 2>&1 | grep 'error :' | grep -v 'Tag [a-zA-Z]* invalid')
        if [ -z "$errs" ]; then ok "$2"; else not_ok "$2" "$errs"; fi
    elif errs=$(xmllint --noout "$1" 2>&1); then ok "$2"
    else not_ok "$2" "$(printf '%s\n' "$errs" | head -5)"; fi
}
# count PATTERN FILE: occurrences (not lines) of a fixed string
count() { grep -o -F -- "$1" "$2" | wc -l | tr -d ' '; }
# op_rects FILE: the tooltips of the op rects (<rect x= width= height=><title>), one a line;
# a measured op's starts with "measured "
op_rects() { grep -o -E '<rect x="[^"]*" width="[^"]*" height="[^"]*"><title>[^<]*' "$1" | sed 's/.*<title>//'; }
# predicted FILE / measured FILE: how many op rects of the plan / of the measured run
predicted() { op_rects "$1" | grep -c -v '^measured '; }
measured() { op_rects "$1" | grep -c '^measured '; }
# distinct FILE: how many distinct ops (the first word of a tooltip) the predicted rects draw
distinct() { op_rects "$1" | grep -v '^measured ' | cut -d' ' -f1 | sort -u | wc -l | tr -d ' '; }
# ops PLAN: the op count that `octopipe check` describes
ops() { "$OCTOPIPE" check "$1" | sed -n 's/.* \([0-9][0-9]*\) ops$/\1/p'; }
# one_line_exit2 DESCRIPTION: the last run failed with exit 2 and one line on stderr
one_line_exit2() {
    n=$(printf '%s\n' "$ERR" | wc -l | tr -d ' ')
    if [ "$RC" = 2 ] && [ "$n" = 1 ] && [ -n "$ERR" ]; then ok "$1"
    else not_ok "$1" "exit $RC, $n lines on stderr" "$ERR"; fi
}

# ---- export svg ------------------------------------------------------------------------
# U+FFFE and U+FFFF are valid JSON and UTF-8 but not XML characters: a model named with
# them still gives a well-formed SVG and report
python3 - "$top_srcdir/samples/models/gpt-13b.json" "$T/nonchar-model.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["name"] = "odd\ufffe\uffff<name"
json.dump(m, open(sys.argv[2], "w"))
PY
"$OCTOPIPE" plan --model "$T/nonchar-model.json" --cluster 4xH200 --schedule 1f1b --microbatches 4 \
    -o "$T/nonchar.json" >/dev/null 2>&1
run "$OCTOPIPE" export svg "$T/nonchar.json" -o "$T/nonchar.svg"
expect_rc 0 "export svg of a model named with U+FFFE and U+FFFF"
wellformed "$T/nonchar.svg" "its SVG is well-formed XML (the noncharacters replaced)"
run "$OCTOPIPE" report "$T/nonchar.json" -o "$T/nonchar.html"
wellformed "$T/nonchar.html" "and so is its report" --html
golden="$data/export/tiny-plan.svg"
run "$OCTOPIPE" export svg "$data/tiny-plan.json" -o "$T/tiny.svg"
expect_rc 0 "export svg writes the toy plan"
wellformed "$T/tiny.svg" "the toy plan's SVG is well-formed XML"
if [ -n "${OCTOPIPE_UPDATE_GOLDEN:-}" ]; then mkdir -p "$data/export"; cp "$T/tiny.svg" "$golden"; fi
if cmp -s "$golden" "$T/tiny.svg"; then ok "the toy plan's SVG equals its golden file byte for byte"
else not_ok "the toy plan's SVG equals its golden file byte for byte" "$(diff "$golden" "$T/tiny.svg" | head -20)"; fi
n=$(predicted "$T/tiny.svg"); u=$(distinct "$T/tiny.svg")
if [ "$n" = "$(ops "$data/tiny-plan.json")" ] && [ "$u" = "$n" ]; then ok "one op <rect> per op of the toy plan ($n)"
else not_ok "one op <rect> per op of the toy plan" "$n rects of $u ops, the plan has $(ops "$data/tiny-plan.json")"; fi
n=$(count '<title>' "$T/tiny.svg"); m=$(count '</title></rect>' "$T/tiny.svg")
if [ "$m" -ge 12 ] && [ "$n" -ge "$m" ]; then ok "every op has a <title> tooltip"; else not_ok "every op has a <title> tooltip" "$m"; fi
expect_match '0F0 layers 0-1 0\.00-[0-9.]+ ms' "$(cat "$T/tiny.svg")" "a tooltip names the op, its layers, start and end"
expect_match '<title>GPU 0 warm-up: idle [0-9]+\.[0-9][0-9] ms</title>.*<title>GPU 0 idle [0-9]+\.[0-9][0-9] ms \([0-9]+\.[0-9]%\)</title>' \
    "$(cat "$T/tiny.svg")" "a GPU's warm-up and idle tooltips give their numbers"
expect_match 'iteration [0-9.]+ ms .* tokens/s .* bubble [0-9.]+% .* efficiency [0-9.]+%' "$(cat "$T/tiny.svg")" \
    "the title line has iteration, tokens/s, bubble and efficiency"
expect_match '<text[^>]*>F forward</text>' "$(cat "$T/tiny.svg")" "the legend is text"
# kinds apart without colour: in greyscale (luma, 0-255) F, I and W differ by 25 or more,
# and so do F and B (I and B never share a plan), and warm-up and cool-down; W carries dots
luma() {
    sed -n "s/.*\.$1{fill:#\([0-9a-f]\{6\}\)}.*/\1/p" "$T/tiny.svg" | head -1 | awk '
        function h(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
        { printf "%d\n", 0.299 * h(substr($0, 1, 2)) + 0.587 * h(substr($0, 3, 2)) + 0.114 * h(substr($0, 5, 2)) }'
}
lF=$(luma F); lI=$(luma I); lW=$(luma W); lB=$(luma B); lwu=$(luma wu); lcd=$(luma cd)
apart() { d=$(( $1 - $2 )); [ "${d#-}" -ge 25 ]; }
if [ -n "$lF$lI$lW$lB$lwu$lcd" ] && apart "$lF" "$lI" && apart "$lI" "$lW" && apart "$lF" "$lW" && apart "$lF" "$lB" &&
   apart "$lwu" "$lcd" && grep -q '<path class="pw" stroke-width="14" d="M' "$T/tiny.svg"; then
    ok "kinds differ in greyscale (F $lF, I $lI, W $lW, B $lB, warm-up $lwu, cool-down $lcd) and W is dotted"
else not_ok "kinds differ in greyscale" "F $lF, I $lI, W $lW, B $lB, warm-up $lwu, cool-down $lcd"; fi

run "$OCTOPIPE" export svg "$tuned" --critical-path --width 600
expect_rc 0 "export svg of the tuned sample with --critical-path --width 600 (to stdout)"
printf '%s\n' "$OUT" > "$T/tuned600.svg"
wellformed "$T/tuned600.svg" "the tuned sample's SVG is well-formed XML"
n=$(predicted "$T/tuned600.svg"); u=$(distinct "$T/tuned600.svg")
if [ "$n" = "$(ops "$tuned")" ] && [ "$u" = "$n" ]; then ok "one op <rect> per op of the tuned sample ($n)"
else not_ok "one op <rect> per op of the tuned sample" "$n rects of $u ops, the plan has $(ops "$tuned")"; fi
expect_match '<svg [^>]*width="600"' "$OUT" "--width sets the width"
expect_match '<path class="cp"' "$OUT" "--critical-path outlines the critical path"
run "$OCTOPIPE" export svg "$tuned" --critical-path --width 1200
fs600=$(sed -n 's/.*<svg [^>]*font-size="\([0-9.]*\)".*/\1/p' "$T/tuned600.svg" | head -1)
fs1200=$(printf '%s\n' "$OUT" | sed -n 's/.*<svg [^>]*font-size="\([0-9.]*\)".*/\1/p' | head -1)
if [ "$fs600" = 5 ] && [ "$fs1200" = 10 ]; then ok "sizes scale with --width (font $fs600 at 600 px, $fs1200 at 1200)"
else not_ok "sizes scale with --width" "font $fs600 at 600 px, $fs1200 at 1200"; fi
# every length (attributes, path data, transforms, the stylesheet) at 1200 px is twice the
# one at 600 px, give or take the rounding to a tenth: the same picture at another size.
# lengths FILE: one number a line, from the markup and the stylesheet (no text, colours,
# the XML declaration and namespace, angles or opacities); shape FILE: the markup with N for numbers
printf '%s\n' "$OUT" > "$T/tuned1200.svg"
markup() {
    sed -e 1d -e 's/ xmlns="[^"]*"//' -e 's/#[0-9a-fA-F]\{3,6\}//g' -e 's/rotate([^)]*)//g' -e 's/opacity:[.0-9]*//g' \
        -e 's/<title>[^<]*</<title></g' -e 's/\(<text[^>]*>\)[^<]*</\1</g' "$1"
}
lengths() { markup "$1" | grep -o -E -- '-?[0-9]*\.?[0-9]+'; }
shape() { markup "$1" | sed -E 's/-?[0-9]*\.?[0-9]+/N/g'; }
n=$(lengths "$T/tuned600.svg" | wc -l | tr -d ' ')
bad=$(lengths "$T/tuned600.svg" | paste - "$(lengths "$T/tuned1200.svg" > "$T/l1200"; echo "$T/l1200")" |
      awk '{ d = $2 - 2 * $1; if (d < -0.16 || d > 0.16) { print NR ": " $1 " at 600 px, " $2 " at 1200 px"; exit } }')
if [ "$n" -gt 1000 ] && [ -z "$bad" ] && [ "$(shape "$T/tuned600.svg")" = "$(shape "$T/tuned1200.svg")" ]; then
    ok "every length of the SVG scales with --width ($n numbers)"
else not_ok "every length of the SVG scales with --width" "$n numbers; $bad"; fi

# the README's picture is what `make samples` draws today
picture="$plans/nemotron-nano-v2-9b-8xH200-tuned.svg"
run "$OCTOPIPE" export svg "$tuned" --critical-path -o "$T/picture.svg"
if cmp -s "$picture" "$T/picture.svg"; then ok "plans/*-tuned.svg (the README's picture) is up to date"
else not_ok "plans/*-tuned.svg (the README's picture) is up to date" "regenerate it with make samples"; fi

# a measured run drawn under the predicted rows
run "$OCTOPIPE" run "$data/tiny-plan.json" --emu-slowdown 1:1.5 --timeline-out "$T/tiny-run.json"
expect_rc 0 "the emulator runs the toy plan"
run "$OCTOPIPE" export svg "$data/tiny-plan.json" --timeline "$T/tiny-run.json" -o "$T/tiny-meas.svg"
expect_rc 0 "export svg --timeline"
wellformed "$T/tiny-meas.svg" "the SVG with a measured run is well-formed XML"
n=$(measured "$T/tiny-meas.svg"); m=$(predicted "$T/tiny-meas.svg")
if [ "$n" = 12 ] && [ "$m" = 12 ]; then ok "the measured run adds one rect per measured op"
else not_ok "the measured run adds one rect per measured op" "$n measured, $m predicted"; fi

# strings from files are escaped
cp "$data/tiny-model.json" "$data/tiny-cluster.json" "$T/"
sed 's/"name": "tiny 1f1b"/"name": "<b>\&amp; \\"q\\" '"'"'s'"'"' \\u00e9 <\/svg>"/' "$data/tiny-plan.json" > "$T/hostile.json"
run "$OCTOPIPE" export svg "$T/hostile.json" -o "$T/hostile.svg"
expect_rc 0 "export svg of a plan with markup in its name"
wellformed "$T/hostile.svg" "markup in a plan's name is escaped in the SVG"
expect_match '&lt;b&gt;&amp;amp; &quot;q&quot; &#39;s&#39; é &lt;/svg&gt;' "$(cat "$T/hostile.svg")" \
    "the name is escaped, UTF-8 kept"
run "$OCTOPIPE" report "$T/hostile.json" -o "$T/hostile.html"
expect_rc 0 "report of a plan with markup in its name"
wellformed "$T/hostile.html" "markup in a plan's name is escaped in the report"

# ---- report --------------------------------------------------------------------------------
run "$OCTOPIPE" run "$tuned" --emu-slowdown 3:1.3 --timeline-out "$T/tuned-run.json"
expect_rc 0 "the emulator runs the tuned sample"
run "$OCTOPIPE" report "$tuned" "$plans/nemotron-nano-v2-9b-8xH200-1f1b.json" "$plans/nemotron-nano-v2-9b-8xH200-zb-v.json" \
    --steps "$steps" --timeline "$T/tuned-run.json" --critical-path -o "$T/report.html"
expect_rc 0 "report of three plans with steps and a measured run"
[ "$RC" = 0 ] || cp /dev/null "$T/report.html"
html=$(cat "$T/report.html")
wellformed "$T/report.html" "the report is well-formed HTML" --html
wellformed "$T/report.html" "the report is also well-formed XML (polyglot)"
expect_match '<h2>Summary</h2>' "$html" "the report has a summary"
expect_match 'Speedup over the baselines' "$html" "the report has the speedups over the baselines"
expect_match '<td class="l">1f1b</td><td>[0-9.]+ s</td><td class="best">[0-9.]+×</td>' "$html" "the tuned plan is faster than 1f1b"
expect_match 'Peak memory per GPU' "$html" "the report has the peak memory per GPU"
expect_match 'Gantt charts on one time axis' "$html" "the report has the Gantt charts"
expect_match 'warm-up, steady state, cool-down' "$html" "the report has the bubble breakdown"
expect_match 'Memory over time' "$html" "the report has memory over time"
expect_match '<g class="hl"><text x="[0-9.]+" y="[0-9.]+">0</text><text x="[0-9.]+" y="[0-9.]+">1</text>' "$html" \
    "each GPU's memory line is labelled with its GPU (not told by colour alone)"
expect_match '<path class="ln th" stroke=' "$html" "the GPU with the highest peak has the thick line"
expect_match '<h2>Tuner steps</h2>' "$html" "the report has the tuner's steps"
expect_match 'Predicted vs measured' "$html" "the report compares predicted and measured"
expect_match '@media print' "$html" "the report has print styles"
if printf '%s\n' "$html" | grep -Eiq '<script|<link|<img|<iframe|@import|url\((https?:|//)|(src|href)="(https?:)?//'; then
    not_ok "the report fetches nothing and runs no script" "$(printf '%s\n' "$html" | grep -Eio '<script|<link|<img|<iframe|@import|url\(http[^)]*|(src|href)="[^"]*' | head -3)"
else ok "the report fetches nothing and runs no script"; fi
n=$(predicted "$T/report.html")
want=$(( $(ops "$tuned") + $(ops "$plans/nemotron-nano-v2-9b-8xH200-1f1b.json") + $(ops "$plans/nemotron-nano-v2-9b-8xH200-zb-v.json") ))
if [ "$n" = "$want" ]; then ok "the report draws one op <rect> per op of every plan ($n)"
else not_ok "the report draws one op <rect> per op of every plan" "$n rects, $want ops"; fi
w1=$(sed -n 's/.*<figure[^>]*><svg [^>]*viewBox="0 0 \([0-9]*\) \([0-9.]*\)".*/\1/p' "$T/report.html" | sort -u | wc -l)
if [ "$w1" = 1 ]; then ok "the Gantt charts share one width"; else not_ok "the Gantt charts share one width" "$w1"; fi
# a browser lays out a Gantt only near the screen, told its height beforehand
lazy=$(sed -n 's/.*<figure class="lazy" style="contain-intrinsic-size:auto \([0-9.]*\)px"><svg [^>]* height="\([0-9.]*\)".*/\1 \2/p' \
       "$T/report.html")
if [ "$(printf '%s\n' "$lazy" | grep -c .)" = 3 ] && [ -z "$(printf '%s\n' "$lazy" | awk '$1 != $2')" ]; then
    ok "each Gantt is laid out lazily with its height given"
else not_ok "each Gantt is laid out lazily with its height given" "$lazy"; fi

run "$OCTOPIPE" report "$data/tiny-plan.json" "$data/deadlock-plan.json" "$data/oom-plan.json" -o "$T/bad-plans.html"
expect_rc 0 "a report lists plans that deadlock or run out of memory"
expect_match 'no: deadlock' "$(cat "$T/bad-plans.html")" "a deadlocked plan is named in the summary"
expect_match 'out of memory' "$(cat "$T/bad-plans.html")" "an out-of-memory plan is named in the summary"
wellformed "$T/bad-plans.html" "that report is well-formed XML"

# ---- bad input: one line, exit 2 ----------------------------------------------------------------
run "$OCTOPIPE" export svg
one_line_exit2 "export svg without a plan"
run "$OCTOPIPE" export svg "$data/tiny-plan.json" --width 12x
one_line_exit2 "export svg with a bad --width"
run "$OCTOPIPE" export svg "$data/tiny-plan.json" --width 100
one_line_exit2 "export svg with a --width too small"
run "$OCTOPIPE" export svg "$data/tiny-plan.json" --bogus
one_line_exit2 "export svg with an unknown option"
run "$OCTOPIPE" export svg "$data/no-such-plan.json"
one_line_exit2 "export svg of a missing plan"
run "$OCTOPIPE" export svg "$data/tiny-plan.json" --timeline "$T/tuned-run.json"
one_line_exit2 "export svg with another plan's run"
expect_match 'tuned-run.json: a run on 8 devices, the plan has 2' "$ERR" "the mismatched run is named"
run "$OCTOPIPE" export svg "$data/tiny-plan.json" --timeline "$data/tiny-plan.json"
one_line_exit2 "export svg with a plan as the timeline"
# a run of a plan of the same shape (stages, devices, order) but another partition: only the
# plan the timeline names tells it apart, and it was drawn under the wrong layers before
sed -e 's|"tiny-model.json"|"'"$data"'/tiny-model.json"|' -e 's|"tiny-cluster.json"|"'"$data"'/tiny-cluster.json"|' \
    -e 's|"layers": \[0, 1\]|"layers": [0, 0]|' -e 's|"layers": \[2, 3\]|"layers": [1, 3]|' \
    "$data/tiny-plan.json" > "$T/other-part.json"
"$OCTOPIPE" run "$T/other-part.json" --timeline-out "$T/other-run.json" >/dev/null 2>&1
run "$OCTOPIPE" export svg "$data/tiny-plan.json" --timeline "$T/other-run.json"
one_line_exit2 "export svg with the run of another partition of the same shape"
expect_match "other-run.json: plan: a run of 'other-part.json', whose partition, placement or order is not" "$ERR" "naming the plan it ran"
run "$OCTOPIPE" report "$data/tiny-plan.json" --timeline "$T/other-run.json" -o "$T/other.html"
one_line_exit2 "report with the run of another partition of the same shape"
if [ ! -e "$T/other.html" ]; then ok "and writes no report"; else not_ok "and writes no report"; fi
cp "$T/other-part.json" "$T/other-copy.json"
run "$OCTOPIPE" export svg "$T/other-copy.json" --timeline "$T/other-run.json" -o "$T/other-copy.svg"
expect_rc 0 "a copy of the plan it ran is that plan"
run "$OCTOPIPE" report "$data/tiny-plan.json"
one_line_exit2 "report without -o"
run "$OCTOPIPE" report -o "$T/r.html"
one_line_exit2 "report without a plan"
run "$OCTOPIPE" report "$data/tiny-plan.json" --steps "$data/tiny-timeline.json" -o "$T/r.html"
one_line_exit2 "report with a timeline as the steps"
printf '{"format": "octopipe.steps/1", "steps": [{"phase": "start", "after_ms": "x"}]}\n' > "$T/bad.steps"
run "$OCTOPIPE" report "$data/tiny-plan.json" --steps "$T/bad.steps" -o "$T/r.html"
one_line_exit2 "report with a malformed step"
expect_match 'bad.steps: steps\[0\]\.after_ms' "$ERR" "the malformed step is named by its JSON path"
if [ ! -e "$T/r.html" ]; then ok "nothing is written on bad input"; else not_ok "nothing is written on bad input"; fi
run "$OCTOPIPE" export svg "$data/deadlock-plan.json"
expect_rc 3 "export svg of a plan that deadlocks exits 3"
if [ -w /dev/full ]; then
    run sh -c 'exec "$0" export svg "$1" >/dev/full' "$OCTOPIPE" "$data/tiny-plan.json"
    if [ "$RC" = 1 ] && [ "$(printf '%s\n' "$ERR" | wc -l | tr -d ' ')" = 1 ]; then ok "export svg to a full disk: exit 1, one line"
    else not_ok "export svg to a full disk: exit 1, one line" "exit $RC" "$ERR"; fi
    run "$OCTOPIPE" report "$data/tiny-plan.json" -o /dev/full
    expect_rc 1 "report -o /dev/full exits 1"
    expect_match 'No space left on device' "$ERR" "report -o /dev/full says why"
else
    skip "export svg to a full disk" "no writable /dev/full"
fi

# ---- a browser renders the report -------------------------------------------------------------
chromium=/usr/bin/chromium
if [ ! -x "$chromium" ]; then
    skip "headless Chromium renders the report" "no $chromium (Debian: apt-get install chromium)"
elif ! command -v python3 >/dev/null 2>&1; then
    skip "headless Chromium renders the report" "no python3 to read the screenshot"
else
    ( cd "$T" && timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
        --user-data-dir="$T/chromium" --window-size=1280,1600 --screenshot="$T/report.png" \
        "file://$T/report.html" ) >"$T/chromium.log" 2>&1
    # the share of pixels that are not (near) white in the screenshot
    ink=$(python3 - "$T/report.png" <<'EOF' 2>&1
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n'
pos, idat, w, h, ct = 8, b'', 0, 0, 0
while pos < len(data):
    n, t = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if t == b'IHDR':
        w, h, depth, ct = struct.unpack('>IIBB', body[:10])
        assert depth == 8 and ct in (2, 6)
    elif t == b'IDAT':
        idat += body
    pos += 12 + n
bpp = 3 if ct == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, ink, i = bytearray(stride), 0, 0
for y in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    ink += sum(1 for x in range(0, stride, bpp) if min(line[x], line[x + 1], line[x + 2]) < 200)
    prev = line
print('%.4f' % (ink / float(w * h)))
EOF
)
    case "$ink" in
        0.0[1-9]*|0.[1-9]*) ok "headless Chromium renders the report (ink on $ink of the screenshot)" ;;
        *) not_ok "headless Chromium renders the report" "ink: $ink" "$(tail -5 "$T/chromium.log")" ;;
    esac
    # printed, three plans take five pages: the summary, the Gantts, and one page per plan
    run "$OCTOPIPE" report "$tuned" "$plans/nemotron-nano-v2-9b-8xH200-1f1b.json" "$plans/nemotron-nano-v2-9b-8xH200-zb-v.json" \
        -o "$T/print.html"
    ( cd "$T" && timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --no-pdf-header-footer \
        --user-data-dir="$T/chromium" --print-to-pdf="$T/print.pdf" "file://$T/print.html" ) >"$T/chromium.log" 2>&1
    pages=$(grep -a -o '/Type /Pages*' "$T/print.pdf" 2>/dev/null | grep -c -v Pages)
    if [ "$pages" = 5 ]; then ok "the report of three plans prints on five pages: summary, Gantts, a page per plan"
    else not_ok "the report of three plans prints on five pages" "$pages pages" "$(tail -5 "$T/chromium.log")"; fi
    # and the Gantts, laid out only near the screen, are printed: a rectangle (PDF "re") an op
    rects=$(python3 - "$T/print.pdf" <<'EOF' 2>&1
import re, sys, zlib
n = 0
for m in re.finditer(rb'stream\r?\n(.*?)\r?\nendstream', open(sys.argv[1], 'rb').read(), re.S):
    try:
        n += len(re.findall(rb' re\b', zlib.decompress(m.group(1))))
    except zlib.error:
        pass
print(n)
EOF
)
    if [ "$rects" -ge "$want" ] 2>/dev/null; then ok "the printed report draws every op ($rects rectangles, $want ops)"
    else not_ok "the printed report draws every op" "$rects rectangles, $want ops"; fi
fi
done_testing
