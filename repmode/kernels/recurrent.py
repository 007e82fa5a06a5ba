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

from ..registry import register_kernel, register_passthrough
from ._common import (
    DTYPE_CODE,
    FLOAT_ONLY,
    FLOATS,
    arguments,
    call_registered,
    check_device,
    kernels_for,
    launch_arg,
    unsupported,
)

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


# ---- nn.LSTM on CUDA: cuDNN's fused multi-layer op, computed in the CPU path's order ------------
#
# On CUDA, nn.LSTM reaches aten._cudnn_rnn (all layers and directions in one op) and, for its
# gradients, aten._cudnn_rnn_backward; nn.RNNBase.flatten_parameters reaches
# aten._cudnn_rnn_flatten_weight. repmode computes _cudnn_rnn as the sequence of ops the CPU
# reaches for the same module (torch's mkldnn driver, observed under a logging dispatch mode inside
# repmode.enabled()), calling the same registered implementations in the same order, so CUDA gives
# the CPU's bits:
#   forward:  batch_first: input.transpose(0, 1).contiguous(); per layer l, per direction d (forward
#             first), mkldnn_rnn_layer(layer input, its 4 weights, hx[l·D+d], cx[l·D+d], reverse=d);
#             the directions' outputs cat(·, -1); between layers, when train and dropout > 0, torch's
#             CPU dropout: noise = empty_like; bernoulli_(1 − p); div_(1 − p); input · noise (p = 1:
#             input · zeros(()), no draw; an empty input: nothing); hy, cy = stack of the layers';
#             output transposed back for batch_first.
#   backward: autograd's order over those nodes: layers from the last, in a layer the reverse
#             direction first; each node mkldnn_rnn_layer_backward; the two directions' input
#             gradients added (reverse + forward); through dropout grad · noise; the gradient of hx
#             (and of cx) is select_backward(grad of hx[i]) per node, summed with add in node order
#             (so −0.0 becomes +0.0 exactly when there are several layers or directions, as on the CPU).
# The forward keeps what its backward reads (each layer's input, each direction's output, hy, cy and
# workspace, the dropout noise) in the `reserve` output, laid out by _reserve_layout.

_CUDNN_SUPPORTED = ("supported: nn.LSTM (mode 2) without proj_size, float32, unpacked (padded) input of 3 "
                    "dimensions, any number of layers, bidirectional, batch_first, bias, dropout")


def _cudnn_check(func, args, kwargs, x, weight, weight_stride0, hx, cx, mode, proj_size, num_layers,
                 bidirectional, batch_sizes):
    check_device(func, args, kwargs, x, *weight, hx, cx)
    if mode != _LSTM_MODE:
        name = {0: "RNN (relu)", 1: "RNN (tanh)", 3: "GRU"}.get(mode, f"mode {mode}")
        raise unsupported(func, args, kwargs, f"cuDNN's fused {name} is not implemented; {_CUDNN_SUPPORTED}")
    if proj_size:
        raise unsupported(func, args, kwargs, f"LSTM with proj_size > 0 (got {proj_size}) is not implemented; "
                          f"{_CUDNN_SUPPORTED}")
    if len(batch_sizes):
        raise unsupported(func, args, kwargs, f"packed sequences (batch_sizes) are not implemented; {_CUDNN_SUPPORTED}")
    if x.dtype != torch.float32:
        why = (" (torch's CPU path for float64 LSTM is its decomposed cell, not mkldnn_rnn_layer, and this op "
               "does not reproduce those bits)" if x.dtype == torch.float64 else "")
        raise unsupported(func, args, kwargs, f"dtype {x.dtype} is not supported{why}; {_CUDNN_SUPPORTED}")
    for t in (*weight, hx, cx):
        if t is not None and t.dtype != x.dtype:
            raise unsupported(func, args, kwargs, f"mixed dtypes ({x.dtype} and {t.dtype}) are not supported")
    D = 2 if bidirectional else 1
    if cx is None or x.dim() != 3 or weight_stride0 not in (2, 4) or len(weight) != weight_stride0 * num_layers * D:
        raise unsupported(func, args, kwargs, f"unexpected arguments: cx {'absent' if cx is None else 'given'}, "
                          f"input of {x.dim()} dimensions, weight_stride0 {weight_stride0}, {len(weight)} weights "
                          f"for {num_layers} layers × {D} directions; {_CUDNN_SUPPORTED}")


def _layer_weights(weight, stride0, idx, x):
    w = weight[idx * stride0:(idx + 1) * stride0]
    if stride0 == 4:
        return w[0], w[1], w[2], w[3]
    none = x.new_empty(0)   # never read without biases (the CPU driver passes zeros here)
    return w[0], w[1], none, none


