"""repmode.from_torch_module / wrap and repmode.ops: reproducibility for one module or one call
without a `with` block — bit for bit what the same code gives inside repmode.enabled()."""
from __future__ import annotations

import io

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

import repmode
from repmode.registry import DISPATCH

aten = torch.ops.aten


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        x = F.max_pool2d(torch.tanh(self.bn(self.conv(x))), 2)
        return self.fc(x.flatten(1))


def make_model(seed=0):
    torch.manual_seed(seed)
    return SmallCNN()


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(6, 1, 8, 8, generator=g), torch.randint(0, 3, (6,), generator=g)


def grads(model):
    return [p.grad.clone() for p in model.parameters()]


def bitwise_equal(a, b):
    """Same dtype, shape and bits (torch.equal alone calls -0.0 and +0.0 equal)."""
    bits = {torch.float32: torch.int32, torch.float64: torch.int64}
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(
        a.contiguous().view(bits.get(a.dtype, a.dtype)), b.contiguous().view(bits.get(b.dtype, b.dtype)))


def test_wrapped_module_matches_the_original_under_the_mode():
    x, y = data()
    reference = make_model()
    with repmode.enabled():
        ref_out = reference(x)
        repmode.ops.cross_entropy(ref_out, y).backward()
    wrapped = repmode.wrap(make_model())
    out = wrapped(x)                                   # no block around the caller
    repmode.ops.cross_entropy(out, y).backward()       # backward started outside any block
    assert bitwise_equal(out, ref_out)
    for g, r in zip(grads(wrapped), grads(reference)):
        assert bitwise_equal(g, r)
    for b, r in zip(wrapped.buffers(), reference.buffers()):  # running statistics too
        assert torch.equal(b, r)
    assert _get_current_dispatch_mode_stack() == []


def test_backward_of_the_wrapped_forward_runs_through_repmode(monkeypatch):
    calls = []
    original = DISPATCH[aten.mm.default]

    def counting(func, args, kwargs):
        calls.append(func)
        return original(func, args, kwargs)

    monkeypatch.setitem(DISPATCH, aten.mm.default, counting)
    layer = repmode.wrap(torch.nn.Linear(5, 3, bias=False))
    x = torch.randn(4, 5, requires_grad=True)
    out = layer(x)
    forward_calls = len(calls)
    assert forward_calls == 1
    (out * 2).sum().backward()   # the loss's own nodes run natively; the layer's nodes through repmode
    assert len(calls) == forward_calls + 2  # grad input and grad weight
    assert _get_current_dispatch_mode_stack() == []


def test_module_keeps_working_as_a_module():
    model = make_model()
    wrapped = repmode.from_torch_module(model)
    assert wrapped is model and isinstance(wrapped, SmallCNN) and repmode.is_wrapped(model)
    assert repmode.wrap(model) is model  # twice: harmless
    assert model.forward.original.__func__ is SmallCNN.forward  # not wrapped twice
    seen = []
    model.fc.register_forward_hook(lambda m, i, o: seen.append(o.shape))
    model.eval()
    x, _ = data()
    with torch.no_grad():
        out = model(x)
    assert seen == [out.shape] and not model.training
    reference = make_model().eval()
    with repmode.enabled(), torch.no_grad():
        assert torch.equal(reference(x), out)


def test_state_dict_round_trip_and_pickling():
    model = repmode.wrap(make_model())
    x, _ = data()
    fresh = repmode.wrap(make_model(seed=5))
    fresh.load_state_dict(model.state_dict())
    assert list(fresh.state_dict()) == list(SmallCNN().state_dict())
    assert torch.equal(fresh(x), model(x))
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=False)
    assert repmode.is_wrapped(loaded) and torch.equal(loaded(x), model(x))


def test_unwrap_restores_the_plain_module():
    model = repmode.wrap(make_model())
    repmode.unwrap(model)
    assert not repmode.is_wrapped(model) and "forward" not in model.__dict__
    x = torch.randn(1, 1, 8, 8, dtype=torch.complex64)
    with pytest.raises(RuntimeError):
        model(x)  # native torch refuses complex conv input with a float weight; no repmode involved


