"""The regularized incomplete gamma functions igamma = P(a, x) (special.gammainc) and igammac = Q(a, x)
(special.gammaincc), and special.airy_ai (issue 26; csrc/common/math_igamma.h). Not correctly
rounded: each is one fixed double formula, the float32 result that double rounded once. Checked
here: the max-ulp error against mpmath on random and adversarial inputs is at most native torch's
on the same inputs (float32 and float64); special values (a < 0, x < 0, a = 0, x = 0, +-inf, NaN, -0)
as native, NaN canonical; float32 = the float64 formula rounded once; the same bits at 1, 2, 3
threads, on every ISA path and for every layout; bf16/fp16 igamma = the float32 result rounded
once; in-place, out= and alias forms; backward in x against native float64 autograd, and torch's
own "not implemented" error for the derivative in a. The larger runs:
benchmarks/accuracy_igamma.py (docs/math.md)."""
from __future__ import annotations

import math

import mpmath
import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, bits

import repmode
from repmode.errors import UnsupportedOpError

NAN_BITS = {torch.float32: 0x7FC00000, torch.float64: 0x7FF8000000000000}
AIRY_ZEROS = [-2.338107410459767, -4.087949444130970, -5.520559828095551, -6.786708090071759,
              -7.944133587120853, -9.022650853340980]


def _ulp(ref, dtype):
    a = abs(float(ref))
    if dtype == torch.float32:
        return 2.0 ** (max(math.floor(math.log2(a)), -126) - 23) if a > 0 else 2.0 ** -149
    return 2.0 ** (max(math.floor(math.log2(a)), -1022) - 52) if a > 0 else 2.0 ** -1074


def _max_ulps(refs, got, dtype):
    worst = 0.0
    for ref, gv in zip(refs, got.double().tolist()):
        if ref is None:
            continue
        if not math.isfinite(gv):
            worst = math.inf
            continue
        worst = max(worst, float(abs(mpmath.mpf(gv) - ref)) / _ulp(ref, dtype))
    return worst


def igamma_inputs(dtype):
    """(a, x) pairs: random a over 10^-4 ... 10^4 with x around a (log-uniform ratio), the
    neighbourhoods of torch's region boundaries (a = 20, 200; |x - a| = 0.3 a; x = 1, 1.1, 0.5),
    Temme's band at large a (x = a + k sqrt(a)), tiny a and x, P and Q in their far tails."""
    g = torch.Generator().manual_seed(2626)
    n = 48
    a = torch.pow(10.0, torch.rand(n, generator=g, dtype=torch.float64) * 8 - 4)
    x = a * torch.pow(10.0, torch.rand(n, generator=g, dtype=torch.float64) * 2 - 1)
    edges_a, edges_x = [], []
    for a0 in (19.9, 20.5, 199.0, 201.0, 2000.0):
        for r in (0.69, 0.71, 0.95, 1.0, 1.05, 1.29, 1.31):
            edges_a.append(a0)
            edges_x.append(a0 * r)
    for a0 in (1e5, 2e6):
        for k in (-30.0, -5.0, -1.0, 0.3, 2.0, 20.0):
            edges_a.append(a0)
            edges_x.append(a0 + k * math.sqrt(a0))
    for a0, x0 in ((1e-3, 0.5), (0.3, 0.49), (0.3, 0.51), (0.6, 1.09), (0.6, 1.11), (2.5, 1.0), (1e-6, 1e-6),
                   (3e-9, 2.0), (0.5, 40.0), (5.0, 60.0), (30.0, 150.0), (100.0, 5.0), (11.9, 3.0), (12.1, 40.0),
                   (1.0, 1e-300), (0.25, 1e-200), (700.0, 1.0)):
        edges_a.append(a0)
        edges_x.append(x0)
    a = torch.cat([a, torch.tensor(edges_a, dtype=torch.float64)]).to(dtype)
    x = torch.cat([x, torch.tensor(edges_x, dtype=torch.float64)]).to(dtype)
    keep = (x > 0) & torch.isfinite(x)
    return a[keep], x[keep]


