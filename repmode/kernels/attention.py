"""Attention: scaled dot-product attention (the CPU flash op and its backward), and the eval fast
paths of nn.MultiheadAttention (``_native_multi_head_attention``) and nn.TransformerEncoderLayer
(``_transformer_encoder_layer_fwd``), all composites of registered ops (repmode's bmm, mul, add,
softmax, layer norm, gelu/relu). Orders: docs/semantics.md "Attention".

The math path of ``scaled_dot_product_attention`` (chosen by torch e.g. for dropout > 0) is
decomposed by torch into registered ops (mul, matmul/bmm, add/masked_fill, _safe_softmax,
dropout) and needs nothing here."""
from __future__ import annotations

import math

import torch

from ..errors import UnsupportedOpError
from ..registry import register_composite, register_passthrough
from ._common import FLOAT_ONLY, FLOAT_WIDENED, LOW_PRECISION, call_registered, check_device, round_to, unsupported

aten = torch.ops.aten
Tensor = torch.Tensor
NEG_INF = float("-inf")



def _check_inputs(func, args, kwargs, *tensors):
    for t in tensors:
        if isinstance(t, Tensor) and t.is_nested:
            raise UnsupportedOpError(
                f"repmode does not support {func} on nested tensors (pass padded tensors with a key-padding "
                "mask; nn.TransformerEncoder's own nested fast path is supported)")
    check_device(func, args, kwargs, *tensors)
    dtype = tensors[0].dtype
    if dtype not in (torch.float32, torch.float64):
        raise unsupported(func, args, kwargs, f"dtype {dtype} is not supported yet (float32 and float64 are)")
    for t in tensors:
        if isinstance(t, Tensor) and t.is_floating_point() and t.dtype != dtype:
            raise unsupported(func, args, kwargs, f"mixed dtypes ({dtype} and {t.dtype}) are not supported")


def _default_scale(E: int) -> float:
    """torch's default: 1 / sqrt(E) in double (rounded to the compute dtype by the mul)."""
    return 1.0 / math.sqrt(E)


def _batched(t: Tensor) -> Tensor:
    """(..., L, E) as (prod(...), L, E): a view where the strides allow, else an exact copy."""
    return t.reshape(math.prod(t.shape[:-2]), t.shape[-2], t.shape[-1])   # (-1 is ambiguous for 0 elements)


def _scaled_qk(q: Tensor, k: Tensor, scale: float) -> tuple[Tensor, Tensor]:
    """(round(q·c_q), round(k·c)) with c = sqrt(|scale|) in double and c_q = ±c (torch's math
    path: the sign of a negative scale goes to q); each factor rounded to T once by the mul."""
    c = math.sqrt(abs(scale))
    qs = call_registered(aten.mul.Scalar, q, (0.0 - c) if scale < 0 else c)
    ks = call_registered(aten.mul.Scalar, k, c)
    return qs, ks


def _additive_mask(mask: Tensor, dtype) -> Tensor:
    """sdpa's convention: a bool mask is True where attention IS allowed → 0, elsewhere −inf."""
    if mask.dtype == torch.bool:
        return torch.where(mask, torch.zeros((), dtype=dtype, device=mask.device),
                           torch.full((), NEG_INF, dtype=dtype, device=mask.device))
    return mask


def _scores(q: Tensor, k: Tensor, attn_mask, is_causal: bool, scale: float, scaled=None) -> Tensor:
    """round(q·c)·round(k·c)ᵀ (one fma chain per score), then + mask (causal / bool masks as
    0 / −inf, float masks as given): one rounding. Shape (..., L, S). ``scaled``: the
    (round(q·c), round(k·c)) pair when the caller has it already."""
    lead = q.shape[:-2]
    L, S = q.shape[-2], k.shape[-2]
    qs, ks = _scaled_qk(q, k, scale) if scaled is None else scaled
    s = call_registered(aten.bmm.default, _batched(qs), _batched(ks).transpose(1, 2)).view(*lead, L, S)
    if is_causal:
        causal = torch.ones(L, S, dtype=torch.bool, device=s.device).tril()
        s = call_registered(aten.add.Tensor, s, _additive_mask(causal, s.dtype))
    if attn_mask is not None:
        s = call_registered(aten.add.Tensor, s, _additive_mask(attn_mask, s.dtype))
    return s


