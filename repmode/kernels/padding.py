"""Padding and folding: reflection and replication padding (1-d/2-d/3-d), im2col / col2im
(``F.unfold`` / ``F.fold``) and max_unpool (2-d/3-d).

The forward ops that only move data run natively (each output element is one input element,
or +0 for im2col's zero padding). The ops that sum — the padding backward ops and col2im (the
overlapping patches of ``F.fold``) — and max_unpool (a scatter, where duplicate indices need a
rule) are built on repmode's indexed ops: an integer map from each source position to its
destination, computed once per geometry by running the forward op on integer positions, then
``scatter_add`` (contributions to one element added in increasing source position, from +0) or
``scatter`` (the last write in source order wins). Canonical orders: docs/semantics.md,
"Padding and folding"."""
from __future__ import annotations

import math

import torch

from ..registry import register_composite, register_passthrough
from ._common import FLOAT_ONLY, FLOAT_WIDENED, call_registered, named_arguments, unsupported, widened

aten = torch.ops.aten
Tensor = torch.Tensor

register_passthrough([
    aten.reflection_pad1d.default, aten.reflection_pad2d.default, aten.reflection_pad3d.default,
    aten.replication_pad1d.default, aten.replication_pad2d.default, aten.replication_pad3d.default,
    aten.reflection_pad1d.out, aten.reflection_pad2d.out, aten.reflection_pad3d.out,
    aten.replication_pad1d.out, aten.replication_pad2d.out, aten.replication_pad3d.out,
], reason="data movement: every output element is one input element (a reflected or clamped position)",
    family="padding")

register_passthrough([aten.im2col.default, aten.im2col.out],
                     reason="data movement (F.unfold): every output element is one input element or the +0 of "
                            "the zero padding", family="padding")

_MAPS: dict = {}


def _cached(key, make):
    m = _MAPS.get(key)
    if m is None:
        if len(_MAPS) > 1024:
            _MAPS.clear()
        m = _MAPS[key] = make()
    return m


def _check_cpu(func, args, kwargs, *tensors):
    for t in tensors:
        if isinstance(t, Tensor) and not t.is_cpu:
            raise unsupported(func, args, kwargs, "padding backward, col2im and max_unpool run on the CPU only so far; "
                                                  "move the tensors to the CPU (.cpu())")
        if isinstance(t, Tensor) and t.dtype not in (torch.float32, torch.float64):
            raise unsupported(func, args, kwargs, f"dtype {t.dtype} is not supported (float32, float64, and "
                                                  "bfloat16/float16 widened, are)")


def _add_into_zeros(rows: int, size: int, dest: Tensor, values: Tensor) -> Tensor:
    """(rows, size) zeros; row r of ``values`` (rows, L) added at dest (L,) in increasing position."""
    zeros = torch.zeros(rows, size, dtype=values.dtype)
    return call_registered(aten.scatter_add.default, zeros, 1, dest.expand(rows, dest.numel()), values)


# ---- padding backward -------------------------------------------------------------------------

_PAD_FORWARD = {
    aten.reflection_pad1d_backward.default: (aten.reflection_pad1d.default, 1),
    aten.reflection_pad2d_backward.default: (aten.reflection_pad2d.default, 2),
    aten.reflection_pad3d_backward.default: (aten.reflection_pad3d.default, 3),
    aten.replication_pad1d_backward.default: (aten.replication_pad1d.default, 1),
    aten.replication_pad2d_backward.default: (aten.replication_pad2d.default, 2),
    aten.replication_pad3d_backward.default: (aten.replication_pad3d.default, 3),
}


def _pad_map(forward, spatial, padding) -> Tensor:
    """The flat input position each padded output position copies (torch's own forward on
    integer positions: exact), and the padded spatial shape."""
    plane = math.prod(spatial)
    pos = torch.arange(plane, dtype=torch.int64).view(1, *spatial)
    padded = forward(pos, list(padding))
    return padded.reshape(-1), list(padded.shape[1:])


@widened()
def _pad_backward(func, args, kwargs):
    b = named_arguments(func, args, kwargs)
    grad, x, padding = b["grad_output"], b["self"], [int(p) for p in b["padding"]]
    _check_cpu(func, args, kwargs, grad, x)
    forward, nsp = _PAD_FORWARD[func]
    spatial = tuple(x.shape[-nsp:])
    dest, out_spatial = _cached((func, spatial, tuple(padding)), lambda: _pad_map(forward, spatial, padding))
    expected = list(x.shape[:-nsp]) + out_spatial
    if list(grad.shape) != expected:
        raise RuntimeError(f"{func}: grad_output of shape {expected} expected, got {list(grad.shape)}")
    rows = math.prod(x.shape[:-nsp])
    gi = _add_into_zeros(rows, math.prod(spatial), dest, grad.reshape(rows, dest.numel()).to(x.dtype))
    return torch.empty_like(x).copy_(gi.view(x.shape))


@register_composite(list(_PAD_FORWARD), FLOAT_WIDENED,
                    out=[aten.reflection_pad1d_backward.grad_input, aten.reflection_pad2d_backward.grad_input,
                         aten.reflection_pad3d_backward.grad_input, aten.replication_pad1d_backward.grad_input,
                         aten.replication_pad2d_backward.grad_input, aten.replication_pad3d_backward.grad_input])
