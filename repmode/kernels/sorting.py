"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian.

Values are exact (selection, no arithmetic); ties keep the lower index first (stable), for
ascending and descending alike; NaN is the largest value (last ascending, first descending), every
NaN equal to every other; -0.0 and +0.0 compare equal. docs/semantics.md "Sorting and selection".

Every op reduces to torch's own *stable* sort (``aten.sort.stable(x, stable=True, ...)``). A stable
sort's output is uniquely defined — the permutation that orders the keys, equal keys by index — so
it is bit-exact on every device and at every thread count, whatever algorithm computes it. The
keys are canonical first (every NaN one +NaN, -0.0 made +0.0), so no backend's treatment of NaN
signs or zero signs (a radix sort reads the bits) can reorder them; the values are then gathered
from the input through an integer view of the same size, so every bit (NaN payloads, zero signs)
is the input's own.

The selections read one position of that sort per row:
- ``topk(k, largest)``: the first k of the stable sort (descending for ``largest``); with
  ``sorted=False`` the same sorted result (torch leaves the order unspecified; repmode picks this).
- ``kthvalue(k)``: position k-1 of the stable ascending sort.
- ``median``: torch's lower median, position (n-1)//2; a row with NaN gives its first NaN (torch's
  value and index), which is position m of the ascending sort (m: the row's non-NaN count).
- ``nanmedian``: the lower median of the non-NaN values, position (m-1)//2; an all-NaN row gives
  position (n-1)//2 (a NaN, at the index torch returns).
Invalid arguments (k out of range, bad dim) raise torch's own error: the native op runs first on a
``meta`` tensor of the same shape, which checks them and computes nothing.
"""
from __future__ import annotations

import torch

from ..registry import register_kernel
from ._common import FLOAT_HALF_INT, check_float_half_int, param, params, run_native, split_at_dim, unsupported

aten = torch.ops.aten
_SORT = aten.sort.stable
_INT_OF_SIZE = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _check(func, args, kwargs, x, bool_ok: bool = True) -> None:
    """Torch's own argument errors (a meta run computes nothing) and repmode's dtype checks."""
    check_float_half_int(func, args, kwargs, x)
    if x.dtype == torch.bool and not bool_ok:
        raise unsupported(func, args, kwargs, "dtype torch.bool is not supported (torch's native op has no bool "
                                              "kernel either)")
    meta_args = (torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta"),) + tuple(args[1:])
    func(*meta_args, **{k: v for k, v in (kwargs or {}).items() if k not in ("values", "indices", "out")})


def _take(x: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """x.gather(dim, index) with every bit kept: floats move through an integer view of the same size
    (torch's CPU gather of bf16/f16 rewrites NaN payloads)."""
    if x.is_floating_point():
        return x.view(_INT_OF_SIZE[x.element_size()]).gather(dim, index).view(x.dtype)
    return x.gather(dim, index)


def stable_sort(x: torch.Tensor, dim: int, descending: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(values, indices) of the stable sort of ``x`` (at least 1-D) along ``dim``: uniquely defined."""
    if x.is_floating_point():
        key = torch.where(torch.isnan(x), float("nan"), x)  # one canonical NaN: all NaNs tie
        key = key.masked_fill(key == 0, 0.0)  # -0.0 and +0.0 tie
        indices = _SORT(key, stable=True, dim=dim, descending=descending)[1]
        return _take(x, dim, indices), indices
    values, indices = _SORT(x, stable=True, dim=dim, descending=descending)
    return values, indices


def _wrap_dim(x: torch.Tensor, dim: int) -> int:
    split_at_dim(x, dim)  # torch's IndexError for a dim out of range (the meta sort does not check it)
    return dim % max(x.dim(), 1)


def _at_least_1d(x: torch.Tensor, dim: int) -> tuple[torch.Tensor, int]:
    dim = _wrap_dim(x, dim)
    if x.dim() == 0:
        return x.reshape(1), 0
    return x, dim


def _fresh(t: torch.Tensor) -> torch.Tensor:
    return t.clone(memory_format=torch.contiguous_format)


@register_kernel([aten.sort.default, aten.sort.stable], FLOAT_HALF_INT,
                 out=[aten.sort.values, aten.sort.values_stable])
def sort(func, args, kwargs):
    x = args[0]
    _check(func, args, kwargs, x)
    dim, descending = params(func, args, kwargs, "dim", "descending")
    dim = _wrap_dim(x, dim)
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.int64, device=x.device)
    return stable_sort(x, dim, bool(descending))


@register_kernel([aten.argsort.default, aten.argsort.stable], FLOAT_HALF_INT, out=[aten.argsort.stable_out])
def argsort(func, args, kwargs):
    return sort(func, args, kwargs)[1]


@register_kernel([aten.msort.default], FLOAT_HALF_INT, out=[aten.msort.out])
def msort(func, args, kwargs):
    x = args[0]
    _check(func, args, kwargs, x)
    if x.dim() == 0:
        return x.clone()
    return stable_sort(x, 0, False)[0]


@register_kernel([aten.topk.default], FLOAT_HALF_INT, out=[aten.topk.values])
def topk(func, args, kwargs):
    x = args[0]
    _check(func, args, kwargs, x, bool_ok=False)
    k = int(param(func, args, kwargs, "k"))
    dim = param(func, args, kwargs, "dim")
    largest = bool(param(func, args, kwargs, "largest"))
    # sorted=False: torch leaves the order unspecified; repmode returns the sorted result
    y, d = _at_least_1d(x, dim)
    values, indices = stable_sort(y, d, largest)
    values, indices = _fresh(values.narrow(d, 0, k)), _fresh(indices.narrow(d, 0, k))
    if x.dim() == 0:
        return values.reshape(()), indices.reshape(())
    return values, indices


def _select(x: torch.Tensor, dim, keepdim: bool, position) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row along ``dim``: the element at ``position(values, dim)`` (a keepdim int64 tensor of
    positions) of the stable ascending sort, and its index."""
    y, d = _at_least_1d(x, dim)
    values, indices = stable_sort(y, d, False)
    pos = position(y, d)
    value, index = _take(values, d, pos), indices.gather(d, pos)
    if x.dim() == 0:
        return value.reshape(()), index.reshape(())
    if not keepdim:
        value, index = value.squeeze(d), index.squeeze(d)
    return _fresh(value), _fresh(index)


def _non_nan_count(y: torch.Tensor, d: int) -> torch.Tensor:
    if y.is_floating_point():
        return (~torch.isnan(y)).sum(d, keepdim=True)  # an integer count: exact
    shape = list(y.shape)
    shape[d] = 1
    return torch.full(shape, y.shape[d], dtype=torch.int64, device=y.device)


@register_kernel([aten.kthvalue.default], FLOAT_HALF_INT, out=[aten.kthvalue.values])
def kthvalue(func, args, kwargs):
    x = args[0]
    _check(func, args, kwargs, x, bool_ok=False)
    k = int(param(func, args, kwargs, "k"))
    dim = param(func, args, kwargs, "dim")
    keepdim = bool(param(func, args, kwargs, "keepdim"))

    def position(y, d):
        shape = list(y.shape)
        shape[d] = 1
        return torch.full(shape, k - 1, dtype=torch.int64, device=y.device)

    return _select(x, dim, keepdim, position)


def _median_position(y, d):
    n, m = y.shape[d], _non_nan_count(y, d)
    return torch.where(m < n, m, (n - 1) // 2)  # a row with NaN: its first NaN (torch's value and index)


def _nanmedian_position(y, d):
    n, m = y.shape[d], _non_nan_count(y, d)
    return torch.where(m > 0, (m - 1) // 2, (n - 1) // 2)  # all NaN: torch's NaN at position (n-1)//2


@register_kernel([aten.median.dim], FLOAT_HALF_INT, out=[aten.median.dim_values])
def median_dim(func, args, kwargs):
    x = args[0]
    _check(func, args, kwargs, x, bool_ok=False)
    if x.numel() == 0:
        return run_native(func, args, kwargs)  # empty result: no values to compute
    return _select(x, param(func, args, kwargs, "dim"), bool(param(func, args, kwargs, "keepdim")),
                   _median_position)


@register_kernel([aten.nanmedian.dim], FLOAT_HALF_INT, out=[aten.nanmedian.dim_values])
def nanmedian_dim(func, args, kwargs):
    x = args[0]
    _check(func, args, kwargs, x, bool_ok=False)
    if x.numel() == 0:
        return run_native(func, args, kwargs)  # empty result: no values to compute
    return _select(x, param(func, args, kwargs, "dim"), bool(param(func, args, kwargs, "keepdim")),
                   _nanmedian_position)


@register_kernel([aten.median.default], FLOAT_HALF_INT, out=[aten.median.out])
def median(func, args, kwargs):
    x = args[0]
    _check(func, args, kwargs, x, bool_ok=False)
    if x.numel() == 0:
        return run_native(func, args, kwargs)  # torch's NaN fill: no values to compute
    return _select(x.reshape(-1), 0, False, _median_position)[0]


@register_kernel([aten.nanmedian.default], FLOAT_HALF_INT, out=[aten.nanmedian.out])
def nanmedian(func, args, kwargs):
    x = args[0]
    _check(func, args, kwargs, x, bool_ok=False)
    if x.numel() == 0:
        return run_native(func, args, kwargs)  # torch's NaN fill: no values to compute
    return _select(x.reshape(-1), 0, False, _nanmedian_position)[0]
