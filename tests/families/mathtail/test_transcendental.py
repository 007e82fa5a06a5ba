"""The math long tail (issue 26): atan, atan2, asin, acos, sinh, cosh, tan, log10, asinh, acosh,
atanh (csrc/common/math_atan.h, csrc/common/math_tail.h). float32 results are correctly rounded:
checked here on a fixed sample of bit patterns spread over every binade plus special values
(csrc/verify/check_math.cpp runs all 2^32 inputs; docs/math.md records the runs). float64
results are held to their documented bounds against mpmath and must not be less accurate than
native torch's. Thread count, ISA path and memory layout must not change a bit; bf16/fp16 are
the float32 result rounded once; in-place, out= and backward forms follow torch."""
from __future__ import annotations

import math

import mpmath
import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, available_isas, bits, cpu_isa
from support.cr_reference import _round_exact, reference_f32

import repmode

CANONICAL_NAN = 0x7FC00000

UNARY = {
    "atan": torch.atan, "asin": torch.asin, "acos": torch.acos, "sinh": torch.sinh, "cosh": torch.cosh,
    "tan": torch.tan, "log10": torch.log10, "asinh": torch.asinh, "acosh": torch.acosh, "atanh": torch.atanh,
}

SPECIALS = torch.tensor(
    [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x00000001,
     0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F800001,
     0x3F7FFFFF, 0xBF7FFFFF, 0x3F000000, 0x40000000, 0x39800000, 0x397FFFFF, 0x32800000, 0x42B30000,
     0x42B30001, 0x42B2FFFF, 0xC2B30000, 0x3FC90FDB, 0x4B800000, 0x41200000, 0x42C80000, 0x4E6E6B28,
     0x3E800000, 0x3E7FFFFF, 0x5A5A5A5A], dtype=torch.int64
).to(torch.int32).view(torch.float32)


def sample_inputs(stride: int = 40009) -> torch.Tensor:
    patterns = torch.arange(0, 2 ** 32, stride, dtype=torch.int64)
    return torch.cat([patterns.to(torch.int32).view(torch.float32), SPECIALS])


def assert_correctly_rounded(got, want, what):
    nan = torch.isnan(want)
    assert (bits(got[nan]) == CANONICAL_NAN).all(), f"{what}: NaN results must be the canonical NaN"
    bad = (bits(got) != bits(want)) & ~nan
    if bad.any():
        i = int(bad.nonzero()[0])
        pytest.fail(f"{what}: {int(bad.sum())} of {got.numel()} results not correctly rounded, e.g. element {i}: "
                    f"got {float(got[i])!r}, want {float(want[i])!r}")


@pytest.mark.parametrize("name", sorted(UNARY))
def test_float32_correctly_rounded_on_sample(name):
    x = sample_inputs()
    with repmode.enabled():
        got = UNARY[name](x)
    assert_correctly_rounded(got, reference_f32(name, x), name)


def atan2_sample(n: int = 40000) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(26)
    # any bit patterns, exponents within +-30, quotients near +-1, all pairs of the specials
    y1 = torch.randint(-2 ** 31, 2 ** 31, (n,), generator=g, dtype=torch.int64).to(torch.int32).view(torch.float32)
    x1 = torch.randint(-2 ** 31, 2 ** 31, (n,), generator=g, dtype=torch.int64).to(torch.int32).view(torch.float32)
    x2 = torch.randn(n, generator=g) * torch.exp2(torch.randint(-60, 60, (n,), generator=g).float())
    y2 = torch.randn(n, generator=g) * x2.abs() * torch.exp2(torch.randint(-30, 30, (n,), generator=g).float())
    x3 = torch.randn(n, generator=g)
    y3 = (x3.view(torch.int32) + torch.randint(-16, 17, (n,), generator=g, dtype=torch.int32)).view(torch.float32)
    y3 = torch.where(torch.rand(n, generator=g) < 0.5, y3, -y3)
    sy, sx = torch.meshgrid(SPECIALS, SPECIALS, indexing="ij")
    return torch.cat([y1, y2, y3, sy.flatten()]), torch.cat([x1, x2, x3, sx.flatten()])


