#!/usr/bin/env bash
# A value typed into a slider (Tab or Ctrl+click turns a slider into a text field) that the core
# refuses is not applied and the core's own message stays under the slider; the next valid value is
# applied and clears it. (Issue 10: "typing 0 or −1 into the temperature slider does nothing, with no
# message".) Also: the colour scale mode is in the state log ("auto" at start).
#   usage: bash tests/gui/refused_value_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"

run_script refused --fresh <<'EOF2'
wait weights_checksum != "" && updating == false && widgets.temperature != null
expect scale_mode == auto
let t0 temperature
let sum0 weights_checksum
# Focus the slider, then Tab back onto it: a tabbed-into slider is a text field.
click widget temperature 0.5 0.5
frames 2
key shift+tab
frames 2
key tab
wait text_input_active == true
key ctrl+a
type -1
key Return
wait refused.temperature ~ must be > 0
expect temperature == $t0
frames 3
expect weights_checksum == $sum0
# A valid value typed next is applied and the message goes.
click widget temperature 0.5 0.5
frames 2
key shift+tab
frames 2
key tab
wait text_input_active == true
key ctrl+a
type 0.25
key Return
wait temperature == 0.25 && updating == false
expect refused == {}
quit
EOF2
echo "refused_value_test: OK"
