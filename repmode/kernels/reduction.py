"""Reductions over any dims, each in its canonical order (csrc/common/reduction.h and
csrc/common/reduction_order.h; docs/semantics.md "Sum order" and "Reductions").

The reduced elements of one output are taken in row-major order of the reduced dims of the
logical shape, whatever the strides: ``_as_rows`` views the input as (outputs, terms)."""
from __future__ import annotations

import math

import torch

from ..registry import register_inplace_forms, register_kernel
from ._common import (
    DTYPE_CODE,
    FLOAT_WIDENED,
    FLOAT_WIDENED_INT,
    check_device,
    float_code,
    kernels_for,
    launch_arg,
    normalize_dims,
    param,
    run_native,
    split_at_dim,
    widened,
)

aten = torch.ops.aten
Tensor = torch.Tensor


class Rows:
    """``x`` as M rows of N terms (a view when the layout allows, else an exact copy)."""

    def __init__(self, x: Tensor, dims):
        nd = x.dim()
        self.reduced = normalize_dims(dims, nd)
        kept = [d for d in range(nd) if d not in self.reduced]
        self.out_shape = [x.shape[d] for d in kept]
        self.keep_shape = [1 if d in self.reduced else x.shape[d] for d in range(nd)]
        self.M = math.prod(self.out_shape)
        self.N = math.prod(x.shape[d] for d in self.reduced)
        self.x2 = x.permute(kept + self.reduced).reshape(self.M, self.N)
        self.sM, self.sN = self.x2.stride()

    def args(self):
        return self.x2.data_ptr(), self.M, self.N, self.sM, self.sN

    def shape(self, out: Tensor, keepdim: bool) -> Tensor:
        return out.reshape(self.keep_shape if keepdim else self.out_shape)


def _float_input(func, args, kwargs, x: Tensor, dtype=None):
    """(code, x converted to dtype) or UnsupportedOpError."""
    if dtype is not None and dtype != x.dtype:
        check_device(func, args, kwargs, x)
        x = x.to(dtype)
    return float_code(func, args, kwargs, x), x


