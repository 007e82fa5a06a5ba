"""Recurrent layers: nn.LSTM's mkldnn_rnn_layer (+ backward) composites against a plain
re-statement of the documented step order, invariance, accuracy against float64, and the
nn.LSTM / nn.GRU / nn.RNN modules in strict mode."""
from __future__ import annotations

import copy

import pytest
import torch
from support import assert_bitwise_equal, assert_invariant
from support.recurrent_reference import lstm_layer
from torch import nn

import repmode

aten = torch.ops.aten


def _lstm_outputs(m, x, state=None):
    """Forward and backward of a module with a fixed non-trivial loss; every output and gradient."""
    m.zero_grad()
    x = x.detach().clone().requires_grad_()
    leaves = ()
    if state is not None:
        leaves = tuple(s.detach().clone().requires_grad_() for s in (state if isinstance(state, tuple) else (state,)))
        state = leaves if isinstance(state, tuple) else leaves[0]
    y, hidden = m(x, state) if state is not None else m(x)
    hs = hidden if isinstance(hidden, tuple) else (hidden,)
    loss = (y * y).sum() + sum((h * 0.5).sum() for h in hs)
    loss.backward()
    out = {"y": y.detach(), "x_grad": x.grad}
    for i, h in enumerate(hs):
        out[f"h{i}"] = h.detach()
    for i, s in enumerate(leaves):
        out[f"state{i}_grad"] = s.grad
    for name, p in m.named_parameters():
        out[name + "_grad"] = p.grad.clone()
    return out


# ---- bitwise: the documented step order re-stated with repmode's individual ops --------------

def test_lstm_equals_restated_step_order(rng):
    T, B, I, H = 5, 3, 7, 6
    m = nn.LSTM(I, H)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=rng) * 0.4)
    x = torch.randn(T, B, I, generator=rng)
    h0, c0 = torch.randn(1, B, H, generator=rng), torch.randn(1, B, H, generator=rng)
    gy, gh, gc = (torch.randn(T, B, H, generator=rng), torch.randn(B, H, generator=rng),
                  torch.randn(B, H, generator=rng))
    with repmode.enabled():
        xx, hh, cc = (t.clone().requires_grad_() for t in (x, h0, c0))
        y, (h, c) = m(xx, (hh, cc))
        torch.autograd.backward([y, h[0], c[0]], [gy, gh, gc])
        want = lstm_layer(x, m.weight_ih_l0.detach(), m.weight_hh_l0.detach(), m.bias_ih_l0.detach(),
                              m.bias_hh_l0.detach(), h0[0], c0[0], gy, gh, gc)
    assert_bitwise_equal(y.detach(), want["y"], "y")
    assert_bitwise_equal(h[0].detach(), want["h"], "h")
    assert_bitwise_equal(c[0].detach(), want["c"], "c")
    assert_bitwise_equal(xx.grad, want["x_grad"], "x grad")
    assert_bitwise_equal(hh.grad[0], want["h0_grad"], "h0 grad")
    assert_bitwise_equal(cc.grad[0], want["c0_grad"], "c0 grad")
    assert_bitwise_equal(m.weight_ih_l0.grad, want["w_ih_grad"], "W_ih grad")
    assert_bitwise_equal(m.weight_hh_l0.grad, want["w_hh_grad"], "W_hh grad")
    assert_bitwise_equal(m.bias_ih_l0.grad, want["b_grad"], "b_ih grad")
    assert_bitwise_equal(m.bias_hh_l0.grad, want["b_grad"], "b_hh grad")


