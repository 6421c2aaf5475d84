"""Checks `attnviz ablate`, `attnviz patch` and `attnviz attribute` (issue 25) against an independent PyTorch
implementation of the definitions, written here in float64 from the Hugging Face model definitions (not from
attnviz's C++), on tiny random GPT-2 and Llama (grouped-query attention, untied head) checkpoints:
  - loss: mean natural-log cross-entropy of token i+1 given 0..i, i = 0..n-2;
  - z(l, h): head h's output of layer l before the output projection, [n, dh]; zero ablation sets it to 0,
    mean ablation sets every row to its mean over the positions (in the run, as a forward hook would);
  - patching: the corrupt run with z(l, h) replaced by the clean run's; m = logit(A) - logit(B) at the last
    position, patched_fraction = (m_patched - m_corrupt) / (m_clean - m_corrupt);
  - direct logit attribution at the last position: embed (token + learned position; Llama: the token),
    each head's z times its rows of the output projection, each attention output bias (GPT-2), each MLP
    output, through the final norm's linear part with the whole residual's scale, the LayerNorm bias its own
    part; the logit lens: each layer's residual through the final norm and the unembedding, top 5.
Every value is compared at 1e-4 relative (with a floor of 1e-5 of the largest value compared alongside); the
parts must sum to the logit to 1e-4 relative. Bad input (unknown head, layer or head out of range, a target
or answer that is not one token, texts of unequal length, an empty text) must give one line naming the
value and exit status 2, writing nothing.

usage: interventions_test.py path/to/attnviz
"""

import json
import math
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_forward_test as mf  # noqa: E402  (the tiny checkpoints)
from model_ref import gelu_new, rotate_half, run, write_model  # noqa: E402
import tokenizer_ref as ref  # noqa: E402

torch.set_default_dtype(torch.float64)
RTOL = 1e-4
FAILURES = []


# ------------------------------------------------------------------------------------------------
# The reference: one forward for both families, with a hook on every head output
# ------------------------------------------------------------------------------------------------

class Model:
    def __init__(self, family, cfg, W):
        self.family, self.cfg, self.W = family, cfg, W
        if family == "gpt2":
            self.L, self.h, self.d = cfg["n_layer"], cfg["n_head"], cfg["n_embd"]
            self.g, self.dh, self.eps = self.h, self.d // self.h, cfg["layer_norm_epsilon"]
            self.unembed = W["wte.weight"]
        else:
            self.L, self.h, self.d = cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["hidden_size"]
            self.g = cfg["num_key_value_heads"]
            self.dh, self.eps = cfg.get("head_dim") or self.d // self.h, cfg["rms_norm_eps"]
            self.unembed = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else W["lm_head.weight"]

    def final_norm(self, x):
        W = self.W
        if self.family == "gpt2":
            return torch.nn.functional.layer_norm(x, (self.d,), W["ln_f.weight"], W["ln_f.bias"], self.eps)
        return W["model.norm.weight"] * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def o_rows(self, l, j):
        """Head j's rows of layer l's output projection as a [dh, d] map (z_j @ rows)."""
        if self.family == "gpt2":
            return self.W["h.%d.attn.c_proj.weight" % l][j * self.dh:(j + 1) * self.dh, :]
        return self.W["model.layers.%d.self_attn.o_proj.weight" % l][:, j * self.dh:(j + 1) * self.dh].T

    def attn_bias(self, l):
        return self.W["h.%d.attn.c_proj.bias" % l] if self.family == "gpt2" else None

    def forward(self, ids, hook=None):
        """hook(l, z) edits z [h, n, dh] in place. Returns the residual entering each block and the final one,
        z and the MLP output of each layer, and the logits [n, V]."""
        W, d, h, g, dh, n = self.W, self.d, self.h, self.g, self.dh, len(ids)
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
        if self.family == "gpt2":
            x = W["wte.weight"][ids] + W["wpe.weight"][:n]
            ln = lambda x, p: torch.nn.functional.layer_norm(x, (d,), W[p + ".weight"], W[p + ".bias"], self.eps)  # noqa
            conv = lambda x, p: x @ W[p + ".weight"] + W[p + ".bias"]  # noqa: E731
        else:
            x = W["model.embed_tokens.weight"][ids]
            rms = lambda x, w: w * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)  # noqa: E731
            lin = lambda x, p: x @ W[p + ".weight"].T  # noqa: E731
            inv = 1.0 / (self.cfg.get("rope_theta", 10000.0) ** (torch.arange(0, dh, 2, dtype=torch.float64) / dh))
            emb = torch.outer(torch.arange(n, dtype=torch.float64), inv)
            emb = torch.cat((emb, emb), -1)
            cos, sin = emb.cos(), emb.sin()
        out = {"resid": [x], "z": [], "mlp": []}
        for l in range(self.L):
            if self.family == "gpt2":
                p = "h.%d." % l
                q, k, v = conv(ln(x, p + "ln_1"), p + "attn.c_attn").split(d, -1)
                q, k, v = (t.view(n, h, dh).transpose(0, 1) for t in (q, k, v))
            else:
                p = "model.layers.%d." % l
                a = rms(x, W[p + "input_layernorm.weight"])
                q = lin(a, p + "self_attn.q_proj").view(n, h, dh).transpose(0, 1)
                k = lin(a, p + "self_attn.k_proj").view(n, g, dh).transpose(0, 1)
                v = lin(a, p + "self_attn.v_proj").view(n, g, dh).transpose(0, 1)
                q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
                k = k[:, None].expand(g, h // g, n, dh).reshape(h, n, dh)
                v = v[:, None].expand(g, h // g, n, dh).reshape(h, n, dh)
            wts = torch.softmax((q @ k.transpose(-1, -2) / math.sqrt(dh)).masked_fill(mask, float("-inf")), -1)
            z = (wts @ v).clone()  # [h, n, dh]
            if hook:
                hook(l, z)
            out["z"].append(z)
            cat = z.transpose(0, 1).reshape(n, h * dh)
            if self.family == "gpt2":
                mid = x + conv(cat, p + "attn.c_proj")
                mlp = conv(gelu_new(conv(ln(mid, p + "ln_2"), p + "mlp.c_fc")), p + "mlp.c_proj")
            else:
                mid = x + lin(cat, p + "self_attn.o_proj")
                m = rms(mid, W[p + "post_attention_layernorm.weight"])
                mlp = lin(torch.nn.functional.silu(lin(m, p + "mlp.gate_proj")) * lin(m, p + "mlp.up_proj"),
                          p + "mlp.down_proj")
            x = mid + mlp
            out["mlp"].append(mlp)
            out["resid"].append(x)
        out["logits"] = self.final_norm(x) @ self.unembed.T
        return out


def loss_of(logits, ids):
    return float(torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:])))


