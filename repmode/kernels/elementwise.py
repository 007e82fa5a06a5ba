"""Elementwise family: arithmetic with broadcasting and type promotion, and the activations
the first training loops need. Formulas: csrc/common/elementwise_formulas.h; orders of
rounding: docs/semantics.md ("Elementwise")."""
from __future__ import annotations

import torch

from ..registry import register_kernel
from ._common import (LOW_PRECISION, C, DTYPE_CODE, broadcast_shape, check_cpu, get_num_threads, run_native,
                      unsupported, write_out)

aten = torch.ops.aten
Tensor = torch.Tensor

# Op codes shared with csrc/common/elementwise_formulas.h (EwOp).
ADD, SUB, MUL, DIV, THRESHOLD_BACKWARD = 0, 1, 2, 3, 4
NEG, RELU, EXP, LOG, ABS = 10, 11, 12, 13, 14

# Below this many elements the C++ side stays on one thread anyway (csrc/cpu/parallel.h).
_PARALLEL_MIN = 32768

# Integer and bool add/sub/mul are exact (two's-complement wrap-around on every device),
# so those cases run natively.
_EXACT_FOR_INTEGERS = {ADD, SUB, MUL, NEG, RELU, ABS}


def _overlaps_partially(out: Tensor, t: Tensor) -> bool:
    """``t`` shares memory with ``out`` but is not the very same view (reading it while writing ``out`` would see new values)."""
    if t is out:
        return False
    if t.untyped_storage().data_ptr() != out.untyped_storage().data_ptr():
        return False
    return not (t.data_ptr() == out.data_ptr() and t.stride() == out.stride() and t.shape == out.shape)


def _compute_dtype(op, func, args, kwargs, a, b):
    dtype = torch.result_type(a, b) if b is not None else a.dtype
    if op in (DIV, EXP, LOG) and not dtype.is_floating_point and not dtype.is_complex:
        dtype = torch.get_default_dtype()
    return dtype


def _operand(x, shape, dtype):
    """(pointer, strides, value) for the C++ engine; Python numbers travel as values."""
    if isinstance(x, Tensor):
        if x.dtype != dtype:
            x = x.to(dtype)  # exact for ints and wider floats' same values; torch promotes the same way
        x = x.expand(shape)
        return x, x.data_ptr(), list(x.stride()), 0.0
    return None, 0, [], float(x)


def elementwise(op, func, args, kwargs, a, b=None, alpha=1, out=None, inplace=False):
    """Compute ``formula(op)(a, b, alpha)`` into a new tensor, into ``a`` (in-place) or into ``out``."""
    # Hot path: a contiguous float CPU tensor with a number, or with a tensor of its own
    # dtype and shape. Everything else (broadcasting, promotion, strides) takes the general path.
    if out is None and isinstance(a, Tensor):
        code = DTYPE_CODE.get(a.dtype)
        if code is not None and a.is_cpu and a.is_contiguous():
            n = a.numel()
            threads = get_num_threads() if n >= _PARALLEL_MIN else 1
            if b is None or type(b) is float or type(b) is int:
                res = a if inplace else torch.empty_like(a)
                C.elementwise_flat(op, code, n, res.data_ptr(), a.data_ptr(), 0, 0.0 if b is None else float(b),
                                   b is not None, float(alpha), threads)
                return res
            if isinstance(b, Tensor) and b.dtype is a.dtype and b.shape == a.shape and b.is_contiguous() \
                    and b.is_cpu and not (inplace and _overlaps_partially(a, b)):
                res = a if inplace else torch.empty_like(a)
                C.elementwise_flat(op, code, n, res.data_ptr(), a.data_ptr(), b.data_ptr(), 0.0, True, float(alpha),
                                   threads)
                return res
    return _elementwise_general(op, func, args, kwargs, a, b, alpha, out, inplace)


