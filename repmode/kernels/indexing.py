"""Indexing family: indexed accumulation and reductions, scatter/gather, indexing with writes.

Accumulation (``scatter_add``, ``index_add``, ``index_put(accumulate=True)``, and through them
``embedding_dense_backward``, ``_unsafe_masked_index_put_accumulate``, ``unfold_backward``):
each destination element receives its contributions in increasing source position (row-major
order of the source), added one after the other to its starting value — never in an order set
by threads or atomics; a NaN sum is the canonical NaN. float32/float64 on the CPU run the
definition's sequential pass, compiled (csrc/cpu/indexing.cpp); other dtypes and devices are
evaluated by fold_segments: one stable sort by destination, then round k applies every
destination's k-th contribution at once, so each element takes exactly one IEEE operation per
contribution, as in the sequential definition (the same bits). Reductions (``scatter_reduce``,
``scatter(reduce=)``, ``index_reduce``) fold the same way (reduce_into); integer and bool
reductions are associative and commutative and run natively.

Copies into indexed places (``scatter`` with a source, ``index_copy``, ``index_put`` /
``put`` without accumulation, ``_unsafe_index_put``, ``as_strided_scatter``): every output
element is the input's element or one source element, copied bit for bit. Where two index
entries name one destination, the last write in index order wins (last_writes keeps it; the
distinct survivors are then written natively), on every device.

gather: torch's CPU gather of bfloat16/float16 rewrites NaN payloads (it moves the values as
floats), so the copy runs on an integer view of the same element size and every bit survives.

The destinations of an ``index_put`` are found by applying the same indices to a tensor of the
destination's linear ids (native integer indexing: exact), so the "source position" of a value
is its row-major position in the indexing result (values broadcast to that shape).
docs/semantics.md: "Indexed accumulation", "Indexed reductions", "Indexing with writes".
"""
from __future__ import annotations

import math

import torch

from ..registry import overloads_named as _overloads
from ..registry import register_composite, register_kernel
from ._common import (
    ANY,
    DTYPE_CODE,
    FLOAT_HALF_INT,
    C,
    call_registered,
    check_device,
    check_float_half_int,
    get_num_threads,
    param,
    params,
    run_native,
    unsupported,
)

aten = torch.ops.aten
Tensor = torch.Tensor

# ---- accumulation in source order -------------------------------------------------------------


def fold_segments(flat: torch.Tensor, dest: torch.Tensor, values: torch.Tensor, step) -> None:
    """flat[dest[j]] = step(flat[dest[j]], values[j]) for j = 0, 1, ... in that order (flat: a
    contiguous 1-D tensor; ``step`` an elementwise IEEE operation, applied to many destinations at
    once).

    One stable sort by destination lays each destination's values out in increasing position as a
    segment. The destinations are then ordered by segment length, longest first, with their
    accumulators side by side; round k applies every segment's k-th value to the accumulators of
    the segments longer than k (a prefix), so each destination takes its contributions one after
    the other in increasing position, one operation each, whatever the threads."""
    if dest.numel() == 0:
        return
    size = flat.numel()
    counts = torch.bincount(dest, minlength=size)
    if int(counts.max()) == 1:  # distinct destinations: one round, no sort
        flat[dest] = step(flat[dest], values)
        return
    key = dest.to(torch.int32) if size < 2**31 else dest  # the same order; int32 sorts faster
    order = torch.sort(key, stable=True).indices
    ordered = values[order]
    present = counts.nonzero().reshape(-1)  # increasing destination id: the segments' order
    lengths = counts[present]
    starts = torch.cumsum(lengths, 0) - lengths
    by_length = torch.sort(lengths, descending=True, stable=True).indices
    starts, lengths, present = starts[by_length], lengths[by_length], present[by_length]
    active = torch.bincount(lengths).flip(0).cumsum(0).flip(0)[1:].tolist()  # segments longer than k
    acc = flat[present]
    for k, act in enumerate(active):
        acc[:act] = step(acc[:act], ordered[starts[:act] + k])
    flat[present] = acc


