"""Convolution throughput, native torch vs repmode, at 2 threads (alternating runs, best of several).

    PYTHONPATH=. python benchmarks/bench_convolution.py [--quick]

Cases: the issue's (32, 64, 56, 56) x (64, 64, 3, 3), stride 1, padding 1, float32 — forward
(aten.convolution) and backward (aten.convolution_backward, grad input + grad weight + grad bias)
— and a small CNN training step on 8x8 images (batch 64) to see the per-call overhead."""
from __future__ import annotations

import sys

import torch
import torch.nn as nn
from timing import compare

aten = torch.ops.aten






def conv_cases(quick: bool):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 64, 56, 56, generator=g)
    w = torch.randn(64, 64, 3, 3, generator=g) * 0.05
    b = torch.randn(64, generator=g)
    gy = torch.randn(32, 64, 56, 56, generator=g)
    flops = 2 * 32 * 64 * 56 * 56 * 64 * 9
    reps = 2 if quick else 4
    fwd = lambda: aten.convolution(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)  # noqa: E731
    bwd = lambda: aten.convolution_backward(gy, x, w, [64], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,  # noqa: E731
                                            [True, True, True])
    rows = []
    n, r = compare(fwd, reps, rounds=3)
    rows.append(("conv2d forward (32,64,56,56)x(64,64,3,3)", flops / n / 1e9, flops / r / 1e9, n / r))
    n, r = compare(bwd, reps, rounds=3)
    rows.append(("conv2d backward (grad input+weight+bias)", 2 * flops / n / 1e9, 2 * flops / r / 1e9, n / r))
    return rows


def small_cnn_case(quick: bool):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                          nn.Flatten(), nn.Linear(32 * 8 * 8, 10))
    x = torch.randn(64, 1, 8, 8)
    t = torch.randint(0, 10, (64,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), t).backward()
        opt.step()

    n, r = compare(step, 3 if quick else 5, inner=10, rounds=3)
    return [("small CNN train step (8x8, batch 64)", n * 1e3, r * 1e3, n / r)]


def main():
    quick = "--quick" in sys.argv
    torch.set_num_threads(2)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    for name, nat, rep, ratio in conv_cases(quick):
        print(f"{name:48s} native {nat:7.1f} GFLOP/s  repmode {rep:7.1f} GFLOP/s  ratio {ratio:.2f}x throughput")
    for name, nat, rep, ratio in small_cnn_case(quick):
        print(f"{name:48s} native {nat:7.3f} ms       repmode {rep:7.3f} ms       ratio {ratio:.2f}x throughput")


if __name__ == "__main__":
    main()
