#!/usr/bin/python3
"""Times the all-heads zero-ablation sweep in PyTorch, for bench_interventions.cpp.

    /usr/bin/python3 bench/torch_ablation_reference.py --n 256 --threads 1 [--check]

The GPT-2-small-shaped model of torch_model_reference.py (random weights, no download) as a module with a
hook point on every layer's head outputs z [h, n, d_head] (TransformerLens's hook_z); the sweep is the
clean run's loss, then for each of the 12 × 12 heads a forward hook zeroing that head and a whole forward
with the loss (mean cross-entropy of token i+1 given 0..i). float32, no autograd. Prints the sweep's time
in milliseconds as one number on the last line, after a line "cpu_ms X" with its CPU time (all threads).
--check prints the delta_loss grid's extremes too.
"""
import argparse
import math
import time

from torch_threads import blas_threads, set_threads  # (first: it sets the threads' environment)
import torch  # noqa: E402

from torch_model_reference import gelu_new, make


class HookPoint(torch.nn.Module):
    def forward(self, x):
        return x


class Gpt2(torch.nn.Module):
    def __init__(self, m, h):
        super().__init__()
        self.m, self.h = m, h
        self.hook_z = torch.nn.ModuleList([HookPoint() for _ in m["layers"]])

    def forward(self, ids):
        m, h = self.m, self.h
        n, d = ids.shape[0], m["wte"].shape[1]
        dh = d // h
        x = m["wte"][ids] + m["wpe"][:n]
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
        for hook, L in zip(self.hook_z, m["layers"]):
            a = torch.nn.functional.layer_norm(x, (d,), L["ln1w"], L["ln1b"], 1e-5)
            q, k, v = torch.addmm(L["attn_b"], a, L["attn_w"]).split(d, dim=1)
            q, k, v = (t.view(n, h, dh).transpose(0, 1) for t in (q, k, v))
            w = torch.softmax((q @ k.transpose(1, 2) / math.sqrt(dh)).masked_fill(mask, float("-inf")), dim=-1)
            z = hook(w @ v)  # [h, n, dh]
            x = x + torch.addmm(L["proj_b"], z.transpose(0, 1).reshape(n, d), L["proj_w"])
            b = torch.nn.functional.layer_norm(x, (d,), L["ln2w"], L["ln2b"], 1e-5)
            x = x + torch.addmm(L["mlp_b"], gelu_new(torch.addmm(L["fc_b"], b, L["fc_w"])), L["mlp_w"])
        x = torch.nn.functional.layer_norm(x, (d,), m["lnfw"], m["lnfb"], 1e-5)
        return x @ m["wte"].T


def loss(model, ids):
    return float(torch.nn.functional.cross_entropy(model(ids)[:-1], ids[1:]))


def sweep(model, ids, n_layer, h):
    base = loss(model, ids)
    delta = torch.zeros(n_layer, h)
    for l in range(n_layer):
        for j in range(h):
            def zero(mod, inp, out, j=j):
                out = out.clone()
                out[j] = 0
                return out
            handle = model.hook_z[l].register_forward_hook(zero)
            delta[l, j] = loss(model, ids) - base
            handle.remove()
    return base, delta


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    set_threads(args.threads)
    g = torch.Generator().manual_seed(0)
    model = Gpt2(make(args.layers, 768, 50257, 1024, g), 12)
    ids = torch.tensor([(i * 7919) % 50257 for i in range(args.n)])
    with torch.no_grad():
        loss(model, ids)  # warm-up
        t0, c0 = time.perf_counter(), time.process_time()
        base, delta = sweep(model, ids, args.layers, 12)
        ms, cpu_ms = (time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3
    print("torch %s, %d threads (OpenBLAS %d), n=%d, %d heads" % (torch.__version__, torch.get_num_threads(),
                                                                 blas_threads(), args.n, delta.numel()))
    if args.check:
        print("base loss %.6f, delta_loss from %.3g to %.3g" % (base, float(delta.min()), float(delta.max())))
    print("cpu_ms %.3f" % cpu_ms)  # every thread of the process: on a busy machine the fairer figure
    print("%.3f" % ms)


if __name__ == "__main__":
    main()
