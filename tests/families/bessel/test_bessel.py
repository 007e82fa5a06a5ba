"""Bessel functions (i0, i0e, i1, i1e, modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1,
spherical_bessel_j0) and torch.kaiser_window (csrc/common/math_bessel.h, repmode/kernels/bessel.py).

float64 is one fixed formula (Cephes' expansions over repmode's exp/log/sin); float32 is that
formula rounded once. Checked here: the float32 definition bit for bit, special values as native
torch, the error against mpmath next to native torch's on random and adversarial inputs (never
worse), thread / layout invariance, bf16/fp16 as float32 rounded once, in-place / out= forms,
backward, and the Kaiser window. benchmarks/accuracy_bessel.py re-runs the larger measurement of
docs/math.md."""
from __future__ import annotations

import json
import math
import pathlib

import mpmath
import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, bits, num_threads

import repmode

S = torch.special

# name -> (torch function, mpmath reference, positive domain only)
UNARY = {
    "i0": (torch.i0, lambda x: mpmath.besseli(0, x), False),
    "i0e": (S.i0e, lambda x: mpmath.besseli(0, x) * mpmath.exp(-abs(x)), False),
    "i1": (S.i1, lambda x: mpmath.besseli(1, x), False),
    "i1e": (S.i1e, lambda x: mpmath.besseli(1, x) * mpmath.exp(-abs(x)), False),
    "modified_bessel_i0": (S.modified_bessel_i0, lambda x: mpmath.besseli(0, x), False),
    "modified_bessel_i1": (S.modified_bessel_i1, lambda x: mpmath.besseli(1, x), False),
    "modified_bessel_k0": (S.modified_bessel_k0, lambda x: mpmath.besselk(0, x), True),
    "modified_bessel_k1": (S.modified_bessel_k1, lambda x: mpmath.besselk(1, x), True),
    "scaled_modified_bessel_k0": (S.scaled_modified_bessel_k0, lambda x: mpmath.besselk(0, x) * mpmath.exp(x), True),
    "scaled_modified_bessel_k1": (S.scaled_modified_bessel_k1, lambda x: mpmath.besselk(1, x) * mpmath.exp(x), True),
    "spherical_bessel_j0": (S.spherical_bessel_j0, lambda x: mpmath.sin(x) / x, False),
    "bessel_j0": (S.bessel_j0, lambda x: mpmath.besselj(0, x), False),
    "bessel_j1": (S.bessel_j1, lambda x: mpmath.besselj(1, x), False),
    "bessel_y0": (S.bessel_y0, lambda x: mpmath.bessely(0, x), True),
    "bessel_y1": (S.bessel_y1, lambda x: mpmath.bessely(1, x), True),
}
CANONICAL_NAN = {torch.float32: 0x7FC00000, torch.float64: 0x7FF8000000000000}
# (largest finite, exponent of the least normal in frexp's convention, significand bits)
FORMAT = {torch.float32: (3.4028234663852886e38, -125, 24), torch.float64: (1.7976931348623157e308, -1021, 53)}


def _run(fn, *args):
    with repmode.enabled():
        return fn(*args)


