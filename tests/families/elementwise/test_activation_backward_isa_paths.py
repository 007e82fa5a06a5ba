"""The float32 activation gradients gelu_backward (erf and tanh forms) and silu_backward on every
ISA path (scalar / AVX2 / AVX-512, csrc/cpu/vec_activation_backward.cpp: a cheap approximation kept
behind a rounding test, the scalar formula for the lanes it cannot decide) bit for bit against the
scalar path: ~1M (grad, input) pairs from normal distributions (the inputs the lanes keep), plus
NaN payloads, infinities, zeros, subnormals, large |x|, the inputs at the lanes' range edges, piece
boundaries and windows, gradients that make subnormal, zero and overflowing results; at 1 and 2
threads. The proof over every float32 input is csrc/verify/check_activation_backward.cpp
(docs/evidence.md)."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, available_isas, cpu_isa, float32_neighbours, num_threads

import repmode

aten = torch.ops.aten

OPS = {
    "gelu_backward": lambda g, x: aten.gelu_backward.default(g, x),
    "gelu_tanh_backward": lambda g, x: aten.gelu_backward.default(g, x, approximate="tanh"),
    "silu_backward": lambda g, x: aten.silu_backward.default(g, x),
}


def _special_inputs() -> torch.Tensor:
    """Range edges (gelu: -8, 8; silu: +-64; tanh form: +-20), gelu's piece boundaries (|x| = 1..7),
    the windows around each gradient's zero, and the special values."""
    edges = [8.0, -8.0, 7.75, 64.0, -64.0, 20.0, -20.0, 37.5, -37.5, 1e-30, 2.0**-26, 2.0**-55]
    edges += [float(k) for k in range(1, 8)] + [-float(k) for k in range(1, 8)]
    roots = [-0.7517915246935645, -1.2784645427610738, -0.7524614220710163]
    edges += [r + d for r in roots for d in (0.0, 0.5, -0.5, 0.125, -0.125, 1e-6)]
    x = float32_neighbours(torch.tensor(edges, dtype=torch.float64).to(torch.float32), 2)
    specials = torch.tensor([0x7F800000, -0x800000, 0x7FC00001, 0x7F800123, -0x5FFFFFFB, 0x00000001, 0x807FFFFF,
                             0x00000000, -0x80000000, 0x7F7FFFFF, -0x00800001], dtype=torch.int64)
    specials = specials.to(torch.int32).view(torch.float32)
    return torch.cat([x, -x, specials])


def _inputs(seed: int, n: int = 1 << 20):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=gen)
    x[: n // 4] *= 4.0  # some of the tails
    patterns = torch.randint(-2**31, 2**31, (4096,), generator=gen, dtype=torch.int64).to(torch.int32)
    x = torch.cat([x, _special_inputs(), patterns.view(torch.float32)])
    g = torch.randn(x.numel(), generator=gen)
    special_g = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 3e38, -3.3e38, 2.0**-149,
                              -(2.0**-140), 1e-42], dtype=torch.float32)
    idx = torch.randint(0, x.numel(), (8192,), generator=gen)
    g[idx] = special_g.repeat(8192 // special_g.numel() + 1)[:8192]
    g[-4096:] = torch.randint(-2**31, 2**31, (4096,), generator=gen, dtype=torch.int64).to(torch.int32).view(
        torch.float32)
    return g, x


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_isa_path_gives_the_scalar_bits(name):
    g, x = _inputs(29)
    with cpu_isa("scalar"), num_threads(1), repmode.enabled():
        want = OPS[name](g, x)
    for isa in available_isas():
        for threads in (1, 2):
            with cpu_isa(isa), num_threads(threads), repmode.enabled():
                got = OPS[name](g, x)
            assert_bitwise_equal(got, want, f"{name} {isa} threads={threads}")
