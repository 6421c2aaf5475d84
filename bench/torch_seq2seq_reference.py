#!/usr/bin/python3
"""Times a T5-small-shaped encoder–decoder forward (random weights, no download) in PyTorch, for
bench_seq2seq.cpp.

    /usr/bin/python3 bench/torch_seq2seq_reference.py --n 128 --threads 1 [--repeat 3]

The same computation as attnviz's run_seq2seq on a t5 model: 6 encoder blocks over m source tokens
(T5LayerNorm, q/k/v/o without biases, softmax(QKᵀ + relative position bias)·V, no 1/√dh, ReLU
feed-forward d 512 → 2048 → 512), the encoder's final norm, 6 decoder blocks over n target tokens (causal
self-attention with its own bias, cross-attention to the encoder's output, feed-forward), the decoder's
final norm, logits for every target position against the tied embedding × d^−½. 8 heads of 64, vocabulary
32128, 32 buckets up to 128. float32, no autograd. Prints the best time of `repeat` runs in milliseconds
as one number on the last line.
"""
import math

from torch_timing import best_of, describe, parse_args  # (first: it sets the threads' environment)
import torch  # noqa: E402


D, H, DK, FF, V, LAYERS, BUCKETS, MAXD = 512, 8, 64, 2048, 32128, 6, 32, 128


def bucket(rel, bidirectional):
    nb, out = BUCKETS, torch.zeros_like(rel)
    if bidirectional:
        nb //= 2
        out += (rel > 0).long() * nb
        rel = rel.abs()
    else:
        rel = -torch.min(rel, torch.zeros_like(rel))
    exact = nb // 2
    large = exact + (torch.log(rel.float() / exact) / math.log(MAXD / exact) * (nb - exact)).long()
    large = torch.min(large, torch.full_like(large, nb - 1))
    return out + torch.where(rel < exact, rel, large)


def make(g):
    r = lambda *s: torch.randn(*s, generator=g) * 0.02  # noqa: E731
    def attn():
        return dict(q=r(H * DK, D), k=r(H * DK, D), v=r(H * DK, D), o=r(D, H * DK), ln=torch.ones(D))
    enc = [dict(sa=attn(), ln2=torch.ones(D), wi=r(FF, D), wo=r(D, FF)) for _ in range(LAYERS)]
    dec = [dict(sa=attn(), ca=attn(), ln2=torch.ones(D), wi=r(FF, D), wo=r(D, FF)) for _ in range(LAYERS)]
    return dict(shared=r(V, D), enc=enc, dec=dec, enc_rel=r(BUCKETS, H), dec_rel=r(BUCKETS, H),
                enc_ln=torch.ones(D), dec_ln=torch.ones(D))


def norm(x, w):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))


def attention(A, xq, xkv, bias, mask):
    n, m = xq.shape[0], xkv.shape[0]
    q = (xq @ A["q"].T).view(n, H, DK).transpose(0, 1)
    k = (xkv @ A["k"].T).view(m, H, DK).transpose(0, 1)
    v = (xkv @ A["v"].T).view(m, H, DK).transpose(0, 1)
    s = q @ k.transpose(1, 2)
    if bias is not None:
        s = s + bias
    if mask is not None:
        s = s.masked_fill(mask, float("-inf"))
    w = torch.softmax(s, dim=-1)
    return (w @ v).transpose(0, 1).reshape(n, H * DK) @ A["o"].T


def forward(M, src, tgt):
    m, n = src.shape[0], tgt.shape[0]
    rel = torch.arange(m)[None, :] - torch.arange(m)[:, None]
    ebias = M["enc_rel"][bucket(rel, True)].permute(2, 0, 1)
    x = M["shared"][src]
    for L in M["enc"]:
        x = x + attention(L["sa"], norm(x, L["sa"]["ln"]), norm(x, L["sa"]["ln"]), ebias, None)
        x = x + torch.relu(norm(x, L["ln2"]) @ L["wi"].T) @ L["wo"].T
    e = norm(x, M["enc_ln"])
    rel = torch.arange(n)[None, :] - torch.arange(n)[:, None]
    dbias = M["dec_rel"][bucket(rel, False)].permute(2, 0, 1)
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    y = M["shared"][tgt]
    for L in M["dec"]:
        a = norm(y, L["sa"]["ln"])
        y = y + attention(L["sa"], a, a, dbias, mask)
        y = y + attention(L["ca"], norm(y, L["ca"]["ln"]), e, None, None)
        y = y + torch.relu(norm(y, L["ln2"]) @ L["wi"].T) @ L["wo"].T
    return (norm(y, M["dec_ln"]) * D ** -0.5) @ M["shared"].T


def main():
    args = parse_args(__doc__, n=128)
    g = torch.Generator().manual_seed(0)
    M = make(g)
    src = torch.randint(0, V, (args.n,), generator=g)
    tgt = torch.randint(0, V, (args.n,), generator=g)
    best, _ = best_of(lambda: forward(M, src, tgt), args.repeat)
    print(describe("m=n=%d" % args.n))
    print("%.3f" % (best * 1e3))

if __name__ == "__main__":
    main()
