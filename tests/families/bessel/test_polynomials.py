"""Orthogonal polynomials (special.chebyshev_polynomial_t/u/v/w, shifted_chebyshev_polynomial_t/u/v/w,
hermite_polynomial_h/he, laguerre_polynomial_l, legendre_polynomial_p; csrc/common/math_bessel.h).

repmode runs torch's recurrences step for step in the input's type, so wherever torch uses the
recurrence (and for every special case: n < 0, |x| == 1, NaN or infinite n, Hermite's degree
limit) the bits are native torch's. Where torch switches to cos(n acos x)-type forms (|x| < 1 and
n above 4, 6 or 8) repmode evaluates them in double with its own acos/cos/sin and rounds once:
never less accurate than native (float32: far more), checked against mpmath."""
from __future__ import annotations

import math

import mpmath
import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, bits, num_threads

import repmode

S = torch.special
NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
         "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
         "legendre_polynomial_p"]
# the degree above which torch uses the trigonometric form for |y| < 1 (y = x, or 2x - 1 when shifted)
TRIG_ABOVE = {"chebyshev_polynomial_t": 6, "chebyshev_polynomial_u": 8, "chebyshev_polynomial_v": 8,
              "chebyshev_polynomial_w": 8, "shifted_chebyshev_polynomial_t": 6, "shifted_chebyshev_polynomial_u": 6,
              "shifted_chebyshev_polynomial_v": 6, "shifted_chebyshev_polynomial_w": 4}
CANONICAL_NAN = {torch.float32: 0x7FC00000, torch.float64: 0x7FF8000000000000}


def _run(fn, *args, **kwargs):
    with repmode.enabled():
        return fn(*args, **kwargs)


def _same(got, want, what, x=None, n=None):
    """Bit for bit, except that every NaN repmode writes is the canonical one (torch's NaN payloads
    differ), and that a NaN x with n >= 2 gives NaN: there torch's loop never runs and most of its
    kernels return an uninitialized variable (garbage that changes from call to call)."""
    if x is not None:
        undefined = torch.isnan(x) & (n >= 2) & (n < 2.0 ** 63)
        assert torch.isnan(got[undefined]).all(), f"{what}: NaN x must give NaN"
        got, want = got[~undefined], want[~undefined]
    nan = torch.isnan(want)
    assert (torch.isnan(got) == nan).all(), f"{what}: NaN positions differ"
    assert (bits(got[nan]) == CANONICAL_NAN[got.dtype]).all()
    assert_bitwise_equal(got[~nan], want[~nan], what)


def recurrence_inputs(name, dtype, seed=26):
    """(x, n) pairs on which torch uses its recurrence or a special case: any n where |y| >= 1, small n
    inside; plus |x| == 1, x == 0 / 1 for the shifted forms, NaN x, negative, fractional, NaN and
    infinite n."""
    g = torch.Generator().manual_seed(seed)
    shifted = name.startswith("shifted")
    limit = TRIG_ABOVE.get(name, 60)
    inside = torch.rand(600, generator=g, dtype=torch.float64) * 2 - 1
    n_inside = torch.randint(-2, limit + 1, (600,), generator=g).double()
    outside = (torch.rand(300, generator=g, dtype=torch.float64) * 3 + 1) * torch.where(
        torch.rand(300, generator=g) < 0.5, -1.0, 1.0).double()
    n_outside = torch.randint(0, 40, (300,), generator=g).double()
    y = torch.cat([inside, outside])
    n = torch.cat([n_inside, n_outside])
    x = (y + 1) / 2 if shifted else y
    sx = torch.tensor([1.0, -1.0, 0.0, -0.0, 0.5, math.nan, 2.0, -3.0, 1e-30])
    sn = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, 7.0, 9.0, 12.0, -1.0, -0.5, 2.7, math.nan, math.inf, -math.inf, 1e20])
    gx, gn = torch.meshgrid(sx, sn, indexing="ij")
    return torch.cat([x, gx.flatten().double()]).to(dtype), torch.cat([n, gn.flatten().double()]).to(dtype)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_recurrence_and_special_cases_are_native_bits(name, dtype):
    fn = getattr(S, name)
    x, n = recurrence_inputs(name, dtype)
    if name in TRIG_ABOVE:  # keep out of the trigonometric branch (checked for accuracy below)
        y = 2 * x - 1 if name.startswith("shifted") else x
        trig = (n > TRIG_ABOVE[name]) & (y.abs() < 1) & (n < 2.0 ** 63)
        x, n = x[~trig], n[~trig]
    _same(_run(fn, x, n), fn(x, n), f"{name} {dtype}", x, n)


@pytest.mark.parametrize("name", ["hermite_polynomial_h", "hermite_polynomial_he"])
def test_hermite_degree_limit_and_large_arguments(name):
    fn = getattr(S, name)
    for dtype, limit in ((torch.float32, 128), (torch.float64, 512)):
        x = torch.tensor([0.3, -2.5, 7.0, 40.0], dtype=dtype).repeat_interleave(4)
        n = torch.tensor([limit - 1, limit, limit + 1, 2 * limit], dtype=dtype).repeat(4)
        _same(_run(fn, x, n), fn(x, n), f"{name} {dtype} around degree {limit}")