def _gammainc(A, X, upper):
    v = mpmath.gammainc(A, X, mpmath.inf, regularized=True) if upper else mpmath.gammainc(A, 0, X, regularized=True)
    return v if isinstance(v, mpmath.mpf) and 0 <= v <= 1 else None


def igamma_refs(a, x, upper):
    """mpmath's values; above a = 10^4 also at 100 more bits, kept only where both agree to 2^-120
    (mpmath fails or goes complex for some large a: those inputs have no reference)."""
    refs = []
    with mpmath.workprec(200):
        for av, xv in zip(a.tolist(), x.tolist()):
            A, X = mpmath.mpf(av), mpmath.mpf(xv)
            try:
                v = _gammainc(A, X, upper)
                if v is not None and av > 1e4:
                    with mpmath.extraprec(100):
                        w = _gammainc(A, X, upper)
                    v = v if w is not None and abs(w - v) <= abs(v) * mpmath.mpf(2) ** -120 else None
            except mpmath.libmp.NoConvergence:
                v = None
            refs.append(v)
    return refs


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_max_ulp_error_is_at_most_natives(name, dtype):
    a, x = igamma_inputs(dtype)
    fn = getattr(torch, name)
    with repmode.enabled():
        ours = fn(a, x)
    native = fn(a, x)
    refs = igamma_refs(a, x, name == "igammac")
    assert sum(r is not None for r in refs) >= len(refs) - 4
    eo, en = _max_ulps(refs, ours, dtype), _max_ulps(refs, native, dtype)
    assert eo <= en, f"{name} {dtype}: repmode {eo:.3g} ulp, native {en:.3g} ulp"
    # docs/math.md's measured bounds (float64: 5.1 ulp at most on the accuracy battery)
    assert eo <= (1.0 if dtype == torch.float32 else 6.0), f"{name} {dtype}: {eo:.3g} ulp"


def airy_inputs(dtype):
    g = torch.Generator().manual_seed(2627)
    u = torch.rand(60, generator=g, dtype=torch.float64)
    near = (torch.rand(6, generator=g, dtype=torch.float64) - 0.5) * 2e-3
    x = torch.cat([u * 20 - 10, -torch.pow(10.0, u[:20] * 4), 2 + u[:20] * 100, *(z + near for z in AIRY_ZEROS[:3]),
                   torch.tensor([-2.09, -2.0899, 2.0899, 2.09, 0.0, 1e-30, -1e-30, 8.32, 103.8, 105.0])])
    return x.to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_airy_ai_max_ulp_error_is_at_most_natives(dtype):
    x = airy_inputs(dtype)
    with repmode.enabled():
        ours = torch.special.airy_ai(x)
    native = torch.special.airy_ai(x)
    with mpmath.workprec(200):
        refs = [mpmath.airyai(mpmath.mpf(v)) for v in x.tolist()]
    eo, en = _max_ulps(refs, ours, dtype), _max_ulps(refs, native, dtype)
    assert eo <= en, f"airy_ai {dtype}: repmode {eo:.3g} ulp, native {en:.3g} ulp"
    # away from the zeros of Ai on the negative axis the error is a few ulps
    away = (x > -2.09) | torch.tensor([min(abs(v - z) for z in AIRY_ZEROS) > 0.3 for v in x.tolist()])
    away &= x > -12
    ea = _max_ulps([r for r, k in zip(refs, away.tolist()) if k], ours[away], dtype)
    assert ea <= (1.0 if dtype == torch.float32 else 8.0), f"airy_ai {dtype} away from zeros: {ea:.3g} ulp"


