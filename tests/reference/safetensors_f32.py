"""A minimal independent safetensors reader for the reference tests (8-byte header length, JSON
header, raw little-endian data): every tensor of an all-F32 file as a numpy array (a copy)."""
import json
import struct

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, t in header.items():
        assert t["dtype"] == "F32", name
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + a : 8 + n + b], dtype="<f4").reshape(t["shape"]).copy()
    return out
