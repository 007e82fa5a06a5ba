"""Embedding: the forward copies rows; the backward accumulates in a canonical order.

``embedding_dense_backward``: row r of the weight gradient is the sum of the incoming gradient
rows at the positions p1 < p2 < ... whose index is r, added one after the other to +0
(((+0 + g[p1]) + g[p2]) + ...), whatever the threads or the hardware; rows of ``padding_idx`` get
+0. Evaluated in rounds: round k adds the k-th occurrence of every index at once, and within a
round each weight row is written at most once, so each element takes one IEEE addition.
"""
from __future__ import annotations

import torch

from ..registry import register_kernel
from ._common import unsupported

aten = torch.ops.aten


@register_kernel(aten.embedding.default)
def embedding(func, args, kwargs):
    weight, indices = args[0], args[1]
    # selection: each output row is one weight row, copied
    return weight.index_select(0, indices.reshape(-1)).reshape(*indices.shape, weight.shape[1])


def _occurrence_rank(flat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(order, rank): positions sorted by index (stable: increasing position within an index)
    and, for each of them, how many earlier positions hold the same index."""
    order = torch.sort(flat, stable=True).indices
    s = flat[order]
    starts = torch.ones_like(s, dtype=torch.bool)
    starts[1:] = s[1:] != s[:-1]
    pos = torch.arange(s.numel())
    first = torch.where(starts, pos, torch.zeros_like(pos)).cummax(0).values
    return order, pos - first


@register_kernel(aten.embedding_dense_backward.default)
def embedding_dense_backward(func, args, kwargs):
    grad, indices, num_weights, padding_idx, scale_grad_by_freq = args
    if scale_grad_by_freq:
        raise unsupported(func, args, kwargs, "scale_grad_by_freq=True is not supported yet")
    dim = grad.shape[-1]
    rows = grad.reshape(-1, dim)
    flat = indices.reshape(-1)
    out = torch.zeros((num_weights, dim), dtype=grad.dtype)
    if flat.numel() == 0:
        return out
    keep = flat != padding_idx
    order, rank = _occurrence_rank(torch.where(keep, flat, torch.full_like(flat, -1)))
    kept = keep[order]
    for k in range(int(rank[kept].max()) + 1 if bool(kept.any()) else 0):
        sel = order[kept & (rank == k)]
        out.index_add_(0, flat[sel], rows[sel])  # distinct rows: one addition per element
    return out
