"""Hypothesis strategies for repmode's property tests: tensors of random shape (0-size dims and
0-dim tensors included), random memory layout, dtypes from an op's registered set, and special
values (±0, ±inf, NaN with random payloads, subnormals, the dtype's max and min) mixed in.

Values are drawn cheaply: a seed for the bulk (normal values at a drawn scale) plus a short drawn
list of (position, special value) injections, so an example stays small for hypothesis to shrink.
"""
from __future__ import annotations

import math

import torch
from hypothesis import strategies as st

from repmode.kernels import load as _load_kernels
from repmode.registry import REGISTRY

FLOATS = (torch.float32, torch.float64, torch.bfloat16, torch.float16)
INTS = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)
# The dtypes each registration tag stands for (repmode/registry.py DTYPE_TAGS).
TAG_DTYPES = {
    "float32": (torch.float32,),
    "float64": (torch.float64,),
    "widened": (torch.bfloat16, torch.float16),
    "half": (torch.bfloat16, torch.float16),
    "integer": INTS,
    "any": (torch.float32, torch.float64, torch.bfloat16, torch.float16) + INTS,
}
_INT_VIEW = {torch.float32: torch.int32, torch.float64: torch.int64, torch.bfloat16: torch.int16,
             torch.float16: torch.int16}
# (exponent bits mask, mantissa bits) of each float format, for NaN payloads
_NAN_LAYOUT = {torch.float32: (0x7F800000, 23), torch.float64: (0x7FF0000000000000, 52),
               torch.bfloat16: (0x7F80, 7), torch.float16: (0x7C00, 10)}
# The canonical NaN repmode's kernels write (docs/semantics.md, Ground rules), as the signed
# integer of the bit view. bf16/fp16 results are narrowed through repmode's round_to, which
# writes 0x7FC0 / 0x7E00 (torch's own conversion writes 0xFFFF for a bf16 NaN on this CPU).
CANONICAL_NAN = {torch.float32: 0x7FC00000, torch.float64: 0x7FF8000000000000,
                 torch.bfloat16: 0x7FC0, torch.float16: 0x7E00}


def dtypes_of(overload, kinds=("float",)) -> list[torch.dtype]:
    """The torch dtypes the registration of ``overload`` declares, restricted to ``kinds``
    ("float" and/or "int"), in a stable order."""
    _load_kernels()
    tags = REGISTRY[overload].dtypes or ()
    out = []
    for tag in tags:
        for dt in TAG_DTYPES[tag]:
            ok = ("float" in kinds and dt.is_floating_point) or ("int" in kinds and not dt.is_floating_point)
            if ok and dt not in out:
                out.append(dt)
    assert out, f"{overload} declares no dtype of kind {kinds}: {tags}"
    return out


def special_values(dtype: torch.dtype) -> list[float]:
    """Special finite and non-finite values of ``dtype`` (NaNs are injected separately, with payloads)."""
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        return [0, 1, -1 if info.min < 0 else 2, info.min, info.max]
    fi = torch.finfo(dtype)
    sub = fi.smallest_normal * fi.eps  # the smallest subnormal
    return [0.0, -0.0, math.inf, -math.inf, fi.max, -fi.max, fi.smallest_normal, -fi.smallest_normal,
            sub, -sub, fi.smallest_normal - sub]


@st.composite
def nan_bits(draw, dtype: torch.dtype) -> int:
    """The bit pattern of a NaN of ``dtype`` with a random sign and non-zero payload (quiet or not)."""
    exp_mask, mant = _NAN_LAYOUT[dtype]
    payload = draw(st.integers(1, (1 << mant) - 1))
    sign = draw(st.booleans())
    width = torch.finfo(dtype).bits
    v = exp_mask | payload | ((1 << (width - 1)) if sign else 0)
    return v - (1 << width) if v >= 1 << (width - 1) else v  # as the signed int of the view


def _bulk(seed: int, numel: int, dtype: torch.dtype, scale: float, positive: bool) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        lo, hi = max(info.min, -100), min(info.max, 100)
        if positive:
            lo = 0
        return torch.randint(lo, hi + 1, (numel,), generator=g, dtype=torch.int64).to(dtype)
    v = torch.randn(numel, generator=g, dtype=torch.float64) * scale
    if positive:
        v = v.abs()
    return v.to(dtype)