def test_airy_ai_is_accurate_at_its_first_zero_where_torch_drops_cephes_leading_coefficients():
    """torch's port evaluates Cephes' p1evl denominators without their leading 1: Ai(-2.338...) comes
    out as 6.6e-7 instead of ~1e-17; repmode keeps Cephes' formula (absolute error ~1e-17)."""
    x = torch.tensor([AIRY_ZEROS[0], -2.5, -3.0], dtype=torch.float64)
    with repmode.enabled():
        got = torch.special.airy_ai(x).tolist()
    for v, gv in zip(x.tolist(), got):
        assert abs(gv - float(mpmath.airyai(v))) < 1e-16
    assert abs(torch.special.airy_ai(x)[0].item()) > 1e-7  # (native's error, documented in docs/math.md)


# (the domain edges of torch's calc_igamma; not P(1e-45, 1e-45) ~ 1, where torch's float32 kernel
# underflows to 0)
SPECIAL_A = [-1.0, -0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, math.inf, math.inf, math.inf, 2.0, 2.0, math.nan, 1.0, 0.0,
             -1.0, 3.0, 2.0, -math.inf, 0.5]
SPECIAL_X = [1.0, 1.0, 1.0, 0.0, -0.0, 0.0, -0.0, -1.0, 1.0, math.inf, 0.0, math.inf, math.nan, 1.0, -math.inf,
             math.inf, math.nan, 1e-45, 1e30, 1.0, math.nan]


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_special_values_follow_torch(name):
    fn = getattr(torch, name)
    for dtype in (torch.float32, torch.float64):
        a, x = torch.tensor(SPECIAL_A, dtype=dtype), torch.tensor(SPECIAL_X, dtype=dtype)
        with repmode.enabled():
            got = fn(a, x)
        want = fn(a, x)
        special = torch.isnan(want) | torch.isinf(want) | (want == 0) | (want == 1)
        same = (bits(got) == bits(want)) | (torch.isnan(got) & torch.isnan(want))
        bad = special & ~same
        assert not bad.any(), f"{name} {dtype}: {got[bad].tolist()} vs {want[bad].tolist()}"
        assert (bits(got[torch.isnan(got)]) == NAN_BITS[dtype]).all()


def test_airy_ai_special_values_follow_torch():
    x = [math.nan, math.inf, -math.inf, 0.0, -0.0, -1e300, -2.1e205, -2.0e205, 200.0]
    for dtype in (torch.float32, torch.float64):
        t = torch.tensor(x, dtype=torch.float64).to(dtype)
        with repmode.enabled():
            got = torch.special.airy_ai(t)
        want = torch.special.airy_ai(t)
        same = (bits(got) == bits(want)) | (torch.isnan(got) & torch.isnan(want))
        finite_nonzero = torch.isfinite(want) & (want != 0)
        assert same[~finite_nonzero].all(), f"{dtype}: {got.tolist()} vs {want.tolist()}"
        assert (bits(got[torch.isnan(got)]) == NAN_BITS[dtype]).all()


def test_float32_is_the_float64_formula_rounded_once():
    g = torch.Generator().manual_seed(14)
    a = torch.pow(10.0, torch.rand(400, generator=g) * 6 - 3)
    x = a * torch.pow(10.0, torch.rand(400, generator=g) * 2 - 1)
    with repmode.enabled():
        for fn in (torch.igamma, torch.igammac):
            assert_bitwise_equal(fn(a, x), fn(a.double(), x.double()).float(), fn.__name__)
        y = torch.randn(400, generator=g) * 8
        assert_bitwise_equal(torch.special.airy_ai(y), torch.special.airy_ai(y.double()).float(), "airy_ai")


@pytest.mark.parametrize("name", ["igamma", "igammac", "airy_ai"])
def test_thread_isa_and_layout_invariance(name):
    # (200 x 170 elements: above the 32768 below which the kernels stay on one thread)
    g = torch.Generator().manual_seed(32)
    a = torch.pow(10.0, torch.rand(200, 170, generator=g, dtype=torch.float64) * 5 - 2)
    x = a * torch.pow(10.0, torch.rand(200, 170, generator=g, dtype=torch.float64) - 0.5)
    for dtype in (torch.float32, torch.float64):
        if name == "airy_ai":
            assert_invariant(lambda p: {"out": torch.special.airy_ai(p)}, ((x - a) / 3).to(dtype))
        else:
            fn = getattr(torch, name)
            assert_invariant(lambda p, q: {"out": fn(p, q)}, a.to(dtype), x.to(dtype))


