"""The GEMM's SIMD kernels (AVX-512: 12x32 float / 12x16 double tiles; AVX2: 6x16 / 6x8; scalar
4x4) against gemm_reference and each other, bit for bit: shapes at and around every tile edge, k
across the chunk (256) and group (16,384) boundaries, transposed and strided operands, a
column-major C, batches, and NaN/inf/subnormal/-0 inputs, at 1 and 2 threads."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, available_isas, cpu_isa, num_threads

import repmode
from repmode._ext import DTYPE_CODE, C


def _reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """gemm_reference (each output term by term through GemmSum) of batched a @ b."""
    batch, M, K = a.shape
    N = b.shape[2]
    out = torch.empty(batch, M, N, dtype=a.dtype)
    C.gemm_reference(DTYPE_CODE[a.dtype], batch, M, N, K, a.data_ptr(), a.stride(0), a.stride(1), a.stride(2),
                     b.data_ptr(), b.stride(0), b.stride(1), b.stride(2), out.data_ptr(), out.stride(0),
                     out.stride(1), out.stride(2))
    return out


def _with_specials(t: torch.Tensor, rng: torch.Generator) -> torch.Tensor:
    t = t.clone()
    flat = t.view(-1)
    n = flat.numel()
    tiny = torch.finfo(t.dtype).tiny
    for value in (float("nan"), float("inf"), float("-inf"), -0.0, tiny / 8, -tiny / 3):
        flat[int(torch.randint(0, n, (1,), generator=rng))] = value
    return t


# (M, N, K): M around 6 and 12 rows, N around 8/16/32 columns, K around 256.
SHAPES = [(1, 1, 1), (11, 31, 255), (12, 32, 256), (13, 33, 257), (25, 65, 3), (37, 100, 513), (6, 16, 40),
          (144, 96, 64), (5, 520, 7)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("M,N,K", SHAPES)
def test_every_isa_equals_reference(rng, dtype, M, N, K):
    a = torch.randn(M, K, generator=rng, dtype=dtype)
    b = torch.randn(K, N, generator=rng, dtype=dtype)
    if M * K > 8:
        a = _with_specials(a, rng)
    want = _reference(a[None], b[None])[0]
    for isa in available_isas():
        for threads in (1, 2):
            with cpu_isa(isa), num_threads(threads), repmode.enabled():
                assert_bitwise_equal(a @ b, want, f"isa={isa} threads={threads}")
                # transposed A, transposed B, and a column-major C (computed as C^T = B^T A^T)
                assert_bitwise_equal(a.t().contiguous().t() @ b, want, f"A^T isa={isa}")
                assert_bitwise_equal(a @ b.t().contiguous().t(), want, f"B^T isa={isa}")
                out = torch.empty(N, M, dtype=dtype).t()
                torch.mm(a, b, out=out)
                assert_bitwise_equal(out, want, f"column-major C isa={isa}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batched_and_strided(rng, dtype):
    big_a = torch.randn(3, 26, 2 * 300, generator=rng, dtype=dtype)
    a = big_a[:, ::2, ::2]  # 3 x 13 x 300, row and column strides 2
    b = torch.randn(3, 300, 45, generator=rng, dtype=dtype)
    want = _reference(a, b)
    for isa in available_isas():
        with cpu_isa(isa), num_threads(2), repmode.enabled():
            assert_bitwise_equal(torch.bmm(a, b), want, f"isa={isa}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_more_than_one_group(rng, dtype):
    """K > 16,384: the group sums and the running total beside the tile, on every path."""
    K = 16384 + 300
    a = _with_specials(torch.randn(13, K, generator=rng, dtype=dtype), rng)
    b = torch.randn(K, 33, generator=rng, dtype=dtype)
    want = _reference(a[None], b[None])[0]
    for isa in available_isas():
        with cpu_isa(isa), num_threads(2), repmode.enabled():
            assert_bitwise_equal(a @ b, want, f"isa={isa}")


def test_convolution_through_the_gemm_on_every_isa(rng):
    x = torch.randn(2, 5, 17, 19, generator=rng)
    w = torch.randn(34, 5, 3, 3, generator=rng)
    outs = {}
    for isa in available_isas():
        with cpu_isa(isa), num_threads(2), repmode.enabled():
            xg = x.clone().requires_grad_()
            wg = w.clone().requires_grad_()
            y = torch.nn.functional.conv2d(xg, wg, padding=1, stride=(1, 2))
            gx, gw = torch.autograd.grad(y.square().sum(), (xg, wg))
            outs[isa] = (y.detach(), gx, gw)
    for isa, got in outs.items():
        assert_bitwise_equal(got, outs["scalar"], f"isa={isa}")
