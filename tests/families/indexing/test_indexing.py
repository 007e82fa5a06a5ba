"""Indexing with writes: index_put (accumulate or not), put, and the selection ops around them;
bitwise against plain loops in the documented order, invariance, strict mode and errors."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, assert_invariant

import repmode

aten = torch.ops.aten


def _loop_accumulate(self, dest, values):
    """out.flat[dest[j]] += values[j] for j = 0, 1, ... (one IEEE addition of 0-d tensors each)."""
    out = self.contiguous().clone()
    flat = out.view(-1)
    for d, v in zip(dest.reshape(-1).tolist(), values.reshape(-1)):
        flat[d] = flat[d] + v
    return out


def _dest(shape, key):
    return torch.arange(torch.Size(shape).numel()).view(shape)[key]


INDEX_CASES = {
    "rows_repeated": lambda g: ((torch.tensor([0, 2, 2, 5, 2, 0]),), (6, 7)),
    "pairs_repeated": lambda g: ((torch.tensor([1, 1, 3, 1]), torch.tensor([4, 4, 0, 4])), (4,)),
    "slice_then_index": lambda g: ((slice(None), torch.tensor([[3, 1], [3, 3]])), (5, 2, 2)),
    "index_slice_index": lambda g: ((torch.tensor([0, 0, 4]), slice(None), torch.tensor([1, 1, 1])), None),
    "bool_mask": lambda g: ((torch.rand(5, 7, generator=g) > 0.5,), None),
    "broadcast_values": lambda g: ((torch.tensor([2, 2, 2]),), (1, 7)),
}


def _key_for_aten(key):
    return [None if isinstance(k, slice) else k for k in key]


@pytest.mark.parametrize("case", list(INDEX_CASES))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_index_put_accumulate_equals_loop(case, dtype, rng):
    shape = (5, 7) if case != "rows_repeated" else (6, 7)
    if case == "slice_then_index":
        shape = (5, 7)
    if case == "index_slice_index":
        shape = (5, 3, 7)
    self = torch.randn(shape, generator=rng, dtype=dtype)
    key, vshape = INDEX_CASES[case](rng)
    dest = _dest(shape, key)
    values = torch.randn(vshape or dest.shape, generator=rng, dtype=dtype) * 3
    want = _loop_accumulate(self, dest, values.expand(dest.shape))
    with repmode.enabled():
        got = aten.index_put(self, _key_for_aten(key), values, True)
        got_ = self.clone()
        aten.index_put_(got_, _key_for_aten(key), values, True)
        got_impl = self.clone()
        aten._index_put_impl_(got_impl, _key_for_aten(key), values, True)
    assert_bitwise_equal(got, want, "index_put")
    assert_bitwise_equal(got_, want, "index_put_")
    assert_bitwise_equal(got_impl, want, "_index_put_impl_")


def test_index_put_accumulate_non_contiguous_self(rng):
    base = torch.randn(7, 6, generator=rng)
    self = base.t()                                 # (6, 7), transposed strides
    idx = (torch.tensor([0, 2, 2, 5]),)
    values = torch.randn(4, 7, generator=rng)
    want = _loop_accumulate(self, _dest(self.shape, idx), values)
    with repmode.enabled():
        self.index_put_(idx, values, accumulate=True)
    assert_bitwise_equal(self.contiguous(), want, "transposed self")
    assert_bitwise_equal(base.t().contiguous(), want, "written through the view")


def test_put_accumulate_equals_loop(rng):
    self = torch.randn(4, 5, generator=rng)
    index = torch.tensor([3, -1, 3, 19, 0, 3])
    source = torch.randn(6, generator=rng)
    want = _loop_accumulate(self, torch.remainder(index, 20), source)
    with repmode.enabled():
        got = self.put(index, source, accumulate=True)
        got_ = self.clone().put_(index, source, accumulate=True)
    assert_bitwise_equal(got, want, "put")
    assert_bitwise_equal(got_, want, "put_")


def test_index_put_without_accumulate_matches_native(rng):
    self = torch.randn(6, 7, generator=rng)
    key = (torch.tensor([4, 0, 2]), slice(None))
    values = torch.randn(3, 7, generator=rng)
    want = self.clone()
    want[key] = values
    with repmode.enabled():
        got = self.clone()
        got[key] = values
        # repeated destinations written with the same bits are defined: allowed
        same = self.clone()
        same[torch.tensor([1, 1, 3])] = 0.25
    assert_bitwise_equal(got, want, "distinct destinations")
    want_same = self.clone()
    want_same[torch.tensor([1, 3])] = 0.25
    assert_bitwise_equal(same, want_same, "repeated destination, equal values")


def test_colliding_writes_keep_the_last_in_index_order(rng):
    """Two positions writing one destination: the later position (row-major in the indexing result,
    or in ``index`` for put) wins, whatever the native kernel's write order."""
    self = torch.randn(6, 7, generator=rng)
    values = torch.randn(3, 7, generator=rng)
    with repmode.enabled():
        got = self.clone().index_put_((torch.tensor([1, 4, 1]),), values)
        put = self.clone().put_(torch.tensor([3, 9, 3, 3]), torch.tensor([1.0, 2.0, 3.0, 4.0]))
        through_setitem = self.clone()
        through_setitem[torch.tensor([[2, 2], [5, 2]])] = values[:1].expand(2, 2, 7).clone() * 1
    want = self.clone()
    want[1], want[4] = values[2], values[1]
    assert_bitwise_equal(got, want, "index_put_")
    want_put = self.clone().reshape(-1)
    want_put[3], want_put[9] = 4.0, 2.0
    assert_bitwise_equal(put, want_put.reshape(6, 7), "put_")
    assert_bitwise_equal(through_setitem[2], values[0], "setitem")


