#!/usr/bin/env bash
# Issue 24, defects 3 and 4. The induction scene lands where its note points (layer 1, head 0, the
# weights) once its model has loaded, and the note stays shown over the model. Back to the single
# layer leaves the scene too: the title no longer names the trained model over random weights, and
# neither after a restart (the workspace keeps the new title).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
src="$(cd "$here/../.." && pwd)"
title="Induction heads in a model trained here"

run_script land --scene "$src/assets/scenes/induction_heads.json" <<SCRIPT
wait model_active == true && model_runs >= 1 && updating == false && weights_checksum != ""
expect model_layer == 1 && head == 0 && stage == weights && note_shown == true && scene_title == "$title"
# File ▸ Back to the single layer
click widget menu_File 0.5 0.5
frames 3
wait widgets.menu_single_layer != null
click widget menu_single_layer 0.5 0.5
wait model_active == false && weights_checksum != "" && updating == false
expect scene_title != "$title" && note_shown == false && scene_path == ""
quit
SCRIPT

# A restart restores the workspace: still not the trained model's title.
run_script restart <<SCRIPT
wait weights_checksum != "" && updating == false
expect model_active == false && scene_title != "$title"
quit
SCRIPT
echo "PASS: scene landing"
