#!/usr/bin/python3
"""Times one training step of attnviz's trainable decoder in PyTorch, for bench_train.cpp.

    /usr/bin/python3 bench/torch_train_reference.py --layers 2 --d-model 64 --heads 4 --context 48 \
        --vocab 64 --batch 32 --mlp none --threads 1 [--steps 30]

The same step as BM_Train: token + learned position embeddings, L × (LayerNorm, fused c_attn x·W + b,
per-head causal softmax(QKᵀ/√d)·V, c_proj, residual[, LayerNorm, c_fc, gelu tanh, c_proj, residual]),
ln_f, untied unembedding, mean cross-entropy, backward, clip_grad_norm_(1.0), torch.optim.AdamW
(lr 1e-3, weight decay 0.01). float32, eager PyTorch. Prints the best wall and the best process CPU
milliseconds per step of `steps` steps (after 3 warm-up steps) as two numbers on the last line.
"""
import argparse
import math
import time

from torch_threads import blas_threads, set_threads  # (first: it sets the threads' environment)
import torch  # noqa: E402

import torch.nn.functional as F


class Decoder(torch.nn.Module):
    def __init__(self, a):
        super().__init__()
        d, f = a.d_model, a.d_ff or 4 * a.d_model
        self.h, self.mlp = a.heads, a.mlp
        P = lambda *s: torch.nn.Parameter(torch.randn(*s) * 0.02)  # noqa: E731
        self.wte, self.wpe, self.lm_head = P(a.vocab, d), P(a.context, d), P(a.vocab, d)
        self.blocks = torch.nn.ModuleList()
        for _ in range(a.layers):
            b = torch.nn.Module()
            b.ln1, b.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            b.attn_w, b.attn_b, b.proj_w, b.proj_b = P(d, 3 * d), P(3 * d), P(d, d), P(d)
            if a.mlp == "gelu":
                b.fc_w, b.fc_b, b.mlp_w, b.mlp_b = P(d, f), P(f), P(f, d), P(d)
            self.blocks.append(b)
        self.ln_f = torch.nn.LayerNorm(d)
        self.register_buffer("mask", torch.triu(torch.ones(a.context, a.context, dtype=torch.bool), 1))

    def forward(self, ids, targets):
        B, n = ids.shape
        d = self.wte.shape[1]
        dh = d // self.h
        x = self.wte[ids] + self.wpe[:n]
        for b in self.blocks:
            q, k, v = torch.addmm(b.attn_b, b.ln1(x).view(B * n, d), b.attn_w).split(d, dim=1)
            q, k, v = (t.view(B, n, self.h, dh).transpose(1, 2) for t in (q, k, v))
            s = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
            w = torch.softmax(s.masked_fill(self.mask[:n, :n], float("-inf")), dim=-1)
            o = (w @ v).transpose(1, 2).reshape(B * n, d)
            x = x + torch.addmm(b.proj_b, o, b.proj_w).view(B, n, d)
            if self.mlp == "gelu":
                hdn = F.gelu(torch.addmm(b.fc_b, b.ln2(x).view(B * n, d), b.fc_w), approximate="tanh")
                x = x + torch.addmm(b.mlp_b, hdn, b.mlp_w).view(B, n, d)
        logits = self.ln_f(x) @ self.lm_head.T
        return F.cross_entropy(logits.view(B * n, -1), targets.view(-1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("layers", 2), ("d-model", 64), ("heads", 4), ("context", 48), ("vocab", 64),
                          ("batch", 32), ("d-ff", 0), ("threads", 1), ("steps", 30)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--mlp", choices=["none", "gelu"], default="none")
    a = ap.parse_args()
    set_threads(a.threads)
    torch.manual_seed(0)
    model = Decoder(a)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    ids = torch.randint(0, a.vocab, (a.batch, a.context))
    targets = torch.randint(0, a.vocab, (a.batch, a.context))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(ids, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for _ in range(3):
        step()
    best = best_cpu = float("inf")
    for _ in range(a.steps):
        t0, c0 = time.perf_counter(), time.process_time()
        step()
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    print("torch %s, %d threads (OpenBLAS %d), %d tokens/step" % (torch.__version__, torch.get_num_threads(), blas_threads(), a.batch * a.context))
    print("%.4f %.4f" % (best * 1e3, best_cpu * 1e3))


if __name__ == "__main__":
    main()
