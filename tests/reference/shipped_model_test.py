"""The shipped model (assets/models/induction-2l) is what the README's command makes: re-running that
exact command (read from README.md) reproduces model.safetensors, config.json and metrics.csv byte for
byte, and scripts/induction_tokenizer.py reproduces the tokenizer files. The model is under 1 MB, and the
scene that opens it (assets/scenes/induction_heads.json) names its folder.

usage: shipped_model_test.py path/to/attnviz
"""

import json
import os
import shlex
import subprocess
import sys
import tempfile

ATTNVIZ = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "assets", "models", "induction-2l")


def readme_command():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("attnviz train ") and "assets/models/induction-2l" in line:
                return shlex.split(line)
    raise AssertionError("README.md has no `attnviz train ... assets/models/induction-2l` line")


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def main():
    size = sum(os.path.getsize(os.path.join(MODEL, n)) for n in os.listdir(MODEL))
    assert size < 1 << 20, f"the shipped model folder is {size} bytes (must stay under 1 MB)"
    args = readme_command()
    out = args.index("--out")
    with tempfile.TemporaryDirectory() as tmp:
        args[out + 1] = os.path.join(tmp, "m")
        r = subprocess.run([ATTNVIZ] + args[1:], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        for name in ("model.safetensors", "config.json", "metrics.csv"):
            assert same_bytes(os.path.join(tmp, "m", name), os.path.join(MODEL, name)), (
                f"re-running the README's command changed {name}")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "induction_tokenizer.py"),
                            os.path.join(tmp, "m")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        for name in ("vocab.json", "merges.txt"):
            assert same_bytes(os.path.join(tmp, "m", name), os.path.join(MODEL, name)), name
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
