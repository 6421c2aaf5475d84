#!/usr/bin/python3
"""Checks `attnviz tokenize` against the independent Python reference in tokenizer_ref.py.

usage: /usr/bin/python3 tokenizer_test.py /path/to/attnviz

A small byte-level BPE is trained here on a mixed corpus (English, code, numbers, whitespace runs,
emoji, Chinese) and written in four layouts: GPT-2 vocab.json + merges.txt; tokenizer.json with
ByteLevel(use_regex) alone; tokenizer.json with NFC + Split(Qwen2 pattern) + ByteLevel, merges as
pairs, chat special tokens; tokenizer.json with Split(Llama-3 pattern), ignore_merges and a gap in
the ids. For every layout, many strings are tokenized by attnviz and by the reference and the ids
must be equal: the many strings go through one `--texts-json` run per layout, and a few through
`--text` and `--text-file` (one process each), which must agree too. With $ATTNVIZ_GPT2_DIR (a folder with GPT-2's real vocab.json + merges.txt or
tokenizer.json), "hello world" must give [31373, 995]. Exits non-zero naming every mismatch.
"""

import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer_ref as ref  # noqa: E402

CORPUS = """
The quick brown fox jumps over the lazy dog. The dog didn't care; they're friends, and we'll see.
Attention is all you need: the query, the key and the value. Queries attend to keys; values are mixed.
I've seen the cat sleeping on the mat, and the cat's tail was fluffy. THE CAT'S TAIL!
def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)

for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }  // dot product
if __name__ == "__main__":
    print("hello world", 3.14159, 2.71828, 1e-5)
Numbers: 12345 67890 1,000,000 3.14 42 2024-11-23 0x1F 100% $9.99 +1-555-0100
Whitespace:    four spaces,		two tabs,

blank lines,   trailing spaces   
Emoji: 👍🏽 🎉🎉🎉 😀😃😄 👨‍👩‍👧 ❤️ 🐱🐶 🚀 ✨✨
中文：毛茸茸的蓝色生物在翠绿的森林里漫步。我们今天学习注意力机制，注意力机制是深度学习的核心。
注意力就是你所需要的一切。查询、键和值。今天天气很好，我们去公园散步吧！机器学习和深度学习。
日本語も少し：注意機構。한국어도 조금: 주의 메커니즘. Ünïcödé café naïve résumé façade.
"""

# Repeat some lines so the common pairs clearly win, incl. inside and across CJK characters.
TRAIN_TEXT = CORPUS + CORPUS.split("中文：")[1] * 3 + "the the the attention attention 的的 学习学习 " * 5

STRINGS = [
    "hello world",
    "Hello world!",
    "The quick brown fox jumps over the lazy dog.",
    "I'm sure they'll say we've done it, isn't it? THEY'RE HERE. You'D",
    "def f(x):\n    return x ** 2  # square\n",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
    "12345 67890 1,000,000 3.14159 2024-11-23 0x1F 100% $9.99",
    "1234567890123",
    "a   b",
    "a \t b\n\n\n  c\t\td    ",
    "   leading spaces",
    "trailing spaces   ",
    "\n\n\n",
    " ",
    "line one\r\nline two\r\n",
    "👍🏽 🎉🎉🎉 😀😃😄 👨‍👩‍👧 ❤️",
    "🐱🐶🚀✨",
    "毛茸茸的蓝色生物在翠绿的森林里漫步。",
    "我们今天学习注意力机制，注意力机制是深度学习的核心。",
    "注意力就是你所需要的一切",
    "中文English混合text，数字123和emoji😀。",
    "日本語も少し：注意機構。한국어도 조금",
    "café naïve résumé",
    "cafe\u0301 nai\u0308ve",  # decomposed: NFC changes these
    "hello<|endoftext|>world",
    "<|endoftext|><|endoftext|>",
    "a<|endoftext|> b <|endoftext|>",
    "<|im_start|>user\n你好<|im_end|>\n<|im_start|>assistant\n",
    "use <tool> here<tool>",
    "zzyzx and zzyzx",
    " zzyzx",
    "<|begin_of_text|>Hello",
    "x",
    "!!!??? ... ---",
    "   \n   \n",
    "The cat's tail, THE CAT'S TAIL",
    "a\x85 b\u2028\u2028c\u3000\u3000d\u00a0\u00a0e",  # Unicode White_Space beyond ASCII
]


