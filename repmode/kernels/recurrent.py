"""Recurrent layers. ``nn.LSTM`` on the CPU reaches ``mkldnn_rnn_layer`` (one layer, one
direction) and, for its gradients, ``mkldnn_rnn_layer_backward``: GEMMs through repmode's
``mm``/``addmm``/``sum``, the pointwise part of each step in one C++ kernel that applies the
same elementwise formulas (or, with ``FUSED_CELL = False``, those ops one by one), in the step
order of docs/semantics.md "Recurrent layers". torch hands
these ops time-major (T, B, ·) tensors also for ``batch_first=True`` (it transposes around them).
``nn.GRU``, ``nn.RNN``, ``nn.LSTM(proj_size>0)`` and packed sequences run torch's decomposed
cells (``linear``, ``sigmoid``, ``tanh``, ...), already registered; they only need the exact
data movement registered at the end of this file."""
from __future__ import annotations

import torch

from ..registry import register_kernel
from ._common import DTYPE_CODE, FLOAT_ONLY, FLOATS, call_registered, check_device, kernels_for, launch_arg, unsupported

aten = torch.ops.aten
Tensor = torch.Tensor

_LSTM_MODE = 2  # torch's RNN mode code for LSTM (0 = RNN_RELU, 1 = RNN_TANH, 3 = GRU)
# workspace of our forward, read only by our backward: (T, B, 6H) in time order (not processing
# order), per step [i | f | g | o | c_t | tanh(c_t)] with i, f, o after sigmoid and g after tanh.
_WS_SLOTS = 6


def _mm(a, b):
    return call_registered(aten.mm.default, a, b)


def _addmm(bias, a, b):
    return call_registered(aten.addmm.default, bias, a, b)


def _add(a, b):
    return call_registered(aten.add.Tensor, a, b)


def _mul(a, b):
    return call_registered(aten.mul.Tensor, a, b)


def _check(func, args, kwargs, x, weights, hx, cx, mode, batch_sizes):
    check_device(func, args, kwargs, x, *weights, hx, cx)
    if mode != _LSTM_MODE:
        raise unsupported(func, args, kwargs, f"only the LSTM mode ({_LSTM_MODE}) is implemented, got {mode}")
    if len(batch_sizes):
        raise unsupported(func, args, kwargs, "packed sequences (batch_sizes) are not supported on this path")
    if x.dtype not in FLOATS:
        raise unsupported(func, args, kwargs, f"dtype {x.dtype} is not supported (float32 and float64 are)")
    for t in (*weights, hx, cx):
        if t.dtype != x.dtype:
            raise unsupported(func, args, kwargs, f"mixed dtypes ({x.dtype} and {t.dtype}) are not supported")


def _steps(T: int, reverse: bool):
    return range(T - 1, -1, -1) if reverse else range(T)


# The pointwise part of a step: one fused C++ kernel (csrc/common/recurrent.h), or the same
# elementwise ops one by one (the composite form, kept as the tests' reference).
FUSED_CELL = True


def _forward_step_ops(a, rec, c, w, h_out, H):
    gates = _add(a, rec)                                        # (x·W_ihᵀ + b_ih) + (h·W_hhᵀ + b_hh)
    sig = call_registered(aten.sigmoid.default, gates)         # i, f, o taken from here
    g = call_registered(aten.tanh.default, gates[:, 2 * H:3 * H])
    i, f, o = sig[:, :H], sig[:, H:2 * H], sig[:, 3 * H:]
    c = _add(_mul(f, c), _mul(i, g))                            # (f·c) + (i·g)
    tc = call_registered(aten.tanh.default, c)
    h = _mul(o, tc)
    h_out.copy_(h)
    w[:, :2 * H].copy_(sig[:, :2 * H])
    w[:, 2 * H:3 * H].copy_(g)
    w[:, 3 * H:4 * H].copy_(o)
    w[:, 4 * H:5 * H].copy_(c)
    w[:, 5 * H:].copy_(tc)
    return h_out, w[:, 4 * H:5 * H]


