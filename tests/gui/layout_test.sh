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

# One app run walks the nine combinations: the script resizes the window and sets the UI scale
# (as a user would, with the window's corner and View > UI scale), waits for the app to report both,
# lets the layout settle and takes a screenshot. The state log's last line for each combination is
# the layout it settled on.
script="$tmp/layout_steps.txt"
echo 'wait weights_checksum != "" && updating == false && pinned_row == 3' >"$script"
for size in 1280x720 1600x1000 1920x1080; do
  for scale in 1.0 1.5 2.0; do
    w="${size%x*}"; h="${size#*x}"
    cat >>"$script" <<EOF2
window $w $h
ui_scale $scale
wait window_w == $w && window_h == $h && ui_scale == $scale && updating == false
frames 3
screenshot $shots/layout_${size}_${scale}.png
frames 2
EOF2
  done
done
echo quit >>"$script"
run_script layout --fresh --size 1280x720 --stage weights --pin 3 <"$script"

/usr/bin/python3 - "$log" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
failures = []
for size in ("1280x720", "1600x1000", "1920x1080"):
    w, h = (int(v) for v in size.split("x"))
    for scale in (1.0, 1.5, 2.0):
        mine = [l for l in lines if (l.get("window_w"), l.get("window_h"), l.get("ui_scale")) == (w, h, scale)]
        if not mine:
            failures.append(f"{size} x{scale}: the state log never reported this size and scale")
            continue
        boxes = mine[-1].get("layout", [])
        if len(boxes) < 2:
            failures.append(f"{size} x{scale}: only {len(boxes)} layout records: {boxes}")
            continue
        bad = []
        for b in boxes:
            x, y, bw, bh = b["box"]
            c0, c1 = b["clip"]
            if x < c0 - 0.5 or x + bw > c1 + 0.5:
                bad.append(f"{b['id']} at x {x:.0f}..{x + bw:.0f} outside its region {c0:.0f}..{c1:.0f}")
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                ax, ay, aw, ah = a["box"]
                bx, by, bw2, bh2 = b["box"]
                if ax < bx + bw2 - 0.5 and bx < ax + aw - 0.5 and ay < by + bh2 - 0.5 and by < ay + ah - 0.5:
                    bad.append(f"{a['id']} overlaps {b['id']}")
        if bad:
            failures.append(f"{size} x{scale}: " + "; ".join(bad))
        else:
            print(f"layout {size} x{scale}: {len(boxes)} boxes, no overlap, none clipped")
assert not failures, "\n".join(failures)
PY
for size in 1280x720 1600x1000 1920x1080; do
  for scale in 1.0 1.5 2.0; do
    [ -s "$shots/layout_${size}_${scale}.png" ] || fail "no screenshot at $size x$scale"
  done
done
echo "layout_test: OK"
