#!/usr/bin/env bash
# A real model in the GUI, driven through the app's own input path (app/script.hpp), on a tiny random
# GPT-2 checkpoint with GPT-2 tokenizer files made by tests/gui/make_tiny_model.py (a TEST model):
#   --model DIR --text TEXT          -> the model loads in the background, layer 0's stages on screen
#   PgDn, Down                       -> layer 1, head 1
#   Model view, click cell (2, 3)    -> layer 2, head 3, back on the stage view at `weights`
#   Append greedy                    -> the text grows by the predicted token and every layer reruns
#   Ctrl+M a truncated checkpoint    -> one error line in the status bar; the model on screen stays
#   --model BAD --screenshot         -> one line on stderr and exit code 1
#   usage: bash tests/gui/model_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"
/usr/bin/python3 "$here/make_tiny_model.py" "$tmp/tiny" "$tmp/bad" || fail "could not write the test model"
export TMPDIR_TEST="$tmp"

run_script model --fresh --model "$tmp/tiny" --text "the cat sat on the mat" <<'EOF'
wait model_active == true && model_runs >= 1 && updating == false && weights_checksum != ""
expect model_name ~ tiny && model_layer == 0 && model_loading == false && model_n > 1
# --- layer and head ------------------------------------------------------------------------------
let sum0 weights_checksum
key pagedown
wait model_layer == 1
key Down
wait head == 1 && weights_checksum != $sum0
# --- the model view: a click on layer 2, head 3 opens its weights --------------------------------
wait widgets.view_model != null
click widget view_model 0.5 0.5
wait view == model && widgets.model_cell_2_3 != null
click widget model_cell_2_3 0.5 0.5
wait model_layer == 2 && head == 3 && view == stage && stage == weights
# --- the next token: append the greedy one --------------------------------------------------------
wait widgets.append_greedy != null && model_top_token != ""
let text0 model_text
let runs0 model_runs
let top0 model_top_token
click widget append_greedy 0.5 0.5
wait model_text != $text0 && model_last_appended != ""
wait model_runs > $runs0 && updating == false
expect model_text ^= $text0 && model_last_appended == $top0
# --- a hostile folder: one line, the model on screen stays ---------------------------------------
let name0 model_name
let text1 model_text
key ctrl+m
wait text_input_active == true
type ${TMPDIR_TEST}/bad
key Return
wait status_is_error == true && status ~ model.safetensors && model_loading == false
expect model_active == true && model_name == $name0 && model_layer == 2 && stage == weights
expect model_text == $text1 && status ~ truncated
quit
EOF

# The same folder from the command line: one line on stderr, exit code 1, no window left behind.
set +e
timeout 120 "$bin" --fresh --model "$tmp/bad" --screenshot "$tmp/bad.png" >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat "$tmp/bad.err" >&2; fail "--model on a truncated checkpoint exited $rc, expected 1"; }
[ "$(wc -l <"$tmp/bad.err")" -eq 1 ] || { cat "$tmp/bad.err" >&2; fail "expected one error line"; }
grep -q "model.safetensors" "$tmp/bad.err" || fail "the error line does not name the file: $(cat "$tmp/bad.err")"
[ ! -e "$tmp/bad.png" ] || fail "a screenshot was written for a model that did not load"
echo "PASS"
