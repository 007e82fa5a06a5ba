"""log_softmax and nll_loss, forward and backward: invariance, accuracy, gradients."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal, assert_invariant

import repmode


def _losses(x, target, weight):
    x = x.detach().requires_grad_()
    outs = {}
    for reduction in ("mean", "sum", "none"):
        loss = F.cross_entropy(x, target, reduction=reduction)
        outs[f"ce_{reduction}"] = loss.detach()
        (grad,) = torch.autograd.grad(loss.sum(), x)
        outs[f"grad_{reduction}"] = grad
    loss = F.cross_entropy(x, target, weight=weight, ignore_index=3)
    outs["weighted"] = loss.detach()
    outs["weighted_grad"] = torch.autograd.grad(loss, x)[0]
    outs["log_softmax_dim0"] = F.log_softmax(x.detach(), dim=0)
    return outs


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_invariant_to_threads_isa_and_layout(rng, dtype):
    x = torch.randn(600, 70, generator=rng, dtype=dtype) * 3
    target = torch.randint(0, 70, (600,), generator=rng)
    weight = torch.rand(70, generator=rng, dtype=dtype)
    assert_invariant(_losses, x, target, weight)


def test_close_to_float64(rng):
    x = torch.randn(300, 50, generator=rng) * 4
    target = torch.randint(0, 50, (300,), generator=rng)
    weight = torch.rand(50, generator=rng)
    with repmode.enabled():
        got = _losses(x, target, weight)
    want = _losses(x.double(), target, weight.double())
    for k in got:
        assert torch.allclose(got[k].double(), want[k], rtol=2e-6, atol=2e-6), k


def test_log_softmax_rows_are_batch_invariant(rng):
    x = torch.randn(64, 1000, generator=rng)
    with repmode.enabled():
        full = F.log_softmax(x, dim=1)
        for i in (0, 31, 63):
            assert_bitwise_equal(full[i:i + 1], F.log_softmax(x[i:i + 1], dim=1))


def test_special_values():
    x = torch.tensor([[0.0, float("-inf"), 1.0], [float("nan"), 1.0, 2.0], [float("inf"), 1.0, 0.0]])
    with repmode.enabled():
        y = F.log_softmax(x, dim=1)
    assert y[0, 1].item() == float("-inf")
    assert torch.isnan(y[1]).all()
    native = F.log_softmax(x, dim=1)
    assert torch.equal(torch.isnan(y), torch.isnan(native))


def test_nll_loss_errors_and_edges():
    x = torch.randn(4, 3)
    with repmode.enabled():
        with pytest.raises(IndexError, match="out of bounds"):
            F.nll_loss(x, torch.tensor([0, 1, 5, 2]))
        all_ignored = F.nll_loss(x, torch.tensor([-100] * 4))
        single = F.nll_loss(x[0], torch.tensor(1))
    assert torch.isnan(all_ignored)
    assert single.item() == -x[0, 1].item()
