#!/bin/sh
# octopipe run as MPI ranks (built --with-mpi): `mpirun -np 4` runs the emulated backend
# with one process per device and measures what the threaded emulator measures; rank 0
# writes the timeline and the events; a failing rank stops the job with one error line
# naming it; a rank count that does not match the plan is refused.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
T="$TMPDIR_TEST"
if [ "$HAVE_MPI" != yes ] || ! command -v mpirun >/dev/null 2>&1; then
    skip "octopipe run under mpirun" "built without MPI (configure --with-mpi) or no mpirun"
    done_testing; exit
fi
# as root (CI) Open MPI wants --allow-run-as-root; more ranks than cores needs --oversubscribe
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mpi() { np=$1; shift; run timeout 60 mpirun --allow-run-as-root --oversubscribe -np "$np" "$@"; }
measured() { printf '%s\n' "$1" | python3 -c 'import json, sys
try: print(json.load(sys.stdin)["measured_ms"])
except Exception: pass'; }

plan4="$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
mpi 4 "$OCTOPIPE" run --json "$plan4"
expect_rc 0 "mpirun -np 4 runs a 4-device plan, one rank per device"
mpi_ms=$(measured "$OUT")
run "$OCTOPIPE" run --json "$plan4"
thr_ms=$(measured "$OUT")
if [ -n "$mpi_ms" ] && [ "$mpi_ms" = "$thr_ms" ]; then ok "and measures what the threaded emulator measures ($mpi_ms ms)"
else not_ok "MPI and threads measure the same iteration" "mpi '$mpi_ms' threads '$thr_ms'"; fi

for f in "$top_srcdir"/plans/nemotron-nano-v2-9b-8xH200-tuned.json "$top_srcdir"/plans/nemotron-nano-v2-9b-8xH200-zb-v.json; do
    mpi 8 "$OCTOPIPE" run --json "$f"
    a=$(measured "$OUT"); run "$OCTOPIPE" run --json "$f"; b=$(measured "$OUT")
    if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "$(basename "$f") on 8 ranks as on 8 threads ($a ms)"
    else not_ok "$(basename "$f") on 8 ranks" "mpi '$a' threads '$b'"; fi
done

# W takes its inputs by (stage, microbatch): a stage's Ws out of the order of its Is run
# over MPI as on threads
python3 - "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-zb-h1.json" "$T/wswap.json" "$top_srcdir" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); top = sys.argv[3]
dev = p["schedule"][3]
w2 = dev.pop(dev.index("3W2")); dev.insert(dev.index("3W3") + 1, w2)
p["model"] = top + "/samples/models/nemotron-nano-v2-9b.json"
p["cluster"] = top + "/samples/clusters/8xH200.json"
json.dump(p, open(sys.argv[2], "w"))
PY
mpi 8 "$OCTOPIPE" run --json "$T/wswap.json"
a=$(measured "$OUT"); run "$OCTOPIPE" run --json "$T/wswap.json"; b=$(measured "$OUT")
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "Ws out of the order of their Is run on 8 ranks as on 8 threads ($a ms)"
else not_ok "Ws out of order over MPI" "mpi '$a' threads '$b'"; fi

mpi 4 "$OCTOPIPE" run --iters 2 --time-scale 0.001 --events-out "$T/ev.jsonl" --timeline-out "$T/m.json" "$plan4"
expect_rc 0 "two iterations over MPI with pacing, events and a timeline"
expect_match 'on emu over MPI: 2 iterations, 48 transfers' "$OUT" "rank 0 alone prints the report"
if python3 -c '
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
kinds = [e["ev"] for e in evs]
assert kinds[0] == "start" and kinds[-1] == "done", kinds[:3]
assert kinds.count("iter") == 2 and kinds.count("op") == 2 * 64, (kinds.count("iter"), kinds.count("op"))
' "$T/ev.jsonl"; then ok "rank 0 streams the events of every rank's ops"
else not_ok "the MPI event stream" "$(head -3 "$T/ev.jsonl")"; fi
run "$OCTOPIPE" check "$T/m.json"
expect_match 'timeline \(emu\): 4 devices, 64 ops, 48 transfers' "$OUT" "the gathered timeline is complete"

