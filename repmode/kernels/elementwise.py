"""Elementwise family: arithmetic, comparisons, repmode's math routines and the activations a
training loop meets, forward and backward, with broadcasting, type promotion, Python numbers,
in-place and ``out=`` forms. Formulas: csrc/common/elementwise.h; their exact
roundings: docs/semantics.md ("Elementwise")."""
from __future__ import annotations

import math

import torch

from .. import _ext
from ..registry import register_composite, register_kernel, register_passthrough
from ._common import (
    DTYPE_CODE,
    FLOAT_WIDENED,
    LOW_PRECISION,
    C,
    broadcast_shape,
    call_registered,
    check_device,
    get_num_threads,
    iterator_strides,
    kernels_for,
    launch_arg,
    param,
    round_to,
    run_native,
    unsupported,
)

aten = torch.ops.aten
Tensor = torch.Tensor

# Op codes defined in csrc/common/elementwise.h (REPMODE_EW_OPS), read from the extension.
_EW = _ext.codes("EwOp")
_EW_NAME = {code: name for name, code in _EW.items()}
ADD, SUB, MUL, DIV, THRESHOLD_BACKWARD, POW, MINIMUM, MAXIMUM, CLAMP = (_EW[n] for n in (
    "ADD", "SUB", "MUL", "DIV", "THRESHOLD_BACKWARD", "POW", "MINIMUM", "MAXIMUM", "CLAMP"))
NEG, RELU, EXP, LOG, ABS = (_EW[n] for n in ("NEG", "RELU", "EXP", "LOG", "ABS"))
LOG1P, EXPM1, LOG2, EXP2, TANH, SIGMOID, ERF, ERFC, SIN, COS, RSQRT, SQRT, RECIPROCAL, SIGN = (_EW[n] for n in (
    "LOG1P", "EXPM1", "LOG2", "EXP2", "TANH", "SIGMOID", "ERF", "ERFC", "SIN", "COS", "RSQRT", "SQRT", "RECIPROCAL",
    "SIGN"))
LEAKY_RELU, LEAKY_RELU_BACKWARD, ELU, ELU_BACKWARD_INPUT, ELU_BACKWARD_RESULT, HARDTANH_BACKWARD = (_EW[n] for n in (
    "LEAKY_RELU", "LEAKY_RELU_BACKWARD", "ELU", "ELU_BACKWARD_INPUT", "ELU_BACKWARD_RESULT", "HARDTANH_BACKWARD"))
GELU, GELU_TANH, GELU_BACKWARD, GELU_TANH_BACKWARD, SILU, SILU_BACKWARD, MISH, MISH_BACKWARD = (_EW[n] for n in (
    "GELU", "GELU_TANH", "GELU_BACKWARD", "GELU_TANH_BACKWARD", "SILU", "SILU_BACKWARD", "MISH", "MISH_BACKWARD"))
SOFTPLUS, SOFTPLUS_BACKWARD, TANH_BACKWARD, SIGMOID_BACKWARD, ADDCMUL, ADDCDIV, LERP = (_EW[n] for n in (
    "SOFTPLUS", "SOFTPLUS_BACKWARD", "TANH_BACKWARD", "SIGMOID_BACKWARD", "ADDCMUL", "ADDCDIV", "LERP"))
# (the ops of repmode/kernels/elementwise_more.py; named here where this module's tables need them)
COPYSIGN, FMOD, REMAINDER, FLOOR_DIVIDE, FMAX, FMIN, HEAVISIDE, XLOG1PY, SINC, LOGIT = (_EW[n] for n in (
    "COPYSIGN", "FMOD", "REMAINDER", "FLOOR_DIVIDE", "FMAX", "FMIN", "HEAVISIDE", "XLOG1PY", "SINC", "LOGIT"))

# Below this many elements the C++ side stays on one thread anyway (csrc/cpu/parallel.h).
_PARALLEL_MIN = 32768

# On integer (and bool) tensors these ops are exact on every device (two's-complement
# wrap-around, exact comparisons), so those cases run natively.
_EXACT_FOR_INTEGERS = {ADD, SUB, MUL, NEG, RELU, ABS, MINIMUM, MAXIMUM, CLAMP, SIGN, POW, FMOD, REMAINDER, FLOOR_DIVIDE,
                       FMAX, FMIN, HEAVISIDE}

