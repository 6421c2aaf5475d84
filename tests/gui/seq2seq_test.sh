#!/usr/bin/env bash
# An encoder–decoder in the GUI, on a tiny random T5 checkpoint made by tests/gui/make_tiny_t5.py (a
# TEST model: its attention is noise), driven through the app's own input path (app/script.hpp):
#   --model DIR --text SOURCE --target T  -> both stacks run off the frame; cross-attention on screen:
#                                            cross_weights, rows = target tokens, columns = source tokens
#   the family chooser: encoder            -> the encoder's self-attention (source × source, no mask)
#   the family chooser: cross, model view  -> the layers × heads grid of cross-attention
#   Append greedy                          -> the target grows by the decoder's most likely token, every
#                                            layer reruns, and the cross-attention row that wrote it is
#                                            pinned, labelled "→ token" (rows are labelled by the word they
#                                            write; the last, "→ word?", writes the next one, the
#                                            next-token panel's pick); its values equal
#                                            the next-to-last row of `attnviz dump --model`'s
#                                            decoder_layer1_cross_weights_h2 for the same source and target
#   the lines view                         -> cross-attention lines, target (left) to source (right)
#   usage: bash tests/gui/seq2seq_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"
/usr/bin/python3 "$here/make_tiny_t5.py" "$tmp/t5" || fail "could not write the test model"
shots="${ATTNVIZ_SHOTS:-}"
{
  cat <<'EOF2'
wait model_active == true && model_runs >= 1 && updating == false && weights_checksum != ""
expect model_seq2seq == true && model_family == cross && stage == cross_weights && model_target == " die"
let n model_n
let m model_n_source
expect stage_rows.name == "target tokens" && stage_cols.name == "source tokens" && stage_rows.size == $n
expect stage_cols.size == $m && model_n == 2 && model_n_source > 2
# --- the encoder's self-attention ----------------------------------------------------------------
click widget family_encoder 0.5 0.5
wait model_family == encoder && stage == weights
expect stage_rows.size == $m && stage_cols.size == $m && stage_rows.name == "query tokens"
# --- the decoder's, then back to cross in the model view -----------------------------------------
click widget family_decoder 0.5 0.5
wait model_family == decoder && stage == weights && stage_rows.size == $n
click widget view_model 0.5 0.5
wait view == model && widgets.model_cell_1_2 != null
click widget family_cross 0.5 0.5
wait model_family == cross && stage == cross_weights
click widget model_cell_1_2 0.5 0.5
wait model_layer == 1 && head == 2 && view == stage && stage == cross_weights
# --- one decoder step: the target grows and the new token's row is pinned -------------------------
wait widgets.append_greedy != null && model_top_token != ""
let n0 model_n
let runs0 model_runs
let top0 model_top_token
move widget model_target 0.5 0.5
scroll -20
frames 2
click widget append_greedy 0.5 0.5
wait model_target != " die" && model_last_appended != ""
wait model_runs > $runs0 && updating == false && model_n > $n0
expect model_target ^= " die" && model_family == cross && stage == cross_weights && pinned_row >= 0 && pinned_row < $n0
expect stage_cols.size == $m && stage_rows.name == "target tokens"
EOF2
  [ -n "$shots" ] && printf 'screenshot %s\nframes 1\n' "$shots/seq2seq_cross_stage.png"
  echo 'click widget view_lines 0.5 0.5'
  echo 'wait view == lines && widgets.lines_query_0 != null && widgets.lines_key_0 != null'
  [ -n "$shots" ] && printf 'screenshot %s\nframes 1\n' "$shots/seq2seq_cross_lines.png"
  echo 'click widget view_model 0.5 0.5'
  echo 'wait view == model'
  echo 'frames 2'
  [ -n "$shots" ] && printf 'screenshot %s\nframes 1\n' "$shots/seq2seq_cross_model.png"
  echo quit
} >"$tmp/s2s.txt"
run_script s2s --fresh --model "$tmp/t5" --text "translate English to German: the cat sat on the mat" \
  --target " die" <"$tmp/s2s.txt"
# The same source and grown target through `attnviz dump --model` (checked against PyTorch by
# tests/reference/seq2seq_forward_test.py): the pinned row must be its last cross-attention row.
target="$(/usr/bin/python3 -c 'import json,sys; print([json.loads(x) for x in open(sys.argv[1]) if x.strip()][-1]["model_target"], end="")' "$log")"
"$bin" dump --model "$tmp/t5" --text "translate English to German: the cat sat on the mat" --target "$target" \
  --out "$tmp/dump" >/dev/null || fail "dump of the grown target failed"
/usr/bin/python3 - "$log" "$tmp/dump" <<'PY'
import json, sys
import numpy as np
states = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
last = states[-1]
# The pinned row wrote the appended token: the next-to-last row, labelled "→" + that token; the last
# row writes the word after it, not appended yet: "→ " + the next-token panel's pick + "?". Rows 0..
# read "<pad>", " die", the appended token.
appended = [s for s in states if s.get("pinned_row", -1) >= 0 and s.get("stage") == "cross_weights"]
assert appended, "no state with a pinned cross-attention row"
s = appended[0]
rows = s["stage_rows"]["labels"]
assert s["pinned_row"] == len(rows) - 2, (s["pinned_row"], rows)
assert len(rows) == s["model_n"] == 3, rows
top = s["model_top_token"]
assert top, s
assert rows[0] == "→ die" and rows[2] == "→ " + (top[1:] if len(top) > 1 and top[0] == " " else top) + "?", (rows, top)
assert rows[1] == "→ " + s["model_last_appended"].removeprefix(" "), (rows, s["model_last_appended"])
assert " cat" in s["stage_cols"]["labels"], s["stage_cols"]["labels"]
ref = np.load(sys.argv[2] + "/decoder_layer1_cross_weights_h2.npy")  # layer 1, head 2: what is on screen
assert ref.shape == (len(rows), len(s["stage_cols"]["labels"])), ref.shape
got = np.array(s["pinned_values"])
assert np.allclose(got, ref[-2], atol=1e-6), (got, ref[-2])
assert abs(got.sum() - 1) < 1e-5, got.sum()
print("pinned row", s["pinned_row"], "=", repr(rows[-2]), "of target", rows, "over source", s["stage_cols"]["labels"])
# The lines view drew a label per target token on the left and per source token on the right.
w = last["widgets"]
nq = len([k for k in w if k.startswith("lines_query_")])
nk = len([k for k in w if k.startswith("lines_key_")])
assert nq == last["model_n"] and nk == last["model_n_source"], (nq, nk, last["model_n"], last["model_n_source"])
PY
echo "seq2seq_test: OK"
