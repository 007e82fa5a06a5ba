"""Overloads whose native result is bit-exactly defined, so torch's own kernel is used.

Each group says why. Nothing here accumulates, applies a formula of several roundings,
divides by a Python scalar or calls a math library. Data movement copies bits as they are
(NaN payloads included); repmode.digest maps every NaN to one pattern.
"""
from __future__ import annotations

import torch

from ..registry import canonical_low_nans_, register_kernel, register_passthrough, run_native
from ..registry import overloads_named as _overloads
from ._common import ANY

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
    "aten.nonzero.default", "aten.masked_select.default", "aten.nonzero.out", "aten.masked_select.out",
), reason="selection: integer positions, or input elements in row-major order; no arithmetic")

register_passthrough(_overloads(
    "aten.isinf.default", "aten.isposinf.default", "aten.isneginf.default",
), reason="IEEE-754 class test: exact, bool result")

register_passthrough(_overloads(
    "aten.select_backward.default", "aten.slice_backward.default", "aten.diagonal_backward.default",
    "aten.tril.default", "aten.triu.default", "aten.tril_.default", "aten.triu_.default", "aten.tril.out",
    "aten.triu.out",
), reason="data movement into zeros: each output element is one input element or +0 (no sums: the view's "
          "elements are distinct)")

register_passthrough(_overloads(
    "aten.clone.default", "aten.contiguous.default",
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
    "aten.empty_permuted.default", "aten._efficientzerotensor.default",
), reason="allocation (uninitialised, or zeros): no arithmetic")

register_passthrough(_overloads("aten.hash_tensor.default"),
                     reason="XOR of the elements' bit patterns: exact integer logic, independent of order")

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
    "aten.eq_.Tensor", "aten.eq_.Scalar", "aten.ne_.Tensor", "aten.ne_.Scalar", "aten.lt_.Tensor", "aten.lt_.Scalar",
    "aten.le_.Tensor", "aten.le_.Scalar", "aten.gt_.Tensor", "aten.gt_.Scalar", "aten.ge_.Tensor", "aten.ge_.Scalar",
    "aten.logical_xor_.default",
), reason="comparison or logic in place: exact by IEEE-754, the 0/1 result written into self's dtype exactly")

register_passthrough(_overloads(
    "aten.any.default", "aten.any.dim", "aten.any.dims", "aten.all.default", "aten.all.dim", "aten.all.dims",
), reason="logical OR/AND of nonzero tests: exact and independent of order")

register_passthrough(_overloads(
    "aten.where.self", "aten.masked_fill.Scalar", "aten.masked_fill_.Scalar", "aten.index_select.default",
    "aten.index.Tensor",
), reason="selection: each output is one input element or the given value, no arithmetic")

