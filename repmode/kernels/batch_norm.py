"""Batch normalization and group normalization, forward and backward (every aten overload that
nn.BatchNorm1d/2d/3d, nn.GroupNorm, F.batch_norm and F.group_norm reach, plus the functional
and out= forms of export/compile). The bits: csrc/common/batch_norm.h; the walks over memory:
csrc/cpu/batch_norm.cpp; the orders: docs/semantics.md, "Batch and group normalization".

bf16/fp16 inputs are widened exactly to float32 (and so are low-precision parameters), computed
by the float32 definition, and each result is rounded once to the dtype torch returns."""
from __future__ import annotations

import math

import torch

from ..registry import overloads_named, register_kernel
from ._common import (
    DTYPE_CODE,
    FLOAT_WIDENED,
    LOW_PRECISION,
    check_device,
    kernels_for,
    launch_arg,
    round_to,
    suggest_memory_format,
    unsupported,
)

aten = torch.ops.aten
Tensor = torch.Tensor


def _ptr(t):
    return 0 if t is None else t.data_ptr()


class _Prepared:
    """The compute dtype and code of a call, with every tensor argument converted to it."""

    __slots__ = ("code", "dtype", "low")

    def __init__(self, func, args, kwargs, x, *others):
        check_device(func, args, kwargs, x, *others)
        self.low = x.dtype if x.dtype in LOW_PRECISION else None
        self.dtype = torch.float32 if self.low is not None else x.dtype
        code = DTYPE_CODE.get(self.dtype)
        if code is None:
            raise unsupported(func, args, kwargs,
                              f"dtype {x.dtype} is not supported (float32, float64, and bfloat16/float16 "
                              "widened to float32, are)")
        self.code = code
        for t in others:
            if t is None:
                continue
            if t.dtype != self.dtype and not (self.low is not None and t.dtype in LOW_PRECISION + (torch.float32,)):
                raise unsupported(func, args, kwargs,
                                  f"mixed dtypes ({x.dtype} input with a {t.dtype} parameter) are not supported")

    def vec(self, t, n, what, func, args, kwargs):
        """A contiguous tensor of n elements in the compute dtype (or None)."""
        if t is None:
            return None
        if t.numel() != n:
            raise RuntimeError(f"{what} should contain {n} elements not {t.numel()}")
        if t.dtype != self.dtype:
            t = t.to(self.dtype)
        return t if t.is_contiguous() else t.contiguous()


def _bn_layout(x: Tensor):
    """(tensor, N, C, S, channels_last) for the C++ walk, copying only odd layouts (exact)."""
    N, Cn = x.shape[0], x.shape[1]
    S = math.prod(x.shape[2:])
    if S == 1:
        return x.contiguous(), N, Cn, S, True  # one element per (n, c): both layouts coincide
    if not x.is_contiguous() and x.dim() > 2:
        if x.permute(0, *range(2, x.dim()), 1).is_contiguous():
            return x, N, Cn, S, True
    return x.contiguous(), N, Cn, S, False


def _like(t: Tensor, ref: Tensor, dtype) -> Tensor:
    """``t`` with ``ref``'s strides and the compute dtype (an exact copy when needed)."""
    if t.dtype == dtype and t.stride() == ref.stride() and t.shape == ref.shape:
        return t
    out = torch.empty_like(ref, dtype=dtype)
    out.copy_(t)
    return out


def _in_torch_layout(result: Tensor, x: Tensor) -> Tensor:
    """``result`` in the layout torch gives batch norm's outputs (the input's suggested memory
    format: contiguous or channels_last(_3d)); an exact copy only for odd input layouts."""
    fmt = suggest_memory_format(x)
    return result if result.is_contiguous(memory_format=fmt) else result.contiguous(memory_format=fmt)


def _stat_dtype(x, weight, running_mean):
    """The dtype torch gives save_mean/save_invstd: the parameters' (float32 for a mixed-precision
    bf16/fp16 input with float32 parameters), else the input's."""
    for t in (weight, running_mean):
        if t is not None:
            return t.dtype
    return x.dtype


