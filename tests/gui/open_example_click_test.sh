#!/usr/bin/env bash
# File ▸ Open scene on a bare X server (no desktop chooser: the app's own path popup): a click on an
# example scene opens it, twice in a row. (A Selectable closed the popup before
# its path was used: the click opened nothing.)
#   usage: bash tests/gui/open_example_click_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"

run_script open_click --fresh <<'EOF2'
wait weights_checksum != "" && updating == false
key ctrl+o
wait widgets.open_example_causal_decoder != null
click widget open_example_causal_decoder 0.3 0.5
wait scene_path ~ causal_decoder.json && status ^= Opened && updating == false timeout 20
# Again from the popup, now with a recent file listed above the examples.
key ctrl+o
wait widgets.open_example_induction_heads != null
click widget open_example_induction_heads 0.3 0.5
wait scene_path ~ induction_heads.json && status ^= Opened && updating == false timeout 20
quit
EOF2
echo "open_example_click_test: OK"
