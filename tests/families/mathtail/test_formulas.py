"""Elementwise functions built from repmode's math routines (docs/semantics.md "More elementwise
functions"): logaddexp, logaddexp2, logit, xlog1py, sinc, hypot, float_power. Their error against
a high-precision reference (float64 for float32 results, mpmath for float64 results) is measured
next to native torch's on random and adversarial inputs and must never be larger; float32
results are also held to their stated bounds. Special values follow torch."""
from __future__ import annotations

import math

import mpmath
import pytest
import torch
import torch.nn.functional as F  # noqa: F401
from support import assert_bitwise_equal, assert_invariant, ulp_distance_f32
from test_exact_ops import adversarial, assert_same_as_native, pairs

import repmode

mpmath.mp.prec = 160


def ulp64(got: torch.Tensor, exact: list) -> torch.Tensor:
    """|got - exact| in float64 ulps of the exact value (mpmath numbers)."""
    out = []
    for g, e in zip(got.tolist(), exact):
        if math.isnan(g) or e is None:
            out.append(0.0 if (math.isnan(g) and e is None) else math.inf)
            continue
        if mpmath.isinf(e) or math.isinf(g):
            out.append(0.0 if g == e else math.inf)
            continue
        ulp = math.ulp(float(e)) if e != 0 else 5e-324
        out.append(float(abs(mpmath.mpf(g) - e) / ulp))
    return torch.tensor(out, dtype=torch.float64)


def ulp32(got: torch.Tensor, exact64: torch.Tensor) -> torch.Tensor:
    """Error of a float32 result in float32 ulps of the float64 reference (fractional)."""
    e = exact64
    finite = torch.isfinite(e.float()) & torch.isfinite(got.double())
    ulp = torch.where(e == 0, torch.full_like(e, 2.0 ** -149),
                      torch.ldexp(torch.ones_like(e), torch.frexp(e.float())[1].to(torch.float64) - 24))
    ulp = torch.clamp(ulp, min=2.0 ** -149)
    err = torch.where(finite, (got.double() - e).abs() / ulp, torch.zeros_like(e))
    e32 = e.float().double()  # an exact value beyond float32's range must round to +-inf
    special_mismatch = ~finite & ~((got.double() == e32) | (torch.isnan(got) & torch.isnan(e)))
    return torch.where(special_mismatch, torch.full_like(e, math.inf), err)


# name -> (torch function of (a, b) or (a,), float64 reference on float64 tensors, arity, input maker)
def _logit_ref(x):
    return torch.log(x / (1 - x))


F32_CASES = {
    "logaddexp": (torch.logaddexp, lambda a, b: torch.logaddexp(a, b), 2, 0.5),
    "logaddexp2": (torch.logaddexp2, lambda a, b: torch.logaddexp2(a, b), 2, 0.5),
    "hypot": (torch.hypot, lambda a, b: torch.hypot(a, b), 2, 0.5),
    "xlog1py": (torch.special.xlog1py, lambda a, b: torch.special.xlog1py(a, b), 2, 0.5),
    "sinc": (torch.sinc, None, 1, 0.5),
    "logit": (torch.logit, None, 1, 0.5),
    "logit_eps": (lambda x: torch.logit(x, 1e-3), None, 1, 0.5),
}


def _sinc_ref64(x: torch.Tensor) -> torch.Tensor:
    return torch.tensor([float(mpmath.sinpi(mpmath.mpf(v)) / (mpmath.pi * v)) if v != 0 and math.isfinite(v)
                         else (1.0 if v == 0 else math.nan) for v in x.tolist()], dtype=torch.float64)


def _logit_ref64(x: torch.Tensor, eps=None) -> torch.Tensor:
    out = []
    for v in x.tolist():
        if eps is not None:
            lo, hi = float(torch.tensor(eps, dtype=torch.float32)), float(1 - torch.tensor(eps, dtype=torch.float32))
            v = lo if v < lo else (hi if v > hi else v)
        if math.isnan(v) or v < 0 or v > 1:
            out.append(math.nan)
        elif v == 0:
            out.append(-math.inf)
        elif v == 1:
            out.append(math.inf)
        else:
            out.append(float(mpmath.log(mpmath.mpf(v) / (1 - mpmath.mpf(v)))))
    return torch.tensor(out, dtype=torch.float64)


