"""More losses: multi_margin, multilabel_margin, soft_margin (aten ops of their own, repmode composites)
and multilabel_soft_margin, triplet_margin (+ swap), margin_ranking, hinge_embedding, cosine_embedding,
poisson_nll and gaussian_nll (which decompose into registered ops), every reduction, in strict mode:
forward and backward close to float64 and no further than native float32, the same bits at 1/2/3
threads, every ISA path and every layout, under grad / no_grad / inference_mode."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal, assert_invariant

import repmode

aten = torch.ops.aten
N, C = 13, 7


def _data(rng, dtype=torch.float64):
    g = lambda *s: torch.randn(*s, generator=rng, dtype=torch.float64)  # noqa: E731
    t = torch.randint(0, C, (N,), generator=rng)
    labels = torch.randint(-1, C, (N, C), generator=rng)
    labels[:, 0] = torch.randint(0, C, (N,), generator=rng)  # at least one target per row
    labels[3, :4] = torch.tensor([2, 2, 5, -1])              # a duplicate target
    sign = torch.where(torch.rand(N, C, generator=rng) < 0.5, -1.0, 1.0).double()
    return {
        "x": g(N, C).to(dtype), "x2": g(N, C).to(dtype), "x3": g(N, C).to(dtype),
        "w": (torch.rand(C, generator=rng, dtype=torch.float64) + 0.5).to(dtype),
        "t": t, "labels": labels, "sign": sign.to(dtype), "sign_row": sign[:, 0].to(dtype),
        "multi_hot": (torch.rand(N, C, generator=rng) < 0.3).to(dtype),
        "counts": torch.poisson(torch.rand(N, C, generator=rng, dtype=torch.float64) * 4, generator=rng).to(dtype),
        "var": (torch.rand(N, C, generator=rng, dtype=torch.float64) + 0.1).to(dtype),
    }


# name -> f(x, d): loss of the differentiable input x (d: the other inputs)
CASES = {
    "multi_margin": lambda x, d: F.multi_margin_loss(x, d["t"]),
    "multi_margin_p2_w_sum": lambda x, d: F.multi_margin_loss(x, d["t"], p=2, margin=0.7, weight=d["w"],
                                                              reduction="sum"),
    "multi_margin_none": lambda x, d: (F.multi_margin_loss(x, d["t"], reduction="none") * d["x2"][:, 0]).sum(),
    "multi_margin_1d": lambda x, d: F.multi_margin_loss(x[0], d["t"][:1]),
    "multilabel_margin": lambda x, d: F.multilabel_margin_loss(x, d["labels"]),
    "multilabel_margin_sum": lambda x, d: F.multilabel_margin_loss(x, d["labels"], reduction="sum"),
    "multilabel_margin_none": lambda x, d: (F.multilabel_margin_loss(x, d["labels"], reduction="none")
                                            * d["x2"][:, 0]).sum(),
    "multilabel_margin_1d": lambda x, d: F.multilabel_margin_loss(x[3], d["labels"][3]),
    "soft_margin": lambda x, d: F.soft_margin_loss(x, d["sign"]),
    "soft_margin_sum": lambda x, d: F.soft_margin_loss(x * 30, d["sign"], reduction="sum"),
    "soft_margin_none": lambda x, d: (F.soft_margin_loss(x, d["sign"], reduction="none") * d["x2"]).sum(),
    "multilabel_soft_margin": lambda x, d: F.multilabel_soft_margin_loss(x, d["multi_hot"]),
    "multilabel_soft_margin_w": lambda x, d: F.multilabel_soft_margin_loss(x, d["multi_hot"], weight=d["w"],
                                                                           reduction="sum"),
    "triplet": lambda x, d: F.triplet_margin_loss(x, d["x2"], d["x3"]),
    "triplet_swap_p1": lambda x, d: F.triplet_margin_loss(x, d["x2"], d["x3"], p=1.0, swap=True, reduction="sum"),
    "triplet_with_distance": lambda x, d: F.triplet_margin_with_distance_loss(x, d["x2"], d["x3"]),
    "margin_ranking": lambda x, d: F.margin_ranking_loss(x, d["x2"], d["sign"], margin=0.3),
    "hinge_embedding": lambda x, d: F.hinge_embedding_loss(x, d["sign"], margin=0.8),
    "cosine_embedding": lambda x, d: F.cosine_embedding_loss(x, d["x2"], d["sign_row"], margin=0.1),
    "poisson_nll": lambda x, d: F.poisson_nll_loss(x, d["counts"]),
    "poisson_nll_full": lambda x, d: F.poisson_nll_loss(x.abs() + 0.1, d["counts"], log_input=False, full=True),
    "gaussian_nll": lambda x, d: F.gaussian_nll_loss(x, d["x2"], d["var"]),
    "gaussian_nll_full_sum": lambda x, d: F.gaussian_nll_loss(x, d["x2"], d["var"][:, :1], full=True,
                                                              reduction="sum"),
}


def _run(f, x, d):
    leaf = x.detach().clone().requires_grad_()
    loss = f(leaf, d)
    loss.backward()
    return loss.detach(), leaf.grad


def _err(a, ref):
    return float((a.double() - ref).abs().max())


@pytest.mark.parametrize("name", list(CASES))
def test_close_to_float64_and_no_further_than_native(name, rng):
    d64 = _data(rng)
    d32 = {k: (v.float() if v.is_floating_point() else v) for k, v in d64.items()}
    f = CASES[name]
    ref = _run(f, d64["x"], d64)
    native = _run(f, d32["x"], d32)
    with repmode.enabled():
        ours = _run(f, d32["x"], d32)
    for what, o, n, r in zip(("loss", "grad"), ours, native, ref):
        assert o.dtype == torch.float32 and o.shape == r.shape
        mine, theirs = _err(o, r), _err(n, r)
        scale = float(r.abs().max()) + 1e-30
        assert mine <= max(2 * theirs, 8 * 2**-24 * scale), f"{name} {what}: {mine} vs native {theirs}"


@pytest.mark.parametrize("name", list(CASES))
def test_float64_close_to_native(name, rng):
    d = _data(rng)
    f = CASES[name]
    ref = _run(f, d["x"], d)
    with repmode.enabled():
        ours = _run(f, d["x"], d)
    for o, r in zip(ours, ref):
        assert torch.allclose(o, r, rtol=1e-12, atol=1e-14)


def _all(x, x2, x3, sign, other):
    d = dict(other)
    d.update(x2=x2, x3=x3, sign=sign)
    out = {}
    for name, f in CASES.items():
        loss, grad = _run(f, x, d)
        out[name], out[name + "_grad"] = loss, grad
    return out


def test_invariant_to_threads_isa_and_layout(rng):
    d = {k: (v.float() if v.is_floating_point() else v) for k, v in _data(rng).items()}
    assert_invariant(_all, d["x"], d["x2"], d["x3"], d["sign"], d)


@pytest.mark.parametrize("name", ["multi_margin_p2_w_sum", "multilabel_margin", "soft_margin", "triplet",
                                  "poisson_nll", "gaussian_nll", "cosine_embedding"])
def test_same_bits_under_no_grad_and_inference_mode(name, rng):
    d = {k: (v.float() if v.is_floating_point() else v) for k, v in _data(rng).items()}
    f = CASES[name]
    with repmode.enabled():
        want = _run(f, d["x"], d)[0]
        with torch.no_grad():
            a = f(d["x"], d)
        with torch.inference_mode():
            b = f(d["x"], d)
    assert_bitwise_equal(want, a, "no_grad")
    assert_bitwise_equal(want, b, "inference_mode")


def test_multilabel_margin_definition(rng):
    """The loss over (k, j) pairs in row-major order (targets up to the first −1, duplicates counted
    twice), is_target, and the gradient as exact pair counts times grad / C."""
    d = _data(rng, torch.float32)
    x, labels = d["x"], d["labels"]
    with repmode.enabled():
        loss, is_target = aten.multilabel_margin_loss_forward(x, labels, 0)
        grad = aten.multilabel_margin_loss_backward(torch.ones(N), x, labels, 0, is_target)
    native_loss, native_is_target = aten.multilabel_margin_loss_forward(x, labels, 0)
    assert_bitwise_equal(is_target, native_is_target)
    for i in range(N):
        targets = []
        for v in labels[i].tolist():
            if v < 0:
                break
            targets.append(v)
        plus, minus, total = [0] * C, [0] * C, 0.0
        for tk in targets:
            for j in range(C):
                if j in targets:
                    continue
                z = (1 - x[i, tk].double()) + x[i, j].double()
                if z > 0:
                    plus[j] += 1
                    minus[tk] += 1
                    total += z
        assert abs(float(loss[i]) - total / C) <= 1e-6 * max(1.0, total)
        c = torch.ones(()) / C  # grad / C, rounded once
        want = torch.tensor([plus[j] - minus[j] for j in range(C)], dtype=torch.float32) * c
        assert_bitwise_equal(grad[i], want, f"row {i}")
    assert torch.allclose(loss, native_loss, rtol=1e-6, atol=1e-7)


def test_soft_margin_does_not_overflow(rng):
    x = torch.tensor([100.0, -100.0, 0.0, 1e30])
    y = torch.tensor([-1.0, 1.0, 1.0, -1.0])
    with repmode.enabled():
        out = F.soft_margin_loss(x, y, reduction="none")
    assert out.tolist() == [100.0, 100.0, float(torch.log(torch.tensor(2.0))), float(x[3])]


def test_soft_margin_low_precision(rng):
    x = torch.randn(N, C, generator=rng)
    y = torch.where(torch.rand(N, C, generator=rng) < 0.5, -1.0, 1.0)
    for dtype in (torch.bfloat16, torch.float16):
        with repmode.enabled():
            got = F.soft_margin_loss(x.to(dtype), y.to(dtype), reduction="none")
            wide = F.soft_margin_loss(x.to(dtype).float(), y.to(dtype).float(), reduction="none")
        assert_bitwise_equal(got, wide.to(dtype))


def test_errors(rng):
    d = _data(rng, torch.float32)
    with repmode.enabled():
        bad = d["t"].clone()
        bad[0] = C
        with pytest.raises(RuntimeError, match="out of range"):
            F.multi_margin_loss(d["x"], bad)
        with pytest.raises(RuntimeError, match="p == 1 and p == 2"):
            aten.multi_margin_loss(d["x"], d["t"], 3, 1.0, None, 1)
        labels = d["labels"].clone()
        labels[0, 0] = C
        with pytest.raises(RuntimeError, match="out of range"):
            F.multilabel_margin_loss(d["x"], labels)
        with pytest.raises(repmode.UnsupportedOpError, match="dtype"):
            F.multi_margin_loss(d["x"].bfloat16(), d["t"])
