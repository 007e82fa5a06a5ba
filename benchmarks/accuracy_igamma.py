"""Error of repmode's igamma (P(a, x), special.gammainc), igammac (Q(a, x), special.gammaincc) and
special.airy_ai (csrc/common/math_igamma.h) next to native torch's on the same inputs: max error in
ulps of the exact value (mpmath) over random inputs of many magnitudes plus adversarial ones (torch's
region boundaries a = 20, 200, |x - a| = 0.3 a and 4.5 sqrt(a), x = 0.5, 1, 1.1; Temme's band at
a up to 10^12; tiny a and x; far tails; the zeros of Ai and Cephes' switch points +-2.09, 8.32),
float32 and float64 (docs/math.md, "Incomplete gamma and Airy Ai").

    PYTHONPATH=. python benchmarks/accuracy_igamma.py [--n 400] [--only igamma,airy_ai] [--bins]

Inputs where mpmath's own evaluation fails (for some large a) are skipped and counted.
--bins also prints the maxima per input class.
"""
from __future__ import annotations

import argparse
import math

import mpmath
import torch

import repmode

FUNCS = {"igamma": torch.igamma, "igammac": torch.igammac, "airy_ai": torch.special.airy_ai}


def igamma_inputs(n, seed=26):
    """(a, x) float64 pairs by class (the class names are the --bins rows)."""
    g = torch.Generator().manual_seed(seed)

    def u(k=n):
        return torch.rand(k, generator=g, dtype=torch.float64)

    classes = {}
    a = torch.pow(10.0, u() * 8 - 4)
    classes["random a in 1e-4..1e4, x/a in 0.1..10"] = (a, a * torch.pow(10.0, u() * 2 - 1))
    a = torch.pow(10.0, u() * 2.5)
    classes["a in 1..300, x/a in 0.6..1.4"] = (a, a * (0.6 + 0.8 * u()))
    a = torch.pow(10.0, u() * 8 + 2)
    classes["a in 1e2..1e10, x = a + k sqrt(a), |k| < 40"] = (a, a + (u() * 80 - 40) * torch.sqrt(a))
    a = torch.pow(10.0, u() * 12 - 12)
    classes["a in 1e-12..1, x in 1e-12..10"] = (a, torch.pow(10.0, u() * 13 - 12))
    a = torch.pow(10.0, u() * 3)
    classes["far tails: x/a in 1e-3..1e-1 and 2..30"] = (
        torch.cat([a, a]), torch.cat([a * torch.pow(10.0, u() * 2 - 3), a * (2 + 28 * u())]))
    ea, ex = [], []
    for a0 in (11.99, 12.0, 12.01, 19.99, 20.0, 20.01, 199.9, 200.0, 200.1, 2000.0, 1e5):
        for r in (0.69, 0.6999, 0.7, 0.7001, 0.71, 0.9, 1.0, 1.0001, 1.1, 1.29, 1.2999, 1.3, 1.3001, 1.31, 2.0):
            ea.append(a0)
            ex.append(a0 * r)
        if a0 > 200:
            for k in (-4.6, -4.5, -4.4, 4.4, 4.5, 4.6):
                ea.append(a0)
                ex.append(a0 + k * math.sqrt(a0))
    for x0 in (0.4999, 0.5, 0.5001, 0.9999, 1.0, 1.0001, 1.0999, 1.1, 1.1001):
        for a0 in (1e-8, 1e-3, 0.1, 0.25, 0.5, 0.577, 0.6, 0.9, 1.0, 1.2, 2.0, 5.0):
            ea.append(a0)
            ex.append(x0)
    classes["region boundaries"] = (torch.tensor(ea, dtype=torch.float64), torch.tensor(ex, dtype=torch.float64))
    return classes


AIRY_ZEROS = [-2.338107410459767, -4.087949444130970, -5.520559828095551, -6.786708090071759,
              -7.944133587120853, -9.022650853340980, -10.04017434155809, -11.00852430373326]


def airy_inputs(n, seed=27):
    g = torch.Generator().manual_seed(seed)

    def u(k=n):
        return torch.rand(k, generator=g, dtype=torch.float64)

    near = torch.cat([(u(8) - 0.5) * 2 * s for s in (1e-3, 1e-6, 1e-9)])
    return {
        "x in -10..10": u() * 20 - 10,
        "x in -1e6..-10": -torch.pow(10.0, u() * 5 + 1),
        "x in 2..110": 2 + u() * 108,
        "switch points -2.09, 2.09, 8.32 +- 1e-3": torch.cat([c + (u(40) - 0.5) * 2e-3
                                                             for c in (-2.09, 2.09, 8.3203353)]),
        "within 1e-3 of the first 8 zeros": torch.cat([z + near for z in AIRY_ZEROS]),
    }


