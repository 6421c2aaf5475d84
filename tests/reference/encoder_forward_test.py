"""Checks `attnviz dump --model` of the encoders against an independent PyTorch forward written here from
the Hugging Face model definitions (modeling_bert, modeling_roberta, modeling_distilbert), not from
attnviz's C++:
  - BERT (BertForMaskedLM): word + token type + position embeddings, LayerNorm; per layer bidirectional
    attention (no mask) with q/k/v/o biases, x = LN(x + attn); x = LN(x + W2·gelu(W1·x)) (exact erf GELU);
    the masked-LM head: dense, GELU, LayerNorm, the tied word embeddings plus cls.predictions.bias.
    A sentence pair (--text A --text-b B) through the committed WordPiece tokenizer.json: the ids and
    segments must be Hugging Face's own (tests/data/hf_tokenizers/bert_uncased.expected.json).
  - RoBERTa (RobertaForMaskedLM): positions from row pad_token_id + 1, one token type, lm_head.*; a pair
    through a byte-level BPE tokenizer.json with RobertaProcessing (<s> A </s></s> B </s>).
  - DistilBERT (DistilBertForMaskedLM): no token types, q_lin / k_lin / v_lin / out_lin, sa_layer_norm,
    ffn.lin1 / lin2, output_layer_norm, vocab_transform / vocab_layer_norm / vocab_projector.
  - BertModel (no "bert." prefix, no head; TensorFlow-era LayerNorm.gamma / beta names, BF16): every
    stage, no logits.
Every dumped stage of every layer and head, token_type, ln_f, the MLM logits and probs [n, V] and the
rollout are compared at 1e-4 relative. Unsupported config fields and next-token commands on an encoder
must give one line on stderr (the commands: exit 2).

usage: encoder_forward_test.py path/to/attnviz
"""

import json
import math
import os
import shutil
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_ref as mf  # noqa: E402  (the checkpoint writer, rollout, run, close, expect_error)

torch.set_default_dtype(torch.float64)
HF_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "hf_tokenizers")
FAILURES = mf.FAILURES


# ------------------------------------------------------------------------------------------------
# Independent PyTorch forward (modeling_bert / modeling_roberta / modeling_distilbert, eval mode)
# ------------------------------------------------------------------------------------------------

def encoder_forward(W, names, cfg, ids, type_ids):
    """names: the architecture's tensor names; returns every stage as attnviz names them."""
    d, h = names["d"], names["h"]
    dh, n, eps = d // h, len(ids), names["eps"]
    ln = lambda x, p: torch.nn.functional.layer_norm(x, (d,), W[p + ".weight"], W[p + ".bias"], eps)  # noqa: E731
    lin = lambda x, p: x @ W[p + ".weight"].T + W[p + ".bias"]  # noqa: E731
    gelu = torch.nn.functional.gelu  # the exact erf form ("gelu")
    out = {"layers": []}
    x = W[names["word"]][ids]
    if names.get("types"):
        out["token_type"] = W[names["types"]][type_ids]
        x = x + out["token_type"]
    offset = names.get("offset", 0)
    x = x + W[names["pos"]][offset: offset + n]
    x = ln(x, names["emb_ln"])
    for l in range(names["layers"]):
        p = names["block"] % l
        heads = lambda t: t.view(n, h, dh).transpose(0, 1)  # noqa: E731
        q, k, v = heads(lin(x, p + names["q"])), heads(lin(x, p + names["k"])), heads(lin(x, p + names["v"]))
        scores = q @ k.transpose(-1, -2)
        weights = torch.softmax(scores / math.sqrt(dh), dim=-1)  # every key: no causal mask
        ho = weights @ v
        attn_out = lin(ho.transpose(0, 1).reshape(n, d), p + names["o"])
        mid = ln(x + attn_out, p + names["ln1"])
        mlp = lin(gelu(lin(mid, p + names["fc"])), p + names["proj"])
        post = ln(mid + mlp, p + names["ln2"])
        out["layers"].append(dict(ln_1=x, Q=q, K=k, V=v, scores=scores, weights=weights, head_output=ho,
                                  attn_out=attn_out, resid_mid=mid, ln_2=mid, mlp_out=mlp, resid_post=post))
        x = post
    if names.get("head"):
        out["ln_f"] = ln(gelu(lin(x, names["head"])), names["head_ln"])
        out["logits"] = out["ln_f"] @ W[names["word"]].T + W[names["bias"]]
    return out