LAYOUTS = ("contiguous", "transposed", "sliced", "expanded", "channels_last")


def lay_out(values: torch.Tensor, layout: str) -> torch.Tensor:
    """The same values as ``values`` in the given memory layout (same shape, same bits: the moves
    run on an integer view, since torch's strided bf16 copy rewrites NaN payloads)."""
    if values.is_floating_point():
        return lay_out(values.view(_INT_VIEW[values.dtype]), layout).view(values.dtype)
    if layout == "contiguous" or values.dim() == 0:
        return values.contiguous()
    if layout == "transposed":
        perm = list(range(values.dim()))[::-1]
        return values.permute(perm).contiguous().permute(perm)
    if layout == "sliced":
        steps = [2 + (i % 2) for i in range(values.dim())]
        big = torch.zeros([max(s * st_, 1) for s, st_ in zip(values.shape, steps)], dtype=values.dtype)
        view = big[tuple(slice(None, None, st_) for st_ in steps)]
        view = view[tuple(slice(0, s) for s in values.shape)]
        view.copy_(values)
        return view
    if layout == "channels_last" and values.dim() == 4:
        return values.contiguous(memory_format=torch.channels_last)
    return values.contiguous()


@st.composite
def tensors(draw, dtype, shape=None, min_dims=0, max_dims=4, min_side=0, max_side=5,
            specials=True, positive=False, layouts=LAYOUTS, scales=(1.0, 1e-3, 30.0)):
    """A tensor of ``dtype`` (a dtype or a strategy of dtypes) of the given or a drawn shape,
    with special values mixed in and a drawn memory layout. ``expanded`` broadcasts one dim of
    size 1 (the values then repeat along it)."""
    if isinstance(dtype, st.SearchStrategy):
        dtype = draw(dtype)
    if shape is None:
        shape = draw(st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims))
    shape = list(shape)
    layout = draw(st.sampled_from([l for l in layouts if l != "channels_last" or len(shape) == 4]))
    base_shape = list(shape)
    expand_dim = None
    if layout == "expanded" and shape:
        expand_dim = draw(st.integers(0, len(shape) - 1))
        base_shape[expand_dim] = 1 if shape[expand_dim] > 0 else 0
    numel = math.prod(base_shape)
    seed = draw(st.integers(0, 2**31 - 1))
    scale = draw(st.sampled_from(scales))
    flat = _bulk(seed, numel, dtype, scale, positive)
    if specials and numel:
        n_inject = draw(st.integers(0, min(4, numel)))
        for _ in range(n_inject):
            pos = draw(st.integers(0, numel - 1))
            if dtype.is_floating_point and draw(st.integers(0, 3)) == 0:
                flat.view(_INT_VIEW[dtype])[pos] = draw(nan_bits(dtype))
            else:
                vals = special_values(dtype)
                if positive:
                    vals = [v for v in vals if v >= 0 and not (isinstance(v, float) and math.copysign(1, v) < 0)]
                flat[pos] = draw(st.sampled_from(vals))
    values = flat.reshape(base_shape)
    if expand_dim is not None:
        return values.expand(shape)
    return lay_out(values, layout)


def contiguous_copy(x):
    """A contiguous copy of a tensor argument (other arguments unchanged), bits kept."""
    if isinstance(x, torch.Tensor):
        if x.is_floating_point():
            return x.detach().view(_INT_VIEW[x.dtype]).clone(memory_format=torch.contiguous_format).view(x.dtype)
        return x.detach().clone(memory_format=torch.contiguous_format)
    return x


def second_operand(data, dtype, a, scalars):
    """The other operand of a binary op with ``a``: a tensor of a's shape, one that broadcasts
    to it (size-1 or missing leading dims), or a Python number drawn from ``scalars``."""
    form = data.draw(st.sampled_from(["tensor", "broadcast", "scalar"]))
    if form == "tensor":
        return data.draw(tensors(dtype, shape=a.shape))
    if form == "broadcast":
        bshape = [data.draw(st.sampled_from([1, s])) for s in a.shape][data.draw(st.integers(0, a.dim())):]
        return data.draw(tensors(dtype, shape=bshape))
    return data.draw(st.sampled_from(scalars))
