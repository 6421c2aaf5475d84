"""Checks `attnviz dump --model` against an independent PyTorch forward written here from the Hugging Face
model definitions (not from attnviz's C++):
  - GPT-2 (modeling_gpt2): learned positions, LayerNorm with bias, Conv1D (y = x·W + b, W [in, out]) with
    c_attn's q | k | v column blocks, gelu_new (tanh form), tied unembedding;
  - Llama / Qwen2 / Mistral (modeling_llama, modeling_qwen2): RMSNorm w·x/sqrt(mean(x²)+eps), rotate_half RoPE
    (cos/sin of cat(freqs, freqs)), repeat_kv for grouped-query attention, SwiGLU MLP, q/k/v biases (Qwen2).
Tiny random checkpoints are written with a small safetensors writer (Debian has no safetensors package),
in F32, BF16 and F16, with tokenizer files from tokenizer_ref.py. Every dumped stage, the logits, probs and the
rollout are compared at 1e-4 relative. Hostile files must give one line on stderr and a non-zero exit.

usage: model_forward_test.py path/to/attnviz
"""

import json
import math
import os
import struct
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer_ref as ref  # noqa: E402
from model_ref import (FAILURES, close, dumped_stages, expect_error, finish, gelu_new, randn, rollout,  # noqa: E402
                       rotate_half, run, st_bytes, write_model)

torch.set_default_dtype(torch.float64)


# ------------------------------------------------------------------------------------------------
# Independent PyTorch forwards
# ------------------------------------------------------------------------------------------------

def causal_attention(q, k, v):
    """q, k, v: [h, n, dh] → stages per head."""
    n, dh = q.shape[1], q.shape[2]
    scores = q @ k.transpose(-1, -2)
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    weights = torch.softmax((scores / math.sqrt(dh)).masked_fill(mask, float("-inf")), dim=-1)
    return scores, weights, weights @ v


def gpt2_forward(W, cfg, ids):
    d, h = cfg["n_embd"], cfg["n_head"]
    dh, n, eps = d // h, len(ids), cfg["layer_norm_epsilon"]
    ln = lambda x, p: torch.nn.functional.layer_norm(x, (d,), W[p + ".weight"], W[p + ".bias"], eps)  # noqa: E731
    conv1d = lambda x, p: x @ W[p + ".weight"] + W[p + ".bias"]  # noqa: E731
    x = W["wte.weight"][ids] + W["wpe.weight"][:n]
    out = {"layers": []}
    for l in range(cfg["n_layer"]):
        p = "h.%d." % l
        st = {}
        a = ln(x, p + "ln_1")
        q, k, v = conv1d(a, p + "attn.c_attn").split(d, dim=-1)
        heads = lambda t: t.view(n, h, dh).transpose(0, 1)  # noqa: E731
        q, k, v = heads(q), heads(k), heads(v)
        scores, weights, ho = causal_attention(q, k, v)
        attn_out = conv1d(ho.transpose(0, 1).reshape(n, d), p + "attn.c_proj")
        mid = x + attn_out
        m = ln(mid, p + "ln_2")
        mlp = conv1d(gelu_new(conv1d(m, p + "mlp.c_fc")), p + "mlp.c_proj")
        x = mid + mlp
        st.update(ln_1=a, Q=q, K=k, V=v, scores=scores, weights=weights, head_output=ho, attn_out=attn_out,
                  resid_mid=mid, ln_2=m, mlp_out=mlp, resid_post=x)
        out["layers"].append(st)
    out["ln_f"] = ln(x, "ln_f")
    out["logits"] = out["ln_f"] @ W["wte.weight"].T
    return out


def rms_norm(x, w, eps):
    return w * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def gemma_rms_norm(x, w, eps):
    # GemmaRMSNorm: the stored weight w scales by (1 + w).
    return (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)) * (1.0 + w)


