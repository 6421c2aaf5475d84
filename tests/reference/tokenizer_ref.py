"""An independent Python reference for byte-level BPE tokenizers (GPT-2 / Hugging Face tokenizer.json).

Written from the published descriptions, not from attnviz's C++:
  - GPT-2's encoder.py: bytes_to_unicode(), the pre-tokenizer regex, and the bpe() loop that merges
    the lowest-ranked adjacent pair (all its occurrences, left to right) until none is left;
  - Hugging Face tokenizers: added tokens are split out of the raw text first (leftmost, longest),
    then the normalizer (NFC), then Split(regex, behavior Isolated) keeps matches and the gaps
    between them as pieces, then ByteLevel (GPT-2 regex when use_regex) and BPE; with ignore_merges
    a word that is itself in the vocabulary is taken whole.

It also trains a small byte-level BPE (most frequent pair first) so tests have real merges, including
merges inside and across multi-byte CJK characters and emoji, and writes it in three layouts.
Uses the `regex` module (python3-regex) for \\p{L} / \\p{N}.
"""

import collections
import json
import os
import unicodedata

import regex

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
QWEN2_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                 r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
LLAMA3_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                  r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")


def bytes_to_unicode():
    """GPT-2's table: printable Latin-1 bytes map to themselves, the rest to 256, 257, ... in order."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    table = {}
    extra = 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_TO_CHAR = bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def to_byte_chars(s):
    return "".join(BYTE_TO_CHAR[b] for b in s.encode("utf-8"))


def isolated_split(pattern, text):
    """Hugging Face Split with behavior Isolated: every match is a piece, and so is every gap."""
    pieces = []
    last = 0
    for m in regex.finditer(pattern, text):
        if m.start() == m.end():
            continue
        if m.start() > last:
            pieces.append(text[last:m.start()])
        pieces.append(m.group(0))
        last = m.end()
    if last < len(text):
        pieces.append(text[last:])
    return pieces


# ------------------------------------------------------------------------------------------------
# Training (so that the tests have real merges)
# ------------------------------------------------------------------------------------------------

def train(corpus, num_merges, pattern=GPT2_PATTERN):
    """Byte-level BPE training: returns (vocab {token: id}, merges [(a, b)]) with ids 0..255 for the
    byte characters (in byte order) and one new id per merge."""
    words = collections.Counter(to_byte_chars(w) for w in regex.findall(pattern, corpus))
    splits = {w: list(w) for w in words}
    vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
    merges = []
    for _ in range(num_merges):
        pairs = collections.Counter()
        for w, n in words.items():
            sym = splits[w]
            for i in range(len(sym) - 1):
                pairs[(sym[i], sym[i + 1])] += n
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        if pairs[best] < 2:
            break
        merged = best[0] + best[1]
        merges.append(best)
        if merged not in vocab:
            vocab[merged] = len(vocab)
        for w in words:
            sym = splits[w]
            out = []
            i = 0
            while i < len(sym):
                if i + 1 < len(sym) and sym[i] == best[0] and sym[i + 1] == best[1]:
                    out.append(merged)
                    i += 2
                else:
                    out.append(sym[i])
                    i += 1
            splits[w] = out
    return vocab, merges


# ------------------------------------------------------------------------------------------------
# Encoding
# ------------------------------------------------------------------------------------------------

class Reference:
    def __init__(self, vocab, merges, added=(), pattern=GPT2_PATTERN, split_pattern=None, nfc=False,
                 ignore_merges=False):
        self.vocab = dict(vocab)
        self.ranks = {tuple(m): i for i, m in enumerate(merges)}
        self.added = {t: i for t, i in added}
        self.pattern = pattern  # ByteLevel's regex, or None (use_regex false)
        self.split_pattern = split_pattern
        self.nfc = nfc
        self.ignore_merges = ignore_merges
        self.cache = {}

    def bpe(self, word):
        if self.ignore_merges and word in self.vocab:
            return [word]
        if word in self.cache:
            return self.cache[word]
        sym = list(word)
        while len(sym) > 1:
            pairs = [(sym[i], sym[i + 1]) for i in range(len(sym) - 1)]
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            out = []
            i = 0
            while i < len(sym):
                if i + 1 < len(sym) and sym[i] == best[0] and sym[i + 1] == best[1]:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(sym[i])
                    i += 1
            sym = out
        self.cache[word] = sym
        return sym

    def split_added(self, text):
        if not self.added:
            return [(None, text)]
        alternatives = sorted(self.added, key=len, reverse=True)
        pat = "|".join(regex.escape(t) for t in alternatives)
        parts = []
        last = 0
        for m in regex.finditer(pat, text):
            if m.start() > last:
                parts.append((None, text[last:m.start()]))
            parts.append((self.added[m.group(0)], m.group(0)))
            last = m.end()
        if last < len(text):
            parts.append((None, text[last:]))
        return parts

    def encode(self, text):
        ids = []
        for added_id, part in self.split_added(text):
            if added_id is not None:
                ids.append(added_id)
                continue
            if self.nfc:
                part = unicodedata.normalize("NFC", part)
            pieces = isolated_split(self.split_pattern, part) if self.split_pattern else [part]
            for piece in pieces:
                words = isolated_split(self.pattern, piece) if self.pattern else [piece]
                for w in words:
                    ids.extend(self.vocab[t] for t in self.bpe(to_byte_chars(w)))
        return ids

    def token_bytes(self, token):
        return bytes(CHAR_TO_BYTE[c] for c in token)


# ------------------------------------------------------------------------------------------------
# Writing the three layouts
# ------------------------------------------------------------------------------------------------

def write_gpt2_files(directory, vocab, merges):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(directory, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(a + " " + b + "\n")


def added_token_json(content, token_id, special=True):
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special}


def write_tokenizer_json(directory, vocab, merges, added, pre_tokenizer, normalizer=None,
                         merges_as_pairs=False, ignore_merges=False):
    os.makedirs(directory, exist_ok=True)
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added_token_json(c, i, s) for c, i, s in added],
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                           "use_regex": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": ignore_merges,
            "vocab": vocab,
            "merges": [[a, b] for a, b in merges] if merges_as_pairs else [a + " " + b for a, b in merges],
        },
    }
    with open(os.path.join(directory, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)


def byte_level(use_regex):
    return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": use_regex}


def split(pattern):
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}