def random_strings(rng, count):
    """Substrings of the corpus at random character offsets, and random mixes of a character pool."""
    pool = list("abc xyz ABC 012 789 ,.;:!?'\"-_()[]{} \t\n\r") + list("的学习注意力机制毛茸") + \
        ["😀", "👍🏽", "é", "e\u0301", "ß", "\u00a0", "  ", "'s", "'LL"]
    out = []
    for _ in range(count):
        a = rng.randrange(len(CORPUS))
        out.append(CORPUS[a:a + rng.randrange(1, 80)])
    for _ in range(count):
        out.append("".join(rng.choice(pool) for _ in range(rng.randrange(1, 30))))
    return out


class Tokenize:
    def __init__(self, binary):
        self.binary = binary

    def _run(self, args):
        r = subprocess.run([self.binary, "tokenize"] + args, capture_output=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError("attnviz tokenize failed (%d): %s" % (r.returncode, r.stderr.decode(errors="replace")))
        return json.loads(r.stdout.decode("utf-8"))

    def __call__(self, model_dir, text, pieces=False):
        """One text, one process: --text, or --text-file for a text that looks like a flag."""
        args = ["--model", model_dir]
        with tempfile.TemporaryDirectory(prefix="attnviz-tok-one-") as d:
            if text.startswith("--"):
                path = os.path.join(d, "text.txt")
                with open(path, "wb") as f:
                    f.write(text.encode("utf-8"))
                args += ["--text-file", path]
            else:
                args += ["--text", text]
            return self._run(args + (["--pieces"] if pieces else []))

    def many(self, model_dir, texts, pieces=False):
        """Every text in one process (--texts-json): one result per text, in order."""
        with tempfile.TemporaryDirectory(prefix="attnviz-tok-many-") as d:
            path = os.path.join(d, "texts.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(texts, f, ensure_ascii=False)
            out = self._run(["--model", model_dir, "--texts-json", path] + (["--pieces"] if pieces else []))
        if len(out) != len(texts):
            raise RuntimeError("--texts-json gave %d results for %d texts" % (len(out), len(texts)))
        return out


def build_layouts(root):
    vocab, merges = ref.train(TRAIN_TEXT, 420)
    n = len(vocab)
    cjk_merges = sum(1 for a, b in merges
                     if any(ref.CHAR_TO_BYTE[c] >= 0x80 for c in a + b))
    partial = sum(1 for t in vocab if len(t) > 1 and not _valid_utf8(bytes(ref.CHAR_TO_BYTE[c] for c in t)))
    print("trained %d tokens, %d merges (%d with non-ASCII bytes, %d tokens that are partial UTF-8)"
          % (n, len(merges), cjk_merges, partial))
    assert cjk_merges >= 20 and partial >= 1, "the corpus must produce multi-byte merges"

    layouts = []
    # 1. GPT-2 files; <|endoftext|> is in vocab.json and is split out as a special token.
    v1 = dict(vocab)
    v1["<|endoftext|>"] = n
    d = os.path.join(root, "gpt2")
    ref.write_gpt2_files(d, v1, merges)
    layouts.append(("gpt2_files", d, ref.Reference(v1, merges, added=[("<|endoftext|>", n)])))

    # 2. tokenizer.json, ByteLevel(use_regex) alone, one special and one non-special added token.
    added2 = [("<|endoftext|>", n, True), ("<tool>", n + 1, False)]
    d = os.path.join(root, "bytelevel")
    ref.write_tokenizer_json(d, vocab, merges, added2, ref.byte_level(True))
    layouts.append(("bytelevel_json", d,
                    ref.Reference(vocab, merges, added=[(c, i) for c, i, _ in added2])))

    # 3. Qwen2 style: NFC + Split(Qwen2 pattern) + ByteLevel(use_regex false), merges as pairs.
    added3 = [("<|endoftext|>", n, True), ("<|im_start|>", n + 1, True), ("<|im_end|>", n + 2, True)]
    d = os.path.join(root, "qwen2")
    ref.write_tokenizer_json(d, vocab, merges, added3,
                             {"type": "Sequence", "pretokenizers": [ref.split(ref.QWEN2_PATTERN),
                                                                    ref.byte_level(False)]},
                             normalizer={"type": "NFC"}, merges_as_pairs=True)
    layouts.append(("qwen2_json", d, ref.Reference(vocab, merges, added=[(c, i) for c, i, _ in added3],
                                                   pattern=None, split_pattern=ref.QWEN2_PATTERN, nfc=True)))

    # 4. Llama-3 style: Split(Llama-3 pattern) + ByteLevel, ignore_merges, a word token no merge can
    #    build (" zzyzx"), and ids with a gap.
    v4 = dict(vocab)
    v4[ref.to_byte_chars(" zzyzx")] = n + 7
    added4 = [("<|begin_of_text|>", n + 10, True), ("<|end_of_text|>", n + 11, True)]
    d = os.path.join(root, "llama3")
    ref.write_tokenizer_json(d, v4, merges, added4,
                             {"type": "Sequence", "pretokenizers": [ref.split(ref.LLAMA3_PATTERN),
                                                                    ref.byte_level(False)]},
                             ignore_merges=True)
    layouts.append(("llama3_json", d, ref.Reference(v4, merges, added=[(c, i) for c, i, _ in added4],
                                                    pattern=None, split_pattern=ref.LLAMA3_PATTERN,
                                                    ignore_merges=True)))
    # The test itself: ignore_merges must matter for " zzyzx" (merges alone give several tokens).
    assert len(ref.Reference(v4, merges, pattern=None, split_pattern=ref.LLAMA3_PATTERN).encode(" zzyzx")) > 1
    return layouts


def readable(b):
    """The documented rule: complete valid UTF-8 sequences as text, every other byte as \\xNN."""
    out = []
    i = 0
    while i < len(b):
        for n in (1, 2, 3, 4):
            try:
                out.append(b[i:i + n].decode("utf-8"))
                i += n
                break
            except UnicodeDecodeError:
                pass
        else:
            out.append("\\x%02x" % b[i])
            i += 1
    return "".join(out)


def _valid_utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    tokenize = Tokenize(sys.argv[1])
    failures = []
    checked = 0
    rng = random.Random(1234)
    strings = STRINGS + random_strings(rng, 40)
    with tempfile.TemporaryDirectory(prefix="attnviz-tok-") as root:
        for name, directory, reference in build_layouts(root):
            try:
                results = tokenize.many(directory, strings)
            except Exception as e:  # noqa: BLE001
                failures.append("%s: --texts-json: %s" % (name, e))
                continue
            for s, got in zip(strings, results):
                want = reference.encode(s)
                checked += 1
                if got != want:
                    failures.append("%s: %r: attnviz %s, reference %s" % (name, s, got, want))
            # One text per process (--text, and --text-file for a text that starts with "--") gives
            # the same ids as the batch.
            for s in strings[:3] + ["--not a flag"]:
                try:
                    got = tokenize(directory, s)
                except Exception as e:  # noqa: BLE001
                    failures.append("%s: %r: %s" % (name, s, e))
                    continue
                checked += 1
                if got != reference.encode(s):
                    failures.append("%s: %r: attnviz %s, reference %s" % (name, s, got, reference.encode(s)))
            # Readable pieces: each token's bytes as UTF-8 where valid, other bytes as \xNN escapes.
            inverse = {i: t for t, i in reference.vocab.items()}
            shown = ["Hello 世界 😀 cats", "毛茸茸的蓝色生物在翠绿的森林里漫步。", "a<|endoftext|>b"]
            batch = tokenize.many(directory, shown, pieces=True)
            if batch[0] != tokenize(directory, shown[0], pieces=True):
                failures.append("%s: --pieces differs between --texts-json and --text" % name)
            for s, pieces in zip(shown, batch):
                if [p["id"] for p in pieces] != reference.encode(s):
                    failures.append("%s: --pieces ids differ from plain ids for %r" % (name, s))
                    continue
                for p in pieces:
                    want = [c for c, i in reference.added.items() if i == p["id"]]
                    want = want[0] if want else readable(reference.token_bytes(inverse[p["id"]]))
                    if p["text"] != want:
                        failures.append("%s: token %d shown as %r, expected %r" % (name, p["id"], p["text"], want))
                checked += 1

    gpt2_dir = os.environ.get("ATTNVIZ_GPT2_DIR")
    if gpt2_dir:
        got = tokenize(gpt2_dir, "hello world")
        checked += 1
        if got != [31373, 995]:
            failures.append("GPT-2 (%s): 'hello world' gave %s, published [31373, 995]" % (gpt2_dir, got))
    else:
        print("skipped the published GPT-2 vector ('hello world' -> [31373, 995]): "
              "set ATTNVIZ_GPT2_DIR to a folder with GPT-2's vocab.json + merges.txt")

    for f in failures[:50]:
        print("MISMATCH", f)
    print("%d tokenizations checked, %d mismatches" % (checked, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
