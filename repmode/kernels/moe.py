"""Mixture of Experts: ``_grouped_mm`` (what Hugging Face's grouped-GEMM experts and
``torch.nn.functional.grouped_mm`` reach), a composite of repmode's ``mm``: every group is one
matrix product of its slices, so each output element has the order of "Matrix products" over its
group's reduced length — batch invariant (a row's result does not depend on the other rows, nor on
how the tokens were split into groups other than its own). The routing around it (softmax, topk,
one_hot, index_add, scatter, bincount, ...) is registered by its own families."""
from __future__ import annotations

import torch

from ..registry import register_composite, round_to
from ._common import arguments, call_registered, check_device, unsupported

aten = torch.ops.aten

_ALLOWED = (torch.float32, torch.bfloat16, torch.float16)


def _ends(offs, G: int, total: int, what: str) -> list[int]:
    ends = [int(v) for v in offs.tolist()]
    start = 0
    for e in ends:
        if e < start or e > total:
            raise RuntimeError(f"_grouped_mm: offsets must be non-decreasing and at most the {what} ({total}), "
                               f"got {ends}")
        start = e
    return ends


def _mm(a, b):
    return call_registered(aten.mm.default, a, b)


@register_composite(aten._grouped_mm.default, ("float32", "widened"))
def grouped_mm(func, args, kwargs):
    a, b, offs, bias, out_dtype = arguments(func, args, kwargs)
    check_device(func, args, kwargs, a, b, offs)
    if a.dtype not in _ALLOWED or b.dtype != a.dtype:
        raise RuntimeError(f"Expected mat_a to be Float32, BFloat16 or Float16 matrix, got {a.dtype} "
                           f"(and mat_b {b.dtype}; both of one dtype)")
    if bias is not None:
        raise unsupported(func, args, kwargs, "bias is not supported (torch's _grouped_mm refuses it too)")
    if out_dtype is not None and out_dtype not in (a.dtype, torch.float32):
        raise unsupported(func, args, kwargs, f"out_dtype {out_dtype} for {a.dtype} inputs (the input dtype or "
                                              "float32 are supported)")
    if a.dim() not in (2, 3) or b.dim() not in (2, 3):
        raise RuntimeError(f"_grouped_mm: mat_a and mat_b must be 2-D or 3-D, got {a.dim()}-D and {b.dim()}-D")
    both_3d = a.dim() == 3 and b.dim() == 3
    if both_3d == (offs is not None):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d")
    if offs is not None and (offs.dim() != 1 or offs.dtype != torch.int32):
        raise RuntimeError("Offsets have to be int32 and 1-D")
    if a.shape[-1] != b.shape[-2] and not (a.dim() == 2 and b.dim() == 2):
        raise RuntimeError(f"_grouped_mm: contraction sizes differ ({tuple(a.shape)} and {tuple(b.shape)})")
    low = a.dtype if a.dtype != torch.float32 else None
    # bf16/fp16 inputs: widened exactly to float32; the float32 products rounded once at the end
    a32, b32 = (a.to(torch.float32), b.to(torch.float32)) if low else (a, b)
    if both_3d:                                    # (G, M, K) x (G, K, N) -> (G, M, N)
        if a.shape[0] != b.shape[0]:
            raise RuntimeError(f"_grouped_mm: group counts differ ({a.shape[0]} and {b.shape[0]})")
        out = call_registered(aten.bmm.default, a32, b32)
    elif a.dim() == 2 and b.dim() == 3:            # rows of a in groups: (M, K) x (G, K, N) -> (M, N)
        G = b.shape[0]
        if offs.shape[0] != G:
            raise RuntimeError(f"_grouped_mm: {offs.shape[0]} offsets for {G} groups")
        out = a32.new_zeros((a.shape[0], b.shape[2]))
        start = 0
        for g, end in enumerate(_ends(offs, G, a.shape[0], "rows of mat_a")):
            if end > start:
                out[start:end] = _mm(a32[start:end], b32[g])
            start = end
    elif a.dim() == 3 and b.dim() == 2:            # columns of b in groups: (G, M, K) x (K, N) -> (M, N)
        G = a.shape[0]
        if offs.shape[0] != G:
            raise RuntimeError(f"_grouped_mm: {offs.shape[0]} offsets for {G} groups")
        out = a32.new_zeros((a.shape[1], b.shape[1]))
        start = 0
        for g, end in enumerate(_ends(offs, G, b.shape[1], "columns of mat_b")):
            if end > start:
                out[:, start:end] = _mm(a32[g], b32[:, start:end])
            start = end
    else:                                          # the reduced dim in groups: (M, K) x (K, N) -> (G, M, N)
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"_grouped_mm: contraction sizes differ ({tuple(a.shape)} and {tuple(b.shape)})")
        G = offs.shape[0]
        out = a32.new_zeros((G, a.shape[0], b.shape[1]))
        start = 0
        for g, end in enumerate(_ends(offs, G, a.shape[1], "columns of mat_a")):
            if end > start:
                out[g] = _mm(a32[:, start:end], b32[start:end])
            start = end
    if low and out_dtype != torch.float32:
        return round_to(out, low)
    return out
