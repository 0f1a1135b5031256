#!/bin/sh
# Replays every fuzz target's seeds (tests/fuzz/targets: malformed corpora, test data,
# samples, plans) and the inputs that once failed it (tests/fuzz/regress/NAME) through the
# target built with the replay driver: no loader may crash, leak (under ASan) or fail the
# invariants its target checks. Also checks that the list, the sources and the programs
# built by `make check` agree, so a target cannot be left out of one of them.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
list="$top_srcdir/tests/fuzz/targets"
names=$(sed -n 's/^\([a-z_][a-z_]*\)[ 	].*/\1/p' "$list")
for f in "$top_srcdir"/tests/fuzz/fuzz_*.c; do
    t=$(basename "$f" .c); t=${t#fuzz_}
    case " $(echo $names) " in
    *" $t "*) ok "tests/fuzz/fuzz_$t.c is in tests/fuzz/targets" ;;
    *) not_ok "tests/fuzz/fuzz_$t.c is not in tests/fuzz/targets" ;;
    esac
done
for t in $names; do
    case " ${FUZZ_BINS:-} " in
    *" tests/fuzz/fuzz_$t "*) ;;
    *) [ -n "${FUZZ_BINS:-}" ] && not_ok "fuzz_$t is not in Makefile.am's FUZZ_BINS" && continue ;;
    esac
    dirs=
    for d in $(sed -n "s/^$t[ 	][ 	]*//p" "$list") tests/fuzz/regress/$t; do
        [ -d "$top_srcdir/$d" ] && dirs="$dirs $top_srcdir/$d"
    done
    run "$top_builddir/tests/fuzz/fuzz_$t" $dirs
    if [ "$RC" = 0 ]; then ok "fuzz_$t replays its corpus ($OUT)"
    else not_ok "fuzz_$t replays its corpus" "exit $RC" "$ERR"; fi
done
done_testing
