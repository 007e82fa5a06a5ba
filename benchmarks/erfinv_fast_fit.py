"""Fits the approximations of the float32 erfinv fast path (csrc/cpu/vec_special.cpp,
kErfinvFast*): cheap double polynomials f(x) of the float32 definition
D(x) = special_erfinv_for_float(x) (csrc/common/math_special.h), used by the AVX2/AVX-512 lanes as
Ziv's first step (a lane whose f is not provably on one side of a float32 rounding boundary goes
to the scalar D). Their bits never reach a result: only the bound on |f - D| / D matters, and that
bound is measured on every float32 input by csrc/verify/check_erfinv_fast.cpp, not taken from
here. This script prints the tables (Chebyshev interpolation by mpmath's chebyfit, then each
coefficient rounded to the nearest double) and the fit's own relative error estimate against
mpmath's erfinv at 200 bits.

    python benchmarks/erfinv_fast_fit.py

Pieces (a = |x|, float32):
  0 < a <= 3/4          a g(a^2), g(z) = erfinv(sqrt z)/sqrt z: 16 coefficients in z on
                        [0, 9/16], evaluated as two Horner chains in z^2 (even / odd)
  3/4 < a <= 7/8, 7/8 < a <= 15/16, 15/16 < a <= X1
                        P(a - c), P fitted to erfinv(a) on the piece (widened by 2^-30 each side),
                        centre c
  X1 < a <= X2, X2 < a < 1
                        P(s - c), s = sqrt(w), w = -log((1 - a)(1 + a)) = -log(y (2 - y)),
                        y = 1 - a (exact), P fitted to erfinv(sqrt(1 - exp(-s^2))) on the piece's
                        s interval (widened by 2^-20 each side), centre c
"""
from __future__ import annotations

import struct

import mpmath as mp

mp.mp.prec = 200

X1 = 0.96  # rounded to float32 below
X2 = 0.9995
X_PIECES = ((0.75, 0.875, 15), (0.875, 0.9375, 15), (0.9375, X1, 12))  # (a_lo, a_hi, coefficients)
S_PIECES = ((X1, X2, 12), (X2, None, 13))  # (a_lo, a_hi (None: 1 - 2^-24), coefficients)
SMALL_N = 16


def f32(v: float) -> float:
    return struct.unpack("f", struct.pack("f", v))[0]


def g(z):
    if z == 0:
        return mp.sqrt(mp.pi) / 2
    a = mp.sqrt(z)
    return mp.erfinv(a) / a


def big(s):
    return mp.erfinv(mp.sqrt(-mp.expm1(-s * s)))


def s_of(a) -> mp.mpf:
    a = mp.mpf(a)
    return mp.sqrt(-mp.log((1 - a) * (1 + a)))


def fit(f, lo, hi, n, centre):
    coef = mp.chebyfit(lambda u: f(u + centre), [lo - centre, hi - centre], n)
    cd = [float(c) for c in coef]
    worst = mp.mpf(0)
    for i in range(801):
        u = lo - centre + (hi - lo) * mp.mpf(i) / 800
        p = mp.mpf(0)
        for c in cd:
            p = p * u + c
        v = f(u + centre)
        worst = max(worst, abs(p - v) / abs(v))
    return cd, worst


def show(name, values, per=4):
    print(f"// {name} ({len(values)}, highest degree first)")
    for i in range(0, len(values), per):
        print("      " + ", ".join(v.hex() for v in values[i:i + per]) + ",")


def main() -> None:
    cd, err = fit(g, mp.mpf(0), mp.mpf(9) / 16, SMALL_N, mp.mpf(0))
    print(f"// small: 0 < a <= 3/4, g(z) on [0, 9/16], fit error 2^{float(mp.log(err, 2)):.1f}")
    show("kErfinvFastSmall", cd)
    for k, (alo, ahi, n) in enumerate(X_PIECES):
        lo, hi = mp.mpf(f32(alo)) - mp.mpf(2) ** -30, mp.mpf(f32(ahi)) + mp.mpf(2) ** -30
        centre = float((lo + hi) / 2)
        cd, err = fit(mp.erfinv, lo, hi, n, mp.mpf(centre))
        print(f"// piece {k + 2}: {f32(alo)!r} < a <= {f32(ahi)!r} ({float.hex(f32(ahi))}), centre {centre.hex()}, "
              f"fit error 2^{float(mp.log(err, 2)):.1f}")
        show(f"kErfinvFastPiece{k + 2}", cd)
    widen = mp.mpf(2) ** -20
    for k, (alo, ahi, n) in enumerate(S_PIECES, start=len(X_PIECES)):
        alo_f = f32(alo)
        ahi_f = f32(ahi) if ahi is not None else 1 - 2.0**-24
        lo, hi = s_of(alo_f) - widen, s_of(ahi_f) + widen
        centre = float((lo + hi) / 2)
        cd, err = fit(big, lo, hi, n, mp.mpf(centre))
        print(f"// piece {k + 2}: {alo_f!r} < a <= {ahi_f!r} ({float.hex(ahi_f)}), s in [{float(lo):.6f}, "
              f"{float(hi):.6f}], centre {centre.hex()}, fit error 2^{float(mp.log(err, 2)):.1f}")
        show(f"kErfinvFastPiece{k + 2}", cd)


if __name__ == "__main__":
    main()
