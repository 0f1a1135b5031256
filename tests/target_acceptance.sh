#!/bin/sh
# Issue 24's acceptance for Megatron-LM: for every bundled model on 8, 16 and 64 H200s,
# `tune --target megatron` either finds a plan (then `export megatron-args` succeeds, and
# the plan rebuilt from the exported flags with Megatron-LM's own schedule - `octopipe
# plan --schedule 1f1b|interleaved` at the flags' degrees, micro-batch size, microbatches and recompute, over
# the exported partition - simulates to the iteration time tune reported), or it says
# why not: no layout fits (exit 3) or Megatron-LM cannot build the model (exit 2, one
# line). Small budgets (--evals) keep it to about a minute; the table goes to the log.
# And for torchtitan, every bundled model: tune says what it searched, the plan exports,
# its schedule CSV reads back as the plan (4 pipeline ranks x 2 FSDP replicas), and the
# layout search on 16 GPUs exports; the models of TT_MUST_FIT must find a plan there (exit
# 3 fails); a model with a layer torchtitan has no model for (Mamba, gated DeltaNet) is
# refused up front (exit 2, one line).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
T="$TMPDIR_TEST"
O="$OCTOPIPE"
MODELS="$top_srcdir/samples/models"

for g in 8 16 64; do
    for f in "$MODELS"/*.json; do
        m=$(basename "$f" .json)
        d="$m on $g GPUs"
        run "$O" tune --model "$m" --cluster ${g}xH200 --microbatches 16 --target megatron --evals 12 -o "$T/$m-$g.json"
        case $RC in
        3) if printf '%s\n' "$ERR" | grep -q 'no layout fits\|no plan .* fits'; then
               ok "$d: no layout fits, and tune says so"; echo "# table | $m | $g | - | no layout fits |"
           else not_ok "$d: exit 3 without saying no layout fits" "$ERR"; fi
           continue ;;
        2) if [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && printf '%s\n' "$ERR" | grep -q 'Megatron-LM'; then
               ok "$d: Megatron-LM cannot build it, in one line"; echo "# table | $m | $g | - | refused: $ERR |"
           else not_ok "$d: exit 2" "$ERR"; fi
           continue ;;
        0) ;;
        *) not_ok "$d: tune --target megatron" "exit $RC" "$ERR"; continue ;;
        esac
        said=$(unwrap "$OUT" | sed -n 's/^tuned for Megatron-LM: \([0-9.]*\) \(m*s\) per iteration, \([0-9.]*\)x.*/\1 \2 \3/p')
        run "$O" export megatron-args "$T/$m-$g.json"
        if [ "$RC" != 0 ]; then not_ok "$d: export megatron-args" "$ERR"; continue; fi
        printf '%s\n' "$OUT" >"$T/$m-$g.args"
        # the plan Megatron-LM runs from these flags, rebuilt with its own schedule
        if ! set -- $(python3 - "$T/$m-$g.args" "$T/$m-$g.json" "$g" <<'PY'
import json, re, sys
text, plan, gpus = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), int(sys.argv[3])
flag = lambda name: (re.search(r"^--%s (\S+)" % name, text, re.M) or [None, None])[1]
pp, tp = int(flag("pipeline-model-parallel-size")), int(flag("tensor-model-parallel-size"))
dp = gpus // (pp * tp)
part = re.search(r'^--(?:pipeline-model-parallel-layout|hybrid-layer-pattern) "(.*)"$', text, re.M).group(1)
stages = part.count("|") + 1
assert stages % pp == 0 and stages == len(plan["stages"]), (stages, pp, len(plan["stages"]))
zero = 0
if "--use-distributed-optimizer" in text: zero = 1
s = flag("data-parallel-sharding-strategy")
if s: zero = {"optim_grads": 2, "optim_grads_params": 3}[s]
grads = "bf16" if "--grad-reduce-in-bf16" in text or flag("megatron-fsdp-main-grads-dtype") == "bf16" else "fp32"
rc = flag("recompute-granularity") or "none"
block = flag("recompute-num-layers") if flag("recompute-method") == "block" else "0"
mb = int(flag("global-batch-size")) // (int(flag("micro-batch-size")) * dp)
counts = ",".join(str(s["layers"][1] - s["layers"][0] + 1) for s in plan["stages"])
ep = flag("expert-model-parallel-size") or "1"
sched = "1f1b" if stages == pp else "interleaved --chunks %d" % (stages // pp)
print(pp, tp, dp, ep, zero, grads, rc, block, mb, flag("micro-batch-size"), counts, sched)
PY
        ); then not_ok "$d: the exported flags read back" "$(cat "$T/$m-$g.args")"; continue; fi
        pp=$1 tp=$2 dp=$3 ep=$4 zero=$5 grads=$6 rc=$7 block=$8 mb=$9; shift 9; mbs=$1 counts=$2; shift 2
        sched="$*"
        run "$O" plan --model "$m" --cluster ${g}xH200 --schedule "$@" --microbatches "$mb" --partition "$counts" \
            --devices "$pp" --tp "$tp" --dp "$dp" --ep "$ep" --zero "$zero" --grads "$grads" --recompute "$rc" \
            --micro-batch-size "$mbs" -o "$T/$m-$g.mega.json"
        if [ "$RC" != 0 ]; then not_ok "$d: octopipe plan from the flags" "exit $RC" "$ERR"; continue; fi
        # --recompute-method block N: each virtual stage's first N layers as Megatron-LM
        # counts them (decoder layers; a hybrid pattern's symbols; never the embedding, the
        # loss or an MTP module)
        [ "$block" != 0 ] && python3 - "$T/$m-$g.mega.json" "$block" "$MODELS/$m.json" <<'PY'