def test_number_operands_and_integer_tensors():
    x = torch.linspace(-1.5, 1.5, 31)
    n = torch.arange(0, 31) % 5  # (degrees below every trigonometric branch)
    for name in NAMES:
        fn = getattr(S, name)
        _same(_run(fn, x, 3), fn(x, 3), f"{name}(x, 3)")
        _same(_run(fn, x, 2.9), fn(x, 2.9), f"{name}(x, 2.9)")
        _same(_run(fn, 0.25, n), fn(0.25, n), f"{name}(0.25, n)")
        got = _run(fn, torch.arange(-2, 3), torch.arange(0, 5))
        assert got.dtype == torch.float32
        _same(got, fn(torch.arange(-2, 3), torch.arange(0, 5)), f"{name} integers")
        _same(_run(fn, x.double(), n), fn(x.double(), n), f"{name} float64 x, int n")


def _abs_ulps(got, exact, dtype):
    """|got - exact| in ulps of max(|exact|, 1) in dtype."""
    scale = max(abs(float(exact)), 1.0)
    ulp = 2.0 ** (math.frexp(scale)[1] - (24 if dtype == torch.float32 else 53))
    return float(abs(mpmath.mpf(got) - exact) / ulp) if math.isfinite(got) else math.inf


def _exact(name, n, x):
    y = 2 * x - 1 if name.startswith("shifted") else x
    kind = name[-1]
    first = {"t": y, "u": 2 * y, "v": 2 * y - 1, "w": 2 * y + 1}[kind]
    if n == 0:
        return mpmath.mpf(1)
    p, q = mpmath.mpf(1), first
    for _ in range(1, n):
        p, q = q, 2 * y * q - p
    return q


@pytest.mark.parametrize("name", sorted(TRIG_ABOVE))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_trigonometric_branch_not_less_accurate_than_native(name, dtype):
    """Against the exact polynomial (mpmath, 300 bits): the error, measured in ulps of max(|P|, 1)
    (the absolute scale of these forms: near a root the relative error of any cos(n acos x) form is
    unbounded), is at most native's."""
    fn = getattr(S, name)
    g = torch.Generator().manual_seed(7)
    y = torch.cat([torch.rand(300, generator=g, dtype=torch.float64) * 2 - 1,
                   1 - torch.rand(30, generator=g, dtype=torch.float64) * 1e-6,
                   -1 + torch.rand(30, generator=g, dtype=torch.float64) * 1e-6])
    x = ((y + 1) / 2 if name.startswith("shifted") else y).to(dtype)
    n = torch.randint(TRIG_ABOVE[name] + 1, 200, x.shape, generator=g).to(dtype)
    got, native = _run(fn, x, n), fn(x, n)
    ours = theirs = 0.0
    with mpmath.workprec(300):
        for xv, nv, a, b in zip(x.tolist(), n.tolist(), got.tolist(), native.tolist()):
            e = _exact(name, int(nv), mpmath.mpf(xv))
            ours = max(ours, _abs_ulps(a, e, dtype))
            theirs = max(theirs, _abs_ulps(b, e, dtype))
    assert ours <= theirs, f"{name} {dtype}: repmode {ours:.3g}, native {theirs:.3g} (ulps of max(|P|, 1))"


@pytest.mark.parametrize("name", NAMES)
def test_same_bits_at_any_thread_count_and_layout(name):
    fn = getattr(S, name)
    g = torch.Generator().manual_seed(11)
    for dtype in (torch.float32, torch.float64):
        x = (torch.rand(29, 41, generator=g, dtype=torch.float64) * 2.4 - 1.2).to(dtype)
        n = torch.randint(0, 14, (29, 41), generator=g).to(dtype)
        assert_invariant(lambda a, b: {"p": fn(a, b)}, x, n)


def test_same_bits_at_one_and_two_threads_on_large_inputs():
    """40,000 elements (above the size where the kernels split the work over threads)."""
    g = torch.Generator().manual_seed(12)
    x = torch.rand(40000, generator=g, dtype=torch.float64) * 2.4 - 1.2
    n = torch.randint(0, 14, (40000,), generator=g).double()
    for name in NAMES:
        fn = getattr(S, name)
        with num_threads(1), repmode.enabled():
            one = fn(x, n)
        with num_threads(2), repmode.enabled():
            two = fn(x, n)
        assert_bitwise_equal(one, two, f"{name} at 1 and 2 threads")


def test_low_precision_refused_as_torch_has_no_kernel():
    x = torch.ones(3, dtype=torch.float16)
    with pytest.raises(RuntimeError, match="not implemented"):
        S.legendre_polynomial_p(x, 2)
    with pytest.raises(repmode.UnsupportedOpError, match="torch has no"):
        _run(S.legendre_polynomial_p, x, 2)


def test_out_form():
    x = torch.linspace(-2, 2, 17, dtype=torch.float64)
    out = torch.empty_like(x)
    with repmode.enabled():
        S.chebyshev_polynomial_t(x, 5, out=out)
    _same(out, S.chebyshev_polynomial_t(x, 5), "chebyshev_polynomial_t out=")