# Ops whose result is floating even for integer inputs (torch's rule: the default dtype).
_FLOAT_RESULT = {DIV, EXP, LOG, LOG1P, EXPM1, LOG2, EXP2, TANH, SIGMOID, ERF, ERFC, SIN, COS, RSQRT, SQRT,
                 RECIPROCAL, COPYSIGN, XLOG1PY, SINC, LOGIT}
# (the math long tail, repmode/kernels/mathtail.py: integer inputs give the default float dtype)
_FLOAT_RESULT |= {_EW[n] for n in ("ATAN", "ATAN2", "ASIN", "ACOS", "SINH", "COSH", "TAN", "LOG10", "ASINH", "ACOSH",
                                   "ATANH")}
# (special functions, repmode/kernels/special.py: likewise)
_FLOAT_RESULT |= {_EW[n] for n in ("LGAMMA", "DIGAMMA", "POLYGAMMA", "MVLGAMMA", "ERFINV", "ZETA", "NDTRI", "LOG_NDTR",
                                   "ERFCX", "ENTR")}
# (Bessel functions and orthogonal polynomials, repmode/kernels/bessel.py: integer inputs give the default float dtype)
_FLOAT_RESULT |= {_EW[n] for n in ("I0", "I0E", "I1", "I1E", "BESSEL_K0", "BESSEL_K1", "BESSEL_K0E", "BESSEL_K1E",
                                   "SPHERICAL_BESSEL_J0", "CHEBYSHEV_T", "CHEBYSHEV_U", "CHEBYSHEV_V", "CHEBYSHEV_W",
                                   "SHIFTED_CHEBYSHEV_T", "SHIFTED_CHEBYSHEV_U", "SHIFTED_CHEBYSHEV_V",
                                   "SHIFTED_CHEBYSHEV_W", "HERMITE_H", "HERMITE_HE", "LAGUERRE_L", "LEGENDRE_P",
                                   "BESSEL_J0", "BESSEL_J1", "BESSEL_Y0", "BESSEL_Y1")}
# (Airy Ai, repmode/kernels/special.py: integer inputs give the default float dtype)
_FLOAT_RESULT |= {_EW["AIRY_AI"]}


def dtypes_of(*ops) -> tuple[str, ...]:
    """The dtype tags (registry.DTYPE_TAGS) of overloads computing these op codes: every op takes
    float32/float64 and widens bf16/fp16 (elementwise_general); integer tensors only where
    the op is exact on them or promotes them to a float result."""
    integer = all(op in _EXACT_FOR_INTEGERS or op in _FLOAT_RESULT for op in ops)
    return FLOAT_WIDENED + (("integer",) if integer else ())


def _overlaps_partially(out: Tensor, t: Tensor) -> bool:
    """``t`` shares memory with ``out`` but is not the very same view (reading it while writing ``out``
    would see new values)."""
    if t is out:
        return False
    if t.untyped_storage().data_ptr() != out.untyped_storage().data_ptr():
        return False
    return not (t.data_ptr() == out.data_ptr() and t.stride() == out.stride() and t.shape == out.shape)


def _has_internal_overlap(t: Tensor) -> bool:
    return any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape))


def _result_dtype(op, a, b, c):
    operands = [x for x in (a, b, c) if x is not None]
    dtype = operands[0].dtype if len(operands) == 1 else torch.result_type(*operands[:2])
    if len(operands) == 3:
        dtype = torch.promote_types(dtype, torch.result_type(operands[0], operands[2]))
    if op in _FLOAT_RESULT and not dtype.is_floating_point and not dtype.is_complex:
        dtype = torch.get_default_dtype()
    return dtype


def _operand(x, shape, dtype):
    """(keep-alive, pointer, strides, value) for the C++ engine; Python numbers travel as values."""
    if isinstance(x, Tensor):
        if x.dtype != dtype:
            x = x.to(dtype)  # exact widening, or torch's own promotion of the same values
        x = x.expand(shape)
        return x, x.data_ptr(), list(x.stride()), 0.0
    if x is None:
        return None, 0, [], 0.0
    return None, 0, [], float(x)


def _params(params):
    return [float(p) for p in params]


