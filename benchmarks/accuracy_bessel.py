"""Error of repmode's Bessel functions and orthogonal polynomials next to native torch's (docs/math.md,
"Bessel functions and orthogonal polynomials"): max error in ulps of the exact value (mpmath) over
random inputs of many magnitudes plus adversarial ones (small and subnormal arguments, the
expansion boundaries 2 and 8, large arguments where the asymptotic expansions take over, the
overflow and underflow edges; for the polynomials |x| near 1, the switch to the trigonometric
forms, large degrees), float32 and float64.

    PYTHONPATH=. python benchmarks/accuracy_bessel.py [--n 2000] [--only NAME]

The reference is mpmath at 200 bits (the polynomials: their recurrences evaluated exactly enough
at 400 bits). An error is counted where the exact value is finite and nonzero in the dtype's range
and the result is finite; results of the wrong special kind (NaN/inf where the value is finite)
are counted separately. Prints one Markdown row per function and dtype.
"""
from __future__ import annotations

import argparse
import functools
import math

import mpmath
import torch

import repmode

S = torch.special


@functools.lru_cache(maxsize=None)
def _besselk(order: int, x: float):
    """mpmath's K (up to a second per argument between ~10 and ~60): each argument once."""
    return mpmath.besselk(order, mpmath.mpf(x))


UNARY = {
    "i0": (torch.i0, lambda x: mpmath.besseli(0, x)),
    "special.i0e": (S.i0e, lambda x: mpmath.besseli(0, x) * mpmath.exp(-abs(x))),
    "special.i1": (S.i1, lambda x: mpmath.besseli(1, x)),
    "special.i1e": (S.i1e, lambda x: mpmath.besseli(1, x) * mpmath.exp(-abs(x))),
    "special.modified_bessel_i0": (S.modified_bessel_i0, lambda x: mpmath.besseli(0, x)),
    "special.modified_bessel_i1": (S.modified_bessel_i1, lambda x: mpmath.besseli(1, x)),
    "special.modified_bessel_k0": (S.modified_bessel_k0, lambda x: _besselk(0, float(x))),
    "special.modified_bessel_k1": (S.modified_bessel_k1, lambda x: _besselk(1, float(x))),
    "special.scaled_modified_bessel_k0": (S.scaled_modified_bessel_k0, lambda x: _besselk(0, float(x)) * mpmath.exp(x)),
    "special.scaled_modified_bessel_k1": (S.scaled_modified_bessel_k1, lambda x: _besselk(1, float(x)) * mpmath.exp(x)),
    "special.spherical_bessel_j0": (S.spherical_bessel_j0, lambda x: mpmath.sin(x) / x if x != 0 else mpmath.mpf(1)),
    "special.bessel_j0": (S.bessel_j0, lambda x: mpmath.besselj(0, x)),
    "special.bessel_j1": (S.bessel_j1, lambda x: mpmath.besselj(1, x)),
    "special.bessel_y0": (S.bessel_y0, lambda x: mpmath.bessely(0, x)),
    "special.bessel_y1": (S.bessel_y1, lambda x: mpmath.bessely(1, x)),
}
POSITIVE = {"special.bessel_y0", "special.bessel_y1", "special.modified_bessel_k0", "special.modified_bessel_k1",
            "special.scaled_modified_bessel_k0", "special.scaled_modified_bessel_k1"}


def _rec(n, x, p0, p1, step):
    """The polynomial of degree n from its three-term recurrence, exactly enough (400 bits)."""
    if n == 0:
        return mpmath.mpf(p0)
    p, q = mpmath.mpf(p0), p1
    for k in range(1, n):
        p, q = q, step(k, p, q)
    return q


def _cheb(first):
    def f(n, y):
        return _rec(n, y, 1, first(y), lambda k, p, q: 2 * y * q - p)
    return f


_T, _U = _cheb(lambda y: y), _cheb(lambda y: 2 * y)
_V, _W = _cheb(lambda y: 2 * y - 1), _cheb(lambda y: 2 * y + 1)
POLY = {
    "special.chebyshev_polynomial_t": (S.chebyshev_polynomial_t, _T, False),
    "special.chebyshev_polynomial_u": (S.chebyshev_polynomial_u, _U, False),
    "special.chebyshev_polynomial_v": (S.chebyshev_polynomial_v, _V, False),
    "special.chebyshev_polynomial_w": (S.chebyshev_polynomial_w, _W, False),
    "special.shifted_chebyshev_polynomial_t": (S.shifted_chebyshev_polynomial_t, lambda n, x: _T(n, 2 * x - 1), True),
    "special.shifted_chebyshev_polynomial_u": (S.shifted_chebyshev_polynomial_u, lambda n, x: _U(n, 2 * x - 1), True),
    "special.shifted_chebyshev_polynomial_v": (S.shifted_chebyshev_polynomial_v, lambda n, x: _V(n, 2 * x - 1), True),
    "special.shifted_chebyshev_polynomial_w": (S.shifted_chebyshev_polynomial_w, lambda n, x: _W(n, 2 * x - 1), True),
    "special.hermite_polynomial_h": (S.hermite_polynomial_h,
                                     lambda n, x: _rec(n, x, 1, 2 * x, lambda k, p, q: 2 * x * q - 2 * k * p), False),
    "special.hermite_polynomial_he": (S.hermite_polynomial_he,
                                      lambda n, x: _rec(n, x, 1, x, lambda k, p, q: x * q - k * p), False),
    "special.laguerre_polynomial_l": (
        S.laguerre_polynomial_l,
        lambda n, x: _rec(n, x, 1, 1 - x, lambda k, p, q: ((2 * k + 1 - x) * q - k * p) / (k + 1)), False),
    "special.legendre_polynomial_p": (
        S.legendre_polynomial_p,
        lambda n, x: _rec(n, x, 1, x, lambda k, p, q: ((2 * k + 1) * x * q - k * p) / (k + 1)), False),
}


