"""Resampling: nearest (and nearest-exact) 1-d/2-d/3-d, linear 1-d, bilinear and bicubic 2-d
(also antialiased), trilinear 3-d upsampling, forward and backward. Each op runs as a resampling of (N, C, D, H, W)
planes (1-d and 2-d: identity axes in front). The ``.vec`` overloads (scale-factor forms, reached
under ``torch.inference_mode``) are registered too: torch's Python decomposition of them is an
elementwise formula of its own, so they compute the output size as torch's C++ does and run the
same kernels. Canonical formulas:
csrc/common/resample.h and docs/semantics.md, "Resampling"."""
from __future__ import annotations

import torch

from .. import _ext
from ..registry import register_kernel
from ._common import (
    FLOAT_WIDENED,
    C,
    float_code,
    get_num_threads,
    named_arguments,
    suggest_memory_format,
    unsupported,
    widened,
)

aten = torch.ops.aten
Tensor = torch.Tensor

# Resampling modes defined in csrc/common/resample.h (REPMODE_RESAMPLE_MODES).
_MODES = _ext.codes("ResampleMode")
NEAREST, NEAREST_EXACT, LINEAR, CUBIC, LINEAR_AA, CUBIC_AA = (
    _MODES[n] for n in ("NEAREST", "NEAREST_EXACT", "LINEAR", "CUBIC", "LINEAR_AA", "CUBIC_AA"))

# Tests set this to run every resampling op through the plain C++ reference loops instead.
USE_REFERENCE = False

# op name -> (mode, number of resampled axes, has align_corners)
_OPS = {
    "upsample_nearest1d": (NEAREST, 1, False),
    "upsample_nearest2d": (NEAREST, 2, False),
    "upsample_nearest3d": (NEAREST, 3, False),
    "_upsample_nearest_exact1d": (NEAREST_EXACT, 1, False),
    "_upsample_nearest_exact2d": (NEAREST_EXACT, 2, False),
    "_upsample_nearest_exact3d": (NEAREST_EXACT, 3, False),
    "upsample_linear1d": (LINEAR, 1, True),
    "upsample_bilinear2d": (LINEAR, 2, True),
    "upsample_bicubic2d": (CUBIC, 2, True),
    "upsample_trilinear3d": (LINEAR, 3, True),
    "_upsample_bilinear2d_aa": (LINEAR_AA, 2, True),
    "_upsample_bicubic2d_aa": (CUBIC_AA, 2, True),
}
_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}


def _op_of(func):
    name = func._schema.name.split("::")[1]
    return _OPS[name[:-len("_backward")] if name.endswith("_backward") else name]


def _five(shape, strides, nsp):
    """(N, C, D, H, W) sizes and strides of a (N, C, *spatial) tensor."""
    pad = 3 - nsp
    return list(shape[:2]) + [1] * pad + list(shape[2:]), list(strides[:2]) + [0] * pad + list(strides[2:])


def _geometry(func, nsp, in_shape, out_size, scales):
    out_size = [int(s) for s in out_size]
    if len(out_size) != nsp:
        raise RuntimeError(f"{func}: It is expected output_size equals to {nsp}, but got size {len(out_size)}")
    if len(in_shape) != nsp + 2:
        raise RuntimeError(f"{func}: It is expected input_size equals to {nsp + 2}, but got size {len(in_shape)}")
    if min(in_shape[2:]) <= 0 or min(out_size) <= 0:
        raise RuntimeError(f"{func}: Input and output sizes should be greater than 0, but got input "
                           f"{list(in_shape[2:])} and output {out_size}")
    return out_size, [0.0] * (3 - nsp) + [float(s) if s is not None else 0.0 for s in scales]


def _check_dtype(func, args, kwargs, *tensors):
    code = float_code(func, args, kwargs, *tensors)
    if not all(t.is_cpu for t in tensors):
        raise unsupported(func, args, kwargs, "resampling has CPU kernels only so far; move the tensors to the "
                                              "CPU (.cpu()) to run it reproducibly")
    return code


def _memory_format(t: Tensor):
    return suggest_memory_format(t) if t.dim() in (4, 5) else torch.contiguous_format


def _resample(func, args, kwargs, x, output_size, align_corners, scales):
    mode, nsp, _ = _op_of(func)
    code = _check_dtype(func, args, kwargs, x)
    if x.dim() != nsp + 2 or (x.numel() == 0 and 0 in x.shape[1:]):
        raise RuntimeError(f"{func}: Non-empty {nsp + 2}D data tensor expected but got a tensor with sizes "
                           f"{list(x.shape)}")
    out_size, scales = _geometry(func, nsp, x.shape, output_size, scales)
    out = torch.empty(list(x.shape[:2]) + out_size, dtype=x.dtype, memory_format=_memory_format(x))
    if out.numel() == 0:
        return out
    in5, xs = _five(x.shape, x.stride(), nsp)
    _, os = _five(out.shape, out.stride(), nsp)
    C.resample_forward(code, mode, nsp, x.data_ptr(), out.data_ptr(), in5, [1] * (3 - nsp) + out_size,
                       bool(align_corners), scales, xs, os, get_num_threads(), USE_REFERENCE)
    return out


@widened()
def _forward(func, args, kwargs):
    _, nsp, has_ac = _op_of(func)
    b = named_arguments(func, args, kwargs)
    return _resample(func, args, kwargs, b["self"], b["output_size"], b["align_corners"] if has_ac else False,
                     [b[n] for n in _SCALE_NAMES[nsp]])


