"""Checks `attnviz train`: the files it writes (GPT-2-named safetensors checkpoint read here with a small
independent parser, config.json, metrics.csv, summary.json), determinism for a seed and thread count, and
one clear stderr line with a non-zero exit for bad options and a diverging run.

usage: train_command_test.py path/to/attnviz
"""

import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from safetensors_f32 import read_safetensors  # noqa: E402 (next to this file)

ATTNVIZ = sys.argv[1]


def run(args):
    return subprocess.run([ATTNVIZ, "train"] + args, capture_output=True, text=True)


def numpy_logits(w, cfg, ids):
    """Independent forward of an attention-only GPT-2-layout checkpoint (LayerNorm or none)."""
    d, H = cfg["n_embd"], cfg["n_head"]
    dh = d // H
    eps = cfg["layer_norm_epsilon"]
    norm = cfg.get("attnviz_layer_norm", True)

    def ln(x, p):
        if not norm:
            return x
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + eps) * w[p + ".weight"] + w[p + ".bias"]

    n = len(ids)
    x = w["wte.weight"][ids].astype(np.float64) + w["wpe.weight"][:n]
    for l in range(cfg["n_layer"]):
        p = "h.%d." % l
        a = ln(x, p + "ln_1")
        qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        y = np.zeros((n, d))
        for h in range(H):
            q, k, v = (qkv[:, i * d + h * dh : i * d + (h + 1) * dh] for i in range(3))
            s = q @ k.T / np.sqrt(dh)
            s[np.triu_indices(n, 1)] = -np.inf
            e = np.exp(s - s.max(-1, keepdims=True))
            y[:, h * dh : (h + 1) * dh] = (e / e.sum(-1, keepdims=True)) @ v
        x = x + y @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
    head = w["wte.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    return ln(x, "ln_f") @ head.T


def check_dump_opens(tmp):
    """A checkpoint `attnviz train` writes opens with `attnviz dump --model` (attention-only, with and
    without norms, tied or not): every stage it has is present and the logits match numpy's forward."""
    for extra in ([], ["--no-norm", "--tied"], ["--tied"], ["--no-norm"]):
        ck = os.path.join(tmp, "ck" + "".join(extra))
        r = run(["--task", "induction", "--layers", "2", "--heads", "2", "--d-model", "16", "--context", "48",
                 "--vocab", "8", "--steps", "2", "--seed", "1", "--out", ck] + extra)
        assert r.returncode == 0, r.stderr
        out = os.path.join(tmp, "dump" + "".join(extra))
        ids = [1, 2, 3, 0, 7, 1, 2, 3, 5]
        r = subprocess.run([ATTNVIZ, "dump", "--model", ck, "--ids", ",".join(map(str, ids)), "--out", out],
                           capture_output=True, text=True)
        assert r.returncode == 0, (extra, r.stderr)
        man = json.load(open(os.path.join(out, "manifest.json")))
        names = {(s["name"], s.get("layer", -1)) for s in man["stages"]}
        for l in (0, 1):
            for st in ("ln_1", "Q", "K", "V", "scores", "weights", "head_output", "attn_out", "resid_mid",
                       "resid_post"):
                assert (st, l) in names, (extra, st, l, sorted(names))
            assert ("mlp_out", l) not in names, "attention-only checkpoint dumped an MLP stage"
        for st in ("ln_f", "logits", "probs", "rollout"):
            assert st in {s["name"] for s in man["stages"]}, (extra, st)
        logits = np.load(os.path.join(out, "logits.npy"))
        cfg = json.load(open(os.path.join(ck, "config.json")))
        want = numpy_logits(read_safetensors(os.path.join(ck, "model.safetensors")), cfg, ids)
        err = np.abs(logits - want).max()
        assert err < 1e-4, (extra, "logits differ from numpy's forward by", err)


def main():
    tmp = tempfile.mkdtemp()
    check_dump_opens(tmp)
    base = ["--task", "induction", "--layers", "2", "--heads", "4", "--d-model", "64", "--context", "48",
            "--steps", "40", "--seed", "3", "--eval-every", "20"]
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    for out in (a, b):
        r = run(base + ["--out", out])
        assert r.returncode == 0, r.stderr
    w = read_safetensors(os.path.join(a, "model.safetensors"))
    assert w["wte.weight"].shape == (64, 64)
    assert w["wpe.weight"].shape == (48, 64)
    assert w["h.1.attn.c_attn.weight"].shape == (64, 192)
    assert w["h.1.attn.c_proj.weight"].shape == (64, 64)
    assert w["h.0.ln_1.weight"].shape == (64,)
    assert w["lm_head.weight"].shape == (64, 64)
    assert w["ln_f.bias"].shape == (64,)
    assert all(np.isfinite(v).all() for v in w.values())
    w2 = read_safetensors(os.path.join(b, "model.safetensors"))
    for k in w:
        assert np.array_equal(w[k], w2[k]), "not deterministic: " + k
    cfg = json.load(open(os.path.join(a, "config.json")))
    assert cfg["model_type"] == "gpt2" and cfg["n_layer"] == 2 and cfg["n_embd"] == 64 and cfg["n_positions"] == 48
    rows = list(csv.DictReader(open(os.path.join(a, "metrics.csv"))))
    assert [int(r["step"]) for r in rows] == [20, 40], rows
    for key in ("train_loss", "heldout_loss", "heldout_first_loss", "heldout_repeat_loss", "L1H3_induction",
                "L0H0_previous_token", "L1H2_first_token", "L0H1_same_token"):
        assert key in rows[0], key
    s = json.load(open(os.path.join(a, "summary.json")))
    assert abs(s["heldout_loss"] - float(rows[-1]["heldout_loss"])) < 1e-4
    assert s["cliff_step"] is None  # 40 steps: long before the phase change
    assert len(s["head_scores"]) == 2 and len(s["head_scores"][1]) == 4
    assert 3.5 < s["heldout_repeat_loss"] < 4.5

    # --init continues from a checkpoint: with lr 0 (and no decay) one step leaves every tensor as loaded,
    # with lr > 0 they move; the architecture comes from the checkpoint and flags for it are refused.
    c = os.path.join(tmp, "c")
    r = run(["--task", "induction", "--init", a, "--steps", "1", "--lr", "0", "--weight-decay", "0", "--out", c])
    assert r.returncode == 0, r.stderr
    w3 = read_safetensors(os.path.join(c, "model.safetensors"))
    assert sorted(w3) == sorted(w) and all(np.array_equal(w[k], w3[k]) for k in w), "--init did not load a"
    r = run(["--task", "induction", "--init", a, "--steps", "2", "--out", c])
    assert r.returncode == 0, r.stderr
    w3 = read_safetensors(os.path.join(c, "model.safetensors"))
    assert any(not np.array_equal(w[k], w3[k]) for k in w), "--init with lr > 0 did not train"

    bad = [
        (["--task", "induction", "--init", a, "--layers", "3", "--steps", "5"], "cannot be combined with --init"),
        (["--task", "induction", "--init", os.path.join(tmp, "nothing"), "--steps", "5"], "config.json"),
        (["--task", "induction", "--mlp", "relu", "--steps", "5"], "--mlp"),
        (["--task", "induction", "--positions", "rope", "--d-model", "36", "--heads", "4", "--steps", "5"], "even head width"),
        (["--task", "induction", "--context", "30", "--steps", "5"], "too short"),
        (["--task", "copy", "--context", "8", "--steps", "5"], "--context 8 is shorter than the copy task's sequences"),
        (["--task", "nope", "--steps", "5"], "unknown task"),
        (["--task", "induction", "--heads", "3", "--steps", "5"], "divide"),
        (["--task", "induction", "--lr", "1e5", "--steps", "50"], "diverged"),
    ]
    for args, words in bad:
        r = run(args + ["--out", os.path.join(tmp, "bad")])
        assert r.returncode != 0, args
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], (args, r.stderr)
    print("train_command_test: ok")


if __name__ == "__main__":
    main()
