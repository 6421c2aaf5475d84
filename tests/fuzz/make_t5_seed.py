"""Writes tests/fuzz/corpus/model_files/t5_tiny: a valid model.safetensors for the tiny T5 config of
tests/fuzz/model_files_fuzz.cpp (1 + 1 layers, d_model 8, 2 heads of 4, d_ff 12, vocabulary 10, ReLU,
tied), behind the byte 3 that picks the T5 folder. The fuzzer mutates from it; the replay test runs it.

    /usr/bin/python3 tests/fuzz/make_t5_seed.py
"""
import json
import os
import struct

import numpy as np

d, h, dk, ff, vocab, buckets = 8, 2, 4, 12, 10, 4
rng = np.random.default_rng(7)
W = {"shared.weight": rng.normal(size=(vocab, d))}
for stack in ("encoder", "decoder"):
    W[stack + ".final_layer_norm.weight"] = 1 + 0.1 * rng.normal(size=d)
    p = stack + ".block.0.layer."
    subs = ["0.SelfAttention"] + (["1.EncDecAttention"] if stack == "decoder" else [])
    for sub in subs:
        for name, i, o in (("q", d, h * dk), ("k", d, h * dk), ("v", d, h * dk), ("o", h * dk, d)):
            W[p + sub + "." + name + ".weight"] = 0.3 * rng.normal(size=(o, i))
    W[p + "0.SelfAttention.relative_attention_bias.weight"] = rng.normal(size=(buckets, h))
    n = 3 if stack == "decoder" else 2
    for i in range(n):
        W[p + "%d.layer_norm.weight" % i] = 1 + 0.1 * rng.normal(size=d)
    W[p + "%d.DenseReluDense.wi.weight" % (n - 1)] = 0.3 * rng.normal(size=(ff, d))
    W[p + "%d.DenseReluDense.wo.weight" % (n - 1)] = 0.3 * rng.normal(size=(d, ff))

header, blobs, at = {}, [], 0
for name, a in W.items():
    b = np.asarray(a, dtype="<f4").tobytes()
    header[name] = {"dtype": "F32", "shape": list(np.shape(a)), "data_offsets": [at, at + len(b)]}
    blobs.append(b)
    at += len(b)
text = json.dumps(header).encode()
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "model_files", "t5_tiny")
with open(out, "wb") as f:
    f.write(b"\x03" + struct.pack("<Q", len(text)) + text + b"".join(blobs))
print("wrote", out)
