"""Embedding: the forward copies rows; the backward accumulates in a canonical order.

``embedding_dense_backward``: row r of the weight gradient is the sum of the incoming gradient
rows at the positions p1 < p2 < ... whose index is r, added one after the other to +0
(((+0 + g[p1]) + g[p2]) + ...), whatever the threads or the hardware; rows of ``padding_idx`` get
+0 (the order of repmode/kernels/indexing.py).
"""
from __future__ import annotations

import torch

from ..registry import register_kernel
from ._common import (
    ANY,
    FLOAT_HALF_INT,
    FLOAT_WIDENED,
    call_registered,
    check_float_half_int,
    float_code,
    named_arguments,
    params,
    round_to,
    unsupported,
    widened,
)
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


# ---- EmbeddingBag (_embedding_bag, _embedding_bag_forward_only and their backward ops) ----

_BAG_MODES = ("sum", "mean", "max")


def _bag_of_positions(offsets: torch.Tensor, n: int, bags: int) -> torch.Tensor:
    """The bag of every index position: (number of the first ``bags`` offsets <= i) - 1 (int64)."""
    pos = torch.arange(n, dtype=torch.int64)
    return torch.searchsorted(offsets[:bags].to(torch.int64).contiguous(), pos, right=True) - 1


def _bag_check(func, args, kwargs, weight, indices, offsets, mode, psw, include_last_offset):
    if not weight.is_cpu:
        raise unsupported(func, args, kwargs, "embedding_bag has CPU kernels only so far; move the tensors to the CPU "
                                              "(.cpu()) to run it reproducibly")
    float_code(func, args, kwargs, weight)
    if weight.dim() != 2:
        raise RuntimeError(f"embedding_bag: weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if indices.dim() != 1 or offsets.dim() != 1:
        raise RuntimeError("embedding_bag: input has to be a 1D Tensor with offsets, got input of dimension "
                           f"{indices.dim()} and offsets of dimension {offsets.dim()}")
    for name, t in (("indices", indices), ("offsets", offsets)):
        if t.dtype not in (torch.int32, torch.int64):
            raise RuntimeError(f"embedding_bag: expected {name} to have scalar type Long or Int, but got {t.dtype}")
    if mode not in (0, 1, 2):
        raise RuntimeError(f"embedding_bag: unknown mode {mode}")
    if psw is not None:
        if mode != 0:
            raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{_BAG_MODES[mode]}'). Please open a "
                                      "feature request on GitHub.")
        if psw.dtype != weight.dtype:
            raise RuntimeError(f"embedding_bag: expected per_sample_weights to have the weight's dtype {weight.dtype}, "
                               f"got {psw.dtype}")
        if psw.shape != indices.shape:
            raise RuntimeError(f"embedding_bag: expected per_sample_weights of shape {list(indices.shape)}, got "
                               f"{list(psw.shape)}")
    n = indices.numel()
    bags = offsets.numel() - (1 if include_last_offset else 0)
    if bags < 0 or (include_last_offset and offsets.numel() < 1):
        raise RuntimeError("embedding_bag: include_last_offset needs at least one offset")
    if offsets.numel():
        if int(offsets[0]) != 0:
            raise RuntimeError(f"embedding_bag: offsets[0] has to be 0, i.e., the first sequence in the mini-batch has "
                               f"to start from position 0. However, got {int(offsets[0])}")
        if int(offsets[-1]) > n:
            raise RuntimeError(f"embedding_bag: offsets[-1] can not be greater than input's length ({n}), but got "
                               f"offsets[-1] of {int(offsets[-1])}")
        if offsets.numel() > 1 and bool((offsets[1:] < offsets[:-1]).any()):
            raise RuntimeError("embedding_bag: offsets have to be a non-decreasing sequence")
    if n and (bool((indices < 0).any()) or bool((indices >= weight.shape[0]).any())):
        raise IndexError("embedding_bag: index out of range in self")
    return bags


