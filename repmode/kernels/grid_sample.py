"""Grid sampling: ``grid_sampler_2d`` / ``grid_sampler_3d`` (bilinear, nearest, bicubic; zeros,
border, reflection padding; align_corners both ways) with their backward ops, and
``affine_grid_generator`` (``F.affine_grid``) built on repmode's ``bmm``. Canonical formulas:
csrc/common/grid_sample.h and docs/semantics.md, "Grid sampling"."""
from __future__ import annotations

import torch

from ..registry import register_composite, register_kernel
from ._common import (
    FLOAT_WIDENED,
    C,
    call_registered,
    float_code,
    get_num_threads,
    named_arguments,
    unsupported,
    widened,
)

aten = torch.ops.aten
Tensor = torch.Tensor

# Tests set this to run every grid sampling op through the plain C++ reference loops instead.
USE_REFERENCE = False

_INTERP = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def _nsp(func) -> int:
    return 3 if "3d" in func._schema.name else 2


def _check(func, args, kwargs, x: Tensor, grid: Tensor, interp: int, padding: int):
    nsp = _nsp(func)
    code = float_code(func, args, kwargs, x, grid)
    if not (x.is_cpu and grid.is_cpu):
        raise unsupported(func, args, kwargs, "grid sampling has CPU kernels only so far; move the tensors to the "
                                              "CPU (.cpu()) to run it reproducibly")
    if x.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{x.dtype} and grid has {grid.dtype}")
    if x.dim() != nsp + 2 or grid.dim() != nsp + 2:
        raise RuntimeError(f"grid_sampler(): expected {nsp + 2}D input and grid with same number of dimensions, "
                           f"but got input with sizes {list(x.shape)} and grid with sizes {list(grid.shape)}")
    if x.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(x.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != nsp:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nsp} in last dimension, but got grid with "
                           f"sizes {list(grid.shape)}")
    if any(s == 0 for s in x.shape[2:]):
        raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                           f"sizes {list(x.shape)} with dimension 2 being empty")
    if interp not in (0, 1, 2) or padding not in (0, 1, 2):
        raise RuntimeError(f"grid_sampler(): unknown interpolation mode {interp} or padding mode {padding}")
    if nsp == 3 and interp == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    return code


def _five_input(t: Tensor, nsp: int):
    """(N, C, D, H, W) sizes and strides of an input-shaped tensor (2-d: D = 1, stride 0)."""
    if nsp == 3:
        return list(t.shape), list(t.stride())
    return [t.shape[0], t.shape[1], 1, t.shape[2], t.shape[3]], [t.stride(0), t.stride(1), 0, t.stride(2), t.stride(3)]


def _five_grid(t: Tensor, nsp: int):
    """(N, OD, OH, OW) sizes and (n, od, oh, ow, coordinate) strides of a grid-shaped tensor."""
    if nsp == 3:
        return list(t.shape[1:4]), list(t.stride())
    return [1, t.shape[1], t.shape[2]], [t.stride(0), 0, t.stride(1), t.stride(2), t.stride(3)]


def _out_strides(t: Tensor, nsp: int):
    return list(t.stride()) if nsp == 3 else [t.stride(0), t.stride(1), 0, t.stride(2), t.stride(3)]


@widened()
def _forward(func, args, kwargs):
    b = named_arguments(func, args, kwargs)
    x, grid = b["input"], b["grid"]
    interp, padding, ac = int(b["interpolation_mode"]), int(b["padding_mode"]), bool(b["align_corners"])
    code = _check(func, args, kwargs, x, grid, interp, padding)
    nsp = _nsp(func)
    out = torch.empty(list(x.shape[:2]) + list(grid.shape[1:-1]), dtype=x.dtype)
    if out.numel() == 0:
        return out
    in5, xs = _five_input(x, nsp)
    o3, gs = _five_grid(grid, nsp)
    C.grid_sample_forward(code, nsp, interp, padding, ac, x.data_ptr(), grid.data_ptr(), out.data_ptr(), in5, o3, xs,
                          gs, _out_strides(out, nsp), get_num_threads(), USE_REFERENCE)
    return out


@register_kernel([aten.grid_sampler_2d.default, aten.grid_sampler_3d.default,
                  aten._grid_sampler_2d_cpu_fallback.default], FLOAT_WIDENED,
                 out=[aten.grid_sampler_2d.out, aten.grid_sampler_3d.out, aten._grid_sampler_2d_cpu_fallback.out])
def grid_sampler(func, args, kwargs):
    return _forward(func, args, kwargs)


