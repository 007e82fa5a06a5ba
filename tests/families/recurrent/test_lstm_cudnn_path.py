"""nn.LSTM's CUDA ops (aten._cudnn_rnn + _cudnn_rnn_backward) give the bits of the CPU path
(torch's mkldnn driver over mkldnn_rnn_layer) for the same module, inputs and seed.

No GPU is needed: inside repmode.enabled() the mode intercepts aten._cudnn_rnn called on CPU
tensors before any backend kernel, and autograd records its CudnnRnnBackward0 node, so each test
runs the module normally (the CPU path) and calls the cuDNN op with the module's _flat_weights,
then compares every output and gradient bit for bit."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal
from torch import nn

import repmode

aten = torch.ops.aten
T, B, I, H = 5, 3, 7, 6


def _module(kw, seed=0):
    torch.manual_seed(seed)
    return nn.LSTM(I, H, **kw)


def _inputs(m, seed=1):
    g = torch.Generator().manual_seed(seed)
    n = m.num_layers * (2 if m.bidirectional else 1)
    x = torch.randn((B, T, I) if m.batch_first else (T, B, I), generator=g)
    return x, torch.randn(n, B, H, generator=g), torch.randn(n, B, H, generator=g)


def _cudnn_forward(m, x, hx, cx):
    """What torch's _cudnn_impl calls for nn.LSTM on CUDA, here on CPU tensors."""
    return aten._cudnn_rnn(x, m._flat_weights, 4 if m.bias else 2, None, hx, cx, 2, m.hidden_size, 0, m.num_layers,
                           m.batch_first, float(m.dropout), m.training, m.bidirectional, [], None)


def _run(m, x, h0, c0, *, cudnn, state=True, use="yhc", seed=7, retain=False):
    """Forward and backward of a fixed loss; every output and gradient."""
    m.zero_grad()
    x = x.clone().requires_grad_()
    h0, c0 = h0.clone().requires_grad_(), c0.clone().requires_grad_()
    torch.manual_seed(seed)                     # the dropout masks' draws
    with repmode.enabled():
        if cudnn:
            zeros = torch.zeros_like(h0)
            y, hy, cy, _, _ = _cudnn_forward(m, x, h0 if state else zeros, c0 if state else zeros)
            assert y.grad_fn.name() == "CudnnRnnBackward0"
        else:
            y, (hy, cy) = m(x, (h0, c0)) if state else m(x)
        loss = 0
        if "y" in use:
            loss = loss + (y * y).sum()
        if "h" in use:
            loss = loss + (hy * 0.5).sum()
        if "c" in use:
            loss = loss + (cy * cy).sum()
        loss.backward(retain_graph=retain)
        if retain:                              # a second backward through the cloned reserve
            loss.backward()
    out = {"y": y.detach(), "hy": hy.detach(), "cy": cy.detach(), "x grad": x.grad}
    if state:
        out.update({"h0 grad": h0.grad, "c0 grad": c0.grad})
    for name, p in m.named_parameters():
        out[name + " grad"] = p.grad.clone()
    return out


def _assert_same(kw, **run_kw):
    m = _module(kw)
    x, h0, c0 = _inputs(m)
    want = _run(m, x, h0, c0, cudnn=False, **run_kw)
    got = _run(m, x, h0, c0, cudnn=True, **run_kw)
    assert want.keys() == got.keys()
    for k in want:
        assert_bitwise_equal(got[k], want[k], k)


CONFIGS = {
    "1 layer": dict(),
    "2 layers": dict(num_layers=2),
    "3 layers bidirectional": dict(num_layers=3, bidirectional=True),
    "bidirectional batch_first": dict(bidirectional=True, batch_first=True),
    "2 layers batch_first": dict(num_layers=2, batch_first=True),
    "no bias": dict(bias=False),
    "2 layers bidirectional no bias": dict(num_layers=2, bidirectional=True, bias=False),
    "3 layers dropout": dict(num_layers=3, dropout=0.3),
    "2 layers bidirectional dropout batch_first": dict(num_layers=2, bidirectional=True, dropout=0.2, batch_first=True),
    "2 layers dropout 1": dict(num_layers=2, dropout=1.0),
}


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("state", [True, False], ids=["hx given", "hx zeros"])
def test_cudnn_op_gives_the_cpu_paths_bits(name, state):
    _assert_same(dict(CONFIGS[name]), state=state)


@pytest.mark.parametrize("use", ["y", "h", "c", "yc"])
def test_cudnn_op_gives_the_cpu_paths_bits_when_some_outputs_get_no_gradient(use):
    _assert_same(dict(num_layers=2, bidirectional=True), use=use)


@pytest.mark.parametrize("name", ["1 layer", "3 layers dropout", "2 layers bidirectional dropout batch_first"])
def test_cudnn_op_gives_the_cpu_paths_bits_under_retain_graph(name):
    _assert_same(dict(CONFIGS[name]), retain=True)