def _probabilities(q, k, attn_mask, is_causal, scale, scaled=None):
    s = _scores(q, k, attn_mask, is_causal, scale, scaled)
    return s, call_registered(aten._safe_softmax.default, s, -1)


def _pv(p: Tensor, v: Tensor) -> Tensor:
    out = call_registered(aten.bmm.default, _batched(p), _batched(v))
    return out.view(*p.shape[:-1], v.shape[-1])


def _grouped(q: Tensor, k: Tensor) -> bool:
    """Whether k has fewer heads than q, a divisor of q's (grouped-query attention, torch's
    ``enable_gqa``: query head h reads key/value head h // (Hq / Hkv)), the other dims equal."""
    return (q.dim() >= 3 and q.dim() == k.dim() and q.shape[:-3] == k.shape[:-3] and 0 < k.shape[-3] < q.shape[-3]
            and q.shape[-3] % k.shape[-3] == 0)


def _expand_heads(t: Tensor, heads: int) -> Tensor:
    """t (..., Hkv, S, E) with every head repeated heads // Hkv times in place (repeat_interleave
    along the head dim: an exact copy)."""
    g = heads // t.shape[-3]
    if g == 1:
        return t
    return t.unsqueeze(-3).expand(*t.shape[:-2], g, *t.shape[-2:]).reshape(*t.shape[:-3], heads, *t.shape[-2:])


def _sum_heads(d: Tensor, like: Tensor) -> Tensor:
    """The gradient of _expand_heads: d (..., Hq, S, E) summed over each group of Hq / Hkv heads
    (repmode's sum over that dim: the canonical Sum order in increasing head order)."""
    g = d.shape[-3] // like.shape[-3]
    if g == 1:
        return d
    grouped = d.reshape(*like.shape[:-2], g, *like.shape[-2:])
    return call_registered(aten.sum.dim_IntList, grouped, [-3], False)


def _sdpa_args(func, args, kwargs, grouped=False):
    kwargs = kwargs or {}
    q, k, v = args[:3]
    dropout_p = args[3] if len(args) > 3 else kwargs.get("dropout_p", 0.0)
    is_causal = args[4] if len(args) > 4 else kwargs.get("is_causal", False)
    attn_mask = kwargs.get("attn_mask")
    scale = kwargs.get("scale")
    _check_inputs(func, args, kwargs, q, k, v, attn_mask)
    if dropout_p and dropout_p > 0:
        raise unsupported(func, args, kwargs, "dropout in the fused CPU attention op is not supported "
                                              "(torch's scaled_dot_product_attention takes its math path for "
                                              "dropout, which repmode covers)")
    same_heads = q.dim() >= 3 and (q.shape[:-2] == k.shape[:-2] or (grouped and _grouped(q, k)))
    if not same_heads or k.shape[:-1] != v.shape[:-1] or q.shape[-1] != k.shape[-1]:
        raise unsupported(func, args, kwargs, "query, key and value need the same batch and head dims, or (fused "
                                              "CPU op) key/value heads dividing the query heads (broadcast heads "
                                              "are not supported)")
    return q, k, v, attn_mask, bool(is_causal), _default_scale(q.shape[-1]) if scale is None else float(scale)


def _low_precision_in_float32(float32_results=()):
    """bf16/fp16 attention (what torch.autocast gives the fused CPU op): q, k, v (and every other
    bf16/fp16 tensor argument, the float attn_mask included) widened exactly to float32, the
    float32 order, each result rounded once to the inputs' dtype — except the results at
    ``float32_results`` (the forward's logsumexp), which torch returns in float32 too."""
    def wrap(impl):
        def run(func, args, kwargs):
            low = args[0].dtype
            if low not in LOW_PRECISION:
                return impl(func, args, kwargs)
            for t in args[:4]:
                if isinstance(t, Tensor) and t.is_floating_point() and t.dtype not in (low, torch.float32):
                    raise unsupported(func, args, kwargs, f"mixed dtypes ({low} and {t.dtype}) are not supported")

            def widen(t):
                return t.to(torch.float32) if isinstance(t, Tensor) and t.dtype in LOW_PRECISION else t
            wide = impl(func, tuple(widen(a) for a in args), {k: widen(v) for k, v in (kwargs or {}).items()})
            return tuple(r if i in float32_results or r is None else round_to(r, low) for i, r in enumerate(wide))
        run.__name__, run.__module__, run.__doc__ = impl.__name__, impl.__module__, impl.__doc__
        return run
    return wrap


