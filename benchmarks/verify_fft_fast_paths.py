"""The FFT's fast paths against the plain scalar definition, at sizes too long for CI: every power of
two 2 .. 2^20 as a single line and in a batch, smooth and Bluestein lengths up to ~2^18, forward,
inverse (every norm), rfft and irfft, every CPU ISA path, 1 and 2 threads. The reference is
csrc/common/fft.h's fft_recursive / fft_bluestein one line at a time (repmode.kernels.fft.USE_REFERENCE).
Prints one line per length and a summary; exits 1 on any difference.
Run: PYTHONPATH=. python benchmarks/verify_fft_fast_paths.py [--max-log2 20]"""
from __future__ import annotations

import argparse
import sys

import torch

import repmode
from repmode import _ext
from repmode.kernels import fft as fft_family


def isas() -> list[str]:
    order = ["scalar", "avx2", "avx512"]
    return order[: order.index(_ext.C.best_cpu_isa()) + 1]


def transforms(x: torch.Tensor, n: int) -> dict:
    return {"fft": torch.fft.fft(x), "ifft ortho": torch.fft.ifft(x, norm="ortho"),
            "fft forward": torch.fft.fft(x, norm="forward"), "rfft": torch.fft.rfft(x.real),
            "irfft": torch.fft.irfft(x[..., : n // 2 + 1], n=n)}


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    a, b = torch.view_as_real(a) if a.is_complex() else a, torch.view_as_real(b) if b.is_complex() else b
    ints = {torch.float32: torch.int32, torch.float64: torch.int64}[a.dtype]
    return a.shape == b.shape and torch.equal(a.contiguous().view(ints), b.contiguous().view(ints))


def check(n: int, rows: int, dtype) -> list[str]:
    g = torch.Generator().manual_seed(n)
    real = torch.float32 if dtype == torch.complex64 else torch.float64
    x = torch.complex(torch.randn(rows, n, generator=g, dtype=real), torch.randn(rows, n, generator=g, dtype=real))
    fft_family.USE_REFERENCE = True
    torch.set_num_threads(1)
    with repmode.enabled():
        want = transforms(x, n)
    fft_family.USE_REFERENCE = False
    bad = []
    for isa in isas():
        _ext.set_cpu_isa(isa)
        for threads in (1, 2):
            torch.set_num_threads(threads)
            with repmode.enabled():
                got = transforms(x, n)
            bad += [f"{k} isa={isa} threads={threads}" for k in want if not same(got[k], want[k])]
    _ext.set_cpu_isa("auto")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-log2", type=int, default=20)
    args = ap.parse_args()
    cases = [(1 << k, 1) for k in range(1, args.max_log2 + 1)] + [(1 << k, 6) for k in range(1, 15)]
    cases += [(n, 1) for n in (3 << 16, 5 << 14, 7 << 14, 45 << 12, 3 ** 9, 5 ** 7, 2 * 3 * 5 * 7 * 256)]
    cases += [(n, r) for n, r in ((8195, 1), (65537, 1), (100003, 1), (1009, 9), (4099, 5))]
    failures = 0
    for n, rows in cases:
        for dtype in (torch.complex64, torch.complex128):
            bad = check(n, rows, dtype)
            failures += len(bad)
            print(f"n={n:8d} rows={rows} {str(dtype):16s} {'OK' if not bad else 'DIFFER: ' + ', '.join(bad)}",
                  flush=True)
    print(f"{len(cases) * 2} cases, {failures} differences")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
