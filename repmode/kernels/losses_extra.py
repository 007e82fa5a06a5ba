"""More losses: ``nll_loss2d_forward`` / ``nll_loss2d_backward`` (what ``cross_entropy`` and
``nll_loss`` reach for (N, C, d1, ...) inputs), as the 2-D ``nll_loss`` over the (n, d1, d2)
positions in row-major order (docs/semantics.md "More losses"). Class weights, ignore_index,
label smoothing, probability targets, ``l1_loss`` and ``kl_div`` (both ``log_target``) already
reach registered ops; tests/test_losses_extra.py checks them in strict mode."""
from __future__ import annotations

import torch

from ..registry import register_composite
from ._common import FLOAT_WIDENED, call_registered, check_device, unsupported

aten = torch.ops.aten


def _positions_as_rows(func, args, kwargs, x, target):
    """(N, C, H, W) input and (N, H, W) target as (N·H·W, C) rows and N·H·W targets, rows in
    row-major (n, h, w) order."""
    check_device(func, args, kwargs, x, target)
    if x.dim() != 4:
        raise unsupported(func, args, kwargs, f"expected a 4-D input (N, C, H, W), got {x.dim()}-D")
    if target.dim() != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got targets of "
                           f"dimension: {target.dim()}")
    N, Cn, H, W = x.shape
    if tuple(target.shape) != (N, H, W):
        raise RuntimeError(f"size mismatch (got input: {list(x.shape)}, target: {list(target.shape)})")
    rows = x.permute(0, 2, 3, 1).reshape(N * H * W, Cn)   # a view when channels_last, else an exact copy
    return rows, target.reshape(N * H * W)


@register_composite(aten.nll_loss2d_forward.default, FLOAT_WIDENED)
def nll_loss2d_forward(func, args, kwargs):
    x, target, weight, reduction, ignore_index = args
    rows, t = _positions_as_rows(func, args, kwargs, x, target)
    out, total_weight = call_registered(aten.nll_loss_forward.default, rows, t, weight, reduction, ignore_index)
    if reduction == 0:
        out = out.view(target.shape)
    return out, total_weight


@register_composite(aten.nll_loss2d_backward.default, FLOAT_WIDENED)
def nll_loss2d_backward(func, args, kwargs):
    grad, x, target, weight, reduction, ignore_index, total_weight = args
    rows, t = _positions_as_rows(func, args, kwargs, x, target)
    g = grad.reshape(-1) if reduction == 0 else grad
    grad_rows = call_registered(aten.nll_loss_backward.default, g, rows, t, weight, reduction, ignore_index,
                                total_weight)
    N, Cn, H, W = x.shape
    return grad_rows.view(N, H, W, Cn).permute(0, 3, 1, 2).contiguous()
