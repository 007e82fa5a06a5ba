"""torch's memory-efficient attention op, the one scaled_dot_product_attention reaches on a GPU
for float32, gives the bits of the CPU paths (the fused CPU op without dropout, the math path with
dropout) under repmode: forward and every gradient, with causal and float/bool masks, dropout
drawn from the same stream. Inside repmode.enabled() the op is intercepted before any backend
kernel, so it is exercised here on CPU tensors; tests/cuda/test_cuda_mode.py runs it on a GPU."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal

import repmode

aten = torch.ops.aten


def _inputs(dtype, L=5, S=6, E=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(2, 3, n, E, generator=g, dtype=dtype) for n in (L, S, S)]


def _run(fused: bool, base, dropout_p, is_causal, mask, scale=None):
    q, k, v = [t.clone().requires_grad_() for t in base]
    torch.manual_seed(7)
    with repmode.enabled():
        if fused:
            bias = mask
            if mask is not None and mask.dtype == torch.bool:   # torch converts bool masks before the op
                bias = torch.zeros(mask.shape, dtype=q.dtype).masked_fill(~mask, float("-inf"))
            y = aten._scaled_dot_product_efficient_attention(q, k, v, bias, True, dropout_p, is_causal, scale=scale)[0]
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal,
                                               scale=scale)
        (y * y).sum().backward()
    return {"out": y.detach(), "dq": q.grad, "dk": k.grad, "dv": v.grad}


MASKS = {"none": None, "float": torch.randn(5, 6, generator=torch.Generator().manual_seed(3)),
         "bool": torch.rand(5, 6, generator=torch.Generator().manual_seed(4)) > 0.3}


@pytest.mark.parametrize("dropout_p", [0.0, 0.3])
@pytest.mark.parametrize("is_causal,mask", [(False, "none"), (True, "none"), (False, "float"), (False, "bool")])
@pytest.mark.parametrize("scale", [None, -0.7])
def test_efficient_attention_gives_the_cpu_paths_bits(dropout_p, is_causal, mask, scale):
    base = _inputs(torch.float32)
    want = _run(False, base, dropout_p, is_causal, MASKS[mask], scale)
    got = _run(True, base, dropout_p, is_causal, MASKS[mask], scale)
    for name in want:
        assert_bitwise_equal(got[name], want[name], name)


def test_dropout_noise_differs_between_draws_and_is_applied():
    base = _inputs(torch.float32)
    first, second = _run(True, base, 0.5, False, None), _run(True, base, 0.5, False, None)
    assert_bitwise_equal(first["out"], second["out"], "same seed, same draws")
    q, k, v = base
    with repmode.enabled():
        torch.manual_seed(7)
        a = aten._scaled_dot_product_efficient_attention(q, k, v, None, False, 0.5)[0]
        b = aten._scaled_dot_product_efficient_attention(q, k, v, None, False, 0.5)[0]
        plain = aten._scaled_dot_product_efficient_attention(q, k, v, None, False, 0.0)[0]
    assert not torch.equal(a, b) and not torch.equal(a, plain)


def test_a_backward_without_repmodes_forward_state_is_refused():
    q, k, v = _inputs(torch.float32)
    out = torch.zeros(2, 3, 5, 4)
    with repmode.enabled(), pytest.raises(repmode.UnsupportedOpError, match="dropout state"):
        aten._scaled_dot_product_efficient_attention_backward(
            out, q, k, v, None, out, torch.empty(0), torch.empty(0), torch.empty(0, dtype=torch.int64), 0.2,
            [True, True, True, False])
