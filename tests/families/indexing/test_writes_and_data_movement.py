"""Copies with duplicate destinations (the last write in index order wins: scatter, index_copy,
index_put, put, as_strided_scatter), what decompositions emit (_unsafe_index*, _unsafe_masked_*,
unfold_backward), trace, gather's NaN payloads, and the data-movement passthroughs of issue 24
(docs/semantics.md "Indexing with writes", "Exact passthrough")."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, num_threads

import repmode

aten = torch.ops.aten


def _sequential_writes(self: torch.Tensor, dests: list[int], values: torch.Tensor) -> torch.Tensor:
    out = self.contiguous().clone().reshape(-1)
    for j, d in enumerate(dests):
        out[d] = values[j]
    return out.reshape(self.shape)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_scatter_with_repeated_indices_keeps_the_last_write(dtype, rng):
    self = (torch.randn(4, 6, generator=rng) * 5).to(dtype)
    index = torch.randint(0, 4, (7, 6), generator=rng)
    src = (torch.randn(7, 6, generator=rng) * 5).to(dtype)
    strides = self.stride()
    dests = [int(index[i, j]) * strides[0] + j for i in range(7) for j in range(6)]
    with repmode.enabled():
        got = self.scatter(0, index, src)
        inplace = self.clone().scatter_(0, index, src)
        out = torch.empty_like(self)
        torch.scatter(self, 0, index, src, out=out)
    want = _sequential_writes(self, dests, src.reshape(-1))
    for name, t in (("scatter", got), ("scatter_", inplace), ("out=", out)):
        assert_bitwise_equal(t, want, name)


def test_index_copy_with_repeated_indices_keeps_the_last_slice(rng):
    self = torch.randn(5, 3, generator=rng)
    index = torch.tensor([4, 0, 4, 2, 0])
    source = torch.randn(5, 3, generator=rng)
    with repmode.enabled():
        got = self.index_copy(0, index, source)
        t = self.t().contiguous().t()  # a transposed layout, same values
        got_t = t.clone().index_copy_(0, index, source)
    want = self.clone()
    want[4], want[0], want[2] = source[2], source[4], source[3]
    assert_bitwise_equal(got, want)
    assert_bitwise_equal(got_t, want, "transposed self")
    distinct = torch.tensor([3, 1, 0])
    with repmode.enabled():
        assert_bitwise_equal(self.index_copy(0, distinct, source[:3]), self.index_copy(0, distinct, source[:3]))
        with pytest.raises(IndexError, match="out of bounds"):
            self.index_copy(0, torch.tensor([5]), source[:1])


def test_as_strided_scatter_with_overlapping_view_keeps_the_last_write(rng):
    self = torch.randn(12, generator=rng)
    src = torch.randn(3, 4, generator=rng)
    with repmode.enabled():
        got = torch.as_strided_scatter(self, src, (3, 4), (2, 1), 1)  # rows overlap by two elements
        plain = torch.as_strided_scatter(self, src[:, :2], (3, 2), (4, 1), 0)
    want = self.clone()
    for i in range(3):
        for j in range(4):
            want[1 + 2 * i + j] = src[i, j]
    assert_bitwise_equal(got, want)
    assert_bitwise_equal(plain, torch.as_strided_scatter(self, src[:, :2], (3, 2), (4, 1), 0), "no overlap: native")


def test_unsafe_index_ops_equal_their_definitions(rng):
    x = torch.randn(5, 4, generator=rng)
    idx = torch.tensor([0, 9, -3, 2])  # out of range: clamped by the masked forms
    mask = torch.tensor([True, False, True, True]).reshape(4, 1)
    values = torch.randn(4, 4, generator=rng)
    with repmode.enabled():
        picked = aten._unsafe_index.Tensor(x, [torch.tensor([4, 0, 0])])
        masked = aten._unsafe_masked_index(x, mask, [idx], -1.5)
        acc = aten._unsafe_masked_index_put_accumulate(x, mask, [idx], values)
        put = aten._unsafe_index_put(x, [torch.tensor([1, 3, 1])], values[:3], False)
    assert_bitwise_equal(picked, x[torch.tensor([4, 0, 0])])
    assert_bitwise_equal(masked, x[idx.clamp(0, 4)].masked_fill(~mask, -1.5))
    want = x.clone()
    for j, i in enumerate(idx.clamp(-5, 4).tolist()):
        if mask[j, 0]:
            want[i] = want[i] + values[j]
        else:
            want[i] = want[i] + 0.0
    assert_bitwise_equal(acc, want)
    want_put = x.clone()
    want_put[3], want_put[1] = values[1], values[2]
    assert_bitwise_equal(put, want_put)


def test_embedding_backward_decomposition_path(rng):
    """torch's decomposition of embedding_dense_backward reaches _unsafe_masked_index_put_accumulate."""
    from torch._decomp import decompositions as D
    grad = torch.randn(3, 5, 4, generator=rng)
    indices = torch.randint(0, 6, (3, 5), generator=rng)
    with repmode.enabled():
        got = D.embedding_dense_backward(grad, indices, 6, -1, False)
        want = aten.embedding_dense_backward(grad, indices, 6, -1, False)
    assert_bitwise_equal(got, want)