def atan2_reference(y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """reference_f32's atan2, except for tiny quotients: there atan2(y, x) = q - q^3/3 + ... with
    q = y/x, and when q is exactly a float32 rounding boundary (a subnormal midpoint, e.g.
    y = 2^-149, x = 2) the q^3/3 below it is beyond mpmath's 200 bits; 1,200 bits decide."""
    want = reference_f32("atan2", y, x)
    r = torch.atan2(y.double(), x.double())
    tiny = (torch.isfinite(r) & (r.abs() < 2.0 ** -60) & (r != 0)).nonzero().flatten().tolist()
    with mpmath.workprec(1200):
        for i in tiny:
            want[i] = _round_exact(mpmath.atan2(mpmath.mpf(float(y[i])), mpmath.mpf(float(x[i]))))
    return want


def test_atan2_float32_correctly_rounded_on_sample():
    y, x = atan2_sample()
    with repmode.enabled():
        got = torch.atan2(y, x)
    assert_correctly_rounded(got, atan2_reference(y, x), "atan2")


def test_atan2_tiny_quotient_on_a_midpoint_rounds_toward_zero():
    """y/x exactly halfway between two subnormals: atan(q) = q - q^3/3 lies just below, so it rounds
    down (the one exact case of atan2; math_atan.h atan2f_accurate_path)."""
    tiny = 2.0 ** -149
    y = torch.tensor([tiny, 3 * tiny, -3 * tiny, 5 * tiny, 2.0 ** -126], dtype=torch.float32)
    x = torch.tensor([2.0, 2.0, 2.0, 2.0, 2.0 ** 24], dtype=torch.float32)
    want = torch.tensor([0.0, tiny, -tiny, 2 * tiny, 0.0], dtype=torch.float32)
    with repmode.enabled():
        got = torch.atan2(y, x)
    assert_bitwise_equal(got, want, "atan2 midpoints")


def test_atan_is_atan2_with_one_and_atan2_is_scale_invariant():
    """atan(x) == atan2(x, 1) and atan2(2^j y, 2^j x) == atan2(y, x) bit for bit: the identities that
    let the exhaustive atan run cover atan2's pairs (y, 2^j) (docs/math.md)."""
    x = sample_inputs(9973)
    with repmode.enabled():
        assert_bitwise_equal(torch.atan(x), torch.atan2(x, torch.ones_like(x)), "atan vs atan2(x, 1)")
        y, x2 = atan2_sample(5000)
        finite = torch.isfinite(y) & torch.isfinite(x2) & (y.abs() > 2.0 ** -100) & (x2.abs() > 2.0 ** -100) \
            & (y.abs() < 2.0 ** 100) & (x2.abs() < 2.0 ** 100)
        y, x2 = y[finite], x2[finite]
        base = torch.atan2(y, x2)
        for j in (-20, 1, 7):
            s = 2.0 ** j
            assert_bitwise_equal(torch.atan2(y * s, x2 * s), base, f"atan2 scaled by 2^{j}")


@pytest.mark.parametrize("name", sorted(UNARY))
def test_special_values_follow_torch(name):
    x = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 2.0, -2.0, 0.5, 100.0, 1e-30, -1e-30,
                      2.0 ** -149, 1e30])
    for dtype in (torch.float32, torch.float64):
        xd = x.to(dtype)
        with repmode.enabled():
            got = UNARY[name](xd)
        want = UNARY[name](xd)
        same = (bits(got) == bits(want)) | (torch.isnan(got) & torch.isnan(want)) | \
            ((got - want).abs() <= 2 * torch.finfo(dtype).eps * want.abs())
        assert same.all(), f"{name} {dtype}: {xd[~same].tolist()} -> {got[~same].tolist()} vs {want[~same].tolist()}"
        nan = torch.isnan(got)
        canon = 0x7FF8000000000000 if dtype == torch.float64 else CANONICAL_NAN
        assert (bits(got[nan]) == canon).all()


def test_atan2_special_values_follow_torch():
    v = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 3.0, -2.0 ** -149])
    y, x = (t.flatten() for t in torch.meshgrid(v, v, indexing="ij"))
    for dtype in (torch.float32, torch.float64):
        with repmode.enabled():
            got = torch.atan2(y.to(dtype), x.to(dtype))
        want = torch.atan2(y.to(dtype), x.to(dtype))
        # zeros (with their signs), infinities and NaN as native; nonzero values within one ulp of
        # native's (native float32 is off by one ulp at atan2(1, 1) and atan2(3, -2^-149))
        exact = (bits(got) == bits(want)) | (torch.isnan(got) & torch.isnan(want))
        close = (want != 0) & ((got - want).abs() <= torch.finfo(dtype).eps * want.abs())
        same = exact | close
        assert same.all(), f"atan2 {dtype}: {y[~same].tolist()}, {x[~same].tolist()} -> {got[~same].tolist()}"
        if dtype == torch.float32:
            assert_correctly_rounded(got, atan2_reference(y, x), "atan2 specials")


