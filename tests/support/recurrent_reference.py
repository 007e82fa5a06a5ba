"""nn.LSTM's documented step order (docs/semantics.md "Recurrent layers") re-stated one op at a
time. Run under repmode.enabled(), every op is repmode's own (each held to its bound by its
family's tests), so the result is the reference that repmode's mkldnn_rnn_layer and
mkldnn_rnn_layer_backward composites must equal bit for bit."""
from __future__ import annotations

import torch

aten = torch.ops.aten


def _add_opt(a, b):
    """a + b where either may be absent (None): the composite adds only what is there."""
    if a is None:
        return b
    return a if b is None else a + b


def lstm_layer(x, w_ih, w_hh, b_ih, b_hh, h, c, gy, gh=None, gc=None, reverse=False, backward=True):
    """One layer and direction: forward (steps in processing order, reversed for ``reverse``)
    then BPTT. x (T, B, I); h, c (B, H); gy (T, B, H) or None; gh, gc (B, H) or None (absent
    gradients are skipped, not added as zeros). Returns y, h_T, c_T and (unless ``backward`` is
    False) the gradients of x, W_ih, W_hh, the bias (one, for b_ih and b_hh), h0 and c0."""
    T, B, _ = x.shape
    H = w_hh.shape[1]
    steps = list(range(T - 1, -1, -1) if reverse else range(T))
    proj = (torch.addmm(b_ih, x.reshape(T * B, -1), w_ih.t()) if b_ih is not None
            else x.reshape(T * B, -1) @ w_ih.t()).view(T, B, 4 * H)
    h0, c0 = h, c
    ys, saved, h_read = [None] * T, [None] * T, [None] * T
    for t in steps:
        h_read[t], c_prev = h, c
        rec = torch.addmm(b_hh, h, w_hh.t()) if b_hh is not None else h @ w_hh.t()
        gates = proj[t] + rec
        i, f, o = torch.sigmoid(gates[:, :H]), torch.sigmoid(gates[:, H:2 * H]), torch.sigmoid(gates[:, 3 * H:])
        g = torch.tanh(gates[:, 2 * H:3 * H])
        c = f * c + i * g
        tc = torch.tanh(c)
        h = o * tc
        ys[t], saved[t] = h, (i, f, g, o, tc, c_prev)
    y = torch.stack(ys) if T else x.new_zeros(0, B, H)
    if not backward:
        return {"y": y, "h": h, "c": c}
    dh, dc = gh, gc
    dgates = [None] * T
    for t in reversed(steps):
        i, f, g, o, tc, c_prev = saved[t]
        dht = _add_opt(None if gy is None else gy[t], dh)
        if dht is None:
            dht = torch.zeros(B, H, dtype=x.dtype)
        d_o = dht * tc
        dct = _add_opt(dc, aten.tanh_backward(dht * o, tc))
        dgates[t] = torch.cat([aten.sigmoid_backward(dct * g, i), aten.sigmoid_backward(dct * c_prev, f),
                               aten.tanh_backward(dct * i, g), aten.sigmoid_backward(d_o, o)], 1)
        dc = dct * f
        dh = dgates[t] @ w_hh
    D = torch.cat(dgates, 0) if T else x.new_zeros(0, 4 * H)       # rows (t, b), t increasing
    hs = torch.cat(h_read, 0) if T else x.new_zeros(0, H)
    return {
        "y": y, "h": h, "c": c,
        "x_grad": (D @ w_ih).view(T, B, -1),
        "w_ih_grad": D.t() @ x.reshape(T * B, -1),
        "w_hh_grad": D.t() @ hs,
        "b_grad": D.sum(0) if b_ih is not None else None,
        "h0_grad": torch.zeros_like(h0) if dh is None else dh,
        "c0_grad": torch.zeros_like(c0) if dc is None else dc,
    }


def lstm_module(mod: torch.nn.LSTM, x, h0, c0, gy):
    """nn.LSTM (layers, bidirectional, batch_first; no projection, no dropout) as torch's CPU path
    runs it: per layer and direction one mkldnn_rnn_layer on the layer's input (the directions'
    outputs concatenated), the gradient of a layer's input the sum of its directions' gradients.
    h0, c0 (layers·directions, B, H) or None (zeros). Returns the output and the gradients of x
    and of mod.parameters() (in their order) for the output gradient gy."""
    dirs = 2 if mod.bidirectional else 1
    xs = x.transpose(0, 1) if mod.batch_first else x
    gys = gy.transpose(0, 1) if mod.batch_first else gy
    T, B, _ = xs.shape
    H = mod.hidden_size
    if h0 is None:
        h0 = c0 = torch.zeros(mod.num_layers * dirs, B, H, dtype=x.dtype)
    prm = dict(mod.named_parameters())
    layer_in, inputs = xs, []
    for layer in range(mod.num_layers):
        inputs.append(layer_in)
        layer_in = torch.cat([lstm_layer(layer_in, *_weights(prm, layer, rev, mod.bias), h0[layer * dirs + rev],
                                         c0[layer * dirs + rev], None, reverse=bool(rev), backward=False)["y"]
                              for rev in range(dirs)], -1)
    out = layer_in
    grads, g_out = {}, gys
    for layer in reversed(range(mod.num_layers)):
        g_in = None
        for rev in range(dirs):
            w = _weights(prm, layer, rev, mod.bias)
            r = lstm_layer(inputs[layer], *w, h0[layer * dirs + rev], c0[layer * dirs + rev],
                           g_out[..., rev * H:(rev + 1) * H], reverse=bool(rev))
            g_in = r["x_grad"] if g_in is None else g_in + r["x_grad"]
            sfx = f"_l{layer}" + ("_reverse" if rev else "")
            grads[f"weight_ih{sfx}"], grads[f"weight_hh{sfx}"] = r["w_ih_grad"], r["w_hh_grad"]
            grads[f"bias_ih{sfx}"] = grads[f"bias_hh{sfx}"] = r["b_grad"]
        g_out = g_in
    x_grad = g_out.transpose(0, 1) if mod.batch_first else g_out
    return (out.transpose(0, 1) if mod.batch_first else out), [x_grad] + [grads[n] for n, _ in mod.named_parameters()]


def _weights(prm, layer, rev, bias):
    sfx = f"_l{layer}" + ("_reverse" if rev else "")
    return (prm[f"weight_ih{sfx}"].detach(), prm[f"weight_hh{sfx}"].detach(),
            prm[f"bias_ih{sfx}"].detach() if bias else None, prm[f"bias_hh{sfx}"].detach() if bias else None)