import json, sys
plan, n, model = json.load(open(sys.argv[1])), int(sys.argv[2]), json.load(open(sys.argv[3]))
none = {"embedding", "head", "loss"}
def count(kind):
    if kind.startswith("mtp") or kind in none or kind == "head+loss":
        return 0
    toks = [t for t in kind.split("+") if t not in none]
    hybrid = any(t in ("mamba", "mamba2", "gdn") for l in model["layers"] for t in l["kind"].split("+"))
    return len(toks) if hybrid else 1
for s in plan["stages"]:
    have = cover = 0
    for l in range(s["layers"][0], s["layers"][1] + 1):
        k = count(model["layers"][l]["kind"])
        if have < n and k:
            cover = l - s["layers"][0] + 1
        have += k
    if have > n and cover < s["layers"][1] - s["layers"][0] + 1:
        s["recompute_layers"] = cover
json.dump(plan, open(sys.argv[1], "w"))
PY
        "$O" sim --json "$T/$m-$g.json" >"$T/$m-$g.sim" 2>&1
        run "$O" sim --json "$T/$m-$g.mega.json"
        # the rebuilt plan's time: the tuned plan's own to the microsecond, and tune's words
        # to the digits it printed
        if got=$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
got, tuned = json.load(sys.stdin)["makespan_ms"], json.load(open(sys.argv[1]))["makespan_ms"]
said, unit = float(sys.argv[2]), sys.argv[3]
said *= 1000 if unit == "s" else 1
assert abs(got - tuned) < 1e-3 and abs(got - said) <= 0.005 * said + 0.05, (got, tuned, said)
print("%.1f" % got)' "$T/$m-$g.sim" $said); then
            set -- $said
            ok "$d: tuned, exported, and Megatron's $sched over the flags simulates to tune's $1 $2"
            echo "# table | $m | $g | pp $pp tp $tp dp $dp ep $ep mbs $mbs zero $zero recompute $rc (block $block), $sched; $counts | $got ms, ${3}x the 1F1B default |"
        else not_ok "$d: the exported plan simulates to what tune said" "tune: '$said'" "$got"
        fi
    done
done

