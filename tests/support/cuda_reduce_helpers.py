"""Helpers of the CUDA reduction, softmax and loss tests: run a CPU kernel and its CUDA twin on
the same data and compare their outputs bit for bit."""
from __future__ import annotations

import torch

from .cuda_helpers import CPU, GPU, finish, on_gpu, stream
from .helpers import assert_bitwise_equal

DTYPES = [torch.float32, torch.float64]
CODE = {torch.float32: 0, torch.float64: 1}
NTHREADS = 4
NO_THREAD_COUNT = {"nll_loss_forward", "nll_loss_backward"}  # CPU bindings without one (single-threaded)
SENTINEL = 12345.0  # outputs start from it on both devices, so unwritten elements compare equal


def run_both(name, inputs, outputs, make_args):
    """Call CPU.<name> on CPU tensors and GPU.<name> on copies on the GPU; compare the outputs.

    make_args(inputs, outputs) gives the arguments before the thread count / stream (an output
    given as None is passed as a null pointer)."""
    g_in = [on_gpu(t) for t in inputs]
    c_out = [None if t is None else t.clone() for t in outputs]
    g_out = [None if t is None else on_gpu(t) for t in outputs]
    threads = () if name in NO_THREAD_COUNT else (NTHREADS,)
    getattr(CPU, name)(*make_args(inputs, c_out), *threads)
    getattr(GPU, name)(*make_args(g_in, g_out), stream())
    finish()
    for i, (c, g) in enumerate(zip(c_out, g_out)):
        if c is not None:
            assert_bitwise_equal(c, g.cpu(), f"{name} output {i}")


def out_like(M: int, dtype, fill=SENTINEL):
    return torch.full((M,), fill, dtype=dtype)


def ptr(t):
    return 0 if t is None else t.data_ptr()
