"""More elementwise functions, and the reductions built from them: exact ops (``copysign``,
``fmod``, ``remainder``, ``floor_divide`` and ``div(rounding_mode='floor')``, ``fmax``/``fmin``,
``heaviside``, ``nextafter``, ``frac``, ``nan_to_num``, ``round(decimals=)``, ``frexp``,
``ldexp``, ``deg2rad``/``rad2deg``, ``signbit``) and formulas over repmode's math routines
(``logaddexp``, ``logaddexp2``, ``logit``, ``xlog1py``, ``sinc``, ``hypot``), then ``nansum``,
``dist``, ``renorm`` and ``linalg_cross``. Per-element formulas: csrc/common/elementwise.h and
csrc/common/math_exact.h; their roundings: docs/semantics.md ("More elementwise functions")."""
from __future__ import annotations

import math

import torch

from .. import _ext
from ..registry import register_composite, register_kernel, register_passthrough
from ._common import (
    FLOAT_WIDENED,
    FLOAT_WIDENED_INT,
    LOW_PRECISION,
    call_registered,
    named_arguments,
    normalize_dims,
    param,
    round_to,
    run_native,
    unsupported,
)
from .elementwise import _family as _elementwise_family
from .elementwise import dtypes_of, elementwise

aten = torch.ops.aten
Tensor = torch.Tensor

_EW = _ext.codes("EwOp")
(COPYSIGN, FMOD, REMAINDER, FLOOR_DIVIDE, FMAX, FMIN, HEAVISIDE, NEXTAFTER, FRAC, NAN_TO_NUM, ROUND_DECIMALS,
 FREXP_MANTISSA, FREXP_EXPONENT, LOGADDEXP, LOGADDEXP2, LOGIT, LOGIT_BACKWARD, XLOG1PY, SINC, HYPOT, LDEXP) = (
    _EW[n] for n in ("COPYSIGN", "FMOD", "REMAINDER", "FLOOR_DIVIDE", "FMAX", "FMIN", "HEAVISIDE", "NEXTAFTER",
                     "FRAC", "NAN_TO_NUM", "ROUND_DECIMALS", "FREXP_MANTISSA", "FREXP_EXPONENT", "LOGADDEXP",
                     "LOGADDEXP2", "LOGIT", "LOGIT_BACKWARD", "XLOG1PY", "SINC", "HYPOT", "LDEXP"))


def _family(*overloads, **how):
    _elementwise_family(*overloads, module=__name__, **how)


def _binary(op):
    return lambda func, args, kwargs: (op, args[0], args[1], None)


def _unary(op):
    return lambda func, args, kwargs: (op, args[0], None, None)


def _is_integral(x) -> bool:
    if isinstance(x, Tensor):
        return not x.is_floating_point() and not x.is_complex()
    return isinstance(x, (bool, int))


# ---- exact ops --------------------------------------------------------------------------------

# copysign: |a| with b's sign (integers promote to the default float dtype, as in torch).
_family([aten.copysign.Tensor, aten.copysign.Scalar], [aten.copysign_.Tensor, aten.copysign_.Scalar],
        [aten.copysign.out, aten.copysign.Scalar_out], operands=_binary(COPYSIGN), dtypes=dtypes_of(COPYSIGN))

# fmod / remainder / floor_divide: exact integer arithmetic natively on integers; on floats the
# exact fmod and torch's fixed sequences around it.
_family([aten.fmod.Tensor, aten.fmod.Scalar], [aten.fmod_.Tensor, aten.fmod_.Scalar],
        [aten.fmod.Tensor_out, aten.fmod.Scalar_out], operands=_binary(FMOD), dtypes=dtypes_of(FMOD))
_family([aten.remainder.Tensor, aten.remainder.Scalar], [aten.remainder_.Tensor, aten.remainder_.Scalar],
        [aten.remainder.Tensor_out, aten.remainder.Scalar_out], operands=_binary(REMAINDER),
        dtypes=dtypes_of(REMAINDER))
_family([aten.floor_divide.default, aten.floor_divide.Scalar],
        [aten.floor_divide_.Tensor, aten.floor_divide_.Scalar], [aten.floor_divide.out, aten.floor_divide.Scalar_out],
        operands=_binary(FLOOR_DIVIDE), dtypes=dtypes_of(FLOOR_DIVIDE))


