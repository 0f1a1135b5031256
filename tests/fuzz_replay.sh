#!/bin/sh
# Replays every file we have (malformed corpus, test data, samples, plans) through every
# fuzz target: no loader may crash, leak (under ASan) or fail its round trip.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
for t in model cluster plan timeline arch; do
    run "$top_builddir/tests/fuzz/fuzz_$t" "$top_srcdir/tests/data" "$top_srcdir/tests/data/bad" \
        "$top_srcdir/samples/models" "$top_srcdir/samples/clusters" "$top_srcdir/plans" \
        "$top_srcdir/samples/architectures" "$top_srcdir/tests/data/badcfg" "$top_srcdir/samples/profiles/configs"
    if [ "$RC" = 0 ]; then ok "fuzz_$t replays the corpus ($OUT)"
    else not_ok "fuzz_$t replays the corpus" "exit $RC" "$ERR"; fi
done
done_testing
