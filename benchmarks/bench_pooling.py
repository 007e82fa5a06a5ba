"""Pooling benchmark: native torch vs repmode at 2 threads (forward + backward of the module).
Run: PYTHONPATH=. python benchmarks/bench_pooling.py"""
from __future__ import annotations

import torch
from timing import compare

CASES = [
    ("MaxPool2d(2)", lambda: torch.nn.MaxPool2d(2), (64, 16, 8, 8)),
    ("MaxPool2d(2)", lambda: torch.nn.MaxPool2d(2), (32, 64, 56, 56)),
    ("AdaptiveAvgPool2d(1)", lambda: torch.nn.AdaptiveAvgPool2d(1), (64, 32, 4, 4)),
    ("AdaptiveAvgPool2d(1)", lambda: torch.nn.AdaptiveAvgPool2d(1), (32, 64, 28, 28)),
    ("AvgPool2d(2)", lambda: torch.nn.AvgPool2d(2), (32, 64, 56, 56)),
    ("AdaptiveAvgPool2d(3)", lambda: torch.nn.AdaptiveAvgPool2d(3), (32, 64, 28, 28)),
]






def step(module, x, g):
    def run():
        x.grad = None
        module(x).backward(g)
    return run


def main(channels_last: bool = False) -> list[tuple[str, float, float]]:
    torch.set_num_threads(2)
    torch.manual_seed(0)
    rows = []
    for name, make, shape in CASES:
        x = torch.randn(shape)
        if channels_last:
            x = x.to(memory_format=torch.channels_last)
        x.requires_grad_()
        m = make()
        g = torch.randn_like(m(x))
        numel = x.numel()
        inner = max(1, min(200, 2_000_000 // numel))
        native, rep = compare(step(m, x, g), 3, inner, rounds=3)
        rows.append((f"{name} fwd+bwd {tuple(shape)}{' channels_last' if channels_last else ''}", native, rep))
    return rows


if __name__ == "__main__":
    for cl in (False, True):
        for name, native, rep in main(cl):
            print(f"{name:60s} native {native * 1e3:8.3f} ms  repmode {rep * 1e3:8.3f} ms  ratio {rep / native:5.2f}")