def add_in_order(flat: torch.Tensor, dest: torch.Tensor, values: torch.Tensor) -> None:
    """flat[dest[j]] += values[j] for j = 0, 1, ... in that order (flat: a contiguous 1-D view; a NaN
    sum is the canonical NaN). float32/float64 on the CPU: the definition's own pass, compiled
    (csrc/cpu/indexing.cpp); other dtypes and devices: fold_segments, the same sequence per
    destination. ``dest`` must lie in [0, flat.numel()) (the callers check their indices)."""
    if flat.is_cpu and flat.dtype in _COMPILED and dest.numel():
        dest = dest.to(torch.int64).contiguous()
        values = values.to(flat.dtype).contiguous()
        C.accumulate_in_order(DTYPE_CODE[flat.dtype], flat.data_ptr(), dest.data_ptr(), values.data_ptr(),
                              dest.numel(), get_num_threads())
        return
    fold_segments(flat, dest, values, torch.add)
    if flat.is_floating_point() and dest.numel():
        _canonical_nans(flat, dest)


_COMPILED = (torch.float32, torch.float64)


def _dest_ids(shape, strides, dim: int, index: torch.Tensor, full_shape=None) -> torch.Tensor:
    """Linear ids (with `strides`) of the destinations of index's elements: index's own
    coordinates, the one along `dim` replaced by the index value. ``full_shape``: the shape index
    is broadcast to (index_add's source), the ids built at that size only by the last addition."""
    full_shape = list(index.shape if full_shape is None else full_shape)
    ids = index.to(torch.int64)
    if len(full_shape) <= 1 and len(strides) == 1 and strides[0] == 1:  # 1-D destination: ids = index values
        return ids.expand(full_shape).reshape(-1)
    ids = ids * strides[dim]
    for d in range(len(full_shape)):
        if d != dim:
            coord = torch.arange(full_shape[d], device=index.device)
            coord = coord.reshape([-1 if e == d else 1 for e in range(len(full_shape))])
            ids = ids + coord * strides[d]
    return ids.expand(full_shape).reshape(-1)


def _check_index(func, args, kwargs, size: int, index: torch.Tensor) -> None:
    if index.numel():
        low, high = torch.aminmax(index)  # one pass
        if bool(low < 0) or bool(high >= size):
            raise unsupported(func, args, kwargs, "index out of range")


@register_kernel([aten.scatter_add.default, aten.scatter_add_.default], FLOAT_HALF_INT, out=[aten.scatter_add.out])
def scatter_add(func, args, kwargs):
    self, dim, index, src = args
    check_float_half_int(func, args, kwargs, self, src)
    dim %= max(self.dim(), 1)
    _check_index(func, args, kwargs, self.shape[dim] if self.dim() else 1, index)
    out = self.contiguous().clone() if func is aten.scatter_add.default or not self.is_contiguous() else self
    if index.numel() == 0:  # nothing to add (torch accepts an empty index of any rank)
        return self if func is aten.scatter_add_.default else out
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
    if out.is_cpu and out.dtype in _COMPILED and out.dim() and index.numel() and source.shape[:dim] == out.shape[:dim] \
            and source.shape[dim + 1:] == out.shape[dim + 1:]:
        # whole blocks along dim: the same sequence per destination, a block at a time (vectorized)
        shape = out.shape
        src = source.to(out.dtype).contiguous()
        idx = index.reshape(-1).to(torch.int64).contiguous()
        C.accumulate_blocks_in_order(DTYPE_CODE[out.dtype], out.data_ptr(), idx.data_ptr(), src.data_ptr(),
                                     math.prod(shape[:dim]), shape[dim], idx.numel(), math.prod(shape[dim + 1:]),
                                     get_num_threads())
    else:
        _index_add_elements(out, dim, index, source)
    if func is aten.index_add_.default and out is not self:
        self.copy_(out)
        return self
    return out


def _index_add_elements(out, dim, index, source):
    """index_add one source element at a time (the definition's ids; any dtype and device)."""
    strides = [s for s in torch.empty(out.shape).stride()] or [1]
    # every source element: its own coordinates, the one along dim replaced by index[j]
    index = index.reshape([-1 if d == dim else 1 for d in range(source.dim())])
    dest = _dest_ids(out.shape, strides, dim, index, source.shape)
    add_in_order(out.view(-1), dest, source.reshape(-1).to(out.dtype))


# ---- scatter and gather ----------------------------------------------------------------------