def _f32_inputs(name):
    if name.startswith("logit"):
        g = torch.Generator().manual_seed(4)
        x = torch.cat([torch.rand(4000, generator=g), 0.5 + (torch.rand(1000, generator=g) - 0.5) * 1e-3,
                       torch.rand(500, generator=g) * 1e-6, 1 - torch.rand(500, generator=g) * 1e-4,
                       torch.tensor([0.0, -0.0, 1.0, 0.5, 0.25, 0.75, -0.1, 1.1, math.nan, math.inf, 1e-40])])
        return (x.float(),)
    if name == "sinc":
        x = adversarial(torch.float32, scale=3.0)
        near = torch.arange(-50, 50, dtype=torch.float32) + torch.tensor([1e-3, -2e-4]).repeat(50)
        return (torch.cat([x, near, torch.arange(-20, 20, dtype=torch.float32) + 0.5]),)
    a, b = pairs(torch.float32)
    if name == "xlog1py":
        b = torch.where(b < -1, -b, b)  # mostly in the domain, plus the specials
    return a, b


@pytest.mark.parametrize("name", sorted(F32_CASES))
def test_float32_error_within_bound_and_never_worse_than_native(name):
    fn, ref, arity, bound = F32_CASES[name]
    inputs = _f32_inputs(name)
    with repmode.enabled():
        got = fn(*inputs)
    native = fn(*inputs)
    if name == "sinc":
        exact = _sinc_ref64(inputs[0].double())
    elif name.startswith("logit"):
        exact = _logit_ref64(inputs[0].double(), 1e-3 if name == "logit_eps" else None)
    elif name == "logaddexp2":  # float64 logaddexp2 is not accurate where the result cancels to ~0
        exact = torch.tensor([float(mpmath.log(mpmath.power(2, mpmath.mpf(x)) + mpmath.power(2, mpmath.mpf(y)), 2))
                              if not (math.isnan(x) or math.isnan(y)) else math.nan
                              for x, y in zip(*(t.tolist() for t in inputs))], dtype=torch.float64)
    else:
        exact = ref(*(t.double() for t in inputs))
    err, native_err = ulp32(got, exact), ulp32(native, exact)
    # float64 references carry < 2^-50 relative error: allow that much over the half ulp
    assert float(err.max()) <= bound + 1e-3, f"{name}: {float(err.max())} ulp at {[t[err.argmax()] for t in inputs]}"
    assert float(err.max()) <= max(float(native_err.max()), bound + 1e-3)


def _mp_cases():
    def la(a, b):
        if math.isnan(a) or math.isnan(b):
            return None
        return mpmath.log(mpmath.exp(mpmath.mpf(a)) + mpmath.exp(mpmath.mpf(b)))

    def la2(a, b):
        if math.isnan(a) or math.isnan(b):
            return None
        return mpmath.log(mpmath.power(2, a) + mpmath.power(2, b), 2)

    def hy(a, b):
        if math.isinf(a) or math.isinf(b):
            return mpmath.inf
        if math.isnan(a) or math.isnan(b):
            return None
        return mpmath.sqrt(mpmath.mpf(a) ** 2 + mpmath.mpf(b) ** 2)

    def xl(a, b):
        if math.isnan(b) or math.isnan(a) or b < -1:
            return None
        if a == 0:
            return mpmath.mpf(0)
        if b == -1:
            return -mpmath.inf * mpmath.sign(a)
        return mpmath.mpf(a) * mpmath.log1p(mpmath.mpf(b))

    return {"logaddexp": (torch.logaddexp, la), "logaddexp2": (torch.logaddexp2, la2), "hypot": (torch.hypot, hy),
            "xlog1py": (torch.special.xlog1py, xl)}


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2", "hypot", "xlog1py"])
def test_float64_error_never_worse_than_native(name):
    fn, mp = _mp_cases()[name]
    g = torch.Generator().manual_seed(11)
    a = torch.cat([torch.randn(1500, generator=g, dtype=torch.float64) * 30,
                   torch.tensor([1e300, -1e300, 1e-300, 5e-324, 0.0, 1.0, -1.0, math.inf, -math.inf],
                                dtype=torch.float64)])
    b = torch.cat([torch.randn(1500, generator=g, dtype=torch.float64) * 30,
                   torch.tensor([1e300, 1e-310, -1e-300, 5e-324, 0.0, -1.0, 3.0, 2.0, -math.inf], dtype=torch.float64)])
    if name == "hypot":
        a = torch.cat([a, torch.tensor([3e300, 1e-310, 1.0], dtype=torch.float64)])
        b = torch.cat([b, torch.tensor([4e300, 2e-310, 1e-20], dtype=torch.float64)])
    if name == "xlog1py":
        b = b.abs() * torch.where(torch.rand(b.shape, generator=g) < 0.2, -0.03, 1.0)
    with repmode.enabled():
        got = fn(a, b)
    exact = [mp(x, y) for x, y in zip(a.tolist(), b.tolist())]
    err, native_err = ulp64(got, exact), ulp64(fn(a, b), exact)
    assert float(err.max()) <= max(float(native_err.max()), 1.0), f"{name}: {float(err.max())} vs native " \
                                                                  f"{float(native_err.max())}"


