"""softmax, log_softmax and nll_loss (what cross_entropy reaches), forward and backward.
Row formulas: csrc/common/softmax_loss.h and reduction.h; docs/semantics.md."""
from __future__ import annotations

import torch

from ..registry import register_kernel
from ._common import (
    FLOAT_WIDENED,
    LOW_PRECISION,
    float_code,
    kernels_for,
    launch_arg,
    round_to,
    split_at_dim,
    stream_only,
    unsupported,
    widened,
)

aten = torch.ops.aten
Tensor = torch.Tensor

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


@register_kernel(aten._log_softmax.default, FLOAT_WIDENED)
@widened()
def log_softmax(func, args, kwargs):
    x, dim, half_to_float = args
    code = float_code(func, args, kwargs, x)
    if half_to_float:
        raise unsupported(func, args, kwargs, "half_to_float is only meaningful for float16 inputs")
    xc = x.contiguous()
    out = torch.empty_like(xc)
    outer, n, inner = split_at_dim(xc, dim)
    kernels_for(xc).log_softmax(code, xc.data_ptr(), out.data_ptr(), outer, n, inner, launch_arg(xc))
    return out


def _row_backward(kernel, func, args, kwargs):
    """Shared driver of the softmax and log_softmax backward ops: (grad, output, dim, input_dtype)."""
    grad, output, dim, input_dtype = args
    if grad.dtype in LOW_PRECISION and output.dtype == grad.dtype and input_dtype == grad.dtype:
        # bf16/fp16: computed in float32 from the exactly widened tensors, rounded once at the end
        wide = (grad.to(torch.float32), output.to(torch.float32), dim, torch.float32)
        return round_to(_row_backward(kernel, func, wide, kwargs), grad.dtype)
    code = float_code(func, args, kwargs, grad, output)
    if grad.dtype != output.dtype or input_dtype != grad.dtype:
        raise unsupported(func, args, kwargs, "mixed dtypes in softmax backward are not supported yet")
    g = grad.contiguous()
    y = output.contiguous()
    out = torch.empty_like(g)
    outer, n, inner = split_at_dim(g, dim)
    if g.numel():
        run = getattr(kernels_for(g), kernel)  # repmode._C or _C_cuda
        run(code, g.data_ptr(), y.data_ptr(), out.data_ptr(), outer, n, inner, launch_arg(g))
    return out


@register_kernel(aten._log_softmax_backward_data.default, FLOAT_WIDENED)
def log_softmax_backward(func, args, kwargs):
    return _row_backward("log_softmax_backward", func, args, kwargs)


def _softmax_forward(func, args, kwargs, x, dim, safe):
    code = float_code(func, args, kwargs, x)
    xc = x.contiguous()
    out = torch.empty_like(xc)
    outer, n, inner = split_at_dim(xc, dim)
    if xc.numel():
        kernels_for(xc).softmax(code, xc.data_ptr(), out.data_ptr(), outer, n, inner, safe, launch_arg(xc))
    return out


@register_kernel(aten._softmax.default, FLOAT_WIDENED)
@widened()
def softmax(func, args, kwargs):
    x, dim, half_to_float = args
    if half_to_float:
        raise unsupported(func, args, kwargs, "half_to_float is only meaningful for float16 inputs")
    return _softmax_forward(func, args, kwargs, x, dim, safe=False)


@register_kernel(aten._safe_softmax.default, FLOAT_WIDENED)
@widened()
def safe_softmax(func, args, kwargs):
    x, dim = args[0], args[1]
    dtype = _arg_dtype(args, kwargs)
    if dtype is not None and dtype != x.dtype:
        x = x.to(dtype)
    return _softmax_forward(func, args, kwargs, x, dim, safe=True)


def _arg_dtype(args, kwargs):
    return args[2] if len(args) > 2 else (kwargs or {}).get("dtype")


@register_kernel(aten._softmax_backward_data.default, FLOAT_WIDENED)
def softmax_backward(func, args, kwargs):
    return _row_backward("softmax_backward", func, args, kwargs)


def _nll_inputs(func, args, kwargs, x, target, weight):
    code = float_code(func, args, kwargs, x, target, weight)
    if x.dim() not in (1, 2):
        raise unsupported(func, args, kwargs, "nll_loss_forward expects 1-D or 2-D input")
    if target.dtype != torch.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    x2 = x.unsqueeze(0) if x.dim() == 1 else x
    t1 = target.reshape(-1)
    if t1.shape[0] != x2.shape[0]:
        raise ValueError(f"Expected input batch_size ({x2.shape[0]}) to match target batch_size ({t1.shape[0]}).")
    w = None
    if weight is not None:
        if weight.dtype != x.dtype:
            raise RuntimeError(f"expected weight dtype {x.dtype}, got {weight.dtype}")
        w = weight.contiguous()
        if w.numel() != x2.shape[1]:
            raise RuntimeError(f"weight tensor should be defined either for all {x2.shape[1]} classes or no classes")
    return code, x2, t1, w


@register_kernel(aten.nll_loss_forward.default, FLOAT_WIDENED)
@widened()
def nll_loss_forward(func, args, kwargs):
    x, target, weight, reduction, ignore_index = args
    code, x2, t1, w = _nll_inputs(func, args, kwargs, x, target, weight)
    N, Cn = x2.shape
    total_weight = torch.empty((), dtype=x.dtype, device=x.device)
    if reduction == 0:
        out = torch.empty((N,) if x.dim() == 2 else (), dtype=x.dtype, device=x.device)
    else:
        out = torch.empty((), dtype=x.dtype, device=x.device)
    kernels_for(x).nll_loss_forward(code, x2.data_ptr(), N, Cn, *x2.stride(), t1.data_ptr(), t1.stride(0),
                                    0 if w is None else w.data_ptr(), reduction, ignore_index, out.data_ptr(),
                                    1, total_weight.data_ptr(), *stream_only(x))
    return out, total_weight


@register_kernel(aten.nll_loss_backward.default, FLOAT_WIDENED)
@widened()
def nll_loss_backward(func, args, kwargs):
    grad, x, target, weight, reduction, ignore_index, total_weight = args
    code, x2, t1, w = _nll_inputs(func, args, kwargs, x, target, weight)
    N, Cn = x2.shape
    g = grad.reshape(-1).contiguous().to(x.dtype)
    tw = total_weight.to(x.dtype).contiguous()
    grad_input = torch.zeros((N, Cn), dtype=x.dtype, device=x.device)
    if N == 0:  # the C++ routine reads grad[0] first, which an empty 'none' gradient lacks
        return grad_input.reshape(x.shape)
    kernels_for(x).nll_loss_backward(code, grad_input.data_ptr(), N, Cn, g.data_ptr(), 1, t1.data_ptr(), t1.stride(0),
                                     0 if w is None else w.data_ptr(), reduction, ignore_index, tw.data_ptr(),
                                     *stream_only(x))
    return grad_input.reshape(x.shape)