def test_unfold_backward_adds_overlapping_windows_in_order(rng):
    x = torch.randn(9, 3, generator=rng)
    grad = torch.randn(4, 3, 3, generator=rng)  # x.unfold(0, 3, 2): 4 windows of 3, overlapping by one
    with repmode.enabled():
        got = aten.unfold_backward(grad, [9, 3], 0, 3, 2)
        leaf = x.clone().requires_grad_()
        (leaf.unfold(0, 3, 2) * grad).sum().backward()
    want = torch.zeros(9, 3)
    for w in range(4):
        for k in range(3):
            want[2 * w + k] = want[2 * w + k] + grad[w, :, k]
    assert_bitwise_equal(got, want)
    assert_bitwise_equal(leaf.grad, want, "through autograd")
    gap = torch.randn(3, 3, 2, generator=rng)  # windows of 2 every 3: no overlap, a copy into zeros
    with repmode.enabled():
        assert_bitwise_equal(aten.unfold_backward(gap, [9, 3], 0, 2, 3), aten.unfold_backward(gap, [9, 3], 0, 2, 3))


def test_trace_is_repmodes_sum_of_the_diagonal(rng):
    x = torch.randn(300, 200, generator=rng)
    with repmode.enabled():
        got = torch.trace(x)
        want = x.diagonal().sum()
        ints = torch.trace(torch.arange(12, dtype=torch.int32).reshape(3, 4))
        leaf = x.clone().requires_grad_()
        torch.trace(leaf).backward()
    assert_bitwise_equal(got, want)
    assert ints.dtype == torch.int64 and int(ints) == 0 + 5 + 10
    # The gradient is autograd's trace_backward over repmode's ops. torch 2.11's fills every
    # (n+1)-th element of the flattened (300, 200) input, 299 of them, not 200 (an upstream bug,
    # fixed by 2.13): repmode keeps native torch's gradient, whatever its version.
    native_leaf = x.clone().requires_grad_()
    torch.trace(native_leaf).backward()
    assert_bitwise_equal(leaf.grad, native_leaf.grad, "the gradient native torch gives")
    if torch.__version__ >= "2.13":
        assert_bitwise_equal(leaf.grad, torch.eye(300, 200))
    with num_threads(1), repmode.enabled():
        one = torch.trace(x)
    assert_bitwise_equal(one, got, "1 vs 2 threads")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_gather_keeps_nan_payloads_of_strided_half_inputs(dtype):
    x = torch.zeros(6, 4, dtype=dtype)
    x.view(torch.int16)[:, 1] = 0x7F81 if dtype == torch.bfloat16 else 0x7C01  # signalling NaNs with payloads
    x.view(torch.int16)[:, 2] = -0x7E  # a negative quiet NaN with a payload (bits 0xFF82)
    strided = x.t()  # (4, 6), non-contiguous
    index = torch.tensor([[0, 5, 2], [1, 1, 0], [3, 4, 5], [2, 2, 2]])
    with repmode.enabled():
        got = strided.gather(1, index)
        out = torch.empty(4, 3, dtype=dtype)
        torch.gather(strided, 1, index, out=out)
    want = strided.contiguous().view(torch.int16).gather(1, index).view(dtype)
    assert_bitwise_equal(got, want)
    assert_bitwise_equal(out, want, "out=")


