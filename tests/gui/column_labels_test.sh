#!/usr/bin/env bash
# Crowded column labels turn vertical (and take the small font when that labels every column); a
# label of one character ("a", ",", ".") stands upright instead, in the regular font when its column
# holds it that way, else the small one: a rotated punctuation mark is hard to read. On a 43-token
# text of words and punctuation at 1600x1000 (state: labels.heatmap.upright, .upright_small).
#   usage: bash tests/gui/column_labels_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"
text="the cat , a dog . it sat ; a hat ! so a b c , d . e ; f ! g ? h , i . j ; k ! l ? m , n . o the end ."
shots="${ATTNVIZ_SHOTS:-}"
{
  echo 'wait weights_checksum != "" && updating == false && n == 43 && labels.heatmap.shown > 0'
  echo 'move 5 990'
  echo 'frames 3'
  [ -n "$shots" ] && printf 'screenshot %s\nframes 1\n' "$shots/column_labels_43.png"
  echo quit
} >"$tmp/labels.txt"
run_script labels --fresh --size 1600x1000 --stage weights --set "text=$text" <"$tmp/labels.txt"
/usr/bin/python3 - "$log" <<'PY'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
cols = s["stage_cols"]["labels"]
singles = [c for c in cols if len(c.strip(" ")) == 1]
l = s["labels"]["heatmap"]
print("columns", len(cols), "of one character", len(singles), "labels", l)
assert len(cols) == 43 and l["stride"] == 1 and l["cut"] == 0, l
assert l["shown"] == 2 * len(cols), l  # every row and every column labelled
# Every one-character column stands upright, most in the regular font (only a wide letter such as
# "m" needs the small one in a 14 px column).
assert l["upright"] + l["upright_small"] == len(singles), (l, singles)
assert l["upright"] >= len(singles) - 3, l
PY
echo "column_labels_test: OK"