def _dropout_applies(dropout, train, layer, num_layers):
    return dropout != 0 and train and layer < num_layers - 1


def _reserve_layout(T, B, In, H, L, D, dropout, train):
    """[(layer, name, direction, shape)] in the order the forward packs them into `reserve`."""
    items = []
    for layer in range(L):
        if layer > 0:
            items.append((layer, "input", None, (T, B, D * H)))
        for d in range(D):
            items += [(layer, "out", d, (T, B, H)), (layer, "hy", d, (B, H)), (layer, "cy", d, (B, H)),
                      (layer, "ws", d, (T * B * _WS_SLOTS * H,))]
        if _dropout_applies(dropout, train, layer, L) and dropout != 1 and T * B * D * H:
            items.append((layer, "noise", None, (T, B, D * H)))
    return items


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


@register_kernel(aten._cudnn_rnn.default, ("float32",))
def cudnn_lstm(func, args, kwargs):
    (x, weight, stride0, _weight_buf, hx, cx, mode, H, proj_size, L, batch_first, dropout, train, bidirectional,
     batch_sizes, _dropout_state) = arguments(func, args, kwargs)
    _cudnn_check(func, args, kwargs, x, weight, stride0, hx, cx, mode, proj_size, L, bidirectional, batch_sizes)
    D = 2 if bidirectional else 1
    has_biases = stride0 == 4
    layer_input = x.transpose(0, 1).contiguous() if batch_first else x     # the CPU driver: transpose + clone
    T, B, _ = layer_input.shape
    saved, hys, cys = {}, [], []
    for layer in range(L):
        if layer > 0:
            saved[(layer, "input", None)] = layer_input
        outs = []
        for d in range(D):
            idx = layer * D + d
            w_ih, w_hh, b_ih, b_hh = _layer_weights(weight, stride0, idx, x)
            out, hy, cy, ws = call_registered(aten.mkldnn_rnn_layer.default, layer_input, w_ih, w_hh, b_ih, b_hh,
                                              hx[idx], cx[idx], d == 1, [], mode, H, L, has_biases, bidirectional,
                                              batch_first, train)
            outs.append(out)
            hys.append(hy)
            cys.append(cy)
            saved.update({(layer, "out", d): out, (layer, "hy", d): hy, (layer, "cy", d): cy, (layer, "ws", d): ws})
        layer_input = outs[0] if D == 1 else call_registered(aten.cat.default, outs, -1)
        if _dropout_applies(dropout, train, layer, L) and layer_input.numel():
            if dropout == 1:    # torch's dropout: input · zeros(()), no draw
                layer_input = _mul(layer_input, torch.zeros((), dtype=x.dtype, device=x.device))
            else:
                noise = torch.empty_like(layer_input)
                call_registered(aten.bernoulli_.float, noise, 1 - dropout)
                call_registered(aten.div_.Scalar, noise, 1 - dropout)
                saved[(layer, "noise", None)] = noise
                layer_input = _mul(layer_input, noise)
    output = layer_input.transpose(0, 1).contiguous() if batch_first else layer_input
    hy = call_registered(aten.stack.default, hys)
    cy = call_registered(aten.stack.default, cys)
    layout = _reserve_layout(T, B, x.shape[-1], H, L, D, dropout, train)
    reserve = torch.cat([saved[item[:3]].reshape(-1) for item in layout]) if layout else x.new_empty(0)
    return output, hy, cy, reserve, x.new_empty(0)


def _unpack_reserve(func, args, kwargs, reserve, layout, dtype):
    total = sum(_numel(shape) for *_, shape in layout)
    if reserve is None or reserve.dtype != dtype or reserve.dim() != 1 or reserve.numel() != total:
        raise unsupported(func, args, kwargs, "the reserve was not written by repmode's _cudnn_rnn (was the forward "
                          "run outside repmode.enabled()?)")
    parts, at = {}, 0
    for layer, name, d, shape in layout:
        n = _numel(shape)
        parts[(layer, name, d)] = reserve[at:at + n].view(shape)
        at += n
    return parts


