"""Integer-only arithmetic and ``arange``.

``remainder`` and ``floor_divide`` are exact on integer tensors, so torch's kernel is used
there; on floating tensors they are a formula of several roundings that repmode has not
defined yet, and they are refused. ``arange`` of an integer dtype is exact; of a floating dtype
it is defined as RN_T(start + i·step) with i·step and the sum rounded in float64 first.
"""
from __future__ import annotations

import torch

from ..registry import register_kernel
from ._common import FLOAT_WIDENED_INT, INT_ONLY, check_kernel_device, run_native, unsupported

aten = torch.ops.aten

_INT_ONLY = [aten.remainder.Tensor, aten.remainder.Scalar, aten.remainder.Scalar_Tensor, aten.remainder_.Tensor,
             aten.remainder_.Scalar, aten.floor_divide.default, aten.floor_divide.Scalar,
             aten.floor_divide_.Tensor, aten.floor_divide_.Scalar]


def _is_integral(value) -> bool:
    if isinstance(value, torch.Tensor):
        return not value.is_floating_point() and not value.is_complex()
    return isinstance(value, (int, bool))


@register_kernel(_INT_ONLY, INT_ONLY)
def integer_only(func, args, kwargs):
    if all(_is_integral(a) for a in args[:2]):
        return run_native(func, args, kwargs)  # integer arithmetic: exact
    raise unsupported(func, args, kwargs, "on floating-point tensors this op has no repmode definition yet "
                                          "(integer tensors are supported)")


@register_kernel([aten.arange.default, aten.arange.start, aten.arange.start_step], FLOAT_WIDENED_INT)
def arange(func, args, kwargs):
    start, end, step = (0, args[0], 1) if func is aten.arange.default else (list(args) + [1])[:3]
    device = check_kernel_device(func, args, kwargs, torch.device(kwargs.get("device") or "cpu"))
    dtype = kwargs.get("dtype")
    integral = all(isinstance(v, int) for v in (start, end, step))
    if dtype is None:
        dtype = torch.int64 if integral else torch.get_default_dtype()
    if not dtype.is_floating_point:
        return torch.arange(start, end, step, dtype=dtype, device=device)  # integers: exact
    # computed on the CPU and copied (exactly) to the device: the same values everywhere
    n = torch.arange(start, end, step, dtype=torch.float64).numel()  # torch's element count
    i = torch.arange(n, dtype=torch.int64).to(torch.float64)  # exact for n < 2^53
    return (i * float(step) + float(start)).to(dtype).to(device)
