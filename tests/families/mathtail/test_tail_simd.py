"""The AVX2 and AVX-512 array versions of float32 tan, sinh and cosh (csrc/cpu/vec_tail.cpp)
against the scalar routines, bit for bit, on every ISA path the CPU has: random bit patterns,
the edges of each function's ranges (tan: near multiples of pi/2, the 2^18 end of the fast range,
huge arguments; sinh/cosh: the overflow threshold, 89.5, the 1/4 switch of sinh's series, tiny
and subnormal x, +-inf, NaN), inputs whose lane rounding test fails (found by
csrc/verify/check_tail_simd.cpp fallbacks), every tail length and offset, in place, and several
thread counts. The check over all 2^32 inputs is csrc/verify/check_tail_simd.cpp
(docs/evidence.md)."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, available_isas, cpu_isa, num_threads

import repmode

OPS = {"tan": torch.tan, "sinh": torch.sinh, "cosh": torch.cosh}

COMMON = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FC00001, 0xFFA00005, 0x00000001,
          0x807FFFFF, 0x00800000, 0x3F800000, 0xBF800000,
          0x39800000, 0x397FFFFF, 0xB9800000, 0xB97FFFFF, 0x39800001]  # 2^-12: below it x (or 1)
TAN = [0x48800000, 0x487FFFFF, 0xC8800000, 0xC87FFFFF, 0x48800001,  # 2^18: the fast range ends
       0x437CE5F1, 0x43FCE5F1, 0x4096CBE4, 0x474D246F, 0x4116CBE4, 0x47CD246F,  # nearest to k pi/2 below 2^18
       0x3FC90FDB, 0x3FC90FDA, 0xBFC90FDB, 0x40490FDB, 0x4096CBE4, 0x40C90FDB,  # pi/2, pi, 3pi/2, 2pi
       0x3F490FDB, 0x3F490FDA, 0x3F490FDC, 0xBF490FDB,  # pi/4: the k switch
       0x6D79BE45, 0x7F7FFFFF, 0xFF7FFFFF, 0x4B000001, 0x5E000000,  # huge arguments (scalar path)
       # lanes whose rounding test fails (they go to cr_tanf)
       0x39B89BA8, 0x3AAC4345, 0x3B1408B3, 0x3B5DCD21, 0x3B7392A0, 0x3CFF0352, 0x3D50A46C, 0x3E916D0A,
       0x3F6DED01, 0x4111D20B, 0x43204C3C, 0x432B3F8D, 0x3E9CD1C7, 0x3EDDF95B, 0x40C3714A, 0x40D7A846]
HYP = [0x42B30000, 0x42B30001, 0x42B2FFFF, 0xC2B30000, 0xC2B30001,  # 89.5: above it +-inf
       0x42B2D4FC, 0x42B2D4FB, 0x42B2D4FD, 0xC2B2D4FC, 0xC2B2D4FD,  # the float32 overflow threshold
       0x3E800000, 0x3E7FFFFF, 0xBE800000, 0xBE7FFFFF, 0x3E800001,  # 1/4: sinh's series ends
       # lanes whose rounding test fails (sinh, then cosh)
       0x39E89768, 0x3A128602, 0x3ABFFFFF, 0x3AC00000, 0x3AFEA8DF, 0x3D6869C9, 0x3D7AD54C, 0x3E248998,
       0x3E641441, 0x3F6EECBD, 0x403F82C1, 0x4086802A,
       0x39B504EA, 0x39B504FB, 0x3A1CC46E, 0x3A4A62BF, 0x3AA32B2A, 0x3B366D92, 0x3BFEBF0D, 0x3D6BB34C,
       0x3D85CD76, 0x3E52D5E5, 0x40604499, 0x406DFCAD]


def _floats(patterns: list[int]) -> torch.Tensor:
    return torch.tensor([b - 2**32 if b >= 2**31 else b for b in patterns], dtype=torch.int32).view(torch.float32)


def _edges(name: str) -> torch.Tensor:
    e = _floats(COMMON + (TAN if name == "tan" else HYP))
    return torch.cat([e, -e])


def _neighbours(name: str) -> torch.Tensor:
    """32 consecutive bit patterns on each side of every edge."""
    e = _edges(name).view(torch.int32).to(torch.int64)
    steps = torch.arange(-32, 33)
    b = (e[:, None] + steps[None, :]).flatten()
    b = torch.where(b >= 2**31, b - 2**32, torch.where(b < -2**31, b + 2**32, b))
    return b.to(torch.int32).view(torch.float32)


def _results(name: str, x: torch.Tensor, threads: int = 2) -> dict[str, torch.Tensor]:
    out = {}
    for isa in available_isas():
        with cpu_isa(isa), num_threads(threads), repmode.enabled():
            out[isa] = OPS[name](x)
    return out


@pytest.mark.parametrize("name", sorted(OPS))
def test_simd_paths_equal_the_scalar_routine_on_bit_patterns_and_edges(name):
    g = torch.Generator().manual_seed(29)
    patterns = torch.randint(-2**31, 2**31, (1 << 18,), generator=g, dtype=torch.int64).to(torch.int32)
    scale = 3.0 if name == "tan" else 30.0
    x = torch.cat([patterns.view(torch.float32), _neighbours(name), torch.randn(1 << 16, generator=g) * scale,
                   _edges(name).flip(0)])
    results = _results(name, x)
    assert set(results) >= {"scalar"}
    for isa, got in results.items():
        assert_bitwise_equal(got, results["scalar"], f"{name} {isa}")


@pytest.mark.parametrize("name", sorted(OPS))
def test_simd_paths_at_every_tail_length_offset_and_in_place(name):
    g = torch.Generator().manual_seed(3)
    pool = torch.cat([_edges(name), torch.randn(100, generator=g) * 20])
    results = {}
    for isa in available_isas():
        got = []
        with cpu_isa(isa), num_threads(1), repmode.enabled():
            for length in range(71):
                for offset in (0, 1, 7, 15):
                    got.append(OPS[name](pool[offset:offset + length]))
            w = pool.clone()
            getattr(w, name + "_")()
            got.append(w)
        results[isa] = torch.cat(got)
    for isa, got in results.items():
        assert_bitwise_equal(got, results["scalar"], f"{name} {isa}")


@pytest.mark.parametrize("name", sorted(OPS))
def test_simd_paths_are_thread_count_invariant(name):
    g = torch.Generator().manual_seed(7)
    x = torch.cat([torch.randn(100_003, generator=g) * 4, _neighbours(name)])
    ref = _results(name, x, threads=1)
    for threads in (2, 3):
        got = _results(name, x, threads=threads)
        for isa in got:
            assert_bitwise_equal(got[isa], ref[isa], f"{name} {isa} threads={threads}")
            assert_bitwise_equal(got[isa], ref["scalar"], f"{name} {isa} threads={threads} vs scalar")


def test_simd_paths_are_correctly_rounded_near_multiples_of_half_pi_and_at_range_edges():
    """The reduction edge (the float32 values nearest k pi/2, where tan is huge or tiny) and the
    fast ranges' ends, on every path, against the correctly rounded value (float64, or mpmath
    near a rounding boundary: tests/support/cr_reference.py)."""
    from support.cr_reference import reference_f32

    k = torch.arange(1, 1500, dtype=torch.float64)
    x = (k * torch.pi / 2).to(torch.float32)
    x = torch.cat([x, x.nextafter(torch.tensor(0.0)), x.nextafter(torch.tensor(1e9)), _edges("tan")])
    x = x[x.isfinite()]
    results = _results("tan", x)
    expected = reference_f32("tan", x)
    for isa, got in results.items():
        assert_bitwise_equal(got, expected, f"tan {isa}")
    h = _neighbours("sinh")
    h = h[h.isfinite()]
    for name in ("sinh", "cosh"):
        expected = reference_f32(name, h)
        for isa, got in _results(name, h).items():
            assert_bitwise_equal(got, expected, f"{name} {isa}")
