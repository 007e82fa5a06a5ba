"""linspace and logspace (docs/semantics.md "Integer arithmetic and arange"): one double-double
formula per element rounded once, never an accumulated step; compared with exact rational (and
mpmath) references next to native torch, whose vectorized path adds the step lane by lane."""
from __future__ import annotations

from fractions import Fraction

import pytest
import torch
from support import assert_bitwise_equal, num_threads

import repmode

CASES = [(0, 1, 11), (-3.3, 7.9, 1000), (1e-3, 3, 257), (5, 5, 3), (2, -7, 9), (0, 100, 7), (-1e4, 3.7, 4099),
         (0.1, 0.3, 3), (1e-30, 1e30, 65)]
FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


def _max_error(values: torch.Tensor, exact: list[Fraction]) -> Fraction:
    return max(abs(Fraction(v) - x) for v, x in zip(values.double().tolist(), exact))


def _exact(start, end, steps) -> list[Fraction]:
    s, e = Fraction(start), Fraction(end)
    return [s + (e - s) * i / (steps - 1) for i in range(steps)]


def _near(exact: list[Fraction], dtype) -> torch.Tensor:
    """The exact values rounded once to dtype (via float64, exact enough for the check below)."""
    return torch.tensor([float(x) for x in exact], dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("case,dtype", [(c, d) for c in CASES for d in FLOATS
                                        if not (d == torch.float16 and max(abs(c[0]), abs(c[1])) > 6e4)])
def test_linspace_is_never_less_accurate_than_native(case, dtype):
    native = torch.linspace(*case, dtype=dtype)
    with repmode.enabled():
        got = torch.linspace(*case, dtype=dtype)
    exact = _exact(*case)
    assert got.shape == native.shape and got.dtype == dtype
    assert _max_error(got, exact) <= _max_error(native, exact)
    assert got[0] == native[0] and got[-1] == native[-1]  # both ends exact
    if dtype == torch.float32:  # within one float32 rounding of the exact value
        near = _near(exact, dtype)
        assert ((got.double() - near.double()).abs() <= near.double().abs() * 2**-23 + 1e-45).all()


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.uint8])
def test_integer_linspace_equals_native(dtype):
    for case in [(0, 10, 7), (3.7, 100.2, 13), (0, 255, 256), (200, 3, 11)]:
        want = torch.linspace(*case, dtype=dtype)
        with repmode.enabled():
            got = torch.linspace(*case, dtype=dtype)
        assert_bitwise_equal(got, want, str(case))


def test_logspace_is_never_less_accurate_than_native():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 200
    for (start, end, steps), base in [((0, 1, 11), 10), ((-3.3, 7.9, 100), 10), ((1e-3, 3, 257), 10),
                                      ((-20, 30.5, 333), 2.5), ((0, 5, 6), 2)]:
        exact = [mpmath.power(base, mpmath.mpf(start) + (mpmath.mpf(end) - mpmath.mpf(start)) * i / (steps - 1))
                 for i in range(steps)]
        for dtype in (torch.float32, torch.float64):
            native = torch.logspace(start, end, steps, base=base, dtype=dtype)
            with repmode.enabled():
                got = torch.logspace(start, end, steps, base=base, dtype=dtype)

            def rel(t):
                return max(abs((mpmath.mpf(v) - x) / x) for v, x in zip(t.double().tolist(), exact))
            assert rel(got) <= rel(native) * 1.0000001, (start, end, steps, base, dtype)
    want = torch.logspace(0, 6, 7, dtype=torch.int64)
    with repmode.enabled():
        assert_bitwise_equal(torch.logspace(0, 6, 7, dtype=torch.int64), want)


def test_overloads_out_forms_and_threads():
    with num_threads(1), repmode.enabled():
        one = torch.linspace(-1.7, 9.1, 5001)
    with num_threads(2), repmode.enabled():
        two = torch.linspace(-1.7, 9.1, 5001)
        # a 0-dim tensor gives its own value (here float64, so the same number)
        tensors = torch.linspace(torch.tensor(-1.7, dtype=torch.float64), torch.tensor(9.1, dtype=torch.float64), 5001)
        mixed = torch.linspace(torch.tensor(-1.7, dtype=torch.float64), 9.1, 5001)
        out = torch.empty(3)
        torch.linspace(-1.7, 9.1, 5001, out=out)
        log_out = torch.empty(0, dtype=torch.float64)
        torch.logspace(0, 2, 5, out=log_out)
        ar = torch.empty(0)
        torch.arange(0.0, 1.0, 0.125, out=ar)
        empty, single = torch.linspace(0, 1, 0), torch.linspace(2.5, 7, 1)
    assert_bitwise_equal(one, two, "1 vs 2 threads")
    for name, t in (("Tensor overloads", tensors), ("mixed", mixed), ("out=", out)):
        assert_bitwise_equal(t, one, name)
    assert log_out.dtype == torch.float64 and log_out.tolist() == [1.0, 10 ** 0.5, 10.0, 10 ** 1.5, 100.0]
    assert ar.tolist() == [i / 8 for i in range(8)]
    assert empty.shape == (0,) and single.tolist() == [2.5]
    with repmode.enabled():
        with pytest.raises(RuntimeError, match="non-negative"):
            torch.linspace(0, 1, -1)
        with pytest.raises(repmode.UnsupportedOpError, match="complex"):
            torch.linspace(0, 1, 5, dtype=torch.complex64)
