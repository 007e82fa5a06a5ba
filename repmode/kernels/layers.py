"""Small layers built from registered ops (docs/semantics.md, "Activations and small layers"):
``norm`` (torch.norm's overloads, as ``linalg_vector_norm``), weight normalization
(``_weight_norm_interface`` and its backward, in float64 with the Sum order), ``_trilinear``
(``nn.Bilinear``: the batched matrix product's order), and the distances ``cdist``
(``_cdist_forward``/``_cdist_backward``, ``_euclidean_dist``) and ``pdist``. Indexing, views,
concatenation and ``where`` inside run natively (exact data movement and selection)."""
from __future__ import annotations

import math

import torch

from ..registry import register_composite
from ._common import FLOAT_WIDENED, LOW_PRECISION, call_registered, param, round_to, unsupported

aten = torch.ops.aten
_call = call_registered


def _float_input(func, args, kwargs, *tensors):
    for t in tensors:
        if isinstance(t, torch.Tensor) and not t.is_floating_point():
            raise unsupported(func, args, kwargs, "floating-point inputs only (float32, float64, bfloat16, float16)")


# ---- weight normalization: w = v · (g / ‖v‖), the norm over every dim but `dim`, in float64.

def _wn_dims(func, args, kwargs, v, dim):
    nd = v.dim()
    dim = dim % nd if nd else 0
    if not (dim == 0 or dim == nd - 1):
        raise RuntimeError("fused kernels can only be applied for first or last dim")
    return dim, [d for d in range(nd) if d != dim]


def _acc(dtype):
    return torch.float32 if dtype in LOW_PRECISION else dtype


def _round(x64, dtype):
    """A float64 value rounded to ``dtype`` (bf16/fp16 through float32, as every widened op)."""
    if dtype in LOW_PRECISION:
        return round_to(round_to(x64, torch.float32), dtype)
    return round_to(x64, dtype)


def _sum64(t, dims):
    """The Sum order over ``dims`` (kept) of a float64 tensor."""
    if not dims:
        return t
    return _call(aten.sum.dim_IntList, t, dims, True)


@register_composite(aten._weight_norm_interface.default, FLOAT_WIDENED, out=aten._weight_norm_interface.out)
def weight_norm_interface(func, args, kwargs):
    """n = sqrt(Σ v·v) (float64 products and Sum order over the other dims; exact products for
    float32/bf16/fp16 data), norms = RN(n) in the accumulation dtype, w = RN_T(v · (g / n)) in float64."""
    v, g = args[0], args[1]
    dim = param(func, args, kwargs, "dim")
    _float_input(func, args, kwargs, v, g)
    dim, others = _wn_dims(func, args, kwargs, v, dim)
    v64, g64 = v.to(torch.float64), g.to(torch.float64)
    n64 = _call(aten.sqrt.default, _sum64(_call(aten.mul.Tensor, v64, v64), others))
    scale = _call(aten.div.Tensor, g64.reshape(n64.shape), n64)
    w = _round(_call(aten.mul.Tensor, v64, scale), v.dtype)
    return w.contiguous(), round_to(n64, _acc(v.dtype))


@register_composite(aten._weight_norm_interface_backward.default, FLOAT_WIDENED,
                    out=aten._weight_norm_interface_backward.out)
def weight_norm_interface_backward(func, args, kwargs):
    """In float64: P = Σ gw·v (Sum order over the other dims), grad_g = P / n,
    grad_v = (g / n) · (gw − v · (P / (n · n))); each result rounded once."""
    grad_w, v, g, norms, dim = args
    _float_input(func, args, kwargs, grad_w, v, g, norms)
    dim, others = _wn_dims(func, args, kwargs, v, dim)
    gw64, v64, g64 = grad_w.to(torch.float64), v.to(torch.float64), g.to(torch.float64)
    n64 = norms.to(torch.float64)
    P = _sum64(_call(aten.mul.Tensor, gw64, v64), others)
    n64 = n64.reshape(P.shape)
    grad_g = _call(aten.div.Tensor, P, n64)
    inner = _call(aten.sub.Tensor, gw64, _call(aten.mul.Tensor, v64,
                                               _call(aten.div.Tensor, P, _call(aten.mul.Tensor, n64, n64))))
    grad_v = _call(aten.mul.Tensor, _call(aten.div.Tensor, g64.reshape(P.shape), n64), inner)
    return _round(grad_v, v.dtype).contiguous(), _round(grad_g, g.dtype).reshape(g.shape).contiguous()


