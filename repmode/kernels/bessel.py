"""Bessel functions and orthogonal polynomials (issue 26): ``i0``, ``special.i0e``/``i1``/``i1e``,
``special.modified_bessel_i0/i1/k0/k1``, ``special.scaled_modified_bessel_k0/k1``,
``special.spherical_bessel_j0``, ``special.bessel_j0``/``j1``/``y0``/``y1``,
the Chebyshev (plain and shifted, kinds T/U/V/W), Hermite (H, He),
Laguerre and Legendre polynomials, and ``torch.kaiser_window`` (built on ``i0``; the other windows
are in repmode/kernels/fft.py).

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
from ..registry import register_kernel
from ._common import FLOAT_ONLY, FLOAT_WIDENED, LOW_PRECISION, param, round_to, unsupported
from .elementwise import _family as _elementwise_family
from .elementwise import dtypes_of, elementwise
from .fft import _window_setup

aten = torch.ops.aten
Tensor = torch.Tensor

_EW = _ext.codes("EwOp")
I0, I0E, I1, I1E = (_EW[n] for n in ("I0", "I0E", "I1", "I1E"))
K0, K1, K0E, K1E, SPHERICAL_J0 = (_EW[n] for n in ("BESSEL_K0", "BESSEL_K1", "BESSEL_K0E", "BESSEL_K1E",
                                                   "SPHERICAL_BESSEL_J0"))
POLYNOMIALS = {name: _EW[name.upper()] for name in (
    "chebyshev_t", "chebyshev_u", "chebyshev_v", "chebyshev_w", "shifted_chebyshev_t", "shifted_chebyshev_u",
    "shifted_chebyshev_v", "shifted_chebyshev_w", "hermite_h", "hermite_he", "laguerre_l", "legendre_p")}
KAISER_WINDOW = _EW["KAISER_WINDOW"]
J0, J1, Y0, Y1 = _EW["BESSEL_J0"], _EW["BESSEL_J1"], _EW["BESSEL_Y0"], _EW["BESSEL_Y1"]


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

# ---- Bessel functions of the first and second kind: Cephes' j0.c / j1.c / y0.c / y1.c as designed
# (torch drops the leading 1 of two denominators, which puts its J0/J1/Y0/Y1 off by up to ~1e-5
# relative near |x| = 5) ----
_family(aten.special_bessel_j0.default, None, aten.special_bessel_j0.out, operands=_unary_float(J0),
        dtypes=_FLOAT_TAGS)
_family(aten.special_bessel_j1.default, None, aten.special_bessel_j1.out, operands=_unary_float(J1),
        dtypes=_FLOAT_TAGS)
_family(aten.special_bessel_y0.default, None, aten.special_bessel_y0.out, operands=_unary_float(Y0),
        dtypes=_FLOAT_TAGS)
_family(aten.special_bessel_y1.default, None, aten.special_bessel_y1.out, operands=_unary_float(Y1),
        dtypes=_FLOAT_TAGS)

# ---- orthogonal polynomials: (x, n), either one a Python number ----
_family([aten.special_chebyshev_polynomial_t.default, aten.special_chebyshev_polynomial_t.x_scalar,
         aten.special_chebyshev_polynomial_t.n_scalar], None,
        [aten.special_chebyshev_polynomial_t.out, aten.special_chebyshev_polynomial_t.x_scalar_out,
         aten.special_chebyshev_polynomial_t.n_scalar_out],
        operands=_polynomial(POLYNOMIALS["chebyshev_t"]), dtypes=_FLOAT_TAGS)
_family([aten.special_chebyshev_polynomial_u.default, aten.special_chebyshev_polynomial_u.x_scalar,
         aten.special_chebyshev_polynomial_u.n_scalar], None,
        [aten.special_chebyshev_polynomial_u.out, aten.special_chebyshev_polynomial_u.x_scalar_out,
         aten.special_chebyshev_polynomial_u.n_scalar_out],
        operands=_polynomial(POLYNOMIALS["chebyshev_u"]), dtypes=_FLOAT_TAGS)
_family([aten.special_chebyshev_polynomial_v.default, aten.special_chebyshev_polynomial_v.x_scalar,
         aten.special_chebyshev_polynomial_v.n_scalar], None,
        [aten.special_chebyshev_polynomial_v.out, aten.special_chebyshev_polynomial_v.x_scalar_out,
         aten.special_chebyshev_polynomial_v.n_scalar_out],
        operands=_polynomial(POLYNOMIALS["chebyshev_v"]), dtypes=_FLOAT_TAGS)
_family([aten.special_chebyshev_polynomial_w.default, aten.special_chebyshev_polynomial_w.x_scalar,
         aten.special_chebyshev_polynomial_w.n_scalar], None,
        [aten.special_chebyshev_polynomial_w.out, aten.special_chebyshev_polynomial_w.x_scalar_out,
         aten.special_chebyshev_polynomial_w.n_scalar_out],
        operands=_polynomial(POLYNOMIALS["chebyshev_w"]), dtypes=_FLOAT_TAGS)
_family([aten.special_shifted_chebyshev_polynomial_t.default, aten.special_shifted_chebyshev_polynomial_t.x_scalar,
         aten.special_shifted_chebyshev_polynomial_t.n_scalar], None,
        [aten.special_shifted_chebyshev_polynomial_t.out, aten.special_shifted_chebyshev_polynomial_t.x_scalar_out,
         aten.special_shifted_chebyshev_polynomial_t.n_scalar_out],
        operands=_polynomial(POLYNOMIALS["shifted_chebyshev_t"]), dtypes=_FLOAT_TAGS)
_family([aten.special_shifted_chebyshev_polynomial_u.default, aten.special_shifted_chebyshev_polynomial_u.x_scalar,
         aten.special_shifted_chebyshev_polynomial_u.n_scalar], None,
        [aten.special_shifted_chebyshev_polynomial_u.out, aten.special_shifted_chebyshev_polynomial_u.x_scalar_out,
         aten.special_shifted_chebyshev_polynomial_u.n_scalar_out],
        operands=_polynomial(POLYNOMIALS["shifted_chebyshev_u"]), dtypes=_FLOAT_TAGS)
_family([aten.special_shifted_chebyshev_polynomial_v.default, aten.special_shifted_chebyshev_polynomial_v.x_scalar,
         aten.special_shifted_chebyshev_polynomial_v.n_scalar], None,
        [aten.special_shifted_chebyshev_polynomial_v.out, aten.special_shifted_chebyshev_polynomial_v.x_scalar_out,
         aten.special_shifted_chebyshev_polynomial_v.n_scalar_out],
        operands=_polynomial(POLYNOMIALS["shifted_chebyshev_v"]), dtypes=_FLOAT_TAGS)
_family([aten.special_shifted_chebyshev_polynomial_w.default, aten.special_shifted_chebyshev_polynomial_w.x_scalar,
         aten.special_shifted_chebyshev_polynomial_w.n_scalar], None,
        [aten.special_shifted_chebyshev_polynomial_w.out, aten.special_shifted_chebyshev_polynomial_w.x_scalar_out,
         aten.special_shifted_chebyshev_polynomial_w.n_scalar_out],
        operands=_polynomial(POLYNOMIALS["shifted_chebyshev_w"]), dtypes=_FLOAT_TAGS)
_family([aten.special_hermite_polynomial_h.default, aten.special_hermite_polynomial_h.x_scalar,
         aten.special_hermite_polynomial_h.n_scalar], None,
        [aten.special_hermite_polynomial_h.out, aten.special_hermite_polynomial_h.x_scalar_out,
         aten.special_hermite_polynomial_h.n_scalar_out],
        operands=_polynomial(POLYNOMIALS["hermite_h"]), dtypes=_FLOAT_TAGS)
_family([aten.special_hermite_polynomial_he.default, aten.special_hermite_polynomial_he.x_scalar,
         aten.special_hermite_polynomial_he.n_scalar], None,
        [aten.special_hermite_polynomial_he.out, aten.special_hermite_polynomial_he.x_scalar_out,
         aten.special_hermite_polynomial_he.n_scalar_out],
        operands=_polynomial(POLYNOMIALS["hermite_he"]), dtypes=_FLOAT_TAGS)
_family([aten.special_laguerre_polynomial_l.default, aten.special_laguerre_polynomial_l.x_scalar,
         aten.special_laguerre_polynomial_l.n_scalar], None,
        [aten.special_laguerre_polynomial_l.out, aten.special_laguerre_polynomial_l.x_scalar_out,
         aten.special_laguerre_polynomial_l.n_scalar_out],
        operands=_polynomial(POLYNOMIALS["laguerre_l"]), dtypes=_FLOAT_TAGS)
_family([aten.special_legendre_polynomial_p.default, aten.special_legendre_polynomial_p.x_scalar,
         aten.special_legendre_polynomial_p.n_scalar], None,
        [aten.special_legendre_polynomial_p.out, aten.special_legendre_polynomial_p.x_scalar_out,
         aten.special_legendre_polynomial_p.n_scalar_out],
        operands=_polynomial(POLYNOMIALS["legendre_p"]), dtypes=_FLOAT_TAGS)


# ---- torch.kaiser_window ----
@register_kernel([aten.kaiser_window.default, aten.kaiser_window.periodic, aten.kaiser_window.beta], FLOAT_WIDENED,
                 out=[aten.kaiser_window.out, aten.kaiser_window.periodic_out, aten.kaiser_window.beta_out])
def kaiser_window(func, args, kwargs):
    """w[k] = I0(beta sqrt(1 - ((k - a)/a)^2)) / I0(beta), a = (n - 1)/2, beta = 12 unless given: one
    elementwise op (KAISER_WINDOW, csrc/common/math_bessel.h repmode_kaiser) over k = 0 .. n-1 in
    float64, evaluated in double-double (y = beta sqrt(k (2a - k)) / a with k (2a - k) exact) and
    rounded once; float32 windows are those values rounded once more, bf16/fp16 the float32 window
    rounded once. torch computes the same formula in the dtype's opmath type with its own i0 (up to
    ~20 ulps off in float64, docs/math.md)."""
    length, periodic, dtype = _window_setup(func, args, kwargs)
    if dtype not in (torch.float32, torch.float64) + LOW_PRECISION:
        raise unsupported(func, args, kwargs, f"dtype {dtype} is not supported (float32, float64, bf16, fp16 are)")
    names = {a.name for a in func._schema.arguments}
    beta = float(param(func, args, kwargs, "beta")) if "beta" in names else 12.0
    if length == 0:
        return torch.empty(0, dtype=dtype)
    if length == 1:
        return torch.ones(1, dtype=dtype)
    n = length + 1 if periodic else length
    if n >= 2 ** 26:
        raise unsupported(func, args, kwargs, "windows of 2^26 points or more are not supported (k (n - 1 - k) "
                          "must be an exact double)")
    k = torch.arange(n, dtype=torch.float64)  # the exact integers 0 .. n-1
    w = elementwise(KAISER_WINDOW, func, args, kwargs, k, params=(beta, (n - 1) / 2.0))
    if dtype != torch.float64:
        w = w.to(torch.float32)  # one IEEE rounding per value
        if dtype in LOW_PRECISION:
            w = round_to(w, dtype)
    return w[:n - 1].clone() if periodic else w
