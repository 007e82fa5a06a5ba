"""The SIMD array math (exp, log, tanh, sigmoid, erf, gelu: 16 lanes on AVX-512, 8 on AVX2) and
the elementwise engine's compiled loops against the scalar path, bit for bit: random bit patterns (NaN payloads,
infinities, subnormals), the special-value edges of each function, and every length 0..70 at
several offsets (the n % 16 and n % 32 tails). The exhaustive check over all 2^32 inputs is
csrc/verify/check_vec_math_avx512.cpp (docs/evidence.md)."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal, available_isas, cpu_isa, num_threads

import repmode

OPS = {"exp": torch.exp, "log": torch.log, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "gelu": F.gelu,
       "erf": torch.erf}

# Bit patterns at each function's edges: +-0, +-inf, quiet/signalling NaNs with payloads, the
# smallest subnormal, 1.0, exp's over/underflow thresholds, tanh's 2^-13 and 9.25, sigmoid's
# 2^-24, 17.5, -87.33 and -104, gelu's -13 and 2^-124.
EDGES = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00001, 0xFFA00005, 0x00000001, 0x807FFFFF,
         0x3F800000, 0x42B17217, 0x42B17218, 0xC2CFF1B4, 0xC2CFF1B5, 0x42AEA8F6, 0xC2D00000, 0x42B20000,
         0x39000000, 0xB8FFFFFF, 0x41140000, 0x41140001, 0x33800000, 0x33800001, 0x418C0000, 0x418C0001,
         0xC2AEA8F6, 0xC2AEA8F7, 0xC1500000, 0xC1500001, 0x01800000, 0x017FFFFF]


def _edges() -> torch.Tensor:
    return torch.tensor([b - 2**32 if b >= 2**31 else b for b in EDGES], dtype=torch.int32).view(torch.float32)


@pytest.mark.parametrize("name", sorted(OPS))
def test_random_bit_patterns_and_edges(name):
    g = torch.Generator().manual_seed(11)
    patterns = torch.randint(-2**31, 2**31, (1 << 18,), generator=g, dtype=torch.int64).to(torch.int32)
    normal = torch.randn(1 << 16, generator=g) * 6
    x = torch.cat([patterns.view(torch.float32), _edges(), normal, _edges().flip(0)])
    results = {}
    for isa in available_isas():
        with cpu_isa(isa), num_threads(2), repmode.enabled():
            results[isa] = OPS[name](x)
    for isa, got in results.items():
        assert_bitwise_equal(got, results["scalar"], f"{name} {isa}")


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_tail_length_and_offset(name):
    g = torch.Generator().manual_seed(5)
    pool = torch.cat([_edges(), torch.randn(120, generator=g) * 20])
    results = {}
    for isa in available_isas():
        got = []
        with cpu_isa(isa), num_threads(1), repmode.enabled():
            for length in range(71):
                for offset in (0, 1, 7, 15):
                    got.append(OPS[name](pool[offset:offset + length]))
        results[isa] = torch.cat(got)
    for isa, got in results.items():
        assert_bitwise_equal(got, results["scalar"], f"{name} {isa}")


def test_recurrent_cells_on_every_isa():
    """LSTM/GRU gates go through the same array routines (tanh, sigmoid)."""
    g = torch.Generator().manual_seed(2)
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(20, 40, batch_first=True)
    x = torch.randn(3, 9, 20, generator=g) * 3
    outs = {}
    for isa in available_isas():
        with cpu_isa(isa), num_threads(2), repmode.enabled():
            y, (h, c) = lstm(x)
            outs[isa] = (y.detach(), h.detach(), c.detach())
    for isa, got in outs.items():
        assert_bitwise_equal(got, outs["scalar"], f"isa={isa}")


@pytest.mark.parametrize("length", [1031, 47])
def test_every_elementwise_op_at_tail_lengths(length):
    """The elementwise engine's compiled loop (an AVX-512 copy, an AVX2 copy, the portable one)
    for every op, at lengths that leave a tail after 16- and 8-wide vectors."""
    from test_elementwise_ops import _all_ops, _inputs
    x, g, w = _inputs(n=length)  # ends with 0, -0, +-30, +-1e-30, 88, -90
    results = {}
    for isa in available_isas():
        with cpu_isa(isa), num_threads(1), repmode.enabled():
            results[isa] = _all_ops(x, g, w)
    for isa, got in results.items():
        for name, value in got.items():
            assert_bitwise_equal(value, results["scalar"][name], f"{name} {isa}")
