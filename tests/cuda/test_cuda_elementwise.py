"""CUDA elementwise, random and cumulative kernels (csrc/cuda/elementwise.cu, random.cu,
reduction.cu) against their CPU twins, bit for bit: every op code of the elementwise family on
contiguous, transposed, broadcast, scalar-operand and in-place layouts and on the flat path; every
random distribution over several (seed, offset, n), with the returned offsets; cumsum/cumprod over
several (outer, n, inner)."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal
from support.cuda_helpers import CPU, GPU, finish, needs_cuda, on_gpu, random_input, stream

from repmode.kernels import elementwise as ew

pytestmark = needs_cuda

DTYPES = [torch.float32, torch.float64]
CODE = {torch.float32: 0, torch.float64: 1}
THREADS = 2
BLOCK = 256  # kBlock of csrc/cuda/runtime.cuh

# Every op code of repmode/kernels/elementwise.py: (code, operand count, params as the family passes them).
OPS = [
    (ew.ADD, 2, (1.0,)), (ew.ADD, 2, (2.5,)), (ew.SUB, 2, (1.0,)), (ew.SUB, 2, (0.1,)), (ew.MUL, 2, ()),
    (ew.DIV, 2, ()), (ew.THRESHOLD_BACKWARD, 2, (0.0,)), (ew.THRESHOLD_BACKWARD, 2, (0.3,)), (ew.POW, 2, ()),
    (ew.MINIMUM, 2, ()), (ew.MAXIMUM, 2, ()), (ew.CLAMP, 3, ()),
    (ew.NEG, 1, ()), (ew.RELU, 1, ()), (ew.EXP, 1, ()), (ew.LOG, 1, ()), (ew.ABS, 1, ()), (ew.LOG1P, 1, ()),
    (ew.EXPM1, 1, ()), (ew.LOG2, 1, ()), (ew.EXP2, 1, ()), (ew.TANH, 1, ()), (ew.SIGMOID, 1, ()), (ew.ERF, 1, ()),
    (ew.ERFC, 1, ()), (ew.SIN, 1, ()), (ew.COS, 1, ()), (ew.RSQRT, 1, ()), (ew.SQRT, 1, ()),
    (ew.RECIPROCAL, 1, ()), (ew.SIGN, 1, ()),
    (ew.LEAKY_RELU, 1, (0.01,)), (ew.LEAKY_RELU_BACKWARD, 2, (0.2,)),
    (ew.ELU, 1, (1.0, 1.0, 1.0)), (ew.ELU, 1, (1.6732632423543772, 1.0507009873554805, 0.5)),
    (ew.ELU_BACKWARD_INPUT, 2, (1.0, 1.0507, 2.0)), (ew.ELU_BACKWARD_RESULT, 2, (0.7, 1.0, 1.0)),
    (ew.HARDTANH_BACKWARD, 2, (-1.0, 1.0)), (ew.GELU, 1, ()), (ew.GELU_TANH, 1, ()), (ew.GELU_BACKWARD, 2, ()),
    (ew.GELU_TANH_BACKWARD, 2, ()), (ew.SILU, 1, ()), (ew.SILU_BACKWARD, 2, ()), (ew.MISH, 1, ()),
    (ew.MISH_BACKWARD, 2, ()), (ew.SOFTPLUS, 1, (1.0, 20.0)), (ew.SOFTPLUS, 1, (2.0, 1.5)),
    (ew.SOFTPLUS_BACKWARD, 2, (0.5, 3.0)), (ew.TANH_BACKWARD, 2, ()), (ew.SIGMOID_BACKWARD, 2, ()),
    (ew.ADDCMUL, 3, (1.0,)), (ew.ADDCMUL, 3, (0.3,)), (ew.ADDCDIV, 3, (1.0,)), (ew.ADDCDIV, 3, (-2.5,)),
    (ew.LERP, 3, ()),
]
# The codes of repmode/kernels/elementwise_more.py and mathtail.py, by their names in the extension's table.
_EW = ew._EW
OPS += [(_EW[name], 2, ()) for name in (
    "COPYSIGN", "FMOD", "REMAINDER", "FLOOR_DIVIDE", "FMAX", "FMIN", "HEAVISIDE", "NEXTAFTER", "LOGADDEXP",
    "LOGADDEXP2", "XLOG1PY", "HYPOT", "LDEXP", "HARDSWISH_BACKWARD", "HARDSIGMOID_BACKWARD", "LOG_SIGMOID_BACKWARD",
    "GLU", "ATAN2")]
OPS += [(_EW[name], 1, ()) for name in (
    "FRAC", "FREXP_MANTISSA", "FREXP_EXPONENT", "SINC", "HARDSWISH", "HARDSIGMOID", "LOG_SIGMOID", "ATAN", "ASIN",
    "ACOS", "SINH", "COSH", "TAN", "LOG10", "ASINH", "ACOSH", "ATANH")]
OPS += [
    (_EW["NAN_TO_NUM"], 1, (0.0, 3.0e38, -3.0e38)), (_EW["NAN_TO_NUM"], 1, (1.5, 7.0, -7.0)),
    (_EW["ROUND_DECIMALS"], 1, (100.0, 0.0)), (_EW["ROUND_DECIMALS"], 1, (10.0, 1.0)),
    (_EW["LOGIT"], 1, (0.0, 0.0, 0.0)), (_EW["LOGIT"], 1, (1e-6, 1.0 - 1e-6, 1.0)),
    (_EW["LOGIT_BACKWARD"], 2, (0.0, 0.0, 0.0)), (_EW["LOGIT_BACKWARD"], 2, (0.25, 0.75, 1.0)),
    (_EW["SOFTSHRINK"], 1, (0.5,)),
]
# The special functions of repmode/kernels/special.py (polygamma: p0 = n, mvlgamma: p0 = p).
OPS += [(_EW[name], 1, ()) for name in ("LGAMMA", "DIGAMMA", "ERFINV", "NDTRI", "LOG_NDTR", "ERFCX", "ENTR")]
OPS += [(_EW["POLYGAMMA"], 1, (1.0,)), (_EW["POLYGAMMA"], 1, (3.0,)), (_EW["MVLGAMMA"], 1, (3.0,)),
        (_EW["ZETA"], 2, ())]
# Bessel functions (unary) and orthogonal polynomials ((x, n); random n truncates to small degrees,
# negative ones give 0): repmode/kernels/bessel.py
OPS += [(_EW[name], 1, ()) for name in (
    "I0", "I0E", "I1", "I1E", "BESSEL_K0", "BESSEL_K1", "BESSEL_K0E", "BESSEL_K1E", "SPHERICAL_BESSEL_J0",
    "BESSEL_J0", "BESSEL_J1", "BESSEL_Y0", "BESSEL_Y1")]
OPS += [(_EW[name], 2, ()) for name in (
    "CHEBYSHEV_T", "CHEBYSHEV_U", "CHEBYSHEV_V", "CHEBYSHEV_W", "SHIFTED_CHEBYSHEV_T", "SHIFTED_CHEBYSHEV_U",
    "SHIFTED_CHEBYSHEV_V", "SHIFTED_CHEBYSHEV_W", "HERMITE_H", "HERMITE_HE", "LAGUERRE_L", "LEGENDRE_P")]
OPS += [(_EW["KAISER_WINDOW"], 1, (12.0, 40.0)), (_EW["KAISER_WINDOW"], 1, (0.5, 3.5))]  # p0 = beta, p1 = (N - 1)/2
# The incomplete gamma functions (a, x) and Airy Ai: repmode/kernels/special.py (csrc/common/math_igamma.h)
OPS += [(_EW["IGAMMA"], 2, ()), (_EW["IGAMMAC"], 2, ()), (_EW["AIRY_AI"], 1, ())]
OP_IDS = [f"op{code}-{'_'.join(map(str, p)) or 'noparam'}" for code, _, p in OPS]


def test_every_op_code_is_covered():
    # Every code of the extension's table (csrc/common/elementwise.h), not only those this module names.
    missing = sorted(set(_EW.values()) - {code for code, _, _ in OPS})
    assert not missing, [ew._EW_NAME[c] for c in missing]


# --- elementwise (general N-d form) ---

def _strided(x: torch.Tensor, shape) -> tuple[int, list[int]]:
    x = x.expand(shape)
    return x.data_ptr(), list(x.stride())


def _general(module, op, dtype, shape, out, operands, params, threads):
    """Calls module.elementwise with operands that are tensors (on out's device), numbers or None."""
    args = []
    for x in operands:
        if isinstance(x, torch.Tensor):
            p, s = _strided(x, shape)
            args += [p, s, 0.0]
        elif x is None:
            args += [0, [], 0.0]
        else:
            args += [0, [], float(x)]
    pa, sa, va, pb, sb, vb, pc, sc, vc = args
    module.elementwise(op, CODE[dtype], list(shape), out.data_ptr(), list(out.stride()), pa, sa, va, pb, sb, vb,
                       operands[1] is not None, pc, sc, vc, operands[2] is not None, list(params), threads)


def _compare_general(op, dtype, shape, out_stride, operands, params, inplace=False):
    """CPU and GPU on the same operands; out is a fresh tensor with out_stride, or operand a itself."""
    if inplace:
        out_c = operands[0].clone()
        out_g = on_gpu(out_c)
        ops_c, ops_g = [out_c, *operands[1:]], [out_g, *[on_gpu(x) if isinstance(x, torch.Tensor) else x
                                                         for x in operands[1:]]]
    else:
        out_c = torch.empty_strided(shape, out_stride or torch.empty(shape).stride(), dtype=dtype).fill_(1234.5)
        out_g = on_gpu(out_c)
        ops_c = list(operands)
        ops_g = [on_gpu(x) if isinstance(x, torch.Tensor) else x for x in operands]
    _general(CPU, op, dtype, shape, out_c, ops_c, params, THREADS)
    _general(GPU, op, dtype, shape, out_g, ops_g, params, stream())
    finish()
    assert_bitwise_equal(out_g.cpu(), out_c, f"op {op} {dtype} {tuple(shape)}")


def _operands(arity, shapes, dtype, seed):
    xs = [random_input(s, dtype, seed + k) for k, s in enumerate(shapes[:arity])]
    return xs + [None] * (3 - arity)


# Sizes at the edges of the launch (kBlock threads per block) and of the 4096-element tiles elsewhere.
SIZES = [1, 31, 32, 33, BLOCK - 1, BLOCK, BLOCK + 1, 4095, 4096, 4097, 3 * BLOCK * 7 + 5]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,arity,params", OPS, ids=OP_IDS)
def test_elementwise_contiguous(op, arity, params, dtype):
    for n in SIZES:
        _compare_general(op, dtype, [n], None, _operands(arity, [[n]] * 3, dtype, n), params)
    shape = [3, 5, 67]
    _compare_general(op, dtype, shape, None, _operands(arity, [shape] * 3, dtype, 7), params)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,arity,params", OPS, ids=OP_IDS)
def test_elementwise_transposed(op, arity, params, dtype):
    # Transposed inputs into a contiguous output, and contiguous inputs into a transposed output.
    shape = [33, 65]
    xs = [random_input([65, 33], dtype, 11 + k).t() for k in range(arity)] + [None] * (3 - arity)
    _compare_general(op, dtype, shape, None, xs, params)
    xs = _operands(arity, [shape] * 3, dtype, 21)
    _compare_general(op, dtype, shape, [1, 33], xs, params)
    # A 4-d permutation with a sliced (non-mergeable) input.
    base = random_input([4, 6, 9, 10], dtype, 31)
    a = base.permute(2, 0, 3, 1)[:, :, ::3, 1:]
    shape = list(a.shape)
    rest = [random_input(shape, dtype, 40 + k) for k in range(arity - 1)]
    _compare_general(op, dtype, shape, None, [a, *rest] + [None] * (3 - arity), params)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,arity,params", OPS, ids=OP_IDS)
def test_elementwise_broadcast(op, arity, params, dtype):
    shape = [7, 33, 5]
    shapes = [[7, 1, 5], [1, 33, 1], [7, 33, 1]]
    xs = _operands(arity, shapes, dtype, 50)  # expanded to `shape` (stride 0) when passed
    _compare_general(op, dtype, shape, None, xs, params)
    # Size-1 dims and a single element.
    _compare_general(op, dtype, [1, 1, 1], None, _operands(arity, [[1, 1, 1]] * 3, dtype, 51), params)
    _compare_general(op, dtype, [], None, _operands(arity, [[]] * 3, dtype, 52), params)


SCALARS = [0.75, -2.0, 0.1, float("inf"), float("nan"), 1e-300]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,arity,params", OPS, ids=OP_IDS)
def test_elementwise_scalar_operands(op, arity, params, dtype):
    shape = [5, 77]
    for k, s in enumerate(SCALARS):
        xs = _operands(arity, [shape] * 3, dtype, 60 + k)
        for slot in range(1, arity):  # b or c a Python number (rounded once to T)
            ys = list(xs)
            ys[slot] = s
            _compare_general(op, dtype, shape, None, ys, params)
        ys = list(xs)  # a itself a number
        ys[0] = s
        if arity > 1:
            _compare_general(op, dtype, shape, None, ys, params)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,arity,params", OPS, ids=OP_IDS)
def test_elementwise_inplace(op, arity, params, dtype):
    shape = [9, 130]
    _compare_general(op, dtype, shape, None, _operands(arity, [shape] * 3, dtype, 70), params, inplace=True)
    t = random_input([130, 9], dtype, 71).t()  # out aliases a transposed a
    xs = [t] + _operands(arity, [shape] * 3, dtype, 72)[1:]
    _compare_general(op, dtype, shape, None, xs, params, inplace=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_empty_and_errors(dtype):
    for shape in ([0], [3, 0, 5]):
        out_c, out_g = torch.empty(shape, dtype=dtype), torch.empty(shape, dtype=dtype, device="cuda")
        _general(CPU, ew.EXP, dtype, shape, out_c, [out_c, None, None], (), THREADS)
        _general(GPU, ew.EXP, dtype, shape, out_g, [out_g, None, None], (), stream())
        finish()
    x = torch.ones(4, dtype=dtype, device="cuda")
    with pytest.raises(ValueError):
        _general(GPU, 9, dtype, [4], x, [x, None, None], (), stream())
    with pytest.raises(ValueError):
        GPU.elementwise_flat(9, CODE[dtype], 4, x.data_ptr(), x.data_ptr(), 0, 0.0, False, 0.0, 0.0, stream())
    finish()


# --- elementwise_flat (contiguous hot path) ---

FLAT_SIZES = [0, 1, 7, 31, 32, 33, BLOCK - 1, BLOCK + 1, 4095, 4096, 4097, 65537]


def _flat(module, op, dtype, n, out, a, b, b_value, has_b, params, threads):
    p0 = params[0] if params else 0.0
    p1 = params[1] if len(params) > 1 else 0.0
    module.elementwise_flat(op, CODE[dtype], n, out.data_ptr(), a.data_ptr(), b.data_ptr() if b is not None else 0,
                            b_value, has_b, p0, p1, threads)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,arity,params", [o for o in OPS if o[1] <= 2 and len(o[2]) <= 2],
                         ids=[i for o, i in zip(OPS, OP_IDS) if o[1] <= 2 and len(o[2]) <= 2])
def test_elementwise_flat(op, arity, params, dtype):
    for n in FLAT_SIZES:
        a = random_input([n], dtype, n)
        b = random_input([n], dtype, n + 1)
        variants = [(None, 0.0, False)] if arity == 1 else [(b, 0.0, True), (None, 0.5, True), (None, -3.0, True)]
        for bt, bv, has_b in variants:
            for inplace in (False, True):
                a_c = a.clone()
                a_g = on_gpu(a)
                out_c = a_c if inplace else torch.full([n], 7.0, dtype=dtype)
                out_g = a_g if inplace else on_gpu(torch.full([n], 7.0, dtype=dtype))
                _flat(CPU, op, dtype, n, out_c, a_c, bt, bv, has_b, params, THREADS)
                _flat(GPU, op, dtype, n, out_g, a_g, None if bt is None else on_gpu(bt), bv, has_b, params,
                      stream())
                finish()
                assert_bitwise_equal(out_g.cpu(), out_c, f"flat op {op} n={n} b={bt is not None}/{bv}")


# --- random_fill and random_ints ---

DISTS = [(0, 0.0, 1.0), (0, -2.5, 3.0), (1, 0.0, 1.0), (1, 1.5, 0.3), (3, 1.0, 0.0), (3, 0.25, 0.0),
         (4, 0.3, 0.0), (4, 1.0, 0.0), (4, 1e-6, 0.0), (5, 0.0, 1.0), (5, -1.0, 0.5), (6, 0.0, 1.0), (6, 2.0, 0.1)]
SEEDS_OFFSETS = [(0, 0), (12345, 1), (12345, 3), (2**63 + 17, 5), (2**64 - 1, 2**64 - 3), (987654321, 4096 + 2)]
RANDOM_SIZES = [0, 1, 2, 3, 5, 31, 33, 4 * BLOCK - 1, 4 * BLOCK + 1, 2 * BLOCK + 3, 4097, 100003]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dist,p0,p1", DISTS)
@pytest.mark.parametrize("n", RANDOM_SIZES)
def test_random_fill(dist, p0, p1, dtype, n):
    for seed, offset in SEEDS_OFFSETS:
        out_c = torch.full([n], 5.0, dtype=dtype)
        out_g = on_gpu(out_c)
        used_c = CPU.random_fill(dist, CODE[dtype], out_c.data_ptr(), n, seed, offset, p0, p1, THREADS)
        used_g = GPU.random_fill(dist, CODE[dtype], out_g.data_ptr(), n, seed, offset, p0, p1, stream())
        finish()
        assert used_g == used_c, f"dist {dist} n={n}: blocks {used_g} vs {used_c}"
        assert_bitwise_equal(out_g.cpu(), out_c, f"dist {dist} seed={seed} offset={offset} n={n}")


def test_random_fill_bad_codes():
    x = torch.empty(4, device="cuda")
    for dist in (-1, 2, 7):
        with pytest.raises(ValueError):
            GPU.random_fill(dist, 0, x.data_ptr(), 4, 0, 0, 0.0, 1.0, stream())
    with pytest.raises(ValueError):
        GPU.random_fill(0, 5, x.data_ptr(), 4, 0, 0, 0.0, 1.0, stream())


INT_RANGES = [(0, 10), (-5, 3), (-(2**63), 0), (7, 2**64 - 1), (0, 1), (100, 2**40 + 3)]


@pytest.mark.parametrize("lo,span", INT_RANGES)
@pytest.mark.parametrize("n", RANDOM_SIZES)
def test_random_ints(lo, span, n):
    for seed, offset in SEEDS_OFFSETS:
        out_c = torch.full([n], -1, dtype=torch.int64)
        out_g = on_gpu(out_c)
        used_c = CPU.random_ints(out_c.data_ptr(), n, seed, offset, lo, span, THREADS)
        used_g = GPU.random_ints(out_g.data_ptr(), n, seed, offset, lo, span, stream())
        finish()
        assert used_g == used_c
        assert torch.equal(out_g.cpu(), out_c), f"ints lo={lo} span={span} seed={seed} offset={offset} n={n}"


def test_random_offsets_concatenate():
    # Two draws at consecutive offsets give the same bits as one draw of both (per-element counters).
    n1, n2 = 4 * 37 + 3, 4 * 11
    whole = torch.empty(n1 + 1 + n2, device="cuda")
    used = GPU.random_fill(0, 0, whole.data_ptr(), whole.numel(), 9, 2, 0.0, 1.0, stream())
    first = torch.empty(n1 + 1, device="cuda")
    k = GPU.random_fill(0, 0, first.data_ptr(), n1 + 1, 9, 2, 0.0, 1.0, stream())
    second = torch.empty(n2, device="cuda")
    GPU.random_fill(0, 0, second.data_ptr(), n2, 9, 2 + k, 0.0, 1.0, stream())
    finish()
    assert used == -(-whole.numel() // 4)
    assert_bitwise_equal(torch.cat([first, second]).cpu(), whole.cpu())


# --- cumulative ---

CUMULATIVE_SHAPES = [(1, 0, 1), (0, 5, 3), (4, 5, 0), (1, 1, 1), (1, 33, 1), (1, 4097, 1), (3, 33, 5),
                     (2, 31, 257), (1, 5, 4097), (7, 100, 1), (BLOCK + 1, 3, 1), (1, 2, 2 * BLOCK - 1),
                     (5, 64, 33)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("product", [False, True])
@pytest.mark.parametrize("outer,n,inner", CUMULATIVE_SHAPES)
def test_cumulative(outer, n, inner, product, dtype):
    x = random_input([outer, n, inner], dtype, outer * 1000 + n * 10 + inner)
    if product:  # near 1 so long products stay finite, with the special values kept
        x = torch.where(torch.isfinite(x) & (x.abs() > 1e-3), 1.0 + 0.05 * x, x)
    for inplace in (False, True):
        x_c = x.clone()
        x_g = on_gpu(x)
        out_c = x_c if inplace else torch.full_like(x, 3.0)
        out_g = x_g if inplace else on_gpu(torch.full_like(x, 3.0))
        CPU.cumulative(CODE[dtype], x_c.data_ptr(), out_c.data_ptr(), outer, n, inner, product, THREADS)
        GPU.cumulative(CODE[dtype], x_g.data_ptr(), out_g.data_ptr(), outer, n, inner, product, stream())
        finish()
        assert_bitwise_equal(out_g.cpu(), out_c, f"cumulative {(outer, n, inner)} product={product}")
