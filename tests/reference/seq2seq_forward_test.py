"""Checks `attnviz dump --model` and `attnviz generate` of the encoder–decoders against an independent
PyTorch forward written here from Hugging Face's modeling_t5.py and modeling_bart.py (not from attnviz's
C++):
  - T5 (T5ForConditionalGeneration): shared embeddings, no position embeddings; relative position buckets
    (_relative_position_bucket, copied here: bidirectional in the encoder, causal in the decoder) looked up
    in each stack's block 0 relative_attention_bias and added to every layer's scores; no 1/√dh; T5LayerNorm
    (RMS, no mean, no bias) before each sub-layer; DenseReluDense (relu: wi, wo; gated-gelu: gelu_new(wi_0)
    · wi_1, wo); final_layer_norm per stack; EncDecAttention in decoder layer.1; tied lm_head = shared with
    the decoder output × d_model^−½ (v1.0), or an own lm_head (v1.1);
  - BART (BartForConditionalGeneration): embeddings × √d (scale_embedding) + learned positions at
    position + 2, layernorm_embedding; post-LN layers (self_attn_layer_norm, encoder_attn_layer_norm,
    final_layer_norm), q/k/v/out_proj with biases, q scaled by 1/√dh, GELU erf form, fc1/fc2; logits =
    decoder output · sharedᵀ + final_logits_bias.
Every stage of every layer of both stacks (with "stack" in the manifest), the cross-attention stages, T5's
position_bias per head, each stack's rollout, the decoder logits and probs at 1e-4; `generate` greedy =
the reference's argmax token by token; bad input one line.

usage: seq2seq_forward_test.py path/to/attnviz
"""

import json
import math
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer_ref as ref  # noqa: E402
from model_ref import FAILURES, close, expect_error, finish, gelu_new, randn, rollout, run, write_model  # noqa: E402

torch.set_default_dtype(torch.float64)
F = torch.nn.functional


# ------------------------------------------------------------------------------------------------
# Independent PyTorch forwards
# ------------------------------------------------------------------------------------------------

