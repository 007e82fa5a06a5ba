"""Mobile activations, small layers and margin losses (issue 25 items 4 and 6): native torch vs
repmode at 2 threads, forward + backward. Run: PYTHONPATH=. python benchmarks/bench_layers.py"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from timing import compare

SHAPE = (32, 64, 28, 28)  # a MobileNetV3 feature map


def _activation(f):
    x = torch.randn(SHAPE, requires_grad=True)
    g = torch.randn_like(f(x))

    def run():
        x.grad = None
        f(x).backward(g)
    return run


def _layer(f, *shapes):
    xs = [torch.randn(s, requires_grad=True) for s in shapes]
    g = torch.randn_like(f(*xs))

    def run():
        for x in xs:
            x.grad = None
        f(*xs).backward(g)
    return run


def _loss(f, x_shape, make_target):
    x = torch.randn(x_shape, requires_grad=True)
    t = make_target()

    def run():
        x.grad = None
        f(x, t).backward()
    return run


CASES = [
    ("hardswish", lambda: _activation(F.hardswish)),
    ("hardsigmoid", lambda: _activation(F.hardsigmoid)),
    ("softshrink", lambda: _activation(F.softshrink)),
    ("glu (dim 1)", lambda: _activation(lambda x: F.glu(x, 1))),
    ("logsigmoid", lambda: _activation(F.logsigmoid)),
    ("prelu (64 channels)", lambda: _layer(F.prelu, SHAPE, (64,))),
    ("cdist p=2 (1024, 64) x (1024, 64)", lambda: _layer(torch.cdist, (1024, 64), (1024, 64))),
    ("weight_norm (256, 256, 3, 3)", lambda: _layer(lambda v, g: torch._weight_norm(v, g, 0), (256, 256, 3, 3),
                                                    (256, 1, 1, 1))),
    ("bilinear (512, 128) x (512, 128) -> 64", lambda: _layer(F.bilinear, (512, 128), (512, 128), (64, 128, 128))),
    ("multi_margin_loss (1024, 100)", lambda: _loss(F.multi_margin_loss, (1024, 100),
                                                    lambda: torch.randint(0, 100, (1024,)))),
    ("soft_margin_loss (1024, 100)", lambda: _loss(F.soft_margin_loss, (1024, 100),
                                                   lambda: torch.randn(1024, 100).sign())),
]


def main() -> list[tuple[str, float, float]]:
    torch.set_num_threads(2)
    torch.manual_seed(0)
    rows = []
    for name, make in CASES:
        native, rep = compare(make(), 2, 3, rounds=3)
        rows.append((f"{name} fwd+bwd", native, rep))
    return rows


if __name__ == "__main__":
    for name, native, rep in main():
        print(f"{name:48s} native {native * 1e3:8.3f} ms  repmode {rep * 1e3:8.3f} ms  ratio {rep / native:5.2f}")