def _rows(t):
    """t with unit column stride (a copy only if needed), and its row stride."""
    if t.stride(-1) != 1 or (t.shape[0] > 1 and t.stride(0) < t.shape[1]):
        t = t.contiguous()
    return t, t.stride(0)


def _forward_step_fused(a, rec, c, w, h_out, H):
    B = a.shape[0]
    a, a_rs = _rows(a)
    rec, r_rs = _rows(rec)
    c, c_rs = _rows(c)
    kernels_for(a).lstm_forward_step(DTYPE_CODE[a.dtype], B, H, a.data_ptr(), a_rs, rec.data_ptr(), r_rs,
                                     c.data_ptr(), c_rs, w.data_ptr(), h_out.data_ptr(), launch_arg(a))
    return h_out, w[:, 4 * H:5 * H]


def _backward_step_ops(go_t, dh, dc, w, c_prev, d, H, B, dtype):
    i, f, g, o = w[:, :H], w[:, H:2 * H], w[:, 2 * H:3 * H], w[:, 3 * H:4 * H]
    tc = w[:, 5 * H:]
    if go_t is not None and dh is not None:
        dht = _add(go_t, dh)                                    # grad_output[t] + (recurrent dh)
    elif go_t is not None:
        dht = go_t
    elif dh is not None:
        dht = dh
    else:
        dht = torch.zeros((B, H), dtype=dtype, device=w.device)
    d_o = _mul(dht, tc)
    dct = call_registered(aten.tanh_backward.default, _mul(dht, o), tc)
    dct = dct if dc is None else _add(dc, dct)                  # (recurrent dc) + through tanh(c)
    d[:, :H].copy_(call_registered(aten.sigmoid_backward.default, _mul(dct, g), i))
    d[:, H:2 * H].copy_(call_registered(aten.sigmoid_backward.default, _mul(dct, c_prev), f))
    d[:, 2 * H:3 * H].copy_(call_registered(aten.tanh_backward.default, _mul(dct, i), g))
    d[:, 3 * H:].copy_(call_registered(aten.sigmoid_backward.default, d_o, o))
    return _mul(dct, f)


def _backward_step_fused(go_t, dh, dc, w, c_prev, d, H, B, dtype):
    go_ptr, go_rs, go_cs = 0, 0, 0
    if go_t is not None:
        go_ptr, (go_rs, go_cs) = go_t.data_ptr(), go_t.stride()
    dh = None if dh is None else dh.contiguous()
    dc = None if dc is None else dc.contiguous()
    c_prev, c_rs = _rows(c_prev)
    dc_out = torch.empty((B, H), dtype=dtype, device=w.device)
    kernels_for(w).lstm_backward_step(DTYPE_CODE[dtype], B, H, go_ptr, go_rs, go_cs,
                                      0 if dh is None else dh.data_ptr(), 0 if dc is None else dc.data_ptr(),
                                      w.data_ptr(), c_prev.data_ptr(), c_rs, d.data_ptr(), dc_out.data_ptr(),
                                      launch_arg(w))
    return dc_out


