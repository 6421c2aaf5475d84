#!/usr/bin/env python3
"""Writes a tiny random T5 checkpoint (a TEST model, not a trained one: its attention is noise) with a
byte-level BPE tokenizer.json for the GUI tests and screenshots, reusing tests/reference/
seq2seq_forward_test.py's T5 maker and safetensors writer and tests/reference/tokenizer_ref.py's BPE
trainer. Ids 0 and 1 are <pad> (the decoder's start token) and </s> (its end), as in T5.

usage: make_tiny_t5.py OUT_DIR
  OUT_DIR  config.json, model.safetensors, tokenizer.json (2 + 2 layers x 4 heads, d_model 32)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import torch  # noqa: E402

import seq2seq_forward_test as s2s  # noqa: E402
import tokenizer_ref as ref  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    gen = torch.Generator().manual_seed(2026)
    corpus = ("translate English to German: the cat sat on the mat. die katze sass auf der matte. "
              "the dog saw the cat. der hund sah die katze. a small house. ein kleines haus. ") * 3
    vocab, merges = ref.train(corpus, 160)
    vocab = {tok: i + 2 for tok, i in vocab.items()}  # 0 and 1 are T5's <pad> and </s>
    V = len(vocab) + 2
    cfg, W = s2s.make_t5(gen, V, gated=False, tied=True, n_enc=2, n_dec=2, d=32, h=4, dk=8, ff=48,
                         buckets=8, max_distance=20)
    s2s.write_model(out, cfg, W, "F32")
    ref.write_tokenizer_json(out, vocab, merges, [("<pad>", 0, True), ("</s>", 1, True)], ref.byte_level(True))


if __name__ == "__main__":
    main()
