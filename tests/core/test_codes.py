"""The op, dtype and layout codes are defined once in C++ (csrc/common/) and exported by both
extension modules as ``codes()``; the Python families read them from there. This pins the tables
(changing a code changes what Python sends, so it must be deliberate), checks that both modules
agree, and checks the meaning of every elementwise code against torch."""
from __future__ import annotations

import math

import pytest
import torch

from repmode import _ext

C = _ext.C

PINNED = {
    "EwOp": {
        "ADD": 0, "SUB": 1, "MUL": 2, "DIV": 3, "THRESHOLD_BACKWARD": 4, "POW": 5, "MINIMUM": 6, "MAXIMUM": 7,
        "CLAMP": 8, "NEG": 10, "RELU": 11, "EXP": 12, "LOG": 13, "ABS": 14, "LOG1P": 15, "EXPM1": 16, "LOG2": 17,
        "EXP2": 18, "TANH": 19, "SIGMOID": 20, "ERF": 21, "ERFC": 22, "SIN": 23, "COS": 24, "RSQRT": 25, "SQRT": 26,
        "RECIPROCAL": 27, "SIGN": 28, "LEAKY_RELU": 30, "LEAKY_RELU_BACKWARD": 31, "ELU": 32,
        "ELU_BACKWARD_INPUT": 33, "ELU_BACKWARD_RESULT": 34, "HARDTANH_BACKWARD": 35, "GELU": 36, "GELU_TANH": 37,
        "GELU_BACKWARD": 38, "GELU_TANH_BACKWARD": 39, "SILU": 40, "SILU_BACKWARD": 41, "MISH": 42,
        "MISH_BACKWARD": 43, "SOFTPLUS": 44, "SOFTPLUS_BACKWARD": 45, "TANH_BACKWARD": 46, "SIGMOID_BACKWARD": 47,
        "ADDCMUL": 48, "ADDCDIV": 49, "LERP": 50, "COPYSIGN": 51, "FMOD": 52, "REMAINDER": 53, "FLOOR_DIVIDE": 54,
        "FMAX": 55, "FMIN": 56, "HEAVISIDE": 57, "NEXTAFTER": 58, "FRAC": 59, "NAN_TO_NUM": 60, "ROUND_DECIMALS": 61,
        "FREXP_MANTISSA": 62, "FREXP_EXPONENT": 63, "LOGADDEXP": 64, "LOGADDEXP2": 65, "LOGIT": 66,
        "LOGIT_BACKWARD": 67, "XLOG1PY": 68, "SINC": 69, "HYPOT": 70, "LDEXP": 71,
        "HARDSWISH": 72, "HARDSWISH_BACKWARD": 73, "HARDSIGMOID": 74, "HARDSIGMOID_BACKWARD": 75, "SOFTSHRINK": 76,
        "LOG_SIGMOID": 77, "LOG_SIGMOID_BACKWARD": 78, "GLU": 79,
        "ATAN": 80, "ATAN2": 81, "ASIN": 82, "ACOS": 83, "SINH": 84, "COSH": 85, "TAN": 86, "LOG10": 87,
        "ASINH": 88, "ACOSH": 89, "ATANH": 90,
        "LGAMMA": 91, "DIGAMMA": 92, "POLYGAMMA": 93, "MVLGAMMA": 94, "ERFINV": 95, "ZETA": 96, "NDTRI": 97,
        "LOG_NDTR": 98, "ERFCX": 99, "ENTR": 100,
        "I0": 110, "I0E": 111, "I1": 112, "I1E": 113, "BESSEL_K0": 114, "BESSEL_K1": 115, "BESSEL_K0E": 116,
        "BESSEL_K1E": 117, "SPHERICAL_BESSEL_J0": 118, "CHEBYSHEV_T": 119, "CHEBYSHEV_U": 120, "CHEBYSHEV_V": 121,
        "CHEBYSHEV_W": 122, "SHIFTED_CHEBYSHEV_T": 123, "SHIFTED_CHEBYSHEV_U": 124, "SHIFTED_CHEBYSHEV_V": 125,
        "SHIFTED_CHEBYSHEV_W": 126, "HERMITE_H": 127, "HERMITE_HE": 128, "LAGUERRE_L": 129, "LEGENDRE_P": 130,
        "KAISER_WINDOW": 131, "BESSEL_J0": 132, "BESSEL_J1": 133, "BESSEL_Y0": 134,
        "BESSEL_Y1": 135,
        "IGAMMA": 140, "IGAMMAC": 141, "AIRY_AI": 142,
    },
    "RandomDist": {"UNIFORM": 0, "NORMAL": 1, "EXPONENTIAL": 3, "GEOMETRIC": 4, "LOG_NORMAL": 5, "CAUCHY": 6},
    "PoolKind": {"MAX": 0, "AVG": 1, "ADAPTIVE_AVG": 2, "ADAPTIVE_MAX": 3},
    "ResampleMode": {"NEAREST": 0, "NEAREST_EXACT": 1, "LINEAR": 2, "CUBIC": 3, "LINEAR_AA": 4, "CUBIC_AA": 5},
    "Reduction": {"NONE": 0, "MEAN": 1, "SUM": 2},
    "Dtype": {"float32": 0, "float64": 1},
    "ConvGeom": ["N", "Ci", "Co", "G", "in0", "in1", "in2", "out0", "out1", "out2", "k0", "k1", "k2",
                 "stride0", "stride1", "stride2", "pad0", "pad1", "pad2", "dil0", "dil1", "dil2"],
}

