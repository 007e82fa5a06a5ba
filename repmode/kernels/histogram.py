"""Histograms and counts: histc, histogram, histogramdd, bincount (docs/semantics.md "Histograms and
bincount").

Each element's bin is an exact function of its value and the edges, and the edges and the bin of
histc are a few IEEE operations written out below (each one repmode's correctly rounded elementwise
op, so a GPU cannot turn a division into a multiplication by a reciprocal). The counts are integer
counts (exact) rounded once to the result dtype; weights are accumulated per bin in float64, in
increasing element order (repmode's ``index_add``), and each bin is rounded once. Torch's CPU
kernels sum weights per thread chunk in the input dtype: their bits depend on the thread count.
"""
from __future__ import annotations

import math

import torch

from ..registry import register_kernel
from ._common import FLOAT_HALF_INT, call_registered, check_float_half_int, params, run_native, unsupported
from .sorting import order_key

aten = torch.ops.aten


def _op(op, *args):
    return call_registered(op, *args)


def _as_dtype(value: float, like: torch.Tensor) -> torch.Tensor:
    """A Python float (a double) rounded once to ``like``'s dtype, as a 0-dim tensor."""
    return torch.scalar_tensor(value, dtype=like.dtype, device=like.device)


def _check_floating(func, args, kwargs, x: torch.Tensor, name: str) -> None:
    check_float_half_int(func, args, kwargs, x)
    if not x.is_floating_point():
        run_native(func, args, kwargs)  # torch's own error for integer inputs ("not implemented for 'Long'")
        raise unsupported(func, args, kwargs, f"{name} of dtype {x.dtype}: torch has no kernel for it either")


def linspace_edges(lo: float, hi: float, bins: int, like: torch.Tensor) -> torch.Tensor:
    """bins + 1 edges from ``lo`` to ``hi`` (doubles rounded once to the dtype): with
    ``step = (hi - lo) / bins``, edge i is ``lo + step * i`` for i < (bins + 1) // 2 and
    ``hi - step * (bins - i)`` otherwise, each operation rounded to the dtype (torch's scalar
    linspace formula; its vectorized lanes compute some edges another way)."""
    lo_t, hi_t = _as_dtype(lo, like), _as_dtype(hi, like)
    step = _op(aten.div.Tensor, _op(aten.sub.Tensor, hi_t, lo_t), _as_dtype(float(bins), like))
    i = torch.arange(bins + 1, device=like.device)
    half = (bins + 1) // 2
    low = _op(aten.add.Tensor, lo_t, _op(aten.mul.Tensor, step, i[:half].to(like.dtype)))
    high = _op(aten.sub.Tensor, hi_t, _op(aten.mul.Tensor, step, (bins - i[half:]).to(like.dtype)))
    return torch.cat([low, high])


