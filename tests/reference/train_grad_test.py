"""Checks `attnviz grad` against PyTorch autograd on the same weights and tokens, and its --adamw-steps
against torch.optim.AdamW.

For every model option the trainer has, a checkpoint is made with `attnviz train` (a few steps, so the
weights are not the initial ones), read here with an independent safetensors parser (8 bytes + JSON +
data), and a PyTorch model written in this file from those tensors computes the mean cross-entropy of
ids[..., 1:] given ids[..., :-1]. Its autograd gradients must equal the .npy files `attnviz grad` writes,
tensor by tensor, within 1e-4 of the tensor's largest gradient (the failure names the tensor and its
worst element); the loss within 1e-5 relative. Then K AdamW steps on that batch must give the same
parameters as torch.optim.AdamW.

usage: train_grad_test.py path/to/attnviz
"""

import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

from safetensors_f32 import read_safetensors  # noqa: E402 (next to this file)

ATTNVIZ = sys.argv[1]
torch.set_num_threads(1)


# ------------------------------------------------------------------------------------------------
# The PyTorch model: every part of the trainer's family, from the checkpoint's own tensor names.
# ------------------------------------------------------------------------------------------------


def options_of(cfg):
    """norm, mlp, positions, tied, layout ('gpt2' or 'llama') of a config.json."""
    gpt2 = cfg["model_type"] == "gpt2"
    norm = cfg.get("attnviz_norm", ("layernorm" if cfg.get("attnviz_layer_norm", True) else "none")
                   if gpt2 else "rmsnorm")
    mlp = cfg.get("attnviz_mlp", ("none" if cfg.get("attnviz_attention_only") else "gelu") if gpt2 else "swiglu")
    positions = cfg.get("attnviz_positions", "learned" if gpt2 else "rope")
    tied = cfg.get("tie_word_embeddings", gpt2)
    return norm, mlp, positions, tied, "gpt2" if gpt2 else "llama"


def torch_loss(P, cfg, ids):
    """Mean cross-entropy of a [B, n+1] id tensor. P: name -> leaf tensor (float64)."""
    logits = torch_logits(P, cfg, ids[:, :-1])
    B, n, V = logits.shape
    return torch.nn.functional.cross_entropy(logits.reshape(B * n, V), ids[:, 1:].reshape(-1))