def llama_forward(W, cfg, ids):
    gemma = cfg["model_type"] == "gemma"
    norm = gemma_rms_norm if gemma else rms_norm
    act = (lambda t: torch.nn.functional.gelu(t, approximate="tanh")) if gemma else torch.nn.functional.silu
    d, h = cfg["hidden_size"], cfg["num_attention_heads"]
    g = cfg.get("num_key_value_heads", h)
    dh = cfg.get("head_dim") or d // h
    n, eps = len(ids), cfg["rms_norm_eps"]
    inv_freq = 1.0 / (cfg.get("rope_theta", 10000.0) ** (torch.arange(0, dh, 2, dtype=torch.float64) / dh))
    freqs = torch.outer(torch.arange(n, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()

    def lin(x, p):
        y = x @ W[p + ".weight"].T
        return y + W[p + ".bias"] if p + ".bias" in W else y

    x = W["model.embed_tokens.weight"][ids]
    if gemma:
        x = x * torch.tensor(d ** 0.5, dtype=x.dtype)  # GemmaModel's normalizer
    out = {"layers": []}
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        a = norm(x, W[p + "input_layernorm.weight"], eps)
        q = lin(a, p + "self_attn.q_proj").view(n, h, dh).transpose(0, 1)
        k = lin(a, p + "self_attn.k_proj").view(n, g, dh).transpose(0, 1)
        v = lin(a, p + "self_attn.v_proj").view(n, g, dh).transpose(0, 1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k[:, None].expand(g, h // g, n, dh).reshape(h, n, dh)  # repeat_kv
        v = v[:, None].expand(g, h // g, n, dh).reshape(h, n, dh)
        scores, weights, ho = causal_attention(q, k, v)
        attn_out = lin(ho.transpose(0, 1).reshape(n, h * dh), p + "self_attn.o_proj")
        mid = x + attn_out
        m = norm(mid, W[p + "post_attention_layernorm.weight"], eps)
        mlp = lin(act(lin(m, p + "mlp.gate_proj")) * lin(m, p + "mlp.up_proj"),
                  p + "mlp.down_proj")
        x = mid + mlp
        out["layers"].append(dict(ln_1=a, Q=q, K=k, V=v, scores=scores, weights=weights, head_output=ho,
                                  attn_out=attn_out, resid_mid=mid, ln_2=m, mlp_out=mlp, resid_post=x))
    out["ln_f"] = norm(x, W["model.norm.weight"], eps)
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings", gemma) else W["lm_head.weight"]
    out["logits"] = out["ln_f"] @ head.T
    return out


# ------------------------------------------------------------------------------------------------
# Tiny checkpoints
# ------------------------------------------------------------------------------------------------

def make_gpt2(gen, vocab, n_layer=2, d=16, h=4, positions=32):
    cfg = {"model_type": "gpt2", "n_layer": n_layer, "n_head": h, "n_embd": d, "n_positions": positions,
           "vocab_size": vocab, "layer_norm_epsilon": 1e-5, "n_inner": None, "activation_function": "gelu_new"}
    W = {"wte.weight": randn(gen, vocab, d, scale=1.0), "wpe.weight": randn(gen, positions, d, scale=0.5),
         "ln_f.weight": randn(gen, d, scale=0.1, mean=1.0), "ln_f.bias": randn(gen, d, scale=0.1)}
    for l in range(n_layer):
        p = "h.%d." % l
        for ln in ("ln_1", "ln_2"):
            W[p + ln + ".weight"] = randn(gen, d, scale=0.1, mean=1.0)
            W[p + ln + ".bias"] = randn(gen, d, scale=0.1)
        for name, i, o in (("attn.c_attn", d, 3 * d), ("attn.c_proj", d, d), ("mlp.c_fc", d, 4 * d),
                           ("mlp.c_proj", 4 * d, d)):
            W[p + name + ".weight"] = randn(gen, i, o)
            W[p + name + ".bias"] = randn(gen, o, scale=0.1)
    return cfg, W


def make_llama(gen, vocab, model_type, h, g, tied, bias, head_dim=None, n_layer=2, d=16, ff=24):
    dh = head_dim or d // h
    cfg = {"model_type": model_type, "num_hidden_layers": n_layer, "num_attention_heads": h,
           "num_key_value_heads": g, "hidden_size": d, "intermediate_size": ff, "vocab_size": vocab,
           "rms_norm_eps": 1e-6, "rope_theta": 500.0, "max_position_embeddings": 64,
           "tie_word_embeddings": tied, "hidden_act": "silu", "rope_scaling": None}
    if head_dim:
        cfg["head_dim"] = head_dim
    if model_type == "qwen2":
        cfg.update(use_sliding_window=False, sliding_window=4096)
    if model_type == "mistral":
        cfg["sliding_window"] = None
    W = {"model.embed_tokens.weight": randn(gen, vocab, d, scale=1.0),
         "model.norm.weight": randn(gen, d, scale=0.1, mean=1.0)}
    if not tied:
        W["lm_head.weight"] = randn(gen, vocab, d)
    for l in range(n_layer):
        p = "model.layers.%d." % l
        W[p + "input_layernorm.weight"] = randn(gen, d, scale=0.1, mean=1.0)
        W[p + "post_attention_layernorm.weight"] = randn(gen, d, scale=0.1, mean=1.0)
        for name, i, o in (("q_proj", d, h * dh), ("k_proj", d, g * dh), ("v_proj", d, g * dh),
                           ("o_proj", h * dh, d)):
            W[p + "self_attn." + name + ".weight"] = randn(gen, o, i)
            if bias and name != "o_proj":
                W[p + "self_attn." + name + ".bias"] = randn(gen, o, scale=0.2)
        for name, i, o in (("gate_proj", d, ff), ("up_proj", d, ff), ("down_proj", ff, d)):
            W[p + "mlp." + name + ".weight"] = randn(gen, o, i)
    return cfg, W


# ------------------------------------------------------------------------------------------------
# Running attnviz and comparing
# ------------------------------------------------------------------------------------------------

def check_dump(attnviz, case, directory, ref_out, ids, cfg, extra_args=(), layers=None, temperature=1.0,
               text=None):
    out = os.path.join(directory, "dump")
    args = ["dump", "--model", directory, "--out", out, "--set", "temperature=%g" % temperature, *extra_args]
    args += ["--text", text] if text is not None else ["--ids", ",".join(map(str, ids))]
    r = run(attnviz, *args)
    if r.returncode != 0:
        FAILURES.append("%s: dump failed: %s" % (case, r.stderr.strip()))
        return
    man = json.load(open(os.path.join(out, "manifest.json")))
    got_ids = [t["id"] for t in man["tokens"]]
    if got_ids != list(ids):
        FAILURES.append("%s: token ids %s, expected %s" % (case, got_ids, list(ids)))
        return
    model = man["model"]
    want = {"architecture": cfg["model_type"], "n_layer": len(ref_out["layers"]),
            "n_head": ref_out["layers"][0]["Q"].shape[0], "vocab_size": ref_out["logits"].shape[1]}
    for k, v in want.items():
        if model.get(k) != v:
            FAILURES.append("%s: manifest model.%s = %s, expected %s" % (case, k, model.get(k), v))
    seen = set()
    for s, arr in dumped_stages(case, out, man):
        name, layer, head = s["name"], s["layer"], s["head"]
        seen.add((name, layer, head))
        if layer is not None:
            e = ref_out["layers"][layer][name]
            if head is not None:
                e = e[head]
        elif name == "probs":
            e = torch.softmax(ref_out["logits"][-1] / temperature, -1)
        elif name == "rollout":
            e = rollout(ref_out["layers"])
        else:
            e = ref_out[name]
        close(case, "%s[L%s,h%s]" % (name, layer, head), arr, e.detach().numpy())
    n_head = ref_out["layers"][0]["Q"].shape[0]
    for l in range(len(ref_out["layers"])):
        for name in ("ln_1", "attn_out", "resid_mid", "ln_2", "mlp_out", "resid_post"):
            if (name, l, None) not in seen:
                FAILURES.append("%s: no stage %s of layer %d" % (case, name, l))
        for name in ("Q", "K", "V", "scores", "weights", "head_output"):
            for hh in range(n_head):
                wanted = layers is None or l in layers
                if ((name, l, hh) in seen) != wanted:
                    FAILURES.append("%s: stage %s layer %d head %d %s" % (case, name, l, hh,
                                                                          "missing" if wanted else "not restricted"))
    for name in ("ln_f", "logits", "probs", "rollout"):
        if (name, None, None) not in seen:
            FAILURES.append("%s: no stage %s" % (case, name))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: model_forward_test.py path/to/attnviz")
    attnviz = sys.argv[1]
    gen = torch.Generator().manual_seed(1234)
    corpus = "the cat sat on the mat. the dog sat on the log; a cat and a dog met the bat " * 3
    vocab, merges = ref.train(corpus, 40)
    V = len(vocab)
    text = "the cat met a dog on the mat"
    tok = ref.Reference(vocab, merges)
    text_ids = tok.encode(text)

    with tempfile.TemporaryDirectory() as tmp:
        # GPT-2, F32, "transformer." prefix, attn.bias buffers present, GPT-2 tokenizer files, --text.
        d = os.path.join(tmp, "gpt2")
        cfg, W = make_gpt2(gen, V)
        masks = {"transformer.h.%d.attn.bias" % l: torch.tril(torch.ones(1, 1, 32, 32)) for l in range(2)}
        Wr = write_model(d, cfg, W, "F32", rename=lambda k: "transformer." + k, extra=masks)
        ref.write_gpt2_files(d, vocab, merges)
        check_dump(attnviz, "gpt2", d, gpt2_forward(Wr, cfg, text_ids), text_ids, cfg, text=text,
                   temperature=0.7)
        r = run(attnviz, "tokenize", "--model", d, "--text", text)
        if r.returncode != 0 or json.loads(r.stdout) != text_ids:
            FAILURES.append("gpt2 tokenize: %r" % r.stdout)

        # Llama, grouped-query attention (4 heads, 2 KV heads), untied head, F32, --ids, --layer 1.
        d = os.path.join(tmp, "llama")
        cfg, W = make_llama(gen, V, "llama", 4, 2, tied=False, bias=False)
        Wr = write_model(d, cfg, W, "F32")
        ids = [5, 17, 3, 3, 200, 9, 1, 44]
        out = llama_forward(Wr, cfg, ids)
        check_dump(attnviz, "llama-gqa", d, out, ids, cfg, extra_args=["--layer", "1"], layers={1})
        # Greedy generation = argmax of the reference, token by token.
        want, cur = [], list(ids)
        for _ in range(3):
            nxt = int(torch.argmax(llama_forward(Wr, cfg, cur)["logits"][-1]))
            want.append(nxt)
            cur.append(nxt)
        r = run(attnviz, "generate", "--model", d, "--ids", ",".join(map(str, ids)), "--tokens", "3",
                "--temperature", "0")
        if r.returncode != 0 or r.stdout.strip() != ",".join(map(str, want)):
            FAILURES.append("llama generate: got %r %r, expected %s" % (r.stdout, r.stderr, want))
        r = run(attnviz, "generate", "--model", d, "--ids", "1,2", "--tokens", "4", "--top-k", "5",
                "--top-p", "0.9", "--seed", "7")
        if r.returncode != 0 or len(r.stdout.strip().split(",")) != 4:
            FAILURES.append("llama sampled generate: %r %r" % (r.stdout, r.stderr))

        # Qwen2: q/k/v biases, tied head, BF16 file, GQA 4:1, tokenizer.json, --text.
        d = os.path.join(tmp, "qwen2")
        cfg, W = make_llama(gen, V, "qwen2", 4, 1, tied=True, bias=True)
        Wr = write_model(d, cfg, W, "BF16")
        ref.write_tokenizer_json(d, vocab, merges, [], ref.byte_level(True))
        check_dump(attnviz, "qwen2-bf16", d, llama_forward(Wr, cfg, text_ids), text_ids, cfg, text=text)

        # Mistral: F16 file, explicit head_dim (8 ≠ 16/4), sliding_window null, MHA.
        d = os.path.join(tmp, "mistral")
        cfg, W = make_llama(gen, V, "mistral", 4, 4, tied=False, bias=False, head_dim=8)
        Wr = write_model(d, cfg, W, "F16")
        ids = [7, 8, 9, 10, 250, 0]
        check_dump(attnviz, "mistral-f16", d, llama_forward(Wr, cfg, ids), ids, cfg)

        # Gemma: (1 + w) RMSNorm, embeddings × √d, GeGLU (tanh GELU), head_dim 8 ≠ 16/4, GQA 4:2, tied
        # by default (no tie_word_embeddings field, no lm_head), BF16 file.
        d = os.path.join(tmp, "gemma")
        cfg, W = make_llama(gen, V, "gemma", 4, 2, tied=True, bias=False, head_dim=8)
        for k in ("tie_word_embeddings", "hidden_act", "rope_scaling"):
            cfg.pop(k)
        cfg["hidden_activation"] = "gelu_pytorch_tanh"
        W = {k: (v - 1.0 if k.endswith("layernorm.weight") or k == "model.norm.weight" else v)
             for k, v in W.items()}  # stored as γ − 1
        Wr = write_model(d, cfg, W, "BF16")
        ids = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]
        check_dump(attnviz, "gemma-bf16", d, llama_forward(Wr, cfg, ids), ids, cfg)
        bad_act = dict(cfg, hidden_activation="gelu")
        write_model(os.path.join(tmp, "gemma-erf"), bad_act, W)
        expect_error(attnviz, "gemma exact gelu", ["dump", "--model", os.path.join(tmp, "gemma-erf"), "--ids",
                                                   "1,2", "--out", os.path.join(tmp, "gemma-out")],
                     "hidden_activation")

        # Hostile and unsupported inputs: one line, non-zero exit.
        bad = os.path.join(tmp, "bad")
        base_cfg, base_W = make_llama(gen, V, "llama", 2, 2, tied=True, bias=False)

        def variant(name, cfg_change=None, data=None):
            p = os.path.join(bad, name)
            c = dict(base_cfg)
            if cfg_change:
                c.update(cfg_change)
            write_model(p, c, base_W)
            if data is not None:
                with open(os.path.join(p, "model.safetensors"), "wb") as f:
                    f.write(data)
            return p

        out = os.path.join(tmp, "bad-out")
        good = st_bytes(base_W)
        cases = [
            ("unknown model_type", variant("xlnet", {"model_type": "xlnet"}), "model_type"),
            ("rope scaling", variant("rs", {"rope_scaling": {"rope_type": "linear", "factor": 2.0}}), "rope_scaling"),
            ("qwen2 sliding window", variant("sw", {"model_type": "qwen2", "use_sliding_window": True}),
             "use_sliding_window"),
            ("missing field", variant("nf", {"hidden_size": None}), "hidden_size"),
            ("truncated", variant("trunc", data=good[: len(good) // 2]), "truncated"),
            ("10 GB header", variant("huge", data=struct.pack("<Q", 10 << 30) + good[8:]), "header length"),
            ("tiny file", variant("tiny", data=b"\x01\x02"), "truncated"),
            ("wrong shape", variant("shape", data=st_bytes(
                {k: (v[:, :-1] if k == "model.layers.0.mlp.up_proj.weight" else v) for k, v in base_W.items()})),
             "model.layers.0.mlp.up_proj.weight"),
            ("missing tensor", variant("missing", data=st_bytes(
                {k: v for k, v in base_W.items() if k != "model.norm.weight"})), "model.norm.weight"),
            ("header lies", variant("lies", data=st_bytes(base_W, header_override=lambda h: h[
                "model.norm.weight"].__setitem__("data_offsets", [0, 1 << 40]))), "model.norm.weight"),
            ("bad json header", variant("badjson", data=struct.pack("<Q", 4) + b"{{{{"), "not valid JSON"),
        ]
        for case, p, needle in cases:
            expect_error(attnviz, case, ["dump", "--model", p, "--ids", "1,2", "--out", out], needle)
        expect_error(attnviz, "missing tokenizer", ["dump", "--model", os.path.join(tmp, "llama"), "--text", "hi",
                                                     "--out", out], "tokenizer")
        expect_error(attnviz, "id outside vocab", ["dump", "--model", os.path.join(tmp, "llama"), "--ids",
                                                    str(V + 5), "--out", out], "outside the vocabulary")
        if os.path.exists(out):
            FAILURES.append("a failed dump left %s behind" % out)

    finish("model_forward_test: all stages of gpt2, llama (GQA), qwen2 (BF16, biases, tied), mistral (F16), "
           "gemma (BF16) match")


if __name__ == "__main__":
    main()