# ---- torchtitan: every bundled model, 4 pipeline ranks x 2 FSDP replicas on 8 GPUs (a
# schedule CSV to read back; a pure pipeline has no FSDP, and torchtitan would train it in
# fp32) and with the layout search on 16 -------------------------------------------------
# models that fit: pp 4 x dp 2 on 8 GPUs (dense, MoE), and the layout search on 16
TT_MUST_FIT="llama2-7b deepseek-v2-lite"
TT16_MUST_FIT="gemma3-12b"
for f in "$MODELS"/*.json; do
    m=$(basename "$f" .json)
    run "$O" tune --model "$m" --cluster 8xH200 --microbatches 16 --target torchtitan --tp 1 --dp 2 --evals 12 \
        -o "$T/tt-$m.json"
    case " $TT_MUST_FIT " in *" $m "*) must=1 ;; *) must=0 ;; esac
    if [ "$RC" = 2 ] && [ $must = 0 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] &&
       printf '%s\n' "$ERR" | grep -q "torchtitan has no .* layer"; then
        ok "$m: torchtitan has no model of its layers, and tune says so in one line (exit 2)"
        echo "# tt-table | $m | - | refused: $ERR |"; continue; fi
    if [ "$RC" = 3 ] && [ $must = 0 ]; then
        ok "$m: torchtitan over 4 pipeline ranks x 2 replicas: no plan fits, and tune says so (exit 3)"
        echo "# tt-table | $m | 8 (pp 4 x dp 2) | no plan fits |"; continue; fi
    if [ "$RC" != 0 ]; then not_ok "$m: tune --target torchtitan over 4 pipeline ranks x 2" "exit $RC" "$ERR"; continue; fi
    said=$(printf '%s\n' "$OUT" | grep -c '^target torchtitan: searching its loop and v placements')
    run "$O" export torchtitan "$T/tt-$m.json" -o "$T/tt-$m.d"
    if [ "$RC" != 0 ] || [ "$said" != 1 ]; then
        not_ok "$m: tune --target torchtitan (says what it searched) then export torchtitan" "said $said" "$ERR"
        continue; fi
    parts=$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
print(",".join(str(s["layers"][1] - s["layers"][0] + 1) for s in p["stages"]))' "$T/tt-$m.json")
    # read back as a plain pipeline on the GPUs: without the layout's FSDP sharding it may
    # not fit (exit 3, the plan written all the same); the order and placement are compared
    run "$O" import torch-csv "$T/tt-$m.d/schedule.csv" --model "$m" --cluster 8xH200 --partition "$parts" \
        -o "$T/tt-$m.back.json"
    if { [ "$RC" = 0 ] || [ "$RC" = 3 ]; } && python3 - "$T/tt-$m.json" "$T/tt-$m.back.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert [(s["layers"], s["device"]) for s in a["stages"]] == [(s["layers"], s["device"]) for s in b["stages"]]
pp = 1 + max(s["device"] for s in a["stages"])
assert a["schedule"][:pp] == b["schedule"][:pp] and not any(a["schedule"][pp:] + b["schedule"][pp:])
PY
    then ok "$m: torchtitan over 4 pipeline ranks x 2: tuned, exported, the CSV reads back as the plan"
        echo "# tt-table | $m | 8 (pp 4 x dp 2) | $(grep -c . "$T/tt-$m.d/schedule.csv") CSV rows, stages $parts |"
    else not_ok "$m: torchtitan CSV round trip" "exit $RC" "$ERR"; fi
    run "$O" tune --model "$m" --cluster 16xH200 --microbatches 16 --target torchtitan --evals 12 -o "$T/tl-$m.json"
    case " $TT16_MUST_FIT " in *" $m "*) must=1 ;; *) must=0 ;; esac
    if [ "$RC" = 3 ] && [ $must = 0 ]; then ok "$m: torchtitan on 16 GPUs: no layout fits (exit 3)"; continue; fi
    if [ "$RC" != 0 ]; then not_ok "$m: tune --target torchtitan on 16 GPUs" "exit $RC" "$ERR"; continue; fi
    run "$O" export torchtitan "$T/tl-$m.json" -o "$T/tl-$m.d"
    if [ "$RC" = 0 ] && [ -s "$T/tl-$m.d/job.toml" ]; then ok "$m: torchtitan on 16 GPUs with the layout search exports"
    else not_ok "$m: torchtitan on 16 GPUs: export" "exit $RC" "$ERR"; fi
done

done_testing
