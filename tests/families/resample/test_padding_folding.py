"""Padding and folding (reflection/replication padding 1-d/2-d/3-d, F.unfold/F.fold, max_unpool):
forwards equal native torch (data movement), the summing backward ops and col2im equal native
torch's sequential CPU order bit for bit on contiguous tensors and do not depend on threads or
layout, bf16/fp16 are the float32 sums rounded once, and max_unpool's duplicate indices keep
the last write."""
from __future__ import annotations

import contextlib

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal, num_threads

import repmode

PAD_CASES = [
    ("reflect", (2, 1), (2, 3, 7)),
    ("reflect", (3, 3), (3, 8)),
    ("replicate", (2, 4), (2, 3, 5)),
    ("reflect", (1, 2, 2, 1), (2, 3, 5, 6)),
    ("reflect", (2, 2, 3, 3), (3, 4, 5)),
    ("replicate", (3, 1, 0, 4), (2, 5, 4, 6)),
    ("replicate", (2, -1, 1, 2), (2, 3, 5, 6)),
    ("reflect", (1, 1, 2, 0, 1, 2), (1, 3, 4, 5, 6)),
    ("replicate", (2, 1, 1, 3, 2, 2), (2, 2, 3, 4, 5)),
]


def _pad_run(mode, pad, x, g, ctx=contextlib.nullcontext):
    x = x.detach().requires_grad_(True)
    with ctx():
        y = F.pad(x, pad, mode=mode)
        y.backward(g)
    return y.detach(), x.grad


def _pad_inputs(mode, pad, shape, dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    x = torch.randn(shape, dtype=dtype)
    g = torch.randn(F.pad(x, pad, mode=mode).shape, dtype=dtype)
    return x, g


@pytest.mark.parametrize("mode,pad,shape", PAD_CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_padding_forward_and_backward_equal_native_torch_bit_for_bit(mode, pad, shape, dtype):
    x, g = _pad_inputs(mode, pad, shape, dtype)
    want = _pad_run(mode, pad, x, g)
    got = _pad_run(mode, pad, x, g, repmode.enabled)
    assert_bitwise_equal(got[0], want[0], "forward")
    assert_bitwise_equal(got[1], want[1], "backward")


@pytest.mark.parametrize("mode,pad,shape", [c for c in PAD_CASES if len(c[2]) >= 4])
def test_padding_backward_has_the_same_bits_at_1_and_2_threads_and_in_channels_last(mode, pad, shape):
    big = (shape[0] * 4, 8) + tuple(shape[2:])
    x, g = _pad_inputs(mode, pad, big, seed=1)
    with num_threads(1):
        want = _pad_run(mode, pad, x, g, repmode.enabled)
    with num_threads(2):
        assert_bitwise_equal(_pad_run(mode, pad, x, g, repmode.enabled), want, "threads=2")
        fmt = torch.channels_last if x.dim() == 4 else torch.channels_last_3d
        cl = _pad_run(mode, pad, x.contiguous(memory_format=fmt), g.contiguous(memory_format=fmt), repmode.enabled)
    assert_bitwise_equal((cl[0].contiguous(), cl[1].contiguous()), want, "channels_last")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_padding_backward_of_low_precision_is_the_float32_sum_rounded_once(dtype):
    x, g = _pad_inputs("reflect", (3, 3, 2, 2), (2, 3, 4, 5), seed=2)
    low = _pad_run("reflect", (3, 3, 2, 2), x.to(dtype), g.to(dtype), repmode.enabled)
    wide = _pad_run("reflect", (3, 3, 2, 2), x.to(dtype).float(), g.to(dtype).float(), repmode.enabled)
    assert low[1].dtype == dtype
    assert_bitwise_equal(low[1], wide[1].to(dtype))


def test_pad_under_inference_mode_and_no_grad_equals_native():
    x = torch.randn(2, 3, 5, 6)
    want = F.pad(x, (2, 1, 1, 2), mode="reflect")
    for ctx in (torch.no_grad, torch.inference_mode):
        with ctx(), repmode.enabled():
            assert_bitwise_equal(F.pad(x, (2, 1, 1, 2), mode="reflect"), want)
            assert_bitwise_equal(F.pad(x, (2, 1, 1, 2), mode="replicate"), F.pad(x, (2, 1, 1, 2), mode="replicate"))


FOLD_CASES = [
    (dict(kernel_size=2), (6, 7), (2, 3)),
    (dict(kernel_size=3, padding=1), (5, 5), (2, 2)),
    (dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1), padding=(1, 0)), (7, 8), (1, 4)),
    (dict(kernel_size=3, stride=2, padding=2), (9, 6), (3, 2)),
]


