#!/usr/bin/python3
"""Times a GPT-2-small-shaped forward (random weights, no download) in PyTorch, for bench_model.cpp.

    /usr/bin/python3 bench/torch_model_reference.py --n 1024 --threads 1 [--repeat 3]

The same computation as attnviz's run_model on a GPT-2 model: wte + wpe, 12 × (LayerNorm, fused c_attn
(Conv1D, x·W + b), per-head causal softmax(QKᵀ/√d)·V, c_proj, residual, LayerNorm, c_fc, gelu_new, c_proj,
residual), ln_f, logits for every position against the tied wte. float32, no autograd. Prints the best
time of `repeat` runs in milliseconds as one number on the last line, after a line "cpu_ms X" with
the least CPU time of a run (all threads).
"""
import math

from torch_timing import best_of, describe, parse_args  # (first: it sets the threads' environment)
import torch  # noqa: E402


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def make(n_layer, d, vocab, positions, g):
    r = lambda *s: torch.randn(*s, generator=g) * 0.02  # noqa: E731
    layers = []
    for _ in range(n_layer):
        layers.append(dict(ln1w=torch.ones(d), ln1b=torch.zeros(d), attn_w=r(d, 3 * d), attn_b=r(3 * d),
                           proj_w=r(d, d), proj_b=r(d), ln2w=torch.ones(d), ln2b=torch.zeros(d),
                           fc_w=r(d, 4 * d), fc_b=r(4 * d), mlp_w=r(4 * d, d), mlp_b=r(d)))
    return dict(wte=r(vocab, d), wpe=r(positions, d), layers=layers, lnfw=torch.ones(d), lnfb=torch.zeros(d))


def forward(m, ids, h):
    n = ids.shape[0]
    d = m["wte"].shape[1]
    dh = d // h
    x = m["wte"][ids] + m["wpe"][:n]
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    for L in m["layers"]:
        a = torch.nn.functional.layer_norm(x, (d,), L["ln1w"], L["ln1b"], 1e-5)
        q, k, v = torch.addmm(L["attn_b"], a, L["attn_w"]).split(d, dim=1)
        q, k, v = (t.view(n, h, dh).transpose(0, 1) for t in (q, k, v))
        s = (q @ k.transpose(1, 2)) / math.sqrt(dh)
        w = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
        o = (w @ v).transpose(0, 1).reshape(n, d)
        x = x + torch.addmm(L["proj_b"], o, L["proj_w"])
        b = torch.nn.functional.layer_norm(x, (d,), L["ln2w"], L["ln2b"], 1e-5)
        x = x + torch.addmm(L["mlp_b"], gelu_new(torch.addmm(L["fc_b"], b, L["fc_w"])), L["mlp_w"])
    x = torch.nn.functional.layer_norm(x, (d,), m["lnfw"], m["lnfb"], 1e-5)
    return x @ m["wte"].T


def main():
    args = parse_args(__doc__, n=1024, layers=12)
    g = torch.Generator().manual_seed(0)
    m = make(args.layers, 768, 50257, 1024, g)
    ids = torch.randint(0, 50257, (args.n,), generator=g)
    best, best_cpu = best_of(lambda: forward(m, ids, 12), args.repeat)
    print(describe("n=%d" % args.n))
    print("cpu_ms %.3f" % (best_cpu * 1e3))  # every thread of the process: on a busy machine the fairer figure
    print("%.3f" % (best * 1e3))

if __name__ == "__main__":
    main()