def sample(dtype, positive, n=160, seed=26) -> torch.Tensor:
    """Random magnitudes from 2^-10 to ~700 plus the adversarial points: tiny and subnormal
    arguments, the expansion boundaries 2 and 8 and their neighbours, the float32 / float64
    overflow edges of I (and underflow of K)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.exp2(torch.rand(n, generator=g, dtype=torch.float64) * 19.4 - 10)
    edges = [2.0 ** -60, 1e-20, 1e-5, 0.25, 0.5, 1.0, 2.0, 8.0, 20.0, 50.0, 88.0, 91.5, 100.0, 104.0]
    if dtype == torch.float64:
        edges += [300.0, 650.0, 709.0, 713.5, 720.0, 740.0, 5e-324, 1e-310]
    else:
        edges += [2.0 ** -149, 1e-40]
    e = torch.tensor(edges, dtype=torch.float64)
    near = torch.cat([e * (1 + 2.0 ** -20), e * (1 - 2.0 ** -20)])
    x = torch.cat([e, near, x]).to(dtype)
    if not positive:
        signs = torch.randint(0, 2, x.shape, generator=g) * 2 - 1
        x = x * signs.to(dtype)
    return x


# mpmath's besselk takes up to a second per argument between ~10 and ~60; its values on the test
# samples are stored (x as a hex float -> K0(x), K1(x) as decimal strings, 40 digits), written by
# `PYTHONPATH=. python tests/families/bessel/test_bessel.py` (arguments missing there are computed).
K_REFERENCE = pathlib.Path(__file__).with_name("besselk_reference.json")
_K_CACHE: dict = {}


def _k_table() -> dict:
    if not _K_CACHE:
        _K_CACHE.update(json.loads(K_REFERENCE.read_text()) if K_REFERENCE.exists() else {})
    return _K_CACHE


def _besselk(order: int):
    def ref(x):
        row = _k_table().get(float(x).hex())
        return mpmath.mpf(row[order]) if row else mpmath.besselk(order, x)
    return ref


for _name, _order, _scaled in (("modified_bessel_k0", 0, False), ("modified_bessel_k1", 1, False),
                               ("scaled_modified_bessel_k0", 0, True), ("scaled_modified_bessel_k1", 1, True)):
    _k = _besselk(_order)
    UNARY[_name] = (UNARY[_name][0], (lambda k: lambda x: k(x) * mpmath.exp(x))(_k) if _scaled else _k, True)


def ulp_errors(got: torch.Tensor, x: torch.Tensor, ref, dtype) -> list[float]:
    """|got - exact| in ulps of the exact value (subnormal spacing below the normal range); values
    whose exact result is out of the dtype's range are skipped."""
    out = []
    big, minexp, digits = FORMAT[dtype]
    with mpmath.workprec(160):
        for g, v in zip(got.tolist(), x.tolist()):
            e = ref(mpmath.mpf(v))
            fe = float(e)
            if not math.isfinite(fe) or abs(fe) > big:
                continue
            expo = math.frexp(fe)[1] if fe != 0 else minexp
            ulp = 2.0 ** (max(expo, minexp) - digits)
            out.append(math.inf if not math.isfinite(g) else float(abs(mpmath.mpf(g) - e) / ulp))
    return out


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_error_against_mpmath_is_not_worse_than_native(name, dtype):
    fn, ref, positive = UNARY[name]
    x = sample(dtype, positive)
    ours = ulp_errors(_run(fn, x), x, ref, dtype)
    native = ulp_errors(fn(x), x, ref, dtype)
    assert max(ours) <= max(native), f"{name} {dtype}: repmode {max(ours):.3f} ulp, native {max(native):.3f} ulp"
    if dtype == torch.float32:  # the double formula rounded once
        assert max(ours) <= 0.51, f"{name} float32: {max(ours):.3f} ulp"


@pytest.mark.parametrize("name", sorted(UNARY))
def test_float32_is_the_float64_formula_rounded_once(name):
    fn, _, positive = UNARY[name]
    x = sample(torch.float32, positive, n=2000, seed=5)
    assert_bitwise_equal(_run(fn, x), _run(fn, x.double()).float(), name)


SPECIALS = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 2.0, -2.0, 8.0, -8.0, 1e-30, -1e-30, 100.0, -100.0,
            1e30, -1e30]


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_special_values_follow_torch(name, dtype):
    """NaN, infinities, signed zeros and domain edges (K at 0 and below) as native torch; the other
    values close to native's (native float32 runs the expansions in float32, up to 13 ulps off:
    its I0(0) is 1 - 2^-24)."""
    fn = UNARY[name][0]
    x = torch.tensor(SPECIALS, dtype=dtype)
    got, want = _run(fn, x), fn(x)
    assert (torch.isnan(got) == torch.isnan(want)).all(), f"{name}: NaN at {x[torch.isnan(got) != torch.isnan(want)]}"
    assert (bits(got[torch.isnan(got)]) == CANONICAL_NAN[dtype]).all()
    kind = torch.isinf(want) | (want == 0)
    assert_bitwise_equal(got[kind], want[kind], f"{name} infinities and zeros")
    finite = ~kind & ~torch.isnan(want)
    if name.startswith("bessel_"):  # torch's J/Y drift off above |x| ~ 1.5 (see test_bessel_j_...)
        finite &= x.abs() < 1.5
    tol = (64 if dtype == torch.float32 else 16) * torch.finfo(dtype).eps
    assert ((got[finite] - want[finite]).abs() <= tol * want[finite].abs()).all(), \
        f"{name}: {x[finite].tolist()} -> {got[finite].tolist()} vs {want[finite].tolist()}"