@pytest.mark.parametrize("kw,size,nc", FOLD_CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_unfold_and_fold_forward_and_backward_equal_native_torch_bit_for_bit(kw, size, nc, dtype):
    torch.manual_seed(3)
    x = torch.randn(nc[0], nc[1], *size, dtype=dtype)
    cols = F.unfold(x, **kw)
    for inp, fn in ((x, lambda t: F.unfold(t, **kw)), (cols, lambda t: F.fold(t, size, **kw))):
        g = torch.randn(fn(inp).shape, dtype=dtype)
        a = inp.detach().requires_grad_(True)
        want = fn(a)
        want.backward(g)
        b = inp.detach().requires_grad_(True)
        with repmode.enabled():
            got = fn(b)
            got.backward(g)
        assert_bitwise_equal(got, want, "forward")
        assert_bitwise_equal(b.grad, a.grad, "backward")
    with num_threads(1), repmode.enabled():
        one = F.fold(cols, size, **kw)
    with num_threads(2), repmode.enabled():
        assert_bitwise_equal(F.fold(cols, size, **kw), one, "threads")
        assert_bitwise_equal(F.fold(cols[0], size, **kw), one[0], "unbatched")


def test_fold_of_low_precision_is_the_float32_sum_rounded_once():
    torch.manual_seed(4)
    cols = torch.randn(2, 3 * 9, 16).bfloat16()
    with repmode.enabled():
        low = F.fold(cols, (6, 6), kernel_size=3, padding=0)
        wide = F.fold(cols.float(), (6, 6), kernel_size=3, padding=0)
    assert_bitwise_equal(low, wide.bfloat16())


@pytest.mark.parametrize("nsp", [2, 3])
def test_max_unpool_equals_native_forward_and_backward(nsp):
    torch.manual_seed(5)
    pool, unpool = (F.max_pool2d, F.max_unpool2d) if nsp == 2 else (F.max_pool3d, F.max_unpool3d)
    x = torch.randn((2, 3) + (6,) * nsp)
    y, idx = pool(x, 2, return_indices=True)
    g = torch.randn(x.shape)
    a = y.detach().requires_grad_(True)
    want = unpool(a, idx, 2)
    want.backward(g)
    b = y.detach().requires_grad_(True)
    with repmode.enabled():
        got = unpool(b, idx, 2)
        got.backward(g)
    assert_bitwise_equal(got, want, "forward")
    assert_bitwise_equal(b.grad, a.grad, "backward")


def test_max_unpool_with_duplicate_indices_keeps_the_last_write_in_input_order():
    x = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    idx = torch.tensor([[[[5, 0], [5, 9]]]])
    with repmode.enabled():
        out = F.max_unpool2d(x, idx, 2, output_size=(4, 4))
    want = torch.zeros(16)
    want[0], want[5], want[9] = 2.0, 3.0, 4.0
    assert_bitwise_equal(out.reshape(-1), want)


def test_max_unpool_refuses_an_index_outside_the_output():
    x = torch.ones(1, 1, 2, 2)
    idx = torch.tensor([[[[0, 1], [2, 16]]]])
    with pytest.raises(RuntimeError, match="invalid max index"):
        with repmode.enabled():
            F.max_unpool2d(x, idx, 2, output_size=(4, 4))