@register_composite(aten._scaled_dot_product_flash_attention_for_cpu.default, FLOAT_WIDENED)
@_low_precision_in_float32(float32_results=(1,))
def sdpa_flash_cpu(func, args, kwargs):
    q, k, v, attn_mask, is_causal, scale = _sdpa_args(func, args, kwargs, grouped=True)
    k, v = _expand_heads(k, q.shape[-3]), _expand_heads(v, q.shape[-3])
    s, p = _probabilities(q, k, attn_mask, is_causal, scale)
    out = _pv(p, v)
    lse = call_registered(aten.logsumexp.default, s, [-1], False)
    return out, lse


@register_composite(aten._scaled_dot_product_flash_attention_for_cpu_backward.default, FLOAT_WIDENED)
@_low_precision_in_float32()
def sdpa_flash_cpu_backward(func, args, kwargs):
    kwargs = kwargs or {}
    grad_out, q, k, v = args[:4]
    dropout_p, is_causal = args[6], args[7]
    fwd_kwargs = {"attn_mask": kwargs.get("attn_mask"), "scale": kwargs.get("scale")}
    q, k, v, attn_mask, is_causal, scale = _sdpa_args(func, (q, k, v, dropout_p, is_causal), fwd_kwargs, grouped=True)
    _check_inputs(func, args, kwargs, grad_out)
    (dq, dk, dv), _ = _backward(grad_out, q, _expand_heads(k, q.shape[-3]), _expand_heads(v, q.shape[-3]),
                                attn_mask, is_causal, scale)
    return tuple(_heads_inner(g) for g in (dq, _sum_heads(dk, k), _sum_heads(dv, v)))


def _backward(grad_out, q, k, v, attn_mask, is_causal, scale, noise=None):
    """(dq, dk, dv) shaped like q, k, v, and dS (batched): autograd through the math path, P
    recomputed with the forward's bits; with dropout, P' = P · noise and dP' · noise."""
    qs, ks = _scaled_qk(q, k, scale)
    _, p = _probabilities(q, k, attn_mask, is_causal, scale, (qs, ks))   # recomputed: the forward's bits
    pb = _batched(p)
    pd = pb if noise is None else call_registered(aten.mul.Tensor, pb, _batched(noise))
    go = _batched(grad_out)
    dv = call_registered(aten.bmm.default, pd.transpose(1, 2), go)
    dp = call_registered(aten.bmm.default, go, _batched(v).transpose(1, 2))
    if noise is not None:
        dp = call_registered(aten.mul.Tensor, dp, _batched(noise))       # autograd of P * noise: dP · noise
    ds = call_registered(aten._softmax_backward_data.default, dp, pb, -1, pb.dtype)
    c = math.sqrt(abs(scale))
    dq = call_registered(aten.mul.Scalar, call_registered(aten.bmm.default, ds, _batched(ks)),
                         (0.0 - c) if scale < 0 else c)
    dk = call_registered(aten.mul.Scalar, call_registered(aten.bmm.default, ds.transpose(1, 2), _batched(qs)), c)
    return [t.view(x.shape) for t, x in ((dq, q), (dk, k), (dv, v))], ds


# ---- CUDA: torch's memory-efficient attention op ---------------------------------------------
# On a GPU, torch's scaled_dot_product_attention reaches _scaled_dot_product_efficient_attention
# for float32 (with or without dropout) where the CPU reaches the fused CPU op (no dropout) or the
# math path (dropout). repmode computes it as the math path's sequence, dropout included, so a GPU
# run gives the CPU's bits: the dropout noise is drawn by the same registered ops in the same order
# (empty_like, bernoulli_(1 - p), div_(1 - p), then P * noise), from the same Philox stream.

def _dropout_noise(p: Tensor, dropout_p: float) -> Tensor:
    """torch's CPU dropout (at::dropout → _dropout_impl): noise = bernoulli_(1 - p) / (1 - p)."""
    keep = 1.0 - dropout_p
    noise = call_registered(aten.bernoulli_.float, torch.empty_like(p), keep)
    return call_registered(aten.div_.Scalar, noise, keep)


