#!/usr/bin/env bash
# The GUI keeps drawing while traces are recomputed. A script drags the temperature slider of a
# 512-token, d_model = 512, 8-head layer (every move asks for a new trace) and checks, from the app's
# own state, with counts and ordering only (no clock decides the verdict):
#   - frames kept coming while traces were being computed: most drag frames were drawn with a
#     computation under way (a GUI that computed on its own thread would never draw such a frame);
#   - while the button is still held, a new trace arrives and is shown (the old trace stayed on
#     screen and the UI kept answering meanwhile);
#   - after the drag the temperature moved and the final trace is on screen.
# Frame rates themselves are measured and reported by scripts/measure_frames.sh.
#   usage: bash tests/gui/responsiveness_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"

run_script responsiveness --fresh --stage weights --set length=512 --set d_model=512 --set heads=8 <<'EOF'
wait weights_checksum != "" && updating == false && n == 512 && widgets.temperature != null
let g0 generation
let t0 temperature
let sum0 weights_checksum
move widget temperature 0.1 0.5
down
mark
drag widget temperature 0.35 0.5 60
# Button still held, mouse still: the latest computation finishes and is shown.
wait generation > $g0
expect frames_updating >= 1
drag widget temperature 0.85 0.5 60
up
# Of ~120 drag frames most were drawn while a trace was computing (a new T every pixel).
expect frames_updating >= 30
wait updating == false && temperature != $t0 && weights_checksum != $sum0
quit
EOF
echo "responsiveness_test: OK"
