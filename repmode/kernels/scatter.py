"""scatter with a source tensor, and gather: torch's own copies, made bit-exact.

gather: torch's CPU gather of bfloat16/float16 rewrites NaN payloads (it moves the values as
floats), so the copy runs on an integer view of the same element size and every bit survives.

Every output element is either the input's element or one source element, copied bit for bit.
The one way the native result can depend on the machine is two index entries naming the same
destination: then the order of the writes decides, and torch does not define it. So the
indices are checked first (each destination written at most once) and a collision raises
UnsupportedOpError. The backward of ``max(dim)``/``min(dim)`` and of ``gather`` with distinct
indices reach this with at most one write per destination.
"""
from __future__ import annotations

import torch

from ..registry import register_kernel
from ._common import ANY, run_native, unsupported

aten = torch.ops.aten


def _has_colliding_indices(index: torch.Tensor, dim: int) -> bool:
    """True if two entries on one line along ``dim`` hold the same index (same destination)."""
    if index.dim() == 0 or index.numel() == 0:
        return False
    dim %= index.dim()
    n = index.shape[dim]
    if n <= 1:
        return False
    ordered = index.sort(dim=dim).values
    return bool((ordered.narrow(dim, 1, n - 1) == ordered.narrow(dim, 0, n - 1)).any())


@register_kernel([aten.scatter.src, aten.scatter_.src], ANY)
def scatter_src(func, args, kwargs):
    dim, index = args[1], args[2]
    if _has_colliding_indices(index, dim):
        raise unsupported(func, args, kwargs,
                          "two index entries write the same destination; which write wins is not defined "
                          "(use distinct indices, or scatter_add/index_add for accumulation)")
    return run_native(func, args, kwargs)


_SAME_SIZE_INT = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32,
                  torch.float64: torch.int64}


@register_kernel([aten.gather.default], ANY)
def gather_bits(func, args, kwargs):
    source = args[0]
    as_int = _SAME_SIZE_INT.get(source.dtype)
    if as_int is None:  # integers and bool: already copied bit for bit
        return run_native(func, args, kwargs)
    return run_native(func, (source.view(as_int), *args[1:]), kwargs).view(source.dtype)
