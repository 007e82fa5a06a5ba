"""Matrix products: every output element is a sequential FMA chain over k from 0, starting
at +0.0 (csrc/common/matmul.h, csrc/cpu/matmul.h, docs/semantics.md "Matrix products"). Inputs of any strides are
read in place; threads and tiles only partition the outputs. bf16/fp16 operands (autocast's
products) are widened exactly to float32, run through the float32 op, and the result is
rounded once to their dtype. CPU and CUDA tensors alike (kernels_for picks repmode._C or _C_cuda)."""
from __future__ import annotations

import functools
import math

import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

from ..registry import register_composite, register_inplace_forms, register_kernel
from ._common import (
    FLOAT_WIDENED,
    LOW_PRECISION,
    broadcast_shape,
    call_registered,
    check_device,
    float_code,
    kernels_for,
    launch_arg,
    unsupported,
    widened,
)
from .elementwise import ADD, MUL, add_scaled_into, elementwise, elementwise_general

aten = torch.ops.aten
Tensor = torch.Tensor


def low_precision_in_float32(impl):
    """bf16/fp16 operands, all of one dtype as torch requires, widened exactly to float32; the
    float32 op; one rounding of the result to that dtype (an ``out=`` tensor rounds on write)."""
    run = widened()(impl)

    @functools.wraps(impl)
    def checked(func, args, kwargs):
        tensors = [a for a in args if isinstance(a, Tensor)]
        if tensors and tensors[0].dtype in LOW_PRECISION:
            for t in tensors[1:]:
                if t.dtype != tensors[0].dtype:
                    raise RuntimeError(f"{func}: expected all operands to have the same dtype, but got "
                                       f"{tensors[0].dtype} and {t.dtype}")
        return run(func, args, kwargs)

    return checked


def _code(func, args, kwargs, *tensors):
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype != dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {dtype} != {t.dtype}")
    return float_code(func, args, kwargs, *tensors)


def bmm_kernel(func, args, kwargs, a: Tensor, b: Tensor) -> Tensor:
    """(B, M, K) x (B, K, N) -> (B, M, N) in the canonical order."""
    code = _code(func, args, kwargs, a, b)
    if a.dim() != 3 or b.dim() != 3 or a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(f"bmm: shapes {list(a.shape)} and {list(b.shape)} cannot be multiplied")
    B, M, K = a.shape
    N = b.shape[2]
    out = torch.empty((B, M, N), dtype=a.dtype, device=a.device)
    if out.numel():
        kernels_for(a).gemm(code, B, M, N, K, a.data_ptr(), *a.stride(), b.data_ptr(), *b.stride(),
                            out.data_ptr(), *out.stride(), launch_arg(a))
    return out


def mm_kernel(func, args, kwargs, a: Tensor, b: Tensor) -> Tensor:
    if a.dim() != 2 or b.dim() != 2:
        raise RuntimeError(f"mm: expected 2-D matrices, got {a.dim()}-D and {b.dim()}-D")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and {b.shape[0]}x{b.shape[1]})")
    code = _code(func, args, kwargs, a, b)
    M, K = a.shape
    N = b.shape[1]
    out = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if out.numel():
        kernels_for(a).gemm(code, 1, M, N, K, a.data_ptr(), 0, *a.stride(), b.data_ptr(), 0, *b.stride(),
                            out.data_ptr(), 0, *out.stride(), launch_arg(a))
    return out


