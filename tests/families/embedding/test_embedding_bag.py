"""EmbeddingBag (_embedding_bag, _embedding_bag_forward_only and the backward ops): sums in
increasing position (per_sample_weights multiplied first), mean = that sum divided by the count,
max keeps the first of equal maxima; padding_idx skipped; the same bits at every thread count,
for any batch composition and in grad / no_grad / inference_mode; values and gradients as close to
float64 as native torch; and a text classifier trains in strict mode with the same digests at 1
and 2 threads (sum, mean, max)."""
from __future__ import annotations

import contextlib

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from support import THREAD_COUNTS, assert_bitwise_equal, num_threads

import repmode

aten = torch.ops.aten

# (mode, per_sample_weights, padding_idx, include_last_offset)
CASES = [("sum", False, None, False), ("sum", True, None, False), ("sum", True, 4, True), ("sum", False, 4, False),
         ("mean", False, None, False), ("mean", False, 4, True), ("max", False, None, False), ("max", False, 4, True)]
IDS = [f"{m}{'-psw' if p else ''}{'-pad' if pad is not None else ''}{'-last' if ilo else ''}"
       for m, p, pad, ilo in CASES]


def _inputs(dtype=torch.float32, seed=0, num=20, dim=7, n=40):
    torch.manual_seed(seed)
    w = torch.randn(num, dim, dtype=dtype)
    idx = torch.randint(0, num, (n,))
    idx[5] = idx[6] = 4  # padding index candidates, repeated rows
    off = torch.tensor([0, 3, 3, 10, 25, 39])  # an empty bag and a bag of one
    psw = torch.randn(n, dtype=dtype)
    g = torch.randn(len(off), dim, dtype=dtype)
    return w, idx, off, psw, g


def _run(case, w, idx, off, psw, g, strict=True):
    """(output, grad weight, grad per_sample_weights) of F.embedding_bag, under repmode if strict."""
    mode, use_psw, pad, ilo = case
    w = w.detach().clone().requires_grad_(True)
    p = psw.detach().clone().requires_grad_(True) if use_psw else None
    if ilo:
        off = torch.cat([off, torch.tensor([idx.numel()])])
    ctx = repmode.enabled() if strict else contextlib.nullcontext()
    with ctx:
        y = F.embedding_bag(idx, w, off, mode=mode, per_sample_weights=p, padding_idx=pad, include_last_offset=ilo)
        y.backward(g)
    return y.detach(), w.grad, (p.grad if p is not None else torch.zeros(0, dtype=w.dtype))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_same_bits_at_every_thread_count_layout_and_batch_composition(case):
    w, idx, off, psw, g = _inputs(seed=1)
    with num_threads(1):
        want = _run(case, w, idx, off, psw, g)
    for threads in THREAD_COUNTS[1:]:
        with num_threads(threads):
            assert_bitwise_equal(_run(case, w, idx, off, psw, g), want, f"threads={threads}")
    # a column-major weight and a strided grad give the same bits
    with num_threads(2):
        laid = _run(case, w.t().contiguous().t(), idx, off, psw[::1], g.t().contiguous().t())
    assert_bitwise_equal(laid, want, "column-major weight and grad")
    # bag 3 (positions 10..24) alone gives row 3 of the batched output
    alone = _run(case[:3] + (False,), w, idx[10:25], torch.tensor([0]), psw[10:25], g[3:4])
    assert_bitwise_equal(alone[0][0], want[0][3], "bag 3 alone")


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_values_and_gradients_are_as_close_to_float64_as_native_torch(case, dtype):
    w, idx, off, psw, g = _inputs(dtype, seed=2)
    ref = _run(case, w.double(), idx, off, psw.double(), g.double(), strict=False)
    mine = _run(case, w, idx, off, psw, g)
    nat = _run(case, w, idx, off, psw, g, strict=False)
    eps = torch.finfo(dtype).eps
    for what, m, n, r in zip(("forward", "grad weight", "grad per_sample_weights"), mine, nat, ref):
        scale = max(r.abs().max().item(), 1.0) if r.numel() else 1.0
        err_m = (m.double() - r).abs().max().item() if r.numel() else 0.0
        err_n = (n.double() - r).abs().max().item() if r.numel() else 0.0
        assert err_m <= err_n + 2 * eps * scale, f"{what}: repmode error {err_m:.3g}, native {err_n:.3g}"


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in ("mean", "max") or c[2] is not None],
                         ids=[i for c, i in zip(CASES, IDS) if c[0] in ("mean", "max") or c[2] is not None])
def test_forward_equals_native_torch_where_native_sums_in_order(case):
    # torch's generic CPU loop adds in position order and divides by the count (mean); max is
    # selection. (Its float32 fbgemm path, taken for sum without padding_idx, fuses
    # per_sample_weights into an fma, so it is not compared here.)
    w, idx, off, psw, g = _inputs(seed=3)
    assert_bitwise_equal(_run(case, w, idx, off, psw, g)[0], _run(case, w, idx, off, psw, g, strict=False)[0],
                         "forward")