FAMILIES = {"runtime", "elementwise", "random", "reduction", "softmax_loss", "matmul", "convolution", "pooling",
            "layer_norm", "batch_norm", "recurrent", "resample", "indexing",
            "ctc", "grid_sample", "linalg", "fft"}


def test_exported_codes_equal_the_pinned_tables():
    assert C.codes() == PINNED


def test_python_constants_come_from_the_exported_tables():
    from repmode.kernels import elementwise, pooling, random
    assert elementwise.ADD == 0 and elementwise.LERP == 50 and elementwise.NEG == 10
    assert (random.UNIFORM, random.NORMAL, random.CAUCHY) == (0, 1, 6)
    assert (pooling.MAX, pooling.ADAPTIVE_MAX) == (0, 3)
    assert _ext.DTYPE_CODE == {torch.float32: 0, torch.float64: 1}


def test_the_cuda_module_exports_the_same_tables_and_a_twin_of_every_shared_entry():
    if _ext.CUDA is None:
        pytest.skip("repmode._C_cuda is not built here")
    assert _ext.CUDA.codes() == C.codes()
    cpu = set(C.entry_points())
    cuda = set(_ext.CUDA.entry_points())
    shared = {e for e in cpu if e[0] != "runtime"} & cuda
    assert {e for e in cuda if e[0] != "runtime"} == shared


def test_every_entry_point_is_bound_with_a_family():
    entries = C.entry_points()
    assert len(entries) == len(set(entries))
    assert {family for family, _ in entries} <= FAMILIES
    for family, name in entries:
        assert callable(getattr(C, name)), name
    assert ("matmul", "gemm") in entries and ("reduction", "cumulative") in entries


def _ew(op: int, a, b=None, p0=0.0, p1=0.0, dtype=torch.float64):
    a = torch.tensor(a, dtype=dtype)
    out = torch.empty_like(a)
    if b is None:
        C.elementwise_flat(op, _ext.DTYPE_CODE[dtype], a.numel(), out.data_ptr(), a.data_ptr(), 0, 0.0, False, p0, p1,
                           1)
    else:
        b = torch.tensor(b, dtype=dtype)
        C.elementwise_flat(op, _ext.DTYPE_CODE[dtype], a.numel(), out.data_ptr(), a.data_ptr(), b.data_ptr(), 0.0,
                           True, p0, p1, 1)
    return out


