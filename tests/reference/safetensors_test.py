#!/usr/bin/env python3
"""io/safetensors against PyTorch, both directions.

attnviz → Python: `safetensors_tool write` writes fixed tensors (formulas and edge cases in F32, BF16 and
F16) with attnviz's writer. This test builds the same tensors with numpy/torch, converts them with
torch's own float → bfloat16/float16 rounding, lays them out as the Python safetensors library does
(tensors by dtype F32, BF16, F16 then by name, compact JSON with __metadata__ first, header padded with
spaces to 8 bytes) and compares the whole file byte for byte. It also reads the file independently
(json header + torch.frombuffer) and compares the values exactly.

Python → attnviz: files written here (tensors in any order, every dtype, random and edge values, and
a sharded folder with model.safetensors.index.json) are read by `safetensors_tool read` and every value
must equal torch's exactly. Hostile files (gaps, overlaps, trailing bytes, duplicate keys, lying or
truncated headers) must give one line on stderr naming the tensor and exit status 1.

usage: safetensors_test.py path/to/attnviz path/to/safetensors_tool
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model_ref import ST_DTYPES, st_file_bytes as st_bytes  # noqa: E402  (the safetensors writer)

FAILURES = []

# The same list as tests/io/safetensors_tool.cpp (float32 bit patterns).
EDGE_BITS = [
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000,
    0x477fe000, 0x477fef00, 0x477ff000, 0x47c35000, 0x322bcc77, 0x33800000, 0x33000000, 0x33400000,
    0x33a00000, 0x38800000, 0x387fc000, 0x3f808000, 0x3f818000, 0x3f800800, 0x3f801000, 0x3f803000,
    0x7f7fffff, 0x00800000, 0x00000001, 0x3dcccccd, 0x3eaaaaab, 0x40490fdb, 0xc2f6e979,
]


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print("FAIL:", what)


def library_layout(tensors, metadata):
    """tensors: {name: (dtype, shape, raw bytes)} → the file the Python safetensors library writes."""
    rank = {"F32": 0, "BF16": 1, "F16": 2}
    order = sorted(tensors, key=lambda n: (rank[tensors[n][0]], n.encode()))
    header, offset = {}, 0
    if metadata:
        header["__metadata__"] = dict(sorted(metadata.items()))
    for n in order:
        dtype, shape, raw = tensors[n]
        header[n] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    h = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(tensors[n][2] for n in order)


# ------------------------------------------------------------------------------------------------
# The tensors safetensors_tool writes, and torch's conversion of them
# ------------------------------------------------------------------------------------------------

def formula(k, n, scale):
    i = np.arange(n)
    num = ((37 * i + 11 * k) % 101 - 50).astype(np.float32)
    return (num / np.float32(7)) * np.float32(scale)


def edge_values():
    return np.array(EDGE_BITS, dtype=np.uint32).view(np.float32)


def tool_tensors():
    """name → (dtype, float32 array with its shape)."""
    out = {}
    for k, dtype in enumerate(["F32", "BF16", "F16"]):
        low = dtype.lower()
        out["formula." + low] = (dtype, formula(k, 24, 1.0).reshape(4, 6))
        out["scaled." + low] = (dtype, formula(k + 3, 30, 1000.0).reshape(2, 3, 5))
        out["edge." + low] = (dtype, edge_values())
    out["scalar"] = ("F32", np.array(42.5, dtype=np.float32))
    out["empty"] = ("BF16", np.zeros((0, 4), dtype=np.float32))
    out["layer.\u00fc\"q\"\t"] = ("F16", np.array([1.0, -2.0], dtype=np.float32))
    return out


def torch_encode(arr, dtype):
    """float32 array → (raw little-endian bytes, the stored values as float32) with torch's rounding.

    NaN: PyTorch's scalar conversions give 0x7fc0 (bfloat16) and sign|0x7e00 (half), but its vectorised
    bfloat16 path may give other NaN bits; attnviz writes the scalar patterns, so they are used here."""
    t = torch.from_numpy(np.ascontiguousarray(arr))
    if dtype == "F32":
        return arr.astype("<f4").tobytes(), arr.astype(np.float32)
    bits = t.to(ST_DTYPES[dtype]).reshape(-1).view(torch.int16).numpy().view(np.uint16).copy()
    flat = arr.reshape(-1)
    nan = np.isnan(flat)
    sign = (flat.view(np.uint32) >> 31).astype(np.uint16)
    if dtype == "BF16":
        bits[nan] = 0x7FC0
    else:
        bits[nan] = (sign[nan] << 15) | 0x7E00
        # numpy's float16 rounding must agree with torch's (two independent references).
        with np.errstate(over="ignore"):
            npbits = flat.astype(np.float16).view(np.uint16)
        check(np.array_equal(npbits[~nan], bits[~nan]), "numpy and torch disagree on float → float16")
    stored = torch.from_numpy(bits.view(np.int16).copy()).view(ST_DTYPES[dtype]).to(torch.float32)
    return bits.astype("<u2").tobytes(), stored.numpy().reshape(arr.shape)


def same_values(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


# ------------------------------------------------------------------------------------------------
# Running the tool
# ------------------------------------------------------------------------------------------------

def run(tool, *args):
    return subprocess.run([tool, *args], capture_output=True, text=True, timeout=120)


def read_with_attnviz(tool, path):
    """→ (metadata, {name: (dtype, shape, float64 values)}) or None (failure recorded)."""
    r = run(tool, "read", path)
    if r.returncode != 0:
        check(False, f"safetensors_tool read {path} failed: {r.stderr.strip()}")
        return None
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    meta = lines[0]["metadata"]
    tensors = {}
    for j in lines[1:]:
        tensors[j["name"]] = (j["dtype"], tuple(j["shape"]), np.array(j["values"], dtype=np.float64).reshape(j["shape"]))
    return meta, tensors


def read_independently(data):
    """The bytes of a .safetensors file → (metadata, {name: (dtype, shape, float32 array)}), without attnviz."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    body = data[8 + n:]
    meta = header.pop("__metadata__", {})
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        dt = ST_DTYPES[info["dtype"]]
        if e > b:
            t = torch.frombuffer(bytearray(body[b:e]), dtype=dt)
        else:
            t = torch.empty(0, dtype=dt)
        out[name] = (info["dtype"], tuple(info["shape"]), t.reshape(info["shape"]).to(torch.float32).numpy())
    return meta, out


