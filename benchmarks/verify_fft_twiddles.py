"""Checks that every FFT twiddle W_N^k = exp(-2 pi i k / N) repmode computes (csrc/common/fft.h,
fft_twiddle) is the correctly rounded cos and -sin of 2 pi k / N, against mpmath at 200 bits, for
every k of every N up to --max-n and of the listed larger lengths. Not in CI (minutes); the result
is recorded in docs/evidence.md. Run: PYTHONPATH=. python benchmarks/verify_fft_twiddles.py"""
from __future__ import annotations

import argparse

import mpmath

from repmode import _ext


def check(n: int) -> int:
    bad = 0
    for k in range(n):
        re, im = _ext.C.fft_twiddle_of(k, n)
        turns = mpmath.mpf(2 * k) / n
        if re != float(mpmath.cospi(turns)) or im != -float(mpmath.sinpi(turns)):
            bad += 1
            print(f"not correctly rounded: N={n} k={k}", flush=True)
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-n", type=int, default=512)
    ap.add_argument("--also", type=int, nargs="*", default=[1024, 2018, 2048, 4096, 4099])
    a = ap.parse_args()
    mpmath.mp.prec = 200
    lengths = list(range(1, a.max_n + 1)) + a.also
    bad = sum(check(n) for n in lengths)
    print(f"{len(lengths)} lengths, {sum(lengths)} twiddles: {bad} not correctly rounded")


if __name__ == "__main__":
    main()