@register_kernel(aten.remainder.Scalar_Tensor, dtypes_of(REMAINDER), out=aten.remainder.Scalar_Tensor_out)
def remainder_scalar_self(func, args, kwargs):
    """remainder(number, tensor): the number as a 0-dim tensor of the result dtype (exact: torch
    converts it the same way)."""
    x, other = args
    if _is_integral(x) and _is_integral(other):
        return run_native(func, args, kwargs)
    base = torch.scalar_tensor(x, dtype=torch.result_type(x, other))
    return elementwise(REMAINDER, func, args, kwargs, base.expand(other.shape), other)


_family([aten.fmax.default], None, aten.fmax.out, operands=_binary(FMAX), dtypes=dtypes_of(FMAX))
_family([aten.fmin.default], None, aten.fmin.out, operands=_binary(FMIN), dtypes=dtypes_of(FMIN))


def _heaviside_operands(func, args, kwargs):
    x, values = args[0], args[1]
    if isinstance(values, Tensor) and x.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    return HEAVISIDE, x, values, None


_family(aten.heaviside.default, aten.heaviside_.default, aten.heaviside.out, operands=_heaviside_operands,
        dtypes=dtypes_of(HEAVISIDE))
_LOW_NAN = {torch.bfloat16: 0x7FC0, torch.float16: 0x7E00}


def _nextafter_low(a: Tensor, b: Tensor) -> Tensor:
    """nextafter in bf16/fp16 itself (a step of the dtype's own spacing, so not widened): the same
    rule as csrc/common/math_exact.h nextafter_of, on the 16-bit patterns with exact integer
    steps and selections."""
    a, b = torch.broadcast_tensors(a, b)
    u = a.view(torch.int16)
    away = (a < b) == (a > 0)  # |a| grows
    stepped = torch.where(away, u + 1, u - 1)
    from_zero = torch.where(torch.signbit(b), torch.tensor(-0x7FFF, dtype=torch.int16),  # 0x8001: -(smallest)
                            torch.tensor(1, dtype=torch.int16))
    out = torch.where(a == 0, from_zero, stepped)
    out = torch.where(a == b, b.view(torch.int16), out)
    out = torch.where(torch.isnan(a) | torch.isnan(b), torch.tensor(_LOW_NAN[a.dtype], dtype=torch.int16), out)
    return out.view(a.dtype)


def _nextafter(func, args, kwargs, inplace):
    a, b = args[0], args[1]
    if isinstance(b, Tensor) and a.dtype in LOW_PRECISION and b.dtype == a.dtype:
        result = _nextafter_low(a, b)
        return a.copy_(result) if inplace else result
    return elementwise(NEXTAFTER, func, args, kwargs, a, b, inplace=inplace)


@register_kernel(aten.nextafter.default, dtypes_of(NEXTAFTER), out=aten.nextafter.out)
def nextafter(func, args, kwargs):
    return _nextafter(func, args, kwargs, False)


@register_kernel(aten.nextafter_.default, dtypes_of(NEXTAFTER))
def nextafter_(func, args, kwargs):
    return _nextafter(func, args, kwargs, True)
_family(aten.frac.default, aten.frac_.default, aten.frac.out, operands=_unary(FRAC), dtypes=dtypes_of(FRAC))


def _value_in(value: float, dtype: torch.dtype) -> float:
    """``value`` as torch's kernels convert a double to ``dtype``: one rounding for float32 and
    float64; via float32 for bf16/fp16 (c10's BFloat16/Half are built from a float)."""
    if dtype in LOW_PRECISION:
        return torch.tensor(value, dtype=torch.float32).to(dtype).item()
    return torch.tensor(value, dtype=dtype).item()


def _nan_to_num_params(func, args, kwargs):
    x = args[0]
    nan, posinf, neginf = (param(func, args, kwargs, n) for n in ("nan", "posinf", "neginf"))
    info = torch.finfo(x.dtype)
    return (_value_in(0.0 if nan is None else nan, x.dtype), info.max if posinf is None else _value_in(posinf, x.dtype),
            info.min if neginf is None else _value_in(neginf, x.dtype))