def test_max_keeps_the_first_of_equal_maxima_and_routes_the_gradient_there():
    w = torch.tensor([[1.0, 5.0], [3.0, 5.0], [3.0, 2.0]], requires_grad=True)
    idx = torch.tensor([0, 1, 2])
    with repmode.enabled():
        out, _, _, maxi = aten._embedding_bag(w, idx, torch.tensor([0]), False, 2)
        out.backward(torch.tensor([[10.0, 20.0]]))
    assert out.tolist() == [[3.0, 5.0]] and maxi.tolist() == [[1, 0]]
    assert w.grad.tolist() == [[0.0, 20.0], [10.0, 0.0], [0.0, 0.0]]


def test_max_follows_torchs_rule_for_nan_and_signed_zeros_bit_for_bit():
    # torch's loop: the first element, then each strictly greater one; so a NaN first element stays,
    # a later NaN is skipped, and of +0/-0 the first one is kept
    nan = float("nan")
    w = torch.tensor([[nan, 1.0, 0.0, -0.0], [2.0, nan, -0.0, 0.0], [1.0, 3.0, 0.0, -1.0], [nan, nan, nan, nan]])
    idx = torch.tensor([0, 1, 2, 1, 0, 2, 3, 3, 0])
    off = torch.tensor([0, 3, 6, 8])
    with repmode.enabled():
        got = aten._embedding_bag(w, idx, off, False, 2)
    want = aten._embedding_bag(w, idx, off, False, 2)
    assert_bitwise_equal(got[0], want[0], "values")
    assert torch.equal(got[3], want[3]), "max indices"


def test_the_sum_is_taken_in_position_order():
    # 1 + 2^-24 + 2^-24 in order is 1 (each tiny term rounds away); another order would give 1 + 2^-23
    w = torch.tensor([[1.0], [2.0 ** -24]])
    idx = torch.tensor([0, 1, 1])
    with repmode.enabled():
        out = F.embedding_bag(idx, w, torch.tensor([0]), mode="sum")
    assert out.item() == 1.0


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_grad_no_grad_and_inference_mode_give_the_same_bits(mode):
    w, idx, off, _, _ = _inputs(seed=4)
    results = []
    for ctx in (contextlib.nullcontext, torch.no_grad, torch.inference_mode):
        with ctx(), repmode.enabled():
            results.append(F.embedding_bag(idx, w, off, mode=mode))
    assert_bitwise_equal(results[1], results[0], "no_grad (_embedding_bag_forward_only)")
    assert_bitwise_equal(results[2], results[0], "inference_mode")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_low_precision_is_the_float32_result_rounded_once(dtype, mode):
    case = (mode, mode == "sum", None, False)
    w, idx, off, psw, g = _inputs(seed=5)
    low = _run(case, w.to(dtype), idx, off, psw.to(dtype), g.to(dtype))
    wide = _run(case, w.to(dtype).float(), idx, off, psw.to(dtype).float(), g.to(dtype).float())
    for a, b, what in zip(low, wide, ("forward", "grad weight", "grad per_sample_weights")):
        assert_bitwise_equal(a, b.to(dtype), what)


def test_2d_input_and_the_module_run_in_strict_mode():
    torch.manual_seed(6)
    bag = nn.EmbeddingBag(10, 3, mode="mean")
    x = torch.randint(0, 10, (4, 5))
    with repmode.enabled():
        y = bag(x)
    assert_bitwise_equal(y, bag(x), "2-d input, mean (native divides the in-order sum too)")


def test_sparse_gradients_and_scale_grad_by_freq_are_refused_by_name():
    w = torch.randn(5, 2, requires_grad=True)
    idx, off = torch.tensor([0, 1, 1]), torch.tensor([0])
    for kw in (dict(sparse=True), dict(scale_grad_by_freq=True)):
        with pytest.raises(repmode.UnsupportedOpError, match="embedding_bag"):
            with repmode.enabled():
                F.embedding_bag(idx, w, off, mode="sum", **kw).sum().backward()


def test_bad_offsets_and_indices_raise_torchs_errors():
    w = torch.randn(5, 2)
    with repmode.enabled():
        with pytest.raises(RuntimeError, match="offsets\\[0\\]"):
            F.embedding_bag(torch.tensor([0, 1]), w, torch.tensor([1]))
        with pytest.raises(IndexError, match="out of range"):
            F.embedding_bag(torch.tensor([0, 9]), w, torch.tensor([0]))


# ---- a text classifier, trained ----

class BagClassifier(nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.bag = nn.EmbeddingBag(50, 8, mode=mode, padding_idx=0)
        self.fc = nn.Linear(8, 3)

    def forward(self, text, offsets, weights=None):
        return self.fc(self.bag(text, offsets, per_sample_weights=weights))


def _train_classifier(mode, threads):
    torch.manual_seed(7)
    model = BagClassifier(mode)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    text = torch.randint(0, 50, (60,))
    offsets = torch.tensor([0, 7, 7, 20, 31, 45])
    weights = torch.rand(60) if mode == "sum" else None
    target = torch.randint(0, 3, (6,))
    with num_threads(threads), repmode.enabled():
        for _ in range(2):
            opt.zero_grad()
            loss = F.cross_entropy(model(text, offsets, weights), target)
            loss.backward()
            opt.step()
    return repmode.digest(model.state_dict()), repmode.digest(loss.detach())


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_an_embedding_bag_text_classifier_trains_in_strict_mode_with_the_same_digests_at_1_and_2_threads(mode):
    assert _train_classifier(mode, 1) == _train_classifier(mode, 2)
