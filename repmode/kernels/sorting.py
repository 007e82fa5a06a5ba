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

from ..registry import register_kernel, register_passthrough
from ._common import (
    DISPATCH,
    FLOAT_HALF_INT,
    call_registered,
    check_float_half_int,
    param,
    params,
    round_to,
    run_native,
    split_at_dim,
    unsupported,
)

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
    if 0 < k and 8 * k < y.shape[d]:
        values, indices = _topk_by_threshold(y, d, k, largest)
    else:
        values, indices = stable_sort(y, d, largest)
        values, indices = values.narrow(d, 0, k), indices.narrow(d, 0, k)
    values, indices = _fresh(values), _fresh(indices)
    if x.dim() == 0:
        return values.reshape(()), indices.reshape(())
    return values, indices


def _topk_by_threshold(y: torch.Tensor, d: int, k: int, largest: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """The first k of the stable sort without sorting the row. torch's topk (NaN largest, as repmode)
    of k + 1 elements: where the (k+1)-th differs from the k-th (not equal, not both NaN), the set of
    the k first is unique, and only their order among equal values needs fixing (by index: one sort of
    (row, group of equal keys, index) packed in an int64). Rows with ties at the k-th value take every
    element beyond it and the lowest-index elements equal to it (integer order keys, exact). The same
    result as ``stable_sort(...)[:k]``, in O(n + k log k)."""
    n = y.shape[d]
    rows_y = y.movedim(d, -1)
    top_values, top_index = aten.topk.default(rows_y, k + 1, -1, largest, True)
    kth, after = top_values[..., k - 1], top_values[..., k]
    distinct = kth != after
    if y.is_floating_point():
        distinct &= ~(torch.isnan(kth) & torch.isnan(after))
    if bool(distinct.all()):
        pos = top_index[..., :k]
        top_keys = order_key(top_values[..., :k])
        group = torch.zeros_like(pos)
        group[..., 1:] = (top_keys[..., 1:] != top_keys[..., :-1]).cumsum(-1)  # runs of equal keys, in order
        m = pos.numel() // k
        if m * k * n < 2 ** 62:
            row = torch.arange(m, device=y.device).reshape(pos.shape[:-1] + (1,))
            packed = ((row * k + group) * n + pos).reshape(-1)  # distinct int64s: every sort gives one order
            pos = (packed.sort().values.reshape(pos.shape) % n)
        else:
            pos = pos.gather(-1, _SORT(group * n + pos, stable=True, dim=-1)[1])
        return _take(rows_y, -1, pos).movedim(-1, d), pos.movedim(-1, d)
    key = order_key(rows_y)
    kth_key = order_key(kth).unsqueeze(-1)
    beyond = key > kth_key if largest else key < kth_key
    equal = key == kth_key
    need = k - beyond.sum(-1, keepdim=True)
    take = beyond | (equal & (equal.cumsum(-1) <= need))  # integer counts: exact
    pos = take.nonzero()[:, -1].reshape(*take.shape[:-1], k)  # k per row, in index order
    cand = key.gather(-1, pos)
    index = pos.gather(-1, _SORT(cand, stable=True, dim=-1, descending=largest)[1])
    return _take(rows_y, -1, index).movedim(-1, d), index.movedim(-1, d)


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


# ---- keys, runs and exact selections ------------------------------------------------------------

_MAGNITUDE = {torch.int16: 0x7FFF, torch.int32: 0x7FFFFFFF, torch.int64: 0x7FFFFFFFFFFFFFFF}


def order_key(x: torch.Tensor) -> torch.Tensor:
    """An integer tensor of x's shape ordered as repmode orders x: NaN largest (every NaN one key),
    -0.0 == +0.0, otherwise the IEEE order. Integers and bool are their own keys. Comparisons and
    searches on the key are exact integer operations, whatever a backend does with float NaNs."""
    if not x.is_floating_point():
        return x
    bits = x.view(_INT_OF_SIZE[x.element_size()])
    sign = bits >> (8 * x.element_size() - 1)  # -1 for negative floats, 0 otherwise
    # negative floats: flip the magnitude bits (larger magnitudes become smaller integers), then add
    # 1, so that -0.0 (all ones after the flip) meets +0.0 at 0
    key = (bits ^ (sign & _MAGNITUDE[bits.dtype])) - sign
    return key.masked_fill_(torch.isnan(x), _MAGNITUDE[bits.dtype])  # every NaN: the largest key


def _runs_of_sorted(skey: torch.Tensor, distinct: torch.Tensor | None = None) -> torch.Tensor:
    """``new`` (bool, the shape of ``skey``): True where a run of equal keys starts along the last
    dim; ``distinct`` marks elements that start a run of their own (NaN in ``unique``)."""
    new = torch.ones_like(skey, dtype=torch.bool)
    if skey.shape[-1] > 1:
        new[..., 1:] = skey[..., 1:] != skey[..., :-1]
    if distinct is not None:
        new |= distinct
    return new


@register_kernel([aten.mode.default], FLOAT_HALF_INT, out=[aten.mode.values])
def mode(func, args, kwargs):
    x = args[0]
    _check(func, args, kwargs, x)
    dim, keepdim = params(func, args, kwargs, "dim", "keepdim")
    y, d = _at_least_1d(x, dim)
    if y.numel() == 0:
        return run_native(func, args, kwargs)  # empty: no values to compute (torch's own error or result)
    rows = y.movedim(d, -1)
    n = rows.shape[-1]
    skey, sidx = _SORT(order_key(rows), stable=True, dim=-1)
    new = _runs_of_sorted(skey)
    pos = torch.arange(n, device=x.device).expand(skey.shape)
    start = torch.where(new, pos, 0).cummax(-1).values  # integer running max: exact
    is_end = torch.ones_like(new)
    is_end[..., :-1] = new[..., 1:]
    end = torch.where(is_end, pos, n).flip(-1).cummin(-1).values.flip(-1)
    count = end - start + 1
    best = count.argmax(-1, keepdim=True)  # the first longest run: the smallest mode (integer argmax: first)
    index = sidx.gather(-1, end.gather(-1, best))  # the last index holding the mode (stable sort)
    value = _take(rows, -1, index)
    value, index = value.movedim(-1, d), index.movedim(-1, d)
    if x.dim() == 0:
        return value.reshape(()), index.reshape(())
    if not keepdim:
        value, index = value.squeeze(d), index.squeeze(d)
    return _fresh(value), _fresh(index)


def _unique_flat(x: torch.Tensor, consecutive: bool):
    """(values, inverse, counts) of the flattened ``x``: equal keys merged (IEEE ==: -0.0 == +0.0,
    every NaN its own value); sorted unless ``consecutive``; each value the bits of its first
    occurrence (lowest index)."""
    flat = x.reshape(-1)
    n = flat.numel()
    key = order_key(flat)
    if consecutive:
        skey, sidx = key, torch.arange(n, device=x.device)
    else:
        skey, sidx = _SORT(key, stable=True, dim=0)
    distinct = torch.isnan(flat).index_select(0, sidx) if flat.is_floating_point() else None
    new = _runs_of_sorted(skey, distinct)
    starts = new.nonzero().squeeze(1)
    values = _take(flat, 0, sidx.index_select(0, starts))
    counts = torch.diff(starts, append=torch.tensor([n], device=x.device))
    run = new.cumsum(0) - 1  # integer prefix count: exact
    inverse = torch.empty_like(run).scatter_(0, sidx, run)  # a permutation: each position written once
    return values, inverse.reshape(x.shape), counts


def _unique_rows(x: torch.Tensor, dim: int, consecutive: bool):
    """unique along ``dim``: the slices x.select(dim, i) compared as rows (lexicographic order of their
    keys in row-major order; equal when every key is equal and no element is NaN)."""
    dim = _wrap_dim(x, dim)
    n = x.shape[dim]
    rows = x.movedim(dim, 0).reshape(n, -1)
    key = order_key(rows)
    perm = torch.arange(n, device=x.device)
    if not consecutive:
        for c in range(key.shape[1] - 1, -1, -1):  # least significant column first: stable sorts
            perm = perm.index_select(0, _SORT(key[:, c].index_select(0, perm), stable=True, dim=0)[1])
    skey = key.index_select(0, perm)
    new = torch.ones(n, dtype=torch.bool, device=x.device)
    if n > 1:
        new[1:] = (skey[1:] != skey[:-1]).any(1)
    if rows.is_floating_point():
        new |= torch.isnan(rows).any(1).index_select(0, perm)
    starts = new.nonzero().squeeze(1)
    values = x.view(_INT_OF_SIZE[x.element_size()]).index_select(dim, perm.index_select(0, starts)).view(x.dtype) \
        if x.is_floating_point() else x.index_select(dim, perm.index_select(0, starts))
    counts = torch.diff(starts, append=torch.tensor([n], device=x.device))
    run = new.cumsum(0) - 1
    inverse = torch.empty_like(run).scatter_(0, perm, run)
    return values, inverse, counts


def _empty_index(x):
    return torch.empty(0, dtype=torch.int64, device=x.device)


def _unique_result(func, args, kwargs, x, values, inverse, counts, want_inverse, want_counts):
    return (values, inverse if want_inverse else _empty_index(x), counts if want_counts else _empty_index(x))


@register_kernel([aten._unique2.default], FLOAT_HALF_INT, out=[aten._unique2.out])
def unique2(func, args, kwargs):
    x = args[0]
    check_float_half_int(func, args, kwargs, x)
    # sorted=False: torch leaves the order unspecified (its CPU hash set); repmode returns the sorted result
    want_inverse, want_counts = params(func, args, kwargs, "return_inverse", "return_counts")
    values, inverse, counts = _unique_flat(x, consecutive=False)
    return _unique_result(func, args, kwargs, x, values, inverse, counts, want_inverse, want_counts)


@register_kernel([aten._unique.default], FLOAT_HALF_INT, out=[aten._unique.out])
def unique(func, args, kwargs):
    x = args[0]
    check_float_half_int(func, args, kwargs, x)
    values, inverse, _ = _unique_flat(x, consecutive=False)
    return values, inverse if param(func, args, kwargs, "return_inverse") else _empty_index(x)


@register_kernel([aten.unique_consecutive.default], FLOAT_HALF_INT, out=[aten.unique_consecutive.out])
def unique_consecutive(func, args, kwargs):
    x = args[0]
    check_float_half_int(func, args, kwargs, x)
    want_inverse, want_counts, dim = params(func, args, kwargs, "return_inverse", "return_counts", "dim")
    if dim is None:
        values, inverse, counts = _unique_flat(x, consecutive=True)
    else:
        if x.numel() == 0:
            return run_native(func, args, kwargs)  # torch's own error or empty result: no values
        values, inverse, counts = _unique_rows(x, dim, consecutive=True)
    return _unique_result(func, args, kwargs, x, values, inverse, counts, want_inverse, want_counts)


@register_kernel([aten.unique_dim.default, aten.unique_dim_consecutive.default], FLOAT_HALF_INT,
                 out=[aten.unique_dim.out, aten.unique_dim_consecutive.out])
def unique_dim(func, args, kwargs):
    x = args[0]
    check_float_half_int(func, args, kwargs, x)
    dim, want_inverse, want_counts = params(func, args, kwargs, "dim", "return_inverse", "return_counts")
    if x.numel() == 0:
        return run_native(func, args, kwargs)  # torch's own error or empty result: no values
    # unique_dim's sorted=False: torch sorts anyway, and so does repmode
    values, inverse, counts = _unique_rows(x, dim, consecutive=func is aten.unique_dim_consecutive.default)
    return _unique_result(func, args, kwargs, x, values, inverse, counts, want_inverse, want_counts)


# ---- searches -------------------------------------------------------------------------------------

def _search_keys(boundaries: torch.Tensor, values):
    """Both operands converted as torch converts them (to their result type: exact or one rounding),
    then to order keys (NaN largest, -0.0 == +0.0)."""
    if not isinstance(values, torch.Tensor):
        values = torch.scalar_tensor(values, dtype=torch.result_type(boundaries, values), device=boundaries.device)
    common = torch.result_type(boundaries, values)
    boundaries, values = boundaries.to(common), values.to(common)
    return order_key(boundaries), order_key(values)


def _meta(t):
    if isinstance(t, torch.Tensor):
        return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")
    return t


@register_kernel([aten.searchsorted.Tensor, aten.searchsorted.Scalar], FLOAT_HALF_INT,
                 out=[aten.searchsorted.Tensor_out, aten.searchsorted.Scalar_out])
def searchsorted(func, args, kwargs):
    sequence, value = params(func, args, kwargs, "sorted_sequence", "self")
    check_float_half_int(func, args, kwargs, sequence, value)
    out_int32, right, side, sorter = params(func, args, kwargs, "out_int32", "right", "side", "sorter")
    if any(isinstance(t, torch.Tensor) and t.dtype == torch.bool for t in (sequence, value)):
        return run_native(func, args, kwargs)  # torch's own error: no bool kernel
    meta_kwargs = dict(out_int32=out_int32, right=right, side=side, sorter=_meta(sorter))
    func(_meta(sequence), _meta(value), **meta_kwargs)  # torch's own argument errors; computes nothing
    seq_key, value_key = _search_keys(sequence, value)
    # a binary search over integer keys: the insertion point among sorted keys is unique
    return aten.searchsorted.Tensor(seq_key, value_key, out_int32=out_int32, right=right, side=side, sorter=sorter)


@register_kernel([aten.bucketize.Tensor, aten.bucketize.Scalar], FLOAT_HALF_INT,
                 out=[aten.bucketize.Tensor_out, aten.bucketize.Scalar_out])
def bucketize(func, args, kwargs):
    value, boundaries = params(func, args, kwargs, "self", "boundaries")
    check_float_half_int(func, args, kwargs, value, boundaries)
    out_int32, right = params(func, args, kwargs, "out_int32", "right")
    if any(isinstance(t, torch.Tensor) and t.dtype == torch.bool for t in (value, boundaries)):
        return run_native(func, args, kwargs)  # torch's own error: no bool kernel
    func(_meta(value), _meta(boundaries), out_int32=out_int32, right=right)  # torch's own argument errors
    seq_key, value_key = _search_keys(boundaries, value)
    return aten.bucketize.Tensor(value_key, seq_key, out_int32=out_int32, right=right)


@register_kernel([aten.isin.Tensor_Tensor, aten.isin.Tensor_Scalar, aten.isin.Scalar_Tensor], FLOAT_HALF_INT,
                 out=[aten.isin.Tensor_Tensor_out, aten.isin.Tensor_Scalar_out, aten.isin.Scalar_Tensor_out])
def isin(func, args, kwargs):
    elements, test_elements = args[0], args[1]  # the names differ between overloads (element, test_element)
    invert = param(func, args, kwargs, "invert")
    check_float_half_int(func, args, kwargs, elements, test_elements)
    # membership under IEEE == (NaN in nothing, -0.0 == +0.0): one boolean per element. assume_unique
    # is dropped: with duplicates torch's result is unspecified, without them both paths give this one.
    return func(elements, test_elements, assume_unique=False, invert=invert)


# ---- running extremes, aminmax ----------------------------------------------------------------------

@register_kernel([aten.cummax.default, aten.cummin.default], FLOAT_HALF_INT,
                 out=[aten.cummax.out, aten.cummin.out])
def cummax_cummin(func, args, kwargs):
    x = args[0]
    check_float_half_int(func, args, kwargs, x)
    dim = param(func, args, kwargs, "dim")
    if x.is_cpu:
        # torch's CPU scan is sequential per row and defines the rule: out_j = x_j when x_j is NaN or
        # (out_{j-1} is not NaN and x_j >= out_{j-1}) (<= for cummin), else out_{j-1}: ties and NaNs
        # take the later index. Every value is an input element: exact selection.
        return func(x, dim)
    values, indices = func(x.cpu(), dim)  # the same rule on every device: the CPU scan, exact data movement
    return values.to(x.device), indices.to(x.device)


@register_kernel([aten.aminmax.default], FLOAT_HALF_INT, out=[aten.aminmax.out])
def aminmax(func, args, kwargs):
    x = args[0]
    check_float_half_int(func, args, kwargs, x)
    dim, keepdim = params(func, args, kwargs, "dim", "keepdim")
    func(_meta(x), dim=dim, keepdim=keepdim)  # torch's own errors (empty input, bad dim)
    dims = [] if dim is None else [dim]
    lo = call_registered(aten.amin.default, x, dims, keepdim)
    hi = call_registered(aten.amax.default, x, dims, keepdim)
    return lo, hi


# ---- logcumsumexp ----------------------------------------------------------------------------------

@register_kernel([aten.logcumsumexp.default, aten._logcumsumexp.default], FLOAT_HALF_INT,
                 out=[aten.logcumsumexp.out, aten._logcumsumexp.out])
def logcumsumexp(func, args, kwargs):
    x = args[0]
    check_float_half_int(func, args, kwargs, x)
    dim = param(func, args, kwargs, "dim")
    func(_meta(x), dim)  # torch's own errors (bad dim)
    if not x.is_floating_point():
        return run_native(func, args, kwargs)  # torch's own error: no integer kernel
    if x.numel() == 0:
        return torch.empty_like(x)
    y, d = _at_least_1d(x, dim)
    rows = y.movedim(d, -1).to(torch.float64)  # exact
    out = torch.empty_like(rows)
    exp, log1p = DISPATCH[aten.exp.default], DISPATCH[aten.log1p.default]
    acc = rows[..., 0].clone()
    out[..., 0] = acc
    for j in range(1, rows.shape[-1]):
        v = rows[..., j]
        hi, lo = torch.maximum(acc, v), torch.minimum(acc, v)  # exact; NaN propagates
        step = hi + log1p(aten.log1p.default, (exp(aten.exp.default, (lo - hi,), {}),), {})
        acc = torch.where((lo == hi) & torch.isinf(lo), lo, step)  # -inf with -inf, +inf with +inf
        out[..., j] = acc
    out = torch.where(torch.isnan(out), float("nan"), out)  # the canonical NaN
    result = out.movedim(-1, d).reshape(x.shape)
    if x.dtype == torch.float64:
        return result.contiguous()
    result = result.to(torch.float32)  # one rounding
    return result.contiguous() if x.dtype == torch.float32 else round_to(result, x.dtype).contiguous()


register_passthrough([aten.count_nonzero.default, aten.count_nonzero.dim_IntList, aten.count_nonzero.out,
                      aten.count_nonzero.dim_IntList_out],
                     reason="an integer count of elements != 0: exact, in any order", family="sorting")
register_passthrough([aten.nonzero_static.default, aten.nonzero_static.out],
                     reason="selection: the positions of nonzero elements in row-major order, padded with "
                            "fill_value; no arithmetic", family="sorting")

# quantile/nanquantile (CompositeImplicitAutograd: torch decomposes them into sort, gather, lerp_,
# ... before the mode sees them) also reach unsqueeze_/squeeze_ and logical_not_, exact passthroughs
# registered in passthrough.py; see docs/semantics.md "Sorting and selection" for the quantile formula.