def test_float64_sinc_and_logit_never_worse_than_native():
    g = torch.Generator().manual_seed(12)
    x = torch.cat([torch.randn(1000, generator=g, dtype=torch.float64) * 5,
                   torch.arange(-30, 30, dtype=torch.float64) + 1e-9, torch.tensor([1e10 + 0.5, 3.25e15])])
    exact = [mpmath.sinpi(mpmath.mpf(v)) / (mpmath.pi * v) if v != 0 else mpmath.mpf(1) for v in x.tolist()]
    with repmode.enabled():
        got = torch.sinc(x)
    assert float(ulp64(got, exact).max()) <= max(float(ulp64(torch.sinc(x), exact).max()), 3.0)
    p = torch.cat([torch.rand(1000, generator=g, dtype=torch.float64),
                   0.5 + torch.rand(100, generator=g, dtype=torch.float64) * 1e-9])
    exact = [mpmath.log(mpmath.mpf(v) / (1 - mpmath.mpf(v))) for v in p.tolist()]
    with repmode.enabled():
        got = torch.logit(p)
    assert float(ulp64(got, exact).max()) <= max(float(ulp64(torch.logit(p), exact).max()), 1.5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_special_values_follow_torch(dtype):
    inf, nan = math.inf, math.nan
    a = torch.tensor([inf, -inf, inf, -inf, nan, 0.0, 1.0, inf, 0.0, -0.0], dtype=dtype)
    b = torch.tensor([inf, -inf, -inf, 3.0, 1.0, nan, nan, nan, 5.0, -1.0], dtype=dtype)
    with repmode.enabled():
        got = {"logaddexp": torch.logaddexp(a, b), "logaddexp2": torch.logaddexp2(a, b), "hypot": torch.hypot(a, b),
               "xlog1py": torch.special.xlog1py(a, b), "sinc": torch.sinc(a), "logit": torch.logit(a)}
    for name, fn in (("logaddexp", torch.logaddexp), ("logaddexp2", torch.logaddexp2), ("hypot", torch.hypot),
                     ("xlog1py", torch.special.xlog1py)):
        assert_same_as_native(got[name], fn(a, b), name)
    fraction = a != a.round()  # (at nonzero integers repmode's sinc is exactly +0, native's is not)
    assert_same_as_native(got["sinc"][fraction], torch.sinc(a)[fraction], "sinc")
    assert_same_as_native(got["logit"], torch.logit(a), "logit")


def test_sinc_is_exactly_zero_at_nonzero_integers_and_one_at_zero():
    x = torch.tensor([1.0, -2.0, 3.0, 1e6, 2.0 ** 30, -0.0, 0.0])
    with repmode.enabled():
        got = torch.sinc(x)
    assert got.tolist() == [0.0] * 5 + [1.0, 1.0]


def test_float_power_is_float64_pow():
    a, b = pairs(torch.float32)
    with repmode.enabled():
        got = torch.float_power(a, b)
        want = torch.pow(a.double(), b.double())
    assert got.dtype == torch.float64
    assert_bitwise_equal(got, want)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_low_precision_is_float32_rounded_once(dtype):
    a, b = pairs(dtype)
    p = torch.rand(500, generator=torch.Generator().manual_seed(2)).to(dtype)
    with repmode.enabled():
        cases = [(torch.logaddexp(a, b), torch.logaddexp(a.float(), b.float())),
                 (torch.hypot(a, b), torch.hypot(a.float(), b.float())),
                 (torch.sinc(a), torch.sinc(a.float())), (torch.logit(p), torch.logit(p.float())),
                 (torch.logaddexp2(a, b), torch.logaddexp2(a.float(), b.float()))]
    for got, wide in cases:
        assert got.dtype == dtype
        nan = torch.isnan(wide)
        assert torch.equal(torch.isnan(got), nan)
        assert torch.equal(got[~nan], wide[~nan].to(dtype))


FORMULAS_2D = {
    "logaddexp": lambda a, b: {"y": torch.logaddexp(a, b), "z": torch.logaddexp2(a, b), "h": torch.hypot(a, b)},
    "sinc": lambda a, b: {"y": torch.sinc(a), "x": torch.special.xlog1py(a, b.abs()),
                          "l": torch.logit(b.sigmoid(), 1e-4)},
}


@pytest.mark.parametrize("name", sorted(FORMULAS_2D))
def test_thread_isa_and_layout_invariance(name):
    g = torch.Generator().manual_seed(6)
    a, b = torch.randn(300, 200, generator=g) * 5, torch.randn(300, 200, generator=g) * 5
    assert_invariant(FORMULAS_2D[name], a, b)


def _grad_error(got, want64):
    return float(((got.double() - want64).abs() / (want64.abs() + 1e-30)).max())


def test_gradients_are_as_accurate_as_native():
    """repmode's gradients (its backward kernels, or registered ops for torch's backward formulas)
    against float64 autograd: never further off than native float32 autograd (plus 2^-22)."""
    g = torch.Generator().manual_seed(7)
    a = torch.randn(64, generator=g)
    b = torch.randn(64, generator=g)
    p = torch.rand(64, generator=g) * 0.98 + 0.01
    binary = {
        "logaddexp": torch.logaddexp, "logaddexp2": torch.logaddexp2, "hypot": torch.hypot,
        "copysign": torch.copysign, "fmod": torch.fmod, "remainder": torch.remainder, "fmax": torch.fmax,
        "fmin": torch.fmin, "xlog1py": lambda x, y: torch.special.xlog1py(x, y.abs()),
    }
    for name, fn in binary.items():
        grads = []
        for dtype, mode in ((torch.float32, True), (torch.float32, False), (torch.float64, False)):
            x, y = a.detach().to(dtype).clone().requires_grad_(), b.detach().to(dtype).clone().requires_grad_()
            if mode:
                with repmode.enabled():
                    fn(x, y).sum().backward()
            else:
                fn(x, y).sum().backward()
            grads.append((x.grad, y.grad))
        for k in range(2):
            if grads[2][k] is None:  # not differentiable in this argument (copysign's sign source)
                assert grads[0][k] is None and grads[1][k] is None, name
                continue
            ours, native = _grad_error(grads[0][k], grads[2][k]), _grad_error(grads[1][k], grads[2][k])
            assert ours <= native + 2.0 ** -22, f"{name} grad {k}: {ours} vs native {native}"
    unary = {"sinc": (torch.sinc, a), "logit": (lambda t: torch.logit(t, 0.05), p), "logit_none": (torch.logit, p),
             "frac": (torch.frac, a), "deg2rad": (torch.deg2rad, a), "nan_to_num": (torch.nan_to_num, a),
             "ldexp": (lambda t: torch.ldexp(t, torch.tensor(5)), a), "frexp": (lambda t: torch.frexp(t)[0], a)}
    for name, (fn, src) in unary.items():
        grads = []
        for dtype, mode in ((torch.float32, True), (torch.float32, False), (torch.float64, False)):
            x = src.detach().to(dtype).clone().requires_grad_()
            if mode:
                with repmode.enabled():
                    fn(x).sum().backward()
            else:
                fn(x).sum().backward()
            grads.append(x.grad)
        ours, native = _grad_error(grads[0], grads[2]), _grad_error(grads[1], grads[2])
        assert ours <= native + 2.0 ** -22, f"{name}: {ours} vs native {native}"


@pytest.mark.parametrize("context", ["grad", "no_grad", "inference_mode"])
def test_grad_modes_give_the_same_bits(context):
    g = torch.Generator().manual_seed(8)
    a, b = torch.randn(50, generator=g), torch.randn(50, generator=g)
    with repmode.enabled():
        want = [torch.logaddexp(a, b), torch.hypot(a, b), torch.sinc(a), torch.logit(a.sigmoid()), torch.fmod(a, b),
                torch.copysign(a, b), torch.deg2rad(a), torch.ldexp(a, torch.tensor(3))]
    manager = {"grad": torch.enable_grad, "no_grad": torch.no_grad, "inference_mode": torch.inference_mode}[context]
    with manager(), repmode.enabled():
        x = a.clone().requires_grad_(context == "grad")
        got = [torch.logaddexp(x, b), torch.hypot(x, b), torch.sinc(x), torch.logit(x.sigmoid()), torch.fmod(x, b),
               torch.copysign(x, b), torch.deg2rad(x), torch.ldexp(x, torch.tensor(3))]
    for w, t in zip(want, got):
        assert_bitwise_equal(t.detach(), w)


def test_float32_logaddexp_is_within_half_ulp_plus_on_wide_sample():
    g = torch.Generator().manual_seed(10)
    a = (torch.rand(200000, generator=g) - 0.5) * 200
    b = a + torch.randn(200000, generator=g) * torch.exp2(torch.randint(-20, 6, (200000,), generator=g).float())
    with repmode.enabled():
        got = torch.logaddexp(a, b)
    exact = torch.logaddexp(a.double(), b.double())
    assert float(ulp32(got, exact).max()) <= 0.501
    assert int(ulp_distance_f32(got, exact.float()).max()) <= 1
