"""Special functions, the gamma and error-function half (issue 26): ``lgamma``, ``digamma``,
``polygamma``, ``mvlgamma``, ``erfinv``, ``special_zeta`` (Hurwitz), ``special_ndtri``,
``special_log_ndtr``, ``special_erfcx`` and ``special_entr`` over csrc/common/math_special.h: one
fixed double formula each (IEEE basic operations, explicit fma, repmode's own exp/log/sin/cos/
erf/erfc/pow), the float32 result rounded once from it (erfinv and ndtri: a cheaper double
formula for float32, a refined one for float64). One elementwise op code each
(csrc/common/elementwise.h, codes 91-100); bf16/fp16 are widened to float32 and the float32
result rounded once; integer inputs give the default float dtype, as in torch. ``special_gammaln``,
``special_psi``, ``special_digamma``, ``special_polygamma``, ``special_multigammaln`` and
``special_erfinv`` are CompositeImplicit aliases that decompose into these. Also ``igamma``/``igammac``
(``special.gammainc``/``gammaincc``) and ``special_airy_ai`` over csrc/common/math_igamma.h (codes 140-142).

Backward passes are torch's formulas (derivatives.yaml) over registered ops: lgamma: grad *
digamma(x); digamma: grad * polygamma(1, x); polygamma(n): grad * polygamma(n + 1, x); mvlgamma:
grad * sum_j digamma(x - j/2); erfinv: grad * sqrt(pi)/2 * exp(erfinv(x)^2); ndtri: grad *
sqrt(2 pi) * exp(ndtri(x)^2 / 2); log_ndtr: grad / sqrt(2 pi) * exp(-(log_ndtr(x) + x^2/2));
erfcx: grad * (2 x erfcx(x) - 2/sqrt(pi)); entr: grad * -(1 + log x); zeta (in q): grad * -x *
zeta(x + 1, q). Accuracy (max ulp against mpmath next to native torch's): docs/math.md,
"Special functions (gamma family)"."""
from __future__ import annotations

import torch

from .. import _ext
from ._common import FLOAT_ONLY, LOW_PRECISION, param, unsupported
from .elementwise import _family as _elementwise_family
from .elementwise import dtypes_of

aten = torch.ops.aten
Tensor = torch.Tensor

_EW = _ext.codes("EwOp")
LGAMMA, DIGAMMA, POLYGAMMA, MVLGAMMA, ERFINV, ZETA, NDTRI, LOG_NDTR, ERFCX, ENTR = (_EW[n] for n in (
    "LGAMMA", "DIGAMMA", "POLYGAMMA", "MVLGAMMA", "ERFINV", "ZETA", "NDTRI", "LOG_NDTR", "ERFCX", "ENTR"))
IGAMMA, IGAMMAC, AIRY_AI = _EW["IGAMMA"], _EW["IGAMMAC"], _EW["AIRY_AI"]


def _family(*overloads, **how):
    _elementwise_family(*overloads, module=__name__, **how)


def _unary(op):
    return lambda func, args, kwargs: (op, args[0], None, None)


def _unary_family(functional, inplace, out, op):
    _family(functional, inplace, out, operands=_unary(op), dtypes=dtypes_of(op))


_unary_family(aten.lgamma.default, aten.lgamma_.default, aten.lgamma.out, LGAMMA)
_unary_family(aten.digamma.default, aten.digamma_.default, aten.digamma.out, DIGAMMA)
_unary_family(aten.erfinv.default, aten.erfinv_.default, aten.erfinv.out, ERFINV)
_unary_family(aten.special_ndtri.default, None, aten.special_ndtri.out, NDTRI)
_unary_family(aten.special_log_ndtr.default, None, aten.special_log_ndtr.out, LOG_NDTR)
_unary_family(aten.special_erfcx.default, None, aten.special_erfcx.out, ERFCX)
_unary_family(aten.special_entr.default, None, aten.special_entr.out, ENTR)


# polygamma(int n, Tensor self); the in-place form is polygamma_(Tensor self, int n). n = 0 is digamma.
def _polygamma_operands(func, args, kwargs):
    n = param(func, args, kwargs, "n")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return (POLYGAMMA, param(func, args, kwargs, "self"), None, None)


def _polygamma_params(func, args, kwargs):
    return (float(param(func, args, kwargs, "n")),)


