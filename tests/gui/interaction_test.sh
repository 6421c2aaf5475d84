#!/usr/bin/env bash
# Drives the app through its own input path with a script (app/script.hpp: keys, text and the mouse
# fed frame by frame, every step waiting on the app's own state, never on a clock) and checks:
#   Right / End / Home / Down      -> the stage cursor and the head move
#   a click on the T slider        -> the temperature and the weights' checksum change
#   Ctrl+E                         -> a valid PNG of the current stage at the logged export path
#   F12                            -> the whole window as a PNG of the window's size
#   Ctrl+O, a missing path, Return -> refused in place (one line), the path field keeps the keyboard
#                                     with its text selected, so the next path typed replaces it
#   Ctrl+O a cross-attention scene, then a self-attention one -> the second text's box closes again
#   Ctrl+S                         -> the scene is saved as a valid scene file
#   usage: bash tests/gui/interaction_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"
cp "$here/../../assets/scenes/chinese.json" "$tmp/scene.json"
cp "$here/../../assets/scenes/cross_attention.json" "$tmp/cross.json"
export TMPDIR_TEST="$tmp"

run_script interaction --fresh <<'EOF'
wait weights_checksum != "" && updating == false && widgets.temperature != null
# --- stepping ---------------------------------------------------------------------------------
key Right
wait stage_index == 1
key End
wait stage_index == 18
key Home
wait stage_index == 0
key Down
wait head == 1
# --- a click on the temperature slider --------------------------------------------------------
let sum0 weights_checksum
let t0 temperature
click widget temperature 0.85 0.5
wait temperature != $t0
wait weights_checksum != $sum0 && updating == false
# --- Ctrl+E: the current stage as a figure; F12: the window ------------------------------------
key ctrl+e
wait export_path ~ .png && status_is_error == false
key F12
wait export_path ~ window_
# --- Ctrl+O: a missing file is refused in place; the next path typed replaces it ----------------
key ctrl+o
wait text_input_active == true
type ${TMPDIR_TEST}/missing.json
key Return
wait status_is_error == true && status ~ missing.json
wait text_input_active == true
type ${TMPDIR_TEST}/cross.json
key Return
wait status ^= Opened && source_text != "" && updating == false
expect cross_attention_box == true
# --- a self-attention scene after a cross-attention one: the second text's box is closed --------
key ctrl+o
wait text_input_active == true
type ${TMPDIR_TEST}/scene.json
key Return
wait status ^= Opened && scene_path ~ scene.json && updating == false
expect cross_attention_box == false && source_text == ""
# --- Ctrl+S saves the scene it came from --------------------------------------------------------
key ctrl+s
wait status ^= "Saved scene to"
quit
EOF

# The files the script made are real.
/usr/bin/python3 - "$tmp" "$here" <<'PY' || fail "exported files"
import glob, json, sys
sys.path.insert(0, sys.argv[2])
from png_check import read_png
tmp = sys.argv[1]
figs = [p for p in glob.glob(tmp + "/attnviz-exports/*.png") if "/window_" not in p]
wins = glob.glob(tmp + "/attnviz-exports/window_*.png")
assert len(figs) == 1, figs
assert len(wins) == 1, wins
img = read_png(figs[0])
assert img.shape[0] > 10 and img.shape[1] > 10, img.shape
win = read_png(wins[0])
assert (win.shape[1], win.shape[0]) == (1600, 1000), win.shape
d = json.load(open(tmp + "/scene.json"))
assert d["attnviz_scene"] == 1 and d["config"]["text"], d
print(f"export: {figs[0]} {img.shape[1]}x{img.shape[0]}; F12: {wins[0]} 1600x1000; scene saved")
PY
echo "interaction_test: OK"
