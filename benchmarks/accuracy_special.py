"""Error of repmode's special functions (gamma and error-function family, csrc/common/math_special.h)
next to native torch's on the same inputs: max error in ulps of the exact value (mpmath) over random
inputs of many magnitudes plus adversarial ones (the zeros of lgamma and digamma, poles, the edges
of erfinv's and ndtri's domains, the branch boundaries of each formula, subnormals), float32 and
float64 (docs/math.md, "Special functions (gamma family)").

    PYTHONPATH=. python benchmarks/accuracy_special.py [--n 2000] [--only lgamma,erfinv]
"""
from __future__ import annotations

import argparse
import math

import mpmath
import torch

import repmode

FUNCS = {
    "lgamma": torch.lgamma, "digamma": torch.digamma, "erfinv": torch.erfinv,
    "polygamma1": lambda x: torch.polygamma(1, x), "polygamma2": lambda x: torch.polygamma(2, x),
    "polygamma3": lambda x: torch.polygamma(3, x), "polygamma4": lambda x: torch.polygamma(4, x),
    "mvlgamma1": lambda x: torch.mvlgamma(x, 1), "mvlgamma3": lambda x: torch.mvlgamma(x, 3),
    "mvlgamma5": lambda x: torch.mvlgamma(x, 5),
    "ndtri": torch.special.ndtri, "log_ndtr": torch.special.log_ndtr, "erfcx": torch.special.erfcx,
    "entr": torch.special.entr, "zeta": torch.special.zeta,
}

LGAMMA_ZEROS = [-2.457024738220800, -2.747682646727412, -3.143580888349980, -3.955294284858597,
                -4.039361839740536, -4.991544640560048, -5.008912930106137, -5.998607480080875,
                -6.001385294453178]
DIGAMMA_ZEROS = [1.461632144968362, -0.504083008264455, -1.573498473162390, -2.610720868444145,
                 -3.635293366436901, -4.653237761743142, -5.667162441556886]


def reference(name, x, q=None):
    v = mpmath.mpf(x)
    pole = v <= 0 and v == mpmath.floor(v)
    if name == "lgamma":
        return None if pole else mpmath.log(abs(mpmath.gamma(v)))
    if name == "digamma":
        return None if pole else mpmath.digamma(v)
    if name.startswith("polygamma"):
        return None if pole else mpmath.polygamma(int(name[-1]), v)
    if name.startswith("mvlgamma"):
        p = int(name[-1])
        return sum(mpmath.log(abs(mpmath.gamma(v - mpmath.mpf(j) / 2))) for j in range(p)) + \
            mpmath.mpf(p * (p - 1)) / 4 * mpmath.log(mpmath.pi)
    if name == "erfinv":
        with mpmath.workprec(int(-math.log2(1 - abs(x))) + 200 if abs(x) < 1 else 200):
            return +mpmath.erfinv(v)
    if name == "ndtri":
        p = min(x, 1 - x)
        if p <= 0:
            return mpmath.inf if x >= 1 else -mpmath.inf
        with mpmath.workprec(int(-math.log2(p)) + 200):
            r = mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * mpmath.mpf(p))
        return +(-r if x < 0.5 else r)
    if name == "log_ndtr":  # (log1p of the upper tail for x > 0, where Phi(x) rounds to 1 at 160 bits)
        return mpmath.log1p(-mpmath.ncdf(-v)) if v > 0 else mpmath.log(mpmath.ncdf(v))
    if name == "erfcx":
        return mpmath.exp(v * v) * mpmath.erfc(v)
    if name == "entr":
        return mpmath.mpf(0) if v == 0 else -v * mpmath.log(v)
    if name == "zeta":  # (mpmath's Hurwitz zeta loses digits at 160 bits for large q)
        with mpmath.workprec(320):
            return +mpmath.zeta(v, mpmath.mpf(q))
    raise KeyError(name)


