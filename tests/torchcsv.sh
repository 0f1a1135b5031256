#!/bin/sh
# PyTorch's schedule CSV syntaxes beyond plain cells: an overlapped pair is one
# "(0F7;7I3)OVERLAP_F_B" cell (torch.distributed.pipelining _Action.__repr__ of an action
# with sub_actions) both ways, and the compute_comms format (_PipelineScheduleRuntime
# ._dump_csv's default: UNSHARD, RESHARD, REDUCE_GRAD, SEND_F, RECV_F, SEND_B, RECV_B
# cells beside the compute) imports to the plan of its compute-only form.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
data="$top_srcdir/tests/data"
csvs="$data/torchcsv"
T="$TMPDIR_TEST"
O="$OCTOPIPE"
tiny() { "$O" import torch-csv "$1" --model "$data/tiny-model.json" --cluster "$data/tiny-cluster.json" -o "$2"; }
makespan() { "$O" sim --json "$1" | sed -n 's/.*"makespan_ms": \([0-9.]*\).*/\1/p' | head -1; }

# DualPipeV's pairs: written as PyTorch writes them, read back to the same plan (two plain
# cells were read back as two ops run one after the other: 954.1 ms became 899.8)
"$O" plan --model llama2-7b --cluster 8xH200 --schedule dualpipev --microbatches 16 -o "$T/dpv.json" >/dev/null 2>&1
run "$O" export torch-csv "$T/dpv.json" -o "$T/dpv.csv"
expect_rc 0 "export torch-csv of a DualPipeV plan"
expect_match '(^|,)\(0F15;15I7\)OVERLAP_F_B(,|$)' "$(cat "$T/dpv.csv")" "its pair 0F15+15I7 is one OVERLAP_F_B cell"
if grep -q '+' "$T/dpv.csv"; then not_ok "no plan-syntax pair in the CSV"; else ok "no plan-syntax pair in the CSV"; fi
run "$O" import torch-csv "$T/dpv.csv" --model llama2-7b --cluster 8xH200 -o "$T/dpv.back.json"
expect_rc 0 "import torch-csv of it"
a=$(makespan "$T/dpv.json") b=$(makespan "$T/dpv.back.json")
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "the plan read back simulates the same ($a ms)"
else not_ok "the plan read back simulates the same" "$a vs $b"; fi
if python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["schedule"] == b["schedule"], "orders differ"' "$T/dpv.json" "$T/dpv.back.json" 2>/dev/null
then ok "with the same pairs in the same order"; else not_ok "the same pairs in the same order"; fi
"$O" export torch-csv "$T/dpv.back.json" -o "$T/dpv2.csv"
if cmp -s "$T/dpv.csv" "$T/dpv2.csv"; then ok "and exports to the same CSV"; else not_ok "the CSV round trip"; fi

# compute_comms: the comm and shard cells are checked and dropped
tiny "$data/schedule.csv" "$T/plain.json" 2>/dev/null
run tiny "$csvs/comms-1f1b.csv" "$T/comms.json"
expect_rc 0 "import of a compute_comms CSV (1F1B with sends, receives, unshards, reshards, grad reductions)"
if cmp -s "$T/comms.json" "$T/plain.json"; then ok "the same plan as its compute-only form"
else not_ok "the same plan as its compute-only form" "$(diff "$T/comms.json" "$T/plain.json" | head -5)"; fi
tiny "$csvs/dualpipev.csv" "$T/dpv-plain.json" 2>/dev/null
run tiny "$csvs/comms-dualpipev.csv" "$T/dpv-comms.json"
expect_rc 0 "import of a compute_comms CSV with OVERLAP_F_B pairs"
if cmp -s "$T/dpv-comms.json" "$T/dpv-plain.json"; then ok "the same plan as its compute-only form"
else not_ok "the same plan as its compute-only form" "$(diff "$T/dpv-comms.json" "$T/dpv-plain.json" | head -5)"; fi
"$O" export torch-csv "$T/dpv-comms.json" -o "$T/dpv-comms.csv"
if cmp -s "$T/dpv-comms.csv" "$csvs/dualpipev.csv"; then ok "which exports as the compute-only CSV"
else not_ok "exports as the compute-only CSV" "$(diff "$T/dpv-comms.csv" "$csvs/dualpipev.csv" | head -3)"; fi

# what is refused: one line, exit 2, naming the cell
refused() {  # refused ROW0 ROW1 PATTERN DESCRIPTION
    printf '%s\n%s\n' "$1" "$2" >"$T/bad.csv"
    run tiny "$T/bad.csv" "$T/bad.json"
    if [ "$RC" = 2 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && printf '%s\n' "$ERR" | grep -Eq -- "$3"; then
        ok "$4"
    else not_ok "$4" "exit $RC" "stderr: $ERR"; fi
}
r0=0F0,0F1,0I0,0W0,0I1,0W1 r1=1F0,1I0,1W0,1F1,1I1,1W1
refused "$r0,1SEND_F0" "$r1" "bad.csv: line 1, column 7: '1SEND_F0' acts on stage 1, which runs on line 2" \
    "a send of another rank's stage"
refused "$r0" "$r1,1RECV_B2" "line 2, column 7: '1RECV_B2' names microbatch 2 but the schedule has 2 \(0\.\.1\)" \
    "a receive of a microbatch the schedule does not have"
refused "$r0,2UNSHARD" "$r1" "line 1, column 7: '2UNSHARD' names stage 2 but the compute actions run stages 0\.\.1" \
    "an unshard of a stage no row computes"
refused "0SEND_F,$r0" "$r1" "line 1, column 1: '0SEND_F' is not an action" "a send without its microbatch"
refused "0F0,(0F1;1I0;0W0)OVERLAP_F_B" "$r1" "'\(0F1;1I0;0W0\)OVERLAP_F_B' is not a pair of one forward and one backward" \
    "an overlap of three actions"
refused "(0F0;0F1)OVERLAP_F_B,0I0,0W0,0I1,0W1" "$r1" "'\(0F0;0F1\)OVERLAP_F_B' is not a pair of one forward" \
    "an overlap of two forwards"
refused "0F0,(0F1;0I0)OVERLAP_G" "$r1" "'\(0F1;0I0\)OVERLAP_G' is not an action" "an overlap not named OVERLAP_F_B"
done_testing
