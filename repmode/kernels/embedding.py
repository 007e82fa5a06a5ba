"""Embedding: the forward copies rows; the backward accumulates in a canonical order.

``embedding_dense_backward``: row r of the weight gradient is the sum of the incoming gradient
rows at the positions p1 < p2 < ... whose index is r, added one after the other to +0
(((+0 + g[p1]) + g[p2]) + ...), whatever the threads or the hardware; rows of ``padding_idx`` get
+0 (the order of repmode/kernels/indexing.py).
"""
from __future__ import annotations

import torch

from ..registry import register_kernel
from ._common import ANY, FLOAT_HALF_INT, unsupported
from .indexing import add_in_order

aten = torch.ops.aten


@register_kernel(aten.embedding.default, ANY)
def embedding(func, args, kwargs):
    weight, indices = args[0], args[1]
    # selection: each output row is one weight row, copied
    return weight.index_select(0, indices.reshape(-1)).reshape(*indices.shape, weight.shape[1])


@register_kernel(aten.embedding_dense_backward.default, FLOAT_HALF_INT)
def embedding_dense_backward(func, args, kwargs):
    grad, indices, num_weights, padding_idx, scale_grad_by_freq = args
    if scale_grad_by_freq:
        raise unsupported(func, args, kwargs, "scale_grad_by_freq=True is not supported yet")
    dim = grad.shape[-1]
    rows = grad.reshape(-1, dim)
    flat = indices.reshape(-1)
    out = torch.zeros((num_weights, dim), dtype=grad.dtype, device=grad.device)
    if flat.numel() == 0:
        return out
    keep = flat != padding_idx
    # row r: ((+0 + g[p1]) + g[p2]) + ... over increasing positions (indexing.add_in_order's order)
    add_in_order(out.view(-1), (flat[keep].reshape(-1, 1) * dim + torch.arange(dim, device=grad.device)).reshape(-1),
                 rows[keep].reshape(-1))
    return out