def test_low_precision_igamma_is_the_float32_result_rounded_once():
    g = torch.Generator().manual_seed(9)
    a = torch.rand(300, generator=g) * 6 + 0.05
    x = torch.rand(300, generator=g) * 8
    with repmode.enabled():
        for fn in (torch.igamma, torch.igammac):
            for low in (torch.bfloat16, torch.float16):
                got = fn(a.to(low), x.to(low))
                assert got.dtype == low
                assert_bitwise_equal(got, fn(a.to(low).float(), x.to(low).float()).to(low), f"{fn.__name__} {low}")


def test_in_place_out_broadcast_and_alias_forms():
    g = torch.Generator().manual_seed(10)
    a = torch.rand(5, 1, generator=g, dtype=torch.float64) * 30 + 0.1
    x = torch.rand(1, 7, generator=g, dtype=torch.float64) * 40
    with repmode.enabled():
        for name in ("igamma", "igammac"):
            fn = getattr(torch, name)
            ref = fn(a, x)
            assert ref.shape == (5, 7)
            out = torch.empty(5, 7, dtype=torch.float64)
            fn(a, x, out=out)
            assert_bitwise_equal(out, ref, f"{name} out=")
            c = a.expand(5, 7).clone()
            getattr(c, name + "_")(x)
            assert_bitwise_equal(c, ref, f"{name}_")
            # float32 and float64 operands promote to float64, as natively
            assert_bitwise_equal(fn(a.float(), x), fn(a.float().double(), x), f"{name} promotion")
        assert_bitwise_equal(torch.special.gammainc(a, x), torch.igamma(a, x), "special.gammainc")
        assert_bitwise_equal(torch.special.gammaincc(a, x), torch.igammac(a, x), "special.gammaincc")
        y = torch.linspace(-12, 12, 97, dtype=torch.float64)
        out = torch.empty_like(y)
        torch.special.airy_ai(y, out=out)
        assert_bitwise_equal(out, torch.special.airy_ai(y), "airy_ai out=")
        i = torch.tensor([-3, 0, 1, 4])
        got = torch.special.airy_ai(i)
        assert got.dtype == torch.float32
        assert_bitwise_equal(got, torch.special.airy_ai(i.float()), "airy_ai integer input")


def test_refusals_name_the_reason():
    with repmode.enabled():
        for low in (torch.bfloat16, torch.float16):
            with pytest.raises(UnsupportedOpError, match="airy_ai"):
                torch.special.airy_ai(torch.ones(3, dtype=low))
        with pytest.raises(UnsupportedOpError, match="igamma"):
            torch.igamma(torch.ones(3, dtype=torch.int64), torch.ones(3, dtype=torch.int64))


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_backward_in_x_matches_native_float64_autograd(name):
    fn = getattr(torch, name)
    g = torch.Generator().manual_seed(11)
    a = torch.rand(40, generator=g, dtype=torch.float64) * 10 + 0.2
    x0 = torch.rand(40, generator=g, dtype=torch.float64) * 12 + 0.05
    w = torch.randn(40, generator=g, dtype=torch.float64)
    x = x0.clone().requires_grad_()
    with repmode.enabled():
        (fn(a, x) * w).sum().backward()
    xn = x0.clone().requires_grad_()
    (fn(a, xn) * w).sum().backward()
    torch.testing.assert_close(x.grad, xn.grad, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_backward_in_a_raises_torchs_not_implemented_error(name):
    fn = getattr(torch, name)
    a = (torch.rand(4, dtype=torch.float64) + 1).requires_grad_()
    x = torch.rand(4, dtype=torch.float64) + 1
    with pytest.raises(NotImplementedError) as native:
        fn(a, x).sum().backward()
    with repmode.enabled(), pytest.raises(NotImplementedError) as ours:
        fn(a, x).sum().backward()
    assert str(ours.value) == str(native.value)
