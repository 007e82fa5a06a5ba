"""Fits the approximation behind the float32 gelu_backward fast path (approximate='none';
csrc/cpu/vec_activation_backward.cpp, kGeluBwdPieces): eight polynomials P_k of degree 13 with
P_k(t) ~ M(t) = Phi(-t) e^(t^2/2) on [k, k+1), k = 0..7 (Phi the normal distribution function;
M(t) sqrt(2 pi) is the Mills ratio), evaluated in s = t - (k + 1/2). The lanes then form
h(x) = e (P(t) - t/sqrt(2 pi)) for x < 0 and 1 - e (P(t) - t/sqrt(2 pi)) for x >= 0, t = |x|,
e ~ exp(-t^2/2): an approximation of the scalar definition's cdf + x pdf. Its bits never reach a
result (Ziv's first step: a lane keeps g h only where the bound cannot move its float32 rounding);
the bound on |h - H| is measured on every float32 x by csrc/verify/check_activation_backward.cpp,
not taken from here. This script prints the table (Chebyshev interpolation by mpmath's chebyfit on
each piece widened by 2^-20 each side, each coefficient rounded to the nearest double, highest
degree first) and each piece's fit error against mpmath at 200 bits.

    python benchmarks/gelu_backward_fast_fit.py
"""
from __future__ import annotations

import mpmath as mp

mp.mp.prec = 200
DEGREE = 13


def mills(t):
    t = mp.mpf(t)
    return mp.erfc(t / mp.sqrt(2)) / 2 * mp.exp(t * t / 2)


def fit(k: int):
    c = mp.mpf(k) + mp.mpf(1) / 2
    w = mp.mpf(1) / 2 + mp.mpf(2) ** -20
    poly, _ = mp.chebyfit(lambda s: mills(c + s), [-w, w], DEGREE + 1, error=True)
    coefs = [float(p) for p in poly]  # highest degree first, each rounded to the nearest double
    err = 0
    for i in range(401):
        s = -w + 2 * w * i / 400
        v = mp.mpf(0)
        for a in coefs:
            v = v * s + mp.mpf(a)
        err = max(err, abs(v / mills(c + s) - 1))
    return coefs, err


def main() -> None:
    print("constexpr double kGeluBwdPieces[%d][8] = {  // [degree - j][piece k]" % (DEGREE + 1))
    table = []
    for k in range(8):
        coefs, err = fit(k)
        table.append(coefs)
        print(f"// piece {k}: [{k}, {k + 1}), fit error {float(err):.3g}")
    for j in range(DEGREE + 1):
        print("    {" + ", ".join(float.hex(table[k][j]) for k in range(8)) + "},")
    print("};")


if __name__ == "__main__":
    main()