def _bn_forward(func, args, kwargs, x, weight, bias, running_mean, running_var, training, momentum, eps):
    """(y, save_mean, save_invstd); the running statistics are updated in place when training."""
    if x.dim() < 2:
        raise unsupported(func, args, kwargs, "batch norm expects an input with at least 2 dims (N, C, ...)")
    prep = _Prepared(func, args, kwargs, x, weight, bias, running_mean, running_var)
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    xc = x if x.dtype == prep.dtype else x.to(prep.dtype)
    xc, N, Cn, S, cl = _bn_layout(xc)
    w = prep.vec(weight, Cn, "weight", func, args, kwargs)
    b = prep.vec(bias, Cn, "bias", func, args, kwargs)
    rm = prep.vec(running_mean, Cn, "running_mean", func, args, kwargs)
    rv = prep.vec(running_var, Cn, "running_var", func, args, kwargs)
    # in-place updates need the user's own storage: otherwise update a copy and copy it back
    rm_copied = rm is not None and rm.data_ptr() != running_mean.data_ptr()
    rv_copied = rv is not None and rv.data_ptr() != running_var.data_ptr()
    y = torch.empty_like(xc)
    sdt = _stat_dtype(x, weight, running_mean)
    if training:
        save_mean = torch.empty(Cn, dtype=prep.dtype, device=x.device)
        save_invstd = torch.empty(Cn, dtype=prep.dtype, device=x.device)
    else:
        save_mean = torch.empty(0, dtype=sdt, device=x.device)
        save_invstd = torch.empty(0, dtype=sdt, device=x.device)
    kernels_for(xc).batch_norm_forward(prep.code, xc.data_ptr(), y.data_ptr(), N, Cn, S, cl, _ptr(w), _ptr(b),
                                       _ptr(rm), _ptr(rv), bool(training), float(momentum), float(eps),
                                       _ptr(save_mean) if training else 0, _ptr(save_invstd) if training else 0,
                                       launch_arg(xc))
    if training:
        if rm_copied:
            running_mean.copy_(rm)
        if rv_copied:
            running_var.copy_(rv)
        if save_mean.dtype != sdt:
            save_mean, save_invstd = save_mean.to(sdt), save_invstd.to(sdt)
    if prep.low is not None:
        y = round_to(y, prep.low)
    if y.shape != x.shape:
        y = y.reshape(x.shape)
    return _in_torch_layout(y, x), save_mean, save_invstd


def _mom(momentum):
    return 0.0 if momentum is None else momentum


@register_kernel(overloads_named("aten.native_batch_norm.default", "aten._native_batch_norm_legit.default"),
                 FLOAT_WIDENED,
                 out=overloads_named("aten.native_batch_norm.out", "aten._native_batch_norm_legit.out"))
def native_batch_norm(func, args, kwargs):
    x, weight, bias, running_mean, running_var, training, momentum, eps = args
    return _bn_forward(func, args, kwargs, x, weight, bias, running_mean, running_var, training, _mom(momentum), eps)


@register_kernel(overloads_named("aten._native_batch_norm_legit.no_stats"), FLOAT_WIDENED,
                 out=overloads_named("aten._native_batch_norm_legit.no_stats_out"))
def native_batch_norm_no_stats(func, args, kwargs):
    x, weight, bias, training, momentum, eps = args
    return _bn_forward(func, args, kwargs, x, weight, bias, None, None, training, _mom(momentum), eps)


@register_kernel(overloads_named("aten._native_batch_norm_legit_functional.default"), FLOAT_WIDENED)
def native_batch_norm_functional(func, args, kwargs):
    x, weight, bias, running_mean, running_var, training, momentum, eps = args
    rm = running_mean.clone()
    rv = running_var.clone()
    y, sm, si = _bn_forward(func, args, kwargs, x, weight, bias, rm, rv, training, _mom(momentum), eps)
    return y, sm, si, rm, rv


@register_kernel(overloads_named("aten._native_batch_norm_legit_no_training.default"), FLOAT_WIDENED,
                 out=overloads_named("aten._native_batch_norm_legit_no_training.out"))
def native_batch_norm_no_training(func, args, kwargs):
    x, weight, bias, running_mean, running_var, momentum, eps = args
    return _bn_forward(func, args, kwargs, x, weight, bias, running_mean, running_var, False, _mom(momentum), eps)


def _reserve(x: Tensor):
    return torch.empty(0, dtype=torch.uint8, device=x.device)


@register_kernel(overloads_named("aten._batch_norm_with_update.default"), FLOAT_WIDENED,
                 out=overloads_named("aten._batch_norm_with_update.out"))
def batch_norm_with_update(func, args, kwargs):
    x, weight, bias, running_mean, running_var, momentum, eps = args
    return (*_bn_forward(func, args, kwargs, x, weight, bias, running_mean, running_var, True, _mom(momentum), eps),
            _reserve(x))


@register_kernel(overloads_named("aten._batch_norm_with_update_functional.default"), FLOAT_WIDENED)
def batch_norm_with_update_functional(func, args, kwargs):
    x, weight, bias, running_mean, running_var, momentum, eps = args
    rm = running_mean.clone()
    rv = running_var.clone()
    y, sm, si = _bn_forward(func, args, kwargs, x, weight, bias, rm, rv, True, _mom(momentum), eps)
    return y, sm, si, _reserve(x), rm, rv