def add_scaled_product(func, args, kwargs, bias: Tensor, product: Tensor, beta, alpha) -> Tensor:
    """``beta * bias + alpha * product`` in the documented order: t = alpha*product (skipped when
    alpha == 1), u = beta*bias (skipped when beta == 1; bias ignored when beta == 0), out = u + t."""
    if beta == 0:
        return product if alpha == 1 else elementwise(MUL, func, args, kwargs, product, alpha, inplace=True)
    if not isinstance(bias, Tensor):
        raise unsupported(func, args, kwargs, "the added input must be a tensor")
    if broadcast_shape(bias.shape, product.shape) != product.shape:
        raise RuntimeError(f"the input of shape {list(bias.shape)} cannot be broadcast to {list(product.shape)}")
    if beta != 1:
        bias = elementwise(MUL, func, args, kwargs, bias, beta)
    if bias.dtype != product.dtype or bias.device != product.device:
        return elementwise_general(ADD, func, args, kwargs, bias.expand(product.shape), product, None, (alpha,))
    # out = bias + alpha * product, written over product (our own fresh tensor): each element is
    # read before it is written, at the same index.
    return add_scaled_into(product, bias.expand(product.shape), alpha)


@register_kernel(aten.mm.default, FLOAT_WIDENED, out=aten.mm.out)
@low_precision_in_float32
def mm(func, args, kwargs):
    return mm_kernel(func, args, kwargs, args[0], args[1])


@register_kernel(aten.bmm.default, FLOAT_WIDENED, out=aten.bmm.out)
@low_precision_in_float32
def bmm(func, args, kwargs):
    return bmm_kernel(func, args, kwargs, args[0], args[1])


def _addmm(func, args, kwargs):
    kwargs = kwargs or {}
    bias, a, b = args[:3]
    beta = args[3] if len(args) > 3 else kwargs.get("beta", 1)
    alpha = args[4] if len(args) > 4 else kwargs.get("alpha", 1)
    if isinstance(bias, Tensor):
        check_device(func, args, kwargs, bias, a, b)
        if bias.dtype != a.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {bias.dtype} and {a.dtype}")
    return add_scaled_product(func, args, kwargs, bias, mm_kernel(func, args, kwargs, a, b), beta, alpha)


@register_kernel(aten.addmm.default, FLOAT_WIDENED, out=aten.addmm.out)
@low_precision_in_float32
def addmm(func, args, kwargs):
    return _addmm(func, args, kwargs)


@register_kernel(aten.addmm_.default, FLOAT_WIDENED)
def addmm_(func, args, kwargs):
    return args[0].copy_(addmm(aten.addmm.default, args, kwargs))


# ---- vector forms: the same chain with N = 1 (mv) or M = N = 1 (dot) --------------------------

def mv_kernel(func, args, kwargs, a: Tensor, v: Tensor) -> Tensor:
    if a.dim() != 2 or v.dim() != 1 or a.shape[1] != v.shape[0]:
        raise RuntimeError(f"mv: size mismatch, got input ({list(a.shape)}), vec ({list(v.shape)})")
    code = _code(func, args, kwargs, a, v)
    M, K = a.shape
    out = torch.empty((M,), dtype=a.dtype, device=a.device)
    if M:
        kernels_for(a).gemm(code, 1, M, 1, K, a.data_ptr(), 0, *a.stride(), v.data_ptr(), 0, v.stride(0), 0,
                            out.data_ptr(), 0, 1, 1, launch_arg(a))
    return out


def dot_kernel(func, args, kwargs, a: Tensor, b: Tensor) -> Tensor:
    if a.dim() != 1 or b.dim() != 1 or a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensors {list(a.shape)} and {list(b.shape)} "
                           "to be 1-D with the same number of elements")
    code = _code(func, args, kwargs, a, b)
    out = torch.empty((), dtype=a.dtype, device=a.device)
    kernels_for(a).gemm(code, 1, 1, 1, a.shape[0], a.data_ptr(), 0, 0, a.stride(0), b.data_ptr(), 0, b.stride(0), 0,
                        out.data_ptr(), 0, 1, 1, launch_arg(a))
    return out


@register_kernel(aten.mv.default, FLOAT_WIDENED)
@low_precision_in_float32
def mv(func, args, kwargs):
    return mv_kernel(func, args, kwargs, args[0], args[1])