# ------------------------------------------------------------------------------------------------
# Tiny checkpoints
# ------------------------------------------------------------------------------------------------

BERT_NAMES = dict(word="embeddings.word_embeddings.weight", pos="embeddings.position_embeddings.weight",
                  types="embeddings.token_type_embeddings.weight", emb_ln="embeddings.LayerNorm",
                  block="encoder.layer.%d.", q="attention.self.query", k="attention.self.key",
                  v="attention.self.value", o="attention.output.dense", ln1="attention.output.LayerNorm",
                  fc="intermediate.dense", proj="output.dense", ln2="output.LayerNorm")
DISTIL_NAMES = dict(word="embeddings.word_embeddings.weight", pos="embeddings.position_embeddings.weight",
                    emb_ln="embeddings.LayerNorm", block="transformer.layer.%d.", q="attention.q_lin",
                    k="attention.k_lin", v="attention.v_lin", o="attention.out_lin", ln1="sa_layer_norm",
                    fc="ffn.lin1", proj="ffn.lin2", ln2="output_layer_norm")


def make_encoder(gen, names, vocab, positions, types, n_layer=2, d=16, h=4, ff=24, head=None):
    """Random weights under the encoder's own names (no prefix); head: (dense, ln, bias) names or None."""
    r = mf.randn
    W = {names["word"]: r(gen, vocab, d, scale=1.0), names["pos"]: r(gen, positions, d, scale=0.5)}
    if types:
        W[names["types"]] = r(gen, types, d, scale=0.5)
    lns = [names["emb_ln"]]
    for l in range(n_layer):
        p = names["block"] % l
        for name, i, o in ((names["q"], d, d), (names["k"], d, d), (names["v"], d, d), (names["o"], d, d),
                           (names["fc"], d, ff), (names["proj"], ff, d)):
            W[p + name + ".weight"] = r(gen, o, i)
            W[p + name + ".bias"] = r(gen, o, scale=0.1)
        lns += [p + names["ln1"], p + names["ln2"]]
    if head:
        dense, head_ln, bias = head
        W[dense + ".weight"] = r(gen, d, d)
        W[dense + ".bias"] = r(gen, d, scale=0.1)
        W[bias] = r(gen, vocab, scale=0.3)
        lns.append(head_ln)
    for p in lns:
        W[p + ".weight"] = r(gen, d, scale=0.1, mean=1.0)
        W[p + ".bias"] = r(gen, d, scale=0.1)
    return W


def write(directory, cfg, W, dtype="F32", rename=lambda k: k, tokenizer=None):
    """Writes config.json, model.safetensors (names through `rename`) and a tokenizer.json copy; returns
    the weights as the file holds them, under the unrenamed names."""
    Wr = mf.write_model(directory, cfg, W, dtype, rename=rename)
    if tokenizer:
        shutil.copy(os.path.join(HF_DATA, tokenizer + ".tokenizer.json"), os.path.join(directory, "tokenizer.json"))
    return Wr


# ------------------------------------------------------------------------------------------------
# Comparing
# ------------------------------------------------------------------------------------------------