def last_writes(dest: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
    """The writes that survive ``flat[dest[j]] = values[j]`` for j = 0, 1, ... in that order: for each
    destination the last j naming it (the "last write in index order wins" rule). The destinations
    returned are distinct, so any native assignment of them gives the same bits on every device."""
    if dest.numel() <= 1:
        return dest, values
    order = torch.sort(dest, stable=True).indices  # by destination, positions increasing
    d = dest[order]
    last = torch.ones_like(d, dtype=torch.bool)
    last[:-1] = d[1:] != d[:-1]
    keep = order[last]
    return dest[keep], values[keep]


def _meta_check(func, args, kwargs) -> None:
    """torch's own shape and dtype checks (and error messages) for this call, run on meta tensors."""
    def meta(a):
        if isinstance(a, torch.Tensor):
            return a.to("meta")
        if isinstance(a, (list, tuple)):
            return type(a)(meta(x) for x in a)
        return a
    func(*meta(args), **{k: meta(v) for k, v in (kwargs or {}).items()})


def _check_scatter_index(self: Tensor, dim: int, index: Tensor) -> None:
    """torch's scatter/gather rule: 0 <= index < self.size(dim) (no wrap-around of negative indices)."""
    size = self.shape[dim] if self.dim() else 1
    if index.numel():
        bad = (index < 0) | (index >= size)
        if bool(bad.any()):
            value = int(index.reshape(-1)[bad.reshape(-1)][0])
            raise RuntimeError(f"index {value} is out of bounds for dimension {dim} with size {size}")


def _contiguous_strides(shape) -> list[int]:
    return list(torch.empty(tuple(shape) or (1,), device="meta").stride())


def _in_flat_copy(out: Tensor, write) -> Tensor:
    """Run ``write(flat)`` on a contiguous 1-D view of ``out``'s values, then leave them in ``out``."""
    work = out if out.is_contiguous() else out.contiguous()
    write(work.view(-1))
    if work is not out:
        out.copy_(work)
    return out


def _scatter_values(src, index: Tensor, dtype) -> Tensor:
    """src's elements at index's positions (row-major), or the scalar value repeated."""
    if isinstance(src, torch.Tensor):
        part = src[tuple(slice(0, n) for n in index.shape)] if index.dim() else src.reshape(-1)[:1]
        return part.reshape(-1).to(dtype)
    return torch.full((index.numel(),), src, dtype=dtype, device=index.device)


def _scatter_dest(self: Tensor, dim: int, index: Tensor) -> Tensor:
    return _dest_ids(self.shape, _contiguous_strides(self.shape), dim, index)


_SCATTER_WRITE = {aten.scatter.src: False, aten.scatter_.src: True}


@register_kernel(list(_SCATTER_WRITE), ANY, out=[aten.scatter.src_out])
def scatter_src(func, args, kwargs):
    """scatter with a source: self with src[p] written at each index position p; where two positions
    name one destination, the last in row-major index order wins."""
    _meta_check(func, args, kwargs)
    self, dim, index, src = params(func, args, kwargs, "self", "dim", "index", "src")
    dim %= max(self.dim(), 1)
    _check_scatter_index(self, dim, index)
    out = self if _SCATTER_WRITE[func] else self.clone()
    if index.numel() == 0:
        return out
    dest, values = last_writes(_scatter_dest(self, dim, index), _scatter_values(src, index, self.dtype))
    return _in_flat_copy(out, lambda flat: flat.index_put_((dest,), values))


_SAME_SIZE_INT = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32,
                  torch.float64: torch.int64}


@register_kernel([aten.gather.default], ANY, out=[aten.gather.out])
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
    if self.dtype == torch.bool:  # bool addition is a logical or: order-free, so torch's result is unique
        return run_native(func, args, kwargs)
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
    """out.flat[dest] = values for a tensor of any strides (destinations distinct)."""
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
        dest, flat_values = last_writes(dest.reshape(-1), flat_values)  # the last write in index order wins
        out = self if in_place else self.clone()
        if dest.numel():
            _assign(out, dest, flat_values)
        return out
    return _accumulate(func, args, kwargs, self, dest, values, in_place)


@register_kernel(_overloads("aten.index_put.default", "aten.index_put.hacked_twin", "aten._unsafe_index_put.default",
                            "aten._unsafe_index_put.hacked_twin"), FLOAT_HALF_INT, out=[aten.index_put.out])
def index_put(func, args, kwargs):
    check_float_half_int(func, args, kwargs, args[0])
    return _index_put(func, args, kwargs, in_place=False)


@register_kernel(_overloads("aten.index_put_.default", "aten.index_put_.hacked_twin", "aten._index_put_impl_.default",
                            "aten._index_put_impl_.hacked_twin"), FLOAT_HALF_INT)
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
        dest, src = last_writes(dest, src)  # the last write in index order wins
        out = self if in_place else self.clone()
        if dest.numel():
            _assign(out, dest, src)
        return out
    return _accumulate(func, args, kwargs, self, dest, src, in_place)


