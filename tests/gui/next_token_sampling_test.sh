#!/usr/bin/env bash
# The next-token panel with T 3, top-k 5 and top-p 0.5 (restored from the workspace, as a learner left
# them): it lists ten tokens; the bars are the distribution sampling draws from (core/sampling.hpp:
# softmax(logits/T), top-k, top-p on the top-k renormalised), so only the first sample_kept tokens have
# a chance and those chances sum to 1; the model's own probability stays beside them; labels never
# run into the bars. Checked against a recomputation from the panel's own probabilities at T.
# A broken story_grammar.json in the model folder is one line and the model still opens.
#   usage: bash tests/gui/next_token_sampling_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"
/usr/bin/python3 "$here/make_tiny_model.py" "$tmp/tiny" || fail "could not write the test model"
echo '{"adjectives": ["quick", ' >"$tmp/tiny/story_grammar.json"  # broken: one line, the model opens

# First run: open the model (the workspace remembers it), then leave.
run_script first --model "$tmp/tiny" --text "the cat sat on the mat because it" <<'EOF2'
wait model_active == true && model_runs >= 1 && updating == false
expect status_is_error == true && status ~ story_grammar.json
quit
EOF2
ws="$XDG_CONFIG_HOME/attnviz/workspace.json"
[ -f "$ws" ] || fail "no workspace was written"
/usr/bin/python3 - "$ws" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["model"]["top_k"] = 5
j["model"]["top_p"] = 0.5
j["model"]["temperature"] = 3.0  # (a flatter distribution: several tokens share the nucleus)
json.dump(j, open(sys.argv[1], "w"))
PY
shots="${ATTNVIZ_SHOTS:-}"
{
  echo 'wait model_active == true && model_runs >= 1 && updating == false && top_k == 5 && sample_kept > 0'
  echo 'move 5 990'
  echo 'frames 3'
  [ -n "$shots" ] && printf 'screenshot %s\nframes 1\n' "$shots/next_token_topk5_topp05.png"
  echo quit
} >"$tmp/second.txt"
run_script second <"$tmp/second.txt"
/usr/bin/python3 - "$log" <<'PY'
import json, sys
l = [json.loads(x) for x in open(sys.argv[1]) if x.strip()][-1]
rows, kept, k, p = l["next_tokens"], l["sample_kept"], l["top_k"], l["top_p"]
assert len(rows) == 10, f"{len(rows)} rows"
assert k == 5 and abs(p - 0.5) < 1e-6, (k, p)
# The hand rule: the top-5 at T, renormalised; the smallest prefix reaching 0.5; renormalised again.
top5 = [r["p"] for r in rows[:5]]
s5 = sum(top5)
cum, want = 0.0, 5
for i, q in enumerate(top5):
    cum += q / s5
    if cum >= p:
        want = i + 1
        break
assert kept == want, f"sampling keeps {kept} tokens, the rule gives {want}"
total = sum(top5[:kept])
for i, r in enumerate(rows):
    expect = rows[i]["p"] / total if i < kept else 0.0
    assert abs(r["p_sample"] - expect) < 1e-5, f"row {i} {r['text']!r}: p_sample {r['p_sample']} vs {expect}"
    assert r["p_model"] > 0
assert abs(sum(r["p_sample"] for r in rows) - 1) < 1e-5
print(f"next tokens: {kept} of 10 can be drawn (cut by {l['sample_cut']}); chances",
      [round(r["p_sample"], 3) for r in rows[:kept]], "model", [round(r["p_model"], 3) for r in rows[:kept]])
# Labels stop before their bars (long byte tokens are elided, the tooltip has them whole).
boxes = {b["id"]: b["box"] for b in l["layout"]}
for i in range(10):
    lab = boxes[f"next_token.label{i}"]
    for other in (f"next_token.bar{i}", f"next_token.model{i}"):
        o = boxes[other]
        overlap = lab[0] < o[0] + o[2] - 0.5 and o[0] < lab[0] + lab[2] - 0.5 and lab[1] < o[1] + o[3] - 0.5 and o[1] < lab[1] + lab[3] - 0.5
        assert not overlap, f"label {i} {lab} runs into {other} {o}"
assert "next_token.cut" in boxes, "no cut-off line"
PY
echo "next_token_sampling_test: OK"