def _flat_operand(a: Tensor, x, inplace: bool):
    """(pointer, stride, value) of an operand the hot path can pass with ``a`` (contiguous, of a's dtype,
    shape and device, or a Python number: pointer 0, stride 0), or None."""
    if type(x) is float or type(x) is int:
        return 0, 0, float(x)
    if isinstance(x, Tensor) and x.dtype is a.dtype and x.shape == a.shape and x.is_contiguous() \
            and (x.is_cpu if a.is_cpu else x.device == a.device) and not (inplace and _overlaps_partially(a, x)):
        return x.data_ptr(), 1, 0.0
    return None


def elementwise(op, func, args, kwargs, a, b=None, c=None, params=(), inplace=False):
    """``formula(op)(a, b, c, *params)`` into a new tensor or into ``a`` (in-place); out= overloads
    write the new tensor into theirs (registry.out_variant)."""
    # Hot path: a contiguous float tensor alone, with a number, or with a tensor of its own dtype,
    # shape and device (and likewise a third operand: lerp, addcmul, addcdiv of the optimizers).
    # Everything else (broadcasting, promotion, strides) takes the general path. On a GPU the same
    # entry points take the stream last (the Python work per launch is what a step waits on there).
    if len(params) <= 2 and isinstance(a, Tensor):
        code = DTYPE_CODE.get(a.dtype)
        on_cpu = a.is_cpu
        if code is not None and (on_cpu or (a.is_cuda and _ext.CUDA is not None)) and a.is_contiguous():
            n = a.numel()
            kernels = C if on_cpu else _ext.CUDA
            threads = (get_num_threads() if n >= _PARALLEL_MIN else 1) if on_cpu else launch_arg(a)
            p0 = float(params[0]) if params else 0.0
            p1 = float(params[1]) if len(params) > 1 else 0.0
            if c is not None:
                fb = _flat_operand(a, b, inplace)
                fc = _flat_operand(a, c, inplace) if fb is not None else None
                if fc is None:
                    return elementwise_general(op, func, args, kwargs, a, b, c, params, inplace)
                res = a if inplace else torch.empty_like(a)
                # the general entry over one dim of n elements: the same loop as the general path's
                # (whose coalescing gives this very layout), without its Python bookkeeping
                kernels.elementwise(op, code, [n], res.data_ptr(), [1], a.data_ptr(), [1], 0.0, fb[0], [fb[1]], fb[2],
                                    True, fc[0], [fc[1]], fc[2], True, [p0, p1], threads)
                return res
            if b is None or type(b) is float or type(b) is int:
                res = a if inplace else torch.empty_like(a)
                kernels.elementwise_flat(op, code, n, res.data_ptr(), a.data_ptr(), 0, 0.0 if b is None else float(b),
                                         b is not None, p0, p1, threads)
                return res
            if isinstance(b, Tensor) and b.dtype is a.dtype and b.shape == a.shape and b.is_contiguous() \
                    and (b.is_cpu if on_cpu else b.device == a.device) and not (inplace and _overlaps_partially(a, b)):
                res = a if inplace else torch.empty_like(a)
                kernels.elementwise_flat(op, code, n, res.data_ptr(), a.data_ptr(), b.data_ptr(), 0.0, True, p0, p1,
                                         threads)
                return res
    return elementwise_general(op, func, args, kwargs, a, b, c, params, inplace)


def add_scaled_into(product: Tensor, bias: Tensor, alpha) -> Tensor:
    """``product = bias + alpha * product`` in place (the ADD formula with p0 = alpha): the epilogue of
    addmm-style ops over a fresh ``product`` of the same dtype and device as ``bias`` (already
    expanded to its shape); each element is read before it is written, at the same index."""
    shape, strides = list(product.shape), list(product.stride())
    kernels_for(product).elementwise(ADD, DTYPE_CODE[product.dtype], shape, product.data_ptr(), strides,
                                     bias.data_ptr(), list(bias.stride()), 0.0, product.data_ptr(), strides, 0.0,
                                     True, 0, [], 0.0, False, [float(alpha)], launch_arg(product))
    return product


