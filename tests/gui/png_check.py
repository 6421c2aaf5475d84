# Helpers for the GUI tests: read a PNG (the header checked here, the pixels decoded by stb_image from
# libstb0, a build dependency, through ctypes), and judge whether a screenshot shows something (not
# blank: many distinct colours, no single colour covering it all). The decoder is stb's, not the
# app's: the app only writes PNGs (stbi_write_png). A pure-Python decoder took 0.7 CPU s per
# 1280x720 screenshot (Paeth rows decode pixel by pixel), most of the GUI tests' Python time.
import ctypes
import struct
import sys
import zlib

import numpy as np

_stb = None


def _stb_lib():
    global _stb
    if _stb is None:
        lib = ctypes.CDLL("libstb.so.0")
        lib.stbi_load_from_memory.restype = ctypes.POINTER(ctypes.c_ubyte)
        lib.stbi_load_from_memory.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                              ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                                              ctypes.c_int]
        lib.stbi_image_free.argtypes = [ctypes.c_void_p]
        lib.stbi_failure_reason.restype = ctypes.c_char_p
        _stb = lib
    return _stb


def read_png(path):
    """Returns an (h, w, channels) uint8 array. Supports 8-bit greyscale, RGB and RGBA, no interlace.
    Every chunk's CRC is checked, and the IDAT stream must inflate to exactly h rows of 1 + w*channels
    bytes, each with a filter type 0-4."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG file")
    pos, idat, header, ended = 8, b"", None, False
    while pos + 12 <= len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        crc_bytes = data[pos + 8 + length:pos + 12 + length]
        if len(body) != length or len(crc_bytes) != 4 or zlib.crc32(kind + body) != struct.unpack(">I", crc_bytes)[0]:
            raise ValueError(f"{path}: chunk {kind!r} at byte {pos} is truncated or fails its CRC")
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            ended = True
            break
    if header is None or not ended:
        raise ValueError(f"{path}: no IHDR or no IEND chunk")
    w, h, depth, colour, _, _, interlace = header
    if depth != 8 or interlace != 0 or colour not in (0, 2, 6):
        raise ValueError(f"{path}: unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    ch = {0: 1, 2: 3, 6: 4}[colour]
    rows = zlib.decompress(idat)
    if len(rows) != h * (1 + w * ch):
        raise ValueError(f"{path}: image data holds {len(rows)} bytes, not {h} rows of {1 + w * ch}")
    filters = np.frombuffer(rows, dtype=np.uint8).reshape(h, 1 + w * ch)[:, 0]
    if filters.max(initial=0) > 4:
        raise ValueError(f"{path}: unknown row filter type {int(filters.max())}")
    lib = _stb_lib()
    x, y, n = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    pixels = lib.stbi_load_from_memory(data, len(data), ctypes.byref(x), ctypes.byref(y), ctypes.byref(n), ch)
    if not pixels:
        reason = (lib.stbi_failure_reason() or b"unknown").decode()
        raise ValueError(f"{path}: stb_image cannot decode it: {reason}")
    try:
        if (x.value, y.value, n.value) != (w, h, ch):
            raise ValueError(f"{path}: decoded {x.value}x{y.value}x{n.value}, header says {w}x{h}x{ch}")
        out = np.ctypeslib.as_array(pixels, shape=(h * w * ch,)).copy()
    finally:
        lib.stbi_image_free(pixels)
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
