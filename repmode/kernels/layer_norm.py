"""Layer normalization, forward and backward (native_layer_norm, native_layer_norm_backward).
Row formulas: csrc/common/layer_norm.h; docs/semantics.md "Layer and RMS normalization".

``layer_norm`` (CompositeImplicit, reaching the mode under inference_mode) is decomposed by the
mode into ``native_layer_norm``. ``nn.RMSNorm`` / ``F.rms_norm`` reach registered elementwise
ops and ``mean`` in every autograd mode (``rms_norm`` itself is CompositeImplicit and is
decomposed the same way), so they need no kernel here."""
from __future__ import annotations

import math

import torch

from ..registry import register_kernel
from ._common import FLOAT_WIDENED, float_code, kernels_for, launch_arg, unsupported, widened

aten = torch.ops.aten
Tensor = torch.Tensor


def _rows(func, args, kwargs, x: Tensor, normalized_shape) -> tuple[int, int, int]:
    """(M, N, axis): x viewed as M rows of N = prod(normalized_shape) elements."""
    normalized_shape = list(normalized_shape)
    k = len(normalized_shape)
    if k == 0:
        raise unsupported(func, args, kwargs, "normalized_shape must not be empty")
    if x.dim() < k or list(x.shape[x.dim() - k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={normalized_shape}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size {list(x.shape)}")
    axis = x.dim() - k
    N = math.prod(normalized_shape)
    M = math.prod(x.shape[:axis])
    return M, N, axis


def _param(func, args, kwargs, p, x: Tensor, N: int, name: str):
    if p is None:
        return None
    if p.dtype != x.dtype:
        raise unsupported(func, args, kwargs, f"{name} of dtype {p.dtype} with an input of dtype {x.dtype} "
                                              "(mixed dtypes) is not supported")
    if p.numel() != N:
        raise RuntimeError(f"Expected {name} to have {N} elements, got {p.numel()}")
    return p.contiguous()


@register_kernel(aten.native_layer_norm.default, FLOAT_WIDENED)
@widened()
def native_layer_norm(func, args, kwargs):
    x, normalized_shape, weight, bias, eps = args
    code = float_code(func, args, kwargs, x, weight, bias)
    M, N, axis = _rows(func, args, kwargs, x, normalized_shape)
    w = _param(func, args, kwargs, weight, x, N, "weight")
    b = _param(func, args, kwargs, bias, x, N, "bias")
    xc = x.contiguous()
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    stat_shape = list(x.shape[:axis]) + [1] * (x.dim() - axis)
    mean = torch.empty(stat_shape, dtype=x.dtype, device=x.device)
    rstd = torch.empty(stat_shape, dtype=x.dtype, device=x.device)
    if M and N:
        kernels_for(x).layer_norm_forward(code, xc.data_ptr(), M, N, 0 if w is None else w.data_ptr(),
                                          0 if b is None else b.data_ptr(), float(eps), y.data_ptr(), mean.data_ptr(),
                                          rstd.data_ptr(), launch_arg(x), False)
    elif M:
        mean.fill_(float("nan"))
        rstd.fill_(float("nan"))
    return y, mean, rstd


@register_kernel(aten.native_layer_norm_backward.default, FLOAT_WIDENED)
@widened()
def native_layer_norm_backward(func, args, kwargs):
    grad, x, normalized_shape, mean, rstd, weight, bias, output_mask = args
    code = float_code(func, args, kwargs, grad, x, mean, rstd, weight, bias)
    M, N, _ = _rows(func, args, kwargs, x, normalized_shape)
    for t, name in ((grad, "grad_out"), (mean, "mean"), (rstd, "rstd")):
        if t.dtype != x.dtype:
            raise unsupported(func, args, kwargs, f"{name} of dtype {t.dtype} with an input of dtype {x.dtype} "
                                                  "(mixed dtypes) is not supported")
    w = _param(func, args, kwargs, weight, x, N, "weight")
    g = grad.contiguous()
    xc = x.contiguous()
    mc = mean.contiguous()
    rc = rstd.contiguous()
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device) if output_mask[0] else None
    dw = torch.empty(weight.shape, dtype=x.dtype, device=x.device) if output_mask[1] and weight is not None else None
    db = torch.empty(bias.shape, dtype=x.dtype, device=x.device) if output_mask[2] and bias is not None else None
    if M and N:
        kernels_for(x).layer_norm_backward(code, g.data_ptr(), xc.data_ptr(), mc.data_ptr(), rc.data_ptr(),
                                           0 if w is None else w.data_ptr(), M, N,
                                           0 if dx is None else dx.data_ptr(), 0 if dw is None else dw.data_ptr(),
                                           0 if db is None else db.data_ptr(), launch_arg(x), False)
    else:
        for t in (dw, db):
            if t is not None:
                t.zero_()
    return dx, dw, db
