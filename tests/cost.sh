#!/bin/sh
# octopipe cost (configs and architectures to layer tables, golden samples, calibration)
# and octopipe import profile (PCRE2 rules), from the command line.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
cd "$top_srcdir" || exit 1
T=$TMPDIR_TEST
data=tests/data
json_ok() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }

# malformed configs: one line naming file, JSON path and problem; exit 2; nothing on stdout
for f in $data/badcfg/*.json; do
    want=$(cat "${f%.json}.expected")
    run sh -c "cd $data/badcfg && exec \"$OCTOPIPE\" cost $(basename "$f") --cluster 8xH200"
    lines=$(printf '%s\n' "$ERR" | wc -l)
    if [ "$RC" = 2 ] && [ "$ERR" = "$want" ] && [ "$lines" = 1 ] && [ -z "$OUT" ]; then ok "$(basename "$f"): $want"
    else not_ok "$(basename "$f")" "exit $RC, $lines lines" "got:  $ERR" "want: $want"; fi
done

run "$OCTOPIPE" cost nemotronh-8b --cluster 8xH200 -o "$T/n.json"
expect_rc 0 "cost writes a layer table"
expect_match '^parameters: 8\.101 B total, 8\.101 B active' "$OUT" "cost prints total and active parameters"
expect_match '^forward: 15\.42 GFLOP per token' "$OUT" "cost prints FLOPs per token"
expect_match '^ +53  head ' "$OUT" "the head is the heaviest layer"
run "$OCTOPIPE" check "$T/n.json"
expect_rc 0 "the written layer table is valid"
expect_match "54 layers" "$OUT" "embedding + 52 layers + head"
run "$OCTOPIPE" cost deepseek-v3 --cluster 8xH200 --json
expect_rc 0 "cost --json"
printf '%s' "$OUT" >"$T/s.json"
if json_ok "$T/s.json"; then ok "cost --json is JSON"; else not_ok "cost --json is JSON" "$OUT"; fi
expect_match '"mtp_params": 1161' "$OUT" "deepseek-v3 reports its MTP module"

# golden layer tables: the committed samples are exactly what the command writes
for a in gemma3-12b gemma3-27b gemma2-27b deepseek-v2-lite deepseek-v3 nemotronh-8b nemotronh-56b \
         jamba-v0.1 qwen3-next-80b-a3b llama2-7b llama2-70b; do
    "$OCTOPIPE" cost samples/architectures/$a.json --cluster samples/clusters/8xH200.json --runtime hf-eager --seq 4096 -o "$T/$a.json" >/dev/null 2>&1
    if cmp -s "$T/$a.json" samples/models/$a.json; then ok "samples/models/$a.json matches octopipe cost"
    else not_ok "samples/models/$a.json matches octopipe cost" "$(diff "$T/$a.json" samples/models/$a.json | head -5)"; fi
done
for s in 8 32; do
    "$OCTOPIPE" cost nemotronh-8b --cluster 8xH200 --runtime hf-eager --seq $((s * 1024)) -o "$T/nemotronh-8b-seq${s}k.json" >/dev/null 2>&1
    if cmp -s "$T/nemotronh-8b-seq${s}k.json" samples/models/nemotronh-8b-seq${s}k.json; then ok "nemotronh-8b-seq${s}k matches"
    else not_ok "nemotronh-8b-seq${s}k matches"; fi
done
share() { "$OCTOPIPE" show --json "$1" | python3 -c 'import json,sys
d=json.load(sys.stdin); k={x["kind"]:x for x in d["kinds"]}; t=d["total"]
print(round(100*(k["attn"]["f_ms"]+k["attn"]["b_ms"]+k["attn"]["w_ms"])/(t["f_ms"]+t["b_ms"]+t["w_ms"]),1))'; }
s4=$(share nemotronh-8b); s32=$(share nemotronh-8b-seq32k)
if python3 -c "import sys; sys.exit(0 if $s32 > 3 * $s4 else 1)"; then ok "attention's share of nemotronh-8b grows with the sequence ($s4% at 4K, $s32% at 32K)"
else not_ok "attention's share grows with the sequence" "$s4 vs $s32"; fi

# tensor parallelism and recompute (W's work halves, its bytes not quite: a rank reads the
# whole input of a column-parallel GEMM and writes the whole output of a row-parallel one)
"$OCTOPIPE" cost llama2-7b --cluster 8xH200 -o "$T/tp1.json" >/dev/null
"$OCTOPIPE" cost llama2-7b --cluster 8xH200 --tp 2 -o "$T/tp2.json" >/dev/null
"$OCTOPIPE" cost llama2-7b --cluster 8xH200 --recompute -o "$T/rc.json" >/dev/null
r=$(python3 -c 'import json,sys
a,b,c=[json.load(open(f))["layers"][1] for f in sys.argv[1:]]
print(b["param_bytes"]*2-a["param_bytes"]==4*4096, a["f_ms"]/2 < b["f_ms"] < a["f_ms"], a["w_ms"]/2 < b["w_ms"] < a["w_ms"] * 0.53,
      c["act_bytes"] < a["act_bytes"]/10, c["b_ms"] > a["b_ms"])' "$T/tp1.json" "$T/tp2.json" "$T/rc.json")
if [ "$r" = "True True True True True" ]; then ok "tp 2 halves weights but the two norms (held whole) and W's work (its launches stay), F more than half (all-reduce); recompute trades memory for B"
else not_ok "tp and recompute" "$r"; fi

# DeepSeek-V2/V3 configs without the MLA ranks get the configuration class's defaults
# (kv_lora_rank 512, q_lora_rank 1536); null means none (V2-Lite's q_lora_rank)
python3 - "$top_srcdir/samples/architectures/deepseek-v2-lite.json" "$T/dsv2-norank.json" "$T/dsv2-noq.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a = dict(d); del a["kv_lora_rank"]; del a["q_lora_rank"]
json.dump(a, open(sys.argv[2], "w"))
b = dict(d); del b["q_lora_rank"]
json.dump(b, open(sys.argv[3], "w"))
PY
"$OCTOPIPE" cost deepseek-v2-lite --cluster 8xH200 -o "$T/dsv2-lite.json" >/dev/null
"$OCTOPIPE" cost "$T/dsv2-norank.json" --cluster 8xH200 -o "$T/dsv2-norank.m.json" >/dev/null
"$OCTOPIPE" cost "$T/dsv2-noq.json" --cluster 8xH200 -o "$T/dsv2-noq.m.json" >/dev/null
r=$(python3 -c 'import json,sys
a,b,c=[json.load(open(f))["layers"][1]["param_bytes"] for f in sys.argv[1:]]
h,n,dqk=2048,16,192
# absent q_lora_rank: q_a (h x 1536) + its norm + q_b (1536 x n dqk) instead of q (h x n dqk)
print(b == c, c - a == 2 * (h * 1536 + 1536 + 1536 * n * dqk - h * n * dqk))' "$T/dsv2-lite.json" "$T/dsv2-norank.m.json" "$T/dsv2-noq.m.json")
if [ "$r" = "True True" ]; then ok "deepseek_v2 without MLA ranks takes the config class's defaults (512, 1536); null q_lora_rank is none"
else not_ok "deepseek_v2 MLA rank defaults" "$r"; fi

# Megatron-LM keeps some weights whole on every tensor-parallel rank: MLA's down-projections
# (q_a: h x q_lora, kv_a: h x (kv_lora + rope)) with their norms, the pre-norms and the
# router. DeepSeek-V3 (h 7168, q_lora 1536, kv_lora 512, rope 64, 256 experts) at tp 8:
# 8 x (a rank's bytes) - (all bytes) = 7 x 2 x (whole parameters).
"$OCTOPIPE" cost deepseek-v3 --cluster 8xH200 -o "$T/dsv3-tp1.json" >/dev/null
"$OCTOPIPE" cost deepseek-v3 --cluster 8xH200 --tp 8 -o "$T/dsv3-tp8.json" >/dev/null
r=$(python3 -c 'import json,sys
a,b=[json.load(open(f))["layers"] for f in sys.argv[1:]]
h,rq,rkv,rope,E=7168,1536,512,64,256
whole=2*h+h*rq+rq+h*(rkv+rope)+rkv
print(8*b[1]["param_bytes"]-a[1]["param_bytes"]==14*whole, 8*b[5]["param_bytes"]-a[5]["param_bytes"]==14*(whole+h*E),
      8*b[0]["param_bytes"]==a[0]["param_bytes"])' "$T/dsv3-tp1.json" "$T/dsv3-tp8.json")
if [ "$r" = "True True True" ]; then ok "tp 8 keeps MLA down-projections, norms and the router whole on every rank; the embedding splits"
else not_ok "tp keeps replicated weights whole" "$r"; fi
run "$OCTOPIPE" cost llama2-7b
expect_rc 2 "cost needs --cluster"

# calibration: fit to a measured profile, stored in the cluster's hardware section
cp samples/clusters/8xH200.json "$T/c.json"
run "$OCTOPIPE" cost samples/profiles/configs/gpt-oss-20b.json --cluster "$T/c.json" --calibrate samples/profiles/gpt-oss-20b.json
expect_rc 0 "cost --calibrate"
expect_match 'gpt-oss-20b.json +[0-9.]+% +[0-9.]+% +[0-4]\.[0-9]% +[0-4]\.[0-9]%' "$OUT" "the fit brings gpt-oss-20b under 5% error"
run "$OCTOPIPE" check "$T/c.json"
expect_rc 0 "the calibrated cluster is valid"
expect_match '"eager_attn"' "$(cat "$T/c.json")" "and holds the efficiencies"
run "$OCTOPIPE" cost samples/profiles/configs/gpt-oss-20b.json --cluster "$T/c.json"
expect_match 'calibrated efficiencies' "$OUT" "cost uses a cluster's hardware section"
P=samples/profiles; C=$P/configs
# (the launch overhead held: deepseek-16b's expert loops set it, see src/hardware.c)
run "$OCTOPIPE" cost $C/nemotron-nano-v2-9b.json $C/deepseek-16b.json $C/gpt-oss-20b.json $C/gpt-13b.json \
    --cluster 8xH200 --cluster-out "$T/joint.json" --fix launch --calibrate $P/nemotron-nano-v2-9b.json \
    --calibrate $P/deepseek-16b.json --calibrate $P/gpt-oss-20b.json --calibrate $P/gpt-13b.json
expect_rc 0 "joint calibration over the four profiles"
all=$(printf '%s\n' "$OUT" | sed -n 's/^all  *//p')
set -- $all
if [ "$#" = 4 ] && [ "$1" = "$3" ] && [ "$2" = "$4" ]; then ok "the built-in defaults are the joint fit ($all)"
else not_ok "the built-in defaults are the joint fit" "$all"; fi
# the built-in defaults (the joint fit) per profile and layer kind, F and full backward
# (issue 13): every kind is pinned at its error when the defaults were fitted, so a change
# of the model that makes any kind worse fails; the kinds that meet the 15% aim must keep it
run "$OCTOPIPE" cost $C/nemotron-nano-v2-9b.json $C/deepseek-16b.json $C/gpt-oss-20b.json $C/gpt-13b.json \
    --cluster 8xH200 --predict $P/nemotron-nano-v2-9b.json --predict $P/deepseek-16b.json \
    --predict $P/gpt-oss-20b.json --predict $P/gpt-13b.json --json
