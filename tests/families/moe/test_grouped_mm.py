"""_grouped_mm (Mixture of Experts): each group is repmode's mm of its slices, in all four forms
(2-D x 3-D with row offsets, 3-D x 2-D with column offsets, 2-D x 2-D with offsets on the reduced
dim, 3-D x 3-D); batch invariance, thread and layout invariance, float32 and widened bf16/fp16,
gradients against float64 autograd, clear errors."""
from __future__ import annotations

import pytest
import torch
from support import THREAD_COUNTS, assert_bitwise_equal, num_threads

import repmode
from repmode.registry import round_to

aten = torch.ops.aten
OFFS = [3, 3, 7, 12]  # an empty group, and rows past the last offset (12 < 13) stay zero


def _offs(v=OFFS):
    return torch.tensor(v, dtype=torch.int32)


def _inputs(dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(13, 6, generator=g).to(dtype)         # 2-D: tokens x hidden
    w = torch.randn(4, 6, 5, generator=g).to(dtype)       # 3-D: experts x hidden x out
    return a, w


def test_rows_in_groups_equal_mm_of_each_group_and_of_each_row_alone():
    a, w = _inputs()
    with repmode.enabled():
        out = torch._grouped_mm(a, w, offs=_offs())
        start = 0
        for g, end in enumerate(OFFS):
            assert_bitwise_equal(out[start:end], a[start:end] @ w[g], f"group {g}")
            for i in range(start, end):                    # batch invariance: a row alone
                assert_bitwise_equal(out[i:i + 1], torch._grouped_mm(a[i:i + 1], w[g:g + 1], offs=_offs([1])),
                                     f"row {i}")
            start = end
    assert not out[12:].any()


def test_columns_in_groups_and_the_reduced_dim_in_groups_and_3d_by_3d_equal_mm_per_group():
    g = torch.Generator().manual_seed(1)
    a3 = torch.randn(3, 4, 6, generator=g)
    b2 = torch.randn(6, 9, generator=g)
    a2 = torch.randn(4, 10, generator=g)
    b2k = torch.randn(10, 5, generator=g)
    b3 = torch.randn(3, 6, 5, generator=g)
    with repmode.enabled():
        cols = torch._grouped_mm(a3, b2, offs=_offs([2, 2, 9]))
        red = torch._grouped_mm(a2, b2k, offs=_offs([4, 4, 10]))
        both = torch._grouped_mm(a3, b3)
        assert_bitwise_equal(cols[:, :2], a3[0] @ b2[:, :2])
        assert_bitwise_equal(cols[:, 2:9], a3[2] @ b2[:, 2:9])
        assert_bitwise_equal(red[0], a2[:, :4] @ b2k[:4])
        assert not red[1].any()                            # an empty reduced range: zeros
        assert_bitwise_equal(red[2], a2[:, 4:] @ b2k[4:])
        assert_bitwise_equal(both, torch.bmm(a3, b3))


def _step(a, w, offs):
    a = a.detach().clone().requires_grad_()
    w = w.detach().clone().requires_grad_()
    out = torch._grouped_mm(a, w.transpose(-2, -1).contiguous().transpose(-2, -1), offs=offs)
    (out * out).sum().backward()
    return {"out": out.detach(), "a_grad": a.grad, "w_grad": w.grad}


def test_forward_and_gradients_have_the_same_bits_at_1_2_3_threads_and_for_transposed_weights():
    a, w = _inputs(seed=2)
    runs = []
    for threads in THREAD_COUNTS:
        with num_threads(threads), repmode.enabled():
            runs.append(_step(a, w, _offs()))
    for r in runs[1:]:
        for k in r:
            assert_bitwise_equal(r[k], runs[0][k], k)
    with repmode.enabled():  # contiguous weights: the same bits as the transposed storage above
        a_ = a.clone().requires_grad_()
        w_ = w.clone().requires_grad_()
        out = torch._grouped_mm(a_, w_, offs=_offs())
        (out * out).sum().backward()
    assert_bitwise_equal(out.detach(), runs[0]["out"])
    assert_bitwise_equal(w_.grad, runs[0]["w_grad"])


def _reference(a, w, ends):
    out, start = [], 0
    for g, end in enumerate(ends):
        out.append(a[start:end] @ w[g])
        start = end
    out.append(a[start:] * 0 @ w[0])
    return torch.cat(out)


def test_forward_and_gradients_close_to_float64_autograd():
    a, w = _inputs(seed=3)
    with repmode.enabled():
        got = _step(a, w, _offs())
    a64, w64 = a.double().requires_grad_(), w.double().requires_grad_()
    ref = _reference(a64, w64, OFFS)
    (ref * ref).sum().backward()
    torch.testing.assert_close(got["out"].double(), ref.detach(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(got["a_grad"].double(), a64.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got["w_grad"].double(), w64.grad, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_bf16_and_fp16_are_widened_and_rounded_once(dtype):
    a, w = _inputs(dtype, seed=4)
    with repmode.enabled():
        got = torch._grouped_mm(a, w, offs=_offs())
        wide = torch._grouped_mm(a.float(), w.float(), offs=_offs())
        as_f32 = torch._grouped_mm(a, w, offs=_offs(), out_dtype=torch.float32)
    assert got.dtype == dtype and as_f32.dtype == torch.float32
    assert_bitwise_equal(got, round_to(wide, dtype))
    assert_bitwise_equal(as_f32, wide)


def test_grouped_mm_close_to_native_torch():
    a, w = _inputs(seed=5)
    w = torch.randn(4, 8, 8, generator=torch.Generator().manual_seed(6))  # native wants 16-byte strides
    a = torch.randn(13, 8, generator=torch.Generator().manual_seed(7))
    want = torch._grouped_mm(a, w, offs=_offs())
    with repmode.enabled():
        got = torch._grouped_mm(a, w, offs=_offs())
    torch.testing.assert_close(got[:12], want[:12], rtol=1e-5, atol=1e-5)


def test_errors_name_the_problem():
    a, w = _inputs()
    with repmode.enabled():
        with pytest.raises(repmode.UnsupportedOpError, match="bias"):
            torch._grouped_mm(a, w, offs=_offs(), bias=torch.zeros(4, 5))
        with pytest.raises(RuntimeError, match="int32"):
            torch._grouped_mm(a, w, offs=_offs().long())
        with pytest.raises(RuntimeError, match="non-decreasing"):
            torch._grouped_mm(a, w, offs=_offs([3, 2, 7, 12]))
        with pytest.raises(RuntimeError, match="Float32"):
            torch._grouped_mm(a.double(), w.double(), offs=_offs())


def test_offsets_from_histc_counts_by_cumsum_with_an_integer_dtype_are_exact():
    """Hugging Face's grouped_mm experts: histc of the sorted expert ids (float counts), then
    cumsum(dtype=int32): a cast and an exact integer running sum, the same as native torch."""
    ids = torch.tensor([0, 0, 1, 3, 3, 3, 5, 5], dtype=torch.float32)
    counts = torch.histc(ids, bins=6, min=0, max=5)
    want = torch.cumsum(counts, 0, dtype=torch.int32)
    with repmode.enabled():
        got = torch.cumsum(counts, 0, dtype=torch.int32)
        got64 = torch.cumsum(torch.tensor([1.5, -2.5, 7.0]), 0, dtype=torch.int64)
    assert got.dtype == torch.int32 and torch.equal(got, want)
    assert torch.equal(got64, torch.cumsum(torch.tensor([1.5, -2.5, 7.0]), 0, dtype=torch.int64))