def _nan_to_num(func, args, kwargs, inplace):
    x = args[0]
    if _is_integral(x):
        return run_native(func, args, kwargs)  # integers hold no NaN or infinity: a copy
    return elementwise(NAN_TO_NUM, func, args, kwargs, x, params=_nan_to_num_params(func, args, kwargs),
                       inplace=inplace)


@register_kernel(aten.nan_to_num.default, FLOAT_WIDENED_INT, out=aten.nan_to_num.out)
def nan_to_num(func, args, kwargs):
    return _nan_to_num(func, args, kwargs, False)


@register_kernel(aten.nan_to_num_.default, FLOAT_WIDENED_INT)
def nan_to_num_(func, args, kwargs):
    return _nan_to_num(func, args, kwargs, True)


# 10^23 lies exactly halfway between two doubles; glibc's pow (torch's std::pow) returns the upper
# one, not the even one Python's int -> float conversion picks. It is the only power of ten that is
# a tie (5^d has more than 54 bits from d = 24 on).
_POW10_TIES = {23: float.fromhex("0x1.52d02c7e14af7p+76")}


def _round_decimals(func, args, kwargs, inplace):
    x = args[0]
    decimals = param(func, args, kwargs, "decimals")
    if _is_integral(x):
        return run_native(func, args, kwargs)  # torch's own rule (it refuses integer tensors)
    # 10^|d| as torch computes it (std::pow(10, |d|) in double: exact up to 10^22, the nearest double
    # beyond, inf past 10^308), then rounded to the compute type by the kernel. decimals=0 gives
    # round(a * 1) / 1 = round(a), the same values as round() (with the canonical NaN for bf16/fp16).
    exponent = abs(int(decimals))
    power = math.inf if exponent > 308 else _POW10_TIES.get(exponent, float(10 ** exponent))
    return elementwise(ROUND_DECIMALS, func, args, kwargs, x, params=(power, 1.0 if decimals < 0 else 0.0),
                       inplace=inplace)


@register_kernel(aten.round.decimals, FLOAT_WIDENED_INT, out=aten.round.decimals_out)
def round_decimals(func, args, kwargs):
    return _round_decimals(func, args, kwargs, False)


@register_kernel(aten.round_.decimals, FLOAT_WIDENED_INT)
def round_decimals_(func, args, kwargs):
    return _round_decimals(func, args, kwargs, True)


@register_kernel(aten.frexp.Tensor, FLOAT_WIDENED, out=aten.frexp.Tensor_out)
def frexp(func, args, kwargs):
    """(mantissa, exponent): both exact (csrc/common/math_exact.h frexp_mantissa_of); the
    exponent is computed as a value of the dtype (a small integer, exact) and converted to int32."""
    x = args[0]
    if not x.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa = elementwise(FREXP_MANTISSA, func, args, kwargs, x)
    wide = x.to(torch.float32) if x.dtype in LOW_PRECISION else x  # exact; the exponent stays unrounded
    exponent = elementwise(FREXP_EXPONENT, func, args, kwargs, wide)
    return mantissa, exponent.to(torch.int32)


def _ldexp(func, args, kwargs, inplace):
    """An integer exponent tensor: x * 2^e rounded once (exact in range; csrc/common/math_exact.h
    ldexp_of), as torch's ldexp kernel for integral exponents; integer x first converted to the
    default dtype. A floating exponent: torch's definition x * 2 ** e (repmode's pow and mul)."""
    x, e = args[0], args[1]
    if isinstance(e, Tensor) and e.dtype == torch.bool:
        return run_native(func, args, kwargs)  # torch refuses bool exponents: its error
    if isinstance(e, Tensor) and _is_integral(e):
        if _is_integral(x) and not inplace:
            x = x.to(torch.get_default_dtype())  # exact for |x| < 2^24, else torch's own conversion
        return elementwise(LDEXP, func, args, kwargs, x, e, inplace=inplace)
    power = call_registered(aten.pow.Scalar, 2.0, e)
    return call_registered(aten.mul_.Tensor if inplace else aten.mul.Tensor, x, power)


@register_kernel([aten.ldexp.Tensor], FLOAT_WIDENED_INT, out=aten.ldexp.out)
def ldexp(func, args, kwargs):
    return _ldexp(func, args, kwargs, False)