X = [-1.75, -0.5, 0.25, 0.75, 1.5, 2.5]
POS = [0.125, 0.5, 0.75, 1.5, 2.5, 3.0]
F = torch.nn.functional
UNARY = {
    "NEG": (torch.neg, X), "RELU": (torch.relu, X), "EXP": (torch.exp, X), "LOG": (torch.log, POS),
    "ABS": (torch.abs, X), "LOG1P": (torch.log1p, POS), "EXPM1": (torch.expm1, X), "LOG2": (torch.log2, POS),
    "EXP2": (torch.exp2, X), "TANH": (torch.tanh, X), "SIGMOID": (torch.sigmoid, X), "ERF": (torch.erf, X),
    "ERFC": (torch.erfc, X), "SIN": (torch.sin, X), "COS": (torch.cos, X), "RSQRT": (torch.rsqrt, POS),
    "SQRT": (torch.sqrt, POS), "RECIPROCAL": (torch.reciprocal, X), "SIGN": (torch.sign, X),
    "GELU": (F.gelu, X), "GELU_TANH": (lambda t: F.gelu(t, approximate="tanh"), X), "SILU": (F.silu, X),
    "MISH": (F.mish, X), "SOFTPLUS": (lambda t: F.softplus(t, beta=1.0, threshold=20.0), X),
    "LEAKY_RELU": (lambda t: F.leaky_relu(t, 0.25), X), "HARDSWISH": (F.hardswish, X + [-3.5, 3.5]),
    "HARDSIGMOID": (F.hardsigmoid, X + [-3.5, 3.5]), "SOFTSHRINK": (lambda t: F.softshrink(t, 0.6), X),
    "LOG_SIGMOID": (F.logsigmoid, X),
    "FRAC": (torch.frac, X), "SINC": (torch.sinc, X), "LOGIT": (torch.logit, [0.1, 0.25, 0.4, 0.5, 0.75, 0.9]),
    "FREXP_MANTISSA": (lambda t: torch.frexp(t)[0], X),
    "FREXP_EXPONENT": (lambda t: torch.frexp(t)[1].to(torch.float64), X),
    "NAN_TO_NUM": (torch.nan_to_num, X), "ROUND_DECIMALS": (lambda t: torch.round(t, decimals=1), X),
    "ATAN": (torch.atan, X), "ASIN": (torch.asin, [-0.9, -0.25, 0.0, 0.125, 0.5, 0.99]),
    "ACOS": (torch.acos, [-0.9, -0.25, 0.0, 0.125, 0.5, 0.99]), "SINH": (torch.sinh, X), "COSH": (torch.cosh, X),
    "TAN": (torch.tan, X), "LOG10": (torch.log10, POS), "ASINH": (torch.asinh, X),
    "ACOSH": (torch.acosh, [1.0, 1.125, 1.5, 2.5, 3.0, 10.0]),
    "ATANH": (torch.atanh, [-0.9, -0.25, 0.0, 0.125, 0.5, 0.99]),
    "LGAMMA": (torch.lgamma, [-2.5, -0.25, 0.125, 0.5, 3.5, 20.0]),
    "DIGAMMA": (torch.digamma, [-2.5, -0.25, 0.125, 0.5, 3.5, 20.0]),
    "POLYGAMMA": (lambda t: torch.polygamma(2, t), [0.125, 0.5, 3.5, 20.0, 7.25, 11.0]),
    "MVLGAMMA": (lambda t: torch.mvlgamma(t, 3), [1.25, 1.5, 3.5, 20.0, 7.25, 11.0]),
    "ERFINV": (torch.erfinv, [-0.9, -0.25, 0.0, 0.125, 0.5, 0.99]),
    "NDTRI": (torch.special.ndtri, [0.01, 0.25, 0.5, 0.625, 0.9, 0.999]),
    "LOG_NDTR": (torch.special.log_ndtr, X), "ERFCX": (torch.special.erfcx, X),
    "ENTR": (torch.special.entr, POS),
    "I0": (torch.i0, X), "I0E": (torch.special.i0e, X), "I1": (torch.special.i1, X), "I1E": (torch.special.i1e, X),
    "BESSEL_K0": (torch.special.modified_bessel_k0, POS), "BESSEL_K1": (torch.special.modified_bessel_k1, POS),
    "BESSEL_K0E": (torch.special.scaled_modified_bessel_k0, POS),
    "BESSEL_K1E": (torch.special.scaled_modified_bessel_k1, POS),
    "SPHERICAL_BESSEL_J0": (torch.special.spherical_bessel_j0, X),
    # (torch's J0/J1 are off by up to ~1e-5 relative near |x| = 5, but not at these points)
    "BESSEL_J0": (torch.special.bessel_j0, X), "BESSEL_J1": (torch.special.bessel_j1, X),
    # (torch's Y0/Y1 drift off like its J0/J1; these points are close enough)
    "BESSEL_Y0": (torch.special.bessel_y0, [0.25, 0.5, 0.75, 1.0, 1.25, 1.5]),
    "BESSEL_Y1": (torch.special.bessel_y1, [0.25, 0.5, 0.75, 1.0, 1.25, 1.5]),
    # (k = 0 .. 5 of a symmetric window of 6 points, beta = 12: p0 = beta, p1 = (6 - 1)/2)
    "KAISER_WINDOW": (lambda t: torch.kaiser_window(6, False, 12.0, dtype=torch.float64), [0.0, 1, 2, 3, 4, 5]),
    "AIRY_AI": (torch.special.airy_ai, X),
}
PARAMS = {"SOFTPLUS": (1.0, 20.0), "LEAKY_RELU": (0.25, 0.0), "ROUND_DECIMALS": (10.0, 0.0), "SOFTSHRINK": (0.6, 0.0),
          "POLYGAMMA": (2.0, 0.0), "MVLGAMMA": (3.0, 0.0),
          "KAISER_WINDOW": (12.0, 2.5)}
