"""Batch norm / group norm, forward + backward: native torch vs repmode at 2 threads.

    PYTHONPATH=. python benchmarks/bench_batch_norm.py

Each case is one training-mode forward and backward of the module (input, weight and bias
gradients); native and repmode runs alternate and the best of several repeats is kept.
"""
from __future__ import annotations

import torch
import torch.nn as nn
from timing import compare


def step(module, x, g):
    def fn():
        y = module(x)
        torch.autograd.backward(y, g)
    return fn


def forward_only(module, x):
    def fn():
        with torch.no_grad():
            module(x)
    return fn


CASES = [
    ("BatchNorm2d (64, 16, 8, 8)", lambda: nn.BatchNorm2d(16), (64, 16, 8, 8), 200),
    ("BatchNorm2d (64, 32, 4, 4)", lambda: nn.BatchNorm2d(32), (64, 32, 4, 4), 200),
    ("BatchNorm2d (32, 64, 56, 56)", lambda: nn.BatchNorm2d(64), (32, 64, 56, 56), 5),
    ("BatchNorm2d (32, 64, 56, 56) channels_last", lambda: nn.BatchNorm2d(64), (32, 64, 56, 56), 5),
    ("GroupNorm(8) (32, 64, 56, 56)", lambda: nn.GroupNorm(8, 64), (32, 64, 56, 56), 5),
    ("GroupNorm(4) (64, 16, 8, 8)", lambda: nn.GroupNorm(4, 16), (64, 16, 8, 8), 200),
]


def main():
    torch.set_num_threads(2)
    torch.manual_seed(0)
    print(f"{'case':48} {'native':>10} {'repmode':>10} {'ratio':>6}")
    for name, make, shape, inner in CASES:
        m = make()
        x = torch.randn(shape)
        if "channels_last" in name:
            x = x.to(memory_format=torch.channels_last)
        x.requires_grad_()
        g = torch.randn(shape)
        for label, fn in (("fwd+bwd", step(m, x, g)), ("fwd no_grad", forward_only(m, x))):
            native, rep = compare(fn, 5, inner, rounds=3)
            print(f"{name + ' ' + label:48} {native * 1e6:9.1f}µs {rep * 1e6:9.1f}µs {rep / native:6.2f}")


if __name__ == "__main__":
    main()