def test_repeated_calls_do_not_pile_hooks_on_parameters():
    layer = repmode.wrap(torch.nn.Linear(3, 2))
    x = torch.randn(2, 3)
    for _ in range(3):
        layer(x).sum().backward()
    accumulate = layer(x).grad_fn.next_functions
    nodes = [n for n, _ in accumulate if n is not None]
    assert all("repmode" not in n.metadata for n in nodes if type(n).__name__ == "AccumulateGrad")


def test_strict_wrapper_raises_on_unsupported_ops():
    class FFT(torch.nn.Module):
        def forward(self, x):
            return torch.polar(x, x).real

    with pytest.raises(repmode.UnsupportedOpError):
        repmode.wrap(FFT())(torch.randn(8))
    with pytest.warns(repmode.UnsupportedOpWarning):
        repmode.from_torch_module(FFT(), strict=False)(torch.randn(8))


def _inputs():
    g = torch.Generator().manual_seed(3)
    a = torch.randn(5, 7, generator=g)
    return {
        "mm": ((a, torch.randn(7, 4, generator=g)), {}),
        "matmul": ((torch.randn(2, 5, 7, generator=g), torch.randn(7, 3, generator=g)), {}),
        "bmm": ((torch.randn(2, 5, 7, generator=g), torch.randn(2, 7, 3, generator=g)), {}),
        "linear": ((a, torch.randn(3, 7, generator=g), torch.randn(3, generator=g)), {}),
        "div": ((a, 10), {}),
        "sqrt": ((a.abs(),), {}),
        "exp": ((a,), {}),
        "log": ((a.abs() + 0.1,), {}),
        "sum": ((torch.randn(10000, generator=g),), {}),
        "mean": ((a, 1), {}),
        "softmax": ((a, 1), {}),
        "log_softmax": ((a, 1), {}),
        "cross_entropy": ((a, torch.randint(0, 7, (5,), generator=g)), {"label_smoothing": 0.1}),
        "conv2d": ((torch.randn(2, 3, 6, 6, generator=g), torch.randn(4, 3, 3, 3, generator=g)), {"padding": 1}),
        "layer_norm": ((a, (7,)), {}),
    }


_TORCH = {"mm": torch.mm, "matmul": torch.matmul, "bmm": torch.bmm, "linear": F.linear, "div": torch.div,
          "sqrt": torch.sqrt, "exp": torch.exp, "log": torch.log, "sum": torch.sum, "mean": torch.mean,
          "softmax": torch.softmax, "log_softmax": torch.log_softmax, "cross_entropy": F.cross_entropy,
          "conv2d": F.conv2d, "layer_norm": F.layer_norm}


@pytest.mark.parametrize("name", sorted(_TORCH))
def test_ops_equal_the_same_call_under_the_mode(name):
    assert set(_TORCH) == set(repmode.ops.__all__)
    args, kwargs = _inputs()[name]
    leaf = args[0].clone().requires_grad_(True)
    got = getattr(repmode.ops, name)(leaf, *args[1:], **kwargs)
    got.sum().backward()
    ref_leaf = args[0].clone().requires_grad_(True)
    with repmode.enabled():
        expected = _TORCH[name](ref_leaf, *args[1:], **kwargs)
        expected.sum().backward()
    assert bitwise_equal(got, expected)
    assert bitwise_equal(leaf.grad, ref_leaf.grad)


@pytest.mark.parametrize("name", ["mm", "exp", "sqrt", "sum", "softmax", "conv2d"])
def test_ops_refuse_unsupported_dtypes(name):
    args, kwargs = _inputs()[name]
    args = (args[0].to(torch.complex64),) + tuple(a.to(torch.complex64) if isinstance(a, torch.Tensor) else a
                                                   for a in args[1:])
    with pytest.raises(repmode.UnsupportedOpError):
        getattr(repmode.ops, name)(*args, **kwargs)
    assert _get_current_dispatch_mode_stack() == []