def ablation_hook(heads, mode):
    def hook(l, z):
        for (hl, hh) in heads:
            if hl == l:
                z[hh] = 0.0 if mode == "zero" else z[hh].mean(0, keepdim=True).expand_as(z[hh])
    return hook


def attribution(model, ids, target):
    f = model.forward(ids)
    x = f["resid"][-1][-1]
    u = model.unembed[target]
    W = model.W
    if model.family == "gpt2":
        w = W["ln_f.weight"]
        scale = 1.0 / torch.sqrt(((x - x.mean()) ** 2).mean() + model.eps)
        through = lambda p: float(((p - p.mean()) * scale * w) @ u)  # noqa: E731
    else:
        w = W["model.norm.weight"]
        scale = 1.0 / torch.sqrt((x ** 2).mean() + model.eps)
        through = lambda p: float((p * scale * w) @ u)  # noqa: E731
    parts = [("embed", through(f["resid"][0][-1]))]
    for l in range(model.L):
        for j in range(model.h):
            parts.append(("%d.%d" % (l, j), through(f["z"][l][j, -1] @ model.o_rows(l, j))))
        if model.attn_bias(l) is not None:
            parts.append(("attn_bias.%d" % l, through(model.attn_bias(l))))
        parts.append(("mlp.%d" % l, through(f["mlp"][l][-1])))
    if model.family == "gpt2":
        parts.append(("ln_f_bias", float(W["ln_f.bias"] @ u)))
    lens = []
    for i, r in enumerate(f["resid"]):
        p = torch.softmax(model.final_norm(r[-1]) @ model.unembed.T, -1)
        top = torch.argsort(p, descending=True)[:5]
        lens.append(("embed" if i == 0 else i - 1, [(int(t), float(p[t])) for t in top]))
    return float(f["logits"][-1, target]), parts, lens


# ------------------------------------------------------------------------------------------------
# Running attnviz and comparing
# ------------------------------------------------------------------------------------------------

def run_json(attnviz, case, out, *args):
    if os.path.exists(out):
        os.remove(out)
    r = run(attnviz, *args, "--out", out)
    if r.returncode != 0:
        FAILURES.append("%s: exit %d: %s" % (case, r.returncode, r.stderr.strip()))
        return None
    return json.load(open(out))