def _efficient_args(func, args, kwargs, q, k, v, attn_bias, dropout_p, is_causal):
    kwargs = kwargs or {}
    fwd_kwargs = {"attn_mask": attn_bias, "scale": kwargs.get("scale")}
    q, k, v, attn_bias, is_causal, scale = _sdpa_args(func, (q, k, v, 0.0, is_causal), fwd_kwargs)
    if not 0.0 <= float(dropout_p) < 1.0:
        raise unsupported(func, args, kwargs, f"dropout_p={dropout_p} (0 <= p < 1 is supported)")
    return q, k, v, attn_bias, is_causal, scale, float(dropout_p)


@register_composite(aten._scaled_dot_product_efficient_attention.default, FLOAT_ONLY)
def sdpa_efficient(func, args, kwargs):
    q, k, v, attn_bias, compute_lse = args[:5]
    dropout_p = args[5] if len(args) > 5 else (kwargs or {}).get("dropout_p", 0.0)
    is_causal = args[6] if len(args) > 6 else (kwargs or {}).get("is_causal", False)
    q, k, v, attn_bias, is_causal, scale, dropout_p = _efficient_args(func, args, kwargs, q, k, v, attn_bias,
                                                                      dropout_p, is_causal)
    s, p = _probabilities(q, k, attn_bias, is_causal, scale)
    # The third output (torch: the Philox seed of its dropout) carries repmode's dropout noise to the
    # backward, which autograd hands it back; without dropout it is empty, like the fourth.
    noise = _dropout_noise(p, dropout_p) if dropout_p > 0 else torch.empty(0, dtype=q.dtype, device=q.device)
    pd = call_registered(aten.mul.Tensor, p, noise) if dropout_p > 0 else p
    out = _pv(pd, v)
    lse = (call_registered(aten.logsumexp.default, s, [-1], False) if compute_lse
           else torch.empty(0, dtype=q.dtype, device=q.device))
    return out, lse, noise, torch.empty(0, dtype=torch.int64, device=q.device)


@register_composite(aten._scaled_dot_product_efficient_attention_backward.default, FLOAT_ONLY)
def sdpa_efficient_backward(func, args, kwargs):
    grad_out, q, k, v, attn_bias, _out, _lse, noise, _offset, dropout_p, grad_input_mask = args[:11]
    is_causal = args[11] if len(args) > 11 else (kwargs or {}).get("is_causal", False)
    q, k, v, attn_bias, is_causal, scale, dropout_p = _efficient_args(func, args, kwargs, q, k, v, attn_bias,
                                                                      dropout_p, is_causal)
    _check_inputs(func, args, kwargs, grad_out)
    if dropout_p > 0 and noise.shape != q.shape[:-1] + (k.shape[-2],):
        raise unsupported(func, args, kwargs, "the dropout state was not written by repmode's forward "
                                              "(was the forward run outside repmode.enabled()?)")
    grads, ds = _backward(grad_out, q, k, v, attn_bias, is_causal, scale, noise if dropout_p > 0 else None)
    grad_bias = None
    if attn_bias is not None and grad_input_mask[3]:
        # s + bias: the bias's gradient is dS, summed over the dims the bias was broadcast along
        grad_bias = _sum_to(ds.view(*q.shape[:-1], k.shape[-2]), attn_bias.shape)
    return (*grads, grad_bias)


def _sum_to(g: Tensor, shape) -> Tensor:
    """g summed down to ``shape`` (leading and size-1 broadcast dims), by repmode's sum."""
    lead = g.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1]
    if dims:
        g = call_registered(aten.sum.dim_IntList, g, dims, True)
    return g.reshape(shape)


def _heads_inner(t: Tensor) -> Tensor:
    """A 4-D (B, H, N, E) result stored as (B, N, H, E), the layout of torch's fused CPU backward's
    gradients (an exact copy: the same values, the stride class of native torch's result)."""
    return t.transpose(1, 2).contiguous().transpose(1, 2) if t.dim() == 4 else t


# ---- nn.MultiheadAttention / nn.TransformerEncoderLayer fast paths ---------------------------

