#!/usr/bin/env bash
# Every teaching lab opens and draws: in one app run the script opens each lab (as Labs > NAME does;
# NAME:TAB also selects a tab) alone over the main view and takes a screenshot, which must show many
# colours (heatmaps, plots) and differ clearly from the main view without a lab. An unknown lab name is
# reported in the status line, not a crash. A second run opens a lab from the command line by its
# alias (`--lab pe`), the path a learner's shell takes.
#   usage: bash tests/gui/labs_test.sh path/to/attnviz   (starts Xvfb itself when DISPLAY is unset)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"  # bin, here, tmp (removed on exit), XDG_CONFIG_HOME inside tmp; fail
cd "$tmp"

# For each screenshot: its size, its number of distinct colours and the fraction of pixels that
# differ from the first PNG given (the main view; decoded once). One Python run for all of them
# (tests/gui/png_check.py reads them).
cat > "$tmp/png_stats.py" <<EOF
import sys
import numpy as np
sys.path.insert(0, "$here")
from png_check import read_png

base = read_png(sys.argv[1])[:, :, :3].astype(np.int64)
for path in sys.argv[2:]:
    img = read_png(path)[:, :, :3].astype(np.int64)
    colours = len(np.unique(img.reshape(-1, 3) @ np.array([65536, 256, 1])))
    diff = float(np.mean(np.any(img != base, axis=2))) if base.shape == img.shape else 1.0
    print(path, img.shape[1], img.shape[0], colours, "%.3f" % diff)
EOF

labs=(positional_encoding positional_encoding:3 scoring scoring:2 temperature temperature:1
      softmax_vs_linear softmax_vs_linear:1 size masks designed_heads)
script="$tmp/labs_steps.txt"
{
  echo 'wait weights_checksum != "" && updating == false'
  echo 'move 5 715'  # the pointer rests on the status bar: no hover, no tooltip
  echo 'frames 3'
  echo "screenshot $tmp/base.png"
  for lab in "${labs[@]}"; do
    name="${lab%%:*}"
    echo "lab $lab"
    echo "wait labs ~ $name"
    echo 'frames 6'
    echo "screenshot $tmp/lab_${lab//:/_}.png"
    echo "lab -$name"
    echo 'wait labs == []'
  done
  # An unknown name: one status line, and the app goes on.
  echo 'lab no_such_lab'
  echo "wait status ~ \"no lab 'no_such_lab'\" && status_is_error == true"
  echo 'frames 2'
  echo 'quit'
} >"$script"
# (designed heads: the designed-heads lab then shows the pattern each head was built for)
run_script labs --fresh --size 1280x720 --set preset=previous_token <"$script"

pngs=()
for lab in "${labs[@]}"; do
  png="$tmp/lab_${lab//:/_}.png"
  [ -s "$png" ] || fail "lab $lab: no screenshot"
  pngs+=("$png")
done
i=0
while read -r png w h colours diff; do
  lab="${labs[$i]}"; i=$((i + 1))
  [ "$w" -gt 0 ] && [ "$h" -gt 0 ] || fail "lab $lab: empty image"
  [ "$colours" -ge 200 ] || fail "lab $lab: only $colours distinct colours (blank window?)"
  python3 -c "import sys; sys.exit(0 if $diff >= 0.25 else 1)" \
    || fail "lab $lab: only $diff of the pixels differ from the main view (lab window not drawn?)"
  echo "  $lab: ${w}x${h}, $colours colours, $diff differs from the main view"
  if [ -n "${ATTNVIZ_LAB_SHOTS:-}" ]; then cp "$png" "$ATTNVIZ_LAB_SHOTS/"; fi
done < <(/usr/bin/python3 "$tmp/png_stats.py" "$tmp/base.png" "${pngs[@]}")
[ "$i" -eq "${#labs[@]}" ] || fail "PNG statistics for $i of ${#labs[@]} labs (tests/gui/png_check.py failed?)"

# From the command line, by alias: the lab is open when the frame is taken.
: >"$log"
timeout 150 "$bin" --lab pe --state-log "$log" --screenshot "$tmp/alias.png" >/dev/null || fail "--lab pe (alias) failed"
[ -s "$tmp/alias.png" ] || fail "--lab pe: no screenshot"
/usr/bin/python3 -c 'import json, sys; s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
sys.exit(s["labs"] != ["positional_encoding"])' "$log" || fail "--lab pe did not open the positional-encoding lab"
echo "labs_test: OK"
