"""More losses: nll_loss2d (cross_entropy / nll_loss on (N, C, d1, ...) inputs) equals the 2-D
nll_loss over positions in row-major order; cross_entropy options, l1_loss and kl_div run
strict, forward and backward, invariant and close to float64."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal, assert_invariant

import repmode

aten = torch.ops.aten


def _targets(rng, shape, C, ignore=-100):
    t = torch.randint(0, C, shape, generator=rng)
    t.view(-1)[::7] = ignore
    return t


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss2d_equals_rows_in_row_major_order(reduction, weighted, rng):
    N, C, H, W = 3, 5, 7, 6
    x = torch.randn(N, C, H, W, generator=rng)
    t = _targets(rng, (N, H, W), C)
    w = torch.rand(C, generator=rng) + 0.1 if weighted else None
    rows = x.permute(0, 2, 3, 1).reshape(-1, C)
    with repmode.enabled():
        out, tw = aten.nll_loss2d_forward(x, t, w, reduction, -100)
        want, want_tw = aten.nll_loss_forward(rows, t.reshape(-1), w, reduction, -100)
        g = torch.randn(N, H, W, generator=rng) if reduction == 0 else torch.tensor(0.75)
        gi = aten.nll_loss2d_backward(g, x, t, w, reduction, -100, tw)
        want_gi = aten.nll_loss_backward(g.reshape(-1) if reduction == 0 else g, rows, t.reshape(-1), w,
                                         reduction, -100, want_tw)
    assert_bitwise_equal(out, want.view(out.shape), "forward")
    assert_bitwise_equal(tw, want_tw, "total_weight")
    assert_bitwise_equal(gi, want_gi.view(N, H, W, C).permute(0, 3, 1, 2), "backward")
    assert gi.is_contiguous()


CASES = {
    "ce_4d": lambda x, t, w, p: F.cross_entropy(x, t),
    "ce_4d_weight_sum": lambda x, t, w, p: F.cross_entropy(x, t, weight=w, reduction="sum"),
    "ce_4d_none": lambda x, t, w, p: (F.cross_entropy(x, t, reduction="none") * 0.5).sum(),
    "ce_4d_smooth": lambda x, t, w, p: F.cross_entropy(x, t, label_smoothing=0.1),
    "ce_4d_smooth_weight": lambda x, t, w, p: F.cross_entropy(x, t, weight=w, label_smoothing=0.2),
    "ce_4d_ignore3": lambda x, t, w, p: F.cross_entropy(x, torch.where(t < 0, 0, t), ignore_index=3),
    "ce_4d_probs": lambda x, t, w, p: F.cross_entropy(x, p),
    "ce_4d_probs_weight_smooth": lambda x, t, w, p: F.cross_entropy(x, p, weight=w, label_smoothing=0.1),
    "nll_4d": lambda x, t, w, p: F.nll_loss(F.log_softmax(x, 1), t, weight=w),
    "nll_3d": lambda x, t, w, p: F.nll_loss(F.log_softmax(x[..., 0], 1), t[..., 0]),
    "ce_2d_weight": lambda x, t, w, p: F.cross_entropy(x[:, :, 0, 0], torch.where(t[:, 0, 0] < 0, 0, t[:, 0, 0]),
                                                       weight=w),
    "ce_2d_smooth": lambda x, t, w, p: F.cross_entropy(x[:, :, 0, 0], t[:, 0, 0], label_smoothing=0.15),
    "ce_2d_probs": lambda x, t, w, p: F.cross_entropy(x[:, :, 0, 0], p[:, :, 0, 0]),
    "l1": lambda x, t, w, p: F.l1_loss(x, p),
    "l1_sum": lambda x, t, w, p: F.l1_loss(x, p, reduction="sum"),
    "l1_none": lambda x, t, w, p: (F.l1_loss(x, p, reduction="none") * p).sum(),
    "kl_batchmean": lambda x, t, w, p: F.kl_div(F.log_softmax(x, 1), p, reduction="batchmean"),
    "kl_log_target": lambda x, t, w, p: F.kl_div(F.log_softmax(x, 1), p.log(), reduction="sum",
                                                 log_target=True),
    "kl_none": lambda x, t, w, p: F.kl_div(F.log_softmax(x, 1), p, reduction="none").sum(),
}


def _inputs(rng, dtype=torch.float32):
    N, C, H, W = 4, 6, 3, 5
    x = torch.randn(N, C, H, W, generator=rng, dtype=dtype) * 2
    t = _targets(rng, (N, H, W), C)
    w = (torch.rand(C, generator=rng) + 0.2).to(dtype)
    p = torch.softmax(torch.randn(N, C, H, W, generator=rng, dtype=dtype), 1)
    return x, t, w, p


def _forward_backward(x, t, w, p, names=CASES):
    out = {}
    for name in names:
        leaf = x.detach().clone().requires_grad_()
        loss = CASES[name](leaf, t, w, p)
        loss.backward()
        out[name] = loss.detach()
        out[name + "_grad"] = leaf.grad
    return out


def test_invariant_to_threads_and_isa(rng):
    x, t, w, p = _inputs(rng)
    assert_invariant(_forward_backward, x, t, w, p)


def test_channels_last_input_same_bits(rng):
    x, t, w, p = _inputs(rng)
    names = [n for n in CASES if "4d" in n]
    with repmode.enabled():
        want = _forward_backward(x, t, w, p, names)
        got = _forward_backward(x.contiguous(memory_format=torch.channels_last), t, w, p, names)
    for k in want:
        assert_bitwise_equal(want[k], got[k], k)


def test_close_to_float64(rng):
    x, t, w, p = _inputs(rng, torch.float64)
    with repmode.enabled():
        got = _forward_backward(x.float(), t, w.float(), p.float())
    want = _forward_backward(x, t, w, p)
    for name, value in got.items():
        # sums of O(100) float32 terms of size O(1): a few ulps of the result
        assert torch.allclose(value.double(), want[name], rtol=2e-6, atol=2e-7), name


@pytest.mark.parametrize("name", list(CASES))
def test_inference_mode_strict(name, rng):
    x, t, w, p = _inputs(rng)
    with repmode.enabled():
        want = CASES[name](x, t, w, p)
        with torch.inference_mode():
            got = CASES[name](x, t, w, p)
    assert_bitwise_equal(want, got, name)


def test_errors(rng):
    x, t, w, p = _inputs(rng)
    bad = t.clone()
    bad[0, 0, 0] = 99
    with repmode.enabled():
        with pytest.raises((RuntimeError, IndexError)):
            F.cross_entropy(x, bad)
        with pytest.raises(RuntimeError, match="size mismatch"):
            aten.nll_loss2d_forward(x, t[:, :2], None, 1, -100)
        # empty inputs: torch's result ('mean' of no rows is 0/0 = NaN, total weight 0)
        empty = aten.nll_loss2d_forward(x[:0], t[:0], None, 1, -100)
    assert torch.isnan(empty[0]) and float(empty[1]) == 0.0