@register_kernel([aten.dot.default, aten.vdot.default], FLOAT_WIDENED)
@low_precision_in_float32
def dot(func, args, kwargs):
    return dot_kernel(func, args, kwargs, args[0], args[1])


def _scales(args, kwargs, first):
    kwargs = kwargs or {}
    beta = args[first] if len(args) > first else kwargs.get("beta", 1)
    alpha = args[first + 1] if len(args) > first + 1 else kwargs.get("alpha", 1)
    return beta, alpha


@register_kernel(aten.addmv.default, FLOAT_WIDENED)
@low_precision_in_float32
def addmv(func, args, kwargs):
    beta, alpha = _scales(args, kwargs, 3)
    return add_scaled_product(func, args, kwargs, args[0], mv_kernel(func, args, kwargs, args[1], args[2]), beta, alpha)


@register_kernel(aten.baddbmm.default, FLOAT_WIDENED)
@low_precision_in_float32
def baddbmm(func, args, kwargs):
    beta, alpha = _scales(args, kwargs, 3)
    return add_scaled_product(func, args, kwargs, args[0], bmm_kernel(func, args, kwargs, args[1], args[2]), beta,
                              alpha)


@register_kernel(aten.addbmm.default, FLOAT_WIDENED, out=aten.addbmm.out)
@low_precision_in_float32
def addbmm(func, args, kwargs):
    """``beta * self + alpha * sum_b batch1[b] @ batch2[b]``: one product over the joined k = B·K
    (batch-major: b, then k), so the sum over the batch is the matrix-product order itself."""
    beta, alpha = _scales(args, kwargs, 3)
    b1, b2 = args[1], args[2]
    if b1.dim() != 3 or b2.dim() != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, batch2 must be a 3D tensor (got {b1.dim()}-D and "
                           f"{b2.dim()}-D)")
    if b1.shape[0] != b2.shape[0] or b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"addbmm: size mismatch, batch1: {list(b1.shape)}, batch2: {list(b2.shape)}")
    B, M, K = b1.shape
    N = b2.shape[2]
    a = b1.permute(1, 0, 2).reshape(M, B * K)  # exact copy where the layout needs one
    b = b2.reshape(B * K, N)
    return add_scaled_product(func, args, kwargs, args[0], mm_kernel(func, args, kwargs, a, b), beta, alpha)


@register_kernel(aten.addr.default, FLOAT_WIDENED)
@low_precision_in_float32
def addr(func, args, kwargs):
    """``beta * self + alpha * outer(v1, v2)``: the outer product is one rounding per element."""
    beta, alpha = _scales(args, kwargs, 3)
    v1, v2 = args[1], args[2]
    for t in (args[0], v1, v2):
        if isinstance(t, Tensor):
            float_code(func, args, kwargs, t)  # float32/float64 on a device with kernels, else UnsupportedOpError
    if v1.dim() != 1 or v2.dim() != 1:
        raise RuntimeError("addr: expected 1-D vectors")
    outer = elementwise(MUL, func, args, kwargs, v1.unsqueeze(1).expand(v1.shape[0], v2.shape[0]),
                        v2.unsqueeze(0).expand(v1.shape[0], v2.shape[0]))
    return add_scaled_product(func, args, kwargs, args[0], outer, beta, alpha)


# ---- tensordot / inner contracting every dimension: always dot, whatever the layout ------------
#
# torch's composite tensordot (which inner calls) picks, for a contraction that leaves one element
# (the non-contracted sizes multiply to 1), ``dot`` when both permuted operands are contiguous and
# ``(a * b).sum()`` otherwise: the bits would follow the layout. In the mode the choice is fixed to
# ``dot`` of the flattened operands (the GEMM order with M = N = 1; a copy where the layout is
# strided). Other contractions keep torch's composite (permute, reshape, mm: layout-independent).
# The composite runs at the Autograd key, before the mode sees any op, so the choice is made in a
# kernel registered there for aten::tensordot: outside repmode it calls torch's own composite.

