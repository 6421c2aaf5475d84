#!/usr/bin/env bash
# Drives the real window with xdotool and checks the app's own account of what happened (its
# --state-log: one JSON line per change), never timing guesses:
#   Right arrow          -> the stage cursor advances
#   click the T slider   -> the temperature and the weights' checksum change
#   Ctrl+E               -> a valid PNG exists at the logged export path
#   F12                  -> the whole window is saved as a PNG of the window's size
#   usage: bash tests/gui/interaction_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"

"$bin" --state-log "$log" >"$tmp/app.out" 2>&1 &
app_pid=$!
wait_for "the first trace" 's["weights_checksum"] != "" and not s["updating"] and "temperature" in s["widgets"]'

wid="$(xdotool search --sync --onlyvisible --name '^attnviz$' | head -n 1)"
[ -n "$wid" ] || fail "no window called attnviz"
eval "$(xdotool getwindowgeometry --shell "$wid")"  # X, Y, WIDTH, HEIGHT of the window
[ "$WIDTH" -eq 1600 ] && [ "$HEIGHT" -eq 1000 ] || echo "note: window is ${WIDTH}x${HEIGHT}"
# No window manager under Xvfb: give the window the focus (ImGui 1.86 reads the mouse only then)
# and park the pointer over the main view.
xdotool windowfocus --sync "$wid" || true
xdotool mousemove $((X + WIDTH / 2)) $((Y + HEIGHT / 2))
sleep 0.2

# --- Right arrow advances the stage -------------------------------------------------------------
stage0="$(field stage_index)"
xdotool key Right
wait_for "stage after Right" "s['stage_index'] == $stage0 + 1"
echo "Right: stage $stage0 -> $(field stage_index) ($(field stage))."

# --- End / Home jump, Down picks the next head --------------------------------------------------
xdotool key End
wait_for "last stage after End" "s['stage_index'] == s['stages'] - 1"
xdotool key Home
wait_for "first stage after Home" "s['stage_index'] == 0"
xdotool key Down
wait_for "head 1 after Down" "s['head'] == 1"
echo "End/Home/Down: OK"

# --- a click on the temperature slider changes T and the weights --------------------------------
sum0="$(field weights_checksum)"
t0="$(field temperature)"
read -r rx ry rw rh <<<"$(field widgets.temperature)"
cx=$(/usr/bin/python3 -c "print(int($X + $rx + 0.85 * $rw))")
cy=$(/usr/bin/python3 -c "print(int($Y + $ry + $rh / 2))")
xdotool mousemove "$cx" "$cy" click 1
wait_for "temperature change" "abs(s['temperature'] - $t0) > 1e-6"
wait_for "new weights" "s['weights_checksum'] not in ('', '$sum0') and not s['updating']"
echo "slider: T $t0 -> $(field temperature), weights $sum0 -> $(field weights_checksum)"

# --- Ctrl+E exports the current stage as PNG ----------------------------------------------------
xdotool mousemove $((X + WIDTH / 2)) $((Y + HEIGHT / 2))
sleep 0.2
xdotool key ctrl+e
wait_for "an export path" 's["export_path"] != ""'
png="$(field export_path)"
case "$png" in /*) ;; *) png="$tmp/$png" ;; esac
[ -s "$png" ] || fail "export path $png does not exist"
/usr/bin/python3 - "$png" "$here" <<'PY' || fail "exported file is not a valid PNG"
import sys
sys.path.insert(0, sys.argv[2])
from png_check import read_png
img = read_png(sys.argv[1])
assert img.shape[0] > 10 and img.shape[1] > 10, img.shape
print(f"export: {sys.argv[1]} is a {img.shape[1]}x{img.shape[0]} PNG")
PY

# --- F12 saves the whole window (a PNG of the window's size) ------------------------------------
xdotool key F12
wait_for "a window capture" 's["export_path"].split("/")[-1].startswith("window_")'
win="$(field export_path)"
case "$win" in /*) ;; *) win="$tmp/$win" ;; esac
[ -s "$win" ] || fail "window capture $win does not exist"
/usr/bin/python3 - "$win" "$here" "$WIDTH" "$HEIGHT" <<'PY' || fail "window capture is not a PNG of the window's size"
import sys
sys.path.insert(0, sys.argv[2])
from png_check import read_png
img = read_png(sys.argv[1])
w, h = int(sys.argv[3]), int(sys.argv[4])
assert (img.shape[1], img.shape[0]) == (w, h), (img.shape, w, h)
print(f"F12: {sys.argv[1]} is the {w}x{h} window")
PY

# --- File > Open (Ctrl+O): a bad path is refused in place, a good one opens; Ctrl+S saves it ---------
cp "$here/../../assets/scenes/chinese.json" "$tmp/scene.json"
n0="$(field n)"
xdotool key ctrl+o
sleep 0.5
xdotool type --delay 20 "$tmp/missing.json"
xdotool key Return
wait_for "the missing file to be reported" "s['status_is_error'] and 'missing.json' in s['status']"
sleep 0.3
xdotool key ctrl+a
xdotool type --delay 20 "$tmp/scene.json"
xdotool key Return
wait_for "the scene to open" "s['status'].startswith('Opened') and s.get('n', -1) != $n0 and not s['updating']"
xdotool key ctrl+s
wait_for "the scene to be saved" "s['status'].startswith('Saved scene to')"
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['attnviz_scene'] == 1 and d['config']['text']" \
  "$tmp/scene.json" || fail "the saved scene is not a valid scene file"
echo "open/save: OK ($(field status))"

kill "$app_pid"
wait "$app_pid" 2>/dev/null || true
app_pid=""
echo "interaction_test: OK"
