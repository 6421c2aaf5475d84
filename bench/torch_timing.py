"""What the timed PyTorch forwards (bench/torch_{model,encoder,seq2seq}_reference.py) share: their
command line, the best-of-`repeat` timing after a warm-up, and the line that says what ran."""
import argparse
import time

from torch_threads import blas_threads, set_threads  # (first: it sets the threads' environment)
import torch  # noqa: E402


def parse_args(doc, n, layers=None):
    """--n (default n), --threads, --repeat and, given a default, --layers; sets the threads."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--n", type=int, default=n)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    if layers is not None:
        ap.add_argument("--layers", type=int, default=layers)
    args = ap.parse_args()
    set_threads(args.threads)
    return args


def best_of(run, repeat):
    """The least wall and CPU (every thread) seconds of `repeat` calls of run(), after one warm-up call;
    no autograd."""
    best = best_cpu = float("inf")
    with torch.no_grad():
        run()  # warm-up
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            run()
            best = min(best, time.perf_counter() - t0)
            best_cpu = min(best_cpu, time.process_time() - c0)
    return best, best_cpu


def describe(what):
    """'torch 1.13.1, 2 threads (OpenBLAS 2), <what>'."""
    return "torch %s, %d threads (OpenBLAS %d), %s" % (torch.__version__, torch.get_num_threads(), blas_threads(),
                                                       what)
