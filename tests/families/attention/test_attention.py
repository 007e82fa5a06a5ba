"""Attention: scaled_dot_product_attention (the CPU flash op, its backward, the math path),
nn.MultiheadAttention and the nn.Transformer modules, including their eval fast paths."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from support import assert_bitwise_equal, available_isas, cpu_isa, num_threads
from torch.nn.attention import SDPBackend, sdpa_kernel

import repmode
from repmode import _ext

aten = torch.ops.aten
C = _ext.C
CODE = {torch.float32: 0, torch.float64: 1}


def _gemm_reference(a, b):
    """(B, M, K) x (B, K, N) by the plain fma-chain reference of csrc/cpu/matmul.h."""
    a, b = a.contiguous(), b.contiguous()
    B, M, K = a.shape
    N = b.shape[2]
    out = torch.empty(B, M, N, dtype=a.dtype)
    C.gemm_reference(CODE[a.dtype], B, M, N, K, a.data_ptr(), *a.stride(), b.data_ptr(), *b.stride(),
                     out.data_ptr(), *out.stride())
    return out


def _softmax_rows(s, safe):
    with repmode.enabled():
        return aten._safe_softmax(s, -1) if safe else torch.softmax(s, -1)


def _reference(q, k, v, mask=None, causal=False, scale=None):
    """docs/semantics.md "Attention", step by step: single IEEE ops, the gemm reference, softmax rows."""
    B, H, L, E = q.shape
    S = k.shape[2]
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    c = torch.tensor(math.sqrt(abs(scale)), dtype=q.dtype)
    qs, ks = q * (c if scale > 0 else -c), k * c
    s = _gemm_reference(qs.reshape(B * H, L, E), ks.reshape(B * H, S, E).transpose(1, 2)).view(B, H, L, S)
    zero, ninf = torch.zeros((), dtype=q.dtype), torch.full((), -math.inf, dtype=q.dtype)
    if causal:
        s = s + torch.where(torch.ones(L, S, dtype=torch.bool).tril(), zero, ninf)
    if mask is not None:
        s = s + (torch.where(mask, zero, ninf) if mask.dtype == torch.bool else mask)
    p = _softmax_rows(s, safe=True)
    return _gemm_reference(p.reshape(B * H, L, S), v.reshape(B * H, S, -1)).view(B, H, L, -1), p


def _qkv(rng, B=2, H=3, L=7, S=9, E=5, Ev=6, dtype=torch.float32):
    q = torch.randn(B, H, L, E, generator=rng, dtype=dtype)
    k = torch.randn(B, H, S, E, generator=rng, dtype=dtype)
    v = torch.randn(B, H, S, Ev, generator=rng, dtype=dtype)
    return q, k, v


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("variant", ["plain", "causal", "bool_mask", "float_mask", "scale", "negative_scale",
                                     "masked_row"])
def test_flash_op_equals_documented_reference(rng, dtype, variant):
    q, k, v = _qkv(rng, dtype=dtype)
    mask, causal, scale = None, False, None
    if variant == "causal":
        causal = True
    elif variant in ("bool_mask", "masked_row"):
        mask = torch.rand(7, 9, generator=rng) > 0.3
        if variant == "masked_row":
            mask[2] = False       # a fully masked row: zeros (the _safe_softmax rule)
    elif variant == "float_mask":
        mask = torch.randn(2, 1, 7, 9, generator=rng, dtype=dtype)
    elif variant == "scale":
        scale = 0.37
    elif variant == "negative_scale":
        scale = -0.2
    want, _ = _reference(q, k, v, mask, causal, scale)
    with repmode.enabled():
        got, lse = aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, attn_mask=mask,
                                                                     scale=scale)
    assert_bitwise_equal(want, got)
    if variant == "masked_row":
        assert (got[:, :, 2] == 0).all()
    assert lse.shape == (2, 3, 7)


def _sdpa_grads(q, k, v, g, **kw):
    q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
    out = F.scaled_dot_product_attention(q, k, v, **kw)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), g)
    return {"out": out.detach(), "dq": dq, "dk": dk, "dv": dv}


@pytest.mark.parametrize("scale", [None, -0.3])
def test_backward_equals_documented_formula(rng, scale):
    q, k, v = _qkv(rng, Ev=5)
    g = torch.randn(2, 3, 7, 5, generator=rng)
    mask = torch.rand(7, 9, generator=rng) > 0.3
    with repmode.enabled():
        dq, dk, dv = aten._scaled_dot_product_flash_attention_for_cpu_backward(
            g, q, k, v, torch.empty(0), torch.empty(0), 0.0, False, attn_mask=mask, scale=scale)
    _, p = _reference(q, k, v, mask, scale=scale)
    sc = 1 / math.sqrt(5) if scale is None else scale
    c = torch.tensor(math.sqrt(abs(sc)))
    cq = c if sc > 0 else -c
    P, G = p.reshape(6, 7, 9), g.reshape(6, 7, 5)
    want_dv = _gemm_reference(P.transpose(1, 2), G)
    dp = _gemm_reference(G, v.reshape(6, 9, 5).transpose(1, 2))
    with repmode.enabled():
        ds = aten._softmax_backward_data(dp, P, -1, torch.float32)
    assert_bitwise_equal(want_dv.view(v.shape), dv)
    assert_bitwise_equal((_gemm_reference(ds, k.reshape(6, 9, 5) * c) * cq).view(q.shape), dq)
    assert_bitwise_equal((_gemm_reference(ds.transpose(1, 2), q.reshape(6, 7, 5) * cq) * c).view(k.shape), dk)


@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"mask": "bool"}, {"mask": "float"}, {"scale": 0.3}])
def test_flash_op_equals_torch_math_path(rng, kw):
    """torch picks the fused CPU op or its math decomposition by shapes and flags; repmode's fused op
    gives the math path's bits, so the choice never shows in the results (forward and gradients)."""
    q, k, v = _qkv(rng, L=9, E=8, Ev=8)
    g = torch.randn(2, 3, 9, 8, generator=rng)
    kw = dict(kw)
    if kw.get("mask") == "bool":
        kw["attn_mask"] = torch.rand(9, 9, generator=rng) > 0.3
    elif kw.get("mask") == "float":
        kw["attn_mask"] = torch.randn(9, 9, generator=rng)
    kw.pop("mask", None)
    with repmode.enabled():
        fused = _sdpa_grads(q, k, v, g, **kw)
    with sdpa_kernel(SDPBackend.MATH), repmode.enabled():
        math_path = _sdpa_grads(q, k, v, g, **kw)
    for key in fused:
        assert_bitwise_equal(fused[key], math_path[key], key)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_invariant_to_threads_isa_layout_and_batch(rng, dtype):
    q, k, v = _qkv(rng, B=3, H=2, L=33, S=40, E=16, Ev=8, dtype=dtype)
    g = torch.randn(3, 2, 33, 8, generator=rng, dtype=dtype)
    with num_threads(1), repmode.enabled():
        want = _sdpa_grads(q, k, v, g, is_causal=True)

    def check(got, what):
        for key in want:
            assert_bitwise_equal(want[key], got[key], f"{key} {what}")

    for threads in (2, 3):
        with num_threads(threads), repmode.enabled():
            check(_sdpa_grads(q, k, v, g, is_causal=True), f"threads={threads}")
    for isa in available_isas():
        with cpu_isa(isa), repmode.enabled():
            check(_sdpa_grads(q, k, v, g, is_causal=True), f"isa={isa}")
    # (B, L, H, E) storage seen as (B, H, L, E): the layout MultiheadAttention produces
    relaid = [t.transpose(1, 2).contiguous().transpose(1, 2) for t in (q, k, v)]
    with repmode.enabled():
        check(_sdpa_grads(*relaid, g, is_causal=True), "layout")
        # batch entry b alone, and a single query row alone (non-causal), give the batch's bits
        one = _sdpa_grads(q[1:2], k[1:2], v[1:2], g[1:2], is_causal=True)
        full = F.scaled_dot_product_attention(q, k, v)
        row = F.scaled_dot_product_attention(q[:, :, 5:6], k, v)
    for key in want:
        assert_bitwise_equal(want[key][1:2], one[key], f"{key} batch entry")
    assert_bitwise_equal(full[:, :, 5:6], row, "query row")