# ---- _trilinear (nn.Bilinear): two contractions, each one batched matrix product.

def _sumproduct_pair(a, b, sum_dims):
    """Σ over ``sum_dims`` of a·b (same rank; size-1 dims broadcast), dims kept. A summed dim that only
    one operand has is summed in it first (Sum order); the shared summed dims are the k of one bmm
    (batch: dims both have; rows: a's own dims; columns: b's own dims, each in dim order)."""
    nd = a.dim()
    shared = []
    for d in sorted(sum_dims):
        if a.shape[d] != 1 and b.shape[d] == 1:
            a = _call(aten.sum.dim_IntList, a, [d], True)
        elif b.shape[d] != 1 and a.shape[d] == 1:
            b = _call(aten.sum.dim_IntList, b, [d], True)
        elif a.shape[d] != 1:
            if a.shape[d] != b.shape[d]:
                raise RuntimeError(f"non-broadcast dimensions must match: {a.shape[d]} vs {b.shape[d]}")
            shared.append(d)
    summed = set(sum_dims)
    batch = [d for d in range(nd) if d not in summed and a.shape[d] != 1 and b.shape[d] != 1]
    for d in batch:
        if a.shape[d] != b.shape[d]:
            raise RuntimeError(f"The size of tensor a ({a.shape[d]}) must match the size of tensor b ({b.shape[d]}) "
                               f"at non-singleton dimension {d}")
    lonly = [d for d in range(nd) if d not in summed and a.shape[d] != 1 and b.shape[d] == 1]
    ronly = [d for d in range(nd) if d not in summed and a.shape[d] == 1 and b.shape[d] != 1]
    ones = [d for d in range(nd) if d not in batch + lonly + ronly + shared]
    size = lambda t, ds: math.prod(t.shape[d] for d in ds)  # noqa: E731
    nb, nl, nr, nk = size(a, batch), size(a, lonly), size(b, ronly), size(a, shared)
    A = a.permute(batch + lonly + shared + ronly + ones).reshape(nb, nl, nk)  # ronly: size 1 in a
    B = b.permute(batch + shared + ronly + lonly + ones).reshape(nb, nk, nr)  # lonly: size 1 in b
    if nk == 0 or nb * nl * nr == 0:
        prod = torch.zeros(nb, nl, nr, dtype=torch.promote_types(a.dtype, b.dtype), device=a.device)
    else:
        prod = _call(aten.bmm.default, A, B)
    order = batch + lonly + ronly
    shape = [a.shape[d] for d in batch + lonly] + [b.shape[d] for d in ronly]
    out = prod.reshape(shape + [1] * len(ones + shared))
    inverse = [0] * nd
    for pos, d in enumerate(order + ones + shared):
        inverse[d] = pos
    return out.permute(inverse)


@register_composite(aten._trilinear.default, FLOAT_WIDENED, out=aten._trilinear.out)
def trilinear(func, args, kwargs):
    """Σ over sumdim of i1·i2·i3 (each unsqueezed at its expand dims): first the summed dims i3 does
    not have, over i1·i2 (one bmm), then the others with i3 (a second bmm). ``unroll_dim`` is a
    native speed knob and does not change repmode's order."""
    i1, i2, i3, expand1, expand2, expand3, sumdim = arguments_trilinear(func, args, kwargs)
    _float_input(func, args, kwargs, i1, i2, i3)
    total = i1.dim() + len(expand1)
    tensors = []
    for t, expand in ((i1, expand1), (i2, expand2), (i3, expand3)):
        if t.dim() + len(expand) != total:
            raise RuntimeError("number of dimensions of the operands and their expansions must match")
        for d in sorted(e % total for e in expand):
            t = t.unsqueeze(d)
        tensors.append(t)
    t1, t2, t3 = tensors
    sumdim = sorted({d % total for d in sumdim})
    first = [d for d in sumdim if t3.shape[d] == 1]
    second = [d for d in sumdim if d not in first]
    out = _sumproduct_pair(_sumproduct_pair(t1, t2, first), t3, second)
    return out.reshape([out.shape[d] for d in range(total) if d not in sumdim]).contiguous()


def arguments_trilinear(func, args, kwargs):
    return [param(func, args, kwargs, n) for n in ("i1", "i2", "i3", "expand1", "expand2", "expand3", "sumdim")]


# ---- distances: cdist, pdist. Differences in the inputs' dtype, then linalg_vector_norm's order
# over the last dim; computed over blocks of rows (each output independent of the blocking).