def close(case, what, actual, expected, scale=0.0):
    """|actual - expected| <= 1e-4 * max(|expected|, 0.1 * scale) (scale: the largest value of the set)."""
    if actual is None or not math.isfinite(actual):
        FAILURES.append("%s %s: attnviz %r vs torch %.7g" % (case, what, actual, expected))
        return
    if abs(actual - expected) > RTOL * max(abs(expected), 0.1 * scale, 1e-30):
        FAILURES.append("%s %s: attnviz %.9g vs torch %.9g" % (case, what, actual, expected))


def check_ablate(attnviz, case, tmp, model, d, ids, input_args):
    out = os.path.join(tmp, "ablate.json")
    base = loss_of(model.forward(ids)["logits"], ids)
    for mode in ("zero", "mean"):
        j = run_json(attnviz, case + " ablate " + mode, out, "ablate", "--model", d, *input_args, "--mode", mode)
        if j is None:
            continue
        close(case, "base loss", j["loss"], base)
        want = {(l, h): loss_of(model.forward(ids, ablation_hook([(l, h)], mode))["logits"], ids)
                for l in range(model.L) for h in range(model.h)}
        got = {(e["layer"], e["head"]): e for e in j["heads"]}
        if sorted(got) != sorted(want) or len(j["heads"]) != len(want):
            FAILURES.append("%s %s: heads %s, expected every (layer, head)" % (case, mode, sorted(got)))
            continue
        big = max(abs(v - base) for v in want.values())
        for key, v in want.items():
            close(case, "%s loss %s" % (mode, key), got[key]["loss"], v)
            close(case, "%s delta_loss %s" % (mode, key), got[key]["delta_loss"], v - base, big)
        # every head's delta_loss in a random model is far from 0: the check above would see a stub
        if big < 1e-3:
            FAILURES.append("%s %s: the reference's delta_loss are all ~0; the test is too weak" % (case, mode))
        # listed heads together: one entry
        heads = [(model.L - 1, 1), (0, model.h - 1)]
        j = run_json(attnviz, case + " ablate together", out, "ablate", "--model", d, *input_args, "--mode", mode,
                     "--heads", ",".join("%d.%d" % hh for hh in heads))
        if j is None:
            continue
        want_t = loss_of(model.forward(ids, ablation_hook(heads, mode))["logits"], ids)
        if len(j["heads"]) != 1 or j["heads"][0].get("heads_ablated") != ["%d.%d" % hh for hh in heads]:
            FAILURES.append("%s together: %s" % (case, j["heads"]))
            continue
        close(case, "%s together loss" % mode, j["heads"][0]["loss"], want_t)
        close(case, "%s together delta_loss" % mode, j["heads"][0]["delta_loss"], want_t - base)
        # one head listed (spaces as typed): the sweep's value, named by layer and head too
        j = run_json(attnviz, case + " ablate one", out, "ablate", "--model", d, *input_args, "--mode", mode,
                     "--heads", " 1.2 ")
        if j is not None:
            e = j["heads"][0] if len(j["heads"]) == 1 else {}
            if e.get("heads_ablated") != ["1.2"] or e.get("layer") != 1 or e.get("head") != 2:
                FAILURES.append("%s one head: %s" % (case, j["heads"]))
            else:
                close(case, "%s one head loss" % mode, e["loss"], want[(1, 2)])


def check_patch(attnviz, case, tmp, model, d, tok, clean, corrupt, answer, wrong):
    out = os.path.join(tmp, "patch.json")
    j = run_json(attnviz, case + " patch", out, "patch", "--model", d, "--clean", clean, "--corrupt", corrupt,
                 "--answer", answer, "--wrong", wrong)
    if j is None:
        return
    ci, xi = tok.encode(clean), tok.encode(corrupt)
    a, b = tok.encode(answer)[0], tok.encode(wrong)[0]
    metric = lambda f: float(f["logits"][-1, a] - f["logits"][-1, b])  # noqa: E731
    fc = model.forward(ci)
    m_clean, m_corrupt = metric(fc), metric(model.forward(xi))
    if j.get("answer_id") != a or j.get("wrong_id") != b:
        FAILURES.append("%s patch: answer/wrong ids %s %s, expected %d %d" % (case, j.get("answer_id"),
                                                                            j.get("wrong_id"), a, b))
    close(case, "m_clean", j["m_clean"], m_clean)
    close(case, "m_corrupt", j["m_corrupt"], m_corrupt)
    got = {(e["layer"], e["head"]): e for e in j["heads"]}
    span = m_clean - m_corrupt
    for l in range(model.L):
        for h in range(model.h):
            def hook(ll, z, l=l, h=h):
                if ll == l:
                    z[h] = fc["z"][l][h]
            mp = metric(model.forward(xi, hook))
            e = got.get((l, h))
            if e is None:
                FAILURES.append("%s patch: no entry for head %d.%d" % (case, l, h))
                continue
            close(case, "m_patched %d.%d" % (l, h), e["m_patched"], mp, abs(span))
            # the fraction carries m's error divided by the span: m's own tolerance scaled by 1 / |span|
            close(case, "patched_fraction %d.%d" % (l, h), e["patched_fraction"], (mp - m_corrupt) / span,
                  max(1.0, abs(m_clean), abs(m_corrupt)) / abs(span))


