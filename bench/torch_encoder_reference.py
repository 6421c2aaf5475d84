#!/usr/bin/python3
"""Times a BERT-base-shaped encoder forward (random weights, no download) in PyTorch, for
bench_encoder.cpp.

    /usr/bin/python3 bench/torch_encoder_reference.py --n 512 --threads 1 [--repeat 3]

The same computation as attnviz's run_model on a BERT model (modeling_bert in eval mode): word + token
type (a pair: the first half segment 0, the second 1) + position embeddings, LayerNorm; 12 × (q, k, v
nn.Linear, per-head softmax(QKᵀ/√d)·V over every key (no mask), output dense, LayerNorm(x + attn),
intermediate dense, GELU (erf), output dense, LayerNorm(x + mlp)); the masked-LM head (dense, GELU,
LayerNorm, the tied word embeddings + bias) at every position. float32, no autograd. Prints the best
time of `repeat` runs in milliseconds as one number on the last line.
"""
import math

from torch_timing import best_of, describe, parse_args  # (first: it sets the threads' environment)
import torch  # noqa: E402


def make(n_layer, d, f, vocab, positions, g):
    r = lambda *s: torch.randn(*s, generator=g) * 0.02  # noqa: E731
    ones, zeros = torch.ones(d), torch.zeros(d)
    layers = []
    for _ in range(n_layer):
        layers.append(dict(q_w=r(d, d), q_b=r(d), k_w=r(d, d), k_b=r(d), v_w=r(d, d), v_b=r(d), o_w=r(d, d),
                           o_b=r(d), ln1w=ones, ln1b=zeros, fc_w=r(f, d), fc_b=r(f), proj_w=r(d, f), proj_b=r(d),
                           ln2w=ones, ln2b=zeros))
    return dict(wte=r(vocab, d), wpe=r(positions, d), wtt=r(2, d), lnew=ones, lneb=zeros, layers=layers,
                head_w=r(d, d), head_b=r(d), lnfw=ones, lnfb=zeros, bias=torch.zeros(vocab))


def forward(m, ids, types, h):
    n = ids.shape[0]
    d = m["wte"].shape[1]
    dh = d // h
    F = torch.nn.functional
    x = F.layer_norm(m["wte"][ids] + m["wtt"][types] + m["wpe"][:n], (d,), m["lnew"], m["lneb"], 1e-12)
    for L in m["layers"]:
        q, k, v = (F.linear(x, L[p + "_w"], L[p + "_b"]).view(n, h, dh).transpose(0, 1) for p in ("q", "k", "v"))
        w = torch.softmax((q @ k.transpose(1, 2)) / math.sqrt(dh), dim=-1)
        o = (w @ v).transpose(0, 1).reshape(n, d)
        x = F.layer_norm(x + F.linear(o, L["o_w"], L["o_b"]), (d,), L["ln1w"], L["ln1b"], 1e-12)
        mlp = F.linear(F.gelu(F.linear(x, L["fc_w"], L["fc_b"])), L["proj_w"], L["proj_b"])
        x = F.layer_norm(x + mlp, (d,), L["ln2w"], L["ln2b"], 1e-12)
    t = F.layer_norm(F.gelu(F.linear(x, m["head_w"], m["head_b"])), (d,), m["lnfw"], m["lnfb"], 1e-12)
    return F.linear(t, m["wte"], m["bias"])


def main():
    args = parse_args(__doc__, n=512, layers=12)
    g = torch.Generator().manual_seed(0)
    m = make(args.layers, 768, 3072, 30522, 512, g)
    ids = torch.randint(0, 30522, (args.n,), generator=g)
    types = (torch.arange(args.n) >= args.n // 2).long()
    best, _ = best_of(lambda: forward(m, ids, types, 12), args.repeat)
    print(describe("n=%d" % args.n))
    print("%.3f" % (best * 1e3))

if __name__ == "__main__":
    main()
