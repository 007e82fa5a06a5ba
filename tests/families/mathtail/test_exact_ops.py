"""Exact elementwise ops (docs/semantics.md "More elementwise functions"): each result is one
IEEE result per element (or torch's fixed sequence of them), so repmode must equal native torch
bit for bit — NaN excepted, which repmode writes as the one canonical pattern — on random and
adversarial inputs (zeros of both signs, infinities, NaN, subnormals, huge and tiny values), in
float32, float64, bf16/fp16 (computed in float32, rounded once, as torch does) and integers."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, bits

import repmode

CANONICAL = {torch.float32: 0x7FC00000, torch.float64: 0x7FF8000000000000, torch.bfloat16: 0x7FC0,
             torch.float16: 0x7E00}


def adversarial(dtype, n=3000, seed=0, scale=8.0):
    """Random values of several magnitudes plus the special values of ``dtype``."""
    g = torch.Generator().manual_seed(seed)
    info = torch.finfo(dtype)
    specials = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 3.0, info.max, -info.max,
                info.tiny, -info.tiny, info.tiny / 8, -info.tiny / 8, info.smallest_normal * info.eps, info.eps,
                2.0 ** 30, -(2.0 ** 30), 1e-30, 7.0, -7.0]
    body = torch.randn(n, generator=g, dtype=torch.float64) * scale
    wide = torch.randn(n // 4, generator=g, dtype=torch.float64) * 1e6
    ints = torch.randint(-20, 20, (n // 4,), generator=g).to(torch.float64)
    exps = torch.randint(-40, 40, (n // 4,), generator=g).to(torch.float64)
    pows = torch.where(torch.rand(n // 4, generator=g) < 0.5, -1.0, 1.0) * torch.exp2(exps) * (
        1 + torch.rand(n // 4, generator=g, dtype=torch.float64))
    x = torch.cat([torch.tensor(specials, dtype=torch.float64), body, wide, ints, pows]).to(dtype)
    return x


def pairs(dtype, seed=0):
    """All pairs of the special values, and random pairs."""
    x = adversarial(dtype, seed=seed)
    s = x[:25]
    a = torch.cat([s.repeat_interleave(len(s)), x, x.flip(0)])
    b = torch.cat([s.repeat(len(s)), adversarial(dtype, seed=seed + 1), x.roll(7)])
    return a, b


def assert_same_as_native(got, want, what):
    """Bitwise equal, except that every NaN of ``want`` must be the canonical NaN in ``got``."""
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if not got.is_floating_point():
        assert torch.equal(got, want), what
        return
    nan = torch.isnan(want)
    assert torch.equal(torch.isnan(got), nan), f"{what}: NaN positions differ"
    assert bool((bits(got)[nan] == CANONICAL[got.dtype]).all()), f"{what}: a NaN is not canonical"
    differ = (bits(got) != bits(want)) & ~nan
    if differ.any():
        i = int(differ.nonzero()[0])
        raise AssertionError(f"{what}: {int(differ.sum())} elements differ, first at {i}: got {got.reshape(-1)[i]}, "
                             f"native {want.reshape(-1)[i]}")


FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]

BINARY = {
    "copysign": torch.copysign,
    "fmod": torch.fmod,
    "remainder": torch.remainder,
    "floor_divide": torch.floor_divide,
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "fmax": torch.fmax,
    "fmin": torch.fmin,
    "heaviside": torch.heaviside,
    "nextafter": torch.nextafter,
}
UNARY = {
    "frac": torch.frac,
    "nan_to_num": torch.nan_to_num,
    "nan_to_num_values": lambda x: torch.nan_to_num(x, nan=1.001, posinf=3.3, neginf=-1e-3),
    "round_2": lambda x: torch.round(x, decimals=2),
    "round_-1": lambda x: torch.round(x, decimals=-1),
    "round_5": lambda x: torch.round(x, decimals=5),
    "round_0": lambda x: torch.round(x, decimals=0),
    "deg2rad": torch.deg2rad,
    "rad2deg": torch.rad2deg,
    "signbit": torch.signbit,
    "frexp_mantissa": lambda x: torch.frexp(x)[0],
    "frexp_exponent": lambda x: torch.frexp(x)[1],
}
# bf16/fp16 forms torch does not have (nextafter on CPU) are skipped by asking torch first.


# Ops whose bf16/fp16 result torch defines in the dtype itself (the replacement values of
# nan_to_num; trunc of the rounded quotient): compared with native directly. The others are
# torch's float32 sequence on the widened inputs, rounded once (repmode's definition; torch's own
# bf16 paths disagree with each other: its vectorized floor_divide rounds every step to bf16,
# its scalar path does not).
IN_DTYPE = {"nan_to_num", "nan_to_num_values", "div_trunc", "signbit", "frexp_mantissa", "frexp_exponent",
            "nextafter"}


def _exact_fmod(a, b):
    """C fmod (exact) through numpy, on float32/float64 values: native torch's vectorized fmod
    returns NaN for a subnormal divisor (fmod(1, 2^-129) is 0)."""
    wide = a.dtype if a.dtype in (torch.float32, torch.float64) else torch.float32
    with np.errstate(invalid="ignore"):
        out = torch.from_numpy(np.fmod(a.to(wide).numpy(), b.to(wide).numpy()))
    return out.to(a.dtype)


def _remainder_from(m, b):
    return torch.where((m != 0) & ((b < 0) != (m < 0)), m + b, m)


def _native(name, fn, *args):
    """The expected result: native torch's (see IN_DTYPE for bf16/fp16), exact fmod for fmod and
    remainder; None when torch refuses the inputs."""
    try:
        fn(*args)
    except (RuntimeError, NotImplementedError):
        return None
    if name in ("fmod", "remainder"):
        a, b = args
        wide = a.dtype if a.dtype in (torch.float32, torch.float64) else torch.float32
        m = _exact_fmod(a.to(wide), b.to(wide))
        out = m if name == "fmod" else _remainder_from(m, b.to(wide))
        return out.to(a.dtype)
    if args[0].dtype not in (torch.bfloat16, torch.float16) or name in IN_DTYPE:
        return fn(*args)
    out = fn(*(t.float() for t in args))
    return out.to(args[0].dtype) if out.is_floating_point() else out


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_exact_ops_equal_native(name, dtype):
    a, b = pairs(dtype)
    fn = BINARY[name]
    want = _native(name, fn, a, b)
    if want is None:
        with repmode.enabled(), pytest.raises((RuntimeError, NotImplementedError)):
            fn(a, b)
        return
    with repmode.enabled():
        got = fn(a, b)
    assert_same_as_native(got, want, f"{name} {dtype}")


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_exact_ops_equal_native(name, dtype):
    x = adversarial(dtype)
    fn = UNARY[name]
    want = _native(name, fn, x)
    if want is None:
        with repmode.enabled(), pytest.raises((RuntimeError, NotImplementedError)):
            fn(x)
        return
    with repmode.enabled():
        got = fn(x)
    assert_same_as_native(got, want, f"{name} {dtype}")


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_round_decimals_equal_native_for_every_power_of_ten(dtype):
    # 10^23 is a tie between two doubles (torch's std::pow takes the upper one); 10^39 overflows
    # float32, 10^309 float64
    x = adversarial(dtype)
    for d in (1, 7, -7, 22, -22, 23, -23, 24, 30, 39, -39, 40, 308, 309, -309):
        with repmode.enabled():
            got = torch.round(x, decimals=d)
        low = dtype in (torch.bfloat16, torch.float16)
        want = torch.round(x.float(), decimals=d).to(dtype) if low else torch.round(x, decimals=d)
        assert_same_as_native(got, want, f"round(decimals={d}) {dtype}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_python_number_operands_equal_native(dtype):
    x = adversarial(dtype)
    cases = {
        "fmod": lambda t: torch.fmod(t, 0.7), "remainder": lambda t: torch.remainder(t, -1.3),
        "floor_divide": lambda t: t // 0.1, "copysign": lambda t: torch.copysign(t, -1.0),
        "rremainder": lambda t: torch.remainder(2.5, t), "mod_op": lambda t: t % 3,
        "div_floor": lambda t: torch.div(t, 7, rounding_mode="floor"),
    }
    for name, fn in cases.items():
        with repmode.enabled():
            got = fn(x)
        want = fn(x)
        if name in ("fmod", "remainder"):  # exact fmod (native's is NaN for subnormal divisors)
            m = _exact_fmod(x, torch.full_like(x, 0.7 if name == "fmod" else -1.3))
            want = m if name == "fmod" else _remainder_from(m, torch.tensor(-1.3, dtype=dtype))
        if name == "rremainder":
            want = _remainder_from(_exact_fmod(torch.full_like(x, 2.5), x), x)
        assert_same_as_native(got, want, f"{name} {dtype}")


def test_ldexp_equals_native_on_integer_exponents():
    x = adversarial(torch.float32)
    e = torch.randint(-160, 160, x.shape, generator=torch.Generator().manual_seed(3))
    for dtype in FLOATS:
        xs = adversarial(dtype)
        with repmode.enabled():
            got = torch.ldexp(xs, e)
            floating = torch.ldexp(xs, e.to(torch.float32))  # torch's x * 2 ** e (repmode's pow, mul)
        assert_same_as_native(got, torch.ldexp(xs, e), f"ldexp {dtype}")
        with repmode.enabled():
            want = xs * torch.pow(2.0, e.to(torch.float32))
        assert_bitwise_equal(floating, want, f"ldexp floating exponent {dtype}")
    ints = torch.arange(-5, 5)
    with repmode.enabled():
        got = torch.ldexp(ints, torch.full((10,), 3))
    assert_same_as_native(got, torch.ldexp(ints, torch.full((10,), 3)), "ldexp int")


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16])
def test_integer_forms_equal_native(dtype):
    g = torch.Generator().manual_seed(1)
    a = torch.randint(-1000, 1000, (500,), generator=g).to(dtype)
    sign = torch.where(torch.rand(500, generator=g) < 0.5, -1, 1).to(dtype)
    b = torch.randint(1, 50, (500,), generator=g).to(dtype) * sign
    cases = {
        "fmod": lambda: torch.fmod(a, b), "remainder": lambda: torch.remainder(a, b), "floor_divide": lambda: a // b,
        "div_floor": lambda: torch.div(a, b, rounding_mode="floor"), "fmax": lambda: torch.fmax(a, b),
        "fmin": lambda: torch.fmin(a, b), "heaviside": lambda: torch.heaviside(a, b),
        "copysign": lambda: torch.copysign(a, b), "nan_to_num": lambda: torch.nan_to_num(a),
        "deg2rad": lambda: torch.deg2rad(a), "rad2deg": lambda: torch.rad2deg(a), "signbit": lambda: torch.signbit(a),
        "scalar_mod": lambda: a % 7,
    }
    for name, fn in cases.items():
        with repmode.enabled():
            got = fn()
        assert_same_as_native(got, fn(), f"{name} {dtype}")


def test_integer_division_by_zero_and_integer_round_raise_as_native():
    a = torch.tensor([3, 4])
    with repmode.enabled(), pytest.raises(RuntimeError):
        torch.fmod(a, torch.tensor([0, 1]))
    with repmode.enabled(), pytest.raises(NotImplementedError):
        torch.round(a, decimals=2)


def test_nan_results_are_canonical():
    nan_neg = torch.tensor([-math.nan, math.nan, 1.0])
    with repmode.enabled():
        outs = [torch.copysign(nan_neg, torch.tensor(-1.0)), torch.fmod(nan_neg, 2.0), torch.fmax(nan_neg, nan_neg),
                torch.nextafter(nan_neg, torch.tensor(0.0)), torch.frac(torch.tensor([math.inf, -math.inf]))]
    for out in outs:
        nan = torch.isnan(out)
        assert nan.any() and bool((bits(out)[nan] == CANONICAL[torch.float32]).all())


def test_fmax_fmin_keep_the_first_of_equal_zeros_like_native():
    a, b = torch.tensor([-0.0, 0.0, math.nan]), torch.tensor([0.0, -0.0, -0.0])
    with repmode.enabled():
        got = torch.fmax(a, b), torch.fmin(a, b)
    assert_bitwise_equal(got[0], torch.tensor([-0.0, 0.0, -0.0]))
    assert_bitwise_equal(got[1], torch.tensor([-0.0, 0.0, -0.0]))


def test_frexp_recombines_exactly_and_handles_subnormals():
    x = adversarial(torch.float64)
    finite = torch.isfinite(x) & (x != 0)
    with repmode.enabled():
        m, e = torch.frexp(x)
    assert e.dtype == torch.int32
    assert bool(((m[finite].abs() >= 0.5) & (m[finite].abs() < 1)).all())
    assert torch.equal(torch.ldexp(m[finite], e[finite]), x[finite])
    sub = torch.tensor([5e-324, -2.5e-320], dtype=torch.float64)
    with repmode.enabled():
        ms, es = torch.frexp(sub)
    assert list(zip(ms.tolist(), es.tolist())) == [math.frexp(v) for v in sub.tolist()]


def test_inplace_and_out_forms_equal_functional():
    a, b = pairs(torch.float32)
    with repmode.enabled():
        for name in ("copysign", "fmod", "remainder", "floor_divide", "heaviside", "nextafter", "hypot",
                     "logaddexp", "fmax", "fmin"):
            fn = getattr(torch, name)
            want = fn(a, b)
            out = torch.empty(0)
            fn(a, b, out=out)
            assert_bitwise_equal(out, want, f"{name} out=")
            if hasattr(torch.Tensor, name + "_"):
                c = a.clone()
                getattr(c, name + "_")(b)
                assert_bitwise_equal(c, want, f"{name}_")
        for name, fn in (("frac", torch.frac), ("sinc", torch.sinc), ("deg2rad", torch.deg2rad),
                         ("nan_to_num", torch.nan_to_num), ("logit", torch.logit)):
            want = fn(a)
            c = a.clone()
            getattr(c, name + "_")()
            assert_bitwise_equal(c, want, f"{name}_")
            out = torch.empty(0)
            fn(a, out=out)
            assert_bitwise_equal(out, want, f"{name} out=")
        want = torch.round(a, decimals=3)
        c = a.clone()
        c.round_(decimals=3)
        assert_bitwise_equal(c, want, "round_(decimals)")
        m, e = torch.empty(0), torch.empty(0, dtype=torch.int32)
        torch.frexp(a, out=(m, e))
        assert_bitwise_equal(m, torch.frexp(a)[0])
        d = a.clone()
        d.div_(b, rounding_mode="floor")
        assert_bitwise_equal(d, torch.floor_divide(a, b))


EXACT_2D = {
    "copysign": lambda a, b: {"y": torch.copysign(a, b)},
    "fmod": lambda a, b: {"y": torch.fmod(a, b), "r": torch.remainder(a, b), "q": a // b},
    "fmax": lambda a, b: {"y": torch.fmax(a, b), "z": torch.fmin(a, b), "h": torch.heaviside(a, b)},
    "nextafter": lambda a, b: {"y": torch.nextafter(a, b), "f": torch.frac(a), "n": torch.nan_to_num(a)},
    "round": lambda a, b: {"y": torch.round(a, decimals=3), "m": torch.frexp(a)[0], "e": torch.frexp(a)[1]},
}


@pytest.mark.parametrize("name", sorted(EXACT_2D))
def test_thread_isa_and_layout_invariance(name):
    # (no NaN: support.layouts checks its copies with torch.equal)
    a = adversarial(torch.float32, n=40000).nan_to_num(1.0)[:40000].reshape(-1, 200)
    b = adversarial(torch.float32, n=40000, seed=9).nan_to_num(-3.0)[:a.numel()].reshape(a.shape)
    assert_invariant(EXACT_2D[name], a, b)