def unary_inputs(n, dtype, seed, positive):
    g = torch.Generator().manual_seed(seed)
    e = torch.randint(-40, 30, (n,), generator=g).to(torch.float64)
    x = torch.rand(n, generator=g, dtype=torch.float64) * torch.exp2(e / 4)  # |x| up to ~180
    big = torch.rand(n // 4, generator=g, dtype=torch.float64) * 750
    tiny = torch.tensor([2.0 ** -149, 2.0 ** -140, 1e-30, 1e-10, 2.0 ** -1074, 1e-300], dtype=torch.float64)
    edges = torch.tensor([2.0, 8.0, 0.5, 1.0, 5.0, 88.7, 91.9, 92.0, 103.0, 104.0, 700.0, 709.8, 713.9, 714.0, 745.0,
                          2.404825557695773, 5.520078110286311, 8.653727912911013, 3.8317059702075125,
                          7.015586669815619, 10.173468135062722, 1e5, 1e10], dtype=torch.float64)
    near = torch.cat([edges * (1 + k * 2.0 ** -20) for k in (-2, -1, 1, 2)])
    x = torch.cat([tiny, edges, near, x, big]).to(dtype)
    x = x[(x != 0)]
    if not positive:
        sign = torch.randint(0, 2, x.shape, generator=g) * 2 - 1
        x = x * sign.to(dtype)
    return x


def poly_inputs(n, dtype, seed, shifted):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, generator=g, dtype=torch.float64) * 2 - 1  # (-1, 1)
    near1 = 1 - torch.rand(n // 8, generator=g, dtype=torch.float64) * 2.0 ** -20
    signs = 1 - 2 * (torch.rand(n // 8, generator=g) < .5).to(torch.float64)
    outside = (torch.rand(n // 8, generator=g, dtype=torch.float64) * 2 + 1) * signs
    x = torch.cat([x, near1, -near1, outside])
    if shifted:
        x = (x + 1) / 2
    degrees = torch.randint(0, 16, x.shape, generator=g)
    degrees[::5] = torch.randint(16, 120, degrees[::5].shape, generator=g)
    return x.to(dtype), degrees.to(dtype)


def ulps(got: float, exact, dtype) -> float:
    if mpmath.isnan(exact) or mpmath.isinf(exact):
        return 0.0
    e = float(exact)
    if math.isinf(e):
        return 0.0
    if dtype == torch.float32:
        fe = float(torch.tensor(e, dtype=torch.float32))
        if math.isinf(fe):
            return 0.0
        exp = math.frexp(e)[1] if e != 0 else -148
        ulp = max(2.0 ** (exp - 24), 2.0 ** -149)
    else:
        ulp = math.ulp(e) if e != 0 else 5e-324
    if math.isnan(got) or math.isinf(got):
        return math.inf
    return float(abs(mpmath.mpf(got) - exact) / ulp)


def measure(name, dtype, n):
    if name in UNARY:
        fn, ref = UNARY[name]
        x = unary_inputs(n, dtype, 26, name in POSITIVE)
        args = (x,)
        exact = [ref(mpmath.mpf(float(v))) for v in x.tolist()]
    else:
        fn, ref, shifted = POLY[name]
        x, deg = poly_inputs(n, dtype, 26, shifted)
        args = (x, deg)
        with mpmath.workprec(400):
            exact = [+ref(int(d), mpmath.mpf(float(v))) for v, d in zip(x.tolist(), deg.tolist())]
    native = fn(*args)
    with repmode.enabled():
        mine = fn(*args)
    rep = [ulps(g, e, dtype) for g, e in zip(mine.tolist(), exact)]
    nat = [ulps(g, e, dtype) for g, e in zip(native.tolist(), exact)]
    def worst(us):
        return max([0.0] + [u for u in us if not math.isinf(u)])
    return worst(rep), worst(nat), len(rep), sum(math.isinf(u) for u in rep), sum(math.isinf(u) for u in nat)


def _fmt(u):
    return "inf" if math.isinf(u) else (f"{u:.2f}" if u < 1e6 else f"{u:.2e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--only", action="append", default=[])
    a = ap.parse_args()
    mpmath.mp.prec = 200
    print("| function | dtype | inputs | repmode max ulp | native max ulp | wrong-kind results (repmode / native) |")
    print("|---|---|---|---|---|---|")
    for name in list(UNARY) + list(POLY):
        if a.only and not any(o in name for o in a.only):
            continue
        for dtype in (torch.float32, torch.float64):
            r, nat, count, rbad, nbad = measure(name, dtype, a.n)
            print(f"| {name} | {str(dtype).replace('torch.', '')} | {count} | {_fmt(r)} | {_fmt(nat)} | "
                  f"{rbad} / {nbad} |", flush=True)


if __name__ == "__main__":
    main()