# Backward ops whose TensorIterator takes the input before the gradient (the first operand
# decides the result's layout); every other op here takes its operands in schema order.
# (Their grad_input= forms reach elementwise as the functional overload: registry.out_variant.)
_INPUT_BEFORE_GRAD = frozenset({aten.threshold_backward.default, aten.leaky_relu_backward.default})


def elementwise_general(op, func, args, kwargs, a, b=None, c=None, params=(), inplace=False):
    if not isinstance(a, Tensor):
        raise unsupported(func, args, kwargs, "the first operand must be a tensor")
    if not a.is_cpu:  # torch lets 0-dim CPU tensors join GPU operands: an exact copy to a's device
        b, c = (x.to(a.device) if isinstance(x, Tensor) and x.is_cpu and x.dim() == 0 else x for x in (b, c))
    check_device(func, args, kwargs, a, b, c)
    if any(isinstance(x, complex) for x in (b, c, *params)) or a.is_complex() or (
            isinstance(b, Tensor) and b.is_complex()):
        # complex operands: the few forms the FFT path needs (repmode/kernels/fft.py), others refused
        from .fft import complex_elementwise
        return complex_elementwise(_EW_NAME.get(op, ""), func, args, kwargs, a, b, params, inplace)
    dtype = _result_dtype(op, a, b, c)
    if not dtype.is_floating_point and op in _EXACT_FOR_INTEGERS:
        return run_native(func, args, kwargs)
    # bf16/fp16: the formula runs in float32 on exactly widened operands; one rounding at the end.
    result_dtype = dtype
    if dtype in LOW_PRECISION:
        dtype = torch.float32
    code = DTYPE_CODE.get(dtype)
    if code is None:
        raise unsupported(func, args, kwargs, f"dtype {dtype} is not supported yet (float32 and float64 are)")

    shape = a.shape
    for x in (b, c):
        if isinstance(x, Tensor):
            shape = broadcast_shape(shape, x.shape)
    if inplace:
        if tuple(shape) != tuple(a.shape):
            raise RuntimeError(f"output with shape {list(a.shape)} doesn't match the broadcast shape {list(shape)}")
        if not torch.can_cast(result_dtype, a.dtype):
            raise RuntimeError(f"result type {result_dtype} can't be cast to the desired output type {a.dtype}")
        b = b.clone() if isinstance(b, Tensor) and _overlaps_partially(a, b) else b
        c = c.clone() if isinstance(c, Tensor) and _overlaps_partially(a, c) else c

    # Compute into `res` (dtype `dtype`); in-place writes straight into `a` when it can.
    if inplace and a.dtype == dtype and not _has_internal_overlap(a):
        res = a
    elif all(not isinstance(x, Tensor) or x.is_contiguous() for x in (a, b, c)):
        res = torch.empty(shape, dtype=dtype, device=a.device)
    else:  # the layout torch would give the result (also when it is widened or promoted)
        in_torch_order = (b, a, c) if func in _INPUT_BEFORE_GRAD else (a, b, c)
        res = torch.empty_strided(shape, iterator_strides(shape, in_torch_order), dtype=dtype, device=a.device)

    keep = [_operand(x, shape, dtype) for x in (a, b, c)]  # noqa: F841  (keeps converted operands alive)
    (_, pa, sa, va), (_, pb, sb, vb), (_, pc, sc, vc) = keep
    kernels_for(a).elementwise(op, code, list(shape), res.data_ptr(), list(res.stride()), pa, sa, va, pb, sb, vb,
                               b is not None, pc, sc, vc, c is not None, _params(params), launch_arg(a))
    if inplace:
        if res is not a:
            a.copy_(round_to(res, a.dtype) if a.dtype in LOW_PRECISION and res.dtype != a.dtype else res)
        return a
    if result_dtype != dtype:
        res = round_to(res, result_dtype)
    return res


# ---- registrations -------------------------------------------------------------------------