def pad_backward(func, args, kwargs):
    return _pad_backward(func, args, kwargs)


# ---- col2im (F.fold) --------------------------------------------------------------------------

def _fold_map(out_size, kernel_size, dilation, padding, stride):
    """(destination of every kept column entry, mask of the kept entries) for one channel: the
    (kh * kw, L) columns of an (H, W) plane, row-major; entries that fall in the padding are dropped."""
    h, w = out_size
    pos = torch.arange(1, h * w + 1, dtype=torch.float64).view(1, 1, h, w)  # +1: 0 marks the padding
    cols = aten.im2col.default(pos, kernel_size, dilation, padding, stride).reshape(-1).to(torch.int64)
    keep = cols > 0
    return cols[keep] - 1, keep


@widened()
def _col2im(func, args, kwargs):
    b = named_arguments(func, args, kwargs)
    cols = b["self"]
    _check_cpu(func, args, kwargs, cols)
    out_size = [int(s) for s in b["output_size"]]
    ks, dil, pad, st = (list(b[n]) for n in ("kernel_size", "dilation", "padding", "stride"))
    if cols.dim() not in (2, 3):
        raise RuntimeError(f"{func}: Expected 2D or 3D (batch mode) tensor for input, got {cols.dim()}D")
    k = ks[0] * ks[1]
    if k <= 0 or cols.shape[-2] % k != 0:
        raise RuntimeError(f"{func}: Expected size of input's dimension {cols.dim() - 2} to be divisible by the "
                           f"product of kernel_size, but got input.size({cols.dim() - 2})={cols.shape[-2]} and "
                           f"kernel_size={tuple(ks)}")
    blocks = [(o + 2 * p - (d * (kk - 1) + 1)) // s + 1 for o, p, d, kk, s in zip(out_size, pad, dil, ks, st)]
    if min(blocks) < 1 or blocks[0] * blocks[1] != cols.shape[-1]:
        raise RuntimeError(f"{func}: Given output_size={tuple(out_size)}, kernel_size={tuple(ks)}, "
                           f"dilation={tuple(dil)}, padding={tuple(pad)}, stride={tuple(st)}, expected size of "
                           f"input's dimension {cols.dim() - 1} to match the calculated number of sliding blocks "
                           f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size({cols.dim() - 1})={cols.shape[-1]}.")
    dest, keep = _cached(("col2im", tuple(out_size), tuple(ks), tuple(dil), tuple(pad), tuple(st)),
                         lambda: _fold_map(out_size, ks, dil, pad, st))
    channels = cols.shape[-2] // k
    lead = list(cols.shape[:-2])
    rows = math.prod(lead) * channels
    values = cols.reshape(rows, k * cols.shape[-1])[:, keep]
    out = _add_into_zeros(rows, out_size[0] * out_size[1], dest, values)
    return out.view(lead + [channels] + out_size)


@register_composite([aten.col2im.default], FLOAT_WIDENED, out=[aten.col2im.out])
def col2im(func, args, kwargs):
    return _col2im(func, args, kwargs)


# ---- max_unpool -------------------------------------------------------------------------------

@register_composite([aten.max_unpool2d.default, aten.max_unpool3d.default], FLOAT_ONLY + ("half",),
                    out=[aten.max_unpool2d.out, aten.max_unpool3d.out])
def max_unpool(func, args, kwargs):
    b = named_arguments(func, args, kwargs)
    x, indices = b["self"], b["indices"]
    nsp = 3 if func is aten.max_unpool3d.default else 2
    out_size = [int(s) for s in b["output_size"]]
    if not x.is_cpu or not indices.is_cpu:
        raise unsupported(func, args, kwargs, "max_unpool runs on the CPU only so far; move the tensors to the CPU")
    if indices.dtype != torch.int64:
        raise RuntimeError(f"{func}: elements in indices should be type int64 but got: {indices.dtype}")
    if x.shape != indices.shape:
        raise RuntimeError(f"{func}: Expected shape of indices to be same as that of the input tensor "
                           f"({list(x.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    if x.dim() not in (nsp + 1, nsp + 2) or len(out_size) != nsp:
        raise RuntimeError(f"{func}: Input to max_unpooling{nsp}d should be a {nsp + 1}d or {nsp + 2}d Tensor, "
                           f"and output_size of {nsp} ints, but got sizes {list(x.shape)} and {out_size}")
    plane = math.prod(out_size)
    lead = list(x.shape[:-nsp])
    rows = math.prod(lead)
    idx = indices.reshape(rows, -1)
    if idx.numel() and (bool((idx < 0).any()) or bool((idx >= plane).any())):
        bad = int(idx[(idx < 0) | (idx >= plane)][0])
        raise RuntimeError(f"{func}: Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(str(s) for s in out_size)})")
    zeros = torch.zeros(rows, plane, dtype=x.dtype)
    out = call_registered(aten.scatter.src, zeros, 1, idx, x.reshape(rows, -1))
    return out.view(lead + out_size)
