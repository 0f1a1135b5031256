#!/bin/sh
# The command line contract: help, version, exit codes, check and show on good input.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3
data="$top_srcdir/tests/data"

run "$OCTOPIPE" --help
expect_rc 0 "--help exits 0"
expect_match '^  check FILE' "$OUT" "--help lists check"
expect_match '^  show MODEL' "$OUT" "--help lists show"
for c in check show plan sim tune compare cost import export run tui; do
    expect_match "^  $c " "$OUT" "--help lists $c"
done
for c in $(printf '%s\n' "$OUT" | sed -n 's/^  \([a-z-]*\) .*/\1/p'); do
    run "$OCTOPIPE" "$c" --help
    if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | grep -q "^usage: octopipe $c"; then ok "'$c --help' prints its usage"
    else not_ok "'$c --help' prints its usage" "exit $RC" "$OUT"; fi
done

# every format of export and import answers --help where it stands
for f in torch-csv megatron-layout megatron-args torchtitan svg; do
    run "$OCTOPIPE" export "$f" --help
    if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | grep -q "octopipe export $f"; then ok "'export $f --help' prints its usage"
    else not_ok "'export $f --help' prints its usage" "exit $RC" "$OUT" "$ERR"; fi
done
run "$OCTOPIPE" --help
expect_match '^  export [a-z|-]*megatron-args' "$OUT" "--help names export megatron-args"

run "$OCTOPIPE" --version
expect_rc 0 "--version exits 0"
expect_match '^octopipe [0-9]+\.[0-9]+\.[0-9]+$' "$OUT" "--version prints the version"

run "$OCTOPIPE" frobnicate
expect_rc 2 "an unknown command exits 2"
expect_match "'frobnicate' is not a command" "$ERR" "an unknown command is named"

run "$OCTOPIPE" check
expect_rc 2 "check without files exits 2"
run "$OCTOPIPE" check --bogus "$data/tiny-model.json"
expect_rc 2 "check with an unknown option exits 2"
run "$OCTOPIPE" check --help
expect_rc 0 "check --help exits 0"
expect_match '^usage: octopipe check' "$OUT" "check --help prints usage"

run "$OCTOPIPE" check "$data/tiny-model.json" "$data/tiny-cluster.json" "$data/tiny-plan.json" "$data/tiny-timeline.json"
expect_rc 0 "check accepts one file of each kind"
expect_match "tiny-model.json: ok: model 'tiny': 4 layers" "$OUT" "check describes a model"
expect_match "tiny-cluster.json: ok: cluster '2xtest': 2 H200 devices" "$OUT" "check describes a cluster"
expect_match "tiny-plan.json: ok: plan 'tiny 1f1b': .* 2 stages on 2 of 2 devices, 2 microbatches, split backward, 12 ops" "$OUT" "check describes a plan"
expect_match "tiny-timeline.json: ok: timeline \(sim\): 2 devices, 5 ops, 2 transfers" "$OUT" "check describes a timeline"

run "$OCTOPIPE" check "$data/arch-tiny.json"
expect_rc 0 "check accepts an architecture file"
expect_match "arch-tiny.json: ok: architecture 'tiny-arch': 5 layers, [0-9.]+ M parameters" "$OUT" "check describes an architecture"

run "$OCTOPIPE" check "$data/tiny-model.json" "$data/bad/11-model-negative-cost.json" "$data/tiny-cluster.json"
expect_rc 2 "one bad file among good ones exits 2"
expect_match 'tiny-cluster.json: ok' "$OUT" "files after a bad one are still checked"
run "$OCTOPIPE" check "$data/no-such-file.json"
expect_rc 2 "a missing file exits 2"
expect_match 'no-such-file.json: cannot open: No such file or directory' "$ERR" "a missing file is named"
run "$OCTOPIPE" check "$data"
expect_rc 2 "a directory exits 2"

run "$OCTOPIPE" check --json "$data/tiny-model.json" "$data/bad/01-empty.json"
expect_rc 2 "check --json still exits 2 on a bad file"
expect_match '"ok": true' "$OUT" "check --json marks good files"
expect_match '"error": ".*01-empty.json: file is empty' "$OUT" "check --json carries the error"
if command -v python3 >/dev/null 2>&1; then
    if printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d)==2' 2>/dev/null
    then ok "check --json is valid JSON"; else not_ok "check --json is valid JSON" "$OUT"; fi
else skip "check --json is valid JSON" "no python3"; fi