def _no_update(func, args, kwargs):
    x, weight, bias, running_mean, running_var, momentum, eps = args
    # torch: normalize by the running statistics; without them, by the batch's (nothing updated)
    training = running_mean is None or running_var is None
    return _bn_forward(func, args, kwargs, x, weight, bias, None if training else running_mean,
                       None if training else running_var, training, _mom(momentum), eps)


@register_kernel(overloads_named("aten._batch_norm_no_update.default"), FLOAT_WIDENED,
                 out=overloads_named("aten._batch_norm_no_update.out"))
def batch_norm_no_update(func, args, kwargs):
    return (*_no_update(func, args, kwargs), _reserve(args[0]))


def _in_param_dtype(weight, x, *grads):
    """Parameter gradients in the parameters' dtype (the input's when there is no weight)."""
    pdt = weight.dtype if weight is not None else x.dtype
    return tuple(g if g is None or g.dtype == pdt else g.to(pdt) for g in grads)


def _bn_backward(func, args, kwargs, grad, x, weight, running_mean, running_var, save_mean, save_invstd, train,
                 eps, mask):
    if x.dim() < 2:
        raise unsupported(func, args, kwargs, "batch norm expects an input with at least 2 dims (N, C, ...)")
    prep = _Prepared(func, args, kwargs, x, grad, weight, running_mean, running_var, save_mean, save_invstd)
    xc = x if x.dtype == prep.dtype else x.to(prep.dtype)
    xc, N, Cn, S, cl = _bn_layout(xc)
    g = _like(grad, xc, prep.dtype)
    w = prep.vec(weight, Cn, "weight", func, args, kwargs)
    if train:
        if save_mean is None or save_invstd is None or save_mean.numel() != Cn:
            raise unsupported(func, args, kwargs, "training-mode backward needs save_mean and save_invstd")
        sm = prep.vec(save_mean, Cn, "save_mean", func, args, kwargs)
        si = prep.vec(save_invstd, Cn, "save_invstd", func, args, kwargs)
        rm = rv = None
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        sm = si = None
        rm = prep.vec(running_mean, Cn, "running_mean", func, args, kwargs)
        rv = prep.vec(running_var, Cn, "running_var", func, args, kwargs)
    dx = torch.empty_like(xc) if mask[0] else None
    dw = torch.empty(Cn, dtype=prep.dtype, device=x.device) if mask[1] else None
    db = torch.empty(Cn, dtype=prep.dtype, device=x.device) if mask[2] else None
    kernels_for(xc).batch_norm_backward(prep.code, g.data_ptr(), xc.data_ptr(), N, Cn, S, cl, _ptr(w), _ptr(sm),
                                        _ptr(si), _ptr(rm), _ptr(rv), bool(train), float(eps), _ptr(dx), _ptr(dw),
                                        _ptr(db), launch_arg(xc))
    if dx is not None:
        if prep.low is not None:
            dx = round_to(dx, prep.low)
        if dx.shape != x.shape:
            dx = dx.reshape(x.shape)
        dx = _in_torch_layout(dx, x)
    return (dx, *_in_param_dtype(weight, x, dw, db))


@register_kernel(overloads_named("aten.native_batch_norm_backward.default"), FLOAT_WIDENED,
                 out=overloads_named("aten.native_batch_norm_backward.out"))
def native_batch_norm_backward(func, args, kwargs):
    grad, x, weight, rm, rv, sm, si, train, eps, mask = args
    return _bn_backward(func, args, kwargs, grad, x, weight, rm, rv, sm, si, train, eps, mask)


@register_kernel(overloads_named("aten.batch_norm_backward.default"), FLOAT_WIDENED)
def batch_norm_backward(func, args, kwargs):
    grad, x, weight, rm, rv, sm, si, update, eps, mask, _reserve_ = args
    return _bn_backward(func, args, kwargs, grad, x, weight, rm, rv, sm, si, update, eps, mask)


# ---- CUDA: cuDNN's batch norm ----
# With cuDNN enabled (torch's default), batch_norm on a GPU reaches cudnn_batch_norm and, in
# training, cudnn_batch_norm_backward instead of native_batch_norm and its backward. They are the
# same computation in repmode's order, so a GPU run gives the CPU's bits. cuDNN's saved "variance"
# is the inverse standard deviation, as native_batch_norm's save_invstd; the reserve is empty.
@register_kernel(overloads_named("aten.cudnn_batch_norm.default"), FLOAT_WIDENED,
                 out=overloads_named("aten.cudnn_batch_norm.out"))