@register_kernel([aten.ldexp_.default], FLOAT_WIDENED)
def ldexp_(func, args, kwargs):
    return _ldexp(func, args, kwargs, True)


# deg2rad / rad2deg: torch's definition, one multiplication by the double constant rounded to
# the compute type (integers first converted to the default dtype).
_DEG2RAD = 0.017453292519943295769236907684886127134428718885417
_RAD2DEG = 57.295779513082320876798154814105170332405472466564


def _angle(factor, inplace):
    def run(func, args, kwargs):
        x = args[0]
        if x.is_complex():
            raise RuntimeError(f"{func.__name__.split('.')[0]} is not supported for complex tensors.")
        if inplace:
            return call_registered(aten.mul_.Tensor, x, factor)
        if _is_integral(x):
            x = x.to(torch.get_default_dtype())  # exact conversion, as torch's result dtype
        return call_registered(aten.mul.Tensor, x, factor)
    run.__module__ = __name__
    return run


register_composite(aten.deg2rad.default, FLOAT_WIDENED_INT, out=aten.deg2rad.out)(_angle(_DEG2RAD, False))
register_composite(aten.deg2rad_.default, FLOAT_WIDENED)(_angle(_DEG2RAD, True))
register_composite(aten.rad2deg.default, FLOAT_WIDENED_INT, out=aten.rad2deg.out)(_angle(_RAD2DEG, False))
register_composite(aten.rad2deg_.default, FLOAT_WIDENED)(_angle(_RAD2DEG, True))

# angle of a real tensor: torch's definition, pi (rounded to the result dtype) where x < 0, else 0,
# and NaN where x is NaN (the canonical NaN; integers first converted to the default dtype).
@register_composite(aten.angle.default, FLOAT_WIDENED_INT, out=aten.angle.out)
def angle(func, args, kwargs):
    x = args[0]
    if x.is_complex():
        raise RuntimeError("repmode supports angle for real tensors only")
    if _is_integral(x):
        x = x.to(torch.get_default_dtype())  # exact conversion, as torch's result dtype
    pi = torch.full_like(x, math.pi, memory_format=torch.contiguous_format)  # pi rounded once to x's dtype
    res = call_registered(aten.where.ScalarOther, call_registered(aten.lt.Scalar, x, 0), pi, 0.0)
    return call_registered(aten.where.ScalarSelf, call_registered(aten.isnan.default, x), math.nan, res)


# allclose: isclose(self, other).all() with isclose's own decomposition (torch's order of single
# IEEE operations: allowed = |other·rtol| + atol, actual = |self − other|, each rounded once).
@register_composite(aten.allclose.default, FLOAT_WIDENED_INT)
def allclose(func, args, kwargs):
    a, b = args[0], args[1]
    rtol, atol, equal_nan = (param(func, args, kwargs, n) for n in ("rtol", "atol", "equal_nan"))
    if a.dtype != b.dtype:
        raise RuntimeError(f"{a.dtype} did not match {b.dtype}")
    close = call_registered(aten.eq.Tensor, a, b)
    if equal_nan and a.is_floating_point():
        both = call_registered(aten.bitwise_and.Tensor, call_registered(aten.isnan.default, a),
                               call_registered(aten.isnan.default, b))
        close = call_registered(aten.bitwise_or.Tensor, close, both)
    if rtol != 0 or atol != 0:
        allowed = call_registered(aten.add.Scalar, call_registered(aten.abs.default,
                                                                   call_registered(aten.mul.Scalar, b, rtol)), atol)
        actual = call_registered(aten.abs.default, call_registered(aten.sub.Tensor, a, b))
        finite = call_registered(aten.bitwise_and.Tensor, call_registered(aten.ne.Scalar, actual, math.inf),
                                 call_registered(aten.eq.Tensor, actual, actual))
        within = call_registered(aten.bitwise_and.Tensor, finite, call_registered(aten.le.Tensor, actual, allowed))
        close = call_registered(aten.bitwise_or.Tensor, close, within)
    return bool(call_registered(aten.all.default, close).item())


register_passthrough([aten.signbit.default, aten.signbit.out],
                     reason="IEEE-754 sign-bit test: exact, bool result")