def test_close_to_float64(rng):
    q, k, v = _qkv(rng, B=2, H=4, L=32, S=32, E=16, Ev=16)
    q, k = q * 2, k * 2
    g = torch.randn(2, 4, 32, 16, generator=rng)
    mask = torch.randn(32, 32, generator=rng)
    with repmode.enabled():
        got = _sdpa_grads(q, k, v, g, attn_mask=mask)
    want = _sdpa_grads(q.double(), k.double(), v.double(), g.double(), attn_mask=mask.double())
    # fma chains of 16-32 terms on O(1) values and a softmax of 32 terms: errors of a few float32
    # ulps of the largest terms; the gradients go through one more chain and the softmax backward.
    for key, tol in (("out", 2e-6), ("dq", 2e-5), ("dk", 2e-5), ("dv", 1e-5)):
        scale = want[key].abs().max().item()
        err = (got[key].double() - want[key]).abs().max().item()
        assert err <= tol * max(scale, 1.0), (key, err, scale)


def test_gradients_against_float64_autograd(rng):
    q, k, v = _qkv(rng, dtype=torch.float64)
    g = torch.randn(2, 3, 7, 6, generator=rng, dtype=torch.float64)
    with repmode.enabled():
        got = _sdpa_grads(q, k, v, g, is_causal=True)
    want = _sdpa_grads(q, k, v, g, is_causal=True)
    for key in got:
        torch.testing.assert_close(got[key], want[key], rtol=1e-12, atol=1e-12)