register_passthrough(_overloads(
    "aten.scatter.value", "aten.scatter_.value", "aten.scatter.value_out",
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

# ---- issue 24: view-copies, in-place views, scatters into views, construction ------------------

register_passthrough(_overloads(
    "aten.view_copy.default", "aten.view_copy.out", "aten.view_copy.dtype", "aten.view_copy.dtype_out",
    "aten.permute_copy.default", "aten.permute_copy.out", "aten.transpose_copy.int", "aten.transpose_copy.int_out",
    "aten.t_copy.default", "aten.t_copy.out", "aten.squeeze_copy.default", "aten.squeeze_copy.out",
    "aten.squeeze_copy.dim", "aten.squeeze_copy.dim_out", "aten.squeeze_copy.dims", "aten.squeeze_copy.dims_out",
    "aten.unsqueeze_copy.default", "aten.unsqueeze_copy.out", "aten.expand_copy.default", "aten.expand_copy.out",
    "aten.diagonal_copy.default", "aten.diagonal_copy.out", "aten.alias_copy.default", "aten.alias_copy.out",
    "aten.detach_copy.default", "aten.detach_copy.out", "aten.as_strided_copy.default", "aten.as_strided_copy.out",
    "aten.select_copy.int", "aten.select_copy.int_out", "aten.slice_copy.Tensor", "aten.slice_copy.Tensor_out",
    "aten.split_copy.Tensor", "aten.split_copy.Tensor_out", "aten.split_with_sizes_copy.default",
    "aten.split_with_sizes_copy.out", "aten.unbind_copy.int", "aten.unbind_copy.int_out",
    "aten.unfold_copy.default", "aten.unfold_copy.out", "aten.view_as_real_copy.default",
    "aten.view_as_real_copy.out", "aten.view_as_complex_copy.default", "aten.view_as_complex_copy.out",
    "aten.narrow_copy.out",
), reason="copy of a view: every output element is one input element, bit for bit (no arithmetic)")

register_passthrough(_overloads(
    "aten.squeeze_.default", "aten.squeeze_.dim", "aten.squeeze_.dims", "aten.unsqueeze_.default",
    "aten.t_.default",
), reason="in place, metadata only (shape/strides): no data touched")

register_passthrough(_overloads("aten.logical_not_.default"), reason="in place logical not: exact, bool result")

register_passthrough(_overloads(
    "aten.view_as_complex.default",
), reason="view: a complex view of (real, imag) pairs over the same memory, no arithmetic (complex "
          "arithmetic itself stays unsupported)")

register_passthrough(_overloads(
    "aten.complex.default", "aten.complex.out",
), reason="data movement: builds each complex element from one real and one imaginary element, no "
          "arithmetic (complex arithmetic itself stays unsupported)")

register_passthrough(_overloads(
    "aten.select_scatter.default", "aten.select_scatter.out", "aten.slice_scatter.default",
    "aten.slice_scatter.out", "aten.diagonal_scatter.default", "aten.diagonal_scatter.out",
    "aten.diagonal_backward.out",
), reason="data movement: a copy of self with a view (select/slice/diagonal: distinct elements, so no two "
          "writes meet) replaced by src")

register_passthrough(_overloads(
    "aten.flip.out", "aten.roll.out", "aten.rot90.default", "aten.rot90.out", "aten.take.out",
    "aten.masked_scatter.out", "aten.pixel_shuffle.default", "aten.pixel_shuffle.out",
    "aten.pixel_unshuffle.default", "aten.pixel_unshuffle.out", "aten.channel_shuffle.default",
    "aten.channel_shuffle.out", "aten.native_channel_shuffle.default", "aten._chunk_cat.default",
    "aten._chunk_cat.out", "aten.block_diag.default", "aten.block_diag.out", "aten.diag_embed.default",
    "aten.diag_embed.out", "aten.repeat_interleave.Tensor", "aten.repeat_interleave.Tensor_out",
), reason="data movement: every output element is one input element or +0 (a permutation, a "
          "placement into zeros, or integer counts repeated)")

register_passthrough(_overloads(
    "aten.resize_as_.default",
), reason="metadata and allocation: reshapes the storage like resize_ (kept elements untouched), no arithmetic")

register_passthrough(_overloads(
    "aten.eye.default", "aten.eye.m", "aten.eye.out", "aten.eye.m_out", "aten.tril_indices.default",
    "aten.tril_indices.out", "aten.triu_indices.default", "aten.triu_indices.out",
), reason="construction: ones on a diagonal and zeros, or integer row/column indices; no arithmetic on data")

register_passthrough(_overloads(
    "aten.fill.Scalar", "aten.fill.Scalar_out", "aten.fill.Tensor", "aten.fill.Tensor_out",
    "aten.masked_fill.Tensor", "aten.masked_fill_.Tensor", "aten.masked_fill.Scalar_out",
    "aten.masked_fill.Tensor_out", "aten.index_fill.int_Scalar", "aten.index_fill.int_Scalar_out",
    "aten.index_fill.int_Tensor", "aten.index_fill.int_Tensor_out", "aten.index_fill_.int_Scalar",
    "aten.index_fill_.int_Tensor",
), reason="fill with one value (converted once, round to nearest even): repeated indices write the same "
          "bits, so the order of the writes cannot matter")

register_passthrough(_overloads(
    "aten._unsafe_index.Tensor", "aten._unsafe_index.Tensor_hacked_twin", "aten.index.Tensor_out",
    "aten.index.Tensor_hacked_twin", "aten.index_select.out",
), reason="selection: each output is one input element (advanced indexing without bounds checks), no arithmetic")

register_passthrough(_overloads(
    "aten.bitwise_and.Scalar", "aten.bitwise_and.Scalar_out", "aten.bitwise_and.Scalar_Tensor",
    "aten.bitwise_and.Scalar_Tensor_out", "aten.bitwise_and.Tensor_out", "aten.bitwise_and_.Scalar",
    "aten.bitwise_or.Scalar", "aten.bitwise_or.Scalar_out", "aten.bitwise_or.Scalar_Tensor",
    "aten.bitwise_or.Scalar_Tensor_out", "aten.bitwise_or.Tensor_out", "aten.bitwise_or_.Scalar",
    "aten.bitwise_xor.Scalar", "aten.bitwise_xor.Scalar_out", "aten.bitwise_xor.Scalar_Tensor",
    "aten.bitwise_xor.Scalar_Tensor_out", "aten.bitwise_xor.Tensor_out", "aten.bitwise_xor_.Scalar",
    "aten.bitwise_xor_.Tensor", "aten.bitwise_not.out", "aten.bitwise_not_.default",
    "aten.bitwise_left_shift.Tensor", "aten.bitwise_left_shift.Tensor_out", "aten.bitwise_left_shift.Tensor_Scalar",
    "aten.bitwise_left_shift.Tensor_Scalar_out", "aten.bitwise_left_shift.Scalar_Tensor",
    "aten.bitwise_left_shift.Scalar_Tensor_out", "aten.bitwise_left_shift_.Tensor",
    "aten.bitwise_left_shift_.Tensor_Scalar", "aten.bitwise_right_shift.Tensor",
    "aten.bitwise_right_shift.Tensor_out", "aten.bitwise_right_shift.Tensor_Scalar",
    "aten.bitwise_right_shift.Tensor_Scalar_out", "aten.bitwise_right_shift.Scalar_Tensor",
    "aten.bitwise_right_shift.Scalar_Tensor_out", "aten.bitwise_right_shift_.Tensor",
    "aten.bitwise_right_shift_.Tensor_Scalar", "aten.__lshift__.Scalar", "aten.__lshift__.Tensor",
    "aten.__rshift__.Scalar", "aten.__rshift__.Tensor", "aten.__ilshift__.Scalar", "aten.__ilshift__.Tensor",
    "aten.__irshift__.Scalar", "aten.__irshift__.Tensor",
), reason="bitwise logic or shift on integers and bool: exact two's-complement bit operations (torch defines "
          "shifts by the width or more: 0, or the sign for a right shift)")


# Conversions: torch's IEEE-754 conversion (round to nearest even), then, where it narrows a
# floating tensor to bf16/fp16, every NaN written as the canonical pattern: torch's conversion keeps
# bits of the NaN in a pattern that differs between its CPU paths (0xFFFF for bf16 here) and GPUs.
def _narrowed_nans_canonical(dst: torch.Tensor, src) -> None:
    if isinstance(src, torch.Tensor) and src.is_floating_point() and src.dtype != dst.dtype:
        canonical_low_nans_(dst)


@register_kernel(aten._to_copy.default, ANY)
def to_copy(func, args, kwargs):
    out = run_native(func, args, kwargs)
    _narrowed_nans_canonical(out, args[0])
    return out


@register_kernel(aten.copy_.default, ANY)
def copy_(func, args, kwargs):
    out = run_native(func, args, kwargs)
    _narrowed_nans_canonical(args[0], args[1])
    return out