def _gammainc(name, a, x):
    A, X = mpmath.mpf(a), mpmath.mpf(x)
    v = (mpmath.gammainc(A, X, mpmath.inf, regularized=True) if name == "igammac" else
         mpmath.gammainc(A, 0, X, regularized=True))
    return v if isinstance(v, mpmath.mpf) and 0 <= v <= 1 else None


def reference(name, a, x=None):
    """The exact value (mpmath); None where mpmath fails: it gives up or returns complex or
    out-of-range values for some large a, so above a = 10^4 the value must also agree to 2^-120
    with an evaluation at 100 more bits."""
    if name == "airy_ai":
        return mpmath.airyai(mpmath.mpf(a))
    try:
        v = _gammainc(name, a, x)
        if v is None or a <= 1e4:
            return v
        with mpmath.extraprec(100):
            w = _gammainc(name, a, x)
        return v if w is not None and abs(w - v) <= abs(v) * mpmath.mpf(2) ** -120 else None
    except (mpmath.libmp.NoConvergence, ZeroDivisionError, ValueError, RecursionError):
        return None  # (mpmath recurses without end for some a below 1e-10 and x near 1)


def ulp_of(ref, dtype) -> float:
    a = abs(float(ref))
    if dtype == torch.float32:
        return 2.0 ** (max(math.floor(math.log2(a)), -126) - 23) if a > 0 else 2.0 ** -149
    return 2.0 ** (max(math.floor(math.log2(a)), -1022) - 52) if a > 0 else 2.0 ** -1074


def errors(name, a, x, results, dtype):
    """Max error in ulps of the result dtype for each tensor of ``results`` (a NaN or infinite result
    where the exact value is finite: inf), and the number of inputs mpmath could not evaluate."""
    worst = [0.0 for _ in results]
    skipped = 0
    cols = [r.double().tolist() for r in results]
    xs = x.double().tolist() if x is not None else [None] * a.numel()
    with mpmath.workprec(200):
        for i, (av, xv) in enumerate(zip(a.double().tolist(), xs)):
            ref = reference(name, av, xv)
            if ref is None:
                skipped += 1
                continue
            for k, col in enumerate(cols):
                gv = col[i]
                err = float(abs(mpmath.mpf(gv) - ref)) / ulp_of(ref, dtype) if math.isfinite(gv) else math.inf
                worst[k] = max(worst[k], err)
    return worst, skipped


def _fmt(v: float) -> str:
    return f"{v:.3f}" if v < 1e4 else f"{v:.2e}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=400, help="random inputs per class")
    ap.add_argument("--only", default="", help="comma-separated function names")
    ap.add_argument("--bins", action="store_true", help="also print the maxima per input class")
    args = ap.parse_args()
    names = [n for n in FUNCS if not args.only or n in args.only.split(",")]
    print("| function | float32 repmode | float32 native | float64 repmode | float64 native | inputs | skipped |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        classes = airy_inputs(args.n) if name == "airy_ai" else igamma_inputs(args.n)
        total = {}
        rows = []
        for dtype in (torch.float32, torch.float64):
            for cls, operands in classes.items():
                ops = tuple(t.to(dtype) for t in (operands if isinstance(operands, tuple) else (operands,)))
                keep = torch.ones_like(ops[0], dtype=torch.bool)
                for t in ops:
                    keep &= torch.isfinite(t)
                ops = tuple(t[keep] for t in ops)
                with repmode.enabled():
                    ours = FUNCS[name](*ops)
                native = FUNCS[name](*ops)
                (eo, en), skipped = errors(name, ops[0], ops[1] if len(ops) > 1 else None, [ours, native], dtype)
                t = total.setdefault(dtype, [0.0, 0.0, 0, 0])
                t[0], t[1] = max(t[0], eo), max(t[1], en)
                t[2] += ops[0].numel()
                t[3] += skipped
                rows.append((cls, dtype, eo, en))
        f32, f64 = total[torch.float32], total[torch.float64]
        print(f"| {name} | {_fmt(f32[0])} | {_fmt(f32[1])} | {_fmt(f64[0])} | {_fmt(f64[1])} | {f64[2]} | {f64[3]} |",
              flush=True)
        if args.bins:
            for cls, dtype, eo, en in rows:
                print(f"|   {name} {str(dtype)[6:]}: {cls} | repmode {_fmt(eo)} | native {_fmt(en)} |", flush=True)


if __name__ == "__main__":
    main()