def _family(functional, inplace=None, out=None, *, operands, dtypes, params=None, module=__name__):
    """Register the functional, in-place and out= overloads of one op.
    ``operands(func, args, kwargs) -> (op, a, b, c)``; ``params(func, args, kwargs) -> tuple`` (the op's number
    arguments); ``dtypes``: the registry's dtype tags (``dtypes_of`` the op codes ``operands`` can return);
    ``module``: the registering module (its family in the ops table)."""

    def compute(func, args, kwargs):
        op, a, b, c = operands(func, args, kwargs)
        return elementwise(op, func, args, kwargs, a, b, c, params(func, args, kwargs) if params else ())

    def compute_inplace(func, args, kwargs):
        op, a, b, c = operands(func, args, kwargs)
        return elementwise(op, func, args, kwargs, a, b, c, params(func, args, kwargs) if params else (),
                           inplace=True)

    compute.__module__ = compute_inplace.__module__ = module
    register_kernel(functional, dtypes, out=out)(compute)
    if inplace is not None:
        register_kernel(inplace, dtypes)(compute_inplace)


def _alpha(func, args, kwargs):
    return (param(func, args, kwargs, "alpha"),)


def _binary(op):
    return lambda func, args, kwargs: (op, args[0], args[1], None)


def _unary(op):
    return lambda func, args, kwargs: (op, args[0], None, None)


# Binary arithmetic: add/sub carry alpha (p0).
_family([aten.add.Tensor, aten.add.Scalar], [aten.add_.Tensor, aten.add_.Scalar], aten.add.out,
        operands=_binary(ADD), dtypes=dtypes_of(ADD), params=_alpha)
_family([aten.sub.Tensor, aten.sub.Scalar], [aten.sub_.Tensor, aten.sub_.Scalar], aten.sub.out,
        operands=_binary(SUB), dtypes=dtypes_of(SUB), params=_alpha)
_family([aten.mul.Tensor, aten.mul.Scalar], [aten.mul_.Tensor, aten.mul_.Scalar], aten.mul.out,
        operands=_binary(MUL), dtypes=dtypes_of(MUL))
_family([aten.div.Tensor, aten.div.Scalar], [aten.div_.Tensor, aten.div_.Scalar], aten.div.out,
        operands=_binary(DIV), dtypes=dtypes_of(DIV))

# div with rounding_mode: None is plain division; 'trunc' truncates repmode's correctly rounded
# quotient (float) or is torch's exact integer division; 'floor' on floats is torch's
# floor_divide sequence (not floor(a / b): it corrects toward the floor of the exact quotient,
# csrc/common/elementwise.h floor_divide), on integers torch's exact integer division.
_DIV_MODE = {aten.div.Tensor_mode: aten.div.Tensor, aten.div.Scalar_mode: aten.div.Scalar,
             aten.div_.Tensor_mode: aten.div_.Tensor, aten.div_.Scalar_mode: aten.div_.Scalar}


@register_composite(list(_DIV_MODE), dtypes=dtypes_of(DIV))
def div_rounding_mode(func, args, kwargs):
    a, b = args[0], args[1]
    mode = kwargs.get("rounding_mode", args[2] if len(args) > 2 else None)
    if mode is None:
        return call_registered(_DIV_MODE[func], a, b)
    integral = not a.is_floating_point() and not a.is_complex() and not (
        isinstance(b, Tensor) and (b.is_floating_point() or b.is_complex())) and not isinstance(b, float)
    if integral:
        return run_native(func, args, kwargs)  # integer division: exact
    if mode == "trunc":
        quotient = call_registered(_DIV_MODE[func], a, b)  # a fresh tensor, or a itself (in place)
        if quotient.dtype in LOW_PRECISION:
            # trunc of the rounded quotient (torch's bf16/fp16 values), taken in float32 (exact) so
            # that a NaN stays the canonical pattern (torch's bf16 trunc rewrites it as 0xFFFF)
            truncated = round_to(call_registered(aten.trunc.default, quotient.to(torch.float32)), quotient.dtype)
            return quotient.copy_(truncated) if quotient is a else truncated
        return call_registered(aten.trunc_.default, quotient)
    if mode == "floor":
        return elementwise(FLOOR_DIVIDE, func, args, kwargs, a, b, inplace=func in (aten.div_.Tensor_mode,
                                                                                    aten.div_.Scalar_mode))
    raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                       f"'{mode}'")


# rsub(self, other, alpha) = other - alpha * self
_family([aten.rsub.Tensor, aten.rsub.Scalar],
        operands=lambda func, args, kwargs: (SUB, args[1] if isinstance(args[1], Tensor)
                                       else torch.scalar_tensor(args[1], dtype=torch.result_type(args[0], args[1])),
                                       args[0], None), dtypes=dtypes_of(SUB), params=_alpha)