@register_kernel(aten.put.default, FLOAT_HALF_INT, out=[aten.put.out])
def put(func, args, kwargs):
    check_float_half_int(func, args, kwargs, args[0])
    return _put(func, args, kwargs, in_place=False)


@register_kernel(aten.put_.default, FLOAT_HALF_INT)
def put_(func, args, kwargs):
    check_float_half_int(func, args, kwargs, args[0])
    return _put(func, args, kwargs, in_place=True)


# ---- index_copy, as_strided_scatter: copies where the last write in index order wins -------------


def _index_dest(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """Destination ids (row-major in self) of every source element, in source's row-major order, for
    the index_* ops: source's own coordinates, the one along dim replaced by index[j]."""
    if source.dim() == 0:
        return index.reshape(-1).to(torch.int64)
    full = index.reshape([-1 if d == dim else 1 for d in range(source.dim())]).expand(source.shape)
    return _dest_ids(self.shape, _contiguous_strides(self.shape), dim, full)


def _check_index_range(self: Tensor, dim: int, index: Tensor, message) -> None:
    size = self.shape[dim] if self.dim() else 1
    if index.numel():
        bad = (index < 0) | (index >= size)
        if bool(bad.any()):
            raise IndexError(message(int(index.reshape(-1)[bad.reshape(-1)][0]), size))


_INDEX_COPY_WRITE = {aten.index_copy.default: False, aten.index_copy_.default: True}


@register_kernel(list(_INDEX_COPY_WRITE), ANY, out=[aten.index_copy.out])
def index_copy(func, args, kwargs):
    """self with source.select(dim, j) copied to self.select(dim, index[j]); a repeated index keeps the
    slice of the last j (the last write in index order wins)."""
    _meta_check(func, args, kwargs)
    self, dim, index, source = params(func, args, kwargs, "self", "dim", "index", "source")
    dim %= max(self.dim(), 1)
    _check_index_range(self, dim, index, lambda i, n: f"index_copy_(): index {i} is out of bounds for dimension "
                                                      f"{dim} with size {n}")
    out = self if _INDEX_COPY_WRITE[func] else self.clone()
    if index.numel() == 0 or source.numel() == 0:
        return out
    dest, values = last_writes(_index_dest(self, dim, index, source), source.reshape(-1))
    return _in_flat_copy(out, lambda flat: flat.index_put_((dest,), values))


@register_kernel(aten.as_strided_scatter.default, ANY, out=[aten.as_strided_scatter.out])
def as_strided_scatter(func, args, kwargs):
    """A copy of self whose as_strided(size, stride, storage_offset) view is replaced by src. A view
    whose elements overlap in memory is written in src's row-major order: the last write wins."""
    _meta_check(func, args, kwargs)
    self, src, size, stride, offset = params(func, args, kwargs, "self", "src", "size", "stride", "storage_offset")
    out = self.clone()
    if out.numel() == 0 or src.numel() == 0:
        return out
    n = out.untyped_storage().nbytes() // out.element_size()
    storage = out.as_strided((n,), (1,), 0)
    ids = torch.arange(n, dtype=torch.int64).as_strided(size, stride, out.storage_offset() if offset is None
                                                         else offset)
    dest, values = last_writes(ids.reshape(-1), src.expand(ids.shape).reshape(-1).to(out.dtype))
    storage[dest] = values
    return out


# ---- reductions into indexed destinations: scatter_reduce, scatter(reduce=), index_reduce ---------
# Floating dtypes: each touched destination starts from self (include_self) or the reduction's
# identity (+0, 1, -inf, +inf) and takes its contributions in increasing source position, one IEEE
# operation each in the destination's dtype (rounds of distinct destinations, as add_in_order);
# amax/amin take a NaN as the result (canonical NaN) and +0 above -0, which makes them independent
# of the order; mean divides the sum once by the count. Integer and bool dtypes: wrap-around sums
# and products, max and min, and logical or/and are associative and commutative, so torch's
# result is unique and its kernel runs.

_IDENTITY = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "amax": float("-inf"), "amin": float("inf")}
_NAN_BITS = {torch.float32: (torch.int32, 0x7FC00000), torch.float64: (torch.int64, 0x7FF8000000000000),
             torch.bfloat16: (torch.int16, 0x7FC0), torch.float16: (torch.int16, 0x7E00)}