run "$OCTOPIPE" show "$data/tiny-model.json"
expect_rc 0 "show exits 0"
expect_match '^model tiny: 4 layers, sequence 1024 x micro-batch 1' "$OUT" "show prints the header"
expect_match '^attn +1 +1\.00 +1\.00 +1\.00' "$OUT" "show prints per-kind rows"
expect_match '^total +4 +6\.00 +5\.50 +4\.25 +100\.0%' "$OUT" "show prints totals"
expect_match '^ +3  attn\+head +7\.00 ms' "$OUT" "show puts the head layer first among the heaviest"

run "$OCTOPIPE" show --json "$data/tiny-model-compact.json"
expect_rc 0 "show --json exits 0"
expect_match '"heaviest": \[' "$OUT" "show --json lists the heaviest layers"
total=$(printf '%s\n' "$OUT" | sed -n '/"total"/,/}/p' | tr -d ' \n')
expect_match '"count":4,"f_ms":6,"b_ms":5\.5,"w_ms":4\.25' "$total" "the compact form expands to the same totals"

# layer costs up to the largest accepted (1e9 ms a layer, and 1e5 layers of it in a
# total) keep show's columns aligned: each column ends where its header does, on every
# row, and the heaviest layers' times end in one column
show_aligned() {
    python3 -c '
import re, sys
lines = sys.stdin.read().split("\n")
h = next(i for i, l in enumerate(lines) if l.startswith("KIND "))
ends = [m.end() for m in re.finditer(r"\S+(?: \S+)*", lines[h])][1:]
rows = [l for l in lines[h + 1:lines.index("", h)] if l.strip()]
for r in rows:
    assert len(r) == len(lines[h]) and all(r[e - 1] != " " and (e == len(r) or r[e] == " ") for e in ends), r
heavy = [l.index(" ms  (") for l in lines if re.match(r"^ +[0-9]+  \S", l)]
assert len(rows) >= 3 and heavy and len(set(heavy)) == 1, (rows, heavy)
'
}
python3 - "$data/tiny-model.json" "$TMPDIR_TEST" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for i in (1, 3):
    m["layers"][i].update(f_ms=999999999.5, b_ms=999999999.5 if i == 3 else 1, w_ms=999999999.5 if i == 3 else 1)
json.dump(m, open(sys.argv[2] + "/costly.json", "w"))
m["layers"] = m["layers"][:1] + [dict(m["layers"][3], kind="attn")] * 2000 + m["layers"][3:]
json.dump(m, open(sys.argv[2] + "/costlier.json", "w"))
PY
for f in costly costlier; do
    run "$OCTOPIPE" show "$TMPDIR_TEST/$f.json"
    expect_rc 0 "show of a model of layers of 1e9 ms ($f) exits 0"
    if printf '%s\n' "$OUT" | show_aligned 2>"$TMPDIR_TEST/py.err"; then ok "show's columns stay aligned ($f)"
    else not_ok "show's columns stay aligned ($f)" "$OUT" "$(cat "$TMPDIR_TEST/py.err")"; fi
    run "$OCTOPIPE" show --json "$TMPDIR_TEST/$f.json"
    if printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["total"]["f_ms"] > 1e9' 2>/dev/null
    then ok "show --json of it is valid JSON ($f)"; else not_ok "show --json of it is valid JSON ($f)" "$OUT"; fi
done
run "$OCTOPIPE" show llama2-7b
if printf '%s\n' "$OUT" | show_aligned && [ "$(printf '%s\n' "$OUT" | awk 'NR > 1 && length > 80' | wc -l)" = 0 ]
then ok "show of a sample: aligned, the table within 80 columns"; else not_ok "show of a sample: aligned, within 80 columns" "$OUT"; fi

run "$OCTOPIPE" show "$data/bad/09-model-no-layers.json"
expect_rc 2 "show of a bad model exits 2"
expect_match '09-model-no-layers.json: layers: required field is missing' "$ERR" "show reports the bad field"
run "$OCTOPIPE" show no-such-sample
expect_rc 2 "show of an unknown sample exits 2"
run "$OCTOPIPE" show a b
expect_rc 2 "show with two models exits 2"
# compare: the tuned row is in --json as in the text, even when no tuned plan fits, and a
# row's keys are those of the baselines' rows
run "$OCTOPIPE" compare --model "$data/tiny-model.json" --cluster "$data/tiny-cluster-small.json" --microbatches 2 --layout pp --json
expect_rc 3 "compare --json where nothing fits: exit 3, the document still on stdout"
expect_match "^octopipe compare: no plan fits tiny on .*: every baseline and the tuned plan is infeasible$" "$ERR" "says none fits: $ERR"
if printf '%s' "$OUT" | python3 -c '
import json, sys
rows = json.load(sys.stdin)
t = [r for r in rows if r["schedule"] == "tuned"]
assert len(t) == 1 and t[0]["feasible"] is False and "fits in the memory" in t[0]["reason"], t
' 2>"$TMPDIR_TEST/py.err"; then ok "compare --json has the tuned row, with why it is missing"
else not_ok "compare --json has the tuned row, with why it is missing" "$(cat "$TMPDIR_TEST/py.err")"; fi
# a row out of memory, the tuned one as the baselines, names its device in the reason and
# lists every device over capacity in "oom", as sim --json does
if printf '%s' "$OUT" | python3 -c '
import json, sys
rows = json.load(sys.stdin)
oom = [r for r in rows if "out of memory" in r.get("reason", "")]
assert len(oom) >= 2 and any(len(r["oom"]) > 1 for r in oom), oom
for r in oom:
    assert r["feasible"] is False and r["reason"] == "no: device %d out of memory" % r["oom"][0], r
    assert r["oom"] == sorted(set(r["oom"])) and all(0 <= d < 2 for d in r["oom"]), r
