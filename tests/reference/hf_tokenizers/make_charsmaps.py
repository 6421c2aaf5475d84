#!/usr/bin/python3
"""Writes SentencePiece precompiled charsmaps (base64) for make_reference.js: OUTDIR/nmt_nfkc.b64 (the
NFKC-based map T5, ALBERT and XLNet ship) and OUTDIR/rules.b64 (a few hand rules, incl. a two-character
key). SentencePiece compiles them when it trains; the map is read back from the model proto
(ModelProto.normalizer_spec = field 3, NormalizerSpec.precompiled_charsmap = field 2).

usage: /usr/bin/python3 make_charsmaps.py OUTDIR   (needs Debian's python3-sentencepiece)
"""
import base64
import os
import sys
import tempfile

import sentencepiece as spm

RULES = [  # source code points -> target code points (SentencePiece's normalization_rule_tsv)
    ("FB01", "66 69"), ("FF21", "41"), ("FF22", "42"), ("2460", "31"), ("65 301", "E9"),
    ("3000", "20"), ("FF76", "30AB"), ("41", "61"), ("41 42", "78"),
]


def varint(b, i):
    n = shift = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return n, i


def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = varint(b, i)
            yield field, None
        elif wire == 2:
            n, i = varint(b, i)
            yield field, b[i:i + n]
            i += n
        elif wire == 5:
            i += 4
            yield field, None
        elif wire == 1:
            i += 8
            yield field, None
        else:
            raise ValueError("unexpected wire type %d" % wire)


def charsmap(model):
    for f, v in fields(model):
        if f == 3:
            for g, w in fields(v):
                if g == 2:
                    return w
    raise ValueError("no precompiled_charsmap in the model")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "w") as f:
            f.write("The quick brown fox jumps over the lazy dog.\n\uff21\uff22\uff23 \ufb01nance \u2460 caf\u00e9 \u65e5\u672c\u8a9e \uff76\n" * 20)
        rules = os.path.join(tmp, "rules.tsv")
        with open(rules, "w") as f:
            f.writelines("%s\t%s\n" % r for r in RULES)
        for name, option in (("nmt_nfkc", {"normalization_rule_name": "nmt_nfkc"}),
                             ("rules", {"normalization_rule_tsv": rules})):
            prefix = os.path.join(tmp, name)
            spm.SentencePieceTrainer.train(input=corpus, model_prefix=prefix, vocab_size=60, model_type="unigram",
                                           hard_vocab_limit=False, minloglevel=2, **option)
            with open(prefix + ".model", "rb") as f:
                cm = charsmap(f.read())
            with open(os.path.join(out, name + ".b64"), "w") as f:
                f.write(base64.b64encode(cm).decode())
            print(name, len(cm), "bytes")


if __name__ == "__main__":
    main()