start=$(date +%s)
mpi 4 "$OCTOPIPE" run --kill-device 2 --kill-after 5 --timeout 20 "$plan4"
took=$(( $(date +%s) - start ))
if [ "$RC" != 0 ] && [ "$RC" != 124 ]; then ok "a rank that dies mid-run fails the job (exit $RC)"
else not_ok "a dead rank fails the job" "exit $RC" "$ERR"; fi
n=$(printf '%s\n' "$ERR" | grep -c 'run failed: rank 2: worker 2 died after 5 ops (injected failure)$')
if [ "$n" = 1 ]; then ok "with one error line naming the rank"; else not_ok "one error line naming rank 2" "$ERR"; fi
if [ "$took" -lt 15 ]; then ok "the others stop at once, not at the watchdog (${took} s)"
else not_ok "the others stop before the watchdog" "${took} s"; fi

# a rank that hangs (stops answering) or crashes ends the job on every rank: no blocking
# collective waits for it, rank 0 names it in one line (rank 1 when rank 0 is the silent
# one) and MPI_Abort stops everyone; a crash is the launcher's to notice, and it names it
mpi 4 "$OCTOPIPE" run --kill-device 2 --kill-after 5 --kill-how hang --timeout 2 "$plan4"
n=$(printf '%s\n' "$ERR" | grep -c '^octopipe run: ')
if [ "$RC" != 0 ] && [ "$RC" != 124 ]; then ok "a rank that hangs ends the job (exit $RC, not the test's timeout)"
else not_ok "a hung rank ends the job" "exit $RC" "$ERR"; fi
if [ "$n" = 1 ] && printf '%s\n' "$ERR" | grep -q '^octopipe run: rank 2 did not answer within 2 s (hung, or dead without the launcher noticing); the job is aborted (first failure: rank [013]: device [013] waited 2 s for the output of '
then ok "with one line naming rank 2 and the first failure it caused"
else not_ok "one line naming the hung rank 2" "$ERR"; fi
mpi 4 "$OCTOPIPE" run --kill-device 0 --kill-after 5 --kill-how hang --timeout 1 "$plan4"
n=$(printf '%s\n' "$ERR" | grep -c '^octopipe run: ')
if [ "$RC" != 0 ] && [ "$RC" != 124 ] && [ "$n" = 1 ] &&
   printf '%s\n' "$ERR" | grep -q '^octopipe run: rank 0 did not answer within [0-9.]* s (hung, or dead without the launcher noticing)'
then ok "a hung rank 0 ends the job too, named by rank 1 in one line"
else not_ok "a hung rank 0 is named by rank 1" "exit $RC" "$ERR"; fi
mpi 4 "$OCTOPIPE" run --kill-device 2 --kill-after 5 --kill-how crash --timeout 2 "$plan4"
if [ "$RC" != 0 ] && [ "$RC" != 124 ] && printf '%s\n' "$ERR" | grep -q 'rank 2'
then ok "a rank that crashes ends the job, and the launcher names rank 2 (exit $RC)"
else not_ok "a crashed rank ends the job" "exit $RC" "$ERR"; fi

