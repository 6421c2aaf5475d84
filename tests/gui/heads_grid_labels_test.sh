#!/usr/bin/env bash
# The heads grid on a 20-token text: every token label it draws is whole (thinned to every other
# token when the tiles are small, but never "2 br…" or "10 t…"), at UI scale 1 (at 1.5 the tiles
# leave labels out, and the tooltip names the cell), and every head
# carries its type on this text (state: labels.head_tile_H, head_labels).
#   usage: bash tests/gui/heads_grid_labels_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"
text="the quick brown fox jumps over the lazy dog and then the quick brown fox runs to the lazy dog"
shots="${ATTNVIZ_SHOTS:-}"
script="$tmp/grid_steps.txt"
cat >"$script" <<'EOF2'
wait weights_checksum != "" && updating == false && n == 20
click widget view_heads 0.5 0.5
wait view == heads && updating == false
move 5 990
frames 3
EOF2
[ -n "$shots" ] && printf 'screenshot %s\nframes 1\n' "$shots/heads_grid_20.png" >>"$script"
printf 'ui_scale 1.5\nwait ui_scale == 1.5\nmove 5 990\nframes 3\n' >>"$script"
[ -n "$shots" ] && printf 'screenshot %s\nframes 1\n' "$shots/heads_grid_20_x1.5.png" >>"$script"
echo quit >>"$script"
run_script grid --fresh --size 1600x1000 --stage weights --set mask=causal --set "text=$text" <"$script"
/usr/bin/python3 - "$log" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for scale in (1.0, 1.5):
    mine = [l for l in lines if l.get("view") == "heads" and l.get("ui_scale") == scale and "head_tile_0" in l.get("labels", {})]
    assert mine, f"x{scale}: the heads grid never reported its labels"
    l = mine[-1]
    heads = l["head_labels"]
    assert len(heads) == 4 and all(h["short"] for h in heads), heads
    for h in range(4):
        s = l["labels"][f"head_tile_{h}"]
        print(f"x{scale} head {h}: {heads[h]['short']} {heads[h]['score']:.2f}; labels {s}")
        assert s["cut"] == 0, f"x{scale} head {h}: {s['cut']} of {s['shown']} token labels cut to fit"
        # (at x1.5 the tiles may be too small for labels at all: then none are drawn, none cut)
        if scale == 1.0:
            assert s["shown"] >= 20, f"x{scale} head {h}: only {s['shown']} labels for 20 rows and 20 columns"
PY
echo "heads_grid_labels_test: OK"