def test_dropout_math_path_is_reproducible(rng):
    q, k, v = _qkv(rng)
    g = torch.randn(2, 3, 7, 6, generator=rng)
    outs = []
    for threads in (1, 2):
        with num_threads(threads), repmode.enabled(seed=7):
            outs.append(_sdpa_grads(q, k, v, g, dropout_p=0.3))
    for key in outs[0]:
        assert_bitwise_equal(outs[0][key], outs[1][key], key)


# ---- modules ----------------------------------------------------------------------------------

MODES = ["train", "no_grad", "inference_mode"]


def _run(module, mode, fn):
    module.train(mode == "train")
    ctx = {"train": torch.enable_grad, "no_grad": torch.no_grad, "inference_mode": torch.inference_mode}[mode]
    with repmode.enabled(), ctx():
        out = fn()
        if mode == "train":
            out.square().mean().backward()
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_strict(rng, mode, need_weights, batch_first):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, dropout=0.1, batch_first=batch_first)
    x = torch.randn(3, 5, 16, generator=rng)
    kv = torch.randn(3, 6, 16, generator=rng)
    kpm = torch.zeros(3, 5, dtype=torch.bool)
    kpm[1, 3:] = True
    attn_mask = nn.Transformer.generate_square_subsequent_mask(5)
    if not batch_first:
        x, kv = x.transpose(0, 1), kv.transpose(0, 1)
    _run(mha, mode, lambda: mha(x, x, x, need_weights=need_weights, key_padding_mask=kpm)[0])
    _run(mha, mode, lambda: mha(x, x, x, need_weights=need_weights, attn_mask=attn_mask)[0])
    _run(mha, mode, lambda: mha(x, kv, kv, need_weights=need_weights)[0])


def _encoder(norm_first, activation):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, activation=activation, batch_first=True,
                                       norm_first=norm_first)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_fast_path_equals_slow_path(rng, norm_first, activation):
    """_transformer_encoder_layer_fwd / _native_multi_head_attention give the slow path's bits."""
    enc = _encoder(norm_first, activation).eval()
    x = torch.randn(3, 7, 16, generator=rng)
    kpm = torch.zeros(3, 7, dtype=torch.bool)
    kpm[1, 5:] = True
    mask = nn.Transformer.generate_square_subsequent_mask(7)
    for kw in ({}, {"mask": mask}, {"src_key_padding_mask": kpm}, {"mask": mask, "src_key_padding_mask": kpm}):
        outs = []
        for fast in (True, False):
            torch.backends.mha.set_fastpath_enabled(fast)
            try:
                for ctx in (torch.no_grad, torch.inference_mode):
                    with repmode.enabled(), ctx():
                        outs.append(enc(x, **kw))
            finally:
                torch.backends.mha.set_fastpath_enabled(True)
        for o in outs[1:]:
            assert_bitwise_equal(outs[0], o, str(list(kw)))
        with torch.no_grad():
            want = enc.double()(x.double(), **{k: (v.double() if v.is_floating_point() else v) for k, v in kw.items()})
            enc.float()
        assert (outs[0].double() - want).abs().max() < 2e-5


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_fast_path_equals_slow_path(rng, need_weights):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    x = torch.randn(3, 5, 16, generator=rng)
    kpm = torch.zeros(3, 5, dtype=torch.bool)
    kpm[2, 1:] = True
    for kw in ({}, {"key_padding_mask": kpm}):
        outs = []
        for fast in (True, False):
            torch.backends.mha.set_fastpath_enabled(fast)
            try:
                with repmode.enabled(), torch.inference_mode():
                    outs.append(mha(x, x, x, need_weights=need_weights, **kw))
            finally:
                torch.backends.mha.set_fastpath_enabled(True)
        assert_bitwise_equal(outs[0][0], outs[1][0])
        if need_weights:
            assert_bitwise_equal(outs[0][1], outs[1][1])