def test_bessel_j_is_cephes_as_designed_where_torch_drops_a_leading_one():
    """torch evaluates Cephes' denominators p1evl(z, RQ, 8) and p1evl(z, QQ, 7) without their leading 1:
    its J0(5.5) is 2.4e-5 and J1 2.6e-7 off (relative). repmode is within a few ulps there; next to the zeros of J0/J1
    (the doubles nearest the zeros, where |J| ~ 1e-17) its absolute error stays below 1e-19 (the
    phase x - pi/4 is exact), native's is above 1e-16."""
    x = torch.tensor([4.0, 5.0, 5.5, 6.0, 30.0, 1e5], dtype=torch.float64)
    zeros = {0: [2.404825557695773, 5.520078110286311], 1: [3.8317059702075125, 7.015586669815619]}
    for order, fn in ((0, S.bessel_j0), (1, S.bessel_j1)):
        got, native = _run(fn, x), fn(x)
        with mpmath.workprec(200):
            exact = [mpmath.besselj(order, v) for v in x.tolist()]
            err = max(float(abs((mpmath.mpf(g) - e) / e)) for g, e in zip(got.tolist(), exact))
            err_native = max(float(abs((mpmath.mpf(g) - e) / e)) for g, e in zip(native.tolist(), exact))
            assert err < 2e-15 and err_native > 1e-7, (order, err, err_native)
            z = torch.tensor(zeros[order], dtype=torch.float64)
            near = [mpmath.besselj(order, v) for v in z.tolist()]
            abs_err = max(float(abs(mpmath.mpf(g) - e)) for g, e in zip(_run(fn, z).tolist(), near))
            abs_native = max(float(abs(mpmath.mpf(g) - e)) for g, e in zip(fn(z).tolist(), near))
            assert abs_err < 1e-19 < 1e-16 < abs_native, (order, abs_err, abs_native)


def test_float32_subnormal_arguments_are_computed_not_broken():
    """Where native float32 breaks down on subnormal arguments (K1(2^-149) is NaN, e^x K0(2^-149)
    is inf, K0(2^-149) is 103.39), repmode gives the float64 formula rounded once: K1 = 1/x overflows
    to +inf, K0 = -log(x/2) - gamma = 103.73."""
    x = torch.tensor([2.0 ** -149], dtype=torch.float32)
    k0 = float(mpmath.besselk(0, mpmath.mpf(2.0 ** -149)))
    assert _run(S.modified_bessel_k1, x).item() == math.inf
    assert _run(S.modified_bessel_k0, x).item() == pytest.approx(k0, rel=1e-7)
    assert _run(S.scaled_modified_bessel_k0, x).item() == pytest.approx(k0, rel=1e-7)


def test_spherical_j0_small_arguments_are_native_bits():
    """Below 1/2 repmode runs torch's Taylor polynomial with the fmas torch's kernel compiles to."""
    x = torch.linspace(-0.4999, 0.4999, 2001, dtype=torch.float64)
    assert_bitwise_equal(_run(S.spherical_bessel_j0, x), S.spherical_bessel_j0(x), "sin(x)/x below 1/2")


def test_modified_bessel_i0_i1_are_i0_i1():
    x = sample(torch.float64, False, n=500)
    assert_bitwise_equal(_run(S.modified_bessel_i0, x), _run(torch.i0, x), "modified_bessel_i0 vs i0")
    assert_bitwise_equal(_run(S.modified_bessel_i1, x), _run(S.i1, x), "modified_bessel_i1 vs i1")