expect_rc 0 "cost --predict over the four profiles"
r=$(printf '%s' "$OUT" | python3 -c 'import json, sys
pinned = {
    ("nemotron-nano-v2-9b", "embedding+mamba2"): (12.4, 9.9), ("nemotron-nano-v2-9b", "mlp"): (6.6, 1.6),
    ("nemotron-nano-v2-9b", "mamba2"): (9.6, 6.5), ("nemotron-nano-v2-9b", "attn"): (4.7, 10.3),
    ("nemotron-nano-v2-9b", "mlp+head"): (2.9, 8.2),
    ("deepseek-16b", "embedding+attn+dense"): (15.9, 9.7), ("deepseek-16b", "attn+dense"): (4.7, 3.5),
    ("deepseek-16b", "attn+moe"): (38.8, 34.7), ("deepseek-16b", "attn+moe+head"): (33.5, 45.1),
    ("gpt-oss-20b", "embedding+attn+moe"): (36.7, 47.4), ("gpt-oss-20b", "swa+moe"): (32.9, 45.9),
    ("gpt-oss-20b", "attn+moe"): (34.3, 44.0), ("gpt-oss-20b", "swa+moe+head"): (22.6, 27.5),
    ("gpt-13b", "embedding+attn+mlp"): (9.6, 18.4), ("gpt-13b", "attn+mlp"): (3.5, 7.1),
    ("gpt-13b", "attn+mlp+head"): (6.9, 2.1)}
seen, bad, good = set(), [], 0
for k in json.load(sys.stdin)["kinds"]:
    key = (k["profile"].split("/")[-1][:-5], k["kind"])
    seen.add(key)
    f, b = pinned.get(key, (-1, -1))
    if k["f_err_pct"] > f + 0.5 or k["bw_err_pct"] > b + 0.5:
        bad.append("%s %s: F %.1f%% BW %.1f%% (pinned %.1f%% %.1f%%)" % (key + (k["f_err_pct"], k["bw_err_pct"], f, b)))
    if f <= 15 and b <= 15:
        good += k["f_err_pct"] <= 15 and k["bw_err_pct"] <= 15
if seen != set(pinned):
    bad.append("kinds %s" % sorted(seen ^ set(pinned)))
print("; ".join(bad) if bad else "ok %d" % good)')
if [ "$r" = "ok 8" ]; then ok "per-kind errors of the defaults stay at their pins; the 8 kinds under 15% stay there"
else not_ok "per-kind errors of the defaults" "$r"; fi
# leave-one-model-out (tests/loo.py) runs the fits end to end; its table is in samples/README.md
run python3 tests/loo.py "$OCTOPIPE" .
expect_rc 0 "leave-one-model-out runs"
expect_match '^\| gpt-13b \| attn\+mlp \| 38 \| [0-9.]+% \| [0-9.]+% \| 3\.5% \| 7\.1% \|$' "$OUT" "and reports held-out and joint errors per kind"
# the held-out errors are pinned too (no kind may get worse by more than 0.5 points), and
# the 6 kinds within the 25% aim held out (F and BW) must stay there
r=$(printf '%s\n' "$OUT" | python3 -c 'import sys
pinned = {
    ("nemotron-nano-v2-9b", "embedding+mamba2"): (22.6, 34.9), ("nemotron-nano-v2-9b", "mlp"): (3.5, 11.6),
    ("nemotron-nano-v2-9b", "mamba2"): (3.5, 33.0), ("nemotron-nano-v2-9b", "attn"): (21.4, 70.6),
    ("nemotron-nano-v2-9b", "mlp+head"): (2.3, 0.8),
    ("deepseek-16b", "embedding+attn+dense"): (8.7, 9.8), ("deepseek-16b", "attn+dense"): (13.8, 24.0),
    ("deepseek-16b", "attn+moe"): (103.9, 130.2), ("deepseek-16b", "attn+moe+head"): (78.5, 123.7),
    ("gpt-oss-20b", "embedding+attn+moe"): (54.9, 61.2), ("gpt-oss-20b", "swa+moe"): (59.0, 64.7),
    ("gpt-oss-20b", "attn+moe"): (53.2, 59.9), ("gpt-oss-20b", "swa+moe+head"): (39.3, 42.7),
    ("gpt-13b", "embedding+attn+mlp"): (14.9, 25.2), ("gpt-13b", "attn+mlp"): (2.7, 16.2),
    ("gpt-13b", "attn+mlp+head"): (11.1, 6.5)}
seen, bad, good = set(), [], 0
for line in sys.stdin:
    c = [x.strip() for x in line.strip().strip("|").split("|")]
    if len(c) != 7 or not c[3].endswith("%"):
        continue
    key, f, b = (c[0], c[1]), float(c[3][:-1]), float(c[4][:-1])
    seen.add(key)
    pf, pb = pinned.get(key, (-1, -1))
    if f > pf + 0.5 or b > pb + 0.5:
        bad.append("%s %s held out: F %.1f%% BW %.1f%% (pinned %.1f%% %.1f%%)" % (key + (f, b, pf, pb)))
    if pf <= 25 and pb <= 25:
        good += f <= 25 and b <= 25
if seen != set(pinned):
    bad.append("kinds %s" % sorted(seen ^ set(pinned)))
print("; ".join(bad) if bad else "ok %d" % good)')
if [ "$r" = "ok 6" ]; then ok "held-out errors stay at their pins; the 6 kinds within 25% held out stay there"
else not_ok "held-out errors per kind" "$r"; fi
# --fix holds named parameters of the fit at the cluster's values
cp samples/clusters/8xH200.json "$T/fix.json"
python3 - "$T/fix.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["hardware"] = {"efficiency": {"memory": {"f": 0.5, "b": 0.6}}, "launch_us": {"f": 7, "b": 9}}
json.dump(c, open(sys.argv[1], "w"))
PY
run "$OCTOPIPE" cost $C/gpt-13b.json --cluster "$T/fix.json" --calibrate $P/gpt-13b.json --fix launch,memory --json
r=$(printf '%s' "$OUT" | python3 -c 'import json, sys
d = json.load(sys.stdin); m = d["efficiency"]["memory"]; l = d["launch_us"]; g = d["efficiency"]["gemm"]
print(m["f"] == 0.5 and m["b"] == 0.6 and l["f"] == 7 and l["b"] == 9 and abs(g["f"] - 0.7943) > 1e-3)' 2>/dev/null)
if [ "$RC" = 0 ] && [ "$r" = True ]; then ok "--fix launch,memory holds them while the GEMM efficiency is fitted"
else not_ok "--fix holds parameters" "exit $RC" "$r" "$ERR"; fi
run "$OCTOPIPE" cost $C/gpt-13b.json --cluster 8xH200 --calibrate $P/gpt-13b.json --fix launch,tensor --cluster-out "$T/x.json"
expect_rc 2 "--fix with an unknown name is refused"
expect_match 'tensor: not a parameter \(launch, gemm, grouped_gemm' "$ERR" "and the names are listed"
run "$OCTOPIPE" cost $C/gpt-13b.json --cluster 8xH200 --calibrate $P/gpt-13b.json --fix , --cluster-out "$T/x.json"
expect_rc 2 "--fix naming nothing is refused"
run "$OCTOPIPE" cost $C/gpt-13b.json --cluster 8xH200 --predict $P/gpt-13b.json --fix launch
expect_rc 2 "--fix without --calibrate is refused"
# relative-costs.json: the full backward over the forward of every layer type is
# reproduced within 25% on average (the head and the B / W split are not: samples/README.md)
run python3 tests/relcosts.py "$OCTOPIPE" . samples/clusters/8xH200.json
expect_rc 0 "the relative-costs comparison runs"
r=$(printf '%s\n' "$OUT" | awk -F'|' '/\(B\+W\)\/F/ && $3 !~ /head/ { n++; sub(/%/, "", $7); if ($7 + 0 > 25) bad = bad $2 $3 " " $7 "%;" } END { print n, bad }')
if [ "$r" = "5 " ]; then ok "layer (B+W)/F of all five measured layer types within 25% of relative-costs.json"
else not_ok "layer (B+W)/F within 25%" "$r"; fi
# the forward ratios miss (another runtime: samples/README.md); their mean errors are pinned
# so that a change of the model that moves them further off fails
r=$(printf '%s\n' "$OUT" | awk -F'|' '
    BEGIN { pin["gemma head/layer F"] = 150; pin["deepseek head/layer F"] = 21; pin["deepseek MoE/dense F"] = 185
            pin["nemotronh head/Mamba F"] = 49; pin["nemotronh attention/Mamba F"] = 56 }
    { f = $2; k = $3; gsub(/^ +| +$/, "", f); gsub(/^ +| +$/, "", k); e = $7; sub(/%/, "", e)
      key = f " " k; if (key in pin) { n++; if (e + 0 > pin[key] + 1) bad = bad key " " e "% (pinned " pin[key] "%); " } }
    END { print n, bad }')
if [ "$r" = "5 " ]; then ok "the forward ratios of relative-costs.json stay at their pinned errors"
else not_ok "relative-costs forward ratios" "$r"; fi
# attn_implementation: "eager" materializes the scores, anything else is fused (as Hugging Face runs it)
sed 's/"eager"/"sdpa"/' $C/deepseek-16b.json >"$T/ds-sdpa.json"
e=$("$OCTOPIPE" cost $C/deepseek-16b.json --cluster 8xH200 --runtime hf-eager --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["f_ms"])')
f=$("$OCTOPIPE" cost "$T/ds-sdpa.json" --cluster 8xH200 --runtime hf-eager --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["f_ms"])')
if python3 -c "import sys; sys.exit(0 if $e > 1.1 * $f else 1)"; then ok "eager attention costs more than sdpa ($e vs $f ms)"
else not_ok "eager attention costs more" "$e vs $f"; fi
sed 's/"eager"/7/' $C/deepseek-16b.json >"$T/ds-bad.json"
run "$OCTOPIPE" cost "$T/ds-bad.json" --cluster 8xH200
expect_match 'ds-bad.json: attn_implementation: must be a string' "$ERR" "a non-string attn_implementation is refused"
run "$OCTOPIPE" cost $C/gpt-13b.json --cluster 8xH200 --predict $P/gpt-13b.json -o "$T/x.json"
expect_rc 2 "--predict writes nothing"
run "$OCTOPIPE" cost $C/gpt-13b.json --cluster 8xH200 --calibrate $P/deepseek-16b.json --cluster-out "$T/x.json"
expect_rc 2 "a profile of another model is refused"
expect_match 'layers: has 28 entries but the architecture has 42 layers' "$ERR" "and says why"
printf '{"format": "octopipe.cluster/1", "name": "x", "devices": 1, "gpus_per_node": 1, "mem_bytes": 1,
 "intra_node": {"gbytes_per_s": 1, "latency_us": 1}, "hardware": {"efficiency": {"gemm": {"f": 2, "b": 0.5}}}}\n' >"$T/bad1.json"
run "$OCTOPIPE" check "$T/bad1.json"
expect_rc 2 "an efficiency above 1 is refused"
expect_match 'bad1.json: hardware.efficiency.gemm.f: must be a number' "$ERR" "with its path"
sed 's/"gemm"/"tpu"/' "$T/bad1.json" >"$T/bad2.json"
run "$OCTOPIPE" check "$T/bad2.json"
expect_match 'hardware.efficiency.tpu: not a kernel class' "$ERR" "an unknown kernel class is refused"

# an architecture too large for a layer table is bad input, not a table that cannot load
# (found by fuzz_hfconfig: hidden_size 71683200 gave param_bytes above 2^53)
# (the fuzzer's config names no MLA ranks, which DeepSeek-V3 now defaults to MLA; null keeps
# the multi-head attention whose layer is too large)
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["kv_lora_rank"]=None; json.dump(d,open(sys.argv[2],"w"))' \
    "$top_srcdir/tests/fuzz/regress/hfconfig/deepseek-v3-hidden-71683200.json" "$T/huge-mha.json"
run "$OCTOPIPE" cost "$T/huge-mha.json" --name huge --cluster 8xH200 -o "$T/huge.json"
expect_rc 2 "a config whose layers exceed what a layer table holds exits 2"
expect_match "'huge': layer 1 \(attn\+dense\) would hold 4\.11e\+16 bytes, more than a layer table holds \(2\^53\): the architecture is too large$" "$ERR" "and names the layer"
if [ ! -e "$T/huge.json" ]; then ok "and writes nothing"; else not_ok "and writes nothing"; fi

# an architecture whose every layer rounds to 0 ms is refused before a table is written:
# the model reader refuses a table of no work (found by fuzz_arch: a kind of params 10; the
# fuzzer's input also had a misspelt "eff_cl`ss", now refused first: see corpus.sh)
run "$OCTOPIPE" cost "$top_srcdir/tests/fuzz/regress/arch/zero-cost-kind-spelt.json" --cluster 8xH200 -o "$T/zero.json"
expect_rc 2 "an architecture of no work exits 2"
expect_match "^architecture 'x': every layer costs 0 ms at sequence 4096 \(under a nanosecond rounded\): there is nothing to schedule$" "$ERR" "and says why: $ERR"
if [ ! -e "$T/zero.json" ]; then ok "and writes nothing"; else not_ok "and writes nothing"; fi
run "$OCTOPIPE" cost "$top_srcdir/tests/fuzz/regress/arch/zero-cost-kind.json" --cluster 8xH200 -o "$T/zero.json"
expect_rc 2 "an architecture with a misspelt field exits 2"
expect_match "zero-cost-kind\.json: kinds\.A\.eff_cl\`ss: unknown field \(did you mean 'eff_class'\?\)$" "$ERR" \
    "and names the field and the one meant: $ERR"

# a layer count past the limit is refused as it is read, before any layer is built (found by
# fuzz_arch: a GPT-2 config of 310283 layers built 100000 of them first, seconds under ASan)
run "$OCTOPIPE" cost "$top_srcdir/tests/fuzz/regress/arch/gpt2-310283-layers.json" --cluster 8xH200 -o "$T/big.json"
expect_rc 2 "310283 GPT-2 layers exit 2"
expect_match "gpt2-310283-layers.json: n_layer: more than 100000 layers$" "$ERR" "naming the key: $ERR"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["num_nextn_predict_layers"]=99999; json.dump(d,open(sys.argv[2],"w"))' \
    "$top_srcdir/samples/architectures/deepseek-v3.json" "$T/mtp.json"
run "$OCTOPIPE" cost "$T/mtp.json" --cluster 8xH200 -o "$T/mtp-model.json"
expect_rc 2 "99999 MTP modules exit 2"
expect_match "mtp.json: num_nextn_predict_layers: 99999 MTP modules and 61 layers pass the limit of 100000 layers$" "$ERR" "naming the key: $ERR"

# import profile
D=$data/profile
# a rule whose backtracking passes PCRE2's limit on a record is an error naming the rule and
# the record, not "unmatched" (the record's time was dropped, exit 0)
printf '%s\n' '{"format":"octopipe.rules/1","name":"t","seq_len":2048,"rules":[' \
    '{"pattern":"^(?:(a|aa)+$|a+b)","layer":0,"kind":"x"},{"pattern":"^L0$","layer":0,"kind":"x"}]}' >"$T/rl.json"
printf 'name,phase,ms\nL0,F,1.0\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab,F,5.0\n' >"$T/rl.csv"
run "$OCTOPIPE" import profile "$T/rl.csv" --rules "$T/rl.json" -o "$T/rl-out.json"
expect_rc 2 "a rule past the backtracking limit is an error"
expect_match "rl.csv: line 3: rules\[0\] cannot match 'a+b': match limit exceeded" "$ERR" "naming the rule and the record"
run "$OCTOPIPE" import profile $D/records.csv --rules $D/rules.json -o "$T/p.json"
expect_rc 0 "import profile from CSV"
expect_match '12 records, 10 matched, 2 unmatched; 4 layers \(--verbose' "$ERR" "unmatched records are counted"
r=$(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["layers"]; print([(x["kind"],x["f_ms"],x["b_ms"],x["w_ms"]) for x in l])' "$T/p.json")
want="[('embedding', 0.5, 0, 1.5), ('mixer+mlp', 3, 4, 1), ('mixer', 2.5, 2, 2), ('head', 3, 2, 2)]"
if [ "$r" = "$want" ]; then ok "records are summed per layer, kind and phase"; else not_ok "records summed per layer" "got  $r" "want $want"; fi
run "$OCTOPIPE" import profile $D/records.csv --rules $D/rules.json -o "$T/p.json" --verbose
expect_match 'optimizer\.step' "$ERR" "--verbose lists the unmatched records"
run "$OCTOPIPE" import profile $D/trace.json --rules $D/rules.json --iters 2 -o "$T/t.json"
expect_rc 0 "import profile from a Chrome trace"
expect_match '8 records, 7 matched, 1 unmatched' "$ERR" "trace events are records"
expect_match '"kind": "mixer", "f_ms": 1.25, "b_ms": 1.5, "w_ms": 1.5' "$(cat "$T/t.json")" "backward events and --iters"
# a trace nests: a submodule's event inside its module's, both matched by one rule, is
# counted once; the same names on another thread, or overlapping without being inside,
# are counted
cat >"$T/nested.json" <<'EOF2'
{"traceEvents": [
  {"ph": "X", "name": "embed_tokens", "ts": 0, "dur": 500, "pid": 1, "tid": 1},
  {"ph": "X", "name": "decoder.layers.1.mixer.in_proj", "ts": 600, "dur": 800, "pid": 1, "tid": 1},
  {"ph": "X", "name": "decoder.layers.1.mixer", "ts": 500, "dur": 2000, "pid": 1, "tid": 1},
  {"ph": "X", "name": "decoder.layers.1.mixer.out_proj", "ts": 1500, "dur": 1000, "pid": 1, "tid": 1},
  {"ph": "X", "name": "decoder.layers.1.mixer.in_proj", "ts": 600, "dur": 300, "pid": 1, "tid": 2},
  {"ph": "X", "name": "decoder.layers.2.mixer", "ts": 2500, "dur": 1000, "pid": 1, "tid": 1},
  {"ph": "X", "name": "decoder.layers.2.mixer", "ts": 3000, "dur": 1000, "pid": "gpu", "tid": 1},
  {"ph": "X", "name": "lm_head", "ts": 4000, "dur": 3000, "pid": 1, "tid": 1}
]}
EOF2
run "$OCTOPIPE" import profile "$T/nested.json" --rules $D/rules.json -o "$T/nested.m.json"
expect_rc 0 "import profile of a nested trace"
expect_match '8 records, 8 matched \(2 inside another of the same layer and phase, counted once\), 0 unmatched' "$ERR" \
    "events inside a counted one are matched, not added: $ERR"
r=$(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["layers"]; print(l[1]["f_ms"], l[2]["f_ms"])' "$T/nested.m.json")
if [ "$r" = "2.3 2" ]; then ok "layer 1: its module once plus another thread's event; layer 2: two processes' events"
else not_ok "nested trace times" "$r (want 2.3 2)"; fi
# threads are told apart by pid and tid themselves: (pid 0, tid 1000003) and (pid 1, tid 0)
# were one thread when the two were hashed into one key (pid * 1000003 ^ tid), and the
# second thread's event, inside the first's in time, was taken as nested and not counted
cat >"$T/threads.json" <<'EOF2'
{"traceEvents": [
  {"ph": "X", "name": "embed_tokens", "ts": 0, "dur": 500, "pid": 0, "tid": 1000003},
  {"ph": "X", "name": "decoder.layers.1.mixer", "ts": 500, "dur": 2000, "pid": 0, "tid": 1000003},
  {"ph": "X", "name": "decoder.layers.1.mixer.in_proj", "ts": 600, "dur": 300, "pid": 1, "tid": 0},
  {"ph": "X", "name": "decoder.layers.2.mixer", "ts": 2500, "dur": 1000, "pid": 0, "tid": 1000003},
  {"ph": "X", "name": "lm_head", "ts": 4000, "dur": 3000, "pid": 0, "tid": 1000003}
]}
EOF2
run "$OCTOPIPE" import profile "$T/threads.json" --rules $D/rules.json -o "$T/threads.m.json"
expect_rc 0 "import profile of a trace with two threads whose ids once hashed alike"
expect_match '5 records, 5 matched, 0 unmatched' "$ERR" "no event is taken as inside another thread's: $ERR"
r=$(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["layers"]; print(l[1]["f_ms"])' "$T/threads.m.json")
if [ "$r" = "2.3" ]; then ok "layer 1: the module on one thread plus the other thread's event"
else not_ok "two threads whose ids once hashed alike" "$r (want 2.3)"; fi
# a key the import reads given twice: cJSON sees the first, so 500 us was taken and the
# 99999999 beside it dropped without a word (every other loader refuses duplicates); a
# duplicate in what it does not read (args) is not its to judge
cat >"$T/dup.json" <<'EOF2'
{"traceEvents": [
  {"ph": "X", "name": "embed_tokens", "ts": 0, "dur": 500, "dur": 99999999, "pid": 0, "tid": 0}
]}
EOF2
run "$OCTOPIPE" import profile "$T/dup.json" --rules $D/rules.json -o "$T/x.json"
expect_rc 2 "a trace event with a key twice exits 2"
expect_match "dup.json: traceEvents\[0\]: duplicate key 'dur'" "$ERR" "naming the event and the key"
sed 's/"dur": 500, "pid": 0, "tid": 1000003}/"dur": 500, "pid": 0, "tid": 1000003, "args": {"k": 1, "k": 2}}/' \
    "$T/threads.json" > "$T/dupargs.json"
run "$OCTOPIPE" import profile "$T/dupargs.json" --rules $D/rules.json -o "$T/dupargs.m.json"
expect_rc 0 "a key twice in an event's args is not the import's to judge"
# a record name that is not UTF-8 (Latin-1 'e acute') reached the model's kind through the
# kind group, and every writer turned it into U+FFFD without a word
printf 'name,phase,ms\nembed_tokens,F,1\ndecoder.layers.1.mixer,F,1\nlm_head,F,1\ndecoder.layers.2.mlp\351,F,1\n' >"$T/latin1.csv"
run "$OCTOPIPE" import profile "$T/latin1.csv" --rules $D/rules.json -o "$T/latin1.m.json"
expect_rc 2 "a record name that is not UTF-8 exits 2"
expect_match "latin1.csv: line 5: name 'decoder.layers.2.mlp.*' is not UTF-8 text" "$ERR" "naming the line: $ERR"
[ -e "$T/latin1.m.json" ] && not_ok "and writes no model" || ok "and writes no model"
# records each within the 1e9 ms a time may be, summed past what a layer may take: the
# model was written, and every command then refused it
printf 'name,phase,ms\nembed_tokens,F,1\nlm_head,F,1\ndecoder.layers.1.mixer,F,6e8\ndecoder.layers.1.mixer,F,6e8\ndecoder.layers.2.mlp,F,1\n' >"$T/sum.csv"
run "$OCTOPIPE" import profile "$T/sum.csv" --rules $D/rules.json -o "$T/sum.m.json"
expect_rc 2 "records that sum past 1e9 ms for a layer exit 2"
expect_match "sum.csv: layer 1: its records add up to more than the 1e\+09 ms" "$ERR" "naming the layer: $ERR"
[ -e "$T/sum.m.json" ] && not_ok "and write no model" || ok "and write no model"
printf '{"traceEvents": [{"ph": "X", "name": "embed_tokens", "ts": 0, "dur": 6e11, "pid": 0, "tid": 0},\n' >"$T/sum.json"
printf '{"ph": "X", "name": "embed_tokens", "ts": 7e11, "dur": 6e11, "pid": 0, "tid": 0}]}\n' >>"$T/sum.json"
run "$OCTOPIPE" import profile "$T/sum.json" --rules $D/rules.json -o "$T/sum.m.json"
expect_rc 2 "trace events that sum past 1e9 ms exit 2 ($ERR)"
expect_match "sum.json: layer 0: its records add up" "$ERR" "naming the layer"
run "$OCTOPIPE" import profile "$T/sum.json" --rules $D/rules.json --iters 2 -o "$T/sum.m.json"
expect_rc 0 "the layer's sum is judged per iteration: 1.2e9 ms over --iters 2 is 6e8 ($ERR)"
expect_match '"f_ms": 600000000' "$(cat "$T/sum.m.json")" "and the table reads 6e8 ms"
run "$OCTOPIPE" import profile $D/records.csv --rules $D/bad-rules.json -o "$T/x.json"
expect_rc 2 "a bad pattern exits 2"
expect_match '^tests/data/profile/bad-rules.json: rules\[1\].pattern: missing closing parenthesis at offset 30$' "$ERR" "and is reported with its offset"
printf 'decoder.layers.0.mixer,Q,1\n' >"$T/badphase.csv"
run "$OCTOPIPE" import profile "$T/badphase.csv" --rules $D/rules.json -o "$T/x.json"
expect_match "line 1: phase 'Q' is not F, B, W or BW" "$ERR" "a bad phase is named with its line"
printf 'decoder.layers.0.mixer,F,1\ndecoder.layers.2.mixer,F,1\n' >"$T/gap.csv"
run "$OCTOPIPE" import profile "$T/gap.csv" --rules $D/rules.json -o "$T/x.json"
expect_match 'no record matched layer 1' "$ERR" "a missing layer is refused"
# malformed records: one clear line and exit 2, never a crash (issue 16)
run "$OCTOPIPE" import profile $D/long-layer.csv --rules $D/rules.json -o "$T/x.json"
expect_rc 2 "a 70-digit layer number in a CSV exits 2"
expect_match "long-layer.csv: line 2: layer '1{24}\.\.\.' of '.*' is not a layer number in \[0, 99999\]$" "$ERR" "and says the layer number is out of range"
run "$OCTOPIPE" import profile $D/long-layer-trace.json --rules $D/rules.json -o "$T/x.json"
expect_rc 2 "a 70-digit layer number in a Chrome trace exits 2"
expect_match "long-layer-trace.json: traceEvents\[0\]: layer '1+\.\.\.' .* is not a layer number" "$ERR" "and names the event"
run "$OCTOPIPE" import profile $D/nul-name.csv --rules $D/rules.json -o "$T/x.json"
expect_rc 2 "a NUL byte in a record name exits 2"
expect_match "nul-name.csv: line 2: name 'decoder\.layers\.0\.mixer\\\\x00A+\.\.\.' holds a control character \(byte 0x00\)$" "$ERR" "and shows the byte escaped"
run "$OCTOPIPE" import profile $D/records.csv --rules $D/alt-rules.json -o "$T/x.json"
expect_rc 2 "a rule whose layer group takes no part in a match exits 2"
expect_match "line 2: rules\[0\] matches 'embed_tokens'|line [0-9]+: rules\[0\] matches 'lm_head' but its layer group took no part" "$ERR" "and says so"
run "$OCTOPIPE" import profile $D/trace-then-nul.json --rules $D/rules.json -o "$T/x.json"
expect_rc 2 "a Chrome trace followed by a NUL and more text is refused"
expect_match "trace-then-nul.json: a NUL character \(raw or .u0000\) at byte 74$" "$ERR" "with the NUL's offset"
for f in empty-array empty-events; do
    run "$OCTOPIPE" import profile "$top_srcdir/tests/fuzz/regress/profile_trace/$f.json" --rules $D/rules.json -o "$T/x.json"
    expect_rc 2 "a trace with no events ($f) exits 2"
    expect_match "$f.json: no record matched a rule \(0 records\)$" "$ERR" "and says no record matched"
done
printf '{"traceEvents": []} {"traceEvents": []}' >"$T/two.json"
run "$OCTOPIPE" import profile "$T/two.json" --rules $D/rules.json -o "$T/x.json"
expect_match "two.json: text after the end of the trace \(at byte 20\)$" "$ERR" "text after a trace is refused with its offset"
# RFC 4180 fields
run "$OCTOPIPE" import profile $D/quoted.csv --rules $D/rules.json -o "$T/x.json"
expect_rc 2 "a newline inside a quoted name is refused"
expect_match "quoted.csv: line 5: name 'decoder\.layers\.0\.mixer\\\\nbwd' holds a control character" "$ERR" "with the line the record starts on"
head -4 $D/quoted.csv >"$T/quoted.csv"
run "$OCTOPIPE" import profile "$T/quoted.csv" --rules $D/rules.json -o "$T/q.json"
expect_rc 0 "quoted fields: commas, doubled quotes, CRLF"
r=$(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["layers"]; print([(x["kind"],x["f_ms"],x["b_ms"]) for x in l])' "$T/q.json")
want="[('mixer', 1, 0), ('mlp', 2, 0), ('mixer', 0, 1.5)]"
if [ "$r" = "$want" ]; then ok "quoted fields are unquoted"; else not_ok "quoted fields are unquoted" "got  $r" "want $want"; fi
run "$OCTOPIPE" import profile $D/unclosed.csv --rules $D/rules.json -o "$T/x.json"
expect_rc 2 "a quote never closed exits 2"
expect_match "unclosed.csv: line 3: quoted field is never closed$" "$ERR" "and names the line it opens on"
# a model name with control characters would make a layer table its own reader refuses:
# --name refuses one, a name taken from the output file's name replaces them
run "$OCTOPIPE" cost llama2-7b --cluster 8xH200 --name "$(printf 'a\033[2Jb')" -o "$T/ctl.json"
expect_rc 2 "cost --name with a control character is refused"
expect_match "^octopipe cost: --name: must not contain control characters" "$ERR" "and says why"
if [ ! -e "$T/ctl.json" ]; then ok "and writes nothing"; else not_ok "and writes nothing"; fi
tab=$(printf '\t')
run "$OCTOPIPE" cost llama2-7b --cluster 8xH200 -o "$T/x${tab}y.json"
expect_rc 0 "cost -o a file whose name holds a tab"
run "$OCTOPIPE" check "$T/x${tab}y.json"
expect_rc 0 "writes a layer table that reads back ($ERR)"
# a name is kept whole or refused, never cut: --name was cut to 255 bytes (inside a
# character when it was 200 x e-acute) and a byte that is not UTF-8 written as U+FFFD; a plan
# of a model of a long name was named with its first 159 bytes, its schedule cut off
long=$(python3 -c 'print("\u00e9" * 1000)')
run "$OCTOPIPE" cost llama2-7b --cluster 8xH200 --name "$long" -o "$T/long.json"
expect_rc 0 "cost --name of 2000 bytes"
r=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"] == "\u00e9" * 1000)' "$T/long.json")
[ "$r" = True ] && ok "the name is written whole" || not_ok "the name is written whole" "$r"
run "$OCTOPIPE" plan --model "$T/long.json" --cluster 8xH200 --schedule 1f1b --microbatches 8 -o "$T/long-plan.json"
r=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"] == "\u00e9" * 1000 + " 1f1b")' "$T/long-plan.json")
[ "$r" = True ] && ok "a plan of it is named with the whole name and its schedule" || not_ok "the plan's name" "$r"
run "$OCTOPIPE" cost llama2-7b --cluster 8xH200 --name "$(python3 -c 'print("\u00e9" * 2048)')" -o "$T/max.json"
expect_rc 0 "cost --name of 4096 bytes, the most a file holds"
run "$OCTOPIPE" plan --model "$T/max.json" --cluster 8xH200 --schedule 1f1b --microbatches 8 -o "$T/max-plan.json"
run "$OCTOPIPE" check "$T/max-plan.json"
expect_rc 0 "a plan of it reads back ($ERR)"
r=$(python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["name"]; print(len(n.encode()) <= 4096 and n.endswith("\u00e9 1f1b") and "\ufffd" not in n)' "$T/max-plan.json")
[ "$r" = True ] && ok "its name keeps the schedule, the model's name cut between characters" || not_ok "the plan's name at the limit" "$r"
run "$OCTOPIPE" cost llama2-7b --cluster 8xH200 --name "$(python3 -c 'print("N" * 4097)')" -o "$T/x.json"
expect_rc 2 "cost --name past 4096 bytes is refused"
run "$OCTOPIPE" cost llama2-7b --cluster 8xH200 --name "$(printf 'a\377b')" -o "$T/x.json"
expect_rc 2 "cost --name that is not UTF-8 is refused"
expect_match "^octopipe cost: --name: not UTF-8" "$ERR" "and says why"
# a cluster without a "hardware" section is priced at its gpu's datasheet peaks: an A100
# was priced as an H200 (faster than the bundled A100 cluster), an unknown GPU silently too
sed 's/"gpu": "H200"/"gpu": "A100"/' "$top_srcdir/tests/data/tiny-cluster.json" > "$T/a100.json"
run "$OCTOPIPE" cost "$top_srcdir/tests/data/hf/qwen3-8b.json" --cluster "$T/a100.json"
mine=$(printf '%s\n' "$OUT" | sed -n 's/.*per microbatch F \([0-9.]*\) ms.*/\1/p')
run "$OCTOPIPE" cost "$top_srcdir/tests/data/hf/qwen3-8b.json" --cluster 64xA100
theirs=$(printf '%s\n' "$OUT" | sed -n 's/.*per microbatch F \([0-9.]*\) ms.*/\1/p')
if [ -n "$mine" ] && [ "$mine" = "$theirs" ]; then ok "gpu A100 with no hardware section: the A100 sheet ($mine ms F)"
else not_ok "gpu A100 with no hardware section priced as the bundled A100 cluster" "$mine vs $theirs"; fi
sed 's/"gpu": "H200"/"gpu": "MI300X"/' "$top_srcdir/tests/data/tiny-cluster.json" > "$T/mi300x.json"
run "$OCTOPIPE" cost "$top_srcdir/tests/data/hf/qwen3-8b.json" --cluster "$T/mi300x.json" -o "$T/mi.json"
expect_rc 2 "a GPU with no built-in datasheet and no hardware section is not priced"
expect_match "mi300x.json: hardware: gpu 'MI300X' has no built-in datasheet" "$ERR" "naming the file and what to give: $ERR"
if [ -e "$T/mi.json" ]; then not_ok "and writes no model" "$T/mi.json"; else ok "and writes no model"; fi
run "$OCTOPIPE" check "$T/mi300x.json"
expect_rc 0 "such a cluster still checks (a measured table needs no peaks)"
done_testing
