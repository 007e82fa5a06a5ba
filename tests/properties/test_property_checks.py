"""The property suites' own references (tests/support/property_checks.py) against exact rational arithmetic."""
import math
from fractions import Fraction

import pytest
import torch
from support.property_checks import exact_addmm

MAX = torch.finfo(torch.float64).max
TINY = 5e-324  # 2^-1074, the smallest float64 subnormal


def _rounded(q: Fraction) -> float:
    try:
        return float(q)  # int / int: correctly rounded
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def _spread(gen, shape, low, high):
    """Random float64 values over decades low..high (subnormal to near-max)."""
    values = torch.randn(shape, dtype=torch.float64, generator=gen)  # drawn first, then the scales
    return values * 10.0 ** torch.randint(low, high, shape, generator=gen).double()


@pytest.mark.parametrize("beta, alpha", [(1.0, 1.0), (-2.0, -1.5), (0.5, 0.25)])
def test_exact_addmm_is_the_exact_value_rounded_once(beta, alpha):
    gen = torch.Generator().manual_seed(7)
    overflowed = subnormal = 0
    # decades of a, b, t: anywhere, near overflow, then all tiny (subnormal results)
    ranges = ([((-320, 150), (-20, 170), (-320, 300))] * 4 + [((140, 150), (150, 165), (290, 308))] * 2
              + [((-324, -305), (-3, 3), (-324, -308))] * 4)
    for ra, rb, rt in ranges:
        a, b, t = _spread(gen, (2, 3, 4), *ra), _spread(gen, (2, 4, 5), *rb), _spread(gen, (3, 5), *rt)
        got = exact_addmm(t, a, b, beta=beta, alpha=alpha)
        overflowed += int(torch.isinf(got).sum())
        subnormal += int(((got != 0) & (got.abs() < torch.finfo(torch.float64).tiny)).sum())
        assert got.shape == (2, 3, 5) and got.dtype == torch.float64
        for z, i, j in [(z, i, j) for z in range(2) for i in range(3) for j in range(5)]:
            q = Fraction(alpha) * sum(Fraction(a[z, i, l].item()) * Fraction(b[z, l, j].item()) for l in range(4))
            assert got[z, i, j].item() == _rounded(q + Fraction(beta) * Fraction(t[i, j].item()))
    assert overflowed and subnormal  # the draws reach both ends of the range


def test_exact_addmm_where_native_float64_addmm_is_no_reference():
    t = torch.tensor([[0.0015409961082440433]], dtype=torch.float64)
    a, b = torch.tensor([[TINY]], dtype=torch.float64), torch.tensor([[MAX]], dtype=torch.float64)
    # the term 0.25·(2^-1074 · max) ≈ 2.2e-16 counts; native float64 addmm scales 2^-1074 by α first (to 0)
    want = _rounded(Fraction(t.item()) + Fraction(0.25) * Fraction(TINY) * Fraction(MAX))
    assert exact_addmm(t, a, b, beta=1.0, alpha=0.25).item() == want
    assert exact_addmm(t, a, b, beta=1.0, alpha=0.25).item() != t.item()
    # α·max overflows where the product does not: native gives inf·0 = NaN, the exact value is −0
    a, b = torch.tensor([[MAX, 0.0]], dtype=torch.float64), torch.tensor([[0.0], [2.0]], dtype=torch.float64)
    assert exact_addmm(None, a, b, alpha=-1.5).item() == 0.0


def test_exact_addmm_takes_the_ieee_value_where_an_operand_is_not_finite():
    one = torch.ones(1, 1, dtype=torch.float64)
    assert math.isnan(exact_addmm(None, torch.tensor([[math.inf, 0.0]], dtype=torch.float64),
                                  torch.tensor([[0.0], [2.0]], dtype=torch.float64)).item())  # inf·0
    assert exact_addmm(None, torch.tensor([[math.inf, 1.0]], dtype=torch.float64),
                       torch.tensor([[1.0], [2.0]], dtype=torch.float64), alpha=-1.5).item() == -math.inf
    assert math.isnan(exact_addmm(one * math.nan, one, one, beta=1.0).item())
    assert exact_addmm(one * math.nan, one, one * 3, beta=0.0, alpha=2.0).item() == 6.0  # β = 0 ignores t


def test_exact_addmm_empty_shapes():
    assert exact_addmm(None, torch.zeros(0, 3), torch.zeros(3, 2)).shape == (0, 2)
    assert exact_addmm(None, torch.zeros(0, 2, 3), torch.zeros(0, 3, 2)).shape == (0, 2, 2)
    t = torch.full((2,), 3.0)
    assert torch.equal(exact_addmm(t, torch.zeros(2, 0), torch.zeros(0, 2), beta=0.5),
                       torch.full((2, 2), 1.5, dtype=torch.float64))
