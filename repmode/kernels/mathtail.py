"""The math long tail (issue 26): inverse trigonometric functions (``atan``, ``atan2``, ``asin``,
``acos``; csrc/common/math_atan.h), hyperbolic functions (``sinh``, ``cosh``, ``asinh``, ``acosh``,
``atanh``), ``tan`` and ``log10`` (csrc/common/math_tail.h), over repmode's own routines: correctly
rounded in float32, fixed sequences within the bounds of docs/math.md in float64. One elementwise
op code each (csrc/common/elementwise.h, codes 80-99); bf16/fp16 are widened to float32 and the
float32 result rounded once; integer inputs give the default float dtype, as in torch. Backward
passes are torch's formulas over registered ops (atan: grad / (1 + x^2); asin/acos: grad *
rsqrt(1 - x^2); atan2: grad * x / (x^2 + y^2) and -grad * y / (x^2 + y^2); sinh/cosh: grad *
cosh/sinh; tan: grad * (1 + tan^2); log10: grad / (x ln 10); asinh/acosh: grad * rsqrt(x^2 +- 1);
atanh: grad / (1 - x^2)). The proofs: docs/math.md, "The math long tail"."""
from __future__ import annotations

import torch

from .. import _ext
from .elementwise import _family as _elementwise_family
from .elementwise import dtypes_of

aten = torch.ops.aten

_EW = _ext.codes("EwOp")
ATAN, ATAN2, ASIN, ACOS = (_EW[n] for n in ("ATAN", "ATAN2", "ASIN", "ACOS"))
SINH, COSH, TAN, LOG10, ASINH, ACOSH, ATANH = (_EW[n] for n in ("SINH", "COSH", "TAN", "LOG10", "ASINH", "ACOSH",
                                                                "ATANH"))


def _family(*overloads, **how):
    _elementwise_family(*overloads, module=__name__, **how)


def _unary(op):
    return lambda func, args, kwargs: (op, args[0], None, None)


def _binary(op):
    return lambda func, args, kwargs: (op, args[0], args[1], None)


_family(aten.atan.default, aten.atan_.default, aten.atan.out, operands=_unary(ATAN), dtypes=dtypes_of(ATAN))
_family(aten.asin.default, aten.asin_.default, aten.asin.out, operands=_unary(ASIN), dtypes=dtypes_of(ASIN))
_family(aten.acos.default, aten.acos_.default, aten.acos.out, operands=_unary(ACOS), dtypes=dtypes_of(ACOS))
_family(aten.atan2.default, aten.atan2_.default, aten.atan2.out, operands=_binary(ATAN2), dtypes=dtypes_of(ATAN2))

# hyperbolic functions, tan and log10 (csrc/common/math_tail.h)
_family(aten.sinh.default, aten.sinh_.default, aten.sinh.out, operands=_unary(SINH), dtypes=dtypes_of(SINH))
_family(aten.cosh.default, aten.cosh_.default, aten.cosh.out, operands=_unary(COSH), dtypes=dtypes_of(COSH))
_family(aten.tan.default, aten.tan_.default, aten.tan.out, operands=_unary(TAN), dtypes=dtypes_of(TAN))
_family(aten.log10.default, aten.log10_.default, aten.log10.out, operands=_unary(LOG10), dtypes=dtypes_of(LOG10))
_family(aten.asinh.default, aten.asinh_.default, aten.asinh.out, operands=_unary(ASINH), dtypes=dtypes_of(ASINH))
_family(aten.acosh.default, aten.acosh_.default, aten.acosh.out, operands=_unary(ACOSH), dtypes=dtypes_of(ACOSH))
_family(aten.atanh.default, aten.atanh_.default, aten.atanh.out, operands=_unary(ATANH), dtypes=dtypes_of(ATANH))
