"""Activations of mobile and classic networks (hardswish, hardsigmoid, the shrinks, threshold, celu,
glu, prelu, log_sigmoid, rrelu), forward and backward (docs/semantics.md, "Activations and small
layers"): elementwise kernels (formulas in csrc/common/elementwise.h) and composites of registered
ops. Most are a chain of single IEEE operations in torch's own order, so they equal native torch bit
for bit; glu and log_sigmoid use repmode's correctly rounded sigmoid/exp/log1p; rrelu's noise comes
from repmode's random stream. Comparisons and ``where`` inside run natively (exact selection)."""
from __future__ import annotations

import torch

from .. import _ext
from ..registry import overloads_named, register_composite, register_kernel, register_passthrough
from ._common import FLOAT_WIDENED, call_registered, param, unsupported, widened
from .elementwise import elementwise

aten = torch.ops.aten
_call = call_registered


def _float_input(func, args, kwargs, x):
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise unsupported(func, args, kwargs, "floating-point inputs only (float32, float64, bfloat16, float16)")


# ---- hardswish / hardsigmoid / softshrink / log_sigmoid / glu: elementwise kernels (formulas in
# csrc/common/elementwise.h): torch's CPU chains, every step one rounding in float32 (bf16/fp16 widened,
# one rounding at the end) or float64; log_sigmoid in float64, rounded once.

_EW = _ext.codes("EwOp")
HARDSWISH, HARDSWISH_BACKWARD, HARDSIGMOID, HARDSIGMOID_BACKWARD, SOFTSHRINK, LOG_SIGMOID, LOG_SIGMOID_BACKWARD, \
    GLU = (_EW[n] for n in ("HARDSWISH", "HARDSWISH_BACKWARD", "HARDSIGMOID", "HARDSIGMOID_BACKWARD", "SOFTSHRINK",
                            "LOG_SIGMOID", "LOG_SIGMOID_BACKWARD", "GLU"))


def _unary(op, inplace=False):
    def run(func, args, kwargs):
        x = args[0]
        _float_input(func, args, kwargs, x)
        return elementwise(op, func, args, kwargs, x, inplace=inplace)

    run.__module__ = __name__
    return run


def _backward(op):
    def run(func, args, kwargs):
        g, x = args[0], args[1]
        _float_input(func, args, kwargs, x)
        return elementwise(op, func, args, kwargs, g, x)

    run.__module__ = __name__
    return run


# x · min(max(x + 3, 0), 6) / 6
register_kernel(aten.hardswish.default, FLOAT_WIDENED, out=aten.hardswish.out)(_unary(HARDSWISH))
register_kernel(aten.hardswish_.default, FLOAT_WIDENED)(_unary(HARDSWISH, inplace=True))
# x ≤ −3: 0;  x ≥ 3: g;  else g · (x / 3 + 0.5) (NaN gives NaN, as torch's vectorized path; its scalar tail gives g)
register_kernel(aten.hardswish_backward.default, FLOAT_WIDENED, out=aten.hardswish_backward.out)(
    _backward(HARDSWISH_BACKWARD))
# min(max(x + 3, 0), 6) / 6
register_kernel(aten.hardsigmoid.default, FLOAT_WIDENED, out=aten.hardsigmoid.out)(_unary(HARDSIGMOID))
register_kernel(aten.hardsigmoid_.default, FLOAT_WIDENED)(_unary(HARDSIGMOID, inplace=True))
# −3 < x < 3: g · RN_T(1/6);  else 0 (torch multiplies float64 gradients by the float32 constant RN32(1/6),
# 3e-8 off; repmode by RN64(1/6): more accurate)
register_kernel(aten.hardsigmoid_backward.default, FLOAT_WIDENED, out=aten.hardsigmoid_backward.grad_input)(
    _backward(HARDSIGMOID_BACKWARD))


