"""Embedding: the forward copies rows; the backward accumulates in a canonical order.

``embedding_dense_backward``: row r of the weight gradient is the sum of the incoming gradient
rows at the positions p1 < p2 < ... whose index is r, added one after the other to +0
(((+0 + g[p1]) + g[p2]) + ...), whatever the threads or the hardware; rows of ``padding_idx`` get
+0 (the order of repmode/kernels/indexing.py).
"""
from __future__ import annotations

import torch

from ..registry import register_kernel
from ._common import ANY, FLOAT_HALF_INT, call_registered, check_float_half_int, params, round_to, unsupported
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


@register_kernel(aten.embedding_renorm_.default, FLOAT_HALF_INT)
def embedding_renorm_(func, args, kwargs):
    """nn.Embedding(max_norm=...): each distinct index r (in increasing order) whose row's norm
    exceeds max_norm has its row multiplied by max_norm / (norm + 1e-7). The norm is repmode's
    linalg_vector_norm of the row (its order); the scale is computed in float64 and rounded once to
    float32 (float64 rows: kept), the row times it by repmode's mul, rounded once to the row's dtype."""
    self, indices, max_norm, norm_type = params(func, args, kwargs, "self", "indices", "max_norm", "norm_type")
    check_float_half_int(func, args, kwargs, self)
    if not self.is_floating_point():
        raise unsupported(func, args, kwargs, "embedding_renorm_ needs a floating-point weight")
    if self.dim() != 2:
        raise RuntimeError(f"embedding_renorm_(): Expected 2-D tensor for argument #1 'self' (got {self.dim()}-D)")
    rows = torch.unique(indices.reshape(-1))  # sorted, distinct
    if rows.numel() == 0:
        return self
    picked = self.index_select(0, rows)
    norms = call_registered(aten.linalg_vector_norm.default, picked, norm_type, [1]).to(torch.float64)
    over = norms > max_norm
    if not bool(over.any()):
        return self
    scale = float(max_norm) / (norms[over] + 1e-7)  # float64: one IEEE addition, one division
    wide = torch.float64 if self.dtype == torch.float64 else torch.float32
    scaled = call_registered(aten.mul.Tensor, picked[over].to(wide), scale.to(wide).unsqueeze(1))
    self.index_copy_(0, rows[over], round_to(scaled, self.dtype) if self.dtype != wide else scaled)
    return self
