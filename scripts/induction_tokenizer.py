#!/usr/bin/env python3
"""Writes the shipped induction model's tokenizer (GPT-2 byte-level BPE files, vocab.json + merges.txt):
63 tokens that spell one sentence's words, so the scene can feed the model a repeated sentence.

The model was trained on random token ids (0..63); any one-to-one naming of ids works for an induction
head, so the ids are simply given to these pieces in order. The tokenizer.json `attnviz train` writes
(the ids named " 0" to " 63") is removed: it would be read before these files.
usage: scripts/induction_tokenizer.py DIR
"""
import json
import os
import sys

WORDS = ["the", "Ġthe", "Ġquick", "Ġbrown", "Ġfox", "Ġjumps", "Ġover", "Ġa", "Ġlazy", "Ġdog"]
PUNCT = ["."]


def main(out):
    chars = []
    for w in WORDS + PUNCT:
        for c in w:
            if c not in chars:
                chars.append(c)
    vocab = list(chars)
    merges = []
    # Words starting with Ġ first, so "Ġthe" merges Ġ+t before t+h could split it differently.
    for w in sorted(WORDS, key=lambda w: not w.startswith("Ġ")):
        piece = w[0]
        for c in w[1:]:
            merges.append(piece + " " + c)
            piece += c
            if piece not in vocab:
                vocab.append(piece)
    assert len(vocab) <= 64, len(vocab)
    with open(out + "/vocab.json", "w", encoding="utf-8") as f:
        json.dump({t: i for i, t in enumerate(vocab)}, f, ensure_ascii=False, indent=0)
        f.write("\n")
    with open(out + "/merges.txt", "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "\n".join(merges) + "\n")
    if os.path.exists(out + "/tokenizer.json"):
        os.remove(out + "/tokenizer.json")
    print(len(vocab), "tokens,", len(merges), "merges")


if __name__ == "__main__":
    main(sys.argv[1])
