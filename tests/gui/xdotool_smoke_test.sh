#!/usr/bin/env bash
# The one thing scripted input cannot show: real X events reach the app. A key pressed on the X
# server (xdotool) steps the stage, and a real mouse click on the temperature slider changes T.
# Every step waits on the app's own state log (no sleeps decide anything).
#   usage: bash tests/gui/xdotool_smoke_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
command -v xdotool >/dev/null || fail "xdotool is not installed (scripts/dev deps)"
cd "$tmp"

"$bin" --fresh --state-log "$log" >"$tmp/app.out" 2>&1 &
app_pid=$!
wait_for "the first trace" 's["weights_checksum"] != "" and not s["updating"] and "temperature" in s["widgets"]'

wid="$(xdotool search --sync --onlyvisible --name '^attnviz$' | head -n 1)"
[ -n "$wid" ] || fail "no window called attnviz"
eval "$(xdotool getwindowgeometry --shell "$wid")"  # X, Y, WIDTH, HEIGHT
# No window manager under Xvfb: give the window the focus (ImGui 1.86 reads the mouse only then).
xdotool windowfocus --sync "$wid"

xdotool key Right
wait_for "stage 1 after a real Right key" "s['stage_index'] == 1"

t0="$(field temperature)"
read -r rx ry rw rh <<<"$(field widgets.temperature)"
mx=$((rx + rw * 85 / 100)); my=$((ry + rh / 2))
xdotool mousemove --sync $((X + mx)) $((Y + my))
# ImGui must see the pointer over the slider in a frame before the button goes down.
wait_for "the pointer over the slider" "s['mouse'] == [$mx, $my]"
xdotool click 1
wait_for "a new temperature after a real click" "abs(s['temperature'] - $t0) > 1e-6"
echo "xdotool_smoke_test: OK (stage $(field stage_index), T $t0 -> $(field temperature))"
