#!/usr/bin/env bash
# The Training lab's marks and explanations (issue 24, defect 9), frame by frame:
#  - scrubbing the timeline marks its step on every curve (a labelled line in the loss, score and
#    learning-rate plots: the app's layout records);
#  - the probe maps are labelled with the probe's tokens, and a click shows one head alone;
#  - the score plot shows only the scores the task declares (induction: previous-token, induction, ...;
#    grokking: none), each with its explanation on hover;
#  - picking another preset while a run exists asks first: "Keep the run" keeps run and knobs,
#    "Discard the run and switch" clears the curves and then swaps the knobs;
#  - the grokking probe reads "12 + 7 =" and its held-out line explains the split;
#  - Load checkpoint and train on the shipped induction-2l (trained past its phase change) reports
#    no phase change at its first steps but "already past", and its heads as there from the start.
#   usage: bash tests/gui/training_lab_marks_test.sh path/to/attnviz   (starts Xvfb itself)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"  # bin, here, tmp (removed on exit), XDG_CONFIG_HOME inside tmp; fail
cd "$tmp"
export SHIPPED_MODEL="$(cd "$here/../../assets/models/induction-2l" && pwd)"

run_script scrub --fresh --lab training <<'SCRIPT'
wait widgets.training_train != null && training.status == idle
expect training.scores ~ previous_token && training.scores ~ induction
click widget training_train 0.5 0.5
wait training.step >= 30 && training.evals >= 3 timeout 300
click widget training_pause 0.5 0.5
wait training.status == paused
let paused training.step
expect widgets.training_score_previous_token != null && widgets.training_score_induction != null
move widget training_timeline 0.98 0.5
down
drag widget training_timeline 0.01 0.5 12
up
wait training.follow == false && training.frame_step == 0 && training.scrub_step == 0
frames 3
SCRIPT
/usr/bin/python3 - "$log" <<'PY' || fail "the scrubbed step is not marked on every curve"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
t = s["training"]
assert "step 0" in t["curve_marks"], t["curve_marks"]
ids = [b["id"] for b in s["layout"]]
for plot in ("plot.loss", "plot.head scores", "plot.learning rate"):
    assert any(i.startswith(plot) and i.endswith(".mark.step 0") for i in ids), (plot, [i for i in ids if ".mark." in i])
assert len(t["probe_labels"]) >= 16 and all(l.isdigit() for l in t["probe_labels"]), t["probe_labels"]
PY

run_script presets --fresh --lab training <<'SCRIPT'
# (the grokking run's probe and held-out line are checked from the log below, at the step they show)
wait widgets.training_train != null && training.status == idle
click widget training_train 0.5 0.5
wait training.step >= 20 && training.evals >= 2 timeout 300
click widget training_pause 0.5 0.5
wait training.status == paused
let paused training.step
click widget training_head_0_1 0.5 0.6
wait training.focus == 0/1
click widget training_head_0_1 0.5 0.6
wait training.focus == ""
click widget training_preset 0.5 0.5
wait widgets.training_preset_modadd != null
click widget training_preset_modadd 0.5 0.5
wait training.confirm == modadd && widgets.training_confirm_keep != null
expect training.preset == induction && training.step == $paused
click widget training_confirm_keep 0.5 0.5
wait training.confirm == ""
frames 3
expect training.preset == induction && training.status == paused && training.step == $paused
click widget training_preset 0.5 0.5
frames 3
click widget training_preset_modadd 0.5 0.5
wait training.confirm == modadd
frames 2
click widget training_confirm_discard 0.5 0.5
wait training.preset == modadd && training.status == idle && training.confirm == ""
expect training.evals == 0 && training.scores == []
click widget training_train 0.5 0.5
wait training.task == modadd && training.evals >= 1 && training.probe_labels ~ + timeout 300
expect training.scores == [] && training.marks == []
click widget training_load_path 0.5 0.5
type ${SHIPPED_MODEL}
click widget training_load 0.5 0.5
wait training.task == induction && training.step >= 20 && training.evals >= 3 timeout 300
expect training.cliff_step == -1 && training.cliff_before_start == true && training.error == ""
expect training.mark_scores ~ induction
SCRIPT
/usr/bin/python3 - "$log" <<'PY' || fail "the resumed run's marks are wrong"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
g = [l["training"] for l in lines if l.get("training", {}).get("task") == "modadd" and l["training"]["evals"] >= 1][-1]
labels = g["probe_labels"]
assert labels[1] == "+" and labels[3] == "=" and labels[0].isdigit(), labels
assert "never shown" in g["heldout_note"], g["heldout_note"]
t = lines[-1]["training"]
ind = [m for m in t["marks"] if m["score"] == "induction"]
assert ind and ind[0]["at_start"] and ind[0]["step"] == 0, t["marks"]
assert "phase change" not in t["curve_marks"], t["curve_marks"]
PY
echo "training_lab_marks_test: OK"
