"""A backward started after the block closed (``with repmode.enabled(): loss = ...`` then
``loss.backward()``) runs the nodes the block recorded through repmode: the same bits as a
backward inside the block, at any thread count. Nodes created outside the block stay native; the
bookkeeping (saved-tensor hooks) keeps autograd's in-place check, leaks nothing and leaves no
mode behind."""
from __future__ import annotations

import gc
import weakref

import pytest
import torch

import repmode
from repmode.mode import active_mode
from repmode.registry import DISPATCH

aten = torch.ops.aten
F = torch.nn.functional


def _model_and_batch():
    g = torch.Generator().manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(40, 64), torch.nn.GELU(), torch.nn.LayerNorm(64),
                                torch.nn.Linear(64, 10))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) / 5)
    return model, torch.randn(300, 40, generator=g), torch.randint(0, 10, (300,), generator=g)


def _grads(where: str, threads: int):
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        model, x, y = _model_and_batch()
        with repmode.enabled():
            loss = F.cross_entropy(model(x), y)
            if where == "inside":
                loss.backward()
        if where == "outside":
            loss.backward()
        assert active_mode() is None
        return [p.grad for p in model.parameters()]
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("threads", [1, 2])
def test_backward_after_the_block_gives_the_bits_of_backward_inside_it(threads):
    inside = _grads("inside", 2)
    outside = _grads("outside", threads)
    for a, b in zip(inside, outside):
        assert torch.equal(a.view(torch.int32), b.view(torch.int32))


def _counting(monkeypatch, op):
    calls = []
    impl = DISPATCH[op]

    def counted(func, args, kwargs):
        calls.append(func)
        return impl(func, args, kwargs)

    monkeypatch.setitem(DISPATCH, op, counted)
    return calls


def test_only_the_nodes_recorded_in_the_block_reach_repmode(monkeypatch):
    mm = _counting(monkeypatch, aten.mm.default)
    x = torch.randn(8, 5, requires_grad=True)
    w = torch.randn(5, 6, requires_grad=True)
    v = torch.randn(6, 3, requires_grad=True)
    with repmode.enabled():
        h = x @ w                 # MmBackward0 recorded inside: its two mm run through repmode
    assert len(mm) == 1
    out = (h @ v).sum()           # outside: its backward's two mm run natively
    out.backward()
    assert len(mm) == 3 and active_mode() is None
    assert x.grad is not None and v.grad is not None


def test_torch_autograd_grad_and_double_backward_outside_match_inside():
    x = torch.randn(7, dtype=torch.float64, requires_grad=True)

    def second_derivative(outside: bool):
        with repmode.enabled():
            y = x.exp().tanh().sum()
            if not outside:
                (g,) = torch.autograd.grad(y, x, create_graph=True)
                return g, torch.autograd.grad(g.sum(), x)[0]
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        return g, torch.autograd.grad(g.sum(), x)[0]

    for a, b in zip(second_derivative(False), second_derivative(True)):
        assert torch.equal(a, b)


def test_strict_mode_applies_to_the_covered_backward(monkeypatch):
    monkeypatch.delitem(DISPATCH, aten.tanh_backward.default)
    x = torch.randn(4, requires_grad=True)
    with repmode.enabled():
        y = x.tanh().sum()
    with pytest.raises(repmode.UnsupportedOpError, match="tanh_backward"):
        y.backward()
    assert active_mode() is None  # the engine restored the thread's modes


def test_an_in_place_change_after_the_block_is_still_caught():
    x = torch.randn(4, requires_grad=True)
    with repmode.enabled():
        y = x.exp()
        s = y.sum()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*expected version 0"):
        s.backward()


def test_the_graph_is_freed_with_its_tensors():
    x = torch.randn(100, requires_grad=True)
    with repmode.enabled():
        y = x.exp()   # saves its own output
        z = y.tanh()  # saves its own output
    refs = [weakref.ref(y), weakref.ref(z)]
    del y, z
    gc.collect()
    assert [r() for r in refs] == [None, None]  # a saved output holding its grad_fn would keep both


def test_reading_a_saved_tensor_outside_backward_pushes_no_mode():
    x = torch.randn(4, requires_grad=True)
    with repmode.enabled():
        y = x.exp()
    assert torch.equal(y.grad_fn._saved_result, y)  # the unpack hook ran, outside any backward
    assert active_mode() is None


def test_the_bookkeeping_is_invisible_to_the_mode():
    # the pack hook's detach runs below the dispatch modes: a block's op sequence is unchanged
    seen = []
    from repmode.mode import ReproducibleMode

    original = ReproducibleMode.__torch_dispatch__

    def spy(self, func, types, args=(), kwargs=None):
        seen.append(str(func))
        return original(self, func, types, args, kwargs)

    x = torch.randn(4, requires_grad=True)
    ReproducibleMode.__torch_dispatch__ = spy
    try:
        with repmode.enabled():
            x.exp().tanh().sum()
    finally:
        ReproducibleMode.__torch_dispatch__ = original
    assert seen == ["aten.exp.default", "aten.tanh.default", "aten.sum.default"]
