#!/usr/bin/env bash
# Every teaching lab opens from the command line (`--lab NAME`, also NAME:TAB) and draws: the
# screenshot is written, shows many colours (heatmaps, plots) and differs clearly from the main view
# without the lab. An unknown lab name is reported in the status line, not a crash.
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

timeout 150 "$bin" --size 1280x720 --screenshot "$tmp/base.png" >/dev/null || fail "screenshot without a lab failed"

labs=(positional_encoding positional_encoding:3 scoring scoring:2 temperature temperature:1
      softmax_vs_linear softmax_vs_linear:1 size designed_heads)
pngs=()
for lab in "${labs[@]}"; do
  png="$tmp/lab_${lab//:/_}.png"
  extra=()
  [ "$lab" = designed_heads ] && extra=(--set preset=previous_token)
  timeout 170 "$bin" --size 1280x720 --lab "$lab" --screenshot "$png" --frames 6 "${extra[@]}" >/dev/null \
    || fail "--lab $lab: screenshot run failed"
  [ -s "$png" ] || fail "--lab $lab: no screenshot"
  pngs+=("$png")
done
i=0
while read -r png w h colours diff; do
  lab="${labs[$i]}"; i=$((i + 1))
  [ "$w" -gt 0 ] && [ "$h" -gt 0 ] || fail "--lab $lab: empty image"
  [ "$colours" -ge 200 ] || fail "--lab $lab: only $colours distinct colours (blank window?)"
  python3 -c "import sys; sys.exit(0 if $diff >= 0.25 else 1)" \
    || fail "--lab $lab: only $diff of the pixels differ from the main view (lab window not drawn?)"
  echo "  $lab: ${w}x${h}, $colours colours, $diff differs from the main view"
  if [ -n "${ATTNVIZ_LAB_SHOTS:-}" ]; then cp "$png" "$ATTNVIZ_LAB_SHOTS/"; fi
done < <(/usr/bin/python3 "$tmp/png_stats.py" "$tmp/base.png" "${pngs[@]}")
[ "$i" -eq "${#labs[@]}" ] || fail "PNG statistics for $i of ${#labs[@]} labs (tests/gui/png_check.py failed?)"

# Aliases work, and an unknown lab is a status message, not a crash.
timeout 150 "$bin" --lab pe --screenshot "$tmp/alias.png" >/dev/null || fail "--lab pe (alias) failed"
timeout 150 "$bin" --lab no_such_lab --screenshot "$tmp/unknown.png" >/dev/null \
  || fail "--lab no_such_lab must not fail the app"
[ -s "$tmp/unknown.png" ] || fail "--lab no_such_lab: no screenshot"
echo "labs_test: OK"