def check_dump(attnviz, case, directory, ref_out, ids, type_ids, cfg, args, temperature=1.0):
    out = os.path.join(directory, "dump")
    r = mf.run(attnviz, "dump", "--model", directory, "--out", out, "--set", "temperature=%g" % temperature,
               *args)
    if r.returncode != 0:
        FAILURES.append("%s: dump failed: %s" % (case, r.stderr.strip()))
        return None
    man = json.load(open(os.path.join(out, "manifest.json")))
    got_ids = [t["id"] for t in man["tokens"]]
    if got_ids != list(ids):
        FAILURES.append("%s: token ids %s, expected %s" % (case, got_ids, list(ids)))
        return None
    if "token_type" in ref_out:
        got_types = [t.get("token_type") for t in man["tokens"]]
        if got_types != list(type_ids):
            FAILURES.append("%s: token types %s, expected %s" % (case, got_types, list(type_ids)))
    if man["model"]["architecture"] != cfg["model_type"]:
        FAILURES.append("%s: architecture %s" % (case, man["model"]["architecture"]))
    seen = set()
    for s, arr in mf.dumped_stages(case, out, man):
        name, layer, head = s["name"], s["layer"], s["head"]
        seen.add((name, layer, head))
        if layer is not None:
            e = ref_out["layers"][layer][name]
            if head is not None:
                e = e[head]
        elif name == "probs":
            e = torch.softmax(ref_out["logits"] / temperature, -1)  # every position: [n, V]
        elif name == "rollout":
            e = mf.rollout(ref_out["layers"])
        elif name in ref_out:
            e = ref_out[name]
        else:
            FAILURES.append("%s: unexpected stage %s" % (case, name))
            continue
        mf.close(case, "%s[L%s,h%s]" % (name, layer, head), arr, e.detach().numpy())
    n_head = ref_out["layers"][0]["Q"].shape[0]
    for l in range(len(ref_out["layers"])):
        for name in ("ln_1", "Q", "K", "V", "scores", "weights", "head_output", "attn_out", "resid_mid", "ln_2",
                     "mlp_out", "resid_post"):
            for hh in ([None] if name in ("ln_1", "attn_out", "resid_mid", "ln_2", "mlp_out", "resid_post")
                       else range(n_head)):
                if (name, l, hh) not in seen:
                    FAILURES.append("%s: no stage %s of layer %d head %s" % (case, name, l, hh))
    wanted = ["rollout"] + (["ln_f", "logits", "probs"] if "logits" in ref_out else []) + \
        (["token_type"] if "token_type" in ref_out else [])
    for name in wanted:
        if (name, None, None) not in seen:
            FAILURES.append("%s: no stage %s" % (case, name))
    for name in ("ln_f", "logits", "probs"):
        if "logits" not in ref_out and (name, None, None) in seen:
            FAILURES.append("%s: a bare encoder has no %s, but the dump has one" % (case, name))
    return man


def expect_usage_error(attnviz, case, args, needle):
    r = mf.run(attnviz, *args)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    if r.returncode != 2 or len(lines) != 1 or needle not in lines[0]:
        FAILURES.append("%s: expected one line naming %r and exit 2, got %d %r" % (case, needle, r.returncode,
                                                                                    r.stderr))