def _movement_cases(x, i64, b):
    """(name, fn) pairs for the data-movement passthroughs: inputs float, integer and bool."""
    return [
        ("view_copy", lambda: aten.view_copy(x, [4, 6])),
        ("permute_copy", lambda: aten.permute_copy(x, [1, 0])),
        ("t_copy", lambda: aten.t_copy(i64)),
        ("transpose_copy", lambda: aten.transpose_copy(b, 0, 1)),
        ("squeeze/unsqueeze_copy", lambda: aten.squeeze_copy(aten.unsqueeze_copy(x, 1), 1)),
        ("expand_copy", lambda: aten.expand_copy(x[:1], [3, 6])),
        ("diagonal_copy", lambda: aten.diagonal_copy(x, 1)),
        ("as_strided_copy", lambda: aten.as_strided_copy(x, [3, 3], [1, 2], 1)),
        ("split_with_sizes_copy", lambda: torch.cat(aten.split_with_sizes_copy(x, [1, 3], 0))),
        ("unbind_copy", lambda: torch.stack(aten.unbind_copy(i64, 1))),
        ("unfold_copy", lambda: aten.unfold_copy(x, 1, 2, 2)),
        ("select/slice_copy", lambda: aten.select_copy(aten.slice_copy(x, 1, 1, 5, 2), 0, 2)),
        ("select_scatter", lambda: torch.select_scatter(x, torch.ones(6), 0, 2)),
        ("slice_scatter", lambda: torch.slice_scatter(i64, torch.zeros(4, 2, dtype=torch.int64), 1, 1, 5, 2)),
        ("diagonal_scatter", lambda: torch.diagonal_scatter(x, torch.ones(3), -1)),
        ("rot90", lambda: torch.rot90(b, 3, [0, 1])),
        ("flip/roll", lambda: torch.roll(torch.flip(x, [1]), (1, -2), (0, 1))),
        ("pixel_shuffle", lambda: torch.nn.functional.pixel_shuffle(x.reshape(1, 4, 2, 3), 2)),
        ("pixel_unshuffle", lambda: torch.nn.functional.pixel_unshuffle(x.reshape(1, 1, 4, 6), 2)),
        ("channel_shuffle", lambda: torch.nn.functional.channel_shuffle(x.reshape(1, 4, 3, 2), 2)),
        ("eye", lambda: torch.eye(3, 5)),
        ("diag/diagflat/diag_embed", lambda: torch.diag_embed(torch.diag(x[:, :4]) + torch.diagflat(x[0, :2])[0, 0])),
        ("block_diag", lambda: torch.block_diag(x, x[:2, :2])),
        ("tril/triu_indices", lambda: torch.cat([torch.tril_indices(4, 5, 1), torch.triu_indices(3, 3, -1)], 1)),
        ("fill", lambda: aten.fill.Scalar(i64, 7)),
        ("masked_fill Tensor", lambda: x.masked_fill(x > 0, torch.tensor(2.5))),
        ("index_fill repeated", lambda: x.index_fill(1, torch.tensor([1, 1, 4]), -1.0)),
        ("bitwise Scalar", lambda: (i64 & 6) | 1 ^ (i64 << 2) >> 1),
        ("complex / view_as_real", lambda: torch.view_as_real(torch.complex(x, x.flip(0)))),
        ("view_as_complex", lambda: torch.view_as_real(torch.view_as_complex(x.contiguous().reshape(4, 3, 2)))),
        ("repeat_interleave", lambda: torch.repeat_interleave(x, torch.tensor([2, 0, 1, 3]), 0)),
        ("_chunk_cat", lambda: torch._chunk_cat([x, x[:, :3]], 1, 2)),
        ("in-place views", lambda: x.clone().unsqueeze_(0).squeeze_(0).t_()),
    ]


