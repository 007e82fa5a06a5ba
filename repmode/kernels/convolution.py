"""Convolution (1-d, 2-d, 3-d; strides, padding, dilation, groups, transposed) and its backward,
lowered onto the canonical GEMM order (docs/semantics.md "Convolution", csrc/common/convolution.h,
csrc/cpu/convolution.cpp).

Every nn.Conv*/ConvTranspose* call reaches the mode as ``aten.convolution.default`` (grad mode and
no_grad) or as a composite (``conv2d``, ``conv2d.padding``, ``conv_transpose2d.input`` under
inference_mode) that the mode decomposes into ``aten.convolution.default`` (plus
``constant_pad_nd`` for an asymmetric ``'same'``). Backward arrives as
``aten.convolution_backward.default``."""
from __future__ import annotations

import torch

from .. import _ext
from ..registry import register_kernel
from ._common import (
    DTYPE_CODE,
    FLOAT_WIDENED,
    arguments,
    call_registered,
    check_device,
    kernels_for,
    launch_arg,
    unsupported,
    widened,
)

aten = torch.ops.aten

# The geometry's integer layout (csrc/common/convolution.h, REPMODE_CONV_GEOM_FIELDS).
_GEOM_FIELDS = _ext.codes("ConvGeom")
Tensor = torch.Tensor


def _expand(v, nd: int, name: str, func, args, kwargs) -> list[int]:
    v = [int(i) for i in v] if isinstance(v, (list, tuple)) else [int(v)]
    if len(v) == 1:
        v = v * nd
    if len(v) != nd:
        raise RuntimeError(f"convolution: expected {name} to have {nd} elements, got {len(v)}")
    return v


def _pad3(v: list[int], fill: int) -> list[int]:
    return [fill] * (3 - len(v)) + v