def _linear(x: Tensor, w: Tensor, b) -> Tensor:
    """x·Wᵀ (one fma chain per output) + b (one rounding): the bits of F.linear under repmode."""
    x2 = x.reshape(-1, x.shape[-1])
    y = (call_registered(aten.mm.default, x2, w.t()) if b is None
         else call_registered(aten.addmm.default, b, x2, w.t()))
    return y.view(*x.shape[:-1], w.shape[0])


def _float_mask(mask: Tensor, dtype) -> Tensor:
    """MultiheadAttention's convention: a bool mask is True where attention is NOT allowed."""
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(mask, NEG_INF)
    return mask


def _mha_mask(func, args, kwargs, mask, mask_type, B, H, L, S, dtype):
    """The merged mask of MultiheadAttention.merge_masks as a float tensor broadcastable to (B, H, L, S)."""
    if mask is None:
        return None
    m = _float_mask(mask, dtype)
    if m.dim() == 2 and mask_type == 1:          # key padding mask (B, S)
        return m.view(B, 1, 1, S)
    if m.dim() == 2:                              # attention mask (L, S)
        return m
    if m.dim() == 3:                              # (B·H, L, S) or (1, L, S)
        return m if m.shape[0] == 1 else m.view(B, H, L, S)
    if m.dim() == 4:
        return m
    raise unsupported(func, args, kwargs, f"a mask of shape {list(mask.shape)}")


def _mha(func, args, kwargs, query, key, value, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
         proj_bias, mask, need_weights, average_attn_weights, mask_type):
    """The slow path of MultiheadAttention (batch first, eval, no dropout) in registered ops."""
    _check_inputs(func, args, kwargs, query, key, value, qkv_weight, qkv_bias, proj_weight, proj_bias)
    if query.dim() != 3:
        raise unsupported(func, args, kwargs, "expects batched (B, T, E) inputs")
    B, L, D = query.shape
    S = key.shape[1]
    H = num_heads
    hd = D // H
    wq, wk, wv = qkv_weight.split(D, 0)
    bq, bk, bv = (None, None, None) if qkv_bias is None else qkv_bias.split(D, 0)
    q = _linear(query, wq, bq).view(B, L, H, hd).transpose(1, 2)
    k = _linear(key, wk, bk).view(B, S, H, hd).transpose(1, 2)
    v = _linear(value, wv, bv).view(B, S, H, hd).transpose(1, 2)
    m = _mha_mask(func, args, kwargs, mask, mask_type, B, H, L, S, query.dtype)
    weights = None
    if need_weights:
        # F.multi_head_attention_forward with need_weights: q·RN(sqrt(1/hd)) first, then
        # baddbmm(mask, q_scaled, kᵀ) (= bmm then + mask), softmax (not the "safe" one), bmm.
        qs = call_registered(aten.mul.Tensor, q, math.sqrt(1.0 / float(hd)))
        s = call_registered(aten.bmm.default, _batched(qs), _batched(k).transpose(1, 2)).view(B, H, L, S)
        if m is not None:
            s = call_registered(aten.add.Tensor, m.expand(B, H, L, S), s)
        p = call_registered(aten._softmax.default, s, -1, False)
        ctx = _pv(p, v)
        weights = call_registered(aten.mean.dim, p, [1], False) if average_attn_weights else p
    else:
        _, p = _probabilities(q, k, m, False, _default_scale(hd))
        ctx = _pv(p, v)
    out = _linear(ctx.transpose(1, 2).reshape(B, L, D), proj_weight, proj_bias)
    if weights is None:
        weights = None          # the native op returns an undefined tensor
    return out, weights


@register_composite(aten._native_multi_head_attention.default, FLOAT_ONLY)
def native_multi_head_attention(func, args, kwargs):
    names = ("query", "key", "value", "embed_dim", "num_head", "qkv_weight", "qkv_bias", "proj_weight",
             "proj_bias", "mask", "need_weights", "average_attn_weights", "mask_type")
    defaults = {"mask": None, "need_weights": True, "average_attn_weights": True, "mask_type": None}
    a = dict(defaults, **dict(zip(names, args)), **(kwargs or {}))
    return _mha(func, args, kwargs, *(a[n] for n in names))


