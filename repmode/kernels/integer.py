"""Integer-only arithmetic and ``arange``.

(``remainder`` and ``floor_divide``, exact natively on integers and torch's fixed sequences
on floats, are in repmode/kernels/elementwise_more.py.) ``arange`` of an integer dtype is exact; of a floating dtype
it is defined as RN_T(start + i·step) with i·step and the sum rounded in float64 first.
``linspace``/``logspace``: one float64 formula per element (never an accumulated step), rounded
once to the dtype (docs/semantics.md "Integer arithmetic, arange, linspace").
"""
from __future__ import annotations

import torch

from ..registry import overloads_named as _overloads
from ..registry import register_kernel, register_out_forms
from ._common import (
    FLOAT_WIDENED_INT,
    call_registered,
    check_kernel_device,
    param,
    round_to,
    unsupported,
)

aten = torch.ops.aten

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


register_out_forms([aten.arange.out, aten.arange.start_out])

# ---- linspace and logspace: one formula per element --------------------------------------------

_LINSPACE = _overloads("aten.linspace.default", "aten.linspace.Tensor_Tensor", "aten.linspace.Tensor_Scalar",
                       "aten.linspace.Scalar_Tensor")
_LOGSPACE = _overloads("aten.logspace.default", "aten.logspace.Tensor_Tensor", "aten.logspace.Tensor_Scalar",
                       "aten.logspace.Scalar_Tensor")


def _number(func, args, kwargs, value):
    if isinstance(value, torch.Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"{func._schema.name.split('::')[1]}() expects the start and end to be 0-dim tensors, "
                               f"but got a tensor of {value.dim()} dims")
        value = value.item()
    if isinstance(value, complex):
        raise unsupported(func, args, kwargs, "complex start or end values are not supported (complex arithmetic "
                                              "has no repmode definition)")
    return value


def _split(a: torch.Tensor):
    c = a * 134217729.0  # Veltkamp: 2^27 + 1
    hi = c - (c - a)
    return hi, a - hi


def _two_prod(a: torch.Tensor, b: torch.Tensor):
    """(p, e) with p = RN(a·b) and p + e = a·b exactly (Dekker; IEEE basic operations only)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _two_sum(a: torch.Tensor, b: torch.Tensor):
    """(s, e) with s = RN(a + b) and s + e = a + b exactly (Knuth)."""
    s = a + b
    z = s - a
    return s, (a - (s - z)) + (b - z)


def linspace_values(start, end, steps: int, dtype: torch.dtype) -> torch.Tensor:
    """The float64 values of linspace (docs/semantics.md "Integer arithmetic, arange, linspace"): with
    q = (end − start)/(steps − 1) carried as a double-double (hi + lo), element i is start + i·q for
    i < steps // 2 and end − (steps − 1 − i)·q from there on, each evaluated in double-double and
    rounded once to float64 (error-free transformations: IEEE basic operations only, within about half
    an ulp). For an integer dtype, start and end are first truncated to it (torch's rule)."""
    if not dtype.is_floating_point:
        start, end = int(start), int(end)
    s, e = float(start), float(end)
    if steps == 1:
        return torch.tensor([s], dtype=torch.float64)
    f64 = torch.float64
    st, en, m = torch.tensor(s, dtype=f64), torch.tensor(e, dtype=f64), torch.tensor(float(steps - 1), dtype=f64)
    d_hi, d_lo = _two_sum(en, -st)
    q_hi = d_hi / m
    p, pe = _two_prod(q_hi, m)
    q_lo = (((d_hi - p) - pe) + d_lo) / m  # d_hi − p is exact (Sterbenz)
    half = steps // 2
    i = torch.arange(steps, dtype=torch.int64).to(f64)  # exact for steps < 2^53
    k = torch.cat([i[:half], m - i[half:]])  # multiples of q: from start, then back from end
    base = torch.cat([st.expand(half), en.expand(steps - half)])
    sign = torch.cat([torch.ones(half, dtype=f64), -torch.ones(steps - half, dtype=f64)])
    k_hi, k_lo = _two_prod(k, q_hi)
    k_lo = k_lo + k * q_lo
    x_hi, x_lo = _two_sum(base, sign * k_hi)
    x = x_hi + (x_lo + sign * k_lo)
    if not (torch.isfinite(x).all() and torch.isfinite(q_hi)):  # infinities, NaN or overflow: the plain formula
        x = base + sign * (k * q_hi)
    return x


def _factory(func, args, kwargs, names):
    values = [_number(func, args, kwargs, param(func, args, kwargs, n)) for n in names]
    steps = param(func, args, kwargs, "steps")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    device = check_kernel_device(func, args, kwargs, torch.device(param(func, args, kwargs, "device") or "cpu"))
    dtype = param(func, args, kwargs, "dtype") or torch.get_default_dtype()
    if dtype.is_complex:
        raise unsupported(func, args, kwargs, "complex dtypes are not supported (complex arithmetic has no repmode "
                                              "definition)")
    return values, steps, device, dtype


def _to_dtype(values: torch.Tensor, dtype: torch.dtype, device) -> torch.Tensor:
    """float64 values rounded once to a floating dtype (canonical NaN), or truncated toward zero to an
    integer dtype (torch's conversion); computed on the CPU and copied exactly to the device."""
    out = round_to(values, dtype) if dtype.is_floating_point else values.to(dtype)
    return out.to(device)


@register_kernel(_LINSPACE, FLOAT_WIDENED_INT, out=_overloads(
    "aten.linspace.out", "aten.linspace.Tensor_Tensor_out", "aten.linspace.Tensor_Scalar_out",
    "aten.linspace.Scalar_Tensor_out"))
def linspace(func, args, kwargs):
    (start, end), steps, device, dtype = _factory(func, args, kwargs, ("start", "end"))
    if steps == 0:
        return torch.empty(0, dtype=dtype, device=device)
    return _to_dtype(linspace_values(start, end, steps, dtype), dtype, device)


@register_kernel(_LOGSPACE, FLOAT_WIDENED_INT, out=_overloads(
    "aten.logspace.out", "aten.logspace.Tensor_Tensor_out", "aten.logspace.Tensor_Scalar_out",
    "aten.logspace.Scalar_Tensor_out"))
def logspace(func, args, kwargs):
    """base ** (linspace's float64 value), with repmode's float64 pow, rounded once to the dtype."""
    (start, end, base), steps, device, dtype = _factory(func, args, kwargs, ("start", "end", "base"))
    if steps == 0:
        return torch.empty(0, dtype=dtype, device=device)
    exponents = linspace_values(start, end, steps, dtype)
    values = call_registered(aten.pow.Scalar, float(base), exponents)
    return _to_dtype(values, dtype, device)