def test_i0_is_finite_up_to_its_overflow():
    """I0(x) < DBL_MAX up to x = 713.98: finite there (torch's exp(x) overflows from 709.78)."""
    x = torch.tensor([709.0, 711.0, 713.5, 714.5, 800.0], dtype=torch.float64)
    got = _run(torch.i0, x)
    assert torch.isfinite(got[:3]).all() and torch.isinf(got[3:]).all()
    with mpmath.workprec(100):
        for v, g in zip(x[:3].tolist(), got[:3].tolist()):
            assert g == pytest.approx(float(mpmath.besseli(0, v)), rel=4e-16)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_same_bits_at_any_thread_count_and_layout(name):
    fn, _, positive = UNARY[name]
    g = torch.Generator().manual_seed(3)
    for dtype in (torch.float32, torch.float64):
        x = (torch.rand(37, 45, generator=g, dtype=torch.float64) * 30).to(dtype)
        x = x if positive else x - 15
        assert_invariant(lambda t: {"y": fn(t)}, x)


def test_same_bits_at_one_and_two_threads_on_large_inputs():
    """40,000 elements (above the size where the kernels split the work over threads), every function."""
    g = torch.Generator().manual_seed(8)
    x = torch.rand(40000, generator=g, dtype=torch.float64) * 40
    for name, (fn, _, positive) in UNARY.items():
        xs = x if positive else x - 20
        with num_threads(1), repmode.enabled():
            one = fn(xs)
        with num_threads(2), repmode.enabled():
            two = fn(xs)
        assert_bitwise_equal(one, two, f"{name} at 1 and 2 threads")


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_is_float32_rounded_once(name, dtype):
    fn = UNARY[name][0]
    x = (torch.randn(500, generator=torch.Generator().manual_seed(1)) * 6).to(dtype)
    got = _run(fn, x)
    assert got.dtype == dtype
    assert_bitwise_equal(got, _run(fn, x.float()).to(dtype), f"{name} {dtype}")


@pytest.mark.parametrize("name", ["modified_bessel_k0", "modified_bessel_i0", "spherical_bessel_j0"])
def test_low_precision_refused_where_torch_has_no_kernel(name):
    fn = UNARY[name][0]
    with pytest.raises(RuntimeError, match="not implemented"):
        fn(torch.ones(3, dtype=torch.bfloat16))
    with pytest.raises(repmode.UnsupportedOpError, match="torch has no"):
        _run(fn, torch.ones(3, dtype=torch.bfloat16))


def test_integer_inputs_give_the_default_dtype():
    x = torch.arange(-3, 12)
    for name in ("i0", "i1e", "modified_bessel_k1", "spherical_bessel_j0"):
        fn = UNARY[name][0]
        got, want = _run(fn, x), fn(x)
        assert got.dtype == want.dtype == torch.float32
        assert_bitwise_equal(got, _run(fn, x.float()), name)


def test_inplace_and_out_forms():
    x = torch.linspace(-9, 9, 101, dtype=torch.float64)
    want = _run(torch.i0, x)
    y = x.clone()
    with repmode.enabled():
        y.i0_()
        out = torch.empty_like(x)
        torch.i0(x, out=out)
        out2 = torch.empty_like(x)
        S.modified_bessel_k0(x.abs() + 0.5, out=out2)
    assert_bitwise_equal(y, want, "i0_")
    assert_bitwise_equal(out, want, "i0 out=")
    assert_bitwise_equal(out2, _run(S.modified_bessel_k0, x.abs() + 0.5), "modified_bessel_k0 out=")


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e"])
def test_backward_matches_float64_autograd(name):
    fn = UNARY[name][0]
    x = torch.tensor([-7.5, -2.0, -0.3, 0.0, 1e-9, 0.4, 1.5, 9.0, 20.0])
    xr = x.clone().requires_grad_(True)
    with repmode.enabled():
        fn(xr).sum().backward()
    x64 = x.double().requires_grad_(True)
    fn(x64).sum().backward()
    torch.testing.assert_close(xr.grad, x64.grad.float(), rtol=4e-6, atol=1e-7)


# ---- Kaiser window ----

