"""The SIMD float32 silu of csrc/cpu/vec_math_silu.h (8 double lanes on AVX-512, 4 on AVX2, each
replaying the scalar double formula) and silu_backward, gelu_backward (approximate='none') of
csrc/cpu/vec_activation_backward.cpp (an approximation kept behind a rounding test) against the
scalar path, bit for bit: random bit patterns (NaN payloads, infinities, subnormals), the edges
where the formulas change branch, every tail length at several offsets, in place, 1/2/3 threads,
strided inputs. The exhaustive checks over all 2^32 inputs are csrc/verify/check_activation_simd.cpp
(silu) and check_activation_backward.cpp (docs/evidence.md); test_activation_backward_isa_paths.py
has ~1M normal inputs, where the backward lanes keep their approximation."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import THREAD_COUNTS, assert_bitwise_equal, available_isas, cpu_isa, float32_neighbours, num_threads

import repmode

aten = torch.ops.aten


def _silu(g, x):
    return F.silu(x)


def _silu_backward(g, x):
    return aten.silu_backward.default(g, x)


def _gelu_backward(g, x):
    return aten.gelu_backward.default(g, x)


OPS = {"silu": _silu, "silu_backward": _silu_backward, "gelu_backward": _gelu_backward}


def _floats(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64).to(torch.float32)


def _edges() -> torch.Tensor:
    """Where the lanes change branch or hand over to the scalar formula: |x| = 37.5 and 2^-55
    (sigmoid's general path), 2^-26, 37, u = x / -sqrt 2 at 1/2, -5.8635847487551676 and 9 (erfc's
    paths), erf_poly_d's row boundaries (8|u| at half-integers) and erfcx_poly's (u at 2^e (1 + j/8))."""
    s2 = 2.0 ** 0.5
    base = [0.0, 37.5, -37.5, 2.0**-55, -(2.0**-55), 2.0**-26, -(2.0**-26), 37.0, -37.0, -0.5 * s2, 0.5 * s2,
            5.8635847487551676 * s2, -9.0 * s2, 9.0 * s2, 88.0, -104.0, 1.0, -1.0, 2.0**-149, 1e-30]
    base += [-(k + 0.5) / 8 * s2 for k in range(48)] + [(k + 0.5) / 8 * s2 for k in range(48)]
    base += [-(2.0**e) * (1 + j / 8) * s2 for e in range(-1, 4) for j in range(8)]
    x = float32_neighbours(_floats(base), 3)
    specials = torch.tensor([0x7F800000, -0x800000, 0x7FC00001, -0x5FFFFFFB, 0x00000001, -0x7F800001],
                            dtype=torch.int32).view(torch.float32)
    return torch.cat([x, -x, specials])


def _inputs(seed: int, n_patterns: int = 1 << 15):
    g = torch.Generator().manual_seed(seed)
    patterns = torch.randint(-2**31, 2**31, (n_patterns,), generator=g, dtype=torch.int64).to(torch.int32)
    x = torch.cat([patterns.view(torch.float32), _edges(), torch.randn(1 << 14, generator=g) * 4])
    grad = torch.randn(x.numel(), generator=g) * 3
    special_g = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e38, 2.0**-140])
    idx = torch.randint(0, x.numel(), (512,), generator=g)
    grad[idx] = special_g.repeat(512 // special_g.numel() + 1)[:512]
    return grad, x


def _run(name, grad, x, isa, threads=2):
    with cpu_isa(isa), num_threads(threads), repmode.enabled():
        return OPS[name](grad, x)


@pytest.mark.parametrize("name", sorted(OPS))
def test_random_bit_patterns_and_edges_match_the_scalar_path(name):
    grad, x = _inputs(3)
    want = _run(name, grad, x, "scalar", threads=1)
    for isa in available_isas():
        for threads in THREAD_COUNTS:
            assert_bitwise_equal(_run(name, grad, x, isa, threads), want, f"{name} {isa} threads={threads}")


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_tail_length_and_offset(name):
    gen = torch.Generator().manual_seed(5)
    pool_x = torch.cat([_edges()[::7], torch.randn(120, generator=gen) * 6])
    pool_g = torch.randn(pool_x.numel(), generator=gen)
    results = {}
    for isa in available_isas():
        got = []
        with cpu_isa(isa), num_threads(1), repmode.enabled():
            for length in range(0, 41):
                for offset in (0, 1, 5, 9):
                    got.append(OPS[name](pool_g[offset:offset + length], pool_x[offset:offset + length]))
        results[isa] = torch.cat(got)
    for isa, got in results.items():
        assert_bitwise_equal(got, results["scalar"], f"{name} {isa}")


@pytest.mark.parametrize("name", sorted(OPS))
def test_in_place_and_strided_inputs_give_the_same_bits(name):
    grad, x = _inputs(9, n_patterns=4096)
    want = _run(name, grad, x, "scalar", threads=1)
    for isa in available_isas():
        with cpu_isa(isa), num_threads(2), repmode.enabled():
            # strided: every other element of a twice-as-long buffer (the engine's general walk)
            xs = torch.stack([x, torch.zeros_like(x)], 1)[:, 0]
            gs = torch.stack([grad, torch.ones_like(grad)], 1)[:, 0]
            assert_bitwise_equal(OPS[name](gs, xs), want, f"{name} {isa} strided")
            if name == "silu":
                y = x.clone()
                F.silu(y, inplace=True)
                assert_bitwise_equal(y, want, f"{name} {isa} in place")
            else:
                out = grad.clone()
                getattr(aten, name).grad_input(grad, x, grad_input=out)
                assert_bitwise_equal(out, want, f"{name} {isa} out=")


def test_silu_autograd_matches_on_every_isa():
    """A SiLU/GELU MLP step: forward and the backward formulas through the SIMD paths."""
    gen = torch.Generator().manual_seed(4)
    x0 = torch.randn(37, 29, generator=gen) * 3
    results = {}
    for isa in available_isas():
        x = x0.clone().requires_grad_(True)
        with cpu_isa(isa), num_threads(2), repmode.enabled():
            y = F.gelu(F.silu(x) * 1.5)
            y.sum().backward()
        results[isa] = (y.detach(), x.grad)
    for isa, got in results.items():
        assert_bitwise_equal(got, results["scalar"], f"isa={isa}")
