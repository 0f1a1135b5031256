#!/bin/sh
# Fields a format does not have are refused, naming their path and the field meant; fields
# beginning with '_' are comments, allowed in every object; a document using every field of
# its format is accepted; Hugging Face configs (not our format) keep their own fields.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need_python3

T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
data="$top_srcdir/tests/data"

# every field of each format, with a comment in each object
for f in "$data"/keys/every-*.json; do
    run "$OCTOPIPE" check "$f"
    if [ "$RC" = 0 ] && [ -z "$ERR" ]; then ok "$(basename "$f") is accepted"
    else not_ok "$(basename "$f") is accepted" "exit $RC: $ERR"; fi
done

# the shipped documents with "_comment" added to every object, tables keyed by names (kinds,
# efficiency classes, GPU models) too
for f in "$top_srcdir"/samples/models/deepseek-v2-lite.json "$top_srcdir"/samples/clusters/16xH200.json \
         "$top_srcdir"/samples/runtimes/megatron-core.json "$top_srcdir"/samples/published/points.json \
         "$data"/arch-tiny.json "$data"/tiny-model-compact.json "$data"/tiny-timeline.json \
         "$top_srcdir"/plans/gpt-13b-4xH200-1f1b.json; do
    out="$T/$(basename "$f")"
    python3 - "$f" "$out" <<'PY'
import json, sys
def add(o):
    if isinstance(o, dict):
        for v in o.values():
            add(v)
        o["_comment"] = "a comment"
    elif isinstance(o, list):
        for v in o:
            add(v)
import os
d = json.load(open(sys.argv[1]))
add(d)
for k in ("model", "cluster"):  # a plan's files, from its own directory
    if isinstance(d.get(k), str):
        d[k] = os.path.abspath(os.path.join(os.path.dirname(sys.argv[1]), d[k]))
json.dump(d, open(sys.argv[2], "w"))
PY
    run "$OCTOPIPE" check "$out"
    if [ "$RC" = 0 ]; then ok "$(basename "$f") with a comment in every object is accepted"
    else not_ok "$(basename "$f") with a comment in every object is accepted" "exit $RC: $ERR"; fi
done

# a typo in a rules file (read by import profile, not check)
printf '%s\n' '{"format": "octopipe.rules/1", "name": "t", "seq_len": 2048,' \
    '"rules": [{"pattern": "^L(?<layer>[0-9]+)$", "kind": "x", "phas": "F"}]}' >"$T/rules.json"
printf 'name,phase,ms\nL0,F,1.0\n' >"$T/p.csv"
run "$OCTOPIPE" import profile "$T/p.csv" --rules "$T/rules.json" -o "$T/out.json"
expect_rc 2 "a rule with a misspelt field exits 2"
expect_match "rules\.json: rules\[0\]\.phas: unknown field \(did you mean 'phase'\?\)$" "$ERR" "and names it: $ERR"
if [ ! -e "$T/out.json" ]; then ok "and writes nothing"; else not_ok "and writes nothing"; fi
printf '%s\n' '{"format": "octopipe.rules/1", "name": "t", "seq_len": 2048, "_comment": "c", "micro_batch_size": 1,' \
    '"w_fraction": 0.5, "rules": [{"pattern": "^L(?<layer>[0-9]+)$", "kind": "x", "_why": "c"}]}' >"$T/rules.json"
run "$OCTOPIPE" import profile "$T/p.csv" --rules "$T/rules.json" -o "$T/out.json"
expect_rc 0 "a rules file with comments is read: $ERR"

# a Hugging Face config is not our format: its fields are its own, unknown ones included
python3 - "$data/hf/mistral-7b.json" "$T/hf.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["some_new_field"] = 1; d["hiden_size"] = 5
json.dump(d, open(sys.argv[2], "w"))
PY
run "$OCTOPIPE" cost "$T/hf.json" --cluster 8xH200 -o "$T/hf-model.json"
expect_rc 0 "a Hugging Face config with fields octopipe does not know is still read: $ERR"
done_testing