_family(aten.polygamma.default, aten.polygamma_.default, aten.polygamma.out, operands=_polygamma_operands,
        dtypes=dtypes_of(POLYGAMMA), params=_polygamma_params)


# mvlgamma(x, p) = sum_(j<p) lgamma(x - j/2) + p (p - 1)/4 log(pi), one element formula (MVLGAMMA).
def _mvlgamma_operands(func, args, kwargs):
    x = param(func, args, kwargs, "self")
    if isinstance(x, Tensor) and x.dtype == torch.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if param(func, args, kwargs, "p") < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return (MVLGAMMA, x, None, None)


def _mvlgamma_params(func, args, kwargs):
    return (float(param(func, args, kwargs, "p")),)


_family(aten.mvlgamma.default, aten.mvlgamma_.default, aten.mvlgamma.out, operands=_mvlgamma_operands,
        dtypes=dtypes_of(MVLGAMMA), params=_mvlgamma_params)


# special_zeta(x, q), Hurwitz: tensor-tensor, tensor-number and number-tensor forms. A number first
# operand becomes a 0-dim tensor of torch's result dtype (an exact conversion of the number rounded
# once to that dtype, as torch's wrapped-number promotion does).
def _zeta_operands(func, args, kwargs):
    x, q = param(func, args, kwargs, "self"), param(func, args, kwargs, "other")
    if not isinstance(x, Tensor):
        if not isinstance(q, Tensor):
            raise unsupported(func, args, kwargs, "special_zeta needs a tensor operand")
        dtype = torch.result_type(x, q)
        if not dtype.is_floating_point:
            dtype = torch.get_default_dtype()
        x = torch.tensor(x, dtype=dtype, device=q.device)
    return (ZETA, x, q, None)


for _functional, _out in ((aten.special_zeta.default, aten.special_zeta.out),
                          (aten.special_zeta.other_scalar, aten.special_zeta.other_scalar_out),
                          (aten.special_zeta.self_scalar, aten.special_zeta.self_scalar_out)):
    _family(_functional, None, _out, operands=_zeta_operands, dtypes=dtypes_of(ZETA))

# The regularized incomplete gamma functions igamma(a, x) = P(a, x) and igammac(a, x) = Q(a, x)
# (torch.special.gammainc/gammaincc decompose into them): tensor-tensor only, as in torch; the
# formulas in csrc/common/math_igamma.h (torch's regions, double-double prefactor and sums, Temme's
# expansion for a > 20, |x - a| < 0.3 a). Integer tensors are refused (torch has no integer kernel
# either). Backward is autograd's (derivatives.yaml): d/dx =
# +-grad * exp((a - 1) log x - x - lgamma(a)) through registered ops; d/da raises torch's own
# "not implemented" error.
def _igamma_operands(op):
    def operands(func, args, kwargs):
        a, x = param(func, args, kwargs, "self"), param(func, args, kwargs, "other")
        dtype = torch.result_type(a, x)
        if not dtype.is_floating_point:
            raise unsupported(func, args, kwargs, f"{dtype} operands: torch has no integer kernel for "
                              "igamma/igammac either (float32, float64, bfloat16 and float16 are supported)")
        return (op, a, x, None)
    return operands


_family(aten.igamma.default, aten.igamma_.default, aten.igamma.out, operands=_igamma_operands(IGAMMA),
        dtypes=dtypes_of(IGAMMA))
_family(aten.igammac.default, aten.igammac_.default, aten.igammac.out, operands=_igamma_operands(IGAMMAC),
        dtypes=dtypes_of(IGAMMAC))


# special_airy_ai(x): float32/float64 (integers give the default float dtype); torch has no bf16/fp16
# kernel, so those stay refused. No derivative in torch (non-differentiable), none here.
def _airy_operands(func, args, kwargs):
    x = param(func, args, kwargs, "x")
    if isinstance(x, Tensor) and x.dtype in LOW_PRECISION:
        raise unsupported(func, args, kwargs, f"{x.dtype} inputs: torch has no {x.dtype} kernel for airy_ai either "
                          "(float32 and float64 are supported; integers give the default float dtype)")
    return (AIRY_AI, x, None, None)


_family(aten.special_airy_ai.default, None, aten.special_airy_ai.out, operands=_airy_operands,
        dtypes=FLOAT_ONLY + ("integer",))
