"""Pooling: max (with indices), average and adaptive pooling in 2-d and 3-d, forward and
backward. Every op runs as 3-d pooling over (D, H, W) planes (2-d: D = 1); the 1-d modules and
the composite ops (max_pool1d, avg_pool1d, adaptive_avg_pool1d/2d/3d, adaptive_max_pool1d)
decompose into these. Canonical orders: csrc/common/pooling.h and docs/semantics.md, "Pooling"."""
from __future__ import annotations

import torch

from .. import _ext
from ..registry import register_kernel
from ._common import (
    FLOAT_WIDENED,
    check_device,
    float_code,
    kernels_for,
    launch_arg,
    named_arguments,
    suggest_memory_format,
    unsupported,
    widened,
)

aten = torch.ops.aten
Tensor = torch.Tensor

# Pooling kinds defined in csrc/common/pooling.h (REPMODE_POOL_KINDS).
_KINDS = _ext.codes("PoolKind")
MAX, AVG, ADAPTIVE_AVG, ADAPTIVE_MAX = (_KINDS[n] for n in ("MAX", "AVG", "ADAPTIVE_AVG", "ADAPTIVE_MAX"))


# Tests set this to run every pooling op through the plain C++ reference loops instead.
USE_REFERENCE = False


def _tuple(func, args, kwargs, value, n: int, name: str, default=None) -> list[int]:
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        if default is None:
            raise RuntimeError(f"{func}: {name} must be given")
        return list(default)
    if isinstance(value, int):
        return [value] * n
    value = [int(v) for v in value]
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"{func}: {name} must either be a single int, or a tuple of {n} ints")
    return value


def _memory_format(x: Tensor, nsp: int):
    """torch's output layout: channels_last(_3d) for a batched input whose strides suggest it."""
    if x.dim() != nsp + 2:
        return torch.contiguous_format
    return suggest_memory_format(x)


def _sizes5(x: Tensor, nsp: int):
    """(N, C, D, H, W) sizes and strides of x ((C, *spatial) or (N, C, *spatial)) as 3-d pooling."""
    sizes, strides = list(x.shape), list(x.stride())
    if x.dim() == nsp + 1:
        sizes, strides = [1] + sizes, [0] + strides
    if nsp == 2:
        sizes = sizes[:2] + [1] + sizes[2:]
        strides = strides[:2] + [0] + strides[2:]
    return sizes, strides


def _check_input(func, args, kwargs, x: Tensor, nsp: int):
    code = float_code(func, args, kwargs, x)
    if x.dim() not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"{func}: expected {nsp + 1}D or {nsp + 2}D input, got {x.dim()}D")
    first = x.dim() - nsp - 1
    if any(s == 0 for s in x.shape[first + 1:]) or (x.dim() == nsp + 2 and x.shape[1] == 0):
        raise RuntimeError(f"{func}: expected input with non-zero sizes except the batch dimension, "
                           f"got {list(x.shape)}")
    return code


