"""PyTorch on exactly N threads, BLAS included.

torch.set_num_threads(N) sizes PyTorch's own OpenMP pool, but Debian's torch does its matrix products
in OpenBLAS (libopenblas0-pthread), whose pthread pool is sized separately: left alone it uses every
core, so a "1-thread" PyTorch run multiplies on both cores of this machine (its CPU time is twice its
wall time) and a same-threads comparison with attnviz is not one. This sets both.
"""
import ctypes
import os

# PyTorch's OpenMP pool (GNU libgomp) spins for a while after each parallel region by default, taking
# a core from OpenBLAS's own threads, which do the products: on 2 cores PyTorch's "2-thread" forward
# was slower than its 1-thread one (BERT-base n = 512: 882-1073 ms vs 968 ms; with passive waiting
# 640 ms). Passive waiting is PyTorch's better setting here, so the comparison takes it. It must be
# in the environment before libgomp loads: every reference script imports this module before torch.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402  (after the environment above)


def set_threads(n):
    torch.set_num_threads(n)
    try:
        blas = ctypes.CDLL("libblas.so.3")  # the BLAS torch loaded (the same handle)
        blas.openblas_set_num_threads(n)
    except (OSError, AttributeError):
        pass  # not OpenBLAS: torch.set_num_threads is all there is


def blas_threads():
    try:
        return int(ctypes.CDLL("libblas.so.3").openblas_get_num_threads())
    except (OSError, AttributeError):
        return -1
