"""CTC loss (_ctc_loss + _ctc_loss_backward): a plain float64 re-statement of the documented
recursions, accuracy and gradients against float64 native autograd (never less accurate than
native), thread and layout invariance, batch composition, zero_infinity, every reduction, padded
and concatenated targets, and a Conv1d + BiLSTM CTC model trained in strict mode."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from support import THREAD_COUNTS, assert_bitwise_equal, num_threads
from torch import nn

import repmode

T, B, NC = 24, 6, 7
IN_LENGTHS = [24, 4, 20, 3, 17, 24]
TG_LENGTHS = [5, 0, 9, 3, 6, 11]   # sequence 3: 3 labels in 3 steps (feasible only without repeats)


def _case(seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    lp = torch.randn(T, B, NC, generator=g, dtype=torch.float64).log_softmax(2).to(dtype)
    tg = torch.randint(1, NC, (B, 11), generator=g)
    tg[0, 1] = tg[0, 2]                 # a repeated label (needs a blank between)
    tg[3, :3] = torch.tensor([1, 2, 3])  # 3 distinct labels in 3 steps: exactly one alignment
    return lp, tg, torch.tensor(IN_LENGTHS), torch.tensor(TG_LENGTHS)


def _concat(tg, tl):
    return torch.cat([tg[b, :int(tl[b])] for b in range(tg.shape[0])])


def _loss_and_grad(lp, tg, il, tl, reduction="none", zero_infinity=False, weights=None):
    lp = lp.detach().clone().requires_grad_()
    loss = F.ctc_loss(lp, tg, il, tl, reduction=reduction, zero_infinity=zero_infinity)
    if reduction == "none":
        w = weights if weights is not None else torch.arange(1, loss.numel() + 1, dtype=loss.dtype)
        (loss * w).sum().backward()
    else:
        loss.backward()
    return loss.detach(), lp.grad


# ---- the documented order, re-stated in plain float64 Python (libm exp/log: close, not bitwise) ----

def _lse(*xs):
    m = max(xs)
    m = 0.0 if m == -math.inf else m
    s = 0.0
    for x in xs:
        s += math.exp(x - m)
    return (math.log(s) if s > 0 else -math.inf) + m


def _restated_nll(lp, labels, Tb):
    L = len(labels)
    ext = [labels[s // 2] if s % 2 else 0 for s in range(2 * L + 1)]
    alpha = [-math.inf] * (2 * L + 1)
    alpha[0] = lp[0][0]
    if L:
        alpha[1] = lp[0][ext[1]]
    for t in range(1, Tb):
        prev = alpha
        alpha = []
        for s, lab in enumerate(ext):
            a2 = prev[s - 1] if s > 0 else -math.inf
            a3 = prev[s - 2] if s > 1 and ext[s - 2] != lab else -math.inf
            alpha.append(_lse(prev[s], a2, a3) + lp[t][lab])
    return -alpha[0] if L == 0 else -_lse(alpha[2 * L], alpha[2 * L - 1])


def test_float64_nll_matches_a_plain_restatement_of_the_recursion():
    lp, tg, il, tl = _case(dtype=torch.float64)
    with repmode.enabled():
        nll = F.ctc_loss(lp, tg, il, tl, reduction="none")
    for b in range(B):
        want = _restated_nll(lp[:, b].tolist(), tg[b, :TG_LENGTHS[b]].tolist(), IN_LENGTHS[b])
        assert math.isclose(float(nll[b]), want, rel_tol=1e-13, abs_tol=1e-13), b


# ---- accuracy against float64 native autograd --------------------------------------------------

@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("targets", ["padded", "concatenated"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_loss_and_gradient_close_to_float64_and_never_less_accurate_than_native(reduction, targets, zero_infinity):
    lp, tg, il, tl = _case(seed=1)
    if targets == "concatenated":
        tg = _concat(tg, tl)
    with repmode.enabled():
        got = _loss_and_grad(lp, tg, il, tl, reduction, zero_infinity)
    native = _loss_and_grad(lp, tg, il, tl, reduction, zero_infinity)
    want = _loss_and_grad(lp.double(), tg, il, tl, reduction, zero_infinity)
    for i, what in enumerate(("loss", "gradient")):
        err = (got[i].double() - want[i]).abs().max().item()
        native_err = (native[i].double() - want[i]).abs().max().item()
        scale = want[i].abs().max().item()
        assert err <= 2 * native_err + 2 ** -24 * scale, f"{what}: repmode {err:.3g}, native {native_err:.3g}"
        torch.testing.assert_close(got[i].double(), want[i], rtol=1e-5, atol=1e-6)


def test_float64_log_probs_close_to_native_float64():
    lp, tg, il, tl = _case(seed=2, dtype=torch.float64)
    with repmode.enabled():
        got = _loss_and_grad(lp, tg, il, tl, "mean")
    want = _loss_and_grad(lp, tg, il, tl, "mean")
    torch.testing.assert_close(got[0], want[0], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got[1], want[1], rtol=1e-10, atol=1e-12)


# ---- invariance -------------------------------------------------------------------------------

def _big_case():
    g = torch.Generator().manual_seed(3)
    lp = torch.randn(40, 12, NC, generator=g).log_softmax(2)
    tl = torch.randint(0, 15, (12,), generator=g)
    il = torch.randint(30, 41, (12,), generator=g)
    return lp, torch.randint(1, NC, (12, 15), generator=g), il, tl


def test_the_same_bits_at_1_2_3_threads_and_for_a_batch_first_layout():
    lp, tg, il, tl = _big_case()
    runs = []
    for threads in THREAD_COUNTS:
        with num_threads(threads), repmode.enabled():
            runs.append(_loss_and_grad(lp, tg, il, tl, "none"))
    strided = lp.transpose(0, 1).contiguous().transpose(0, 1)       # (T, B, C) view of (B, T, C) storage
    with repmode.enabled():
        runs.append(_loss_and_grad(strided, tg, il, tl, "none"))
        runs.append(_loss_and_grad(lp, tg.t().contiguous().t(), il, tl, "none"))
    for i, r in enumerate(runs[1:]):
        assert_bitwise_equal(r[0], runs[0][0], f"loss, run {i + 1}")
        assert_bitwise_equal(r[1], runs[0][1], f"gradient, run {i + 1}")


def test_each_sequence_has_the_bits_it_has_alone_in_a_batch_of_one():
    lp, tg, il, tl = _big_case()
    w = torch.linspace(0.5, 2.0, 12)
    with repmode.enabled():
        loss, grad = _loss_and_grad(lp, tg, il, tl, "none", weights=w)
        for b in range(12):
            lb, gb = _loss_and_grad(lp[:, b:b + 1], tg[b:b + 1], il[b:b + 1], tl[b:b + 1], "none", weights=w[b:b + 1])
            assert_bitwise_equal(loss[b:b + 1], lb, f"loss {b}")
            assert_bitwise_equal(grad[:, b:b + 1], gb, f"gradient {b}")


# ---- edge cases -------------------------------------------------------------------------------

def test_an_impossible_alignment_is_inf_or_zeroed_with_zero_infinity():
    lp, tg, il, tl = _case(seed=4)
    tl = tl.clone()
    tg = tg.clone()
    tg[3, :3] = torch.tensor([2, 2, 2])   # 3 equal labels need 5 steps; sequence 3 has 3
    with repmode.enabled():
        loss, grad = _loss_and_grad(lp, tg, il, tl, "none")
        zl, zg = _loss_and_grad(lp, tg, il, tl, "none", zero_infinity=True)
    assert loss[3] == math.inf and zl[3] == 0 and not zg[:, 3].any()
    assert_bitwise_equal(zl[torch.arange(B) != 3], loss[torch.arange(B) != 3])
    assert_bitwise_equal(zg[:, torch.arange(B) != 3], grad[:, torch.arange(B) != 3])
    assert not grad[IN_LENGTHS[1]:, 1].any(), "steps past the input length get no gradient"


def test_unbatched_input_int32_targets_and_int_list_lengths():
    lp, tg, il, tl = _case(seed=5)
    with repmode.enabled():
        one = F.ctc_loss(lp[:, 2], tg[2, :9], [IN_LENGTHS[2]], [TG_LENGTHS[2]], reduction="sum")
        batched = F.ctc_loss(lp, tg.int(), il.tolist(), tl.tolist(), reduction="none")
        ref = F.ctc_loss(lp, tg, il, tl, reduction="none")
    assert_bitwise_equal(batched, ref)
    assert_bitwise_equal(one, ref[2])


def test_nn_ctc_loss_under_no_grad_and_inference_mode():
    lp, tg, il, tl = _case(seed=6)
    crit = nn.CTCLoss(blank=0, reduction="mean")
    with repmode.enabled():
        want = crit(lp, tg, il, tl)
        with torch.no_grad():
            a = crit(lp, tg, il, tl)
        with torch.inference_mode():
            b = crit(lp, tg, il, tl)
    assert_bitwise_equal(a, want)
    assert_bitwise_equal(b, want)


def test_errors_name_the_problem():
    lp, tg, il, tl = _case()
    with repmode.enabled():
        with pytest.raises(repmode.UnsupportedOpError, match="float32 and float64"):
            F.ctc_loss(lp.bfloat16(), tg, il, tl)
        bad = tg.clone()
        bad[0, 0] = NC
        with pytest.raises(RuntimeError, match="target labels"):
            F.ctc_loss(lp, bad, il, tl)
        with pytest.raises(RuntimeError, match="input_lengths"):
            F.ctc_loss(lp, tg, il + 1, tl)


# ---- a speech-style model ---------------------------------------------------------------------

class ConvBiLSTMCTC(nn.Module):
    def __init__(self, feats=8, hidden=12, classes=6):
        super().__init__()
        self.conv = nn.Conv1d(feats, hidden, 3, padding=1)
        self.lstm = nn.LSTM(hidden, hidden, bidirectional=True, batch_first=True)
        self.out = nn.Linear(2 * hidden, classes)

    def forward(self, x):                                  # x: (B, feats, T)
        h = F.relu(self.conv(x)).transpose(1, 2)           # (B, T, hidden)
        h, _ = self.lstm(h)
        return self.out(h).log_softmax(-1).transpose(0, 1)  # (T, B, classes)


def _train_ctc_model(threads):
    torch.manual_seed(0)
    model = ConvBiLSTMCTC()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 8, 16, generator=g)
    tl = torch.tensor([5, 3, 7, 4])
    targets = torch.randint(1, 6, (int(tl.sum()),), generator=g)
    il = torch.tensor([16, 12, 16, 10])
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    crit = nn.CTCLoss(zero_infinity=True)
    losses = []
    with num_threads(threads), repmode.enabled(seed=0):
        for _ in range(2):
            opt.zero_grad()
            loss = crit(model(x), targets, il, tl)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
    return repmode.digest(model.state_dict()), losses


def test_conv1d_bilstm_ctc_model_trains_with_the_same_digests_at_1_and_2_threads():
    a = _train_ctc_model(1)
    b = _train_ctc_model(2)
    assert a == b
    assert all(math.isfinite(v) for v in a[1]) and a[1][1] < a[1][0]


def test_the_cudnn_question_is_answered_no_so_every_device_takes_repmodes_kernel():
    # torch.ctc_loss asks _use_cudnn_ctc_loss on CUDA tensors; both overloads answer False in the mode.
    lp, tg, il, tl = _case()
    with repmode.enabled():
        assert torch.ops.aten._use_cudnn_ctc_loss(lp, tg, il.tolist(), tl.tolist(), 0) is False
        assert torch.ops.aten._use_cudnn_ctc_loss.Tensor(lp, tg, il, tl, 0) is False