def _out_len(size: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    o = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= size + p:
        o -= 1
    return o


class _Pool:
    """Arguments of one pooling call, normalised to 3 axes (D, H, W)."""

    def __init__(self, func, args, kwargs, kind, x, nsp, kernel=None, stride=None, padding=None, dilation=None,
                 ceil_mode=False, count_include_pad=True, divisor_override=None, output_size=None):
        self.kind, self.nsp = kind, nsp
        self.code = _check_input(func, args, kwargs, x, nsp)
        spatial = list(x.shape[-nsp:])
        self.count_include_pad = bool(count_include_pad)
        self.divisor = 0
        pad1 = [1] * (3 - nsp)
        pad0 = [0] * (3 - nsp)
        if kind in (MAX, AVG):
            k = _tuple(func, args, kwargs, kernel, nsp, "kernel_size")
            s = _tuple(func, args, kwargs, stride, nsp, "stride", default=k)
            p = _tuple(func, args, kwargs, padding, nsp, "padding", default=[0] * nsp)
            d = _tuple(func, args, kwargs, dilation, nsp, "dilation", default=[1] * nsp)
            if min(k) <= 0 or min(s) <= 0 or min(d) <= 0:
                raise RuntimeError(f"{func}: kernel_size, stride and dilation must be greater than zero, "
                                   f"but got kernel_size={k}, stride={s}, dilation={d}")
            if any(pi < 0 or pi > ki // 2 for pi, ki in zip(p, k)):
                raise RuntimeError(f"{func}: pad should be at least zero and at most half of kernel size, "
                                   f"but got pad={p} and kernel_size={k}")
            if divisor_override is not None and divisor_override == 0:
                raise RuntimeError(f"{func}: divisor must be not zero")
            self.divisor = int(divisor_override or 0)
            out = [_out_len(i, ki, si, pi, di, bool(ceil_mode)) for i, ki, si, pi, di in zip(spatial, k, s, p, d)]
            if min(out) < 1:
                raise RuntimeError(f"{func}: given input size {spatial}, the calculated output size {out} is too small")
            self.k, self.s, self.p, self.d = pad1 + k, pad1 + s, pad0 + p, pad1 + d
        else:
            out = _tuple(func, args, kwargs, output_size, nsp, "output_size")
            if min(out) < 0 or (min(out) == 0 and x.numel() > 0):
                raise RuntimeError(f"{func}: output_size must be positive, got {out}")
            self.k, self.s, self.p, self.d = [1] * 3, [1] * 3, [0] * 3, [1] * 3
        self.out_spatial = out
        self.out3 = pad1 + out
        self.in_sizes, self.in_strides = _sizes5(x, nsp)
        self.in_shape = x.shape
        self.out_shape = torch.Size(list(x.shape[:-nsp]) + out)
        self.fmt = _memory_format(x, nsp)
        self.result_strides = None  # (output strides, grad_input strides), set on first use

    def strides(self, t: Tensor):
        return _sizes5(t, self.nsp)[1]

    def layout(self):
        """Strides of the tensors this op allocates: its output and the input's gradient."""
        if self.result_strides is None:
            out = torch.empty(self.out_shape, dtype=torch.int8, memory_format=self.fmt)
            gi = torch.empty(self.in_shape, dtype=torch.int8, memory_format=self.fmt)
            self.result_strides = (self.strides(out), self.strides(gi))
        return self.result_strides


_POOLS: dict = {}


def _hashable(v):
    return tuple(v) if isinstance(v, list) else v


def _pool(func, args, kwargs, kind, x, nsp, *params, **named) -> _Pool:
    """The _Pool of these arguments, cached by input geometry (shapes repeat every step)."""
    key = (func, kind, x.dtype, x.device, x.shape, x.stride(), nsp) + tuple(_hashable(v) for v in params) \
        + tuple((k, _hashable(v)) for k, v in named.items())
    p = _POOLS.get(key)
    if p is None:
        p = _Pool(func, args, kwargs, kind, x, nsp, *params, **named)
        if len(_POOLS) > 4096:
            _POOLS.clear()
        _POOLS[key] = p
    return p


def _forward(p: _Pool, x: Tensor, with_index: bool):
    out = torch.empty(p.out_shape, dtype=x.dtype, memory_format=p.fmt, device=x.device)
    idx = torch.empty(p.out_shape, dtype=torch.int64, memory_format=p.fmt, device=x.device) if with_index else None
    os = p.layout()[0]
    kernels_for(x).pool_forward(p.code, p.kind, x.data_ptr(), out.data_ptr(), idx.data_ptr() if with_index else 0,
                                p.in_sizes, p.out3, p.k, p.s, p.p, p.d, p.count_include_pad, p.divisor,
                                p.in_strides, os, os if with_index else _NO_STRIDES, launch_arg(x), USE_REFERENCE)
    return out, idx


_NO_STRIDES = [0] * 5


def _backward(func, args, kwargs, p: _Pool, grad: Tensor, x: Tensor, idx: Tensor | None):
    if grad.dtype != x.dtype:
        raise unsupported(func, args, kwargs, "grad_output and input of different dtypes are not supported")
    check_device(func, args, kwargs, grad, x, idx)
    if grad.shape != p.out_shape:
        raise RuntimeError(f"{func}: expected grad_output of shape {list(p.out_shape)}, got {list(grad.shape)}")
    if idx is not None:
        if idx.dtype != torch.int64:
            raise RuntimeError(f"{func}: expected indices of dtype int64, got {idx.dtype}")
        if idx.shape != p.out_shape:
            raise RuntimeError(f"{func}: expected indices of shape {list(p.out_shape)}, got {list(idx.shape)}")
    gi = torch.empty(x.shape, dtype=x.dtype, memory_format=p.fmt, device=x.device)
    kernels_for(x).pool_backward(p.code, p.kind, grad.data_ptr(), idx.data_ptr() if idx is not None else 0,
                                 gi.data_ptr(), p.in_sizes, p.out3, p.k, p.s, p.p, p.d, p.count_include_pad, p.divisor,
                                 p.layout()[1], p.strides(grad), p.strides(idx) if idx is not None else _NO_STRIDES,
                                 launch_arg(x), USE_REFERENCE)
    return gi


def _nsp(func) -> int:
    return 3 if "3d" in func.__name__ else 2


def _max_pool(func, args, kwargs, with_index):
    b = named_arguments(func, args, kwargs)
    x = b["self"]
    p = _pool(func, args, kwargs, MAX, x, _nsp(func), b["kernel_size"], b["stride"], b["padding"], b["dilation"],
              b["ceil_mode"])
    return _forward(p, x, with_index)


@widened()
def _max_pool_with_indices(func, args, kwargs):
    return _max_pool(func, args, kwargs, True)


@register_kernel([aten.max_pool2d_with_indices.default, aten.max_pool3d_with_indices.default], FLOAT_WIDENED,
                 out=[aten.max_pool2d_with_indices.out, aten.max_pool3d_with_indices.out])
def max_pool_with_indices(func, args, kwargs):
    return _max_pool_with_indices(func, args, kwargs)


@register_kernel([aten.max_pool2d.default, aten.max_pool3d.default], FLOAT_WIDENED)
@widened()
def max_pool(func, args, kwargs):
    return _max_pool(func, args, kwargs, False)[0]


@widened()
def _max_pool_backward(func, args, kwargs):
    b = named_arguments(func, args, kwargs)
    x = b["self"]
    p = _pool(func, args, kwargs, MAX, x, _nsp(func), b["kernel_size"], b["stride"], b["padding"], b["dilation"],
              b["ceil_mode"])
    return _backward(func, args, kwargs, p, b["grad_output"], x, b["indices"])


@register_kernel([aten.max_pool2d_with_indices_backward.default, aten.max_pool3d_with_indices_backward.default],
                 FLOAT_WIDENED,
                 out=[aten.max_pool2d_with_indices_backward.grad_input,
                      aten.max_pool3d_with_indices_backward.grad_input])
def max_pool_backward(func, args, kwargs):
    return _max_pool_backward(func, args, kwargs)


def _avg_pool_args(func, args, kwargs, b):
    return _pool(func, args, kwargs, AVG, b["self"], _nsp(func), b["kernel_size"], b["stride"], b["padding"], None,
                 b["ceil_mode"], b["count_include_pad"], b["divisor_override"])


@widened()
def _avg_pool(func, args, kwargs):
    b = named_arguments(func, args, kwargs)
    return _forward(_avg_pool_args(func, args, kwargs, b), b["self"], False)[0]


@register_kernel([aten.avg_pool2d.default, aten.avg_pool3d.default], FLOAT_WIDENED,
                 out=[aten.avg_pool2d.out, aten.avg_pool3d.out])
def avg_pool(func, args, kwargs):
    return _avg_pool(func, args, kwargs)


@widened()
def _avg_pool_backward(func, args, kwargs):
    b = named_arguments(func, args, kwargs)
    p = _avg_pool_args(func, args, kwargs, b)
    return _backward(func, args, kwargs, p, b["grad_output"], b["self"], None)


@register_kernel([aten.avg_pool2d_backward.default, aten.avg_pool3d_backward.default], FLOAT_WIDENED,
                 out=[aten.avg_pool2d_backward.grad_input, aten.avg_pool3d_backward.grad_input])
def avg_pool_backward(func, args, kwargs):
    return _avg_pool_backward(func, args, kwargs)


@widened()
def _adaptive_avg(func, args, kwargs):
    x, size = args[0], args[1] if len(args) > 1 else kwargs["output_size"]
    return _forward(_pool(func, args, kwargs, ADAPTIVE_AVG, x, _nsp(func), output_size=size), x, False)[0]


@register_kernel([aten._adaptive_avg_pool2d.default, aten._adaptive_avg_pool3d.default], FLOAT_WIDENED,
                 out=[aten._adaptive_avg_pool2d.out, aten._adaptive_avg_pool3d.out])
def adaptive_avg_pool(func, args, kwargs):
    return _adaptive_avg(func, args, kwargs)


@register_kernel([aten._adaptive_avg_pool2d_backward.default, aten._adaptive_avg_pool3d_backward.default],
                 FLOAT_WIDENED)
@widened()
def adaptive_avg_pool_backward(func, args, kwargs):
    grad, x = args[0], args[1]
    nsp = _nsp(func)
    p = _pool(func, args, kwargs, ADAPTIVE_AVG, x, nsp, output_size=list(grad.shape[-nsp:]))
    return _backward(func, args, kwargs, p, grad, x, None)


@widened()
def _adaptive_max(func, args, kwargs):
    x, size = args[0], args[1] if len(args) > 1 else kwargs["output_size"]
    return _forward(_pool(func, args, kwargs, ADAPTIVE_MAX, x, _nsp(func), output_size=size), x, True)


@register_kernel([aten.adaptive_max_pool2d.default, aten.adaptive_max_pool3d.default], FLOAT_WIDENED,
                 out=[aten.adaptive_max_pool2d.out, aten.adaptive_max_pool3d.out])
def adaptive_max_pool(func, args, kwargs):
    return _adaptive_max(func, args, kwargs)


@widened()
def _adaptive_max_backward(func, args, kwargs):
    grad, x, idx = args[0], args[1], args[2]
    nsp = _nsp(func)
    p = _pool(func, args, kwargs, ADAPTIVE_MAX, x, nsp, output_size=list(grad.shape[-nsp:]))
    return _backward(func, args, kwargs, p, grad, x, idx)


@register_kernel([aten.adaptive_max_pool2d_backward.default, aten.adaptive_max_pool3d_backward.default], FLOAT_WIDENED,
                 out=[aten.adaptive_max_pool2d_backward.grad_input,
                      aten.adaptive_max_pool3d_backward.grad_input])
def adaptive_max_pool_backward(func, args, kwargs):
    return _adaptive_max_backward(func, args, kwargs)




# ---- fractional max pooling ------------------------------------------------------------------

@widened()
def _fractional(func, args, kwargs):
    """Selection: torch's kernel draws nothing (the samples are an argument, drawn by the caller
    from repmode's stream under the mode); each window comes from a fixed IEEE formula of its
    sample in the compute dtype (float32 for widened bf16/fp16, as torch's CUDA kernel) and the
    max keeps the first extreme with a NaN winning (the rule of max pooling above): no arithmetic
    on values, so torch's own kernel gives the defined bits."""
    b = named_arguments(func, args, kwargs)
    x, samples = b["self"], b["random_samples"]
    float_code(func, args, kwargs, x, samples)
    if samples.dtype != x.dtype:
        raise RuntimeError(f"{func}: expected random_samples of dtype {x.dtype}, got {samples.dtype}")
    return func(x, b["kernel_size"], b["output_size"], samples)


@register_kernel([aten.fractional_max_pool2d.default, aten.fractional_max_pool3d.default], FLOAT_WIDENED,
                 out=[aten.fractional_max_pool2d.output, aten.fractional_max_pool3d.output])
def fractional_max_pool(func, args, kwargs):
    return _fractional(func, args, kwargs)


@widened()
def _fractional_backward(func, args, kwargs):
    b = named_arguments(func, args, kwargs)
    x = b["self"]
    p = _pool(func, args, kwargs, ADAPTIVE_MAX, x, _nsp(func), output_size=list(b["output_size"]))
    return _backward(func, args, kwargs, p, b["grad_output"], x, b["indices"])


@register_kernel([aten.fractional_max_pool2d_backward.default, aten.fractional_max_pool3d_backward.default],
                 FLOAT_WIDENED,
                 out=[aten.fractional_max_pool2d_backward.grad_input,
                      aten.fractional_max_pool3d_backward.grad_input])
def fractional_max_pool_backward(func, args, kwargs):
    """The max-pooling backward (grad_input[index_o] += grad_output_o in increasing output order)."""
    return _fractional_backward(func, args, kwargs)
