# Helpers for the GUI tests: read a PNG with zlib + struct only (no PIL), and judge whether a
# screenshot shows something (not blank: many distinct colours, no single colour covering it all).
import struct
import sys
import zlib

import numpy as np


def read_png(path):
    """Returns an (h, w, channels) uint8 array. Supports 8-bit greyscale, RGB and RGBA, no interlace."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG file")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    w, h, depth, colour, _, _, interlace = header
    if depth != 8 or interlace != 0 or colour not in (0, 2, 6):
        raise ValueError(f"{path}: unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    ch = {0: 1, 2: 3, 6: 4}[colour]
    stride = w * ch
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, stride + 1)
    out = np.zeros((h, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.uint8)
    for y in range(h):
        ftype, line = int(raw[y, 0]), raw[y, 1:]
        if ftype == 0:  # None
            cur = line.copy()
        elif ftype == 1:  # Sub: a running sum per channel, modulo 256 (uint8 wraps)
            cur = np.cumsum(line.reshape(w, ch), axis=0, dtype=np.uint8).reshape(stride)
        elif ftype == 2:  # Up
            cur = line + prev
        else:  # Average and Paeth depend on the decoded pixel to the left: sequential
            cur, up = line.tolist(), prev.tolist()
            for x in range(stride):
                a = cur[x - ch] if x >= ch else 0
                b = up[x]
                if ftype == 3:
                    pred = (a + b) >> 1
                else:
                    c = up[x - ch] if x >= ch else 0
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[x] = (cur[x] + pred) & 255
            cur = np.array(cur, dtype=np.uint8)
        out[y] = cur
        prev = cur
    return out.reshape(h, w, ch)


def check_screenshot(path, width, height):
    img = read_png(path)
    h, w = img.shape[:2]
    problems = []
    if (w, h) != (width, height):
        problems.append(f"size {w}x{h}, expected the window's {width}x{height}")
    rgb = img[:, :, :3].reshape(-1, 3).astype(np.uint32)
    keys = (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]
    values, counts = np.unique(keys, return_counts=True)
    if len(values) < 50:
        problems.append(f"only {len(values)} distinct colours: the window looks blank")
    top = counts.max() / keys.size
    if top > 0.9:
        problems.append(f"one colour covers {top:.0%} of the window")
    return problems, len(values), top


if __name__ == "__main__":
    problems, n, top = check_screenshot(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
    print(f"{sys.argv[1]}: {n} distinct colours, most common covers {top:.1%}")
    for p in problems:
        print("FAIL:", p)
    sys.exit(1 if problems else 0)