assert all("oom" not in r for r in rows if r not in oom), rows
' 2>"$TMPDIR_TEST/py.err"; then ok "compare --json: a row out of memory carries its devices over capacity"
else not_ok "compare --json: a row out of memory carries its devices over capacity" "$(cat "$TMPDIR_TEST/py.err")"; fi
run "$OCTOPIPE" compare --model "$data/tiny-model.json" --cluster "$data/tiny-cluster.json" --microbatches 4 --layout pp --json
if printf '%s' "$OUT" | python3 -c '
import json, sys
rows = json.load(sys.stdin)
t = [r for r in rows if r["schedule"] == "tuned"][0]
assert len(t["peak_mem_bytes_per_device"]) == 2 and t["feasible"] is True, t
' 2>"$TMPDIR_TEST/py.err"; then ok "compare --json: the tuned row has peak_mem_bytes_per_device as the baselines' rows do"
else not_ok "compare --json: the tuned row has peak_mem_bytes_per_device" "$(cat "$TMPDIR_TEST/py.err")"; fi
# check names OctoPipe's own steps and rules formats as such, not as foreign ones
run "$OCTOPIPE" check "$top_srcdir/plans/nemotron-nano-v2-9b-8xH200-tuned.steps"
expect_rc 2 "check of a steps file exits 2"
expect_match "'octopipe.steps/1' is not checked on its own: tui --steps or report --steps" "$ERR" "and says where it is read"
if printf '%s' "$ERR" | grep -q "is not an OctoPipe format"; then not_ok "a steps file is not called foreign" "$ERR"
else ok "a steps file is not called foreign"; fi
run "$OCTOPIPE" check "$top_srcdir/tests/data/profile/rules.json"
expect_match "'octopipe.rules/1' is not checked on its own: import profile --rules" "$ERR" "a rules file likewise"
# runtime and published-points files stand on their own: check reads them (it called
# them "not an OctoPipe format")
run "$OCTOPIPE" check "$top_srcdir/samples/runtimes/megatron-core.json" "$top_srcdir/samples/published/points.json"
expect_rc 0 "check of a runtime and a points file"
expect_match "megatron-core.json: ok: runtime 'megatron-core': 1 GPU table, 5 us per launch" "$OUT" "the runtime is described"
expect_match "points.json: ok: published points: [0-9]+ runs on 2 GPU models" "$OUT" "the points are described"
sed 's/"launch_us": *[0-9.e+]*/"launch_us": -1/' "$top_srcdir/samples/runtimes/megatron-core.json" >"$TMPDIR_TEST/rt.json"
run "$OCTOPIPE" check "$TMPDIR_TEST/rt.json"
expect_rc 2 "a runtime with a negative launch cost is invalid ($ERR)"
expect_match "rt.json: kernels.launch_us: must be a number" "$ERR" "naming the field"
# a Hugging Face config.json (what cost reads, as the bundled architectures) is checked as
# one: check said "format: required field is missing" of every bundled architecture
run "$OCTOPIPE" check "$top_srcdir"/samples/architectures/*.json
expect_rc 0 "check of the bundled Hugging Face configs"
expect_match "gemma2-27b.json: ok: architecture 'google/gemma-2-27b' \(a Hugging Face config, gemma2\): 48 layers, 27.227 B parameters" "$OUT" "described as one"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["hidden_size"]; json.dump(d,open(sys.argv[2],"w"))' \
    "$top_srcdir/samples/architectures/llama2-7b.json" "$TMPDIR_TEST/hf.json"
run "$OCTOPIPE" check "$TMPDIR_TEST/hf.json"
expect_rc 2 "a config without hidden_size is invalid"
expect_match "hf.json: hidden_size: required field is missing" "$ERR" "with cost's message: $ERR"
done_testing
