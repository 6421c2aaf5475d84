#!/usr/bin/env bash
# The Training lab's tasks come from core/task_registry: every task is in the preset menu, a task's
# options with a lab label are knobs beside its name (modadd: modulus and train fraction), and the
# successor task, picked from the menu, trains with its shift knob showing.
#   usage: bash tests/gui/training_tasks_test.sh path/to/attnviz   (starts Xvfb itself)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"  # bin, here, tmp (removed on exit), XDG_CONFIG_HOME inside tmp; fail
cd "$tmp"

run_script tasks --fresh --lab training --size 1280x720 <<'SCRIPT'
wait widgets.training_preset != null && training.status == idle && training.preset == induction
click widget training_preset 0.5 0.5
wait widgets.training_preset_modadd != null && widgets.training_preset_successor != null
click widget training_preset_modadd 0.5 0.5
wait training.preset == modadd && widgets.training_task_modulus != null && widgets.training_task_train_fraction != null
click widget training_preset 0.5 0.5
# (the entries' rectangles are still in the state from the first time the menu was open: let the
# menu open again before clicking one)
frames 3
click widget training_preset_successor 0.5 0.5
wait training.preset == successor && training.task == successor && widgets.training_task_shift != null
click widget training_train 0.5 0.5
wait training.step >= 30 && training.evals >= 3 timeout 300
expect training.error == "" && training.vocab_size == 16
SCRIPT
echo "training_tasks_test: OK (successor at step $(field training.step))"
