"""segment_reduce and its backward: reductions over consecutive segments of one axis (lengths or
offsets), as composites of repmode's indexed reductions. Orders: docs/semantics.md
"Segment reductions".

Each segment is a destination of ``scatter_reduce`` (include_self, the base filled with
``initial`` or the identity), so a segment folds its elements in increasing position from that
start value, one IEEE operation each — the order of torch's CPU kernel, whatever the threads or
device. The segment ids are integer arithmetic on the lengths (exact, run natively)."""
from __future__ import annotations

import math

import torch

from ..registry import register_composite
from ._common import FLOAT_WIDENED, call_registered, normalize_dims

aten = torch.ops.aten
Tensor = torch.Tensor

_REDUCE = {"sum": "sum", "mean": "sum", "prod": "prod", "max": "amax", "min": "amin"}
_IDENTITY = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf}


def _segments(data: Tensor, lengths, offsets, axis: int, unsafe: bool):
    """(lengths (..., S) as int64, the segment id of every position along ``axis``, shaped like
    ``data``): integer arithmetic only."""
    if (lengths is None) == (offsets is None):
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    if lengths is not None:
        lengths = lengths.to(torch.int64)
        ends = lengths.cumsum(-1)
    else:
        offsets = offsets.to(torch.int64)
        lengths = offsets[..., 1:] - offsets[..., :-1]
        ends = offsets[..., 1:] - offsets[..., :1]
    if lengths.dim() != axis + 1 or lengths.shape[:-1] != data.shape[:axis]:
        raise RuntimeError("segment_reduce(): Expected lengths (or offsets) to have the shape of data's leading "
                           f"dims up to axis plus one, got {list(lengths.shape)} for data {list(data.shape)}, "
                           f"axis {axis}")
    if not unsafe:
        if bool((lengths < 0).any()):
            raise RuntimeError("segment_reduce(): lengths contains negative value!")
        if lengths.shape[-1] and not bool((ends[..., -1] == data.shape[axis]).all()):
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                               "data.size(lengths.dim()-1) when !unsafe.")
    n = data.shape[axis]
    positions = torch.arange(n, dtype=torch.int64).expand(*data.shape[:axis], n).contiguous()
    # id of position j: the number of segment ends at or before j (empty segments are skipped over);
    # positions past the last end (unsafe lengths summing to less than the axis) get id S, a spare
    # segment the callers drop
    ids = torch.searchsorted(ends.contiguous(), positions, right=True)
    ids = ids.reshape(*ids.shape, *([1] * (data.dim() - axis - 1))).expand(data.shape)
    return lengths, ids


def _start(data: Tensor, reduce: str, initial, shape) -> Tensor:
    value = _IDENTITY[reduce] if initial is None else initial
    return torch.full(shape, value, dtype=data.dtype)  # one conversion of the start value to the dtype


def _counts(lengths: Tensor, data: Tensor) -> Tensor:
    """The segment lengths as data's dtype, shaped to broadcast against the output."""
    return lengths.to(data.dtype).reshape(*lengths.shape, *([1] * (data.dim() - lengths.dim())))


def _args(func, args, kwargs):
    kwargs = kwargs or {}
    return kwargs.get("lengths"), kwargs.get("offsets"), kwargs.get("axis", 0), kwargs.get("initial")


@register_composite(aten.segment_reduce.default, FLOAT_WIDENED)
def segment_reduce(func, args, kwargs):
    data, reduce = args[0], args[1]
    lengths, offsets, axis, initial = _args(func, args, kwargs)
    if reduce not in _REDUCE:
        raise RuntimeError(f"unsupported reduction given! {reduce}")
    if kwargs.get("indices") is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    axis = normalize_dims([axis], data.dim())[0]
    lengths, ids = _segments(data, lengths, offsets, axis, bool((kwargs or {}).get("unsafe", False)))
    spare_shape = (*data.shape[:axis], lengths.shape[-1] + 1, *data.shape[axis + 1:])
    out = call_registered(aten.scatter_reduce.two, _start(data, reduce, initial, spare_shape), axis, ids, data,
                          _REDUCE[reduce], include_self=True).narrow(axis, 0, lengths.shape[-1]).contiguous()
    if reduce == "mean":
        counts = _counts(lengths, data)
        empty = call_registered(aten.eq.Scalar, counts, 0)
        # a non-empty segment divides its sum once by its count; an empty one is `initial`, or NaN
        # (torch's 0/0) without one
        out = call_registered(aten.where.self, empty, out if initial is not None else
                              torch.full((), math.nan, dtype=data.dtype),
                              call_registered(aten.div.Tensor, out, counts))
    return out