def _bag_max(weight, kept_idx, kept_bags, counts, bags):
    """torch's sequential rule, per bag and column: the first element, then each strictly greater
    one. Equivalently: a NaN first element stays; otherwise the first position holding the largest
    non-NaN value (equal values, ±0 included, keep the first). Computed with comparisons and
    selections only (exact): the largest non-NaN value per bag (scatter amax of the values with NaN
    as -inf; only compared with ==), then the first position equal to it (scatter amin of
    positions)."""
    vals = weight.index_select(0, kept_idx)  # (K, D), selection
    k, dim = vals.shape
    nan = vals != vals
    masked = torch.where(nan, torch.tensor(float("-inf"), dtype=vals.dtype), vals)
    bag_rows = kept_bags.unsqueeze(1).expand(k, dim)
    top = torch.full((bags, dim), float("-inf"), dtype=vals.dtype).scatter_reduce(0, bag_rows, masked, "amax")
    pos = torch.arange(k).unsqueeze(1).expand(k, dim)
    hit = (masked == top.index_select(0, kept_bags)) & ~nan
    first = torch.full((bags, dim), k, dtype=torch.int64).scatter_reduce(0, bag_rows, torch.where(hit, pos, k), "amin")
    starts = torch.cumsum(counts, 0) - counts  # each bag's first kept position
    nonempty = counts > 0
    lead = torch.zeros((bags, dim), dtype=torch.bool)
    lead[nonempty] = nan[starts[nonempty]]  # a NaN first element wins its column
    first = torch.where(lead | (first == k), starts.unsqueeze(1).expand(bags, dim).clamp(max=max(k - 1, 0)), first)
    out = torch.where(nonempty.unsqueeze(1), vals.gather(0, first), torch.zeros((), dtype=vals.dtype))
    max_indices = torch.where(nonempty.unsqueeze(1), kept_idx[first], torch.zeros((), dtype=torch.int64))
    return out, max_indices


@widened()
def _embedding_bag(func, args, kwargs):
    b = named_arguments(func, args, kwargs)
    weight, indices, offsets = b["weight"], b["indices"], b["offsets"]
    mode, psw, ilo, padding_idx = int(b["mode"]), b["per_sample_weights"], bool(b["include_last_offset"]), \
        int(b["padding_idx"])
    bags = _bag_check(func, args, kwargs, weight, indices, offsets, mode, psw, ilo)
    n, dim, itype = indices.numel(), weight.shape[1], indices.dtype
    bag = _bag_of_positions(offsets, n, bags)
    # positions past the last offset (include_last_offset) belong to no bag
    keep = (bag >= 0) & (bag < bags) if not ilo else (torch.arange(n) < int(offsets[-1]))
    if padding_idx >= 0:
        keep = keep & (indices != padding_idx)
    kept_bags, kept_idx = bag[keep], indices[keep].to(torch.int64)
    counts = torch.bincount(kept_bags, minlength=bags)[:bags] if kept_bags.numel() else torch.zeros(bags,
                                                                                                   dtype=torch.int64)
    out = torch.zeros((bags, dim), dtype=weight.dtype)
    max_indices = None
    if mode in (0, 1) and kept_idx.numel():
        rows = weight.index_select(0, kept_idx)  # selection
        if psw is not None:
            rows = call_registered(aten.mul.Tensor, rows, psw[keep].unsqueeze(1))
        # bag b: ((+0 + c[p1]) + c[p2]) + ... over its positions p1 < p2 < ... (index_add's order)
        out = call_registered(aten.index_add.default, out, 0, kept_bags, rows)
        if mode == 1:
            out = call_registered(aten.div.Tensor, out, counts.clamp(min=1).to(out.dtype).unsqueeze(1))
    elif mode == 2:
        max_indices = torch.zeros((bags, dim), dtype=torch.int64)
        if kept_idx.numel():
            out, max_indices = _bag_max(weight, kept_idx, kept_bags, counts, bags)
    offset2bag = bag.clamp(max=max(bags - 1, 0)).to(itype)
    if mode == 0:
        size = bags + 1 if (ilo and func is aten._embedding_bag_forward_only.default) else bags
        bag_size = torch.zeros(size, dtype=itype)
        return out, offset2bag, bag_size, bag_size.clone()
    bag_size = counts.to(itype)
    return out, offset2bag, bag_size, (bag_size.clone() if mode == 1 else max_indices.to(itype))


@register_kernel([aten._embedding_bag.default, aten._embedding_bag_forward_only.default], FLOAT_WIDENED,
                 out=[aten._embedding_bag.out, aten._embedding_bag_forward_only.out])
def embedding_bag(func, args, kwargs):
    """sum: each bag's (weight row x per-sample weight, one rounding) terms added from +0 in
    increasing position; mean: that sum divided by the bag's count; max: torch's rule, the first
    element then each strictly greater one (ties keep the first index). padding_idx elements are
    skipped; empty bags give +0 (max index 0)."""
    return _embedding_bag(func, args, kwargs)


