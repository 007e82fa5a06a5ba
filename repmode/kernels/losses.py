"""Regression losses and ``xlogy`` (what ``kl_div`` reaches), forward and backward, built from
registered ops (docs/semantics.md, "Losses"): each formula is a fixed sequence of repmode's
elementwise ops, and ``mean``/``sum`` are repmode's canonical reductions.
"""
from __future__ import annotations

import torch

from .. import _ext
from ..registry import register_composite, register_inplace_forms
from ._common import FLOAT_WIDENED, FLOAT_WIDENED_INT, arguments, call_registered, check_device, unsupported
from ._common import call_registered as _call

aten = torch.ops.aten
# Reduction codes defined in csrc/common/softmax_loss.h (REPMODE_REDUCTIONS).
_NONE, _MEAN, _SUM = (_ext.codes("Reduction")[n] for n in ("NONE", "MEAN", "SUM"))


def _reduce(loss: torch.Tensor, reduction: int) -> torch.Tensor:
    if reduction == _MEAN:
        return _call(aten.mean.default, loss)
    if reduction == _SUM:
        return _call(aten.sum.default, loss)
    return loss


def _grad_scale(grad: torch.Tensor, x: torch.Tensor, reduction: int) -> torch.Tensor:
    """The incoming gradient per element: grad, or grad / numel for mean (one division)."""
    if reduction == _MEAN:
        return _call(aten.div.Scalar, grad, x.numel())
    return grad


@register_composite(aten.mse_loss.default, FLOAT_WIDENED)
def mse_loss(func, args, kwargs):
    x, t = args[0], args[1]
    reduction = args[2] if len(args) > 2 else kwargs.get("reduction", _MEAN)
    d = _call(aten.sub.Tensor, x, t)
    return _reduce(_call(aten.mul.Tensor, d, d), reduction)


@register_composite(aten.mse_loss_backward.default, FLOAT_WIDENED_INT)
def mse_loss_backward(func, args, kwargs):
    grad, x, t, reduction = args
    d = _call(aten.sub.Tensor, x, t)
    # torch allocates these gradients contiguous whatever the input's layout: an exact copy
    return _call(aten.mul.Tensor, _call(aten.mul.Tensor, d, 2.0), _grad_scale(grad, x, reduction)).contiguous()


def _abs_diff(x, t):
    d = _call(aten.sub.Tensor, x, t)
    return d, _call(aten.abs.default, d)


@register_composite(aten.huber_loss.default, FLOAT_WIDENED_INT)
def huber_loss(func, args, kwargs):
    """|d| < delta: 0.5 d d;  else delta (|d| - 0.5 delta)."""
    x, t, reduction, delta = arguments(func, args, kwargs)
    d, a = _abs_diff(x, t)
    quad = _call(aten.mul.Tensor, _call(aten.mul.Tensor, d, d), 0.5)
    lin = _call(aten.mul.Tensor, _call(aten.sub.Tensor, a, 0.5 * delta), delta)
    return _reduce(_call(aten.where.self, _call(aten.lt.Scalar, a, delta), quad, lin), reduction)


@register_composite(aten.huber_loss_backward.default, FLOAT_WIDENED_INT)
def huber_loss_backward(func, args, kwargs):
    """d for |d| < delta, else delta sign(d); times the (scaled) incoming gradient."""
    grad, x, t, reduction, delta = args
    d, a = _abs_diff(x, t)
    outer = _call(aten.mul.Tensor, _call(aten.sign.default, d), delta)
    local = _call(aten.where.self, _call(aten.lt.Scalar, a, delta), d, outer)
    return _call(aten.mul.Tensor, local, _grad_scale(grad, x, reduction)).contiguous()


@register_composite(aten.smooth_l1_loss.default, FLOAT_WIDENED_INT)
def smooth_l1_loss(func, args, kwargs):
    """|d| < beta: 0.5 d d / beta;  else |d| - 0.5 beta (beta == 0: |d|)."""
    x, t, reduction, beta = arguments(func, args, kwargs)
    d, a = _abs_diff(x, t)
    if beta == 0:
        return _reduce(a, reduction)
    quad = _call(aten.div.Scalar, _call(aten.mul.Tensor, _call(aten.mul.Tensor, d, d), 0.5), beta)
    lin = _call(aten.sub.Tensor, a, 0.5 * beta)
    return _reduce(_call(aten.where.self, _call(aten.lt.Scalar, a, beta), quad, lin), reduction)


@register_composite(aten.smooth_l1_loss_backward.default, FLOAT_WIDENED_INT)
def smooth_l1_loss_backward(func, args, kwargs):
    """d / beta for |d| < beta, else sign(d); times the (scaled) incoming gradient."""
    grad, x, t, reduction, beta = args
    d, a = _abs_diff(x, t)
    sign = _call(aten.sign.default, d)
    local = sign if beta == 0 else _call(aten.where.self, _call(aten.lt.Scalar, a, beta),
                                         _call(aten.div.Scalar, d, beta), sign)
    return _call(aten.mul.Tensor, local, _grad_scale(grad, x, reduction)).contiguous()


