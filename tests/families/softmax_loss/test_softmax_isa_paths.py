"""softmax, log_softmax, logsumexp and the canonical sums (rows and columns) and layer_norm on
every ISA path (AVX-512: 16-lane exp and row max, the sum's 32 lanes in two zmm registers), bit for
bit against the scalar path: row lengths at and around 8, 16, 32 and 256 (the chunk), rows of
NaN, +-inf, subnormals and -0, at 1 and 2 threads."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal, available_isas, cpu_isa, num_threads

import repmode

LENGTHS = [1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 255, 256, 257, 1000, 4133]


def _rows(n: int, dtype, rng) -> torch.Tensor:
    x = torch.randn(9, n, generator=rng, dtype=dtype) * 8
    x[1, n // 2] = float("nan")
    x[2] = float("-inf")
    x[3, n - 1] = float("inf")
    x[4] = torch.finfo(dtype).tiny / 4 * torch.sign(x[4])
    x[5] = -0.0
    x[6, : (n + 1) // 2] = float("-inf")
    x[7] *= 40  # exp's overflow/underflow ranges after the shift
    return x


def _all(x: torch.Tensor) -> dict:
    w = torch.linspace(-2, 2, x.shape[1], dtype=x.dtype)
    return {"softmax": torch.softmax(x, -1), "log_softmax": torch.log_softmax(x, -1),
            "logsumexp": torch.logsumexp(x, -1), "sum_rows": x.sum(-1), "sum_cols": x.sum(0),
            "mean_rows": x.mean(-1), "layer_norm": F.layer_norm(x, (x.shape[1],), w, w.flip(0)),
            "softmax_dim0": torch.softmax(x, 0)}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n", LENGTHS)
def test_every_isa_equals_scalar(rng, dtype, n):
    x = _rows(n, dtype, rng)
    results = {}
    for isa in available_isas():
        for threads in (1, 2):
            with cpu_isa(isa), num_threads(threads), repmode.enabled():
                results[isa, threads] = _all(x)
    want = results["scalar", 1]
    for key, got in results.items():
        for name in want:
            assert_bitwise_equal(got[name], want[name], f"{name} n={n} isa={key[0]} threads={key[1]}")


def test_long_rows_and_backward(rng):
    x = (torch.randn(64, 3000, generator=rng) * 5).requires_grad_()
    g = torch.randn(64, 3000, generator=rng)
    results = {}
    for isa in available_isas():
        with cpu_isa(isa), num_threads(2), repmode.enabled():
            y = F.log_softmax(x, -1)
            s = torch.softmax(x, -1)
            gx = torch.autograd.grad((y * g).sum() + (s * g).sum(), x)[0]
            results[isa] = (y.detach(), s.detach(), gx)
    for isa, got in results.items():
        assert_bitwise_equal(got, results["scalar"], f"isa={isa}")
