#!/usr/bin/env bash
# Layout that holds at projector sizes: the stage view with a pinned row (heatmap, colour bar, bar
# chart, Q row / Kᵀ column), the heads grid, the softmax-vs-linear view, every lab (each alone over
# the main view) and, with a tiny test checkpoint open, the model view, at 1280x720, 1600x1000 and
# 1920x1080, UI scale 1.0, 1.5 and 2.0. Checked from the app's own layout records (state log
# "layout": every labelled box a view drew -- titles, axis titles, heatmap images with their column
# labels, colour-bar ticks and captions, chart ticks, header rows -- with the region and the window it
# belongs to), not from pixels: no two boxes of one window overlap and none sticks out of its region.
# A view too small for readable pictures scrolls (records below the fold still count; a lab may not
# draw what it has scrolled away). Screenshots of every combination are left in
# $ATTNVIZ_LAYOUT_SHOTS when set (to look at them).
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
# only when $ATTNVIZ_LAYOUT_SHOTS asks for them (the PNGs would be most of this test's CPU time).
views="stage heads compare"
labs="positional_encoding scoring temperature softmax_vs_linear size masks designed_heads training"
# resize_steps W H SCALE: the steps that give the window that size and scale and wait until the app
# reports both.
resize_steps() {
  printf 'window %s %s\nui_scale %s\nwait window_w == %s && window_h == %s && ui_scale == %s\n' "$1" "$2" "$3" "$1" "$2" "$3"
}
script="$tmp/layout_steps.txt"
echo 'wait weights_checksum != "" && updating == false && pinned_row == 3' >"$script"
for size in 1280x720 1600x1000 1920x1080; do
  for scale in 1.0 1.5 2.0; do
    w="${size%x*}"; h="${size#*x}"
    resize_steps "$w" "$h" "$scale" >>"$script"
    for view in $views; do
      cat >>"$script" <<EOF2
click widget view_$view 0.5 0.5
wait view == $view && updating == false
EOF2
      # (the comparison is computed in the background the first time: wait until it is drawn)
      [ "$view" = compare ] && echo "wait widgets.cmp_soft != null" >>"$script"
      printf 'move 5 %s\nframes 2\n' "$((h - 5))" >>"$script"
      [ -n "${ATTNVIZ_LAYOUT_SHOTS:-}" ] && printf 'screenshot %s\nframes 1\n' "$shots/layout_${size}_${scale}_$view.png" >>"$script"
    done
    # Each lab alone over the main view (a lab window is placed again when the window or the scale
    # changes), checked against its own boxes only: the previous one closes as the next one opens.
    prev=""
    for lab in $labs; do
      [ -n "$prev" ] && echo "lab -$prev" >>"$script"
      printf 'lab %s\nwait labs == ["%s"]\nframes 1\n' "$lab" "$lab" >>"$script"
      [ -n "${ATTNVIZ_LAYOUT_SHOTS:-}" ] && printf 'screenshot %s\nframes 1\n' "$shots/layout_${size}_${scale}_lab_$lab.png" >>"$script"
      prev="$lab"
    done
    printf 'lab -%s\nwait labs == []\n' "$prev" >>"$script"
  done
done
# A lab open while the window shrinks is placed inside the smaller window (the last 1280x720 x2.0
# line for that lab is this one).
printf 'lab scoring\nwait labs ~ scoring\nwindow 1280 720\nwait window_w == 1280 && window_h == 720\nframes 3\n' >>"$script"
echo quit >>"$script"
# (a causal mask: the colour bars show their "masked" legend too)
run_script layout --fresh --size 1280x720 --stage weights --pin 3 --set mask=causal <"$script"

cat >"$tmp/check_layout.py" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
views, labs = sys.argv[2].split(), sys.argv[3].split()
# What each view must have drawn (the header alone is not the view): its pictures and their scale.
required = {"stage": ["stage.image", "stage.colorbar.tick0", "pin.title"], "heads": ["head0.image", "heads.colorbar.tick0"],
            "compare": ["cmp_soft.image", "cmp_lin.image", "cmp_diff.image", "compare.weights_bar.tick0",
                        "compare.weights_bar.masked"],
            "model": ["model.title", "model.layer0"]}
