#!/usr/bin/env bash
# An encoder–decoder folder (a tiny random t5, made by tests/reference/seq2seq_forward_test.py's
# make_t5) opened in the GUI: the GUI does not show encoder–decoders yet, so Ctrl+M on it is one
# error line in the status bar naming the encoder–decoder, and the decoder-only model on screen stays.
#   usage: bash tests/gui/seq2seq_refused_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
export TMPDIR_TEST="$tmp"

/usr/bin/python3 "$here/make_tiny_model.py" "$tmp/tiny" "$tmp/bad" || fail "could not write the test model"
/usr/bin/python3 - "$here/../reference" "$tmp/t5" <<'PY' || fail "could not write the t5 folder"
import sys, torch
sys.path.insert(0, sys.argv[1])
import seq2seq_forward_test as t
cfg, W = t.make_t5(torch.Generator().manual_seed(3), 300, gated=False, tied=True)
t.write_model(sys.argv[2], cfg, W)
PY

run_script seq2seq --fresh --model "$tmp/tiny" --text "the cat sat on the mat" <<'EOF'
wait model_active == true && model_runs >= 1 && updating == false && weights_checksum != ""
let name0 model_name
key ctrl+m
wait text_input_active == true
type ${TMPDIR_TEST}/t5
key Return
wait status_is_error == true && status ~ encoder–decoder && model_loading == false
expect model_active == true && model_name == $name0 && status ~ t5
screenshot ${TMPDIR_TEST}/refused.png
frames 3
quit
EOF
[ -s "$tmp/refused.png" ] || fail "no screenshot"
if [ -n "${SEQ2SEQ_SCREENSHOT:-}" ]; then cp "$tmp/refused.png" "$SEQ2SEQ_SCREENSHOT"; fi  # to look at it
echo "PASS"