def torch_logits(P, cfg, x_ids):
    """[B, n, V] logits of a [B, n] id tensor."""
    norm, mlp, positions, tied, layout = options_of(cfg)
    if layout == "gpt2":
        d, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
        eps = cfg["layer_norm_epsilon"]
        names = {
            "wte": "wte.weight", "wpe": "wpe.weight", "ln_f": "ln_f",
            "ln_1": "h.%d.ln_1", "ln_2": "h.%d.ln_2",
        }
    else:
        d, H, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
        eps = cfg["rms_norm_eps"]
        names = {
            "wte": "model.embed_tokens.weight", "wpe": "model.embed_positions.weight", "ln_f": "model.norm",
            "ln_1": "model.layers.%d.input_layernorm", "ln_2": "model.layers.%d.post_attention_layernorm",
        }
    theta = cfg.get("rope_theta", 10000.0)
    dh = d // H
    B, n = x_ids.shape

    def normalise(x, p):
        if norm == "none":
            return x
        if norm == "layernorm":
            m = x.mean(-1, keepdim=True)
            v = ((x - m) ** 2).mean(-1, keepdim=True)
            y = (x - m) / torch.sqrt(v + eps) * P[p + ".weight"]
            return y + P[p + ".bias"] if (p + ".bias") in P else y
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * P[p + ".weight"]

    def rope(t):  # [B, H, n, dh], rotate-half (Hugging Face Llama)
        inv = theta ** (-torch.arange(0, dh, 2, dtype=torch.float64) / dh)
        ang = torch.arange(n, dtype=torch.float64)[:, None] * inv[None, :]
        cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)
        t1, t2 = t[..., : dh // 2], t[..., dh // 2 :]
        return t * cos + torch.cat([-t2, t1], -1) * sin

    x = P[names["wte"]][x_ids]
    if positions == "learned":
        x = x + P[names["wpe"]][:n]
    elif positions == "sinusoidal":
        pe = torch.zeros(n, d, dtype=torch.float64)
        for c in range(d):
            w = theta ** (-(2 * (c // 2)) / d)
            ang = torch.arange(n, dtype=torch.float64) * w
            pe[:, c] = ang.sin() if c % 2 == 0 else ang.cos()
        x = x + pe
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    for l in range(L):
        a = normalise(x, names["ln_1"] % l)
        if layout == "gpt2":
            p = "h.%d." % l
            qkv = a @ P[p + "attn.c_attn.weight"] + P[p + "attn.c_attn.bias"]
            q, k, v = qkv.split(d, -1)
        else:
            p = "model.layers.%d." % l
            q, k, v = (a @ P[p + "self_attn.%s_proj.weight" % z].T for z in "qkv")
        q, k, v = (t.view(B, n, H, dh).transpose(1, 2) for t in (q, k, v))
        if positions == "rope":
            q, k = rope(q), rope(k)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
        s = s.masked_fill(mask, float("-inf"))
        y = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, n, d)
        if layout == "gpt2":
            x = x + y @ P[p + "attn.c_proj.weight"] + P[p + "attn.c_proj.bias"]
        else:
            x = x + y @ P[p + "self_attn.o_proj.weight"].T
        if mlp == "none":
            continue
        m = normalise(x, names["ln_2"] % l)
        if layout == "gpt2":
            hdn = torch.nn.functional.gelu(m @ P[p + "mlp.c_fc.weight"] + P[p + "mlp.c_fc.bias"], approximate="tanh")
            x = x + hdn @ P[p + "mlp.c_proj.weight"] + P[p + "mlp.c_proj.bias"]
        elif mlp == "gelu":
            hdn = torch.nn.functional.gelu(m @ P[p + "mlp.up_proj.weight"].T, approximate="tanh")
            x = x + hdn @ P[p + "mlp.down_proj.weight"].T
        else:
            g = torch.nn.functional.silu(m @ P[p + "mlp.gate_proj.weight"].T) * (m @ P[p + "mlp.up_proj.weight"].T)
            x = x + g @ P[p + "mlp.down_proj.weight"].T
    f = normalise(x, names["ln_f"])
    head = P[names["wte"]] if tied else P["lm_head.weight"]
    return f @ head.T


def leaves(w):
    return {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in w.items()}


def worst(a, b):
    """(relative error to the tensor's largest value, index of the worst element)."""
    diff = np.abs(a.astype(np.float64) - b)
    i = np.unravel_index(int(diff.argmax()), diff.shape) if diff.size else ()
    scale = max(np.abs(b).max() if b.size else 0.0, 1e-30)
    return float(diff.max() / scale) if diff.size else 0.0, i


def run(args):
    return subprocess.run([ATTNVIZ] + args, capture_output=True, text=True)


def check_option(tmp, name, train_args, vocab):
    ck = os.path.join(tmp, name)
    r = run(["train", "--task", "induction", "--layers", "2", "--heads", "2", "--d-model", "16", "--context", "48",
             "--vocab", str(vocab), "--steps", "3", "--seed", "5", "--lr", "1e-2", "--eval-every", "3",
             "--out", ck] + train_args)
    assert r.returncode == 0, (name, r.stderr)
    cfg = json.load(open(os.path.join(ck, "config.json")))
    w = read_safetensors(os.path.join(ck, "model.safetensors"))
    rng = np.random.default_rng(7)
    ids = rng.integers(0, vocab, size=(3, 21)).astype(np.int64)
    tokens = os.path.join(tmp, name + "_tokens.npy")
    np.save(tokens, ids)
    out = os.path.join(tmp, name + "_grad")
    K, lr, wd = 3, 1e-2, 0.1
    r = run(["grad", "--model", ck, "--tokens", tokens, "--out", out, "--adamw-steps", str(K), "--lr", str(lr),
             "--weight-decay", str(wd), "--threads", "2"])
    assert r.returncode == 0, (name, r.stderr)

    # gradients
    P = leaves(w)
    loss = torch_loss(P, cfg, torch.tensor(ids))
    loss.backward()
    got_loss = float(np.load(os.path.join(out, "loss.npy")))
    assert np.load(os.path.join(out, "loss.npy")).dtype == np.float64
    assert abs(got_loss - loss.item()) <= 1e-5 * abs(loss.item()), (name, "loss", got_loss, loss.item())
    files = sorted(f[:-4] for f in os.listdir(out) if f.endswith(".npy") and f != "loss.npy")
    assert files == sorted(w), (name, "gradient files", files, sorted(w))
    worst_all = 0.0
    for k in w:
        g = np.load(os.path.join(out, k + ".npy"))
        assert g.dtype == np.float32 and g.shape == w[k].shape, (name, k, g.dtype, g.shape)
        ref = P[k].grad.numpy()
        assert np.abs(ref).max() > 0 or k.endswith("bias"), (name, k, "torch gives a zero gradient")
        rel, i = worst(g, ref)
        worst_all = max(worst_all, rel)
        assert rel <= 1e-4, "%s: gradient of %s differs at %s: attnviz %.9g, torch %.9g (%.2e of its largest)" % (
            name, k, i, g[i], ref[i], rel)

    # K AdamW steps on the same batch
    P = leaves(w)
    opt = torch.optim.AdamW(list(P.values()), lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=wd)
    for _ in range(K):
        opt.zero_grad()
        torch_loss(P, cfg, torch.tensor(ids)).backward()
        opt.step()
    after = read_safetensors(os.path.join(out, "adamw", "model.safetensors"))
    worst_step = 0.0
    for k in w:
        ref = P[k].detach().numpy()
        # Compare the change each made: K·lr at most per element, so 1e-3 of lr is far below one step.
        diff = np.abs((after[k].astype(np.float64) - w[k]) - (ref - w[k]))
        i = np.unravel_index(int(diff.argmax()), diff.shape)
        worst_step = max(worst_step, float(diff.max()) / lr)
        assert diff.max() <= 2e-3 * lr, "%s: AdamW moved %s%s to %.9g, torch.optim.AdamW to %.9g" % (
            name, k, list(i), after[k][i], ref[i])
    # the checkpoint opens with `attnviz dump --model` (every stage it has) and its logits are torch's
    dump = os.path.join(tmp, name + "_dump")
    seq = [int(t) for t in ids[0, :12]]
    r = run(["dump", "--model", ck, "--ids", ",".join(map(str, seq)), "--out", dump])
    assert r.returncode == 0, (name, r.stderr)
    man = json.load(open(os.path.join(dump, "manifest.json")))
    stages = {(st["name"], st.get("layer", -1)) for st in man["stages"]}
    mlp = options_of(cfg)[1]
    for l in range(2):
        for st in ("ln_1", "Q", "K", "V", "scores", "weights", "head_output", "attn_out", "resid_mid", "resid_post"):
            assert (st, l) in stages, (name, st, l)
        assert (("mlp_out", l) in stages) == (mlp != "none"), (name, "mlp_out", l)
    with torch.no_grad():
        want = torch_logits(leaves(w), cfg, torch.tensor([seq]))[0].numpy()
    got = np.load(os.path.join(dump, "logits.npy"))
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err < 1e-4, (name, "dump --model logits differ from torch's by", err)
    print("%-28s loss %.6f  worst gradient %.2e  worst AdamW step %.2e of lr" % (name, got_loss, worst_all,
                                                                                  worst_step))
    return ck


def check_bad_inputs(tmp, ck):
    np.save(os.path.join(tmp, "float.npy"), np.zeros((2, 5), dtype=np.float32))
    np.save(os.path.join(tmp, "big.npy"), np.array([[1, 2, 99]], dtype=np.int32))
    np.save(os.path.join(tmp, "long.npy"), np.zeros(50, dtype=np.int64))
    np.save(os.path.join(tmp, "three.npy"), np.zeros((2, 2, 5), dtype=np.int64))
    np.save(os.path.join(tmp, "one.npy"), np.zeros(1, dtype=np.int64))
    with open(os.path.join(tmp, "junk.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00\xff\xff{'descr'")
    # every integer dtype and Fortran order read as the same ids: the same loss
    ids = np.random.default_rng(3).integers(0, 11, size=(2, 9))
    losses = []
    for i, (dt, fortran) in enumerate([("<i8", False), ("<u1", True), ("<i2", False), ("<u4", True)]):
        a = ids.astype(dt)
        np.save(os.path.join(tmp, "ids%d.npy" % i), np.asfortranarray(a) if fortran else a)
        out = os.path.join(tmp, "ids%d_out" % i)
        r = run(["grad", "--model", ck, "--tokens", os.path.join(tmp, "ids%d.npy" % i), "--out", out])
        assert r.returncode == 0, (dt, r.stderr)
        losses.append(float(np.load(os.path.join(out, "loss.npy"))))
    assert len(set(losses)) == 1, losses
    np.save(os.path.join(tmp, "one_row.npy"), ids[0])
    r = run(["grad", "--model", ck, "--tokens", os.path.join(tmp, "one_row.npy"), "--out", os.path.join(tmp, "row_out")])
    assert r.returncode == 0, r.stderr

    bad = [
        (["--model", ck, "--tokens", os.path.join(tmp, "float.npy")], "not a little-endian integer"),
        (["--model", ck, "--tokens", os.path.join(tmp, "big.npy")], "outside the model's vocabulary"),
        (["--model", ck, "--tokens", os.path.join(tmp, "long.npy")], "context"),
        (["--model", ck, "--tokens", os.path.join(tmp, "three.npy")], "dimensions"),
        (["--model", ck, "--tokens", os.path.join(tmp, "one.npy")], "at least 2 tokens"),
        (["--model", ck, "--tokens", os.path.join(tmp, "junk.npy")], "truncated"),
        (["--model", ck, "--tokens", os.path.join(tmp, "missing.npy")], "missing.npy"),
        (["--model", os.path.join(tmp, "nope"), "--tokens", os.path.join(tmp, "big.npy")], "config.json"),
    ]
    for args, words in bad:
        r = run(["grad"] + args + ["--out", os.path.join(tmp, "bad_out")])
        lines = r.stderr.strip().splitlines()
        assert r.returncode != 0 and len(lines) == 1 and words in lines[0], (args, r.stderr)
        assert not os.path.exists(os.path.join(tmp, "bad_out")), args


def main():
    tmp = tempfile.mkdtemp()
    last = None
    for name, args in OPTIONS:
        last = check_option(tmp, name, args, 11)
    check_bad_inputs(tmp, last)
    print("train_grad_test: ok")


# Every option at least once: each norm, each MLP kind, each kind of positions, tied and untied, both
# tensor layouts (GPT-2 names for GPT-2 choices, Llama names once one choice is Llama's).
OPTIONS = [
    ("layernorm untied", []),
    ("no norm tied", ["--no-norm", "--tied"]),
    ("rmsnorm attention-only", ["--norm", "rmsnorm"]),
    ("layernorm gelu", ["--mlp", "gelu", "--d-ff", "24"]),
    ("rmsnorm swiglu rope untied", ["--norm", "rmsnorm", "--mlp", "swiglu", "--d-ff", "20", "--positions", "rope"]),
    ("no norm gelu sinusoidal tied", ["--norm", "none", "--mlp", "gelu", "--positions", "sinusoidal", "--tied"]),
    ("layernorm gelu rope", ["--mlp", "gelu", "--d-ff", "8", "--positions", "rope"]),
    ("no norm swiglu sinusoidal", ["--norm", "none", "--mlp", "swiglu", "--positions", "sinusoidal", "--tied"]),
    ("layernorm rope attn-only", ["--positions", "rope", "--tied"]),
]

if __name__ == "__main__":
    main()
