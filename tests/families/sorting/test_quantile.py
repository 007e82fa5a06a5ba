"""quantile / nanquantile: torch decomposes them (CompositeImplicitAutograd) into repmode's stable sort,
exact selections and repmode's lerp; checked against a plain reference of the formula in
docs/semantics.md "Sorting and selection", against native torch (bit for bit for lower/higher/nearest,
no larger error than native for linear/midpoint, measured exactly with fractions), across threads and
layouts, and through autograd."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch
from packaging.version import Version
from support import assert_bitwise_equal, assert_invariant

import repmode

nan = float("nan")
_RANKS_IN_FLOAT64 = Version(torch.__version__).release >= (2, 14)
MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _native_and_repmode(fn):
    want = fn()
    with repmode.enabled(strict=True):
        got = fn()
    return got, want


def _reference(row, q, interpolation, ignore_nan, np_dtype):
    """The documented formula for one row and one q, in the dtype's IEEE arithmetic (numpy scalars)."""
    values = [v for v in row if v == v] if ignore_nan else row
    if not values or (not ignore_nan and any(v != v for v in row)):
        return nan
    s = sorted(values)
    # torch's decomposition: ranks in the dtype before torch 2.14, in float64 from 2.14 on (the
    # weight rank - below then rounded to the dtype)
    rank_dtype = np.float64 if _RANKS_IN_FLOAT64 else np_dtype
    rank = rank_dtype(np_dtype(q)) * rank_dtype(len(s) - 1)
    below, above = int(np.floor(rank)), int(np.ceil(rank))
    if interpolation == "lower":
        return s[below]
    if interpolation == "higher":
        return s[above]
    if interpolation == "nearest":
        return s[int(np.round(rank))]  # round half to even
    a, b = np_dtype(s[below]), np_dtype(s[above])
    w = np_dtype(0.5) if interpolation == "midpoint" else np_dtype(rank - rank_dtype(below))
    return a + w * (b - a) if abs(w) < 0.5 else b - (b - a) * (np_dtype(1) - w)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("interpolation", MODES)
def test_quantile_follows_the_documented_formula_and_selections_equal_native(dtype, interpolation, rng):
    x = torch.randn(9, 23, generator=rng, dtype=dtype)
    x[2, 4] = x[5, 0] = x[5, 9] = nan
    x[7] = nan
    q = torch.tensor([0.0, 0.1, 0.25, 0.5, 0.77, 1.0], dtype=dtype)
    np_dtype = np.float32 if dtype == torch.float32 else np.float64
    for fn, ignore_nan in ((torch.quantile, False), (torch.nanquantile, True)):
        got, want = _native_and_repmode(lambda: fn(x, q, dim=1, interpolation=interpolation))
        ref = [[_reference(row, qq, interpolation, ignore_nan, np_dtype) for row in x.tolist()] for qq in q.tolist()]
        assert_bitwise_equal(got, torch.tensor(ref, dtype=dtype), f"{fn.__name__} {interpolation} formula")
        if interpolation in ("lower", "higher", "nearest"):
            assert_bitwise_equal(got, want, f"{fn.__name__} {interpolation} = native (a selection)")
        for kwargs in ({"dim": 0, "keepdim": True}, {}):
            for qq in (q, 0.3):
                got, want = _native_and_repmode(lambda: fn(x, qq, interpolation=interpolation, **kwargs))
                assert got.shape == want.shape
                if interpolation in ("lower", "higher", "nearest"):
                    assert_bitwise_equal(got, want, f"{fn.__name__} {interpolation} {kwargs}")
                else:
                    torch.testing.assert_close(got, want, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("interpolation", ["linear", "midpoint"])
def test_interpolated_quantiles_are_no_less_accurate_than_native(dtype, interpolation, rng):
    x = torch.randn(40, 101, generator=rng, dtype=dtype) * torch.logspace(-3, 3, 101, dtype=dtype)
    q = torch.rand(30, generator=rng, dtype=dtype)
    got, want = _native_and_repmode(lambda: torch.quantile(x, q, dim=1, interpolation=interpolation))
    s = torch.sort(x, 1)[0]
    ranks = q * (x.shape[1] - 1)
    below, above = ranks.floor().long(), ranks.ceil().long()
    worst_ours = worst_native = 0.0
    for r in range(x.shape[0]):
        for j in range(q.numel()):
            a, b = Fraction(s[r, below[j]].item()), Fraction(s[r, above[j]].item())
            w = Fraction(1, 2) if interpolation == "midpoint" else Fraction((ranks[j] - below[j].to(dtype)).item())
            exact = a + (b - a) * w
            scale = max(abs(a), abs(b))
            worst_ours = max(worst_ours, float(abs(Fraction(got[j, r].item()) - exact) / scale))
            worst_native = max(worst_native, float(abs(Fraction(want[j, r].item()) - exact) / scale))
    assert worst_ours <= worst_native, (worst_ours, worst_native)


def test_quantiles_are_invariant_across_threads_and_layouts(rng):
    x = torch.randn(24, 30, generator=rng)  # no NaN: the layouts helper compares with torch.equal

    def compute(t):
        return {f"{m}{i}": f(t, torch.tensor([0.2, 0.5, 0.9]), dim=1, interpolation=m)
                for m in MODES for i, f in enumerate((torch.quantile, torch.nanquantile))}

    assert_invariant(compute, x)


@pytest.mark.parametrize("context", ["grad", "no_grad", "inference_mode"])
def test_quantile_runs_under_grad_no_grad_and_inference_mode(context, rng):
    x = torch.randn(6, 11, generator=rng, dtype=torch.float64, requires_grad=context == "grad")
    q = torch.tensor([0.1, 0.5, 0.95], dtype=torch.float64)
    ctx = {"grad": torch.enable_grad, "no_grad": torch.no_grad, "inference_mode": torch.inference_mode}[context]
    with repmode.enabled(strict=True), ctx():
        outs = [torch.quantile(x, q, dim=1, interpolation=m) for m in MODES] + [torch.nanquantile(x, 0.3)]
        if context == "grad":
            grad = torch.autograd.grad(sum(o.sum() for o in outs), x)[0]
    if context == "grad":
        want_outs = [torch.quantile(x, q, dim=1, interpolation=m) for m in MODES] + [torch.nanquantile(x, 0.3)]
        want = torch.autograd.grad(sum(o.sum() for o in want_outs), x)[0]
        torch.testing.assert_close(grad, want, rtol=1e-14, atol=0)
    else:
        torch.testing.assert_close(outs[0], torch.quantile(x, q, dim=1))
