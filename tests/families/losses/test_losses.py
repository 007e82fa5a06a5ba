"""Regression losses and xlogy/kl_div, forward and backward: invariance to threads, ISA and
layout, and agreement with float64 native torch."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from support import assert_invariant

import repmode

LOSSES = {
    "mse": lambda x, t: F.mse_loss(x, t),
    "mse_sum": lambda x, t: F.mse_loss(x, t, reduction="sum"),
    "huber": lambda x, t: F.huber_loss(x, t, delta=0.7),
    "huber_none": lambda x, t: F.huber_loss(x, t, reduction="none", delta=1.3).sum(),
    "smooth_l1": lambda x, t: F.smooth_l1_loss(x, t, beta=0.5),
    "smooth_l1_beta0": lambda x, t: F.smooth_l1_loss(x, t, beta=0.0),
    "kl_div": lambda x, t: F.kl_div(F.log_softmax(x, 1), F.softmax(t, 1), reduction="batchmean"),
    "bce": lambda x, t: F.binary_cross_entropy(torch.sigmoid(x), torch.sigmoid(t)),
    "bce_weighted": lambda x, t: F.binary_cross_entropy(torch.sigmoid(x), (t > 0).to(x.dtype), weight=t.abs(),
                                                        reduction="sum"),
    "bce_logits": lambda x, t: F.binary_cross_entropy_with_logits(x, torch.sigmoid(t)),
    "bce_logits_pos": lambda x, t: F.binary_cross_entropy_with_logits(
        x, (t > 0).to(x.dtype), pos_weight=t[0].abs() + 0.5, reduction="sum"),
}


def _forward_backward(x, t):
    out = {}
    for name, fn in LOSSES.items():
        leaf = x.detach().requires_grad_()
        loss = fn(leaf, t)
        loss.backward()
        out[name] = loss.detach()
        out[name + "_grad"] = leaf.grad
    return out


def test_invariant_to_threads_isa_and_layout(rng):
    x = torch.randn(300, 40, generator=rng)
    t = torch.randn(300, 40, generator=rng)
    assert_invariant(_forward_backward, x, t)


def test_close_to_float64(rng):
    x = torch.randn(64, 9, generator=rng) * 2
    t = torch.randn(64, 9, generator=rng)
    with repmode.enabled():
        got = _forward_backward(x, t)
    want = _forward_backward(x.double(), t.double())
    for name, value in got.items():
        assert torch.allclose(value.double(), want[name], rtol=1e-5, atol=1e-6), name


def test_xlogy_edge_values():
    x = torch.tensor([0.0, 0.0, 2.0, 0.0, 1.5, -1.0])
    y = torch.tensor([0.0, float("nan"), 3.0, 5.0, 0.0, 2.0])
    with repmode.enabled():
        got = torch.xlogy(x, y)
    want = torch.xlogy(x.double(), y.double()).float()
    assert torch.equal(torch.isnan(got), torch.isnan(want))
    keep = ~torch.isnan(want)
    assert torch.allclose(got[keep], want[keep])
    assert got[0] == 0 and got[3] == 0 and torch.isnan(got[1]) and got[4] == float("-inf")
