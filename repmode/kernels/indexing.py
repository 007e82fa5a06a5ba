"""Indexing family: indexed accumulation, scatter/gather and indexing with writes.

Accumulation (``scatter_add``, ``index_add``, and through them ``embedding_dense_backward``):
Each destination element receives its contributions in increasing source position (row-major
order of the source), added one after the other to its starting value — never in an order set
by threads or atomics. Evaluated in rounds: round k adds every destination's k-th contribution
at once; within a round each destination is written once, so each element takes exactly one
IEEE addition per contribution, as in the sequential definition.

Scatter and gather: torch's CPU gather of bfloat16/float16 rewrites NaN payloads (it moves the values as
floats), so the copy runs on an integer view of the same element size and every bit survives.

Every output element is either the input's element or one source element, copied bit for bit.
The one way the native result can depend on the machine is two index entries naming the same
destination: then the order of the writes decides, and torch does not define it. So the
indices are checked first (each destination written at most once) and a collision raises
UnsupportedOpError. The backward of ``max(dim)``/``min(dim)`` and of ``gather`` with distinct
indices reach this with at most one write per destination.

Indexing with writes: ``index_put`` / ``index_put_`` / ``_index_put_impl_`` and ``put`` /
``put_`` (accumulating or not), plus the exact selection ops around them (``nonzero``,
``masked_select``, ``masked_scatter``, ``take``, ...). docs/semantics.md "Indexing with writes".

The destinations of an ``index_put`` are found by applying the same indices to a tensor of the
destination's linear ids (native integer indexing: exact), so the "source position" of a value
is its row-major position in the indexing result (values broadcast to that shape).
- accumulate=True: each destination receives its contributions in increasing source position,
  one IEEE addition each (add_in_order, shared with scatter_add/index_add).
- accumulate=False: a plain copy; when two positions write the same destination with
  different bits, torch does not define which wins, so repmode refuses (UnsupportedOpError).
"""
from __future__ import annotations

import torch

from ..registry import register_kernel
from ._common import ANY, FLOAT_HALF_INT, call_registered, check_device, check_float_half_int, run_native, unsupported

aten = torch.ops.aten
Tensor = torch.Tensor

# ---- accumulation in source order -------------------------------------------------------------


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


# ---- scatter and gather ----------------------------------------------------------------------


def _has_colliding_indices(index: torch.Tensor, dim: int) -> bool:
    """True if two entries on one line along ``dim`` hold the same index (same destination)."""
    if index.dim() == 0 or index.numel() == 0:
        return False
    dim %= index.dim()
    n = index.shape[dim]
    if n <= 1:
        return False
    ordered = index.sort(dim=dim).values
    return bool((ordered.narrow(dim, 1, n - 1) == ordered.narrow(dim, 0, n - 1)).any())


@register_kernel([aten.scatter.src, aten.scatter_.src], ANY)
def scatter_src(func, args, kwargs):
    dim, index = args[1], args[2]
    if _has_colliding_indices(index, dim):
        raise unsupported(func, args, kwargs,
                          "two index entries write the same destination; which write wins is not defined "
                          "(use distinct indices, or scatter_add/index_add for accumulation)")
    return run_native(func, args, kwargs)


_SAME_SIZE_INT = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32,
                  torch.float64: torch.int64}


@register_kernel([aten.gather.default], ANY)
def gather_bits(func, args, kwargs):
    source = args[0]
    as_int = _SAME_SIZE_INT.get(source.dtype)
    if as_int is None:  # integers and bool: already copied bit for bit
        return run_native(func, args, kwargs)
    return run_native(func, (source.view(as_int), *args[1:]), kwargs).view(source.dtype)


# ---- indexing with writes ---------------------------------------------------------------------
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