def _bin_of(x: torch.Tensor, edges: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(bin, inside) for each element: the b with edges[b] <= x < edges[b + 1], the last bin closed
    (x == edges[-1] is in it); ``inside`` is False for x outside [edges[0], edges[-1]] and for NaN.
    A binary search over order keys (integer comparisons)."""
    bins = edges.numel() - 1
    key_edges, key_x = order_key(edges), order_key(x)
    b = torch.searchsorted(key_edges, key_x, right=True) - 1
    inside = (x >= edges[0]) & (x <= edges[-1])
    return b.clamp(0, max(bins - 1, 0)), inside


def ordered_bin_sums(index: torch.Tensor, w: torch.Tensor, size: int) -> torch.Tensor:
    """float64 sums per bin: bin b is ``+0.0 + w_i + w_j + ...`` over its elements in increasing
    position, one float64 rounding per addition (the "Indexed accumulation" order). Laid out as a
    (bins, 1 + most elements in a bin) matrix, column 0 = +0.0, each bin's weights in order, then
    +0.0 padding (an exact identity), summed along rows by repmode's float64 cumsum (sequential); a
    matrix that would be much larger than the input (one crowded bin among very many) takes
    repmode's index_add instead (the same order, in rounds)."""
    zeros = torch.zeros(size, dtype=torch.float64, device=w.device)
    n = index.numel()
    if n == 0:
        return zeros
    order = torch.sort(index, stable=True).indices  # by bin, positions increasing: exact
    sorted_bin = index[order]
    starts = torch.ones_like(sorted_bin, dtype=torch.bool)
    starts[1:] = sorted_bin[1:] != sorted_bin[:-1]
    pos = torch.arange(n, device=w.device)
    rank = pos - torch.where(starts, pos, 0).cummax(0).values  # place within its bin (integers)
    width = int(rank.max()) + 2
    if size * width > max(4 * n, 1 << 20):
        return call_registered(aten.index_add.default, zeros, 0, index, w)
    table = torch.zeros(size, width, dtype=torch.float64, device=w.device)
    table[sorted_bin, rank + 1] = w[order]  # distinct cells: a plain copy
    return call_registered(aten.cumsum.default, table, 1)[:, -1].contiguous()


def _accumulate(flat_bin: torch.Tensor, inside: torch.Tensor, weight, size: int, dtype) -> torch.Tensor:
    """The histogram of ``size`` cells: counts (exact integers) or weights summed in float64 in
    increasing element order, then rounded once to ``dtype``."""
    index = flat_bin[inside]
    if weight is None:
        counts = torch.bincount(index, minlength=size)  # integer counting: exact
        return counts.to(dtype)
    w = weight.reshape(-1)[inside].to(torch.float64)  # exact
    acc = ordered_bin_sums(index, w, size)
    acc = torch.where(torch.isnan(acc), float("nan"), acc)  # the canonical NaN
    return acc.to(dtype)


def _density(hist: torch.Tensor, edges: list[torch.Tensor]) -> torch.Tensor:
    """torch's formula: hist / sum(hist), then / the bin widths of each dim (one division each)."""
    total = _op(aten.sum.default, hist)
    hist = _op(aten.div.Tensor, hist, total)
    for d, e in enumerate(edges):
        shape = [1] * len(edges)
        shape[d] = e.numel() - 1
        widths = _op(aten.sub.Tensor, e[1:], e[:-1])
        hist = _op(aten.div.Tensor, hist, widths.reshape(shape))
    return hist


def _outer_edges(x2: torch.Tensor, ranges, what: str, widen: float) -> list[tuple[float, float]]:
    """(leftmost, rightmost) per dim as doubles: ``range`` or the data's min and max; an empty range
    widened by ``widen`` on each side (torch's rule)."""
    D = x2.shape[1]
    if ranges is not None:
        pairs = [(float(ranges[2 * d]), float(ranges[2 * d + 1])) for d in range(D)]
    elif x2.numel() > 0:
        lo, hi = torch.aminmax(x2, dim=0)  # exact selection
        pairs = [(lo[d].item(), hi[d].item()) for d in range(D)]
    else:
        pairs = [(0.0, 1.0)] * D  # torch's default for an empty input
    out = []
    for lo, hi in pairs:
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"{what}: range of [{lo}, {hi}] is not finite")
        if lo > hi:
            raise ValueError(f"{what}: min should not exceed max, but got min {lo} max {hi}")
        if lo == hi:
            lo, hi = lo - widen, hi + widen
        out.append((lo, hi))
    return out


def _histogramdd(x: torch.Tensor, edges: list[torch.Tensor], weight, density: bool) -> torch.Tensor:
    D = len(edges)
    x2 = x.reshape(-1, D)
    sizes = [e.numel() - 1 for e in edges]
    flat = torch.zeros(x2.shape[0], dtype=torch.int64, device=x.device)
    inside = torch.ones(x2.shape[0], dtype=torch.bool, device=x.device)
    for d in range(D):
        b, ok = _bin_of(x2[:, d].contiguous(), edges[d].to(x.dtype))
        flat = flat * sizes[d] + b  # row-major cell index: exact integers
        inside &= ok
    hist = _accumulate(flat, inside, weight, math.prod(sizes), x.dtype).reshape(sizes)
    return _density(hist, edges) if density else hist


def _edges_from_counts(x2, bins, ranges, what):
    return [linspace_edges(lo, hi, int(b), x2) for (lo, hi), b in zip(_outer_edges(x2, ranges, what, 0.5), bins)]


def _check_weight(x, weight, shape):
    if weight is not None and (weight.dtype != x.dtype or tuple(weight.shape) != tuple(shape)):
        raise RuntimeError("histogramdd: if weight tensor is provided, it should have the same shape as the input "
                           "tensor excluding its innermost dimension, and the same dtype as the input")


@register_kernel([aten.histc.default], FLOAT_HALF_INT, out=[aten.histc.out])
def histc(func, args, kwargs):
    x = args[0]
    _check_floating(func, args, kwargs, x, "histc")
    bins, lo, hi = params(func, args, kwargs, "bins", "min", "max")
    bins, lo, hi = int(bins), float(lo), float(hi)
    if bins <= 0:
        return run_native(func, args, kwargs)  # torch's own error
    if lo == hi and x.numel() > 0:
        lo, hi = (v.item() for v in torch.aminmax(x))  # exact selection
    if lo == hi:
        lo, hi = lo - 1.0, hi + 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    flat = x.reshape(-1)
    lo_t, hi_t = _as_dtype(lo, x), _as_dtype(hi, x)
    # bin = trunc(((x - lo) * bins) / (hi - lo)), each operation rounded to the dtype; x == hi: the last bin
    pos = _op(aten.div.Tensor, _op(aten.mul.Tensor, _op(aten.sub.Tensor, flat, lo_t), _as_dtype(float(bins), x)),
              _op(aten.sub.Tensor, hi_t, lo_t))
    inside = (flat >= lo_t) & (flat <= hi_t)
    b = torch.where(inside, pos, 0).to(torch.int64).clamp(0, bins - 1)  # truncation toward zero, exact
    return _accumulate(b, inside, None, bins, x.dtype)


