"""torch.autocast on the CPU (bfloat16 and float16) inside repmode: convolution, attention and
linear layers with their backward run in strict mode, give bf16/fp16 results, and the same bits
at any thread count."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, num_threads

import repmode


def _step(dtype):
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 4, 3)
    attention = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    head = torch.nn.Linear(8, 3)
    g = torch.Generator().manual_seed(1)
    x, s = torch.randn(2, 3, 8, 8, generator=g), torch.randn(2, 5, 8, generator=g)
    with repmode.enabled():
        with torch.autocast("cpu", dtype=dtype):
            y = conv(x)
            a, _ = attention(s, s, s)
            logits = head(a)
        assert y.dtype == a.dtype == logits.dtype == dtype
        loss = y.float().square().mean() + torch.nn.functional.cross_entropy(logits.float().flatten(0, 1),
                                                                               torch.arange(10) % 3)
        loss.backward()
    grads = [p.grad for m in (conv, attention, head) for p in m.parameters()]
    return [y, a, logits, loss] + grads


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_autocast_layers_are_strict_and_thread_invariant(dtype):
    with num_threads(1):
        one = _step(dtype)
    with num_threads(3):
        three = _step(dtype)
    for i, (p, q) in enumerate(zip(one, three)):
        assert_bitwise_equal(p, q, f"output {i}")


def _encoder_steps(dtype, threads):
    """Two AdamW steps of a TransformerEncoderLayer (dropout on) under autocast; fp16 with GradScaler."""
    with num_threads(threads):
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, batch_first=True)
        opt = torch.optim.AdamW(layer.parameters(), lr=1e-3)
        scaler = torch.amp.GradScaler("cpu", enabled=dtype == torch.float16)
        x = torch.randn(3, 6, 16, generator=torch.Generator().manual_seed(2))
        with repmode.enabled():
            repmode.manual_seed(0)
            for _ in range(2):
                opt.zero_grad()
                with torch.autocast("cpu", dtype=dtype):
                    out = layer(x)
                    assert out.dtype in (dtype, torch.float32)
                    loss = out.float().square().mean()
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
        return [loss.detach()] + [p.detach().clone() for p in layer.parameters()]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_transformer_encoder_layer_trains_under_autocast(dtype):
    one, two = _encoder_steps(dtype, 1), _encoder_steps(dtype, 2)
    assert_bitwise_equal(one, two, f"{dtype} steps at 1 and 2 threads")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("kw", [{"is_causal": True}, {"attn_mask": "float"}])
def test_fused_cpu_attention_in_low_precision_is_the_float32_order_rounded_once(dtype, kw):
    """_scaled_dot_product_flash_attention_for_cpu (and backward) on bf16/fp16: the float32 op on the
    exactly widened inputs, each output rounded once (logsumexp stays float32, as torch's)."""
    aten = torch.ops.aten
    g = torch.Generator().manual_seed(4)
    q, k, v, go = (torch.randn(2, 3, 7, 8, generator=g).to(dtype) for _ in range(4))
    if kw.get("attn_mask") == "float":
        kw = {"attn_mask": torch.randn(7, 7, generator=g).to(dtype)}
    wide = {n: (t.float() if isinstance(t, torch.Tensor) else t) for n, t in kw.items()}
    with repmode.enabled():
        out, lse = aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, **kw)
        out32, lse32 = aten._scaled_dot_product_flash_attention_for_cpu(q.float(), k.float(), v.float(), **wide)
        grads = aten._scaled_dot_product_flash_attention_for_cpu_backward(
            go, q, k, v, out, lse, 0.0, kw.get("is_causal", False), attn_mask=kw.get("attn_mask"))
        grads32 = aten._scaled_dot_product_flash_attention_for_cpu_backward(
            go.float(), q.float(), k.float(), v.float(), out.float(), lse, 0.0, kw.get("is_causal", False),
            attn_mask=wide.get("attn_mask"))
    assert out.dtype == dtype and lse.dtype == torch.float32
    assert_bitwise_equal(out, out32.to(dtype), "output")
    assert_bitwise_equal(lse, lse32, "logsumexp")
    assert_bitwise_equal(list(grads), [t.to(dtype) for t in grads32], "gradients")
    with num_threads(1), repmode.enabled():
        out1, _ = aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, **kw)
    assert_bitwise_equal(out1, out, "1 thread")