def test_dropout_masks_follow_the_seed():
    """Same seed: same masks as the CPU path (above); another seed: other masks."""
    m = _module(dict(num_layers=2, dropout=0.5))
    x, h0, c0 = _inputs(m)
    a = _run(m, x, h0, c0, cudnn=True, seed=7)
    b = _run(m, x, h0, c0, cudnn=True, seed=8)
    assert not torch.equal(a["y"], b["y"])


def test_eval_mode_forward_gives_the_cpu_paths_bits_without_grad():
    m = _module(dict(num_layers=2, bidirectional=True, dropout=0.4)).eval()
    x, h0, c0 = _inputs(m)
    with repmode.enabled(), torch.no_grad():
        want_y, (want_h, want_c) = m(x, (h0, c0))
        y, hy, cy, _, _ = _cudnn_forward(m, x, h0, c0)
    for k, a, b in (("y", y, want_y), ("hy", hy, want_h), ("cy", cy, want_c)):
        assert_bitwise_equal(a, b, k)


@pytest.mark.parametrize("ctx", ["no_grad", "inference_mode"])
def test_forward_runs_without_autograd(ctx):
    m = _module(dict(num_layers=2, dropout=0.25))
    x, h0, c0 = _inputs(m)
    torch.manual_seed(3)
    with repmode.enabled(), torch.no_grad():
        want_y, _ = m(x, (h0, c0))
    torch.manual_seed(3)
    with repmode.enabled(), (torch.no_grad() if ctx == "no_grad" else torch.inference_mode()):
        y, _, _, _, _ = _cudnn_forward(m, x, h0, c0)
    assert_bitwise_equal(y, want_y, "y")


def test_flatten_weight_is_exact_data_movement():
    reg = repmode.registry.REGISTRY[aten._cudnn_rnn_flatten_weight.default]
    assert reg.kind == "passthrough" and "exact data movement" in reg.reason


# ---- refusals -----------------------------------------------------------------------------------

def _args(m, x, h0, c0, **change):
    a = dict(input=x, weight=m._flat_weights, weight_stride0=4, weight_buf=None, hx=h0, cx=c0, mode=2,
             hidden_size=H, proj_size=0, num_layers=m.num_layers, batch_first=False, dropout=0.0, train=True,
             bidirectional=False, batch_sizes=[], dropout_state=None)
    a.update(change)
    return list(a.values())


@pytest.mark.parametrize("change, message", [
    (dict(mode=3), "fused GRU is not implemented"),
    (dict(mode=1), r"fused RNN \(tanh\) is not implemented"),
    (dict(mode=0), r"fused RNN \(relu\) is not implemented"),
    (dict(proj_size=4), "proj_size > 0"),
    (dict(batch_sizes=[3, 3, 2, 1, 1]), "packed sequences"),
])
def test_refusals_say_what_is_and_is_not_supported(change, message):
    m = _module({})
    x, h0, c0 = _inputs(m)
    with repmode.enabled(), pytest.raises(repmode.UnsupportedOpError, match=message) as info:
        aten._cudnn_rnn(*_args(m, x, h0, c0, **change))
    assert "supported: nn.LSTM (mode 2) without proj_size, float32" in str(info.value)


@pytest.mark.parametrize("dtype, message", [
    (torch.float64, "float64 is not supported .torch's CPU path for float64 LSTM is its decomposed cell"),
    (torch.bfloat16, "bfloat16 is not supported"),
])
def test_dtypes_other_than_float32_are_refused(dtype, message):
    m = _module({}).to(dtype)
    x, h0, c0 = (t.to(dtype) for t in _inputs(m))
    with repmode.enabled(), pytest.raises(repmode.UnsupportedOpError, match=message):
        aten._cudnn_rnn(*_args(m, x, h0, c0))


def test_backward_of_an_eval_mode_forward_is_refused_as_in_torch():
    m = _module({})
    x, h0, c0 = _inputs(m)
    with repmode.enabled():
        y = aten._cudnn_rnn(*_args(m, x.requires_grad_(), h0, c0, train=False))[0]
        with pytest.raises(repmode.UnsupportedOpError, match="can only be called in training mode"):
            y.sum().backward()


def test_backward_needs_the_reserve_of_repmodes_forward():
    m = _module({})
    x, h0, c0 = _inputs(m)
    with repmode.enabled():
        y, _, _, reserve, wbuf = aten._cudnn_rnn(*_args(m, x, h0, c0))
        a = _args(m, x, h0, c0)
        with pytest.raises(repmode.UnsupportedOpError, match="reserve was not written by repmode"):
            aten._cudnn_rnn_backward(*a[:3], wbuf, *a[4:6], y, torch.ones_like(y), None, None, *a[6:],
                                     torch.empty(7, dtype=torch.uint8), [True, True, True, True])
