"""Correctly rounded float32 references for the math tests: torch's float64 value decides, unless
it lies within 2^-40 of a float32 rounding boundary (relative), where mpmath at 200 bits decides.
(torch's float64 functions are accurate to a few float64 ulps, about 2^-51, so outside that band
the float64 value and the exact value round to the same float32.)"""
from __future__ import annotations

import math

import mpmath
import torch

_MP = {
    "exp": mpmath.exp, "log": mpmath.log, "exp2": lambda x: mpmath.power(2, x), "expm1": mpmath.expm1,
    "log2": lambda x: mpmath.log(x, 2), "log1p": mpmath.log1p, "sin": mpmath.sin, "cos": mpmath.cos,
    "tanh": mpmath.tanh, "sigmoid": lambda x: 1 / (1 + mpmath.exp(-x)), "erf": mpmath.erf, "erfc": mpmath.erfc,
    "rsqrt": lambda x: 1 / mpmath.sqrt(x), "sqrt": mpmath.sqrt, "reciprocal": lambda x: 1 / x,
    "pow": mpmath.power,
    # the math long tail (csrc/common/math_atan.h, math_tail.h)
    "atan": mpmath.atan, "asin": mpmath.asin, "acos": mpmath.acos, "atan2": mpmath.atan2, "sinh": mpmath.sinh,
    "cosh": mpmath.cosh, "tan": mpmath.tan, "log10": mpmath.log10, "asinh": mpmath.asinh, "acosh": mpmath.acosh,
    "atanh": mpmath.atanh,
}

_F64 = {
    "exp": torch.exp, "log": torch.log, "exp2": torch.exp2, "expm1": torch.expm1, "log2": torch.log2,
    "log1p": torch.log1p, "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "erf": torch.erf, "erfc": torch.erfc, "rsqrt": torch.rsqrt, "sqrt": torch.sqrt,
    "reciprocal": torch.reciprocal, "pow": torch.pow,
    "atan": torch.atan, "asin": torch.asin, "acos": torch.acos, "atan2": torch.atan2, "sinh": torch.sinh,
    "cosh": torch.cosh, "tan": torch.tan, "log10": torch.log10, "asinh": torch.asinh, "acosh": torch.acosh,
    "atanh": torch.atanh,
}

F32_MAX = float(torch.finfo(torch.float32).max)


def _f32_neighbours(v: float) -> list[float]:
    """float32 values around the double v."""
    f = torch.tensor([v], dtype=torch.float64).float()
    lo = torch.nextafter(f, torch.tensor([-math.inf]))
    hi = torch.nextafter(f, torch.tensor([math.inf]))
    return [float(lo), float(f), float(hi)]


def _round_exact(value) -> float:
    """The float32 nearest to the mpmath value (ties to even), as a Python float."""
    if mpmath.isnan(value):
        return math.nan
    if mpmath.isinf(value):
        return float(value)
    # Beyond the overflow threshold (the midpoint between FLT_MAX and 2^128) -> inf.
    if abs(value) >= mpmath.mpf(2) ** 128 - mpmath.mpf(2) ** 103:
        return math.copysign(math.inf, float(value))
    best = None
    for c in _f32_neighbours(float(value)):
        if math.isinf(c):
            continue
        d = abs(value - mpmath.mpf(c))
        if best is None or d < best[0] or (d == best[0] and _even(c)):
            best = (d, c)
    return best[1]


def _even(c: float) -> bool:
    return int(torch.tensor([c], dtype=torch.float32).view(torch.int32)) % 2 == 0


def _near_boundary(r: torch.Tensor) -> torch.Tensor:
    """float64 values within 2^-40 (relative) of a float32 rounding boundary."""
    a = r.abs()
    finite = torch.isfinite(a) & (a > 0)
    _, e = torch.frexp(torch.where(finite, a, torch.ones_like(a)))  # a = m * 2^e, m in [0.5, 1)
    spacing = torch.ldexp(torch.ones_like(a), (e - 1).clamp(min=-126) - 23)
    t = a / spacing
    frac = t - torch.floor(t)
    return finite & ((frac - 0.5).abs() * spacing <= a * 2.0 ** -40)


def reference_f32(name: str, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
    """Correctly rounded float32 name(x) (or pow(x, y)); NaN results are NaN."""
    args64 = (x.double(),) if y is None else (x.double(), y.double())
    r = _F64[name](*args64)
    out = r.float()
    hard = _near_boundary(r).nonzero().flatten().tolist()
    with mpmath.workprec(200):
        for i in hard:
            mp_args = [mpmath.mpf(float(t[i])) for t in args64]
            out[i] = _round_exact(_MP[name](*mp_args))
    return out