# ---- formulas over repmode's math routines (float64, rounded once) ------------------------------

_family(aten.logaddexp.default, None, aten.logaddexp.out, operands=_binary(LOGADDEXP), dtypes=dtypes_of(LOGADDEXP))
_family(aten.logaddexp2.default, None, aten.logaddexp2.out, operands=_binary(LOGADDEXP2),
        dtypes=dtypes_of(LOGADDEXP2))
_family(aten.hypot.default, aten.hypot_.default, aten.hypot.out, operands=_binary(HYPOT), dtypes=dtypes_of(HYPOT))
_family(aten.sinc.default, aten.sinc_.default, aten.sinc.out, operands=_unary(SINC), dtypes=dtypes_of(SINC))


def _xlog1py_operands(func, args, kwargs):
    x, y = args[0], args[1]
    if not isinstance(x, Tensor):  # self_scalar: the number as a 0-dim tensor (an exact conversion)
        x = torch.scalar_tensor(x, dtype=torch.result_type(x, y))
    return XLOG1PY, x, y, None


_family([aten.special_xlog1py.default, aten.special_xlog1py.other_scalar, aten.special_xlog1py.self_scalar], None,
        [aten.special_xlog1py.out, aten.special_xlog1py.other_scalar_out, aten.special_xlog1py.self_scalar_out],
        operands=_xlog1py_operands, dtypes=dtypes_of(XLOG1PY))


def _logit_params(x: Tensor, eps) -> tuple:
    """(lo, hi, clamp): eps and 1 - eps as torch's kernel has them (in the tensor's dtype)."""
    dtype = x.dtype if x.is_floating_point() else torch.get_default_dtype()
    if eps is None or eps != eps or eps < 0:
        return 0.0, 0.0, 0.0
    lo = _value_in(eps, dtype)
    hi = (torch.ones((), dtype=dtype) - torch.tensor(lo, dtype=dtype)).item()  # one rounding in the dtype
    return lo, hi, 1.0


def _logit(func, args, kwargs, inplace):
    x = args[0]
    return elementwise(LOGIT, func, args, kwargs, x, params=_logit_params(x, param(func, args, kwargs, "eps")),
                       inplace=inplace)


@register_kernel(aten.logit.default, dtypes_of(LOGIT), out=aten.logit.out)
def logit(func, args, kwargs):
    return _logit(func, args, kwargs, False)


@register_kernel(aten.logit_.default, FLOAT_WIDENED)
def logit_(func, args, kwargs):
    return _logit(func, args, kwargs, True)


@register_kernel(aten.logit_backward.default, dtypes_of(LOGIT_BACKWARD), out=aten.logit_backward.grad_input)
def logit_backward(func, args, kwargs):
    grad, x = args[0], args[1]
    return elementwise(LOGIT_BACKWARD, func, args, kwargs, grad, x,
                       params=_logit_params(x, param(func, args, kwargs, "eps")))


# ---- reductions and products built from registered ops ----------------------------------------------

@register_composite(aten.nansum.default, FLOAT_WIDENED_INT, out=aten.nansum.out)
def nansum(func, args, kwargs):
    """repmode's sum (its order over all positions) with every NaN replaced by +0 in place."""
    x = args[0]
    dim, keepdim, dtype = (param(func, args, kwargs, n) for n in ("dim", "keepdim", "dtype"))
    if x.is_floating_point():
        x = call_registered(aten.where.ScalarSelf, call_registered(aten.isnan.default, x), 0.0, x)
    elif x.is_complex():
        raise unsupported(func, args, kwargs, "complex numbers are not supported")
    return call_registered(aten.sum.dim_IntList, x, dim, keepdim, dtype=dtype)


@register_composite(aten.dist.default, FLOAT_WIDENED, out=aten.dist.out)
def dist(func, args, kwargs):
    """torch's definition: the p-norm of a - b (repmode's sub, then linalg.vector_norm's order)."""
    a, b = args[0], args[1]
    p = param(func, args, kwargs, "p")
    return call_registered(aten.linalg_vector_norm.default, call_registered(aten.sub.Tensor, a, b), float(p))


_NORMS = [aten.norm.Scalar, aten.norm.ScalarOpt_dim, aten.norm.ScalarOpt_dim_dtype, aten.norm.ScalarOpt_dtype]