def _dense_bag_backward(func, args, kwargs, grad, indices, offset2bag, bag_size, max_indices, num_weights,
                        scale_grad_by_freq, mode, psw, padding_idx):
    if scale_grad_by_freq:
        raise unsupported(func, args, kwargs, "embedding_bag with scale_grad_by_freq=True is not supported yet")
    dim = grad.shape[1]
    out = torch.zeros((int(num_weights), dim), dtype=grad.dtype)
    if mode == 2:
        sized = (bag_size.to(torch.int64) > 0).nonzero().reshape(-1)
        if sized.numel() == 0:
            return out
        # weight element (r, d) gets grad[b, d] for every bag b whose max came from row r, bags in order
        dest = (max_indices[sized].to(torch.int64) * dim + torch.arange(dim)).reshape(-1)
        add_in_order(out.view(-1), dest, grad[sized].reshape(-1).contiguous())
        return out
    idx = indices.to(torch.int64)
    keep = idx != padding_idx if padding_idx >= 0 else torch.ones_like(idx, dtype=torch.bool)
    bags = offset2bag.to(torch.int64)[keep]
    if bags.numel() == 0:
        return out
    rows = grad.index_select(0, bags)  # selection
    if psw is not None:
        rows = call_registered(aten.mul.Tensor, rows, psw.to(grad.dtype)[keep].unsqueeze(1))
    if mode == 1:
        rows = call_registered(aten.div.Tensor, rows, bag_size.to(torch.int64)[bags].clamp(min=1).to(grad.dtype)
                               .unsqueeze(1))
    # row r: ((+0 + c[p1]) + c[p2]) + ... over the positions p1 < p2 < ... whose index is r
    return call_registered(aten.index_add.default, out, 0, idx[keep], rows)


@register_kernel([aten._embedding_bag_dense_backward.default], FLOAT_WIDENED,
                 out=[aten._embedding_bag_dense_backward.out])
def embedding_bag_dense_backward(func, args, kwargs):
    return _embedding_bag_dense_backward(func, args, kwargs)


@widened()
def _embedding_bag_dense_backward(func, args, kwargs):
    b = named_arguments(func, args, kwargs)
    return _dense_bag_backward(func, args, kwargs, b["grad"], b["indices"], b["offset2bag"], b["bag_size"],
                               b["maximum_indices"], b["num_weights"], b["scale_grad_by_freq"], int(b["mode"]),
                               b["per_sample_weights"], int(b["padding_idx"]))


@register_kernel([aten._embedding_bag_backward.default], FLOAT_WIDENED)
def embedding_bag_backward(func, args, kwargs):
    return _embedding_bag_backward(func, args, kwargs)


@widened()
def _embedding_bag_backward(func, args, kwargs):
    b = named_arguments(func, args, kwargs)
    if b["sparse"]:
        raise unsupported(func, args, kwargs, "embedding_bag with sparse=True (a sparse weight gradient) is not "
                                              "supported; use sparse=False")
    indices, offsets, offset2bag = b["indices"], b["offsets"], b["offset2bag"]
    if offset2bag.numel() == 0 and indices.numel():  # torch's float32 fast path leaves it empty
        offset2bag = _bag_of_positions(offsets, indices.numel(), offsets.numel())
    return _dense_bag_backward(func, args, kwargs, b["grad"], indices, offset2bag, b["bag_size"],
                               b["maximum_indices"], b["num_weights"], b["scale_grad_by_freq"], int(b["mode"]),
                               b["per_sample_weights"], int(b["padding_idx"]))


@register_kernel([aten._embedding_bag_per_sample_weights_backward.default], FLOAT_WIDENED,
                 out=[aten._embedding_bag_per_sample_weights_backward.out])
def embedding_bag_per_sample_weights_backward(func, args, kwargs):
    return _embedding_bag_psw_backward(func, args, kwargs)


@widened()
def _embedding_bag_psw_backward(func, args, kwargs):
    """grad_psw[i] = grad[bag(i)] . weight[indices[i]] by repmode's bmm (its order over the row);
    padding_idx positions get +0."""
    b = named_arguments(func, args, kwargs)
    grad, weight, indices, offsets, offset2bag = b["grad"], b["weight"], b["indices"], b["offsets"], b["offset2bag"]
    if int(b["mode"]) != 0:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for mode='sum'")
    n = indices.numel()
    out = torch.zeros(n, dtype=grad.dtype)
    if n == 0:
        return out
    if offset2bag.numel() == 0:
        offset2bag = _bag_of_positions(offsets, n, offsets.numel())
    idx = indices.to(torch.int64)
    padding_idx = int(b["padding_idx"])
    keep = (idx != padding_idx) if padding_idx >= 0 else torch.ones_like(idx, dtype=torch.bool)
    if not bool(keep.any()):
        return out
    g = grad.index_select(0, offset2bag.to(torch.int64)[keep]).unsqueeze(1)
    w = weight.to(grad.dtype).index_select(0, idx[keep]).unsqueeze(2)
    out[keep] = call_registered(aten.bmm.default, g, w).reshape(-1)
    return out