def bert_config(vocab, positions, d=16, h=4, ff=24, n_layer=2, **extra):
    cfg = {"model_type": "bert", "architectures": ["BertForMaskedLM"], "num_hidden_layers": n_layer,
           "num_attention_heads": h, "hidden_size": d, "intermediate_size": ff, "vocab_size": vocab,
           "max_position_embeddings": positions, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
           "hidden_act": "gelu", "pad_token_id": 0, "position_embedding_type": "absolute",
           "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
    cfg.update(extra)
    return cfg


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: encoder_forward_test.py path/to/attnviz")
    attnviz = sys.argv[1]
    gen = torch.Generator().manual_seed(4321)
    bert_hf = json.load(open(os.path.join(HF_DATA, "bert_uncased.expected.json")))
    bert_vocab = len(json.load(open(os.path.join(HF_DATA, "bert_uncased.tokenizer.json")))["model"]["vocab"])
    rob_hf = json.load(open(os.path.join(HF_DATA, "gpt2_bytelevel.expected.json")))
    rob_tok = json.load(open(os.path.join(HF_DATA, "gpt2_bytelevel.tokenizer.json")))
    rob_vocab = max(len(rob_tok["model"]["vocab"]), 1 + max(t["id"] for t in rob_tok["added_tokens"]))

    with tempfile.TemporaryDirectory() as tmp:
        # BERT (BertForMaskedLM: "bert." prefix, cls.predictions.*; the decoder weight tied and absent), a
        # sentence pair through the WordPiece tokenizer.json, temperature 0.8.
        d = os.path.join(tmp, "bert")
        cfg = bert_config(bert_vocab, 40)
        head = ("cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm", "cls.predictions.bias")
        W = make_encoder(gen, BERT_NAMES, bert_vocab, 40, 2, head=head)
        Wr = write(d, cfg, W, rename=lambda k: k if k.startswith("cls.") else "bert." + k, tokenizer="bert_uncased")
        names = dict(BERT_NAMES, d=16, h=4, eps=1e-12, layers=2, head=head[0], head_ln=head[1], bias=head[2])
        pair = bert_hf["pair"]
        ref_out = encoder_forward(Wr, names, cfg, pair["ids"], pair["type_ids"])
        check_dump(attnviz, "bert-pair", d, ref_out, pair["ids"], pair["type_ids"], cfg,
                   ["--text", pair["a"], "--text-b", pair["b"]], temperature=0.8)
        # One text with a [MASK]: the ids of [CLS] ... [MASK] ... [SEP], segment 0 throughout.
        r = mf.run(attnviz, "tokenize", "--model", d, "--text", "the cat [MASK] on the mat.")
        ids = json.loads(r.stdout) if r.returncode == 0 else None
        if not ids or 4 not in ids or ids[0] != 2 or ids[-1] != 3:
            FAILURES.append("bert [MASK] tokenize: %r %r" % (r.stdout, r.stderr))
        else:
            check_dump(attnviz, "bert-mask", d, encoder_forward(Wr, names, cfg, ids, [0] * len(ids)), ids,
                       [0] * len(ids), cfg, ["--text", "the cat [MASK] on the mat."])
        # --ids: every token in segment 0; --layer keeps one layer's heads (checked by the stage count).
        ids = [2, 7, 4, 9, 3]
        man = check_dump(attnviz, "bert-ids", d, encoder_forward(Wr, names, cfg, ids, [0] * 5), ids, [0] * 5, cfg,
                         ["--ids", ",".join(map(str, ids))])
        # next-token commands refuse an encoder in one line, exit 2
        expect_usage_error(attnviz, "bert generate", ["generate", "--model", d, "--ids", "2,7,3", "--tokens", "2"],
                           "is an encoder (bert): it fills masks, it does not generate")
        expect_usage_error(attnviz, "bert ablate", ["ablate", "--model", d, "--ids", "2,7,3", "--out",
                                                    os.path.join(tmp, "a.json")], "is an encoder (bert)")
        expect_usage_error(attnviz, "bert attribute", ["attribute", "--model", d, "--ids", "2,7,3", "--out",
                                                       os.path.join(tmp, "a.json")], "is an encoder (bert)")
        expect_usage_error(attnviz, "bert patch", ["patch", "--model", d, "--clean", "the cat", "--corrupt", "the dog",
                                                   "--answer", "cat", "--wrong", "dog", "--out",
                                                   os.path.join(tmp, "p.json")], "is an encoder (bert)")
        expect_usage_error(attnviz, "text-b alone", ["dump", "--model", d, "--ids", "2,3", "--text-b", "x", "--out",
                                                     os.path.join(tmp, "o")], "--text-b")

        # Unsupported config fields name themselves in one line.
        for field, value, needle in (("hidden_act", "relu", "hidden_act"),
                                     ("position_embedding_type", "relative_key", "position_embedding_type"),
                                     ("is_decoder", True, "is_decoder")):
            bad = os.path.join(tmp, "bad-" + field)
            write(bad, dict(cfg, **{field: value}), W, rename=lambda k: k if k.startswith("cls.") else "bert." + k)
            mf.expect_error(attnviz, "bert " + field, ["dump", "--model", bad, "--ids", "2,3", "--out",
                                                       os.path.join(tmp, "bad-out")], needle)

        # BertModel: no prefix, no head, LayerNorm.gamma / beta, BF16; segments all 0 for --ids.
        d = os.path.join(tmp, "bertmodel")
        cfg = bert_config(bert_vocab, 24, d=16, h=2, ff=32, n_layer=3, architectures=["BertModel"])
        W = make_encoder(gen, BERT_NAMES, bert_vocab, 24, 2, n_layer=3, h=2, ff=32)
        W["pooler.dense.weight"], W["pooler.dense.bias"] = mf.randn(gen, 16, 16), mf.randn(gen, 16)
        gb = lambda k: k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")  # noqa
        Wr = write(d, cfg, W, "BF16", rename=gb, tokenizer="bert_uncased")
        names = dict(BERT_NAMES, d=16, h=2, eps=1e-12, layers=3)
        ids = [2, 30, 31, 32, 33, 34, 3]
        check_dump(attnviz, "bertmodel-bf16", d, encoder_forward(Wr, names, cfg, ids, [0] * 7), ids, [0] * 7, cfg,
                   ["--ids", ",".join(map(str, ids))])

        # RoBERTa: roberta. prefix, lm_head.*, pad 1 → positions from row 2, one token type; a pair through
        # the byte-level BPE tokenizer.json with RobertaProcessing.
        d = os.path.join(tmp, "roberta")
        cfg = {"model_type": "roberta", "architectures": ["RobertaForMaskedLM"], "num_hidden_layers": 2,
               "num_attention_heads": 4, "hidden_size": 16, "intermediate_size": 24, "vocab_size": rob_vocab,
               "max_position_embeddings": 42, "type_vocab_size": 1, "layer_norm_eps": 1e-5, "hidden_act": "gelu",
               "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}
        head = ("lm_head.dense", "lm_head.layer_norm", "lm_head.bias")
        W = make_encoder(gen, BERT_NAMES, rob_vocab, 42, 1, head=head)
        Wr = write(d, cfg, W, rename=lambda k: k if k.startswith("lm_head.") else "roberta." + k,
                   tokenizer="gpt2_bytelevel")
        names = dict(BERT_NAMES, d=16, h=4, eps=1e-5, layers=2, offset=2, head=head[0], head_ln=head[1],
                     bias=head[2])
        pair = rob_hf["pair"]
        check_dump(attnviz, "roberta-pair", d, encoder_forward(Wr, names, cfg, pair["ids"], pair["type_ids"]),
                   pair["ids"], pair["type_ids"], cfg, ["--text", pair["a"], "--text-b", pair["b"]])
        # 40 positions (42 rows − offset 2): 41 tokens are refused in one line
        mf.expect_error(attnviz, "roberta too long", ["dump", "--model", d, "--ids", ",".join(["5"] * 41), "--out",
                                                      os.path.join(tmp, "long")], "40 positions")

        # DistilBERT: distilbert. prefix, vocab_* head, untied vocab_projector.weight, no token types.
        d = os.path.join(tmp, "distilbert")
        cfg = {"model_type": "distilbert", "architectures": ["DistilBertForMaskedLM"], "n_layers": 2, "n_heads": 2,
               "dim": 16, "hidden_dim": 32, "vocab_size": bert_vocab, "max_position_embeddings": 30,
               "sinusoidal_pos_embds": False, "activation": "gelu", "pad_token_id": 0, "tie_word_embeddings": False}
        head = ("vocab_transform", "vocab_layer_norm", "vocab_projector.bias")
        W = make_encoder(gen, DISTIL_NAMES, bert_vocab, 30, 0, h=2, ff=32, head=head)
        W["vocab_projector.weight"] = mf.randn(gen, bert_vocab, 16)
        Wr = write(d, cfg, W, rename=lambda k: k if k.startswith("vocab_") else "distilbert." + k,
                   tokenizer="bert_uncased")
        names = dict(DISTIL_NAMES, d=16, h=2, eps=1e-12, layers=2, head=head[0], head_ln=head[1], bias=head[2],
                     word="embeddings.word_embeddings.weight")
        text = "the cat [MASK] on the mat."
        r = mf.run(attnviz, "tokenize", "--model", d, "--text", text)
        ids = json.loads(r.stdout) if r.returncode == 0 else [2, 3]
        ref_out = encoder_forward(Wr, names, cfg, ids, None)
        ref_out["logits"] = ref_out["ln_f"] @ Wr["vocab_projector.weight"].T + Wr["vocab_projector.bias"]
        check_dump(attnviz, "distilbert", d, ref_out, ids, [], cfg, ["--text", text])
        bad = os.path.join(tmp, "distil-relu")
        write(bad, dict(cfg, activation="relu"), W)
        mf.expect_error(attnviz, "distilbert relu", ["dump", "--model", bad, "--ids", "2,3", "--out",
                                                     os.path.join(tmp, "o2")], "activation")

    mf.finish("encoder forwards (bert pair and mask, bert model bf16, roberta pair, distilbert) match PyTorch")


if __name__ == "__main__":
    main()
