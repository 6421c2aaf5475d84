"""Hostile model, token, checkpoint and flag inputs to the commands (issue 22): each one must end within
its time limit, stay under the app's 3 GiB memory limit (peak RSS of the process, from wait4), and either
succeed or say what is wrong in one stderr line with a non-zero exit -- never a crash, a hang or a
half-written folder. Every case failed on the code before the fix (the number in brackets is the item
of the issue; the comment says what happened before).

The large files are sparse (holes read as zeros), so the test needs little disk and no big download.

usage: hostile_inputs_test.py path/to/attnviz
"""

import json
import os
import resource  # noqa: F401 (wait4's rusage)
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

ATTNVIZ = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
SHIPPED = os.path.join(HERE, "..", "..", "assets", "models", "induction-2l")
LIMIT = 3 << 30  # the app's memory limit
failures = []


class Result:
    def __init__(self, rc, out, err, seconds, peak):
        self.rc, self.out, self.err, self.seconds, self.peak = rc, out, err, seconds, peak


def run(args, timeout=60, cwd=None):
    """Runs attnviz with `args`; kills it after `timeout` s. Peak RSS in bytes from wait4."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        p = subprocess.Popen([ATTNVIZ] + args, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=cwd)
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout:
                p.kill()
                pid, status, usage = os.wait4(p.pid, 0)
                status = -1
                break
            time.sleep(0.02)
        seconds = time.monotonic() - t0
        p.returncode = 0  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        rc = -999 if status == -1 else (os.waitstatus_to_exitcode(status))
        return Result(rc, out.read().decode(errors="replace"), err.read().decode(errors="replace"), seconds,
                      usage.ru_maxrss * 1024)


def check(case, ok, detail):
    print("%-62s %s  %s" % (case, "ok  " if ok else "FAIL", detail))
    if not ok:
        failures.append(case)


def describe(r):
    return "rc %d, %.2f s, peak %.0f MiB" % (r.rc, r.seconds, r.peak / 2**20)


def expect_refusal(case, r, needle, max_seconds=30):
    """Refused: exit 1 or 2, one stderr line holding `needle`, within time and memory."""
    lines = r.err.strip().splitlines()
    ok = (r.rc in (1, 2) and len(lines) == 1 and needle in r.err and r.seconds < max_seconds
          and r.peak < LIMIT and "json.exception" not in r.err)
    check(case, ok, describe(r) + ": " + (r.err.strip() if r.err.strip() else "(no stderr)")[:160])


def expect_success(case, r, max_seconds=30):
    ok = r.rc == 0 and r.seconds < max_seconds and r.peak < LIMIT
    check(case, ok, describe(r) + ("" if r.rc == 0 else ": " + r.err.strip()[:160]))


def npy_header(descr, shape_text):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode()


def st_header_file(path, header, data_size, data=b""):
    """A safetensors file: the header JSON, then `data_size` bytes of data (a hole beyond `data`)."""
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)
        f.truncate(8 + len(h) + data_size)


def gpt2_config(vocab, d, n_layer=1, h=1, positions=16):
    return {"model_type": "gpt2", "n_layer": n_layer, "n_head": h, "n_embd": d, "n_positions": positions,
            "vocab_size": vocab, "layer_norm_epsilon": 1e-5, "n_inner": None, "activation_function": "gelu_new"}


def gpt2_header(cfg, dtype="F32"):
    """Header of a GPT-2 checkpoint of `cfg` with every tensor in `dtype`; returns (header, data size)."""
    size = {"F32": 4, "BF16": 2}[dtype]
    d, V, P = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"]
    shapes = [("wte.weight", [V, d]), ("wpe.weight", [P, d])]
    for l in range(cfg["n_layer"]):
        p = "h.%d." % l
        shapes += [(p + "ln_1.weight", [d]), (p + "ln_1.bias", [d]), (p + "ln_2.weight", [d]), (p + "ln_2.bias", [d])]
        for name, i, o in (("attn.c_attn", d, 3 * d), ("attn.c_proj", d, d), ("mlp.c_fc", d, 4 * d),
                           ("mlp.c_proj", 4 * d, d)):
            shapes += [(p + name + ".weight", [i, o]), (p + name + ".bias", [o])]
    shapes += [("ln_f.weight", [d]), ("ln_f.bias", [d])]
    header, offset = {}, 0
    for name, shape in shapes:
        n = int(np.prod(shape)) * size
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    return header, offset


def small_checkpoint(root, name, extra=()):
    out = os.path.join(root, name)
    r = run(["train", "--task", "induction", "--steps", "1", "--layers", "1", "--d-model", "16", "--heads", "1",
             "--context", "48", "--vocab", "16", "--out", out] + list(extra))
    assert r.rc == 0, r.err
    return out


def main():
    root = tempfile.mkdtemp(prefix="attnviz-hostile-")
    ck = small_checkpoint(root, "ck")

    # [1] grad on a token .npy of shape (2^32, 2^32): B·n wrapped to 0 and ids were written into an empty
    # vector (segfault).
    t = os.path.join(root, "wrap.npy")
    with open(t, "wb") as f:
        f.write(npy_header("<i8", "(4294967296, 4294967296)"))
    expect_refusal("[1] grad --tokens shape (2^32, 2^32)", run(["grad", "--model", ck, "--tokens", t, "--out",
                                                                os.path.join(root, "g1")]), "too large")
    with open(t, "wb") as f:  # (2^63, 2): its byte count wrapped instead
        f.write(npy_header("<i8", "(9223372036854775808, 2)"))
    expect_refusal("[1] grad --tokens shape (2^63, 2)", run(["grad", "--model", ck, "--tokens", t, "--out",
                                                             os.path.join(root, "g1")]), "too large")

    # [2] 80,000 zero-size tensors after a valid GPT-2 checkpoint's: the duplicate-key check made the JSON
    # parse quadratic (over 120 s).
    cfg = gpt2_config(16, 8)
    header, size = gpt2_header(cfg)
    for i in range(80000):
        header["z%d" % i] = {"dtype": "U8", "shape": [0], "data_offsets": [size, size]}
    many = os.path.join(root, "many")
    os.makedirs(many)
    with open(os.path.join(many, "config.json"), "w") as f:
        json.dump(cfg, f)
    rng = np.random.default_rng(0)
    st_header_file(os.path.join(many, "model.safetensors"), header, size,
                   rng.normal(0, 0.3, size // 4).astype("<f4").tobytes())
    expect_success("[2] 80k zero-size tensors (5 MB header): dump --model",
                   run(["dump", "--model", many, "--ids", "1,2,3", "--out", os.path.join(root, "d2")]), 20)

    # [3] a 100 MiB header of {"x":["","",...]}: 3.22 GiB before it was refused.
    big = os.path.join(root, "big")
    os.makedirs(big)
    with open(os.path.join(big, "config.json"), "w") as f:
        json.dump(cfg, f)
    with open(os.path.join(big, "model.safetensors"), "wb") as f:
        count = (100 * 2**20 - 16) // 3  # just under the 100 MiB cap
        f.write(struct.pack("<Q", 6 + 3 * count + 4) + b'{"x":[')
        for _ in range(count // 2**20):  # in pieces: this process stays small (a child's peak RSS
            f.write(b'"",' * 2**20)        # counts what it was forked from)
        f.write(b'"",' * (count % 2**20) + b'""]}')
    expect_refusal("[3] 100 MiB header of empty strings", run(["dump", "--model", big, "--ids", "1,2", "--out",
                                                               os.path.join(root, "d3")]), "values")

    # [3] vocabulary 1,048,576 x 736, F32 wte a sparse hole: accepted and peaked at 3.64 GiB (Eigen packed
    # a 0.7 GiB block of the unembedding).
    for dtype, needle in (("F32", None), ("BF16", "GiB")):
        cfg = gpt2_config(1048576, 736)
        header, size = gpt2_header(cfg, dtype)
        d = os.path.join(root, "wide-" + dtype)
        os.makedirs(d)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f)
        st_header_file(os.path.join(d, "model.safetensors"), header, size)
        r = run(["dump", "--model", d, "--ids", "1,2,3", "--out", os.path.join(root, "d3" + dtype), "--threads", "2"])
        if needle is None:  # fits: it must run within the limit, or be refused up front
            ok = (r.rc == 0 or (r.rc == 1 and "3 GiB" in r.err)) and r.peak < LIMIT and r.seconds < 60
            check("[3] vocab 1M x 736 F32 (sparse): dump --model", ok, describe(r) + " " + r.err.strip()[:120])
        else:  # BF16: refused before converting (the mapped BF16 pages count too)
            expect_refusal("[3] vocab 1M x 736 BF16 (sparse): dump --model", r, needle)

    # [4] threads beyond the cores: 64 threads x 6 layers x d256 x context 256 reached 3.61 GiB.
    r = run(["train", "--task", "induction", "--threads", "64", "--batch", "128", "--layers", "6", "--d-model",
             "256", "--heads", "8", "--context", "256", "--steps", "1", "--eval-every", "1000",
             "--out", os.path.join(root, "t4")], timeout=120)
    expect_success("[4] train --threads 64 --batch 128, 6 x d256 x 256", r, 120)
    big_ck = os.path.join(root, "t4")
    ids = os.path.join(root, "ids.npy")
    np.save(ids, np.random.default_rng(1).integers(0, 64, size=(128, 257)).astype(np.int64))
    r = run(["grad", "--model", big_ck, "--tokens", ids, "--threads", "256", "--out", os.path.join(root, "g4")],
            timeout=120)
    expect_success("[4] grad --threads 256 on 6 x d256, ids [128, 257]", r, 120)

    # [6] an empty value swallowed the next argument.
    r = run(["tokenize", "--model", SHIPPED, "--text", "", "--pieces"])  # the empty text: no tokens
    check("[6] tokenize --text '' --pieces", r.rc == 0 and r.out.strip() == "[]" and r.err == "",
          describe(r) + ": " + (r.out + r.err).strip()[:120])
    r = run(["generate", "--model", SHIPPED, "--text", "", "--temperature", "0", "--tokens", "3"])
    check("[6] generate --text '' --temperature 0", r.rc != 0 and "\n" not in r.err.strip(),
          describe(r) + ": " + (r.out + r.err).strip()[:120])
    work = os.path.join(root, "cwd")
    os.makedirs(work)
    r = run(["dump", "--model", SHIPPED, "--ids", "1,2", "--out", "", "--threads", "1"], cwd=work)
    check("[6] dump --out '' --threads 1 writes nothing", r.rc == 2 and os.listdir(work) == [],
          describe(r) + ": " + r.err.strip()[:120] + " files: " + str(os.listdir(work)))
    r = run(["generate", "--model", SHIPPED, "--ids", "", "--tokens", "2"])
    check("[6] --ids '' names --ids", r.rc == 2 and "--ids" in r.err, describe(r) + ": " + r.err.strip()[:120])

    # [7] ids the model has and its tokenizer lacks (induction-2l: vocabulary 64, tokenizer 0..62).
    r = run(["generate", "--model", SHIPPED, "--ids", "1,2,63,4,1,2", "--tokens", "2", "--temperature", "0"])
    expect_success("[7] generate --ids with id 63 (not in vocab.json)", r)
    r = run(["dump", "--model", SHIPPED, "--ids", "1,63,2", "--out", os.path.join(root, "d7")])
    expect_success("[7] dump --ids with id 63", r)
    if r.rc == 0:
        with open(os.path.join(root, "d7", "manifest.json")) as f:
            texts = [t["text"] for t in json.load(f)["tokens"]]
        check("[7] dump names id 63 by its number", texts[1] == "63", str(texts))

    # (issue 24, defect 6) generate is greedy unless asked: the shipped model continues its sentence
    # the same way every time (at T = 1 it printed " quic jump. quic jump").
    a = run(["generate", "--model", SHIPPED, "--text", "the quick brown fox", "--tokens", "6"])
    b = run(["generate", "--model", SHIPPED, "--text", "the quick brown fox", "--tokens", "6", "--seed", "7"])
    g = run(["generate", "--model", SHIPPED, "--text", "the quick brown fox", "--tokens", "6", "--temperature", "0"])
    check("generate is greedy by default", a.rc == 0 and a.out == b.out == g.out, repr(a.out.strip()))

    # [8] BPE learning says how far it is.
    text = os.path.join(root, "cjk.txt")
    rng = np.random.default_rng(2)
    with open(text, "w", encoding="utf-8") as f:
        f.write("".join(chr(c) for c in rng.integers(0x4E00, 0x4E00 + 3000, size=40000)))
    r = run(["train", "--task", "text", "--text", text, "--bpe", "300", "--steps", "1", "--layers", "1",
             "--d-model", "16", "--heads", "1", "--context", "8", "--out", os.path.join(root, "t8")])
    check("[8] train --bpe reports its progress", r.rc == 0 and "learning BPE tokens from" in r.err,
          describe(r) + ": " + r.err.strip().splitlines()[0][:120] if r.err.strip() else describe(r))

    # [9] a checkpoint is written whole or not at all: config.json a symlink refused, but only after
    # model.safetensors had been renamed into place.
    out9 = os.path.join(root, "t9")
    os.makedirs(out9)
    target = os.path.join(root, "precious.json")
    with open(target, "w") as f:
        f.write("keep me")
    os.symlink(target, os.path.join(out9, "config.json"))
    r = run(["train", "--task", "induction", "--steps", "1", "--layers", "1", "--d-model", "16", "--heads", "1",
             "--context", "48", "--vocab", "16", "--out", out9])
    with open(target) as f:
        kept = f.read() == "keep me"
    left = sorted(os.listdir(out9))
    expect_refusal("[9] train --out with a symlinked config.json", r, "symbolic link")
    check("[9] ... and nothing was written", kept and left == ["config.json"], "folder holds " + str(left))

    # Nothing the user made is lost: `train --out` into a folder holding another model's tokenizer
    # deleted its vocab.json and merges.txt; now it refuses, and continuing the folder's own model
    # (--init into the same folder) keeps the tokenizer.
    mc = os.path.join(root, "mc")
    shutil.copytree(SHIPPED, mc)
    r = run(["train", "--task", "copy", "--steps", "1", "--layers", "1", "--d-model", "16", "--heads", "1",
             "--out", mc])
    expect_refusal("train --out into a folder with another model's tokenizer", r, "holds vocab.json")
    r = run(["train", "--task", "induction", "--init", mc, "--steps", "1", "--out", mc])
    check("train --init DIR --out DIR keeps DIR's tokenizer",
          r.rc == 0 and os.path.exists(os.path.join(mc, "vocab.json")) and os.path.exists(os.path.join(mc, "merges.txt")),
          describe(r) + ": " + r.err.strip()[:120])

    # [10] JSON errors in the app's own words, not nlohmann's "[json.exception.parse_error.101]".
    bad = os.path.join(root, "badjson")
    os.makedirs(bad)
    with open(os.path.join(bad, "config.json"), "w") as f:
        f.write('{"model_type": "gpt2", "n_layer": }')
    expect_refusal("[10] a config.json that is not JSON", run(["dump", "--model", bad, "--ids", "1", "--out",
                                                               os.path.join(root, "d10")]), "not valid JSON at byte")
    with open(os.path.join(bad, "tokenizer.json"), "w") as f:
        f.write('{"model": [}')
    expect_refusal("[10] a tokenizer.json that is not JSON", run(["tokenize", "--model", bad, "--text", "a"]),
                   "not valid JSON at byte")

    subprocess.run(["rm", "-rf", root])
    if failures:
        print("%d case(s) failed: %s" % (len(failures), ", ".join(failures)))
        sys.exit(1)
    print("all hostile inputs handled")


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    main()