class _Conv:
    """The geometry of one call, as the *forward convolution* it is built on: ``conv_in`` is the
    convolution's input space, ``conv_out`` its output space. For a transposed convolution the
    roles swap: its output is the convolution's input space."""

    __slots__ = ("geom", "code", "nd", "transposed", "x_shape", "y_shape")

    def __init__(self, func, args, kwargs, x: Tensor, w: Tensor, stride, padding, dilation, transposed,
                 output_padding, groups, what="input"):
        check_device(func, args, kwargs, x, w)
        code = DTYPE_CODE.get(x.dtype)
        if code is None or w.dtype != x.dtype:
            if w.dtype != x.dtype:
                raise RuntimeError(f"convolution: input type ({x.dtype}) and weight type ({w.dtype}) should be "
                                   "the same")
            raise unsupported(func, args, kwargs, f"dtype {x.dtype} is not supported (float32 and float64 are; "
                                                  "bfloat16/float16 are computed in float32)")
        nd = w.dim() - 2
        if nd not in (1, 2, 3):
            raise unsupported(func, args, kwargs, f"{nd}-d convolution (1-d, 2-d and 3-d are supported)")
        if x.dim() != nd + 2:
            raise unsupported(func, args, kwargs,
                              f"expected a batched {nd + 2}-d {what} for a {nd}-d convolution, got {x.dim()}-d")
        s = _expand(stride, nd, "stride", func, args, kwargs)
        p = _expand(padding, nd, "padding", func, args, kwargs)
        d = _expand(dilation, nd, "dilation", func, args, kwargs)
        groups = int(groups)
        if min(s) < 1 or min(d) < 1 or min(p) < 0 or groups < 1:
            raise RuntimeError(f"convolution: invalid stride {s}, padding {p}, dilation {d} or groups {groups}")
        k = list(w.shape[2:])
        N, sp = x.shape[0], list(x.shape[2:])
        if not transposed:
            Ci, Co = x.shape[1], w.shape[0]
            if w.shape[1] * groups != Ci or Co % groups:
                raise RuntimeError(f"convolution: weight of shape {list(w.shape)} and groups={groups} do not fit "
                                   f"an input with {Ci} channels")
            out = [(sp[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
            if min(out) <= 0:
                raise RuntimeError(f"convolution: the output size {out} is too small (input {sp}, kernel {k})")
            cin, cout = sp, out
            self.x_shape = tuple(x.shape)
            self.y_shape = (N, Co, *out)
        else:
            op = _expand(output_padding, nd, "output_padding", func, args, kwargs)
            Co, Ci = x.shape[1], w.shape[1] * groups  # the convolution's output is the transposed input
            if w.shape[0] != Co or Co % groups:
                raise RuntimeError(f"convolution: transposed weight of shape {list(w.shape)} and groups={groups} "
                                   f"do not fit an input with {Co} channels")
            if any(op[i] < 0 or (op[i] >= s[i] and op[i] >= d[i]) for i in range(nd)):
                raise RuntimeError(f"convolution: output_padding {op} must be smaller than stride or dilation")
            yout = [(sp[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1 for i in range(nd)]
            if min(yout) <= 0:
                raise RuntimeError(f"convolution: the output size {yout} is too small")
            cin, cout = yout, sp
            self.x_shape = tuple(x.shape)
            self.y_shape = (N, Ci, *yout)
        fields = {"N": N, "Ci": Ci, "Co": Co, "G": groups}
        for key, values in (("in", _pad3(cin, 1)), ("out", _pad3(cout, 1)), ("k", _pad3(k, 1)),
                            ("stride", _pad3(s, 1)), ("pad", _pad3(p, 0)), ("dil", _pad3(d, 1))):
            fields.update((f"{key}{i}", v) for i, v in enumerate(values))
        self.geom = [fields[name] for name in _GEOM_FIELDS]
        self.code, self.nd, self.transposed = code, nd, bool(transposed)


def _bias(func, args, kwargs, bias, x: Tensor, channels: int):
    if bias is None:
        return None
    check_device(func, args, kwargs, bias, x)
    if bias.dtype != x.dtype:
        raise RuntimeError(f"convolution: bias type ({bias.dtype}) and input type ({x.dtype}) should be the same")
    if bias.shape != (channels,):
        raise RuntimeError(f"convolution: expected bias of shape [{channels}], got {list(bias.shape)}")
    return bias.contiguous()


def convolution_kernel(func, args, kwargs, x, w, bias, stride, padding, dilation, transposed, output_padding,
                       groups) -> Tensor:
    g = _Conv(func, args, kwargs, x, w, stride, padding, dilation, transposed, output_padding, groups)
    b = _bias(func, args, kwargs, bias, x, g.y_shape[1])
    x, w = x.contiguous(), w.contiguous()
    y = torch.empty(g.y_shape, dtype=x.dtype, device=x.device)
    if y.numel():
        bp = b.data_ptr() if b is not None else 0
        if g.transposed:
            kernels_for(x).conv_grad_input(g.code, g.geom, x.data_ptr(), w.data_ptr(), bp, y.data_ptr(), launch_arg(x))
        else:
            kernels_for(x).conv_forward(g.code, g.geom, x.data_ptr(), w.data_ptr(), bp, y.data_ptr(), launch_arg(x))
    return y


@register_kernel([aten.convolution.default], FLOAT_WIDENED)
@widened()
def convolution(func, args, kwargs):
    return convolution_kernel(func, args, kwargs, *arguments(func, args, kwargs)[:9])


@register_kernel([aten._convolution.default], FLOAT_WIDENED)
@widened()
def _convolution(func, args, kwargs):
    return convolution_kernel(func, args, kwargs, *arguments(func, args, kwargs)[:9])


@register_kernel([aten.convolution_backward.default], FLOAT_WIDENED)
@widened()
def convolution_backward(func, args, kwargs):
    gy, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, mask = arguments(
        func, args, kwargs)
    g = _Conv(func, args, kwargs, x, w, stride, padding, dilation, transposed, output_padding, groups)
    check_device(func, args, kwargs, gy, x, w)
    if gy.dtype != x.dtype:
        raise RuntimeError(f"convolution_backward: grad_output type ({gy.dtype}) and input type ({x.dtype}) "
                           "should be the same")
    if tuple(gy.shape) != g.y_shape:
        raise RuntimeError(f"convolution_backward: grad_output of shape {list(gy.shape)}, expected "
                           f"{list(g.y_shape)}")
    kernels, launch = kernels_for(x), launch_arg(x)  # repmode._C or _C_cuda; threads or stream
    gyc = gy.contiguous()
    gx = gw = gb = None
    if mask[0] or mask[1]:
        xc, wc = x.contiguous(), w.contiguous()
    if mask[0]:
        gx = torch.empty(g.x_shape, dtype=x.dtype, device=x.device)
        if gx.numel():
            if g.transposed:  # d(transposed input) = the forward convolution of gy
                kernels.conv_forward(g.code, g.geom, gyc.data_ptr(), wc.data_ptr(), 0, gx.data_ptr(), launch)
            else:
                kernels.conv_grad_input(g.code, g.geom, gyc.data_ptr(), wc.data_ptr(), 0, gx.data_ptr(), launch)
    if mask[1]:
        gw = torch.empty(w.shape, dtype=w.dtype, device=w.device)
        if gw.numel():
            # transposed: the convolution's input is gy and its output gradient is x
            a, b = (gyc, xc) if g.transposed else (xc, gyc)
            kernels.conv_grad_weight(g.code, g.geom, a.data_ptr(), b.data_ptr(), gw.data_ptr(), launch)
    if mask[2]:
        # canonical Sum order over (n, positions) in row-major order, per channel
        gb = call_registered(aten.sum.dim_IntList, gy, [0, *range(2, gy.dim())])
    return gx, gw, gb
