"""FFT accuracy next to native torch (its CPU FFT: oneMKL in the dev build, else pocketfft):
normwise relative error max|y - r| / max|r| of torch.fft.fft over 4 rows of random complex data,
for power-of-two, smooth, prime and large-prime lengths. float32 (complex64): the reference is the
float64 transform of the same (rounded) inputs; float64: an mpmath DFT at 100 bits. One thread.
Not in CI (mpmath is O(n^2)); the table is in docs/semantics.md, "FFT".
Run: PYTHONPATH=. python benchmarks/accuracy_fft.py"""
from __future__ import annotations

import mpmath
import torch

import repmode

SIZES = [("power of two", 1024), ("power of two", 4096), ("smooth", 360), ("smooth", 2 * 3 * 5 * 7 * 4),
         ("prime", 17), ("prime", 101), ("large prime", 1009), ("large prime x 2", 2018)]
MP_MAX = 1100  # float64 lengths up to this get the mpmath reference


def _data(n, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    real = torch.float32 if dtype == torch.complex64 else torch.float64
    return torch.complex(torch.randn(4, n, generator=g, dtype=real), torch.randn(4, n, generator=g, dtype=real))


def _mp_fft(x):
    mpmath.mp.prec = 100
    n = x.shape[-1]
    w = [mpmath.expjpi(mpmath.mpf(-2 * k) / n) for k in range(n)]
    rows = []
    for row in x:
        v = [mpmath.mpc(float(z.real), float(z.imag)) for z in row]
        out = []
        for k in range(n):
            acc = mpmath.mpc(0)
            for j in range(n):
                acc += v[j] * w[(j * k) % n]
            out.append(acc)
        rows.append(out)
    return rows


def _err_mp(y, ref):
    num = max(abs(mpmath.mpc(float(a.real), float(a.imag)) - b) for ry, rr in zip(y, ref) for a, b in zip(ry, rr))
    den = max(abs(b) for rr in ref for b in rr)
    return float(num / den)


def _err(y, ref):
    return ((y.to(torch.complex128) - ref).abs().max() / ref.abs().max()).item()


def main():
    torch.set_num_threads(1)
    print("| length | kind | float32 native | float32 repmode | float64 native | float64 repmode |")
    print("|---:|---|---:|---:|---:|---:|")
    for kind, n in SIZES:
        x32 = _data(n, torch.complex64, n)
        ref32 = torch.fft.fft(x32.to(torch.complex128))
        nat32 = _err(torch.fft.fft(x32), ref32)
        with repmode.enabled():
            rep32 = _err(torch.fft.fft(x32), ref32)
        if n <= MP_MAX:
            x64 = _data(n, torch.complex128, n)[:1]
            ref64 = _mp_fft(x64)
            nat64 = _err_mp(torch.fft.fft(x64), ref64)
            with repmode.enabled():
                rep64 = _err_mp(torch.fft.fft(x64), ref64)
            f64 = f"{nat64:.2e} | {rep64:.2e}"
        else:
            f64 = "– | –"
        print(f"| {n} | {kind} | {nat32:.2e} | {rep32:.2e} | {f64} |", flush=True)


if __name__ == "__main__":
    main()
