"""Fractional max pooling (2-d, 3-d): the forward is selection (equal to native torch given the
samples), the samples come from repmode's stream (the same at 1 and 2 threads), the backward
adds in increasing output order (equal to native torch's CPU loop), bf16/fp16 are widened."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal, num_threads

import repmode

aten = torch.ops.aten

CASES = [
    (aten.fractional_max_pool2d, (2, 3, 11, 9), [3, 2], [5, 6]),
    (aten.fractional_max_pool2d, (3, 10, 10), [2, 2], [8, 9]),  # overlapping windows: gradients add
    (aten.fractional_max_pool3d, (2, 2, 7, 8, 9), [2, 3, 2], [4, 5, 6]),
]


@pytest.mark.parametrize("op,shape,kernel,out", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_forward_and_backward_equal_native_torch_given_the_samples(op, shape, kernel, out, dtype):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=gen, dtype=dtype)
    x[(0,) * x.dim()] = float("nan")
    nsp = len(kernel)
    lead = (shape[0], shape[1]) if len(shape) == nsp + 2 else (1, shape[0])
    samples = torch.rand(*lead, nsp, generator=gen, dtype=dtype)
    want, idx = op.default(x, kernel, out, samples)
    g = torch.randn(want.shape, generator=gen, dtype=dtype)
    bwd = aten.fractional_max_pool2d_backward if nsp == 2 else aten.fractional_max_pool3d_backward
    want_gi = bwd.default(g, x, kernel, out, idx)
    with repmode.enabled():
        got, got_idx = op.default(x, kernel, out, samples)
        gi = bwd.default(g, x, kernel, out, idx)
    assert_bitwise_equal(got_idx, idx, "indices")
    assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got[~got.isnan()], want[~want.isnan()])
    assert_bitwise_equal(gi, want_gi, "backward")


def _train(threads):
    torch.manual_seed(1)
    x = torch.randn(4, 6, 12, 12, requires_grad=True)
    with num_threads(threads), repmode.enabled(seed=3):
        y = F.fractional_max_pool2d(x, 2, output_size=(7, 7))
        (y * y).sum().backward()
    return repmode.digest(y.detach()), repmode.digest(x.grad)


def test_the_module_in_strict_mode_gives_the_same_digests_at_1_and_2_threads():
    assert _train(1) == _train(2)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_is_the_float32_result_rounded_once(dtype):
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(2, 3, 9, 9, generator=gen).to(dtype)
    samples = torch.rand(2, 3, 2, generator=gen).to(dtype)
    g = torch.randn(2, 3, 5, 5, generator=gen).to(dtype)
    with repmode.enabled():
        low, idx = aten.fractional_max_pool2d(x, [2, 2], [5, 5], samples)
        wide, widx = aten.fractional_max_pool2d(x.float(), [2, 2], [5, 5], samples.float())
        gi = aten.fractional_max_pool2d_backward(g, x, [2, 2], [5, 5], idx)
        wgi = aten.fractional_max_pool2d_backward(g.float(), x.float(), [2, 2], [5, 5], widx)
    assert_bitwise_equal(idx, widx, "indices")
    assert_bitwise_equal(low, wide.to(dtype), "values")
    assert_bitwise_equal(gi, wgi.to(dtype), "backward")