def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """Hugging Face's T5Attention._relative_position_bucket."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


def attention(q, k, v, scale, bias, causal):
    """q [h, n, dh], k, v [h, m, dh] → scores (unscaled, unmasked), weights, head outputs."""
    n, m = q.shape[1], k.shape[1]
    scores = q @ k.transpose(-1, -2)
    z = scores * scale
    if bias is not None:
        z = z + bias
    if causal:
        z = z.masked_fill(torch.triu(torch.ones(n, m, dtype=torch.bool), 1), float("-inf"))
    weights = torch.softmax(z, dim=-1)
    return scores, weights, weights @ v


def t5_forward(W, cfg, src, tgt):
    d, h, dk, eps = cfg["d_model"], cfg["num_heads"], cfg["d_kv"], cfg["layer_norm_epsilon"]
    nb, md = cfg["relative_attention_num_buckets"], cfg["relative_attention_max_distance"]
    gated = cfg["feed_forward_proj"].startswith("gated")
    tied = cfg.get("tie_word_embeddings", True)

    def norm(x, p):
        return W[p + ".weight"] * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def lin(x, p):
        return x @ W[p + ".weight"].T

    def position_bias(n, m, table, bidirectional):
        rel = torch.arange(m)[None, :] - torch.arange(n)[:, None]
        return table[relative_position_bucket(rel, bidirectional, nb, md)].permute(2, 0, 1)  # [h, n, m]

    def attn(xq, xkv, p, bias, causal):
        n, m = xq.shape[0], xkv.shape[0]
        q = lin(xq, p + ".q").view(n, h, dk).transpose(0, 1)
        k = lin(xkv, p + ".k").view(m, h, dk).transpose(0, 1)
        v = lin(xkv, p + ".v").view(m, h, dk).transpose(0, 1)
        scores, weights, ho = attention(q, k, v, 1.0, bias, causal)
        return q, k, v, scores, weights, ho, lin(ho.transpose(0, 1).reshape(n, h * dk), p + ".o")

    def ff(x, p):
        if gated:
            return lin(gelu_new(lin(x, p + ".wi_0")) * lin(x, p + ".wi_1"), p + ".wo")
        return lin(torch.relu(lin(x, p + ".wi")), p + ".wo")

    out = {}
    # encoder
    x = W["shared.weight"][src]
    pb = position_bias(len(src), len(src),
                       W["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], True)
    layers = []
    for l in range(cfg["num_layers"]):
        p = "encoder.block.%d." % l
        a = norm(x, p + "layer.0.layer_norm")
        q, k, v, s, w, ho, ao = attn(a, a, p + "layer.0.SelfAttention", pb, False)
        mid = x + ao
        m2 = norm(mid, p + "layer.1.layer_norm")
        mlp = ff(m2, p + "layer.1.DenseReluDense")
        x = mid + mlp
        layers.append(dict(ln_1=a, Q=q, K=k, V=v, scores=s, weights=w, head_output=ho, attn_out=ao,
                           resid_mid=mid, ln_2=m2, mlp_out=mlp, resid_post=x))
    enc_out = norm(x, "encoder.final_layer_norm")
    out["encoder"] = {"layers": layers, "ln_f": enc_out, "position_bias": pb}
    # decoder
    y = W["shared.weight"][tgt]
    pbd = position_bias(len(tgt), len(tgt),
                        W["decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], False)
    layers = []
    for l in range(cfg.get("num_decoder_layers", cfg["num_layers"])):
        p = "decoder.block.%d." % l
        a = norm(y, p + "layer.0.layer_norm")
        q, k, v, s, w, ho, ao = attn(a, a, p + "layer.0.SelfAttention", pbd, True)
        mid = y + ao
        c = norm(mid, p + "layer.1.layer_norm")
        cq, ck, cv, cs, cw, cho, cao = attn(c, enc_out, p + "layer.1.EncDecAttention", None, False)
        mid2 = mid + cao
        m2 = norm(mid2, p + "layer.2.layer_norm")
        mlp = ff(m2, p + "layer.2.DenseReluDense")
        y = mid2 + mlp
        layers.append(dict(ln_1=a, Q=q, K=k, V=v, scores=s, weights=w, head_output=ho, attn_out=ao,
                           resid_mid=mid, cross_Q=cq, cross_K=ck, cross_V=cv, cross_scores=cs, cross_weights=cw,
                           cross_head_output=cho, cross_attn_out=cao, ln_2=m2, mlp_out=mlp, resid_post=y))
    ln_f = norm(y, "decoder.final_layer_norm")
    logits = (ln_f * d ** -0.5) @ W["shared.weight"].T if tied else ln_f @ W["lm_head.weight"].T
    out["decoder"] = {"layers": layers, "ln_f": ln_f, "position_bias": pbd, "logits": logits}
    return out


def bart_forward(W, cfg, src, tgt):
    d, h = cfg["d_model"], cfg["decoder_attention_heads"]
    dh = d // h
    emb_scale = math.sqrt(d) if cfg.get("scale_embedding") else 1.0

    def ln(x, p):
        return F.layer_norm(x, (d,), W[p + ".weight"], W[p + ".bias"], 1e-5)

    def lin(x, p):
        return x @ W[p + ".weight"].T + W[p + ".bias"]

    def embed(ids, stack):
        pos = W["model.%s.embed_positions.weight" % stack][torch.arange(len(ids)) + 2]
        return ln(W["model.shared.weight"][ids] * emb_scale + pos, "model.%s.layernorm_embedding" % stack)

    def attn(xq, xkv, p, causal):
        n, m = xq.shape[0], xkv.shape[0]
        q = lin(xq, p + ".q_proj").view(n, h, dh).transpose(0, 1)
        k = lin(xkv, p + ".k_proj").view(m, h, dh).transpose(0, 1)
        v = lin(xkv, p + ".v_proj").view(m, h, dh).transpose(0, 1)
        scores, weights, ho = attention(q, k, v, dh ** -0.5, None, causal)
        return q, k, v, scores, weights, ho, lin(ho.transpose(0, 1).reshape(n, d), p + ".out_proj")

    def ff(x, p):
        return lin(F.gelu(lin(x, p + "fc1")), p + "fc2")

    out = {}
    x = embed(src, "encoder")
    layers = []
    for l in range(cfg["encoder_layers"]):
        p = "model.encoder.layers.%d." % l
        q, k, v, s, w, ho, ao = attn(x, x, p + "self_attn", False)
        mid = ln(x + ao, p + "self_attn_layer_norm")
        mlp = ff(mid, p)
        x_new = ln(mid + mlp, p + "final_layer_norm")
        layers.append(post_ln_stages(x, q, k, v, s, w, ho, ao, mid, mid, mlp, x_new))
        x = x_new
    out["encoder"] = {"layers": layers}
    y = embed(tgt, "decoder")
    layers = []
    for l in range(cfg["decoder_layers"]):
        p = "model.decoder.layers.%d." % l
        q, k, v, s, w, ho, ao = attn(y, y, p + "self_attn", True)
        mid = ln(y + ao, p + "self_attn_layer_norm")
        cq, ck, cv, cs, cw, cho, cao = attn(mid, x, p + "encoder_attn", False)
        mid2 = ln(mid + cao, p + "encoder_attn_layer_norm")
        mlp = ff(mid2, p)
        y_new = ln(mid2 + mlp, p + "final_layer_norm")
        st = post_ln_stages(y, q, k, v, s, w, ho, ao, mid, mid2, mlp, y_new)
        st.update(cross_Q=cq, cross_K=ck, cross_V=cv, cross_scores=cs, cross_weights=cw, cross_head_output=cho,
                  cross_attn_out=cao)
        layers.append(st)
        y = y_new
    logits = y @ W["model.shared.weight"].T + W["final_logits_bias"][0]
    out["decoder"] = {"layers": layers, "logits": logits}
    return out


def post_ln_stages(x, q, k, v, s, w, ho, ao, mid, mlp_in, mlp, post):
    """A post-LN layer's stages under the decoders' names: ln_1 is what the attention reads (the layer's
    input as it is), resid_mid the normalised sum after the self-attention, ln_2 what the MLP reads (after
    the cross-attention's norm in a decoder layer), resid_post the layer's output."""
    return dict(ln_1=x, Q=q, K=k, V=v, scores=s, weights=w, head_output=ho, attn_out=ao, resid_mid=mid,
                ln_2=mlp_in, mlp_out=mlp, resid_post=post)


# ------------------------------------------------------------------------------------------------
# Tiny checkpoints
# ------------------------------------------------------------------------------------------------

def make_t5(gen, vocab, gated, tied, n_enc=2, n_dec=3, d=16, h=4, dk=6, ff=24, buckets=8, max_distance=20):
    cfg = {"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "d_model": d, "d_kv": dk,
           "d_ff": ff, "num_layers": n_enc, "num_decoder_layers": n_dec, "num_heads": h,
           "relative_attention_num_buckets": buckets, "relative_attention_max_distance": max_distance,
           "layer_norm_epsilon": 1e-6, "feed_forward_proj": "gated-gelu" if gated else "relu",
           "vocab_size": vocab, "tie_word_embeddings": tied, "decoder_start_token_id": 0, "pad_token_id": 0,
           "eos_token_id": 1, "is_encoder_decoder": True, "dropout_rate": 0.1}
    W = {"shared.weight": randn(gen, vocab, d, scale=1.0)}
    if not tied:
        W["lm_head.weight"] = randn(gen, vocab, d)
    for stack, n_layer in (("encoder", n_enc), ("decoder", n_dec)):
        W[stack + ".final_layer_norm.weight"] = randn(gen, d, scale=0.1, mean=1.0)
        for l in range(n_layer):
            p = "%s.block.%d.layer." % (stack, l)
            subs = [("0.SelfAttention", True)] + ([("1.EncDecAttention", False)] if stack == "decoder" else [])
            for sub, self_attn in subs:
                for name, i, o in (("q", d, h * dk), ("k", d, h * dk), ("v", d, h * dk), ("o", h * dk, d)):
                    W[p + sub + "." + name + ".weight"] = randn(gen, o, i)
                if self_attn and l == 0:
                    W[p + sub + ".relative_attention_bias.weight"] = randn(gen, buckets, h, scale=1.0)
            nlayers = 3 if stack == "decoder" else 2
            for i in range(nlayers):
                W[p + "%d.layer_norm.weight" % i] = randn(gen, d, scale=0.1, mean=1.0)
            f = "%d.DenseReluDense." % (nlayers - 1)
            mats = (("wi_0", d, ff), ("wi_1", d, ff), ("wo", ff, d)) if gated else (("wi", d, ff), ("wo", ff, d))
            for name, i, o in mats:
                W[p + f + name + ".weight"] = randn(gen, o, i)
    return cfg, W


def make_bart(gen, vocab, n_enc=2, n_dec=2, d=16, h=4, ff=24, positions=40, scale_embedding=True):
    cfg = {"model_type": "bart", "architectures": ["BartForConditionalGeneration"], "d_model": d,
           "encoder_layers": n_enc, "decoder_layers": n_dec, "encoder_attention_heads": h,
           "decoder_attention_heads": h, "encoder_ffn_dim": ff, "decoder_ffn_dim": ff,
           "activation_function": "gelu", "max_position_embeddings": positions, "vocab_size": vocab,
           "scale_embedding": scale_embedding, "decoder_start_token_id": 2, "eos_token_id": 2, "bos_token_id": 0,
           "pad_token_id": 1, "forced_eos_token_id": 2, "is_encoder_decoder": True}
    W = {"model.shared.weight": randn(gen, vocab, d, scale=0.5),
         "final_logits_bias": randn(gen, 1, vocab, scale=0.5)}

    def ln(p):
        W[p + ".weight"] = randn(gen, d, scale=0.1, mean=1.0)
        W[p + ".bias"] = randn(gen, d, scale=0.1)

    def lin(p, i, o):
        W[p + ".weight"] = randn(gen, o, i)
        W[p + ".bias"] = randn(gen, o, scale=0.1)

    for stack, n_layer in (("encoder", n_enc), ("decoder", n_dec)):
        W["model.%s.embed_positions.weight" % stack] = randn(gen, positions + 2, d, scale=0.5)
        ln("model.%s.layernorm_embedding" % stack)
        for l in range(n_layer):
            p = "model.%s.layers.%d." % (stack, l)
            for a in ("self_attn",) + (("encoder_attn",) if stack == "decoder" else ()):
                for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
                    lin(p + a + "." + name, d, d)
                ln(p + a + "_layer_norm")
            lin(p + "fc1", d, ff)
            lin(p + "fc2", ff, d)
            ln(p + "final_layer_norm")
    return cfg, W


# ------------------------------------------------------------------------------------------------
# Running attnviz and comparing
# ------------------------------------------------------------------------------------------------

def check_dump(attnviz, case, directory, ref_out, src, tgt, source_args, target_args=(), temperature=1.0,
               expect_position_bias=False):
    out = os.path.join(directory, "dump")
    r = run(attnviz, "dump", "--model", directory, "--out", out, "--set", "temperature=%g" % temperature,
            *source_args, *target_args)
    if r.returncode != 0:
        FAILURES.append("%s: dump failed: %s" % (case, r.stderr.strip()))
        return
    man = json.load(open(os.path.join(out, "manifest.json")))
    if [t["id"] for t in man.get("source_tokens", [])] != list(src):
        FAILURES.append("%s: source_tokens %s, expected %s" % (case, man.get("source_tokens"), list(src)))
        return
    if [t["id"] for t in man["tokens"]] != list(tgt):
        FAILURES.append("%s: tokens %s, expected %s" % (case, man["tokens"], list(tgt)))
        return
    if man["model"].get("architecture") != case.split("-")[0]:
        FAILURES.append("%s: manifest model %s" % (case, man["model"]))
    seen = set()
    for s in man["stages"]:
        stack, name, layer, head = s.get("stack"), s["name"], s["layer"], s["head"]
        if stack not in ("encoder", "decoder"):
            FAILURES.append("%s: stage %s has stack %r" % (case, name, stack))
            continue
        if layer is not None and not s["file"].startswith("%s_layer%d_" % (stack, layer)):
            FAILURES.append("%s: file %s of %s layer %d" % (case, s["file"], stack, layer))
        arr = np.load(os.path.join(out, s["file"])).astype(np.float64)
        if list(arr.shape) != s["shape"]:
            FAILURES.append("%s %s: file shape %s, manifest %s" % (case, s["file"], arr.shape, s["shape"]))
        seen.add((stack, name, layer, head))
        ref_stack = ref_out[stack]
        if layer is not None:
            if name not in ref_stack["layers"][layer]:
                continue  # a stage the reference does not name (checked through the ones it does)
            e = ref_stack["layers"][layer][name]
        elif name == "probs":
            e = torch.softmax(ref_stack["logits"][-1] / temperature, -1)
        elif name == "rollout":
            e = rollout(ref_stack["layers"])
        elif name in ref_stack:
            e = ref_stack[name]
        else:
            FAILURES.append("%s: unexpected stage %s %s" % (case, stack, name))
            continue
        if head is not None:
            e = e[head]
        close(case, "%s %s[L%s,h%s]" % (stack, name, layer, head), arr, e.detach().numpy())
    n_head = ref_out["encoder"]["layers"][0]["Q"].shape[0]
    for stack in ("encoder", "decoder"):
        for l, st in enumerate(ref_out[stack]["layers"]):
            for name, value in st.items():
                heads = range(n_head) if value.dim() == 3 else [None]
                for hh in heads:
                    if (stack, name, l, hh) not in seen:
                        FAILURES.append("%s: no stage %s %s of layer %d head %s" % (case, stack, name, l, hh))
        for name in ("rollout",) + (("position_bias",) if expect_position_bias else ()):
            for hh in (range(n_head) if name == "position_bias" else [None]):
                if (stack, name, None, hh) not in seen:
                    FAILURES.append("%s: no %s stage %s head %s" % (case, stack, name, hh))
    for name in ("logits", "probs"):
        if ("decoder", name, None, None) not in seen:
            FAILURES.append("%s: no decoder stage %s" % (case, name))


def check_generate(attnviz, case, directory, forward, src, start, eos, steps=4):
    want, cur = [], [start]
    for _ in range(steps):
        nxt = int(torch.argmax(forward(src, cur)["decoder"]["logits"][-1]))
        want.append(nxt)
        cur.append(nxt)
        if nxt == eos:
            break
    r = run(attnviz, "generate", "--model", directory, "--ids", ",".join(map(str, src)), "--tokens", str(steps),
            "--temperature", "0")
    if r.returncode != 0 or r.stdout.strip() != ",".join(map(str, want)):
        FAILURES.append("%s generate: got %r %r, expected %s" % (case, r.stdout, r.stderr, want))
    r = run(attnviz, "generate", "--model", directory, "--ids", ",".join(map(str, src)), "--tokens", "3",
            "--top-k", "5", "--seed", "3")
    if r.returncode != 0 or not r.stdout.strip():
        FAILURES.append("%s sampled generate: %r %r" % (case, r.stdout, r.stderr))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: seq2seq_forward_test.py path/to/attnviz")
    attnviz = sys.argv[1]
    gen = torch.Generator().manual_seed(4321)
    corpus = "the cat sat on the mat. der hund sass auf der matte; a cat and a dog met the bat " * 3
    vocab, merges = ref.train(corpus, 40)
    V = len(vocab)
    tok = ref.Reference(vocab, merges)

    with tempfile.TemporaryDirectory() as tmp:
        # T5 v1.0: relu, tied (output × d^−½), 2 + 3 layers, d_kv 6 ≠ 16/4, 8 buckets up to 20: sources
        # long enough to reach the logarithmic buckets and the last one. --ids / --target-ids.
        d = os.path.join(tmp, "t5")
        cfg, W = make_t5(gen, V, gated=False, tied=True)
        Wr = write_model(d, cfg, W, "F32")
        src = [(7 * i + 3) % V for i in range(27)]
        target = [5, 9, 11, 4]
        check_dump(attnviz, "t5-relu-tied", d, t5_forward(Wr, cfg, src, [0] + target), src, [0] + target,
                   ["--ids", ",".join(map(str, src))], ["--target-ids", ",".join(map(str, target))],
                   temperature=0.8, expect_position_bias=True)
        # Without a target the decoder is its start token alone.
        check_dump(attnviz, "t5-start", d, t5_forward(Wr, cfg, src[:5], [0]), src[:5], [0],
                   ["--ids", ",".join(map(str, src[:5]))], expect_position_bias=True)
        check_generate(attnviz, "t5", d, lambda s, t: t5_forward(Wr, cfg, s, t), src[:9], 0, 1)

        # T5 v1.1 / flan-t5: gated-gelu, untied lm_head, BF16 file, embeddings only as shared.
        d = os.path.join(tmp, "t5v11")
        cfg, W = make_t5(gen, V, gated=True, tied=False, n_enc=3, n_dec=2, buckets=32, max_distance=128)
        Wr = write_model(d, cfg, W, "BF16")
        src = [(5 * i + 2) % V for i in range(40)]
        target = [(3 * i + 1) % V for i in range(20)]
        check_dump(attnviz, "t5-gated-untied", d, t5_forward(Wr, cfg, src, [0] + target), src, [0] + target,
                   ["--ids", ",".join(map(str, src))], ["--target-ids", ",".join(map(str, target))],
                   expect_position_bias=True)
        check_generate(attnviz, "t5v11", d, lambda s, t: t5_forward(Wr, cfg, s, t), src[:6], 0, 1, steps=5)

        # BART: tokenizer.json (byte-level BPE), --text and --target, scale_embedding, final_logits_bias.
        d = os.path.join(tmp, "bart")
        cfg, W = make_bart(gen, V)
        Wr = write_model(d, cfg, W, "F32")
        ref.write_tokenizer_json(d, vocab, merges, [], ref.byte_level(True))
        text, target_text = "the cat sat on the mat", "der hund sass"
        src, tgt = tok.encode(text), [2] + tok.encode(target_text)
        check_dump(attnviz, "bart", d, bart_forward(Wr, cfg, src, tgt), src, tgt, ["--text", text],
                   ["--target", target_text], temperature=1.3)
        r = run(attnviz, "generate", "--model", d, "--text", text, "--tokens", "3")
        if r.returncode != 0 or not r.stdout.strip():
            FAILURES.append("bart generate --text: %r %r" % (r.stdout, r.stderr))

        # BartModel's names (no "model." prefix), no final_logits_bias, no scale: still read.
        d = os.path.join(tmp, "bart-model")
        cfg, W = make_bart(gen, V, scale_embedding=False)
        W = {(k[len("model."):] if k.startswith("model.") else k): v for k, v in W.items()}
        W["final_logits_bias"] = torch.zeros(1, V)
        Wr = write_model(d, cfg, W, "F32", drop=("final_logits_bias",))
        Wr = {("model." + k if k not in ("final_logits_bias",) else k): v for k, v in Wr.items()}
        src, tgt = [4, 8, 15, 16, 23, 42], [2, 3, 5]
        check_dump(attnviz, "bart-nomodelprefix", d, bart_forward(Wr, cfg, src, tgt), src, tgt,
                   ["--ids", ",".join(map(str, src))], ["--target-ids", "3,5"])
        check_generate(attnviz, "bart", d, lambda s, t: bart_forward(Wr, cfg, s, t), src, 2, 2)

        # Bad input: one line.
        out = os.path.join(tmp, "bad-out")
        t5 = os.path.join(tmp, "t5")
        expect_error(attnviz, "target without text", ["dump", "--model", t5, "--ids", "1,2", "--target", "x",
                                                      "--out", out], "tokenizer")
        expect_error(attnviz, "both targets", ["dump", "--model", t5, "--ids", "1,2", "--target", "x",
                                               "--target-ids", "1", "--out", out], "--target", code=2)
        expect_error(attnviz, "target id outside vocab", ["dump", "--model", t5, "--ids", "1,2", "--target-ids",
                                                          str(V + 3), "--out", out], "outside the vocabulary")
        expect_error(attnviz, "layer out of range", ["dump", "--model", os.path.join(tmp, "t5"), "--ids", "1",
                                                           "--out", out, "--layer", "9"], "--layer")
        j = os.path.join(tmp, "x.json")
        for cmd in (["ablate", "--ids", "1,2,3", "--out", j],
                    ["patch", "--clean", "a b", "--corrupt", "a c", "--answer", "b", "--wrong", "c", "--out", j],
                    ["attribute", "--ids", "1,2,3", "--out", j]):
            r = run(attnviz, cmd[0], "--model", t5, *cmd[1:])
            lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
            if r.returncode != 2 or len(lines) != 1 or "encoder" not in lines[0]:
                FAILURES.append("%s on t5: expected one line naming the encoder–decoder and exit 2, got %d %r" %
                                (cmd[0], r.returncode, r.stderr))
        bad = dict(json.load(open(os.path.join(t5, "config.json"))), feed_forward_proj="gated-swish")
        p = os.path.join(tmp, "t5-bad")
        write_model(p, bad, {"x": torch.zeros(1)})
        expect_error(attnviz, "t5 unknown feed-forward", ["dump", "--model", p, "--ids", "1", "--out", out],
                     "feed_forward_proj")
        bad = dict(json.load(open(os.path.join(t5, "config.json"))), relative_attention_max_distance=3)
        p = os.path.join(tmp, "t5-bad-distance")
        write_model(p, bad, {"x": torch.zeros(1)})
        expect_error(attnviz, "t5 max distance within the exact buckets",
                     ["dump", "--model", p, "--ids", "1", "--out", out], "relative_attention_max_distance")
        missing = os.path.join(tmp, "t5-missing")
        cfg, W = make_t5(gen, V, gated=False, tied=True)
        write_model(missing, cfg, W, drop=("decoder.block.1.layer.1.EncDecAttention.k.weight",))
        expect_error(attnviz, "t5 missing cross tensor", ["dump", "--model", missing, "--ids", "1", "--out", out],
                     "decoder.block.1.layer.1.EncDecAttention.k.weight")
        if os.path.exists(out):
            FAILURES.append("a failed dump left %s behind" % out)

    finish("seq2seq_forward_test: every stage of t5 (relu, tied), t5 v1.1 (gated-gelu, BF16) and bart (both "
           "stacks, cross-attention, position_bias, logits) matches; generate greedy matches")


if __name__ == "__main__":
    main()
