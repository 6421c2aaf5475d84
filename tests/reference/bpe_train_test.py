"""Checks `attnviz train --task text --bpe V`: the byte-level BPE it learns from the text against an
independent Python trainer (python3-regex, GPT-2's pattern; the same rule: the most frequent adjacent
pair, counted over the words weighted by their counts, ties to the smallest (left id, right id), until
V tokens or no pair occurs twice), merge for merge; the vocab.json + merges.txt saved with the
checkpoint encode text exactly as a reference GPT-2 BPE encoder does (`attnviz tokenize --model`);
one clear line and a non-zero exit for bad options.

usage: bpe_train_test.py path/to/attnviz
"""

import collections
import json
import os
import random
import subprocess
import sys
import tempfile

import regex

import tokenizer_ref as ref  # noqa: E402 (next to this file)

ATTNVIZ = sys.argv[1]


def train_ids(text, vocab_size):
    words = collections.Counter(ref.to_byte_chars(w) for w in regex.findall(ref.GPT2_PATTERN, text))
    vocab = {ref.BYTE_TO_CHAR[b]: b for b in range(256)}
    splits = {w: [vocab[c] for c in w] for w in words}
    tokens = [ref.BYTE_TO_CHAR[b] for b in range(256)]
    merges = []
    while len(tokens) < vocab_size:
        pairs = collections.Counter()
        for w, n in words.items():
            s = splits[w]
            for i in range(len(s) - 1):
                pairs[(s[i], s[i + 1])] += n
        if not pairs:
            break
        best = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        if best[1] < 2:
            break
        a, b = best[0]
        joined = tokens[a] + tokens[b]
        if joined in vocab:
            new = vocab[joined]
        else:
            new = len(tokens)
            vocab[joined] = new
            tokens.append(joined)
        merges.append((tokens[a], tokens[b]))
        for w in words:
            s, out, i = splits[w], [], 0
            while i < len(s):
                if i + 1 < len(s) and s[i] == a and s[i + 1] == b:
                    out.append(new)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            splits[w] = out
    return vocab, merges


def make_text(rng):
    en = ("the cat sat on the mat because it was tired while the dog ran to the park and "
          "children played there until evening came").split()
    zh = "注意力机制让每个词看向其他词并根据相似度分配权重这就是变换器的核心"
    parts = []
    for _ in range(1500):
        r = rng.random()
        if r < 0.6:
            parts.append(rng.choice(en))
        elif r < 0.85:
            k = rng.randrange(len(zh) - 4)
            parts.append(zh[k:k + rng.randint(2, 4)])
        else:
            parts.append(str(rng.randrange(1000)))
    return " ".join(parts) + "。\n"


def main():
    rng = random.Random(7)
    text = make_text(rng)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mixed.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        out = os.path.join(tmp, "model")
        r = subprocess.run([ATTNVIZ, "train", "--task", "text", "--text", path, "--bpe", "420", "--layers", "1",
                            "--heads", "2", "--d-model", "32", "--context", "16", "--steps", "2", "--out", out],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        vocab_ref, merges_ref = train_ids(text, 420)
        with open(os.path.join(out, "merges.txt"), encoding="utf-8") as f:
            lines = f.read().split("\n")
        assert lines[0] == "#version: 0.2", lines[0]
        merges = [tuple(l.split(" ")) for l in lines[1:] if l]
        assert len(merges) == len(merges_ref) > 100, (len(merges), len(merges_ref))
        for k, (got, want) in enumerate(zip(merges, merges_ref)):
            assert got == want, "merge %d: attnviz %r, reference %r" % (k, got, want)
        with open(os.path.join(out, "vocab.json"), encoding="utf-8") as f:
            vocab = json.load(f)
        assert vocab == vocab_ref, "vocab.json differs from the reference"
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        assert summary["tokens"] == "bpe" and summary["bpe_merges"] == len(merges_ref), summary
        assert summary["vocab_size"] == len(vocab_ref), summary
        # Whole Chinese characters became tokens (3 bytes merged), and words with their space.
        assert any(len(t.encode("utf-8")) == 3 and "\u4e00" <= t <= "\u9fff"
                   for t in (bytes(ref.CHAR_TO_BYTE[c] for c in tok).decode("utf-8", "replace") for tok in vocab))
        assert "Ġthe" in vocab, sorted(vocab)[:20]

        # The saved files encode like a reference GPT-2 encoder, seen and unseen text alike.
        enc = ref.Reference(vocab, merges)
        for sample in [text[:400], "the cat saw 注意力 and 123456 dogs!", "unseen words: zyzzyva 変換器",
                       "  spaces   and\ttabs\n\nlines"]:
            r = subprocess.run([ATTNVIZ, "tokenize", "--model", out, "--text", sample], capture_output=True,
                               text=True)
            assert r.returncode == 0, r.stderr
            assert json.loads(r.stdout) == enc.encode(sample), sample

        # Bad options: one line, non-zero exit.
        for args, code, needle in [
                (["--task", "text", "--text", path, "--bpe", "100"], 2, "--bpe"),
                (["--task", "copy", "--bpe", "300"], 2, "--bpe goes with --task text"),
        ]:
            r = subprocess.run([ATTNVIZ, "train"] + args + ["--steps", "1", "--out", os.path.join(tmp, "x")],
                               capture_output=True, text=True)
            assert r.returncode == code and needle in r.stderr and r.stderr.count("\n") == 1, (args, r)
        binary = os.path.join(tmp, "blob.bin")
        with open(binary, "wb") as f:
            f.write(bytes(range(256)) * 40)
        r = subprocess.run([ATTNVIZ, "train", "--task", "text", "--text", binary, "--bpe", "300", "--steps", "1",
                            "--out", os.path.join(tmp, "y")], capture_output=True, text=True)
        assert r.returncode == 1 and "blob.bin" in r.stderr and r.stderr.count("\n") == 1, r
    print("bpe_train_test: %d merges equal to the reference; tokenize matches" % len(merges_ref))


if __name__ == "__main__":
    main()