@register_kernel([aten.histogram.bin_ct], FLOAT_HALF_INT, out=[aten.histogram.bin_ct_out])
def histogram_bin_ct(func, args, kwargs):
    x = args[0]
    _check_floating(func, args, kwargs, x, "histogram")
    bins, ranges, weight, density = params(func, args, kwargs, "bins", "range", "weight", "density")
    if int(bins) <= 0:
        return run_native(func, args, kwargs)  # torch's own error
    _check_weight(x, weight, x.shape)
    x2 = x.reshape(-1, 1)
    edges = _edges_from_counts(x2, [bins], ranges, "torch.histogram")
    return _histogramdd(x2, edges, weight, bool(density)), edges[0]


@register_kernel([aten.histogram.bins_tensor], FLOAT_HALF_INT, out=[aten.histogram.bins_tensor_out])
def histogram_bins_tensor(func, args, kwargs):
    x = args[0]
    _check_floating(func, args, kwargs, x, "histogram")
    bins, weight, density = params(func, args, kwargs, "bins", "weight", "density")
    if bins.dim() != 1 or bins.numel() < 1 or bins.dtype != x.dtype:
        return run_native(func, args, kwargs)  # torch's own error
    _check_weight(x, weight, x.shape)
    return _histogramdd(x.reshape(-1, 1), [bins], weight, bool(density)), bins.clone()


def _dd_input(func, args, kwargs):
    x = args[0]
    _check_floating(func, args, kwargs, x, "histogramdd")
    if x.dim() < 1:
        return run_native(func, args, kwargs)  # torch's own error
    return x, x.reshape(-1, x.shape[-1])


@register_kernel([aten._histogramdd_bin_edges.default], FLOAT_HALF_INT, out=[aten._histogramdd_bin_edges.out])
def histogramdd_bin_edges(func, args, kwargs):
    x, x2 = _dd_input(func, args, kwargs)
    bins, ranges = params(func, args, kwargs, "bins", "range")
    if len(bins) != x2.shape[1] or any(int(b) <= 0 for b in bins):
        return run_native(func, args, kwargs)  # torch's own error
    return _edges_from_counts(x2, bins, ranges, "torch.histogramdd")


@register_kernel([aten._histogramdd_from_bin_cts.default], FLOAT_HALF_INT, out=[aten._histogramdd_from_bin_cts.out])
def histogramdd_from_bin_cts(func, args, kwargs):
    x, x2 = _dd_input(func, args, kwargs)
    bins, ranges, weight, density = params(func, args, kwargs, "bins", "range", "weight", "density")
    if len(bins) != x2.shape[1] or any(int(b) <= 0 for b in bins):
        return run_native(func, args, kwargs)  # torch's own error
    _check_weight(x, weight, x.shape[:-1])
    return _histogramdd(x2, _edges_from_counts(x2, bins, ranges, "torch.histogramdd"), weight, bool(density))


@register_kernel([aten._histogramdd_from_bin_tensors.default], FLOAT_HALF_INT,
                 out=[aten._histogramdd_from_bin_tensors.out])
def histogramdd_from_bin_tensors(func, args, kwargs):
    x, x2 = _dd_input(func, args, kwargs)
    bins, weight, density = params(func, args, kwargs, "bins", "weight", "density")
    if len(bins) != x2.shape[1] or any(b.dim() != 1 or b.numel() < 1 or b.dtype != x.dtype for b in bins):
        return run_native(func, args, kwargs)  # torch's own error
    _check_weight(x, weight, x.shape[:-1])
    return _histogramdd(x2, list(bins), weight, bool(density))


@register_kernel([aten.bincount.default], FLOAT_HALF_INT, out=[aten.bincount.out])
def bincount(func, args, kwargs):
    x, weights, minlength = params(func, args, kwargs, "self", "weights", "minlength")
    check_float_half_int(func, args, kwargs, x, weights)
    if weights is None or x.numel() == 0:
        return run_native(func, args, kwargs)  # integer counting, or no values (torch's int64 zeros): exact
    if (x.dim() != 1 or x.is_floating_point() or x.dtype == torch.bool or minlength < 0
            or weights.shape != x.shape or (x.numel() and int(x.min()) < 0)):
        return run_native(func, args, kwargs)  # torch's own error
    size = max(int(x.max()) + 1 if x.numel() else 0, int(minlength))
    # torch's result dtype: float32 for float32 weights, float64 otherwise
    dtype = torch.float32 if weights.dtype == torch.float32 else torch.float64
    w = weights.to(torch.float64)  # exact (int64 weights beyond 2**53 round once, as torch's own cast)
    acc = ordered_bin_sums(x.to(torch.int64), w, size)
    acc = torch.where(torch.isnan(acc), float("nan"), acc)  # the canonical NaN
    return acc.to(dtype)
