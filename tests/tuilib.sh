# tuilib.sh — the tmux harness of the UI tests. Source it after lib.sh with a name for the
# private tmux server in TUI_NAME: `TUI_NAME=keys; . tests/tuilib.sh`. Without tmux the
# test file is skipped.
# It gives: tm (tmux on the private server), stop_server, start W H [ENV=V...] -- ARGS
# (octopipe alone in a fresh server; the pane stays after it exits and shows "exit status
# N"), screen, wait_for REGEX [SECONDS], wait_gone REGEX [SECONDS], expect REGEX
# DESCRIPTION [SECONDS], expect_gone REGEX DESCRIPTION [SECONDS], expect_not REGEX
# DESCRIPTION, keys, typ (literal text), raw (printf bytes in one write), wait_until SECONDS
# CMD..., wait_stable, key_settle KEY... (the screen changed and settled), ui_pid,
# cpu_spent SECONDS (the pane's octopipe has had that much CPU).
# Every assertion has a description (an unnamed one fails), and nothing sleeps a fixed
# time: every wait polls the screen (or the condition) until it holds or times out, so a
# loaded machine only makes a test slower. $S, when set, names the
# session the others act on (tests with several UIs at once start their own sessions).
# Every UI runs with HOME=$T/home, so autosaves and locks stay in the test's directory.

if ! command -v tmux >/dev/null 2>&1; then
    skip "tmux-driven UI tests" "tmux not installed"
    done_testing
    exit 0
fi
SOCK="octopipe-${TUI_NAME:-tui}-$$"
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server >/dev/null 2>&1; rm -rf "$TMPDIR_TEST"' EXIT INT TERM
mkdir -p "$T/home"

stop_server() {
    tm kill-server >/dev/null 2>&1
    n=50
    while [ $n -gt 0 ] && tm has-session >/dev/null 2>&1; do sleep 0.1; n=$((n - 1)); done
}
# run_script NAME [ENVS]: $T/NAME, a script that runs octopipe with its arguments in $T
run_script() {
    printf '#!/bin/sh\ncd "%s"\nenv HOME="%s" XDG_STATE_HOME= ESCDELAY= OCTOPIPE_DATADIR="%s"%s "%s" "$@"\necho "exit status $?"\nsleep 600\n' \
        "$T" "$T/home" "$top_srcdir" "$2" "$OCTOPIPE" > "$T/$1"
    chmod +x "$T/$1"
}
start() {
    w=$1 h=$2; shift 2
    envs=""
    while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
    shift
    stop_server
    run_script run.sh "$envs"
    # a server still on its way out refuses the session: try again
    n=5
    until tm new-session -d -x "$w" -y "$h" "$T/run.sh $*" 2>/dev/null || [ $n -eq 0 ]; do sleep 0.2; n=$((n - 1)); done
    # the pane exists before the program draws: wait for the server to answer
    n=50
    while [ $n -gt 0 ] && ! tm has-session >/dev/null 2>&1; do sleep 0.1; n=$((n - 1)); done
}
screen() { tm capture-pane -p ${S:+-t "$S"} 2>/dev/null; }
wait_for() {
    n=$(( ${2:-10} * 10 ))
    while [ "$n" -gt 0 ]; do
        if screen | grep -Eq -- "$1"; then return 0; fi
        sleep 0.1
        n=$((n - 1))
    done
    return 1
}
# wait_gone REGEX [SECONDS]: until no line of the screen matches (a prompt closed, a view left)
wait_gone() {
    n=$(( ${2:-10} * 10 ))
    while [ "$n" -gt 0 ]; do
        if ! screen | grep -Eq -- "$1"; then return 0; fi
        sleep 0.1
        n=$((n - 1))
    done
    return 1
}
# wait_until SECONDS CMD...: polls CMD until it succeeds (1 when it never did)
wait_until() {
    n=$(( $1 * 10 )); shift
    while [ "$n" -gt 0 ]; do
        if "$@"; then return 0; fi
        sleep 0.1
        n=$((n - 1))
    done
    return 1
}
# wait_stable [SECONDS]: until two captures 0.2 s apart, colours included, are the same (a
# redraw has reached the pane whole)
wait_stable() {
    _prev=$(tm capture-pane -p -e ${S:+-t "$S"} 2>/dev/null)
    n=$(( ${1:-10} * 5 ))
    while [ "$n" -gt 0 ]; do
        sleep 0.2
        _cur=$(tm capture-pane -p -e ${S:+-t "$S"} 2>/dev/null)
        [ "$_cur" = "$_prev" ] && return 0
        _prev=$_cur
        n=$((n - 1))
    done
    return 1
}
# key_settle KEY...: sends the keys, then waits until the screen has changed and stopped
# changing: one key's effect is drawn before the next is sent, however loaded the machine
key_settle() {
    _before=$(tm capture-pane -p -e ${S:+-t "$S"} 2>/dev/null)
    keys "$@"
    n=100
    while [ "$n" -gt 0 ] && [ "$(tm capture-pane -p -e ${S:+-t "$S"} 2>/dev/null)" = "$_before" ]; do
        sleep 0.1
        n=$((n - 1))
    done
    wait_stable
}
# ui_pid: the octopipe the pane runs (empty until it has started)
ui_pid() { ps -o pid= --ppid "$(tm display -p ${S:+-t "$S"} '#{pane_pid}' 2>/dev/null)" 2>/dev/null | tr -d ' ' | head -1; }
# cpu_spent SECONDS: the pane's octopipe has caught SIGINT and run SECONDS of CPU (CPU time,
# not wall time: a loaded machine does not make it earlier in its work); without /proc, true
cpu_spent() {
    _p=$(ui_pid)
    [ -n "$_p" ] || return 1
    [ -r "/proc/$_p/stat" ] || return 0
    case $(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$_p/status") in *[2367abefABEF]) ;; *) return 1 ;; esac
    sed 's/.*) //' "/proc/$_p/stat" | awk -v s="$1" -v hz="$(getconf CLK_TCK)" '{ exit !($12 + $13 >= s * hz) }'
}
# an assertion without a description is a test without a name in the TAP output
named() {
    if [ -z "$1" ]; then not_ok "an unnamed UI assertion" "every expect and expect_not needs a description"; return 1; fi
}
expect() {
    named "$2" || return
    if wait_for "$1" "${3:-10}"; then ok "$2"; else not_ok "$2" "no /$1/ on the screen${S:+ of $S}:" "$(screen)"; fi
}
expect_gone() {
    named "$2" || return
    if wait_gone "$1" "${3:-10}"; then ok "$2"; else not_ok "$2" "/$1/ is still on the screen${S:+ of $S}:" "$(screen)"; fi
}
expect_not() {
    named "$2" || return
    if screen | grep -Eq -- "$1"; then not_ok "$2" "/$1/ is on the screen${S:+ of $S}:" "$(screen)"; else ok "$2"; fi
}
keys() { tm send-keys ${S:+-t "$S"} "$@"; }
typ() { tm send-keys ${S:+-t "$S"} -l "$1"; }
raw() { tm send-keys ${S:+-t "$S"} -l "$(printf "$1")"; }
