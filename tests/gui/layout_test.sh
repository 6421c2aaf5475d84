#!/usr/bin/env bash
# Layout that holds at projector sizes: the stage view with a pinned row (its bar chart and the Q row /
# Kᵀ column titles) at 1280x720, 1600x1000 and 1920x1080, UI scale 1.0, 1.5 and 2.0. Checked from the
# app's own layout records (state log "layout": every labelled box a view drew, with the region it
# belongs to), not from pixels: no two boxes overlap and none sticks out of its region. Screenshots
# of every combination are left in $ATTNVIZ_LAYOUT_SHOTS when set (to look at them).
#   usage: bash tests/gui/layout_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"
shots="${ATTNVIZ_LAYOUT_SHOTS:-$tmp}"
mkdir -p "$shots"

for size in 1280x720 1600x1000 1920x1080; do
  for scale in 1.0 1.5 2.0; do
    run_script "layout_${size}_${scale}" --fresh --size "$size" --ui-scale "$scale" --stage weights --pin 3 <<EOF2
wait weights_checksum != "" && updating == false && pinned_row == 3
frames 3
screenshot $shots/layout_${size}_${scale}.png
frames 2
quit
EOF2
    /usr/bin/python3 - "$log" "$size" "$scale" <<'PY'
import json, sys
log, size, scale = sys.argv[1:]
lines = [json.loads(l) for l in open(log) if l.strip()]
boxes = lines[-1].get("layout", [])
assert len(boxes) >= 2, f"{size} x{scale}: only {len(boxes)} layout records: {boxes}"
bad = []
for b in boxes:
    x, y, w, h = b["box"]
    c0, c1 = b["clip"]
    if x < c0 - 0.5 or x + w > c1 + 0.5:
        bad.append(f"{b['id']} at x {x:.0f}..{x + w:.0f} outside its region {c0:.0f}..{c1:.0f}")
for i, a in enumerate(boxes):
    for b in boxes[i + 1:]:
        ax, ay, aw, ah = a["box"]
        bx, by, bw, bh = b["box"]
        if ax < bx + bw - 0.5 and bx < ax + aw - 0.5 and ay < by + bh - 0.5 and by < ay + ah - 0.5:
            bad.append(f"{a['id']} overlaps {b['id']}")
assert not bad, f"{size} x{scale}: " + "; ".join(bad)
print(f"layout {size} x{scale}: {len(boxes)} boxes, no overlap, none clipped")
PY
  done
done
echo "layout_test: OK"