@register_composite(aten._transformer_encoder_layer_fwd.default, FLOAT_ONLY)
def transformer_encoder_layer_fwd(func, args, kwargs):
    """TransformerEncoderLayer.forward's slow path in eval (dropout is the identity):
    norm_first: x = x + SA(LN1(x)); x = x + FF(LN2(x)); else x = LN1(x + SA(x)); x = LN2(x + FF(x)),
    FF(x) = linear2(act(linear1(x))), act = gelu (exact) or relu."""
    names = ("src", "embed_dim", "num_heads", "qkv_weight", "qkv_bias", "proj_weight", "proj_bias", "use_gelu",
             "norm_first", "eps", "norm_weight_1", "norm_bias_1", "norm_weight_2", "norm_bias_2", "ffn_weight_1",
             "ffn_bias_1", "ffn_weight_2", "ffn_bias_2", "mask", "mask_type")
    a = dict({"mask": None, "mask_type": None}, **dict(zip(names, args)), **(kwargs or {}))
    src = a["src"]
    if isinstance(src, Tensor) and src.is_nested:
        return _encoder_layer_on_nested(func, args, kwargs, a)
    _check_inputs(func, args, kwargs, src)
    D = a["embed_dim"]

    def norm(x, i):
        return call_registered(aten.native_layer_norm.default, x, [D], a[f"norm_weight_{i}"], a[f"norm_bias_{i}"],
                               a["eps"])[0]

    def sa(x):
        return _mha(func, args, kwargs, x, x, x, D, a["num_heads"], a["qkv_weight"], a["qkv_bias"],
                    a["proj_weight"], a["proj_bias"], a["mask"], False, False, a["mask_type"])[0]

    def ff(x):
        h = _linear(x, a["ffn_weight_1"], a["ffn_bias_1"])
        h = call_registered(aten.gelu.default, h) if a["use_gelu"] else call_registered(aten.relu.default, h)
        return _linear(h, a["ffn_weight_2"], a["ffn_bias_2"])

    x = src
    if x.dim() == 2:
        raise unsupported(func, args, kwargs, "unbatched input")
    if a["norm_first"]:
        x = call_registered(aten.add.Tensor, x, sa(norm(x, 1)))
        x = call_registered(aten.add.Tensor, x, ff(norm(x, 2)))
    else:
        x = norm(call_registered(aten.add.Tensor, x, sa(x)), 1)
        x = norm(call_registered(aten.add.Tensor, x, ff(x)), 2)
    return x



# ---- nn.TransformerEncoder's nested fast path (eval, src_key_padding_mask) ---------------------
# docs/semantics.md "TransformerEncoder with a key-padding mask": the encoder packs the valid
# tokens into a nested tensor (exact data movement), each layer runs as the padded slow path with
# the key-padding mask on the padded form of that nested tensor (padding +0), and the valid rows
# are packed again; the encoder finally pads with +0 as torch's fast path does.

def _encoder_layer_on_nested(func, args, kwargs, a):
    src = a["src"]
    if a["mask"] is not None:
        raise unsupported(func, args, kwargs, "a nested src with a mask (torch's layer refuses it too)")
    if src.dim() != 3:
        raise unsupported(func, args, kwargs, f"a nested src of {src.dim()} dims (3 are supported)")
    lengths = [int(t.shape[0]) for t in src.unbind()]           # exact data movement
    dense = torch.nested.to_padded_tensor(src, 0.0)             # (B, max length, E), +0 padding
    _check_inputs(func, args, kwargs, dense)
    padding = torch.arange(dense.shape[1])[None, :] >= torch.tensor(lengths)[:, None]   # True: no token
    dense_args = dict(a, src=dense, mask=padding, mask_type=1)
    out = transformer_encoder_layer_fwd(func, (), dense_args)
    return torch._nested_tensor_from_mask(out, padding.logical_not(), mask_check=False)


register_passthrough([aten._nested_tensor_from_mask_left_aligned.default],
                     reason="whether each row of a bool mask is a run of True followed by False: a predicate on "
                            "the mask's values", family="attention")
register_passthrough([aten._nested_tensor_from_mask.default],
                     reason="copies each row's leading tokens (mask True) into a nested tensor: exact data movement",
                     family="attention")
register_passthrough([aten.to_padded_tensor.default],
                     reason="copies a nested tensor's rows into a dense tensor filled with the padding value: exact "
                            "data movement", family="attention")
