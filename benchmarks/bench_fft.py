"""FFT benchmark: native torch (its CPU FFT: oneMKL in the dev build, else pocketfft) vs repmode at
1 and 2 threads: a batch of 1,024 complex64 transforms of length 1,024, one complex64 transform of
length 2^20, and rfft of a 1,009-long (prime: Bluestein) batch. Twiddle tables are built in the
warm-up call (cached per length). Run: PYTHONPATH=. python benchmarks/bench_fft.py"""
from __future__ import annotations

import torch
from timing import compare

CASES = [
    ("fft complex64 1024 x 1024", torch.fft.fft, (1024, 1024), torch.complex64, 10),
    ("fft complex64 1 x 2^20", torch.fft.fft, (1, 1 << 20), torch.complex64, 3),
    ("rfft float32 256 x 1009 (Bluestein)", torch.fft.rfft, (256, 1009), torch.float32, 10),
]


def main(threads: int = 2) -> list[tuple[str, float, float]]:
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    rows = []
    for name, fn, shape, dtype, inner in CASES:
        x = torch.randn(shape, dtype=dtype)
        native, rep = compare(lambda: fn(x), 3, inner, rounds=2)
        rows.append((f"{name}, {threads} thread{'s' if threads > 1 else ''}", native, rep))
    return rows


if __name__ == "__main__":
    for threads in (1, 2):
        for name, native, rep in main(threads):
            print(f"{name:50s} native {native * 1e3:8.3f} ms  repmode {rep * 1e3:8.3f} ms  "
                  f"speed {native / rep:5.2f}x native")
