#!/usr/bin/env python3
"""Writes a tiny random GPT-2 checkpoint with GPT-2 tokenizer files (a TEST model, not a trained one)
for the GUI tests and screenshots, reusing tests/reference/model_forward_test.py's safetensors writer
and tests/reference/tokenizer_ref.py's BPE trainer.

usage: make_tiny_model.py OUT_DIR [HOSTILE_DIR]
  OUT_DIR      config.json, model.safetensors, vocab.json, merges.txt (3 layers x 4 heads, d_model 32)
  HOSTILE_DIR  the same folder with model.safetensors cut in half (a truncated download)
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import torch  # noqa: E402

import model_forward_test as mf  # noqa: E402
import tokenizer_ref as ref  # noqa: E402


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out = sys.argv[1]
    gen = torch.Generator().manual_seed(2024)
    corpus = ("the cat sat on the mat. the dog sat on the log; a cat and a dog met the bat. "
              "the bird sang in the tree and the fish swam in the sea. ") * 3
    vocab, merges = ref.train(corpus, 60)
    cfg, W = mf.make_gpt2(gen, len(vocab), n_layer=3, d=32, h=4, positions=64)
    mf.write_model(out, cfg, W, "F32")
    ref.write_gpt2_files(out, vocab, merges)
    if len(sys.argv) == 3:
        bad = sys.argv[2]
        os.makedirs(bad, exist_ok=True)
        for name in ("config.json", "vocab.json", "merges.txt"):
            shutil.copy(os.path.join(out, name), os.path.join(bad, name))
        with open(os.path.join(out, "model.safetensors"), "rb") as f:
            data = f.read()
        with open(os.path.join(bad, "model.safetensors"), "wb") as f:
            f.write(data[: len(data) // 2])


if __name__ == "__main__":
    main()
