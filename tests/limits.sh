#!/bin/sh
# The size rules of the house (docs: "small rooms"): no source file over 800 lines and no
# function over 120 lines, in the engine (src/, src/cli/, src/exec/), the UI (ui/),
# tools/, samples/ and the C tests (tests/: unit tests, fuzz targets, benches, tap.h).
# One line per offender, naming the file (and function) and its size; exit 1 when any
# is found. A function is what runs from a line that is exactly "{" to the next line
# that is exactly "}" (the house style: braces of a function on lines of their own).
# Usage: tests/limits.sh [FILE...]   (default: every .c and .h under those directories)
# TAP output for `make check` (which runs it: a new offender fails the suite).
cd "$(dirname "$0")/.." || exit 2
MAX_FILE=${MAX_FILE:-800}
MAX_FUNC=${MAX_FUNC:-120}
if [ $# -eq 0 ]; then
    set -- $(find src ui tools samples tests \( -name '*.[ch]' -o -name '*.cu' \) 2>/dev/null | LC_ALL=C sort)
fi
out=$(awk -v maxfile="$MAX_FILE" -v maxfunc="$MAX_FUNC" '
    FNR == 1 { if (prevfile != "" && prevlines > maxfile) print prevfile ": " prevlines " lines (at most " maxfile ")"
               prevfile = FILENAME; name = ""; start = 0 }
    { prevlines = FNR }
    /^[A-Za-z_].*\(/ { sig = $0 }
    /^\{$/ { start = FNR; name = sig; sub(/\(.*/, "", name); n = split(name, w, /[ *]+/); name = w[n] }
    /^\}$/ && start { len = FNR - start + 1
                      if (len > maxfunc) print FILENAME ":" start ": function " name " is " len " lines (at most " maxfunc ")"
                      start = 0 }
    END { if (prevfile != "" && prevlines > maxfile) print prevfile ": " prevlines " lines (at most " maxfile ")" }
' "$@")
echo "1..1"
if [ -n "$out" ]; then
    echo "$out" | sed 's/^/# /'
    echo "not ok 1 - size limits: $(echo "$out" | wc -l) offender(s), named above"
    exit 1
fi
echo "ok 1 - size limits: every file <= $MAX_FILE lines, every function <= $MAX_FUNC lines"