def test_data_movement_equals_native_and_is_invariant(rng):
    x = torch.randn(4, 6, generator=rng)
    i64 = torch.randint(-9, 9, (4, 6), generator=rng)
    b = i64 > 0
    native = {name: fn() for name, fn in _movement_cases(x, i64, b)}
    for threads in (1, 2):
        with num_threads(threads), repmode.enabled():
            got = {name: fn() for name, fn in _movement_cases(x, i64, b)}
        for name in native:
            assert_bitwise_equal(got[name], native[name], f"{name} threads={threads}")
    xt, it = x.t().contiguous().t(), i64.t().contiguous().t()
    with repmode.enabled():
        laid = {name: fn() for name, fn in _movement_cases(xt, it, it > 0)}
    for name in native:
        if name != "as_strided_copy":  # as_strided reads storage positions: layout is its argument
            assert_bitwise_equal(laid[name], native[name], f"{name} transposed inputs")


def test_scatter_and_copies_invariant_to_threads_and_layout(rng):
    index = torch.randint(0, 40, (300, 30), generator=rng)
    rows = torch.randint(0, 30, (300,), generator=rng)

    def compute(x, y):
        return {"scatter": torch.zeros(40, 30).scatter(0, index, x),
                "index_copy": torch.zeros(30, 129).index_copy(0, rows, y),
                "index_put": torch.zeros(30, 129).index_put((rows,), y)}
    assert_invariant(compute, torch.randn(300, 30, generator=rng), torch.randn(300, 129, generator=rng))


def test_backward_of_the_copies(rng):
    """index_copy, index_fill, masked_scatter, gather, scatter and rot90 train in strict mode; the
    gradients equal native autograd's (data movement, or one addition per element)."""
    x = torch.randn(5, 4, generator=rng)
    src = torch.randn(5, 4, generator=rng)
    mask = torch.rand(5, 4, generator=rng) > 0.5
    index = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0], [4, 4, 4, 4]])

    def grads():
        a, s = x.clone().requires_grad_(), src.clone().requires_grad_()
        y = (a.index_copy(0, torch.tensor([2, 0]), s[:2]).index_fill(1, torch.tensor([3]), 0.5)
             .masked_scatter(mask, s).gather(0, index).sum(0))
        z = torch.rot90(a.scatter(0, index[:2], s[:2]), 1, [0, 1]).sum(1)
        (y.sum() + (z * torch.arange(4.)).sum()).backward()
        return a.grad, s.grad
    want = grads()
    with repmode.enabled():
        got = grads()
    assert_bitwise_equal(got[0], want[0], "self")
    assert_bitwise_equal(got[1], want[1], "source")



def test_bool_accumulation_is_a_logical_or_as_in_torch(rng):
    """index_put/put with accumulate=True on bool: or-ing is order-free, torch's result is unique."""
    x = torch.rand(5, 5, generator=rng) > 0.7
    idx = torch.randint(0, 5, (9,), generator=rng)
    v = torch.rand(9, 5, generator=rng) > 0.5
    flat_idx = torch.randint(0, 25, (7,), generator=rng)
    fv = torch.rand(7, generator=rng) > 0.5
    with repmode.enabled():
        got = x.index_put((idx,), v, accumulate=True)
        put = x.put(flat_idx, fv, accumulate=True)
    assert torch.equal(got, x.index_put((idx,), v, accumulate=True))
    assert torch.equal(put, x.put(flat_idx, fv, accumulate=True))


def test_empty_index_of_another_rank(rng):
    """torch accepts an empty index of a higher rank (gather's OpInfo samples); its backward adds
    nothing."""
    x = torch.randn(5, generator=rng).requires_grad_()
    index = torch.empty(2, 0, dtype=torch.int64)
    with repmode.enabled():
        out = x.gather(0, index)
        out.sum().backward()
        added = torch.zeros(5).scatter_add(0, index, torch.empty(2, 0))
    assert out.shape == (2, 0)
    assert_bitwise_equal(x.grad, torch.zeros(5))
    assert_bitwise_equal(added, torch.zeros(5))