# ------------------------------------------------------------------------------------------------
# Tests
# ------------------------------------------------------------------------------------------------

def test_attnviz_writes_what_python_writes(tool, tmp):
    path = os.path.join(tmp, "attnviz.safetensors")
    r = run(tool, "write", path)
    check(r.returncode == 0, f"safetensors_tool write failed: {r.stderr.strip()}")
    if r.returncode != 0:
        return
    data = open(path, "rb").read()
    spec = tool_tensors()
    encoded = {n: torch_encode(arr, d) for n, (d, arr) in spec.items()}
    metadata = {"format": "pt", "producer": "attnviz safetensors_tool"}
    expected = library_layout({n: (d, arr.shape, encoded[n][0]) for n, (d, arr) in spec.items()}, metadata)
    if data != expected:
        at = next((i for i in range(min(len(data), len(expected))) if data[i] != expected[i]), None)
        check(False, f"attnviz's file differs from the Python library layout at byte {at} "
                     f"(sizes {len(data)} and {len(expected)}): {data[max(0, (at or 0) - 20):(at or 0) + 20]!r} vs "
                     f"{expected[max(0, (at or 0) - 20):(at or 0) + 20]!r}")
    (n,) = struct.unpack("<Q", data[:8])
    header = data[8:8 + n]
    check(n % 8 == 0 and header.rstrip(b" ").endswith(b"}") and n - len(header.rstrip(b" ")) < 8,
          "header padded with spaces to a multiple of 8")
    meta, tensors = read_independently(data)
    check(meta == metadata, f"metadata read back by Python: {meta}")
    check(set(tensors) == set(spec), f"tensor names: {sorted(tensors)}")
    for name, (dtype, arr) in spec.items():
        if name not in tensors:
            continue
        d, shape, values = tensors[name]
        check(d == dtype and shape == arr.shape, f"{name}: dtype/shape {d} {shape}")
        check(same_values(values, encoded[name][1]), f"{name}: torch.frombuffer values differ from torch's rounding")
        if dtype == "F32":
            check(same_values(values, arr), f"{name}: F32 must be exact")
    # attnviz reads its own file back with the same values.
    back = read_with_attnviz(tool, path)
    if back:
        meta2, t2 = back
        check(meta2 == metadata, f"metadata read back by attnviz: {meta2}")
        for name, (dtype, arr) in spec.items():
            check(name in t2 and same_values(t2[name][2], encoded[name][1]), f"{name}: attnviz read-back differs")


def python_tensors():
    g = torch.Generator().manual_seed(3)
    edge = torch.from_numpy(edge_values().copy())
    out = []
    for dtype in ["F16", "F32", "BF16"]:  # not the library's order: the reader must not care
        low = dtype.lower()
        out.append((f"model.layers.0.w.{low}", torch.randn(7, 5, generator=g, dtype=torch.float32) * 3, dtype))
        out.append((f"model.bias.{low}", torch.randn(11, generator=g, dtype=torch.float32), dtype))
        out.append((f"edge.{low}", edge, dtype))
        out.append((f"cube.{low}", torch.randn(2, 3, 4, generator=g, dtype=torch.float32) * 1e3, dtype))
    out.append(("scalar", torch.tensor(-0.75, dtype=torch.float32), "BF16"))
    out.append(("empty", torch.zeros(3, 0), "F16"))
    return out


def stored(t, dtype):
    """What a file in `dtype` holds for t, as float64 (NaN bits aside)."""
    return t.to(ST_DTYPES[dtype]).to(torch.float64).numpy()