@pytest.mark.parametrize("kw", [dict(), dict(bias=False), dict(num_layers=2, bidirectional=True)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_cell_equals_op_by_op(kw, dtype, rng, monkeypatch):
    """The C++ cell kernel and the same elementwise ops called one by one give the same bits
    (odd sizes; with and without initial states and output gradients)."""
    import repmode.kernels.recurrent as rec

    x = torch.randn(5, 3, 7, generator=rng, dtype=dtype)
    layers = 2 * 2 if kw.get("bidirectional") else 1
    h0 = torch.randn(layers, 3, 11, generator=rng, dtype=dtype)
    c0 = torch.randn(layers, 3, 11, generator=rng, dtype=dtype)
    # the op itself, float32 (float64 modules do not reach it), reverse direction, grad_hy absent
    w = [torch.randn(s, generator=rng) * 0.3 for s in ((44, 7), (44, 11), (44,), (44,))]
    gy, gc = torch.randn(5, 3, 11, generator=rng), torch.randn(3, 11, generator=rng)
    results = {}
    for fused in (True, False):
        monkeypatch.setattr(rec, "FUSED_CELL", fused)
        torch.manual_seed(0)
        m = nn.LSTM(7, 11, **kw).to(dtype)
        with repmode.enabled():
            got = _lstm_outputs(m, x, (h0, c0))
            xx = x.float().requires_grad_()
            ws = [t.clone().requires_grad_() for t in w]
            y, hy, cy, _ = aten.mkldnn_rnn_layer(xx, *ws, h0[0].float(), c0[0].float(), True, [], 2, 11, 1, True,
                                                 False, False, True)
            torch.autograd.backward([y, cy], [gy, gc])
            got.update(op_y=y.detach(), op_cy=cy.detach(), op_x_grad=xx.grad,
                       **{f"op_w{k}_grad": t.grad for k, t in enumerate(ws)})
        results[fused] = got
    for k in results[True]:
        assert_bitwise_equal(results[True][k], results[False][k], k)


# ---- invariance --------------------------------------------------------------------------------

MODULES = {
    "lstm": lambda: nn.LSTM(6, 9),
    "lstm_bi2_bf": lambda: nn.LSTM(6, 9, num_layers=2, bidirectional=True, batch_first=True),
    "lstm_nobias": lambda: nn.LSTM(6, 9, bias=False),
    "gru": lambda: nn.GRU(6, 9),
    "gru_bi_bf": lambda: nn.GRU(6, 9, bidirectional=True, batch_first=True),
    "rnn_tanh2": lambda: nn.RNN(6, 9, num_layers=2),
    "rnn_relu": lambda: nn.RNN(6, 9, nonlinearity="relu"),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_invariant_to_threads_and_isa(name, rng):
    torch.manual_seed(0)
    m = MODULES[name]()
    x = torch.randn(5, 11, 6, generator=rng)
    assert_invariant(lambda x: _lstm_outputs(m, x), x)


def test_lstm_initial_state_layout_invariant(rng):
    torch.manual_seed(0)
    m = nn.LSTM(6, 9)
    x = torch.randn(4, 5, 6, generator=rng)
    h0 = torch.randn(1, 5, 9, generator=rng)
    c0 = torch.randn(1, 5, 9, generator=rng)
    with repmode.enabled():
        want = _lstm_outputs(m, x, (h0, c0))
        # the same values stored transposed / sliced
        xt = x.transpose(0, 1).contiguous().transpose(0, 1)
        h0s = torch.zeros(1, 10, 9)[:, ::2].copy_(h0)
        got = _lstm_outputs(m, xt, (h0s, c0))
    for k in want:
        assert_bitwise_equal(want[k], got[k], k)


# ---- accuracy against float64 native -------------------------------------------------------------

@pytest.mark.parametrize("name", ["lstm", "lstm_bi2_bf", "lstm_nobias", "gru", "rnn_tanh2"])
@pytest.mark.parametrize("with_state", [False, True])
def test_close_to_float64(name, with_state, rng):
    torch.manual_seed(0)
    m = MODULES[name]()
    x = torch.randn(6, 5, 6, generator=rng)
    state = None
    if with_state:
        layers = m.num_layers * (2 if m.bidirectional else 1)
        shape = (layers, 5 if not m.batch_first else 6, m.hidden_size)
        h0 = torch.randn(shape, generator=rng)
        state = (h0, torch.randn(shape, generator=rng)) if isinstance(m, nn.LSTM) else h0
    m64 = copy.deepcopy(m).double()
    state64 = None if state is None else (tuple(s.double() for s in state) if isinstance(state, tuple)
                                           else state.double())
    with repmode.enabled():
        got = _lstm_outputs(m, x, state)
    want = _lstm_outputs(m64, x.double(), state64)
    for k, w in want.items():
        # float32 roundings over ~6 steps of O(1) values: relative to the largest entry, a few
        # float32 ulps accumulate per step (forward) and per step of BPTT (gradients)
        scale = float(w.abs().max()) or 1.0
        err = float((got[k].double() - w).abs().max()) / scale
        assert err < 2e-6, (k, err)


# ---- strict mode: the modules in grad / no_grad / inference_mode --------------------------------

STRICT_MODULES = {
    **MODULES,
    "lstm_proj": lambda: nn.LSTM(6, 9, proj_size=4),
    "lstm_dropout": lambda: nn.LSTM(6, 9, num_layers=2, dropout=0.25),
}


@pytest.mark.parametrize("name", list(STRICT_MODULES))
@pytest.mark.parametrize("ctx", ["grad", "no_grad", "inference_mode"])
def test_modules_strict(name, ctx, rng):
    torch.manual_seed(0)
    m = STRICT_MODULES[name]()
    x = torch.randn(4, 3, 6, generator=rng)
    with repmode.enabled():
        if ctx == "grad":
            y, _ = m(x)
            y.sum().backward()
        else:
            with (torch.no_grad() if ctx == "no_grad" else torch.inference_mode()):
                y, _ = m(x)
        assert torch.isfinite(y).all()


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
def test_packed_sequences_strict(cls, rng):
    torch.manual_seed(0)
    m = cls(6, 9)
    x = torch.randn(5, 3, 6, generator=rng)
    packed = nn.utils.rnn.pack_padded_sequence(x, [5, 3, 2])
    with repmode.enabled():
        y, _ = m(packed)
        y.data.sum().backward()
    # the same bits at another thread count
    with repmode.enabled():
        grads = [p.grad.clone() for p in m.parameters()]
        m.zero_grad()
        torch.set_num_threads(1)
        try:
            y2, _ = m(packed)
            y2.data.sum().backward()
        finally:
            torch.set_num_threads(2)
    assert_bitwise_equal(y.data.detach(), y2.data.detach(), "packed output")
    for a, p in zip(grads, m.parameters()):
        assert_bitwise_equal(a, p.grad, "packed grad")


def test_training_steps_reproducible(rng):
    """A few SGD steps of the target model (LSTM over 8 rows of 8 pixels) give the same bits at
    1 and 3 threads."""
    def train(threads):
        torch.manual_seed(0)
        m, head = nn.LSTM(8, 16, batch_first=True), nn.Linear(16, 10)
        opt = torch.optim.SGD([*m.parameters(), *head.parameters()], lr=0.1)
        g = torch.Generator().manual_seed(5)
        old = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            with repmode.enabled():
                for _ in range(3):
                    x = torch.randn(12, 8, 8, generator=g)
                    y = torch.randint(0, 10, (12,), generator=g)
                    opt.zero_grad()
                    out, _ = m(x)
                    nn.functional.cross_entropy(head(out[:, -1]), y).backward()
                    opt.step()
        finally:
            torch.set_num_threads(old)
        return [p.detach().clone() for p in [*m.parameters(), *head.parameters()]]
    for a, b in zip(train(1), train(3)):
        assert_bitwise_equal(a, b, "trained parameter")


# ---- errors ----------------------------------------------------------------------------------------

def _layer_args(mode=2, batch_sizes=()):
    T, B, I, H = 2, 3, 4, 5
    return (torch.randn(T, B, I), torch.randn(4 * H, I), torch.randn(4 * H, H), torch.randn(4 * H),
            torch.randn(4 * H), torch.zeros(B, H), torch.zeros(B, H), False, list(batch_sizes), mode, H, 1, True,
            False, False, True)


def test_unsupported_mode_and_packed_raise():
    with repmode.enabled():
        with pytest.raises(repmode.UnsupportedOpError, match="LSTM mode"):
            aten.mkldnn_rnn_layer(*_layer_args(mode=3))
        with pytest.raises(repmode.UnsupportedOpError, match="packed"):
            aten.mkldnn_rnn_layer(*_layer_args(batch_sizes=[3, 3]))


def test_backward_needs_repmode_workspace():
    args = _layer_args()
    with repmode.enabled():
        out, hy, cy, _ = aten.mkldnn_rnn_layer(*args)
        x, w0, w1, w2, w3, hx, cx = args[:7]
        with pytest.raises(repmode.UnsupportedOpError, match="workspace"):
            aten.mkldnn_rnn_layer_backward(x, w0, w1, w2, w3, hx, cx, out, hy, cy, torch.ones_like(out), None,
                                           None, False, 2, 5, 1, True, True, False, [], False,
                                           torch.empty(7, dtype=torch.uint8))