def kaiser_exact(n: int, periodic: bool, beta: float) -> list:
    m = n + 1 if periodic else n
    a = mpmath.mpf(m - 1) / 2
    with mpmath.workprec(160):
        vals = [mpmath.besseli(0, beta * mpmath.sqrt(abs(1 - ((k - a) / a) ** 2))) / mpmath.besseli(0, beta)
                for k in range(m)]
    return vals[:n]


@pytest.mark.parametrize("n,periodic,beta", [(5, True, 12.0), (64, False, 8.6), (33, True, 0.5), (400, False, 20.0)])
def test_kaiser_window_is_accurate(n, periodic, beta):
    with repmode.enabled():
        w32 = torch.kaiser_window(n, periodic=periodic, beta=beta)
        w64 = torch.kaiser_window(n, periodic=periodic, beta=beta, dtype=torch.float64)
    native32 = torch.kaiser_window(n, periodic=periodic, beta=beta)
    exact = kaiser_exact(n, periodic, beta)
    assert w32.dtype == torch.float32 and w32.shape == (n,)
    err = max(abs(float(g) - float(e)) / math.ulp(float(e)) * 2 ** -29 for g, e in zip(w32.tolist(), exact))
    err_native = max(abs(float(g) - float(e)) / math.ulp(float(e)) * 2 ** -29 for g, e in zip(native32.tolist(), exact))
    assert err <= 0.51 and err <= max(err_native, 0.51), (err, err_native)
    # float64: the argument's roundings are amplified by about beta (d log I0 / d log y = y I1/I0 <= y):
    # native is off by up to ~20 ulps; repmode's double-double argument keeps it near 0.5 ulp
    native64 = torch.kaiser_window(n, periodic=periodic, beta=beta, dtype=torch.float64)
    err64 = max(float(abs(mpmath.mpf(g) - e) / math.ulp(float(e))) for g, e in zip(w64.tolist(), exact))
    err64_native = max(float(abs(mpmath.mpf(g) - e) / math.ulp(float(e))) for g, e in zip(native64.tolist(), exact))
    assert err64 <= min(err64_native, 0.6), (err64, err64_native)
    assert_bitwise_equal(w32, w64.float(), "float32 window = float64 window rounded once")


def test_kaiser_window_forms_and_edges():
    with repmode.enabled():
        default = torch.kaiser_window(10)
        periodic = torch.kaiser_window(10, True)
        beta = torch.kaiser_window(10, True, 12.0)
        bf16 = torch.kaiser_window(10, dtype=torch.bfloat16)
        empty = torch.kaiser_window(0)
        one = torch.kaiser_window(1, dtype=torch.float64)
        with pytest.raises(RuntimeError, match="floating point"):
            torch.kaiser_window(4, dtype=torch.int64)
    assert_bitwise_equal(default, periodic, "default vs periodic=True")
    assert_bitwise_equal(default, beta, "default beta is 12")
    assert_bitwise_equal(bf16, default.to(torch.bfloat16), "bf16 = float32 rounded once")
    assert empty.shape == (0,) and one.tolist() == [1.0] and one.dtype == torch.float64
    with repmode.enabled():
        out = torch.empty(7)
        torch.ops.aten.kaiser_window.beta_out(7, False, 3.0, out=out)
        assert_bitwise_equal(out, torch.kaiser_window(7, False, 3.0), "kaiser_window out=")


def test_signal_windows_kaiser_runs_in_strict_mode():
    native = torch.signal.windows.kaiser(16, beta=6.0, sym=False)
    with repmode.enabled():
        got = torch.signal.windows.kaiser(16, beta=6.0, sym=False)
    torch.testing.assert_close(got, native, rtol=2e-6, atol=1e-7)


if __name__ == "__main__":  # regenerate the stored besselk values
    xs = sorted({float(v) for dtype in (torch.float32, torch.float64) for v in sample(dtype, True).tolist()})
    with mpmath.workprec(200):
        table = {x.hex(): [mpmath.nstr(mpmath.besselk(0, x), 40), mpmath.nstr(mpmath.besselk(1, x), 40)] for x in xs}
    K_REFERENCE.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n")
    print(f"{len(table)} arguments written to {K_REFERENCE}")