@register_kernel(aten.mkldnn_rnn_layer.default, FLOAT_ONLY)
def lstm_layer(func, args, kwargs):
    (x, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse, batch_sizes, mode, hidden_size, _num_layers, has_biases,
     _bidirectional, _batch_first, _train) = args
    _check(func, args, kwargs, x, (w_ih, w_hh, b_ih, b_hh), hx, cx, mode, batch_sizes)
    xt = x
    T, B, In = xt.shape
    H = hidden_size
    # input projection of all steps in one GEMM (row-independent: equal to one GEMM per step)
    xs = xt.reshape(T * B, In)
    proj = _addmm(b_ih, xs, w_ih.t()) if has_biases else _mm(xs, w_ih.t())
    proj = proj.view(T, B, 4 * H)
    out = torch.empty((T, B, H), dtype=x.dtype, device=x.device)
    ws = torch.empty((T, B, _WS_SLOTS * H), dtype=x.dtype, device=x.device)
    h, c = hx.reshape(B, H), cx.reshape(B, H)        # torch passes (B, H) or (1, B, H)
    w_hh_t = w_hh.t()
    step = _forward_step_fused if FUSED_CELL else _forward_step_ops
    for t in _steps(T, reverse):
        rec = _addmm(b_hh, h, w_hh_t) if has_biases else _mm(h, w_hh_t)
        h, c = step(proj[t], rec, c, ws[t], out[t], H)
    return out, h.reshape(hx.shape).clone(), c.reshape(cx.shape).clone(), ws.view(-1)


@register_kernel(aten.mkldnn_rnn_layer_backward.default, FLOAT_ONLY)
def lstm_layer_backward(func, args, kwargs):
    (x, w_ih, w_hh, b_ih, b_hh, hx, cx, output, _hy, _cy, grad_output, grad_hy, grad_cy, reverse, mode,
     hidden_size, _num_layers, has_biases, _train, _bidirectional, batch_sizes, _batch_first, workspace) = args
    _check(func, args, kwargs, x, (w_ih, w_hh, b_ih, b_hh), hx, cx, mode, batch_sizes)
    xt = x
    T, B, In = xt.shape
    H = hidden_size
    if workspace is None or workspace.numel() != T * B * _WS_SLOTS * H:
        raise unsupported(func, args, kwargs, "the workspace was not written by repmode's mkldnn_rnn_layer "
                          "(was the forward run outside repmode.enabled()?)")
    ws = workspace.view(T, B, _WS_SLOTS * H)
    out = output
    go = grad_output
    dh = None if grad_hy is None else grad_hy.reshape(B, H)
    dc = None if grad_cy is None else grad_cy.reshape(B, H)
    hx, cx = hx.reshape(B, H), cx.reshape(B, H)
    dgates = torch.empty((T, B, 4 * H), dtype=x.dtype, device=x.device)
    order = list(_steps(T, reverse))
    step = _backward_step_fused if FUSED_CELL else _backward_step_ops
    for n, t in enumerate(reversed(order)):
        prev = order[len(order) - 2 - n] if n < len(order) - 1 else None    # the step before t
        c_prev = cx if prev is None else ws[prev, :, 4 * H:5 * H]
        d = dgates[t]
        dc = step(None if go is None else go[t], dh, dc, ws[t], c_prev, d, H, B, x.dtype)
        dh = _mm(d, w_hh)
    dh = torch.zeros_like(hx) if dh is None else dh.clone()
    dc = torch.zeros_like(cx) if dc is None else dc.clone()
    dflat = dgates.view(T * B, 4 * H)
    grad_x = _mm(dflat, w_ih).view(T, B, In)
    grad_w_ih = _mm(dflat.t(), xt.reshape(T * B, In))              # chain over rows (t, b), t increasing
    h_prev = torch.empty((T, B, H), dtype=x.dtype, device=x.device)  # the h each step read
    if T:
        if reverse:
            h_prev[T - 1].copy_(hx)
            h_prev[:T - 1].copy_(out[1:])
        else:
            h_prev[0].copy_(hx)
            h_prev[1:].copy_(out[:T - 1])
    grad_w_hh = _mm(dflat.t(), h_prev.view(T * B, H))
    if has_biases:
        grad_b = call_registered(aten.sum.dim_IntList, dflat, [0])
        grad_b_ih, grad_b_hh = grad_b, grad_b.clone()
    else:
        grad_b_ih, grad_b_hh = torch.zeros_like(b_ih), torch.zeros_like(b_hh)
    return (grad_x, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh, dh.reshape(args[5].shape),
            dc.reshape(args[6].shape))
