"""The shipped model (assets/models/induction-2l) is what the README's command makes: re-running that
exact command (read from README.md) reproduces model.safetensors, config.json and metrics.csv byte for
byte, and scripts/induction_tokenizer.py reproduces the tokenizer files. The model is under 1 MB, and the
scene that opens it (assets/scenes/induction_heads.json) names its folder.

usage: shipped_model_test.py path/to/attnviz
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shipped_ref import ROOT, assert_same_bytes, rerun_readme_command  # noqa: E402

ATTNVIZ = sys.argv[1]
MODEL = os.path.join(ROOT, "assets", "models", "induction-2l")


def main():
    size = sum(os.path.getsize(os.path.join(MODEL, n)) for n in os.listdir(MODEL))
    assert size < 1 << 20, f"the shipped model folder is {size} bytes (must stay under 1 MB)"
    with tempfile.TemporaryDirectory() as tmp:
        made = os.path.join(tmp, "m")
        rerun_readme_command(ATTNVIZ, "assets/models/induction-2l", made)
        assert_same_bytes(made, MODEL, ("model.safetensors", "config.json", "metrics.csv"))
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "induction_tokenizer.py"), made],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert_same_bytes(made, MODEL, ("vocab.json", "merges.txt"), "induction_tokenizer.py changed")
    with open(os.path.join(MODEL, "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    assert summary["cliff_step"] is not None, "the shipped model never had its phase change"
    with open(os.path.join(ROOT, "assets", "scenes", "induction_heads.json"), encoding="utf-8") as f:
        scene = json.load(f)
    assert os.path.normpath(os.path.join(ROOT, "assets", "scenes", scene["model"])) == MODEL
    # The scene lands on the head its note is about: the model's strongest induction head.
    scores = summary["head_scores"][scene["layer"]]
    best = max(range(len(scores)), key=lambda h: scores[h]["induction"])
    assert scene["head"] == best and scores[best]["induction"] >= 0.5, (scene["layer"], scene["head"], best)
    # The scene's text is all in the shipped tokenizer.
    r = subprocess.run([ATTNVIZ, "tokenize", "--model", MODEL, "--text", scene["model_text"]],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    print("shipped_model_test: OK (%d bytes, cliff at step %s)" % (size, summary["cliff_step"]))


if __name__ == "__main__":
    main()