# One-operand ops with functional / in-place / out= overloads.
_family(aten.neg.default, aten.neg_.default, aten.neg.out, operands=_unary(NEG), dtypes=dtypes_of(NEG))
_family(aten.exp.default, aten.exp_.default, aten.exp.out, operands=_unary(EXP), dtypes=dtypes_of(EXP))
_family(aten.log.default, aten.log_.default, aten.log.out, operands=_unary(LOG), dtypes=dtypes_of(LOG))
_family(aten.abs.default, aten.abs_.default, aten.abs.out, operands=_unary(ABS), dtypes=dtypes_of(ABS))
_family(aten.log1p.default, aten.log1p_.default, aten.log1p.out, operands=_unary(LOG1P), dtypes=dtypes_of(LOG1P))
_family(aten.expm1.default, aten.expm1_.default, aten.expm1.out, operands=_unary(EXPM1), dtypes=dtypes_of(EXPM1))
_family(aten.log2.default, aten.log2_.default, aten.log2.out, operands=_unary(LOG2), dtypes=dtypes_of(LOG2))
_family(aten.exp2.default, aten.exp2_.default, aten.exp2.out, operands=_unary(EXP2), dtypes=dtypes_of(EXP2))
_family(aten.tanh.default, aten.tanh_.default, aten.tanh.out, operands=_unary(TANH), dtypes=dtypes_of(TANH))
_family(aten.sigmoid.default, aten.sigmoid_.default, aten.sigmoid.out, operands=_unary(SIGMOID),
        dtypes=dtypes_of(SIGMOID))
_family(aten.erf.default, aten.erf_.default, aten.erf.out, operands=_unary(ERF), dtypes=dtypes_of(ERF))
_family(aten.erfc.default, aten.erfc_.default, aten.erfc.out, operands=_unary(ERFC), dtypes=dtypes_of(ERFC))
_family(aten.sin.default, aten.sin_.default, aten.sin.out, operands=_unary(SIN), dtypes=dtypes_of(SIN))
_family(aten.cos.default, aten.cos_.default, aten.cos.out, operands=_unary(COS), dtypes=dtypes_of(COS))
_family(aten.rsqrt.default, aten.rsqrt_.default, aten.rsqrt.out, operands=_unary(RSQRT), dtypes=dtypes_of(RSQRT))
_family(aten.sqrt.default, aten.sqrt_.default, aten.sqrt.out, operands=_unary(SQRT), dtypes=dtypes_of(SQRT))
_family(aten.reciprocal.default, aten.reciprocal_.default, aten.reciprocal.out, operands=_unary(RECIPROCAL),
        dtypes=dtypes_of(RECIPROCAL))
_family(aten.sign.default, aten.sign_.default, aten.sign.out, operands=_unary(SIGN), dtypes=dtypes_of(SIGN))
_family(aten.sgn.default, aten.sgn_.default, aten.sgn.out, operands=_unary(SIGN), dtypes=dtypes_of(SIGN))
_family(aten.silu.default, aten.silu_.default, aten.silu.out, operands=_unary(SILU), dtypes=dtypes_of(SILU))
_family(aten.mish.default, aten.mish_.default, aten.mish.out, operands=_unary(MISH), dtypes=dtypes_of(MISH))

_family(aten.relu.default, aten.relu_.default, operands=_unary(RELU),
        dtypes=dtypes_of(RELU))

# pow: x ** y correctly rounded for float32 (so x ** 2 == x * x and x ** 0.5 == sqrt(x) bit for bit).
# A Python exponent 2 (x.square(), x ** 2) on float32/bf16/fp16 therefore runs as the one
# rounding of x * x: the same bits as the pow routine, at the price of a multiply. (float64 pow
# is not correctly rounded, so it keeps the pow routine.)
_SQUARE_BY_PRODUCT = (torch.float32, torch.bfloat16, torch.float16)


def _pow_operands(func, args, kwargs):
    x, y = args[0], args[1]
    if (type(y) is int or type(y) is float) and y == 2 and isinstance(x, Tensor) and x.dtype in _SQUARE_BY_PRODUCT:
        return MUL, x, x, None
    return POW, x, y, None


