"""Margin losses with aten ops of their own: ``multi_margin_loss``, ``multilabel_margin_loss`` and
``soft_margin_loss``, forward and backward, built from registered ops (docs/semantics.md, "More
losses"): per-element formulas in repmode's elementwise ops, every sum in the Sum order, counts as
exact integers. (``multilabel_soft_margin_loss``, ``triplet_margin_loss``, ``margin_ranking_loss``,
``hinge_embedding_loss``, ``cosine_embedding_loss``, ``poisson_nll_loss`` and ``gaussian_nll_loss``
decompose into registered ops; tests/families/layers/test_losses_more.py checks them.) Gathers,
scatters of single values, comparisons and ``where`` run natively (exact)."""
from __future__ import annotations

import torch

from ..registry import register_composite
from ._common import FLOAT_ONLY, FLOAT_WIDENED, call_registered, param, unsupported, widened
from .losses import _MEAN, _NONE, _SUM

aten = torch.ops.aten
_call = call_registered


def _float_input(func, args, kwargs, x, dtypes=(torch.float32, torch.float64)):
    if not isinstance(x, torch.Tensor) or x.dtype not in dtypes:
        names = ", ".join(str(d).replace("torch.", "") for d in dtypes)
        raise unsupported(func, args, kwargs, f"input dtype {getattr(x, 'dtype', type(x))} is not supported ({names} "
                                              "are; torch's CPU kernel has no others)")


def _reduce(loss, reduction):
    if reduction == _MEAN:
        return _call(aten.mean.default, loss)
    if reduction == _SUM:
        return _call(aten.sum.default, loss)
    return loss


def _row_scale(grad, reduction, n_rows, n_cols, dtype):
    """The incoming gradient of each row divided once by C (or by N·C for 'mean'), as a column."""
    divisor = n_cols * n_rows if reduction == _MEAN else n_cols
    c = _call(aten.div.Scalar, grad.to(dtype), float(divisor))
    return c.reshape(-1, 1) if reduction == _NONE and grad.dim() > 0 else c


# ---- multi_margin_loss: per row, Σ_{j ≠ y, z_j > 0} h(z_j)·w_y / C with z_j = (margin − x_y) + x_j.

def _multi_margin_terms(func, args, kwargs, x, target, p, margin, weight):
    _float_input(func, args, kwargs, x)
    if p not in (1, 2):
        raise RuntimeError("only p == 1 and p == 2 supported")
    C = x.shape[-1] if x.dim() else 1
    rows = x.reshape(-1, C)
    t = target.reshape(-1)
    if t.numel() != rows.shape[0]:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(x.shape)}")
    if t.numel() and (bool((t < 0).any()) or bool((t >= C).any())):
        raise RuntimeError("target out of range")
    xy = rows.gather(1, t[:, None])
    z = _call(aten.add.Tensor, _call(aten.rsub.Scalar, xy, margin), rows)
    mask = torch.logical_and(z > 0, torch.arange(C, device=x.device)[None, :] != t[:, None])
    wy = None if weight is None else weight.to(x.dtype).reshape(-1)[t][:, None]
    return rows, t, z, mask, wy, C


@register_composite(aten.multi_margin_loss.default, FLOAT_ONLY, out=aten.multi_margin_loss.out)
def multi_margin_loss(func, args, kwargs):
    x, target, p, margin, weight, reduction = (param(func, args, kwargs, n) for n in
                                                ("self", "target", "p", "margin", "weight", "reduction"))
    rows, t, z, mask, wy, C = _multi_margin_terms(func, args, kwargs, x, target, p, margin, weight)
    h = z if p == 1 else _call(aten.mul.Tensor, z, z)
    if wy is not None:
        h = _call(aten.mul.Tensor, h, wy)
    terms = torch.where(mask, h, torch.zeros((), dtype=h.dtype))
    per_row = _call(aten.div.Scalar, _call(aten.sum.dim_IntList, terms, [1]), float(C))
    if reduction == _NONE:
        return per_row if target.dim() > 0 else per_row.reshape(())
    return _reduce(per_row, reduction)


@register_composite(aten.multi_margin_loss_backward.default, FLOAT_ONLY, out=aten.multi_margin_loss_backward.grad_input)
def multi_margin_loss_backward(func, args, kwargs):
    """g_j = ((z_j > 0 and j ≠ y ? (p == 1 ? 1 : 2·z_j) : 0) · w_y) · c, c = grad / C (grad / (N·C) for
    'mean'); the target's own entry is −(Sum order over j of g_j)."""
    grad, x, target, p, margin, weight, reduction = (param(func, args, kwargs, n) for n in (
        "grad_output", "self", "target", "p", "margin", "weight", "reduction"))
    rows, t, z, mask, wy, C = _multi_margin_terms(func, args, kwargs, x, target, p, margin, weight)
    local = torch.ones((), dtype=x.dtype) if p == 1 else _call(aten.mul.Tensor, z, 2.0)
    local = torch.where(mask, local, torch.zeros((), dtype=x.dtype))
    if wy is not None:
        local = _call(aten.mul.Tensor, local, wy)
    g = _call(aten.mul.Tensor, local, _row_scale(grad, reduction, rows.shape[0], C, x.dtype))
    target_sum = _call(aten.sum.dim_IntList, g, [1], True)
    g = g.scatter(1, t[:, None], _call(aten.neg.default, target_sum))
    return g.reshape(x.shape)


