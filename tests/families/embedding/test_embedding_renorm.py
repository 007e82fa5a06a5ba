"""embedding_renorm_ (nn.Embedding(max_norm=...)): rows whose norm (repmode's
linalg_vector_norm) exceeds max_norm are scaled by max_norm / (norm + 1e-7), the scale taken in
float64 and rounded once; close to a float64 computation, invariant, and usable in training."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, num_threads

import repmode


def _renorm_f64(weight: torch.Tensor, indices: torch.Tensor, max_norm: float, p: float) -> torch.Tensor:
    w = weight.double().clone()
    for r in torch.unique(indices).tolist():
        norm = w[r].norm(p)
        if norm > max_norm:
            w[r] = w[r] * (max_norm / (norm + 1e-7))
    return w


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
def test_renorm_close_to_float64_and_as_accurate_as_native(dtype, p, rng):
    weight = (torch.randn(30, 16, generator=rng) * 2).to(dtype)
    indices = torch.tensor([[3, 5, 3, 29], [0, 7, 7, 11]])
    native = weight.clone()
    torch.embedding_renorm_(native, indices, 1.5, p)
    got = weight.clone()
    with repmode.enabled():
        torch.embedding_renorm_(got, indices, 1.5, p)
    want = _renorm_f64(weight, indices, 1.5, p)
    untouched = torch.ones(30, dtype=torch.bool)
    untouched[indices.reshape(-1)] = False
    assert_bitwise_equal(got[untouched], weight[untouched], "rows not indexed")
    err, native_err = (got.double() - want).abs().max(), (native.double() - want).abs().max()
    eps = torch.finfo(dtype).eps
    assert err <= max(2 * native_err, 4 * eps * 1.5), (float(err), float(native_err))


def test_renorm_invariant_to_threads_and_layout(rng):
    weight = torch.randn(64, 33, generator=rng) * 3
    indices = torch.randint(0, 64, (200,), generator=rng)
    results = []
    for threads in (1, 2):
        with num_threads(threads), repmode.enabled():
            w = weight.clone()
            torch.embedding_renorm_(w, indices, 2.0, 2.0)
        results.append(w)
    col_major = weight.t().contiguous().t()
    with repmode.enabled():
        torch.embedding_renorm_(col_major, indices, 2.0, 2.0)
    assert_bitwise_equal(results[0], results[1], "1 vs 2 threads")
    assert_bitwise_equal(col_major, results[0], "column-major weight")


@pytest.mark.parametrize("ctx", [torch.enable_grad, torch.no_grad, torch.inference_mode])
def test_embedding_module_with_max_norm_in_strict_mode(ctx, rng):
    torch.manual_seed(0)
    emb = torch.nn.Embedding(20, 8, max_norm=1.0)
    indices = torch.randint(0, 20, (4, 6), generator=rng)
    with ctx(), repmode.enabled():
        out = emb(indices)
        if torch.is_grad_enabled():
            out.sum().backward()
    norms = emb.weight.detach()[torch.unique(indices)].norm(dim=1)
    assert (norms <= 1.0 + 1e-6).all()
    if ctx is torch.enable_grad:
        assert emb.weight.grad is not None


def test_refusals_and_errors(rng):
    with repmode.enabled():
        with pytest.raises(repmode.UnsupportedOpError, match="floating-point"):
            torch.embedding_renorm_(torch.ones(3, 2, dtype=torch.int64), torch.tensor([0]), 1.0, 2.0)
        with pytest.raises(RuntimeError, match="2-D"):
            torch.embedding_renorm_(torch.ones(3), torch.tensor([0]), 1.0, 2.0)
