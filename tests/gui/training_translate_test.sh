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
screenshot $shots/translate_start.png
frames 2
wait training.figure_steps.alignment > 0 timeout 400
frames 2
screenshot $shots/translate_aligned.png
frames 2
expect training.error == "" && training.encoder_layers == 1 && training.figures.alignment >= 0.8
expect training.probe_rows ~ </s>
SCRIPT
case " $(field training.probe_cols) " in *"<pad>"*|*"</s>"*) fail "the source axis shows padding or </s>";; esac
[ "$(field training.cross_attention)" = "True" ] || fail "the grid does not show cross-attention"
echo "training_translate_test: OK (alignment $(field training.figures.alignment) from step $(field training.figure_steps.alignment))"