def test_attnviz_reads_what_python_writes(tool, tmp):
    tensors = python_tensors()
    path = os.path.join(tmp, "python.safetensors")
    with open(path, "wb") as f:
        f.write(st_bytes(tensors, metadata={"format": "pt", "note": "written by python"}))
    got = read_with_attnviz(tool, path)
    if got:
        meta, t = got
        check(meta == {"format": "pt", "note": "written by python"}, f"metadata: {meta}")
        check(set(t) == {n for n, _, _ in tensors}, f"names: {sorted(t)}")
        for name, tensor, dtype in tensors:
            if name in t:
                d, shape, values = t[name]
                check(d == dtype and shape == tuple(tensor.shape), f"{name}: dtype/shape {d} {shape}")
                check(same_values(values, stored(tensor, dtype)), f"{name}: values differ from torch's")

    # A sharded checkpoint: two files and the index.
    shard_dir = os.path.join(tmp, "sharded")
    os.mkdir(shard_dir)
    halves = [tensors[: len(tensors) // 2], tensors[len(tensors) // 2:]]
    weight_map = {}
    for i, part in enumerate(halves):
        fname = f"model-{i + 1:05d}-of-00002.safetensors"
        with open(os.path.join(shard_dir, fname), "wb") as f:
            f.write(st_bytes(part, metadata={"format": "pt"}))
        weight_map.update({n: fname for n, _, _ in part})
    with open(os.path.join(shard_dir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f)
    got = read_with_attnviz(tool, shard_dir)
    if got:
        _, t = got
        for name, tensor, dtype in tensors:
            check(name in t and same_values(t[name][2], stored(tensor, dtype)), f"sharded {name}: values differ")


def test_hostile_files(tool, tmp):
    w = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    b = torch.ones(4, dtype=torch.float32)
    good = st_bytes([("w", w, "F32"), ("b", b, "F32")])

    def offsets(name, begin, end):
        return lambda h: h[name].__setitem__("data_offsets", [begin, end])

    def raw(header_text, data):
        h = header_text.encode()
        return struct.pack("<Q", len(h)) + h + data

    body = w.numpy().tobytes() + b.numpy().tobytes()
    cases = [
        ("gap", st_bytes([("w", w, "F32"), ("b", b, "F32")], header_override=offsets("b", 28, 44)) + b"\0" * 4,
         "tensor 'b' starts at data byte 28, but tensor 'w' ends at 24"),
        ("overlap", st_bytes([("w", w, "F32"), ("b", b, "F32")], header_override=offsets("b", 8, 24))[:-16],
         "tensor 'b' data_offsets [8, 24] overlap tensor 'w' [0, 24]"),
        ("trailing bytes", good + b"\0" * 8, "8 data bytes after the last tensor 'b' belong to no tensor"),
        ("lying offsets", st_bytes([("w", w, "F32")], header_override=offsets("w", 0, 1 << 40)),
         "tensor 'w' has data_offsets [0,1099511627776] outside"),
        ("truncated", good[:-3], "tensor 'b' has data_offsets [24,40] outside the 37 data bytes"),
        ("wrong size", st_bytes([("w", w, "F32")], header_override=lambda h: h["w"].__setitem__("shape", [2, 2])),
         "tensor 'w' has 24 bytes for shape [2,2] of F32 (16 expected)"),
        ("duplicate", raw('{"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},'
                          '"w":{"dtype":"F32","shape":[4],"data_offsets":[24,40]}}', body),
         "tensor 'w' appears twice in the header"),
        ("NUL in a name", raw('{"w\\u0000x":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}', body[:24]),
         "has a NUL byte in its name"),
        ("leading space", raw(' {"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}', body[:24]),
         "the header must start with '{'"),
        ("metadata number", st_bytes([("w", w, "F32")], metadata={"step": 5}),
         "__metadata__ value for 'step' must be a string"),
        ("unknown dtype", st_bytes([("w", w, "F32")], header_override=lambda h: h["w"].__setitem__("dtype", "F12")),
         "tensor 'w' has unknown dtype 'F12'"),
        ("huge header length", struct.pack("<Q", 1 << 40) + b"{}", "header length 1099511627776 bytes"),
        ("bad json", struct.pack("<Q", 4) + b"{{{{", "the header is not valid JSON"),
    ]
    for case, data, needle in cases:
        path = os.path.join(tmp, "hostile.safetensors")
        with open(path, "wb") as f:
            f.write(data)
        r = run(tool, "read", path)
        err = r.stderr.strip()
        check(r.returncode == 1, f"{case}: exit status {r.returncode} (stderr {err!r})")
        check(len(r.stderr.splitlines()) == 1, f"{case}: stderr must be one line, got {r.stderr!r}")
        check(needle in err, f"{case}: expected {needle!r} in {err!r}")
        check(err.startswith(path), f"{case}: the message must name the file: {err!r}")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    tool = sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="attnviz-st-ref-") as tmp:
        test_attnviz_writes_what_python_writes(tool, tmp)
        test_attnviz_reads_what_python_writes(tool, tmp)
        test_hostile_files(tool, tmp)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print("safetensors: attnviz and PyTorch agree (bytes, values, refusals)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