# float64: (bound in ulps, |x| range) per function, against mpmath
F64_DOMAIN = {
    "atan": (0.5001, None), "asin": (0.5001, "unit"), "acos": (0.5001, "unit"), "sinh": (0.5001, "exp"),
    "cosh": (0.5001, "exp"), "tan": (0.5001, None), "log10": (0.56, "pos"), "asinh": (0.56, None),
    "acosh": (0.56, "ge1"), "atanh": (0.56, "unit"),
}


def _f64_inputs(kind) -> torch.Tensor:
    g = torch.Generator().manual_seed(64)
    mag = torch.exp2(torch.rand(1500, generator=g, dtype=torch.float64) * 120 - 60)
    sign = torch.where(torch.rand(1500, generator=g) < 0.5, -1.0, 1.0).double()
    x = mag * sign
    if kind == "unit":
        x = torch.cat([x.clamp(-1, 1), 1 - torch.exp2(-torch.rand(300, generator=g, dtype=torch.float64) * 50)])
    elif kind == "exp":
        x = torch.cat([x.clamp(-700, 700), torch.rand(300, generator=g, dtype=torch.float64) * 1400 - 700])
    elif kind == "pos":
        x = torch.cat([x.abs(), 1 + (torch.rand(300, generator=g, dtype=torch.float64) - 0.5) * 1e-3])
    elif kind == "ge1":
        x = torch.cat([x.abs() + 1, 1 + torch.exp2(-torch.rand(300, generator=g, dtype=torch.float64) * 50)])
    return x


def _ulps(got: torch.Tensor, x: torch.Tensor, fn) -> torch.Tensor:
    out = []
    with mpmath.workprec(200):
        for g, v in zip(got.tolist(), x.tolist()):
            e = fn(mpmath.mpf(v))
            if isinstance(e, mpmath.mpc) or mpmath.isinf(e):
                out.append(0.0 if (math.isnan(g) if isinstance(e, mpmath.mpc) else g == float(e)) else math.inf)
                continue
            ulp = math.ulp(float(e)) if e != 0 else 5e-324
            out.append(float(abs(mpmath.mpf(g) - e) / ulp) if math.isfinite(g) else
                       (0.0 if float(e) == g else math.inf))
    return torch.tensor(out, dtype=torch.float64)


@pytest.mark.parametrize("name", sorted(F64_DOMAIN))
def test_float64_within_bound_and_not_worse_than_native(name):
    bound, kind = F64_DOMAIN[name]
    x = _f64_inputs(kind)
    with repmode.enabled():
        got = UNARY[name](x)
    mp = getattr(mpmath, name)
    ours = _ulps(got, x, mp)
    native = _ulps(UNARY[name](x), x, mp)
    assert float(ours.max()) <= bound, f"{name}: {float(ours.max())} ulps at x = {float(x[ours.argmax()])!r}"
    assert float(ours.max()) <= max(float(native.max()), 0.5001)


def test_atan2_float64_within_half_ulp():
    g = torch.Generator().manual_seed(65)
    x = torch.randn(1500, generator=g, dtype=torch.float64) * torch.exp2(torch.randint(-40, 40, (1500,), generator=g))
    y = torch.randn(1500, generator=g, dtype=torch.float64) * torch.exp2(torch.randint(-40, 40, (1500,), generator=g))
    with repmode.enabled():
        got = torch.atan2(y, x)
    with mpmath.workprec(200):
        worst = 0.0
        for gv, yv, xv in zip(got.tolist(), y.tolist(), x.tolist()):
            e = mpmath.atan2(mpmath.mpf(yv), mpmath.mpf(xv))
            worst = max(worst, float(abs(mpmath.mpf(gv) - e) / math.ulp(float(e))))
    assert worst <= 0.5001


@pytest.mark.parametrize("name", sorted(UNARY) + ["atan2"])
def test_thread_isa_and_layout_invariance(name):
    g = torch.Generator().manual_seed(7)
    a = torch.randn(300, 257, generator=g) * 3
    if name == "acosh":
        a = a.abs() + 1
    elif name in ("asin", "acos", "atanh"):
        a = torch.tanh(a)
    elif name == "log10":
        a = a.abs()
    b = torch.randn(300, 257, generator=g)
    for dtype in (torch.float32, torch.float64):
        if name == "atan2":
            assert_invariant(lambda p, q: {"out": torch.atan2(p, q)}, a.to(dtype), b.to(dtype))
        else:
            assert_invariant(lambda p: {"out": UNARY[name](p)}, a.to(dtype))