@widened()
def _backward(func, args, kwargs):
    b = named_arguments(func, args, kwargs)
    go, x, grid = b["grad_output"], b["input"], b["grid"]
    interp, padding, ac = int(b["interpolation_mode"]), int(b["padding_mode"]), bool(b["align_corners"])
    mask = list(b["output_mask"]) if "output_mask" in b else [True, True]  # the cpu_fallback form: both
    code = _check(func, args, kwargs, x, grid, interp, padding)
    nsp = _nsp(func)
    expected = list(x.shape[:2]) + list(grid.shape[1:-1])
    if list(go.shape) != expected:
        raise RuntimeError(f"{func}: expected grad_output of shape {expected}, got {list(go.shape)}")
    go = go.to(x.dtype)
    x = x.contiguous()  # exact copies: grad_input gets the input's (dense) strides
    grid = grid.contiguous()
    gi = torch.empty_like(x) if mask[0] else None
    gg = torch.empty_like(grid)  # torch returns a grid gradient even when it is not asked for
    if x.numel() == 0 or grid.numel() == 0:
        if gi is not None:
            gi.zero_()
        gg.zero_()
        return gi, gg
    in5, xs = _five_input(x, nsp)
    o3, gs = _five_grid(grid, nsp)
    C.grid_sample_backward(code, nsp, interp, padding, ac, go.data_ptr(), x.data_ptr(), grid.data_ptr(),
                           gi.data_ptr() if gi is not None else 0, gg.data_ptr() if mask[1] else 0, in5, o3, xs, gs,
                           _out_strides(go, nsp), get_num_threads(), USE_REFERENCE)
    if not mask[1]:
        gg.zero_()
    return gi, gg


@register_kernel([aten.grid_sampler_2d_backward.default, aten.grid_sampler_3d_backward.default,
                  aten._grid_sampler_2d_cpu_fallback_backward.default], FLOAT_WIDENED)
def grid_sampler_backward(func, args, kwargs):
    return _backward(func, args, kwargs)


# ---- affine_grid_generator (F.affine_grid) ----

def _base_coordinates(n: int, align_corners: bool, dtype) -> Tensor:
    """The n base coordinates along one axis: (2i - (n - 1)) / d with d = n - 1 (align_corners) or n,
    a float64 division of exact integers, rounded once to ``dtype``; n = 1: 0."""
    if n <= 1:
        return torch.zeros(max(n, 0), dtype=dtype)
    num = torch.arange(n, dtype=torch.float64) * 2 - (n - 1)  # exact integers
    return (num / float(n - 1 if align_corners else n)).to(dtype)


def _base_grid(size, align_corners: bool, dtype) -> Tensor:
    """(N-less) base grid (*spatial, nsp + 1): x, y[, z] coordinates and a 1 column (torch's layout)."""
    spatial = [int(s) for s in size[2:]]
    nsp = len(spatial)
    base = torch.empty(spatial + [nsp + 1], dtype=dtype)
    for a in range(nsp):  # column a is the coordinate of the axis counted from the last (x = W first)
        axis = nsp - 1 - a
        shape = [1] * nsp
        shape[axis] = spatial[axis]
        base[..., a] = _base_coordinates(spatial[axis], align_corners, dtype).view(shape)
    base[..., nsp] = 1
    return base


def _affine_check(func, args, kwargs, theta: Tensor, size):
    size = [int(s) for s in size]
    if len(size) not in (4, 5):
        raise RuntimeError(f"AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs, got size {size}")
    if not theta.is_cpu:
        raise unsupported(func, args, kwargs, "affine_grid_generator has CPU kernels only so far; move theta to the "
                                              "CPU (.cpu()) to run it reproducibly")
    float_code(func, args, kwargs, theta)
    return size


@register_composite([aten.affine_grid_generator.default], FLOAT_WIDENED, out=[aten.affine_grid_generator.out])
def affine_grid_generator(func, args, kwargs):
    """grid[n] = base @ theta[n]^T by repmode's bmm (its order over the nsp + 1 terms)."""
    b = named_arguments(func, args, kwargs)
    theta, ac = b["theta"], bool(b["align_corners"])
    size = _affine_check(func, args, kwargs, theta, b["size"])
    nsp = len(size) - 2
    if theta.dim() != 3 or list(theta.shape[1:]) != [nsp, nsp + 1] or theta.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid_generator: expected theta of shape [{size[0]}, {nsp}, {nsp + 1}], got "
                           f"{list(theta.shape)}")
    base = _base_grid(size, ac, theta.dtype).reshape(1, -1, nsp + 1).expand(size[0], -1, -1)
    grid = call_registered(aten.bmm.default, base, theta.transpose(1, 2))
    return grid.reshape([size[0]] + size[2:] + [nsp])


@register_composite([aten.affine_grid_generator_backward.default], FLOAT_WIDENED)
def affine_grid_generator_backward(func, args, kwargs):
    """grad_theta[n] = (base^T @ grad[n])^T by repmode's bmm (a sum over the positions in its order)."""
    b = named_arguments(func, args, kwargs)
    grad, ac = b["grad"], bool(b["align_corners"])
    size = _affine_check(func, args, kwargs, grad, b["size"])
    nsp = len(size) - 2
    base = _base_grid(size, ac, grad.dtype).reshape(1, -1, nsp + 1).expand(size[0], -1, -1)
    gt = call_registered(aten.bmm.default, base.transpose(1, 2), grad.reshape(size[0], -1, nsp))
    return gt.transpose(1, 2)
