#!/usr/bin/env bash
# The Training lab's translation preset: picked from the preset menu it trains an encoder-decoder
# (encoder layers knob shown); the grid shows the decoder's cross-attention of the probe sentence, rows
# the target words being written and columns the source words (no padding); the alignment score rises
# to 0.8 and the status line says when. Screenshots at the start and at alignment (ATTNVIZ_SHOTS=DIR
# keeps them).
#   usage: bash tests/gui/training_translate_test.sh path/to/attnviz   (starts Xvfb itself)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"  # bin, here, tmp (removed on exit), XDG_CONFIG_HOME inside tmp; fail
cd "$tmp"
shots="${ATTNVIZ_SHOTS:-$tmp}"

run_script translate --fresh --lab training --size 1600x1000 <<SCRIPT
wait widgets.training_preset != null && training.status == idle
click widget training_preset 0.5 0.5
wait widgets.training_preset_translate != null
click widget training_preset_translate 0.5 0.5
wait training.preset == translate && training.task == translate
click widget training_train 0.5 0.5
wait training.status == running && training.evals >= 1 && training.cross_attention == true
# (a new run opens on the last decoder layer's mean of heads, large: what the alignment score reads)
wait training.focus == "1/4"
screenshot $shots/translate_start.png
frames 2
wait training.figure_steps.alignment > 0 timeout 400
frames 2
screenshot $shots/translate_aligned.png
frames 2
expect training.error == "" && training.encoder_layers == 1 && training.figures.alignment > 0.5
expect training.probe_rows ~ </s>
click widget training_head_1_mean 0.5 0.5
wait training.focus == ""
frames 2
screenshot $shots/translate_grid.png
frames 2
SCRIPT
# The source axis: the probe sentence's 9 words (3 adjectives), no padding, no </s>.
/usr/bin/python3 - "$log" <<'PY' || fail "the source axis is not the probe sentence's words"
import json, sys
s = json.loads([l for l in open(sys.argv[1]) if l.strip()][-1])
cols = s["training"]["probe_cols"]
sys.exit(0 if len(cols) == 9 and "<pad>" not in cols and "</s>" not in cols else 1)
PY
echo "training_translate_test: OK (alignment $(field training.figures.alignment) from step $(field training.figure_steps.alignment))"