BINARY = {
    "ADD": lambda a, b: a + b, "SUB": lambda a, b: a - b, "MUL": torch.mul, "DIV": torch.div,
    "POW": lambda a, b: torch.pow(a.abs(), b), "MINIMUM": torch.minimum, "MAXIMUM": torch.maximum,
    "COPYSIGN": torch.copysign, "FMOD": torch.fmod, "REMAINDER": torch.remainder, "FLOOR_DIVIDE": torch.floor_divide,
    "FMAX": torch.fmax, "FMIN": torch.fmin, "HEAVISIDE": torch.heaviside, "NEXTAFTER": torch.nextafter,
    "LOGADDEXP": torch.logaddexp, "LOGADDEXP2": torch.logaddexp2, "XLOG1PY": torch.special.xlog1py,
    "HYPOT": torch.hypot, "LDEXP": lambda a, b: torch.ldexp(a, b.round().to(torch.int64)),
    "GLU": lambda a, b: F.glu(torch.cat([a, b])),
    "ATAN2": torch.atan2,
    "HARDSWISH_BACKWARD": lambda g, x: torch.ops.aten.hardswish_backward(g, x),
    # (torch's float64 kernel multiplies by the float32 constant RN32(1/6); repmode by RN64(1/6))
    "HARDSIGMOID_BACKWARD": lambda g, x: torch.where((x > -3) & (x < 3), g * (1.0 / 6.0), 0.0),
    "LOG_SIGMOID_BACKWARD": lambda g, x: g * torch.sigmoid(-x),
    "ZETA": torch.special.zeta,
    "IGAMMA": torch.igamma, "IGAMMAC": torch.igammac,
}
# (x, n): the polynomials of degree trunc(n) (n = 0, -1 -> 0, 2, 0, 0, 1 below)
BINARY |= {name: getattr(torch.special, fn) for name, fn in (
    ("CHEBYSHEV_T", "chebyshev_polynomial_t"), ("CHEBYSHEV_U", "chebyshev_polynomial_u"),
    ("CHEBYSHEV_V", "chebyshev_polynomial_v"), ("CHEBYSHEV_W", "chebyshev_polynomial_w"),
    ("SHIFTED_CHEBYSHEV_T", "shifted_chebyshev_polynomial_t"),
    ("SHIFTED_CHEBYSHEV_U", "shifted_chebyshev_polynomial_u"),
    ("SHIFTED_CHEBYSHEV_V", "shifted_chebyshev_polynomial_v"),
    ("SHIFTED_CHEBYSHEV_W", "shifted_chebyshev_polynomial_w"),
    ("HERMITE_H", "hermite_polynomial_h"), ("HERMITE_HE", "hermite_polynomial_he"),
    ("LAGUERRE_L", "laguerre_polynomial_l"), ("LEGENDRE_P", "legendre_polynomial_p"))}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_each_unary_code_computes_the_torch_function_of_its_name(name):
    fn, xs = UNARY[name]
    p0, p1 = PARAMS.get(name, (0.0, 0.0))
    got = _ew(PINNED["EwOp"][name], xs, p0=p0, p1=p1)
    torch.testing.assert_close(got, fn(torch.tensor(xs, dtype=torch.float64)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_each_binary_code_computes_the_torch_function_of_its_name(name):
    a, b = X, [0.5, -1.25, 2.0, 0.75, -0.5, 1.5]
    if name == "LDEXP":
        b = [1.0, -2.0, 3.0, 0.0, -1.0, 5.0]
    if name == "XLOG1PY":
        b = [abs(v) for v in b]
    if name.endswith("_BACKWARD"):  # (grad, input): inputs on both sides of ±3
        b = [-3.5, -1.25, 2.0, 0.75, -0.5, 3.5]
    if name == "POW":
        a = [abs(v) for v in a]
    if name == "ZETA":  # s > 1, q > 0
        a, b = [abs(v) + 1.5 for v in a], [abs(v) for v in b]
    if name in ("IGAMMA", "IGAMMAC"):  # a > 0, x >= 0
        a, b = [abs(v) + 0.5 for v in a], [abs(v) for v in b]
    p0 = 1.0 if name in ("ADD", "SUB") else 0.0  # add/sub take alpha as p0
    got = _ew(PINNED["EwOp"][name], a, b, p0=p0)
    want = BINARY[name](torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64))
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_the_convolution_layout_is_read_by_name():
    from repmode.kernels import convolution
    assert list(convolution._GEOM_FIELDS) == PINNED["ConvGeom"]
    x = torch.randn(2, 4, 5, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    w = torch.randn(6, 2, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    import repmode
    with repmode.enabled():
        got = F.conv2d(x, w, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)
    want = F.conv2d(x, w, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    assert math.isfinite(float(got.sum()))
