"""Indexing with writes: ``index_put`` / ``index_put_`` / ``_index_put_impl_`` and ``put`` /
``put_`` (accumulating or not), plus the exact selection ops around them (``nonzero``,
``masked_select``, ``masked_scatter``, ``take``, ...). docs/semantics.md "Indexing with writes".

The destinations of an ``index_put`` are found by applying the same indices to a tensor of the
destination's linear ids (native integer indexing: exact), so the "source position" of a value
is its row-major position in the indexing result (values broadcast to that shape).
- accumulate=True: each destination receives its contributions in increasing source position,
  one IEEE addition each (accumulate.add_in_order, shared with scatter_add/index_add).
- accumulate=False: a plain copy; when two positions write the same destination with
  different bits, torch does not define which wins, so repmode refuses (UnsupportedOpError).
"""
from __future__ import annotations

import torch

from ..registry import register_kernel
from ._common import FLOAT_HALF_INT, check_device, check_float_half_int, unsupported
from .accumulate import add_in_order

aten = torch.ops.aten
Tensor = torch.Tensor


def _destinations(self: Tensor, indices) -> Tensor:
    """Linear (row-major, contiguous) ids of the destinations, in the shape of ``self[indices]``
    (a ``None`` entry of an aten indices list is a full slice)."""
    ids = torch.arange(self.numel(), dtype=torch.int64, device=self.device).view(self.shape)
    key = tuple(slice(None) if ix is None else ix for ix in indices)
    return ids[key]


def _bits(t: Tensor) -> Tensor:
    ints = {8: torch.int64, 4: torch.int32, 2: torch.int16, 1: torch.uint8}
    t = t.contiguous()
    return t.view(ints[t.element_size()]) if t.is_floating_point() or t.is_complex() else t


def _check_collisions(func, args, kwargs, dest: Tensor, values: Tensor) -> None:
    """Refuse when two positions write one destination with different bits."""
    if dest.numel() <= 1:
        return
    order = torch.sort(dest, stable=True).indices
    d = dest[order]
    same = d[1:] == d[:-1]
    if not bool(same.any()):
        return
    b = _bits(values)[order]
    if bool((b[1:] != b[:-1])[same].any()):
        raise unsupported(func, args, kwargs,
                          "two index entries write different values to the same destination; which write wins "
                          "is not defined (use distinct indices, or accumulate=True)")


def _values_for(func, args, kwargs, self: Tensor, dest: Tensor, values: Tensor) -> Tensor:
    if values.dtype != self.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got {self.dtype} for "
                           f"the destination and {values.dtype} for the source.")
    try:
        return values.expand(dest.shape).reshape(-1)
    except RuntimeError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(dest.shape)}") from None


def _accumulate(func, args, kwargs, self: Tensor, dest: Tensor, values: Tensor, in_place: bool) -> Tensor:
    """self.flat[dest[j]] += values[j] for j = 0, 1, ... in that order."""
    check_device(func, args, kwargs, self, values)
    flat_values = _values_for(func, args, kwargs, self, dest, values)
    dest = dest.reshape(-1)
    if self.dtype == torch.bool:
        raise unsupported(func, args, kwargs, "accumulate=True on bool tensors is not supported")
    work = self if in_place and self.is_contiguous() else self.contiguous().clone()
    add_in_order(work.view(-1), dest, flat_values)
    if in_place and work is not self:
        self.copy_(work)
        return self
    if not in_place and not self.is_contiguous():
        # torch's out-of-place index_put/put is clone(self) (layout preserved) then written
        out = self.clone()
        out.copy_(work)
        return out
    return work


def _assign(out: Tensor, dest: Tensor, values: Tensor) -> None:
    """out.flat[dest] = values for a tensor of any strides (destinations are distinct or agree)."""
    if out.is_contiguous():
        out.view(-1)[dest] = values
    else:
        tmp = out.contiguous()
        tmp.view(-1)[dest] = values
        out.copy_(tmp)


def _index_put(func, args, kwargs, in_place: bool):
    kwargs = kwargs or {}
    self, indices, values = args[:3]
    accumulate = args[3] if len(args) > 3 else kwargs.get("accumulate", False)
    dest = _destinations(self, indices)
    if not accumulate:
        check_device(func, args, kwargs, self, values)
        flat_values = _values_for(func, args, kwargs, self, dest, values)
        dest = dest.reshape(-1)
        _check_collisions(func, args, kwargs, dest, flat_values)
        out = self if in_place else self.clone()
        if dest.numel():
            _assign(out, dest, flat_values)
        return out
    return _accumulate(func, args, kwargs, self, dest, values, in_place)


@register_kernel(aten.index_put.default, FLOAT_HALF_INT)
def index_put(func, args, kwargs):
    check_float_half_int(func, args, kwargs, args[0])
    return _index_put(func, args, kwargs, in_place=False)


@register_kernel([aten.index_put_.default, aten._index_put_impl_.default], FLOAT_HALF_INT)
def index_put_(func, args, kwargs):
    check_float_half_int(func, args, kwargs, args[0])
    return _index_put(func, args, kwargs, in_place=True)


def _put(func, args, kwargs, in_place: bool):
    kwargs = kwargs or {}
    self, index, source = args[:3]
    accumulate = args[3] if len(args) > 3 else kwargs.get("accumulate", False)
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = self.numel()
    if index.numel() and (bool((index < -n).any()) or bool((index >= n).any())):
        raise IndexError(f"out of range: tried to access index outside of a tensor with {n} elements")
    dest = torch.remainder(index.reshape(-1).to(torch.int64), max(n, 1))   # negative: counted from the end
    src = source.reshape(-1)
    if not accumulate:
        check_device(func, args, kwargs, self, source)
        if src.dtype != self.dtype:
            raise RuntimeError(f"put_(): self and source expected to have the same dtype, got {self.dtype} and "
                               f"{src.dtype}")
        _check_collisions(func, args, kwargs, dest, src)
        out = self if in_place else self.clone()
        if dest.numel():
            _assign(out, dest, src)
        return out
    return _accumulate(func, args, kwargs, self, dest, src, in_place)


@register_kernel(aten.put.default, FLOAT_HALF_INT)
def put(func, args, kwargs):
    check_float_half_int(func, args, kwargs, args[0])
    return _put(func, args, kwargs, in_place=False)


@register_kernel(aten.put_.default, FLOAT_HALF_INT)
def put_(func, args, kwargs):
    check_float_half_int(func, args, kwargs, args[0])
    return _put(func, args, kwargs, in_place=True)