def test_errors(rng):
    self = torch.randn(6, 7, generator=rng)
    with repmode.enabled():
        with pytest.raises(IndexError):
            self.index_put((torch.tensor([6]),), torch.ones(7), accumulate=True)
        with pytest.raises(IndexError):
            self.put(torch.tensor([42]), torch.ones(1), accumulate=True)
        with pytest.raises(RuntimeError, match="dtypes match"):
            self.index_put((torch.tensor([1]),), torch.ones(7, dtype=torch.float64), accumulate=True)
        with pytest.raises(RuntimeError, match="cannot be broadcast"):
            self.index_put((torch.tensor([1, 2]),), torch.ones(3, 7), accumulate=True)


def _grads(x):
    out = {}
    i = torch.tensor([0, 2, 2, 5, 2])
    j = torch.tensor([1, 1, 6, 1, 1])
    m = x > 0.3
    w = torch.arange(1.0, 43.0).view(6, 7)
    fns = {
        "index_rows": lambda x: (x[i] * w[:5]).sum(),
        "index_pairs": lambda x: (x[i, j] * torch.arange(5.0)).sum(),
        "mask": lambda x: (x[m] * 3).sum(),
        "index_put_acc": lambda x: (torch.index_put(x * 1.5, (i,), x[:5] * 0.5, True) * w).sum(),
        "index_put": lambda x: (torch.index_put(x, (torch.tensor([3, 1]),), x[:2] * 2) * w).sum(),
        "masked_scatter": lambda x: (x.masked_scatter(m, x * w) * w).sum(),
        "masked_select": lambda x: (torch.masked_select(x, m) * 2).sum(),
        "take": lambda x: (torch.take(x, torch.tensor([0, 3, 3, 41, 3])) * torch.arange(5.0)).sum(),
        "gather": lambda x: (torch.gather(x, 1, torch.tensor([[0, 0, 6], [1, 2, 2]] * 3)) * 3).sum(),
        "scatter": lambda x: (torch.scatter(x, 1, torch.tensor([[0], [5]] * 3), x[:, :1] * 2) * w).sum(),
        "index_select": lambda x: (torch.index_select(x, 0, i) * w[:5]).sum(),
    }
    for name, f in fns.items():
        leaf = x.detach().clone().requires_grad_()
        loss = f(leaf)
        loss.backward()
        out[name] = loss.detach()
        out[name + "_grad"] = leaf.grad
    out["nonzero"] = torch.nonzero(m)
    return out


def test_backward_paths_invariant(rng):
    x = torch.randn(6, 7, generator=rng)
    got = assert_invariant(_grads, x)
    want = _grads(x)  # native: these are exact copies and short ordered sums of few terms
    for k in ("index_rows_grad", "mask_grad", "masked_scatter_grad", "gather_grad", "nonzero"):
        assert_bitwise_equal(got[k], want[k], k)


@pytest.mark.parametrize("ctx", ["no_grad", "inference_mode"])
def test_strict_without_grad(ctx, rng):
    x = torch.randn(6, 7, generator=rng)
    with repmode.enabled():
        want = _grads(x)
        with (torch.no_grad() if ctx == "no_grad" else torch.inference_mode()):
            y = x.clone()
            y.index_put_((torch.tensor([0, 0, 3]),), torch.ones(3, 7), accumulate=True)
            z = x.masked_scatter(x > 0, x * 2)
            n = torch.nonzero(x > 0.3)
            t = torch.take(x, torch.tensor([1, 1]))
            x.clone().put_(torch.tensor([5, 5]), torch.tensor([1.0, 2.0]), accumulate=True)
    assert_bitwise_equal(n, want["nonzero"], "nonzero")
    assert y.shape == x.shape and z.shape == x.shape and t.shape == (2,)
