#!/usr/bin/python3
"""Times the same multi-head attention forward as attnviz's trace, in PyTorch, for comparison.

Manual tool, not part of the test suite. Needs python3-torch (Debian's 1.13), so run it with the
system interpreter:

    /usr/bin/python3 bench/torch_reference.py            # all four shapes, 1 and 2 threads
    /usr/bin/python3 bench/torch_reference.py --repeat 50

For each (n, d_model, h): X·[W_Q|W_K|W_V] (one fused product for all heads, as fast as PyTorch
gets), per head S = QKᵀ/√d_k, causal mask (−∞ above the diagonal), softmax, A·V, concat, ·W_O, + X.
float32, no autograd. attnviz's trace does the same products plus everything it records for the
learner (embedding lookup, positional table, mask, per-row entropy, stage metadata), so the
comparison favours PyTorch slightly. Reports the best of N runs (the least disturbed by other
processes) in milliseconds.
"""
import argparse
import math
import time

from torch_threads import set_threads  # (first: it sets the threads' environment)
import torch  # noqa: E402


SHAPES = [(16, 64, 4), (128, 256, 8), (512, 512, 8), (1024, 768, 12)]


def forward(X, W_QKV, W_O, mask, h):
    n, d = X.shape
    d_k = d // h
    QKV = X @ W_QKV  # n x 3d
    Q, K, V = QKV.split(d, dim=1)  # n x d each
    Q = Q.view(n, h, d_k).transpose(0, 1)  # h x n x d_k
    K = K.view(n, h, d_k).transpose(0, 1)  # h x n x d_k
    V = V.view(n, h, d_k).transpose(0, 1)  # h x n x d_v
    S = (Q @ K.transpose(1, 2)) / math.sqrt(d_k)  # h x n x n
    S = S.masked_fill(mask, float("-inf"))
    A = torch.softmax(S, dim=-1)  # h x n x n
    heads = A @ V  # h x n x d_v
    concat = heads.transpose(0, 1).reshape(n, d)  # n x (h·d_v)
    return X + concat @ W_O  # n x d_model


def time_shape(n, d, h, repeat):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, d, generator=g)
    W_QKV = torch.randn(d, 3 * d, generator=g) / math.sqrt(d)
    W_O = torch.randn(d, d, generator=g) / math.sqrt(d)
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)  # True = hidden
    best = float("inf")
    with torch.no_grad():
        for _ in range(3):  # warm-up: allocator, thread pool
            forward(X, W_QKV, W_O, mask, h)
        for _ in range(repeat):
            t0 = time.perf_counter()
            forward(X, W_QKV, W_O, mask, h)
            best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30, help="timed runs per cell (best is kept)")
    args = ap.parse_args()
    print(f"torch {torch.__version__}, best of {args.repeat}, times in ms")
    print(f"{'(n, d_model, h)':<18} {'1 thread':>10} {'2 threads':>10}")
    for n, d, h in SHAPES:
        cells = []
        for threads in (1, 2):
            set_threads(threads)
            cells.append(time_shape(n, d, h, args.repeat))
        print(f"{str((n, d, h)):<18} {cells[0]:>10.3f} {cells[1]:>10.3f}")


if __name__ == "__main__":
    main()
