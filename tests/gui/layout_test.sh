#!/usr/bin/env bash
# Layout that holds at projector sizes: the stage view with a pinned row (heatmap, colour bar, bar
# chart, Q row / Kᵀ column), the heads grid, the softmax-vs-linear view and every lab (each alone
# over the main view), at 1280x720, 1600x1000 and 1920x1080, UI scale 1.0, 1.5 and 2.0. Checked from
# the app's own layout records (state log "layout": every labelled box a view drew -- titles, axis
# titles, heatmap images with their column labels, colour-bar ticks and captions, chart ticks, header
# rows -- with the region and the window it belongs to), not from pixels: no two boxes of one window
# overlap and none sticks out of its region. A view too small for readable pictures scrolls (records
# below the fold still count; a lab may not draw what it has scrolled away). Screenshots of every
# combination are left in $ATTNVIZ_LAYOUT_SHOTS when set (to look at them).
#   usage: bash tests/gui/layout_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"
shots="${ATTNVIZ_LAYOUT_SHOTS:-$tmp}"
mkdir -p "$shots"

# One app run walks the nine combinations: the script resizes the window and sets the UI scale
# (as a user would, with the window's corner and View > UI scale), waits for the app to report both,
# then shows each main view in turn (clicking its button; the pointer then rests on the status bar,
# so no tooltip covers the view) and lets the layout settle. The state
# log's last line for each (size, scale, view) is the layout it settled on. Screenshots are taken
# only when $ATTNVIZ_LAYOUT_SHOTS asks for them (27 PNGs are most of this test's CPU time).
views="stage heads compare"
labs="positional_encoding scoring temperature softmax_vs_linear size designed_heads training"
script="$tmp/layout_steps.txt"
echo 'wait weights_checksum != "" && updating == false && pinned_row == 3' >"$script"
for size in 1280x720 1600x1000 1920x1080; do
  for scale in 1.0 1.5 2.0; do
    w="${size%x*}"; h="${size#*x}"
    printf 'window %s %s\nui_scale %s\nwait window_w == %s && window_h == %s && ui_scale == %s\n' \
      "$w" "$h" "$scale" "$w" "$h" "$scale" >>"$script"
    for view in $views; do
      cat >>"$script" <<EOF2
click widget view_$view 0.5 0.5
wait view == $view && updating == false
move 5 $((h - 5))
frames 3
EOF2
      [ -n "${ATTNVIZ_LAYOUT_SHOTS:-}" ] && echo "screenshot $shots/layout_${size}_${scale}_$view.png" >>"$script"
      echo "frames 2" >>"$script"
    done
    # Each lab alone over the main view (a lab window is placed again when the window or the scale
    # changes), checked against its own boxes only.
    for lab in $labs; do
      printf 'lab %s\nwait labs ~ %s\nframes 2\n' "$lab" "$lab" >>"$script"
      [ -n "${ATTNVIZ_LAYOUT_SHOTS:-}" ] && echo "screenshot $shots/layout_${size}_${scale}_lab_$lab.png" >>"$script"
      printf 'lab -%s\nwait labs == []\n' "$lab" >>"$script"
    done
  done
done
echo quit >>"$script"
run_script layout --fresh --size 1280x720 --stage weights --pin 3 <"$script"

/usr/bin/python3 - "$log" "$views" "$labs" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
views, labs = sys.argv[2].split(), sys.argv[3].split()
failures = []
for size in ("1280x720", "1600x1000", "1920x1080"):
    w, h = (int(v) for v in size.split("x"))
    for scale in (1.0, 1.5, 2.0):
        # (a main view with no lab open, then each lab alone: its own window's boxes)
        for what in [("view", v) for v in views] + [("lab", l) for l in labs]:
            if what[0] == "view":
                mine = [l for l in lines if (l.get("window_w"), l.get("window_h"), l.get("ui_scale"), l.get("view"),
                                             l.get("labs")) == (w, h, scale, what[1], [])]
                group, least = "main", 4
            else:
                mine = [l for l in lines if (l.get("window_w"), l.get("window_h"), l.get("ui_scale"),
                                             l.get("labs")) == (w, h, scale, [what[1]])]
                group, least = what[1], 0  # (a lab may scroll its pictures out of view)
            where = f"{size} x{scale} {what[0]} {what[1]}"
            if not mine:
                failures.append(f"{where}: the state log never reported this size, scale and view")
                continue
            boxes = [b for b in mine[-1].get("layout", []) if b.get("group") == group]
            if len(boxes) < least:
                failures.append(f"{where}: only {len(boxes)} layout records: {boxes}")
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
                failures.append(f"{where}: " + "; ".join(bad))
            else:
                print(f"layout {where}: {len(boxes)} boxes, no overlap, none clipped")
assert not failures, "\n".join(failures)
PY
echo "layout_test: OK"
