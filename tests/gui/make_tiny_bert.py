#!/usr/bin/env python3
"""Writes a tiny random BERT checkpoint (BertForMaskedLM names, the masked-LM head, 2 token types) with a
WordPiece tokenizer.json trained by Hugging Face's tokenizers (tests/data/hf_tokenizers/bert_uncased),
for the GUI tests and screenshots (a TEST model, not a trained one: its guesses are random). Reuses
tests/reference/encoder_forward_test.py's checkpoint writer.

usage: make_tiny_bert.py OUT_DIR
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import torch  # noqa: E402

import encoder_forward_test as ef  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    gen = torch.Generator().manual_seed(2025)
    vocab = len(json.load(open(os.path.join(ef.HF_DATA, "bert_uncased.tokenizer.json")))["model"]["vocab"])
    cfg = ef.bert_config(vocab, 64, d=32, h=4, ff=64, n_layer=3)
    head = ("cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm", "cls.predictions.bias")
    W = ef.make_encoder(gen, ef.BERT_NAMES, vocab, 64, 2, n_layer=3, d=32, h=4, ff=64, head=head)
    ef.write(sys.argv[1], cfg, W, rename=lambda k: k if k.startswith("cls.") else "bert." + k,
             tokenizer="bert_uncased")


if __name__ == "__main__":
    main()
