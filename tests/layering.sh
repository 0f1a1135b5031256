#!/bin/sh
# The engine (src/) never knows the terminal: no curses, no printing, no exit. Only the
# program entry points (src/main.c, src/cli/, src/exec/*_main.c) talk to the user.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
cd "$top_srcdir" || exit 1
engine=$(find src -name '*.c' -o -name '*.h' | grep -v -e '^src/main\.c$' -e '^src/cli/' -e '_main\.c$' | sort)

hits=$(grep -nE '#include *[<"](n?curses|ncursesw/)' $engine)
if [ -z "$hits" ]; then ok "src/ does not include curses"; else not_ok "src/ does not include curses" "$hits"; fi
hits=$(grep -nE '\b(exit|abort|_exit)\s*\(' $engine)
if [ -z "$hits" ]; then ok "src/ does not exit or abort"; else not_ok "src/ does not exit or abort" "$hits"; fi
hits=$(grep -nE '\b(printf|puts|putchar|perror)\s*\(|fprintf\s*\(\s*(stdout|stderr)|fputs\s*\([^;]*(stdout|stderr)' $engine)
if [ -z "$hits" ]; then ok "src/ does not print to the terminal"; else not_ok "src/ does not print to the terminal" "$hits"; fi
hits=$(grep -rnE '#include *[<"](n?curses|ncursesw/)' src/cli src/main.c)
if [ -z "$hits" ]; then ok "the command line does not include curses (that is ui/)"; else not_ok "the command line does not include curses" "$hits"; fi
done_testing