failures = []
for size in ("1280x720", "1600x1000", "1920x1080"):
    w, h = (int(v) for v in size.split("x"))
    for scale in (1.0, 1.5, 2.0):
        # (a main view with no lab open, then each lab alone: its own window's boxes)
        for what in [("view", v) for v in views] + [("lab", l) for l in labs]:
            if what[0] == "view":
                mine = [l for l in lines if (l.get("window_w"), l.get("window_h"), l.get("ui_scale"), l.get("view"),
                                             l.get("labs")) == (w, h, scale, what[1], [])]
                group, need = "main", required[what[1]]
            else:
                mine = [l for l in lines if (l.get("window_w"), l.get("window_h"), l.get("ui_scale"),
                                             l.get("labs")) == (w, h, scale, [what[1]])]
                # (a lab may scroll its pictures out of view; its window is always there)
                group, need = what[1], [what[1] + ".window"]
            where = f"{size} x{scale} {what[0]} {what[1]}"
            if not mine:
                failures.append(f"{where}: the state log never reported this size, scale and view")
                continue
            boxes = [b for b in mine[-1].get("layout", []) if b.get("group") == group]
            missing = [i for i in need if i not in {b["id"] for b in boxes}]
            if missing:
                failures.append(f"{where}: nothing drawn for {missing}; records: {[b['id'] for b in boxes]}")
                continue
            bad = []
            for b in boxes:
                x, y, bw, bh = b["box"]
                c0, c1 = b["clip"]
                if x < c0 - 0.5 or x + bw > c1 + 0.5:
                    bad.append(f"{b['id']} at x {x:.0f}..{x + bw:.0f} outside its region {c0:.0f}..{c1:.0f}")
                if b["id"].endswith(".window") and (y < -0.5 or y + bh > h + 0.5):
                    bad.append(f"{b['id']} at y {y:.0f}..{y + bh:.0f} outside the app's window (0..{h})")
            # (a lab's window box holds its content boxes: only boxes of text and pictures may not meet)
            boxes = [b for b in boxes if not b["id"].endswith(".window")]
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
/usr/bin/python3 "$tmp/check_layout.py" "$log" "$views" "$labs"

# The model view of a (tiny, random: a TEST model) GPT-2 checkpoint, in a second run.
/usr/bin/python3 "$here/make_tiny_model.py" "$tmp/tiny" || fail "could not write the test model"
script="$tmp/layout_model_steps.txt"
echo 'wait model_active == true && model_runs >= 1 && updating == false && weights_checksum != ""' >"$script"
for size in 1280x720 1600x1000 1920x1080; do
  for scale in 1.0 1.5 2.0; do
    w="${size%x*}"; h="${size#*x}"
    resize_steps "$w" "$h" "$scale" >>"$script"
    cat >>"$script" <<EOF2
click widget view_model 0.5 0.5
wait view == model && updating == false
move 5 $((h - 5))
frames 2
EOF2
    [ -n "${ATTNVIZ_LAYOUT_SHOTS:-}" ] && printf 'screenshot %s\nframes 1\n' "$shots/layout_${size}_${scale}_model.png" >>"$script"
  done
done
echo quit >>"$script"
run_script layout_model --fresh --model "$tmp/tiny" --text "the cat sat on the mat" <"$script"
/usr/bin/python3 "$tmp/check_layout.py" "$log" model ""

# A projector (1280x720): at UI scale 1.5 in the normal layout the stage heatmap is on screen with its
# token labels whole (no "5 o…"); at UI scale 2 in presentation mode (F11) it takes at least half of
# the window's area, labels whole; the side panels fold (Ctrl+B, Ctrl+Alt+B) and come back. Measured
# from the heatmap's rectangle and label counts the app reports (state: widgets.heatmap, labels.heatmap).
run_script projector --fresh --size 1280x720 --stage weights --set mask=causal <<'EOF2'
wait weights_checksum != "" && updating == false
ui_scale 1.5
wait ui_scale == 1.5 && window_w == 1280 && window_h == 720
move 5 715
frames 3
key ctrl+b
wait show_controls == false
frames 2
key ctrl+b
wait show_controls == true
key ctrl+alt+b
wait show_explanation == false
frames 2
click widget show_explanation 0.5 0.5
wait show_explanation == true
move 5 715
frames 3
ui_scale 2
wait ui_scale == 2
key F11
wait presentation == true
move 5 715
frames 3
click widget exit_presentation 0.5 0.5
wait presentation == false
key F11
wait presentation == true
move 5 715
frames 3
quit
EOF2
/usr/bin/python3 - "$log" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def last(cond):
    m = [l for l in lines if cond(l)]
    assert m, "no state line for this case"
    return m[-1]
def check(where, l, min_share):
    x, y, w, h = l["widgets"]["heatmap"]
    W, H = l["window_w"], l["window_h"]
    lab = l["labels"]["heatmap"]
    share = w * h / (W * H)
    print(f"{where}: heatmap {w:.0f}x{h:.0f} at ({x:.0f}, {y:.0f}) = {share:.0%} of {W}x{H}; labels {lab}")
    assert x >= 0 and y >= 0 and x + w <= W + 0.5 and y + h <= H + 0.5, f"{where}: the heatmap is not all on screen"
    assert w >= 8 * 1.5 * 16 and h >= 8 * 1.5 * 16, f"{where}: the heatmap is {w:.0f}x{h:.0f} px, too small to read"
    assert share >= min_share, f"{where}: the heatmap takes {share:.0%} of the window, wanted >= {min_share:.0%}"
    assert lab["shown"] >= 16 and lab["cut"] == 0, f"{where}: labels {lab} (cut to fit: \"5 o…\")"
normal = last(lambda l: l.get("ui_scale") == 1.5 and not l.get("presentation") and l.get("show_controls")
              and l.get("show_explanation") and "heatmap" in l.get("widgets", {}))
check("1280x720 x1.5 normal", normal, 0.05)
folded = last(lambda l: l.get("ui_scale") == 1.5 and not l.get("show_controls") and "heatmap" in l.get("widgets", {}))
pres = last(lambda l: l.get("ui_scale") == 2 and l.get("presentation"))
check("1280x720 x2 presentation", pres, 0.5)
PY
echo "layout_test: OK"
