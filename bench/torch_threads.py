"""PyTorch on exactly N threads, BLAS included.

torch.set_num_threads(N) sizes PyTorch's own OpenMP pool, but Debian's torch does its matrix products
in OpenBLAS (libopenblas0-pthread), whose pthread pool is sized separately: left alone it uses every
core, so a "1-thread" PyTorch run multiplies on both cores of this machine (its CPU time is twice its
wall time) and a same-threads comparison with attnviz is not one. This sets both.
"""
import ctypes

import torch


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