@register_kernel(aten.softshrink.default, FLOAT_WIDENED, out=aten.softshrink.out)
def softshrink(func, args, kwargs):
    """−λ ≤ x ≤ λ: +0;  x > λ: x − λ;  else x + λ (so NaN stays NaN)."""
    x = args[0]
    lambd = param(func, args, kwargs, "lambd")
    _float_input(func, args, kwargs, x)
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return elementwise(SOFTSHRINK, func, args, kwargs, x, params=(lambd,))


# ---- shrinks and threshold: pure selections are torch's own kernels.
register_passthrough(
    overloads_named("aten.threshold.default", "aten.threshold_.default", "aten.threshold.out",
                    "aten.hardshrink.default", "aten.hardshrink.out",
                    "aten.hardshrink_backward.default", "aten.hardshrink_backward.grad_input",
                    "aten.softshrink_backward.default", "aten.softshrink_backward.grad_input"),
    reason="selection: each output is one input element (x or the gradient) or the given value, no arithmetic",
    family="activations")


# ---- celu: elu(x, α, 1, 1/α), as torch defines it.

def _celu_params(func, args, kwargs):
    alpha = param(func, args, kwargs, "alpha")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return alpha, 1.0, 1.0 / float(alpha)


@register_composite(aten.celu.default, FLOAT_WIDENED, out=aten.celu.out)
def celu(func, args, kwargs):
    return _call(aten.elu.default, args[0], *_celu_params(func, args, kwargs))


@register_composite(aten.celu_.default, FLOAT_WIDENED)
def celu_(func, args, kwargs):
    return _call(aten.elu_.default, args[0], *_celu_params(func, args, kwargs))


# ---- glu: a · sigmoid(b), the halves of dim.