@pytest.mark.parametrize("mode", MODES)
def test_transformer_and_decoder_strict(rng, mode):
    torch.manual_seed(0)
    t = nn.Transformer(16, 4, 1, 1, 32, dropout=0.1, batch_first=True)
    t.encoder.use_nested_tensor = False
    dec = nn.TransformerDecoderLayer(16, 4, 32, batch_first=True, norm_first=True, activation="gelu")
    src = torch.randn(2, 7, 16, generator=rng)
    tgt = torch.randn(2, 5, 16, generator=rng)
    tm = nn.Transformer.generate_square_subsequent_mask(5)
    kpm = torch.zeros(2, 7, dtype=torch.bool)
    kpm[1, 5:] = True
    _run(t, mode, lambda: t(src, tgt, tgt_mask=tm, src_key_padding_mask=kpm, memory_key_padding_mask=kpm,
                            tgt_is_causal=True))
    _run(dec, mode, lambda: dec(tgt, src, tgt_mask=tm))


def test_errors(rng):
    q, k, v = _qkv(rng)
    with repmode.enabled(), pytest.raises(repmode.UnsupportedOpError, match="dropout"):
        aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.5)
    with repmode.enabled(), pytest.raises(repmode.UnsupportedOpError, match="dtype"):
        aten._scaled_dot_product_flash_attention_for_cpu(q.to(torch.int32), k.to(torch.int32), v.to(torch.int32))
    # nn.TransformerEncoder's nested fast path (eval, src_key_padding_mask) is supported:
    # tests/families/attention/test_encoder_nested_fast_path.py


@pytest.mark.parametrize("kw", [{}, {"is_causal": True}])
def test_grouped_query_attention_is_the_repeated_heads_and_their_gradients_summed_in_head_order(rng, kw):
    # enable_gqa (Llama's grouped key/value heads): query head h reads key/value head h // 3; the
    # key/value gradients are the repeated heads' gradients summed over each group (repmode's sum)
    q = torch.randn(2, 6, 5, 8, generator=rng)
    k, v = torch.randn(2, 2, 7, 8, generator=rng), torch.randn(2, 2, 7, 8, generator=rng)
    g = torch.randn(2, 6, 5, 8, generator=rng)
    with repmode.enabled():
        got = _sdpa_grads(q, k, v, g, enable_gqa=True, **kw)
        rep = _sdpa_grads(q, k.repeat_interleave(3, 1), v.repeat_interleave(3, 1), g, **kw)
        want_dk = rep["dk"].view(2, 2, 3, 7, 8).sum(2)
        want_dv = rep["dv"].view(2, 2, 3, 7, 8).sum(2)
    for name in ("out", "dq"):
        assert_bitwise_equal(got[name], rep[name], name)
    assert_bitwise_equal(got["dk"], want_dk, "dk")
    assert_bitwise_equal(got["dv"], want_dv, "dv")
    native = _sdpa_grads(q, k, v, g, enable_gqa=True, **kw)
    wide = _sdpa_grads(q.double(), k.double(), v.double(), g.double(), enable_gqa=True, **kw)
    for name in native:  # the gradients' strides and values as native's (rule 6: within 2x its error)
        assert got[name].stride() == native[name].stride(), name
        err = (got[name].double() - wide[name]).abs().max()
        assert err <= 2 * max((native[name].double() - wide[name]).abs().max(), 1e-7), name
    with num_threads(1), repmode.enabled():
        one = _sdpa_grads(q, k, v, g, enable_gqa=True, **kw)
    for name in got:
        assert_bitwise_equal(one[name], got[name], f"{name} at 1 thread")