# the data checks hold over MPI too: a mis-routed buffer is caught by its receiving rank
mpi 4 "$OCTOPIPE" run --misroute-xfer 5 "$plan4"
n=$(printf '%s\n' "$ERR" | grep -c 'run failed: rank 1: device 1 received from device 0 the output of 0F5 for 1F5 (transfer 5, iteration 0), but the data carries the output of 0F6 of iteration 0 (mis-routed)$')
if [ "$RC" = 1 ] && [ "$n" = 1 ]; then ok "a mis-routed buffer over MPI: exit 1, one line naming rank 1 and the transfer"
else not_ok "a mis-routed buffer over MPI" "exit $RC" "$ERR"; fi
mpi 4 "$OCTOPIPE" run --iters 2 --corrupt-xfer 30 "$plan4"
n=$(printf '%s\n' "$ERR" | grep -c 'run failed: rank 3: device 3 received from device 2 the output of 2F3 for 3F3 (transfer 30, iteration 0), but the data failed its checksum')
if [ "$RC" = 1 ] && [ "$n" = 1 ]; then ok "a corrupted transfer over MPI: one line naming rank 3"
else not_ok "a corrupted transfer over MPI" "exit $RC" "$ERR"; fi

mpi 2 "$OCTOPIPE" run "$top_srcdir/tests/data/oom-plan.json"
n=$(printf '%s\n' "$ERR" | grep -c 'oom-plan.json: plan infeasible: device 1 needs')
if [ "$RC" = 3 ] && [ "$n" = 1 ]; then ok "an out-of-memory plan over MPI: exit 3, said once"
else not_ok "an out-of-memory plan over MPI is refused once" "exit $RC" "$ERR"; fi

mpi 3 "$OCTOPIPE" run "$plan4"
if [ "$RC" != 0 ]; then ok "3 ranks for a 4-device plan are refused"; else not_ok "a wrong rank count is refused"; fi
expect_match 'the plan has 4 devices but 3 MPI ranks were started' "$ERR" "saying why"

# the cuda backend as one rank per device: without a GPU every rank fails the same way
# and rank 0 alone says so; the rank count and --share-gpus are checked as for emu
if [ -x "$(dirname "$OCTOPIPE")/octopipe-cuda" ]; then
    mpi 4 "$OCTOPIPE" run --backend cuda "$plan4"
    if [ "$RC" = 0 ]; then
        ok "mpirun -np 4 octopipe run --backend cuda runs (GPUs are present)"
    else
        n=$(printf '%s\n' "$ERR" | grep -c '^octopipe run: rank 0: no GPU: .')
        if [ "$RC" != 124 ] && [ "$n" = 1 ]; then ok "cuda as 4 ranks without a GPU: one line from rank 0 (exit $RC)"
        else not_ok "cuda as 4 ranks without a GPU fails with one line" "exit $RC" "$ERR"; fi
    fi
    # a failure before the backend opens (here on rank 0 only: the events file) reaches
    # every rank through their first agreement: one line, no rank left waiting
    mpi 4 "$OCTOPIPE" run --backend cuda --events-out "$T/no/such/dir/ev.jsonl" "$plan4"
    n=$(printf '%s\n' "$ERR" | grep -c "octopipe run: rank 0: .*/no/such/dir/ev.jsonl: cannot create")
    if [ "$RC" != 0 ] && [ "$RC" != 124 ] && [ "$n" = 1 ]; then ok "cuda ranks: rank 0 alone failing before the backend opens stops all of them"
    else not_ok "a rank-0-only failure stops every cuda rank" "exit $RC" "$ERR"; fi
    mpi 3 "$OCTOPIPE" run --backend cuda "$plan4"
    n=$(printf '%s\n' "$ERR" | grep -c 'the plan has 4 devices but 3 MPI ranks were started')
    if [ "$RC" != 0 ] && [ "$n" = 1 ]; then ok "cuda as 3 ranks for a 4-device plan: refused once"
    else not_ok "cuda as 3 ranks is refused once" "exit $RC" "$ERR"; fi
    mpi 4 "$OCTOPIPE" run --backend cuda --share-gpus "$plan4"
    n=$(printf '%s\n' "$ERR" | grep -c 'share-gpus is for one process')
    if [ "$RC" != 0 ] && [ "$n" = 1 ]; then ok "--share-gpus as ranks: a usage error, said once"
    else not_ok "--share-gpus as ranks is refused once" "exit $RC" "$ERR"; fi
else
    skip "the cuda backend as MPI ranks" "built without the cuda backend"
fi
done_testing
