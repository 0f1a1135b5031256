#!/bin/sh
# octopipe run on the emulated executor: every bundled plan runs without deadlock and
# takes exactly its simulated iteration time (the emulator's virtual clock runs the
# model's times, and its receives are posted as early as the simulation's transfers start), events stream as JSON lines, a dead worker
# gives a clean error, an infeasible plan is refused.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
T="$TMPDIR_TEST"
# json_field KEY: a top-level field of the JSON object in $OUT (empty when there is none)
json_field() {
    printf '%s\n' "$OUT" | python3 -c 'import json, sys
try: print(json.load(sys.stdin)[sys.argv[1]])
except Exception: pass' "$1"
}

for f in "$top_srcdir"/plans/*.json; do
    run "$OCTOPIPE" run --json "$f"
    err=$(json_field error)
    if [ "$RC" = 0 ] && [ -n "$err" ] && awk -v e="$err" 'BEGIN { exit !(e < 1e-9 && e > -1e-9) }'; then
        ok "$(basename "$f") runs on emu exactly as simulated (error $err)"
    else
        not_ok "$(basename "$f") runs on emu exactly as simulated" "exit $RC" "$OUT" "$ERR"
    fi
done
# fresh plans of every schedule (gpt-13b: its dualpipev pairs were 5.8% off before): the executor runs an F&B pair as the
# simulator times it (both inputs first, the head's output at the pair's end), and posts
# each receive before the op during which its data is sent (posted only at the next op,
# a transfer waited for the receiver's op to end: the bundled tuned plan ran 0.30% slow),
# so every one takes exactly the simulated time, with no receive needing repair
for sched in 1f1b interleaved zb-h1 zb-h2 zb-v dualpipev gpipe adaptive; do
    "$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule $sched --microbatches 8 \
        -o "$T/fresh.json" >/dev/null 2>&1
    run "$OCTOPIPE" run --json "$T/fresh.json"
    err=$([ "$(json_field repaired_receives)" = 0 ] && json_field error)
    if [ "$RC" = 0 ] && [ -n "$err" ] && awk -v e="$err" 'BEGIN { exit !(e < 1e-9 && e > -1e-9) }'; then
        ok "a fresh $sched plan (gpt-13b, 4 GPUs) runs on emu exactly as simulated, no repairs (error $err)"
    else
        not_ok "a fresh $sched plan runs on emu exactly as simulated, no repairs" "exit $RC" "$OUT" "$ERR"
    fi
done

# ... and not only the iteration: every op and every transfer starts when the simulation
# says (the bundled tuned plan, several stages per GPU)
"$OCTOPIPE" run --timeline-out "$T/emu-tl.json" "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-tuned.json" >/dev/null 2>&1
"$OCTOPIPE" sim --timeline-out "$T/sim-tl.json" "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-tuned.json" >/dev/null 2>&1
if python3 - "$T/emu-tl.json" "$T/sim-tl.json" <<'PY'
import json, sys
e, s = (json.load(open(f)) for f in sys.argv[1:3])
def ops(t):
    return {(o["stage"], o["mb"], o["op"]): (o["start_ms"], o["end_ms"]) for d in t["devices"] for o in d["ops"]}
def xfers(t):
    return {(x["src"], x["dst"], x["stage"], x["mb"], x["kind"]): (x["start_ms"], x["end_ms"]) for x in t["transfers"]}
for f in (ops, xfers):
    a, b = f(e), f(s)
    assert a.keys() == b.keys(), (f.__name__, len(a), len(b))
    bad = [(k, a[k], b[k]) for k in a if max(abs(a[k][0] - b[k][0]), abs(a[k][1] - b[k][1])) > 1e-6]
    assert not bad, (f.__name__, len(bad), bad[:3])
PY
then ok "the tuned plan's every op and transfer runs on emu at its simulated times"
else not_ok "emu and sim timelines of the tuned plan differ"; fi

# W takes its inputs from a store keyed by (stage, microbatch) that I fills: a plan edited
# so that a stage's Ws leave the order of its Is simulates, and runs as simulated
python3 - "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-zb-h1.json" "$T/wswap.json" "$top_srcdir" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); top = sys.argv[3]
dev = p["schedule"][3]
w2 = dev.pop(dev.index("3W2")); dev.insert(dev.index("3W3") + 1, w2)
p["model"] = top + "/samples/models/nemotron-nano-v2-9b.json"
p["cluster"] = top + "/samples/clusters/8xH200.json"
json.dump(p, open(sys.argv[2], "w"))
PY
run "$OCTOPIPE" sim "$T/wswap.json"
expect_rc 0 "a plan whose stage 3 runs 3W3 before 3W2 simulates"
run "$OCTOPIPE" run --json "$T/wswap.json"
err=$(json_field error)
if [ "$RC" = 0 ] && [ -n "$err" ] && awk -v e="$err" 'BEGIN { exit !(e < 0.005 && e > -0.005) }'; then
    ok "and the executor runs it as simulated (error $err)"
else
    not_ok "the executor runs Ws out of the order of their Is" "exit $RC" "$OUT" "$ERR"
fi

run "$OCTOPIPE" run --json "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
if [ "$(json_field kernels)" = emulated ] && [ "$(json_field backend)" = emu ]; then ok "run --json says what the ops ran (emulated, on emu)"
else not_ok "run --json names its kernels" "$OUT"; fi

# the error is the prediction's, as calibrate reports it: a stage slower than modelled
# makes the measurement longer, so the prediction is short: a negative error
run "$OCTOPIPE" run --json --emu-slowdown 1:1.5 "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
if printf '%s\n' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
want = (r["predicted_ms"] - r["measured_ms"]) / r["measured_ms"]
assert r["measured_ms"] > r["predicted_ms"] and abs(r["error"] - want) < 1e-6 and r["error"] < -0.05, r
'; then ok "error = (predicted - measured) / measured: negative when the run is slower"
else not_ok "the sign of the error" "$OUT" "$ERR"; fi

"$OCTOPIPE" tune --model gpt-13b --cluster 8xH200 --microbatches 16 --layout pp --quiet -o "$T/tuned.json" >/dev/null 2>&1
run "$OCTOPIPE" run "$T/tuned.json"
expect_rc 0 "a freshly tuned plan runs on emu"
expect_match '^iteration: predicted [0-9.]+ ms, measured [0-9.]+ ms, error [+-][0-9.]+%' "$OUT" "and prints predicted vs measured"
expect_match '^   7 +[0-9.]+ +[0-9.]+ +[+-][0-9.]+%$' "$OUT" "per device"

run "$OCTOPIPE" run --events-out "$T/ev.jsonl" --iters 2 --time-scale 0.001 "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_rc 0 "two iterations with wall-clock pacing and an event stream"
if python3 -c '
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
kinds = [e["ev"] for e in evs]
assert kinds[0] == "start" and kinds[-1] == "done", kinds[:3]
assert kinds.count("iter") == 2 and kinds.count("op") == 2 * 64, (kinds.count("iter"), kinds.count("op"))
xf = [e for e in evs if e["ev"] == "xfer"]
assert len(xf) == 2 * 48, len(xf)
assert all(e["t1_ms"] >= e["t0_ms"] and e["kind"] in ("act", "grad") and e["bytes"] > 0 for e in xf), xf[0]
' "$T/ev.jsonl"; then ok "the events are JSON lines: start, every op and transfer of both iterations, iter, done"
else not_ok "the event stream" "$(head -3 "$T/ev.jsonl")"; fi

# a plan whose file name needs escaping still gives valid JSON lines
sed "s|\"\.\./samples|\"$top_srcdir/samples|g" "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json" > "$T/we\"ird.json"
run "$OCTOPIPE" run --events-out - "$T/we\"ird.json"
if printf '%s\n' "$OUT" | head -1 | python3 -c 'import json,sys; assert json.loads(sys.stdin.readline())["plan"].endswith("we\"ird.json")'
then ok "event lines quote file names (a quote in the plan's name)"
else not_ok "event lines quote file names" "$(printf '%s\n' "$OUT" | head -1)"; fi

run "$OCTOPIPE" run --kill-device 2 --kill-after 5 --timeout 3 "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_rc 1 "a worker killed mid-run fails the run with exit 1"
expect_match 'run failed: worker 2 died after 5 ops' "$ERR" "and names the worker"
run "$OCTOPIPE" run --events-out - --kill-device 2 --kill-after 5 --timeout 3 "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
if printf '%s\n' "$OUT" | tail -1 | python3 -c '
import json, sys
e = json.loads(sys.stdin.readline())
assert e["ev"] == "error" and e["dev"] == 2 and "died after 5 ops" in e["msg"], e
'; then ok "the event stream ends with an error event naming device 2"
else not_ok "an error event names the device" "$(printf '%s\n' "$OUT" | tail -2)"; fi
# a worker that hangs instead: its peers' watchdog ends the run, naming who waited for what
run "$OCTOPIPE" run --kill-device 2 --kill-after 5 --kill-how hang --timeout 1 "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_rc 1 "a hung worker fails the run with exit 1"
expect_match "run failed: device [0-9] waited 1 s for the output of [0-9][FB][0-9]+ from device [0-9]: no matching send arrived \\((device [0-9] waits for device [0-9], )*device 2 waits for no data: it hung or died\\)$" "$ERR" \
    "the watchdog names the wait that never ended and, following who waits for whom, the hung worker"
run "$OCTOPIPE" run --kill-device 0 --kill-after 5 --kill-how hang --timeout 1 "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_match "no matching send arrived \\((device [0-9] waits for device [0-9], )*device 0 waits for no data: it hung or died\\)$" "$ERR" \
    "a hung first device is found at the end of the chain"
# a device busy with an op longer than the watchdog (paced in wall time) is named as
# running it, not as hung or dead
run "$OCTOPIPE" run --time-scale 1 --timeout 0.05 "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_rc 1 "an op longer than the watchdog fails the run"
expect_match "device 0 is still running 0F[0-9]+, an op longer than the watchdog\)$" "$ERR" \
    "and the chain of waits ends at the device running it, not at a 'hung or dead' one"
run "$OCTOPIPE" run --kill-device 2 --kill-how crash "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_rc 2 "--kill-how crash is for MPI ranks only"
# every transfer carries tagged, checksummed data that the receiver checks: a buffer sent
# to the wrong place, or a byte flipped on the way, fails the run naming the transfer
run "$OCTOPIPE" run --misroute-xfer 5 "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_rc 1 "a mis-routed buffer fails the run (exit 1)"
expect_match 'run failed: device 1 received from device 0 the output of 0F5 for 1F5 \(transfer 5, iteration 0\), but the data carries the output of 0F6 of iteration 0 \(mis-routed\)$' \
    "$ERR" "in one line naming the transfer and what it carried"
run "$OCTOPIPE" run --iters 2 --corrupt-xfer 30 --events-out "$T/bad.jsonl" "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_rc 1 "a corrupted transfer fails the run"
expect_match 'run failed: device 3 received from device 2 the output of 2F3 for 3F3 \(transfer 30, iteration 0\), but the data failed its checksum \(corrupted' \
    "$ERR" "naming the transfer and the checksum"
if tail -1 "$T/bad.jsonl" | python3 -c 'import json, sys; e = json.loads(sys.stdin.read()); assert e["ev"] == "error" and e["dev"] == 3, e'
then ok "the event stream ends with an error event for device 3"; else not_ok "the data error event" "$(tail -1 "$T/bad.jsonl")"; fi
n=$(printf '%s\n' "$ERR" | grep -c .)
if [ "$n" = 1 ]; then ok "the data error is one line"; else not_ok "the data error is one line" "$ERR"; fi
# an event reader that stops reading (a stalled TUI, a stopped pipe) must not hang the run:
# a write that cannot go on within the watchdog fails the run (exit 1), naming the stream
mkfifo "$T/stalled"
sleep 60 <"$T/stalled" & reader=$!
start=$(date +%s)
run timeout 40 "$OCTOPIPE" run --iters 40 --timeout 1 --events-out "$T/stalled" \
    "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-tuned.json"
took=$(( $(date +%s) - start ))
kill "$reader" 2>/dev/null; wait "$reader" 2>/dev/null
if [ "$RC" = 1 ] && [ "$took" -lt 15 ]; then ok "a stalled event reader fails the run in ${took} s (exit 1), not a hang"
else not_ok "a stalled event reader fails the run, not a hang" "exit $RC after ${took} s" "$ERR"; fi
expect_match "stalled.*(stopped reading|did not read)" "$ERR" "and says the reader stopped reading"

# an events file that cannot be written (a full disk) fails the run after that iteration,
# with no summary of a run whose events were lost: one line, exit 1
run "$OCTOPIPE" run --iters 40 --events-out /dev/full "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_rc 1 "events to a full disk fail the run (exit 1)"
if [ -z "$OUT" ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" = 1 ]; then ok "with no summary and one error line ($ERR)"
else not_ok "no summary and one error line for a full events disk" "$OUT" "$ERR"; fi
# a reader that reads a little and closes the FIFO: a failed write (exit 1, one line), not a
# silent death by SIGPIPE (exit 141) (the reader's open may come after ours: tried again)
mkfifo "$T/closing"
n=50
while :; do
    head -c 100 "$T/closing" >/dev/null & reader=$!
    run timeout 40 "$OCTOPIPE" run --iters 50 --events-out "$T/closing" "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
    wait "$reader" 2>/dev/null
    printf '%s' "$ERR" | grep -q 'no process is reading' && [ $n -gt 0 ] || break
    n=$((n - 1)); sleep 0.1
done
expect_rc 1 "an events reader that closes its FIFO fails the run (exit 1), no SIGPIPE"
expect_match "cannot write the events to '.*closing': its reader closed it" "$ERR" "saying the reader closed it"
plan4="$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
# an option that would do nothing is refused, not silently ignored: the dry run runs
# nothing (no events, no timeline, no iterations, no faults), the emulator fits no proxies
for args in "--events-out $T/dry.jsonl" "--timeline-out $T/dry.json" "--iters 3" "--kill-device 1" "--corrupt-xfer 2"; do
    # shellcheck disable=SC2086
    run "$OCTOPIPE" run --backend cuda --dry-run $args "$plan4"
    if [ "$RC" = 2 ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" = 1 ] && [ ! -e "$T/dry.json" ] && [ ! -e "$T/dry.jsonl" ]
    then ok "run --dry-run $args: exit 2 ($ERR)"
    else not_ok "run --dry-run $args: exit 2, nothing written" "exit $RC" "$ERR"; fi
done
run "$OCTOPIPE" run --gemm-tflops 100 "$plan4"
expect_rc 2 "--gemm-tflops on the emulator (which fits no proxies) is refused"
# a fault that cannot happen is bad input, never a clean run that injected nothing
plan4="$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
for args in "--kill-device 4" "--kill-device 1 --kill-after 16" "--kill-after 3" "--misroute-xfer 48" \
            "--corrupt-xfer 48"; do
    # shellcheck disable=SC2086
    run "$OCTOPIPE" run $args "$plan4"
    if [ "$RC" = 2 ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" = 1 ]; then ok "run $args on 4 devices, 48 transfers: exit 2 ($ERR)"
    else not_ok "run $args: exit 2 with one line" "exit $RC" "$ERR"; fi
done
run "$OCTOPIPE" run --kill-device 1 --kill-after 15 "$plan4"
expect_rc 1 "--kill-after the last op of the device still kills it"
# with one microbatch there is no other microbatch to mis-route: the next iteration's data is
"$OCTOPIPE" plan --model gpt-13b --cluster 4xH200 --schedule 1f1b --microbatches 1 -o "$T/one-mb.json" >/dev/null
run "$OCTOPIPE" run --misroute-xfer 1 "$T/one-mb.json"
expect_rc 1 "a mis-routed transfer with one microbatch fails the run"
expect_match 'but the data carries the output of 1F0 of iteration 1 \(mis-routed\)$' "$ERR" "naming the other iteration"
run "$OCTOPIPE" run --iters 3 "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-dualpipev.json"
expect_rc 0 "three iterations of a dualpipev plan (F&B pairs) pass every data check"
run "$OCTOPIPE" run "$top_srcdir/tests/data/deadlock-plan.json"
expect_rc 3 "a deadlocking plan is refused before it runs"
run "$OCTOPIPE" run "$top_srcdir/tests/data/oom-plan.json"
expect_rc 3 "a plan the simulator finds out of memory is refused (exit 3), as sim refuses it"
expect_match 'oom-plan.json: plan infeasible: device 1 needs 61.0 MB at its peak but has 50.0 MB usable \(--force runs it anyway\)$' \
    "$ERR" "naming the device and the way out"
run "$OCTOPIPE" run --force --json "$top_srcdir/tests/data/oom-plan.json"
expect_rc 0 "--force runs it anyway"
for bad in nan NaN -1 0 inf; do
    run "$OCTOPIPE" run --timeout "$bad" "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
    expect_rc 2 "--timeout $bad is refused (exit 2)"
done
expect_match "^octopipe run: --timeout: 'inf' is not a number in \(0, 86400\]" "$ERR" "in one line"
# the cuda backend's kernel plan, without a GPU: one row per stage and op kind, each
# kernel's FLOPs 2mnk x reps, covering the op's predicted time at the stated throughput
for f in gpt-13b-4xH200-1f1b nemotron-nano-v2-9b-8xH200-zb-h1; do
    run "$OCTOPIPE" run --backend cuda --dry-run --json "$top_srcdir/plans/$f.json"
    if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
plan = json.load(open(sys.argv[1]))
split = plan.get("split_backward", True)
assert r["kernels"] == "fitted" and r["backend"] == "cuda", r
assert len(r["ops"]) == len(plan["stages"]) * (3 if split else 2), len(r["ops"])
for o in r["ops"]:
    assert o["count"] == plan["microbatches"] and o["op"] in ("FIW" if split else "FB"), o
    for k in o["kernels"]:
        m, n, kk, reps = k["m"], k["n"], k["k"], k["groups"]
        assert k["flops"] == 2 * m * n * kk * reps, k
        assert k["bytes"] == 2 * (m * kk + kk * n + m * n) * reps, k
        want = o["predicted_ms"] * 1e-3 * o["sized_for_tflops"] * 1e12
        assert want <= k["flops"] * (1 + 1e-9) and k["flops"] <= want + 2 * m * kk * 8 * reps + 1, (o, want)
' "$top_srcdir/plans/$f.json"; then ok "--dry-run --json lists $f's kernels, FLOPs covering each op's prediction"
    else not_ok "the dry run of $f" "exit $RC" "$OUT" "$ERR"; fi
done
run "$OCTOPIPE" run --backend cuda --dry-run "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_rc 0 "--dry-run needs no GPU"
expect_match '^ +3 +3 +B +8 +117\.380 ' "$OUT" "a row per stage and op kind (stage 3's B, 8 times, 117.38 ms)"
# which kernels the cuda backend runs, decided without a GPU: a model made by octopipe
# cost runs its layers' architecture kernels (no fitting); --fit asks for fitted proxies;
# a profile-only model falls back to them and says why
"$OCTOPIPE" cost "$top_srcdir/samples/architectures/gemma3-12b.json" --cluster 4xH200 --json >"$T/cost.json" 2>/dev/null
"$OCTOPIPE" plan --model gemma3-12b --cluster 4xH200 --schedule zb-h1 --microbatches 4 -o "$T/arch.json" >/dev/null 2>&1
run "$OCTOPIPE" run --backend cuda --dry-run --json "$T/arch.json"
if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
cost = json.load(open(sys.argv[1]))
assert r["kernels"] == "architecture" and "kernels_note" not in r, r.get("kernels")
f = sum(k["flops"] for o in r["ops"] if o["op"] == "F" for k in o["kernels"])
tok = cost["seq_len"] * cost["micro_batch_size"]
assert abs(f / tok - cost["fwd_flops_per_token"]) <= 1e-6 * cost["fwd_flops_per_token"], (f / tok, cost["fwd_flops_per_token"])
names = {k["name"] for o in r["ops"] for k in o["kernels"]}
assert {"qkv", "attn_core", "mlp.up", "lm_head", "loss", "embedding"} <= names, names
cores = [k for o in r["ops"] for k in o["kernels"] if k["name"] == "attn_core"]
assert cores and all(k["heads"] == 16 and k["d_qk"] == 256 and k["query_blocks"] >= 16 for k in cores), cores[:1]
assert {k["window"] for k in cores} == {0, 1024}, {k["window"] for k in cores}
# a window has query blocks of a quarter of it (rounded up to 64 queries), so the keys of a block
# (window + block) make its GEMMs at most about a quarter more than the work of the window
assert all(k["flops"] <= k["block_gemm_flops"] <= 1.26 * k["flops"] for k in cores), cores[:1]
' "$T/cost.json"; then ok "a model made by octopipe cost: the dry run lists architecture kernels whose forward FLOPs are the cost model's per token, attention cores as query blocks of batched GEMMs (causal and windowed)"
else not_ok "the dry run of a model with an architecture" "exit $RC" "$OUT" "$ERR"; fi
# under tensor parallelism each GEMM is split as Megatron splits it: column-parallel ones
# (qkv, mlp.up, in_proj, lm_head) by their output features, row-parallel ones (o_proj,
# mlp.down, experts.down, out_proj) by their reduction features, and the router, the
# shared-expert gate and MLA's down-projections are whole on every rank: every shape is
# whole numbers, and a GEMM's FLOPs are 2 m n k groups
for m in qwen3-next-80b-a3b llama2-7b deepseek-v2-lite; do
    "$OCTOPIPE" cost "$top_srcdir/samples/architectures/$m.json" --cluster 8xH200 --tp 2 -o "$T/$m-tp2.json" >/dev/null 2>&1
    "$OCTOPIPE" plan --model "$T/$m-tp2.json" --cluster 8xH200 --schedule 1f1b --microbatches 8 -o "$T/$m-tp2-plan.json" >/dev/null 2>&1
    run "$OCTOPIPE" run --backend cuda --dry-run --json "$T/$m-tp2-plan.json"
    if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin); arch = json.load(open(sys.argv[1]))
h = arch["hidden_size"]
ks = [k for o in r["ops"] if o["op"] == "F" for k in o["kernels"] if k["class"] in ("gemm", "grouped_gemm")]
for k in ks:
    assert all(float(k[x]).is_integer() and k[x] >= 1 for x in ("m", "n", "k")), k
    assert abs(k["flops"] - 2 * k["m"] * k["n"] * k["k"] * k["groups"]) <= 1e-6 * k["flops"], k
by = {k["name"]: k for k in ks}
for row in ("o_proj", "mlp.down", "out_proj", "experts.down"):
    if row in by:
        assert by[row]["n"] == h, by[row]
if "router" in by:
    assert by["router"]["n"] == arch.get("num_experts", arch.get("n_routed_experts")), by["router"]
if "shared_gate" in by:
    assert by["shared_gate"]["n"] == 1, by["shared_gate"]
if "kv_a" in by:
    assert by["kv_a"]["n"] == arch["kv_lora_rank"] + arch["qk_rope_head_dim"], by["kv_a"]
' "$top_srcdir/samples/architectures/$m.json"; then ok "$m at --tp 2: every GEMM of the dry run has whole shapes, split as Megatron splits it"
    else not_ok "$m at --tp 2: the dry run's GEMM shapes" "exit $RC" "$(printf '%s\n' "$OUT" | head -c 300)" "$ERR"; fi
done
run "$OCTOPIPE" run --backend cuda --dry-run "$T/arch.json"
expect_match '^kernels: architecture ' "$OUT" "and says so in its table"
run "$OCTOPIPE" run --backend cuda --dry-run --fit --json "$T/arch.json"
if [ "$(json_field kernels)" = fitted ] && [ -z "$(json_field kernels_note)" ]; then ok "--fit: fitted proxies, as asked"
else not_ok "--dry-run --fit says fitted" "$OUT" "$ERR"; fi
run "$OCTOPIPE" run --backend cuda --dry-run --gemm-tflops 500 --json "$T/arch.json"
if [ "$(json_field kernels)" = fitted ]; then ok "--gemm-tflops sizes proxies: fitted"
else not_ok "--gemm-tflops implies fitted proxies" "$OUT" "$ERR"; fi
run "$OCTOPIPE" run --backend cuda --dry-run --json "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_match '"kernels_note": "the model is a profile-only layer table, with no architecture"' "$OUT" \
    "a profile-only model falls back to fitted proxies and says why"
run "$OCTOPIPE" run --backend cuda --dry-run "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_match '^kernels: fitted \(the model is a profile-only layer table, with no architecture' "$OUT" "in the table too"
run "$OCTOPIPE" run --fit "$T/arch.json"
expect_rc 2 "--fit on the emulator is a usage error"
expect_match 'fit is for the cuda backend' "$ERR" "and says why"
run "$OCTOPIPE" run --events-out - "$T/arch.json"
expect_match '^\{"ev":"start",.*"kernels":"emulated"' "$OUT" "the start event names the kernels (emulated on emu)"
run "$OCTOPIPE" run "$T/arch.json"
expect_match '^kernels: emulated ' "$OUT" "and so does the text summary"
run "$OCTOPIPE" run --dry-run "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_rc 2 "--dry-run is for the cuda backend"
run "$OCTOPIPE" run --backend cuda --dry-run "$top_srcdir/tests/data/bad/01-empty.json"
expect_rc 2 "a bad plan in a dry run: exit 2"
run "$OCTOPIPE" run --backend warp "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_rc 2 "an unknown backend is a usage error"
run "$OCTOPIPE" run --timeline-out "$T/m.json" "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
run "$OCTOPIPE" check "$T/m.json"
expect_match 'timeline \(emu\): 4 devices, 64 ops, 48 transfers' "$OUT" "the measured timeline is a valid timeline"
# the timeline is written after the run: an unwritable one is refused before it starts
run "$OCTOPIPE" run --iters 50 --timeline-out "$T/no/such/dir/m.json" "$top_srcdir/plans/gpt-13b-4xH200-1f1b.json"
expect_rc 1 "run --timeline-out into a missing directory"
expect_match "^octopipe run: $T/no/such/dir/m.json: cannot create a temporary file" "$ERR" "says why before running"
if [ -z "$OUT" ]; then ok "nothing ran (no summary)"; else not_ok "run ran before refusing its timeline" "$OUT"; fi
# architecture kernels at tp > 1: one GPU runs each rank's 1/tp share, without the TP
# all-reduces the layer costs include. The dry run's per-op prediction (what a run is
# compared with) is the plan priced without them; the plan's own stays beside it, equal to
# the simulated op; the difference is the all-reduces' ring formula (parallel.c): over T = 2
# GPUs of the intra-node link, 2 (T-1)/T x tokens x h x 2 bytes / bandwidth + 2 (T-1)
# latencies each, two per decoder layer, one for the embedding, none for the head.
"$OCTOPIPE" plan --model llama2-7b --cluster 8xH200 --schedule 1f1b --microbatches 4 --tp 2 -o "$T/tp2.json" >/dev/null 2>&1
run "$OCTOPIPE" run --backend cuda --dry-run "$T/tp2.json"
expect_match '^not run: the tensor-parallel all-reduces of each layer are priced in the plan but not run' "$OUT" \
    "the dry run of a tp 2 plan says what its kernels leave out"
expect_match '^STAGE DEVICE OP  COUNT PREDICTED ms     \+COLL ms  KERNEL' "$OUT" "and shows what they add per op"
# (a tp 2 layout of a tp 1 table; a table made at tp 2, planned without a layout)
"$OCTOPIPE" cost "$top_srcdir/samples/architectures/llama2-7b.json" --cluster 8xH200 --runtime hf-eager --tp 2 -o "$T/made2.model.json" \
    >/dev/null 2>&1
"$OCTOPIPE" plan --model "$T/made2.model.json" --cluster 8xH200 --schedule 1f1b --microbatches 4 --partition uniform \
    -o "$T/made2.json" >/dev/null 2>&1
for pl in tp2 made2; do
"$OCTOPIPE" run --backend cuda --dry-run --json "$T/$pl.json" >"$T/$pl.dry.json" 2>&1
"$OCTOPIPE" sim --timeline-out "$T/$pl.tl.json" "$T/$pl.json" >/dev/null 2>&1
if python3 - "$T/$pl.dry.json" "$T/$pl.tl.json" "$T/$pl.json" "$top_srcdir/samples/models/llama2-7b.json" \
    "$top_srcdir/samples/clusters/8xH200.json" "$top_srcdir/samples/architectures/llama2-7b.json" <<'PY'
import json, sys
dry, tl, plan, model, cluster, arch = (json.load(open(f)) for f in sys.argv[1:7])
assert dry["not_run"].startswith("the tensor-parallel all-reduces"), dry
sim = {}
for d in tl["devices"]:
    for o in d["ops"]:
        sim[(o["stage"], o["op"])] = o["end_ms"] - o["start_ms"]
lk = cluster["intra_node"]
T, h, tok = 2, arch["hidden_size"], model["seq_len"] * model.get("micro_batch_size", 1)
ring = 1e3 * 2 * (T - 1) / T * tok * h * 2 / (lk["gbytes_per_s"] * 1e9) + 2 * (T - 1) * lk["latency_us"] * 1e-3
n = len(model["layers"])
for o in dry["ops"]:
    a, b = plan["stages"][o["stage"]]["layers"]
    syncs = sum(1 if l == 0 else 0 if l == n - 1 else 2 for l in range(a, b + 1))
    full, run = o["predicted_with_collectives_ms"], o["predicted_ms"]
    assert abs(full - sim[(o["stage"], o["op"])]) < 1e-5, (o["stage"], o["op"], full, sim[(o["stage"], o["op"])])
    want = syncs * ring if o["op"] in ("F", "B", "I") else 0
    assert abs(full - run - want) < 1e-5, (o["stage"], o["op"], full - run, want)
PY
then ok "$pl: per op, predicted_ms is the op without its all-reduces, the ring formula's less than the plan's (= sim's)"
else not_ok "$pl: the dry run's predictions without and with the collectives" "$(head -c 300 "$T/$pl.dry.json")"; fi
done
"$OCTOPIPE" plan --model llama2-7b --cluster 8xH200 --schedule 1f1b --microbatches 4 -o "$T/tp1.json" >/dev/null 2>&1
run "$OCTOPIPE" run --backend cuda --dry-run --json "$T/tp1.json"
if [ "$RC" = 0 ] && ! printf '%s' "$OUT" | grep -q 'not_run\|with_collectives'; then ok "a tp 1 plan has nothing left out"
else not_ok "a tp 1 plan's dry run" "exit $RC" "$OUT"; fi
# a MoE model at ep 2 (tp 1): the experts' all-to-all is what the kernels leave out
"$OCTOPIPE" plan --model deepseek-v2-lite --cluster 8xH200 --schedule 1f1b --microbatches 4 --dp 2 --ep 2 \
    -o "$T/ep2.json" >/dev/null 2>&1
run "$OCTOPIPE" run --backend cuda --dry-run --json "$T/ep2.json"
if printf '%s' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["not_run"].startswith("the experts\x27 expert-parallel all-to-all"), r.get("not_run")
d = [o["predicted_with_collectives_ms"] - o["predicted_ms"] for o in r["ops"]]
assert all(x >= -1e-9 for x in d) and max(d) > 0, d
assert all(abs(x) < 1e-9 for o, x in zip(r["ops"], d) if o["op"] == "W"), d
'; then ok "ep 2: the experts' all-to-all is left out of F and B, never of W"
else not_ok "the dry run of an ep 2 plan" "exit $RC" "$(printf '%s' "$OUT" | head -c 300)" "$ERR"; fi
# ZeRO 3: an op waits for its stage's weights, all-gathered over the data-parallel ranks
# (it takes max(compute, gather), plan.c), which one replica does not run either: with a
# slow link (5 GB/s) the gathers exceed the compute, and each F and B is predicted at its
# compute alone, its plan's time being the ring formula's gather (parallel.c)
python3 - "$top_srcdir/samples/clusters/8xH200.json" "$T/slow.cluster.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["intra_node"] = {"gbytes_per_s": 5, "latency_us": 5}
json.dump(c, open(sys.argv[2], "w"))
PY
"$OCTOPIPE" plan --model llama2-7b --cluster "$T/slow.cluster.json" --schedule zb-h1 --microbatches 4 --dp 2 --zero 3 \
    -o "$T/z3.json" >/dev/null 2>&1
run "$OCTOPIPE" run --backend cuda --dry-run --json "$T/z3.json"
if printf '%s' "$OUT" | python3 -c '
import json, sys
r, plan, model = json.load(sys.stdin), json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert "ZeRO 3" in r["not_run"], r.get("not_run")
lk, n = {"gbytes_per_s": 5, "latency_us": 5}, 2
for o in r["ops"]:
    a, b = plan["stages"][o["stage"]]["layers"]
    params = sum(model["layers"][l]["param_bytes"] for l in range(a, b + 1))
    g = 1e3 * (n - 1) / n * params / (lk["gbytes_per_s"] * 1e9) + (n - 1) * lk["latency_us"] * 1e-3
    want = max(o["predicted_ms"], g) if o["op"] != "W" else o["predicted_ms"]
    assert abs(o["predicted_with_collectives_ms"] - want) < 1e-5, (o["stage"], o["op"], o, g)
    assert o["op"] == "W" or g > o["predicted_ms"], (o["stage"], o["op"], g)
' "$T/z3.json" "$top_srcdir/samples/models/llama2-7b.json"; then
    ok "ZeRO 3: each F and I is predicted without the weight gather it waits for in the plan (the ring formula)"
else not_ok "the dry run of a ZeRO 3 plan" "exit $RC" "$(printf '%s' "$OUT" | head -c 300)" "$ERR"; fi
# the emulator runs the table's times, collectives and all: its prediction is the plan's
run "$OCTOPIPE" run --json "$T/tp2.json"
if [ "$RC" = 0 ] && ! printf '%s' "$OUT" | grep -q 'with_collectives\|not_run'; then
    ok "the emulator at tp 2 compares with the plan's own prediction"
else not_ok "run --json on emu at tp 2" "exit $RC" "$OUT" "$ERR"; fi
# launches: the cuda backend issues what the prediction charges (kplan.h). Priced with
# the launch overhead 1 us higher, every op's predicted time grows by its charged launches
# x 1 us: the dry run's "charged_launches" is what the prediction charges. The backend
# issues exactly those — each routed expert's GEMM its own launch, as priced — but for a
# fused attention core, which it runs as its query blocks' GEMMs and softmax.
python3 - "$top_srcdir/samples/clusters/8xH200.json" "$top_srcdir/samples/models/deepseek-v2-lite.json" "$T" <<'PY'
import json, sys
c, m, t = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
for i, bump in enumerate((0, 1)):
    hw = json.loads(json.dumps(m["source"]["hardware"]))
    hw["launch_us"] = {"f": hw["launch_us"]["f"] + bump, "b": hw["launch_us"]["b"] + bump}
    c["hardware"] = hw
    json.dump(c, open("%s/launch%d.cluster.json" % (t, i), "w"))
PY
for i in 0 1; do
    "$OCTOPIPE" cost "$top_srcdir/samples/architectures/deepseek-v2-lite.json" --runtime hf-eager --cluster "$T/launch$i.cluster.json" \
        -o "$T/launch$i.model.json" >/dev/null 2>&1
    "$OCTOPIPE" plan --model "$T/launch$i.model.json" --cluster "$T/launch$i.cluster.json" --schedule zb-h1 \
        --microbatches 4 --partition uniform -o "$T/launch$i.plan.json" >/dev/null 2>&1
    "$OCTOPIPE" run --backend cuda --dry-run --json "$T/launch$i.plan.json" >"$T/launch$i.dry.json" 2>&1
done
if python3 - "$T/launch0.dry.json" "$T/launch1.dry.json" "$top_srcdir/samples/architectures/deepseek-v2-lite.json" <<'PY'
import json, sys
a, b, arch = (json.load(open(f)) for f in sys.argv[1:4])
assert a["kernels"] == "architecture", a["kernels"]
experts = 0
for x, y in zip(a["ops"], b["ops"]):
    assert (x["stage"], x["op"]) == (y["stage"], y["op"])
    charged = (y["predicted_ms"] - x["predicted_ms"]) * 1000
    assert abs(charged - x["charged_launches"]) < 0.01, (x["stage"], x["op"], charged, x["charged_launches"])
    assert x["charged_launches"] == sum(k["charged_launches"] for k in x["kernels"]), x["op"]
    assert x["launches"] == sum(k["launches"] for k in x["kernels"]), x["op"]
    for k in x["kernels"]:
        if k.get("query_blocks"):   # a fused core: its blocks' GEMMs (2, backward 4) and softmax
            per = (2 if x["op"] == "F" else 4) + (k["class"] != "gemm")
            assert k["launches"] == k["query_blocks"] * per, k
            continue
        assert k["launches"] == k["charged_launches"], (x["op"], k)
        if k["class"] == "grouped_gemm":
            assert k["launches"] == k["groups"] == arch["n_routed_experts"], k
            experts += 1
assert experts > 0
PY
then ok "each op's charged launches are what its prediction charges; the backend issues them, an expert GEMM per expert"
else not_ok "the dry run's launches against the prediction's" "$(head -c 300 "$T/launch0.dry.json")"; fi
# a wait longer than --timeout while the other devices make progress is no hang: a plan of
# many devices on few cores (512 stages on 2 cores took 11 s for device 0's first B) failed
# as if a send never came ("no matching send arrived"); only a run where nothing arrives
# anywhere for --timeout fails
python3 - "$T/wide" <<'PY'
import json, sys
n = 384
layer = {"kind": "attn", "f_ms": 1, "b_ms": 1, "w_ms": 1, "param_bytes": 1000, "act_bytes": 1000,
         "act_w_bytes": 0, "out_bytes": 1000}
json.dump({"format": "octopipe.model/1", "name": "wide", "seq_len": 1024, "micro_batch_size": 1,
           "layers": [dict(layer) for _ in range(n)]}, open(sys.argv[1] + "-model.json", "w"))
json.dump({"format": "octopipe.cluster/1", "name": "wide", "gpu": "H200", "devices": n, "gpus_per_node": 8,
           "mem_bytes": 141000000000, "speed": 1.0, "intra_node": {"gbytes_per_s": 450, "latency_us": 5},
           "inter_node": {"gbytes_per_s": 50, "latency_us": 10}}, open(sys.argv[1] + "-cluster.json", "w"))
PY
"$OCTOPIPE" plan --model "$T/wide-model.json" --cluster "$T/wide-cluster.json" --schedule 1f1b --microbatches 8 \
    -o "$T/wide.json" >/dev/null 2>&1
run "$OCTOPIPE" run --timeout 0.05 "$T/wide.json"
if [ "$RC" = 0 ]; then ok "a run of 384 devices whose waits outlast --timeout while others progress completes"
else not_ok "a run of 384 devices whose waits outlast --timeout while others progress completes" "exit $RC" "$ERR"; fi
# a login node that caps address space (ulimit -v) runs wide plans too: each worker had
# the default 8 MiB stack, and at 2 GiB the 121st failed to start ("cannot start worker
# 121", no reason given)
if ! sh -c 'ulimit -v 2000000 && exec "$@"' sh "$OCTOPIPE" sim "$T/wide.json" >/dev/null 2>&1; then
    skip "384 emulated devices run in 2 GiB of address space" "this build does not start in 2 GiB (sanitizers?)"
else
    run sh -c 'ulimit -v 2000000 && exec "$@"' sh "$OCTOPIPE" run "$T/wide.json"
    if [ "$RC" = 0 ]; then ok "384 emulated devices run in 2 GiB of address space"
    else not_ok "384 emulated devices run in 2 GiB of address space" "exit $RC" "$ERR"; fi
fi
done_testing
