"""silu_backward and gelu_tanh_backward take sigmoid(y) and sigmoid(-y) from one shared evaluation
(repmode_sigmoid_pair, csrc/common/math_hyperbolic.h): their bits must be those of the formulas of
docs/semantics.md written with two separate sigmoid calls. The reference here is that formula replayed
step by step: repmode's own float64 sigmoid for each of the two calls, then torch's single IEEE
operations in float64 in the formula's order, rounded once to the input dtype."""
from __future__ import annotations

import pytest
import torch
from support import available_isas, cpu_isa, num_threads

import repmode

aten = torch.ops.aten

SQRT_2_OVER_PI = float.fromhex("0x1.9884533d43651p-1")
KAPPA, KAPPA3 = 0.044715, 0.134145


def _sigmoid64(y: torch.Tensor) -> torch.Tensor:
    with repmode.enabled():
        return aten.sigmoid.default(y)  # repmode_sigmoid (float64)


def _silu_backward_reference(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    gd, xd = g.double(), x.double()
    s, sn = _sigmoid64(xd), _sigmoid64(-xd)
    return (gd * (s * ((xd * sn) + 1.0))).to(x.dtype)


def _gelu_tanh_backward_reference(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    gd, xd = g.double(), x.double()
    x2 = xd * xd
    u = (xd + (x2 * xd) * KAPPA) * SQRT_2_OVER_PI
    s, sn = _sigmoid64(u + u), _sigmoid64(-(u + u))
    du = ((x2 * KAPPA3) + 1.0) * SQRT_2_OVER_PI
    return (gd * (s + (((xd * 2.0) * s) * sn) * du)).to(x.dtype)


def _inputs(dtype: torch.dtype, seed: int):
    gen = torch.Generator().manual_seed(seed)
    if dtype == torch.float32:
        pats = torch.randint(-2**31, 2**31, (1 << 14,), generator=gen, dtype=torch.int64).to(torch.int32)
    else:
        pats = torch.randint(-2**62, 2**62, (1 << 14,), generator=gen, dtype=torch.int64) * 2
    edges = torch.tensor([0.0, -0.0, 2.0**-55, -2.0**-55, 2.0**-56, -2.0**-56, 37.5, -37.5, 37.6, -37.6, 40.0,
                          -40.0, 41.0, -41.0, 1e-30, -1e-30, float("inf"), -float("inf"), float("nan")],
                         dtype=torch.float64).to(dtype)
    x = torch.cat([pats.view(dtype), edges, torch.linspace(-45, 45, 9001, dtype=dtype),
                   torch.randn(1 << 14, generator=gen, dtype=dtype) * 6])
    g = torch.randn(x.shape, generator=gen, dtype=dtype)
    return g, x


def _assert_same(got: torch.Tensor, want: torch.Tensor, what: str):
    nan = want.isnan()
    assert torch.equal(got.isnan(), nan), what
    as_int = {torch.float32: torch.int32, torch.float64: torch.int64}[got.dtype]
    differ = got[~nan].view(as_int) != want[~nan].view(as_int)
    assert not differ.any(), f"{what}: {int(differ.sum())} of {got.numel()} elements differ in their bits"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("op", ["silu_backward", "gelu_tanh_backward"])
def test_shared_sigmoid_pair_gives_the_two_call_formula_bits(op, dtype):
    g, x = _inputs(dtype, seed=3)
    # the reference's own additions of +1.0 are commutative single roundings: the formula's order
    want = (_silu_backward_reference if op == "silu_backward" else _gelu_tanh_backward_reference)(g, x)
    for isa in available_isas():
        for threads in (1, 2):
            with cpu_isa(isa), num_threads(threads), repmode.enabled():
                if op == "silu_backward":
                    got = aten.silu_backward.default(g, x)
                else:
                    got = aten.gelu_backward.default(g, x, approximate="tanh")
            _assert_same(got, want, f"{op} {dtype} isa={isa} threads={threads}")
