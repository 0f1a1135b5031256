# lib.sh — shell helpers for TAP tests: source it, call ok/not_ok/check_*, end with done_testing.
# Expects $OCTOPIPE (the binary) and $top_srcdir from the test environment (Makefile.am).

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${OCTOPIPE:=$top_srcdir/octopipe}"
TAP_N=0
TAP_FAILED=0
TMPDIR_TEST=$(mktemp -d "${TMPDIR:-/tmp}/octopipe-test.XXXXXX")
trap 'rm -rf "$TMPDIR_TEST"' EXIT

ok() {      # ok DESCRIPTION
    TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1"
}
not_ok() {  # not_ok DESCRIPTION [DETAIL...]
    TAP_N=$((TAP_N + 1)); TAP_FAILED=$((TAP_FAILED + 1)); echo "not ok $TAP_N - $1"
    shift
    for line in "$@"; do printf '%s\n' "$line" | sed 's/^/#   /'; done
}
skip() {    # skip DESCRIPTION REASON
    TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1 # SKIP $2"
}
# run CMD...: runs the command, capturing stdout/stderr/status in OUT, ERR, RC
run() {
    "$@" >"$TMPDIR_TEST/out" 2>"$TMPDIR_TEST/err"
    RC=$?
    OUT=$(cat "$TMPDIR_TEST/out")
    ERR=$(cat "$TMPDIR_TEST/err")
}
# expect_rc WANT DESCRIPTION: checks RC from the last run
expect_rc() {
    if [ "$RC" = "$1" ]; then ok "$2"; else not_ok "$2" "exit status $RC, want $1" "stdout: $OUT" "stderr: $ERR"; fi
}
# expect_match PATTERN TEXT DESCRIPTION (grep -E)
# unwrap TEXT: the text with each line wrapped to 80 columns (a continuation starts with
# 8 spaces and a non-space, as cli_print_wrapped() writes it) joined to the line before
unwrap() {
    printf '%s\n' "$1" | awk 'NR > 1 && /^        [^ ]/ { sub(/^ +/, ""); printf " %s", $0; next }
        NR > 1 { printf "\n" } { printf "%s", $0 } END { printf "\n" }'
}
expect_match() {
    if printf '%s\n' "$2" | grep -Eq -- "$1"; then ok "$3"; else not_ok "$3" "no match for /$1/ in:" "$2"; fi
}
# need_python3: the test reads JSON with python3; without it the test stops with one line
# saying so (TAP "Bail out!", an ERROR in make check) instead of failing its checks one by one
need_python3() {
    command -v python3 >/dev/null 2>&1 && return 0
    echo "Bail out! python3 is needed by $(basename "$0") (Debian: apt-get install python3; ./bootstrap installs it)"
    exit 99
}
done_testing() {
    echo "1..$TAP_N"
    [ "$TAP_FAILED" = 0 ]
}
