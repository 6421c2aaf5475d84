#!/usr/bin/env bash
# An encoder in the GUI: a tiny random BERT checkpoint (BertForMaskedLM names, WordPiece tokenizer.json;
# made by tests/gui/make_tiny_bert.py, a TEST model whose guesses are random), driven through the app's
# own input path (app/script.hpp):
#   --model DIR --text "the cat [MASK] on the [MASK]."  -> the Fill the mask panel ranks ten tokens for
#                                                         the first [MASK]; no Interventions view
#   the mask choice                                      -> the second [MASK] is ranked
#   text B                                               -> the pair [CLS] A [SEP] B [SEP] is run
#   Fill greedy                                          -> the chosen [MASK] is replaced by the top token
#   usage: bash tests/gui/fill_mask_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"
/usr/bin/python3 "$here/make_tiny_bert.py" "$tmp/bert" || fail "could not write the test model"
shots="${ATTNVIZ_SHOTS:-}"
{
  echo 'wait model_active == true && model_encoder == true && model_runs >= 1 && updating == false && model_top_token != ""'
  echo 'wait widgets.mask_choice != null && widgets.view_model != null'
  echo 'expect model_n == 9 && mask_choice == 0'
  echo 'let first model_top_token'
  [ -n "$shots" ] && printf 'screenshot %s\nframes 1\n' "$shots/fill_mask_first.png"
  # the second [MASK]: open the choice and click its second line
  echo 'let runs0 model_runs'
  echo 'click widget mask_choice 0.5 0.5'
  echo 'frames 3'
  echo 'click widget mask_choice 0.5 2.6'
  echo 'wait mask_choice == 1 && model_runs > $runs0 && updating == false'
  # a sentence pair
  echo 'let runs1 model_runs'
  echo 'click widget model_text_b 0.5 0.5'
  echo 'frames 2'
  echo 'type the dog sat down.'
  echo 'frames 2'
  echo 'click widget model_text 0.5 0.3'
  echo 'wait model_text_b == "the dog sat down." && model_n > 10 && updating == false'
  echo 'wait model_top_token != ""'
  [ -n "$shots" ] && printf 'move 5 990\nframes 3\nscreenshot %s\nframes 1\n' "$shots/fill_mask_pair.png"
  # fill the chosen (second) mask with the greedy token
  echo 'let top model_top_token'
  echo 'let runs2 model_runs'
  echo 'click widget append_greedy 0.5 0.5'
  echo 'wait model_last_appended != "" && model_runs > $runs2 && updating == false'
  echo 'expect model_text ^= "the cat [MASK] on the" && model_text_b == "the dog sat down."'
  echo quit
} >"$tmp/fill.txt"
run_script fill --fresh --model "$tmp/bert" --text "the cat [MASK] on the [MASK]." <"$tmp/fill.txt"
/usr/bin/python3 - "$log" <<'PY'
import json, sys
l = [json.loads(x) for x in open(sys.argv[1]) if x.strip()][-1]
assert l["model_encoder"] is True
assert "view_interventions" not in l["widgets"], "an encoder has no Interventions view"
assert len(l["next_tokens"]) == 10, len(l["next_tokens"])
assert len(l["mask_positions"]) == 1, l["mask_positions"]  # one [MASK] left after filling the other
assert "[MASK]" not in l["model_text"][len("the cat [MASK] on the"):], l["model_text"]
assert abs(sum(r["p_sample"] for r in l["next_tokens"][: l["sample_kept"]]) - 1) < 1e-4 or l["sample_kept"] > 10
print("fill the mask:", repr(l["model_text"]), "|", repr(l["model_text_b"]), "last:", repr(l["model_last_appended"]))
PY
echo "fill_mask_test: OK"