@pytest.mark.parametrize("name", sorted(UNARY) + ["atan2"])
def test_low_precision_is_float32_rounded_once_and_forms_agree(name):
    g = torch.Generator().manual_seed(8)
    a = torch.rand(1000, generator=g) * 1.8 - 0.9 if name in ("asin", "acos", "atanh") else torch.randn(1000,
                                                                                                         generator=g)
    if name == "acosh":
        a = a.abs() + 1
    b = torch.randn(1000, generator=g)
    fn = torch.atan2 if name == "atan2" else UNARY[name]
    args = (a, b) if name == "atan2" else (a,)
    with repmode.enabled():
        ref32 = fn(*args)
        for low, nan_bits in ((torch.bfloat16, 0x7FC0), (torch.float16, 0x7E00)):
            got = fn(*(t.to(low) for t in args))
            want = fn(*(t.to(low).float() for t in args)).to(low)
            nan = torch.isnan(want)
            assert_bitwise_equal(got[~nan], want[~nan], f"{name} {low}")
            assert (bits(got[nan]) == nan_bits).all(), f"{name} {low}: NaN results must be the canonical NaN"
        out = torch.empty_like(a)
        getattr(torch, name)(*args, out=out)
        assert_bitwise_equal(out, ref32, f"{name} out=")
        c = a.clone()
        getattr(c, name + "_")(*args[1:])
        assert_bitwise_equal(c, ref32, f"{name}_ in place")
        ints = fn(*(torch.arange(1, 6) for _ in args))
        assert ints.dtype == torch.get_default_dtype()


@pytest.mark.parametrize("name", sorted(UNARY) + ["atan2"])
def test_backward_matches_native_and_is_thread_invariant(name):
    g = torch.Generator().manual_seed(9)
    a = torch.rand(64, generator=g, dtype=torch.float64) * 1.6 - 0.8
    if name == "acosh":
        a = a.abs() + 1.5
    elif name == "log10":
        a = a.abs() + 0.1
    b = torch.rand(64, generator=g, dtype=torch.float64) + 0.5
    fn = torch.atan2 if name == "atan2" else UNARY[name]

    def grads(threads):
        p = a.clone().requires_grad_()
        q = b.clone().requires_grad_()
        torch.set_num_threads(threads)
        try:
            with repmode.enabled():
                out = fn(p, q) if name == "atan2" else fn(p)
                out.sum().backward()
        finally:
            torch.set_num_threads(2)
        return (p.grad, q.grad) if name == "atan2" else (p.grad,)

    g1, g2 = grads(1), grads(2)
    assert_bitwise_equal(list(g1), list(g2), f"{name} backward threads")
    p = a.clone().requires_grad_()
    q = b.clone().requires_grad_()
    (fn(p, q) if name == "atan2" else fn(p)).sum().backward()
    native = (p.grad, q.grad) if name == "atan2" else (p.grad,)
    for ours, theirs in zip(g1, native):
        torch.testing.assert_close(ours, theirs, rtol=1e-12, atol=1e-14)


def test_atan_and_atan2_simd_paths_equal_the_scalar_routine():
    """The AVX2 array versions (csrc/cpu/vec_math_atan_avx2.h) give the scalar routine's bits on
    random bit patterns (specials, subnormals, flagged lanes included), at every length and
    offset (atan runs the array path with one x = 1), in and out of place."""
    y, x = atan2_sample(20000)
    u = sample_inputs(4099)
    outs = {}
    for isa in available_isas():
        with cpu_isa(isa), repmode.enabled():
            r = [torch.atan2(y, x), torch.atan2(y, torch.tensor(-0.75)), torch.atan(u)]
            r += [torch.atan(u[k:k + 37 + k]) for k in range(9)]
            r += [torch.atan2(y[k:k + 29 + k], x[k:k + 29 + k]) for k in range(9)]
            w = y.clone()
            w.atan2_(x)
            r.append(w)
            outs[isa] = r
    for isa in outs:
        assert_bitwise_equal(outs[isa], outs["scalar"], f"isa={isa}")