def cudnn_batch_norm(func, args, kwargs):
    x, weight, bias, running_mean, running_var, training, factor, eps = args
    return (*_bn_forward(func, args, kwargs, x, weight, bias, running_mean, running_var, training, _mom(factor), eps),
            _reserve(x))


@register_kernel(overloads_named("aten.cudnn_batch_norm_backward.default"), FLOAT_WIDENED,
                 out=overloads_named("aten.cudnn_batch_norm_backward.out"))
def cudnn_batch_norm_backward(func, args, kwargs):
    x, grad, weight, rm, rv, sm, si, eps, _reserve_ = args
    # torch calls it for training-mode forwards only (eval uses native_batch_norm_backward)
    return _bn_backward(func, args, kwargs, grad, x, weight, rm, rv, sm, si, True, eps, [True, True, True])


# ---- group norm ----

def _gn_check(func, args, kwargs, x, N, Cn, HxW, group):
    if group <= 0 or Cn % group != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(x.shape)} and num_groups={group}")
    if x.numel() != N * Cn * HxW:
        raise RuntimeError(f"Expected input to have {N * Cn * HxW} elements, got {x.numel()}")


def _gn_forward(func, args, kwargs, x, weight, bias, N, Cn, HxW, group, eps):
    prep = _Prepared(func, args, kwargs, x, weight, bias)
    _gn_check(func, args, kwargs, x, N, Cn, HxW, group)
    xc = (x if x.dtype == prep.dtype else x.to(prep.dtype)).contiguous()
    w = prep.vec(weight, Cn, "weight", func, args, kwargs)
    b = prep.vec(bias, Cn, "bias", func, args, kwargs)
    y = torch.empty(x.shape, dtype=prep.dtype, device=x.device)
    mean = torch.empty((N, group), dtype=prep.dtype, device=x.device)
    rstd = torch.empty((N, group), dtype=prep.dtype, device=x.device)
    kernels_for(xc).group_norm_forward(prep.code, xc.data_ptr(), y.data_ptr(), N, Cn, HxW, group, _ptr(w), _ptr(b),
                                       float(eps), mean.data_ptr(), rstd.data_ptr(), launch_arg(xc))
    if prep.low is not None:
        y = round_to(y, prep.low)
        sdt = _stat_dtype(x, weight, None)
        mean, rstd = mean.to(sdt), rstd.to(sdt)
    return y, mean, rstd


@register_kernel(overloads_named("aten.native_group_norm.default"), FLOAT_WIDENED,
                 out=overloads_named("aten.native_group_norm.out"))
def native_group_norm(func, args, kwargs):
    x, weight, bias, N, Cn, HxW, group, eps = args
    return _gn_forward(func, args, kwargs, x, weight, bias, N, Cn, HxW, group, eps)


def _gn_backward(func, args, kwargs, grad, x, mean, rstd, weight, N, Cn, HxW, group, mask):
    prep = _Prepared(func, args, kwargs, x, grad, mean, rstd, weight)
    _gn_check(func, args, kwargs, x, N, Cn, HxW, group)
    dt = prep.dtype
    xc = (x if x.dtype == dt else x.to(dt)).contiguous()
    g = (grad if grad.dtype == dt else grad.to(dt)).contiguous()
    m = prep.vec(mean, N * group, "mean", func, args, kwargs)
    r = prep.vec(rstd, N * group, "rstd", func, args, kwargs)
    w = prep.vec(weight, Cn, "weight", func, args, kwargs)
    dx = torch.empty(x.shape, dtype=dt, device=x.device) if mask[0] else None
    dw = torch.empty(Cn, dtype=dt, device=x.device) if mask[1] else None
    db = torch.empty(Cn, dtype=dt, device=x.device) if mask[2] else None
    kernels_for(xc).group_norm_backward(prep.code, g.data_ptr(), xc.data_ptr(), m.data_ptr(), r.data_ptr(), _ptr(w),
                                        N, Cn, HxW, group, _ptr(dx), _ptr(dw), _ptr(db), launch_arg(xc))
    if dx is not None and prep.low is not None:
        dx = round_to(dx, prep.low)
    return (dx, *_in_param_dtype(weight, x, dw, db))


@register_kernel(overloads_named("aten.native_group_norm_backward.default"), FLOAT_WIDENED,
                 out=overloads_named("aten.native_group_norm_backward.out"))
def native_group_norm_backward(func, args, kwargs):
    grad, x, mean, rstd, weight, N, Cn, HxW, group, mask = args
    return _gn_backward(func, args, kwargs, grad, x, mean, rstd, weight, N, Cn, HxW, group, mask)


