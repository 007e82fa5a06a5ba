"""Overloads whose native result is bit-exactly defined, so torch's own kernel is used.

Each group says why. Nothing here accumulates, applies a formula of several roundings,
divides by a Python scalar or calls a math library. Data movement copies bits as they are
(NaN payloads included); repmode.digest maps every NaN to one pattern.
"""
from __future__ import annotations

import torch

from ..registry import overloads_named as _overloads
from ..registry import register_passthrough

aten = torch.ops.aten


register_passthrough(_overloads(
    "aten.view.default", "aten._unsafe_view.default", "aten.t.default", "aten.transpose.int",
    "aten.permute.default", "aten.expand.default", "aten.unsqueeze.default", "aten.squeeze.default",
    "aten.squeeze.dim", "aten.squeeze.dims", "aten.slice.Tensor", "aten.select.int", "aten.as_strided.default",
    "aten.detach.default", "aten.alias.default", "aten.split.Tensor", "aten.split_with_sizes.default",
    "aten.unbind.int", "aten.diagonal.default", "aten.unfold.default", "aten.view_as_real.default",
    "aten.view.dtype",
), reason="view: new shape/strides over the same memory, no arithmetic")

register_passthrough(_overloads(
    "aten.set_.source_Storage_storage_offset", "aten.set_.source_Storage",
    "aten.set_.source_Tensor_storage_offset", "aten.set_.default",
), reason="points a tensor at existing storage (torch.load, resize of views): metadata only, no arithmetic")

register_passthrough(_overloads(
    "aten.flip.default", "aten.roll.default", "aten.repeat.default", "aten.constant_pad_nd.default",
    "aten.narrow_copy.default", "aten.unsafe_split.Tensor", "aten.unsafe_split_with_sizes.default",
    "aten.take.default", "aten.masked_scatter.default", "aten.masked_scatter_.default",
    "aten.masked_scatter_backward.default",
), reason="data movement: every output element is one input element (or the constant pad value)")

register_passthrough(_overloads(
    "aten.transpose_.default", "aten.detach_.default", "aten.as_strided_.default",
), reason="in place, metadata only (shape/strides, autograd): no data touched")

register_passthrough(_overloads(
    "aten.nonzero.default", "aten.masked_select.default",
), reason="selection: integer positions, or input elements in row-major order; no arithmetic")

register_passthrough(_overloads(
    "aten.isinf.default", "aten.isposinf.default", "aten.isneginf.default",
), reason="IEEE-754 class test: exact, bool result")

register_passthrough(_overloads(
    "aten.select_backward.default", "aten.slice_backward.default", "aten.diagonal_backward.default",
    "aten.tril.default", "aten.triu.default", "aten.tril_.default", "aten.triu_.default",
), reason="data movement into zeros: each output element is one input element or +0 (no sums: the view's "
          "elements are distinct)")

register_passthrough(_overloads(
    "aten.clone.default", "aten.copy_.default", "aten._to_copy.default", "aten.contiguous.default",
    "aten.cat.default", "aten.cat.out", "aten.stack.default", "aten.stack.out", "aten._local_scalar_dense.default",
    "aten.lift_fresh.default",
    "aten.lift_fresh_copy.default", "aten.resize_.default", "aten.set_.source_Tensor",
), reason="data movement or an IEEE-754 conversion (round to nearest even), the same on every device")

register_passthrough(_overloads(
    "aten.empty.memory_format", "aten.empty_like.default", "aten.empty_strided.default",
    "aten.new_empty.default", "aten.new_empty_strided.default", "aten.zeros.default", "aten.zeros_like.default",
    "aten.new_zeros.default", "aten.ones.default", "aten.ones_like.default", "aten.new_ones.default",
    "aten.full.default", "aten.full_like.default", "aten.new_full.default", "aten.fill_.Scalar",
    "aten.fill_.Tensor", "aten.zero_.default", "aten.scalar_tensor.default",
), reason="allocation or fill with one value (the value converted once, round to nearest even)")

register_passthrough(_overloads(
    "aten.equal.default", "aten.eq.Tensor", "aten.eq.Scalar", "aten.ne.Tensor", "aten.ne.Scalar", "aten.lt.Tensor",
    "aten.lt.Scalar",
    "aten.le.Tensor", "aten.le.Scalar", "aten.gt.Tensor", "aten.gt.Scalar", "aten.ge.Tensor", "aten.ge.Scalar",
    "aten.logical_not.default", "aten.logical_and.default", "aten.logical_or.default",
    "aten.logical_and_.default", "aten.logical_or_.default", "aten.logical_xor.default",
    "aten.bitwise_not.default", "aten.bitwise_and.Tensor", "aten.bitwise_and_.Tensor",
    "aten.bitwise_or.Tensor", "aten.bitwise_or_.Tensor", "aten.bitwise_xor.Tensor",
    "aten.isnan.default", "aten.is_same_size.default",
), reason="comparison or logic: exact by IEEE-754, bool result")

register_passthrough(_overloads(
    "aten.any.default", "aten.any.dim", "aten.any.dims", "aten.all.default", "aten.all.dim", "aten.all.dims",
), reason="logical OR/AND of nonzero tests: exact and independent of order")

register_passthrough(_overloads(
    "aten.where.self", "aten.masked_fill.Scalar", "aten.masked_fill_.Scalar", "aten.index_select.default",
    "aten.index.Tensor",
), reason="selection: each output is one input element or the given value, no arithmetic")

register_passthrough(_overloads(
    "aten.scatter.value", "aten.scatter_.value",
), reason="writes one given value at the indexed places: duplicate indices write the same value, so the "
          "result does not depend on the order of the writes")

register_passthrough(_overloads(
    "profiler._record_function_enter.default", "profiler._record_function_enter_new.default",
    "profiler._record_function_exit.default", "profiler._record_function_exit._RecordFunction",
), reason="profiler marker: no tensor data is touched")

register_passthrough(_overloads(
    "aten.floor.default", "aten.floor_.default", "aten.floor.out", "aten.ceil.default", "aten.ceil_.default",
    "aten.ceil.out", "aten.trunc.default", "aten.trunc_.default", "aten.trunc.out", "aten.round.default",
    "aten.round_.default", "aten.round.out",
), reason="IEEE-754 roundToIntegral (toward -inf, +inf, zero; round: ties to even): one exact operation")