@widened()
def _forward_vec(func, args, kwargs):
    """The scale-factor forms: torch's compute_output_size (each size the float64 product
    input size x factor, truncated), the factors passed on as the scales."""
    _, nsp, has_ac = _op_of(func)
    b = named_arguments(func, args, kwargs)
    x, size, factors = b["input"], b["output_size"], b["scale_factors"]
    if (size is None) == (factors is None):
        raise RuntimeError(f"{func}: Must specify exactly one of output_size and scale_factors")
    if factors is not None:
        if len(factors) != nsp:
            raise RuntimeError(f"{func}: It is expected scale_factors equals to {nsp}, but got size {len(factors)}")
        size = [int(x.shape[2 + i] * float(f)) for i, f in enumerate(factors)]
        scales = [float(f) for f in factors]
    else:
        scales = [None] * nsp
    return _resample(func, args, kwargs, x, size, b["align_corners"] if has_ac else False, scales)


@register_kernel([aten.upsample_nearest1d.vec, aten.upsample_nearest2d.vec, aten.upsample_nearest3d.vec,
                  aten._upsample_nearest_exact1d.vec, aten._upsample_nearest_exact2d.vec,
                  aten._upsample_nearest_exact3d.vec, aten.upsample_linear1d.vec, aten.upsample_bilinear2d.vec,
                  aten.upsample_bicubic2d.vec, aten.upsample_trilinear3d.vec, aten._upsample_bilinear2d_aa.vec,
                  aten._upsample_bicubic2d_aa.vec], FLOAT_WIDENED,
                 out=[aten.upsample_nearest2d.vec_out, aten.upsample_bilinear2d.vec_out])
def upsample_vec(func, args, kwargs):
    return _forward_vec(func, args, kwargs)


@register_kernel([aten.upsample_nearest1d.default, aten.upsample_nearest2d.default, aten.upsample_nearest3d.default,
                  aten._upsample_nearest_exact1d.default, aten._upsample_nearest_exact2d.default,
                  aten._upsample_nearest_exact3d.default, aten.upsample_linear1d.default,
                  aten.upsample_bilinear2d.default, aten.upsample_bicubic2d.default,
                  aten.upsample_trilinear3d.default, aten._upsample_bilinear2d_aa.default,
                  aten._upsample_bicubic2d_aa.default], FLOAT_WIDENED,
                 out=[aten.upsample_nearest1d.out, aten.upsample_nearest2d.out, aten.upsample_nearest3d.out,
                      aten._upsample_nearest_exact1d.out, aten._upsample_nearest_exact2d.out,
                      aten._upsample_nearest_exact3d.out, aten.upsample_linear1d.out, aten.upsample_bilinear2d.out,
                      aten.upsample_bicubic2d.out, aten.upsample_trilinear3d.out, aten._upsample_bilinear2d_aa.out,
                      aten._upsample_bicubic2d_aa.out])
def upsample(func, args, kwargs):
    return _forward(func, args, kwargs)


@widened()
def _backward(func, args, kwargs):
    mode, nsp, has_ac = _op_of(func)
    b = named_arguments(func, args, kwargs)
    grad = b["grad_output"]
    code = _check_dtype(func, args, kwargs, grad)
    in_shape = [int(s) for s in b["input_size"]]
    out_size, scales = _geometry(func, nsp, in_shape, b["output_size"], [b[n] for n in _SCALE_NAMES[nsp]])
    expected = in_shape[:2] + out_size
    if list(grad.shape) != expected:
        raise RuntimeError(f"{func}: expected grad_output of shape {expected}, got {list(grad.shape)}")
    ac = bool(b["align_corners"]) if has_ac else False
    gi = torch.empty(in_shape, dtype=grad.dtype, memory_format=_memory_format(grad))
    if gi.numel() == 0:
        return gi
    in5, gis = _five(gi.shape, gi.stride(), nsp)
    _, gos = _five(grad.shape, grad.stride(), nsp)
    C.resample_backward(code, mode, nsp, grad.data_ptr(), gi.data_ptr(), in5, [1] * (3 - nsp) + out_size, ac,
                        scales, gis, gos, get_num_threads(), USE_REFERENCE)
    return gi


@register_kernel([aten.upsample_nearest1d_backward.default, aten.upsample_nearest2d_backward.default,
                  aten.upsample_nearest3d_backward.default, aten._upsample_nearest_exact1d_backward.default,
                  aten._upsample_nearest_exact2d_backward.default, aten._upsample_nearest_exact3d_backward.default,
                  aten.upsample_linear1d_backward.default, aten.upsample_bilinear2d_backward.default,
                  aten.upsample_bicubic2d_backward.default, aten.upsample_trilinear3d_backward.default,
                  aten._upsample_bilinear2d_aa_backward.default, aten._upsample_bicubic2d_aa_backward.default],
                 FLOAT_WIDENED,
                 out=[aten.upsample_nearest1d_backward.grad_input, aten.upsample_nearest2d_backward.grad_input,
                      aten.upsample_nearest3d_backward.grad_input,
                      aten._upsample_nearest_exact1d_backward.grad_input,
                      aten._upsample_nearest_exact2d_backward.grad_input,
                      aten._upsample_nearest_exact3d_backward.grad_input,
                      aten.upsample_linear1d_backward.grad_input, aten.upsample_bilinear2d_backward.grad_input,
                      aten.upsample_bicubic2d_backward.grad_input, aten.upsample_trilinear3d_backward.grad_input,
                      aten._upsample_bilinear2d_aa_backward.grad_input,
                      aten._upsample_bicubic2d_aa_backward.grad_input])
def upsample_backward(func, args, kwargs):
    return _backward(func, args, kwargs)