def inputs(name, dtype, n, seed=26):
    g = torch.Generator().manual_seed(seed)
    u = torch.rand(n, generator=g, dtype=torch.float64)
    lu = torch.rand(n, generator=g, dtype=torch.float64)
    near = (torch.rand(max(n // 100, 8), generator=g, dtype=torch.float64) - 0.5) * 2e-6
    tiny = torch.tensor([2.0 ** -149, 2.0 ** -126, 1e-300, 5e-324], dtype=torch.float64)
    if name == "lgamma":
        x = [u * 60 - 30, torch.pow(10.0, lu * 40 - 20), *(z + near for z in LGAMMA_ZEROS), 1 + near, 2 + near,
             -3 + near, -0.5 + near, tiny, torch.tensor([0.25, 0.5, 0.75, 1.25, 2.75, 12.0, -16.0, -15.99, 1e300])]
    elif name == "digamma":
        x = [u * 60 - 30, torch.pow(10.0, lu * 40 - 20), *(z + near for z in DIGAMMA_ZEROS), -2 + near, tiny,
             torch.tensor([1.0, 2.0, 10.0, 9.99, 1e300])]
    elif name.startswith("polygamma"):
        x = [u * 40 - 15, torch.pow(10.0, lu * 16 - 6), -3 + near, -0.5 + near, -7.5 + near,
             torch.tensor([1e-20, 1e-3, 1e8, 9.999, 10.001, 14.99, 15.0])]
    elif name.startswith("mvlgamma"):
        p = int(name[-1])
        x = [(p - 1) / 2 + 1e-3 + u * 40, (p - 1) / 2 + torch.pow(10.0, lu * 12 - 6)]
    elif name == "erfinv":
        x = [u * 2 - 1, 1 - torch.pow(10.0, -lu * 16), torch.pow(10.0, -lu * 300), 0.625 + near, 0.75 + near,
             -0.9 + near, tiny, torch.tensor([1 - 2.0 ** -24, 1 - 2.0 ** -53, -(1 - 2.0 ** -53)])]
    elif name == "ndtri":
        x = [u, torch.pow(10.0, -lu * 320), 1 - torch.pow(10.0, -lu * 16), 0.25 + near, 0.75 + near,
             0.5 + near, 0.125 + near, tiny, torch.tensor([1 - 2.0 ** -53, 1 - 2.0 ** -24])]
    elif name == "log_ndtr":
        x = [u * 60 - 50, -torch.pow(10.0, lu * 20), u * 8 - 4, -1 + near, torch.tensor([8.0, 9.5, 12.0, 38.0])]
    elif name == "erfcx":
        x = [u * 57 - 27, torch.pow(10.0, lu * 40 - 20), 0.5 + near, 28 + near, -near.abs(), tiny,
             torch.tensor([-26.6, 1e300])]
    elif name == "entr":
        x = [torch.pow(10.0, lu * 600 - 300), u * 4, 1 + near, tiny, torch.tensor([math.e, math.exp(-1)])]
    elif name == "zeta":
        s = torch.cat([1 + torch.pow(10.0, lu * 4 - 3), u * 60 + 1, torch.tensor([2.0, 3.0, 4.0, 5.0] * 4)])
        q = torch.cat([torch.pow(10.0, u * 8 - 4), torch.pow(10.0, lu * 4 - 2), torch.tensor(
            [0.5, 9.99, 10.0, 60.0, -0.5, -2.5, -7.25, -30.5, 1e-5, 1e5, 3.0, 1.0, -1.5, -0.25, 100.0, 11.5])])
        ok = torch.isfinite(s.to(dtype)) & torch.isfinite(q.to(dtype))
        return s.to(dtype)[ok], q.to(dtype)[ok]
    else:
        raise KeyError(name)
    x = torch.cat(x).to(dtype)
    return x[torch.isfinite(x)], None


def ulp_of(ref, dtype) -> float:
    a = abs(float(ref))
    if dtype == torch.float32:
        return 2.0 ** (max(math.floor(math.log2(a)), -126) - 23) if a > 0 else 2.0 ** -149
    return 2.0 ** (max(math.floor(math.log2(a)), -1022) - 52) if a > 0 else 2.0 ** -1074


def errors(name, x, q, results, dtype):
    """For each tensor of ``results``: the max error in ulps of the result dtype (an infinite or NaN
    result: 0 when it equals the exact value rounded to the dtype, else inf) and the input where it
    occurs. The exact values are computed once per input."""
    worst = [(0.0, None) for _ in results]
    with mpmath.workprec(160):
        qs = q.tolist() if q is not None else [None] * len(x)
        columns = [r.double().tolist() for r in results]
        for i, (xv, qv) in enumerate(zip(x.tolist(), qs)):
            ref = reference(name, xv, qv)
            if ref is None or isinstance(ref, mpmath.mpc):
                continue
            rounded = float(ref) if dtype == torch.float64 else float(torch.tensor(float(ref)).float())
            for k, col in enumerate(columns):
                gv = col[i]
                if not math.isfinite(rounded) or not math.isfinite(gv):
                    err = 0.0 if rounded == gv else math.inf
                else:
                    err = float(abs(mpmath.mpf(gv) - ref)) / ulp_of(ref, dtype)
                if err > worst[k][0]:
                    worst[k] = (err, xv if qv is None else (xv, qv))
    return worst


def _fmt(v: float) -> str:
    return f"{v:.3f}" if v < 1e4 else f"{v:.2e}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="random inputs per function and dtype")
    ap.add_argument("--only", default="", help="comma-separated function names")
    args = ap.parse_args()
    names = [n for n in FUNCS if not args.only or n in args.only.split(",")]
    print("| function | float32 repmode | float32 native | float64 repmode | float64 native | inputs |")
    print("|---|---|---|---|---|---|")
    for name in names:
        cells = []
        count = 0
        for dtype in (torch.float32, torch.float64):
            x, q = inputs(name, dtype, args.n)
            operands = (x, q) if q is not None else (x,)
            with repmode.enabled():
                ours = FUNCS[name](*operands)
            native = FUNCS[name](*operands)
            (eo, _), (en, _) = errors(name, x, q, [ours, native], dtype)
            cells += [_fmt(eo), _fmt(en)]
            count = len(x)
        print(f"| {name} | " + " | ".join(cells) + f" | {count} |", flush=True)


if __name__ == "__main__":
    main()
