"""Prints the constant tables of csrc/common/math_special.h (mpmath at 300 bits, each value rounded
to the nearest double; "hi, lo" pairs where the header keeps a double-double).

    python benchmarks/special_constants.py
"""
from __future__ import annotations

import mpmath as mp

mp.mp.prec = 300


def h(v) -> str:
    return float(v).hex()


def dd(v) -> list[str]:
    hi = float(v)
    return [hi.hex(), float(v - mp.mpf(hi)).hex()]


def show(name, values, per=4):
    print(f"// {name} ({len(values)})")
    for i in range(0, len(values), per):
        print("      " + ", ".join(values[i:i + per]) + ",")


def main() -> None:
    # lgamma(2 + z) = sum_(k>=1) c_k z^k: c_1 = 1 - gamma, c_k = (-1)^k (zeta(k) - 1)/k
    g2 = [1 - mp.euler] + [(-1) ** k * (mp.zeta(k) - 1) / k for k in range(2, 41)]
    show("lgamma2_coef", [h(v) for v in g2])
    show("lgamma2_coef_dd", [x for v in g2 for x in dd(v)], 6)
    # lgamma(1 + z) = -gamma z + sum_(k>=2) (-1)^k zeta(k)/k z^k
    show("lgamma1_coef", [h(v) for v in [-mp.euler] + [(-1) ** k * mp.zeta(k) / k for k in range(2, 31)]])
    b = [mp.bernoulli(2 * k) for k in range(1, 13)]
    show("stirling_coef: B_2k/(2k(2k-1))", [h(b[k - 1] / (2 * k * (2 * k - 1))) for k in range(1, 11)])
    x0 = mp.findroot(mp.digamma, 1.46)
    print("// x0 (digamma's positive zero)", dd(x0), "x0 - 1", dd(x0 - 1))
    show("digamma_root_coef: psi^(k)(x0)/k!", [h(mp.polygamma(k, x0) / mp.factorial(k)) for k in range(1, 41)])
    show("digamma_asym_coef: B_2k/(2k)", [h(b[k - 1] / (2 * k)) for k in range(1, 11)])
    show("euler_maclaurin_coef: B_2j/(2j)!", [h(b[j - 1] / mp.factorial(2 * j)) for j in range(1, 13)])
    # erfinv(x) = sum_k a_k x^(2k+1), a_k = c_k/(2k+1) (sqrt(pi)/2)^(2k+1)
    c = [mp.mpf(1)]
    for k in range(1, 60):
        c.append(sum(c[m] * c[k - 1 - m] / ((m + 1) * (2 * m + 1)) for m in range(k)))
    s = mp.sqrt(mp.pi) / 2
    a = [c[k] / (2 * k + 1) * s ** (2 * k + 1) for k in range(60)]
    show("erfinv_coef", [h(v) for v in a])
    show("erfinv_head_dd", [x for v in a[:16] for x in dd(v)])
    for name, v in [("pi", mp.pi), ("log(pi)", mp.log(mp.pi)), ("ln 2", mp.log(2)), ("sqrt(1/2)", mp.sqrt(0.5)),
                    ("sqrt(2)", mp.sqrt(2)), ("2/sqrt(pi)", 2 / mp.sqrt(mp.pi)), ("1/sqrt(pi)", 1 / mp.sqrt(mp.pi)),
                    ("sqrt(pi)/2", mp.sqrt(mp.pi) / 2), ("log(2 pi)/2 - 1/2", mp.log(2 * mp.pi) / 2 - mp.mpf(1) / 2)]:
        print(f"// {name}: {dd(v)}")


if __name__ == "__main__":
    main()