def _tensordot(a: Tensor, b: Tensor, dims_a, dims_b, ops):
    """torch's composite tensordot with the one-element contraction fixed to ``dot``; ``ops``:
    (sum over one dim keeping it, mm, dot), the differentiable torch ops or repmode's kernels. None
    where torch's composite should run itself (non-floating operands, or arguments it rejects)."""
    sum_keep, mm_op, dot_op = ops
    if not (a.is_floating_point() and b.is_floating_point() and a.dtype == b.dtype) or len(dims_a) != len(dims_b):
        return None
    dims_a = [d + a.dim() if d < 0 else d for d in dims_a]
    dims_b = [d + b.dim() if d < 0 else d for d in dims_b]
    if not (all(0 <= d < a.dim() for d in dims_a) and all(0 <= d < b.dim() for d in dims_b)) or \
            len(set(dims_a)) != len(dims_a) or len(set(dims_b)) != len(dims_b):
        return None
    csize = 1
    for da, db in zip(dims_a, dims_b):  # broadcast contracted dims are summed first, as torch does
        if b.shape[db] == 1:
            a = sum_keep(a, da)
        elif a.shape[da] == 1:
            b = sum_keep(b, db)
        elif a.shape[da] != b.shape[db]:
            return None  # torch's composite raises its own error
        else:
            csize *= a.shape[da]
    keep_a = [i for i in range(a.dim()) if i not in dims_a]
    keep_b = [i for i in range(b.dim()) if i not in dims_b]
    sizes = [a.shape[i] for i in keep_a] + [b.shape[i] for i in keep_b]
    size_a, size_b = math.prod(sizes[:len(keep_a)]), math.prod(sizes[len(keep_a):])
    if size_a == 1 and size_b == 1:  # torch: dot if both permuted operands are contiguous, else mul + sum
        return dot_op(a.permute(keep_a + dims_a).reshape(-1), b.permute(dims_b + keep_b).reshape(-1)).reshape(sizes)
    return mm_op(a.permute(keep_a + dims_a).reshape(size_a, csize),
                 b.permute(dims_b + keep_b).reshape(csize, size_b)).reshape(sizes)


_AUTOGRAD_OPS = (lambda t, d: t.sum(d, keepdim=True), torch.mm, torch.dot)
_KERNEL_OPS = (lambda t, d: call_registered(aten.sum.dim_IntList, t, [d], True),
               lambda x, y: call_registered(aten.mm.default, x, y),
               lambda x, y: call_registered(aten.dot.default, x, y))


@register_composite(aten.tensordot.default, FLOAT_WIDENED)
def tensordot(func, args, kwargs):
    """Reached under inference_mode (the composite arrives un-decomposed); in grad mode and under
    no_grad through _autograd_tensordot. Permute and reshape are exact data movement."""
    out = _tensordot(*args, **(kwargs or {}), ops=_KERNEL_OPS)
    if out is None:
        raise unsupported(func, args, kwargs, "tensordot needs floating operands of one dtype and contracted "
                          "dimensions that exist, are distinct and match in size")
    return out


def _repmode_active() -> bool:
    return any(type(m).__module__ == "repmode.mode" for m in _get_current_dispatch_mode_stack())


def _autograd_tensordot(a, b, dims_a, dims_b):
    if _repmode_active():
        out = _tensordot(a, b, dims_a, dims_b, ops=_AUTOGRAD_OPS)
        if out is not None:
            return out
    return aten.tensordot.default.decompose(a, b, dims_a, dims_b)


_TENSORDOT_LIB = torch.library.Library("aten", "IMPL")  # kept alive: the registrations live with it
for _key in ("AutogradCPU", "AutogradCUDA"):
    _TENSORDOT_LIB.impl("tensordot", _autograd_tensordot, _key)


# In-place forms: the functional result, written into self.
register_inplace_forms([aten.addmv_.default, aten.addr_.default, aten.baddbmm_.default, aten.addbmm_.default])