def check_attribute(attnviz, case, tmp, model, d, tok, ids, input_args, target=None):
    out = os.path.join(tmp, "attribute.json")
    args = ["attribute", "--model", d, *input_args] + (["--target", target] if target is not None else [])
    j = run_json(attnviz, case + " attribute", out, *args)
    if j is None:
        return
    f = model.forward(ids)
    t = tok.encode(target)[0] if target is not None else int(torch.argmax(f["logits"][-1]))
    if j.get("target_id") != t:
        FAILURES.append("%s attribute: target_id %s, expected %d" % (case, j.get("target_id"), t))
        return
    if j.get("target") != label(tok, t):
        FAILURES.append("%s attribute: target %r" % (case, j.get("target")))
    logit, parts, lens = attribution(model, ids, t)
    close(case, "logit", j["logit"], logit)
    names = [p["name"] for p in j["parts"]]
    if names != [p[0] for p in parts]:
        FAILURES.append("%s attribute: parts %s, expected %s" % (case, names, [p[0] for p in parts]))
        return
    big = max(abs(v) for _, v in parts)
    for (name, v), p in zip(parts, j["parts"]):
        close(case, "part " + name, p["value"], v, big)
    total = sum(p["value"] for p in j["parts"])
    if abs(total - j["logit"]) > RTOL * max(1.0, abs(j["logit"])):
        FAILURES.append("%s attribute: parts sum to %.9g, logit %.9g" % (case, total, j["logit"]))
    if abs(sum(v for _, v in parts) - logit) > 1e-9 * max(1.0, abs(logit)):
        FAILURES.append("%s: the reference's own parts do not sum to its logit" % case)
    if len(j["logit_lens"]) != len(lens):
        FAILURES.append("%s logit lens: %d rows, expected %d" % (case, len(j["logit_lens"]), len(lens)))
        return
    for (layer, top), row in zip(lens, j["logit_lens"]):
        if row["layer"] != layer or [e["id"] for e in row["top"]] != [i for i, _ in top]:
            FAILURES.append("%s logit lens layer %s: %s, expected %s" % (case, row["layer"],
                                                                       [e["id"] for e in row["top"]], top))
            continue
        for (i, p), e in zip(top, row["top"]):
            close(case, "lens %s prob of %d" % (layer, i), e["prob"], p, top[0][1])
            if e["token"] != label(tok, i):
                FAILURES.append("%s lens token %d: %r" % (case, i, e["token"]))


def label(tok, i):
    """attnviz's readable token text: the token's bytes as UTF-8, or \\xNN escapes when they are not valid."""
    b = tok.token_bytes(tok.id_to_token[i])
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return "".join("\\x%02x" % c for c in b)


