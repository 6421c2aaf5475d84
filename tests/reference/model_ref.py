"""What the PyTorch references of attnviz's model commands share (model_forward_test.py,
encoder_forward_test.py, seq2seq_forward_test.py, interventions_test.py): a safetensors writer (Debian has
no safetensors package), tiny random weights and checkpoint folders, the reference's pieces written once
(gelu_new, rotate_half, the attention rollout), running attnviz, and comparing arrays at 1e-4 relative.
Mismatches are gathered in FAILURES; each test prints them and exits non-zero.
"""

import json
import math
import os
import struct
import subprocess
import sys

import numpy as np
import torch

RTOL = 1e-4
FAILURES = []

# ------------------------------------------------------------------------------------------------
# safetensors writer and checkpoint folders
# ------------------------------------------------------------------------------------------------

ST_DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}


def raw_bytes(tt, dtype):
    """Little-endian bytes of a tensor already in ST_DTYPES[dtype]."""
    flat = tt.contiguous().reshape(-1)
    if dtype == "F32":
        return flat.numpy().astype("<f4").tobytes()
    return flat.view(torch.int16).numpy().astype("<i2").tobytes()


def st_file_bytes(tensors, metadata=None, header_override=None):
    """tensors: [(name, torch tensor, dtype)] in file order → the bytes of a .safetensors file."""
    header, blobs, offset = {}, [], 0
    for name, t, dtype in tensors:
        raw = raw_bytes(t.to(ST_DTYPES[dtype]), dtype)
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata is not None:
        header["__metadata__"] = metadata
    if header_override:
        header_override(header)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def st_bytes(tensors, dtype="F32", header_override=None):
    """tensors: {name: torch tensor} → the bytes of a .safetensors file with every tensor in `dtype`."""
    return st_file_bytes([(name, t, dtype) for name, t in tensors.items()], {"format": "pt"}, header_override)


def rounded(t, dtype):
    """The values the file holds (what attnviz reads back), as float64."""
    return t.to(ST_DTYPES[dtype]).to(torch.float64)


def randn(gen, *shape, scale=0.3, mean=0.0):
    return torch.randn(*shape, generator=gen) * scale + mean


def write_model(directory, cfg, W, dtype="F32", rename=lambda k: k, extra=None, drop=()):
    """Writes config.json and model.safetensors: W's tensors but `drop`, named rename(name), then `extra`
    as named. Returns every tensor of W as the file holds it (see rounded), under W's own names."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(cfg, f)
    tensors = {rename(k): v for k, v in W.items() if k not in drop}
    tensors.update(extra or {})
    with open(os.path.join(directory, "model.safetensors"), "wb") as f:
        f.write(st_bytes(tensors, dtype))
    return {k: rounded(v, dtype) for k, v in W.items()}


# ------------------------------------------------------------------------------------------------
# Pieces of the independent forwards
# ------------------------------------------------------------------------------------------------

def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rollout(layers):
    """Attention rollout (Abnar & Zuidema) over the layers' weights [h, n, n]: [n, n]."""
    r = None
    for st in layers:
        a = 0.5 * st["weights"].mean(0) + 0.5 * torch.eye(st["weights"].shape[-1])
        a = a / a.sum(-1, keepdim=True)
        r = a if r is None else a @ r
    return r


# ------------------------------------------------------------------------------------------------
# Running attnviz and comparing
# ------------------------------------------------------------------------------------------------

def run(attnviz, *args):
    return subprocess.run([attnviz, *args], capture_output=True, text=True, timeout=300)


def close(case, what, actual, expected):
    """Every element within RTOL of the expected one (with a floor of a tenth of the largest |expected|)."""
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        FAILURES.append("%s %s: shape %s, expected %s" % (case, what, actual.shape, expected.shape))
        return
    scale = max(1.0, float(np.abs(expected).max()) if expected.size else 1.0)
    diff = np.abs(actual - expected)
    bad = diff > RTOL * np.maximum(np.abs(expected), scale * 0.1) + 1e-6
    if bad.any():
        i = np.unravel_index(np.argmax(diff), diff.shape)
        FAILURES.append("%s %s%s: attnviz %.7g vs torch %.7g" % (case, what, list(i), actual[i], expected[i]))


def expect_error(attnviz, case, args, needle, code=None):
    """One line on stderr naming `needle` and a non-zero exit (exactly `code` when given)."""
    r = run(attnviz, *args)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    if r.returncode == 0 or len(lines) != 1 or needle not in lines[0] or (code is not None and r.returncode != code):
        FAILURES.append("%s: expected one error line naming %r and a non-zero exit, got %d %r" %
                        (case, needle, r.returncode, r.stderr))


def dumped_stages(case, out, manifest):
    """Each stage entry of an `attnviz dump` manifest with its .npy as float64, the file's shape checked
    against the manifest's."""
    for s in manifest["stages"]:
        arr = np.load(os.path.join(out, s["file"])).astype(np.float64)
        if list(arr.shape) != s["shape"]:
            FAILURES.append("%s %s: file shape %s, manifest %s" % (case, s["file"], arr.shape, s["shape"]))
        yield s, arr


def finish(ok_line):
    """Prints the first 40 failures and exits 1, or prints ok_line."""
    if FAILURES:
        print("\n".join(FAILURES[:40]))
        print("%d failures" % len(FAILURES))
        sys.exit(1)
    print(ok_line)
