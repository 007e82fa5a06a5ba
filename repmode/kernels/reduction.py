"""Reductions: sum and mean over any dims, in the canonical sum order
(csrc/common/reduce_order.h, docs/semantics.md "Sum order")."""
from __future__ import annotations

import math

import torch

from ..registry import register_kernel
from ._common import C, DTYPE_CODE, check_cpu, get_num_threads, normalize_dims, unsupported, write_out

aten = torch.ops.aten
Tensor = torch.Tensor


def reduce_sum(func, args, kwargs, x: Tensor, dims, keepdim: bool, mean: bool, dtype=None) -> Tensor:
    """Canonical sum (or mean) of ``x`` over ``dims``: the reduced elements are taken in
    row-major order of the reduced dims of the logical shape, whatever the memory layout."""
    check_cpu(func, args, kwargs, x)
    if dtype is not None and dtype != x.dtype:
        x = x.to(dtype)
    code = DTYPE_CODE.get(x.dtype)
    if code is None:
        if not x.dtype.is_floating_point and not x.dtype.is_complex and not mean:
            # Integer sums are exact (int64 wrap-around is associative): native is the same everywhere.
            return func(*args, **kwargs) if kwargs else func(*args)
        raise unsupported(func, args, kwargs, f"dtype {x.dtype} is not supported yet (float32 and float64 are)")
    nd = x.dim()
    red = normalize_dims(dims, nd)
    kept = [d for d in range(nd) if d not in red]
    out_shape = [x.shape[d] for d in kept]
    M = math.prod(out_shape)
    N = math.prod(x.shape[d] for d in red)
    x2 = x.permute(kept + red).reshape(M, N)  # a view when the layout allows, else an exact copy
    out = torch.empty(out_shape, dtype=x.dtype)
    if M > 0:
        sM, sN = x2.stride()
        C.sum_rows(code, x2.data_ptr(), M, N, sM, sN, out.data_ptr(), 1, mean, get_num_threads())
    if keepdim:
        out = out.reshape([1 if d in red else x.shape[d] for d in range(nd)])
    return out


@register_kernel(aten.sum.default)
def sum_default(func, args, kwargs):
    dtype = kwargs.get("dtype") if kwargs else None
    return reduce_sum(func, args, kwargs, args[0], None, False, False, dtype)


@register_kernel(aten.sum.dim_IntList)
def sum_dim(func, args, kwargs):
    x, dims, keepdim, dtype = _dim_args(args, kwargs)
    return reduce_sum(func, args, kwargs, x, dims, keepdim, False, dtype)


@register_kernel(aten.sum.IntList_out)
def sum_out(func, args, kwargs):
    x, dims, keepdim, dtype = _dim_args(args, kwargs)
    return write_out(reduce_sum(func, args, kwargs, x, dims, keepdim, False, dtype), kwargs["out"])


@register_kernel(aten.mean.default)
def mean_default(func, args, kwargs):
    dtype = kwargs.get("dtype") if kwargs else None
    return reduce_sum(func, args, kwargs, args[0], None, False, True, dtype)


@register_kernel(aten.mean.dim)
def mean_dim(func, args, kwargs):
    x, dims, keepdim, dtype = _dim_args(args, kwargs)
    return reduce_sum(func, args, kwargs, x, dims, keepdim, True, dtype)


@register_kernel(aten.mean.out)
def mean_out(func, args, kwargs):
    x, dims, keepdim, dtype = _dim_args(args, kwargs)
    return write_out(reduce_sum(func, args, kwargs, x, dims, keepdim, True, dtype), kwargs["out"])


def _dim_args(args, kwargs):
    kwargs = kwargs or {}
    x = args[0]
    dims = args[1] if len(args) > 1 else kwargs.get("dim")
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    dtype = args[3] if len(args) > 3 else kwargs.get("dtype")
    return x, dims, keepdim, dtype
