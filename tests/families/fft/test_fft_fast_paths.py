"""The FFT's fast paths (csrc/cpu/fft_lanes.h: the lane walk over 4 lines with AVX2 intrinsics or
portable loops, the 4 x 4 load/store transposes, one long line split into lanes on up to 2 threads)
equal the plain scalar fft_recursive / fft_bluestein of csrc/common/fft.h bit for bit, on every ISA
path, at 1 and 2 threads, for power-of-two, smooth, prime and Bluestein lengths, both directions,
r2c and c2r, every norm, and the layouts that take the transposes and the fallbacks."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, available_isas, cpu_isa, num_threads

import repmode
from repmode.kernels import fft as fft_family

# powers of two (radix 4 only, and a final radix 2), smooth mixed radices, primes and other lengths
# that go through Bluestein
BATCH_LENGTHS = [2, 4, 8, 16, 32, 64, 128, 512, 2048, 4096, 6, 12, 35, 49, 360, 1680, 3072, 17, 101, 1009]
# single lines from kSplit16Min = 2^14 on: split into 16 transforms over up to 2 threads; 3 * 2^14 has
# radix-3 levels inside the lanes; 8195 = 5 * 11 * 149 runs Bluestein with M = 2^15
LONG_LENGTHS = [1 << 14, 1 << 15, 3 << 14, 8195]


def _complex(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    real = torch.float64 if dtype == torch.complex128 else torch.float32
    return torch.complex(torch.randn(shape, generator=g, dtype=real), torch.randn(shape, generator=g, dtype=real))


def _transforms(x, n):
    return {
        "fft": torch.fft.fft(x),
        "ifft ortho": torch.fft.ifft(x, norm="ortho"),
        "fft forward": torch.fft.fft(x, norm="forward"),
        "rfft": torch.fft.rfft(x.real),
        "irfft": torch.fft.irfft(x, n=n),
        "fft dim 0": torch.fft.fft(x.t().contiguous(), dim=0),  # adjacent lines: lanes along the inner dim
        "rfft dim 0": torch.fft.rfft(x.real.t().contiguous(), dim=0),
        "fft strided": torch.fft.fft(x[:, ::2]),  # a step of 2 along the line: the generic load
    }


def _real(t: torch.Tensor) -> torch.Tensor:
    """Complex results as their (re, im) pairs, so that assert_bitwise_equal compares bit patterns
    (NaN == NaN of the same pattern) rather than complex values."""
    return torch.view_as_real(t) if t.is_complex() else t


def _reference(compute, *args):
    old = fft_family.USE_REFERENCE
    fft_family.USE_REFERENCE = True
    try:
        with num_threads(1), repmode.enabled():
            return compute(*args)
    finally:
        fft_family.USE_REFERENCE = old


def _check_all_paths(compute, *args):
    want = _reference(compute, *args)
    for isa in available_isas():
        for threads in (1, 2):
            with cpu_isa(isa), num_threads(threads), repmode.enabled():
                got = compute(*args)
            for k in want:
                assert_bitwise_equal(_real(got[k]), _real(want[k]), f"{k}, isa={isa}, threads={threads}")


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_batches_of_lines_equal_the_scalar_reference_on_every_isa_and_thread_count(dtype):
    for n in BATCH_LENGTHS:
        x = _complex((9, n), dtype, seed=n)  # two blocks of 4 lanes and one single line
        if n > 4:  # specials: the canonical NaN, infinities and a subnormal through the stores
            x[3, 1] = complex(float("nan"), 1.0)
            x[5, 2] = complex(float("inf"), -0.0)
            x[6, 0] = complex(1e-310 if dtype == torch.complex128 else 1e-40, 0.0)
        _check_all_paths(lambda t: _transforms(t, n), x)


def test_long_single_lines_equal_the_scalar_reference_on_every_isa_and_thread_count():
    for n in LONG_LENGTHS:
        x = _complex((1, n), torch.complex64, seed=n)
        _check_all_paths(lambda t: {"fft": torch.fft.fft(t), "ifft": torch.fft.ifft(t, norm="ortho"),
                                    "rfft": torch.fft.rfft(t.real), "irfft": torch.fft.irfft(t[:, : n // 2 + 1], n=n)},
                         x)


def test_complex128_long_line_and_a_batch_with_fewer_lines_than_threads():
    x = _complex((1, 1 << 14), torch.complex128, seed=5)
    _check_all_paths(lambda t: {"fft": torch.fft.fft(t), "ifft": torch.fft.ifft(t)}, x)
    y = _complex((3, 1 << 14), torch.complex64, seed=6)
    _check_all_paths(lambda t: {"fft": torch.fft.fft(t), "row": torch.fft.fft(t[1])}, y)


def test_two_dimensional_transforms_equal_the_scalar_reference():
    x = _complex((6, 64, 48), torch.complex64, seed=7)  # fft2 over dims (1, 2): lanes along the inner dim
    _check_all_paths(lambda t: {"fft2": torch.fft.fft2(t), "ifftn": torch.fft.ifftn(t, dim=(0, 2)),
                                "rfft2": torch.fft.rfft2(t.real), "irfft2": torch.fft.irfft2(t)}, x)