@register_kernel(aten._cudnn_rnn_backward.default, ("float32",))
def cudnn_lstm_backward(func, args, kwargs):
    (x, weight, stride0, _weight_buf, hx, cx, _output, grad_output, grad_hy, grad_cy, mode, H, proj_size, L,
     batch_first, dropout, train, bidirectional, batch_sizes, _dropout_state, reserve,
     _output_mask) = arguments(func, args, kwargs)
    _cudnn_check(func, args, kwargs, x, weight, stride0, hx, cx, mode, proj_size, L, bidirectional, batch_sizes)
    if not train:
        raise unsupported(func, args, kwargs, "cudnn RNN backward can only be called in training mode (torch refuses "
                          "it too: the module was in eval mode, train=False)")
    D = 2 if bidirectional else 1
    has_biases = stride0 == 4
    x0 = x.transpose(0, 1).contiguous() if batch_first else x
    T, B, In = x0.shape
    saved = _unpack_reserve(func, args, kwargs, reserve, _reserve_layout(T, B, In, H, L, D, dropout, train), x.dtype)
    g = grad_output
    if g is not None and batch_first:
        g = g.transpose(0, 1)
    n = L * D
    dhx = dcx = None
    dweights = [None] * len(weight)
    for layer in range(L - 1, -1, -1):
        layer_input = x0 if layer == 0 else saved[(layer, "input", None)]
        gs = [g] if D == 1 else [None, None] if g is None else [g[:, :, :H], g[:, :, H:]]   # cat's backward
        gx = None
        for d in range(D - 1, -1, -1):          # autograd runs the later node (the reverse direction) first
            idx = layer * D + d
            w_ih, w_hh, b_ih, b_hh = _layer_weights(weight, stride0, idx, x)
            grads = call_registered(
                aten.mkldnn_rnn_layer_backward.default, layer_input, w_ih, w_hh, b_ih, b_hh, hx[idx], cx[idx],
                saved[(layer, "out", d)], saved[(layer, "hy", d)], saved[(layer, "cy", d)], gs[d],
                None if grad_hy is None else grad_hy[idx], None if grad_cy is None else grad_cy[idx], d == 1, mode,
                H, L, has_biases, train, bidirectional, [], batch_first, saved[(layer, "ws", d)])
            gx = grads[0] if gx is None else _add(gx, grads[0])
            dweights[idx * stride0:(idx + 1) * stride0] = grads[1:1 + stride0]
            sh = call_registered(aten.select_backward.default, grads[5], [n, B, H], 0, idx)
            sc = call_registered(aten.select_backward.default, grads[6], [n, B, H], 0, idx)
            dhx = sh if dhx is None else _add(dhx, sh)
            dcx = sc if dcx is None else _add(dcx, sc)
        if layer > 0 and _dropout_applies(dropout, train, layer - 1, L) and gx.numel():
            noise = saved.get((layer - 1, "noise", None))
            if noise is None:   # dropout == 1
                noise = torch.zeros((), dtype=x.dtype, device=x.device)
            gx = _mul(gx, noise)
        g = gx
    grad_input = g.transpose(0, 1).contiguous() if batch_first else g
    return grad_input, dhx, dcx, dweights


register_passthrough([aten._cudnn_rnn_flatten_weight.default],
                     reason="copies the RNN weights into one buffer and re-points them at views of it: exact data "
                            "movement", family="recurrent")

register_passthrough([aten._cudnn_init_dropout_state.default],
                     reason="cuDNN's dropout RNG state (nn.LSTM with dropout on CUDA makes it before _cudnn_rnn): "
                            "repmode's _cudnn_rnn never reads it, its masks come from repmode's stream, so its bits "
                            "reach no result; native so that cuDNN run outside the block later finds a valid state",
                     family="recurrent")

# Packed sequences (docs/semantics.md "Packed sequences"). nn.utils.rnn.pack_padded_sequence reaches
# _pack_padded_sequence; nn.LSTM/GRU/RNN on a PackedSequence reach lstm.data / gru.data /
# rnn_tanh.data / rnn_relu.data, composites of torch's decomposed cells (linear, sigmoid, tanh, mul,
# add, narrow, cat), each cell step over the batch_sizes[t] leading rows only.
register_passthrough([aten._pack_padded_sequence.default],
                     reason="packs a padded batch: copies the rows of each time step whose sequence is still "
                            "running into one (sum(lengths), *) tensor, and counts them (batch_sizes): exact data "
                            "movement", family="recurrent")
register_passthrough([aten._pack_padded_sequence_backward.default],
                     reason="the gradient of packing: each packed row copied back to its (t, b) position of a "
                            "zero-filled padded tensor, every position written at most once: exact data movement",
                     family="recurrent")
register_passthrough([aten._pad_packed_sequence.default],
                     reason="unpacks: copies each packed row to its (t, b) position of a tensor filled with "
                            "padding_value, and returns the lengths: exact data movement", family="recurrent")
