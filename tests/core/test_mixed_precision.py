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