_family([aten.pow.Tensor_Tensor, aten.pow.Tensor_Scalar], [aten.pow_.Tensor, aten.pow_.Scalar],
        [aten.pow.Tensor_Tensor_out, aten.pow.Tensor_Scalar_out], operands=_pow_operands, dtypes=dtypes_of(POW, MUL))


@register_kernel(aten.pow.Scalar, dtypes_of(POW), out=aten.pow.Scalar_out)
def pow_scalar_base(func, args, kwargs):
    base, exponent = args
    dtype = torch.result_type(base, exponent)
    if not dtype.is_floating_point:
        return run_native(func, args, kwargs)
    base = torch.full_like(exponent, base, dtype=dtype) if isinstance(exponent, Tensor) else base
    return elementwise(POW, func, args, kwargs, base, exponent)

# minimum / maximum (IEEE 754-2019: NaN wins, -0 < +0).
_family(aten.minimum.default, None, aten.minimum.out, operands=_binary(MINIMUM),
        dtypes=dtypes_of(MINIMUM))
_family(aten.maximum.default, None, aten.maximum.out, operands=_binary(MAXIMUM),
        dtypes=dtypes_of(MAXIMUM))


# clamp(x, lo, hi) = minimum(maximum(x, lo), hi); a missing bound is -inf / +inf.
def _bound(x, default):
    return default if x is None else x


def _clamp_operands(func, args, kwargs):
    x = args[0]
    lo, hi = param(func, args, kwargs, "min"), param(func, args, kwargs, "max")
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(x, Tensor) and not x.is_floating_point() and not x.is_complex() and x.dtype != torch.bool:
        # A missing bound must not promote an integer input: use the dtype's own range.
        info = torch.iinfo(x.dtype)
        return CLAMP, x, _bound(lo, info.min), _bound(hi, info.max)
    return CLAMP, x, _bound(lo, -math.inf), _bound(hi, math.inf)


_family([aten.clamp.default, aten.clamp.Tensor], [aten.clamp_.default, aten.clamp_.Tensor],
        [aten.clamp.out, aten.clamp.Tensor_out], operands=_clamp_operands, dtypes=dtypes_of(CLAMP))
_family([aten.clamp_min.default, aten.clamp_min.Tensor], [aten.clamp_min_.default, aten.clamp_min_.Tensor],
        [aten.clamp_min.out, aten.clamp_min.Tensor_out],
        operands=_binary(MAXIMUM), dtypes=dtypes_of(MAXIMUM))
_family([aten.clamp_max.default, aten.clamp_max.Tensor], [aten.clamp_max_.default, aten.clamp_max_.Tensor],
        [aten.clamp_max.out, aten.clamp_max.Tensor_out],
        operands=_binary(MINIMUM), dtypes=dtypes_of(MINIMUM))
_family(aten.hardtanh.default, aten.hardtanh_.default, aten.hardtanh.out,
        operands=lambda func, args, kwargs: (CLAMP, args[0], param(func, args, kwargs, "min_val"),
                                       param(func, args, kwargs, "max_val")), dtypes=dtypes_of(CLAMP))

# Activations with number arguments (p0, p1, p2).
_family(aten.leaky_relu.default, aten.leaky_relu_.default, aten.leaky_relu.out,
        operands=_unary(LEAKY_RELU), dtypes=dtypes_of(LEAKY_RELU),
        params=lambda func, args, kwargs: (param(func, args, kwargs, "negative_slope"),))
_family(aten.elu.default, aten.elu_.default, aten.elu.out,
        operands=_unary(ELU), dtypes=dtypes_of(ELU),
        params=lambda func, args, kwargs: (param(func, args, kwargs, "alpha"), param(func, args, kwargs, "scale"),
                                     param(func, args, kwargs, "input_scale")))
_family(aten.softplus.default, None, aten.softplus.out,
        operands=_unary(SOFTPLUS), dtypes=dtypes_of(SOFTPLUS),
        params=lambda func, args, kwargs: (param(func, args, kwargs, "beta"), param(func, args, kwargs, "threshold")))


def _gelu_op(func, args, kwargs, approximate_op, exact_op):
    approximate = param(func, args, kwargs, "approximate")
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")
    return approximate_op if approximate == "tanh" else exact_op