def _elementwise_general(op, func, args, kwargs, a, b, alpha, out, inplace):
    if not isinstance(a, Tensor):
        raise unsupported(func, args, kwargs, "the first operand must be a tensor")
    check_cpu(func, args, kwargs, a, b, out)
    if isinstance(alpha, complex) or isinstance(b, complex):
        raise unsupported(func, args, kwargs, "complex numbers are not supported")
    dtype = _compute_dtype(op, func, args, kwargs, a, b)
    if not dtype.is_floating_point and not dtype.is_complex and op in _EXACT_FOR_INTEGERS:
        return run_native(func, args, kwargs)
    # bf16/fp16: the formula runs in float32 on exactly widened operands; one rounding at the end.
    result_dtype = dtype
    if dtype in LOW_PRECISION:
        dtype = torch.float32
    code = DTYPE_CODE.get(dtype)
    if code is None:
        raise unsupported(func, args, kwargs, f"dtype {dtype} is not supported yet (float32 and float64 are)")

    shape = broadcast_shape(a.shape, b.shape) if isinstance(b, Tensor) else a.shape
    if inplace:
        if tuple(shape) != tuple(a.shape):
            raise RuntimeError(f"output with shape {list(a.shape)} doesn't match the broadcast shape {list(shape)}")
        if not torch.can_cast(result_dtype, a.dtype):
            raise RuntimeError(f"result type {result_dtype} can't be cast to the desired output type {a.dtype}")
        if isinstance(b, Tensor) and _overlaps_partially(a, b):
            b = b.clone()

    # Compute into `res` (dtype `dtype`); in-place writes straight into `a` when it can.
    direct = inplace and a.dtype == dtype and not _has_internal_overlap(a)
    if direct:
        res = a
    elif tuple(a.shape) == tuple(shape) and a.dtype == dtype and not _has_internal_overlap(a):
        res = torch.empty_like(a)  # keeps the first operand's layout, as torch does
    else:
        res = torch.empty(shape, dtype=dtype)

    keep_a, pa, sa, va = _operand(a, shape, dtype)
    keep_b, pb, sb, vb = _operand(b, shape, dtype) if b is not None else (None, 0, [], 0.0)
    C.elementwise(op, code, list(shape), res.data_ptr(), list(res.stride()), pa, sa, va, pb, sb, vb,
                  b is not None, float(alpha), get_num_threads())
    if inplace:
        if res is not a:
            a.copy_(res)
        return a
    if result_dtype != dtype:
        res = res.to(result_dtype)
    if out is not None:
        return write_out(res, out)
    return res


def _has_internal_overlap(t: Tensor) -> bool:
    return any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape))


# ---- registrations -------------------------------------------------------------------------

def _binary_family(op, functional, inplace_op, out_op, swap=False):
    """Register the functional, in-place and out= overloads of one binary op.
    ``swap``: the op computes ``formula(other, self)`` (rsub)."""

    if swap:
        @register_kernel(functional)
        def _swapped(func, args, kwargs):
            alpha = kwargs.get("alpha", 1) if kwargs else 1
            x, y = args[1], args[0]
            if not isinstance(x, Tensor):
                x = torch.scalar_tensor(x, dtype=torch.result_type(y, x))
            return elementwise(op, func, args, kwargs, x, y, alpha)
        return

    @register_kernel(functional)
    def _functional(func, args, kwargs):
        return elementwise(op, func, args, kwargs, args[0], args[1], kwargs.get("alpha", 1) if kwargs else 1)

    @register_kernel(inplace_op)
    def _inplace(func, args, kwargs):
        alpha = kwargs.get("alpha", 1) if kwargs else 1
        return elementwise(op, func, args, kwargs, args[0], args[1], alpha, inplace=True)

    @register_kernel(out_op)
    def _out(func, args, kwargs):
        return _elementwise_general(op, func, args, kwargs, args[0], args[1], kwargs.get("alpha", 1),
                                    kwargs["out"], False)


_binary_family(ADD, [aten.add.Tensor, aten.add.Scalar], [aten.add_.Tensor, aten.add_.Scalar], aten.add.out)
_binary_family(SUB, [aten.sub.Tensor, aten.sub.Scalar], [aten.sub_.Tensor, aten.sub_.Scalar], aten.sub.out)
_binary_family(MUL, [aten.mul.Tensor, aten.mul.Scalar], [aten.mul_.Tensor, aten.mul_.Scalar], aten.mul.out)
_binary_family(DIV, [aten.div.Tensor, aten.div.Scalar], [aten.div_.Tensor, aten.div_.Scalar], aten.div.out)
# rsub(self, other, alpha) = other - alpha * self
_binary_family(SUB, [aten.rsub.Tensor, aten.rsub.Scalar], None, None, swap=True)


def _unary_family(op, functional, inplace_op, out_op):
    @register_kernel(functional)
    def _functional(func, args, kwargs):
        return elementwise(op, func, args, kwargs, args[0])

    if inplace_op is not None:
        @register_kernel(inplace_op)
        def _inplace(func, args, kwargs):
            return elementwise(op, func, args, kwargs, args[0], inplace=True)

    if out_op is not None:
        @register_kernel(out_op)
        def _out(func, args, kwargs):
            return _elementwise_general(op, func, args, kwargs, args[0], None, 1, kwargs["out"], False)


_unary_family(NEG, aten.neg.default, aten.neg_.default, aten.neg.out)
_unary_family(RELU, aten.relu.default, aten.relu_.default, None)
_unary_family(EXP, aten.exp.default, aten.exp_.default, aten.exp.out)
_unary_family(LOG, aten.log.default, aten.log_.default, aten.log.out)
_unary_family(ABS, aten.abs.default, aten.abs_.default, aten.abs.out)


@register_kernel(aten.threshold_backward.default)
def threshold_backward(func, args, kwargs):
    grad, inp, threshold = args
    if not (isinstance(grad, Tensor) and isinstance(inp, Tensor)):
        raise unsupported(func, args, kwargs, "expected tensors")
    if inp.dtype != grad.dtype:
        inp = inp.to(grad.dtype)
    return elementwise(THRESHOLD_BACKWARD, func, args, kwargs, grad, inp, threshold)
