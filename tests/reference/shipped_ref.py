"""What the tests of the shipped models (shipped_model_test.py, story_model_test.py) share: the README's
`attnviz train` line that makes a model folder, re-run into another folder, and a byte-for-byte check of
the files it made against the shipped ones."""

import os
import shlex
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def readme_command(folder):
    """The README's `attnviz train ... <folder>` line (folder relative to the repository), split."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("attnviz train ") and folder in line:
                return shlex.split(line)
    raise AssertionError("README.md has no `attnviz train ... %s` line" % folder)


def rerun_readme_command(attnviz, folder, out):
    """Runs the README's line for `folder` with --out `out`; asserts it succeeds. Returns the process."""
    args = readme_command(folder)
    args[args.index("--out") + 1] = out
    r = subprocess.run([attnviz] + args[1:], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


def assert_same_bytes(made, shipped, names, what="re-running the README's command changed"):
    """Each of `names` in folder `made` is byte for byte the one in `shipped`."""
    for name in names:
        with open(os.path.join(made, name), "rb") as fa, open(os.path.join(shipped, name), "rb") as fb:
            assert fa.read() == fb.read(), "%s %s" % (what, name)