def expect_usage_error(attnviz, case, args, needles, out):
    if os.path.exists(out):
        os.remove(out)
    r = run(attnviz, *args, "--out", out)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    if r.returncode != 2 or len(lines) != 1 or not all(nd in lines[0] for nd in needles):
        FAILURES.append("%s: expected exit 2 and one line naming %r, got %d %r" % (case, needles, r.returncode,
                                                                                  r.stderr))
    if os.path.exists(out):
        FAILURES.append("%s: wrote %s" % (case, out))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: interventions_test.py path/to/attnviz")
    attnviz = sys.argv[1]
    gen = torch.Generator().manual_seed(2025)
    corpus = "the cat sat on the mat. the dog sat on the log; a cat and a dog met the bat " * 3
    vocab, merges = ref.train(corpus, 40)
    V = len(vocab)
    tok = ref.Reference(vocab, merges)
    tok.id_to_token = {i: t for t, i in vocab.items()}
    single = [w for w in (" cat", " dog", " mat", " log", " bat", " sat") if len(tok.encode(w)) == 1]
    if len(single) < 2:
        sys.exit("interventions_test: the tiny tokenizer has fewer than two one-token words")
    clean, corrupt = "the cat sat on the mat. the dog met the", "the dog sat on the mat. the cat met the"
    if len(tok.encode(clean)) != len(tok.encode(corrupt)):
        sys.exit("interventions_test: the clean and corrupt texts differ in length under the tiny tokenizer")
    text = "the cat sat on the mat and the dog sat on the log"
    text_ids = tok.encode(text)

    with tempfile.TemporaryDirectory() as tmp:
        # GPT-2: LayerNorm, learned positions, biases, tied unembedding; 3 layers x 4 heads.
        d = os.path.join(tmp, "gpt2")
        cfg, W = mf.make_gpt2(gen, V, n_layer=3, d=16, h=4)
        gpt2 = Model("gpt2", cfg, write_model(d, cfg, W, "F32"))
        ref.write_gpt2_files(d, vocab, merges)
        check_ablate(attnviz, "gpt2", tmp, gpt2, d, text_ids, ["--text", text])
        check_patch(attnviz, "gpt2", tmp, gpt2, d, tok, clean, corrupt, single[0], single[1])
        check_attribute(attnviz, "gpt2", tmp, gpt2, d, tok, text_ids, ["--text", text])
        check_attribute(attnviz, "gpt2 --target", tmp, gpt2, d, tok, text_ids, ["--text", text], single[0])

        # Llama: RMSNorm, RoPE, SwiGLU, no biases, grouped-query attention (4 heads, 2 KV heads), untied head.
        d = os.path.join(tmp, "llama")
        cfg, W = mf.make_llama(gen, V, "llama", 4, 2, tied=False, bias=False, n_layer=3)
        llama = Model("llama", cfg, write_model(d, cfg, W, "F32"))
        ref.write_gpt2_files(d, vocab, merges)
        ids = [5, 17, 3, 3, 200 % V, 9, 1, 44, 5, 17, 3]
        check_ablate(attnviz, "llama", tmp, llama, d, ids, ["--ids", ",".join(map(str, ids))])
        check_patch(attnviz, "llama", tmp, llama, d, tok, clean, corrupt, single[1], single[0])
        check_attribute(attnviz, "llama", tmp, llama, d, tok, text_ids, ["--text", text])
        check_attribute(attnviz, "llama --target", tmp, llama, d, tok, ids, ["--ids", ",".join(map(str, ids))],
                        single[1])

        # Bad input: one line naming the value, exit 2, nothing written.
        g = os.path.join(tmp, "gpt2")
        out = os.path.join(tmp, "bad.json")
        two = " cat sat"
        n_clean, n_long = len(tok.encode(clean)), len(tok.encode(clean + " the cat"))
        cases = [
            ("unknown head", ["ablate", "--model", g, "--text", text, "--heads", "0.1,x.y"], ["x.y"]),
            ("layer out of range", ["ablate", "--model", g, "--text", text, "--heads", "3.0"], ["3.0", "layer 3"]),
            ("head out of range", ["ablate", "--model", g, "--text", text, "--heads", "0.4"], ["0.4", "head 4"]),
            ("bad mode", ["ablate", "--model", g, "--text", text, "--mode", "half"], ["half"]),
            ("empty text", ["ablate", "--model", g, "--text", ""], ["--text"]),
            ("empty text attribute", ["attribute", "--model", g, "--text", ""], ["--text"]),
            ("one-token text", ["ablate", "--model", g, "--ids", "3"], ["1 token"]),
            ("target not one token", ["attribute", "--model", g, "--text", text, "--target", two],
             [two.strip(), "2 tokens"]),
            ("answer not one token", ["patch", "--model", g, "--clean", clean, "--corrupt", corrupt, "--answer", two,
                                      "--wrong", single[1]], ["--answer", two.strip()]),
            ("wrong not one token", ["patch", "--model", g, "--clean", clean, "--corrupt", corrupt, "--answer",
                                     single[0], "--wrong", two], ["--wrong", two.strip()]),
            ("unequal texts", ["patch", "--model", g, "--clean", clean, "--corrupt", clean + " the cat", "--answer",
                               single[0], "--wrong", single[1]], [str(n_clean), str(n_long)]),
            ("empty clean", ["patch", "--model", g, "--clean", "", "--corrupt", corrupt, "--answer", single[0],
                             "--wrong", single[1]], ["--clean"]),
        ]
        for case, args, needles in cases:
            expect_usage_error(attnviz, case, args, needles, out)

    if FAILURES:
        print("\n".join(FAILURES[:40]))
        print("%d failures" % len(FAILURES))
        sys.exit(1)
    print("interventions_test: ablate (zero, mean, together), patch, attribute and the logit lens match the "
          "PyTorch reference on gpt2 and llama (GQA); bad input refused")


if __name__ == "__main__":
    main()
