"""repmode's float32 math routines through the torch ops, against correctly rounded references:
a fixed sample of 2^32 / 4093 (> 10^6) bit patterns spread over every binade, plus special
values. (csrc/verify/check_math.cpp runs all 2^32 inputs; docs/math.md records that run.)"""
from __future__ import annotations

import math

import pytest
import torch
from support import assert_bitwise_equal, bits, cpu_isa, num_threads
from support.cr_reference import reference_f32

import repmode

CANONICAL_NAN = 0x7FC00000

SPECIALS = torch.tensor(
    [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC01234, 0x7F800001,
     0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF,
     0x3F800000, 0xBF800000, 0x3F000000, 0x40000000, 0x33800000, 0xB3800000, 0x39800000, 0x42B17218,
     0xC2CFF1B5, 0xC2CE8ED0, 0x41200000, 0x4120CCCD, 0x49742400, 0x5A5A5A5A], dtype=torch.int64
).to(torch.int32).view(torch.float32)


def sample_inputs() -> torch.Tensor:
    patterns = torch.arange(0, 2 ** 32, 4093, dtype=torch.int64)
    return torch.cat([patterns.to(torch.int32).view(torch.float32), SPECIALS])


UNARY = {
    "exp": torch.exp, "log": torch.log, "exp2": torch.exp2, "expm1": torch.expm1, "log2": torch.log2,
    "log1p": torch.log1p, "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "erf": torch.erf, "erfc": torch.erfc, "rsqrt": torch.rsqrt, "sqrt": torch.sqrt,
    "reciprocal": torch.reciprocal,
}


def assert_correctly_rounded(got: torch.Tensor, want: torch.Tensor, x: torch.Tensor, name: str):
    nan = torch.isnan(want)
    assert (bits(got[nan]) == CANONICAL_NAN).all(), f"{name}: NaN results must be the canonical NaN"
    bad = (bits(got) != bits(want)) & ~nan
    if bad.any():
        i = int(bad.nonzero()[0])
        pytest.fail(f"{name}: {int(bad.sum())} of {x.numel()} results not correctly rounded, e.g. "
                    f"x = {float(x[i])!r} ({int(bits(x)[i]) & 0xFFFFFFFF:#010x}): got {float(got[i])!r}, "
                    f"want {float(want[i])!r}")


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_correctly_rounded_on_sample(name):
    x = sample_inputs()
    with repmode.enabled():
        got = UNARY[name](x)
    assert_correctly_rounded(got, reference_f32(name, x), x, name)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_simd_and_strided_paths_match_scalar(name):
    """The contiguous (SIMD) path, the strided path, every ISA and thread count give the same bits."""
    x = sample_inputs()[: 300007]
    with num_threads(1), cpu_isa("scalar"), repmode.enabled():
        want = UNARY[name](x)
    with num_threads(3), repmode.enabled():
        assert_bitwise_equal(UNARY[name](x), want, f"{name} threads=3")
        strided = torch.empty(x.numel() * 2)[::2]
        strided.copy_(x)
        assert_bitwise_equal(UNARY[name](strided), want, f"{name} strided")


def pow_sample() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(7)
    xs, ys = [], []
    base = sample_inputs()[::4]
    for y in (2.0, 3.0, 0.5, -1.0, -2.0, 1.5, -0.5, 10.0, 0.0, 1.0):
        xs.append(base)
        ys.append(torch.full_like(base, y))
    n = 400000
    xs.append(torch.exp(torch.randn(n, generator=g, dtype=torch.float64) * 20).float())
    ys.append((torch.randn(n, generator=g) * 4).float())
    xs.append(torch.randn(n, generator=g).float())
    ys.append(torch.randint(-40, 40, (n,), generator=g).float())
    # Odd integers below 2^13 squared: exact midpoints between two float32 values (ties to even).
    odd = torch.arange(4097, 8192, 2, dtype=torch.float32)
    xs.append(odd)
    ys.append(torch.full_like(odd, 2.0))
    return torch.cat(xs), torch.cat(ys)


def test_pow_correctly_rounded_on_sample():
    x, y = pow_sample()
    with repmode.enabled():
        got = torch.pow(x, y)
    assert_correctly_rounded(got, reference_f32("pow", x, y), x, "pow")


def test_integer_powers_equal_products():
    """x ** 2 is x * x (both correctly rounded), and x ** 0.5 is sqrt(x), on every device."""
    x = sample_inputs()
    with repmode.enabled():
        # A Python exponent 2 runs as x * x; a tensor exponent runs the pow routine: same bits.
        assert_bitwise_equal(x ** 2, torch.pow(x, torch.full_like(x, 2.0)), "x**2")
        assert_bitwise_equal(x.square(), x * x, "square")
        for low in (torch.bfloat16, torch.float16):
            xl = x.to(low)
            assert_bitwise_equal(xl ** 2, torch.pow(xl, torch.full_like(xl, 2.0)), f"x**2 {low}")
        assert_bitwise_equal(x.abs() ** 0.5, torch.sqrt(x.abs()), "x**0.5")
        assert_bitwise_equal(x ** -1, torch.reciprocal(x), "x**-1")


def test_pow_special_cases():
    nan, inf = math.nan, math.inf
    cases = [  # (x, y, expected) as C99 / IEEE-754 pow
        (nan, 0.0, 1.0), (1.0, nan, 1.0), (-1.0, inf, 1.0), (-1.0, -inf, 1.0), (-2.0, 3.0, -8.0),
        (-2.0, 0.5, nan), (0.0, -1.0, inf), (-0.0, -1.0, -inf), (-0.0, 3.0, -0.0), (-0.0, 2.0, 0.0),
        (0.0, -2.0, inf), (inf, -1.0, 0.0), (-inf, 3.0, -inf), (-inf, -3.0, -0.0), (0.5, inf, 0.0),
        (2.0, -inf, 0.0), (2.0, 128.0, inf), (2.0, -150.0, 0.0), (2.0, -149.0, 2.0 ** -149),
    ]
    x = torch.tensor([c[0] for c in cases])
    y = torch.tensor([c[1] for c in cases])
    want = torch.tensor([c[2] for c in cases])
    with repmode.enabled():
        got = torch.pow(x, y)
    assert_correctly_rounded(got, want, x, "pow specials")


def test_float64_versions_are_accurate():
    """float64: reproducible fixed sequences, not always correctly rounded; a few ulps at most."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(20000, generator=g, dtype=torch.float64) * 4
    for name, fn in UNARY.items():
        arg = x.abs() + 1e-3 if name in ("log", "log2", "rsqrt", "sqrt") else x.abs() if name == "log1p" else x
        with repmode.enabled():
            got = fn(arg)
        want = fn(arg)  # torch's own float64, within about 1 ulp itself
        ulps = ((got - want).abs() / torch.finfo(torch.float64).eps / want.abs().clamp(min=1e-300)).max()
        assert ulps < 4, f"{name}: {float(ulps)} ulps from torch's float64"
