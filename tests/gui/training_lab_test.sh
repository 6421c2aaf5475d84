#!/usr/bin/env bash
# The Training lab: Train on the induction preset, wait (on the state log, never on a clock) until
# the run has made steps, pause (the step count then stays put), drag the timeline back to the start
# of training, step once, save a checkpoint (model.safetensors + config.json of an attention-only
# model) and export the current frame as a PNG. Then the copy preset from the lab's menu trains at
# 1280x720 with every plot title inside its box; switching to the text preset mid-run asks first; the
# text preset with BPE tokens learned from a file trains, says "BPE tokens" (and which tokenizer) where
# it said characters, and saves its vocab.json + merges.txt beside the checkpoint.
#   usage: bash tests/gui/training_lab_test.sh path/to/attnviz   (starts Xvfb itself)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"  # bin, here, tmp (removed on exit), XDG_CONFIG_HOME inside tmp; fail
cd "$tmp"

run_script training --fresh --lab training <<'SCRIPT'
wait widgets.training_train != null && training.status == idle
click widget training_train 0.5 0.5
wait training.step >= 40 && training.evals >= 4 timeout 300
click widget training_pause 0.5 0.5
wait training.status == paused
let paused training.step
frames 10
expect training.step == $paused && training.status == paused && training.follow == true
move widget training_timeline 0.98 0.5
down
drag widget training_timeline 0.01 0.5 12
up
wait training.follow == false && training.frame_step == 0
click widget training_step 0.5 0.5
wait training.step > $paused && training.status == paused
click widget training_save 0.5 0.5
wait training.saved != ""
click widget training_export_frame 0.5 0.5
wait export_path ~ training_frame_step0
quit
SCRIPT

saved="$(field training.saved)"
[ -s "$saved/model.safetensors" ] || fail "no model.safetensors in '$saved'"
/usr/bin/python3 - "$saved/config.json" <<'PY' || fail "config.json of the saved checkpoint is wrong"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["attnviz_attention_only"] is True and c["n_layer"] == 2 and c["n_head"] == 4, c
PY
png="$(field export_path)"
/usr/bin/python3 - "$here" "$png" <<'PY' || fail "the exported frame '$png' is not a valid PNG of the grid"
import sys
sys.path.insert(0, sys.argv[1])
from png_check import read_png
img = read_png(sys.argv[2])
assert img.shape[0] > 100 and img.shape[1] > 100, img.shape
PY
step="$(field training.step)"
# Another preset, picked in the lab's menu, trains too (copy: a sequence, a separator, the copy), at
# a projector's 1280x720: the plots' titles stay inside their boxes (the app's layout records).
# Then the text preset on a file, with BPE tokens learned from it: the run's vocabulary is the BPE's
# and its vocab.json + merges.txt go with a saved checkpoint.
/usr/bin/python3 - "$tmp/book.txt" <<'PY'
import random, sys
rng = random.Random(5)
en = "the cat sat on the mat because it was tired and the dog ran to the park".split()
zh = "注意力机制让每个词看向其他词"
words = [rng.choice(en) if rng.random() < 0.7 else zh[rng.randrange(10):][:3] for _ in range(6000)]
open(sys.argv[1], "w", encoding="utf-8").write(" ".join(words) + "\n")
PY
export TMPDIR_TEST="$tmp"
run_script presets --fresh --lab training --size 1280x720 <<'SCRIPT'
wait widgets.training_preset != null && training.status == idle && training.preset == induction
click widget training_preset 0.5 0.5
wait widgets.training_preset_copy != null
click widget training_preset_copy 0.5 0.5
wait training.preset == copy && training.task ~ copy
click widget training_train 0.5 0.5
wait training.step >= 20 && training.evals >= 2 timeout 300
expect training.error == ""
click widget training_preset 0.5 0.5
# (the entries' rectangles are still in the state from the first time the menu was open: let the
# menu open again before clicking one)
frames 3
click widget training_preset_text 0.5 0.5
# (the copy run is still going: switching asks first, and discarding it clears its curves)
wait training.confirm == text && widgets.training_confirm_discard != null
expect training.preset == copy && training.task == copy
frames 2
click widget training_confirm_discard 0.5 0.5
wait training.preset == text && widgets.training_text_path != null && training.status == idle
click widget training_bpe 0.1 0.5
wait training.text_bpe == true
click widget training_text_path 0.5 0.5
type ${TMPDIR_TEST}/book.txt
click widget training_train 0.5 0.5
wait training.task_files ~ merges.txt && training.step >= 5 timeout 120
expect training.vocab_size > 256 && training.error == ""
# (the legend and the held-out line say BPE tokens, which tokenizer, and the file's last 10 %)
expect training.loss_legend == "BPE tokens" && training.tokenizer ~ BPE && training.heldout_note ~ last
click widget training_save 0.5 0.5
wait training.saved ~ text
frames 2
quit
SCRIPT
bpe_saved="$(field training.saved)"
/usr/bin/python3 - "$bpe_saved" <<'PY' || fail "the BPE run's checkpoint '$bpe_saved' lacks its tokenizer"
import json, sys
d = sys.argv[1]
vocab = json.load(open(d + "/vocab.json", encoding="utf-8"))
merges = [l for l in open(d + "/merges.txt", encoding="utf-8").read().splitlines() if l and not l.startswith("#")]
cfg = json.load(open(d + "/config.json"))
# (two merges may spell one token, so there may be more merges than new tokens)
assert len(vocab) == cfg["vocab_size"] and len(merges) >= len(vocab) - 256 > 0, (len(vocab), len(merges), cfg["vocab_size"])
PY
/usr/bin/python3 - "$log" <<'PY' || fail "a plot title of the Training lab runs out of its box at 1280x720"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
plots = [b for b in s["layout"] if b["id"].startswith("plot.")]
assert len(plots) >= 3, f"only {len(plots)} plot titles recorded: {plots}"
for b in plots:
    x, y, w, h = b["box"]
    c0, c1 = b["clip"]
    assert c0 - 0.5 <= x and x + w <= c1 + 0.5, f"{b['id']} at x {x:.0f}..{x + w:.0f}, box {c0:.0f}..{c1:.0f}"
PY
echo "training_lab_test: OK (paused at step $step, saved $saved)"