_BLOCK_ELEMENTS = 1 << 22


def _rows_per_block(per_row: int) -> int:
    return max(1, _BLOCK_ELEMENTS // max(1, per_row))


def _broadcast_batch(x1, x2):
    batch = torch.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    return x1.expand(*batch, *x1.shape[-2:]), x2.expand(*batch, *x2.shape[-2:])


def _check_cdist(func, args, kwargs, x1, x2, p):
    _float_input(func, args, kwargs, x1, x2)
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")


def _distances(x1, x2, p):
    """‖x1[..., i, :] − x2[..., j, :]‖_p for every (i, j)."""
    x1, x2 = _broadcast_batch(x1, x2)
    *batch, r1, m = x1.shape
    r2 = x2.shape[-2]
    dtype = torch.promote_types(x1.dtype, x2.dtype)
    if r1 == 0 or r2 == 0 or m == 0:
        return torch.zeros(*batch, r1, r2, dtype=dtype, device=x1.device)
    step = _rows_per_block(math.prod(batch) * r2 * m)
    blocks = []
    for i in range(0, r1, step):
        d = _call(aten.sub.Tensor, x1[..., i:i + step, None, :], x2[..., None, :, :])
        blocks.append(_call(aten.linalg_vector_norm.default, d, p, [-1]))
    return torch.cat(blocks, -2) if len(blocks) > 1 else blocks[0]


@register_composite(aten._cdist_forward.default, FLOAT_WIDENED, out=aten._cdist_forward.out)
def cdist_forward(func, args, kwargs):
    """out[..., i, j] = linalg_vector_norm(x1[..., i, :] − x2[..., j, :], p) (compute_mode only chooses
    between this op and ``_euclidean_dist`` in torch.cdist)."""
    x1, x2, p = args[0], args[1], float(args[2])
    _check_cdist(func, args, kwargs, x1, x2, p)
    return _distances(x1, x2, p).contiguous()


def _local_gradient(d, dist, g, p):
    """∂‖d‖_p/∂d times g, written as torch's cdist backward does; 0 where the distance is 0."""
    zero = torch.zeros((), dtype=d.dtype)
    if p == 0:
        return torch.zeros_like(d)
    if p == 1:
        return _call(aten.mul.Tensor, g, _call(aten.sign.default, d))
    if math.isinf(p):
        hit = _call(aten.abs.default, d) == dist
        return _call(aten.mul.Tensor, _call(aten.mul.Tensor, g, _call(aten.sign.default, d)), hit.to(d.dtype))
    if p == 2:
        return torch.where(dist == 0, zero, _call(aten.div.Tensor, _call(aten.mul.Tensor, g, d), dist))
    denom = _call(aten.pow.Tensor_Scalar, dist, p - 1)
    if p < 2:
        num = _call(aten.mul.Tensor, _call(aten.mul.Tensor, _call(aten.sign.default, d),
                                           _call(aten.pow.Tensor_Scalar, _call(aten.abs.default, d), p - 1)), g)
        vanish = torch.logical_or(dist == 0, torch.logical_and(d == 0, torch.tensor(p < 1)))
    else:
        num = _call(aten.mul.Tensor, _call(aten.mul.Tensor, d,
                                           _call(aten.pow.Tensor_Scalar, _call(aten.abs.default, d), p - 2)), g)
        vanish = dist == 0
    return torch.where(vanish, zero, _call(aten.div.Tensor, num, denom))


def _cdist_grad(grad, x1, x2, p, dist):
    """grad_x1[..., i, k] = Σ_j (Sum order, j increasing) of the local gradient of (i, j) at k."""
    x1e, x2e = _broadcast_batch(x1, x2)
    *batch, r1, m = x1e.shape
    r2 = x2e.shape[-2]
    grad = grad.expand(*batch, r1, r2)
    dist = dist.expand(*batch, r1, r2)
    if r1 == 0 or r2 == 0 or m == 0:
        out = torch.zeros(x1e.shape, dtype=x1.dtype, device=x1.device)
    else:
        step = _rows_per_block(math.prod(batch) * r2 * m)
        blocks = []
        for i in range(0, r1, step):
            d = _call(aten.sub.Tensor, x1e[..., i:i + step, None, :], x2e[..., None, :, :])
            local = _local_gradient(d, dist[..., i:i + step, :, None], grad[..., i:i + step, :, None], p)
            blocks.append(_call(aten.sum.dim_IntList, local, [-2]))
        out = torch.cat(blocks, -2) if len(blocks) > 1 else blocks[0]
    lead = out.dim() - x1.dim()
    reduce = [d for d in range(out.dim() - 2) if d < lead or (x1.shape[d - lead] == 1 and out.shape[d] != 1)]
    if reduce:
        out = _call(aten.sum.dim_IntList, out, reduce, True)
        out = out.reshape(x1.shape)
    return out.contiguous()


@register_composite(aten._cdist_backward.default, FLOAT_WIDENED, out=aten._cdist_backward.out)
def cdist_backward(func, args, kwargs):
    grad, x1, x2, p, dist = args[0], args[1], args[2], float(args[3]), args[4]
    _check_cdist(func, args, kwargs, x1, x2, p)
    return _cdist_grad(grad, x1, x2, p, dist)


@register_composite(aten._euclidean_dist.default, FLOAT_WIDENED, out=aten._euclidean_dist.out)
def euclidean_dist(func, args, kwargs):
    """torch's matrix-product form (cdist's compute_mode 'use_mm_for_euclid_dist'):
    sqrt(max(0, [−2·x1, ‖x1‖², 1] · [x2, 1, ‖x2‖²]ᵀ)), ‖x‖² the Sum order of x·x, the product bmm's order."""
    x1, x2 = args[0], args[1]
    _float_input(func, args, kwargs, x1, x2)
    x1, x2 = _broadcast_batch(x1, x2)
    n1 = _call(aten.sum.dim_IntList, _call(aten.mul.Tensor, x1, x1), [-1], True)
    n2 = _call(aten.sum.dim_IntList, _call(aten.mul.Tensor, x2, x2), [-1], True)
    a = torch.cat([_call(aten.mul.Tensor, x1, -2.0), n1, torch.ones_like(n1)], -1)
    b = torch.cat([x2, torch.ones_like(n2), n2], -1)
    *batch, r1, k = a.shape
    r2 = b.shape[-2]
    prod = _call(aten.bmm.default, a.reshape(-1, r1, k), b.reshape(-1, r2, k).transpose(1, 2))
    return _call(aten.sqrt.default, _call(aten.clamp_min.default, prod, 0.0)).reshape(*batch, r1, r2)


def _pairs(n, device):
    return torch.triu_indices(n, n, 1, device=device)


@register_composite(aten._pdist_forward.default, FLOAT_WIDENED, out=aten._pdist_forward.out)
def pdist_forward(func, args, kwargs):
    """‖x[i] − x[j]‖_p for i < j in row-major order (linalg_vector_norm's order)."""
    x = args[0]
    p = float(param(func, args, kwargs, "p"))
    _float_input(func, args, kwargs, x)
    if x.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.dim()}D")
    if p < 0:
        raise RuntimeError(f"pdist only supports non-negative p values, got {p}")
    n, m = x.shape
    i, j = _pairs(n, x.device)
    if i.numel() == 0:
        return torch.empty(0, dtype=x.dtype, device=x.device)
    if m == 0:
        return torch.zeros(i.numel(), dtype=x.dtype, device=x.device)
    step = _rows_per_block(m)
    blocks = []
    for s in range(0, i.numel(), step):
        d = _call(aten.sub.Tensor, x[i[s:s + step]], x[j[s:s + step]])
        blocks.append(_call(aten.linalg_vector_norm.default, d, p, [-1]))
    return torch.cat(blocks) if len(blocks) > 1 else blocks[0]


@register_composite(aten._pdist_backward.default, FLOAT_WIDENED, out=aten._pdist_backward.out)
def pdist_backward(func, args, kwargs):
    """grad_x[i] = Σ_j (Sum order over j = 0 … n−1, the j = i term +0) of the local gradient of the pair
    {i, j}: the cdist backward of x with itself, with the pair gradients and distances written
    symmetrically into n × n matrices (zero diagonal)."""
    grad, x, p, dist = args[0], args[1], float(args[2]), args[3]
    _float_input(func, args, kwargs, x)
    n = x.shape[0]
    i, j = _pairs(n, x.device)
    G = torch.zeros(n, n, dtype=grad.dtype, device=x.device)
    D = torch.zeros(n, n, dtype=dist.dtype, device=x.device)
    G[i, j] = grad
    G[j, i] = grad
    D[i, j] = dist
    D[j, i] = dist
    return _cdist_grad(G, x, x, p, D)