@register_composite(_NORMS, FLOAT_WIDENED, out=[aten.norm.out, aten.norm.dtype_out, aten.norm.Scalar_out,
                                                aten.norm.ScalarOpt_dtype_out])
def norm(func, args, kwargs):
    """torch.norm on real tensors is linalg.vector_norm (torch's own implementation calls it): p
    None means 2, no dim means every element."""
    named = named_arguments(func, args, kwargs)
    x = named["self"]
    if x.is_complex():
        raise unsupported(func, args, kwargs, "complex numbers are not supported")
    p = named.get("p")
    return call_registered(aten.linalg_vector_norm.default, x, 2.0 if p is None else float(p), named.get("dim"),
                           named.get("keepdim", False), dtype=named.get("dtype"))


def _renorm(func, args, kwargs, inplace):
    """torch's renorm: per slice along dim, n = vector_norm(slice, p) (float32 for bf16/fp16),
    factor = n > maxnorm ? maxnorm / (n + 1e-7) : 1 (maxnorm and 1e-7 rounded to that type),
    rounded to the dtype, then x * factor (repmode's mul)."""
    x = args[0]
    p, dim, maxnorm = (param(func, args, kwargs, n) for n in ("p", "dim", "maxnorm"))
    if not x.is_floating_point():
        raise RuntimeError(f"renorm: expected a floating-point tensor, got {x.dtype}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if x.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.dim()} dimensions")
    dim = normalize_dims(dim, x.dim())[0]
    reduce_dims = [d for d in range(x.dim()) if d != dim]
    acc = torch.float32 if x.dtype in LOW_PRECISION else x.dtype
    norm = call_registered(aten.linalg_vector_norm.default, x, float(p), reduce_dims, True, dtype=acc)
    limit = _value_in(maxnorm, acc)
    denominator = call_registered(aten.add.Tensor, norm, 1e-7)
    scaled = call_registered(aten.div.Tensor, torch.full_like(norm, limit), denominator)
    factor = call_registered(aten.where.ScalarOther, call_registered(aten.gt.Scalar, norm, limit), scaled, 1.0)
    if factor.dtype != x.dtype:
        factor = round_to(factor, x.dtype)
    return call_registered(aten.mul_.Tensor if inplace else aten.mul.Tensor, x, factor)


@register_composite(aten.renorm.default, FLOAT_WIDENED, out=aten.renorm.out)
def renorm(func, args, kwargs):
    return _renorm(func, args, kwargs, False)


@register_composite(aten.renorm_.default, FLOAT_WIDENED)
def renorm_(func, args, kwargs):
    return _renorm(func, args, kwargs, True)


@register_composite(aten.linalg_cross.default, FLOAT_WIDENED_INT, out=aten.linalg_cross.out)
def linalg_cross(func, args, kwargs):
    """c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1} (indices mod 3). float32/bf16/fp16: in float64,
    where both products are exact, the difference rounded once there and once to the dtype;
    float64: RN(RN(a_{i+1} b_{i+2}) - RN(a_{i+2} b_{i+1})). Integers: exact, natively."""
    a, b = args[0], args[1]
    dim = param(func, args, kwargs, "dim")
    if a.dim() != b.dim():
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions, got {a.dim()} and "
                           f"{b.dim()}")
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[dim]} and "
                           f"{b.shape[dim]}")
    dtype = torch.result_type(a, b)
    if not dtype.is_floating_point:
        if dtype.is_complex:
            raise unsupported(func, args, kwargs, "complex numbers are not supported")
        return run_native(func, args, kwargs)  # integer products and differences: exact
    shape = torch.broadcast_shapes(a.shape, b.shape)
    wide = torch.float64
    a, b = a.to(wide).expand(shape), b.to(wide).expand(shape)  # exact widening
    d = dim % len(shape)
    parts = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        left = call_registered(aten.mul.Tensor, a.select(d, j), b.select(d, k))
        right = call_registered(aten.mul.Tensor, a.select(d, k), b.select(d, j))
        parts.append(call_registered(aten.sub.Tensor, left, right))
    out = torch.stack(parts, d)
    return out if dtype == wide else round_to(out, dtype)