# ---- multilabel_margin_loss: per row, targets y_0 … y_{K−1} (up to the first −1);
# Σ over (k, j) row-major, j not a target, z = (1 − x[y_k]) + x_j > 0, of z; divided by C.

def _multilabel_terms(func, args, kwargs, x, target):
    _float_input(func, args, kwargs, x)
    C = x.shape[-1] if x.dim() else 1
    if target.shape != x.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(x.shape)}")
    rows = x.reshape(-1, C)
    t = target.reshape(-1, C)
    if t.numel() and (bool((t < -1).any()) or bool((t >= C).any())):
        raise RuntimeError("target out of range")
    # valid[i, k]: position k comes before the row's first −1
    valid = torch.cumprod((t >= 0).to(torch.int64), 1).bool()
    safe = torch.where(valid, t, 0)
    is_target = torch.zeros(rows.shape, dtype=torch.int64, device=x.device).scatter_add_(
        1, safe, valid.to(torch.int64)) > 0
    xt = rows.gather(1, safe)                                               # [N, K]
    z = _call(aten.add.Tensor, _call(aten.rsub.Scalar, xt, 1.0)[:, :, None], rows[:, None, :])  # [N, K, C]
    mask = valid[:, :, None] & ~is_target[:, None, :] & (z > 0)
    return rows, safe, valid, is_target, z, mask, C


@register_composite(aten.multilabel_margin_loss_forward.default, FLOAT_ONLY,
                    out=aten.multilabel_margin_loss_forward.output)
def multilabel_margin_loss_forward(func, args, kwargs):
    x, target, reduction = args[0], args[1], args[2]
    rows, safe, valid, is_target, z, mask, C = _multilabel_terms(func, args, kwargs, x, target)
    terms = torch.where(mask, z, torch.zeros((), dtype=z.dtype))
    per_row = _call(aten.div.Scalar, _call(aten.sum.dim_IntList, terms, [1, 2]), float(C))
    if reduction == _NONE:
        out = per_row if x.dim() > 1 else per_row.reshape(())
    else:
        out = _reduce(per_row, reduction)
    return out, is_target.to(x.dtype).reshape(target.shape)


@register_composite(aten.multilabel_margin_loss_backward.default, FLOAT_ONLY,
                    out=aten.multilabel_margin_loss_backward.grad_input)
def multilabel_margin_loss_backward(func, args, kwargs):
    """grad[i, j] = (n⁺_ij − n⁻_ij) · c, c = grad / C (grad / (N·C) for 'mean'): n⁺ counts the pairs (k, j)
    with a positive term (j not a target), n⁻ the pairs whose target y_k is j; exact integer counts."""
    grad, x, target, reduction = args[0], args[1], args[2], args[3]
    rows, safe, valid, is_target, z, mask, C = _multilabel_terms(func, args, kwargs, x, target)
    plus = mask.sum(1)                                                        # [N, C] int64
    per_target = mask.sum(2)                                                  # [N, K]
    minus = torch.zeros_like(plus).scatter_add_(1, safe, torch.where(valid, per_target, 0))
    count = (plus - minus).to(x.dtype)
    g = _call(aten.mul.Tensor, count, _row_scale(grad, reduction, rows.shape[0], C, x.dtype))
    return g.reshape(x.shape)


# ---- soft_margin_loss: softplus(−y·x), evaluated stably in float64 and rounded once.

@register_composite(aten.soft_margin_loss.default, FLOAT_WIDENED, out=aten.soft_margin_loss.out)
@widened()
def soft_margin_loss(func, args, kwargs):
    """In float64 (u = −x·y exact for float32 data): element = RN_T(max(u, 0) + log1p(exp(−|u|))) (torch's
    log1p(exp(u)) overflows to inf for u > 88 in float32); then the reduction."""
    x, y = args[0], args[1]
    reduction = param(func, args, kwargs, "reduction")
    _float_input(func, args, kwargs, x)
    u = _call(aten.mul.Tensor, _call(aten.neg.default, x.to(torch.float64)), y.to(torch.float64))
    soft = _call(aten.add.Tensor, _call(aten.clamp_min.default, u, 0.0),
                 _call(aten.log1p.default, _call(aten.exp.default, _call(aten.neg.default,
                                                                           _call(aten.abs.default, u)))))
    return _reduce(soft.to(x.dtype), reduction)


@register_composite(aten.soft_margin_loss_backward.default, FLOAT_WIDENED,
                    out=aten.soft_margin_loss_backward.grad_input)
@widened()
def soft_margin_loss_backward(func, args, kwargs):
    """(−y · sigmoid(−x·y)) · c, c = grad (grad / numel for 'mean')."""
    grad, x, y, reduction = args
    _float_input(func, args, kwargs, x)
    local = _call(aten.mul.Tensor, _call(aten.neg.default, y),
                  _call(aten.sigmoid.default, _call(aten.mul.Tensor, _call(aten.neg.default, x), y)))
    c = _call(aten.div.Scalar, grad, float(x.numel())) if reduction == _MEAN else grad
    return _call(aten.mul.Tensor, local, c)