@register_composite(aten._segment_reduce_backward.default, FLOAT_WIDENED)
def segment_reduce_backward(func, args, kwargs):
    grad, output, data, reduce = args[:4]
    lengths, offsets, axis, initial = _args(func, args, kwargs)
    axis = normalize_dims([axis], data.dim())[0]
    lengths, ids = _segments(data, lengths, offsets, axis, True)
    result = _segment_reduce_backward(grad, output, data, reduce, lengths, ids, axis, initial)
    # positions in no segment (unsafe lengths short of the axis) get a zero gradient
    return call_registered(aten.where.self, ids < grad.shape[axis], result, torch.zeros((), dtype=data.dtype))


def _segment_reduce_backward(grad, output, data, reduce, lengths, ids, axis, initial):
    spare_shape = (*grad.shape[:axis], grad.shape[axis] + 1, *grad.shape[axis + 1:])
    zero = torch.zeros((), dtype=data.dtype)

    def per_position(t: Tensor) -> Tensor:  # each position's segment value (exact gather); 0 past the end
        spare = torch.zeros((*t.shape[:axis], 1, *t.shape[axis + 1:]), dtype=t.dtype)
        return torch.gather(torch.cat([t, spare], axis), axis, ids)

    g = per_position(grad)
    if reduce == "sum":
        return g.contiguous()
    if reduce == "mean":
        return call_registered(aten.div.Tensor, g, per_position(_counts(lengths, data).expand_as(grad)))
    out = per_position(output)
    if reduce in ("max", "min"):
        # the positions holding the result (or NaN) share the gradient equally: grad / their count
        hit = call_registered(aten.logical_or.default, call_registered(aten.eq.Tensor, data, out),
                              call_registered(aten.isnan.default, data))
        ties = torch.zeros(spare_shape, dtype=torch.int64).scatter_add_(axis, ids, hit.to(torch.int64))
        share = call_registered(aten.div.Tensor, g, per_position(ties.narrow(axis, 0, grad.shape[axis])).to(
            data.dtype))  # g / 1 is g
        return call_registered(aten.where.self, hit, share, zero)
    # prod: grad · output / x, except at a zero or NaN x (torch's rule): there grad · (the product
    # of the segment's other elements) = the product of its ordinary elements (from `initial` or 1,
    # in position order) times NaN if another element is NaN, else times a signed zero (the XOR of
    # the other zeros' signs) if another element is zero
    is_nan = call_registered(aten.isnan.default, data)
    is_zero = call_registered(aten.eq.Scalar, data, 0)
    special = call_registered(aten.logical_or.default, is_zero, is_nan)
    neg_zero = call_registered(aten.logical_and.default, is_zero, call_registered(aten.signbit.default, data))

    def others(mask):  # per position: how many other elements of its segment are in `mask` (exact)
        total = torch.zeros(spare_shape, dtype=torch.int64).scatter_add_(axis, ids, mask.to(torch.int64))
        return per_position(total.narrow(axis, 0, grad.shape[axis])) - mask.to(torch.int64)
    ordinary = call_registered(aten.where.self, special, torch.ones((), dtype=data.dtype), data)
    product = per_position(call_registered(aten.scatter_reduce.two, _start(data, "prod", initial, spare_shape),
                                           axis, ids, ordinary, "prod", include_self=True).narrow(
                                               axis, 0, grad.shape[axis]))
    signed_zero = call_registered(aten.where.self, others(neg_zero) % 2 == 1, -zero, zero)
    product = call_registered(aten.where.self, others(is_zero) > 0,
                              call_registered(aten.mul.Tensor, product, signed_zero), product)
    product = call_registered(aten.where.self, others(is_nan) > 0, torch.full((), math.nan, dtype=data.dtype),
                              product)
    nonzero_part = call_registered(aten.div.Tensor, call_registered(aten.mul.Tensor, g, out), data)
    return call_registered(aten.where.self, special, call_registered(aten.mul.Tensor, g, product), nonzero_part)
