"""Error of repmode's "More elementwise functions" next to native torch's (docs/math.md,
"Exact operations and functions built on the routines"): max error in ulps of the exact value
over random inputs of many magnitudes and all pairs of special values.

    PYTHONPATH=. python benchmarks/accuracy_mathtail.py [--n 20000] [--n64 3000]

float32 results are measured against a float64 evaluation (whose own error, < 2^-50 relative, is
far below the float32 half-ulp), float64 results against mpmath at 160 bits. Exact ops are not
listed: they are checked bit for bit (tests/families/mathtail/test_exact_ops.py).
"""
from __future__ import annotations

import argparse
import math

import mpmath
import torch

import repmode

mpmath.mp.prec = 160


def inputs(n, dtype, seed, positive=False):
    g = torch.Generator().manual_seed(seed)
    e = torch.randint(-30, 30, (n,), generator=g).to(torch.float64)
    x = torch.randn(n, generator=g, dtype=torch.float64) * torch.exp2(e / 3)
    specials = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-30, -1e-30, 30.0, -30.0, 88.0, -100.0],
                            dtype=torch.float64)
    x = torch.cat([specials, x])
    return (x.abs() if positive else x).to(dtype)


def _fmt(ulps: float) -> str:
    return f"{ulps:.3f}" if ulps < 1e6 else f"{ulps:.1e}"


def _float(v) -> float:
    return math.nan if v is None else float(v)


def ulp_err32(got, exact64):
    e = exact64
    finite = torch.isfinite(e.float()) & torch.isfinite(got)
    expo = torch.frexp(e.float())[1].to(torch.float64)
    ulp = torch.clamp(torch.ldexp(torch.ones_like(e), expo - 24), min=2.0 ** -149)
    return float(torch.where(finite, (got.double() - e).abs() / ulp, torch.zeros_like(e)).max())


def ulp_err64(got, exact):
    worst = 0.0
    for g, e in zip(got.tolist(), exact):
        if e is None or math.isnan(g) or math.isinf(g) or mpmath.isinf(e):
            continue
        u = math.ulp(float(e)) if e != 0 else 5e-324
        worst = max(worst, float(abs(mpmath.mpf(g) - e) / u))
    return worst


def _guard(f):
    def g(*xs):
        if any(mpmath.isnan(x) or mpmath.isinf(x) for x in xs):
            return None
        try:
            return f(*xs)
        except (ValueError, ZeroDivisionError):
            return None
    return g


def cases(n):
    g = torch.Generator().manual_seed(1)
    p = torch.cat([torch.rand(n, generator=g, dtype=torch.float64),
                   0.5 + (torch.rand(n // 4, generator=g, dtype=torch.float64) - 0.5) * 1e-3])
    table = {
        "logaddexp": (torch.logaddexp, 2, False, lambda a, b: mpmath.log(mpmath.exp(a) + mpmath.exp(b))),
        "logaddexp2": (torch.logaddexp2, 2, False, lambda a, b: mpmath.log(mpmath.power(2, a) + mpmath.power(2, b), 2)),
        "hypot": (torch.hypot, 2, False, lambda a, b: mpmath.sqrt(a * a + b * b)),
        "xlog1py": (torch.special.xlog1py, 2, True,
                    lambda a, b: mpmath.mpf(0) if a == 0 else a * mpmath.log1p(b)),
        "sinc": (torch.sinc, 1, False, lambda a: mpmath.mpf(1) if a == 0 else mpmath.sinpi(a) / (mpmath.pi * a)),
        "logit": (torch.logit, p, None, lambda a: mpmath.log(a / (1 - a))),
    }
    return {k: (fn, arity, positive, _guard(mp)) for k, (fn, arity, positive, mp) in table.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--n64", type=int, default=3000)
    args = parser.parse_args()
    print("| function | float32 repmode | float32 native | float64 repmode | float64 native |")
    print("|---|---|---|---|---|")
    for name, (fn, arity, positive, mp) in cases(args.n).items():
        row = [name]
        for dtype, n in ((torch.float32, args.n), (torch.float64, args.n64)):
            if isinstance(arity, torch.Tensor):
                xs = (arity[: n + n // 4].to(dtype),)
            else:
                xs = tuple(inputs(n, dtype, seed=k + 3, positive=positive and k == 1) for k in range(arity))
            with repmode.enabled():
                ours = fn(*xs)
            native = fn(*xs)
            if dtype == torch.float32:  # the mpmath value rounded to float64 (2^-53 relative)
                exact = torch.tensor([_float(mp(*(mpmath.mpf(v) for v in vals))) for vals in zip(*(x.tolist()
                                                                                                  for x in xs))],
                                     dtype=torch.float64)
                row += [_fmt(ulp_err32(ours, exact)), _fmt(ulp_err32(native, exact))]
            else:
                exact = [mp(*(mpmath.mpf(v) for v in vals)) for vals in zip(*(x.tolist() for x in xs))]
                row += [_fmt(ulp_err64(ours, exact)), _fmt(ulp_err64(native, exact))]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