def _halves(func, args, kwargs, x, dim):
    _float_input(func, args, kwargs, x)
    if x.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = x.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % x.dim()} is size {n}")
    return x.narrow(dim, 0, n // 2), x.narrow(dim, n // 2, n // 2)


@register_kernel(aten.glu.default, FLOAT_WIDENED, out=aten.glu.out)
def glu(func, args, kwargs):
    """a · sigmoid(b) (repmode's correctly rounded sigmoid, then one product)."""
    x = args[0]
    a, b = _halves(func, args, kwargs, x, param(func, args, kwargs, "dim"))
    return elementwise(GLU, func, args, kwargs, a, b)


@register_composite(aten.glu_backward.default, FLOAT_WIDENED, out=aten.glu_backward.grad_input)
@widened()
def glu_backward(func, args, kwargs):
    """d/da = sigmoid(b) · g;  d/db = ((sigmoid(b) · sigmoid(−b)) · a) · g, concatenated along dim."""
    g, x, dim = args[0], args[1], args[2]
    a, b = _halves(func, args, kwargs, x, dim)
    s = _call(aten.sigmoid.default, b)
    sn = _call(aten.sigmoid.default, _call(aten.neg.default, b))
    ga = _call(aten.mul.Tensor, s, g)
    gb = _call(aten.mul.Tensor, _call(aten.mul.Tensor, _call(aten.mul.Tensor, s, sn), a), g)
    return torch.cat([ga, gb], dim)


# ---- prelu: x > 0 ? x : w · x (one rounding), and its backward.

@register_composite(aten._prelu_kernel.default, FLOAT_WIDENED)
def prelu_kernel(func, args, kwargs):
    x, w = args[0], args[1]
    _float_input(func, args, kwargs, x)
    return torch.where(x > 0, x, _call(aten.mul.Tensor, w, x))


@register_composite(aten._prelu_kernel_backward.default, FLOAT_WIDENED)
def prelu_kernel_backward(func, args, kwargs):
    """grad_input = x > 0 ? g : w · g;  grad_weight = x > 0 ? 0 : x · g (in the broadcast shape; autograd
    sums it to the weight's shape with the Sum order)."""
    g, x, w = args
    _float_input(func, args, kwargs, x)
    positive = x > 0
    grad_input = torch.where(positive, g, _call(aten.mul.Tensor, w, g))
    grad_weight = torch.where(positive, 0.0, _call(aten.mul.Tensor, x, g))
    return grad_input, grad_weight


# ---- log_sigmoid: min(0, x) − log1p(exp(−|x|)) evaluated in float64, rounded once.

@register_kernel(aten.log_sigmoid_forward.default, FLOAT_WIDENED, out=aten.log_sigmoid_forward.output)
def log_sigmoid_forward(func, args, kwargs):
    """(output, buffer): the buffer is empty (as on CUDA); the backward does not read it."""
    x = args[0]
    _float_input(func, args, kwargs, x)
    return elementwise(LOG_SIGMOID, func, args, kwargs, x), x.new_empty((0,))


# g · sigmoid(−x) (two roundings)
register_kernel(aten.log_sigmoid_backward.default, FLOAT_WIDENED, out=aten.log_sigmoid_backward.grad_input)(
    _backward(LOG_SIGMOID_BACKWARD))


# ---- rrelu: training draws r ~ uniform(lower, upper) from repmode's stream for every element (one key,
# element i in logical row-major order), noise = x ≤ 0 ? r : 1, y = x · noise; eval is
# leaky_relu(x, (lower + upper) / 2).

def _rrelu(func, args, kwargs):
    x, noise = args[0], args[1]
    lower, upper, training, generator = (param(func, args, kwargs, n)
                                         for n in ("lower", "upper", "training", "generator"))
    _float_input(func, args, kwargs, x)
    if not training:
        return _call(aten.leaky_relu.default, x, (float(lower) + float(upper)) / 2), None
    if float(upper) < float(lower):
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound, got {lower} and {upper}")
    if noise.shape != x.shape:
        raise RuntimeError(f"noise of shape {list(noise.shape)} does not match the input's {list(x.shape)}")
    draws = torch.empty(x.shape, dtype=noise.dtype, device=x.device)
    _call(aten.uniform_.default, draws, float(lower), float(upper), generator=generator)
    new_noise = torch.where(x <= 0, draws, torch.ones((), dtype=noise.dtype))
    return _call(aten.mul.Tensor, x, new_noise), new_noise


@register_composite(aten.rrelu_with_noise.default, FLOAT_WIDENED, out=aten.rrelu_with_noise.out)
def rrelu_with_noise(func, args, kwargs):
    out, new_noise = _rrelu(func, args, kwargs)
    if new_noise is not None:
        args[1].copy_(new_noise)
    return out


@register_composite(aten.rrelu_with_noise_.default, FLOAT_WIDENED)
def rrelu_with_noise_(func, args, kwargs):
    out, new_noise = _rrelu(func, args, kwargs)
    if new_noise is not None:
        args[1].copy_(new_noise)
    return args[0].copy_(out)


@register_composite(aten.rrelu_with_noise_functional.default, FLOAT_WIDENED)
def rrelu_with_noise_functional(func, args, kwargs):
    out, new_noise = _rrelu(func, args, kwargs)
    return out, (args[1].clone() if new_noise is None else new_noise)


@register_composite(aten.rrelu_with_noise_backward.default, FLOAT_WIDENED, out=aten.rrelu_with_noise_backward.out)
def rrelu_with_noise_backward(func, args, kwargs):
    """Training (upper − lower > 1e-6): g · noise; else leaky_relu_backward with slope (lower + upper) / 2."""
    g, x, noise, lower, upper, training, self_is_result = args
    if training and float(upper) - float(lower) > 1e-6:
        return _call(aten.mul.Tensor, g, noise)
    slope = (float(lower) + float(upper)) / 2
    if self_is_result and slope < 0:
        raise RuntimeError("In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                           "supported.")
    return _call(aten.leaky_relu_backward.default, g, x, slope, self_is_result)
