"""Explicit reproducible functions: ``repmode.ops.mm(a, b)`` gives the same bits on every machine
without a ``with repmode.enabled()`` block around the caller.

Each is the torch function of the same name run through repmode's registered kernels (strict:
an input repmode does not cover raises :class:`repmode.UnsupportedOpError`); the backward of the
result runs through repmode too. There is no second implementation: the result is bit for bit
what the same call gives inside ``repmode.enabled()``. The orders are those of
docs/semantics.md, summarised in each docstring.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from .wrap import run_reproducibly

__all__ = ["mm", "matmul", "bmm", "linear", "div", "sqrt", "exp", "log", "sum", "mean", "softmax", "log_softmax",
           "cross_entropy", "conv2d", "layer_norm"]


def mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` (2-D): each output is one fma chain over k, in increasing k, from +0.0."""
    return run_reproducibly(torch.mm, a, b)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``torch.matmul`` (any ranks, broadcasting): lowered to mm/bmm/mv, one fma chain over k per output."""
    return run_reproducibly(torch.matmul, a, b)


def bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Batched ``a @ b``: per batch, each output one fma chain over k from +0.0."""
    return run_reproducibly(torch.bmm, a, b)


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``x @ weight.T + bias``: the fma chain over the input features, then one rounded add of the bias."""
    return run_reproducibly(F.linear, x, weight, bias)


def div(a, b, *, rounding_mode: str | None = None) -> torch.Tensor:
    """``a / b``: one IEEE-754 division per element, round to nearest even (``rounding_mode`` as torch's)."""
    return run_reproducibly(torch.div, a, b, rounding_mode=rounding_mode)


def sqrt(x: torch.Tensor) -> torch.Tensor:
    """Square root: the IEEE-754 operation, correctly rounded."""
    return run_reproducibly(torch.sqrt, x)


def exp(x: torch.Tensor) -> torch.Tensor:
    """``e**x``, correctly rounded (repmode's routine, the same on every device)."""
    return run_reproducibly(torch.exp, x)


def log(x: torch.Tensor) -> torch.Tensor:
    """Natural logarithm, correctly rounded (repmode's routine, the same on every device)."""
    return run_reproducibly(torch.log, x)


def sum(x: torch.Tensor, dim=None, keepdim: bool = False, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    """The Sum order: the terms in logical row-major order, in chunks of 4096 consecutive terms, each
    summed by 32 interleaved lanes from −0.0 and a fixed halving tree; the chunk values reduced
    again by the same rule (docs/semantics.md, "Sum order")."""
    if dim is None:
        return run_reproducibly(torch.sum, x, dtype=dtype)
    return run_reproducibly(torch.sum, x, dim, keepdim, dtype=dtype)


def mean(x: torch.Tensor, dim=None, keepdim: bool = False, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    """The Sum order's total divided once by the number of terms."""
    if dim is None:
        return run_reproducibly(torch.mean, x, dtype=dtype)
    return run_reproducibly(torch.mean, x, dim, keepdim, dtype=dtype)


def softmax(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Per row: m = max, S = the Sum order of exp(x − m), y = exp(x − m) / S, each step rounded once."""
    return run_reproducibly(torch.softmax, x, dim)


def log_softmax(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Per row: m = max, L = log of the Sum order of exp(x − m), y = (x − m) − L."""
    return run_reproducibly(torch.log_softmax, x, dim)


def cross_entropy(input: torch.Tensor, target: torch.Tensor, **kwargs) -> torch.Tensor:
    """``F.cross_entropy``: log_softmax's order, then the per-row terms reduced in the Sum order
    (``weight``, ``ignore_index``, ``reduction``, ``label_smoothing`` as torch's)."""
    return run_reproducibly(F.cross_entropy, input, target, **kwargs)


def conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> torch.Tensor:
    """``F.conv2d``: each output one fma chain over (input channel, kernel offset) with padding as
    zero terms, then one rounded add of the bias."""
    return run_reproducibly(F.conv2d, x, weight, bias, stride, padding, dilation, groups)


def layer_norm(x: torch.Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> torch.Tensor:
    """``F.layer_norm``: per row, mean and variance in the Sum order, rstd = 1 / sqrt(var + eps),
    then (x − mean)·rstd·weight + bias, each step rounded once."""
    return run_reproducibly(F.layer_norm, x, normalized_shape, weight, bias, eps)