def _extreme(cur: Tensor, v: Tensor, largest: bool) -> Tensor:
    """max (largest) or min of two float tensors: NaN wins, then +0 above -0, then the IEEE order."""
    better = (v > cur) if largest else (v < cur)
    signed_zero = (v == cur) & (torch.signbit(cur) if largest else torch.signbit(v)) & \
        (torch.signbit(cur) != torch.signbit(v))
    return torch.where(better | signed_zero | torch.isnan(v), v, cur)


def fold_in_order(flat: Tensor, dest: Tensor, values: Tensor, reduce: str) -> None:
    """flat[dest[j]] = flat[dest[j]] (op) values[j] for j = 0, 1, ... in that order."""
    if reduce in ("sum", "mean"):
        add_in_order(flat, dest, values)
        return
    if reduce == "prod":
        fold_segments(flat, dest, values, torch.mul)
    else:
        fold_segments(flat, dest, values, lambda cur, v: _extreme(cur, v, reduce == "amax"))


def _canonical_nans(flat: Tensor, where: Tensor) -> None:
    int_dtype, pattern = _NAN_BITS[flat.dtype]
    vals = flat[where]
    nan = torch.isnan(vals)
    if bool(nan.any()):
        flat.view(int_dtype)[where[nan]] = pattern


def reduce_into(flat: Tensor, dest: Tensor, values: Tensor, reduce: str, include_self: bool) -> None:
    """The floating reduction of ``values`` into ``flat`` at ``dest`` (see the comment above)."""
    if dest.numel() == 0:
        return
    touched = torch.unique(dest)  # sorted, distinct
    if not include_self:
        flat[touched] = _IDENTITY[reduce]
    fold_in_order(flat, dest, values.to(flat.dtype), reduce)
    if reduce == "mean":
        count = torch.bincount(dest, minlength=flat.numel())[touched] + (1 if include_self else 0)
        wide = torch.float64 if flat.dtype == torch.float64 else torch.float32
        # one IEEE division of the sum by the exact count (bf16/fp16: in float32, rounded once)
        flat[touched] = (flat[touched].to(wide) / count.to(wide)).to(flat.dtype)
    _canonical_nans(flat, touched)


_REDUCE_WRITE = {aten.scatter_reduce.two: False, aten.scatter_reduce_.two: True, aten.scatter.reduce: False,
                 aten.scatter_.reduce: True, aten.scatter.value_reduce: False, aten.scatter_.value_reduce: True}
_SCATTER_REDUCE_NAMES = {"add": "sum", "multiply": "prod"}


def _native_is_unique(self: Tensor) -> bool:
    return not (self.is_floating_point() or self.is_complex())


@register_kernel(list(_REDUCE_WRITE), FLOAT_HALF_INT,
                 out=[aten.scatter_reduce.two_out, aten.scatter.reduce_out, aten.scatter.value_reduce_out])
def scatter_reduce(func, args, kwargs):
    """scatter_reduce (sum, prod, mean, amax, amin; include_self) and scatter(..., reduce='add' |
    'multiply') with a source or a value: the destinations of scatter, the reduction of reduce_into."""
    _meta_check(func, args, kwargs)
    self, dim, index = params(func, args, kwargs, "self", "dim", "index")
    check_float_half_int(func, args, kwargs, self)
    if _native_is_unique(self):
        return run_native(func, args, kwargs)  # integers, bool: associative, commutative, exact
    if func in (aten.scatter_reduce.two, aten.scatter_reduce_.two):
        src, reduce, include_self = params(func, args, kwargs, "src", "reduce", "include_self")
    else:
        src = param(func, args, kwargs, "src" if func in (aten.scatter.reduce, aten.scatter_.reduce) else "value")
        reduce, include_self = _SCATTER_REDUCE_NAMES[param(func, args, kwargs, "reduce")], True
    dim %= max(self.dim(), 1)
    _check_scatter_index(self, dim, index)
    out = self if _REDUCE_WRITE[func] else self.clone()
    if index.numel() == 0:
        return out
    dest, values = _scatter_dest(self, dim, index), _scatter_values(src, index, self.dtype)
    return _in_flat_copy(out, lambda flat: reduce_into(flat, dest, values, reduce, include_self))


_INDEX_REDUCE_WRITE = {aten.index_reduce.default: False, aten.index_reduce_.default: True}