@register_composite([aten.xlogy.Tensor, aten.xlogy.Scalar_Other, aten.xlogy.Scalar_Self], FLOAT_WIDENED_INT)
def xlogy(func, args, kwargs):
    """x log(y), and 0 where x == 0 unless y is NaN (torch's definition)."""
    x, y = args
    if not isinstance(x, torch.Tensor):
        x = torch.scalar_tensor(x, dtype=y.dtype)
    if not isinstance(y, torch.Tensor):
        y = torch.scalar_tensor(y, dtype=x.dtype)
    prod = _call(aten.mul.Tensor, x, _call(aten.log.default, y))
    zero = _call(aten.logical_and.default, _call(aten.eq.Scalar, x, 0), _call(aten.eq.Tensor, y, y))
    return _call(aten.where.ScalarSelf, zero, 0.0, prod)


register_inplace_forms([aten.xlogy_.Tensor, aten.xlogy_.Scalar_Other])


def _weighted(loss, weight):
    return loss if weight is None else _call(aten.mul.Tensor, loss, weight)


@register_composite(aten.binary_cross_entropy.default, FLOAT_WIDENED_INT)
def binary_cross_entropy(func, args, kwargs):
    """(y - 1) max(log1p(-p), -100) - y max(log p, -100), times the weight."""
    p, y = args[0], args[1]
    weight = args[2] if len(args) > 2 else kwargs.get("weight")
    reduction = args[3] if len(args) > 3 else kwargs.get("reduction", _MEAN)
    log_p = _call(aten.clamp_min.default, _call(aten.log.default, p), -100.0)
    log_q = _call(aten.clamp_min.default, _call(aten.log1p.default, _call(aten.neg.default, p)), -100.0)
    loss = _call(aten.sub.Tensor, _call(aten.mul.Tensor, _call(aten.sub.Tensor, y, 1.0), log_q),
                 _call(aten.mul.Tensor, y, log_p))
    return _reduce(_weighted(loss, weight), reduction)


@register_composite(aten.binary_cross_entropy_backward.default, FLOAT_WIDENED_INT)
def binary_cross_entropy_backward(func, args, kwargs):
    """(p - y) / max((1 - p) p, 1e-12), times the weight and the (scaled) incoming gradient."""
    grad, p, y = args[0], args[1], args[2]
    weight = args[3] if len(args) > 3 else kwargs.get("weight")
    reduction = args[4] if len(args) > 4 else kwargs.get("reduction", _MEAN)
    denom = _call(aten.clamp_min.default, _call(aten.mul.Tensor, _call(aten.rsub.Scalar, p, 1.0), p), 1e-12)
    local = _call(aten.div.Tensor, _call(aten.sub.Tensor, p, y), denom)
    return _call(aten.mul.Tensor, _weighted(local, weight), _grad_scale(grad, p, reduction))


@register_composite(aten.binary_cross_entropy_with_logits.default, FLOAT_WIDENED)
def binary_cross_entropy_with_logits(func, args, kwargs):
    """(1 - y) x + w_pos softplus(-x), w_pos = (pos_weight - 1) y + 1 (1 without pos_weight),
    times the weight."""
    x, y = args[0], args[1]
    weight = args[2] if len(args) > 2 else kwargs.get("weight")
    pos_weight = args[3] if len(args) > 3 else kwargs.get("pos_weight")
    reduction = args[4] if len(args) > 4 else kwargs.get("reduction", _MEAN)
    soft = _call(aten.softplus.default, _call(aten.neg.default, x), 1.0, 20.0)
    if pos_weight is not None:
        w_pos = _call(aten.add.Tensor, _call(aten.mul.Tensor, _call(aten.sub.Tensor, pos_weight, 1.0), y), 1.0)
        soft = _call(aten.mul.Tensor, w_pos, soft)
    loss = _call(aten.add.Tensor, _call(aten.mul.Tensor, _call(aten.rsub.Scalar, y, 1.0), x), soft)
    return _reduce(_weighted(loss, weight), reduction)


# ---- nll_loss2d: More losses: ``nll_loss2d_forward`` / ``nll_loss2d_backward`` (what ``cross_entropy`` and
# ``nll_loss`` reach for (N, C, d1, ...) inputs), as the 2-D ``nll_loss`` over the (n, d1, d2)
# positions in row-major order (docs/semantics.md "More losses"). Class weights, ignore_index,
# label smoothing, probability targets, ``l1_loss`` and ``kl_div`` (both ``log_target``) already
# reach registered ops; tests/families/losses/test_losses_extra.py checks them in strict mode.


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
