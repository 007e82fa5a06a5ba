"""Bessel functions and orthogonal polynomials (issue 26): ``i0``, ``special.i0e``/``i1``/``i1e``,
``special.modified_bessel_i0/i1/k0/k1``, ``special.scaled_modified_bessel_k0/k1``,
``special.spherical_bessel_j0``, the Chebyshev (plain and shifted, kinds T/U/V/W), Hermite (H, He),
Laguerre and Legendre polynomials (``torch.kaiser_window``, built on ``i0``, is with the other
windows in repmode/kernels/fft.py).

Formulas: csrc/common/math_bessel.h (one elementwise op code each, csrc/common/elementwise.h codes
110-130). The Bessel functions are one fixed double formula (Cephes' expansions, as in torch,
over repmode's own exp/log/sin), float32 being that formula rounded once; the polynomials run
torch's own recurrences in the input's type (the same bits as native torch's compiled
recurrences, one fma per step) and repmode's
acos/cos/sin, in double, where torch switches to a trigonometric form. docs/semantics.md "Special
functions (Bessel family and orthogonal polynomials)"; errors against mpmath: docs/math.md.

dtypes as torch: ``i0``, ``i0e``, ``i1``, ``i1e`` also take bf16/fp16 (widened to float32, the
float32 result rounded once); the other functions have no bf16/fp16 kernel in torch either and
refuse them. Integer inputs give the default float dtype. Backward: torch's formulas (``i0``:
grad * i1; ``i0e``, ``i1``, ``i1e``: torch's ``i1_backward``/``i1e_backward`` over registered ops);
the ``special.*`` functions have no derivative in torch and none here."""
from __future__ import annotations

import torch

from .. import _ext
from ._common import FLOAT_ONLY, LOW_PRECISION, param, unsupported
from .elementwise import _family as _elementwise_family
from .elementwise import dtypes_of

aten = torch.ops.aten
Tensor = torch.Tensor

_EW = _ext.codes("EwOp")
I0, I0E, I1, I1E = (_EW[n] for n in ("I0", "I0E", "I1", "I1E"))
K0, K1, K0E, K1E, SPHERICAL_J0 = (_EW[n] for n in ("BESSEL_K0", "BESSEL_K1", "BESSEL_K0E", "BESSEL_K1E",
                                                   "SPHERICAL_BESSEL_J0"))
POLYNOMIALS = {name: _EW[name.upper()] for name in (
    "chebyshev_t", "chebyshev_u", "chebyshev_v", "chebyshev_w", "shifted_chebyshev_t", "shifted_chebyshev_u",
    "shifted_chebyshev_v", "shifted_chebyshev_w", "hermite_h", "hermite_he", "laguerre_l", "legendre_p")}


def _family(*overloads, **how):
    _elementwise_family(*overloads, module=__name__, **how)


def _no_half(func, args, kwargs, *operands):
    for x in operands:
        if isinstance(x, Tensor) and x.dtype in LOW_PRECISION:
            raise unsupported(func, args, kwargs, f"{x.dtype} inputs: torch has no {x.dtype} kernel for this "
                              "function either (float32 and float64 are supported; integers give the default "
                              "float dtype)")


def _unary(op):
    return lambda func, args, kwargs: (op, args[0], None, None)


def _unary_float(op):
    """A unary op whose torch kernel has no bf16/fp16 form."""
    def operands(func, args, kwargs):
        _no_half(func, args, kwargs, args[0])
        return op, args[0], None, None
    return operands


def _polynomial(op):
    """(x, n) with x or n a tensor and the other a tensor or a Python number (the .x_scalar form
    makes x a tensor of the promoted dtype and of n's shape: the same values torch computes on)."""
    def operands(func, args, kwargs):
        x, n = param(func, args, kwargs, "x"), param(func, args, kwargs, "n")
        _no_half(func, args, kwargs, x, n)
        if not isinstance(x, Tensor):
            dtype = torch.result_type(x, n)
            if not dtype.is_floating_point:
                dtype = torch.get_default_dtype()
            x = torch.full_like(n, x, dtype=dtype)
        return op, x, n, None
    return operands


# ---- modified Bessel functions of the first kind (bf16/fp16 widened, as torch) ----
_family(aten.i0.default, aten.i0_.default, aten.i0.out, operands=_unary(I0), dtypes=dtypes_of(I0))
_family(aten.special_i0e.default, None, aten.special_i0e.out, operands=_unary(I0E), dtypes=dtypes_of(I0E))
_family(aten.special_i1.default, None, aten.special_i1.out, operands=_unary(I1), dtypes=dtypes_of(I1))
_family(aten.special_i1e.default, None, aten.special_i1e.out, operands=_unary(I1E), dtypes=dtypes_of(I1E))

# special.modified_bessel_i0/i1: the same functions as i0/i1 (torch evaluates the same Cephes
# expansions; repmode has one definition of each); float32/float64 only, as torch.
_FLOAT_TAGS = FLOAT_ONLY + ("integer",)
_family(aten.special_modified_bessel_i0.default, None, aten.special_modified_bessel_i0.out,
        operands=_unary_float(I0), dtypes=_FLOAT_TAGS)
_family(aten.special_modified_bessel_i1.default, None, aten.special_modified_bessel_i1.out,
        operands=_unary_float(I1), dtypes=_FLOAT_TAGS)

# ---- second kind, scaled forms, spherical j0 ----
_family(aten.special_modified_bessel_k0.default, None, aten.special_modified_bessel_k0.out,
        operands=_unary_float(K0), dtypes=_FLOAT_TAGS)
_family(aten.special_modified_bessel_k1.default, None, aten.special_modified_bessel_k1.out,
        operands=_unary_float(K1), dtypes=_FLOAT_TAGS)
_family(aten.special_scaled_modified_bessel_k0.default, None, aten.special_scaled_modified_bessel_k0.out,
        operands=_unary_float(K0E), dtypes=_FLOAT_TAGS)
_family(aten.special_scaled_modified_bessel_k1.default, None, aten.special_scaled_modified_bessel_k1.out,
        operands=_unary_float(K1E), dtypes=_FLOAT_TAGS)
_family(aten.special_spherical_bessel_j0.default, None, aten.special_spherical_bessel_j0.out,
        operands=_unary_float(SPHERICAL_J0), dtypes=_FLOAT_TAGS)

# ---- orthogonal polynomials: (x, n), either one a Python number ----
_POLYNOMIAL_OPS = {
    "chebyshev_t": "special_chebyshev_polynomial_t", "chebyshev_u": "special_chebyshev_polynomial_u",
    "chebyshev_v": "special_chebyshev_polynomial_v", "chebyshev_w": "special_chebyshev_polynomial_w",
    "shifted_chebyshev_t": "special_shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_u": "special_shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_v": "special_shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_w": "special_shifted_chebyshev_polynomial_w",
    "hermite_h": "special_hermite_polynomial_h", "hermite_he": "special_hermite_polynomial_he",
    "laguerre_l": "special_laguerre_polynomial_l", "legendre_p": "special_legendre_polynomial_p",
}
for _name, _aten_name in _POLYNOMIAL_OPS.items():
    _packet = getattr(aten, _aten_name)
    _family([_packet.default, _packet.x_scalar, _packet.n_scalar], None,
            [_packet.out, _packet.x_scalar_out, _packet.n_scalar_out],
            operands=_polynomial(POLYNOMIALS[_name]), dtypes=_FLOAT_TAGS)