@register_kernel(list(_INDEX_REDUCE_WRITE), FLOAT_HALF_INT, out=[aten.index_reduce.out])
def index_reduce(func, args, kwargs):
    """index_reduce (prod, mean, amax, amin; include_self): the destinations of index_add, the reduction
    of reduce_into."""
    _meta_check(func, args, kwargs)
    self, dim, index, source, reduce, include_self = params(func, args, kwargs, "self", "dim", "index", "source",
                                                            "reduce", "include_self")
    check_float_half_int(func, args, kwargs, self, source)
    if _native_is_unique(self):
        return run_native(func, args, kwargs)  # integers: associative, commutative, exact
    dim %= max(self.dim(), 1)
    _check_index_range(self, dim, index, lambda i, n: "index out of range in self")
    out = self if _INDEX_REDUCE_WRITE[func] else self.clone()
    if index.numel() == 0 or source.numel() == 0:
        return out
    dest = _index_dest(self, dim, index, source)
    return _in_flat_copy(out, lambda flat: reduce_into(flat, dest, source.reshape(-1), reduce, include_self))


# ---- what decompositions emit: masked indexing, unfold's backward, trace --------------------------


def _clamped(indices, sizes, low_is_negative: bool):
    return [None if ix is None else ix.clamp(min=-n if low_is_negative else 0, max=n - 1)
            for ix, n in zip(indices, sizes)]


@register_kernel(aten._unsafe_masked_index.default, ANY)
def unsafe_masked_index(func, args, kwargs):
    """x[indices clamped into range] where mask, else fill (torch's decomposition): selection only."""
    x, mask, indices, fill = params(func, args, kwargs, "self", "mask", "indices", "fill")
    if x.numel() == 0:
        shape = torch.ops.aten.index.Tensor(torch.empty(x.shape, device="meta"),
                                            [None if i is None else i.to("meta") for i in indices]).shape
        return torch.full(shape, fill, dtype=x.dtype, device=x.device)
    picked = aten._unsafe_index.Tensor(x, _clamped(indices, x.shape, False))
    return picked.masked_fill(~mask, fill)


@register_kernel(aten._unsafe_masked_index_put_accumulate.default, FLOAT_HALF_INT)
def unsafe_masked_index_put_accumulate(func, args, kwargs):
    """index_put(x, indices clamped into range, values where mask else +0, accumulate=True) (torch's
    decomposition): the contributions in increasing source position."""
    x, mask, indices, values = params(func, args, kwargs, "self", "mask", "indices", "values")
    check_float_half_int(func, args, kwargs, x, values)
    if x.numel() == 0:
        return x.clone()
    masked = values.masked_fill(~mask, 0)
    return index_put(aten.index_put.default, (x, _clamped(indices, x.shape, True), masked, True), {})


@register_kernel(aten.unfold_backward.default, FLOAT_HALF_INT, out=[aten.unfold_backward.out])
def unfold_backward(func, args, kwargs):
    """The gradient of x.unfold(dim, size, step): element i along dim is +0 plus the gradients of its
    windows, added in increasing window number (each in increasing source position)."""
    grad, input_sizes, dim, size, step = params(func, args, kwargs, "grad_in", "input_sizes", "dim", "size", "step")
    check_float_half_int(func, args, kwargs, grad)
    nd = max(len(input_sizes), 1)
    dim %= nd
    out = torch.zeros(input_sizes, dtype=grad.dtype, device=grad.device)
    if grad.numel() == 0:
        return out
    if len(input_sizes) == 0:  # a 0-dim input: one window of the one element
        add_in_order(out.view(-1), torch.zeros(grad.numel(), dtype=torch.int64), grad.reshape(-1))
        return out
    # position along dim of grad's element (..., w, ..., k): w * step + k; the other coordinates kept
    g_shape = list(grad.shape)
    strides = _contiguous_strides(input_sizes)
    ids = torch.zeros(g_shape, dtype=torch.int64)
    for d in range(len(input_sizes)):
        coord = torch.arange(g_shape[d]).reshape([-1 if e == d else 1 for e in range(len(g_shape))])
        ids = ids + (coord * step if d == dim else coord) * strides[d]
    k = torch.arange(size).reshape([1] * (len(g_shape) - 1) + [-1])
    ids = ids + k * strides[dim]
    add_in_order(out.view(-1), ids.reshape(-1).to(grad.device), grad.reshape(-1))
    if out.is_floating_point():
        _canonical_nans(out.view(-1), torch.unique(ids.reshape(-1)))
    return out


@register_composite(aten.trace.default, FLOAT_HALF_INT, out=[aten.trace.out])
def trace(func, args, kwargs):
    """The sum of the main diagonal: repmode's sum (its Sum order; integers promote to int64)."""
    (x,) = params(func, args, kwargs, "self")
    if x.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.dim()}")
    return call_registered(aten.sum.default, x.diagonal())
