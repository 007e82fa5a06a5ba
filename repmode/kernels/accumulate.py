"""Indexed accumulation in a canonical order: ``scatter_add``, ``index_add`` (and, through them,
``embedding_dense_backward``).

Each destination element receives its contributions in increasing source position (row-major
order of the source), added one after the other to its starting value — never in an order set
by threads or atomics. Evaluated in rounds: round k adds every destination's k-th contribution
at once; within a round each destination is written once, so each element takes exactly one
IEEE addition per contribution, as in the sequential definition.
"""
from __future__ import annotations

import torch

from ..registry import register_kernel
from ._common import FLOAT_HALF_INT, call_registered, check_float_half_int, unsupported

aten = torch.ops.aten


def add_in_order(flat: torch.Tensor, dest: torch.Tensor, values: torch.Tensor) -> None:
    """flat[dest[j]] += values[j] for j = 0, 1, ... in that order (flat: a contiguous 1-D view)."""
    if dest.numel() == 0:
        return
    order = torch.sort(dest, stable=True).indices  # by destination, positions increasing
    d = dest[order]
    starts = torch.ones_like(d, dtype=torch.bool)
    starts[1:] = d[1:] != d[:-1]
    pos = torch.arange(d.numel(), device=d.device)
    rank = pos - torch.where(starts, pos, torch.zeros_like(pos)).cummax(0).values
    by_round = order[torch.sort(rank, stable=True).indices]
    sizes = torch.bincount(rank).tolist()
    start = 0
    for size in sizes:
        sel = by_round[start:start + size]
        flat.index_add_(0, dest[sel], values[sel])  # distinct destinations: one addition each
        start += size


def _dest_ids(shape, strides, dim: int, index: torch.Tensor) -> torch.Tensor:
    """Linear ids (with `strides`) of the destinations of index's elements: index's own
    coordinates, the one along `dim` replaced by the index value."""
    ids = index.to(torch.int64) * strides[dim]
    for d in range(index.dim()):
        if d != dim:
            coord = torch.arange(index.shape[d], device=index.device)
            coord = coord.reshape([-1 if e == d else 1 for e in range(index.dim())])
            ids = ids + coord * strides[d]
    return ids.reshape(-1)


def _check_index(func, args, kwargs, size: int, index: torch.Tensor) -> None:
    if index.numel() and (bool((index < 0).any()) or bool((index >= size).any())):
        raise unsupported(func, args, kwargs, "index out of range")


@register_kernel([aten.scatter_add.default, aten.scatter_add_.default], FLOAT_HALF_INT)
def scatter_add(func, args, kwargs):
    self, dim, index, src = args
    check_float_half_int(func, args, kwargs, self, src)
    dim %= max(self.dim(), 1)
    _check_index(func, args, kwargs, self.shape[dim] if self.dim() else 1, index)
    out = self.contiguous().clone() if func is aten.scatter_add.default or not self.is_contiguous() else self
    strides = [s for s in torch.empty(out.shape).stride()] or [1]
    values = src[tuple(slice(0, n) for n in index.shape)].reshape(-1) if index.dim() else src.reshape(-1)
    add_in_order(out.view(-1), _dest_ids(out.shape, strides, dim, index), values.to(out.dtype))
    if func is aten.scatter_add_.default and out is not self:
        self.copy_(out)
        return self
    return out


@register_kernel([aten.index_add.default, aten.index_add_.default], FLOAT_HALF_INT)
def index_add(func, args, kwargs):
    self, dim, index, source = args[:4]
    check_float_half_int(func, args, kwargs, self, source)
    alpha = args[4] if len(args) > 4 else kwargs.get("alpha", 1)
    dim %= max(self.dim(), 1)
    _check_index(func, args, kwargs, self.shape[dim] if self.dim() else 1, index)
    if alpha != 1:  # alpha * source first (repmode's mul), then the ordered additions
        source = call_registered(aten.mul.Tensor, source, alpha)
    out = self.contiguous().clone() if func is aten.index_add.default or not self.is_contiguous() else self
    strides = [s for s in torch.empty(out.shape).stride()] or [1]
    # every source element: its own coordinates, the one along dim replaced by index[j]
    full_index = index.reshape([-1 if d == dim else 1 for d in range(source.dim())]).expand(source.shape)
    add_in_order(out.view(-1), _dest_ids(out.shape, strides, dim, full_index), source.reshape(-1).to(out.dtype))
    if func is aten.index_add_.default and out is not self:
        self.copy_(out)
        return self
    return out