_family(aten.gelu.default, aten.gelu_.default, aten.gelu.out,
        operands=lambda func, args, kwargs: (_gelu_op(func, args, kwargs, GELU_TANH, GELU), args[0], None, None),
        dtypes=dtypes_of(GELU_TANH, GELU))

# Backward formulas: (grad, input or result) -> grad_input.
_family(aten.threshold_backward.default, None, aten.threshold_backward.grad_input,
        operands=_binary(THRESHOLD_BACKWARD),
        dtypes=dtypes_of(THRESHOLD_BACKWARD),
        params=lambda func, args, kwargs: (args[2],))
_family(aten.leaky_relu_backward.default, None, aten.leaky_relu_backward.grad_input,
        operands=_binary(LEAKY_RELU_BACKWARD),
        dtypes=dtypes_of(LEAKY_RELU_BACKWARD),
        params=lambda func, args, kwargs: (args[2],))
_family(aten.hardtanh_backward.default, None, aten.hardtanh_backward.grad_input,
        operands=_binary(HARDTANH_BACKWARD),
        dtypes=dtypes_of(HARDTANH_BACKWARD),
        params=lambda func, args, kwargs: (args[2], args[3]))
# elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result)
_family(aten.elu_backward.default, None, aten.elu_backward.grad_input,
        operands=lambda func, args, kwargs: (ELU_BACKWARD_RESULT if args[4] else ELU_BACKWARD_INPUT, args[0], args[5],
                                             None),
        dtypes=dtypes_of(ELU_BACKWARD_RESULT, ELU_BACKWARD_INPUT),
        params=lambda func, args, kwargs: (args[1], args[2], args[3]))
_family(aten.gelu_backward.default, None, aten.gelu_backward.grad_input,
        operands=lambda func, args, kwargs: (_gelu_op(func, args, kwargs, GELU_TANH_BACKWARD, GELU_BACKWARD), args[0],
                                             args[1], None),
        dtypes=dtypes_of(GELU_TANH_BACKWARD, GELU_BACKWARD))
_family(aten.silu_backward.default, None, aten.silu_backward.grad_input,
        operands=_binary(SILU_BACKWARD), dtypes=dtypes_of(SILU_BACKWARD))
_family(aten.mish_backward.default, None, None,
        operands=_binary(MISH_BACKWARD), dtypes=dtypes_of(MISH_BACKWARD))
_family(aten.softplus_backward.default, None, aten.softplus_backward.grad_input,
        operands=_binary(SOFTPLUS_BACKWARD),
        dtypes=dtypes_of(SOFTPLUS_BACKWARD),
        params=lambda func, args, kwargs: (args[2], args[3]))
_family(aten.tanh_backward.default, None, aten.tanh_backward.grad_input,
        operands=_binary(TANH_BACKWARD), dtypes=dtypes_of(TANH_BACKWARD))
_family(aten.sigmoid_backward.default, None, aten.sigmoid_backward.grad_input,
        operands=_binary(SIGMOID_BACKWARD),
        dtypes=dtypes_of(SIGMOID_BACKWARD))

# Three-operand ops.
_family(aten.addcmul.default, aten.addcmul_.default, aten.addcmul.out,
        operands=lambda func, args, kwargs: (ADDCMUL, args[0], args[1], args[2]), dtypes=dtypes_of(ADDCMUL),
        params=lambda func, args, kwargs: (param(func, args, kwargs, "value"),))
_family(aten.addcdiv.default, aten.addcdiv_.default, aten.addcdiv.out,
        operands=lambda func, args, kwargs: (ADDCDIV, args[0], args[1], args[2]), dtypes=dtypes_of(ADDCDIV),
        params=lambda func, args, kwargs: (param(func, args, kwargs, "value"),))
_family([aten.lerp.Scalar, aten.lerp.Tensor], [aten.lerp_.Scalar, aten.lerp_.Tensor],
        [aten.lerp.Scalar_out, aten.lerp.Tensor_out],
        operands=lambda func, args, kwargs: (LERP, args[0], args[1], args[2]), dtypes=dtypes_of(LERP))

register_passthrough([aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar, aten.where.self_out],
                     reason="selection: each output is one input element or the given value, no arithmetic")