def _require_nonempty(x: Tensor, dims, what: str):
    """Refuse a max/min-like reduction (no identity) over an empty range with torch's exception
    classes: RuntimeError when every dim is reduced (IndexError for argmax/argmin), IndexError
    naming the first empty reduced dim otherwise. Checked as torch checks it: whenever the input
    is empty, even if the output is empty too."""
    if x.numel() != 0:
        return
    if dims is None or (not isinstance(dims, int) and len(dims) == 0):
        if what in ("argmax", "argmin"):
            raise IndexError(f"{what}(): Expected reduction dim to be specified for input.numel() == 0.")
        if what == "linalg.vector_norm":
            raise RuntimeError(f"{what} has no identity for this ord: it cannot be computed over an empty "
                               "tensor (input.numel() == 0).")
        raise RuntimeError(f"{what}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    for d in ([dims] if isinstance(dims, int) else dims):
        if x.shape[d] == 0:
            if what == "linalg.vector_norm":
                raise RuntimeError(f"{what} has no identity for this ord: it cannot be computed over the "
                                   f"empty dimension {d}.")
            raise IndexError(f"{what}(): Expected reduction dim {d} to have non-zero size.")


# ---- sum and mean ---------------------------------------------------------------------------

def reduce_sum(func, args, kwargs, x: Tensor, dims, keepdim: bool, mean: bool, dtype=None) -> Tensor:
    """Canonical sum (or mean = sum / N) of ``x`` over ``dims``."""
    check_device(func, args, kwargs, x)
    if dtype is not None and dtype != x.dtype:
        x = x.to(dtype)
    if x.dtype not in DTYPE_CODE and not x.dtype.is_floating_point and not x.dtype.is_complex and not mean:
        # Integer sums are exact (int64 wrap-around is associative): native is the same everywhere.
        return run_native(func, args, kwargs)
    code, x = _float_input(func, args, kwargs, x)
    rows = Rows(x, dims)
    out = torch.empty(rows.out_shape, dtype=x.dtype, device=x.device)
    if rows.M > 0:
        kernels_for(x).sum_rows(code, *rows.args(), out.data_ptr(), 1, mean, launch_arg(x))
    return rows.shape(out, keepdim)


@register_kernel(aten.sum.default, FLOAT_WIDENED_INT)
@widened()
def sum_default(func, args, kwargs):
    return reduce_sum(func, args, kwargs, args[0], None, False, False, param(func, args, kwargs, "dtype"))


@register_kernel(aten.sum.dim_IntList, FLOAT_WIDENED_INT, out=aten.sum.IntList_out)
@widened(dtype_index=3)
def sum_dim(func, args, kwargs):
    return reduce_sum(func, args, kwargs, args[0], param(func, args, kwargs, "dim"),
                      param(func, args, kwargs, "keepdim"),
                      False, param(func, args, kwargs, "dtype"))


@register_kernel(aten.mean.default, FLOAT_WIDENED)
@widened()
def mean_default(func, args, kwargs):
    return reduce_sum(func, args, kwargs, args[0], None, False, True, param(func, args, kwargs, "dtype"))


@register_kernel(aten.mean.dim, FLOAT_WIDENED, out=aten.mean.out)
@widened(dtype_index=3)
def mean_dim(func, args, kwargs):
    return reduce_sum(func, args, kwargs, args[0], param(func, args, kwargs, "dim"),
                      param(func, args, kwargs, "keepdim"),
                      True, param(func, args, kwargs, "dtype"))


# ---- var, std and their means ---------------------------------------------------------------

def _var_mean(func, args, kwargs, take_sqrt: bool, with_mean: bool):
    x = args[0]
    dims = param(func, args, kwargs, "dim")
    correction = (kwargs or {}).get("correction")
    keepdim = (kwargs or {}).get("keepdim", False)
    correction = 1.0 if correction is None else float(correction)
    code, x = _float_input(func, args, kwargs, x)
    rows = Rows(x, dims)
    var = torch.empty(rows.out_shape, dtype=x.dtype, device=x.device)
    mean = torch.empty(rows.out_shape, dtype=x.dtype, device=x.device) if with_mean else None
    if rows.M > 0:
        kernels_for(x).var_mean_rows(code, *rows.args(), correction, var.data_ptr(),
                                     0 if mean is None else mean.data_ptr(), take_sqrt, launch_arg(x))
    if with_mean:
        return rows.shape(var, keepdim), rows.shape(mean, keepdim)
    return rows.shape(var, keepdim)


@register_kernel(aten.var.correction, FLOAT_WIDENED)
@widened()
def var(func, args, kwargs):
    return _var_mean(func, args, kwargs, take_sqrt=False, with_mean=False)


@register_kernel(aten.std.correction, FLOAT_WIDENED)
@widened()
def std(func, args, kwargs):
    return _var_mean(func, args, kwargs, take_sqrt=True, with_mean=False)


@register_kernel(aten.var_mean.correction, FLOAT_WIDENED)
@widened()
def var_mean(func, args, kwargs):
    return _var_mean(func, args, kwargs, take_sqrt=False, with_mean=True)


@register_kernel(aten.std_mean.correction, FLOAT_WIDENED)
@widened()
def std_mean(func, args, kwargs):
    return _var_mean(func, args, kwargs, take_sqrt=True, with_mean=True)


# ---- prod -------------------------------------------------------------------------------------

def _prod(func, args, kwargs, x, dims, keepdim, dtype):
    check_device(func, args, kwargs, x)
    if not x.dtype.is_floating_point and not x.dtype.is_complex and (
            dtype is None or not (dtype.is_floating_point or dtype.is_complex)):
        return run_native(func, args, kwargs)  # integer products are exact (wrap-around) and order-free
    code, x = _float_input(func, args, kwargs, x, dtype)
    rows = Rows(x, dims)
    out = torch.empty(rows.out_shape, dtype=x.dtype, device=x.device)
    if rows.M > 0:
        kernels_for(x).prod_rows(code, *rows.args(), out.data_ptr(), launch_arg(x))
    return rows.shape(out, keepdim)


@register_kernel(aten.prod.default, FLOAT_WIDENED_INT)
@widened()
def prod_default(func, args, kwargs):
    return _prod(func, args, kwargs, args[0], None, False, param(func, args, kwargs, "dtype"))


@register_kernel(aten.prod.dim_int, FLOAT_WIDENED_INT)
@widened(dtype_index=3)
def prod_dim(func, args, kwargs):
    return _prod(func, args, kwargs, args[0], [param(func, args, kwargs, "dim")], param(func, args, kwargs, "keepdim"),
                 param(func, args, kwargs, "dtype"))


# ---- max, min and their indices -------------------------------------------------------------

def _extreme(func, args, kwargs, x, dims, keepdim, is_max, want_values, want_indices, what):
    check_device(func, args, kwargs, x)
    if not x.dtype.is_floating_point and not x.dtype.is_complex:
        return run_native(func, args, kwargs)  # integer max/min are exact and order-free
    code, x = _float_input(func, args, kwargs, x)
    _require_nonempty(x, dims, what)
    rows = Rows(x, dims)
    values = torch.empty(rows.out_shape, dtype=x.dtype, device=x.device) if want_values else None
    indices = torch.empty(rows.out_shape, dtype=torch.int64, device=x.device) if want_indices else None
    if rows.M > 0:
        kernels_for(x).extreme_rows(code, *rows.args(), is_max, values.data_ptr() if want_values else 0,
                                    indices.data_ptr() if want_indices else 0, launch_arg(x))
    results = []
    if want_values:
        results.append(rows.shape(values, keepdim))
    if want_indices:
        results.append(rows.shape(indices, keepdim))
    return tuple(results) if len(results) > 1 else results[0]


@register_kernel([aten.amax.default, aten.amin.default], FLOAT_WIDENED_INT, out=[aten.amax.out, aten.amin.out])
@widened()
def amax_amin(func, args, kwargs):
    is_max = func is aten.amax.default
    return _extreme(func, args, kwargs, args[0], param(func, args, kwargs, "dim"), param(func, args, kwargs, "keepdim"),
                    is_max, True, False, "amax" if is_max else "amin")


@register_kernel([aten.max.default, aten.min.default], FLOAT_WIDENED_INT)
@widened()
def max_min_all(func, args, kwargs):
    is_max = func is aten.max.default
    return _extreme(func, args, kwargs, args[0], None, False, is_max, True, False, "max" if is_max else "min")


@register_kernel([aten.max.dim, aten.min.dim], FLOAT_WIDENED_INT)
@widened()
def max_min_dim(func, args, kwargs):
    is_max = func is aten.max.dim
    values, indices = _extreme(func, args, kwargs, args[0], [args[1]], param(func, args, kwargs, "keepdim"), is_max,
                               True, True, "max" if is_max else "min")
    return values, indices


@register_kernel([aten.argmax.default, aten.argmin.default], FLOAT_WIDENED_INT)
@widened()
def argmax_argmin(func, args, kwargs):
    is_max = func is aten.argmax.default
    x = args[0]
    dim = param(func, args, kwargs, "dim")
    keepdim = param(func, args, kwargs, "keepdim")
    if dim is None:
        out = _extreme(func, args, kwargs, x.reshape(-1), None, False, is_max, False, True,
                       "argmax" if is_max else "argmin")
        return out.reshape([1] * x.dim()) if keepdim else out
    return _extreme(func, args, kwargs, x, [dim], keepdim, is_max, False, True, "argmax" if is_max else "argmin")


# ---- logsumexp and vector norms -------------------------------------------------------------

@register_kernel(aten.logsumexp.default, FLOAT_WIDENED_INT)
@widened()
def logsumexp(func, args, kwargs):
    x = args[0]
    dims = param(func, args, kwargs, "dim")
    keepdim = param(func, args, kwargs, "keepdim")
    if not x.dtype.is_floating_point:
        x = x.to(torch.get_default_dtype())
    code, x = _float_input(func, args, kwargs, x)
    rows = Rows(x, dims)
    out = torch.empty(rows.out_shape, dtype=x.dtype, device=x.device)
    if rows.M > 0:
        kernels_for(x).logsumexp_rows(code, *rows.args(), out.data_ptr(), launch_arg(x))
    return rows.shape(out, keepdim)


@register_kernel(aten.linalg_vector_norm.default, FLOAT_WIDENED, out=aten.linalg_vector_norm.out)
@widened()
def vector_norm(func, args, kwargs):
    x = args[0]
    ord = float(param(func, args, kwargs, "ord"))
    dims = param(func, args, kwargs, "dim")
    keepdim = param(func, args, kwargs, "keepdim")
    dtype = (kwargs or {}).get("dtype")
    code, x = _float_input(func, args, kwargs, x, dtype)
    if ord < 0 or math.isinf(ord):
        _require_nonempty(x, dims, "linalg.vector_norm")
    rows = Rows(x, dims)
    out = torch.empty(rows.out_shape, dtype=x.dtype, device=x.device)
    if rows.M > 0:
        kernels_for(x).norm_rows(code, *rows.args(), ord, out.data_ptr(), launch_arg(x))
    return rows.shape(out, keepdim)


# ---- cumulative sums and products -----------------------------------------------------------

def cumulative_rows(rows: Tensor, product: bool = False) -> Tensor:
    """Prefix sums (or products) along the last dim of a contiguous float matrix in repmode's
    cumsum/cumprod order, for families that build on it (multinomial's cumulative weights)."""
    out = torch.empty_like(rows)
    m, n = rows.shape
    kernels_for(rows).cumulative(DTYPE_CODE[rows.dtype], rows.data_ptr(), out.data_ptr(), m, n, 1, product,
                                 launch_arg(rows))
    return out


def _cumulative(func, args, kwargs, product: bool):
    x = args[0]
    dim = param(func, args, kwargs, "dim")
    dtype = param(func, args, kwargs, "dtype")
    check_device(func, args, kwargs, x)
    integral = lambda d: not d.is_floating_point and not d.is_complex  # noqa: E731
    if integral(x.dtype) and (dtype is None or integral(dtype)):
        return run_native(func, args, kwargs)  # integer running sums/products are exact
    if dtype is not None and integral(dtype):
        # a float input with an integer dtype= (Hugging Face's MoE offsets: cumsum of histc counts,
        # dtype=int32): torch converts first (a cast, exact data movement as for .to()), then runs
        # the integer running sum/product, which is exact
        return (aten.cumprod.default if product else aten.cumsum.default)(x.to(dtype), dim, dtype=dtype)
    code, x = _float_input(func, args, kwargs, x, dtype)
    xc = x.contiguous()
    outer, n, inner = split_at_dim(xc, dim)
    out = torch.empty_like(xc)
    if xc.numel():
        kernels_for(x).cumulative(code, xc.data_ptr(), out.data_ptr(), outer, n, inner, product, launch_arg(x))
    return out


@register_kernel(aten.cumsum.default, FLOAT_WIDENED_INT)
@widened(dtype_index=2)
def cumsum(func, args, kwargs):
    return _cumulative(func, args, kwargs, product=False)


@register_kernel(aten.cumprod.default, FLOAT_WIDENED_INT)
@widened(dtype_index=2)
def cumprod(func, args, kwargs):
    return _cumulative(func, args, kwargs, product=True)


register_inplace_forms([aten.cumsum_.default, aten.cumprod_.default])
